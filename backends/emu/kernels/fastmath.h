/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Single-precision exp, erf, tanh and sigmoid that compilers vectorise: straight-line code
 * (selects, no branches, no calls), so a loop of them becomes SIMD code where libm's expf / erff
 * would be one call per element.  PyTorch's CPU kernels use vectorised approximations for the same
 * reason (Sleef); the errors below are against libm's correctly rounded double results.
 *
 * emu_expf: range reduction x = n ln2 + r (Cody-Waite, two-part ln2), |r| <= ln2/2, a degree-6
 * polynomial for e^r, and 2^n applied in two halves so that subnormal results and the largest
 * finite ones come out right.  Max error 3 ulp over [-104, 89]; exact 0 below, +inf above
 * 88.7228..., NaN for NaN.
 *
 * emu_erff: for |x| < 0.75 the Maclaurin series of erf to x^17;
 * beyond, erf = 1 - erfc with erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2), P a degree-9
 * polynomial (Numerical Recipes' erfcc fit, fractional error < 1.2e-7).  Max error 3 ulp.
 */
#ifndef TORCH_BACKEND_EMU_FASTMATH_H_
#define TORCH_BACKEND_EMU_FASTMATH_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float emu_bits_to_float(int32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* 2^k for integer k in [-126, 127]. */
static inline float emu_pow2i(int32_t k) { return emu_bits_to_float((k + 127) << 23); }

__attribute__((always_inline)) static inline float emu_expf(float x) {
  const float log2e = 1.44269504088896341f;
  const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
  const float shifter = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
  float xc = x > 88.7228394f ? 88.7228394f : x;
  xc = xc < -103.972084f ? -103.972084f : xc;
  float n = (xc * log2e + shifter) - shifter;
  float r = xc - n * ln2_hi;
  r = r - n * ln2_lo;
  float p = 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float r2 = r * r;
  p = p * r2 + r + 1.0f;
  int32_t k = (int32_t)n;
  int32_t k1 = k / 2;
  float y = p * emu_pow2i(k1) * emu_pow2i(k - k1);
  y = x > 88.7228394f ? INFINITY : y;
  y = x < -103.972084f ? 0.0f : y;
  return x != x ? x : y;
}

__attribute__((always_inline)) static inline float emu_erff(float x) {
  float z = fabsf(x);
  /* small: x (c0 + c1 x^2 + ... + c8 x^16), the Maclaurin series of erf, cn = 2/sqrt(pi)
   * (-1)^n / (n! (2n+1)); at |x| = 0.75 the first omitted term is 1e-9 of the result */
  float x2 = x * x;
  float s = 1.646211437e-06f;
  s = s * x2 - 1.492565036e-05f;
  s = s * x2 + 1.205533298e-04f;
  s = s * x2 - 8.548327023e-04f;
  s = s * x2 + 5.223977625e-03f;
  s = s * x2 - 2.686617065e-02f;
  s = s * x2 + 1.128379167e-01f;
  s = s * x2 - 3.761263890e-01f;
  s = s * x2 + 1.128379167e+00f;
  float small = x * s;
  /* large: 1 - erfc(z) */
  float t = 1.0f / (1.0f + 0.5f * z);
  float q = 0.17087277f;
  q = q * t - 0.82215223f;
  q = q * t + 1.48851587f;
  q = q * t - 1.13520398f;
  q = q * t + 0.27886807f;
  q = q * t - 0.18628806f;
  q = q * t + 0.09678418f;
  q = q * t + 0.37409196f;
  q = q * t + 1.00002368f;
  q = q * t - 1.26551223f;
  float erfc = t * emu_expf(-z * z + q);
  float large = 1.0f - erfc;
  large = x < 0 ? -large : large;
  float y = z < 0.75f ? small : large;
  return x != x ? x : y;
}

__attribute__((always_inline)) static inline float emu_tanhf(float x) {
  float z = fabsf(x);
  /* small: the Taylor series of tanh to x^21; at |x| = 0.55 the first omitted term is 2e-10 */
  float x2 = x * x;
  float s = 9.691537957e-05f;
  s = s * x2 - 2.391291142e-04f;
  s = s * x2 + 5.900274409e-04f;
  s = s * x2 - 1.455834387e-03f;
  s = s * x2 + 3.592128037e-03f;
  s = s * x2 - 8.863235530e-03f;
  s = s * x2 + 2.186948854e-02f;
  s = s * x2 - 5.396825397e-02f;
  s = s * x2 + 1.333333333e-01f;
  s = s * x2 - 3.333333333e-01f;
  float small = x + x * x2 * s;
  /* large: 1 - 2 / (e^2z + 1), which tends to 1 as e^2z overflows */
  float large = 1.0f - 2.0f / (emu_expf(2.0f * z) + 1.0f);
  large = x < 0 ? -large : large;
  float y = z < 0.55f ? small : large;
  return x != x ? x : y;
}

/* 1 / (1 + e^-x), vectorisable in float; libm's exp in double. */
__attribute__((always_inline)) static inline float emu_sigmoidf(float x) {
  return 1.0f / (1.0f + emu_expf(-x));
}
static inline double emu_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

#endif /* TORCH_BACKEND_EMU_FASTMATH_H_ */
