/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Sliding-window operators: convolution (convolution_overrideable and its backward, which
 * ATen selects for an accelerator as for CUDA: 1-d and 2-d, any stride, padding, dilation and
 * groups; transposed convolutions are declined), 2-d max pooling with indices, average
 * pooling, adaptive average pooling and nearest and bilinear upsampling, each with its
 * backward.  Convolutions with groups 1 unfold
 * each image into the call's workspace (im2col) for a GEMM (blas.c: the native engine or CLBlast);
 * the others run window.cl's direct kernels in gather form.  No atomics anywhere: the same bits
 * every run.
 */
#include <stdio.h>
#include <string.h>

#include "kernels.h"

/* window.cl's tb_window, byte for byte. */
typedef struct ocl_window {
  cl_long n, c, h, w;
  cl_long oc, oh, ow;
  cl_long kh, kw;
  cl_long sh, sw, ph, pw, dh, dw;
  cl_long groups;
  cl_long in_strides[4];
  cl_long weight_strides[4];
  cl_long out_strides[4];
  cl_long bias_stride;
  cl_int has_bias;
} ocl_window;

/* An image tensor as 4 sizes and strides: [n, c, h, w], or [n, c, w] with h = 1 when
 * `images` (a batch of 1-d signals), or [c, h, w] with n = 1 otherwise (an unbatched image). */
static bool nchw(const tb_tensor *t, bool signals, int64_t sizes[4], cl_long strides[4]) {
  if (t->ndim == 4) {
    for (int d = 0; d < 4; d++) {
      sizes[d] = t->sizes[d];
      strides[d] = t->strides[d];
    }
    return true;
  }
  if (t->ndim != 3) return false;
  int map[4] = {0, 1, -1, 2}; /* batched signals */
  if (!signals) map[0] = -1, map[1] = 0, map[2] = 1, map[3] = 2;
  for (int d = 0; d < 4; d++) {
    sizes[d] = map[d] < 0 ? 1 : t->sizes[map[d]];
    strides[d] = map[d] < 0 ? 0 : t->strides[map[d]];
  }
  return true;
}

/* A list argument of `spatial` values (or one, repeated; empty: `fallback`). */
static bool pair(const tb_value *v, int spatial, int64_t fallback_h, int64_t fallback_w, int64_t *h,
                 int64_t *w) {
  if (v->kind != TB_VALUE_INT_LIST || v->as.ints.count > 2) return false;
  int64_t count = v->as.ints.count;
  if (count == 0) {
    *h = fallback_h;
    *w = fallback_w;
    return true;
  }
  if (spatial == 1) { /* a 1-d signal: height 1 */
    if (count != 1) return false;
    *h = fallback_h;
    *w = v->as.ints.items[0];
    return true;
  }
  *h = v->as.ints.items[0];
  *w = v->as.ints.items[count - 1];
  return true;
}

static tb_status kernel_for(tb_context ctx, int32_t device, tb_dtype dtype, const char *name,
                            ocl_kernel **kernel) {
  char defines[128];
  snprintf(defines, sizeof defines, "#define T %s\n#define ACC %s\n", ocl_type_name(dtype),
           dtype == TB_DTYPE_FLOAT64 ? "double" : "float");
  const char *sources[] = {defines, ocl_source_window};
  return ocl_kernel_get(ctx, device, defines, sources, 2, name, kernel);
}

/* Sets the places, the layout and `extra` longs, and enqueues `count` work-items. */
static tb_status launch(tb_context ctx, int32_t device, const tb_kernel_call *call, tb_dtype dtype,
                        const char *name, const ocl_place *places, int n_places,
                        const ocl_window *layout, const cl_long *extra, int n_extra,
                        int64_t count) {
  if (count == 0) return TB_OK;
  ocl_kernel *kernel = NULL;
  tb_status status = kernel_for(ctx, device, dtype, name, &kernel);
  if (status != TB_OK) return status;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  for (int k = 0; k < n_places; k++) ocl_arg_place(&args, &places[k]);
  ocl_arg_value(&args, sizeof *layout, layout);
  for (int k = 0; k < n_extra; k++) ocl_arg_value(&args, sizeof extra[k], &extra[k]);
  status = ocl_args_done(&args);
  if (status == TB_OK) status = ocl_enqueue(ctx, device, call, kernel, count, name);
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* The convolution's layout from its arguments (input, weight, then stride, padding, dilation,
 * transposed, output_padding, groups at args[first ..]); `out` gives the output's sizes. */
static bool conv_layout(const tb_tensor *input, const tb_tensor *weight, const tb_tensor *out,
                        const tb_value *a, ocl_window *L) {
  memset(L, 0, sizeof *L);
  int64_t in[4], wt[4], os[4];
  if (input->ndim != weight->ndim || out->ndim != input->ndim || a[3].kind != TB_VALUE_BOOL ||
      a[3].as.b || a[5].kind != TB_VALUE_INT || a[5].as.i < 1 ||
      !nchw(input, true, in, L->in_strides) || !nchw(weight, true, wt, L->weight_strides) ||
      !nchw(out, true, os, L->out_strides)) {
    return false;
  }
  int spatial = input->ndim - 2;
  int64_t sh, sw, ph, pw, dh, dw;
  if (!pair(&a[0], spatial, 1, 1, &sh, &sw) || !pair(&a[1], spatial, 0, 0, &ph, &pw) ||
      !pair(&a[2], spatial, 1, 1, &dh, &dw) || sh < 1 || sw < 1 || ph < 0 || pw < 0 || dh < 1 ||
      dw < 1) {
    return false;
  }
  int64_t groups = a[5].as.i;
  if (in[1] % groups != 0 || wt[0] % groups != 0 || wt[1] * groups != in[1] || os[0] != in[0] ||
      os[1] != wt[0]) {
    return false;
  }
  L->n = in[0], L->c = in[1], L->h = in[2], L->w = in[3];
  L->oc = wt[0], L->oh = os[2], L->ow = os[3], L->kh = wt[2], L->kw = wt[3];
  L->sh = sh, L->sw = sw, L->ph = ph, L->pw = pw, L->dh = dh, L->dw = dw, L->groups = groups;
  return true;
}

/* ---- the GEMM path (groups 1, a GEMM engine): im2col into the call's workspace, one
 * GEMM per image against the [oc, c kh kw] weight, col2im in gather form ---- */

/* Whether c x h x w elements with strides s[1..3] are one contiguous row-major block (strides
 * of dimensions of size 1 never matter). */
static bool block_dense(int64_t c, int64_t h, int64_t w, const cl_long *s) {
  return (w == 1 || s[3] == 1) && (h == 1 || s[2] == w) && (c == 1 || s[1] == h * w);
}

/* Whether the GEMM path takes this convolution: out (grad) and weight dense per image, a GEMM
 * engine for the device (blas.c), a workspace to ask for. */
static bool gemm_path(tb_context ctx, int32_t device, const tb_kernel_call *call,
                      const ocl_window *L) {
  return call->workspace != NULL && L->groups == 1 &&
         block_dense(L->oc, L->oh, L->ow, L->out_strides) &&
         block_dense(L->c, L->kh, L->kw, L->weight_strides) &&
         (L->oc == 1 || L->weight_strides[0] == L->c * L->kh * L->kw) && ocl_have_gemm(ctx, device);
}

/* Zeroes the column matrix at `ptr`: CLBlast reads C even with beta 0 (0 * Inf is NaN), and
 * the cache's blocks, like the previous image's columns, hold old values. */
static tb_status zero_columns(tb_context ctx, const tb_kernel_call *call, int32_t device,
                              const ocl_window *L, tb_dtype dtype, void *ptr) {
  int64_t count = L->c * L->kh * L->kw * L->oh * L->ow, stride = 1;
  tb_tensor flat = {sizeof(tb_tensor), ptr, dtype, device, 1, &count, &stride};
  ocl_operand zero[1] = {{NULL, 0, 0}};
  ocl_map_spec spec = {"x0", dtype, 1};
  return ocl_map(ctx, call, &spec, &flat, zero, 1, 1);
}

/* A column matrix [c kh kw, oh ow] in the call's workspace: its address and place. */
static tb_status column_buffer(tb_context ctx, const tb_kernel_call *call, int32_t device,
                               const ocl_window *L, tb_dtype dtype, void **ptr, ocl_place *place) {
  size_t bytes = (size_t)(L->c * L->kh * L->kw * L->oh * L->ow) * ocl_dtype_size(dtype);
  tb_status status = call->workspace(call, bytes, ptr);
  return status == TB_OK ? ocl_place_of(ctx, device, *ptr, bytes, "the workspace", place) : status;
}

/* Fills `t` with zeros, or with bias[o] along dimension 1 (a [oc] tensor). */
static tb_status fill_channels(tb_context ctx, const tb_kernel_call *call, const tb_tensor *t,
                               const tb_tensor *bias) {
  ocl_operand in[1] = {{NULL, 0, 0}};
  int64_t strides[4] = {0, 0, 0, 0};
  tb_tensor view;
  if (bias != NULL) {
    view = *bias;
    view.ndim = t->ndim;
    view.sizes = t->sizes;
    strides[1] = bias->strides[0];
    view.strides = strides;
    in[0].tensor = &view;
  }
  ocl_map_spec spec = {"x0", t->dtype, 1};
  return ocl_map(ctx, call, &spec, t, in, 1, 1);
}

static tb_status conv_forward_gemm(tb_context ctx, const tb_kernel_call *call, int32_t device,
                                   const ocl_window *L, const tb_tensor *out, const tb_tensor *bias,
                                   const ocl_place *p) {
  tb_dtype dtype = out->dtype;
  tb_status status = fill_channels(ctx, call, out, bias);
  if (status != TB_OK || L->n == 0 || L->oc == 0 || L->oh * L->ow == 0) return status;
  size_t k = (size_t)(L->c * L->kh * L->kw), positions = (size_t)(L->oh * L->ow);
  if (k == 0) return TB_OK;
  ocl_place col;
  void *col_ptr = NULL;
  status = column_buffer(ctx, call, device, L, dtype, &col_ptr, &col);
  for (int64_t n = 0; n < L->n && status == TB_OK; n++) {
    ocl_place im2col[2] = {col, p[1]};
    cl_long image = n;
    status = launch(ctx, device, call, dtype, "tb_im2col", im2col, 2, L, &image, 1,
                    (int64_t)(k * positions));
    if (status == TB_OK) {
      status =
          ocl_gemm(ctx, call, device, dtype, false, false, (size_t)L->oc, positions, k, 1, &p[2], 0,
                   k, &col, 0, positions, 1, &p[0], (size_t)(n * L->out_strides[0]), positions);
    }
  }
  return status;
}

/* grad_input through col = W^T grad[n] and col2im; grad_weight = the sum over images of
 * grad[n] col(input n)^T, accumulated image by image (the same order every run). */
static tb_status conv_backward_gemm(tb_context ctx, const tb_kernel_call *call, int32_t device,
                                    const ocl_window *L, const tb_tensor *grad,
                                    const tb_tensor *input, const tb_tensor *weight,
                                    const tb_tensor *gi, const cl_long *gi_strides,
                                    const tb_tensor *gw) {
  tb_dtype dtype = grad->dtype;
  size_t k = (size_t)(L->c * L->kh * L->kw), positions = (size_t)(L->oh * L->ow);
  ocl_place pg, pin, pw, col, pgi, pgw;
  tb_status status = TB_OK;
  if (gw != NULL) status = fill_channels(ctx, call, gw, NULL); /* CLBlast reads C */
  if (gi != NULL && status == TB_OK && (positions == 0 || L->oc == 0)) {
    status = fill_channels(ctx, call, gi, NULL); /* nothing flows back */
  }
  if (status != TB_OK || k == 0 || L->n == 0 || positions == 0 || L->oc == 0) return status;
  status = ocl_tensor_place(ctx, device, grad, "grad_output", &pg);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, input, "input", &pin);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, weight, "weight", &pw);
  if (status == TB_OK && gi != NULL) status = ocl_tensor_place(ctx, device, gi, "grad_input", &pgi);
  if (status == TB_OK && gw != NULL)
    status = ocl_tensor_place(ctx, device, gw, "grad_weight", &pgw);
  void *col_ptr = NULL;
  if (status == TB_OK) status = column_buffer(ctx, call, device, L, dtype, &col_ptr, &col);
  for (int64_t n = 0; n < L->n && status == TB_OK; n++) {
    size_t grad_offset = (size_t)(n * L->out_strides[0]);
    cl_long image[5] = {n, 0, 0, 0, 0};
    if (gi != NULL) {
      /* col = W^T grad[n] */
      status = zero_columns(ctx, call, device, L, dtype, col_ptr);
      if (status == TB_OK) {
        status = ocl_gemm(ctx, call, device, dtype, true, false, k, positions, (size_t)L->oc, 1,
                          &pw, 0, k, &pg, grad_offset, positions, 0, &col, 0, positions);
      }
      ocl_place col2im[2] = {pgi, col};
      memcpy(&image[1], gi_strides, 4 * sizeof *gi_strides);
      if (status == TB_OK) {
        status = launch(ctx, device, call, dtype, "tb_col2im", col2im, 2, L, image, 5,
                        L->c * L->h * L->w);
      }
    }
    if (gw != NULL && status == TB_OK) {
      /* grad_weight += grad[n] col(input n)^T */
      ocl_place im2col[2] = {col, pin};
      status = launch(ctx, device, call, dtype, "tb_im2col", im2col, 2, L, image, 1,
                      (int64_t)(k * positions));
      if (status == TB_OK) {
        status = ocl_gemm(ctx, call, device, dtype, false, true, (size_t)L->oc, k, positions, 1,
                          &pg, grad_offset, positions, &col, 0, positions, 1, &pgw, 0, k);
      }
    }
  }
  return status;
}

/* convolution_overrideable [input, weight, bias?, stride, padding, dilation, transposed,
 * output_padding, groups, out] */
static tb_status conv(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 10 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[9].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *input = a[0].as.tensor, *weight = a[1].as.tensor, *out = a[9].as.tensor;
  const tb_tensor *bias = a[2].kind == TB_VALUE_TENSOR ? a[2].as.tensor : NULL;
  ocl_window L;
  if (!ocl_is_float(input->dtype) || weight->dtype != input->dtype || out->dtype != input->dtype ||
      (bias != NULL && (bias->dtype != input->dtype || bias->ndim != 1)) ||
      !conv_layout(input, weight, out, &a[3], &L) || (bias != NULL && bias->sizes[0] != L.oc)) {
    return ocl_decline(call, "a transposed convolution, or a layout or dtype it does not take");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (input->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  L.has_bias = bias != NULL;
  L.bias_stride = bias != NULL ? bias->strides[0] : 0;
  ocl_place p[4];
  status = ocl_tensor_place(ctx, device, out, "out", &p[0]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, input, "input", &p[1]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, weight, "weight", &p[2]);
  p[3] = p[2];
  if (status == TB_OK && bias != NULL) status = ocl_tensor_place(ctx, device, bias, "bias", &p[3]);
  if (status != TB_OK) return status;
  if (gemm_path(ctx, device, call, &L))
    return conv_forward_gemm(ctx, call, device, &L, out, bias, p);
  return launch(ctx, device, call, input->dtype, "tb_conv", p, 4, &L, NULL, 0,
                L.n * L.oc * L.oh * L.ow);
}

/* grad_output copied in [n, c, h, w] order into the call's workspace, so that the GEMM path
 * takes a gradient that is not dense per image: `out.sum().backward()` hands the convolution
 * an expanded gradient (every stride 0), which the direct kernels read 30-50x slower than a
 * copy and the GEMM path cost.  `dense` and `sizes`/`strides` describe the copy afterwards, and
 * L's output strides are its strides. */
static tb_status dense_grad(tb_context ctx, const tb_kernel_call *call, const tb_tensor *grad,
                            ocl_window *L, tb_tensor *dense, int64_t sizes[4], int64_t strides[4]) {
  const int64_t shape[4] = {L->n, L->oc, L->oh, L->ow};
  int64_t step = 1;
  for (int d = 3; d >= 0; d--) {
    sizes[d] = shape[d];
    strides[d] = step;
    L->out_strides[d] = step;
    step *= shape[d];
  }
  void *ptr = NULL;
  tb_status status = call->workspace(call, (size_t)step * ocl_dtype_size(grad->dtype), &ptr);
  if (status != TB_OK) return status;
  /* The copy reads grad with its own strides, viewed as [n, c, h, w]. */
  tb_tensor view = *grad;
  int64_t view_strides[4];
  cl_long image_strides[4];
  int64_t image_sizes[4];
  if (!nchw(grad, true, image_sizes, image_strides)) {
    return ocl_decline(call, "a gradient it cannot view as images");
  }
  for (int d = 0; d < 4; d++) view_strides[d] = image_strides[d];
  view.ndim = 4;
  view.sizes = sizes;
  view.strides = view_strides;
  *dense = (tb_tensor){sizeof(tb_tensor), ptr, grad->dtype, grad->device, 4, sizes, strides};
  ocl_operand in[1] = {{&view, 0, 0}};
  ocl_map_spec copy = {"x0", grad->dtype, 1};
  return ocl_map(ctx, call, &copy, dense, in, 1, 1);
}

/* convolution_backward_overrideable [grad_output, input, weight, stride, padding, dilation,
 * transposed, output_padding, groups, output_mask, grad_input?, grad_weight?, grad_bias?] */
static tb_status conv_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 13 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[2].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *grad = a[0].as.tensor, *input = a[1].as.tensor, *weight = a[2].as.tensor;
  const tb_tensor *gi = a[10].kind == TB_VALUE_TENSOR ? a[10].as.tensor : NULL;
  const tb_tensor *gw = a[11].kind == TB_VALUE_TENSOR ? a[11].as.tensor : NULL;
  const tb_tensor *gb = a[12].kind == TB_VALUE_TENSOR ? a[12].as.tensor : NULL;
  ocl_window L;
  int64_t gi_sizes[4], gw_sizes[4];
  cl_long gi_strides[4] = {0}, gw_strides[4] = {0};
  bool ok = ocl_is_float(grad->dtype) && input->dtype == grad->dtype &&
            weight->dtype == grad->dtype && conv_layout(input, weight, grad, &a[3], &L);
  if (ok && gi != NULL) {
    ok = gi->dtype == grad->dtype && gi->ndim == input->ndim &&
         nchw(gi, true, gi_sizes, gi_strides) && gi_sizes[0] == L.n && gi_sizes[1] == L.c &&
         gi_sizes[2] == L.h && gi_sizes[3] == L.w;
  }
  if (ok && gw != NULL) {
    ok = gw->dtype == grad->dtype && gw->ndim == weight->ndim &&
         nchw(gw, true, gw_sizes, gw_strides) && gw_sizes[0] == L.oc && gw_sizes[2] == L.kh &&
         gw_sizes[3] == L.kw && gw_sizes[1] * L.groups == L.c;
  }
  if (ok && gb != NULL) {
    ok = gb->dtype == grad->dtype && gb->ndim == 1 && gb->sizes[0] == L.oc;
  }
  if (!ok) {
    return ocl_decline(call, "a transposed convolution, or a layout or dtype it does not take");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (grad->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_place p[3];
  bool gemm = gw == NULL || (block_dense(L.c, L.kh, L.kw, gw_strides) &&
                             (L.oc == 1 || gw_strides[0] == L.c * L.kh * L.kw));
  tb_tensor dense;
  int64_t dense_sizes[4], dense_strides[4];
  if (gemm && !block_dense(L.oc, L.oh, L.ow, L.out_strides) && call->workspace != NULL) {
    ocl_window dense_layout = L;
    dense_layout.out_strides[1] = L.oh * L.ow; /* what the copy gives, to ask gemm_path */
    dense_layout.out_strides[2] = L.ow;
    dense_layout.out_strides[3] = 1;
    if (gemm_path(ctx, device, call, &dense_layout)) {
      status = dense_grad(ctx, call, grad, &L, &dense, dense_sizes, dense_strides);
      if (status != TB_OK) return status;
      grad = &dense;
    }
  }
  gemm = gemm && gemm_path(ctx, device, call, &L);
  if (gemm) {
    status = conv_backward_gemm(ctx, call, device, &L, grad, input, weight, gi, gi_strides, gw);
  }
  if (!gemm && gi != NULL) {
    status = ocl_tensor_place(ctx, device, gi, "grad_input", &p[0]);
    if (status == TB_OK) status = ocl_tensor_place(ctx, device, grad, "grad_output", &p[1]);
    if (status == TB_OK) status = ocl_tensor_place(ctx, device, weight, "weight", &p[2]);
    if (status == TB_OK) {
      status = launch(ctx, device, call, grad->dtype, "tb_conv_grad_input", p, 3, &L, gi_strides, 4,
                      L.n * L.c * L.h * L.w);
    }
  }
  if (!gemm && status == TB_OK && gw != NULL) {
    status = ocl_tensor_place(ctx, device, gw, "grad_weight", &p[0]);
    if (status == TB_OK) status = ocl_tensor_place(ctx, device, grad, "grad_output", &p[1]);
    if (status == TB_OK) status = ocl_tensor_place(ctx, device, input, "input", &p[2]);
    if (status == TB_OK) {
      status = launch(ctx, device, call, grad->dtype, "tb_conv_grad_weight", p, 3, &L, gw_strides,
                      4, L.oc * (L.c / L.groups) * L.kh * L.kw);
    }
  }
  if (status == TB_OK && gb != NULL) {
    cl_long gb_stride = gb->strides[0];
    status = ocl_tensor_place(ctx, device, gb, "grad_bias", &p[0]);
    if (status == TB_OK) status = ocl_tensor_place(ctx, device, grad, "grad_output", &p[1]);
    if (status == TB_OK) {
      status = launch(ctx, device, call, grad->dtype, "tb_conv_grad_bias", p, 2, &L, &gb_stride, 1,
                      L.oc);
    }
  }
  return status;
}

/* The pooling window's layout: self and its output `out` (3-d: one unbatched image), then
 * kernel_size, stride, padding, dilation at a[0 ..]. */
static bool pool_layout(const tb_tensor *self, const tb_tensor *out, const tb_value *a,
                        ocl_window *L) {
  memset(L, 0, sizeof *L);
  int64_t in[4], os[4];
  if (out->ndim != self->ndim || !nchw(self, false, in, L->in_strides) ||
      !nchw(out, false, os, L->out_strides)) {
    return false;
  }
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  if (!pair(&a[0], 2, 0, 0, &kh, &kw) || kh < 1 || kw < 1 || !pair(&a[1], 2, kh, kw, &sh, &sw) ||
      !pair(&a[2], 2, 0, 0, &ph, &pw) || !pair(&a[3], 2, 1, 1, &dh, &dw) || sh < 1 || sw < 1 ||
      ph < 0 || pw < 0 || dh < 1 || dw < 1 || os[0] != in[0] || os[1] != in[1]) {
    return false;
  }
  L->n = in[0], L->c = in[1], L->h = in[2], L->w = in[3];
  L->oc = in[1], L->oh = os[2], L->ow = os[3], L->kh = kh, L->kw = kw;
  L->sh = sh, L->sw = sw, L->ph = ph, L->pw = pw, L->dh = dh, L->dw = dw, L->groups = 1;
  return true;
}

/* max_pool2d_with_indices.out [self, kernel_size, stride, padding, dilation, ceil_mode, out,
 * indices] */
static tb_status max_pool(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 8 || a[0].kind != TB_VALUE_TENSOR || a[6].kind != TB_VALUE_TENSOR ||
      a[7].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *out = a[6].as.tensor, *indices = a[7].as.tensor;
  ocl_window L;
  int64_t ix_sizes[4];
  cl_long ix[4];
  if (!ocl_is_float(self->dtype) || out->dtype != self->dtype || indices->dtype != TB_DTYPE_INT64 ||
      indices->ndim != out->ndim || !pool_layout(self, out, &a[1], &L) ||
      !nchw(indices, false, ix_sizes, ix)) {
    return ocl_decline(call, "a layout or dtype it does not take");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_place p[3];
  status = ocl_tensor_place(ctx, device, out, "out", &p[0]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, indices, "indices", &p[1]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, self, "self", &p[2]);
  if (status != TB_OK) return status;
  return launch(ctx, device, call, self->dtype, "tb_max_pool", p, 3, &L, ix, 4,
                L.n * L.c * L.oh * L.ow);
}

/* max_pool2d_with_indices_backward.grad_input [grad_output, self, kernel_size, stride, padding,
 * dilation, ceil_mode, indices, grad_input] */
static tb_status max_pool_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 9 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[7].kind != TB_VALUE_TENSOR || a[8].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *grad = a[0].as.tensor, *self = a[1].as.tensor, *indices = a[7].as.tensor;
  const tb_tensor *gi = a[8].as.tensor;
  ocl_window L, G;
  int64_t ix_sizes[4];
  cl_long ix[4];
  /* the layout of grad_input (where the kernel writes) over grad_output's windows */
  if (!ocl_is_float(grad->dtype) || self->dtype != grad->dtype || gi->dtype != grad->dtype ||
      indices->dtype != TB_DTYPE_INT64 || indices->ndim != grad->ndim ||
      !pool_layout(self, grad, &a[2], &L) || !pool_layout(gi, grad, &a[2], &G) || G.h != L.h ||
      G.w != L.w || !nchw(indices, false, ix_sizes, ix)) {
    return ocl_decline(call, "a layout or dtype it does not take");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (grad->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_place p[3];
  status = ocl_tensor_place(ctx, device, gi, "grad_input", &p[0]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, grad, "grad_output", &p[1]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, indices, "indices", &p[2]);
  if (status != TB_OK) return status;
  return launch(ctx, device, call, grad->dtype, "tb_max_pool_backward", p, 3, &G, ix, 4,
                G.n * G.c * G.h * G.w);
}

/* Whether a and b have the same shape. */
static bool same_shape(const tb_tensor *a, const tb_tensor *b) {
  bool same = a->ndim == b->ndim;
  for (int32_t d = 0; same && d < a->ndim; d++) same = a->sizes[d] == b->sizes[d];
  return same;
}

/* avg_pool2d's layout and options: self and its output `out`, kernel_size, stride, padding at
 * a[0 ..], count_include_pad and divisor_override at a[4], a[5] (0: none). */
static bool avg_layout(const tb_tensor *self, const tb_tensor *out, const tb_value *a,
                       ocl_window *L, cl_long options[2]) {
  tb_value window[4] = {a[0], a[1], a[2], a[0]};
  window[3].kind = TB_VALUE_INT_LIST; /* no dilation: [] is 1 */
  window[3].as.ints.count = 0;
  if (a[4].kind != TB_VALUE_BOOL || (a[5].kind != TB_VALUE_NONE && a[5].kind != TB_VALUE_INT) ||
      (a[5].kind == TB_VALUE_INT && a[5].as.i == 0) || !pool_layout(self, out, window, L)) {
    return false;
  }
  options[0] = a[4].as.b != 0;
  options[1] = a[5].kind == TB_VALUE_INT ? a[5].as.i : 0;
  return true;
}

/* Enters the call and places `written` and `read` for a pooling kernel of self's dtype. */
static tb_status pool_places(tb_context ctx, const tb_kernel_call *call, tb_dtype dtype,
                             const tb_tensor *written, const tb_tensor *read, int32_t *device,
                             ocl_place p[2]) {
  tb_status status = ocl_kernel_enter(ctx, call, device);
  if (status != TB_OK) return status;
  if (dtype == TB_DTYPE_FLOAT64 && !ctx->devices[*device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  status = ocl_tensor_place(ctx, *device, written, "out", &p[0]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, *device, read, "self", &p[1]);
  return status;
}

/* avg_pool2d.out [self, kernel_size, stride, padding, ceil_mode, count_include_pad,
 * divisor_override, out] */
static tb_status avg_pool(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 8 || a[0].kind != TB_VALUE_TENSOR || a[7].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *out = a[7].as.tensor;
  ocl_window L;
  cl_long options[2];
  if (!ocl_is_float(self->dtype) || out->dtype != self->dtype ||
      !avg_layout(self, out, &a[1], &L, options)) {
    return ocl_decline(call, "a layout, dtype or divisor it does not take");
  }
  int32_t device = -1;
  ocl_place p[2];
  tb_status status = pool_places(ctx, call, self->dtype, out, self, &device, p);
  if (status != TB_OK) return status;
  return launch(ctx, device, call, self->dtype, "tb_avg_pool", p, 2, &L, options, 2,
                L.n * L.c * L.oh * L.ow);
}

/* avg_pool2d_backward.grad_input [grad_output, self, kernel_size, stride, padding, ceil_mode,
 * count_include_pad, divisor_override, grad_input] */
static tb_status avg_pool_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 9 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[8].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *grad = a[0].as.tensor, *self = a[1].as.tensor, *gi = a[8].as.tensor;
  ocl_window G;
  cl_long options[2];
  if (!ocl_is_float(grad->dtype) || gi->dtype != grad->dtype || !same_shape(gi, self) ||
      !avg_layout(gi, grad, &a[2], &G, options)) {
    return ocl_decline(call, "a layout, dtype or divisor it does not take");
  }
  int32_t device = -1;
  ocl_place p[2];
  tb_status status = pool_places(ctx, call, grad->dtype, gi, grad, &device, p);
  if (status != TB_OK) return status;
  return launch(ctx, device, call, grad->dtype, "tb_avg_pool_backward", p, 2, &G, options, 2,
                G.n * G.c * G.h * G.w);
}

/* The adaptive pooling's layout: the image `self` and the output `out`, no window. */
static bool adaptive_layout(const tb_tensor *self, const tb_tensor *out, ocl_window *L) {
  memset(L, 0, sizeof *L);
  int64_t in[4], os[4];
  if (out->ndim != self->ndim || !nchw(self, false, in, L->in_strides) ||
      !nchw(out, false, os, L->out_strides) || os[0] != in[0] || os[1] != in[1]) {
    return false;
  }
  L->n = in[0], L->c = in[1], L->h = in[2], L->w = in[3];
  L->oc = in[1], L->oh = os[2], L->ow = os[3], L->groups = 1;
  return (L->oh > 0 && L->ow > 0) || L->n * L->c == 0;
}

/* _adaptive_avg_pool2d [self, output_size, out] */
static tb_status adaptive_pool(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 3 || a[0].kind != TB_VALUE_TENSOR || a[2].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *out = a[2].as.tensor;
  ocl_window L;
  if (!ocl_is_float(self->dtype) || out->dtype != self->dtype || !adaptive_layout(self, out, &L)) {
    return ocl_decline(call, "a layout or dtype it does not take");
  }
  int32_t device = -1;
  ocl_place p[2];
  tb_status status = pool_places(ctx, call, self->dtype, out, self, &device, p);
  if (status != TB_OK) return status;
  return launch(ctx, device, call, self->dtype, "tb_adaptive_avg_pool", p, 2, &L, NULL, 0,
                L.n * L.c * L.oh * L.ow);
}

/* _adaptive_avg_pool2d_backward [grad_output, self, grad_input] */
static tb_status adaptive_pool_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 3 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[2].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *grad = a[0].as.tensor, *self = a[1].as.tensor, *gi = a[2].as.tensor;
  ocl_window G;
  if (!ocl_is_float(grad->dtype) || gi->dtype != grad->dtype || !same_shape(gi, self) ||
      !adaptive_layout(gi, grad, &G)) {
    return ocl_decline(call, "a layout or dtype it does not take");
  }
  int32_t device = -1;
  ocl_place p[2];
  tb_status status = pool_places(ctx, call, grad->dtype, gi, grad, &device, p);
  if (status != TB_OK) return status;
  return launch(ctx, device, call, grad->dtype, "tb_adaptive_avg_pool_backward", p, 2, &G, NULL, 0,
                G.n * G.c * G.h * G.w);
}

/* An upsampling's scale argument: its value when given and positive (ATen ignores the rest),
 * else 0. */
static double scale_of(const tb_value *v) {
  double s = v->kind == TB_VALUE_DOUBLE ? v->as.f : 0.0;
  return s > 0 ? s : 0.0;
}

/* ATen's nearest scale along an axis of `in` to `out` elements, in float. */
static float nearest_scale(double scale, int64_t in, int64_t out) {
  return scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
}

/* ATen's area_pixel_compute_scale in float (float64: double), as a double. */
static double linear_ratio(tb_dtype dtype, bool align_corners, double scale, int64_t in,
                           int64_t out) {
  if (dtype == TB_DTYPE_FLOAT64) {
    if (align_corners) return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
    return scale > 0 ? 1.0 / scale : (double)in / (double)out;
  }
  if (align_corners) return out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f;
  return scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
}

/* Sets an upsampling's places, layout and options and enqueues `count` work-items: the two
 * scales (nearest: floats; bilinear: ACC values after align_corners) and a flag. */
static tb_status upsample_launch(tb_context ctx, const tb_kernel_call *call, tb_dtype dtype,
                                 const char *name, const tb_tensor *written, const tb_tensor *read,
                                 const ocl_window *L, bool linear, double scale_h, double scale_w,
                                 cl_int flag, int64_t count) {
  int32_t device = -1;
  ocl_place p[2];
  tb_status status = pool_places(ctx, call, dtype, written, read, &device, p);
  if (status != TB_OK || count == 0) return status;
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, dtype, name, &kernel);
  if (status != TB_OK) return status;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &p[0]);
  ocl_arg_place(&args, &p[1]);
  ocl_arg_value(&args, sizeof *L, L);
  if (linear) {
    ocl_arg_value(&args, sizeof flag, &flag);
    ocl_arg_acc(&args, dtype, scale_h);
    ocl_arg_acc(&args, dtype, scale_w);
  } else {
    cl_float h = (cl_float)scale_h, w = (cl_float)scale_w;
    ocl_arg_value(&args, sizeof h, &h);
    ocl_arg_value(&args, sizeof w, &w);
    ocl_arg_value(&args, sizeof flag, &flag);
  }
  status = ocl_args_done(&args);
  if (status == TB_OK) status = ocl_enqueue(ctx, device, call, kernel, count, name);
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* The upsamplings' shapes: `image` [N, C, H, W] and `scaled` [N, C, OH, OW], an empty image only
 * under an empty output (ATen's checks reject the rest). */
static bool upsample_layout(const tb_tensor *image, const tb_tensor *scaled, ocl_window *L) {
  if (image->ndim != 4 || !adaptive_layout(image, scaled, L)) return false;
  return (L->h > 0 && L->w > 0) || L->oh == 0 || L->ow == 0;
}

/* upsample_nearest2d.out and _upsample_nearest_exact2d.out [self, output_size, scales_h?,
 * scales_w?, out]: floats and uint8, as the CPU's kernel. */
static tb_status nearest(tb_context ctx, const tb_kernel_call *call, bool exact) {
  const tb_value *a = call->args;
  if (call->num_args < 5 || a[0].kind != TB_VALUE_TENSOR || a[4].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *out = a[4].as.tensor;
  ocl_window L;
  if (!(ocl_is_float(self->dtype) || self->dtype == TB_DTYPE_UINT8) || out->dtype != self->dtype ||
      !upsample_layout(self, out, &L)) {
    return ocl_decline(call, "a layout or dtype it does not take");
  }
  double sh = L.oh > 0 ? nearest_scale(scale_of(&a[2]), L.h, L.oh) : 0;
  double sw = L.ow > 0 ? nearest_scale(scale_of(&a[3]), L.w, L.ow) : 0;
  return upsample_launch(ctx, call, self->dtype, "tb_upsample_nearest", out, self, &L, false, sh,
                         sw, exact, L.n * L.c * L.oh * L.ow);
}
static tb_status nearest_legacy(tb_context ctx, const tb_kernel_call *call) {
  return nearest(ctx, call, false);
}
static tb_status nearest_exact(tb_context ctx, const tb_kernel_call *call) {
  return nearest(ctx, call, true);
}

/* upsample_nearest2d_backward.grad_input and _upsample_nearest_exact2d_backward.grad_input
 * [grad_output, output_size, input_size, scales_h?, scales_w?, grad_input] */
static tb_status nearest_backward(tb_context ctx, const tb_kernel_call *call, bool exact) {
  const tb_value *a = call->args;
  if (call->num_args < 6 || a[0].kind != TB_VALUE_TENSOR || a[5].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *grad = a[0].as.tensor, *gi = a[5].as.tensor;
  ocl_window G;
  if (!ocl_is_float(grad->dtype) || gi->dtype != grad->dtype || !upsample_layout(gi, grad, &G)) {
    return ocl_decline(call, "a layout or dtype it does not take");
  }
  double sh = G.oh > 0 ? nearest_scale(scale_of(&a[3]), G.h, G.oh) : 0;
  double sw = G.ow > 0 ? nearest_scale(scale_of(&a[4]), G.w, G.ow) : 0;
  return upsample_launch(ctx, call, grad->dtype, "tb_upsample_nearest_backward", gi, grad, &G,
                         false, sh, sw, exact, G.n * G.c * G.h * G.w);
}
static tb_status nearest_backward_legacy(tb_context ctx, const tb_kernel_call *call) {
  return nearest_backward(ctx, call, false);
}
static tb_status nearest_backward_exact(tb_context ctx, const tb_kernel_call *call) {
  return nearest_backward(ctx, call, true);
}

/* upsample_bilinear2d.out [self, output_size, align_corners, scales_h?, scales_w?, out]: floats
 * (uint8 has a fixed-point kernel of its own on the CPU). */
static tb_status bilinear(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 6 || a[0].kind != TB_VALUE_TENSOR || a[2].kind != TB_VALUE_BOOL ||
      a[5].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *out = a[5].as.tensor;
  ocl_window L;
  if (!ocl_is_float(self->dtype) || out->dtype != self->dtype || !upsample_layout(self, out, &L)) {
    return ocl_decline(call, "a layout or dtype it does not take");
  }
  bool align = a[2].as.b != 0;
  double rh = linear_ratio(self->dtype, align, scale_of(&a[3]), L.h, L.oh);
  double rw = linear_ratio(self->dtype, align, scale_of(&a[4]), L.w, L.ow);
  return upsample_launch(ctx, call, self->dtype, "tb_upsample_bilinear", out, self, &L, true, rh,
                         rw, align, L.n * L.c * L.oh * L.ow);
}

/* upsample_bilinear2d_backward.grad_input [grad_output, output_size, input_size, align_corners,
 * scales_h?, scales_w?, grad_input] */
static tb_status bilinear_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 7 || a[0].kind != TB_VALUE_TENSOR || a[3].kind != TB_VALUE_BOOL ||
      a[6].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *grad = a[0].as.tensor, *gi = a[6].as.tensor;
  ocl_window G;
  if (!ocl_is_float(grad->dtype) || gi->dtype != grad->dtype || !upsample_layout(gi, grad, &G)) {
    return ocl_decline(call, "a layout or dtype it does not take");
  }
  bool align = a[3].as.b != 0;
  double rh = linear_ratio(grad->dtype, align, scale_of(&a[4]), G.h, G.oh);
  double rw = linear_ratio(grad->dtype, align, scale_of(&a[5]), G.w, G.ow);
  return upsample_launch(ctx, call, grad->dtype, "tb_upsample_bilinear_backward", gi, grad, &G,
                         true, rh, rw, align, G.n * G.c * G.h * G.w);
}

#define FLOATS (TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64))
#define KERNEL(sym, name, fn, schema) \
  static const tb_kernel sym = {sizeof(tb_kernel), name, fn, FLOATS, 0, schema, NULL};

KERNEL(k_conv, "convolution_overrideable", conv,
       "convolution_overrideable(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
       "SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt "
       "groups) -> Tensor")
KERNEL(
    k_conv_backward, "convolution_backward_overrideable", conv_backward,
    "convolution_backward_overrideable(Tensor grad_output, Tensor input, Tensor weight, SymInt[] "
    "stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt "
    "groups, bool[3] output_mask) -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)")
KERNEL(k_max_pool, "max_pool2d_with_indices.out", max_pool,
       "max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] "
       "padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) "
       "indices) -> (Tensor(a!), Tensor(b!))")
KERNEL(k_max_pool_backward, "max_pool2d_with_indices_backward.grad_input", max_pool_backward,
       "max_pool2d_with_indices_backward.grad_input(Tensor grad_output, Tensor self, int[2] "
       "kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor "
       "indices, *, Tensor(a!) grad_input) -> Tensor(a!)")

KERNEL(k_avg_pool, "avg_pool2d.out", avg_pool,
       "avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool "
       "ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) "
       "out) -> Tensor(a!)")
KERNEL(k_avg_pool_backward, "avg_pool2d_backward.grad_input", avg_pool_backward,
       "avg_pool2d_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, "
       "int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, int? "
       "divisor_override, *, Tensor(a!) grad_input) -> Tensor(a!)")
KERNEL(k_adaptive_pool, "_adaptive_avg_pool2d", adaptive_pool,
       "_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor")
KERNEL(k_adaptive_pool_backward, "_adaptive_avg_pool2d_backward", adaptive_pool_backward,
       "_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor")

#define KERNEL_U8(sym, name, fn, schema) \
  static const tb_kernel sym = {         \
      sizeof(tb_kernel), name, fn, FLOATS | TB_DTYPE_BIT(TB_DTYPE_UINT8), 0, schema, NULL};
KERNEL_U8(k_nearest, "upsample_nearest2d.out", nearest_legacy,
          "upsample_nearest2d.out(Tensor self, SymInt[2] output_size, float? scales_h=None, "
          "float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)")
KERNEL_U8(k_nearest_exact, "_upsample_nearest_exact2d.out", nearest_exact,
          "_upsample_nearest_exact2d.out(Tensor self, SymInt[2] output_size, float? "
          "scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)")
KERNEL(k_nearest_backward, "upsample_nearest2d_backward.grad_input", nearest_backward_legacy,
       "upsample_nearest2d_backward.grad_input(Tensor grad_output, SymInt[2] output_size, "
       "SymInt[4] input_size, float? scales_h=None, float? scales_w=None, *, Tensor(a!) "
       "grad_input) -> Tensor(a!)")
KERNEL(k_nearest_exact_backward, "_upsample_nearest_exact2d_backward.grad_input",
       nearest_backward_exact,
       "_upsample_nearest_exact2d_backward.grad_input(Tensor grad_output, SymInt[2] "
       "output_size, SymInt[4] input_size, float? scales_h=None, float? scales_w=None, *, "
       "Tensor(a!) grad_input) -> Tensor(a!)")
KERNEL(k_bilinear, "upsample_bilinear2d.out", bilinear,
       "upsample_bilinear2d.out(Tensor self, SymInt[2] output_size, bool align_corners, float? "
       "scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)")
KERNEL(k_bilinear_backward, "upsample_bilinear2d_backward.grad_input", bilinear_backward,
       "upsample_bilinear2d_backward.grad_input(Tensor grad_output, SymInt[2] output_size, "
       "SymInt[4] input_size, bool align_corners, float? scales_h=None, float? scales_w=None, "
       "*, Tensor(a!) grad_input) -> Tensor(a!)")

const tb_kernel *const ocl_window_kernels[] = {&k_conv,
                                               &k_conv_backward,
                                               &k_max_pool,
                                               &k_max_pool_backward,
                                               &k_avg_pool,
                                               &k_avg_pool_backward,
                                               &k_adaptive_pool,
                                               &k_adaptive_pool_backward,
                                               &k_nearest,
                                               &k_nearest_exact,
                                               &k_nearest_backward,
                                               &k_nearest_exact_backward,
                                               &k_bilinear,
                                               &k_bilinear_backward,
                                               NULL};
