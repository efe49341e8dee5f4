/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Pointwise operators: arithmetic (add, sub, mul, div, addcmul, addcdiv, lerp, pow), clamps,
 * comparisons, bitwise and, where, masked fill, copy and fill.  Each implements its documented
 * aclnn semantics (hicann/ops-math docs): inputs broadcast to out's shape, computed in their
 * promoted type ("deduction relationship"), results stored into out's type when the
 * "conversion relationship" allows it.
 */
#include <math.h>

#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_addcdiv.h"
#include "aclnnop/aclnn_addcmul.h"
#include "aclnnop/aclnn_bitwise_and_scalar.h"
#include "aclnnop/aclnn_bitwise_and_tensor.h"
#include "aclnnop/aclnn_clamp.h"
#include "aclnnop/aclnn_copy.h"
#include "aclnnop/aclnn_div.h"
#include "aclnnop/aclnn_eq_scalar.h"
#include "aclnnop/aclnn_eq_tensor.h"
#include "aclnnop/aclnn_fill_scalar.h"
#include "aclnnop/aclnn_ge_scalar.h"
#include "aclnnop/aclnn_ge_tensor.h"
#include "aclnnop/aclnn_gt_scalar.h"
#include "aclnnop/aclnn_gt_tensor.h"
#include "aclnnop/aclnn_le_scalar.h"
#include "aclnnop/aclnn_le_tensor.h"
#include "aclnnop/aclnn_lerp_scalar.h"
#include "aclnnop/aclnn_lerp_tensor.h"
#include "aclnnop/aclnn_lt_scalar.h"
#include "aclnnop/aclnn_lt_tensor.h"
#include "aclnnop/aclnn_masked_fill_scalar.h"
#include "aclnnop/aclnn_maximum.h"
#include "aclnnop/aclnn_minimum.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_ne_scalar.h"
#include "aclnnop/aclnn_ne_tensor.h"
#include "aclnnop/aclnn_pow.h"
#include "aclnnop/aclnn_rsub.h"
#include "aclnnop/aclnn_s_where.h"
#include "aclnnop/aclnn_sub.h"
#include "internal.h"
#include "pointwise.h"

aclnnStatus pw_run(const sop_pointwise_spec *spec, const char *out_arg, const aclTensor *out,
                   int32_t n, const sop_operand *in, const pw_param *params, int32_t num_params,
                   bool cast_params, uint64_t *workspaceSize, aclOpExecutor **executor) {
  aclOpExecutor *ex;
  SOP_CHECK(sop_pointwise_op(spec, out_arg, out, n, in, &ex));
  for (int32_t k = 0; k < num_params; k++) {
    const aclScalar *s = params[k].s;
    if (s == NULL) continue;
    if (cast_params && !sop_can_cast(s->dtype, ex->compute)) {
      aclDataType compute = ex->compute;
      sop_executor_release(ex);
      return sop_fail(ACLNN_ERR_PARAM_INVALID, spec->name,
                      "%s (%s) cannot be cast to the compute type %s", params[k].arg,
                      sop_dtype_name(s->dtype), sop_dtype_name(compute));
    }
    sop_param(ex, k, s);
  }
  return sop_finish(ex, 0, workspaceSize, executor);
}

/* Integer arithmetic wraps (two's complement), as the device's does. */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* ---- add, sub: self +- alpha * other ---- */

PW_ELEM(add_elem, x[0].f + ex->f[0] * x[1].f, wrap_add(x[0].i, wrap_mul(ex->i[0], x[1].i)))
PW_ELEM(sub_elem, x[0].f - ex->f[0] * x[1].f, wrap_add(x[0].i, wrap_mul(-ex->i[0], x[1].i)))
static const sop_pointwise_spec k_add = {"aclnnAdd", add_elem, SOP_ALL, SOP_ALL, 0};
static const sop_pointwise_spec k_adds = {"aclnnAdds", add_elem, SOP_ALL, SOP_ALL, 0};
static const sop_pointwise_spec k_inplace_add = {"aclnnInplaceAdd", add_elem, SOP_ALL, SOP_ALL, 0};
static const sop_pointwise_spec k_inplace_adds = {"aclnnInplaceAdds", add_elem, SOP_ALL, SOP_ALL,
                                                  0};
static const sop_pointwise_spec k_sub = {"aclnnSub", sub_elem, SOP_NUMBERS, SOP_NUMBERS, 0};
static const sop_pointwise_spec k_subs = {"aclnnSubs", sub_elem, SOP_NUMBERS, SOP_NUMBERS, 0};
static const sop_pointwise_spec k_inplace_sub = {"aclnnInplaceSub", sub_elem, SOP_NUMBERS,
                                                 SOP_NUMBERS, 0};
static const sop_pointwise_spec k_inplace_subs = {"aclnnInplaceSubs", sub_elem, SOP_NUMBERS,
                                                  SOP_NUMBERS, 0};

/* rsub: other - alpha * self, other a scalar (operand 1) */
PW_ELEM(rsub_elem, x[1].f - ex->f[0] * x[0].f, wrap_add(x[1].i, wrap_mul(-ex->i[0], x[0].i)))
static const sop_pointwise_spec k_rsubs = {"aclnnRsubs", rsub_elem, SOP_NUMBERS, SOP_NUMBERS, 0};

/* out = f(self, other; alpha): other a tensor or a scalar; alpha required and castable. */
static aclnnStatus with_alpha(const sop_pointwise_spec *spec, const char *self_arg,
                              const aclTensor *self, const aclTensor *other_t,
                              const aclScalar *other_s, const aclScalar *alpha,
                              const aclTensor *out, uint64_t *workspaceSize,
                              aclOpExecutor **executor) {
  SOP_CHECK(sop_check_nonnull(spec->name, "alpha", alpha));
  sop_operand in[2] = {{self_arg, self, NULL, 0}, {"other", other_t, other_s, 0}};
  pw_param params[1] = {{"alpha", alpha}};
  return pw_run(spec, out == self ? self_arg : "out", out, 2, in, params, 1, true, workspaceSize,
                executor);
}

#define ALPHA_OPS(Name, Lower)                                                                     \
  aclnnStatus aclnn##Name##GetWorkspaceSize(const aclTensor *self, const aclTensor *other,         \
                                            const aclScalar *alpha, aclTensor *out,                \
                                            uint64_t *workspaceSize, aclOpExecutor **executor) {   \
    SOP_CHECK(sop_check_nonnull(k_##Lower.name, "other", other));                                  \
    SOP_CHECK(sop_check_nonnull(k_##Lower.name, "out", out));                                      \
    return with_alpha(&k_##Lower, "self", self, other, NULL, alpha, out, workspaceSize, executor); \
  }                                                                                                \
  SOP_PHASE_TWO(Name)                                                                              \
  aclnnStatus aclnn##Name##sGetWorkspaceSize(const aclTensor *self, const aclScalar *other,        \
                                             const aclScalar *alpha, aclTensor *out,               \
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {  \
    SOP_CHECK(sop_check_nonnull(k_##Lower##s.name, "other", other));                               \
    SOP_CHECK(sop_check_nonnull(k_##Lower##s.name, "out", out));                                   \
    return with_alpha(&k_##Lower##s, "self", self, NULL, other, alpha, out, workspaceSize,         \
                      executor);                                                                   \
  }                                                                                                \
  SOP_PHASE_TWO(Name##s)                                                                           \
  aclnnStatus aclnnInplace##Name##GetWorkspaceSize(                                                \
      const aclTensor *selfRef, const aclTensor *other, const aclScalar *alpha,                    \
      uint64_t *workspaceSize, aclOpExecutor **executor) {                                         \
    SOP_CHECK(sop_check_nonnull(k_inplace_##Lower.name, "other", other));                          \
    return with_alpha(&k_inplace_##Lower, "selfRef", selfRef, other, NULL, alpha, selfRef,         \
                      workspaceSize, executor);                                                    \
  }                                                                                                \
  SOP_PHASE_TWO(Inplace##Name)                                                                     \
  aclnnStatus aclnnInplace##Name##sGetWorkspaceSize(                                               \
      const aclTensor *selfRef, const aclScalar *other, const aclScalar *alpha,                    \
      uint64_t *workspaceSize, aclOpExecutor **executor) {                                         \
    SOP_CHECK(sop_check_nonnull(k_inplace_##Lower##s.name, "other", other));                       \
    return with_alpha(&k_inplace_##Lower##s, "selfRef", selfRef, NULL, other, alpha, selfRef,      \
                      workspaceSize, executor);                                                    \
  }                                                                                                \
  SOP_PHASE_TWO(Inplace##Name##s)
ALPHA_OPS(Add, add)
ALPHA_OPS(Sub, sub)

/* ---- mul, div: self op other (tensor or scalar), and in place ---- */

PW_ELEM(mul_elem, x[0].f *x[1].f, wrap_mul(x[0].i, x[1].i))
PW_ELEM(div_elem, x[0].f / x[1].f, 0)

#define BINARY_OPS(Name, elem, inputs, computes, flags)                                           \
  static const sop_pointwise_spec k_##Name = {"aclnn" #Name, elem, inputs, computes, flags};      \
  static const sop_pointwise_spec k_##Name##s = {"aclnn" #Name "s", elem, inputs, computes,       \
                                                 flags};                                          \
  static const sop_pointwise_spec k_inplace_##Name = {"aclnnInplace" #Name, elem, inputs,         \
                                                      computes, flags};                           \
  static const sop_pointwise_spec k_inplace_##Name##s = {"aclnnInplace" #Name "s", elem, inputs,  \
                                                         computes, flags};                        \
  aclnnStatus aclnn##Name##GetWorkspaceSize(const aclTensor *self, const aclTensor *other,        \
                                            aclTensor *out, uint64_t *workspaceSize,              \
                                            aclOpExecutor **executor) {                           \
    sop_operand in[2] = {{"self", self, NULL, 0}, {"other", other, NULL, 0}};                     \
    return pw_run(&k_##Name, "out", out, 2, in, NULL, 0, false, workspaceSize, executor);         \
  }                                                                                               \
  SOP_PHASE_TWO(Name)                                                                             \
  aclnnStatus aclnn##Name##sGetWorkspaceSize(const aclTensor *self, const aclScalar *other,       \
                                             aclTensor *out, uint64_t *workspaceSize,             \
                                             aclOpExecutor **executor) {                          \
    if (other == NULL) return sop_check_nonnull(k_##Name##s.name, "other", NULL);                 \
    sop_operand in[2] = {{"self", self, NULL, 0}, {"other", NULL, other, 0}};                     \
    return pw_run(&k_##Name##s, "out", out, 2, in, NULL, 0, false, workspaceSize, executor);      \
  }                                                                                               \
  SOP_PHASE_TWO(Name##s)                                                                          \
  aclnnStatus aclnnInplace##Name##GetWorkspaceSize(                                               \
      const aclTensor *selfRef, const aclTensor *other, uint64_t *workspaceSize,                  \
      aclOpExecutor **executor) {                                                                 \
    sop_operand in[2] = {{"selfRef", selfRef, NULL, 0}, {"other", other, NULL, 0}};               \
    return pw_run(&k_inplace_##Name, "selfRef", selfRef, 2, in, NULL, 0, false, workspaceSize,    \
                  executor);                                                                      \
  }                                                                                               \
  SOP_PHASE_TWO(Inplace##Name)                                                                    \
  aclnnStatus aclnnInplace##Name##sGetWorkspaceSize(                                              \
      const aclTensor *selfRef, const aclScalar *other, uint64_t *workspaceSize,                  \
      aclOpExecutor **executor) {                                                                 \
    if (other == NULL) return sop_check_nonnull(k_inplace_##Name##s.name, "other", NULL);         \
    sop_operand in[2] = {{"selfRef", selfRef, NULL, 0}, {"other", NULL, other, 0}};               \
    return pw_run(&k_inplace_##Name##s, "selfRef", selfRef, 2, in, NULL, 0, false, workspaceSize, \
                  executor);                                                                      \
  }                                                                                               \
  SOP_PHASE_TWO(Inplace##Name##s)
BINARY_OPS(Mul, mul_elem, SOP_ALL, SOP_ALL, 0)
BINARY_OPS(Div, div_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)

/* ---- addcmul, addcdiv: self + value * tensor1 (* or /) tensor2 ---- */

PW_ELEM(addcmul_elem, x[0].f + ex->f[0] * x[1].f * x[2].f,
        wrap_add(x[0].i, wrap_mul(ex->i[0], wrap_mul(x[1].i, x[2].i))))
PW_ELEM(addcdiv_elem, x[0].f + ex->f[0] * (x[1].f / x[2].f), 0)
static const sop_pointwise_spec k_addcmul = {"aclnnAddcmul", addcmul_elem, SOP_NUMBERS, SOP_NUMBERS,
                                             0};
static const sop_pointwise_spec k_addcdiv = {"aclnnAddcdiv", addcdiv_elem, SOP_FLOATS, SOP_FLOATS,
                                             0};

#define TERNARY_VALUE_OP(Name, spec)                                                               \
  aclnnStatus aclnn##Name##GetWorkspaceSize(                                                       \
      const aclTensor *self, const aclTensor *tensor1, const aclTensor *tensor2,                   \
      const aclScalar *value, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) { \
    SOP_CHECK(sop_check_nonnull(spec.name, "value", value));                                       \
    sop_operand in[3] = {                                                                          \
        {"self", self, NULL, 0}, {"tensor1", tensor1, NULL, 0}, {"tensor2", tensor2, NULL, 0}};    \
    pw_param params[1] = {{"value", value}};                                                       \
    return pw_run(&spec, "out", out, 3, in, params, 1, true, workspaceSize, executor);             \
  }                                                                                                \
  SOP_PHASE_TWO(Name)
TERNARY_VALUE_OP(Addcmul, k_addcmul)
TERNARY_VALUE_OP(Addcdiv, k_addcdiv)

/* ---- lerp: self + weight * (end - self), weight a scalar (Lerps) or a tensor (Lerp) ---- */

static double lerp(double a, double b, double w) {
  return fabs(w) < 0.5 ? a + w * (b - a) : b - (b - a) * (1 - w);
}
PW_ELEM(lerps_elem, lerp(x[0].f, x[1].f, ex->f[0]), 0)
PW_ELEM(lerp_elem, lerp(x[0].f, x[1].f, x[2].f), 0)
static const sop_pointwise_spec k_lerps = {"aclnnLerps", lerps_elem, SOP_FLOATS, SOP_FLOATS, 0};
static const sop_pointwise_spec k_lerp = {"aclnnLerp", lerp_elem, SOP_FLOATS, SOP_FLOATS, 0};

aclnnStatus aclnnLerpsGetWorkspaceSize(const aclTensor *self, const aclTensor *end,
                                       const aclScalar *weight, aclTensor *out,
                                       uint64_t *workspaceSize, aclOpExecutor **executor) {
  SOP_CHECK(sop_check_nonnull(k_lerps.name, "weight", weight));
  sop_operand in[2] = {{"self", self, NULL, 0}, {"end", end, NULL, 0}};
  pw_param params[1] = {{"weight", weight}};
  return pw_run(&k_lerps, "out", out, 2, in, params, 1, true, workspaceSize, executor);
}
SOP_PHASE_TWO(Lerps)

aclnnStatus aclnnLerpGetWorkspaceSize(const aclTensor *self, const aclTensor *end,
                                      const aclTensor *weight, aclTensor *out,
                                      uint64_t *workspaceSize, aclOpExecutor **executor) {
  sop_operand in[3] = {{"self", self, NULL, 0}, {"end", end, NULL, 0}, {"weight", weight, NULL, 0}};
  return pw_run(&k_lerp, "out", out, 3, in, NULL, 0, false, workspaceSize, executor);
}
SOP_PHASE_TWO(Lerp)

/* ---- pow: self ** exponent, exponent a scalar ---- */

static int64_t ipow(int64_t base, int64_t exp) {
  if (exp < 0) return base == 1 ? 1 : base == -1 ? (exp % 2 ? -1 : 1) : 0;
  int64_t r = 1;
  for (; exp > 0; exp >>= 1, base = wrap_mul(base, base)) {
    if (exp & 1) r = wrap_mul(r, base);
  }
  return r;
}
PW_ELEM(pow_elem, pow(x[0].f, x[1].f), ipow(x[0].i, x[1].i))
static const sop_pointwise_spec k_pow_ts = {"aclnnPowTensorScalar", pow_elem, SOP_NUMBERS,
                                            SOP_NUMBERS, 0};

aclnnStatus aclnnPowTensorScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *exponent,
                                                 aclTensor *out, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
  if (exponent == NULL) return sop_check_nonnull(k_pow_ts.name, "exponent", NULL);
  sop_operand in[2] = {{"self", self, NULL, 0}, {"exponent", NULL, exponent, 0}};
  return pw_run(&k_pow_ts, "out", out, 2, in, NULL, 0, false, workspaceSize, executor);
}
SOP_PHASE_TWO(PowTensorScalar)

aclnnStatus aclnnRsubsGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                       const aclScalar *alpha, aclTensor *out,
                                       uint64_t *workspaceSize, aclOpExecutor **executor) {
  SOP_CHECK(sop_check_nonnull(k_rsubs.name, "other", other));
  SOP_CHECK(sop_check_nonnull(k_rsubs.name, "out", out));
  return with_alpha(&k_rsubs, "self", self, NULL, other, alpha, out, workspaceSize, executor);
}
SOP_PHASE_TWO(Rsubs)

static const sop_pointwise_spec k_pow_st = {"aclnnPowScalarTensor", pow_elem, SOP_FLOATS,
                                            SOP_FLOATS, 0};

aclnnStatus aclnnPowScalarTensorGetWorkspaceSize(const aclScalar *self, const aclTensor *exponent,
                                                 aclTensor *out, uint64_t *workspaceSize,
                                                 aclOpExecutor **executor) {
  if (self == NULL) return sop_check_nonnull(k_pow_st.name, "self", NULL);
  sop_operand in[2] = {{"self", NULL, self, 0}, {"exponent", exponent, NULL, 0}};
  return pw_run(&k_pow_st, "out", out, 2, in, NULL, 0, false, workspaceSize, executor);
}
SOP_PHASE_TWO(PowScalarTensor)

/* ---- clamps: NaN in the input or a bound propagates ---- */

static sop_value maximum(sop_value a, sop_value b, bool is_float) {
  if (!is_float) return a.i >= b.i ? a : b;
  return a.f != a.f ? a : b.f != b.f ? b : a.f >= b.f ? a : b;
}
static sop_value minimum(sop_value a, sop_value b, bool is_float) {
  if (!is_float) return a.i <= b.i ? a : b;
  return a.f != a.f ? a : b.f != b.f ? b : a.f <= b.f ? a : b;
}
/* i[0], i[1]: whether min, max are given; they are the operands after self, in order */
static sop_value clamp_one(const sop_value *x, bool is_float, const aclOpExecutor *ex) {
  sop_value v = x[0];
  int k = 1;
  if (ex->i[0]) v = maximum(v, x[k++], is_float);
  if (ex->i[1]) v = minimum(v, x[k], is_float);
  return v;
}
PW_ELEM_OF(clamp_elem, clamp_one)
static sop_value max_one(const sop_value *x, bool is_float, const aclOpExecutor *ex) {
  (void)ex;
  return maximum(x[0], x[1], is_float);
}
PW_ELEM_OF(max_elem, max_one)
static sop_value min_one(const sop_value *x, bool is_float, const aclOpExecutor *ex) {
  (void)ex;
  return minimum(x[0], x[1], is_float);
}
PW_ELEM_OF(min_elem, min_one)
static const sop_pointwise_spec k_clamp = {"aclnnClamp", clamp_elem, SOP_NUMBERS, SOP_NUMBERS, 0};
static const sop_pointwise_spec k_clamp_min = {"aclnnClampMin", max_elem, SOP_NUMBERS, SOP_NUMBERS,
                                               0};
static const sop_pointwise_spec k_clamp_min_t = {"aclnnClampMinTensor", max_elem, SOP_NUMBERS,
                                                 SOP_NUMBERS, 0};
static const sop_pointwise_spec k_clamp_max = {"aclnnClampMax", min_elem, SOP_NUMBERS, SOP_NUMBERS,
                                               0};
static const sop_pointwise_spec k_clamp_max_t = {"aclnnClampMaxTensor", min_elem, SOP_NUMBERS,
                                                 SOP_NUMBERS, 0};
static const sop_pointwise_spec k_maximum = {"aclnnMaximum", max_elem, SOP_NUMBERS, SOP_NUMBERS, 0};
static const sop_pointwise_spec k_minimum = {"aclnnMinimum", min_elem, SOP_NUMBERS, SOP_NUMBERS, 0};

aclnnStatus aclnnClampGetWorkspaceSize(const aclTensor *self, const aclScalar *clipValueMin,
                                       const aclScalar *clipValueMax, aclTensor *out,
                                       uint64_t *workspaceSize, aclOpExecutor **executor) {
  if (clipValueMin == NULL && clipValueMax == NULL) {
    return sop_fail(ACLNN_ERR_PARAM_NULLPTR, k_clamp.name,
                    "clipValueMin and clipValueMax are both null pointers");
  }
  sop_operand in[3] = {{"self", self, NULL, 0}};
  int32_t n = 1;
  if (clipValueMin != NULL) in[n++] = (sop_operand){"clipValueMin", NULL, clipValueMin, 0};
  if (clipValueMax != NULL) in[n++] = (sop_operand){"clipValueMax", NULL, clipValueMax, 0};
  aclOpExecutor *ex;
  SOP_CHECK(sop_pointwise_op(&k_clamp, "out", out, n, in, &ex));
  ex->i[0] = clipValueMin != NULL;
  ex->i[1] = clipValueMax != NULL;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(Clamp)

aclnnStatus aclnnClampMinGetWorkspaceSize(const aclTensor *self, const aclScalar *clipValueMin,
                                          aclTensor *out, uint64_t *workspaceSize,
                                          aclOpExecutor **executor) {
  if (clipValueMin == NULL) return sop_check_nonnull(k_clamp_min.name, "clipValueMin", NULL);
  sop_operand in[2] = {{"self", self, NULL, 0}, {"clipValueMin", NULL, clipValueMin, 0}};
  return pw_run(&k_clamp_min, "out", out, 2, in, NULL, 0, false, workspaceSize, executor);
}
SOP_PHASE_TWO(ClampMin)

aclnnStatus aclnnClampMinTensorGetWorkspaceSize(const aclTensor *self,
                                                const aclTensor *clipValueMin, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor) {
  sop_operand in[2] = {{"self", self, NULL, 0}, {"clipValueMin", clipValueMin, NULL, 0}};
  return pw_run(&k_clamp_min_t, "out", out, 2, in, NULL, 0, false, workspaceSize, executor);
}
SOP_PHASE_TWO(ClampMinTensor)

aclnnStatus aclnnClampMaxGetWorkspaceSize(const aclTensor *self, const aclScalar *clipValueMax,
                                          aclTensor *out, uint64_t *workspaceSize,
                                          aclOpExecutor **executor) {
  if (clipValueMax == NULL) return sop_check_nonnull(k_clamp_max.name, "clipValueMax", NULL);
  sop_operand in[2] = {{"self", self, NULL, 0}, {"clipValueMax", NULL, clipValueMax, 0}};
  return pw_run(&k_clamp_max, "out", out, 2, in, NULL, 0, false, workspaceSize, executor);
}
SOP_PHASE_TWO(ClampMax)

/* out = op(self, other), both tensors: ClampMaxTensor, Maximum, Minimum */
#define TENSOR_PAIR_OP(Name, spec, other_arg)                                                  \
  aclnnStatus aclnn##Name##GetWorkspaceSize(const aclTensor *self, const aclTensor *other_arg, \
                                            aclTensor *out, uint64_t *workspaceSize,           \
                                            aclOpExecutor **executor) {                        \
    sop_operand in[2] = {{"self", self, NULL, 0}, {#other_arg, other_arg, NULL, 0}};           \
    return pw_run(&spec, "out", out, 2, in, NULL, 0, false, workspaceSize, executor);          \
  }                                                                                            \
  SOP_PHASE_TWO(Name)
TENSOR_PAIR_OP(ClampMaxTensor, k_clamp_max_t, clipValueMax)
TENSOR_PAIR_OP(Maximum, k_maximum, other)
TENSOR_PAIR_OP(Minimum, k_minimum, other)

/* ---- comparisons: bool results of self op other (a tensor or a scalar) ---- */

#define COMPARE_ELEM(name, op)                                                              \
  static sop_value name##_one(const sop_value *x, bool is_float, const aclOpExecutor *ex) { \
    (void)ex;                                                                               \
    sop_value v;                                                                            \
    v.i = is_float ? (x[0].f op x[1].f) : (x[0].i op x[1].i);                               \
    return v;                                                                               \
  }                                                                                         \
  PW_ELEM_OF(name, name##_one)
#define COMPARE_OPS(Name, op)                                                                    \
  COMPARE_ELEM(Name##_elem, op)                                                                  \
  static const sop_pointwise_spec k_##Name##_t = {"aclnn" #Name "Tensor", Name##_elem, SOP_ALL,  \
                                                  SOP_ALL, SOP_PW_BOOL_RESULT};                  \
  static const sop_pointwise_spec k_##Name##_s = {"aclnn" #Name "Scalar", Name##_elem, SOP_ALL,  \
                                                  SOP_ALL, SOP_PW_BOOL_RESULT};                  \
  aclnnStatus aclnn##Name##TensorGetWorkspaceSize(const aclTensor *self, const aclTensor *other, \
                                                  aclTensor *out, uint64_t *workspaceSize,       \
                                                  aclOpExecutor **executor) {                    \
    sop_operand in[2] = {{"self", self, NULL, 0}, {"other", other, NULL, 0}};                    \
    return pw_run(&k_##Name##_t, "out", out, 2, in, NULL, 0, false, workspaceSize, executor);    \
  }                                                                                              \
  SOP_PHASE_TWO(Name##Tensor)                                                                    \
  aclnnStatus aclnn##Name##ScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *other, \
                                                  aclTensor *out, uint64_t *workspaceSize,       \
                                                  aclOpExecutor **executor) {                    \
    if (other == NULL) return sop_check_nonnull(k_##Name##_s.name, "other", NULL);               \
    sop_operand in[2] = {{"self", self, NULL, 0}, {"other", NULL, other, 0}};                    \
    return pw_run(&k_##Name##_s, "out", out, 2, in, NULL, 0, false, workspaceSize, executor);    \
  }                                                                                              \
  SOP_PHASE_TWO(Name##Scalar)
COMPARE_OPS(Eq, ==)
COMPARE_OPS(Ne, !=)
COMPARE_OPS(Lt, <)
COMPARE_OPS(Le, <=)
COMPARE_OPS(Gt, >)
COMPARE_OPS(Ge, >=)

/* ---- bitwise and (integers and bool) ---- */

PW_ELEM(and_elem, 0, x[0].i &x[1].i)
#define SOP_INTEGRAL (SOP_INTS | SOP_BIT(ACL_BOOL))
static const sop_pointwise_spec k_and_t = {"aclnnBitwiseAndTensor", and_elem, SOP_INTEGRAL,
                                           SOP_INTEGRAL, 0};
static const sop_pointwise_spec k_and_s = {"aclnnBitwiseAndScalar", and_elem, SOP_INTEGRAL,
                                           SOP_INTEGRAL, 0};

aclnnStatus aclnnBitwiseAndTensorGetWorkspaceSize(const aclTensor *self, const aclTensor *other,
                                                  aclTensor *out, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
  sop_operand in[2] = {{"self", self, NULL, 0}, {"other", other, NULL, 0}};
  return pw_run(&k_and_t, "out", out, 2, in, NULL, 0, false, workspaceSize, executor);
}
SOP_PHASE_TWO(BitwiseAndTensor)

aclnnStatus aclnnBitwiseAndScalarGetWorkspaceSize(const aclTensor *self, const aclScalar *other,
                                                  aclTensor *out, uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
  if (other == NULL) return sop_check_nonnull(k_and_s.name, "other", NULL);
  if (sop_is_float(other->dtype)) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, k_and_s.name, "other has dtype %s",
                    sop_dtype_name(other->dtype));
  }
  sop_operand in[2] = {{"self", self, NULL, 0}, {"other", NULL, other, 0}};
  return pw_run(&k_and_s, "out", out, 2, in, NULL, 0, false, workspaceSize, executor);
}
SOP_PHASE_TWO(BitwiseAndScalar)

/* ---- where: condition ? self : other ---- */

static sop_value where_one(const sop_value *x, bool is_float, const aclOpExecutor *ex) {
  (void)ex;
  return (is_float ? x[0].f != 0 : x[0].i != 0) ? x[1] : x[2];
}
PW_ELEM_OF(where_elem, where_one)
static const sop_pointwise_spec k_where = {"aclnnSWhere", where_elem, SOP_ALL, SOP_ALL, 0};

aclnnStatus aclnnSWhereGetWorkspaceSize(const aclTensor *condition, const aclTensor *self,
                                        const aclTensor *other, aclTensor *out,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
  sop_operand in[3] = {
      {"condition", condition, NULL, SOP_MASK}, {"self", self, NULL, 0}, {"other", other, NULL, 0}};
  return pw_run(&k_where, "out", out, 3, in, NULL, 0, false, workspaceSize, executor);
}
SOP_PHASE_TWO(SWhere)

/* ---- masked fill: selfRef[mask] = value (converted to selfRef's type) ---- */

static sop_value masked_fill_one(const sop_value *x, bool is_float, const aclOpExecutor *ex) {
  sop_value value;
  if (is_float) {
    value.f = ex->f[0];
  } else {
    value.i = ex->i[0];
  }
  return (is_float ? x[1].f != 0 : x[1].i != 0) ? value : x[0];
}
PW_ELEM_OF(masked_fill_elem, masked_fill_one)
static const sop_pointwise_spec k_masked_fill = {"aclnnInplaceMaskedFillScalar", masked_fill_elem,
                                                 SOP_ALL, SOP_ALL, SOP_PW_FIRST_TYPE};

aclnnStatus aclnnInplaceMaskedFillScalarGetWorkspaceSize(aclTensor *selfRef, const aclTensor *mask,
                                                         const aclScalar *value,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor) {
  SOP_CHECK(sop_check_nonnull(k_masked_fill.name, "value", value));
  sop_operand in[2] = {{"selfRef", selfRef, NULL, 0}, {"mask", mask, NULL, SOP_MASK}};
  pw_param params[1] = {{"value", value}};
  return pw_run(&k_masked_fill, "selfRef", selfRef, 2, in, params, 1, false, workspaceSize,
                executor);
}
SOP_PHASE_TWO(InplaceMaskedFillScalar)

/* ---- copy (any dtype conversion) and fill ---- */

static sop_value identity_one(const sop_value *x, bool is_float, const aclOpExecutor *ex) {
  (void)is_float;
  (void)ex;
  return x[0];
}
PW_ELEM_OF(identity_elem, identity_one)

aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor *selfRef, const aclTensor *src,
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {
  static const char op[] = "aclnnInplaceCopy";
  char a[160], b[160];
  SOP_CHECK(sop_check_nonnull(op, "selfRef", selfRef));
  SOP_CHECK(sop_check_nonnull(op, "src", src));
  SOP_CHECK(sop_check_tensor(op, "selfRef", selfRef, SOP_ALL));
  SOP_CHECK(sop_check_tensor(op, "src", src, SOP_ALL));
  if (!sop_broadcasts_to(src, selfRef->ndim, selfRef->dims)) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "src's shape %s does not broadcast to selfRef's %s", sop_shape_str(src, a),
                    sop_shape_str(selfRef, b));
  }
  aclOpExecutor *ex = sop_executor_new(op, 2, sop_pointwise_run);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, selfRef);
  sop_capture(ex, 1, src);
  ex->compute = ex->result = src->dtype; /* loaded as src's type, converted by the store */
  ex->elem = identity_elem;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(InplaceCopy)

aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor *selfRef, const aclScalar *value,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor) {
  static const char op[] = "aclnnInplaceFillScalar";
  SOP_CHECK(sop_check_tensor(op, "selfRef", selfRef, SOP_ALL));
  SOP_CHECK(sop_check_scalar(op, "value", value, SOP_ALL));
  sop_operand in[1] = {{"value", NULL, value, 0}};
  aclOpExecutor *ex;
  SOP_CHECK(sop_pointwise_prepare(op, identity_elem, "selfRef", selfRef, 1, in, selfRef->dtype,
                                  selfRef->dtype, &ex));
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(InplaceFillScalar)
