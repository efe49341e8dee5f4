/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The fused LSTM and GRU cells and their backwards (rnn.cl), what nn.LSTM / nn.GRU run on an
 * accelerator: operands of one floating dtype, outputs and workspaces contiguous as ATen's
 * meta functions allocate them, inputs rows of unit column stride (a time step's slice of the
 * sequence's gates or gradients); anything else is declined.  The biases' gradients are the gate
 * gradients' column sums.
 */
#include <stdio.h>

#include "kernels.h"

/* A dense floating tensor of `dtype` with `rows` x `cols` elements (rows 0: a vector). */
static bool is_dense(const tb_value *v, tb_dtype dtype, int64_t rows, int64_t cols) {
  int64_t numel = 0;
  if (v->kind != TB_VALUE_TENSOR) return false;
  const tb_tensor *t = v->as.tensor;
  if (t->dtype != dtype || t->ndim != (rows > 0 ? 2 : 1) || !ocl_dense(t, &numel)) return false;
  return rows > 0 ? t->sizes[0] == rows && t->sizes[1] == cols : t->sizes[0] == cols;
}

/* A [rows, cols] tensor of `dtype` whose columns have stride 1; its row stride in *stride. */
static bool is_rows(const tb_value *v, tb_dtype dtype, int64_t rows, int64_t cols,
                    cl_long *stride) {
  if (v->kind != TB_VALUE_TENSOR) return false;
  const tb_tensor *t = v->as.tensor;
  if (t->dtype != dtype || t->ndim != 2 || t->sizes[0] != rows || t->sizes[1] != cols ||
      (cols > 1 && t->strides[1] != 1)) {
    return false;
  }
  *stride = t->strides[0];
  return true;
}

/* Places `count` tensors (NULL: the first one's place, never read) and runs `name` over
 * `work` work-items with the trailing long and int arguments. */
static tb_status run(tb_context ctx, const tb_kernel_call *call, int32_t device, tb_dtype dtype,
                     const char *name, const tb_tensor *const *tensors, int count,
                     const cl_long *longs, int n_longs, const cl_int *ints, int n_ints,
                     int64_t work) {
  if (work == 0) return TB_OK;
  char defines[128];
  snprintf(defines, sizeof defines, "#define T %s\n#define ACC %s\n", ocl_type_name(dtype),
           dtype == TB_DTYPE_FLOAT64 ? "double" : "float");
  const char *sources[] = {defines, ocl_source_rnn};
  ocl_kernel *kernel = NULL;
  tb_status status = ocl_kernel_get(ctx, device, defines, sources, 2, name, &kernel);
  ocl_place places[8];
  for (int k = 0; k < count && status == TB_OK; k++) {
    if (tensors[k] == NULL) {
      places[k] = places[0];
    } else {
      status = ocl_tensor_place(ctx, device, tensors[k], "an operand", &places[k]);
    }
  }
  if (status != TB_OK) return status;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  for (int k = 0; k < count; k++) ocl_arg_place(&args, &places[k]);
  for (int k = 0; k < n_longs; k++) ocl_arg_value(&args, sizeof longs[k], &longs[k]);
  for (int k = 0; k < n_ints; k++) ocl_arg_value(&args, sizeof ints[k], &ints[k]);
  status = ocl_args_done(&args);
  if (status == TB_OK) status = ocl_enqueue(ctx, device, call, kernel, work, name);
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

static tb_status enter(tb_context ctx, const tb_kernel_call *call, tb_dtype dtype,
                       int32_t *device) {
  tb_status status = ocl_kernel_enter(ctx, call, device);
  if (status != TB_OK) return status;
  if (dtype == TB_DTYPE_FLOAT64 && !ctx->devices[*device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  return TB_OK;
}

/* _thnn_fused_lstm_cell [input_gates, hidden_gates, cx, input_bias?, hidden_bias?, hy, cy,
 * workspace] and _thnn_fused_gru_cell [input_gates, hidden_gates, hx, input_bias?,
 * hidden_bias?, hy, workspace] */
static tb_status cell(tb_context ctx, const tb_kernel_call *call) {
  bool lstm = call->kernel->data != NULL;
  int gates = lstm ? 4 : 3, outputs = lstm ? 3 : 2;
  const tb_value *a = call->args;
  if (call->num_args < 5 + outputs || a[2].kind != TB_VALUE_TENSOR || a[2].as.tensor->ndim != 2) {
    return ocl_decline(call, "unexpected arguments");
  }
  tb_dtype dtype = a[2].as.tensor->dtype;
  int64_t B = a[2].as.tensor->sizes[0], H = a[2].as.tensor->sizes[1];
  bool has_bias = a[3].kind == TB_VALUE_TENSOR;
  cl_long longs[5] = {B, H, 0, 0, 0}; /* then the row strides of the gates and the state */
  bool ok =
      ocl_is_float(dtype) && is_rows(&a[0], dtype, B, gates * H, &longs[2]) &&
      is_rows(&a[1], dtype, B, gates * H, &longs[3]) && is_rows(&a[2], dtype, B, H, &longs[4]) &&
      has_bias == (a[4].kind == TB_VALUE_TENSOR) &&
      (!has_bias || (is_dense(&a[3], dtype, 0, gates * H) && is_dense(&a[4], dtype, 0, gates * H)));
  for (int k = 0; ok && k < outputs; k++) {
    ok = is_dense(&a[5 + k], dtype, B, k == outputs - 1 ? (lstm ? 4 : 5) * H : H);
  }
  if (!ok) return ocl_decline(call, "operands that are not dense, of one dtype and size");
  int32_t device = -1;
  tb_status status = enter(ctx, call, dtype, &device);
  if (status != TB_OK) return status;
  const tb_tensor *bias_i = has_bias ? a[3].as.tensor : NULL;
  const tb_tensor *bias_h = has_bias ? a[4].as.tensor : NULL;
  cl_int flag = has_bias;
  if (lstm) {
    const tb_tensor *t[8] = {a[5].as.tensor, a[6].as.tensor, a[7].as.tensor, a[0].as.tensor,
                             a[1].as.tensor, a[2].as.tensor, bias_i,         bias_h};
    return run(ctx, call, device, dtype, "tb_lstm", t, 8, longs, 5, &flag, 1, B * H);
  }
  const tb_tensor *t[7] = {a[5].as.tensor, a[6].as.tensor, a[0].as.tensor, a[1].as.tensor,
                           a[2].as.tensor, bias_i,         bias_h};
  return run(ctx, call, device, dtype, "tb_gru", t, 7, longs, 5, &flag, 1, B * H);
}

/* The column sums of the dense [B, cols] `x` into `sum`. */
static tb_status column_sums(tb_context ctx, const tb_kernel_call *call, int32_t device,
                             const tb_tensor *sum, const tb_tensor *x, int64_t B, int64_t cols) {
  const tb_tensor *t[2] = {sum, x};
  cl_long longs[2] = {B, cols};
  return run(ctx, call, device, sum->dtype, "tb_column_sums", t, 2, longs, 2, NULL, 0, cols);
}

/* _thnn_fused_lstm_cell_backward_impl [grad_hy?, grad_cy?, cx, cy, workspace, has_bias,
 * grad_gates, grad_cx, grad_bias?] */
static tb_status lstm_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 9 || a[2].kind != TB_VALUE_TENSOR || a[2].as.tensor->ndim != 2) {
    return ocl_decline(call, "unexpected arguments");
  }
  bool has_ghy = a[0].kind == TB_VALUE_TENSOR, has_gcy = a[1].kind == TB_VALUE_TENSOR;
  if (!has_ghy && !has_gcy) return TB_OK; /* no gradient flows: every output is undefined */
  tb_dtype dtype = a[2].as.tensor->dtype;
  int64_t B = a[2].as.tensor->sizes[0], H = a[2].as.tensor->sizes[1];
  bool has_bias = a[8].kind == TB_VALUE_TENSOR;
  cl_long longs[6] = {B, H, 0, 0, 0, 0}; /* then the row strides of grad_hy, grad_cy, cx, cy */
  bool ok = ocl_is_float(dtype) && (!has_ghy || is_rows(&a[0], dtype, B, H, &longs[2])) &&
            (!has_gcy || is_rows(&a[1], dtype, B, H, &longs[3])) &&
            is_rows(&a[2], dtype, B, H, &longs[4]) && is_rows(&a[3], dtype, B, H, &longs[5]) &&
            is_dense(&a[4], dtype, B, 4 * H) && is_dense(&a[6], dtype, B, 4 * H) &&
            is_dense(&a[7], dtype, B, H) && (!has_bias || is_dense(&a[8], dtype, 0, 4 * H));
  if (!ok) return ocl_decline(call, "operands that are not dense, of one dtype and size");
  int32_t device = -1;
  tb_status status = enter(ctx, call, dtype, &device);
  if (status != TB_OK) return status;
  const tb_tensor *t[7] = {a[6].as.tensor,
                           a[7].as.tensor,
                           has_ghy ? a[0].as.tensor : NULL,
                           has_gcy ? a[1].as.tensor : NULL,
                           a[2].as.tensor,
                           a[3].as.tensor,
                           a[4].as.tensor};
  cl_int flags[2] = {has_ghy, has_gcy};
  status = run(ctx, call, device, dtype, "tb_lstm_backward", t, 7, longs, 6, flags, 2, B * H);
  if (status == TB_OK && has_bias) {
    status = column_sums(ctx, call, device, a[8].as.tensor, a[6].as.tensor, B, 4 * H);
  }
  return status;
}

/* _thnn_fused_gru_cell_backward [grad_hy, workspace, has_bias, grad_input_gates,
 * grad_hidden_gates, grad_hx, grad_input_bias?, grad_hidden_bias?] */
static tb_status gru_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 8 || a[0].kind != TB_VALUE_TENSOR || a[0].as.tensor->ndim != 2) {
    return ocl_decline(call, "unexpected arguments");
  }
  tb_dtype dtype = a[0].as.tensor->dtype;
  int64_t B = a[0].as.tensor->sizes[0], H = a[0].as.tensor->sizes[1];
  bool bias_i = a[6].kind == TB_VALUE_TENSOR, bias_h = a[7].kind == TB_VALUE_TENSOR;
  cl_long longs[3] = {B, H, 0}; /* then grad_hy's row stride */
  bool ok = ocl_is_float(dtype) && is_rows(&a[0], dtype, B, H, &longs[2]) &&
            is_dense(&a[1], dtype, B, 5 * H) && is_dense(&a[3], dtype, B, 3 * H) &&
            is_dense(&a[4], dtype, B, 3 * H) && is_dense(&a[5], dtype, B, H) &&
            (!bias_i || is_dense(&a[6], dtype, 0, 3 * H)) &&
            (!bias_h || is_dense(&a[7], dtype, 0, 3 * H));
  if (!ok) return ocl_decline(call, "operands that are not dense, of one dtype and size");
  int32_t device = -1;
  tb_status status = enter(ctx, call, dtype, &device);
  if (status != TB_OK) return status;
  const tb_tensor *t[5] = {a[3].as.tensor, a[4].as.tensor, a[5].as.tensor, a[0].as.tensor,
                           a[1].as.tensor};
  status = run(ctx, call, device, dtype, "tb_gru_backward", t, 5, longs, 3, NULL, 0, B * H);
  if (status == TB_OK && bias_i) {
    status = column_sums(ctx, call, device, a[6].as.tensor, a[3].as.tensor, B, 3 * H);
  }
  if (status == TB_OK && bias_h) {
    status = column_sums(ctx, call, device, a[7].as.tensor, a[4].as.tensor, B, 3 * H);
  }
  return status;
}

#define FLOATS (TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64))
static const tb_kernel k_lstm = {
    sizeof(tb_kernel),
    "_thnn_fused_lstm_cell",
    cell,
    FLOATS,
    0,
    "_thnn_fused_lstm_cell(Tensor input_gates, Tensor hidden_gates, Tensor cx, Tensor? "
    "input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor, Tensor)",
    (void *)&k_lstm};
static const tb_kernel k_lstm_backward = {
    sizeof(tb_kernel),
    "_thnn_fused_lstm_cell_backward_impl",
    lstm_backward,
    FLOATS,
    0,
    "_thnn_fused_lstm_cell_backward_impl(Tensor? grad_hy, Tensor? grad_cy, Tensor cx, Tensor cy, "
    "Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor)",
    NULL};
static const tb_kernel k_gru = {
    sizeof(tb_kernel),
    "_thnn_fused_gru_cell",
    cell,
    FLOATS,
    0,
    "_thnn_fused_gru_cell(Tensor input_gates, Tensor hidden_gates, Tensor hx, Tensor? "
    "input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor)",
    NULL};
static const tb_kernel k_gru_backward = {
    sizeof(tb_kernel),
    "_thnn_fused_gru_cell_backward",
    gru_backward,
    FLOATS,
    0,
    "_thnn_fused_gru_cell_backward(Tensor grad_hy, Tensor workspace, bool has_bias) -> (Tensor, "
    "Tensor, Tensor, Tensor, Tensor)",
    NULL};

const tb_kernel *const ocl_rnn_kernels[] = {&k_lstm, &k_lstm_backward, &k_gru, &k_gru_backward,
                                            NULL};
