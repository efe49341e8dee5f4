/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The stand-in's losses: aclnnNLLLoss, aclnnNLLLossBackward (hicann/ops-nn loss/nll_loss,
 * loss/nll_loss_grad), aclnnMseLoss and aclnnMseLossBackward (loss/mse_loss,
 * loss/mse_loss_grad_v2).  Reductions: 0 none, 1 mean, 2 sum.  Computed in double on
 * contiguous copies.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_mse_loss.h"
#include "aclnnop/aclnn_mse_loss_backward.h"
#include "aclnnop/aclnn_nll_loss.h"
#include "aclnnop/aclnn_nll_loss_backward.h"
#include "dense.h"

enum { REDUCTION_NONE = 0, REDUCTION_MEAN = 1, REDUCTION_SUM = 2 };

/* NLL of x [n, c] at target [n] weighted by w [c]: out [n] for none, else out[0] (sum, or sum
 * divided by the total weight for mean) and total[0] = the weights of the counted targets.  A
 * target outside [0, c) that is not ignore_index: returns false with its position in *bad. */
static bool nll_forward(const double *x, const int64_t *target, const double *w, int64_t n,
                        int64_t c, int64_t reduction, int64_t ignore_index, double *out,
                        double *total, int64_t *bad) {
  double sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t t = target[i];
    if (t == ignore_index) {
      if (reduction == REDUCTION_NONE) out[i] = 0;
      continue;
    }
    if (t < 0 || t >= c) {
      *bad = i;
      return false;
    }
    const double wt = w[t], loss = -x[i * c + t] * wt;
    if (reduction == REDUCTION_NONE) out[i] = loss;
    sum += loss;
    weight_sum += wt;
  }
  if (reduction != REDUCTION_NONE) {
    out[0] = reduction == REDUCTION_MEAN ? sum / weight_sum : sum;
    total[0] = weight_sum;
  }
  return true;
}

/* dx [n, c] = 0 except dx[i, target[i]] = -w[target[i]] * g_i, g_i = g[i] (none), g[0] / total
 * (mean) or g[0] (sum). */
static bool nll_backward(const double *g, const int64_t *target, const double *w, int64_t n,
                         int64_t c, int64_t reduction, int64_t ignore_index, double total,
                         double *dx, int64_t *bad) {
  memset(dx, 0, (size_t)(n * c) * sizeof *dx);
  for (int64_t i = 0; i < n; i++) {
    const int64_t t = target[i];
    if (t == ignore_index) continue;
    if (t < 0 || t >= c) {
      *bad = i;
      return false;
    }
    const double gi = reduction == REDUCTION_NONE   ? g[i]
                      : reduction == REDUCTION_MEAN ? g[0] / total
                                                    : g[0];
    dx[i * c + t] = -w[t] * gi;
  }
  return true;
}

/* out = (x - y)^2 elementwise (n elements) for none, else out[0] = their mean or sum. */
static void mse_forward(const double *x, const double *y, int64_t n, int64_t reduction,
                        double *out) {
  double sum = 0;
  for (int64_t i = 0; i < n; i++) {
    const double d = (x[i] - y[i]) * (x[i] - y[i]);
    if (reduction == REDUCTION_NONE) {
      out[i] = d;
    } else {
      sum += d;
    }
  }
  if (reduction != REDUCTION_NONE) out[0] = reduction == REDUCTION_MEAN ? sum / (double)n : sum;
}

/* dx = 2 * g * (x - y), divided by `count` (self's element count) for mean. */
static void mse_backward(const double *g, const double *x, const double *y, int64_t n,
                         int64_t reduction, int64_t count, double *dx) {
  const double scale = reduction == REDUCTION_MEAN ? 2.0 / (double)count : 2.0;
  for (int64_t i = 0; i < n; i++) dx[i] = scale * g[i] * (x[i] - y[i]);
}

#define LOSS_TYPES (SOP_BIT(ACL_FLOAT) | SOP_BIT(ACL_FLOAT16) | SOP_BIT(ACL_BF16))
#define TARGET_TYPES (SOP_BIT(ACL_INT64) | SOP_BIT(ACL_INT32) | SOP_BIT(ACL_UINT8))

static aclnnStatus check_reduction(const char *op, int64_t reduction) {
  if (reduction >= REDUCTION_NONE && reduction <= REDUCTION_SUM) return ACLNN_SUCCESS;
  return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                  "reduction %lld is not 0 (none), 1 (mean) or 2 (sum)", (long long)reduction);
}

/* The fault of a target outside [0, C). */
static void fail_target(int64_t position, int64_t value, int64_t classes) {
  standin_task_fail("target %lld at position %lld is out of bounds for %lld classes",
                    (long long)value, (long long)position, (long long)classes);
}

/* self [N, C] or [C], target [N] or [], weight [C]: returns N and C. */
static aclnnStatus nll_shapes(const char *op, const aclTensor *self, const aclTensor *target,
                              const aclTensor *weight, int64_t *n, int64_t *c) {
  char a[160], b[160];
  if (self->ndim != 1 && self->ndim != 2) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "self %s must be (N, C) or (C)",
                    sop_shape_str(self, a));
  }
  *n = self->ndim == 2 ? self->dims[0] : 1;
  *c = self->dims[self->ndim - 1];
  if (self->ndim == 2 ? target->ndim != 1 || target->dims[0] != *n : target->ndim != 0) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "target %s does not fit self %s",
                    sop_shape_str(target, a), sop_shape_str(self, b));
  }
  SOP_CHECK(dense_check_shape(op, "weight", weight, 1, c));
  if (weight->dtype != self->dtype) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "weight (%s) and self (%s) differ in type",
                    sop_dtype_name(weight->dtype), sop_dtype_name(self->dtype));
  }
  return ACLNN_SUCCESS;
}

/* A one-element output ((1,) in the documentation; a 0-dim tensor holds one element too). */
static aclnnStatus check_one(const char *op, const char *arg, const aclTensor *t) {
  char a[160];
  if (sop_numel(t) == 1 && t->ndim <= 1) return ACLNN_SUCCESS;
  return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s %s must hold one element", arg,
                  sop_shape_str(t, a));
}

/* aclnnNLLLoss.  Slots: 0 out, 1 totalWeightOut, 2 self, 3 target, 4 weight; i[0] N, i[1] C,
 * i[2] reduction, i[3] ignoreIndex. */
static void run_nll(aclOpExecutor *ex) {
  const int64_t n = ex->i[0], c = ex->i[1], reduction = ex->i[2];
  double *x = dense_load(ex, 2), *w = dense_load(ex, 4);
  int64_t *target = dense_load_i(ex, 3);
  double *out = dense_alloc(reduction == REDUCTION_NONE ? n : 1, sizeof *out), total = 0;
  int64_t bad = 0;
  if (x == NULL || w == NULL || target == NULL || out == NULL) {
    dense_fail_memory();
  } else if (!nll_forward(x, target, w, n, c, reduction, ex->i[3], out, &total, &bad)) {
    fail_target(bad, target[bad], c);
  } else {
    dense_store(ex, 0, out);
    if (reduction != REDUCTION_NONE) dense_store(ex, 1, &total);
  }
  free(x);
  free(w);
  free(target);
  free(out);
}

aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                         const aclTensor *weight, int64_t reduction,
                                         int64_t ignoreIndex, aclTensor *out,
                                         aclTensor *totalWeightOut, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
  static const char op[] = "aclnnNLLLoss";
  SOP_CHECK(sop_check_nonnull(op, "self", self));
  SOP_CHECK(sop_check_nonnull(op, "target", target));
  SOP_CHECK(sop_check_nonnull(op, "weight", weight));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  SOP_CHECK(sop_check_nonnull(op, "totalWeightOut", totalWeightOut));
  SOP_CHECK(sop_check_tensor(op, "self", self, LOSS_TYPES));
  SOP_CHECK(sop_check_tensor(op, "target", target, TARGET_TYPES));
  SOP_CHECK(sop_check_tensor(op, "weight", weight, LOSS_TYPES));
  SOP_CHECK(sop_check_tensor(op, "out", out, LOSS_TYPES));
  SOP_CHECK(sop_check_tensor(op, "totalWeightOut", totalWeightOut, LOSS_TYPES));
  SOP_CHECK(check_reduction(op, reduction));
  int64_t n, c;
  SOP_CHECK(nll_shapes(op, self, target, weight, &n, &c));
  if (reduction == REDUCTION_NONE && self->ndim == 2) {
    SOP_CHECK(dense_check_shape(op, "out", out, 1, &n));
  } else {
    SOP_CHECK(check_one(op, "out", out));
  }
  SOP_CHECK(check_one(op, "totalWeightOut", totalWeightOut));
  aclOpExecutor *ex = sop_executor_new(op, 5, run_nll);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  sop_capture(ex, 1, totalWeightOut);
  sop_capture(ex, 2, self);
  sop_capture(ex, 3, target);
  sop_capture(ex, 4, weight);
  ex->i[0] = n;
  ex->i[1] = c;
  ex->i[2] = reduction;
  ex->i[3] = ignoreIndex;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(NLLLoss)

/* aclnnNLLLossBackward.  Slots: 0 out, 1 gradOutput, 2 target, 3 weight, 4 totalWeight; i[0]
 * N, i[1] C, i[2] reduction, i[3] ignoreIndex. */
static void run_nll_backward(aclOpExecutor *ex) {
  const int64_t n = ex->i[0], c = ex->i[1];
  double *g = dense_load(ex, 1), *w = dense_load(ex, 3), *total = dense_load(ex, 4);
  int64_t *target = dense_load_i(ex, 2);
  double *dx = dense_alloc(n * c, sizeof *dx);
  int64_t bad = 0;
  if (g == NULL || w == NULL || total == NULL || target == NULL || dx == NULL) {
    dense_fail_memory();
  } else if (!nll_backward(g, target, w, n, c, ex->i[2], ex->i[3], total[0], dx, &bad)) {
    fail_target(bad, target[bad], c);
  } else {
    dense_store(ex, 0, dx);
  }
  free(g);
  free(w);
  free(total);
  free(target);
  free(dx);
}

aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                 const aclTensor *target, const aclTensor *weight,
                                                 int64_t reduction, int64_t ignoreIndex,
                                                 const aclTensor *totalWeight, aclTensor *out,
                                                 uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
  static const char op[] = "aclnnNLLLossBackward";
  SOP_CHECK(sop_check_nonnull(op, "gradOutput", gradOutput));
  SOP_CHECK(sop_check_nonnull(op, "self", self));
  SOP_CHECK(sop_check_nonnull(op, "target", target));
  SOP_CHECK(sop_check_nonnull(op, "weight", weight));
  SOP_CHECK(sop_check_nonnull(op, "totalWeight", totalWeight));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  SOP_CHECK(sop_check_tensor(op, "gradOutput", gradOutput, LOSS_TYPES));
  SOP_CHECK(sop_check_tensor(op, "self", self, LOSS_TYPES));
  SOP_CHECK(sop_check_tensor(op, "target", target, TARGET_TYPES));
  SOP_CHECK(sop_check_tensor(op, "weight", weight, LOSS_TYPES));
  SOP_CHECK(sop_check_tensor(op, "totalWeight", totalWeight, LOSS_TYPES));
  SOP_CHECK(sop_check_tensor(op, "out", out, LOSS_TYPES));
  SOP_CHECK(check_reduction(op, reduction));
  int64_t n, c;
  SOP_CHECK(nll_shapes(op, self, target, weight, &n, &c));
  if (reduction == REDUCTION_NONE && self->ndim == 2) {
    SOP_CHECK(dense_check_shape(op, "gradOutput", gradOutput, 1, &n));
  } else {
    SOP_CHECK(check_one(op, "gradOutput", gradOutput));
  }
  SOP_CHECK(check_one(op, "totalWeight", totalWeight));
  SOP_CHECK(sop_check_same_shape(op, "out", out, "self", self));
  aclOpExecutor *ex = sop_executor_new(op, 5, run_nll_backward);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  sop_capture(ex, 1, gradOutput);
  sop_capture(ex, 2, target);
  sop_capture(ex, 3, weight);
  sop_capture(ex, 4, totalWeight);
  ex->i[0] = n;
  ex->i[1] = c;
  ex->i[2] = reduction;
  ex->i[3] = ignoreIndex;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(NLLLossBackward)

/* aclnnMseLoss / aclnnMseLossBackward.  Slots: 0 out, 1 self, 2 target, 3 gradOutput
 * (backward); i[0] reduction, i[1] backward; the inputs are read broadcast to the shape in
 * ex->state (an int64_t array: rank, then the dims). */
static void run_mse(aclOpExecutor *ex) {
  const int64_t *shape = ex->state;
  const int32_t rank = (int32_t)shape[0];
  const int64_t *dims = shape + 1;
  const int64_t reduction = ex->i[0];
  const bool backward = ex->i[1] != 0;
  int64_t numel = 1;
  for (int32_t d = 0; d < rank; d++) numel *= dims[d];
  double *x = dense_load_as(ex, 1, ACL_DOUBLE, rank, dims);
  double *y = dense_load_as(ex, 2, ACL_DOUBLE, rank, dims);
  double *g = backward ? dense_load_as(ex, 3, ACL_DOUBLE, rank, dims) : NULL;
  double *out = dense_alloc(backward || reduction == REDUCTION_NONE ? numel : 1, sizeof *out);
  if (x == NULL || y == NULL || (backward && g == NULL) || out == NULL) {
    dense_fail_memory();
  } else {
    if (backward) {
      mse_backward(g, x, y, numel, reduction, sop_numel(&ex->t[1]), out);
    } else {
      mse_forward(x, y, numel, reduction, out);
    }
    dense_store(ex, 0, out);
  }
  free(x);
  free(y);
  free(g);
  free(out);
}

static aclnnStatus mse_prepare(const char *op, const aclTensor *grad, const aclTensor *self,
                               const aclTensor *target, int64_t reduction, const aclTensor *out,
                               uint64_t *workspaceSize, aclOpExecutor **executor) {
  char a[160], b[160];
  const bool backward = grad != NULL;
  SOP_CHECK(sop_check_tensor(op, "self", self, LOSS_TYPES));
  SOP_CHECK(sop_check_tensor(op, "target", target, LOSS_TYPES));
  if (backward) SOP_CHECK(sop_check_tensor(op, "gradOutput", grad, LOSS_TYPES));
  SOP_CHECK(sop_check_tensor(op, "out", out, LOSS_TYPES));
  SOP_CHECK(check_reduction(op, reduction));
  /* The broadcast shape of the inputs. */
  const aclTensor *in[3] = {self, target, grad};
  const int32_t count = backward ? 3 : 2;
  int64_t shape[1 + SOP_OP_MAX_DIMS] = {0};
  int32_t rank = 0;
  for (int32_t k = 0; k < count; k++) rank = in[k]->ndim > rank ? in[k]->ndim : rank;
  for (int32_t d = 0; d < rank; d++) shape[1 + d] = 1;
  for (int32_t k = 0; k < count; k++) {
    for (int32_t d = 0; d < in[k]->ndim; d++) {
      int64_t *to = &shape[1 + rank - in[k]->ndim + d];
      if (in[k]->dims[d] == 1) continue;
      if (*to != 1 && *to != in[k]->dims[d]) {
        return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "self %s and target %s do not broadcast",
                        sop_shape_str(self, a), sop_shape_str(target, b));
      }
      *to = in[k]->dims[d];
    }
  }
  shape[0] = rank;
  if (backward) {
    if (grad->dtype != self->dtype || target->dtype != self->dtype) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "gradOutput and target must have self's type");
    }
    SOP_CHECK(dense_check_shape(op, "out", out, rank, shape + 1));
  } else {
    aclDataType compute = sop_promote(self->dtype, target->dtype);
    if (compute == ACL_DT_UNDEFINED) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "self and target have no common type");
    }
    SOP_CHECK(sop_check_cast(op, compute, "out", out));
    if (reduction == REDUCTION_NONE) {
      SOP_CHECK(dense_check_shape(op, "out", out, rank, shape + 1));
    } else {
      SOP_CHECK(dense_check_shape(op, "out", out, 0, NULL));
    }
  }
  int64_t *state = malloc(sizeof shape);
  if (state == NULL) return sop_fail(ACLNN_ERR_INNER, op, "out of host memory");
  memcpy(state, shape, sizeof shape);
  aclOpExecutor *ex = sop_executor_new(op, backward ? 4 : 3, run_mse);
  if (ex == NULL) {
    free(state);
    return ACLNN_ERR_INNER;
  }
  ex->state = state;
  ex->state_free = free;
  sop_capture(ex, 0, out);
  sop_capture(ex, 1, self);
  sop_capture(ex, 2, target);
  if (backward) sop_capture(ex, 3, grad);
  ex->i[0] = reduction;
  ex->i[1] = backward;
  return sop_finish(ex, 0, workspaceSize, executor);
}

aclnnStatus aclnnMseLossGetWorkspaceSize(const aclTensor *self, const aclTensor *target,
                                         int64_t reduction, aclTensor *out, uint64_t *workspaceSize,
                                         aclOpExecutor **executor) {
  static const char op[] = "aclnnMseLoss";
  SOP_CHECK(sop_check_nonnull(op, "self", self));
  SOP_CHECK(sop_check_nonnull(op, "target", target));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  return mse_prepare(op, NULL, self, target, reduction, out, workspaceSize, executor);
}
SOP_PHASE_TWO(MseLoss)

aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                 const aclTensor *target, int64_t reduction,
                                                 aclTensor *out, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
  static const char op[] = "aclnnMseLossBackward";
  SOP_CHECK(sop_check_nonnull(op, "gradOutput", gradOutput));
  SOP_CHECK(sop_check_nonnull(op, "self", self));
  SOP_CHECK(sop_check_nonnull(op, "target", target));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  return mse_prepare(op, gradOutput, self, target, reduction, out, workspaceSize, executor);
}
SOP_PHASE_TWO(MseLossBackward)
