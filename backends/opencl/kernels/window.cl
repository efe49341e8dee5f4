/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Sliding-window kernels over NCHW images (a 1-d input is an image of height 1): direct
 * convolution forward and backward, max, average and adaptive average pooling forward and
 * backward.  Every kernel is in gather form -- one work-item per element it writes, reading
 * every element that contributes to it in a fixed order -- so nothing needs atomics and every
 * run gives the same bits.  The host (kernels/window.c) prefixes T (the storage type) and ACC
 * (float or double).
 */
typedef struct tb_window {
  long n, c, h, w;      /* the input */
  long oc, oh, ow;      /* the output (oc: output channels; pooling keeps c) */
  long kh, kw;          /* the window */
  long sh, sw, ph, pw, dh, dw;
  long groups;
  long in_strides[4];
  long weight_strides[4];
  long out_strides[4];
  long bias_stride;
  int has_bias;
} tb_window;

/* out[n, o, y, x] = bias[o] + sum over the group's channels and the window */
__kernel void tb_conv(OCL_PTR(T, out), OCL_PTR(T, in), OCL_PTR(T, weight), OCL_PTR(T, bias),
                      tb_window L) {
  long i = get_global_id(0);
  if (i >= L.n * L.oc * L.oh * L.ow) return;
  long x = i % L.ow, y = (i / L.ow) % L.oh, o = (i / (L.ow * L.oh)) % L.oc;
  long n = i / (L.ow * L.oh * L.oc);
  long cg = L.c / L.groups, g = o / (L.oc / L.groups);
  ACC acc = L.has_bias ? (ACC)OCL_AT(T, bias)[o * L.bias_stride] : (ACC)0;
  for (long ci = 0; ci < cg; ci++) {
    long c = g * cg + ci;
    for (long ky = 0; ky < L.kh; ky++) {
      long iy = y * L.sh - L.ph + ky * L.dh;
      if (iy < 0 || iy >= L.h) continue;
      for (long kx = 0; kx < L.kw; kx++) {
        long ix = x * L.sw - L.pw + kx * L.dw;
        if (ix < 0 || ix >= L.w) continue;
        acc += (ACC)OCL_AT(T, in)[n * L.in_strides[0] + c * L.in_strides[1] +
                                  iy * L.in_strides[2] + ix * L.in_strides[3]] *
               (ACC)OCL_AT(T, weight)[o * L.weight_strides[0] + ci * L.weight_strides[1] +
                                      ky * L.weight_strides[2] + kx * L.weight_strides[3]];
      }
    }
  }
  OCL_AT(T, out)[n * L.out_strides[0] + o * L.out_strides[1] + y * L.out_strides[2] +
                 x * L.out_strides[3]] = (T)acc;
}

/* grad_input[n, c, iy, ix]: every output position whose window read it */
__kernel void tb_conv_grad_input(OCL_PTR(T, grad_input), OCL_PTR(T, grad), OCL_PTR(T, weight),
                                 tb_window L, long gi_s0, long gi_s1, long gi_s2, long gi_s3) {
  long i = get_global_id(0);
  if (i >= L.n * L.c * L.h * L.w) return;
  long ix = i % L.w, iy = (i / L.w) % L.h, c = (i / (L.w * L.h)) % L.c;
  long n = i / (L.w * L.h * L.c);
  long cg = L.c / L.groups, og = L.oc / L.groups, g = c / cg, ci = c % cg;
  ACC acc = 0;
  for (long oo = 0; oo < og; oo++) {
    long o = g * og + oo;
    for (long ky = 0; ky < L.kh; ky++) {
      long ty = iy + L.ph - ky * L.dh;
      if (ty < 0 || ty % L.sh != 0 || ty / L.sh >= L.oh) continue;
      long y = ty / L.sh;
      for (long kx = 0; kx < L.kw; kx++) {
        long tx = ix + L.pw - kx * L.dw;
        if (tx < 0 || tx % L.sw != 0 || tx / L.sw >= L.ow) continue;
        long x = tx / L.sw;
        acc += (ACC)OCL_AT(T, grad)[n * L.out_strides[0] + o * L.out_strides[1] +
                                    y * L.out_strides[2] + x * L.out_strides[3]] *
               (ACC)OCL_AT(T, weight)[o * L.weight_strides[0] + ci * L.weight_strides[1] +
                                      ky * L.weight_strides[2] + kx * L.weight_strides[3]];
      }
    }
  }
  OCL_AT(T, grad_input)[n * gi_s0 + c * gi_s1 + iy * gi_s2 + ix * gi_s3] = (T)acc;
}

/* grad_weight[o, ci, ky, kx]: over the batch and every output position */
__kernel void tb_conv_grad_weight(OCL_PTR(T, grad_weight), OCL_PTR(T, grad), OCL_PTR(T, in),
                                  tb_window L, long gw_s0, long gw_s1, long gw_s2, long gw_s3) {
  long cg = L.c / L.groups;
  long i = get_global_id(0);
  if (i >= L.oc * cg * L.kh * L.kw) return;
  long kx = i % L.kw, ky = (i / L.kw) % L.kh, ci = (i / (L.kw * L.kh)) % cg;
  long o = i / (L.kw * L.kh * cg);
  long c = (o / (L.oc / L.groups)) * cg + ci;
  ACC acc = 0;
  for (long n = 0; n < L.n; n++) {
    for (long y = 0; y < L.oh; y++) {
      long iy = y * L.sh - L.ph + ky * L.dh;
      if (iy < 0 || iy >= L.h) continue;
      for (long x = 0; x < L.ow; x++) {
        long ix = x * L.sw - L.pw + kx * L.dw;
        if (ix < 0 || ix >= L.w) continue;
        acc += (ACC)OCL_AT(T, grad)[n * L.out_strides[0] + o * L.out_strides[1] +
                                    y * L.out_strides[2] + x * L.out_strides[3]] *
               (ACC)OCL_AT(T, in)[n * L.in_strides[0] + c * L.in_strides[1] +
                                  iy * L.in_strides[2] + ix * L.in_strides[3]];
      }
    }
  }
  OCL_AT(T, grad_weight)[o * gw_s0 + ci * gw_s1 + ky * gw_s2 + kx * gw_s3] = (T)acc;
}

/* grad_bias[o]: the sum of grad over the batch and every position */
__kernel void tb_conv_grad_bias(OCL_PTR(T, grad_bias), OCL_PTR(T, grad), tb_window L,
                                long gb_s0) {
  long o = get_global_id(0);
  if (o >= L.oc) return;
  ACC acc = 0;
  for (long n = 0; n < L.n; n++) {
    for (long y = 0; y < L.oh; y++) {
      for (long x = 0; x < L.ow; x++) {
        acc += (ACC)OCL_AT(T, grad)[n * L.out_strides[0] + o * L.out_strides[1] +
                                    y * L.out_strides[2] + x * L.out_strides[3]];
      }
    }
  }
  OCL_AT(T, grad_bias)[o * gb_s0] = (T)acc;
}

/* max pooling: out[n, c, y, x] = the window's maximum and its index iy * w + ix within the
 * image, as ATen's CPU loop picks them: the first of equal maxima, the last NaN */
__kernel void tb_max_pool(OCL_PTR(T, out), OCL_PTR(long, indices), OCL_PTR(T, in), tb_window L,
                          long ix_s0, long ix_s1, long ix_s2, long ix_s3) {
  long i = get_global_id(0);
  if (i >= L.n * L.c * L.oh * L.ow) return;
  long x = i % L.ow, y = (i / L.ow) % L.oh, c = (i / (L.ow * L.oh)) % L.c;
  long n = i / (L.ow * L.oh * L.c);
  long best_index = -1;
  T best = 0;
  for (long ky = 0; ky < L.kh; ky++) {
    long iy = y * L.sh - L.ph + ky * L.dh;
    if (iy < 0 || iy >= L.h) continue;
    for (long kx = 0; kx < L.kw; kx++) {
      long ix = x * L.sw - L.pw + kx * L.dw;
      if (ix < 0 || ix >= L.w) continue;
      T v = OCL_AT(T, in)[n * L.in_strides[0] + c * L.in_strides[1] + iy * L.in_strides[2] +
                          ix * L.in_strides[3]];
      if (best_index < 0 || v > best || isnan((ACC)v)) {
        best = v;
        best_index = iy * L.w + ix;
      }
    }
  }
  OCL_AT(T, out)[n * L.out_strides[0] + c * L.out_strides[1] + y * L.out_strides[2] +
                 x * L.out_strides[3]] = best;
  OCL_AT(long, indices)[n * ix_s0 + c * ix_s1 + y * ix_s2 + x * ix_s3] = best_index;
}

/* max pooling's backward: grad_input[n, c, iy, ix] sums the gradients of the outputs whose
 * index is that element, in the CPU's order (outputs row by row) */
__kernel void tb_max_pool_backward(OCL_PTR(T, grad_input), OCL_PTR(T, grad),
                                   OCL_PTR(long, indices), tb_window L, long ix_s0, long ix_s1,
                                   long ix_s2, long ix_s3) {
  long i = get_global_id(0);
  if (i >= L.n * L.c * L.h * L.w) return;
  long ix = i % L.w, iy = (i / L.w) % L.h, c = (i / (L.w * L.h)) % L.c;
  long n = i / (L.w * L.h * L.c);
  long self_index = iy * L.w + ix;
  ACC acc = 0;
  for (long ky = L.kh - 1; ky >= 0; ky--) {
    long ty = iy + L.ph - ky * L.dh;
    if (ty < 0 || ty % L.sh != 0 || ty / L.sh >= L.oh) continue;
    long y = ty / L.sh;
    for (long kx = L.kw - 1; kx >= 0; kx--) {
      long tx = ix + L.pw - kx * L.dw;
      if (tx < 0 || tx % L.sw != 0 || tx / L.sw >= L.ow) continue;
      long x = tx / L.sw;
      if (OCL_AT(long, indices)[n * ix_s0 + c * ix_s1 + y * ix_s2 + x * ix_s3] == self_index) {
        acc += (ACC)OCL_AT(T, grad)[n * L.out_strides[0] + c * L.out_strides[1] +
                                    y * L.out_strides[2] + x * L.out_strides[3]];
      }
    }
  }
  OCL_AT(T, grad_input)[n * L.in_strides[0] + c * L.in_strides[1] + iy * L.in_strides[2] +
                        ix * L.in_strides[3]] = (T)acc;
}

/* im2col for the GEMM path (groups 1): col[(c kh + ky) kw + kx][y ow + x] = image n's input
 * under that window position (0 in the padding), a contiguous [c kh kw, oh ow] matrix */
__kernel void tb_im2col(OCL_PTR(T, col), OCL_PTR(T, in), tb_window L, long n) {
  long i = get_global_id(0);
  long positions = L.oh * L.ow;
  if (i >= L.c * L.kh * L.kw * positions) return;
  long p = i % positions, r = i / positions;
  long kx = r % L.kw, ky = (r / L.kw) % L.kh, c = r / (L.kw * L.kh);
  long y = p / L.ow, x = p % L.ow;
  long iy = y * L.sh - L.ph + ky * L.dh, ix = x * L.sw - L.pw + kx * L.dw;
  T v = 0;
  if (iy >= 0 && iy < L.h && ix >= 0 && ix < L.w) {
    v = OCL_AT(T, in)[n * L.in_strides[0] + c * L.in_strides[1] + iy * L.in_strides[2] +
                      ix * L.in_strides[3]];
  }
  OCL_AT(T, col)[i] = v;
}

/* col2im, in gather form: grad_input[n, c, iy, ix] = the sum of the col entries (W^T grad, a
 * [c kh kw, oh ow] matrix) of every window position that read it, windows in order */
__kernel void tb_col2im(OCL_PTR(T, grad_input), OCL_PTR(T, col), tb_window L, long n,
                        long gi_s0, long gi_s1, long gi_s2, long gi_s3) {
  long i = get_global_id(0);
  if (i >= L.c * L.h * L.w) return;
  long ix = i % L.w, iy = (i / L.w) % L.h, c = i / (L.w * L.h);
  long positions = L.oh * L.ow;
  ACC acc = 0;
  for (long ky = 0; ky < L.kh; ky++) {
    long ty = iy + L.ph - ky * L.dh;
    if (ty < 0 || ty % L.sh != 0 || ty / L.sh >= L.oh) continue;
    long y = ty / L.sh;
    for (long kx = 0; kx < L.kw; kx++) {
      long tx = ix + L.pw - kx * L.dw;
      if (tx < 0 || tx % L.sw != 0 || tx / L.sw >= L.ow) continue;
      long x = tx / L.sw;
      acc += (ACC)OCL_AT(T, col)[((c * L.kh + ky) * L.kw + kx) * positions + y * L.ow + x];
    }
  }
  OCL_AT(T, grad_input)[n * gi_s0 + c * gi_s1 + iy * gi_s2 + ix * gi_s3] = (T)acc;
}

/* Average pooling's window of output (y, x), [*y0, *y1) x [*x0, *x1) clipped to the image, and
 * its divisor, as ATen's CPU kernel computes them: the window as far as the padding reaches
 * counts when `include_pad`, `divisor` (divisor_override; 0: none) overrides both. */
long tb_avg_window(long h, long w, long kh, long kw, long sh, long sw, long ph, long pw, long y,
                   long x, long include_pad, long divisor, long *y0, long *y1, long *x0,
                   long *x1) {
  long a = y * sh - ph, b = x * sw - pw;
  long c = min(a + kh, h + ph), d = min(b + kw, w + pw);
  long pool = (c - a) * (d - b);
  *y0 = max(a, 0L);
  *x0 = max(b, 0L);
  *y1 = min(c, h);
  *x1 = min(d, w);
  return divisor != 0 ? divisor : include_pad ? pool : (*y1 - *y0) * (*x1 - *x0);
}

/* avg pooling: out[n, c, y, x] = the window's sum over its divisor (0 for a window wholly in
 * the padding), the window summed row by row as the CPU does */
__kernel void tb_avg_pool(OCL_PTR(T, out), OCL_PTR(T, in), tb_window L, long include_pad,
                          long divisor) {
  long i = get_global_id(0);
  if (i >= L.n * L.c * L.oh * L.ow) return;
  long x = i % L.ow, y = (i / L.ow) % L.oh, c = (i / (L.ow * L.oh)) % L.c;
  long n = i / (L.ow * L.oh * L.c);
  long y0, y1, x0, x1;
  long div = tb_avg_window(L.h, L.w, L.kh, L.kw, L.sh, L.sw, L.ph, L.pw, y, x, include_pad,
                           divisor, &y0, &y1, &x0, &x1);
  ACC sum = 0;
  for (long iy = y0; iy < y1; iy++) {
    for (long ix = x0; ix < x1; ix++) {
      sum += (ACC)OCL_AT(T, in)[n * L.in_strides[0] + c * L.in_strides[1] +
                                iy * L.in_strides[2] + ix * L.in_strides[3]];
    }
  }
  OCL_AT(T, out)[n * L.out_strides[0] + c * L.out_strides[1] + y * L.out_strides[2] +
                 x * L.out_strides[3]] = y0 < y1 && x0 < x1 ? (T)(sum / (ACC)div) : (T)0;
}

/* avg pooling's backward: grad_input[n, c, iy, ix] sums grad_output / divisor over the outputs
 * whose window holds it, outputs in the CPU's order (row by row) */
__kernel void tb_avg_pool_backward(OCL_PTR(T, grad_input), OCL_PTR(T, grad), tb_window L,
                                   long include_pad, long divisor) {
  long i = get_global_id(0);
  if (i >= L.n * L.c * L.h * L.w) return;
  long ix = i % L.w, iy = (i / L.w) % L.h, c = (i / (L.w * L.h)) % L.c;
  long n = i / (L.w * L.h * L.c);
  ACC acc = 0;
  for (long ky = L.kh - 1; ky >= 0; ky--) {
    long ty = iy + L.ph - ky;
    if (ty < 0 || ty % L.sh != 0 || ty / L.sh >= L.oh) continue;
    long y = ty / L.sh;
    for (long kx = L.kw - 1; kx >= 0; kx--) {
      long tx = ix + L.pw - kx;
      if (tx < 0 || tx % L.sw != 0 || tx / L.sw >= L.ow) continue;
      long x = tx / L.sw;
      long y0, y1, x0, x1;
      long div = tb_avg_window(L.h, L.w, L.kh, L.kw, L.sh, L.sw, L.ph, L.pw, y, x, include_pad,
                               divisor, &y0, &y1, &x0, &x1);
      T g = OCL_AT(T, grad)[n * L.out_strides[0] + c * L.out_strides[1] + y * L.out_strides[2] +
                            x * L.out_strides[3]];
      acc += (ACC)(T)(g / (T)div);
    }
  }
  OCL_AT(T, grad_input)[n * L.in_strides[0] + c * L.in_strides[1] + iy * L.in_strides[2] +
                        ix * L.in_strides[3]] = (T)acc;
}

/* Adaptive pooling's window along one dimension: output a of b over an input of c elements,
 * [start, end) as ATen's start_index/end_index. */
long tb_adaptive_start(long a, long b, long c) { return (a / b) * c + ((a % b) * c) / b; }
long tb_adaptive_end(long a, long b, long c) { return 1 + ((a + 1) * c - 1) / b; }

/* adaptive avg pooling: out[n, c, y, x] = the window's sum / its height / its width, as the
 * CPU's kernel divides */
__kernel void tb_adaptive_avg_pool(OCL_PTR(T, out), OCL_PTR(T, in), tb_window L) {
  long i = get_global_id(0);
  if (i >= L.n * L.c * L.oh * L.ow) return;
  long x = i % L.ow, y = (i / L.ow) % L.oh, c = (i / (L.ow * L.oh)) % L.c;
  long n = i / (L.ow * L.oh * L.c);
  long y0 = tb_adaptive_start(y, L.oh, L.h), y1 = tb_adaptive_end(y, L.oh, L.h);
  long x0 = tb_adaptive_start(x, L.ow, L.w), x1 = tb_adaptive_end(x, L.ow, L.w);
  ACC sum = 0;
  for (long iy = y0; iy < y1; iy++) {
    for (long ix = x0; ix < x1; ix++) {
      sum += (ACC)OCL_AT(T, in)[n * L.in_strides[0] + c * L.in_strides[1] +
                                iy * L.in_strides[2] + ix * L.in_strides[3]];
    }
  }
  OCL_AT(T, out)[n * L.out_strides[0] + c * L.out_strides[1] + y * L.out_strides[2] +
                 x * L.out_strides[3]] = (T)(sum / (ACC)(y1 - y0) / (ACC)(x1 - x0));
}

/* adaptive avg pooling's backward: grad_input[n, c, iy, ix] sums grad_output / height / width
 * over the outputs whose window holds it (at most the range below), in the CPU's order */
__kernel void tb_adaptive_avg_pool_backward(OCL_PTR(T, grad_input), OCL_PTR(T, grad),
                                            tb_window L) {
  long i = get_global_id(0);
  if (i >= L.n * L.c * L.h * L.w) return;
  long ix = i % L.w, iy = (i / L.w) % L.h, c = (i / (L.w * L.h)) % L.c;
  long n = i / (L.w * L.h * L.c);
  ACC acc = 0;
  long ya = max(iy * L.oh / L.h - 1, 0L), yb = min((iy + 1) * L.oh / L.h + 2, L.oh);
  long xa = max(ix * L.ow / L.w - 1, 0L), xb = min((ix + 1) * L.ow / L.w + 2, L.ow);
  for (long y = ya; y < yb; y++) {
    long y0 = tb_adaptive_start(y, L.oh, L.h), y1 = tb_adaptive_end(y, L.oh, L.h);
    if (iy < y0 || iy >= y1) continue;
    for (long x = xa; x < xb; x++) {
      long x0 = tb_adaptive_start(x, L.ow, L.w), x1 = tb_adaptive_end(x, L.ow, L.w);
      if (ix < x0 || ix >= x1) continue;
      T g = OCL_AT(T, grad)[n * L.out_strides[0] + c * L.out_strides[1] + y * L.out_strides[2] +
                            x * L.out_strides[3]];
      acc += (ACC)(T)(g / (T)(y1 - y0) / (T)(x1 - x0));
    }
  }
  OCL_AT(T, grad_input)[n * L.in_strides[0] + c * L.in_strides[1] + iy * L.in_strides[2] +
                        ix * L.in_strides[3]] = (T)acc;
}

/* ATen's nearest_idx (legacy "nearest") and nearest_exact_idx: the source of output o along an
 * axis of `in` elements, `scale` being 1 / scale_factor or in / out, in float (the host's). */
long tb_nearest_source(long o, long in, long out, float scale, int exact) {
#pragma OPENCL FP_CONTRACT OFF
  if (!exact && out == in) return o;
  if (!exact && out == 2 * in) return o >> 1;
  long source = exact ? (long)floor(((float)o + 0.5f) * scale) : (long)floor((float)o * scale);
  return min(source, in - 1);
}

/* The first output along the axis whose source is at least `target` (`out` if none): the
 * source never decreases along the output, so a binary search finds it. */
long tb_nearest_first(long target, long in, long out, float scale, int exact) {
  long lo = 0, hi = out;
  while (lo < hi) {
    long mid = (lo + hi) / 2;
    if (tb_nearest_source(mid, in, out, scale, exact) >= target) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

/* nearest upsampling: out[n, c, y, x] = in[n, c, source(y), source(x)] */
__kernel void tb_upsample_nearest(OCL_PTR(T, out), OCL_PTR(T, in), tb_window L, float scale_h,
                                  float scale_w, int exact) {
  long i = get_global_id(0);
  if (i >= L.n * L.c * L.oh * L.ow) return;
  long x = i % L.ow, y = (i / L.ow) % L.oh, c = (i / (L.ow * L.oh)) % L.c;
  long n = i / (L.ow * L.oh * L.c);
  long sy = tb_nearest_source(y, L.h, L.oh, scale_h, exact);
  long sx = tb_nearest_source(x, L.w, L.ow, scale_w, exact);
  OCL_AT(T, out)[n * L.out_strides[0] + c * L.out_strides[1] + y * L.out_strides[2] +
                 x * L.out_strides[3]] = OCL_AT(T, in)[n * L.in_strides[0] + c * L.in_strides[1] +
                                                       sy * L.in_strides[2] + sx * L.in_strides[3]];
}

/* its backward: grad_input[n, c, iy, ix] sums the gradients of the outputs whose source it is
 * (a block of rows by a block of columns), row by row as the CPU adds them: the same bits */
__kernel void tb_upsample_nearest_backward(OCL_PTR(T, grad_input), OCL_PTR(T, grad), tb_window L,
                                           float scale_h, float scale_w, int exact) {
  long i = get_global_id(0);
  if (i >= L.n * L.c * L.h * L.w) return;
  long ix = i % L.w, iy = (i / L.w) % L.h, c = (i / (L.w * L.h)) % L.c;
  long n = i / (L.w * L.h * L.c);
  long y0 = tb_nearest_first(iy, L.h, L.oh, scale_h, exact);
  long y1 = tb_nearest_first(iy + 1, L.h, L.oh, scale_h, exact);
  long x0 = tb_nearest_first(ix, L.w, L.ow, scale_w, exact);
  long x1 = tb_nearest_first(ix + 1, L.w, L.ow, scale_w, exact);
  ACC acc = 0;
  for (long y = y0; y < y1; y++) {
    for (long x = x0; x < x1; x++) {
      acc += (ACC)OCL_AT(T, grad)[n * L.out_strides[0] + c * L.out_strides[1] +
                                  y * L.out_strides[2] + x * L.out_strides[3]];
    }
  }
  OCL_AT(T, grad_input)[n * L.in_strides[0] + c * L.in_strides[1] + iy * L.in_strides[2] +
                        ix * L.in_strides[3]] = (T)acc;
}

/* ATen's compute_source_index_and_lambda along one axis: output o reads sources *i0 and *i1
 * with weights *l0 and *l1, `ratio` the host's (align_corners' (in - 1) / (out - 1), else
 * 1 / scale_factor or in / out) in ACC. */
void tb_linear_source(long o, long in, long out, int align_corners, ACC ratio, long *i0, long *i1,
                      ACC *l0, ACC *l1) {
#pragma OPENCL FP_CONTRACT OFF
  if (out == in) {
    *i0 = *i1 = o;
    *l0 = 1;
    *l1 = 0;
    return;
  }
  ACC real = align_corners ? ratio * (ACC)o : ratio * ((ACC)o + (ACC)0.5) - (ACC)0.5;
  if (!align_corners && real < 0) real = 0;
  long index = min((long)floor((float)real), in - 1);
  ACC lambda = clamp(real - (ACC)index, (ACC)0, (ACC)1);
  *i0 = index;
  *i1 = index + (index < in - 1 ? 1 : 0);
  *l1 = lambda;
  *l0 = (ACC)1 - lambda;
}

/* The first output along the axis whose first source is at least `target` (`out` if none). */
long tb_linear_first(long target, long in, long out, int align_corners, ACC ratio) {
  long lo = 0, hi = out;
  while (lo < hi) {
    long mid = (lo + hi) / 2, i0, i1;
    ACC l0, l1;
    tb_linear_source(mid, in, out, align_corners, ratio, &i0, &i1, &l0, &l1);
    if (i0 >= target) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

/* bilinear upsampling: out = (x[h0, w0] w0 + x[h0, w1] w1) h0 + (x[h1, w0] w0 + x[h1, w1] w1)
 * h1, the order of ATen's separable kernel */
__kernel void tb_upsample_bilinear(OCL_PTR(T, out), OCL_PTR(T, in), tb_window L,
                                   int align_corners, ACC ratio_h, ACC ratio_w) {
#pragma OPENCL FP_CONTRACT OFF
  long i = get_global_id(0);
  if (i >= L.n * L.c * L.oh * L.ow) return;
  long x = i % L.ow, y = (i / L.ow) % L.oh, c = (i / (L.ow * L.oh)) % L.c;
  long n = i / (L.ow * L.oh * L.c);
  long h0, h1, w0, w1;
  ACC hl0, hl1, wl0, wl1;
  tb_linear_source(y, L.h, L.oh, align_corners, ratio_h, &h0, &h1, &hl0, &hl1);
  tb_linear_source(x, L.w, L.ow, align_corners, ratio_w, &w0, &w1, &wl0, &wl1);
  __global const T *plane = OCL_AT(T, in) + n * L.in_strides[0] + c * L.in_strides[1];
  long r0 = h0 * L.in_strides[2], r1 = h1 * L.in_strides[2];
  long c0 = w0 * L.in_strides[3], c1 = w1 * L.in_strides[3];
  ACC t0 = (ACC)plane[r0 + c0] * wl0 + (ACC)plane[r0 + c1] * wl1;
  ACC t1 = (ACC)plane[r1 + c0] * wl0 + (ACC)plane[r1 + c1] * wl1;
  OCL_AT(T, out)[n * L.out_strides[0] + c * L.out_strides[1] + y * L.out_strides[2] +
                 x * L.out_strides[3]] = (T)(t0 * hl0 + t1 * hl1);
}

/* its backward: grad_input[n, c, iy, ix] sums h * w * g over the outputs that read it (those
 * whose first source row is iy - 1 or iy, and column likewise), in the CPU's order: outputs row
 * by row, each output's four sources (h0, w0), (h0, w1), (h1, w0), (h1, w1) in turn */
__kernel void tb_upsample_bilinear_backward(OCL_PTR(T, grad_input), OCL_PTR(T, grad), tb_window L,
                                            int align_corners, ACC ratio_h, ACC ratio_w) {
#pragma OPENCL FP_CONTRACT OFF
  long i = get_global_id(0);
  if (i >= L.n * L.c * L.h * L.w) return;
  long ix = i % L.w, iy = (i / L.w) % L.h, c = (i / (L.w * L.h)) % L.c;
  long n = i / (L.w * L.h * L.c);
  long ya = tb_linear_first(iy - 1, L.h, L.oh, align_corners, ratio_h);
  long yb = tb_linear_first(iy + 1, L.h, L.oh, align_corners, ratio_h);
  long xa = tb_linear_first(ix - 1, L.w, L.ow, align_corners, ratio_w);
  long xb = tb_linear_first(ix + 1, L.w, L.ow, align_corners, ratio_w);
  ACC acc = 0;
  for (long y = ya; y < yb; y++) {
    long h0, h1;
    ACC hl0, hl1;
    tb_linear_source(y, L.h, L.oh, align_corners, ratio_h, &h0, &h1, &hl0, &hl1);
    for (long x = xa; x < xb; x++) {
      long w0, w1;
      ACC wl0, wl1;
      tb_linear_source(x, L.w, L.ow, align_corners, ratio_w, &w0, &w1, &wl0, &wl1);
      ACC g = (ACC)OCL_AT(T, grad)[n * L.out_strides[0] + c * L.out_strides[1] +
                                   y * L.out_strides[2] + x * L.out_strides[3]];
      if (h0 == iy && w0 == ix) acc += hl0 * wl0 * g;
      if (h0 == iy && w1 == ix) acc += hl0 * wl1 * g;
      if (h1 == iy && w0 == ix) acc += hl1 * wl0 * g;
      if (h1 == iy && w1 == ix) acc += hl1 * wl1 * g;
    }
  }
  OCL_AT(T, grad_input)[n * L.in_strides[0] + c * L.in_strides[1] + iy * L.in_strides[2] +
                        ix * L.in_strides[3]] = (T)acc;
}
