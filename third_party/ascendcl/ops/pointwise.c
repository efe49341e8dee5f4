/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Pointwise arithmetic operators (aclnnop/aclnn_add.h, ...), each implementing the documented
 * aclnn semantics: inputs broadcast, computed in their promoted type ("deduction
 * relationship"), stored into out's type when the conversion is allowed.
 */
#include "aclnnop/aclnn_add.h"
#include "internal.h"

/* ---- shared phase one ---- */

static aclnnStatus scalar_value(const aclScalar *s, double *f, int64_t *i) {
  *f = sop_load_f(s->value, s->dtype);
  *i = sop_load_i(s->value, s->dtype);
  return ACLNN_SUCCESS;
}

/* out = elem(self, other[, alpha in f[0]/i[0]]): other a tensor (other_t) or a scalar
 * (other_s); the compute type is their promotion and must be in `dtypes`; alpha, when given,
 * must cast to it. */
static aclnnStatus binary(const char *op, sop_elem_fn elem, uint64_t dtypes, const char *self_arg,
                          const aclTensor *self, const aclTensor *other_t, const aclScalar *other_s,
                          bool has_alpha, const aclScalar *alpha, const char *out_arg,
                          const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
  SOP_CHECK(sop_check_nonnull(op, self_arg, self));
  SOP_CHECK(sop_check_nonnull(op, "other", other_t != NULL ? (const void *)other_t : other_s));
  if (has_alpha) SOP_CHECK(sop_check_nonnull(op, "alpha", alpha));
  SOP_CHECK(sop_check_nonnull(op, out_arg, out));
  SOP_CHECK(sop_check_tensor(op, self_arg, self, dtypes));
  if (other_t != NULL) {
    SOP_CHECK(sop_check_tensor(op, "other", other_t, dtypes));
  } else {
    SOP_CHECK(sop_check_scalar(op, "other", other_s, SOP_ALL));
  }
  SOP_CHECK(sop_check_tensor(op, out_arg, out, dtypes));
  aclDataType compute = other_t != NULL ? sop_promote(self->dtype, other_t->dtype)
                                        : sop_promote_scalar(self->dtype, other_s->dtype);
  if (compute == ACL_DT_UNDEFINED || !(dtypes & SOP_BIT(compute))) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s (%s) and other (%s) have no common type",
                    self_arg, sop_dtype_name(self->dtype),
                    sop_dtype_name(other_t != NULL ? other_t->dtype : other_s->dtype));
  }
  if (has_alpha && !sop_can_cast(alpha->dtype, compute)) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "alpha (%s) cannot be cast to the compute type %s",
                    sop_dtype_name(alpha->dtype), sop_dtype_name(compute));
  }
  sop_operand in[2] = {{self_arg, self, NULL}, {"other", other_t, other_s}};
  aclOpExecutor *ex;
  SOP_CHECK(sop_pointwise_prepare(op, elem, out_arg, out, 2, in, compute, compute, &ex));
  ex->f[0] = 1;
  ex->i[0] = 1;
  if (has_alpha) scalar_value(alpha, &ex->f[0], &ex->i[0]);
  return sop_finish(ex, 0, workspaceSize, executor);
}

/* Integer arithmetic wraps (two's complement), as the device's does. */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* ---- aclnnAdd, aclnnAdds, aclnnInplaceAdd, aclnnInplaceAdds: self + alpha * other ---- */

static sop_value add_elem(const sop_value *x, bool is_float, const aclOpExecutor *ex) {
  sop_value v;
  if (is_float) {
    v.f = x[0].f + ex->f[0] * x[1].f;
  } else {
    v.i = wrap_add(x[0].i, wrap_mul(ex->i[0], x[1].i));
  }
  return v;
}

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                     const aclScalar *alpha, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor) {
  SOP_CHECK(sop_check_nonnull("aclnnAdd", "other", other));
  return binary("aclnnAdd", add_elem, SOP_ALL, "self", self, other, NULL, true, alpha, "out", out,
                workspaceSize, executor);
}
SOP_PHASE_TWO(Add)

aclnnStatus aclnnInplaceAddGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *other,
                                            const aclScalar *alpha, uint64_t *workspaceSize,
                                            aclOpExecutor **executor) {
  SOP_CHECK(sop_check_nonnull("aclnnInplaceAdd", "other", other));
  return binary("aclnnInplaceAdd", add_elem, SOP_ALL, "selfRef", selfRef, other, NULL, true, alpha,
                "selfRef", selfRef, workspaceSize, executor);
}
SOP_PHASE_TWO(InplaceAdd)

aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                      const aclScalar *alpha, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
  SOP_CHECK(sop_check_nonnull("aclnnAdds", "other", other));
  return binary("aclnnAdds", add_elem, SOP_ALL, "self", self, NULL, other, true, alpha, "out", out,
                workspaceSize, executor);
}
SOP_PHASE_TWO(Adds)

aclnnStatus aclnnInplaceAddsGetWorkspaceSize(const aclTensor *selfRef, const aclScalar *other,
                                             const aclScalar *alpha, uint64_t *workspaceSize,
                                             aclOpExecutor **executor) {
  SOP_CHECK(sop_check_nonnull("aclnnInplaceAdds", "other", other));
  return binary("aclnnInplaceAdds", add_elem, SOP_ALL, "selfRef", selfRef, NULL, other, true, alpha,
                "selfRef", selfRef, workspaceSize, executor);
}
SOP_PHASE_TWO(InplaceAdds)
