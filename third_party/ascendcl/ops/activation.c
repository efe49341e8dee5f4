/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Unary math (sqrt, rsqrt, cos, sin, tanh, neg, isneginf), activations (relu, silu, gelu) and
 * activation backwards (tanh, silu, gelu, threshold), with their documented aclnn semantics
 * (hicann/ops-math and ops-nn docs).  Floating results compute in double and round to the
 * compute type.
 */
#include <math.h>
#include <string.h>

#include "aclnnop/aclnn_abs.h"
#include "aclnnop/aclnn_ceil.h"
#include "aclnnop/aclnn_cos.h"
#include "aclnnop/aclnn_erf.h"
#include "aclnnop/aclnn_exp.h"
#include "aclnnop/aclnn_expm1.h"
#include "aclnnop/aclnn_floor.h"
#include "aclnnop/aclnn_gelu.h"
#include "aclnnop/aclnn_gelu_backward.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_gelu_v2.h"
#include "aclnnop/aclnn_isneginf.h"
#include "aclnnop/aclnn_log.h"
#include "aclnnop/aclnn_log1p.h"
#include "aclnnop/aclnn_log2.h"
#include "aclnnop/aclnn_logical_not.h"
#include "aclnnop/aclnn_neg.h"
#include "aclnnop/aclnn_reciprocal.h"
#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_rsqrt.h"
#include "aclnnop/aclnn_sigmoid.h"
#include "aclnnop/aclnn_sigmoid_backward.h"
#include "aclnnop/aclnn_silu.h"
#include "aclnnop/aclnn_silu_backward.h"
#include "aclnnop/aclnn_sin.h"
#include "aclnnop/aclnn_sqrt.h"
#include "aclnnop/aclnn_tan.h"
#include "aclnnop/aclnn_tanh.h"
#include "aclnnop/aclnn_tanh_backward.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "aclnnop/aclnn_trunc.h"
#include "pointwise.h"

static double sigmoid(double x) { return 1 / (1 + exp(-x)); }

/* gelu and its derivative; `tanh_form` selects the tanh approximation */
static const double k_beta = 0.7978845608028654; /* sqrt(2 / pi) */
static const double k_kappa = 0.044715;
static double gelu(double x, bool tanh_form) {
  if (tanh_form) return 0.5 * x * (1 + tanh(k_beta * (x + k_kappa * x * x * x)));
  return 0.5 * x * (1 + erf(x * 0.7071067811865476));
}
static double gelu_grad(double x, bool tanh_form) {
  if (tanh_form) {
    double t = tanh(k_beta * (x + k_kappa * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k_beta * (1 + 3 * k_kappa * x * x);
  }
  return 0.5 * (1 + erf(x * 0.7071067811865476)) + x * exp(-0.5 * x * x) * 0.3989422804014327;
}

/* ---- unary: (self, out) and in place (selfRef) ---- */

PW_ELEM(sqrt_elem, sqrt(x[0].f), 0)
PW_ELEM(rsqrt_elem, 1 / sqrt(x[0].f), 0)
PW_ELEM(cos_elem, cos(x[0].f), 0)
PW_ELEM(sin_elem, sin(x[0].f), 0)
PW_ELEM(tanh_elem, tanh(x[0].f), 0)
PW_ELEM(tan_elem, tan(x[0].f), 0)
PW_ELEM(exp_elem, exp(x[0].f), 0)
PW_ELEM(expm1_elem, expm1(x[0].f), 0)
PW_ELEM(log_elem, log(x[0].f), 0)
PW_ELEM(log1p_elem, log1p(x[0].f), 0)
PW_ELEM(log2_elem, log2(x[0].f), 0)
PW_ELEM(sigmoid_elem, sigmoid(x[0].f), 0)
PW_ELEM(reciprocal_elem, 1 / x[0].f, 0)
PW_ELEM(erf_elem, erf(x[0].f), 0)
PW_ELEM(floor_elem, floor(x[0].f), 0)
PW_ELEM(ceil_elem, ceil(x[0].f), 0)
PW_ELEM(trunc_elem, trunc(x[0].f), 0)
PW_ELEM(abs_elem, fabs(x[0].f), x[0].i < 0 ? (int64_t)(0 - (uint64_t)x[0].i) : x[0].i)
static sop_value logical_not_one(const sop_value *x, bool is_float, const aclOpExecutor *ex) {
  (void)ex;
  sop_value v;
  v.i = is_float ? x[0].f == 0 : x[0].i == 0;
  return v;
}
PW_ELEM_OF(logical_not_elem, logical_not_one)
PW_ELEM(neg_elem, -x[0].f, (int64_t)(0 - (uint64_t)x[0].i))
PW_ELEM(relu_elem, x[0].f != x[0].f ? x[0].f : x[0].f > 0 ? x[0].f : 0, x[0].i > 0 ? x[0].i : 0)
PW_ELEM(silu_elem, x[0].f *sigmoid(x[0].f), 0)
PW_ELEM(gelu_elem, gelu(x[0].f, ex->i[0] != 0), 0)
static sop_value isneginf_one(const sop_value *x, bool is_float, const aclOpExecutor *ex) {
  (void)ex;
  sop_value v;
  v.i = is_float && x[0].f == -INFINITY;
  return v;
}
PW_ELEM_OF(isneginf_elem, isneginf_one)

#define UNARY_OP(Name, elem, inputs, computes, flags)                                            \
  static const sop_pointwise_spec k_##Name = {"aclnn" #Name, elem, inputs, computes, flags};     \
  aclnnStatus aclnn##Name##GetWorkspaceSize(const aclTensor *self, aclTensor *out,               \
                                            uint64_t *workspaceSize, aclOpExecutor **executor) { \
    sop_operand in[1] = {{"self", self, NULL, 0}};                                               \
    return pw_run(&k_##Name, "out", out, 1, in, NULL, 0, false, workspaceSize, executor);        \
  }                                                                                              \
  SOP_PHASE_TWO(Name)
#define UNARY_OPS(Name, elem, inputs, computes, flags)                                          \
  UNARY_OP(Name, elem, inputs, computes, flags)                                                 \
  static const sop_pointwise_spec k_inplace_##Name = {"aclnnInplace" #Name, elem, inputs,       \
                                                      computes, flags};                         \
  aclnnStatus aclnnInplace##Name##GetWorkspaceSize(aclTensor *selfRef, uint64_t *workspaceSize, \
                                                   aclOpExecutor **executor) {                  \
    sop_operand in[1] = {{"selfRef", selfRef, NULL, 0}};                                        \
    return pw_run(&k_inplace_##Name, "selfRef", selfRef, 1, in, NULL, 0, false, workspaceSize,  \
                  executor);                                                                    \
  }                                                                                             \
  SOP_PHASE_TWO(Inplace##Name)

UNARY_OPS(Sqrt, sqrt_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Rsqrt, rsqrt_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Cos, cos_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Sin, sin_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Tanh, tanh_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Tan, tan_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Exp, exp_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Expm1, expm1_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Log, log_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Log1p, log1p_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Log2, log2_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Sigmoid, sigmoid_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Reciprocal, reciprocal_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Erf, erf_elem, SOP_ALL, SOP_FLOATS, SOP_PW_INTS_TO_FLOAT)
UNARY_OPS(Floor, floor_elem, SOP_FLOATS, SOP_FLOATS, 0)
UNARY_OPS(Ceil, ceil_elem, SOP_FLOATS, SOP_FLOATS, 0)
UNARY_OPS(Trunc, trunc_elem, SOP_FLOATS, SOP_FLOATS, 0)
UNARY_OPS(Abs, abs_elem, SOP_NUMBERS, SOP_NUMBERS, 0)
UNARY_OP(LogicalNot, logical_not_elem, SOP_ALL, SOP_ALL, SOP_PW_BOOL_RESULT)
UNARY_OPS(Neg, neg_elem, SOP_NUMBERS, SOP_NUMBERS, 0)
UNARY_OPS(Relu, relu_elem, SOP_NUMBERS, SOP_NUMBERS, 0)
UNARY_OP(Silu, silu_elem, SOP_FLOATS, SOP_FLOATS, 0)
UNARY_OP(Gelu, gelu_elem, SOP_FLOATS, SOP_FLOATS, 0) /* ex->i[0] = 0: the erf form */
UNARY_OP(IsNegInf, isneginf_elem, SOP_ALL, SOP_ALL, SOP_PW_BOOL_RESULT)

static const sop_pointwise_spec k_gelu_v2 = {"aclnnGeluV2", gelu_elem, SOP_FLOATS, SOP_FLOATS, 0};
aclnnStatus aclnnGeluV2GetWorkspaceSize(const aclTensor *x, int64_t approximate, aclTensor *y,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
  if (approximate != 0 && approximate != 1) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, k_gelu_v2.name,
                    "approximate is %lld; 0 (none) and 1 (tanh) are supported",
                    (long long)approximate);
  }
  sop_operand in[1] = {{"x", x, NULL, 0}};
  aclOpExecutor *ex;
  SOP_CHECK(sop_pointwise_op(&k_gelu_v2, "y", y, 1, in, &ex));
  ex->i[0] = approximate;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(GeluV2)

/* ---- backwards: (gradOutput, saved[, parameter], gradInput) ---- */

PW_ELEM(tanh_backward_elem, x[0].f *(1 - x[1].f * x[1].f), 0)
PW_ELEM(sigmoid_backward_elem, x[0].f *(1 - x[1].f) * x[1].f, 0)
PW_ELEM(silu_backward_elem, x[0].f *sigmoid(x[1].f) * (1 + x[1].f * (1 - sigmoid(x[1].f))), 0)
PW_ELEM(gelu_backward_elem, x[0].f *gelu_grad(x[1].f, ex->i[0] != 0), 0)
static sop_value threshold_backward_one(const sop_value *x, bool is_float,
                                        const aclOpExecutor *ex) {
  sop_value v = x[0];
  if (is_float ? x[1].f <= ex->f[0] : x[1].i <= ex->i[0]) {
    if (is_float) {
      v.f = 0;
    } else {
      v.i = 0;
    }
  }
  return v;
}
PW_ELEM_OF(threshold_backward_elem, threshold_backward_one)

#define BACKWARD_OP(Name, elem, saved, inputs)                                                   \
  static const sop_pointwise_spec k_##Name = {"aclnn" #Name, elem, inputs, inputs, 0};           \
  aclnnStatus aclnn##Name##GetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *saved, \
                                            aclTensor *gradInput, uint64_t *workspaceSize,       \
                                            aclOpExecutor **executor) {                          \
    sop_operand in[2] = {{"gradOutput", gradOutput, NULL, 0}, {#saved, saved, NULL, 0}};         \
    return pw_run(&k_##Name, "gradInput", gradInput, 2, in, NULL, 0, false, workspaceSize,       \
                  executor);                                                                     \
  }                                                                                              \
  SOP_PHASE_TWO(Name)
BACKWARD_OP(TanhBackward, tanh_backward_elem, output, SOP_FLOATS)
BACKWARD_OP(SigmoidBackward, sigmoid_backward_elem, output, SOP_FLOATS)
BACKWARD_OP(SiluBackward, silu_backward_elem, self, SOP_FLOATS)
BACKWARD_OP(GeluBackward, gelu_backward_elem, self, SOP_FLOATS) /* ex->i[0] = 0: erf form */

static const sop_pointwise_spec k_gelu_backward_v2 = {"aclnnGeluBackwardV2", gelu_backward_elem,
                                                      SOP_FLOATS, SOP_FLOATS, 0};
aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *self,
                                                char *approximate, aclTensor *gradInput,
                                                uint64_t *workspaceSize, aclOpExecutor **executor) {
  SOP_CHECK(sop_check_nonnull(k_gelu_backward_v2.name, "approximate", approximate));
  bool tanh_form = strcmp(approximate, "tanh") == 0;
  if (!tanh_form && strcmp(approximate, "none") != 0) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, k_gelu_backward_v2.name,
                    "approximate is \"%s\"; \"none\" and \"tanh\" are supported", approximate);
  }
  sop_operand in[2] = {{"gradOutput", gradOutput, NULL, 0}, {"self", self, NULL, 0}};
  aclOpExecutor *ex;
  SOP_CHECK(sop_pointwise_op(&k_gelu_backward_v2, "gradInput", gradInput, 2, in, &ex));
  ex->i[0] = tanh_form;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(GeluBackwardV2)

static const sop_pointwise_spec k_threshold_backward = {
    "aclnnThresholdBackward", threshold_backward_elem, SOP_NUMBERS, SOP_NUMBERS, 0};
aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                   const aclTensor *self,
                                                   const aclScalar *threshold, aclTensor *out,
                                                   uint64_t *workspaceSize,
                                                   aclOpExecutor **executor) {
  SOP_CHECK(sop_check_nonnull(k_threshold_backward.name, "threshold", threshold));
  sop_operand in[2] = {{"gradOutput", gradOutput, NULL, 0}, {"self", self, NULL, 0}};
  pw_param params[1] = {{"threshold", threshold}};
  return pw_run(&k_threshold_backward, "out", out, 2, in, params, 1, false, workspaceSize,
                executor);
}
SOP_PHASE_TWO(ThresholdBackward)
