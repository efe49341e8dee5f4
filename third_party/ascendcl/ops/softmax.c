/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The stand-in's softmax family: aclnnSoftmax, aclnnLogSoftmax, aclnnSoftmaxBackward,
 * aclnnLogSoftmaxBackward, as their documentation pages define them (hicann/ops-nn).  The
 * operand is viewed as [outer, n, inner] with n the reduced dimension; the computation runs in
 * double on contiguous copies.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "aclnnop/aclnn_softmax.h"
#include "aclnnop/aclnn_softmax_backward.h"
#include "dense.h"

/* y = softmax(x) (log-softmax when `log_softmax`) along the middle axis of [outer, n, inner]. */
static void softmax_forward(const double *x, double *y, int64_t outer, int64_t n, int64_t inner,
                            bool log_softmax) {
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t i = 0; i < inner; i++) {
      const double *xp = x + o * n * inner + i;
      double *yp = y + o * n * inner + i;
      double max = -INFINITY;
      for (int64_t k = 0; k < n; k++) {
        double v = xp[k * inner];
        if (v > max || isnan(v)) max = v;
      }
      if (isinf(max) && max < 0) max = 0; /* every element -inf: exp(-inf - 0) = 0 */
      double sum = 0;
      for (int64_t k = 0; k < n; k++) { /* y keeps each exp for softmax's division */
        const double e = exp(xp[k * inner] - max);
        sum += e;
        yp[k * inner] = e;
      }
      const double log_sum = log(sum);
      for (int64_t k = 0; k < n; k++) {
        yp[k * inner] = log_softmax ? (xp[k * inner] - max) - log_sum : yp[k * inner] / sum;
      }
    }
  }
}

/* The gradient given the forward result y: softmax: y * (g - sum(g * y)); log-softmax:
 * g - exp(y) * sum(g). */
static void softmax_backward(const double *g, const double *y, double *out, int64_t outer,
                             int64_t n, int64_t inner, bool log_softmax) {
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t i = 0; i < inner; i++) {
      const int64_t base = o * n * inner + i;
      double sum = 0;
      for (int64_t k = 0; k < n; k++) {
        const int64_t at = base + k * inner;
        sum += log_softmax ? g[at] : g[at] * y[at];
      }
      for (int64_t k = 0; k < n; k++) {
        const int64_t at = base + k * inner;
        out[at] = log_softmax ? g[at] - exp(y[at]) * sum : y[at] * (g[at] - sum);
      }
    }
  }
}

/* Executor: slot 0 out, 1 self (forward) or gradOutput, 2 output (backward); i[0..2] outer, n,
 * inner; i[3] log-softmax; i[4] backward. */
static void run_softmax(aclOpExecutor *ex) {
  const int64_t outer = ex->i[0], n = ex->i[1], inner = ex->i[2];
  const bool log_softmax = ex->i[3] != 0, backward = ex->i[4] != 0;
  if (outer * n * inner == 0) return;
  double *a = dense_load(ex, 1), *b = backward ? dense_load(ex, 2) : NULL;
  double *out = dense_alloc(outer * n * inner, sizeof *out);
  if (a == NULL || (backward && b == NULL) || out == NULL) {
    dense_fail_memory();
  } else {
    if (backward) {
      softmax_backward(a, b, out, outer, n, inner, log_softmax);
    } else {
      softmax_forward(a, out, outer, n, inner, log_softmax);
    }
    dense_store(ex, 0, out);
  }
  free(a);
  free(b);
  free(out);
}

#define SOFTMAX_TYPES \
  (SOP_BIT(ACL_FLOAT) | SOP_BIT(ACL_FLOAT16) | SOP_BIT(ACL_BF16) | SOP_BIT(ACL_DOUBLE))

/* Phase one: out (x's shape) = softmax/log-softmax of x along dim, or their gradient given
 * grad (x's shape and type) and the forward result x. */
static aclnnStatus softmax_prepare(const char *op, bool log_softmax, const char *grad_arg,
                                   const aclTensor *grad, const char *x_arg, const aclTensor *x,
                                   int64_t dim, const aclTensor *out, uint64_t *workspaceSize,
                                   aclOpExecutor **executor) {
  if (grad_arg != NULL) SOP_CHECK(sop_check_nonnull(op, grad_arg, grad));
  SOP_CHECK(sop_check_nonnull(op, x_arg, x));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  if (grad_arg != NULL) SOP_CHECK(sop_check_tensor(op, grad_arg, grad, SOFTMAX_TYPES));
  SOP_CHECK(sop_check_tensor(op, x_arg, x, SOFTMAX_TYPES));
  SOP_CHECK(sop_check_tensor(op, "out", out, SOFTMAX_TYPES));
  if (grad_arg != NULL) {
    SOP_CHECK(sop_check_same_shape(op, grad_arg, grad, x_arg, x));
    if (grad->dtype != x->dtype) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s (%s) and %s (%s) differ in type", grad_arg,
                      sop_dtype_name(grad->dtype), x_arg, sop_dtype_name(x->dtype));
    }
  }
  SOP_CHECK(sop_check_same_shape(op, "out", out, x_arg, x));
  SOP_CHECK(sop_check_cast(op, x->dtype, "out", out));
  int64_t d = 0;
  SOP_CHECK(dense_wrap_dim(op, "dim", dim, x->ndim, &d));
  int64_t outer = 1, n = 1, inner = 1;
  for (int32_t k = 0; k < x->ndim; k++) {
    if (k < d) outer *= x->dims[k];
    if (k == d) n = x->dims[k];
    if (k > d) inner *= x->dims[k];
  }
  const bool backward = grad_arg != NULL;
  aclOpExecutor *ex = sop_executor_new(op, backward ? 3 : 2, run_softmax);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  sop_capture(ex, 1, backward ? grad : x);
  if (backward) sop_capture(ex, 2, x);
  ex->i[0] = outer;
  ex->i[1] = n;
  ex->i[2] = inner;
  ex->i[3] = log_softmax;
  ex->i[4] = backward;
  return sop_finish(ex, 0, workspaceSize, executor);
}

aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out,
                                         uint64_t *workspaceSize, aclOpExecutor **executor) {
  return softmax_prepare("aclnnSoftmax", false, NULL, NULL, "self", self, dim, out, workspaceSize,
                         executor);
}
SOP_PHASE_TWO(Softmax)

aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out,
                                            uint64_t *workspaceSize, aclOpExecutor **executor) {
  return softmax_prepare("aclnnLogSoftmax", true, NULL, NULL, "self", self, dim, out, workspaceSize,
                         executor);
}
SOP_PHASE_TWO(LogSoftmax)

aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                 const aclTensor *output, int64_t dim,
                                                 aclTensor *out, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
  return softmax_prepare("aclnnSoftmaxBackward", false, "gradOutput", gradOutput, "output", output,
                         dim, out, workspaceSize, executor);
}
SOP_PHASE_TWO(SoftmaxBackward)

aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                    const aclTensor *output, int64_t dim,
                                                    aclTensor *out, uint64_t *workspaceSize,
                                                    aclOpExecutor **executor) {
  return softmax_prepare("aclnnLogSoftmaxBackward", true, "gradOutput", gradOutput, "output",
                         output, dim, out, workspaceSize, executor);
}
SOP_PHASE_TWO(LogSoftmaxBackward)
