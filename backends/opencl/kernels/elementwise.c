/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The ATen elementwise operators, each an expression for the engine of map.c.  torch_backend
 * prepares their operands (vendor.h, "Elementwise operators"): tensor inputs have the output's
 * shape and the compute dtype, a CPU scalar operand arrives as a number.  So a kernel here is
 * a row of a table: where its inputs and numbers are among the arguments, and its expression
 * for floating and for integral compute dtypes (NULL: that kind is declined, and runs on the
 * CPU fallback).  Expressions follow ATen's definitions, NaN propagation included (maximum,
 * clamp, relu keep a NaN input).
 */

#include <string.h>

#include "kernels.h"

typedef struct ew_op {
  const char *float_expr;
  const char *int_expr;
  int inputs;      /* the inputs are args[0 .. inputs-1] */
  int alpha;       /* index of the argument alpha stands for; -1: none (alpha = 1) */
  int beta;        /* likewise for beta; -1: none */
  bool bool_out;   /* comparisons: the output is bool, the compute dtype the inputs' */
  bool cond_first; /* where: x0 is the bool condition, the compute dtype the output's */
} ew_op;

/* Runs row `op` with expression choice made; `out` is the last argument. */
static tb_status run(tb_context ctx, const tb_kernel_call *call, const ew_op *op,
                     const char *float_expr, const char *int_expr) {
  const tb_value *args = call->args;
  int32_t n = call->num_args;
  if (n < op->inputs || args[n - 1].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *out = args[n - 1].as.tensor;
  ocl_operand in[3] = {{0}};
  const tb_tensor *first = NULL;
  for (int k = 0; k < op->inputs; k++) {
    if (args[k].kind == TB_VALUE_TENSOR) {
      in[k].tensor = args[k].as.tensor;
      if (first == NULL && !(op->cond_first && k == 0)) first = in[k].tensor;
    } else if (!ocl_number(&args[k], &in[k].f, &in[k].i)) {
      return ocl_decline(call, "an input that is neither a tensor nor a number");
    }
  }
  tb_dtype compute = out->dtype;
  if (op->bool_out) {
    if (first == NULL) return ocl_decline(call, "no tensor input");
    compute = first->dtype;
  }
  if (op->cond_first && (in[0].tensor == NULL || in[0].tensor->dtype != TB_DTYPE_BOOL)) {
    return ocl_decline(call, "a condition that is not a bool tensor");
  }
  for (int k = 0; k < op->inputs; k++) {
    if (in[k].tensor != NULL && !(op->cond_first && k == 0) && in[k].tensor->dtype != compute) {
      return ocl_decline(call, "inputs of another dtype than the compute dtype");
    }
  }
  /* Integral compute (bool included: add is or, mul is and, as ATen's) runs in long. */
  const char *expr = ocl_is_float(compute) ? float_expr : int_expr;
  if (expr == NULL) return ocl_decline(call, "this dtype");
  double alpha = 1, beta = 1;
  int64_t unused = 0;
  /* a floating bound or factor on integers: ATen promotes to a floating result */
  if (!ocl_is_float(compute) && ((op->alpha >= 0 && args[op->alpha].kind == TB_VALUE_DOUBLE) ||
                                 (op->beta >= 0 && args[op->beta].kind == TB_VALUE_DOUBLE))) {
    return ocl_decline(call, "a floating scalar argument on integers");
  }
  if (op->alpha >= 0 && !ocl_number(&args[op->alpha], &alpha, &unused)) {
    return ocl_decline(call, "a non-numeric scalar argument");
  }
  if (op->beta >= 0 && !ocl_number(&args[op->beta], &beta, &unused)) {
    return ocl_decline(call, "a non-numeric scalar argument");
  }
  ocl_map_spec spec = {expr, compute, op->inputs};
  return ocl_map(ctx, call, &spec, out, in, alpha, beta);
}

static tb_status elementwise(tb_context ctx, const tb_kernel_call *call) {
  const ew_op *op = call->kernel->data;
  return run(ctx, call, op, op->float_expr, op->int_expr);
}

/* gelu.out [self, approximate, out] and gelu_backward.grad_input [grad_output, self,
 * approximate, grad_input]: the expression depends on `approximate`. */
static const ew_op k_gelu_op = {NULL, NULL, 1, -1, -1, false, false};
static const ew_op k_gelu_backward_op = {NULL, NULL, 2, -1, -1, false, false};
static tb_status gelu(tb_context ctx, const tb_kernel_call *call) {
  bool backward = call->kernel->data == &k_gelu_backward_op;
  const tb_value *approximate = &call->args[backward ? 2 : 1];
  if (approximate->kind != TB_VALUE_STRING) return ocl_decline(call, "unexpected arguments");
  bool tanh_form = strcmp(approximate->as.string, "tanh") == 0;
  if (!tanh_form && strcmp(approximate->as.string, "none") != 0) {
    return ocl_decline(call, "an unknown approximation");
  }
  const char *expr;
  if (!backward) {
    expr = tanh_form ? "(CT)0.5 * x0 * ((CT)1 + tanh((CT)0.7978845608028654 * (x0 + "
                       "(CT)0.044715 * x0 * x0 * x0)))"
                     : "(CT)0.5 * x0 * ((CT)1 + tb_erf(x0 * (CT)0.7071067811865476))";
  } else {
    expr = tanh_form
               ? "x0 * ((CT)0.5 * ((CT)1 + tanh((CT)0.7978845608028654 * (x1 + (CT)0.044715 * x1 "
                 "* x1 * x1))) + (CT)0.5 * x1 * ((CT)1 - tanh((CT)0.7978845608028654 * (x1 + "
                 "(CT)0.044715 * x1 * x1 * x1)) * tanh((CT)0.7978845608028654 * (x1 + (CT)0.044715 "
                 "* x1 * x1 * x1))) * (CT)0.7978845608028654 * ((CT)1 + (CT)3 * (CT)0.044715 * x1 "
                 "* x1))"
               : "x0 * ((CT)0.5 * ((CT)1 + tb_erf(x1 * (CT)0.7071067811865476)) + x1 * "
                 "(CT)0.3989422804014327 * exp((CT)-0.5 * x1 * x1))";
  }
  return run(ctx, call, call->kernel->data, expr, NULL);
}

/* clamp.out [self, min?, max?, out]: either bound may be None. */
static const ew_op k_clamp_op = {NULL, NULL, 1, 1, 2, false, false};
static tb_status clamp(tb_context ctx, const tb_kernel_call *call) {
  bool low = call->args[1].kind != TB_VALUE_NONE, high = call->args[2].kind != TB_VALUE_NONE;
  ew_op op = k_clamp_op;
  op.alpha = low ? 1 : -1;
  op.beta = high ? 2 : -1;
  /* min(max(x, lo), hi), keeping a NaN x (comparisons with NaN are false) */
  const char *expr = low && high
                         ? "(x0 < alpha ? alpha : x0) > beta ? beta : (x0 < alpha ? alpha : x0)"
                     : low  ? "x0 < alpha ? alpha : x0"
                     : high ? "x0 > beta ? beta : x0"
                            : "x0";
  return run(ctx, call, &op, expr, expr);
}

#define SCHEMA_OUT(op) op ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"
#define F32_64 (TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64))
#define NUMBERS                                                           \
  (F32_64 | TB_DTYPE_BIT(TB_DTYPE_INT32) | TB_DTYPE_BIT(TB_DTYPE_INT64) | \
   TB_DTYPE_BIT(TB_DTYPE_INT16) | TB_DTYPE_BIT(TB_DTYPE_INT8) | TB_DTYPE_BIT(TB_DTYPE_UINT8))
#define ALL (NUMBERS | TB_DTYPE_BIT(TB_DTYPE_BOOL))

#define KERNEL(sym, name, fn, dtypes, schema, data) \
  static const tb_kernel sym = {sizeof(tb_kernel), name, fn, dtypes, 0, schema, (void *)(data)};
#define ROW(sym, name, dtypes, schema, ...)    \
  static const ew_op op_##sym = {__VA_ARGS__}; \
  KERNEL(k_##sym, name, elementwise, dtypes, schema, &op_##sym)

/* unary: [self, out] */
#define UNARY(sym, fexpr, iexpr, dtypes) \
  ROW(sym, #sym ".out", dtypes, SCHEMA_OUT(#sym), fexpr, iexpr, 1, -1, -1, false, false)
UNARY(neg, "-x0", "-x0", NUMBERS)
UNARY(abs, "fabs(x0)", "x0 < 0 ? -x0 : x0", NUMBERS)
UNARY(exp, "exp(x0)", NULL, F32_64)
UNARY(expm1, "expm1(x0)", NULL, F32_64)
UNARY(log, "log(x0)", NULL, F32_64)
UNARY(log1p, "log1p(x0)", NULL, F32_64)
UNARY(log2, "log2(x0)", NULL, F32_64)
UNARY(sqrt, "sqrt(x0)", NULL, F32_64)
UNARY(rsqrt, "rsqrt(x0)", NULL, F32_64)
UNARY(sin, "sin(x0)", NULL, F32_64)
UNARY(cos, "cos(x0)", NULL, F32_64)
UNARY(tan, "tan(x0)", NULL, F32_64)
UNARY(tanh, "tanh(x0)", NULL, F32_64)
UNARY(sigmoid, "(CT)1 / ((CT)1 + exp(-x0))", NULL, F32_64)
UNARY(reciprocal, "(CT)1 / x0", NULL, F32_64)
UNARY(erf, "tb_erf(x0)", NULL, F32_64)
UNARY(erfinv, "tb_erfinv(x0)", NULL, F32_64)
UNARY(floor, "floor(x0)", "x0", NUMBERS)
UNARY(ceil, "ceil(x0)", "x0", NUMBERS)
UNARY(trunc, "trunc(x0)", "x0", NUMBERS)
UNARY(silu, "x0 / ((CT)1 + exp(-x0))", NULL, F32_64)
ROW(logical_not, "logical_not.out", ALL, SCHEMA_OUT("logical_not"), "x0 == 0", "x0 == 0", 1, -1, -1,
    true, false)
/* relu [self, out] and relu_ [self]: out is the last argument either way */
#define RELU_FLOAT "(x0 > 0 || isnan(x0)) ? x0 : (CT)0"
ROW(relu, "relu", NUMBERS, "relu(Tensor self) -> Tensor", RELU_FLOAT, "x0 > 0 ? x0 : 0", 1, -1, -1,
    false, false)
ROW(relu_, "relu_", NUMBERS, "relu_(Tensor(a!) self) -> Tensor(a!)", RELU_FLOAT, "x0 > 0 ? x0 : 0",
    1, -1, -1, false, false)
KERNEL(k_gelu, "gelu.out", gelu, F32_64,
       "gelu.out(Tensor self, *, str approximate=\"none\", Tensor(a!) out) -> Tensor(a!)",
       &k_gelu_op)
ROW(pow_scalar, "pow.Tensor_Scalar_out", F32_64,
    "pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)",
    "alpha == (CT)2 ? x0 * x0 : alpha == (CT)1 ? x0 : alpha == (CT)0.5 ? sqrt(x0) : pow(x0, alpha)",
    NULL, 1, 1, -1, false, false)
/* a number to a tensor's powers: capturable Adam's bias corrections, beta ** step */
ROW(pow_scalar_base, "pow.Scalar_out", F32_64,
    "pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)",
    "x1 == (CT)1 ? x0 : pow(x0, x1)", NULL, 2, -1, -1, false, false)
KERNEL(k_clamp, "clamp.out", clamp, NUMBERS,
       "clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       &k_clamp_op)
ROW(clamp_min, "clamp_min.out", NUMBERS,
    "clamp_min.out(Tensor self, Scalar min, *, Tensor(a!) out) -> Tensor(a!)",
    "isnan(x0) ? x0 : (isnan(alpha) || x0 < alpha) ? alpha : x0", "x0 < alpha ? alpha : x0", 1, 1,
    -1, false, false)
ROW(clamp_max, "clamp_max.out", NUMBERS,
    "clamp_max.out(Tensor self, Scalar max, *, Tensor(a!) out) -> Tensor(a!)",
    "isnan(x0) ? x0 : (isnan(alpha) || x0 > alpha) ? alpha : x0", "x0 > alpha ? alpha : x0", 1, 1,
    -1, false, false)

/* binary: [self, other, (alpha,) out] */
#define BINARY_SCHEMA(op) op ".out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"
#define ALPHA_SCHEMA(op) \
  op ".out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
ROW(add, "add.out", ALL, ALPHA_SCHEMA("add"), "x0 + alpha * x1", "x0 + alpha * x1", 2, 2, -1, false,
    false)
ROW(sub, "sub.out", NUMBERS, ALPHA_SCHEMA("sub"), "x0 - alpha * x1", "x0 - alpha * x1", 2, 2, -1,
    false, false)
ROW(mul, "mul.out", ALL, BINARY_SCHEMA("mul"), "x0 * x1", "x0 * x1", 2, -1, -1, false, false)
ROW(div, "div.out", F32_64, BINARY_SCHEMA("div"), "x0 / x1", NULL, 2, -1, -1, false, false)

/* Integer division as ATen's (c10/util/generic_math.h): C's truncation, floor division and
 * Python's remainder.  A divisor of zero in a tensor gives -1 (a quotient) or the dividend (a
 * remainder) where the CPU raises ZeroDivisionError: a kernel cannot raise, and CUDA's result
 * is unspecified too; a divisor of -1 negates without the trap of LONG_MIN / -1.  Floating
 * division rounds through map.cl's tb_div_floor_* and tb_remainder_* (ATen's). */
#define INT_QUOTIENT(q) "x1 == 0 ? (CT)-1 : x1 == -1 ? (CT)(0UL - (ulong)x0) : " q
#define INT_FLOOR "(x0 % x1 != 0 && (x0 < 0) != (x1 < 0)) ? x0 / x1 - 1 : x0 / x1"
#define INT_REMAINDER              \
  "x1 == 0 ? x0 : x1 == -1 ? 0 : " \
  "(x0 % x1 != 0 && (x0 % x1 < 0) != (x1 < 0)) ? x0 % x1 + x1 : x0 % x1"

/* An integer division by the number 0: declined, so that the CPU raises ZeroDivisionError. */
static bool by_number_zero(const tb_kernel_call *call) {
  double f = 1;
  int64_t i = 1;
  const tb_value *out = &call->args[call->num_args - 1];
  return call->args[1].kind != TB_VALUE_TENSOR && ocl_number(&call->args[1], &f, &i) && f == 0 &&
         out->kind == TB_VALUE_TENSOR && !ocl_is_float(out->as.tensor->dtype);
}

/* remainder.Tensor_out [self, other, out] */
static const ew_op k_remainder_op = {
    "TB_TYPED(tb_remainder_, CT)(x0, x1)", INT_REMAINDER, 2, -1, -1, false, false};
static tb_status python_remainder(tb_context ctx, const tb_kernel_call *call) {
  if (call->num_args < 3) return ocl_decline(call, "unexpected arguments");
  if (by_number_zero(call)) return ocl_decline(call, "an integer division by the number 0");
  return elementwise(ctx, call);
}
KERNEL(k_remainder, "remainder.Tensor_out", python_remainder, NUMBERS,
       "remainder.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       &k_remainder_op)

/* div.out_mode [self, other, rounding_mode, out]: true division (None, floating only: ATen
 * promotes integers), "trunc" or "floor" (floor_divide's). */
static const ew_op k_div_mode_op = {NULL, NULL, 2, -1, -1, false, false};
static tb_status div_mode(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *mode = &call->args[2];
  if (call->num_args < 4 || (mode->kind != TB_VALUE_STRING && mode->kind != TB_VALUE_NONE)) {
    return ocl_decline(call, "unexpected arguments");
  }
  if (by_number_zero(call)) return ocl_decline(call, "an integer division by the number 0");
  if (mode->kind == TB_VALUE_NONE) return run(ctx, call, &k_div_mode_op, "x0 / x1", NULL);
  if (strcmp(mode->as.string, "trunc") == 0) {
    return run(ctx, call, &k_div_mode_op, "trunc(x0 / x1)", INT_QUOTIENT("x0 / x1"));
  }
  if (strcmp(mode->as.string, "floor") == 0) {
    return run(ctx, call, &k_div_mode_op, "TB_TYPED(tb_div_floor_, CT)(x0, x1)",
               INT_QUOTIENT(INT_FLOOR));
  }
  return ocl_decline(call, "an unknown rounding mode");
}
KERNEL(k_div_mode, "div.out_mode", div_mode, NUMBERS,
       "div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out) -> "
       "Tensor(a!)",
       &k_div_mode_op)
ROW(maximum, "maximum.out", NUMBERS, BINARY_SCHEMA("maximum"),
    "(isnan(x0) || isnan(x1)) ? x0 + x1 : (x0 > x1 ? x0 : x1)", "x0 > x1 ? x0 : x1", 2, -1, -1,
    false, false)
ROW(minimum, "minimum.out", NUMBERS, BINARY_SCHEMA("minimum"),
    "(isnan(x0) || isnan(x1)) ? x0 + x1 : (x0 < x1 ? x0 : x1)", "x0 < x1 ? x0 : x1", 2, -1, -1,
    false, false)

/* comparisons: [self, other, out], other a tensor or a number; the output is bool */
#define COMPARE(sym, op)                                                                         \
  ROW(sym##_tensor, #sym ".Tensor_out", NUMBERS,                                                 \
      #sym ".Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", op, op, 2, \
      -1, -1, true, false)                                                                       \
  ROW(sym##_scalar, #sym ".Scalar_out", NUMBERS,                                                 \
      #sym ".Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)", op, op, 2, \
      -1, -1, true, false)
COMPARE(eq, "x0 == x1")
COMPARE(ne, "x0 != x1")
COMPARE(lt, "x0 < x1")
COMPARE(le, "x0 <= x1")
COMPARE(gt, "x0 > x1")
COMPARE(ge, "x0 >= x1")

/* where.self_out [condition, self, other, out] */
ROW(where, "where.self_out", ALL,
    "where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> "
    "Tensor(a!)",
    "x0 != 0 ? x1 : x2", "x0 != 0 ? x1 : x2", 3, -1, -1, false, true)

/* activation backwards */
ROW(threshold_backward, "threshold_backward.grad_input", NUMBERS,
    "threshold_backward.grad_input(Tensor grad_output, Tensor self, Scalar threshold, *, "
    "Tensor(a!) grad_input) -> Tensor(a!)",
    "x1 <= alpha ? (CT)0 : x0", "x1 <= alpha ? 0 : x0", 2, 2, -1, false, false)
ROW(sigmoid_backward, "sigmoid_backward.grad_input", F32_64,
    "sigmoid_backward.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) grad_input) "
    "-> Tensor(a!)",
    "x0 * ((CT)1 - x1) * x1", NULL, 2, -1, -1, false, false)
ROW(tanh_backward, "tanh_backward.grad_input", F32_64,
    "tanh_backward.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) grad_input) -> "
    "Tensor(a!)",
    "x0 * ((CT)1 - x1 * x1)", NULL, 2, -1, -1, false, false)
ROW(silu_backward, "silu_backward.grad_input", F32_64,
    "silu_backward.grad_input(Tensor grad_output, Tensor self, *, Tensor(a!) grad_input) -> "
    "Tensor(a!)",
    "x0 * ((CT)1 / ((CT)1 + exp(-x1))) * ((CT)1 + x1 * ((CT)1 - (CT)1 / ((CT)1 + exp(-x1))))", NULL,
    2, -1, -1, false, false)
KERNEL(k_gelu_backward, "gelu_backward.grad_input", gelu, F32_64,
       "gelu_backward.grad_input(Tensor grad_output, Tensor self, *, str approximate=\"none\", "
       "Tensor(a!) grad_input) -> Tensor(a!)",
       &k_gelu_backward_op)

/* ternary: [self, tensor1, tensor2, value, out], [self, end, weight, out] */
ROW(addcmul, "addcmul.out", F32_64,
    "addcmul.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) "
    "out) -> Tensor(a!)",
    "x0 + alpha * x1 * x2", NULL, 3, 3, -1, false, false)
ROW(addcdiv, "addcdiv.out", F32_64,
    "addcdiv.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) "
    "out) -> Tensor(a!)",
    "x0 + alpha * (x1 / x2)", NULL, 3, 3, -1, false, false)
ROW(lerp_scalar, "lerp.Scalar_out", F32_64,
    "lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) -> Tensor(a!)",
    "fabs(alpha) < (CT)0.5 ? x0 + alpha * (x1 - x0) : x1 - (x1 - x0) * ((CT)1 - alpha)", NULL, 2, 2,
    -1, false, false)
ROW(lerp_tensor, "lerp.Tensor_out", F32_64,
    "lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out) -> Tensor(a!)",
    "fabs(x2) < (CT)0.5 ? x0 + x2 * (x1 - x0) : x1 - (x1 - x0) * ((CT)1 - x2)", NULL, 3, -1, -1,
    false, false)

/* more unary rows */
UNARY(sgn, "x0 > 0 ? (CT)1 : x0 < 0 ? (CT)-1 : (CT)0", "(x0 > 0) - (x0 < 0)", ALL)
UNARY(lgamma, "lgamma(x0)", NULL, F32_64)
UNARY(sign, "x0 > 0 ? (CT)1 : x0 < 0 ? (CT)-1 : (CT)0", "(x0 > 0) - (x0 < 0)", NUMBERS)
UNARY(log10, "log10(x0)", NULL, F32_64)
UNARY(exp2, "exp2(x0)", NULL, F32_64)
UNARY(sinh, "sinh(x0)", NULL, F32_64)
UNARY(cosh, "cosh(x0)", NULL, F32_64)
UNARY(asin, "asin(x0)", NULL, F32_64)
UNARY(acos, "acos(x0)", NULL, F32_64)
UNARY(atan, "atan(x0)", NULL, F32_64)
UNARY(asinh, "asinh(x0)", NULL, F32_64)
UNARY(acosh, "acosh(x0)", NULL, F32_64)
UNARY(atanh, "atanh(x0)", NULL, F32_64)
/* mish as ATen's CPU kernel: x tanh(log1p(exp(x))) */
UNARY(mish, "x0 * tanh(log1p(exp(x0)))", NULL, F32_64)
ROW(atan2, "atan2.out", F32_64, BINARY_SCHEMA("atan2"), "atan2(x0, x1)", NULL, 2, -1, -1, false,
    false)
ROW(hypot, "hypot.out", F32_64, BINARY_SCHEMA("hypot"), "hypot(x0, x1)", NULL, 2, -1, -1, false,
    false)
ROW(fmod, "fmod.Tensor_out", F32_64,
    "fmod.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", "fmod(x0, x1)",
    NULL, 2, -1, -1, false, false)
ROW(pow_tensor, "pow.Tensor_Tensor_out", F32_64,
    "pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)",
    "pow(x0, x1)", NULL, 2, -1, -1, false, false)
/* logical_and.out / logical_xor.out [self, other, out]: as logical_or */
ROW(logical_and, "logical_and.out", ALL, BINARY_SCHEMA("logical_and"), "x0 != 0 && x1 != 0",
    "x0 != 0 && x1 != 0", 2, -1, -1, false, false)
ROW(logical_xor, "logical_xor.out", ALL, BINARY_SCHEMA("logical_xor"), "(x0 != 0) != (x1 != 0)",
    "(x0 != 0) != (x1 != 0)", 2, -1, -1, false, false)
/* leaky_relu.out [self, negative_slope, out] and its backward [grad_output, self,
 * negative_slope, self_is_result, grad_input], as ATen's: x > 0 ? x : x * slope */
ROW(leaky_relu, "leaky_relu.out", F32_64,
    "leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!) out) -> Tensor(a!)",
    "x0 > (CT)0 ? x0 : x0 * alpha", NULL, 1, 1, -1, false, false)
ROW(leaky_relu_backward, "leaky_relu_backward.grad_input", F32_64,
    "leaky_relu_backward.grad_input(Tensor grad_output, Tensor self, Scalar negative_slope, bool "
    "self_is_result, *, Tensor(a!) grad_input) -> Tensor(a!)",
    "x1 > (CT)0 ? x0 : x0 * alpha", NULL, 2, 2, -1, false, false)
/* softplus.out [self, beta, threshold, out] and softplus_backward.grad_input [grad_output, self,
 * beta, threshold, grad_input], as ATen's: linear above the threshold */
ROW(softplus, "softplus.out", F32_64,
    "softplus.out(Tensor self, Scalar beta=1, Scalar threshold=20, *, Tensor(a!) out) -> "
    "Tensor(a!)",
    "x0 * alpha > beta ? x0 : log1p(exp(x0 * alpha)) / alpha", NULL, 1, 1, 2, false, false)
ROW(softplus_backward, "softplus_backward.grad_input", F32_64,
    "softplus_backward.grad_input(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold, "
    "*, Tensor(a!) grad_input) -> Tensor(a!)",
    "x1 * alpha > beta ? x0 : x0 * exp(x1 * alpha) / (exp(x1 * alpha) + (CT)1)", NULL, 2, 2, 3,
    false, false)
/* hardtanh.out [self, min_val, max_val, out] (relu6) and its backward [grad_output, self,
 * min_val, max_val, grad_input], as ATen's: NaN propagates, the gradient is 0 on the bounds */
ROW(hardtanh, "hardtanh.out", F32_64,
    "hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out) -> "
    "Tensor(a!)",
    "isnan(x0) ? x0 : min(max(x0, alpha), beta)", NULL, 1, 1, 2, false, false)
ROW(hardtanh_backward, "hardtanh_backward.grad_input", F32_64,
    "hardtanh_backward.grad_input(Tensor grad_output, Tensor self, Scalar min_val, Scalar "
    "max_val, *, Tensor(a!) grad_input) -> Tensor(a!)",
    "(x1 <= alpha || x1 >= beta) ? (CT)0 : x0", NULL, 2, 2, 3, false, false)
/* hardswish and hardsigmoid as ATen's CPU kernels write them: NaN propagates */
#define HARDSWISH "isnan(x0) ? x0 : clamp(x0 + (CT)3, (CT)0, (CT)6) * x0 / (CT)6"
UNARY(hardswish, HARDSWISH, NULL, F32_64)
ROW(hardswish_, "hardswish_", F32_64, "hardswish_(Tensor(a!) self) -> Tensor(a!)", HARDSWISH, NULL,
    1, -1, -1, false, false)
UNARY(hardsigmoid, "isnan(x0) ? x0 : clamp(x0 + (CT)3, (CT)0, (CT)6) / (CT)6", NULL, F32_64)
ROW(hardswish_backward, "hardswish_backward", F32_64,
    "hardswish_backward(Tensor grad_output, Tensor self) -> Tensor",
    "x1 <= (CT)-3 ? (CT)0 : x1 >= (CT)3 ? x0 : x0 * (x1 / (CT)3 + (CT)0.5)", NULL, 2, -1, -1, false,
    false)
/* the slope is the float 1/6 for every dtype, as ATen's CPU kernel has it */
ROW(hardsigmoid_backward, "hardsigmoid_backward.grad_input", F32_64,
    "hardsigmoid_backward.grad_input(Tensor grad_output, Tensor self, *, Tensor(a!) grad_input) "
    "-> Tensor(a!)",
    "(x1 > (CT)-3 && x1 < (CT)3) ? x0 * (CT)(1.0f / 6.0f) : (CT)0", NULL, 2, -1, -1, false, false)

/* bool results of a test on [self, out]: the compute dtype the input's */
#define TEST(sym, fexpr, iexpr) \
  ROW(sym, #sym ".out", ALL, SCHEMA_OUT(#sym), fexpr, iexpr, 1, -1, -1, true, false)
TEST(isnan, "isnan(x0)", "0")
TEST(isposinf, "isinf(x0) && x0 > 0", "0")
TEST(isneginf, "isinf(x0) && x0 < 0", "0")

/* clamp_min.Tensor_out / clamp_max.Tensor_out [self, bound, out]: NaN in either propagates */
ROW(clamp_min_tensor, "clamp_min.Tensor_out", NUMBERS,
    "clamp_min.Tensor_out(Tensor self, Tensor min, *, Tensor(a!) out) -> Tensor(a!)",
    "isnan(x0) ? x0 : (isnan(x1) || x0 < x1) ? x1 : x0", "x0 < x1 ? x1 : x0", 2, -1, -1, false,
    false)
ROW(clamp_max_tensor, "clamp_max.Tensor_out", NUMBERS,
    "clamp_max.Tensor_out(Tensor self, Tensor max, *, Tensor(a!) out) -> Tensor(a!)",
    "isnan(x0) ? x0 : (isnan(x1) || x0 > x1) ? x1 : x0", "x0 > x1 ? x1 : x0", 2, -1, -1, false,
    false)

/* bitwise operators: integral and bool dtypes (on bool, and/or/xor of 0 and 1) */
#define INTEGRAL (ALL & ~F32_64)
ROW(bitwise_and, "bitwise_and.Tensor_out", INTEGRAL,
    "bitwise_and.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", NULL,
    "x0 & x1", 2, -1, -1, false, false)
ROW(bitwise_or, "bitwise_or.Tensor_out", INTEGRAL,
    "bitwise_or.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", NULL,
    "x0 | x1", 2, -1, -1, false, false)
ROW(bitwise_xor, "bitwise_xor.Tensor_out", INTEGRAL,
    "bitwise_xor.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", NULL,
    "x0 ^ x1", 2, -1, -1, false, false)
/* bitwise_not.out [self, out]: ~x, and on bool (stored as 0 or 1) logical not */
static const ew_op k_bitwise_not_op = {NULL, NULL, 1, -1, -1, false, false};
static tb_status bitwise_not(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *out = &call->args[call->num_args - 1];
  bool boolean = out->kind == TB_VALUE_TENSOR && out->as.tensor->dtype == TB_DTYPE_BOOL;
  return run(ctx, call, &k_bitwise_not_op, NULL, boolean ? "x0 == 0" : "~x0");
}
KERNEL(k_bitwise_not, "bitwise_not.out", bitwise_not, INTEGRAL, SCHEMA_OUT("bitwise_not"),
       &k_bitwise_not_op)
/* logical_or.out [self, other, out]: torch_backend casts the inputs to the output's dtype */
ROW(logical_or, "logical_or.out", ALL, BINARY_SCHEMA("logical_or"), "x0 != 0 || x1 != 0",
    "x0 != 0 || x1 != 0", 2, -1, -1, false, false)

/* masked_fill_.Scalar [self, mask, value] and masked_fill_.Tensor [self, mask, value (0-dim)]:
 * in place, the bool mask broadcast to self's shape (these are not TensorIterator operators:
 * their operands arrive as the user passed them). */
static tb_status masked_fill(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 3 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *mask = a[1].as.tensor;
  if (mask->dtype != TB_DTYPE_BOOL) return ocl_decline(call, "a mask that is not bool");
  int64_t mask_strides[OCL_MAX_DIMS], value_strides[OCL_MAX_DIMS];
  tb_tensor mask_view, value_view;
  if (!ocl_broadcast(mask, self, mask_strides, &mask_view)) {
    return ocl_decline(call, "a mask that does not broadcast to self's shape");
  }
  ocl_operand in[3] = {{self, 0, 0}, {&mask_view, 0, 0}, {NULL, 0, 0}};
  if (a[2].kind == TB_VALUE_TENSOR) {
    const tb_tensor *value = a[2].as.tensor;
    if (value->ndim != 0 || value->dtype != self->dtype || value->device != self->device ||
        !ocl_broadcast(value, self, value_strides, &value_view)) {
      return ocl_decline(call, "a value that is not a 0-dim tensor of self's dtype and device");
    }
    in[2].tensor = &value_view;
  } else if (!ocl_number(&a[2], &in[2].f, &in[2].i)) {
    return ocl_decline(call, "a value that is not a number");
  }
  ocl_map_spec spec = {"x1 != 0 ? x2 : x0", ocl_compute_of(self->dtype), 3};
  return ocl_map(ctx, call, &spec, self, in, 1, 1);
}
KERNEL(k_masked_fill, "masked_fill_.Scalar", masked_fill, ALL,
       "masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)", NULL)
KERNEL(k_masked_fill_tensor, "masked_fill_.Tensor", masked_fill, ALL,
       "masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)", NULL)

const tb_kernel *const ocl_elementwise_kernels[] = {&k_neg,
                                                    &k_abs,
                                                    &k_exp,
                                                    &k_expm1,
                                                    &k_log,
                                                    &k_log1p,
                                                    &k_log2,
                                                    &k_sqrt,
                                                    &k_rsqrt,
                                                    &k_sin,
                                                    &k_cos,
                                                    &k_tan,
                                                    &k_tanh,
                                                    &k_sigmoid,
                                                    &k_reciprocal,
                                                    &k_erf,
                                                    &k_erfinv,
                                                    &k_floor,
                                                    &k_ceil,
                                                    &k_trunc,
                                                    &k_silu,
                                                    &k_logical_not,
                                                    &k_relu,
                                                    &k_relu_,
                                                    &k_gelu,
                                                    &k_pow_scalar,
                                                    &k_pow_scalar_base,
                                                    &k_clamp,
                                                    &k_clamp_min,
                                                    &k_clamp_max,
                                                    &k_add,
                                                    &k_sub,
                                                    &k_mul,
                                                    &k_div,
                                                    &k_div_mode,
                                                    &k_remainder,
                                                    &k_maximum,
                                                    &k_minimum,
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
                                                    &k_where,
                                                    &k_threshold_backward,
                                                    &k_sigmoid_backward,
                                                    &k_tanh_backward,
                                                    &k_silu_backward,
                                                    &k_gelu_backward,
                                                    &k_addcmul,
                                                    &k_addcdiv,
                                                    &k_lerp_scalar,
                                                    &k_lerp_tensor,
                                                    &k_sgn,
                                                    &k_lgamma,
                                                    &k_sign,
                                                    &k_log10,
                                                    &k_exp2,
                                                    &k_sinh,
                                                    &k_cosh,
                                                    &k_asin,
                                                    &k_acos,
                                                    &k_atan,
                                                    &k_asinh,
                                                    &k_acosh,
                                                    &k_atanh,
                                                    &k_mish,
                                                    &k_atan2,
                                                    &k_hypot,
                                                    &k_fmod,
                                                    &k_pow_tensor,
                                                    &k_logical_and,
                                                    &k_logical_xor,
                                                    &k_leaky_relu,
                                                    &k_leaky_relu_backward,
                                                    &k_softplus,
                                                    &k_softplus_backward,
                                                    &k_hardtanh,
                                                    &k_hardtanh_backward,
                                                    &k_hardswish,
                                                    &k_hardswish_,
                                                    &k_hardsigmoid,
                                                    &k_hardswish_backward,
                                                    &k_hardsigmoid_backward,
                                                    &k_isnan,
                                                    &k_isposinf,
                                                    &k_isneginf,
                                                    &k_clamp_min_tensor,
                                                    &k_clamp_max_tensor,
                                                    &k_bitwise_and,
                                                    &k_bitwise_or,
                                                    &k_bitwise_xor,
                                                    &k_bitwise_not,
                                                    &k_logical_or,
                                                    &k_masked_fill,
                                                    &k_masked_fill_tensor,
                                                    NULL};
