/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * softmax and log_softmax along one dimension, and their backwards.  The tensor is seen as
 * lines along `dim` (outer x inner of them); lines are split across the pool and computed in
 * double for float64 and in float (sums in double) for the others, with the vectorised exp of
 * fastmath.h.  Each line is staged in a contiguous buffer, so any stride works.
 */
#include <stdlib.h>

#include "fastmath.h"
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

/* Reductions written lane-wise (8 independent accumulators) so that compilers vectorise them
 * without reassociating floating-point sums. */
#define LANES 8

__attribute__((always_inline)) static inline float max_f(const float *x, int64_t n) {
  float lane[LANES];
  for (int j = 0; j < LANES; j++) lane[j] = -INFINITY;
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES) {
    for (int j = 0; j < LANES; j++) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
  }
  float max = -INFINITY;
  for (; i < n; i++) max = x[i] > max ? x[i] : max;
  for (int j = 0; j < LANES; j++) max = lane[j] > max ? lane[j] : max;
  return max;
}

__attribute__((always_inline)) static inline double sum_f(const float *x, int64_t n) {
  double lane[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES) {
    for (int j = 0; j < LANES; j++) lane[j] += x[i + j];
  }
  double sum = 0;
  for (; i < n; i++) sum += x[i];
  for (int j = 0; j < LANES; j++) sum += lane[j];
  return sum;
}

__attribute__((always_inline)) static inline double dot_f(const float *x, const float *y,
                                                          int64_t n) {
  double lane[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES) {
    for (int j = 0; j < LANES; j++) lane[j] += (double)x[i + j] * y[i + j];
  }
  double sum = 0;
  for (; i < n; i++) sum += (double)x[i] * y[i];
  for (int j = 0; j < LANES; j++) sum += lane[j];
  return sum;
}

/* Softmax / log_softmax of one line in place, in double, for float64 (float lines go through
 * softmax_rows_f32). */
static void softmax_line_d(double *row, int64_t n, bool log_softmax) {
  double max = -INFINITY;
  for (int64_t i = 0; i < n; i++) max = row[i] > max ? row[i] : max;
  if (max == -INFINITY) max = 0;
  double sum = 0;
  for (int64_t i = 0; i < n; i++) sum += exp(row[i] - max);
  if (log_softmax) {
    double shift = log(sum) + max;
    for (int64_t i = 0; i < n; i++) row[i] -= shift;
  } else {
    for (int64_t i = 0; i < n; i++) row[i] = exp(row[i] - max) / sum;
  }
}

/* Backward of one line: `row` holds grad_output and becomes grad_input; `out` is the forward
 * output. */
static void softmax_backward_line_d(double *row, const double *out, int64_t n, bool log_softmax) {
  double dot = 0;
  if (log_softmax) {
    for (int64_t i = 0; i < n; i++) dot += row[i];
    for (int64_t i = 0; i < n; i++) row[i] -= exp(out[i]) * dot;
  } else {
    for (int64_t i = 0; i < n; i++) dot += row[i] * out[i];
    for (int64_t i = 0; i < n; i++) row[i] = out[i] * (row[i] - dot);
  }
}

EMU_HOT_LOOP static void softmax_backward_line_f(float *row, const float *out, int64_t n,
                                                 bool log_softmax) {
  if (log_softmax) {
    float d = (float)sum_f(row, n);
    for (int64_t i = 0; i < n; i++) row[i] -= emu_expf(out[i]) * d;
  } else {
    float d = (float)dot_f(row, out, n);
    for (int64_t i = 0; i < n; i++) row[i] = out[i] * (row[i] - d);
  }
}

/* Loads line elements into a contiguous buffer of the compute type (float or double). */
static void load_line(const char *p, int64_t stride, tb_dtype dtype, int64_t n, bool wide,
                      void *row) {
  const size_t item = emu_itemsize(dtype);
  if (wide) {
    double *d = row;
    for (int64_t i = 0; i < n; i++) d[i] = emu_load_double(p + i * stride * (int64_t)item, dtype);
  } else if (dtype == TB_DTYPE_FLOAT32 && stride == 1) {
    memcpy(row, p, (size_t)n * sizeof(float));
  } else {
    float *f = row;
    for (int64_t i = 0; i < n; i++)
      f[i] = (float)emu_load_double(p + i * stride * (int64_t)item, dtype);
  }
}

static void store_line(char *p, int64_t stride, tb_dtype dtype, int64_t n, bool wide,
                       const void *row) {
  const size_t item = emu_itemsize(dtype);
  if (wide) {
    const double *d = row;
    for (int64_t i = 0; i < n; i++) emu_store_double(p + i * stride * (int64_t)item, dtype, d[i]);
  } else if (dtype == TB_DTYPE_FLOAT32 && stride == 1) {
    memcpy(p, row, (size_t)n * sizeof(float));
  } else {
    const float *f = row;
    for (int64_t i = 0; i < n; i++) emu_store_double(p + i * stride * (int64_t)item, dtype, f[i]);
  }
}

/* Softmax / log_softmax of `rows` contiguous float rows of length n: directly on a contiguous
 * float32 tensor along its last dimension (the common case: no staging, no per-line offsets),
 * or on one staged line.  `out` may alias `in` (each element is read before it is written at
 * the same index).  NaNs propagate through exp into the sum. */
EMU_HOT_LOOP static void softmax_rows_f32(const float *in, float *out, int64_t rows, int64_t n,
                                          bool log_softmax) {
  for (int64_t r = 0; r < rows; r++) {
    const float *x = in + r * n;
    float *y = out + r * n;
    float max = max_f(x, n);
    if (max == -INFINITY) max = 0; /* all -inf: exp gives 0 and the result NaN, as on the CPU */
    double lane[LANES] = {0};
    int64_t i = 0;
    if (log_softmax) {
      for (; i + LANES <= n; i += LANES) {
        for (int j = 0; j < LANES; j++) lane[j] += emu_expf(x[i + j] - max);
      }
      double sum = 0;
      for (; i < n; i++) sum += emu_expf(x[i] - max);
      for (int j = 0; j < LANES; j++) sum += lane[j];
      const float shift = (float)(log(sum) + max);
      for (i = 0; i < n; i++) y[i] = x[i] - shift;
    } else {
      for (i = 0; i < n; i++) y[i] = emu_expf(x[i] - max);
      const float scale = (float)(1.0 / sum_f(y, n));
      for (i = 0; i < n; i++) y[i] *= scale;
    }
  }
}

static void softmax_lines(void *context, int64_t begin, int64_t end) {
  const softmax_job *job = context;
  const int64_t n = job->length;
  const emu_tensor *a = job->a, *b = job->b, *out = job->out;
  const bool wide = out->dtype == TB_DTYPE_FLOAT64;
  const size_t compute_item = wide ? sizeof(double) : sizeof(float);
  const bool backward = job->op == SOFTMAX_BACKWARD || job->op == LOG_SOFTMAX_BACKWARD;
  const bool log_softmax = job->op == LOG_SOFTMAX || job->op == LOG_SOFTMAX_BACKWARD;
  /* Two lines of scratch: on the stack when small (the common case), else on the heap. */
  _Alignas(64) char stack[2 * 4096 * sizeof(double)];
  char *buffer = stack;
  if ((size_t)n * 2 * compute_item > sizeof stack) {
    buffer = malloc((size_t)n * 2 * compute_item);
    if (buffer == NULL) return;
  }
  void *row = buffer, *other = buffer + (size_t)n * compute_item;
  if (!backward && !wide && a->dtype == TB_DTYPE_FLOAT32 && out->dtype == TB_DTYPE_FLOAT32 &&
      job->inner == 1 && emu_is_contiguous(a) && emu_is_contiguous(out)) {
    softmax_rows_f32((const float *)a->data + begin * n, (float *)out->data + begin * n,
                     end - begin, n, log_softmax);
    if (buffer != stack) free(buffer);
    return;
  }
  const int64_t sa = a->ndim ? a->strides[job->dim] : 1;
  const int64_t so = out->ndim ? out->strides[job->dim] : 1;
  const int64_t sb = b != NULL && b->ndim ? b->strides[job->dim] : 1;
  const size_t ia = emu_itemsize(a->dtype), io = emu_itemsize(out->dtype);
  for (int64_t line = begin; line < end; line++) {
    const char *pa = a->data + line_offset(a, job->dim, job->inner, line) * (int64_t)ia;
    char *po = out->data + line_offset(out, job->dim, job->inner, line) * (int64_t)io;
    load_line(pa, sa, a->dtype, n, wide, row);
    if (backward) {
      const char *pb =
          b->data + line_offset(b, job->dim, job->inner, line) * (int64_t)emu_itemsize(b->dtype);
      load_line(pb, sb, b->dtype, n, wide, other);
      if (wide) {
        softmax_backward_line_d(row, other, n, log_softmax);
      } else {
        softmax_backward_line_f(row, other, n, log_softmax);
      }
    } else if (wide) {
      softmax_line_d(row, n, log_softmax);
    } else {
      softmax_rows_f32(row, row, 1, n, log_softmax);
    }
    store_line(po, so, out->dtype, n, wide, row);
  }
  if (buffer != stack) free(buffer);
}

static void run_softmax(tbk_task *task) {
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
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: floating tensors only", name);
  }
  int64_t dim = args[dim_arg].as.i;
  int64_t rank = t->ndim > 0 ? t->ndim : 1;
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: dimension out of range", name);
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

EMU_KERNEL(
    k_softmax, "_softmax.out", kernel_softmax, EMU_FLOATS,
    "_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(
    k_log_softmax, "_log_softmax.out", kernel_log_softmax, EMU_FLOATS,
    "_log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_softmax_backward, "_softmax_backward_data.out", kernel_softmax_backward, EMU_FLOATS,
           "_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType "
           "input_dtype, *, Tensor(a!) grad_input) -> Tensor(a!)");
EMU_KERNEL(k_log_softmax_backward, "_log_softmax_backward_data.out", kernel_log_softmax_backward,
           EMU_FLOATS,
           "_log_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType "
           "input_dtype, *, Tensor(a!) out) -> Tensor(a!)");

const tb_kernel *const emu_softmax_kernels[] = {&k_softmax, &k_log_softmax, &k_softmax_backward,
                                                &k_log_softmax_backward, NULL};
