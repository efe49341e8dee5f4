/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's pointwise kernels over the aclnn operators of the same family, mostly table-driven:
 * an ATen operator names its aclnn operator(s) in tb_kernel::data.  torch_backend hands
 * elementwise operators operands of the output's shape and of the compute dtype (vendor.h,
 * "Elementwise operators"); a CPU scalar operand arrives as a number, which maps to the aclnn
 * operator's scalar form (aclnnMuls for mul with a number).  What an aclnn operator computes
 * differently from ATen is declined (the CPU fallback then runs it) or translated here.
 */
#include <aclnnop/aclnn_abs.h>
#include <aclnnop/aclnn_add.h>
#include <aclnnop/aclnn_addcdiv.h>
#include <aclnnop/aclnn_addcmul.h>
#include <aclnnop/aclnn_arange.h>
#include <aclnnop/aclnn_bernoulli.h>
#include <aclnnop/aclnn_bitwise_and_scalar.h>
#include <aclnnop/aclnn_bitwise_and_tensor.h>
#include <aclnnop/aclnn_ceil.h>
#include <aclnnop/aclnn_clamp.h>
#include <aclnnop/aclnn_copy.h>
#include <aclnnop/aclnn_cos.h>
#include <aclnnop/aclnn_div.h>
#include <aclnnop/aclnn_eq_scalar.h>
#include <aclnnop/aclnn_eq_tensor.h>
#include <aclnnop/aclnn_erf.h>
#include <aclnnop/aclnn_exp.h>
#include <aclnnop/aclnn_expm1.h>
#include <aclnnop/aclnn_fill_scalar.h>
#include <aclnnop/aclnn_floor.h>
#include <aclnnop/aclnn_ge_scalar.h>
#include <aclnnop/aclnn_ge_tensor.h>
#include <aclnnop/aclnn_gelu_backward_v2.h>
#include <aclnnop/aclnn_gelu_v2.h>
#include <aclnnop/aclnn_gt_scalar.h>
#include <aclnnop/aclnn_gt_tensor.h>
#include <aclnnop/aclnn_isneginf.h>
#include <aclnnop/aclnn_le_scalar.h>
#include <aclnnop/aclnn_le_tensor.h>
#include <aclnnop/aclnn_lerp_scalar.h>
#include <aclnnop/aclnn_lerp_tensor.h>
#include <aclnnop/aclnn_log.h>
#include <aclnnop/aclnn_log1p.h>
#include <aclnnop/aclnn_log2.h>
#include <aclnnop/aclnn_logical_not.h>
#include <aclnnop/aclnn_lt_scalar.h>
#include <aclnnop/aclnn_lt_tensor.h>
#include <aclnnop/aclnn_masked_fill_scalar.h>
#include <aclnnop/aclnn_maximum.h>
#include <aclnnop/aclnn_minimum.h>
#include <aclnnop/aclnn_mul.h>
#include <aclnnop/aclnn_ne_scalar.h>
#include <aclnnop/aclnn_ne_tensor.h>
#include <aclnnop/aclnn_neg.h>
#include <aclnnop/aclnn_pow.h>
#include <aclnnop/aclnn_reciprocal.h>
#include <aclnnop/aclnn_relu.h>
#include <aclnnop/aclnn_rsqrt.h>
#include <aclnnop/aclnn_rsub.h>
#include <aclnnop/aclnn_s_where.h>
#include <aclnnop/aclnn_sigmoid.h>
#include <aclnnop/aclnn_sigmoid_backward.h>
#include <aclnnop/aclnn_silu.h>
#include <aclnnop/aclnn_silu_backward.h>
#include <aclnnop/aclnn_sin.h>
#include <aclnnop/aclnn_sqrt.h>
#include <aclnnop/aclnn_sub.h>
#include <aclnnop/aclnn_tan.h>
#include <aclnnop/aclnn_tanh.h>
#include <aclnnop/aclnn_tanh_backward.h>
#include <aclnnop/aclnn_threshold_backward.h>
#include <aclnnop/aclnn_tril.h>
#include <aclnnop/aclnn_trunc.h>
#include <aclnnop/aclnn_uniform.h>
#include <string.h>

#include "common.h"

#define OUT_SCHEMA(op) op ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"

/* ---- unary: [self, out] -> aclnn<Name>(self, out) ---- */

typedef struct unary_op {
  const char *name;
  aclnnStatus (*phase_one)(const aclTensor *, aclTensor *, uint64_t *, aclOpExecutor **);
  npu_aclnn_run_fn run;
} unary_op;

static tb_status unary(npu_call *c) {
  const unary_op *u = npu_kernel_data(c);
  if (!npu_is_tensor(&c->args[0])) return npu_decline(c, "self is a number");
  aclTensor *self = npu_tensor(c, 0), *out = npu_tensor(c, 1);
  return npu_aclnn_launch(c, u->name, u->phase_one(self, out, &c->workspace_size, &c->executor),
                          u->run);
}

#define UNARY(sym, opname, Name, mask, schema)                                                 \
  static const unary_op u_##sym = {"aclnn" #Name, aclnn##Name##GetWorkspaceSize, aclnn##Name}; \
  NPU_KERNEL_DATA(k_##sym, opname, unary, mask, schema, &u_##sym);
UNARY(sqrt, "sqrt.out", Sqrt, NPU_FLOATS, OUT_SCHEMA("sqrt"))
UNARY(rsqrt, "rsqrt.out", Rsqrt, NPU_FLOATS, OUT_SCHEMA("rsqrt"))
UNARY(cos, "cos.out", Cos, NPU_FLOATS, OUT_SCHEMA("cos"))
UNARY(sin, "sin.out", Sin, NPU_FLOATS, OUT_SCHEMA("sin"))
UNARY(tanh, "tanh.out", Tanh, NPU_FLOATS, OUT_SCHEMA("tanh"))
UNARY(silu, "silu.out", Silu, NPU_FLOATS, OUT_SCHEMA("silu"))
UNARY(neg, "neg.out", Neg, NPU_NUMBERS, OUT_SCHEMA("neg"))
UNARY(isneginf, "isneginf.out", IsNegInf, NPU_ALL, OUT_SCHEMA("isneginf"))
UNARY(relu, "relu", Relu, NPU_NUMBERS, "relu(Tensor self) -> Tensor")
UNARY(abs, "abs.out", Abs, NPU_NUMBERS, OUT_SCHEMA("abs"))
UNARY(exp, "exp.out", Exp, NPU_FLOATS, OUT_SCHEMA("exp"))
UNARY(expm1, "expm1.out", Expm1, NPU_FLOATS, OUT_SCHEMA("expm1"))
UNARY(log, "log.out", Log, NPU_FLOATS, OUT_SCHEMA("log"))
UNARY(log1p, "log1p.out", Log1p, NPU_FLOATS, OUT_SCHEMA("log1p"))
UNARY(log2, "log2.out", Log2, NPU_FLOATS, OUT_SCHEMA("log2"))
UNARY(tan, "tan.out", Tan, NPU_FLOATS, OUT_SCHEMA("tan"))
UNARY(sigmoid, "sigmoid.out", Sigmoid, NPU_FLOATS, OUT_SCHEMA("sigmoid"))
UNARY(reciprocal, "reciprocal.out", Reciprocal, NPU_FLOATS, OUT_SCHEMA("reciprocal"))
UNARY(erf, "erf.out", Erf, NPU_FLOATS, OUT_SCHEMA("erf"))
UNARY(floor, "floor.out", Floor, NPU_FLOATS, OUT_SCHEMA("floor"))
UNARY(ceil, "ceil.out", Ceil, NPU_FLOATS, OUT_SCHEMA("ceil"))
UNARY(trunc, "trunc.out", Trunc, NPU_FLOATS, OUT_SCHEMA("trunc"))
UNARY(logical_not, "logical_not.out", LogicalNot, NPU_ALL, OUT_SCHEMA("logical_not"))

/* relu_: [self] -> aclnnInplaceRelu */
static tb_status relu_inplace(npu_call *c) { return NPU_ACLNN(c, InplaceRelu, npu_tensor(c, 0)); }
NPU_KERNEL(k_relu_, "relu_", relu_inplace, NPU_NUMBERS, "relu_(Tensor(a!) self) -> Tensor(a!)");

/* ---- binary: [self, other, out], other a tensor (aclnn<Name>) or a number (the scalar
 * form, when the operator has one); a number self (ATen's foreach operators pass one) goes to
 * the scalar form of the mirrored operator (mul and eq are their own mirrors, lt is gt's) ---- */

typedef struct binary_op binary_op;
struct binary_op {
  const char *name;
  aclnnStatus (*phase_one)(const aclTensor *, const aclTensor *, aclTensor *, uint64_t *,
                           aclOpExecutor **);
  npu_aclnn_run_fn run;
  const char *scalar_name;
  aclnnStatus (*scalar_phase_one)(const aclTensor *, const aclScalar *, aclTensor *, uint64_t *,
                                  aclOpExecutor **);
  npu_aclnn_run_fn scalar_run;
  const binary_op *mirror; /* op(a, b) == mirror(b, a); NULL: none */
};

static tb_status binary(npu_call *c) {
  const binary_op *b = npu_kernel_data(c);
  if (npu_is_number(&c->args[0]) && npu_is_tensor(&c->args[1])) {
    const binary_op *m = b->mirror;
    if (m == NULL || m->scalar_phase_one == NULL) {
      return npu_decline(c, "the first operand is a number");
    }
    aclTensor *other = npu_tensor(c, 1), *out = npu_tensor(c, 2);
    aclScalar *self = npu_scalar(c, 0);
    return npu_aclnn_launch(c, m->scalar_name,
                            m->scalar_phase_one(other, self, out, &c->workspace_size, &c->executor),
                            m->scalar_run);
  }
  if (!npu_is_tensor(&c->args[0])) return npu_decline(c, "the first operand is a number");
  aclTensor *self = npu_tensor(c, 0), *out = npu_tensor(c, 2);
  if (npu_is_number(&c->args[1])) {
    if (b->scalar_phase_one == NULL) return npu_decline(c, "the second operand is a number");
    aclScalar *other = npu_scalar(c, 1);
    return npu_aclnn_launch(c, b->scalar_name,
                            b->scalar_phase_one(self, other, out, &c->workspace_size, &c->executor),
                            b->scalar_run);
  }
  if (b->phase_one == NULL) return npu_decline(c, "the second operand is a tensor");
  aclTensor *other = npu_tensor(c, 1);
  return npu_aclnn_launch(c, b->name,
                          b->phase_one(self, other, out, &c->workspace_size, &c->executor), b->run);
}

#define BINARY_OP(sym, Tensor, Scalar, mirror)                         \
  static const binary_op b_##sym = {                                   \
      "aclnn" #Tensor, aclnn##Tensor##GetWorkspaceSize, aclnn##Tensor, \
      "aclnn" #Scalar, aclnn##Scalar##GetWorkspaceSize, aclnn##Scalar, \
      mirror};
#define BINARY_KERNEL(sym, data, opname, mask, schema) \
  NPU_KERNEL_DATA(k_##sym, opname, binary, mask, schema, &b_##data);
#define BINARY_SCHEMA(op, other) \
  op "(Tensor self, " other " other, *, Tensor(a!) out) -> Tensor(a!)"

BINARY_OP(mul, Mul, Muls, &b_mul)
BINARY_KERNEL(mul, mul, "mul.out", NPU_ALL, BINARY_SCHEMA("mul.out", "Tensor"))
BINARY_OP(div, Div, Divs, NULL)
BINARY_KERNEL(div, div, "div.out", NPU_FLOATS, BINARY_SCHEMA("div.out", "Tensor"))
BINARY_OP(bitwise_and, BitwiseAndTensor, BitwiseAndScalar, &b_bitwise_and)
BINARY_KERNEL(bitwise_and, bitwise_and, "bitwise_and.Tensor_out", NPU_INTS | NPU_BIT(TB_DTYPE_BOOL),
              BINARY_SCHEMA("bitwise_and.Tensor_out", "Tensor"))
BINARY_OP(clamp_min_tensor, ClampMinTensor, ClampMin, &b_clamp_min_tensor)
BINARY_KERNEL(clamp_min_tensor, clamp_min_tensor, "clamp_min.Tensor_out", NPU_NUMBERS,
              "clamp_min.Tensor_out(Tensor self, Tensor min, *, Tensor(a!) out) -> Tensor(a!)")
BINARY_OP(clamp_max_tensor, ClampMaxTensor, ClampMax, &b_clamp_max_tensor)
BINARY_KERNEL(clamp_max_tensor, clamp_max_tensor, "clamp_max.Tensor_out", NPU_NUMBERS,
              "clamp_max.Tensor_out(Tensor self, Tensor max, *, Tensor(a!) out) -> Tensor(a!)")
/* maximum / minimum with a number are clamp_min / clamp_max (NaN propagates in both) */
BINARY_OP(maximum, Maximum, ClampMin, &b_maximum)
BINARY_KERNEL(maximum, maximum, "maximum.out", NPU_NUMBERS, BINARY_SCHEMA("maximum.out", "Tensor"))
BINARY_OP(minimum, Minimum, ClampMax, &b_minimum)
BINARY_KERNEL(minimum, minimum, "minimum.out", NPU_NUMBERS, BINARY_SCHEMA("minimum.out", "Tensor"))
#define COMPARE(cmp, Name, mirror)                              \
  BINARY_OP(cmp, Name##Tensor, Name##Scalar, &b_##mirror)       \
  BINARY_KERNEL(cmp##_tensor, cmp, #cmp ".Tensor_out", NPU_ALL, \
                BINARY_SCHEMA(#cmp ".Tensor_out", "Tensor"))    \
  BINARY_KERNEL(cmp##_scalar, cmp, #cmp ".Scalar_out", NPU_ALL, \
                BINARY_SCHEMA(#cmp ".Scalar_out", "Scalar"))
static const binary_op b_gt, b_ge; /* defined below: the mirrors of lt and le */
COMPARE(eq, Eq, eq)
COMPARE(ne, Ne, ne)
COMPARE(lt, Lt, gt)
COMPARE(le, Le, ge)
COMPARE(gt, Gt, lt)
COMPARE(ge, Ge, le)

/* activation backwards: [grad_output, saved, grad_input] */
static const binary_op b_tanh_backward = {"aclnnTanhBackward",
                                          aclnnTanhBackwardGetWorkspaceSize,
                                          aclnnTanhBackward,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL};
NPU_KERNEL_DATA(k_tanh_backward, "tanh_backward.grad_input", binary, NPU_FLOATS,
                "tanh_backward.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) "
                "grad_input) -> Tensor(a!)",
                &b_tanh_backward);
static const binary_op b_sigmoid_backward = {"aclnnSigmoidBackward",
                                             aclnnSigmoidBackwardGetWorkspaceSize,
                                             aclnnSigmoidBackward,
                                             NULL,
                                             NULL,
                                             NULL,
                                             NULL};
NPU_KERNEL_DATA(k_sigmoid_backward, "sigmoid_backward.grad_input", binary, NPU_FLOATS,
                "sigmoid_backward.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) "
                "grad_input) -> Tensor(a!)",
                &b_sigmoid_backward);
static const binary_op b_silu_backward = {"aclnnSiluBackward",
                                          aclnnSiluBackwardGetWorkspaceSize,
                                          aclnnSiluBackward,
                                          NULL,
                                          NULL,
                                          NULL,
                                          NULL};
NPU_KERNEL_DATA(k_silu_backward, "silu_backward.grad_input", binary, NPU_FLOATS,
                "silu_backward.grad_input(Tensor grad_output, Tensor self, *, Tensor(a!) "
                "grad_input) -> Tensor(a!)",
                &b_silu_backward);

/* ---- with alpha: [self, other, alpha, out] -> aclnn<Name> / aclnn<Name>s ---- */

/* sdk guide: kernel */
/* ATen takes an integer alpha for bool tensors, which aclnn's conversion rules do not cast to
 * bool: it goes as the bool it stands for */
static tb_status add_out(npu_call *c) {
  if (npu_is_number(&c->args[0]) && npu_is_tensor(&c->args[1]) && npu_arg_double(c, 2) == 1) {
    /* number + 1 * tensor == tensor + 1 * number */
    return NPU_ACLNN(c, Adds, npu_tensor(c, 1), npu_scalar(c, 0), npu_scalar(c, 2),
                     npu_tensor(c, 3));
  }
  if (!npu_is_tensor(&c->args[0])) return npu_decline(c, "self is a number");
  aclTensor *self = npu_tensor(c, 0), *out = npu_tensor(c, 3);
  aclScalar *alpha = c->args[0].as.tensor->dtype == TB_DTYPE_BOOL
                         ? npu_scalar_f(c, npu_arg_double(c, 2) != 0, ACL_BOOL)
                         : npu_scalar(c, 2);
  if (npu_is_number(&c->args[1])) return NPU_ACLNN(c, Adds, self, npu_scalar(c, 1), alpha, out);
  return NPU_ACLNN(c, Add, self, npu_tensor(c, 1), alpha, out);
}
NPU_KERNEL(k_add, "add.out", add_out, NPU_ALL,
           "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
/* sdk guide: end */

static tb_status sub_out(npu_call *c) {
  if (npu_is_number(&c->args[0]) && npu_is_tensor(&c->args[1])) {
    /* number - alpha * tensor: 1 - beta ** step, capturable Adam's bias correction */
    return NPU_ACLNN(c, Rsubs, npu_tensor(c, 1), npu_scalar(c, 0), npu_scalar(c, 2),
                     npu_tensor(c, 3));
  }
  if (!npu_is_tensor(&c->args[0])) return npu_decline(c, "self is a number");
  aclTensor *self = npu_tensor(c, 0), *out = npu_tensor(c, 3);
  aclScalar *alpha = npu_scalar(c, 2);
  if (npu_is_number(&c->args[1])) return NPU_ACLNN(c, Subs, self, npu_scalar(c, 1), alpha, out);
  return NPU_ACLNN(c, Sub, self, npu_tensor(c, 1), alpha, out);
}
NPU_KERNEL(k_sub, "sub.out", sub_out, NPU_NUMBERS,
           "sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");

/* ---- ternary ---- */

static bool all_tensors(const npu_call *c, int32_t n) {
  for (int32_t k = 0; k < n; k++) {
    if (!npu_is_tensor(&c->args[k])) return false;
  }
  return true;
}

/* A number argument that is a float while the tensor is not (ATen promotes that case). */
static bool float_on_integers(const npu_call *c, int32_t k, const tb_tensor *t) {
  return c->args[k].kind == TB_VALUE_DOUBLE && !npu_is_floating(t->dtype);
}

/* addcmul.out / addcdiv.out: [self, tensor1, tensor2, value, out] */
static tb_status addcmul_out(npu_call *c) {
  if (!all_tensors(c, 3)) return npu_decline(c, "an operand is a number");
  if (float_on_integers(c, 3, c->args[0].as.tensor)) {
    return npu_decline(c, "a float value for integers");
  }
  return NPU_ACLNN(c, Addcmul, npu_tensor(c, 0), npu_tensor(c, 1), npu_tensor(c, 2),
                   npu_scalar(c, 3), npu_tensor(c, 4));
}
NPU_KERNEL(k_addcmul, "addcmul.out", addcmul_out, NPU_NUMBERS,
           "addcmul.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, "
           "Tensor(a!) out) -> Tensor(a!)");
static tb_status addcdiv_out(npu_call *c) {
  if (!all_tensors(c, 3)) return npu_decline(c, "an operand is a number");
  return NPU_ACLNN(c, Addcdiv, npu_tensor(c, 0), npu_tensor(c, 1), npu_tensor(c, 2),
                   npu_scalar(c, 3), npu_tensor(c, 4));
}
NPU_KERNEL(k_addcdiv, "addcdiv.out", addcdiv_out, NPU_FLOATS,
           "addcdiv.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, "
           "Tensor(a!) out) -> Tensor(a!)");

/* lerp.Scalar_out / lerp.Tensor_out: [self, end, weight, out]; a number weight -> aclnnLerps */
static tb_status lerp_out(npu_call *c) {
  if (!all_tensors(c, 2)) return npu_decline(c, "an operand is a number");
  aclTensor *self = npu_tensor(c, 0), *end = npu_tensor(c, 1), *out = npu_tensor(c, 3);
  if (npu_is_number(&c->args[2])) return NPU_ACLNN(c, Lerps, self, end, npu_scalar(c, 2), out);
  return NPU_ACLNN(c, Lerp, self, end, npu_tensor(c, 2), out);
}
NPU_KERNEL(k_lerp_scalar, "lerp.Scalar_out", lerp_out, NPU_FLOATS,
           "lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) -> "
           "Tensor(a!)");
NPU_KERNEL(k_lerp_tensor, "lerp.Tensor_out", lerp_out, NPU_FLOATS,
           "lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out) -> "
           "Tensor(a!)");

/* where.self_out: [condition, self, other, out] */
static tb_status where_out(npu_call *c) {
  if (!all_tensors(c, 3)) return npu_decline(c, "an operand is a number");
  if (c->args[0].as.tensor->dtype != TB_DTYPE_BOOL) return npu_decline(c, "condition is not bool");
  return NPU_ACLNN(c, SWhere, npu_tensor(c, 0), npu_tensor(c, 1), npu_tensor(c, 2),
                   npu_tensor(c, 3));
}
NPU_KERNEL(k_where, "where.self_out", where_out, NPU_BIT(TB_DTYPE_BOOL),
           "where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> "
           "Tensor(a!)");

/* ---- with a parameter ---- */

/* pow.Tensor_Scalar_out: [self, exponent, out] */
static tb_status pow_out(npu_call *c) {
  if (!npu_is_tensor(&c->args[0]) || !npu_is_number(&c->args[1])) {
    return npu_decline(c, "unexpected operands");
  }
  const tb_tensor *self = c->args[0].as.tensor;
  if (!npu_is_floating(self->dtype) && (float_on_integers(c, 1, self) || npu_arg_int(c, 1) < 0)) {
    return npu_decline(c, "an integer tensor to a float or negative power");
  }
  return NPU_ACLNN(c, PowTensorScalar, npu_tensor(c, 0), npu_scalar(c, 1), npu_tensor(c, 2));
}
NPU_KERNEL(k_pow, "pow.Tensor_Scalar_out", pow_out, NPU_NUMBERS,
           "pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)");

/* pow.Scalar_out: [self (the base, a number), exponent, out]: capturable Adam's bias
 * corrections */
static tb_status pow_base_out(npu_call *c) {
  if (!npu_is_number(&c->args[0]) || !npu_is_tensor(&c->args[1])) {
    return npu_decline(c, "unexpected operands");
  }
  /* The base in the result's dtype, as ATen converts it before computing */
  aclScalar *base =
      npu_scalar_f(c, npu_arg_double(c, 0), npu_acl_dtype(c->args[2].as.tensor->dtype));
  return NPU_ACLNN(c, PowScalarTensor, base, npu_tensor(c, 1), npu_tensor(c, 2));
}
NPU_KERNEL(k_pow_base, "pow.Scalar_out", pow_base_out, NPU_FLOATS,
           "pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)");

/* clamp.out: [self, min?, max?, out] */
static tb_status clamp_out(npu_call *c) {
  if (!npu_is_tensor(&c->args[0])) return npu_decline(c, "self is a number");
  const tb_tensor *self = c->args[0].as.tensor;
  aclScalar *bounds[2] = {NULL, NULL};
  for (int32_t k = 1; k <= 2; k++) {
    if (c->args[k].kind == TB_VALUE_NONE) continue;
    if (!npu_is_number(&c->args[k])) return npu_decline(c, "a bound is a tensor");
    if (float_on_integers(c, k, self)) return npu_decline(c, "float bounds on integers");
    bounds[k - 1] = npu_scalar(c, k);
  }
  if (bounds[0] == NULL && bounds[1] == NULL) return npu_decline(c, "no bound");
  return NPU_ACLNN(c, Clamp, npu_tensor(c, 0), bounds[0], bounds[1], npu_tensor(c, 3));
}
NPU_KERNEL(
    k_clamp, "clamp.out", clamp_out, NPU_NUMBERS,
    "clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!)");
/* clamp_min.out / clamp_max.out: [self, bound, out] */
static tb_status clamp_bound_out(npu_call *c) {
  if (!npu_is_tensor(&c->args[0]) || !npu_is_number(&c->args[1])) {
    return npu_decline(c, "unexpected operands");
  }
  if (float_on_integers(c, 1, c->args[0].as.tensor)) {
    return npu_decline(c, "a float bound on integers");
  }
  aclTensor *self = npu_tensor(c, 0), *out = npu_tensor(c, 2);
  aclScalar *bound = npu_scalar(c, 1);
  if (npu_kernel_data(c) != NULL) return NPU_ACLNN(c, ClampMax, self, bound, out);
  return NPU_ACLNN(c, ClampMin, self, bound, out);
}
NPU_KERNEL(k_clamp_min, "clamp_min.out", clamp_bound_out, NPU_NUMBERS,
           "clamp_min.out(Tensor self, Scalar min, *, Tensor(a!) out) -> Tensor(a!)");
static const char k_max_bound[] = "max"; /* tb_kernel::data: the upper bound */
NPU_KERNEL_DATA(k_clamp_max, "clamp_max.out", clamp_bound_out, NPU_NUMBERS,
                "clamp_max.out(Tensor self, Scalar max, *, Tensor(a!) out) -> Tensor(a!)",
                k_max_bound);

/* threshold_backward.grad_input: [grad_output, self, threshold, grad_input] */
static tb_status threshold_backward(npu_call *c) {
  if (!all_tensors(c, 2)) return npu_decline(c, "an operand is a number");
  return NPU_ACLNN(c, ThresholdBackward, npu_tensor(c, 0), npu_tensor(c, 1), npu_scalar(c, 2),
                   npu_tensor(c, 3));
}
NPU_KERNEL(k_threshold_backward, "threshold_backward.grad_input", threshold_backward, NPU_NUMBERS,
           "threshold_backward.grad_input(Tensor grad_output, Tensor self, Scalar threshold, *, "
           "Tensor(a!) grad_input) -> Tensor(a!)");

/* The approximate argument of gelu: 0 "none", 1 "tanh", -1 other. */
static int approximation(const npu_call *c, int32_t k) {
  if (c->args[k].kind != TB_VALUE_STRING || c->args[k].as.string == NULL) return -1;
  return strcmp(c->args[k].as.string, "none") == 0   ? 0
         : strcmp(c->args[k].as.string, "tanh") == 0 ? 1
                                                     : -1;
}

/* gelu.out: [self, approximate, out] -> aclnnGeluV2 */
static tb_status gelu_out(npu_call *c) {
  int approximate = approximation(c, 1);
  if (approximate < 0 || !npu_is_tensor(&c->args[0])) {
    return npu_decline(c, "an approximation other than none and tanh");
  }
  return NPU_ACLNN(c, GeluV2, npu_tensor(c, 0), approximate, npu_tensor(c, 2));
}
NPU_KERNEL(k_gelu, "gelu.out", gelu_out, NPU_FLOATS,
           "gelu.out(Tensor self, *, str approximate=\"none\", Tensor(a!) out) -> Tensor(a!)");

/* gelu_backward.grad_input: [grad_output, self, approximate, grad_input] -> aclnnGeluBackwardV2 */
static tb_status gelu_backward(npu_call *c) {
  int approximate = approximation(c, 2);
  if (approximate < 0 || !all_tensors(c, 2)) {
    return npu_decline(c, "an approximation other than none and tanh");
  }
  char mode[8];
  strcpy(mode, approximate ? "tanh" : "none");
  return NPU_ACLNN(c, GeluBackwardV2, npu_tensor(c, 0), npu_tensor(c, 1), mode, npu_tensor(c, 3));
}
NPU_KERNEL(k_gelu_backward, "gelu_backward.grad_input", gelu_backward, NPU_FLOATS,
           "gelu_backward.grad_input(Tensor grad_output, Tensor self, *, str "
           "approximate=\"none\", Tensor(a!) grad_input) -> Tensor(a!)");

/* ---- in place ---- */

/* masked_fill_.Scalar: [self, mask, value]; mask bool, broadcast to self */
static tb_status masked_fill(npu_call *c) {
  if (!all_tensors(c, 2) || !npu_is_number(&c->args[2])) {
    return npu_decline(c, "unexpected operands");
  }
  const tb_tensor *self = c->args[0].as.tensor, *mask = c->args[1].as.tensor;
  if (mask->dtype != TB_DTYPE_BOOL) return npu_decline(c, "the mask is not bool");
  if (float_on_integers(c, 2, self)) return npu_decline(c, "a float value for integers");
  if (mask->ndim > self->ndim) return npu_decline(c, "the mask does not broadcast to self");
  for (int32_t d = 1; d <= mask->ndim; d++) {
    int64_t m = mask->sizes[mask->ndim - d], s = self->sizes[self->ndim - d];
    if (m != s && m != 1) return npu_decline(c, "the mask does not broadcast to self");
  }
  return NPU_ACLNN(c, InplaceMaskedFillScalar, npu_tensor(c, 0), npu_tensor(c, 1),
                   npu_scalar(c, 2));
}
NPU_KERNEL(k_masked_fill, "masked_fill_.Scalar", masked_fill, NPU_ALL,
           "masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)");

/* copy_: [self, src, non_blocking] (vendor.h "Kernels torch_backend itself calls") */
static tb_status copy_(npu_call *c) {
  if (!all_tensors(c, 2)) return npu_decline(c, "src is a number");
  return NPU_ACLNN(c, InplaceCopy, npu_tensor(c, 0), npu_tensor(c, 1));
}
NPU_KERNEL(k_copy, "copy_", copy_, NPU_ALL,
           "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)");

/* fill_.Scalar: [self, value] */
static tb_status fill_(npu_call *c) {
  if (!npu_is_tensor(&c->args[0]) || !npu_is_number(&c->args[1])) {
    return npu_decline(c, "unexpected operands");
  }
  return NPU_ACLNN(c, InplaceFillScalar, npu_tensor(c, 0), npu_scalar(c, 1));
}
NPU_KERNEL(k_fill, "fill_.Scalar", fill_, NPU_ALL,
           "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)");

/* bernoulli_.float under graph capture (vendor.h, tb_rng_key::device_state): the key and the
 * base counter are two device words torch_backend rewrites before each replay, which the work
 * must read when it runs.  aclnnInplaceBernoulli takes its seed and offset as host scalars,
 * fixed when the operator is enqueued, and CANN documents no Bernoulli taking them from device
 * memory; its graph-mode random operators do (aclnnInplaceUniformTensor,
 * aclnnInplaceNormalTensor, aclnnDropoutGenMaskV2Tensor: a one-element seedTensor and
 * offsetTensor, plus a host offset added to the latter -- how torch_npu hands its generator's
 * device state to captured operators).  So the captured draw is uniform numbers of [0, 1) from
 * aclnnInplaceUniformTensor (key device_state[0], first counter device_state[1] + offset) into
 * float64 scratch, then self = (u < p) by aclnnLtScalar, both on the call's stream.  The
 * AscendCL stand-in maps counters to outputs the same way for both operators, so a replay draws
 * exactly what the eager aclnnInplaceBernoulli draws from the same generator state. */
static tb_status bernoulli_captured(npu_call *c, double p, const tb_rng_key *key) {
  const tb_tensor *self = npu_arg_tensor(c, 0);
  int64_t numel = 1;
  for (int32_t d = 0; d < self->ndim; d++) numel *= self->sizes[d];
  if (numel == 0) return TB_OK;
  if (self->ndim > NPU_MAX_DIMS) return npu_decline(c, "more than %d dimensions", NPU_MAX_DIMS);
  void *scratch = NULL;
  tb_status status = c->call->workspace(c->call, (size_t)numel * sizeof(double), &scratch);
  if (status != TB_OK) {
    return npu_fail(c->ctx, status, "npu: %s: no scratch of %lld bytes on npu:%d (%s)",
                    c->call->kernel->name, (long long)numel * (long long)sizeof(double),
                    (int)c->device, tb_status_name(status));
  }
  const int64_t one = 1;
  aclTensor *u = npu_dense_tensor(c, self->ndim, self->sizes, ACL_DOUBLE, scratch);
  aclTensor *seed = npu_dense_tensor(c, 1, &one, ACL_UINT64, key->device_state);
  aclTensor *base = npu_dense_tensor(c, 1, &one, ACL_UINT64, key->device_state + 1);
  status = NPU_ACLNN(c, InplaceUniformTensor, u, 0.0, 1.0, seed, base, key->offset);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, LtScalar, u, npu_scalar_f(c, p, ACL_DOUBLE), npu_tensor(c, 0));
}

/* bernoulli_.float: [self, p, generator] -> aclnnInplaceBernoulli with the generator's Philox
 * key and counter (vendor.h "Random numbers"); while the stream captures a graph, the key and
 * counter in device memory (bernoulli_captured) */
static tb_status bernoulli_(npu_call *c) {
  if (!npu_is_tensor(&c->args[0]) || c->args[2].kind != TB_VALUE_RNG) {
    return npu_decline(c, "no generator key");
  }
  double p = npu_arg_double(c, 1);
  if (!(p >= 0 && p <= 1)) return npu_decline(c, "p outside [0, 1]");
  const tb_rng_key *key = &c->args[2].as.rng;
  if (key->device_state != NULL) return bernoulli_captured(c, p, key);
  return NPU_ACLNN(c, InplaceBernoulli, npu_tensor(c, 0), npu_scalar_f(c, p, ACL_DOUBLE),
                   (int64_t)key->seed, (int64_t)key->offset);
}
NPU_KERNEL(k_bernoulli, "bernoulli_.float", bernoulli_, NPU_ALL,
           "bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> "
           "Tensor(a!)");

/* native_dropout_backward: [grad_output, mask, scale, out]: out = grad_output * mask, then
 * out *= scale, both on the call's stream */
static tb_status dropout_backward(npu_call *c) {
  if (!all_tensors(c, 2)) return npu_decline(c, "an operand is a number");
  aclTensor *out = npu_tensor(c, 3);
  tb_status status = NPU_ACLNN(c, Mul, npu_tensor(c, 0), npu_tensor(c, 1), out);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, InplaceMuls, out, npu_scalar_f(c, npu_arg_double(c, 2), ACL_DOUBLE));
}
NPU_KERNEL(k_dropout_backward, "native_dropout_backward", dropout_backward, NPU_FLOATS,
           "native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor");

/* ---- layout and factories ---- */

/* tril.out: [self, diagonal, out] */
static tb_status tril_out(npu_call *c) {
  if (!npu_is_tensor(&c->args[0]) || c->args[1].kind != TB_VALUE_INT) {
    return npu_decline(c, "unexpected operands");
  }
  return NPU_ACLNN(c, Tril, npu_tensor(c, 0), c->args[1].as.i, npu_tensor(c, 2));
}
NPU_KERNEL(k_tril, "tril.out", tril_out, NPU_ALL,
           "tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)");

/* arange.start_out: [start, end, step, out]; ATen keeps an out of any shape holding the right
 * number of elements and fills it in row-major order: a contiguous one goes to aclnnArange as
 * the 1-D tensor of its elements */
static tb_status arange_out(npu_call *c) {
  for (int32_t k = 0; k < 3; k++) {
    if (!npu_is_number(&c->args[k])) return npu_decline(c, "a bound is not a number");
  }
  const tb_tensor *out = npu_arg_tensor(c, 3);
  if (out == NULL) return npu_decline(c, "no out tensor");
  int64_t numel = 1, expected = 1;
  bool contiguous = true;
  for (int32_t d = out->ndim - 1; d >= 0; d--) {
    if (out->sizes[d] != 1 && out->strides[d] != expected) contiguous = false;
    expected *= out->sizes[d];
    numel *= out->sizes[d];
  }
  if (!contiguous) return npu_decline(c, "a non-contiguous out");
  int64_t one = 1;
  tb_tensor flat = *out;
  flat.ndim = 1;
  flat.sizes = &numel;
  flat.strides = &one;
  return NPU_ACLNN(c, Arange, npu_scalar(c, 0), npu_scalar(c, 1), npu_scalar(c, 2),
                   npu_tensor_of(c, &flat));
}
NPU_KERNEL(k_arange, "arange.start_out", arange_out, NPU_NUMBERS,
           "arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> "
           "Tensor(a!)");

const tb_kernel *const npu_pointwise_kernels[] = {&k_add,
                                                  &k_sub,
                                                  &k_mul,
                                                  &k_div,
                                                  &k_addcmul,
                                                  &k_addcdiv,
                                                  &k_lerp_scalar,
                                                  &k_lerp_tensor,
                                                  &k_sqrt,
                                                  &k_rsqrt,
                                                  &k_cos,
                                                  &k_sin,
                                                  &k_tanh,
                                                  &k_silu,
                                                  &k_neg,
                                                  &k_isneginf,
                                                  &k_relu,
                                                  &k_relu_,
                                                  &k_gelu,
                                                  &k_gelu_backward,
                                                  &k_tanh_backward,
                                                  &k_silu_backward,
                                                  &k_threshold_backward,
                                                  &k_pow,
                                                  &k_pow_base,
                                                  &k_clamp,
                                                  &k_clamp_min,
                                                  &k_clamp_min_tensor,
                                                  &k_eq_tensor,
                                                  &k_eq_scalar,
                                                  &k_ne_tensor,
                                                  &k_ne_scalar,
                                                  &k_lt_tensor,
                                                  &k_lt_scalar,
                                                  &k_le_tensor,
                                                  &k_le_scalar,
                                                  &k_gt_tensor,
                                                  &k_gt_scalar,
                                                  &k_ge_tensor,
                                                  &k_ge_scalar,
                                                  &k_bitwise_and,
                                                  &k_where,
                                                  &k_masked_fill,
                                                  &k_copy,
                                                  &k_fill,
                                                  &k_bernoulli,
                                                  &k_dropout_backward,
                                                  &k_tril,
                                                  &k_arange,
                                                  &k_clamp_max,
                                                  &k_clamp_max_tensor,
                                                  &k_maximum,
                                                  &k_minimum,
                                                  &k_abs,
                                                  &k_exp,
                                                  &k_expm1,
                                                  &k_log,
                                                  &k_log1p,
                                                  &k_log2,
                                                  &k_tan,
                                                  &k_sigmoid,
                                                  &k_reciprocal,
                                                  &k_erf,
                                                  &k_floor,
                                                  &k_ceil,
                                                  &k_trunc,
                                                  &k_logical_not,
                                                  &k_sigmoid_backward,
                                                  NULL};
