/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The typed loops of conv.c, compiled once per compute type: conv.c includes this file with T
 * (float, double, int64_t) and SFX(name) (name##_f32, name##_f64, name##_i64) defined, after
 * conv_geom and valid_range; CONV_DIRECT_ONLY (int64) keeps only direct_forward.  No include
 * guard, on purpose.  Pointers are untyped so that the instances of a loop have one signature
 * (conv.c picks one by dtype).
 *
 * Output position p of a plane is oh * OW + ow; input row ih = oh * SH - PH + ki * DH and
 * column iw = ow * SW - PW + kj * DW for kernel tap (ki, kj); taps outside the input read 0.
 */

/* One output plane of a convolution computed directly: bias (or 0) plus, for each of the
 * group's `channels` input planes at `in` and each tap, the tap's weight times the shifted
 * plane.  The depthwise forward (one channel), and int64 convolutions. */
EMU_HOT_LOOP static void SFX(direct_forward)(const conv_geom *g, const void *in, int64_t channels,
                                             const void *weight, const void *bias, void *out) {
  const T *restrict x = in, *restrict w = weight;
  T *restrict y = out;
  const T b = bias != NULL ? *(const T *)bias : (T)0;
  for (int64_t i = 0; i < g->P; i++) y[i] = b;
  for (int64_t c = 0; c < channels; c++) {
    for (int64_t ki = 0; ki < g->KH; ki++) {
      for (int64_t kj = 0; kj < g->KW; kj++) {
        const T wv = w[(c * g->KH + ki) * g->KW + kj];
        const int64_t offset = kj * g->DW - g->PW, sw = g->SW;
        int64_t lo, hi;
        valid_range(offset, sw, g->W, g->OW, &lo, &hi);
        if (hi <= lo) continue;
        for (int64_t oh = 0; oh < g->OH; oh++) {
          const int64_t ih = oh * g->SH - g->PH + ki * g->DH;
          if (ih < 0 || ih >= g->H) continue;
          const T *src = x + c * g->HW + ih * g->W + lo * sw + offset;
          T *dst = y + oh * g->OW + lo;
          if (sw == 1) {
            for (int64_t i = 0; i < hi - lo; i++) dst[i] += wv * src[i];
          } else {
            for (int64_t i = 0; i < hi - lo; i++) dst[i] += wv * src[i * sw];
          }
        }
      }
    }
  }
}

#ifndef CONV_DIRECT_ONLY /* the rest: floating types only */

/* col[(c, ki, kj), p - p0] for the output positions p in [p0, p1) and `channels` input
 * planes at `in`: the im2col columns of those positions, rows `ldcol` apart. */
EMU_HOT_LOOP static void SFX(im2col)(const conv_geom *g, const void *in, int64_t channels,
                                     int64_t p0, int64_t p1, void *col, int64_t ldcol) {
  const T *restrict x = in;
  T *restrict out = col;
  for (int64_t c = 0; c < channels; c++) {
    const T *plane = x + c * g->HW;
    for (int64_t ki = 0; ki < g->KH; ki++) {
      for (int64_t kj = 0; kj < g->KW; kj++) {
        T *row = out + ((c * g->KH + ki) * g->KW + kj) * ldcol;
        const int64_t offset = kj * g->DW - g->PW, sw = g->SW;
        int64_t lo, hi;
        valid_range(offset, sw, g->W, g->OW, &lo, &hi);
        for (int64_t p = p0; p < p1;) {
          const int64_t oh = p / g->OW, ow0 = p % g->OW;
          const int64_t ow1 = ow0 + (p1 - p) < g->OW ? ow0 + (p1 - p) : g->OW;
          const int64_t ih = oh * g->SH - g->PH + ki * g->DH;
          T *dst = row + (p - p0); /* dst[ow - ow0] */
          /* [a, b): the positions of [ow0, ow1) whose tap lies inside the row */
          const int64_t a = lo > ow0 ? (lo < ow1 ? lo : ow1) : ow0;
          const int64_t b = ih < 0 || ih >= g->H ? a : hi < ow1 ? (hi > a ? hi : a) : ow1;
          for (int64_t i = 0; i < a - ow0; i++) dst[i] = 0;
          if (b > a) {
            const T *src = plane + ih * g->W + a * sw + offset;
            T *to = dst + (a - ow0);
            if (sw == 1) {
              for (int64_t i = 0; i < b - a; i++) to[i] = src[i];
            } else {
              for (int64_t i = 0; i < b - a; i++) to[i] = src[i * sw];
            }
          }
          for (int64_t i = b - ow0; i < ow1 - ow0; i++) dst[i] = 0;
          p += ow1 - ow0;
        }
      }
    }
  }
}

/* The reverse of im2col: adds col[(c, ki, kj), p - p0] into the input planes at `in` (the
 * gradient of the columns flowing back to the positions they were read from). */
EMU_HOT_LOOP static void SFX(col2im)(const conv_geom *g, const void *col, int64_t channels,
                                     int64_t p0, int64_t p1, void *in, int64_t ldcol) {
  const T *restrict from = col;
  T *restrict x = in;
  for (int64_t c = 0; c < channels; c++) {
    T *plane = x + c * g->HW;
    for (int64_t ki = 0; ki < g->KH; ki++) {
      for (int64_t kj = 0; kj < g->KW; kj++) {
        const T *row = from + ((c * g->KH + ki) * g->KW + kj) * ldcol;
        const int64_t offset = kj * g->DW - g->PW, sw = g->SW;
        int64_t lo, hi;
        valid_range(offset, sw, g->W, g->OW, &lo, &hi);
        for (int64_t p = p0; p < p1;) {
          const int64_t oh = p / g->OW, ow0 = p % g->OW;
          const int64_t ow1 = ow0 + (p1 - p) < g->OW ? ow0 + (p1 - p) : g->OW;
          const int64_t ih = oh * g->SH - g->PH + ki * g->DH;
          const int64_t a = lo > ow0 ? lo : ow0, b = hi < ow1 ? hi : ow1;
          if (ih >= 0 && ih < g->H && b > a) {
            const T *src = row + (p - p0) + (a - ow0);
            T *dst = plane + ih * g->W + a * sw + offset;
            if (sw == 1) {
              for (int64_t i = 0; i < b - a; i++) dst[i] += src[i];
            } else {
              for (int64_t i = 0; i < b - a; i++) dst[i * sw] += src[i];
            }
          }
          p += ow1 - ow0;
        }
      }
    }
  }
}

/* rows x cols block at `out` (rows `ld` apart) set to values[row], or 0 without values. */
static void SFX(fill_rows)(void *out, int64_t rows, int64_t cols, int64_t ld, const void *values) {
  T *o = out;
  const T *v = values;
  for (int64_t r = 0; r < rows; r++) {
    const T value = v != NULL ? v[r] : (T)0;
    for (int64_t i = 0; i < cols; i++) o[r * ld + i] = value;
  }
}

/* Depthwise grad_input: adds one output plane's gradient, through its weight, into the input
 * plane it was computed from. */
EMU_HOT_LOOP static void SFX(depthwise_input)(const conv_geom *g, const void *grad_out,
                                              const void *weight, void *grad_in) {
  const T *restrict gy = grad_out, *restrict w = weight;
  T *restrict gx = grad_in;
  for (int64_t ki = 0; ki < g->KH; ki++) {
    for (int64_t kj = 0; kj < g->KW; kj++) {
      const T wv = w[ki * g->KW + kj];
      const int64_t offset = kj * g->DW - g->PW, sw = g->SW;
      int64_t lo, hi;
      valid_range(offset, sw, g->W, g->OW, &lo, &hi);
      if (hi <= lo) continue;
      for (int64_t oh = 0; oh < g->OH; oh++) {
        const int64_t ih = oh * g->SH - g->PH + ki * g->DH;
        if (ih < 0 || ih >= g->H) continue;
        const T *src = gy + oh * g->OW + lo;
        T *dst = gx + ih * g->W + lo * sw + offset;
        if (sw == 1) {
          for (int64_t i = 0; i < hi - lo; i++) dst[i] += wv * src[i];
        } else {
          for (int64_t i = 0; i < hi - lo; i++) dst[i * sw] += wv * src[i];
        }
      }
    }
  }
}

/* Depthwise grad_weight: adds, for every tap (ki, kj), grad_out times the input the tap read
 * into acc[(ki KW + kj) OW + ow] (per output column: a loop the compiler vectorises; the
 * caller sums each tap's OW partial sums). */
EMU_HOT_LOOP static void SFX(depthwise_weight)(const conv_geom *g, const void *grad_out,
                                               const void *in, void *acc) {
  const T *restrict gy = grad_out, *restrict x = in;
  T *restrict sums = acc;
  for (int64_t ki = 0; ki < g->KH; ki++) {
    for (int64_t kj = 0; kj < g->KW; kj++) {
      const int64_t offset = kj * g->DW - g->PW, sw = g->SW;
      int64_t lo, hi;
      valid_range(offset, sw, g->W, g->OW, &lo, &hi);
      if (hi <= lo) continue;
      T *to = sums + (ki * g->KW + kj) * g->OW + lo;
      for (int64_t oh = 0; oh < g->OH; oh++) {
        const int64_t ih = oh * g->SH - g->PH + ki * g->DH;
        if (ih < 0 || ih >= g->H) continue;
        const T *src = x + ih * g->W + lo * sw + offset;
        const T *dy = gy + oh * g->OW + lo;
        if (sw == 1) {
          for (int64_t i = 0; i < hi - lo; i++) to[i] += dy[i] * src[i];
        } else {
          for (int64_t i = 0; i < hi - lo; i++) to[i] += dy[i] * src[i * sw];
        }
      }
    }
  }
}

/* The sum of n elements, accumulated in double. */
static double SFX(sum)(const void *x, int64_t n) {
  const T *v = x;
  double sum = 0;
  for (int64_t i = 0; i < n; i++) sum += (double)v[i];
  return sum;
}

#endif /* CONV_DIRECT_ONLY */
