/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Elementwise kernels: unary, binary and ternary arithmetic, comparisons, where, activations
 * and their backwards, special functions (lgamma, digamma), and the isnan / isinf tests.
 * torch_backend hands them operands of the output's shape and of one compute dtype (vendor.h,
 * "Elementwise operators"), so each kernel is a table of 1-d loops, one per compute dtype, run by
 * the elementwise engine (common.c).  Loops have a contiguous path the compiler vectorises and a
 * strided path; float16 and bfloat16 compute in float.
 */
#define _GNU_SOURCE /* lgamma_r, lgammaf_r: lgamma without the global signgam */

#include <stdio.h>
#include <tgmath.h>

#include "fastmath.h"
#include "kernel.h"

/* ---- element access per dtype: suffix, storage type, compute type, load, store ---- */

#define LD_NATIVE(T, p) (*(const T *)(p))
#define ST_NATIVE(T, p, v) (*(T *)(p) = (T)(v))
#define LD_F32(p) LD_NATIVE(float, p)
#define ST_F32(p, v) ST_NATIVE(float, p, v)
#define LD_F64(p) LD_NATIVE(double, p)
#define ST_F64(p, v) ST_NATIVE(double, p, v)
#define LD_F16(p) emu_half_to_float(*(const uint16_t *)(p))
#define ST_F16(p, v) (*(uint16_t *)(p) = emu_float_to_half((float)(v)))
#define LD_BF16(p) emu_bf16_to_float(*(const uint16_t *)(p))
#define ST_BF16(p, v) (*(uint16_t *)(p) = emu_float_to_bf16((float)(v)))
#define LD_U8(p) LD_NATIVE(uint8_t, p)
#define ST_U8(p, v) ST_NATIVE(uint8_t, p, v)
#define LD_I8(p) LD_NATIVE(int8_t, p)
#define ST_I8(p, v) ST_NATIVE(int8_t, p, v)
#define LD_I16(p) LD_NATIVE(int16_t, p)
#define ST_I16(p, v) ST_NATIVE(int16_t, p, v)
#define LD_I32(p) LD_NATIVE(int32_t, p)
#define ST_I32(p, v) ST_NATIVE(int32_t, p, v)
#define LD_I64(p) LD_NATIVE(int64_t, p)
#define ST_I64(p, v) ST_NATIVE(int64_t, p, v)
#define LD_B8(p) (*(const uint8_t *)(p) != 0)
#define ST_B8(p, v) (*(uint8_t *)(p) = (uint8_t)((v) != 0))

#define T_f32 f32, float, float, LD_F32, ST_F32, TB_DTYPE_FLOAT32
#define T_f64 f64, double, double, LD_F64, ST_F64, TB_DTYPE_FLOAT64
#define T_f16 f16, uint16_t, float, LD_F16, ST_F16, TB_DTYPE_FLOAT16
#define T_bf16 bf16, uint16_t, float, LD_BF16, ST_BF16, TB_DTYPE_BFLOAT16
#define T_u8 u8, uint8_t, int64_t, LD_U8, ST_U8, TB_DTYPE_UINT8
#define T_i8 i8, int8_t, int64_t, LD_I8, ST_I8, TB_DTYPE_INT8
#define T_i16 i16, int16_t, int64_t, LD_I16, ST_I16, TB_DTYPE_INT16
#define T_i32 i32, int32_t, int64_t, LD_I32, ST_I32, TB_DTYPE_INT32
#define T_i64 i64, int64_t, int64_t, LD_I64, ST_I64, TB_DTYPE_INT64
#define T_b8 b8, uint8_t, int64_t, LD_B8, ST_B8, TB_DTYPE_BOOL

#define CALL(m, ...) m(__VA_ARGS__)

/* Whether loop dtype DT computes in floating point (IS_FLOAT inside a loop). */
#define EW_IS_FLOAT(DT)                                                                \
  ((DT) == TB_DTYPE_FLOAT32 || (DT) == TB_DTYPE_FLOAT64 || (DT) == TB_DTYPE_FLOAT16 || \
   (DT) == TB_DTYPE_BFLOAT16)

/* The constant of scalar parameter k in the compute type. */
#define PARAM(k) (IS_FLOAT ? (T)P->f[k] : (T)P->i[k])

/* ---- loop templates: NAME_SFX(data, strides, n, params) ---- */

#define UNARY_LOOP(NAME, SFX, S, C, LD, ST, DT, EXPR)                          \
  EMU_HOT_LOOP static void NAME##_##SFX(char **d, const int64_t *s, int64_t n, \
                                        const void *params) {                  \
    const ew_params *P = params;                                               \
    typedef C T __attribute__((unused));                                       \
    (void)P;                                                                   \
    enum { IS_FLOAT = EW_IS_FLOAT(DT) };                                       \
    const tb_dtype LOOP_DTYPE __attribute__((unused)) = DT;                    \
    char *o = d[0];                                                            \
    const char *a = d[1];                                                      \
    if (s[0] == sizeof(S) && s[1] == sizeof(S)) {                              \
      for (int64_t i = 0; i < n; i++) {                                        \
        C x = LD((const S *)a + i);                                            \
        ST((S *)o + i, (EXPR));                                                \
      }                                                                        \
    } else {                                                                   \
      for (int64_t i = 0; i < n; i++) {                                        \
        C x = LD(a + i * s[1]);                                                \
        ST(o + i * s[0], (EXPR));                                              \
      }                                                                        \
    }                                                                          \
  }

/* Unary with a bool output (isnan, isposinf, isneginf). */
#define UNARY_BOOL_LOOP(NAME, SFX, S, C, LD, ST, DT, EXPR)                     \
  EMU_HOT_LOOP static void NAME##_##SFX(char **d, const int64_t *s, int64_t n, \
                                        const void *params) {                  \
    (void)params;                                                              \
    typedef C T __attribute__((unused));                                       \
    enum { IS_FLOAT = EW_IS_FLOAT(DT) };                                       \
    char *o = d[0];                                                            \
    const char *a = d[1];                                                      \
    if (s[0] == 1 && s[1] == sizeof(S)) {                                      \
      for (int64_t i = 0; i < n; i++) {                                        \
        C x = LD((const S *)a + i);                                            \
        ST_B8((uint8_t *)o + i, (EXPR));                                       \
      }                                                                        \
    } else {                                                                   \
      for (int64_t i = 0; i < n; i++) {                                        \
        C x = LD(a + i * s[1]);                                                \
        ST_B8(o + i * s[0], (EXPR));                                           \
      }                                                                        \
    }                                                                          \
  }

/* Binary: `x` from operand 1, `y` from operand 2; OST/OS store the (maybe bool) output. */
#define BINARY_LOOP_OUT(NAME, SFX, S, C, LD, ST, DT, OS, OST, EXPR)            \
  EMU_HOT_LOOP static void NAME##_##SFX(char **d, const int64_t *s, int64_t n, \
                                        const void *params) {                  \
    const ew_params *P = params;                                               \
    typedef C T __attribute__((unused));                                       \
    (void)P;                                                                   \
    enum { IS_FLOAT = EW_IS_FLOAT(DT) };                                       \
    enum { LOOP_DTYPE = (DT) };                                                \
    char *o = d[0];                                                            \
    const char *a = d[1], *b = d[2];                                           \
    if (s[0] == sizeof(OS) && s[1] == sizeof(S) && s[2] == sizeof(S)) {        \
      for (int64_t i = 0; i < n; i++) {                                        \
        C x = LD((const S *)a + i), y = LD((const S *)b + i);                  \
        OST((OS *)o + i, (EXPR));                                              \
      }                                                                        \
    } else if (s[0] == sizeof(OS) && s[1] == sizeof(S) && s[2] == 0) {         \
      const C y = LD(b);                                                       \
      for (int64_t i = 0; i < n; i++) {                                        \
        C x = LD((const S *)a + i);                                            \
        OST((OS *)o + i, (EXPR));                                              \
      }                                                                        \
    } else {                                                                   \
      for (int64_t i = 0; i < n; i++) {                                        \
        C x = LD(a + i * s[1]), y = LD(b + i * s[2]);                          \
        OST(o + i * s[0], (EXPR));                                             \
      }                                                                        \
    }                                                                          \
  }
#define BINARY_LOOP(NAME, SFX, S, C, LD, ST, DT, EXPR) \
  BINARY_LOOP_OUT(NAME, SFX, S, C, LD, ST, DT, S, ST, EXPR)
#define COMPARE_LOOP(NAME, SFX, S, C, LD, ST, DT, EXPR) \
  BINARY_LOOP_OUT(NAME, SFX, S, C, LD, ST, DT, uint8_t, ST_B8, EXPR)

/* Ternary: `x`, `y`, `z` from operands 1, 2, 3. */
#define TERNARY_LOOP(NAME, SFX, S, C, LD, ST, DT, EXPR)                                     \
  EMU_HOT_LOOP static void NAME##_##SFX(char **d, const int64_t *s, int64_t n,              \
                                        const void *params) {                               \
    const ew_params *P = params;                                                            \
    typedef C T __attribute__((unused));                                                    \
    (void)P;                                                                                \
    enum { IS_FLOAT = EW_IS_FLOAT(DT) };                                                    \
    char *o = d[0];                                                                         \
    const char *a = d[1], *b = d[2], *c = d[3];                                             \
    if (s[0] == sizeof(S) && s[1] == sizeof(S) && s[2] == sizeof(S) && s[3] == sizeof(S)) { \
      for (int64_t i = 0; i < n; i++) {                                                     \
        C x = LD((const S *)a + i), y = LD((const S *)b + i), z = LD((const S *)c + i);     \
        ST((S *)o + i, (EXPR));                                                             \
      }                                                                                     \
    } else {                                                                                \
      for (int64_t i = 0; i < n; i++) {                                                     \
        C x = LD(a + i * s[1]), y = LD(b + i * s[2]), z = LD(c + i * s[3]);                 \
        ST(o + i * s[0], (EXPR));                                                           \
      }                                                                                     \
    }                                                                                       \
  }

/* where(cond, x, y): operand 1 is bool. */
#define WHERE_LOOP(NAME, SFX, S, C, LD, ST, DT, EXPR)                          \
  EMU_HOT_LOOP static void NAME##_##SFX(char **d, const int64_t *s, int64_t n, \
                                        const void *params) {                  \
    (void)params;                                                              \
    char *o = d[0];                                                            \
    const char *q = d[1], *a = d[2], *b = d[3];                                \
    for (int64_t i = 0; i < n; i++) {                                          \
      S v = *(const uint8_t *)(q + i * s[1]) ? *(const S *)(a + i * s[2])      \
                                             : *(const S *)(b + i * s[3]);     \
      *(S *)(o + i * s[0]) = v;                                                \
    }                                                                          \
  }

/* Instantiate a loop for a list of types and its table. */
#define FLOATS(M, NAME, ...)        \
  CALL(M, NAME, T_f32, __VA_ARGS__) \
  CALL(M, NAME, T_f64, __VA_ARGS__) \
  CALL(M, NAME, T_f16, __VA_ARGS__) CALL(M, NAME, T_bf16, __VA_ARGS__)
#define INTS(M, NAME, ...)          \
  CALL(M, NAME, T_u8, __VA_ARGS__)  \
  CALL(M, NAME, T_i8, __VA_ARGS__)  \
  CALL(M, NAME, T_i16, __VA_ARGS__) \
  CALL(M, NAME, T_i32, __VA_ARGS__) CALL(M, NAME, T_i64, __VA_ARGS__)
#define FLOAT_TABLE(NAME)                                           \
  [TB_DTYPE_FLOAT32] = NAME##_f32, [TB_DTYPE_FLOAT64] = NAME##_f64, \
  [TB_DTYPE_FLOAT16] = NAME##_f16, [TB_DTYPE_BFLOAT16] = NAME##_bf16
#define INT_TABLE(NAME)                                                                     \
  [TB_DTYPE_UINT8] = NAME##_u8, [TB_DTYPE_INT8] = NAME##_i8, [TB_DTYPE_INT16] = NAME##_i16, \
  [TB_DTYPE_INT32] = NAME##_i32, [TB_DTYPE_INT64] = NAME##_i64

#define FLOAT_OP(M, NAME, ...) \
  FLOATS(M, NAME, __VA_ARGS__) \
  static const ew_loop NAME##_loops[TB_DTYPE_COUNT] = {FLOAT_TABLE(NAME)};
#define NUMERIC_OP(M, NAME, ...) \
  FLOATS(M, NAME, __VA_ARGS__)   \
  INTS(M, NAME, __VA_ARGS__)     \
  static const ew_loop NAME##_loops[TB_DTYPE_COUNT] = {FLOAT_TABLE(NAME), INT_TABLE(NAME)};
#define INTEGRAL_OP(M, NAME, ...)                       \
  INTS(M, NAME, __VA_ARGS__)                            \
  CALL(M, NAME, T_b8, __VA_ARGS__)                      \
  static const ew_loop NAME##_loops[TB_DTYPE_COUNT] = { \
      INT_TABLE(NAME), [TB_DTYPE_BOOL] = NAME##_b8};
#define ALL_OP(M, NAME, ...)                            \
  FLOATS(M, NAME, __VA_ARGS__)                          \
  INTS(M, NAME, __VA_ARGS__)                            \
  CALL(M, NAME, T_b8, __VA_ARGS__)                      \
  static const ew_loop NAME##_loops[TB_DTYPE_COUNT] = { \
      FLOAT_TABLE(NAME), INT_TABLE(NAME), [TB_DTYPE_BOOL] = NAME##_b8};

/* ---- helpers used inside expressions ---- */

/* exp and erf in the compute type: the vectorisable single-precision ones (fastmath.h) for
 * float, float16 and bfloat16; libm's for float64. */
#define EXP(x) _Generic((x), float : emu_expf, default : exp)(x)
#define ERF(x) _Generic((x), float : emu_erff, default : erf)(x)
#define TANH(x) _Generic((x), float : emu_tanhf, default : tanh)(x)

#define SIGMOID(x) _Generic((x), float : emu_sigmoidf, default : emu_sigmoid)(x)
#define MAXIMUM(x, y) (((x) != (x)) ? (x) : ((y) != (y)) ? (y) : ((x) > (y) ? (x) : (y)))
#define MINIMUM(x, y) (((x) != (x)) ? (x) : ((y) != (y)) ? (y) : ((x) < (y) ? (x) : (y)))
#define ABS_INT(x) ((x) < 0 ? -(x) : (x))

/* gelu with approximate='tanh' in float as x * sigmoid(2u), u = k (x + c x^3): the same value
 * as 0.5 x (1 + tanh(u)) without its cancellation for negative x, and built from emu_expf so
 * the loop vectorises.  The branch on `approximate` is loop-invariant: the compiler unswitches. */
__attribute__((always_inline)) static inline float gelu_f(float x, int approximate) {
  if (approximate) {
    const float k = 0.7978845608028654f;
    float u = k * (x + 0.044715f * x * x * x);
    return x / (1.0f + emu_expf(-2.0f * u));
  }
  return 0.5f * x * (1.0f + emu_erff(x * 0.7071067811865476f));
}
static inline double gelu_d(double x, int approximate) {
  if (approximate) {
    const double k = 0.7978845608028654;
    return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
  }
  return 0.5 * x * (1.0 + erf(x * 0.7071067811865476));
}
#define GELU(x, approximate) _Generic((x), float : gelu_f, default : gelu_d)(x, approximate)

__attribute__((always_inline)) static inline float gelu_backward_f(float g, float x,
                                                                   int approximate) {
  if (approximate) {
    /* with s = sigmoid(2u): 1 + tanh(u) = 2s and 1 - tanh(u)^2 = 4s(1 - s) */
    const float k = 0.7978845608028654f, c = 0.044715f;
    float u = k * (x + c * x * x * x);
    float sg = 1.0f / (1.0f + emu_expf(-2.0f * u));
    float right_derivative = 2.0f * x * sg * (1.0f - sg) * k * (1.0f + 3.0f * c * x * x);
    return g * (sg + right_derivative);
  }
  float cdf = 0.5f * (1.0f + emu_erff(x * 0.7071067811865476f));
  float pdf = emu_expf(-0.5f * x * x) * 0.3989422804014327f;
  return g * (cdf + x * pdf);
}
static inline double gelu_backward_d(double g, double x, int approximate) {
  if (approximate) {
    const double k = 0.7978845608028654, c = 0.044715;
    double inner = k * (x + c * x * x * x);
    double t = tanh(inner);
    double left = 0.5 * x, right = 1.0 + t;
    double left_derivative = 0.5 * right;
    double right_derivative = left * (1.0 - t * t) * k * (1.0 + 3.0 * c * x * x);
    return g * (left_derivative + right_derivative);
  }
  double cdf = 0.5 * (1.0 + erf(x * 0.7071067811865476));
  double pdf = exp(-0.5 * x * x) * 0.3989422804014327;
  return g * (cdf + x * pdf);
}
#define GELU_BACKWARD(g, x, approximate) \
  _Generic((x), float : gelu_backward_f, default : gelu_backward_d)(g, x, approximate)

/* lgamma without the global signgam (lgamma is not thread-safe), as libm's lgamma in float
 * for float, float16 and bfloat16 (PyTorch's CPU computes those in float too). */
static inline float lgamma_f(float x) {
  int sign;
  return lgammaf_r(x, &sign);
}
static inline double lgamma_d(double x) {
  int sign;
  return lgamma_r(x, &sign);
}
#define LGAMMA(x) _Generic((x), float : lgamma_f, default : lgamma_d)(x)

/* digamma as PyTorch's CPU computes it (ATen's calc_digamma, from the Cephes Math Library):
 * reflection for negative x, recurrence up to x >= 10, then the asymptotic series; the float
 * version in float except the reflection term. */
static double digamma_d(double x) {
  static const double A[] = {8.33333333333333333333E-2, -2.10927960927960927961E-2,
                             7.57575757575757575758E-3, -4.16666666666666666667E-3,
                             3.96825396825396825397E-3, -8.33333333333333333333E-3,
                             8.33333333333333333333E-2};
  const double pi = 3.14159265358979323846;
  if (x == 0) return copysign(INFINITY, -x);
  if (x < 0) {
    if (x == trunc(x)) return NAN;
    double whole, r = modf(x, &whole);
    return digamma_d(1 - x) - pi / tan(pi * r);
  }
  double result = 0;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  if (x == 10) return result + 2.25175258906672110764;
  double y = 0;
  if (x < 1.0e17) {
    double z = 1.0 / (x * x), p = 0;
    for (int i = 0; i < 7; i++) p = p * z + A[i];
    y = z * p;
  }
  return result + log(x) - (0.5 / x) - y;
}
static float digamma_f(float x) {
  static const float A[] = {8.33333333333333333333E-2f, -2.10927960927960927961E-2f,
                            7.57575757575757575758E-3f, -4.16666666666666666667E-3f,
                            3.96825396825396825397E-3f, -8.33333333333333333333E-3f,
                            8.33333333333333333333E-2f};
  const double pi = 3.14159265358979323846;
  if (x == 0) return copysignf(INFINITY, -x);
  if (x < 0) {
    if (x == truncf(x)) return NAN;
    double whole, r = modf((double)x, &whole);
    float pi_over_tan_pi_x = (float)(pi / tan(pi * r));
    return digamma_f(1 - x) - pi_over_tan_pi_x;
  }
  float result = 0;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  if (x == 10) return result + 2.25175258906672110764f;
  float y = 0;
  if (x < 1.0e17f) {
    float z = 1 / (x * x), p = 0;
    for (int i = 0; i < 7; i++) p = p * z + A[i];
    y = z * p;
  }
  return result + logf(x) - (0.5f / x) - y;
}
#define DIGAMMA(x) _Generic((x), float : digamma_f, default : digamma_d)(x)

/* PyTorch's lerp: exact at both ends. */
#define LERP(x, y, w) \
  (fabs((double)(w)) < 0.5 ? (x) + (w) * ((y) - (x)) : (y) - ((y) - (x)) * (1 - (w)))

/* ---- the loops ---- */

/* unary */
NUMERIC_OP(UNARY_LOOP, neg, -x)
NUMERIC_OP(UNARY_LOOP, abs_, IS_FLOAT ? (T)fabs((double)x) : (T)ABS_INT(x))
FLOAT_OP(UNARY_LOOP, exp_, EXP(x))
/* mish: x * tanh(softplus(x)), ATen's formula (no threshold: exp's infinity gives x) */
static inline float mish_f(float x) { return x * tanhf(log1pf(expf(x))); }
static inline double mish_d(double x) { return x * tanh(log1p(exp(x))); }
#define MISH(x) _Generic((x), float : mish_f, default : mish_d)(x)
FLOAT_OP(UNARY_LOOP, mish, MISH(x))
FLOAT_OP(UNARY_LOOP, expm1_, expm1(x))
FLOAT_OP(UNARY_LOOP, log_, log(x))
FLOAT_OP(UNARY_LOOP, log1p_, log1p(x))
FLOAT_OP(UNARY_LOOP, log2_, log2(x))
FLOAT_OP(UNARY_LOOP, sqrt_, sqrt(x))
FLOAT_OP(UNARY_LOOP, rsqrt, (T)1 / sqrt(x))
FLOAT_OP(UNARY_LOOP, sin_, sin(x))
/* inverse trigonometric and hyperbolic functions, exp2 and log10: libm's, in the compute type */
#define ASIN(x) _Generic((x), float : asinf, default : asin)(x)
FLOAT_OP(UNARY_LOOP, asin_, ASIN(x))
#define ACOS(x) _Generic((x), float : acosf, default : acos)(x)
FLOAT_OP(UNARY_LOOP, acos_, ACOS(x))
#define ATAN(x) _Generic((x), float : atanf, default : atan)(x)
FLOAT_OP(UNARY_LOOP, atan_, ATAN(x))
#define SINH(x) _Generic((x), float : sinhf, default : sinh)(x)
FLOAT_OP(UNARY_LOOP, sinh_, SINH(x))
#define COSH(x) _Generic((x), float : coshf, default : cosh)(x)
FLOAT_OP(UNARY_LOOP, cosh_, COSH(x))
#define ASINH(x) _Generic((x), float : asinhf, default : asinh)(x)
FLOAT_OP(UNARY_LOOP, asinh_, ASINH(x))
#define ACOSH(x) _Generic((x), float : acoshf, default : acosh)(x)
FLOAT_OP(UNARY_LOOP, acosh_, ACOSH(x))
#define ATANH(x) _Generic((x), float : atanhf, default : atanh)(x)
FLOAT_OP(UNARY_LOOP, atanh_, ATANH(x))
#define EXP2(x) _Generic((x), float : exp2f, default : exp2)(x)
FLOAT_OP(UNARY_LOOP, exp2_, EXP2(x))
#define LOG10(x) _Generic((x), float : log10f, default : log10)(x)
FLOAT_OP(UNARY_LOOP, log10_, LOG10(x))
/* erfinv: a rational first guess (the classic one of Matlab's erfinv, as ATen's calc_erfinv)
 * refined by two Newton steps, in double for every floating type: on erf in the middle, on
 * erfc in the tails, where 1 - |y| is exact and erf's cancellation would cost digits -- within
 * an ulp of the inverse.  NaN and |y| > 1 give NaN, +-1 an infinity. */
static double erfinv_d(double y) {
  const double ay = fabs(y), two_over_sqrt_pi = 1.1283791670955126;
  if (!(ay <= 1.0)) return NAN;
  if (ay == 1.0) return copysign(INFINITY, y);
  if (ay <= 0.7) {
    const double z = y * y;
    double x = y * (((-0.140543331 * z + 0.914624893) * z - 1.645349621) * z + 0.886226899) /
               ((((0.012229801 * z - 0.329097515) * z + 1.442710462) * z - 2.118377725) * z + 1.0);
    x -= (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
    x -= (erf(x) - y) / (two_over_sqrt_pi * exp(-x * x));
    return x;
  }
  const double q = 1.0 - ay, z = sqrt(-log(q / 2.0));
  double x = (((1.641345311 * z + 3.429567803) * z - 1.624906493) * z - 1.970840454) /
             ((1.637067800 * z + 3.543889200) * z + 1.0);
  x += (erfc(x) - q) / (two_over_sqrt_pi * exp(-x * x));
  x += (erfc(x) - q) / (two_over_sqrt_pi * exp(-x * x));
  return copysign(x, y);
}
static float erfinv_f(float y) { return (float)erfinv_d(y); }
#define ERFINV(x) _Generic((x), float : erfinv_f, default : erfinv_d)(x)
FLOAT_OP(UNARY_LOOP, erfinv_, ERFINV(x))
#define HYPOT(x, y) _Generic((x), float : hypotf, default : hypot)(x, y)
#define POW(x, y) _Generic((x), float : powf, default : pow)(x, y)
FLOAT_OP(BINARY_LOOP, hypot_, HYPOT(x, y))
FLOAT_OP(BINARY_LOOP, pow_tensor, POW(x, y))
FLOAT_OP(UNARY_LOOP, cos_, cos(x))
FLOAT_OP(UNARY_LOOP, tan_, tan(x))
FLOAT_OP(UNARY_LOOP, tanh_, TANH(x))
FLOAT_OP(UNARY_LOOP, sigmoid, SIGMOID(x))
FLOAT_OP(UNARY_LOOP, reciprocal, (T)1 / x)
FLOAT_OP(UNARY_LOOP, erf_, ERF(x))
FLOAT_OP(UNARY_LOOP, floor_, floor(x))
FLOAT_OP(UNARY_LOOP, ceil_, ceil(x))
FLOAT_OP(UNARY_LOOP, trunc_, trunc(x))
FLOAT_OP(UNARY_LOOP, silu, x *SIGMOID(x))
FLOAT_OP(UNARY_LOOP, lgamma_, LGAMMA(x))
FLOAT_OP(UNARY_LOOP, digamma_, DIGAMMA(x))
/* sgn of a real number: -1, 0 or 1; NaN gives 0, as PyTorch's CPU (on bool: the value) */
ALL_OP(UNARY_LOOP, sgn, (T)((x > 0) - (x < 0)))
/* tests with a bool result; integers and bool are never NaN or infinite */
ALL_OP(UNARY_BOOL_LOOP, isnan_, x != x)
ALL_OP(UNARY_BOOL_LOOP, isposinf, IS_FLOAT && (double)x == (double)INFINITY)
ALL_OP(UNARY_BOOL_LOOP, isneginf, IS_FLOAT && (double)x == -(double)INFINITY)
NUMERIC_OP(UNARY_LOOP, relu, (x != x) ? x : (x > 0 ? x : (T)0))
/* pow with a scalar exponent as ATen's CPU kernel computes it, so that results match it bit for
 * bit where it does not call pow().  float32 and float64: the exponents 2, 3, -2 by
 * multiplication, -0.5 and -1 by division (no pow() call per element: x ** 3 is GELU's tanh
 * approximation).  bfloat16: the same shortcuts, each product rounded to bfloat16 as ATen's
 * BFloat16 arithmetic does, and other exponents rounded to bfloat16 before pow (ATen converts
 * the scalar to the tensor's dtype).  float16: pow with the exponent rounded to float16, as
 * ATen's Half kernel has no shortcuts. */
static inline float round_bf16(float v) { return emu_bf16_to_float(emu_float_to_bf16(v)); }
static inline float pow_bf16(float x, double e) {
  if (e == 1.0) return x;
  if (e == 2.0) return x * x;
  if (e == 3.0) return round_bf16(x * x) * x;
  if (e == 0.5) return sqrtf(x);
  if (e == -0.5) return 1.0f / sqrtf(x);
  if (e == -1.0) return 1.0f / x;
  if (e == -2.0) return 1.0f / round_bf16(x * x);
  return (float)pow(x, round_bf16((float)e));
}
static inline float pow_f16(float x, double e) {
  if (e == 1.0) return x;
  if (e == 2.0) return x * x; /* exact in float for a float16 x, as pow's result */
  return (float)pow(x, emu_half_to_float(emu_float_to_half((float)e)));
}
#define POW_SCALAR(x, e, dtype)                                \
  ((dtype) == TB_DTYPE_FLOAT16    ? (T)pow_f16((float)(x), e)  \
   : (dtype) == TB_DTYPE_BFLOAT16 ? (T)pow_bf16((float)(x), e) \
   : (e) == 1.0                   ? (x)                        \
   : (e) == 2.0                   ? (x) * (x)                  \
   : (e) == 3.0                   ? (x) * (x) * (x)            \
   : (e) == 0.5                   ? (T)sqrt(x)                 \
   : (e) == -0.5                  ? (T)1 / (T)sqrt(x)          \
   : (e) == -1.0                  ? (T)1 / (x)                 \
   : (e) == -2.0                  ? (T)1 / ((x) * (x))         \
                                  : (T)pow(x, (T)(e)))
FLOAT_OP(UNARY_LOOP, pow_scalar, POW_SCALAR(x, P->f[0], LOOP_DTYPE))
/* pow with a scalar base (slot 0) and a tensor exponent, as ATen's CPU computes it: the base
 * converted to the result's dtype, then std::pow in float for float32 and the half types
 * (ATen's opmath), in double for float64.  Capturable Adam's bias corrections are made of it. */
#define POW_BASE(b, x, dtype)                                                                      \
  ((dtype) == TB_DTYPE_FLOAT64                                                                     \
       ? (T)pow((double)(b), (double)(x))                                                          \
       : (T)powf((dtype) == TB_DTYPE_FLOAT16    ? emu_half_to_float(emu_float_to_half((float)(b))) \
                 : (dtype) == TB_DTYPE_BFLOAT16 ? round_bf16((float)(b))                           \
                                                : (float)(b),                                      \
                 (float)(x)))
FLOAT_OP(UNARY_LOOP, pow_base, POW_BASE(P->f[0], x, LOOP_DTYPE))
FLOAT_OP(UNARY_LOOP, gelu, GELU(x, (int)P->i[0]))
/* hardswish and hardsigmoid as ATen's CPU kernels write them: NaN propagates */
FLOAT_OP(UNARY_LOOP, hardswish, MINIMUM(MAXIMUM(x + (T)3, (T)0), (T)6) * x / (T)6)
FLOAT_OP(UNARY_LOOP, hardsigmoid, MINIMUM(MAXIMUM(x + (T)3, (T)0), (T)6) / (T)6)
/* clamp_min / clamp_max with a scalar bound (slot 0): NaN in either propagates, as on the CPU */
NUMERIC_OP(UNARY_LOOP, clamp_min,
           (x != x)                                 ? x
           : (PARAM(0) != PARAM(0) || x < PARAM(0)) ? PARAM(0)
                                                    : x)
NUMERIC_OP(UNARY_LOOP, clamp_max,
           (x != x)                                 ? x
           : (PARAM(0) != PARAM(0) || x > PARAM(0)) ? PARAM(0)
                                                    : x)
/* clamp: params i[0] / i[1] say whether min / max apply, f/i[2] f/i[3] hold them */
NUMERIC_OP(UNARY_LOOP, clamp,
           (x != x) ? x
           : (P->i[1] && x > (IS_FLOAT ? (T)P->f[3] : (T)P->i[3]))
               ? (IS_FLOAT ? (T)P->f[3] : (T)P->i[3])
           : (P->i[0] && x < (IS_FLOAT ? (T)P->f[2] : (T)P->i[2]))
               ? (IS_FLOAT ? (T)P->f[2] : (T)P->i[2])
               : x)

/* logical and bitwise: integers and bool (bool values load as 0 / 1) */
ALL_OP(UNARY_LOOP, logical_not, (T)(x == 0))
INTS(UNARY_LOOP, bitwise_not, (T)~x)
CALL(UNARY_LOOP, bitwise_not, T_b8, (T)(x == 0)) /* on bool, ~ is logical not */
static const ew_loop bitwise_not_loops[TB_DTYPE_COUNT] = {
    INT_TABLE(bitwise_not), [TB_DTYPE_BOOL] = bitwise_not_b8};
INTEGRAL_OP(BINARY_LOOP, bitwise_and, x &y)
INTEGRAL_OP(BINARY_LOOP, bitwise_or, x | y)
INTEGRAL_OP(BINARY_LOOP, bitwise_xor, x ^ y)
ALL_OP(BINARY_LOOP, logical_or, (T)(x != 0 || y != 0))
ALL_OP(BINARY_LOOP, logical_and, (T)(x != 0 && y != 0))
ALL_OP(BINARY_LOOP, logical_xor, (T)((x != 0) != (y != 0)))

/* binary */
/* x + alpha * y rounded once, as PyTorch's CPU kernels do with a fused multiply-add (computed
 * in double, which holds the product of two floats exactly); float64 and integers directly. */
#define MULADD(x, a, y) \
  (IS_FLOAT && sizeof(T) == 4 ? (T)((double)(x) + (double)(a) * (double)(y)) : (x) + (a) * (y))
NUMERIC_OP(BINARY_LOOP, add, PARAM(0) == (T)1 ? x + y : MULADD(x, PARAM(0), y))
NUMERIC_OP(BINARY_LOOP, sub, PARAM(0) == (T)1 ? x - y : MULADD(x, -PARAM(0), y))
ALL_OP(BINARY_LOOP, mul, x *y)
FLOAT_OP(BINARY_LOOP, div, x / y)

/* Division with rounding, remainder and fmod, as ATen's CPU kernels compute them (its
 * div_floor_floating, div_floor_integer and remainder).  float16 and bfloat16 divided by a
 * tensor round every step to their dtype, as the CPU's kernels do (`d`: the loop's dtype); by a
 * number or a tensor broadcast whole (a 0-d one) they compute in float (the CPU's scalar path,
 * and CUDA's).  An integer
 * divisor of zero, where the CPU raises ZeroDivisionError and a kernel cannot, gives a quotient
 * of -1 and a remainder of the dividend (opencl's and CUDA's results); INT64_MIN / -1 wraps
 * where the CPU's division traps. */
static inline float to_dtype(tb_dtype d, float v) {
  return d == TB_DTYPE_FLOAT16    ? emu_half_to_float(emu_float_to_half(v))
         : d == TB_DTYPE_BFLOAT16 ? emu_bf16_to_float(emu_float_to_bf16(v))
                                  : v;
}
static inline float div_floor_f(float a, float b, tb_dtype d) {
  if (b == 0) return a / b;
  float mod = to_dtype(d, fmodf(a, b)), div = to_dtype(d, to_dtype(d, a - mod) / b);
  if (mod != 0 && (b < 0) != (mod < 0)) div = to_dtype(d, div - 1);
  if (div == 0) return copysignf(0, a / b);
  float floordiv = floorf(div);
  return div - floordiv > 0.5f ? floordiv + 1 : floordiv;
}
static inline double div_floor_d(double a, double b, tb_dtype d) {
  (void)d;
  if (b == 0) return a / b;
  double mod = fmod(a, b), div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return copysign(0, a / b);
  double floordiv = floor(div);
  return div - floordiv > 0.5 ? floordiv + 1 : floordiv;
}
static inline float div_trunc_f(float a, float b, tb_dtype d) { return truncf(to_dtype(d, a / b)); }
static inline double div_trunc_d(double a, double b, tb_dtype d) {
  (void)d;
  return trunc(a / b);
}
/* a / b truncated, total: -1 for b == 0, the wrapped negation for b == -1 */
static inline int64_t div_trunc_i(int64_t a, int64_t b, tb_dtype d) {
  (void)d;
  if (b == 0) return -1;
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  return a / b;
}
static inline int64_t mod_trunc_i(int64_t a, int64_t b) { return b == 0 ? a : b == -1 ? 0 : a % b; }
static inline int64_t div_floor_i(int64_t a, int64_t b, tb_dtype d) {
  int64_t quot = div_trunc_i(a, b, d);
  return b != 0 && (a < 0) != (b < 0) && mod_trunc_i(a, b) != 0 ? quot - 1 : quot;
}
static inline float remainder_f(float a, float b) {
  float mod = fmodf(a, b);
  return mod != 0 && (b < 0) != (mod < 0) ? mod + b : mod;
}
static inline double remainder_d(double a, double b) {
  double mod = fmod(a, b);
  return mod != 0 && (b < 0) != (mod < 0) ? mod + b : mod;
}
static inline int64_t remainder_i(int64_t a, int64_t b) {
  int64_t mod = mod_trunc_i(a, b);
  return b != 0 && mod != 0 && (mod < 0) != (b < 0) ? mod + b : mod;
}
#define DIV_FLOOR(x, y, d) \
  _Generic((x), float : div_floor_f, double : div_floor_d, default : div_floor_i)(x, y, d)
#define DIV_TRUNC(x, y, d) \
  _Generic((x), float : div_trunc_f, double : div_trunc_d, default : div_trunc_i)(x, y, d)
#define REMAINDER(x, y) \
  _Generic((x), float : remainder_f, double : remainder_d, default : remainder_i)(x, y)
#define FMOD(x, y) _Generic((x), float : fmodf, double : fmod, default : mod_trunc_i)(x, y)
NUMERIC_OP(BINARY_LOOP, div_floor, DIV_FLOOR(x, y, (tb_dtype)LOOP_DTYPE))
NUMERIC_OP(BINARY_LOOP, div_trunc, DIV_TRUNC(x, y, (tb_dtype)LOOP_DTYPE))
/* by a number or a tensor broadcast whole: in float */
NUMERIC_OP(BINARY_LOOP, div_floor_scalar, DIV_FLOOR(x, y, TB_DTYPE_FLOAT32))
NUMERIC_OP(BINARY_LOOP, div_trunc_scalar, DIV_TRUNC(x, y, TB_DTYPE_FLOAT32))
NUMERIC_OP(BINARY_LOOP, remainder, REMAINDER(x, y))
NUMERIC_OP(BINARY_LOOP, fmod, FMOD(x, y))
NUMERIC_OP(BINARY_LOOP, maximum, MAXIMUM(x, y))
NUMERIC_OP(BINARY_LOOP, minimum, MINIMUM(x, y))
ALL_OP(COMPARE_LOOP, eq, x == y)
ALL_OP(COMPARE_LOOP, ne, x != y)
ALL_OP(COMPARE_LOOP, lt, x < y)
ALL_OP(COMPARE_LOOP, le, x <= y)
ALL_OP(COMPARE_LOOP, gt, x > y)
ALL_OP(COMPARE_LOOP, ge, x >= y)
/* activation backwards: x = grad, y = saved input/output */
NUMERIC_OP(BINARY_LOOP, threshold_backward, y <= PARAM(0) ? (T)0 : x)
FLOAT_OP(BINARY_LOOP, sigmoid_backward, x *((T)1 - y) * y)
FLOAT_OP(BINARY_LOOP, tanh_backward, x *((T)1 - y * y))
FLOAT_OP(BINARY_LOOP, silu_backward, x *SIGMOID(y) * ((T)1 + y * ((T)1 - SIGMOID(y))))
FLOAT_OP(BINARY_LOOP, gelu_backward, GELU_BACKWARD(x, y, (int)P->i[0]))
/* hardswish_backward as ATen's vectorised CPU loop: 0 up to -3, the gradient from 3 on, NaN for
 * a NaN input */
FLOAT_OP(BINARY_LOOP, hardswish_backward,
         y <= (T)-3  ? (T)0
         : y >= (T)3 ? x
                     : x * (y / (T)3 + (T)0.5))
/* hardsigmoid_backward as ATen's CPU kernel: the slope is the float 1/6 (1.0f / 6.0f) for
 * every dtype, so float64 gradients differ from an exact 1/6 by 3e-8, on the CPU and here */
FLOAT_OP(BINARY_LOOP, hardsigmoid_backward, (y > (T)-3 && y < (T)3) ? x *(T)(1.0f / 6.0f) : (T)0)
FLOAT_OP(BINARY_LOOP, lerp_scalar, LERP(x, y, (T)P->f[0]))

/* ternary */
NUMERIC_OP(TERNARY_LOOP, addcmul, x + PARAM(0) * y * z)
FLOAT_OP(TERNARY_LOOP, addcdiv, x + PARAM(0) * (y / z))
FLOAT_OP(TERNARY_LOOP, lerp_tensor, LERP(x, y, z))
ALL_OP(WHERE_LOOP, where, 0)

/* masked_fill_: self where the bool mask is false, the scalar (slot 0) where it is true */
#define MASKED_FILL_LOOP(NAME, SFX, S, C, LD, ST, DT, EXPR)                    \
  EMU_HOT_LOOP static void NAME##_##SFX(char **d, const int64_t *s, int64_t n, \
                                        const void *params) {                  \
    const ew_params *P = params;                                               \
    typedef C T __attribute__((unused));                                       \
    enum { IS_FLOAT = EW_IS_FLOAT(DT) };                                       \
    const C value = DT == TB_DTYPE_BOOL ? (C)(P->i[0] != 0) : PARAM(0);        \
    for (int64_t i = 0; i < n; i++) {                                          \
      if (*(const uint8_t *)(d[2] + i * s[2])) ST(d[0] + i * s[0], value);     \
    }                                                                          \
  }
ALL_OP(MASKED_FILL_LOOP, masked_fill, 0)

/* native_dropout_backward: grad * mask * scale, mask bool */
#define DROPOUT_BACKWARD_LOOP(NAME, SFX, S, C, LD, ST, DT, EXPR)               \
  EMU_HOT_LOOP static void NAME##_##SFX(char **d, const int64_t *s, int64_t n, \
                                        const void *params) {                  \
    const ew_params *P = params;                                               \
    typedef C T __attribute__((unused));                                       \
    for (int64_t i = 0; i < n; i++) {                                          \
      C x = LD(d[1] + i * s[1]);                                               \
      C m = *(const uint8_t *)(d[2] + i * s[2]) ? (T)P->f[0] : (T)0;           \
      ST(d[0] + i * s[0], x * m);                                              \
    }                                                                          \
  }
FLOAT_OP(DROPOUT_BACKWARD_LOOP, dropout_backward, 0)

/* ---- kernels ---- */

enum { MAX_SCALARS = 4 };

/* How one elementwise kernel reads its arguments. */
typedef struct ew_spec {
  const char *name;
  const char *kinds;        /* emu_check_args kinds */
  int inputs[4];            /* argument indices of operands, -1 terminated */
  int out;                  /* argument index of the output */
  int scalars[MAX_SCALARS]; /* argument indices of scalar parameters, -1 terminated */
  const ew_loop *loops;
  bool bool_out;  /* the output is bool (comparisons) */
  int bool_input; /* index in `inputs` of a bool operand (where, dropout mask), or -1 */
} ew_spec;

typedef struct ew_state {
  const ew_spec *spec;
  ew_params params;
} ew_state;

static void run_elementwise(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const ew_state *state = call->scratch;
  const ew_spec *spec = state->spec;
  const emu_tensor *out = call->args[spec->out].as.tensor;
  /* the compute dtype: the first tensor operand's that is not a bool input */
  tb_dtype dtype = spec->bool_out ? TB_DTYPE_COUNT : out->dtype;
  for (int k = 0; spec->inputs[k] >= 0 && dtype == TB_DTYPE_COUNT; k++) {
    const emu_arg *a = &call->args[spec->inputs[k]];
    if (k != spec->bool_input && a->kind == TB_VALUE_TENSOR) dtype = a->as.tensor->dtype;
  }
  emu_tensor operands[4];
  char storage[4][16];
  int count = 0;
  for (int k = 0; spec->inputs[k] >= 0; k++, count++) {
    tb_dtype operand_dtype = k == spec->bool_input ? TB_DTYPE_BOOL : dtype;
    ew_operand(&call->args[spec->inputs[k]], operand_dtype, out, &operands[k], storage[k]);
  }
  ew_run(out, operands, count, spec->loops[dtype], &state->params);
}

/* Validates the operands (one compute dtype, output-shaped) and enqueues.  `params`, when not
 * NULL, replaces the parameters read from spec->scalars. */
static tb_status enqueue_with(const ew_spec *spec, tb_stream stream, const tb_value *args,
                              int32_t count, const ew_params *params) {
  tb_status status = emu_check_args(spec->name, args, count, spec->kinds);
  if (status != TB_OK) return status;
  const tb_tensor *out = args[spec->out].as.tensor;
  tb_dtype dtype = spec->bool_out ? TB_DTYPE_COUNT : out->dtype;
  if (spec->bool_out && out->dtype != TB_DTYPE_BOOL) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: the output must be bool", spec->name);
  }
  for (int k = 0; spec->inputs[k] >= 0; k++) {
    const tb_value *v = &args[spec->inputs[k]];
    if (v->kind != TB_VALUE_TENSOR) continue;
    const tb_tensor *t = v->as.tensor;
    if (k == spec->bool_input) {
      if (t->dtype != TB_DTYPE_BOOL) {
        return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: operand %d must be bool", spec->name, k);
      }
    } else if (dtype == TB_DTYPE_COUNT) {
      dtype = t->dtype;
    } else if (t->dtype != dtype) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: operands of different dtypes", spec->name);
    }
    bool shaped = t->ndim == out->ndim;
    for (int32_t d = 0; shaped && d < t->ndim; d++) shaped = t->sizes[d] == out->sizes[d];
    if (!shaped) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: operand %d is not output-shaped",
                      spec->name, k);
    }
  }
  if (dtype == TB_DTYPE_COUNT) dtype = out->dtype;
  if (spec->loops[dtype] == NULL) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: dtype %d is not implemented", spec->name,
                    (int)dtype);
  }
  ew_state state = {.spec = spec};
  if (params != NULL) {
    state.params = *params;
  } else {
    for (int k = 0; k < MAX_SCALARS && spec->scalars[k] >= 0; k++) {
      const tb_value *v = &args[spec->scalars[k]];
      if (v->kind == TB_VALUE_STRING) {
        state.params.i[k] = strcmp(v->as.string, "tanh") == 0;
      } else if (v->kind == TB_VALUE_DOUBLE) {
        state.params.f[k] = v->as.f;
        state.params.i[k] = (int64_t)v->as.f;
      } else if (v->kind == TB_VALUE_INT || v->kind == TB_VALUE_BOOL) {
        int64_t value = v->kind == TB_VALUE_INT ? v->as.i : v->as.b;
        state.params.f[k] = (double)value;
        state.params.i[k] = value;
      }
    }
  }
  return emu_launch(spec->name, stream, args, count, run_elementwise, sizeof state, &state);
}

#define INPUTS(...) \
  { __VA_ARGS__, -1 }
#define SCALARS(...) \
  { __VA_ARGS__, -1 }
#define NO_SCALARS \
  { -1 }

/* Declares an ew_spec, its kernel function and its tb_kernel (SCHEMA: tb_kernel::schema). */
#define EW_KERNEL(ID, OPNAME, KINDS, INS, OUT, SCALARS_, LOOPS, BOOL_OUT, BOOL_INPUT, MASK, \
                  SCHEMA)                                                                   \
  static const ew_spec spec_##ID = {                                                        \
      OPNAME, KINDS, INS, OUT, SCALARS_, LOOPS, BOOL_OUT, BOOL_INPUT};                      \
  static tb_status kernel_##ID(tb_stream stream, const tb_value *args, int32_t count) {     \
    return enqueue_with(&spec_##ID, stream, args, count, NULL);                             \
  }                                                                                         \
  EMU_KERNEL(k_##ID, OPNAME, kernel_##ID, MASK, SCHEMA);

/* unary: (self, out) */
#define UNARY(ID, OPNAME, LOOPS, MASK, SCHEMA) \
  EW_KERNEL(ID, OPNAME, "xT", INPUTS(0), 1, NO_SCALARS, LOOPS, false, -1, MASK, SCHEMA)

UNARY(neg, "neg.out", neg_loops, EMU_FLOATS | EMU_INTS,
      "neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(abs, "abs.out", abs__loops, EMU_FLOATS | EMU_INTS,
      "abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(exp, "exp.out", exp__loops, EMU_FLOATS,
      "exp.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(expm1, "expm1.out", expm1__loops, EMU_FLOATS,
      "expm1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(log, "log.out", log__loops, EMU_FLOATS,
      "log.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(log1p, "log1p.out", log1p__loops, EMU_FLOATS,
      "log1p.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(log2, "log2.out", log2__loops, EMU_FLOATS,
      "log2.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(sqrt, "sqrt.out", sqrt__loops, EMU_FLOATS,
      "sqrt.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(rsqrt, "rsqrt.out", rsqrt_loops, EMU_FLOATS,
      "rsqrt.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(asin, "asin.out", asin__loops, EMU_FLOATS,
      "asin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(acos, "acos.out", acos__loops, EMU_FLOATS,
      "acos.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(atan, "atan.out", atan__loops, EMU_FLOATS,
      "atan.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(sinh, "sinh.out", sinh__loops, EMU_FLOATS,
      "sinh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(cosh, "cosh.out", cosh__loops, EMU_FLOATS,
      "cosh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(asinh, "asinh.out", asinh__loops, EMU_FLOATS,
      "asinh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(acosh, "acosh.out", acosh__loops, EMU_FLOATS,
      "acosh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(atanh, "atanh.out", atanh__loops, EMU_FLOATS,
      "atanh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(exp2, "exp2.out", exp2__loops, EMU_FLOATS,
      "exp2.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(log10, "log10.out", log10__loops, EMU_FLOATS,
      "log10.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
EW_KERNEL(hypot, "hypot.out", "xxT", INPUTS(0, 1), 2, NO_SCALARS, hypot__loops, false, -1,
          EMU_FLOATS, "hypot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
/* pow.Tensor_Tensor_out: floating only (ATen's integer powers, with their rules for negative
 * exponents, take the fallback) */
EW_KERNEL(pow_tensor, "pow.Tensor_Tensor_out", "TTT", INPUTS(0, 1), 2, NO_SCALARS, pow_tensor_loops,
          false, -1, EMU_FLOATS,
          "pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(sin, "sin.out", sin__loops, EMU_FLOATS,
      "sin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(cos, "cos.out", cos__loops, EMU_FLOATS,
      "cos.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(tan, "tan.out", tan__loops, EMU_FLOATS,
      "tan.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(tanh, "tanh.out", tanh__loops, EMU_FLOATS,
      "tanh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(sigmoid, "sigmoid.out", sigmoid_loops, EMU_FLOATS,
      "sigmoid.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(reciprocal, "reciprocal.out", reciprocal_loops, EMU_FLOATS,
      "reciprocal.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(erf, "erf.out", erf__loops, EMU_FLOATS,
      "erf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(erfinv, "erfinv.out", erfinv__loops, EMU_FLOATS,
      "erfinv.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(floor, "floor.out", floor__loops, EMU_FLOATS,
      "floor.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(ceil, "ceil.out", ceil__loops, EMU_FLOATS,
      "ceil.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(trunc, "trunc.out", trunc__loops, EMU_FLOATS,
      "trunc.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(silu, "silu.out", silu_loops, EMU_FLOATS,
      "silu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(mish, "mish.out", mish_loops, EMU_FLOATS,
      "mish.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(relu, "relu", relu_loops, EMU_FLOATS | EMU_INTS, "relu(Tensor self) -> Tensor")
UNARY(lgamma, "lgamma.out", lgamma__loops, EMU_FLOATS,
      "lgamma.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(digamma, "digamma.out", digamma__loops, EMU_FLOATS,
      "digamma.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(sgn, "sgn.out", sgn_loops, EMU_ALL_TYPES,
      "sgn.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
/* (self, out) with a bool output and self's dtype as the compute dtype */
#define UNARY_TEST(ID, OPNAME, LOOPS, SCHEMA) \
  EW_KERNEL(ID, OPNAME, "xT", INPUTS(0), 1, NO_SCALARS, LOOPS, true, -1, EMU_ALL_TYPES, SCHEMA)
UNARY_TEST(isnan, "isnan.out", isnan__loops,
           "isnan.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY_TEST(isposinf, "isposinf.out", isposinf_loops,
           "isposinf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY_TEST(isneginf, "isneginf.out", isneginf_loops,
           "isneginf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
/* relu_: (self); self is operand and output */
EW_KERNEL(relu_, "relu_", "T", INPUTS(0), 0, NO_SCALARS, relu_loops, false, -1,
          EMU_FLOATS | EMU_INTS, "relu_(Tensor(a!) self) -> Tensor(a!)")
/* pow.Tensor_Scalar_out: (self, exponent, out) */
EW_KERNEL(pow_scalar, "pow.Tensor_Scalar_out", "xnT", INPUTS(0), 2, SCALARS(1), pow_scalar_loops,
          false, -1, EMU_FLOATS,
          "pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)")
/* pow.Scalar_out: (self, exponent, out), self the scalar base */
EW_KERNEL(pow_base, "pow.Scalar_out", "nxT", INPUTS(1), 2, SCALARS(0), pow_base_loops, false, -1,
          EMU_FLOATS,
          "pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(hardswish, "hardswish.out", hardswish_loops, EMU_FLOATS,
      "hardswish.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
/* hardswish_: (self); self is operand and output */
EW_KERNEL(hardswish_, "hardswish_", "T", INPUTS(0), 0, NO_SCALARS, hardswish_loops, false, -1,
          EMU_FLOATS, "hardswish_(Tensor(a!) self) -> Tensor(a!)")
UNARY(hardsigmoid, "hardsigmoid.out", hardsigmoid_loops, EMU_FLOATS,
      "hardsigmoid.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
/* gelu.out: (self, approximate, out) */
EW_KERNEL(gelu, "gelu.out", "xsT", INPUTS(0), 2, SCALARS(1), gelu_loops, false, -1, EMU_FLOATS,
          "gelu.out(Tensor self, *, str approximate=\"none\", Tensor(a!) out) -> Tensor(a!)")

/* clamp.out: (self, min?, max?, out); bounds travel as flags i[0], i[1] and values in slots
 * 2 and 3. */
static const ew_spec spec_clamp = {"clamp.out", "xNNT",      INPUTS(0), 3,
                                   NO_SCALARS,  clamp_loops, false,     -1};
static tb_status kernel_clamp(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args(spec_clamp.name, args, count, spec_clamp.kinds);
  if (status != TB_OK) return status;
  ew_params params;
  memset(&params, 0, sizeof params);
  for (int k = 0; k < 2; k++) {
    const tb_value *v = &args[1 + k];
    if (v->kind == TB_VALUE_NONE) continue;
    params.i[k] = 1;
    params.f[2 + k] = v->kind == TB_VALUE_DOUBLE ? v->as.f : (double)v->as.i;
    params.i[2 + k] = v->kind == TB_VALUE_DOUBLE ? (int64_t)v->as.f : v->as.i;
    if (v->kind == TB_VALUE_DOUBLE && args[0].kind == TB_VALUE_TENSOR &&
        !emu_is_floating(args[0].as.tensor->dtype)) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: clamp.out: float bounds on integers");
    }
  }
  return enqueue_with(&spec_clamp, stream, args, count, &params);
}
EMU_KERNEL(
    k_clamp, "clamp.out", kernel_clamp, EMU_FLOATS | EMU_INTS,
    "clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!)");

/* masked_fill_.Scalar: (self, mask, value), in place.  The mask broadcasts to self's shape
 * (ATen's rule, right-aligned); the kernel builds that view and runs the elementwise engine
 * with self as output and operand.  Anything ATen would reject or convert (a mask that is not
 * bool or does not broadcast, a float value for an integer tensor, a self whose elements
 * overlap) is declined, so the CPU fallback raises ATen's own error or does the conversion.
 * masked_fill_.Tensor: the same with a 0-dim value tensor of self's dtype, read when the task
 * runs (a value on the host arrives as a number). */
static const ew_spec spec_masked_fill = {
    "masked_fill_.Scalar", "TTn", INPUTS(0, 1), 0, SCALARS(2), masked_fill_loops, false, 1};

static void run_masked_fill_tensor(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *self = call->args[0].as.tensor, *value = call->args[2].as.tensor;
  ew_params params;
  memset(&params, 0, sizeof params);
  if (emu_is_floating(value->dtype)) {
    params.f[0] = emu_load_double(value->data, value->dtype);
  } else {
    params.i[0] = emu_load_int(value->data, value->dtype);
  }
  emu_tensor operands[2] = {*self, *call->args[1].as.tensor};
  ew_run(self, operands, 2, masked_fill_loops[self->dtype], &params);
}

static tb_status enqueue_masked_fill(const char *name, tb_stream stream, const tb_value *args,
                                     int32_t count) {
  tb_status status = emu_check_args(name, args, count, "TTx");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[0].as.tensor, *mask = args[1].as.tensor;
  if (mask->dtype != TB_DTYPE_BOOL || mask->ndim > self->ndim ||
      (args[2].kind == TB_VALUE_DOUBLE && !emu_is_floating(self->dtype))) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: mask or value needs ATen's checks", name);
  }
  if (args[2].kind == TB_VALUE_TENSOR &&
      (args[2].as.tensor->ndim != 0 || args[2].as.tensor->dtype != self->dtype)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: value is not a 0-dim tensor of self's dtype",
                    name);
  }
  int64_t sizes[EMU_MAX_DIMS], strides[EMU_MAX_DIMS];
  for (int32_t d = 0; d < self->ndim; d++) {
    int32_t m = d - (self->ndim - mask->ndim); /* the mask's dimension aligned with d */
    int64_t size = m >= 0 ? mask->sizes[m] : 1;
    if (size != self->sizes[d] && size != 1) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: mask does not broadcast", name);
    }
    if (self->strides[d] == 0 && self->sizes[d] > 1) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: self has overlapping elements", name);
    }
    sizes[d] = self->sizes[d];
    strides[d] = size == self->sizes[d] && m >= 0 ? mask->strides[m] : 0;
  }
  tb_tensor view = *mask;
  view.ndim = self->ndim;
  view.sizes = sizes;
  view.strides = strides;
  tb_value copy[3] = {args[0], args[1], args[2]};
  copy[1].as.tensor = &view;
  if (args[2].kind == TB_VALUE_TENSOR) {
    if (masked_fill_loops[self->dtype] == NULL) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: dtype %d", name, (int)self->dtype);
    }
    return emu_launch(name, stream, copy, 3, run_masked_fill_tensor, 0, NULL);
  }
  return enqueue_with(&spec_masked_fill, stream, copy, 3, NULL);
}
static tb_status kernel_masked_fill(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_masked_fill("masked_fill_.Scalar", stream, args, count);
}
static tb_status kernel_masked_fill_tensor(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_masked_fill("masked_fill_.Tensor", stream, args, count);
}
EMU_KERNEL(k_masked_fill, "masked_fill_.Scalar", kernel_masked_fill, EMU_ALL_TYPES,
           "masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)");
EMU_KERNEL(k_masked_fill_tensor, "masked_fill_.Tensor", kernel_masked_fill_tensor, EMU_ALL_TYPES,
           "masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)");

/* logical_not.out: (self, out); the input arrives cast to the output's dtype */
UNARY(logical_not, "logical_not.out", logical_not_loops, EMU_ALL_TYPES,
      "logical_not.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
UNARY(bitwise_not, "bitwise_not.out", bitwise_not_loops, EMU_INTS | TB_DTYPE_BIT(TB_DTYPE_BOOL),
      "bitwise_not.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
/* bitwise_*.Tensor_out: (self, other, out) */
#define BITWISE(ID, NAME, SCHEMA)                                                \
  EW_KERNEL(ID, NAME, "xxT", INPUTS(0, 1), 2, NO_SCALARS, ID##_loops, false, -1, \
            EMU_INTS | TB_DTYPE_BIT(TB_DTYPE_BOOL), SCHEMA)
BITWISE(bitwise_and, "bitwise_and.Tensor_out",
        "bitwise_and.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
BITWISE(bitwise_or, "bitwise_or.Tensor_out",
        "bitwise_or.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
BITWISE(bitwise_xor, "bitwise_xor.Tensor_out",
        "bitwise_xor.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
/* logical_or.out: (self, other, out); the inputs arrive cast to the output's dtype */
EW_KERNEL(logical_or, "logical_or.out", "xxT", INPUTS(0, 1), 2, NO_SCALARS, logical_or_loops, false,
          -1, EMU_ALL_TYPES,
          "logical_or.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
EW_KERNEL(logical_and, "logical_and.out", "xxT", INPUTS(0, 1), 2, NO_SCALARS, logical_and_loops,
          false, -1, EMU_ALL_TYPES,
          "logical_and.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
EW_KERNEL(logical_xor, "logical_xor.out", "xxT", INPUTS(0, 1), 2, NO_SCALARS, logical_xor_loops,
          false, -1, EMU_ALL_TYPES,
          "logical_xor.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")

/* clamp_min.out / clamp_max.out: (self, bound, out); a float bound on an integer tensor is
 * declined (ATen promotes that case to float) */
static tb_status check_bound(const char *name, const tb_value *args, int32_t count) {
  if (count >= 2 && args[0].kind == TB_VALUE_TENSOR && args[1].kind == TB_VALUE_DOUBLE &&
      !emu_is_floating(args[0].as.tensor->dtype)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: float bound on an integer tensor", name);
  }
  return TB_OK;
}
static const ew_spec spec_clamp_min = {"clamp_min.out", "xnT",           INPUTS(0), 2,
                                       SCALARS(1),      clamp_min_loops, false,     -1};
static const ew_spec spec_clamp_max = {"clamp_max.out", "xnT",           INPUTS(0), 2,
                                       SCALARS(1),      clamp_max_loops, false,     -1};
static tb_status kernel_clamp_min(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = check_bound(spec_clamp_min.name, args, count);
  return status != TB_OK ? status : enqueue_with(&spec_clamp_min, stream, args, count, NULL);
}
static tb_status kernel_clamp_max(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = check_bound(spec_clamp_max.name, args, count);
  return status != TB_OK ? status : enqueue_with(&spec_clamp_max, stream, args, count, NULL);
}
EMU_KERNEL(k_clamp_min, "clamp_min.out", kernel_clamp_min, EMU_FLOATS | EMU_INTS,
           "clamp_min.out(Tensor self, Scalar min, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_clamp_max, "clamp_max.out", kernel_clamp_max, EMU_FLOATS | EMU_INTS,
           "clamp_max.out(Tensor self, Scalar max, *, Tensor(a!) out) -> Tensor(a!)");

/* binary: (self, other[, alpha], out) */
EW_KERNEL(add, "add.out", "xxnT", INPUTS(0, 1), 3, SCALARS(2), add_loops, false, -1,
          EMU_FLOATS | EMU_INTS,
          "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
EW_KERNEL(sub, "sub.out", "xxnT", INPUTS(0, 1), 3, SCALARS(2), sub_loops, false, -1,
          EMU_FLOATS | EMU_INTS,
          "sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
EW_KERNEL(mul, "mul.out", "xxT", INPUTS(0, 1), 2, NO_SCALARS, mul_loops, false, -1, EMU_ALL_TYPES,
          "mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
EW_KERNEL(div, "div.out", "xxT", INPUTS(0, 1), 2, NO_SCALARS, div_loops, false, -1, EMU_FLOATS,
          "div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
/* An integer division by the number 0: declined, so that the CPU raises ZeroDivisionError. */
static bool by_number_zero(const tb_value *args, int32_t count) {
  const tb_value *other = &args[1], *out = &args[count - 1];
  return count >= 3 && emu_is_number(other) && out->kind == TB_VALUE_TENSOR &&
         !emu_is_floating(out->as.tensor->dtype) &&
         (other->kind == TB_VALUE_DOUBLE ? other->as.f == 0
          : other->kind == TB_VALUE_INT  ? other->as.i == 0
                                         : other->as.b == 0);
}
static const ew_spec spec_remainder = {
    "remainder.Tensor_out", "xxT", INPUTS(0, 1), 2, NO_SCALARS, remainder_loops, false, -1};
static const ew_spec spec_fmod = {"fmod.Tensor_out", "xxT",      INPUTS(0, 1), 2,
                                  NO_SCALARS,        fmod_loops, false,        -1};
static tb_status kernel_remainder(tb_stream stream, const tb_value *args, int32_t count) {
  if (by_number_zero(args, count)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: remainder: an integer division by the number 0");
  }
  return enqueue_with(&spec_remainder, stream, args, count, NULL);
}
static tb_status kernel_fmod(tb_stream stream, const tb_value *args, int32_t count) {
  if (by_number_zero(args, count)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: fmod: an integer division by the number 0");
  }
  return enqueue_with(&spec_fmod, stream, args, count, NULL);
}
EMU_KERNEL(k_remainder, "remainder.Tensor_out", kernel_remainder, EMU_FLOATS | EMU_INTS,
           "remainder.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_fmod, "fmod.Tensor_out", kernel_fmod, EMU_FLOATS | EMU_INTS,
           "fmod.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
/* div.out_mode: (self, other, rounding_mode?, out): None is true division (floats), "trunc"
 * and "floor" round the quotient (any numeric dtype; // is floor) */
static const ew_spec spec_div_true = {"div.out_mode", "xx?T",    INPUTS(0, 1), 3,
                                      NO_SCALARS,     div_loops, false,        -1};
static const ew_spec spec_div_trunc = {"div.out_mode", "xx?T",          INPUTS(0, 1), 3,
                                       NO_SCALARS,     div_trunc_loops, false,        -1};
static const ew_spec spec_div_floor = {"div.out_mode", "xx?T",          INPUTS(0, 1), 3,
                                       NO_SCALARS,     div_floor_loops, false,        -1};
static const ew_spec spec_div_trunc_scalar = {
    "div.out_mode", "xx?T", INPUTS(0, 1), 3, NO_SCALARS, div_trunc_scalar_loops, false, -1};
static const ew_spec spec_div_floor_scalar = {
    "div.out_mode", "xx?T", INPUTS(0, 1), 3, NO_SCALARS, div_floor_scalar_loops, false, -1};
static tb_status kernel_div_mode(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("div.out_mode", args, count, "xx?T");
  if (status != TB_OK) return status;
  if (by_number_zero(args, count)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED,
                    "emu: div.out_mode: an integer division by the number 0");
  }
  const tb_value *mode = &args[2], *other = &args[1];
  /* ATen's TensorIterator::is_scalar: no stride along any dimension longer than 1 */
  bool scalar = true;
  for (int32_t d = 0; other->kind == TB_VALUE_TENSOR && d < other->as.tensor->ndim; d++) {
    scalar = scalar && (other->as.tensor->strides[d] == 0 || other->as.tensor->sizes[d] == 1);
  }
  const ew_spec *spec = &spec_div_true;
  if (mode->kind == TB_VALUE_STRING && strcmp(mode->as.string, "trunc") == 0) {
    spec = scalar ? &spec_div_trunc_scalar : &spec_div_trunc;
  } else if (mode->kind == TB_VALUE_STRING && strcmp(mode->as.string, "floor") == 0) {
    spec = scalar ? &spec_div_floor_scalar : &spec_div_floor;
  } else if (mode->kind != TB_VALUE_NONE) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: div.out_mode: an unknown rounding mode");
  }
  return enqueue_with(spec, stream, args, count, NULL);
}
EMU_KERNEL(k_div_mode, "div.out_mode", kernel_div_mode, EMU_FLOATS | EMU_INTS,
           "div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out) -> "
           "Tensor(a!)");
EW_KERNEL(maximum, "maximum.out", "xxT", INPUTS(0, 1), 2, NO_SCALARS, maximum_loops, false, -1,
          EMU_FLOATS | EMU_INTS,
          "maximum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
EW_KERNEL(minimum, "minimum.out", "xxT", INPUTS(0, 1), 2, NO_SCALARS, minimum_loops, false, -1,
          EMU_FLOATS | EMU_INTS,
          "minimum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
/* clamp_min.Tensor_out / clamp_max.Tensor_out: (self, bound, out); NaN in either propagates,
 * which is maximum's and minimum's rule */
EW_KERNEL(clamp_min_tensor, "clamp_min.Tensor_out", "xxT", INPUTS(0, 1), 2, NO_SCALARS,
          maximum_loops, false, -1, EMU_FLOATS | EMU_INTS,
          "clamp_min.Tensor_out(Tensor self, Tensor min, *, Tensor(a!) out) -> Tensor(a!)")
EW_KERNEL(clamp_max_tensor, "clamp_max.Tensor_out", "xxT", INPUTS(0, 1), 2, NO_SCALARS,
          minimum_loops, false, -1, EMU_FLOATS | EMU_INTS,
          "clamp_max.Tensor_out(Tensor self, Tensor max, *, Tensor(a!) out) -> Tensor(a!)")

/* comparisons: (self, other, out) with other a tensor or a Scalar */
#define COMPARE(ID, NAME, LOOPS, TENSOR_SCHEMA, SCALAR_SCHEMA)                                    \
  EW_KERNEL(ID##_tensor, NAME ".Tensor_out", "xxT", INPUTS(0, 1), 2, NO_SCALARS, LOOPS, true, -1, \
            EMU_ALL_TYPES, TENSOR_SCHEMA)                                                         \
  EW_KERNEL(ID##_scalar, NAME ".Scalar_out", "xnT", INPUTS(0, 1), 2, NO_SCALARS, LOOPS, true, -1, \
            EMU_ALL_TYPES, SCALAR_SCHEMA)
COMPARE(eq, "eq", eq_loops,
        "eq.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
        "eq.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)")
COMPARE(ne, "ne", ne_loops,
        "ne.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
        "ne.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)")
COMPARE(lt, "lt", lt_loops,
        "lt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
        "lt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)")
COMPARE(le, "le", le_loops,
        "le.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
        "le.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)")
COMPARE(gt, "gt", gt_loops,
        "gt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
        "gt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)")
COMPARE(ge, "ge", ge_loops,
        "ge.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
        "ge.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)")

/* activation backwards: (grad_output, saved, [parameter,] grad_input) */
EW_KERNEL(threshold_backward, "threshold_backward.grad_input", "xxnT", INPUTS(0, 1), 3, SCALARS(2),
          threshold_backward_loops, false, -1, EMU_FLOATS | EMU_INTS,
          "threshold_backward.grad_input(Tensor grad_output, Tensor self, Scalar threshold, *, "
          "Tensor(a!) grad_input) -> Tensor(a!)")
EW_KERNEL(sigmoid_backward, "sigmoid_backward.grad_input", "xxT", INPUTS(0, 1), 2, NO_SCALARS,
          sigmoid_backward_loops, false, -1, EMU_FLOATS,
          "sigmoid_backward.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) "
          "grad_input) -> Tensor(a!)")
EW_KERNEL(tanh_backward, "tanh_backward.grad_input", "xxT", INPUTS(0, 1), 2, NO_SCALARS,
          tanh_backward_loops, false, -1, EMU_FLOATS,
          "tanh_backward.grad_input(Tensor grad_output, Tensor output, *, Tensor(a!) grad_input) "
          "-> Tensor(a!)")
EW_KERNEL(silu_backward, "silu_backward.grad_input", "xxT", INPUTS(0, 1), 2, NO_SCALARS,
          silu_backward_loops, false, -1, EMU_FLOATS,
          "silu_backward.grad_input(Tensor grad_output, Tensor self, *, Tensor(a!) grad_input) -> "
          "Tensor(a!)")
EW_KERNEL(gelu_backward, "gelu_backward.grad_input", "xxsT", INPUTS(0, 1), 3, SCALARS(2),
          gelu_backward_loops, false, -1, EMU_FLOATS,
          "gelu_backward.grad_input(Tensor grad_output, Tensor self, *, str approximate=\"none\", "
          "Tensor(a!) grad_input) -> Tensor(a!)")
/* hardswish_backward: (grad_output, self, out), both inputs cast to the output's dtype */
EW_KERNEL(hardswish_backward, "hardswish_backward", "xxT", INPUTS(0, 1), 2, NO_SCALARS,
          hardswish_backward_loops, false, -1, EMU_FLOATS,
          "hardswish_backward(Tensor grad_output, Tensor self) -> Tensor")
EW_KERNEL(hardsigmoid_backward, "hardsigmoid_backward.grad_input", "xxT", INPUTS(0, 1), 2,
          NO_SCALARS, hardsigmoid_backward_loops, false, -1, EMU_FLOATS,
          "hardsigmoid_backward.grad_input(Tensor grad_output, Tensor self, *, Tensor(a!) "
          "grad_input) -> Tensor(a!)")

/* ternary: (self, a, b, value/weight, out) */
EW_KERNEL(addcmul, "addcmul.out", "xxxnT", INPUTS(0, 1, 2), 4, SCALARS(3), addcmul_loops, false, -1,
          EMU_FLOATS | EMU_INTS,
          "addcmul.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) "
          "out) -> Tensor(a!)")
EW_KERNEL(addcdiv, "addcdiv.out", "xxxnT", INPUTS(0, 1, 2), 4, SCALARS(3), addcdiv_loops, false, -1,
          EMU_FLOATS,
          "addcdiv.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) "
          "out) -> Tensor(a!)")
EW_KERNEL(
    lerp_scalar, "lerp.Scalar_out", "xxnT", INPUTS(0, 1), 3, SCALARS(2), lerp_scalar_loops, false,
    -1, EMU_FLOATS,
    "lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) -> Tensor(a!)")
EW_KERNEL(
    lerp_tensor, "lerp.Tensor_out", "xxxT", INPUTS(0, 1, 2), 3, NO_SCALARS, lerp_tensor_loops,
    false, -1, EMU_FLOATS,
    "lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out) -> Tensor(a!)")
/* where.self_out: (condition, self, other, out); condition is bool */
EW_KERNEL(
    where, "where.self_out", "xxxT", INPUTS(0, 1, 2), 3, NO_SCALARS, where_loops, false, 0,
    EMU_ALL_TYPES,
    "where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)")
/* native_dropout_backward: (grad_output, mask, scale, out) */
EW_KERNEL(dropout_backward, "native_dropout_backward", "TTfT", INPUTS(0, 1), 3, SCALARS(2),
          dropout_backward_loops, false, 1, EMU_FLOATS,
          "native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor")

/* ---- operators outside torch_backend's compiled list (vendor.h, ABI 2.0) ----
 *
 * torch_backend registers these through its generic boxed wrapper (they are not in its
 * codegen/ops.yaml), which passes operands as the caller gave them: their own shapes, strides
 * and dtypes, a CPU scalar as a number.  enqueue_broadcast expands each operand to the output's
 * shape (stride 0 where broadcast, ATen's right-aligned rule) and declines dtype mixes, which
 * the CPU fallback then promotes as ATen does. */

/* hardtanh: clamp to [min_val (slot 0), max_val (slot 1)]; NaN propagates, as at::clamp */
FLOAT_OP(UNARY_LOOP, hardtanh, (x != x) ? x : MINIMUM(MAXIMUM(x, (T)P->f[0]), (T)P->f[1]))
/* hardtanh_backward: grad (x) where min_val < self (y) < max_val, else 0 */
FLOAT_OP(BINARY_LOOP, hardtanh_backward, (y <= (T)P->f[0] || y >= (T)P->f[1]) ? (T)0 : x)
/* logit: log(z / (1 - z)), z = x clamped to [eps, 1 - eps] when eps is given (i[0]) */
#define LOGIT_OF(z) ((T)log((double)(z) / (1.0 - (double)(z))))
#define LOGIT_CLAMP(x, lo) ((x) < (lo) ? (lo) : (x) > (T)1 - (lo) ? (T)1 - (lo) : (x))
FLOAT_OP(UNARY_LOOP, logit, P->i[0] ? LOGIT_OF(LOGIT_CLAMP(x, (T)P->f[0])) : LOGIT_OF(x))
FLOAT_OP(BINARY_LOOP, atan2_, (T)atan2((double)x, (double)y))
/* leaky_relu: x for x > 0, else x * negative_slope (slot 0); NaN times the slope stays NaN */
FLOAT_OP(UNARY_LOOP, leaky_relu, x > (T)0 ? x : x * (T)P->f[0])
/* leaky_relu_backward: grad (x) where self (y) > 0, else grad * negative_slope */
FLOAT_OP(BINARY_LOOP, leaky_relu_backward, y > (T)0 ? x : x * (T)P->f[0])
/* softplus: log1p(exp(x * beta)) / beta, or x where x * beta > threshold (slots 0, 1) */
FLOAT_OP(UNARY_LOOP, softplus,
         x *(T)P->f[0] > (T)P->f[1] ? x : (T)(log1p(exp((double)x * P->f[0])) / P->f[0]))
/* softplus_backward: grad (x) * z / (z + 1), z = exp(self (y) * beta), or grad past the
 * threshold */
FLOAT_OP(BINARY_LOOP, softplus_backward,
         y *(T)P->f[0] > (T)P->f[1]
             ? x
             : (T)((double)x * exp((double)y * P->f[0]) / (exp((double)y * P->f[0]) + 1.0)))

static tb_status enqueue_broadcast(const ew_spec *spec, tb_stream stream, const tb_value *args,
                                   int32_t count, const ew_params *params) {
  enum { MAX_ARGS = 8 };
  tb_status status = emu_check_args(spec->name, args, count, spec->kinds);
  if (status != TB_OK) return status;
  if (count > MAX_ARGS)
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: arguments", spec->name);
  const tb_tensor *out = args[spec->out].as.tensor;
  tb_value copy[MAX_ARGS];
  tb_tensor views[4];
  int64_t strides[4][EMU_MAX_DIMS];
  memcpy(copy, args, (size_t)count * sizeof *args);
  for (int k = 0; spec->inputs[k] >= 0; k++) {
    const tb_value *v = &args[spec->inputs[k]];
    if (v->kind != TB_VALUE_TENSOR) continue;
    const tb_tensor *t = v->as.tensor;
    if (t->dtype != out->dtype || t->ndim > out->ndim) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: operand %d has another dtype or rank",
                      spec->name, k);
    }
    for (int32_t d = 0; d < out->ndim; d++) {
      int32_t m = d - (out->ndim - t->ndim); /* t's dimension aligned with d */
      int64_t size = m >= 0 ? t->sizes[m] : 1;
      if (size != out->sizes[d] && size != 1) {
        return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: operand %d does not broadcast",
                        spec->name, k);
      }
      strides[k][d] = m >= 0 && size == out->sizes[d] ? t->strides[m] : 0;
    }
    views[k] = *t;
    views[k].ndim = out->ndim;
    views[k].sizes = out->sizes;
    views[k].strides = strides[k];
    copy[spec->inputs[k]].as.tensor = &views[k];
  }
  return enqueue_with(spec, stream, copy, count, params);
}

/* hardtanh.out: (self, min_val, max_val, out) */
static const ew_spec spec_hardtanh = {"hardtanh.out", "TnnT",         INPUTS(0), 3,
                                      SCALARS(1, 2),  hardtanh_loops, false,     -1};
static tb_status kernel_hardtanh(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_broadcast(&spec_hardtanh, stream, args, count, NULL);
}
EMU_KERNEL(k_hardtanh, "hardtanh.out", kernel_hardtanh, EMU_FLOATS,
           "hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out) -> "
           "Tensor(a!)");
/* hardtanh_backward.grad_input: (grad_output, self, min_val, max_val, grad_input) */
static const ew_spec spec_hardtanh_backward = {"hardtanh_backward.grad_input",
                                               "TTnnT",
                                               INPUTS(0, 1),
                                               4,
                                               SCALARS(2, 3),
                                               hardtanh_backward_loops,
                                               false,
                                               -1};
static tb_status kernel_hardtanh_backward(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_broadcast(&spec_hardtanh_backward, stream, args, count, NULL);
}
EMU_KERNEL(k_hardtanh_backward, "hardtanh_backward.grad_input", kernel_hardtanh_backward,
           EMU_FLOATS,
           "hardtanh_backward.grad_input(Tensor grad_output, Tensor self, Scalar min_val, Scalar "
           "max_val, *, Tensor(a!) grad_input) -> Tensor(a!)");
/* logit.out: (self, eps?, out) */
static const ew_spec spec_logit = {"logit.out", "TNT",       INPUTS(0), 2,
                                   NO_SCALARS,  logit_loops, false,     -1};
static tb_status kernel_logit(tb_stream stream, const tb_value *args, int32_t count) {
  ew_params params;
  memset(&params, 0, sizeof params);
  if (count == 3 && emu_is_number(&args[1])) {
    params.i[0] = 1;
    params.f[0] = args[1].kind == TB_VALUE_DOUBLE ? args[1].as.f : (double)args[1].as.i;
  }
  return enqueue_broadcast(&spec_logit, stream, args, count, &params);
}
EMU_KERNEL(k_logit, "logit.out", kernel_logit, EMU_FLOATS,
           "logit.out(Tensor self, float? eps=None, *, Tensor(a!) out) -> Tensor(a!)");
/* atan2.out: (self, other, out); either may broadcast, other may be a number */
static const ew_spec spec_atan2 = {"atan2.out", "TxT",        INPUTS(0, 1), 2,
                                   NO_SCALARS,  atan2__loops, false,        -1};
static tb_status kernel_atan2(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_broadcast(&spec_atan2, stream, args, count, NULL);
}
EMU_KERNEL(k_atan2, "atan2.out", kernel_atan2, EMU_FLOATS,
           "atan2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");

/* leaky_relu.out: (self, negative_slope, out) */
static const ew_spec spec_leaky_relu = {"leaky_relu.out", "TnT", INPUTS(0), 2, SCALARS(1),
                                        leaky_relu_loops, false, -1};
static tb_status kernel_leaky_relu(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_broadcast(&spec_leaky_relu, stream, args, count, NULL);
}
EMU_KERNEL(k_leaky_relu, "leaky_relu.out", kernel_leaky_relu, EMU_FLOATS,
           "leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!) out) -> "
           "Tensor(a!)");
/* leaky_relu_backward.grad_input: (grad_output, self, negative_slope, self_is_result,
 * grad_input) */
static const ew_spec spec_leaky_relu_backward = {"leaky_relu_backward.grad_input",
                                                 "TTnbT",
                                                 INPUTS(0, 1),
                                                 4,
                                                 SCALARS(2),
                                                 leaky_relu_backward_loops,
                                                 false,
                                                 -1};
static tb_status kernel_leaky_relu_backward(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_broadcast(&spec_leaky_relu_backward, stream, args, count, NULL);
}
EMU_KERNEL(k_leaky_relu_backward, "leaky_relu_backward.grad_input", kernel_leaky_relu_backward,
           EMU_FLOATS,
           "leaky_relu_backward.grad_input(Tensor grad_output, Tensor self, Scalar negative_slope, "
           "bool self_is_result, *, Tensor(a!) grad_input) -> Tensor(a!)");
/* softplus.out: (self, beta, threshold, out) */
static const ew_spec spec_softplus = {"softplus.out", "TnnT",         INPUTS(0), 3,
                                      SCALARS(1, 2),  softplus_loops, false,     -1};
static tb_status kernel_softplus(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_broadcast(&spec_softplus, stream, args, count, NULL);
}
EMU_KERNEL(k_softplus, "softplus.out", kernel_softplus, EMU_FLOATS,
           "softplus.out(Tensor self, Scalar beta=1, Scalar threshold=20, *, Tensor(a!) out) -> "
           "Tensor(a!)");
/* softplus_backward.grad_input: (grad_output, self, beta, threshold, grad_input) */
static const ew_spec spec_softplus_backward = {"softplus_backward.grad_input",
                                               "TTnnT",
                                               INPUTS(0, 1),
                                               4,
                                               SCALARS(2, 3),
                                               softplus_backward_loops,
                                               false,
                                               -1};
static tb_status kernel_softplus_backward(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_broadcast(&spec_softplus_backward, stream, args, count, NULL);
}
EMU_KERNEL(k_softplus_backward, "softplus_backward.grad_input", kernel_softplus_backward,
           EMU_FLOATS,
           "softplus_backward.grad_input(Tensor grad_output, Tensor self, Scalar beta, Scalar "
           "threshold, *, Tensor(a!) grad_input) -> Tensor(a!)");
/* sign.out: (self, out), sgn's loops: NaN gives 0, as the CPU's */
static const ew_spec spec_sign = {"sign.out", "TT", INPUTS(0), 1, NO_SCALARS, sgn_loops, false, -1};
static tb_status kernel_sign(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_broadcast(&spec_sign, stream, args, count, NULL);
}
EMU_KERNEL(k_sign, "sign.out", kernel_sign, EMU_FLOATS | EMU_INTS,
           "sign.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");

/* ---- custom operators (vendor.h, ABI 2.0, "Custom operators") ----
 *
 * emu::mymuladd(Tensor a, Tensor b, float c) -> Tensor computes a * b + c, the operator of
 * PyTorch's custom C++ operator tutorial; its backward, emu::mymuladd_backward, returns
 * (grad * b, grad * a).  a and b have one shape and one floating dtype. */

FLOAT_OP(BINARY_LOOP, muladd, x *y + (T)P->f[0])

/* The shape both operators' tensors share, or a failure naming the operator. */
static tb_status muladd_shape_check(const char *name, const tb_value *args, int32_t count,
                                    int first, int tensors) {
  if (count < first + tensors)
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: arguments", name);
  const tb_tensor *a = args[first].as.tensor;
  for (int k = first; k < first + tensors; k++) {
    const tb_tensor *t = args[k].as.tensor;
    if (args[k].kind != TB_VALUE_TENSOR || !emu_is_floating(t->dtype) || t->dtype != a->dtype) {
      return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                      "emu: %s: every tensor must have one floating dtype", name);
    }
    if (!emu_same_shape(t, a)) {
      return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: a and b must have the same shape", name);
    }
  }
  return TB_OK;
}

static void shape_like(tb_shape *shape, const tb_tensor *t) {
  shape->dtype = t->dtype;
  shape->ndim = t->ndim;
  for (int32_t d = 0; d < t->ndim; d++) shape->sizes[d] = t->sizes[d];
}

/* (a, b, c) -> one output shaped like a */
static tb_status mymuladd_shape(tb_context ctx, const tb_value *args, int32_t count,
                                tb_shape *outputs, int32_t num_outputs) {
  (void)ctx;
  tb_status status = muladd_shape_check("emu::mymuladd", args, count, 0, 2);
  if (status != TB_OK) return status;
  if (num_outputs != 1 || args[0].as.tensor->ndim > TB_SHAPE_MAX_DIMS) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu::mymuladd: one output of at most %d dims",
                    TB_SHAPE_MAX_DIMS);
  }
  shape_like(&outputs[0], args[0].as.tensor);
  return TB_OK;
}

/* (a, b, c, out) */
static const ew_spec spec_mymuladd = {"emu::mymuladd", "TTfT",       INPUTS(0, 1), 3,
                                      SCALARS(2),      muladd_loops, false,        -1};
static tb_status kernel_mymuladd(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = muladd_shape_check("emu::mymuladd", args, count, 0, 2);
  return status != TB_OK ? status : enqueue_with(&spec_mymuladd, stream, args, count, NULL);
}

/* (grad, a, b, c) -> (grad_a, grad_b), both shaped like a */
static tb_status mymuladd_backward_shape(tb_context ctx, const tb_value *args, int32_t count,
                                         tb_shape *outputs, int32_t num_outputs) {
  (void)ctx;
  tb_status status = muladd_shape_check("emu::mymuladd_backward", args, count, 0, 3);
  if (status != TB_OK) return status;
  if (num_outputs != 2 || args[0].as.tensor->ndim > TB_SHAPE_MAX_DIMS) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu::mymuladd_backward: two outputs of at most %d dims", TB_SHAPE_MAX_DIMS);
  }
  shape_like(&outputs[0], args[1].as.tensor);
  shape_like(&outputs[1], args[2].as.tensor);
  return TB_OK;
}

static void run_mymuladd_backward(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *a = call->args;
  const emu_tensor *grad = a[0].as.tensor, *x = a[1].as.tensor, *y = a[2].as.tensor;
  const ew_params none = {{0}, {0}};
  emu_tensor operands[2] = {*grad, *y};
  ew_run(a[4].as.tensor, operands, 2, mul_loops[grad->dtype], &none); /* grad_a = grad * b */
  operands[1] = *x;
  ew_run(a[5].as.tensor, operands, 2, mul_loops[grad->dtype], &none); /* grad_b = grad * a */
}

/* (grad, a, b, c, grad_a, grad_b) */
static tb_status kernel_mymuladd_backward(tb_stream stream, const tb_value *args, int32_t count) {
  const char *name = "emu::mymuladd_backward";
  tb_status status = emu_check_args(name, args, count, "TTTfTT");
  if (status == TB_OK) status = muladd_shape_check(name, args, count, 0, 3);
  if (status != TB_OK) return status;
  for (int k = 4; k < 6; k++) {
    if (args[k].as.tensor->dtype != args[0].as.tensor->dtype ||
        !emu_same_shape(args[k].as.tensor, args[1].as.tensor)) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: outputs of another dtype or shape", name);
    }
  }
  return emu_launch(name, stream, args, count, run_mymuladd_backward, 0, NULL);
}

EMU_KERNEL_ENTRY(k_mymuladd, kernel_mymuladd)
EMU_KERNEL_ENTRY(k_mymuladd_backward, kernel_mymuladd_backward)

const tb_custom_op emu_op_mymuladd = {
    .struct_size = sizeof(tb_custom_op),
    .schema = "emu::mymuladd(Tensor a, Tensor b, float c) -> Tensor",
    .fn = k_mymuladd_entry,
    .dtypes = EMU_FLOATS,
    .shape = mymuladd_shape,
    .backward = "emu::mymuladd_backward",
};
const tb_custom_op emu_op_mymuladd_backward = {
    .struct_size = sizeof(tb_custom_op),
    .schema =
        "emu::mymuladd_backward(Tensor grad, Tensor a, Tensor b, float c) -> (Tensor, "
        "Tensor)",
    .fn = k_mymuladd_backward_entry,
    .dtypes = EMU_FLOATS,
    .shape = mymuladd_backward_shape,
};

/* ---- _foreach_ operators: every tensor of the lists updated in place by one task ----
 * _foreach_add_.List [self, other, alpha], _foreach_add_.Scalar [self, scalar],
 * _foreach_mul_.Scalar [self, scalar], _foreach_lerp_.Scalar [self, end, weight] and
 * _foreach_addcmul_.Scalar [self, tensor1, tensor2, value]: the steps of the optimizers'
 * foreach=True path, one launch for the list instead of one per parameter, each tensor through
 * the loops of the operator it stands for (add, mul, lerp, addcmul).  Contiguous tensors of one
 * floating dtype, equal in shape at each position, none overlapping another list's tensor;
 * anything else is declined and ATen's per-tensor path runs on the device (ops.yaml's
 * declined:), which raises ATen's errors. */

enum { FE_ADD_LIST, FE_ADD_SCALAR, FE_MUL_SCALAR, FE_LERP, FE_ADDCMUL };

typedef struct foreach_state {
  int op;
  ew_params params;
} foreach_state;

static int foreach_lists(int op) {
  return op == FE_ADDCMUL ? 3 : op == FE_ADD_LIST || op == FE_LERP ? 2 : 1;
}

static void run_foreach(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const foreach_state *state = call->scratch;
  const int lists = foreach_lists(state->op);
  for (int64_t i = 0; i < call->args[0].as.tensors.count; i++) {
    const emu_tensor *self = &call->args[0].as.tensors.items[i];
    const tb_dtype dtype = self->dtype;
    emu_tensor operands[3] = {*self};
    char storage[16];
    for (int l = 1; l < lists; l++) operands[l] = call->args[l].as.tensors.items[i];
    switch (state->op) {
      case FE_ADD_LIST:
        ew_run(self, operands, 2, add_loops[dtype], &state->params);
        break;
      case FE_ADD_SCALAR:
      case FE_MUL_SCALAR:
        ew_operand(&call->args[1], dtype, self, &operands[1], storage);
        ew_run(self, operands, 2, state->op == FE_ADD_SCALAR ? add_loops[dtype] : mul_loops[dtype],
               &state->params);
        break;
      case FE_LERP:
        ew_run(self, operands, 2, lerp_scalar_loops[dtype], &state->params);
        break;
      default:
        ew_run(self, operands, 3, addcmul_loops[dtype], &state->params);
        break;
    }
  }
}

/* Elements of a contiguous tensor (row-major strides), or -1. */
static int64_t contiguous_numel(const tb_tensor *t) {
  int64_t expected = 1;
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    if (t->sizes[d] != 1 && t->strides[d] != expected) return -1;
    expected *= t->sizes[d];
  }
  return expected;
}

static tb_status enqueue_foreach(const char *name, int op, tb_stream stream, const tb_value *args,
                                 int32_t count) {
  static const char *const kinds[] = {"LLn", "Ln", "Ln", "LLn", "LLLn"};
  tb_status status = emu_check_args(name, args, count, kinds[op]);
  if (status != TB_OK) return status;
  const int lists = foreach_lists(op);
  const tb_tensor_list *self = &args[0].as.tensors;
  for (int l = 1; l < lists; l++) {
    if (args[l].as.tensors.count != self->count) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: lists of different lengths", name);
    }
  }
  for (int64_t i = 0; i < self->count; i++) {
    const tb_tensor *t = self->items[i];
    int64_t numel = t != NULL ? contiguous_numel(t) : -1;
    bool fits = numel >= 0 && emu_is_floating(t->dtype) && t->dtype == self->items[0]->dtype;
    for (int l = 1; l < lists && fits; l++) {
      const tb_tensor *u = args[l].as.tensors.items[i];
      fits =
          u != NULL && u->dtype == t->dtype && emu_same_shape(u, t) && contiguous_numel(u) == numel;
      /* an operand overlapping another list's tensor: ATen's path checks and orders these */
      for (int64_t j = 0; j < self->count && fits; j++) {
        const tb_tensor *v = self->items[j];
        fits = v != NULL && (u->data == t->data || !emu_spans_overlap(u, v));
      }
    }
    if (!fits) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED,
                      "emu: %s: tensors not contiguous, of one floating dtype and of equal "
                      "shapes at each position, or overlapping",
                      name);
    }
  }
  foreach_state state = {.op = op};
  double value = op == FE_ADD_SCALAR || op == FE_MUL_SCALAR ? 1.0 : 0.0;
  if (op != FE_ADD_SCALAR && op != FE_MUL_SCALAR) {
    const tb_value *v = &args[lists];
    value = v->kind == TB_VALUE_DOUBLE ? v->as.f
            : v->kind == TB_VALUE_INT  ? (double)v->as.i
                                       : (double)v->as.b;
  }
  state.params.f[0] = value;
  state.params.i[0] = (int64_t)value;
  return emu_launch(name, stream, args, count, run_foreach, sizeof state, &state);
}

static tb_status kernel_foreach_add_list(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_foreach("_foreach_add_.List", FE_ADD_LIST, s, a, n);
}
static tb_status kernel_foreach_add_scalar(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_foreach("_foreach_add_.Scalar", FE_ADD_SCALAR, s, a, n);
}
static tb_status kernel_foreach_mul_scalar(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_foreach("_foreach_mul_.Scalar", FE_MUL_SCALAR, s, a, n);
}
static tb_status kernel_foreach_lerp_scalar(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_foreach("_foreach_lerp_.Scalar", FE_LERP, s, a, n);
}
static tb_status kernel_foreach_addcmul_scalar(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_foreach("_foreach_addcmul_.Scalar", FE_ADDCMUL, s, a, n);
}
EMU_KERNEL(k_foreach_add_list, "_foreach_add_.List", kernel_foreach_add_list, EMU_FLOATS,
           "_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()");
EMU_KERNEL(k_foreach_add_scalar, "_foreach_add_.Scalar", kernel_foreach_add_scalar, EMU_FLOATS,
           "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()");
EMU_KERNEL(k_foreach_mul_scalar, "_foreach_mul_.Scalar", kernel_foreach_mul_scalar, EMU_FLOATS,
           "_foreach_mul_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()");
EMU_KERNEL(k_foreach_lerp_scalar, "_foreach_lerp_.Scalar", kernel_foreach_lerp_scalar, EMU_FLOATS,
           "_foreach_lerp_.Scalar(Tensor(a!)[] self, Tensor[] tensors1, Scalar weight) -> ()");
EMU_KERNEL(k_foreach_addcmul_scalar, "_foreach_addcmul_.Scalar", kernel_foreach_addcmul_scalar,
           EMU_FLOATS,
           "_foreach_addcmul_.Scalar(Tensor(a!)[] self, Tensor[] tensor1, Tensor[] tensor2, "
           "Scalar value=1) -> ()");

const tb_kernel *const emu_elementwise_kernels[] = {&k_neg,
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
                                                    &k_relu,
                                                    &k_relu_,
                                                    &k_pow_scalar,
                                                    &k_pow_base,
                                                    &k_gelu,
                                                    &k_hardswish,
                                                    &k_hardswish_,
                                                    &k_hardsigmoid,
                                                    &k_clamp,
                                                    &k_clamp_min,
                                                    &k_logical_not,
                                                    &k_bitwise_not,
                                                    &k_bitwise_and,
                                                    &k_bitwise_or,
                                                    &k_bitwise_xor,
                                                    &k_masked_fill,
                                                    &k_masked_fill_tensor,
                                                    &k_logical_or,
                                                    &k_logical_and,
                                                    &k_logical_xor,
                                                    &k_lgamma,
                                                    &k_digamma,
                                                    &k_sgn,
                                                    &k_isnan,
                                                    &k_isposinf,
                                                    &k_isneginf,
                                                    &k_clamp_max,
                                                    &k_add,
                                                    &k_sub,
                                                    &k_mul,
                                                    &k_div,
                                                    &k_foreach_add_list,
                                                    &k_foreach_add_scalar,
                                                    &k_foreach_mul_scalar,
                                                    &k_foreach_lerp_scalar,
                                                    &k_foreach_addcmul_scalar,
                                                    &k_asin,
                                                    &k_acos,
                                                    &k_atan,
                                                    &k_sinh,
                                                    &k_cosh,
                                                    &k_asinh,
                                                    &k_acosh,
                                                    &k_atanh,
                                                    &k_exp2,
                                                    &k_log10,
                                                    &k_hypot,
                                                    &k_pow_tensor,
                                                    &k_mish,
                                                    &k_div_mode,
                                                    &k_remainder,
                                                    &k_fmod,
                                                    &k_maximum,
                                                    &k_clamp_min_tensor,
                                                    &k_clamp_max_tensor,
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
                                                    &k_threshold_backward,
                                                    &k_sigmoid_backward,
                                                    &k_tanh_backward,
                                                    &k_silu_backward,
                                                    &k_gelu_backward,
                                                    &k_hardswish_backward,
                                                    &k_hardsigmoid_backward,
                                                    &k_addcmul,
                                                    &k_addcdiv,
                                                    &k_lerp_scalar,
                                                    &k_lerp_tensor,
                                                    &k_where,
                                                    &k_dropout_backward,
                                                    &k_hardtanh,
                                                    &k_hardtanh_backward,
                                                    &k_logit,
                                                    &k_atan2,
                                                    &k_leaky_relu,
                                                    &k_leaky_relu_backward,
                                                    &k_softplus,
                                                    &k_softplus_backward,
                                                    &k_sign,
                                                    NULL};
