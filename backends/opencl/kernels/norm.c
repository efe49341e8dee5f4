/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * layer_norm and batch_norm, forward and backward, on the row kernels of reduce.cl
 * (NORM).  layer_norm: one work-group per row of the normalized elements for the forward and
 * the input's gradient, one work-item per normalized element for the weight's and bias's
 * gradients, dense tensors only (what nn.LayerNorm produces).  batch_norm (both ways): one
 * work-group per channel, the input with any strides.
 */
#include <stdio.h>
#include <string.h>

#include "kernels.h"

/* A dense float tensor of `dtype` with `numel` elements, or NULL (None). */
static const tb_tensor *optional(const tb_value *v, tb_dtype dtype, int64_t numel, bool *ok) {
  if (v->kind == TB_VALUE_NONE) return NULL;
  int64_t n = 0;
  if (v->kind != TB_VALUE_TENSOR || v->as.tensor->dtype != dtype || !ocl_dense(v->as.tensor, &n) ||
      n != numel) {
    *ok = false;
    return NULL;
  }
  return v->as.tensor;
}

static tb_status kernel_for(tb_context ctx, int32_t device, tb_dtype dtype, int wg,
                            const char *name, ocl_kernel **kernel) {
  char defines[256];
  snprintf(defines, sizeof defines,
           "#define T_OUT %s\n#define T0 %s\n#define T1 %s\n#define ACC %s\n#define WG %d\n"
           "#define NORM\n",
           ocl_type_name(dtype), ocl_type_name(dtype), ocl_type_name(dtype),
           dtype == TB_DTYPE_FLOAT64 ? "double" : "float", wg);
  const char *sources[] = {defines, ocl_source_reduce};
  return ocl_kernel_get(ctx, device, defines, sources, 2, name, kernel);
}

/* The shape of a layer_norm call: rows x n, n the normalized elements. */
static bool shape_of(const tb_tensor *input, const tb_value *normalized, int64_t *rows,
                     int64_t *n) {
  if (normalized->kind != TB_VALUE_INT_LIST || normalized->as.ints.count > input->ndim) {
    return false;
  }
  int64_t total = 0;
  if (!ocl_dense(input, &total)) return false;
  *n = 1;
  for (int64_t i = 0; i < normalized->as.ints.count; i++) *n *= normalized->as.ints.items[i];
  *rows = *n > 0 ? total / *n : 0;
  return true;
}

/* native_layer_norm [input, normalized_shape, weight, bias, eps, out, mean, rstd] */
static tb_status layer_norm(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 8 || a[0].kind != TB_VALUE_TENSOR || a[4].kind != TB_VALUE_DOUBLE ||
      a[5].kind != TB_VALUE_TENSOR || a[6].kind != TB_VALUE_TENSOR ||
      a[7].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *input = a[0].as.tensor, *out = a[5].as.tensor;
  const tb_tensor *mean = a[6].as.tensor, *rstd = a[7].as.tensor;
  tb_dtype dtype = input->dtype;
  int64_t rows = 0, n = 0, m = 0, outs = 0, r = 0;
  bool ok = (dtype == TB_DTYPE_FLOAT32 || dtype == TB_DTYPE_FLOAT64) &&
            shape_of(input, &a[1], &rows, &n) && out->dtype == dtype && ocl_dense(out, &outs) &&
            outs == rows * n && mean->dtype == dtype && ocl_dense(mean, &m) && m == rows &&
            rstd->dtype == dtype && ocl_dense(rstd, &r) && r == rows;
  const tb_tensor *weight = ok ? optional(&a[2], dtype, n, &ok) : NULL;
  const tb_tensor *bias = ok ? optional(&a[3], dtype, n, &ok) : NULL;
  if (!ok) return ocl_decline(call, "a layout or dtype it does not take");
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  if (rows == 0 || n == 0) return ocl_decline(call, "an empty input");
  int wg = ocl_row_group(ctx, device, n, true);
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, dtype, wg, "tb_layer_norm", &kernel);
  ocl_place p[6];
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, out, "out", &p[0]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, input, "input", &p[1]);
  p[2] = p[3] = p[1];
  if (status == TB_OK && weight != NULL)
    status = ocl_tensor_place(ctx, device, weight, "weight", &p[2]);
  if (status == TB_OK && bias != NULL) status = ocl_tensor_place(ctx, device, bias, "bias", &p[3]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, mean, "mean", &p[4]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, rstd, "rstd", &p[5]);
  if (status != TB_OK) return status;
  cl_long elements = n;
  cl_int has_weight = weight != NULL, has_bias = bias != NULL;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  for (int k = 0; k < 6; k++) ocl_arg_place(&args, &p[k]);
  ocl_arg_value(&args, sizeof elements, &elements);
  ocl_arg_value(&args, sizeof has_weight, &has_weight);
  ocl_arg_value(&args, sizeof has_bias, &has_bias);
  ocl_arg_acc(&args, dtype, a[4].as.f);
  status = ocl_args_done(&args);
  if (status == TB_OK)
    status = ocl_run_rows(ctx, device, call->stream, kernel->kernel, rows, wg, "native_layer_norm");
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* native_layer_norm_backward [grad_out, input, normalized_shape, mean, rstd, weight, bias,
 * output_mask, grad_input, grad_weight, grad_bias] (an output not asked for may be None) */
static tb_status layer_norm_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 11 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[3].kind != TB_VALUE_TENSOR || a[4].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *grad = a[0].as.tensor, *input = a[1].as.tensor;
  const tb_tensor *mean = a[3].as.tensor, *rstd = a[4].as.tensor;
  tb_dtype dtype = input->dtype;
  int64_t rows = 0, n = 0, g = 0, m = 0, r = 0;
  bool ok = (dtype == TB_DTYPE_FLOAT32 || dtype == TB_DTYPE_FLOAT64) &&
            shape_of(input, &a[2], &rows, &n) && grad->dtype == dtype && ocl_dense(grad, &g) &&
            g == rows * n && mean->dtype == dtype && ocl_dense(mean, &m) && m == rows &&
            rstd->dtype == dtype && ocl_dense(rstd, &r) && r == rows;
  const tb_tensor *weight = ok ? optional(&a[5], dtype, n, &ok) : NULL;
  const tb_tensor *grad_input = ok ? optional(&a[8], dtype, rows * n, &ok) : NULL;
  const tb_tensor *grad_weight = ok ? optional(&a[9], dtype, n, &ok) : NULL;
  const tb_tensor *grad_bias = ok ? optional(&a[10], dtype, n, &ok) : NULL;
  if (!ok) return ocl_decline(call, "a layout or dtype it does not take");
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  if (rows == 0 || n == 0) return ocl_decline(call, "an empty input");
  ocl_place pg, px = {0}, pm, pr, pw; /* px: copied into pw before the status is known */
  status = ocl_tensor_place(ctx, device, grad, "grad_out", &pg);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, input, "input", &px);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, mean, "mean", &pm);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, rstd, "rstd", &pr);
  pw = px;
  if (status == TB_OK && weight != NULL)
    status = ocl_tensor_place(ctx, device, weight, "weight", &pw);
  if (status != TB_OK) return status;
  cl_long elements = n, row_count = rows;
  if (grad_input != NULL) {
    int wg = ocl_row_group(ctx, device, n, true);
    ocl_kernel *kernel = NULL;
    ocl_place pgi;
    status = kernel_for(ctx, device, dtype, wg, "tb_layer_norm_backward_input", &kernel);
    if (status == TB_OK) status = ocl_tensor_place(ctx, device, grad_input, "grad_input", &pgi);
    if (status != TB_OK) return status;
    cl_int has_weight = weight != NULL;
    pthread_mutex_lock(&kernel->lock);
    ocl_args args = ocl_args_begin(ctx, device, kernel);
    ocl_arg_place(&args, &pgi);
    ocl_arg_place(&args, &pg);
    ocl_arg_place(&args, &px);
    ocl_arg_place(&args, &pm);
    ocl_arg_place(&args, &pr);
    ocl_arg_place(&args, &pw);
    ocl_arg_value(&args, sizeof elements, &elements);
    ocl_arg_value(&args, sizeof has_weight, &has_weight);
    status = ocl_args_done(&args);
    if (status == TB_OK) {
      status = ocl_run_rows(ctx, device, call->stream, kernel->kernel, rows, wg,
                            "native_layer_norm_backward");
    }
    pthread_mutex_unlock(&kernel->lock);
    if (status != TB_OK) return status;
  }
  if (grad_weight != NULL || grad_bias != NULL) {
    ocl_kernel *kernel = NULL;
    ocl_place pgw, pgb;
    status = kernel_for(ctx, device, dtype, 1, "tb_layer_norm_backward_params", &kernel);
    if (status == TB_OK && grad_weight != NULL) {
      status = ocl_tensor_place(ctx, device, grad_weight, "grad_weight", &pgw);
    }
    if (status == TB_OK && grad_bias != NULL) {
      status = ocl_tensor_place(ctx, device, grad_bias, "grad_bias", &pgb);
    }
    if (status != TB_OK) return status;
    if (grad_weight == NULL) pgw = pgb;
    if (grad_bias == NULL) pgb = pgw;
    cl_int want_weight = grad_weight != NULL, want_bias = grad_bias != NULL;
    pthread_mutex_lock(&kernel->lock);
    ocl_args args = ocl_args_begin(ctx, device, kernel);
    ocl_arg_place(&args, &pgw);
    ocl_arg_place(&args, &pgb);
    ocl_arg_place(&args, &pg);
    ocl_arg_place(&args, &px);
    ocl_arg_place(&args, &pm);
    ocl_arg_place(&args, &pr);
    ocl_arg_value(&args, sizeof row_count, &row_count);
    ocl_arg_value(&args, sizeof elements, &elements);
    ocl_arg_value(&args, sizeof want_weight, &want_weight);
    ocl_arg_value(&args, sizeof want_bias, &want_bias);
    status = ocl_args_done(&args);
    if (status == TB_OK)
      status = ocl_enqueue(ctx, device, call, kernel, n, "native_layer_norm_backward");
    pthread_mutex_unlock(&kernel->lock);
  }
  return status;
}

/* native_batch_norm [input, weight, bias, running_mean, running_var, training, momentum, eps,
 * out, save_mean, save_invstd] */
static tb_status batch_norm(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 11 || a[0].kind != TB_VALUE_TENSOR || a[5].kind != TB_VALUE_BOOL ||
      a[6].kind != TB_VALUE_DOUBLE || a[7].kind != TB_VALUE_DOUBLE ||
      a[8].kind != TB_VALUE_TENSOR || a[9].kind != TB_VALUE_TENSOR ||
      a[10].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *input = a[0].as.tensor, *out = a[8].as.tensor;
  const tb_tensor *save_mean = a[9].as.tensor, *save_invstd = a[10].as.tensor;
  tb_dtype dtype = input->dtype;
  bool training = a[5].as.b != 0;
  if ((dtype != TB_DTYPE_FLOAT32 && dtype != TB_DTYPE_FLOAT64) || input->ndim < 2 ||
      out->dtype != dtype || out->ndim != input->ndim) {
    return ocl_decline(call, "a layout or dtype it does not take");
  }
  int64_t channels = input->sizes[1], sm = 0, si = 0;
  bool ok = save_mean->dtype == dtype && save_invstd->dtype == dtype && ocl_dense(save_mean, &sm) &&
            ocl_dense(save_invstd, &si) && sm == si && (sm == channels || sm == 0);
  const tb_tensor *weight = ok ? optional(&a[1], dtype, channels, &ok) : NULL;
  const tb_tensor *bias = ok ? optional(&a[2], dtype, channels, &ok) : NULL;
  const tb_tensor *running_mean = ok ? optional(&a[3], dtype, channels, &ok) : NULL;
  const tb_tensor *running_var = ok ? optional(&a[4], dtype, channels, &ok) : NULL;
  if (!ok || (running_mean == NULL) != (running_var == NULL) ||
      (!training && running_mean == NULL) || (training && sm != channels)) {
    return ocl_decline(call, "statistics or parameters it does not take");
  }
  for (int32_t d = 0; d < input->ndim; d++) {
    if (out->sizes[d] != input->sizes[d]) return ocl_decline(call, "an output of another shape");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  /* rows: the channel dimension alone (kept), every other one reduced */
  ocl_rows rows;
  uint64_t mask = (((uint64_t)1 << input->ndim) - 1) & ~(uint64_t)2;
  if (!ocl_map_rows(input, NULL, out, mask, true, true, &rows) || rows.kept_ndim > 1) {
    return ocl_decline(call, "a layout of more than 8 dimensions");
  }
  if (channels == 0) return TB_OK;
  if (rows.row_length == 0) return ocl_decline(call, "an empty batch");
  rows.rows = channels;
  /* The tree on every device: batch norm's backward subtracts nearly equal sums over
   * N x H x W, and sums taken in order put resnet18's gradients outside the CPU's tolerance. */
  int wg = ocl_row_group(ctx, device, rows.row_length, false);
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, dtype, wg, "tb_batch_norm", &kernel);
  ocl_place p[8];
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, out, "out", &p[0]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, input, "input", &p[1]);
  const tb_tensor *optionals[] = {weight, bias, running_mean, running_var, save_mean, save_invstd};
  for (int k = 0; k < 6 && status == TB_OK; k++) {
    p[k + 2] = p[1];
    if (optionals[k] != NULL && (k < 4 || sm > 0)) {
      status = ocl_tensor_place(ctx, device, optionals[k], "a statistic", &p[k + 2]);
    }
  }
  if (status != TB_OK) return status;
  cl_int flags[5] = {weight != NULL, bias != NULL, running_mean != NULL, training, sm > 0};
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  for (int k = 0; k < 8; k++) ocl_arg_place(&args, &p[k]);
  ocl_arg_value(&args, sizeof rows, &rows);
  for (int k = 0; k < 5; k++) ocl_arg_value(&args, sizeof flags[k], &flags[k]);
  ocl_arg_acc(&args, dtype, a[6].as.f);
  ocl_arg_acc(&args, dtype, a[7].as.f);
  status = ocl_args_done(&args);
  if (status == TB_OK)
    status =
        ocl_run_rows(ctx, device, call->stream, kernel->kernel, channels, wg, "native_batch_norm");
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* native_batch_norm_backward [grad_out, input, weight?, running_mean?, running_var?,
 * save_mean?, save_invstd?, train, eps, output_mask, grad_input?, grad_weight?, grad_bias?] */
static tb_status batch_norm_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 13 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[7].kind != TB_VALUE_BOOL || a[8].kind != TB_VALUE_DOUBLE) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *grad = a[0].as.tensor, *input = a[1].as.tensor;
  tb_dtype dtype = input->dtype;
  bool training = a[7].as.b != 0, ok = true;
  if ((dtype != TB_DTYPE_FLOAT32 && dtype != TB_DTYPE_FLOAT64) || input->ndim < 2 ||
      grad->dtype != dtype || grad->ndim != input->ndim) {
    return ocl_decline(call, "a layout or dtype it does not take");
  }
  int64_t channels = input->sizes[1];
  /* Only the statistics the mode reads: in training the saved ones, in evaluation the
   * running ones (eval's forward, _native_batch_norm_legit_no_training, saves empty tensors). */
  const tb_tensor *weight = optional(&a[2], dtype, channels, &ok);
  const tb_tensor *mean = ok ? optional(&a[training ? 5 : 3], dtype, channels, &ok) : NULL;
  const tb_tensor *spread = ok ? optional(&a[training ? 6 : 4], dtype, channels, &ok) : NULL;
  const tb_tensor *gi = a[10].kind == TB_VALUE_TENSOR ? a[10].as.tensor : NULL;
  const tb_tensor *gw = ok ? optional(&a[11], dtype, channels, &ok) : NULL;
  const tb_tensor *gb = ok ? optional(&a[12], dtype, channels, &ok) : NULL;
  if (!ok || mean == NULL || spread == NULL ||
      (gi != NULL && (gi->dtype != dtype || gi->ndim != input->ndim))) {
    return ocl_decline(call, "statistics, parameters or gradients it does not take");
  }
  for (int32_t d = 0; d < input->ndim; d++) {
    if (grad->sizes[d] != input->sizes[d] || (gi != NULL && gi->sizes[d] != input->sizes[d])) {
      return ocl_decline(call, "gradients of another shape");
    }
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_rows rows;
  uint64_t mask = (((uint64_t)1 << input->ndim) - 1) & ~(uint64_t)2;
  if (!ocl_map_rows(input, grad, gi != NULL ? gi : input, mask, true, true, &rows) ||
      rows.kept_ndim > 1) {
    return ocl_decline(call, "a layout of more than 8 dimensions");
  }
  if (channels == 0) return TB_OK;
  if (rows.row_length == 0) return ocl_decline(call, "an empty batch");
  rows.rows = channels;
  /* The tree on every device: batch norm's backward subtracts nearly equal sums over
   * N x H x W, and sums taken in order put resnet18's gradients outside the CPU's tolerance. */
  int wg = ocl_row_group(ctx, device, rows.row_length, false);
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, dtype, wg, "tb_batch_norm_backward", &kernel);
  /* grad_input, grad_weight, grad_bias, grad_out, input, weight, mean, invstd or var; absent
   * ones point at the input, never touched */
  const tb_tensor *tensors[8] = {gi, gw, gb, grad, input, weight, mean, spread};
  ocl_place p[8];
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, input, "input", &p[4]);
  for (int k = 0; k < 8 && status == TB_OK; k++) {
    p[k] = p[4];
    if (tensors[k] != NULL) status = ocl_tensor_place(ctx, device, tensors[k], "a tensor", &p[k]);
  }
  if (status != TB_OK) return status;
  cl_int flags[5] = {weight != NULL, training, gi != NULL, gw != NULL, gb != NULL};
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  for (int k = 0; k < 8; k++) ocl_arg_place(&args, &p[k]);
  ocl_arg_value(&args, sizeof rows, &rows);
  for (int k = 0; k < 5; k++) ocl_arg_value(&args, sizeof flags[k], &flags[k]);
  ocl_arg_acc(&args, dtype, a[8].as.f);
  status = ocl_args_done(&args);
  if (status == TB_OK)
    status = ocl_run_rows(ctx, device, call->stream, kernel->kernel, channels, wg,
                          "native_batch_norm_backward");
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

#define FLOATS (TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64))
static const tb_kernel k_layer_norm = {
    sizeof(tb_kernel),
    "native_layer_norm",
    layer_norm,
    FLOATS,
    0,
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
    "float eps) -> (Tensor, Tensor, Tensor)",
    NULL};
static const tb_kernel k_layer_norm_backward = {
    sizeof(tb_kernel),
    "native_layer_norm_backward",
    layer_norm_backward,
    FLOATS,
    0,
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor "
    "mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, "
    "Tensor)",
    NULL};

static const tb_kernel k_batch_norm = {
    sizeof(tb_kernel),
    "native_batch_norm",
    batch_norm,
    FLOATS,
    0,
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? "
    "running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    NULL};

static const tb_kernel k_batch_norm_backward = {
    sizeof(tb_kernel),
    "native_batch_norm_backward",
    batch_norm_backward,
    FLOATS,
    0,
    "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? "
    "running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, "
    "float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    NULL};

const tb_kernel *const ocl_norm_kernels[] = {&k_layer_norm, &k_layer_norm_backward, &k_batch_norm,
                                             &k_batch_norm_backward, NULL};
