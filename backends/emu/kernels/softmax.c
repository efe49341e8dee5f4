/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * softmax and log_softmax along one dimension, and their backwards.  The tensor is seen as
 * lines along `dim` (outer x inner of them); lines are split across the pool and computed in
 * double for float64 and float for the others.  The contiguous last-dimension case, the common
 * one (attention, classifier logits), runs on plain pointers.
 */
#include <stdlib.h>

#include "kernel.h"

enum { SOFTMAX, LOG_SOFTMAX, SOFTMAX_BACKWARD, LOG_SOFTMAX_BACKWARD };

typedef struct softmax_state {
  int op;
  int64_t dim;
} softmax_state;

typedef struct softmax_job {
  const emu_tensor *a; /* input (forward) or grad_output (backward) */
  const emu_tensor *b; /* backward: the forward output */
  const emu_tensor *out;
  int op;
  int64_t dim, length, inner;
} softmax_job;

/* Offset (in elements) of line `line` for tensor t, given the split around `dim`. */
static int64_t line_offset(const emu_tensor *t, int64_t dim, int64_t inner, int64_t line) {
  int64_t outer_index = line / inner, inner_index = line % inner;
  int64_t offset = 0;
  for (int64_t d = t->ndim - 1; d > dim; d--) {
    offset += (inner_index % t->sizes[d]) * t->strides[d];
    inner_index /= t->sizes[d];
  }
  for (int64_t d = dim - 1; d >= 0; d--) {
    offset += (outer_index % t->sizes[d]) * t->strides[d];
    outer_index /= t->sizes[d];
  }
  return offset;
}

static void softmax_lines(void *context, int64_t begin, int64_t end) {
  const softmax_job *job = context;
  const int64_t n = job->length;
  double *row = malloc((size_t)n * 2 * sizeof(double));
  if (row == NULL) return;
  double *other = row + n;
  const emu_tensor *a = job->a, *b = job->b, *out = job->out;
  const int64_t sa = a->ndim ? a->strides[job->dim] : 1;
  const int64_t so = out->ndim ? out->strides[job->dim] : 1;
  const int64_t sb = b != NULL && b->ndim ? b->strides[job->dim] : 1;
  const size_t ia = emu_itemsize(a->dtype), io = emu_itemsize(out->dtype);
  for (int64_t line = begin; line < end; line++) {
    const char *pa = a->data + line_offset(a, job->dim, job->inner, line) * (int64_t)ia;
    char *po = out->data + line_offset(out, job->dim, job->inner, line) * (int64_t)io;
    if (a->dtype == TB_DTYPE_FLOAT32 && sa == 1) {
      const float *f = (const float *)pa;
      for (int64_t i = 0; i < n; i++) row[i] = f[i];
    } else {
      for (int64_t i = 0; i < n; i++) row[i] = emu_load_double(pa + i * sa * (int64_t)ia, a->dtype);
    }
    if (job->op == SOFTMAX || job->op == LOG_SOFTMAX) {
      double max = -INFINITY;
      for (int64_t i = 0; i < n; i++) max = row[i] > max || row[i] != row[i] ? row[i] : max;
      double sum = 0;
      for (int64_t i = 0; i < n; i++) sum += exp(row[i] - max);
      if (job->op == SOFTMAX) {
        for (int64_t i = 0; i < n; i++) row[i] = exp(row[i] - max) / sum;
      } else {
        double log_sum = log(sum) + max;
        for (int64_t i = 0; i < n; i++) row[i] -= log_sum;
      }
    } else {
      const size_t ib = emu_itemsize(b->dtype);
      const char *pb = b->data + line_offset(b, job->dim, job->inner, line) * (int64_t)ib;
      for (int64_t i = 0; i < n; i++)
        other[i] = emu_load_double(pb + i * sb * (int64_t)ib, b->dtype);
      double dot = 0;
      if (job->op == SOFTMAX_BACKWARD) {
        for (int64_t i = 0; i < n; i++) dot += row[i] * other[i];
        for (int64_t i = 0; i < n; i++) row[i] = other[i] * (row[i] - dot);
      } else {
        for (int64_t i = 0; i < n; i++) dot += row[i];
        for (int64_t i = 0; i < n; i++) row[i] = row[i] - exp(other[i]) * dot;
      }
    }
    if (out->dtype == TB_DTYPE_FLOAT32 && so == 1) {
      float *f = (float *)po;
      for (int64_t i = 0; i < n; i++) f[i] = (float)row[i];
    } else {
      for (int64_t i = 0; i < n; i++)
        emu_store_double(po + i * so * (int64_t)io, out->dtype, row[i]);
    }
  }
  free(row);
}

static void run_softmax(emu_task *task) {
  emu_call *call = emu_call_of(task);
  const softmax_state *state = call->scratch;
  bool backward = state->op == SOFTMAX_BACKWARD || state->op == LOG_SOFTMAX_BACKWARD;
  softmax_job job = {call->args[0].as.tensor,
                     backward ? call->args[1].as.tensor : NULL,
                     call->args[call->count - 1].as.tensor,
                     state->op,
                     state->dim,
                     1,
                     1};
  const emu_tensor *t = job.a;
  if (t->ndim > 0) {
    job.length = t->sizes[job.dim];
    for (int64_t d = job.dim + 1; d < t->ndim; d++) job.inner *= t->sizes[d];
  }
  if (t->numel == 0) return;
  int64_t lines = t->numel / job.length;
  emu_parallel_for(lines, job.length >= 1024 ? 1 : 1024 / job.length, softmax_lines, &job);
}

static tb_status enqueue_softmax(const char *name, const char *kinds, int op, int dim_arg,
                                 tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args(name, args, count, kinds);
  if (status != TB_OK) return status;
  const tb_tensor *t = args[0].as.tensor;
  if (!emu_is_floating(t->dtype)) {
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: floating tensors only", name);
  }
  int64_t dim = args[dim_arg].as.i;
  int64_t rank = t->ndim > 0 ? t->ndim : 1;
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) {
    return emu_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: dimension out of range", name);
  }
  softmax_state state = {op, t->ndim > 0 ? dim : 0};
  return emu_launch(name, stream, args, count, run_softmax, sizeof state, &state);
}

/* _softmax.out / _log_softmax.out: (self, dim, half_to_float, out) */
static tb_status kernel_softmax(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_softmax("_softmax.out", "TibT", SOFTMAX, 1, s, a, n);
}
static tb_status kernel_log_softmax(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_softmax("_log_softmax.out", "TibT", LOG_SOFTMAX, 1, s, a, n);
}
/* _softmax_backward_data.out / _log_...: (grad_output, output, dim, input_dtype, grad_input) */
static tb_status kernel_softmax_backward(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_softmax("_softmax_backward_data.out", "TTidT", SOFTMAX_BACKWARD, 2, s, a, n);
}
static tb_status kernel_log_softmax_backward(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_softmax("_log_softmax_backward_data.out", "TTidT", LOG_SOFTMAX_BACKWARD, 2, s, a,
                         n);
}

EMU_KERNEL(k_softmax, "_softmax.out", kernel_softmax, EMU_FLOATS);
EMU_KERNEL(k_log_softmax, "_log_softmax.out", kernel_log_softmax, EMU_FLOATS);
EMU_KERNEL(k_softmax_backward, "_softmax_backward_data.out", kernel_softmax_backward, EMU_FLOATS);
EMU_KERNEL(k_log_softmax_backward, "_log_softmax_backward_data.out", kernel_log_softmax_backward,
           EMU_FLOATS);

const tb_kernel *const emu_softmax_kernels[] = {&k_softmax, &k_log_softmax, &k_softmax_backward,
                                                &k_log_softmax_backward, NULL};
