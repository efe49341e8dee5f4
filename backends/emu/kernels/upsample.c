/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * 2-d upsampling of [N, C, H, W] tensors: nearest (ATen's legacy "nearest" and "nearest-exact")
 * and bilinear (align_corners either way), forward and backward.  Source indices and weights
 * are computed per output row and column exactly as ATen's CPU kernels compute them
 * (UpSample.h: a scale given by the caller is used as 1 / scale, else input / output size, in
 * float for every dtype but float64), then each plane (one channel of one sample) gathers, or
 * for the backward scatters, along them.  Planes are split across the pool.
 *
 * Nearest forward copies elements of any dtype ATen's CPU kernel takes (floats and uint8);
 * bilinear and the backwards compute in float (double for float64), through contiguous buffers,
 * so any input layout works.
 */
#include <stdlib.h>

#include "kernel.h"

typedef struct upsample_job {
  int64_t planes, ih, iw, oh, ow;
  const char *in; /* forward input / backward grad_output, contiguous */
  char *out;      /* forward output / backward grad_input, contiguous */
  size_t item;    /* nearest forward: element size */
  /* source rows and columns per output row and column; bilinear also the second source and the
   * weights (float or double, the compute type) */
  int64_t *h0, *h1, *w0, *w1;
  void *hl0, *hl1, *wl0, *wl1;
} upsample_job;

/* A scale argument: its value when given and positive (ATen ignores the rest), else 0. */
static double scale_of(const emu_arg *a) {
  double s = a->kind == TB_VALUE_NONE ? 0.0 : emu_arg_double(a);
  return s > 0 ? s : 0.0;
}

/* ATen's nearest_idx / nearest_exact_idx. */
static int64_t nearest_source(int64_t o, int64_t in, int64_t out, double scale, bool exact) {
  if (!exact && out == in) return o;
  if (!exact && out == 2 * in) return o >> 1;
  float s = scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
  int64_t src = exact ? (int64_t)floorf((float)(((double)o + 0.5) * (double)s))
                      : (int64_t)floorf((float)o * s);
  return src < in - 1 ? src : in - 1;
}

/* ATen's compute_source_index_and_lambda over one axis, in float or double. */
#define LINEAR_AXIS(SFX, T)                                                                \
  static void linear_axis_##SFX(int64_t out, int64_t in, bool align_corners, double scale, \
                                int64_t *i0, int64_t *i1, T *l0, T *l1) {                  \
    T ratio;                                                                               \
    if (align_corners) {                                                                   \
      ratio = out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0;                                 \
    } else {                                                                               \
      ratio = scale > 0 ? (T)(1.0 / scale) : (T)in / (T)out;                               \
    }                                                                                      \
    for (int64_t o = 0; o < out; o++) {                                                    \
      if (out == in) {                                                                     \
        i0[o] = i1[o] = o;                                                                 \
        l0[o] = 1;                                                                         \
        l1[o] = 0;                                                                         \
        continue;                                                                          \
      }                                                                                    \
      T real = align_corners ? ratio * (T)o : ratio * ((T)o + (T)0.5) - (T)0.5;            \
      if (!align_corners && real < 0) real = 0;                                            \
      int64_t index = (int64_t)floorf((float)real);                                        \
      if (index > in - 1) index = in - 1;                                                  \
      T lambda = real - (T)index;                                                          \
      lambda = lambda < 0 ? 0 : lambda > 1 ? 1 : lambda;                                   \
      i0[o] = index;                                                                       \
      i1[o] = index + (index < in - 1 ? 1 : 0);                                            \
      l1[o] = lambda;                                                                      \
      l0[o] = (T)1 - lambda;                                                               \
    }                                                                                      \
  }

/* Bilinear planes: out = (x[h0, w0] w0 + x[h0, w1] w1) h0 + (x[h1, w0] w0 + x[h1, w1] w1) h1,
 * the order of ATen's separable kernel; the backward adds h * w * g to the four sources. */
#define BILINEAR_PLANES(SFX, T)                                                    \
  LINEAR_AXIS(SFX, T)                                                              \
  static void bilinear_##SFX(void *context, int64_t begin, int64_t end) {          \
    const upsample_job *j = context;                                               \
    const T *hl0 = j->hl0, *hl1 = j->hl1, *wl0 = j->wl0, *wl1 = j->wl1;            \
    for (int64_t p = begin; p < end; p++) {                                        \
      const T *in = (const T *)j->in + p * j->ih * j->iw;                          \
      T *out = (T *)j->out + p * j->oh * j->ow;                                    \
      for (int64_t oh = 0; oh < j->oh; oh++) {                                     \
        const T *r0 = in + j->h0[oh] * j->iw, *r1 = in + j->h1[oh] * j->iw;        \
        for (int64_t ow = 0; ow < j->ow; ow++) {                                   \
          int64_t c0 = j->w0[ow], c1 = j->w1[ow];                                  \
          T t0 = r0[c0] * wl0[ow] + r0[c1] * wl1[ow];                              \
          T t1 = r1[c0] * wl0[ow] + r1[c1] * wl1[ow];                              \
          out[oh * j->ow + ow] = t0 * hl0[oh] + t1 * hl1[oh];                      \
        }                                                                          \
      }                                                                            \
    }                                                                              \
  }                                                                                \
  static void bilinear_backward_##SFX(void *context, int64_t begin, int64_t end) { \
    const upsample_job *j = context;                                               \
    const T *hl0 = j->hl0, *hl1 = j->hl1, *wl0 = j->wl0, *wl1 = j->wl1;            \
    for (int64_t p = begin; p < end; p++) {                                        \
      const T *gout = (const T *)j->in + p * j->oh * j->ow;                        \
      T *gin = (T *)j->out + p * j->ih * j->iw;                                    \
      for (int64_t i = 0; i < j->ih * j->iw; i++) gin[i] = 0;                      \
      for (int64_t oh = 0; oh < j->oh; oh++) {                                     \
        T *r0 = gin + j->h0[oh] * j->iw, *r1 = gin + j->h1[oh] * j->iw;            \
        for (int64_t ow = 0; ow < j->ow; ow++) {                                   \
          const T g = gout[oh * j->ow + ow];                                       \
          int64_t c0 = j->w0[ow], c1 = j->w1[ow];                                  \
          r0[c0] += hl0[oh] * wl0[ow] * g;                                         \
          r0[c1] += hl0[oh] * wl1[ow] * g;                                         \
          r1[c0] += hl1[oh] * wl0[ow] * g;                                         \
          r1[c1] += hl1[oh] * wl1[ow] * g;                                         \
        }                                                                          \
      }                                                                            \
    }                                                                              \
  }

BILINEAR_PLANES(f32, float)
BILINEAR_PLANES(f64, double)

#define NEAREST_BACKWARD_PLANES(SFX, T)                                                 \
  static void nearest_backward_##SFX(void *context, int64_t begin, int64_t end) {       \
    const upsample_job *j = context;                                                    \
    for (int64_t p = begin; p < end; p++) {                                             \
      const T *gout = (const T *)j->in + p * j->oh * j->ow;                             \
      T *gin = (T *)j->out + p * j->ih * j->iw;                                         \
      for (int64_t i = 0; i < j->ih * j->iw; i++) gin[i] = 0;                           \
      for (int64_t oh = 0; oh < j->oh; oh++) {                                          \
        T *row = gin + j->h0[oh] * j->iw;                                               \
        for (int64_t ow = 0; ow < j->ow; ow++) row[j->w0[ow]] += gout[oh * j->ow + ow]; \
      }                                                                                 \
    }                                                                                   \
  }

NEAREST_BACKWARD_PLANES(f32, float)
NEAREST_BACKWARD_PLANES(f64, double)

/* Nearest forward: a gather of whole elements, whatever their dtype. */
static void nearest_planes(void *context, int64_t begin, int64_t end) {
  const upsample_job *j = context;
  const size_t item = j->item;
  for (int64_t p = begin; p < end; p++) {
    const char *in = j->in + (size_t)(p * j->ih * j->iw) * item;
    char *out = j->out + (size_t)(p * j->oh * j->ow) * item;
    for (int64_t oh = 0; oh < j->oh; oh++) {
      const char *row = in + (size_t)(j->h0[oh] * j->iw) * item;
      char *dst = out + (size_t)(oh * j->ow) * item;
      if (item == 4) {
        for (int64_t ow = 0; ow < j->ow; ow++) {
          ((uint32_t *)dst)[ow] = ((const uint32_t *)row)[j->w0[ow]];
        }
      } else {
        for (int64_t ow = 0; ow < j->ow; ow++) {
          memcpy(dst + (size_t)ow * item, row + (size_t)j->w0[ow] * item, item);
        }
      }
    }
  }
}

/* ------------------------------------------------------------------------------------------ */

static tb_dtype compute_type(tb_dtype d) {
  return d == TB_DTYPE_FLOAT64 ? TB_DTYPE_FLOAT64 : TB_DTYPE_FLOAT32;
}

/* Allocates the index (and, with `weights`, weight) tables of `job`; false when out of memory. */
static bool alloc_tables(upsample_job *job, bool weights, size_t weight_size, void **block) {
  size_t rows = (size_t)(job->oh > 0 ? job->oh : 1), cols = (size_t)(job->ow > 0 ? job->ow : 1);
  size_t size = 2 * (rows + cols) * (sizeof(int64_t) + (weights ? weight_size : 0));
  char *p = malloc(size);
  *block = p;
  if (p == NULL) return false;
  job->h0 = (int64_t *)p;
  job->h1 = job->h0 + rows;
  job->w0 = job->h1 + rows;
  job->w1 = job->w0 + cols;
  p = (char *)(job->w1 + cols);
  if (weights) {
    job->hl0 = p;
    job->hl1 = p + rows * weight_size;
    job->wl0 = p + 2 * rows * weight_size;
    job->wl1 = p + (2 * rows + cols) * weight_size;
  }
  return true;
}

/* Runs `fn` over the planes from `src` (contiguous as `dtype`) into `dst`. */
static void run_planes(tbk_task *task, const char *name, upsample_job *job, const emu_tensor *src,
                       const emu_tensor *dst, tb_dtype dtype, emu_range_fn fn) {
  void *scratch = NULL;
  const char *in = emu_contiguous_as(src, dtype, &scratch);
  char *out = emu_output_begin(dst, dtype);
  bool ok = in != NULL && out != NULL;
  if (!ok) {
    tbk_task_fail(task, "%s: out of host memory", name);
  } else if (job->planes > 0) {
    job->in = in;
    job->out = out;
    int64_t work = job->oh * job->ow + job->ih * job->iw;
    emu_parallel_for(job->planes, work >= 32768 ? 1 : 32768 / (work > 0 ? work : 1), fn, job);
  }
  emu_output_end(dst, out, dtype, ok);
  free(scratch);
}

/* The planes and sizes of an upsampling from `input` ([N, C, IH, IW]) to `output`. */
static upsample_job job_of(const emu_tensor *input, const emu_tensor *output) {
  upsample_job job = {0};
  job.planes = input->sizes[0] * input->sizes[1];
  job.ih = input->sizes[2];
  job.iw = input->sizes[3];
  job.oh = output->sizes[2];
  job.ow = output->sizes[3];
  return job;
}

/* input and output are [N, C, H, W] with the same N and C; an empty input plane only under an
 * empty output plane (ATen's checks reject the rest). */
static bool shapes_ok(const tb_tensor *input, const tb_tensor *output) {
  if (input->ndim != 4 || output->ndim != 4 || input->sizes[0] != output->sizes[0] ||
      input->sizes[1] != output->sizes[1]) {
    return false;
  }
  bool empty_in = input->sizes[2] == 0 || input->sizes[3] == 0;
  bool empty_out = output->sizes[2] == 0 || output->sizes[3] == 0;
  return !empty_in || empty_out;
}

/* ---- nearest ---- */

/* upsample_nearest2d.out / _upsample_nearest_exact2d.out: (self, output_size, scales_h?,
 * scales_w?, out) */
static void run_nearest(tbk_task *task, bool exact) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *input = a[0].as.tensor, *out = a[4].as.tensor;
  upsample_job job = job_of(input, out);
  if (out->numel == 0) return;
  void *tables = NULL;
  if (!alloc_tables(&job, false, 0, &tables)) {
    tbk_task_fail(task, "upsample_nearest2d: out of host memory");
    return;
  }
  for (int64_t o = 0; o < job.oh; o++) {
    job.h0[o] = nearest_source(o, job.ih, job.oh, scale_of(&a[2]), exact);
  }
  for (int64_t o = 0; o < job.ow; o++) {
    job.w0[o] = nearest_source(o, job.iw, job.ow, scale_of(&a[3]), exact);
  }
  job.item = emu_itemsize(input->dtype);
  run_planes(task, "upsample_nearest2d", &job, input, out, input->dtype, nearest_planes);
  free(tables);
}
static void run_nearest_legacy(tbk_task *task) { run_nearest(task, false); }
static void run_nearest_exact(tbk_task *task) { run_nearest(task, true); }

static tb_status enqueue_nearest(const char *name, tbk_task_fn fn, tb_stream stream,
                                 const tb_value *args, int32_t count) {
  tb_status status = emu_check_args(name, args, count, "TINNT");
  if (status != TB_OK) return status;
  const tb_tensor *input = args[0].as.tensor, *out = args[4].as.tensor;
  if (!(emu_is_floating(input->dtype) || input->dtype == TB_DTYPE_UINT8) ||
      out->dtype != input->dtype || !shapes_ok(input, out)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: unsupported dtypes or shapes", name);
  }
  return emu_launch(name, stream, args, count, fn, 0, NULL);
}
static tb_status kernel_nearest(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_nearest("upsample_nearest2d.out", run_nearest_legacy, stream, args, count);
}
static tb_status kernel_nearest_exact(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_nearest("_upsample_nearest_exact2d.out", run_nearest_exact, stream, args, count);
}

/* upsample_nearest2d_backward.grad_input / _upsample_nearest_exact2d_backward.grad_input:
 * (grad_output, output_size, input_size, scales_h?, scales_w?, grad_input) */
static void run_nearest_backward(tbk_task *task, bool exact) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *grad = a[0].as.tensor, *gin = a[5].as.tensor;
  upsample_job job = job_of(gin, grad);
  if (gin->numel == 0) return;
  void *tables = NULL;
  if (!alloc_tables(&job, false, 0, &tables)) {
    tbk_task_fail(task, "upsample_nearest2d_backward: out of host memory");
    return;
  }
  for (int64_t o = 0; o < job.oh; o++) {
    job.h0[o] = nearest_source(o, job.ih, job.oh, scale_of(&a[3]), exact);
  }
  for (int64_t o = 0; o < job.ow; o++) {
    job.w0[o] = nearest_source(o, job.iw, job.ow, scale_of(&a[4]), exact);
  }
  tb_dtype ct = compute_type(gin->dtype);
  run_planes(task, "upsample_nearest2d_backward", &job, grad, gin, ct,
             ct == TB_DTYPE_FLOAT32 ? nearest_backward_f32 : nearest_backward_f64);
  free(tables);
}
static void run_nearest_backward_legacy(tbk_task *task) { run_nearest_backward(task, false); }
static void run_nearest_backward_exact(tbk_task *task) { run_nearest_backward(task, true); }

static tb_status enqueue_backward(const char *name, const char *kinds, int grad_in, tbk_task_fn fn,
                                  tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args(name, args, count, kinds);
  if (status != TB_OK) return status;
  const tb_tensor *grad = args[0].as.tensor, *gin = args[grad_in].as.tensor;
  if (!emu_is_floating(grad->dtype) || gin->dtype != grad->dtype || !shapes_ok(gin, grad)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: unsupported dtypes or shapes", name);
  }
  return emu_launch(name, stream, args, count, fn, 0, NULL);
}
static tb_status kernel_nearest_backward(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_backward("upsample_nearest2d_backward.grad_input", "TIINNT", 5,
                          run_nearest_backward_legacy, stream, args, count);
}
static tb_status kernel_nearest_exact_backward(tb_stream stream, const tb_value *args,
                                               int32_t count) {
  return enqueue_backward("_upsample_nearest_exact2d_backward.grad_input", "TIINNT", 5,
                          run_nearest_backward_exact, stream, args, count);
}

/* ---- bilinear ---- */

/* Fills the bilinear tables of `job` in the compute type `ct`. */
static void bilinear_tables(upsample_job *job, tb_dtype ct, bool align_corners, double scale_h,
                            double scale_w) {
  if (ct == TB_DTYPE_FLOAT32) {
    linear_axis_f32(job->oh, job->ih, align_corners, scale_h, job->h0, job->h1, job->hl0, job->hl1);
    linear_axis_f32(job->ow, job->iw, align_corners, scale_w, job->w0, job->w1, job->wl0, job->wl1);
  } else {
    linear_axis_f64(job->oh, job->ih, align_corners, scale_h, job->h0, job->h1, job->hl0, job->hl1);
    linear_axis_f64(job->ow, job->iw, align_corners, scale_w, job->w0, job->w1, job->wl0, job->wl1);
  }
}

/* upsample_bilinear2d.out: (self, output_size, align_corners, scales_h?, scales_w?, out) */
static void run_bilinear(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *input = a[0].as.tensor, *out = a[5].as.tensor;
  upsample_job job = job_of(input, out);
  if (out->numel == 0) return;
  tb_dtype ct = compute_type(input->dtype);
  void *tables = NULL;
  if (!alloc_tables(&job, true, emu_itemsize(ct), &tables)) {
    tbk_task_fail(task, "upsample_bilinear2d: out of host memory");
    return;
  }
  bilinear_tables(&job, ct, a[2].as.b, scale_of(&a[3]), scale_of(&a[4]));
  run_planes(task, "upsample_bilinear2d", &job, input, out, ct,
             ct == TB_DTYPE_FLOAT32 ? bilinear_f32 : bilinear_f64);
  free(tables);
}

static tb_status kernel_bilinear(tb_stream stream, const tb_value *args, int32_t count) {
  static const char name[] = "upsample_bilinear2d.out";
  tb_status status = emu_check_args(name, args, count, "TIbNNT");
  if (status != TB_OK) return status;
  const tb_tensor *input = args[0].as.tensor, *out = args[5].as.tensor;
  /* uint8 has a fixed-point kernel of its own on the CPU: not this one */
  if (!emu_is_floating(input->dtype) || out->dtype != input->dtype || !shapes_ok(input, out)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: unsupported dtypes or shapes", name);
  }
  return emu_launch(name, stream, args, count, run_bilinear, 0, NULL);
}

/* upsample_bilinear2d_backward.grad_input: (grad_output, output_size, input_size,
 * align_corners, scales_h?, scales_w?, grad_input) */
static void run_bilinear_backward(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *grad = a[0].as.tensor, *gin = a[6].as.tensor;
  upsample_job job = job_of(gin, grad);
  if (gin->numel == 0) return;
  tb_dtype ct = compute_type(gin->dtype);
  void *tables = NULL;
  if (!alloc_tables(&job, true, emu_itemsize(ct), &tables)) {
    tbk_task_fail(task, "upsample_bilinear2d_backward: out of host memory");
    return;
  }
  bilinear_tables(&job, ct, a[3].as.b, scale_of(&a[4]), scale_of(&a[5]));
  run_planes(task, "upsample_bilinear2d_backward", &job, grad, gin, ct,
             ct == TB_DTYPE_FLOAT32 ? bilinear_backward_f32 : bilinear_backward_f64);
  free(tables);
}

static tb_status kernel_bilinear_backward(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_backward("upsample_bilinear2d_backward.grad_input", "TIIbNNT", 6,
                          run_bilinear_backward, stream, args, count);
}

EMU_KERNEL(k_nearest, "upsample_nearest2d.out", kernel_nearest,
           EMU_FLOATS | TB_DTYPE_BIT(TB_DTYPE_UINT8),
           "upsample_nearest2d.out(Tensor self, SymInt[2] output_size, float? scales_h=None, "
           "float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_nearest_backward, "upsample_nearest2d_backward.grad_input", kernel_nearest_backward,
           EMU_FLOATS,
           "upsample_nearest2d_backward.grad_input(Tensor grad_output, SymInt[2] output_size, "
           "SymInt[4] input_size, float? scales_h=None, float? scales_w=None, *, Tensor(a!) "
           "grad_input) -> Tensor(a!)");
EMU_KERNEL(k_nearest_exact, "_upsample_nearest_exact2d.out", kernel_nearest_exact,
           EMU_FLOATS | TB_DTYPE_BIT(TB_DTYPE_UINT8),
           "_upsample_nearest_exact2d.out(Tensor self, SymInt[2] output_size, float? "
           "scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_nearest_exact_backward, "_upsample_nearest_exact2d_backward.grad_input",
           kernel_nearest_exact_backward, EMU_FLOATS,
           "_upsample_nearest_exact2d_backward.grad_input(Tensor grad_output, SymInt[2] "
           "output_size, SymInt[4] input_size, float? scales_h=None, float? scales_w=None, *, "
           "Tensor(a!) grad_input) -> Tensor(a!)");
EMU_KERNEL(k_bilinear, "upsample_bilinear2d.out", kernel_bilinear, EMU_FLOATS,
           "upsample_bilinear2d.out(Tensor self, SymInt[2] output_size, bool align_corners, float? "
           "scales_h=None, float? scales_w=None, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_bilinear_backward, "upsample_bilinear2d_backward.grad_input", kernel_bilinear_backward,
           EMU_FLOATS,
           "upsample_bilinear2d_backward.grad_input(Tensor grad_output, SymInt[2] output_size, "
           "SymInt[4] input_size, bool align_corners, float? scales_h=None, float? scales_w=None, "
           "*, Tensor(a!) grad_input) -> Tensor(a!)");

const tb_kernel *const emu_upsample_kernels[] = {&k_nearest,
                                                 &k_nearest_backward,
                                                 &k_nearest_exact,
                                                 &k_nearest_exact_backward,
                                                 &k_bilinear,
                                                 &k_bilinear_backward,
                                                 NULL};
