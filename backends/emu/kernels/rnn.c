/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The fused RNN cells nn.LSTM and nn.GRU choose for an accelerator (as for CUDA):
 * _thnn_fused_lstm_cell, _thnn_fused_lstm_cell_backward_impl, _thnn_fused_gru_cell and
 * _thnn_fused_gru_cell_backward, with CUDA's workspace layout (aten/src/ATen/native/cuda/RNN.cu,
 * and the CPU equivalents of csrc/aten/DeviceOnlyOps.cpp): LSTM [B, 4H] holding i, f, g, o after
 * their activations; GRU [B, 5H] holding r, z, n, hx and the hidden gates' n chunk with its
 * bias.  Biases are both given or both absent; the backwards sum the gate gradients over the
 * batch for the bias gradients when has_bias.
 *
 * float32 and float64 compute in their own type, float16 and bfloat16 in float32 (as CUDA's
 * kernels, in their accumulate type); operands of any strides are staged contiguous.  Batch
 * rows are split over emu's pool.
 */
#include <stdlib.h>

#include "fastmath.h"
#include "kernel.h"

typedef struct rnn_job {
  int64_t B, H;
  const void *in[6];   /* contiguous inputs in the compute dtype, by position; NULL when absent */
  void *out[5];        /* contiguous outputs in the compute dtype; NULL when absent */
  int sum_of, sum_out; /* column_sums: out[sum_out] = column sums of out[sum_of], [B, cols] */
  int64_t cols;
} rnn_job;

#define T float
#define SFX(name) name##_f32
#define SIGMOID emu_sigmoidf
#define TANH emu_tanhf
#include "rnn_loops.h"
#undef T
#undef SFX
#undef SIGMOID
#undef TANH
#define T double
#define SFX(name) name##_f64
#define SIGMOID emu_sigmoid
#define TANH tanh
#include "rnn_loops.h"
#undef T
#undef SFX
#undef SIGMOID
#undef TANH

#define TYPED(dt, name) ((dt) == TB_DTYPE_FLOAT64 ? name##_f64 : name##_f32)

/* One cell call: its operands staged, its loop run over the batch, its outputs written back. */
typedef struct rnn_call {
  const char *name;
  tb_dtype dt;
  rnn_job job;
  void *scratch[6]; /* staged copies of the inputs, by position */
  const emu_tensor *outputs[5];
} rnn_call;

static bool stage_inputs(rnn_call *c, const emu_arg *args, int count) {
  for (int k = 0; k < count; k++) {
    c->job.in[k] = NULL;
    if (args[k].kind != TB_VALUE_TENSOR) continue;
    c->job.in[k] = emu_contiguous_as(args[k].as.tensor, c->dt, &c->scratch[k]);
    if (c->job.in[k] == NULL) return false;
  }
  return true;
}

static bool stage_outputs(rnn_call *c, const emu_arg *args, int count) {
  for (int k = 0; k < count; k++) {
    c->job.out[k] = NULL;
    c->outputs[k] = NULL;
    if (args[k].kind != TB_VALUE_TENSOR || args[k].as.tensor->numel == 0) continue;
    c->outputs[k] = args[k].as.tensor;
    c->job.out[k] = emu_output_begin(args[k].as.tensor, c->dt);
    if (c->job.out[k] == NULL) return false;
  }
  return true;
}

/* Runs `rows` (a loop of the compute dtype) over the batch. */
static void run_rows(rnn_call *c, emu_range_fn rows) {
  if (c->job.B > 0 && c->job.H > 0) {
    emu_parallel_for(c->job.B, c->job.H >= 2048 ? 1 : 2048 / c->job.H, rows, &c->job);
  }
}

/* out[out] = the column sums over the batch of out[of] ([B, cols]), when out[out] is wanted. */
static void sum_columns(rnn_call *c, int of, int out, int64_t cols) {
  if (c->job.out[out] == NULL) return;
  c->job.sum_of = of;
  c->job.sum_out = out;
  c->job.cols = cols;
  emu_parallel_for(cols, 16384 / (c->job.B + 1) + 1, TYPED(c->dt, column_sums), &c->job);
}

/* Writes the staged outputs back into their tensors (or reports the failure); frees. */
static void finish(tbk_task *task, rnn_call *c, bool ok) {
  if (!ok) tbk_task_fail(task, "%s: out of host memory", c->name);
  for (int k = 0; k < 5; k++) {
    if (c->outputs[k] != NULL) emu_output_end(c->outputs[k], c->job.out[k], c->dt, ok);
  }
  for (int k = 0; k < 6; k++) free(c->scratch[k]);
}

static tb_dtype compute_dtype(tb_dtype d) {
  return d == TB_DTYPE_FLOAT64 ? TB_DTYPE_FLOAT64 : TB_DTYPE_FLOAT32;
}

/* A call on [B, H] states of `like`'s dtype. */
static rnn_call call_of(const char *name, const emu_tensor *like) {
  rnn_call c = {.name = name, .dt = compute_dtype(like->dtype)};
  c.job.B = like->sizes[0];
  c.job.H = like->sizes[1];
  return c;
}

/* _thnn_fused_lstm_cell: (input_gates, hidden_gates, cx, input_bias?, hidden_bias?, hy, cy,
 * workspace) */
static void run_lstm(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  rnn_call c = call_of("_thnn_fused_lstm_cell", a[2].as.tensor);
  bool ok = stage_inputs(&c, a, 5) && stage_outputs(&c, a + 5, 3);
  if (ok) run_rows(&c, TYPED(c.dt, lstm_forward));
  finish(task, &c, ok);
}

/* _thnn_fused_lstm_cell_backward_impl: (grad_hy?, grad_cy?, cx, cy, workspace, has_bias,
 * grad_gates, grad_cx, grad_bias?) */
static void run_lstm_backward(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  rnn_call c = call_of("_thnn_fused_lstm_cell_backward_impl", a[2].as.tensor);
  bool ok = stage_inputs(&c, a, 5) && stage_outputs(&c, a + 6, 3);
  if (ok) {
    run_rows(&c, TYPED(c.dt, lstm_backward));
    sum_columns(&c, 0, 2, 4 * c.job.H);
  }
  finish(task, &c, ok);
}

/* _thnn_fused_gru_cell: (input_gates, hidden_gates, hx, input_bias?, hidden_bias?, hy,
 * workspace) */
static void run_gru(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  rnn_call c = call_of("_thnn_fused_gru_cell", a[2].as.tensor);
  bool ok = stage_inputs(&c, a, 5) && stage_outputs(&c, a + 5, 2);
  if (ok) run_rows(&c, TYPED(c.dt, gru_forward));
  finish(task, &c, ok);
}

/* _thnn_fused_gru_cell_backward: (grad_hy, workspace, has_bias, grad_input_gates,
 * grad_hidden_gates, grad_hx, grad_input_bias?, grad_hidden_bias?) */
static void run_gru_backward(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  rnn_call c = call_of("_thnn_fused_gru_cell_backward", a[0].as.tensor);
  bool ok = stage_inputs(&c, a, 2) && stage_outputs(&c, a + 3, 5);
  if (ok) {
    run_rows(&c, TYPED(c.dt, gru_backward));
    sum_columns(&c, 0, 3, 3 * c.job.H);
    sum_columns(&c, 1, 4, 3 * c.job.H);
  }
  finish(task, &c, ok);
}

/* ------------------------------------------------------------------------------------------ */
/* Checks                                                                                      */

static bool is_matrix(const tb_tensor *t, int64_t rows, int64_t cols) {
  return t->ndim == 2 && t->sizes[0] == rows && t->sizes[1] == cols;
}

static bool is_vector(const tb_value *v, int64_t size) {
  return v->kind == TB_VALUE_TENSOR && v->as.tensor->ndim == 1 && v->as.tensor->sizes[0] == size;
}

/* Every tensor argument floating and of one dtype. */
static tb_status check_dtypes(const char *name, const tb_value *args, int32_t count) {
  tb_dtype dtype = TB_DTYPE_COUNT;
  for (int32_t i = 0; i < count; i++) {
    if (args[i].kind != TB_VALUE_TENSOR) continue;
    if (dtype == TB_DTYPE_COUNT) dtype = args[i].as.tensor->dtype;
    if (args[i].as.tensor->dtype != dtype || !emu_is_floating(dtype)) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: floating tensors of one dtype only", name);
    }
  }
  return TB_OK;
}

static tb_status declined(const char *name, const char *why) {
  return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: %s", name, why);
}

/* The forward cells: `gates` chunks of gates [B, gates H], state [B, H], both biases [gates H]
 * or neither, outputs as the meta function made them (out_sizes: state, then workspace). */
static tb_status check_cell(const char *name, const tb_value *args, int32_t count, int gates,
                            const char *kinds) {
  tb_status status = emu_check_args(name, args, count, kinds);
  if (status == TB_OK) status = check_dtypes(name, args, count);
  if (status != TB_OK) return status;
  const tb_tensor *state = args[2].as.tensor;
  if (state->ndim != 2) return declined(name, "a state of other than [batch, hidden]");
  const int64_t B = state->sizes[0], H = state->sizes[1];
  if (!is_matrix(args[0].as.tensor, B, gates * H) || !is_matrix(args[1].as.tensor, B, gates * H)) {
    return declined(name, "gates of other sizes than the state's");
  }
  const bool with_bias = args[3].kind == TB_VALUE_TENSOR;
  if (with_bias != (args[4].kind == TB_VALUE_TENSOR) ||
      (with_bias && (!is_vector(&args[3], gates * H) || !is_vector(&args[4], gates * H)))) {
    return declined(name, "biases not both of the gates' size");
  }
  for (int32_t k = 5; k < count; k++) {
    const int64_t cols = k == count - 1 ? (gates == 4 ? 4 : 5) * H : H;
    if (!is_matrix(args[k].as.tensor, B, cols)) return declined(name, "outputs of other sizes");
  }
  return TB_OK;
}

static tb_status kernel_lstm(tb_stream stream, const tb_value *args, int32_t count) {
  const char *name = "_thnn_fused_lstm_cell";
  tb_status status = check_cell(name, args, count, 4, "TTTttTTT");
  if (status != TB_OK) return status;
  return emu_launch(name, stream, args, count, run_lstm, 0, NULL);
}

static tb_status kernel_gru(tb_stream stream, const tb_value *args, int32_t count) {
  const char *name = "_thnn_fused_gru_cell";
  tb_status status = check_cell(name, args, count, 3, "TTTttTT");
  if (status != TB_OK) return status;
  return emu_launch(name, stream, args, count, run_gru, 0, NULL);
}

static tb_status kernel_lstm_backward(tb_stream stream, const tb_value *args, int32_t count) {
  const char *name = "_thnn_fused_lstm_cell_backward_impl";
  tb_status status = emu_check_args(name, args, count, "ttTTTbttt");
  if (status == TB_OK) status = check_dtypes(name, args, count);
  if (status != TB_OK) return status;
  if (args[0].kind != TB_VALUE_TENSOR && args[1].kind != TB_VALUE_TENSOR) {
    return TB_OK; /* no gradient flows: every output is undefined, nothing to compute */
  }
  const tb_tensor *cx = args[2].as.tensor;
  if (cx->ndim != 2) return declined(name, "a state of other than [batch, hidden]");
  const int64_t B = cx->sizes[0], H = cx->sizes[1];
  for (int k = 0; k < 4; k++) {
    if (args[k].kind == TB_VALUE_TENSOR && !is_matrix(args[k].as.tensor, B, H)) {
      return declined(name, "states of other sizes");
    }
  }
  if (!is_matrix(args[4].as.tensor, B, 4 * H) || args[6].kind != TB_VALUE_TENSOR ||
      !is_matrix(args[6].as.tensor, B, 4 * H) || args[7].kind != TB_VALUE_TENSOR ||
      !is_matrix(args[7].as.tensor, B, H) ||
      (args[8].kind == TB_VALUE_TENSOR && !is_vector(&args[8], 4 * H))) {
    return declined(name, "workspace or gradients of other sizes");
  }
  return emu_launch(name, stream, args, count, run_lstm_backward, 0, NULL);
}

static tb_status kernel_gru_backward(tb_stream stream, const tb_value *args, int32_t count) {
  const char *name = "_thnn_fused_gru_cell_backward";
  tb_status status = emu_check_args(name, args, count, "TTbTTTtt");
  if (status == TB_OK) status = check_dtypes(name, args, count);
  if (status != TB_OK) return status;
  const tb_tensor *grad_hy = args[0].as.tensor;
  if (grad_hy->ndim != 2) return declined(name, "a gradient of other than [batch, hidden]");
  const int64_t B = grad_hy->sizes[0], H = grad_hy->sizes[1];
  if (!is_matrix(args[1].as.tensor, B, 5 * H) || !is_matrix(args[3].as.tensor, B, 3 * H) ||
      !is_matrix(args[4].as.tensor, B, 3 * H) || !is_matrix(args[5].as.tensor, B, H) ||
      (args[6].kind == TB_VALUE_TENSOR && !is_vector(&args[6], 3 * H)) ||
      (args[7].kind == TB_VALUE_TENSOR && !is_vector(&args[7], 3 * H))) {
    return declined(name, "workspace or gradients of other sizes");
  }
  return emu_launch(name, stream, args, count, run_gru_backward, 0, NULL);
}

EMU_KERNEL(k_lstm, "_thnn_fused_lstm_cell", kernel_lstm, EMU_FLOATS,
           "_thnn_fused_lstm_cell(Tensor input_gates, Tensor hidden_gates, Tensor cx, Tensor? "
           "input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor, Tensor)");
EMU_KERNEL(k_lstm_backward, "_thnn_fused_lstm_cell_backward_impl", kernel_lstm_backward, EMU_FLOATS,
           "_thnn_fused_lstm_cell_backward_impl(Tensor? grad_hy, Tensor? grad_cy, Tensor cx, "
           "Tensor cy, Tensor workspace, bool has_bias) -> (Tensor, Tensor, Tensor)");
EMU_KERNEL(k_gru, "_thnn_fused_gru_cell", kernel_gru, EMU_FLOATS,
           "_thnn_fused_gru_cell(Tensor input_gates, Tensor hidden_gates, Tensor hx, Tensor? "
           "input_bias=None, Tensor? hidden_bias=None) -> (Tensor, Tensor)");
EMU_KERNEL(k_gru_backward, "_thnn_fused_gru_cell_backward", kernel_gru_backward, EMU_FLOATS,
           "_thnn_fused_gru_cell_backward(Tensor grad_hy, Tensor workspace, bool has_bias) -> "
           "(Tensor, Tensor, Tensor, Tensor, Tensor)");

const tb_kernel *const emu_rnn_kernels[] = {&k_lstm, &k_lstm_backward, &k_gru, &k_gru_backward,
                                            NULL};
