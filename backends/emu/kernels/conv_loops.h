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

/* The window of `channels` input planes at `in` that output rows [r0, r1) read, zero-padded:
 * rows r0 SH - PH + [0, hq), columns -PW + [0, wq) (conv.c's window()), planes hq wq apart. */
EMU_HOT_LOOP static void SFX(pad_window)(const conv_geom *g, const void *in, int64_t channels,
                                         int64_t r0, int64_t hq, int64_t wq, void *window) {
  const T *restrict x = in;
  T *restrict out = window;
  const int64_t ih0 = r0 * g->SH - g->PH;
  const int64_t a = g->PW < wq ? g->PW : wq, b = g->PW + g->W < wq ? g->PW + g->W : wq;
  for (int64_t c = 0; c < channels; c++) {
    for (int64_t r = 0; r < hq; r++) {
      T *dst = out + (c * hq + r) * wq;
      const int64_t ih = ih0 + r;
      if (ih < 0 || ih >= g->H) {
        for (int64_t i = 0; i < wq; i++) dst[i] = 0;
        continue;
      }
      const T *src = x + c * g->HW + ih * g->W - g->PW;
      for (int64_t i = 0; i < a; i++) dst[i] = 0;
      for (int64_t i = a; i < b; i++) dst[i] = src[i];
      for (int64_t i = b; i < wq; i++) dst[i] = 0;
    }
  }
}

/* im2col from a window of the input planes (pad_window's, or the planes themselves without
 * padding): col[(c, ki, kj), r OW + ow] for `rows` output rows whose first reads window row 0,
 * column 0; window rows `ld_row` apart, planes `ld_plane`.  One copy of OW per row and tap. */
EMU_HOT_LOOP static void SFX(im2col_window)(const conv_geom *g, const void *window,
                                            int64_t channels, int64_t rows, int64_t ld_row,
                                            int64_t ld_plane, void *col, int64_t ldcol) {
  const T *restrict x = window;
  T *restrict out = col;
  const int64_t OW = g->OW, sw = g->SW;
  for (int64_t c = 0; c < channels; c++) {
    for (int64_t ki = 0; ki < g->KH; ki++) {
      for (int64_t kj = 0; kj < g->KW; kj++) {
        T *row = out + ((c * g->KH + ki) * g->KW + kj) * ldcol;
        const T *plane = x + c * ld_plane + ki * g->DH * ld_row + kj * g->DW;
        for (int64_t r = 0; r < rows; r++) {
          const T *src = plane + r * g->SH * ld_row;
          T *dst = row + r * OW;
          if (sw == 1) {
            for (int64_t i = 0; i < OW; i++) dst[i] = src[i];
          } else {
            for (int64_t i = 0; i < OW; i++) dst[i] = src[i * sw];
          }
        }
      }
    }
  }
}

/* The reverse of im2col_window: adds the columns' gradient into the window. */
EMU_HOT_LOOP static void SFX(col2im_window)(const conv_geom *g, const void *col, int64_t channels,
                                            int64_t rows, int64_t ld_row, int64_t ld_plane,
                                            void *window, int64_t ldcol) {
  const T *restrict from = col;
  T *restrict x = window;
  const int64_t OW = g->OW, sw = g->SW;
  for (int64_t c = 0; c < channels; c++) {
    for (int64_t ki = 0; ki < g->KH; ki++) {
      for (int64_t kj = 0; kj < g->KW; kj++) {
        const T *row = from + ((c * g->KH + ki) * g->KW + kj) * ldcol;
        T *plane = x + c * ld_plane + ki * g->DH * ld_row + kj * g->DW;
        for (int64_t r = 0; r < rows; r++) {
          T *dst = plane + r * g->SH * ld_row;
          const T *src = row + r * OW;
          if (sw == 1) {
            for (int64_t i = 0; i < OW; i++) dst[i] += src[i];
          } else {
            for (int64_t i = 0; i < OW; i++) dst[i * sw] += src[i];
          }
        }
      }
    }
  }
}

/* Adds the inside of a padded window (pad_window's layout) into the input planes at `in`. */
EMU_HOT_LOOP static void SFX(unpad_window)(const conv_geom *g, const void *window, int64_t channels,
                                           int64_t r0, int64_t hq, int64_t wq, void *in) {
  const T *restrict from = window;
  T *restrict x = in;
  const int64_t ih0 = r0 * g->SH - g->PH;
  const int64_t a = g->PW < wq ? g->PW : wq, b = g->PW + g->W < wq ? g->PW + g->W : wq;
  for (int64_t c = 0; c < channels; c++) {
    for (int64_t r = 0; r < hq; r++) {
      const int64_t ih = ih0 + r;
      if (ih < 0 || ih >= g->H) continue;
      const T *src = from + (c * hq + r) * wq;
      T *dst = x + c * g->HW + ih * g->W - g->PW;
      for (int64_t i = a; i < b; i++) dst[i] += src[i];
    }
  }
}

/* im2col for narrow output rows (a few positions each, where a loop along a row is mostly
 * overhead): per tap and output position, a loop over the channels. */
EMU_HOT_LOOP static void SFX(im2col_narrow)(const conv_geom *g, const void *in, int64_t channels,
                                            int64_t r0, int64_t r1, void *col, int64_t ldcol) {
  const T *restrict x = in;
  T *restrict out = col;
  const int64_t OW = g->OW, HW = g->HW, rows = g->KH * g->KW * ldcol; /* channel to channel */
  for (int64_t ki = 0; ki < g->KH; ki++) {
    int64_t hlo, hhi;
    valid_range(ki * g->DH - g->PH, g->SH, g->H, g->OH, &hlo, &hhi);
    for (int64_t kj = 0; kj < g->KW; kj++) {
      const int64_t offset = kj * g->DW - g->PW;
      int64_t lo, hi;
      valid_range(offset, g->SW, g->W, OW, &lo, &hi);
      T *row = out + (ki * g->KW + kj) * ldcol - r0 * OW;
      for (int64_t oh = r0; oh < r1; oh++) {
        const bool inside = oh >= hlo && oh < hhi;
        const T *src = x + (oh * g->SH - g->PH + ki * g->DH) * g->W + offset;
        for (int64_t ow = 0; ow < OW; ow++) {
          T *dst = row + oh * OW + ow;
          if (inside && ow >= lo && ow < hi) {
            const T *s = src + ow * g->SW;
            for (int64_t c = 0; c < channels; c++) dst[c * rows] = s[c * HW];
          } else {
            for (int64_t c = 0; c < channels; c++) dst[c * rows] = 0;
          }
        }
      }
    }
  }
}

/* col2im for narrow output rows, the reverse of im2col_narrow. */
EMU_HOT_LOOP static void SFX(col2im_narrow)(const conv_geom *g, const void *col, int64_t channels,
                                            int64_t r0, int64_t r1, void *in, int64_t ldcol) {
  const T *restrict from = col;
  T *restrict x = in;
  const int64_t OW = g->OW, HW = g->HW, rows = g->KH * g->KW * ldcol;
  for (int64_t ki = 0; ki < g->KH; ki++) {
    int64_t hlo, hhi;
    valid_range(ki * g->DH - g->PH, g->SH, g->H, g->OH, &hlo, &hhi);
    if (hlo < r0) hlo = r0;
    if (hhi > r1) hhi = r1;
    for (int64_t kj = 0; kj < g->KW; kj++) {
      const int64_t offset = kj * g->DW - g->PW;
      int64_t lo, hi;
      valid_range(offset, g->SW, g->W, OW, &lo, &hi);
      const T *row = from + (ki * g->KW + kj) * ldcol - r0 * OW;
      for (int64_t oh = hlo; oh < hhi; oh++) {
        T *dst = x + (oh * g->SH - g->PH + ki * g->DH) * g->W + offset;
        for (int64_t ow = lo; ow < hi; ow++) {
          const T *s = row + oh * OW + ow;
          T *d = dst + ow * g->SW;
          for (int64_t c = 0; c < channels; c++) d[c * HW] += s[c * rows];
        }
      }
    }
  }
}

/* dst[r, i] = src[r, i] + values[r] (src[r, i] without values) for a rows x cols block, rows
 * `ld_dst` and `ld_src` apart: a product's result moved into place with the bias. */
EMU_HOT_LOOP static void SFX(add_rows)(void *dst, int64_t ld_dst, const void *src, int64_t ld_src,
                                       int64_t rows, int64_t cols, const void *values) {
  const T *restrict s = src, *v = values;
  T *restrict d = dst;
  for (int64_t r = 0; r < rows; r++) {
    if (v == NULL) { /* a copy: no + 0 turning -0 into 0 */
      for (int64_t i = 0; i < cols; i++) d[r * ld_dst + i] = s[r * ld_src + i];
      continue;
    }
    const T value = v[r];
    for (int64_t i = 0; i < cols; i++) d[r * ld_dst + i] = s[r * ld_src + i] + value;
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
