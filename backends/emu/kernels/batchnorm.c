/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Batch normalization forward and backward over dimension 1 of [N, C, ...] tensors, training
 * (batch statistics, running statistics updated in place) and evaluation (running statistics).
 * Channels are split across the pool.  The arithmetic follows ATen's CPU kernels step by step
 * (batch_norm_kernel.cpp), in the compute type (float for float32, float16 and bfloat16, double
 * for float64) where they round and in double where they accumulate:
 *
 *   mean = sum(x) / n, rounded; var_sum = sum((x - mean)^2), rounded;
 *   invstd = 1 / sqrt(var_sum / n + eps) (0 when both are 0);
 *   running_mean = momentum * mean + (1 - momentum) * running_mean, likewise running_var with
 *   the unbiased var_sum / (n - 1), rounded; in evaluation invstd = 1 / sqrt(running_var + eps);
 *   y = x * alpha + beta with alpha = invstd * weight, beta = bias - mean * alpha.
 *
 * save_mean and save_invstd receive the batch statistics in training; in evaluation ATen's CPU
 * kernel returns them empty (torch_backend's wrapper allocates them so), and when they do have
 * C elements they receive the running mean and invstd, as on CUDA.  Inputs of any layout are
 * read through a contiguous copy in the compute type; outputs are written through one.
 */
#include <stdlib.h>

#include "kernel.h"

typedef struct bn_job {
  int64_t n, c, s; /* [N, C, S] */
  tb_dtype ct;
  bool training;
  double momentum, eps;
  const char *x, *dy; /* contiguous, ct */
  char *y;            /* forward output / grad_input, contiguous, ct; NULL: not wanted */
  /* per-channel [C] tensors, any dtype and stride; NULL when absent (or empty) */
  const emu_tensor *weight, *bias, *running_mean, *running_var, *save_mean, *save_invstd;
  const emu_tensor *grad_weight, *grad_bias;
} bn_job;

/* Element c of a [C] tensor, or `absent` when there is none. */
static double channel(const emu_tensor *t, int64_t c, double absent) {
  if (t == NULL) return absent;
  return emu_load_double(t->data + c * t->strides[0] * (int64_t)emu_itemsize(t->dtype), t->dtype);
}

static void set_channel(const emu_tensor *t, int64_t c, double v) {
  if (t != NULL) {
    emu_store_double(t->data + c * t->strides[0] * (int64_t)emu_itemsize(t->dtype), t->dtype, v);
  }
}

/* A [C] argument, or NULL when absent or not [C] (an empty save tensor, say). */
static const emu_tensor *per_channel(const emu_arg *a, int64_t c) {
  if (a->kind != TB_VALUE_TENSOR || a->as.tensor->ndim != 1 || a->as.tensor->numel != c) {
    return NULL;
  }
  return c > 0 ? a->as.tensor : NULL;
}

/* Row sums in double: float terms in four accumulators (exact enough that the results, rounded
 * to float, equal ATen's sequential sums'), double terms in sequence as ATen adds them. */
#define ROW_SUMS(SFX, T)                                                              \
  static double row_sum_##SFX(const T *x, int64_t n) {                                \
    double s[4] = {0, 0, 0, 0};                                                       \
    int64_t i = 0;                                                                    \
    if (sizeof(T) == sizeof(float)) {                                                 \
      for (; i + 4 <= n; i += 4) {                                                    \
        for (int k = 0; k < 4; k++) s[k] += x[i + k];                                 \
      }                                                                               \
    }                                                                                 \
    for (; i < n; i++) s[0] += x[i];                                                  \
    return (s[0] + s[1]) + (s[2] + s[3]);                                             \
  }                                                                                   \
  /* sum((x - mean)^2), each square rounded to T as ATen does */                      \
  static double row_var_sum_##SFX(const T *x, int64_t n, T mean) {                    \
    double s[4] = {0, 0, 0, 0};                                                       \
    int64_t i = 0;                                                                    \
    if (sizeof(T) == sizeof(float)) {                                                 \
      for (; i + 4 <= n; i += 4) {                                                    \
        for (int k = 0; k < 4; k++) {                                                 \
          T d = x[i + k] - mean;                                                      \
          s[k] += (T)(d * d);                                                         \
        }                                                                             \
      }                                                                               \
    }                                                                                 \
    for (; i < n; i++) {                                                              \
      T d = x[i] - mean;                                                              \
      s[0] += (T)(d * d);                                                             \
    }                                                                                 \
    return (s[0] + s[1]) + (s[2] + s[3]);                                             \
  }                                                                                   \
  /* adds sum(dy) to *sum and sum((x - mean) * dy), each product rounded, to *dotp */ \
  static void row_dot_##SFX(const T *x, const T *dy, int64_t n, T mean, double *sum,  \
                            double *dotp) {                                           \
    double s[4] = {0, 0, 0, 0}, d[4] = {0, 0, 0, 0};                                  \
    int64_t i = 0;                                                                    \
    if (sizeof(T) == sizeof(float)) {                                                 \
      for (; i + 4 <= n; i += 4) {                                                    \
        for (int k = 0; k < 4; k++) {                                                 \
          s[k] += dy[i + k];                                                          \
          d[k] += (T)((x[i + k] - mean) * dy[i + k]);                                 \
        }                                                                             \
      }                                                                               \
    }                                                                                 \
    for (; i < n; i++) {                                                              \
      s[0] += dy[i];                                                                  \
      d[0] += (T)((x[i] - mean) * dy[i]);                                             \
    }                                                                                 \
    *sum += (s[0] + s[1]) + (s[2] + s[3]);                                            \
    *dotp += (d[0] + d[1]) + (d[2] + d[3]);                                           \
  }

/* y = x * alpha + beta over a contiguous row */
#define ROW_AFFINE(SFX, T)                                                                  \
  EMU_HOT_LOOP static void row_affine_##SFX(const T *x, T *y, int64_t n, T alpha, T beta) { \
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * alpha + beta;                             \
  }

/* dx = (dy - grad_mean - (x - mean) * k) * invstd * w over a contiguous row */
#define ROW_DX(SFX, T)                                                                            \
  EMU_HOT_LOOP static void row_dx_##SFX(const T *x, const T *dy, T *dx, int64_t n, T mean, T k,   \
                                        T grad_mean, T invstd, T w) {                             \
    for (int64_t i = 0; i < n; i++) dx[i] = (dy[i] - grad_mean - (x[i] - mean) * k) * invstd * w; \
  }                                                                                               \
  EMU_HOT_LOOP static void row_scale_##SFX(const T *dy, T *dx, int64_t n, T invstd, T w) {        \
    for (int64_t i = 0; i < n; i++) dx[i] = dy[i] * invstd * w;                                   \
  }

#define BN_CHANNELS(SFX, T, SQRT)                                                                 \
  ROW_SUMS(SFX, T)                                                                                \
  ROW_AFFINE(SFX, T)                                                                              \
  ROW_DX(SFX, T)                                                                                  \
  static void forward_##SFX(void *context, int64_t begin, int64_t end) {                          \
    const bn_job *j = context;                                                                    \
    const T *x = (const T *)j->x;                                                                 \
    T *y = (T *)j->y;                                                                             \
    const int64_t count = j->n * j->s;                                                            \
    for (int64_t c = begin; c < end; c++) {                                                       \
      T mean, invstd;                                                                             \
      if (j->training) {                                                                          \
        double sum = 0, var_sum = 0;                                                              \
        for (int64_t n = 0; n < j->n; n++) sum += row_sum_##SFX(x + (n * j->c + c) * j->s, j->s); \
        mean = (T)(sum / (double)count);                                                          \
        for (int64_t n = 0; n < j->n; n++) {                                                      \
          var_sum += row_var_sum_##SFX(x + (n * j->c + c) * j->s, j->s, mean);                    \
        }                                                                                         \
        const T var_sum_t = (T)var_sum;                                                           \
        const double var = (double)(var_sum_t / (T)count);                                        \
        invstd = var == 0 && j->eps == 0 ? (T)0 : (T)(1.0 / sqrt(var + j->eps));                  \
        set_channel(j->save_mean, c, mean);                                                       \
        set_channel(j->save_invstd, c, invstd);                                                   \
        const T momentum = (T)j->momentum;                                                        \
        if (j->running_mean) {                                                                    \
          T old = (T)channel(j->running_mean, c, 0);                                              \
          set_channel(j->running_mean, c, momentum *mean + ((T)1 - momentum) * old);              \
        }                                                                                         \
        if (j->running_var) {                                                                     \
          T unbiased = var_sum_t / (T)(count - 1);                                                \
          T old = (T)channel(j->running_var, c, 0);                                               \
          set_channel(j->running_var, c, momentum *unbiased + ((T)1 - momentum) * old);           \
        }                                                                                         \
      } else {                                                                                    \
        mean = (T)channel(j->running_mean, c, 0);                                                 \
        invstd = (T)1 / SQRT((T)channel(j->running_var, c, 0) + (T)j->eps);                       \
        set_channel(j->save_mean, c, mean);                                                       \
        set_channel(j->save_invstd, c, invstd);                                                   \
      }                                                                                           \
      const T alpha = invstd * (T)channel(j->weight, c, 1);                                       \
      const T beta = (T)channel(j->bias, c, 0) - mean * alpha;                                    \
      for (int64_t n = 0; n < j->n; n++) {                                                        \
        int64_t row = (n * j->c + c) * j->s;                                                      \
        row_affine_##SFX(x + row, y + row, j->s, alpha, beta);                                    \
      }                                                                                           \
    }                                                                                             \
  }                                                                                               \
  static void backward_##SFX(void *context, int64_t begin, int64_t end) {                         \
    const bn_job *j = context;                                                                    \
    const T *x = (const T *)j->x, *dy = (const T *)j->dy;                                         \
    T *dx = (T *)j->y;                                                                            \
    const int64_t count = j->n * j->s;                                                            \
    for (int64_t c = begin; c < end; c++) {                                                       \
      const T w = (T)channel(j->weight, c, 1);                                                    \
      T mean, invstd;                                                                             \
      if (j->training) {                                                                          \
        mean = (T)channel(j->save_mean, c, 0);                                                    \
        invstd = (T)channel(j->save_invstd, c, 0);                                                \
      } else {                                                                                    \
        mean = (T)channel(j->running_mean, c, 0);                                                 \
        invstd = (T)(1 / sqrt(channel(j->running_var, c, 0) + j->eps));                           \
      }                                                                                           \
      double sum = 0, dotp = 0;                                                                   \
      for (int64_t n = 0; n < j->n; n++) {                                                        \
        int64_t row = (n * j->c + c) * j->s;                                                      \
        row_dot_##SFX(x + row, dy + row, j->s, mean, &sum, &dotp);                                \
      }                                                                                           \
      if (dx != NULL) {                                                                           \
        const T k = (T)dotp * invstd * invstd / (T)count;                                         \
        const T grad_mean = (T)(sum / (double)count);                                             \
        for (int64_t n = 0; n < j->n; n++) {                                                      \
          int64_t row = (n * j->c + c) * j->s;                                                    \
          if (j->training) {                                                                      \
            row_dx_##SFX(x + row, dy + row, dx + row, j->s, mean, k, grad_mean, invstd, w);       \
          } else {                                                                                \
            row_scale_##SFX(dy + row, dx + row, j->s, invstd, w);                                 \
          }                                                                                       \
        }                                                                                         \
      }                                                                                           \
      set_channel(j->grad_weight, c, dotp *invstd);                                               \
      set_channel(j->grad_bias, c, sum);                                                          \
    }                                                                                             \
  }

BN_CHANNELS(f32, float, sqrtf)
BN_CHANNELS(f64, double, sqrt)

static void shape_of(const emu_tensor *t, bn_job *job) {
  job->n = t->sizes[0];
  job->c = t->sizes[1];
  job->s = 1;
  for (int d = 2; d < t->ndim; d++) job->s *= t->sizes[d];
}

static void over_channels(bn_job *job, emu_range_fn fn) {
  if (job->c == 0) return;
  int64_t work = job->n * job->s;
  emu_parallel_for(job->c, work >= 16384 ? 1 : 16384 / (work > 0 ? work : 1), fn, job);
}

static tb_dtype compute_type(tb_dtype d) {
  return d == TB_DTYPE_FLOAT64 ? TB_DTYPE_FLOAT64 : TB_DTYPE_FLOAT32;
}

/* native_batch_norm: (input, weight?, bias?, running_mean?, running_var?, training, momentum,
 * eps, out, save_mean, save_invstd) */
static void run_forward(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *input = a[0].as.tensor, *out = a[8].as.tensor;
  bn_job job = {0};
  shape_of(input, &job);
  job.ct = compute_type(input->dtype);
  job.training = a[5].as.b;
  job.momentum = emu_arg_double(&a[6]);
  job.eps = emu_arg_double(&a[7]);
  job.weight = per_channel(&a[1], job.c);
  job.bias = per_channel(&a[2], job.c);
  job.running_mean = per_channel(&a[3], job.c);
  job.running_var = per_channel(&a[4], job.c);
  job.save_mean = per_channel(&a[9], job.c);
  job.save_invstd = per_channel(&a[10], job.c);
  void *scratch = NULL;
  job.x = emu_contiguous_as(input, job.ct, &scratch);
  char *y = emu_output_begin(out, job.ct);
  job.y = y;
  bool ok = job.x != NULL && y != NULL;
  if (ok) {
    over_channels(&job, job.ct == TB_DTYPE_FLOAT32 ? forward_f32 : forward_f64);
  } else {
    tbk_task_fail(task, "native_batch_norm: out of host memory");
  }
  emu_output_end(out, y, job.ct, ok);
  free(scratch);
}

/* Whether an optional argument is absent or a [C] tensor. */
static bool optional_channel(const tb_value *v, int64_t c) {
  if (v->kind == TB_VALUE_NONE) return true;
  const tb_tensor *t = v->as.tensor;
  return t->ndim == 1 && t->sizes[0] == c;
}

static bool present(const tb_value *v) { return v->kind == TB_VALUE_TENSOR; }

/* ATen's CPU kernels take parameters of the input's dtype, or float ones with a float16 or
 * bfloat16 input, and raise otherwise: the other combinations go to them. */
static bool parameter_types_ok(const tb_value *args, int first, int last, tb_dtype input) {
  const bool reduced = input == TB_DTYPE_FLOAT16 || input == TB_DTYPE_BFLOAT16;
  tb_dtype common = TB_DTYPE_COUNT;
  for (int k = first; k <= last; k++) {
    if (!present(&args[k])) continue;
    tb_dtype d = args[k].as.tensor->dtype;
    if (common == TB_DTYPE_COUNT) common = d;
    if (d != common || (d != input && !(reduced && d == TB_DTYPE_FLOAT32))) return false;
  }
  return true;
}

static tb_status kernel_forward(tb_stream stream, const tb_value *args, int32_t count) {
  static const char name[] = "native_batch_norm";
  tb_status status = emu_check_args(name, args, count, "TttttbffTTT");
  if (status != TB_OK) return status;
  const tb_tensor *input = args[0].as.tensor, *out = args[8].as.tensor;
  if (input->ndim < 2 || !emu_is_floating(input->dtype) || out->dtype != input->dtype ||
      !emu_same_shape(input, out)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: [N, C, ...] floating input only", name);
  }
  int64_t c = input->sizes[1], numel = 1;
  for (int32_t d = 0; d < input->ndim; d++) numel *= input->sizes[d];
  bool training = args[5].as.b;
  if (!parameter_types_ok(args, 1, 4, input->dtype)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: parameters of mixed dtypes", name);
  }
  /* ATen's CPU kernel reads the first C elements of longer parameters and overruns shorter
   * ones: anything but [C] goes to it */
  for (int k = 1; k <= 4; k++) {
    if (!optional_channel(&args[k], c)) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: argument %d is not [C]", name, k);
    }
  }
  if (training && numel == 0) { /* the CPU raises ATen's error */
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: empty input in training", name);
  }
  if (!training && (!present(&args[3]) || !present(&args[4]))) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: %s: running_mean and running_var must be defined in evaluation mode",
                    name);
  }
  return emu_launch(name, stream, args, count, run_forward, 0, NULL);
}

/* native_batch_norm_backward: (grad_out, input, weight?, running_mean?, running_var?,
 * save_mean?, save_invstd?, train, eps, output_mask, grad_input?, grad_weight?, grad_bias?) */
static void run_backward(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *grad = a[0].as.tensor, *input = a[1].as.tensor;
  const emu_tensor *gin = a[10].kind == TB_VALUE_TENSOR ? a[10].as.tensor : NULL;
  bn_job job = {0};
  shape_of(input, &job);
  job.ct = compute_type(input->dtype);
  job.training = a[7].as.b;
  job.eps = emu_arg_double(&a[8]);
  job.weight = per_channel(&a[2], job.c);
  job.running_mean = per_channel(&a[3], job.c);
  job.running_var = per_channel(&a[4], job.c);
  job.save_mean = per_channel(&a[5], job.c);
  job.save_invstd = per_channel(&a[6], job.c);
  job.grad_weight = per_channel(&a[11], job.c);
  job.grad_bias = per_channel(&a[12], job.c);
  void *scratch[2] = {NULL, NULL};
  job.x = emu_contiguous_as(input, job.ct, &scratch[0]);
  job.dy = emu_contiguous_as(grad, job.ct, &scratch[1]);
  char *dx = gin != NULL ? emu_output_begin(gin, job.ct) : NULL;
  job.y = gin != NULL && gin->numel > 0 ? dx : NULL;
  bool ok = job.x != NULL && job.dy != NULL && (gin == NULL || dx != NULL);
  if (ok) {
    over_channels(&job, job.ct == TB_DTYPE_FLOAT32 ? backward_f32 : backward_f64);
  } else {
    tbk_task_fail(task, "native_batch_norm_backward: out of host memory");
  }
  if (gin != NULL) emu_output_end(gin, dx, job.ct, ok);
  free(scratch[0]);
  free(scratch[1]);
}

static tb_status kernel_backward(tb_stream stream, const tb_value *args, int32_t count) {
  static const char name[] = "native_batch_norm_backward";
  tb_status status = emu_check_args(name, args, count, "TTtttttbfBttt");
  if (status != TB_OK) return status;
  const tb_tensor *grad = args[0].as.tensor, *input = args[1].as.tensor;
  if (input->ndim < 2 || !emu_is_floating(input->dtype) || grad->dtype != input->dtype ||
      !emu_same_shape(input, grad) || !parameter_types_ok(args, 2, 6, input->dtype)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: [N, C, ...] floating input only", name);
  }
  int64_t c = input->sizes[1];
  bool training = args[7].as.b;
  for (int k = 2; k <= 4; k++) {
    if (!optional_channel(&args[k], c)) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: argument %d is not [C]", name, k);
    }
  }
  /* the statistics the mode reads must be [C]; ATen's CPU kernel fails otherwise */
  const int stats = training ? 5 : 3;
  for (int k = stats; k <= stats + 1; k++) {
    if (!present(&args[k]) || !optional_channel(&args[k], c)) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: argument %d is not [C]", name, k);
    }
  }
  const tb_value *gin = &args[10], *gw = &args[11], *gb = &args[12];
  if ((present(gin) && !emu_same_shape(gin->as.tensor, input)) ||
      (present(gw) && !optional_channel(gw, c)) || (present(gb) && !optional_channel(gb, c))) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: unexpected output shapes", name);
  }
  return emu_launch(name, stream, args, count, run_backward, 0, NULL);
}

EMU_KERNEL(
    k_forward, "native_batch_norm", kernel_forward, EMU_FLOATS,
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? "
    "running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)");
EMU_KERNEL(k_backward, "native_batch_norm_backward", kernel_backward, EMU_FLOATS,
           "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? "
           "running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, "
           "float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)");

const tb_kernel *const emu_batchnorm_kernels[] = {&k_forward, &k_backward, NULL};
