/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * aclnnTril and aclnnArange (ops-math docs): a triangle of a (batched) matrix, and a range.
 */
#include <math.h>

#include "aclnnop/aclnn_arange.h"
#include "aclnnop/aclnn_tril.h"
#include "internal.h"

/* i[0]: diagonal */
static void tril_run(aclOpExecutor *ex) {
  const aclTensor *t[2] = {&ex->t[0], &ex->t[1]};
  void *base[2] = {sop_host(ex, 0), sop_host(ex, 1)};
  sop_iter it;
  int32_t nd = t[0]->ndim;
  int64_t n = sop_iter_init(&it, nd, t[0]->dims, 2, t, base);
  sop_value zero = {0};
  for (int64_t e = 0; e < n; e++, sop_iter_next(&it)) {
    bool keep = it.idx[nd - 1] - it.idx[nd - 2] <= ex->i[0];
    sop_value v = keep ? sop_load(it.ptr[1], t[1]->dtype, t[1]->dtype) : zero;
    if (!keep && sop_is_float(t[1]->dtype)) v.f = 0;
    sop_store(it.ptr[0], t[0]->dtype, v, t[1]->dtype);
  }
}

aclnnStatus aclnnTrilGetWorkspaceSize(const aclTensor *self, int64_t diagonal, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
  static const char op[] = "aclnnTril";
  SOP_CHECK(sop_check_tensor(op, "self", self, SOP_ALL));
  SOP_CHECK(sop_check_tensor(op, "out", out, SOP_ALL));
  if (self->ndim < 2) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "self has %d dimensions; at least 2 are needed",
                    (int)self->ndim);
  }
  SOP_CHECK(sop_check_same_shape(op, "out", out, "self", self));
  if (out->dtype != self->dtype) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "out (%s) and self (%s) differ in dtype",
                    sop_dtype_name(out->dtype), sop_dtype_name(self->dtype));
  }
  aclOpExecutor *ex = sop_executor_new(op, 2, tril_run);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  sop_capture(ex, 1, self);
  ex->i[0] = diagonal;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(Tril)

/* f[0], f[1]: start, step (i[0], i[1] for integer outs).  Element k is start + k * step; the
 * stand-in rounds it as PyTorch's CPU kernel does, so that results match the CPU bit for bit:
 * in double for float32/float64 outs and in float for float16/bfloat16, through that kernel's
 * vectorised loop (two vectors of 32 bytes at a time: a vector's first element is start +
 * step * k, the others that element rounded to the out's type plus j * step, fused
 * multiply-adds), the elements after the last pair of vectors by the first formula. */
static double arange_value(const aclOpExecutor *ex, aclDataType dt, int64_t k, int64_t lanes,
                           int64_t vectored) {
  bool vector = k < vectored;
  int64_t first = vector ? k - k % lanes : k;
  double j = (double)(k - first);
  if (dt == ACL_DOUBLE || dt == ACL_FLOAT) {
    double base = fma(ex->f[1], (double)first, ex->f[0]);
    if (!vector) return base;
    return fma(j, ex->f[1], dt == ACL_FLOAT ? (double)(float)base : base);
  }
  float start = (float)ex->f[0], step = (float)ex->f[1];
  float base = fmaf(step, (float)first, start);
  if (!vector) return base;
  unsigned char element[2];
  sop_store_f(element, dt, base);
  return fmaf((float)j, step, (float)sop_load_f(element, dt));
}

static void arange_run(aclOpExecutor *ex) {
  const aclTensor *out = &ex->t[0];
  char *p = sop_host(ex, 0);
  int64_t size = (int64_t)sop_size(out->dtype), n = out->dims[0];
  int64_t lanes = 32 / size, vectored = n - n % (2 * lanes);
  for (int64_t k = 0; k < n; k++) {
    char *q = p + k * out->strides[0] * size;
    if (sop_is_float(out->dtype)) {
      sop_store_f(q, out->dtype, arange_value(ex, out->dtype, k, lanes, vectored));
    } else {
      sop_store_i(q, out->dtype, (int64_t)((uint64_t)ex->i[0] + (uint64_t)k * (uint64_t)ex->i[1]));
    }
  }
}

aclnnStatus aclnnArangeGetWorkspaceSize(const aclScalar *start, const aclScalar *end,
                                        const aclScalar *step, aclTensor *out,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
  static const char op[] = "aclnnArange";
  SOP_CHECK(sop_check_scalar(op, "start", start, SOP_NUMBERS));
  SOP_CHECK(sop_check_scalar(op, "end", end, SOP_NUMBERS));
  SOP_CHECK(sop_check_scalar(op, "step", step, SOP_NUMBERS));
  SOP_CHECK(sop_check_tensor(op, "out", out, SOP_NUMBERS));
  double a = sop_load_f(start->value, start->dtype), b = sop_load_f(end->value, end->dtype);
  double s = sop_load_f(step->value, step->dtype);
  if (s == 0 || s != s || a != a || b != b || (b - a) / s < 0) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "start %g, end %g and step %g give no range (step must be non-zero and "
                    "point from start to end)",
                    a, b, s);
  }
  bool integral =
      !sop_is_float(start->dtype) && !sop_is_float(end->dtype) && !sop_is_float(step->dtype);
  int64_t count;
  if (integral) {
    int64_t ia = sop_load_i(start->value, start->dtype), ib = sop_load_i(end->value, end->dtype);
    int64_t is = sop_load_i(step->value, step->dtype);
    count = is > 0 ? (ib - ia + is - 1) / is : (ia - ib - is - 1) / -is;
  } else {
    count = (int64_t)ceil((b - a) / s);
  }
  if (out->ndim != 1 || out->dims[0] != count) {
    char shape[160];
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "out has shape %s; the range has %lld elements",
                    sop_shape_str(out, shape), (long long)count);
  }
  aclOpExecutor *ex = sop_executor_new(op, 1, arange_run);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  ex->f[0] = a;
  ex->f[1] = s;
  ex->i[0] = sop_load_i(start->value, start->dtype);
  ex->i[1] = sop_load_i(step->value, step->dtype);
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(Arange)
