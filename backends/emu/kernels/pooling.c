/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * 2-d pooling over the last two dimensions of [C, H, W] and [N, C, H, W] tensors: max pooling
 * with indices, average pooling and adaptive average pooling, forward and backward.  Each plane
 * (one channel of one sample) is independent, so planes are split across the pool.  Windows,
 * divisors, index and tie rules are those of ATen's CPU kernels: a window's first maximum wins,
 * a NaN wins over any number (the last NaN), an index counts h * W + w within its plane.
 *
 * Inputs of any layout are read through a contiguous copy in the compute type (float for
 * float32, float16 and bfloat16; double for float64; int64 for integers), outputs are written
 * to a contiguous buffer of the compute type and copied into their layout, so channels_last
 * tensors work too.  Output shapes come from ATen's meta functions.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "kernel.h"

typedef struct pool2d {
  int64_t planes, ih, iw, oh, ow;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool count_include_pad;
  int64_t divisor; /* avg_pool2d's divisor_override; 0: none */
} pool2d;

typedef struct pool_job {
  pool2d g;
  tb_dtype ct;          /* compute type */
  const char *in;       /* input (forward) or grad_output (backward), contiguous, ct */
  char *out;            /* output (forward) or grad_input (backward), contiguous, ct */
  int64_t *indices;     /* max pooling: forward output, backward input */
  atomic_int bad_index; /* backward: an index outside its plane */
} pool_job;

static tb_dtype compute_type(tb_dtype d) {
  if (d == TB_DTYPE_FLOAT64) return TB_DTYPE_FLOAT64;
  return emu_is_floating(d) ? TB_DTYPE_FLOAT32 : TB_DTYPE_INT64;
}

/* Element k of an int[2] argument; one value stands for both, none for `fallback`. */
static int64_t pair(const emu_arg *a, int k, int64_t fallback) {
  if (a->as.ints.count == 0) return fallback;
  return a->as.ints.items[a->as.ints.count == 1 ? 0 : k];
}

static bool pair_ok(const tb_value *v, bool empty_ok, int64_t least) {
  if (v->as.ints.count == 0) return empty_ok;
  if (v->as.ints.count > 2) return false;
  for (int64_t k = 0; k < v->as.ints.count; k++) {
    if (v->as.ints.items[k] < least) return false;
  }
  return true;
}

/* planes, H, W of an [..., H, W] tensor */
static void plane_shape(const emu_tensor *t, int64_t *planes, int64_t *h, int64_t *w) {
  *planes = 1;
  for (int d = 0; d + 2 < t->ndim; d++) *planes *= t->sizes[d];
  *h = t->sizes[t->ndim - 2];
  *w = t->sizes[t->ndim - 1];
}

/* `a` is [C, H, W] or [N, C, H, W] and `b` has the same rank and leading dimensions. */
static bool same_planes(const tb_tensor *a, const tb_tensor *b) {
  if (a->ndim < 3 || a->ndim > 4 || b->ndim != a->ndim) return false;
  for (int32_t d = 0; d + 2 < a->ndim; d++) {
    if (a->sizes[d] != b->sizes[d]) return false;
  }
  return true;
}

/* The geometry from an input and an output shaped [..., H, W] and the pooling arguments
 * (NULL where the operator has none). */
static pool2d geometry(const emu_tensor *input, const emu_tensor *output, const emu_arg *kernel,
                       const emu_arg *stride, const emu_arg *padding, const emu_arg *dilation) {
  pool2d g = {0};
  plane_shape(input, &g.planes, &g.ih, &g.iw);
  int64_t planes;
  plane_shape(output, &planes, &g.oh, &g.ow);
  if (kernel != NULL) {
    g.kh = pair(kernel, 0, 1);
    g.kw = pair(kernel, 1, 1);
    g.sh = pair(stride, 0, g.kh);
    g.sw = pair(stride, 1, g.kw);
    g.ph = pair(padding, 0, 0);
    g.pw = pair(padding, 1, 0);
    g.dh = dilation ? pair(dilation, 0, 1) : 1;
    g.dw = dilation ? pair(dilation, 1, 1) : 1;
  }
  return g;
}

/* The first of start, start + step, ... that is not negative. */
static inline int64_t first_inside(int64_t start, int64_t step) {
  return start >= 0 ? start : start + (-start + step - 1) / step * step;
}

/* Runs `fn` over the planes, `work` elements each. */
static void over_planes(pool_job *job, int64_t work, emu_range_fn fn) {
  if (job->g.planes == 0) return;
  int64_t grain = work >= 32768 ? 1 : 32768 / (work > 0 ? work : 1);
  emu_parallel_for(job->g.planes, grain, fn, job);
}

/* ------------------------------------------------------------------------------------------ */
/* Per-plane loops, for each compute type                                                      */

#define IS_NAN_FLOAT(v) ((v) != (v))
#define IS_NAN_NEVER(v) ((void)(v), 0)

#define MAX_POOL_PLANES(SFX, T, LOWEST, IS_NAN)                           \
  static void max_pool_##SFX(void *context, int64_t begin, int64_t end) { \
    const pool_job *j = context;                                          \
    const pool2d *g = &j->g;                                              \
    for (int64_t p = begin; p < end; p++) {                               \
      const T *in = (const T *)j->in + p * g->ih * g->iw;                 \
      T *out = (T *)j->out + p * g->oh * g->ow;                           \
      int64_t *ind = j->indices + p * g->oh * g->ow;                      \
      for (int64_t oh = 0; oh < g->oh; oh++) {                            \
        int64_t ih0 = oh * g->sh - g->ph;                                 \
        int64_t ih1 = ih0 + (g->kh - 1) * g->dh + 1;                      \
        if (ih1 > g->ih) ih1 = g->ih;                                     \
        ih0 = first_inside(ih0, g->dh);                                   \
        for (int64_t ow = 0; ow < g->ow; ow++) {                          \
          int64_t iw0 = ow * g->sw - g->pw;                               \
          int64_t iw1 = iw0 + (g->kw - 1) * g->dw + 1;                    \
          if (iw1 > g->iw) iw1 = g->iw;                                   \
          iw0 = first_inside(iw0, g->dw);                                 \
          int64_t best = ih0 * g->iw + iw0;                               \
          T max = LOWEST;                                                 \
          for (int64_t ih = ih0; ih < ih1; ih += g->dh) {                 \
            for (int64_t iw = iw0; iw < iw1; iw += g->dw) {               \
              T v = in[ih * g->iw + iw];                                  \
              if (v > max || IS_NAN(v)) {                                 \
                max = v;                                                  \
                best = ih * g->iw + iw;                                   \
              }                                                           \
            }                                                             \
          }                                                               \
          out[oh * g->ow + ow] = max;                                     \
          ind[oh * g->ow + ow] = best;                                    \
        }                                                                 \
      }                                                                   \
    }                                                                     \
  }

#define MAX_POOL_BACKWARD_PLANES(SFX, T)                                           \
  static void max_pool_backward_##SFX(void *context, int64_t begin, int64_t end) { \
    pool_job *j = context;                                                         \
    const pool2d *g = &j->g;                                                       \
    const int64_t in_plane = g->ih * g->iw, out_plane = g->oh * g->ow;             \
    for (int64_t p = begin; p < end; p++) {                                        \
      const T *gout = (const T *)j->in + p * out_plane;                            \
      const int64_t *ind = j->indices + p * out_plane;                             \
      T *gin = (T *)j->out + p * in_plane;                                         \
      for (int64_t i = 0; i < in_plane; i++) gin[i] = 0;                           \
      for (int64_t o = 0; o < out_plane; o++) {                                    \
        int64_t k = ind[o];                                                        \
        if (k == -1) continue;                                                     \
        if (k < 0 || k >= in_plane) {                                              \
          atomic_store(&j->bad_index, 1);                                          \
          return;                                                                  \
        }                                                                          \
        gin[k] += gout[o];                                                         \
      }                                                                            \
    }                                                                              \
  }

/* avg_pool2d's window [ih0, ih1) x [iw0, iw1), clipped to the input, and its divisor. */
#define AVG_WINDOW(g, oh, ow)                                             \
  int64_t ih0 = (oh) * (g)->sh - (g)->ph, iw0 = (ow) * (g)->sw - (g)->pw; \
  int64_t ih1 = ih0 + (g)->kh, iw1 = iw0 + (g)->kw;                       \
  if (ih1 > (g)->ih + (g)->ph) ih1 = (g)->ih + (g)->ph;                   \
  if (iw1 > (g)->iw + (g)->pw) iw1 = (g)->iw + (g)->pw;                   \
  const int64_t pool_size = (ih1 - ih0) * (iw1 - iw0);                    \
  if (ih0 < 0) ih0 = 0;                                                   \
  if (iw0 < 0) iw0 = 0;                                                   \
  if (ih1 > (g)->ih) ih1 = (g)->ih;                                       \
  if (iw1 > (g)->iw) iw1 = (g)->iw;                                       \
  const int64_t divisor = (g)->divisor             ? (g)->divisor         \
                          : (g)->count_include_pad ? pool_size            \
                                                   : (ih1 - ih0) * (iw1 - iw0);

#define AVG_POOL_PLANES(SFX, T)                                                    \
  static void avg_pool_##SFX(void *context, int64_t begin, int64_t end) {          \
    const pool_job *j = context;                                                   \
    const pool2d *g = &j->g;                                                       \
    for (int64_t p = begin; p < end; p++) {                                        \
      const T *in = (const T *)j->in + p * g->ih * g->iw;                          \
      T *out = (T *)j->out + p * g->oh * g->ow;                                    \
      for (int64_t oh = 0; oh < g->oh; oh++) {                                     \
        for (int64_t ow = 0; ow < g->ow; ow++) {                                   \
          AVG_WINDOW(g, oh, ow)                                                    \
          if (ih0 >= ih1 || iw0 >= iw1) {                                          \
            out[oh * g->ow + ow] = 0;                                              \
            continue;                                                              \
          }                                                                        \
          T sum = 0;                                                               \
          for (int64_t ih = ih0; ih < ih1; ih++) {                                 \
            for (int64_t iw = iw0; iw < iw1; iw++) sum += in[ih * g->iw + iw];     \
          }                                                                        \
          out[oh * g->ow + ow] = sum / (T)divisor;                                 \
        }                                                                          \
      }                                                                            \
    }                                                                              \
  }                                                                                \
  static void avg_pool_backward_##SFX(void *context, int64_t begin, int64_t end) { \
    const pool_job *j = context;                                                   \
    const pool2d *g = &j->g;                                                       \
    for (int64_t p = begin; p < end; p++) {                                        \
      const T *gout = (const T *)j->in + p * g->oh * g->ow;                        \
      T *gin = (T *)j->out + p * g->ih * g->iw;                                    \
      for (int64_t i = 0; i < g->ih * g->iw; i++) gin[i] = 0;                      \
      for (int64_t oh = 0; oh < g->oh; oh++) {                                     \
        for (int64_t ow = 0; ow < g->ow; ow++) {                                   \
          AVG_WINDOW(g, oh, ow)                                                    \
          const T delta = gout[oh * g->ow + ow] / (T)divisor;                      \
          for (int64_t ih = ih0; ih < ih1; ih++) {                                 \
            for (int64_t iw = iw0; iw < iw1; iw++) gin[ih * g->iw + iw] += delta;  \
          }                                                                        \
        }                                                                          \
      }                                                                            \
    }                                                                              \
  }

/* ATen's adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)). */
static inline int64_t adaptive_start(int64_t o, int64_t out, int64_t in) {
  return (o / out) * in + ((o % out) * in) / out;
}
static inline int64_t adaptive_end(int64_t o, int64_t out, int64_t in) {
  return 1 + ((o + 1) * in - 1) / out;
}

#define ADAPTIVE_POOL_PLANES(SFX, T)                                                    \
  static void adaptive_pool_##SFX(void *context, int64_t begin, int64_t end) {          \
    const pool_job *j = context;                                                        \
    const pool2d *g = &j->g;                                                            \
    for (int64_t p = begin; p < end; p++) {                                             \
      const T *in = (const T *)j->in + p * g->ih * g->iw;                               \
      T *out = (T *)j->out + p * g->oh * g->ow;                                         \
      for (int64_t oh = 0; oh < g->oh; oh++) {                                          \
        const int64_t ih0 = adaptive_start(oh, g->oh, g->ih);                           \
        const int64_t ih1 = adaptive_end(oh, g->oh, g->ih);                             \
        for (int64_t ow = 0; ow < g->ow; ow++) {                                        \
          const int64_t iw0 = adaptive_start(ow, g->ow, g->iw);                         \
          const int64_t iw1 = adaptive_end(ow, g->ow, g->iw);                           \
          T sum = 0;                                                                    \
          for (int64_t ih = ih0; ih < ih1; ih++) {                                      \
            for (int64_t iw = iw0; iw < iw1; iw++) sum += in[ih * g->iw + iw];          \
          }                                                                             \
          out[oh * g->ow + ow] = sum / (T)(ih1 - ih0) / (T)(iw1 - iw0);                 \
        }                                                                               \
      }                                                                                 \
    }                                                                                   \
  }                                                                                     \
  static void adaptive_pool_backward_##SFX(void *context, int64_t begin, int64_t end) { \
    const pool_job *j = context;                                                        \
    const pool2d *g = &j->g;                                                            \
    for (int64_t p = begin; p < end; p++) {                                             \
      const T *gout = (const T *)j->in + p * g->oh * g->ow;                             \
      T *gin = (T *)j->out + p * g->ih * g->iw;                                         \
      for (int64_t i = 0; i < g->ih * g->iw; i++) gin[i] = 0;                           \
      for (int64_t oh = 0; oh < g->oh; oh++) {                                          \
        const int64_t ih0 = adaptive_start(oh, g->oh, g->ih);                           \
        const int64_t ih1 = adaptive_end(oh, g->oh, g->ih);                             \
        for (int64_t ow = 0; ow < g->ow; ow++) {                                        \
          const int64_t iw0 = adaptive_start(ow, g->ow, g->iw);                         \
          const int64_t iw1 = adaptive_end(ow, g->ow, g->iw);                           \
          const T delta = gout[oh * g->ow + ow] / (T)(ih1 - ih0) / (T)(iw1 - iw0);      \
          for (int64_t ih = ih0; ih < ih1; ih++) {                                      \
            for (int64_t iw = iw0; iw < iw1; iw++) gin[ih * g->iw + iw] += delta;       \
          }                                                                             \
        }                                                                               \
      }                                                                                 \
    }                                                                                   \
  }

MAX_POOL_PLANES(f32, float, -INFINITY, IS_NAN_FLOAT)
MAX_POOL_PLANES(f64, double, -INFINITY, IS_NAN_FLOAT)
MAX_POOL_PLANES(i64, int64_t, INT64_MIN, IS_NAN_NEVER)
MAX_POOL_BACKWARD_PLANES(f32, float)
MAX_POOL_BACKWARD_PLANES(f64, double)
AVG_POOL_PLANES(f32, float)
AVG_POOL_PLANES(f64, double)
AVG_POOL_PLANES(i64, int64_t)
ADAPTIVE_POOL_PLANES(f32, float)
ADAPTIVE_POOL_PLANES(f64, double)

#define BY_TYPE(ct, NAME) \
  ((ct) == TB_DTYPE_FLOAT32 ? NAME##_f32 : (ct) == TB_DTYPE_FLOAT64 ? NAME##_f64 : NAME##_i64)
#define BY_FLOAT_TYPE(ct, NAME) ((ct) == TB_DTYPE_FLOAT32 ? NAME##_f32 : NAME##_f64)

/* ------------------------------------------------------------------------------------------ */
/* Running a pooling task: contiguous compute-type buffers around the per-plane loops          */

/* Runs `fn` from `src` (read as ct) into `dst` (written as ct); `indices`, when not NULL, is the
 * max pooling indices tensor (written by the forward, read by the backward). */
static void run_planes(tbk_task *task, const char *name, pool_job *job, const emu_tensor *src,
                       const emu_tensor *dst, const emu_tensor *indices, bool indices_out,
                       int64_t work, emu_range_fn fn) {
  void *src_scratch = NULL, *ind_scratch = NULL;
  const char *in = emu_contiguous_as(src, job->ct, &src_scratch);
  char *out = emu_output_begin(dst, job->ct);
  char *ind = NULL;
  if (indices != NULL) {
    ind = indices_out ? emu_output_begin(indices, TB_DTYPE_INT64)
                      : (char *)emu_contiguous_as(indices, TB_DTYPE_INT64, &ind_scratch);
  }
  bool ok = in != NULL && out != NULL && (indices == NULL || ind != NULL);
  if (!ok) {
    tbk_task_fail(task, "%s: out of host memory", name);
  } else {
    job->in = in;
    job->out = out;
    job->indices = (int64_t *)ind;
    atomic_init(&job->bad_index, 0);
    over_planes(job, work, fn);
    if (atomic_load(&job->bad_index)) {
      ok = false;
      tbk_task_fail(task, "%s: an index lies outside its input plane", name);
    }
  }
  emu_output_end(dst, out, job->ct, ok);
  if (indices != NULL && indices_out) emu_output_end(indices, ind, TB_DTYPE_INT64, ok);
  free(src_scratch);
  free(ind_scratch);
}

/* ------------------------------------------------------------------------------------------ */
/* max_pool2d_with_indices.out: (self, kernel_size, stride, padding, dilation, ceil_mode, out,
 * indices)                                                                                    */

static void run_max_pool(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *input = a[0].as.tensor, *out = a[6].as.tensor, *indices = a[7].as.tensor;
  pool_job job = {.g = geometry(input, out, &a[1], &a[2], &a[3], &a[4])};
  job.ct = compute_type(input->dtype);
  if (out->numel == 0) return;
  run_planes(task, "max_pool2d_with_indices", &job, input, out, indices, true,
             job.g.oh * job.g.ow * job.g.kh * job.g.kw, BY_TYPE(job.ct, max_pool));
}

static bool pool_args_ok(const tb_value *args, int kernel, bool dilation) {
  return pair_ok(&args[kernel], false, 1) && pair_ok(&args[kernel + 1], true, 1) &&
         pair_ok(&args[kernel + 2], false, 0) &&
         (!dilation || pair_ok(&args[kernel + 3], false, 1));
}

static tb_status kernel_max_pool(tb_stream stream, const tb_value *args, int32_t count) {
  static const char name[] = "max_pool2d_with_indices.out";
  tb_status status = emu_check_args(name, args, count, "TIIIIbTT");
  if (status != TB_OK) return status;
  const tb_tensor *input = args[0].as.tensor, *out = args[6].as.tensor;
  const tb_tensor *indices = args[7].as.tensor;
  if (input->dtype == TB_DTYPE_BOOL || out->dtype != input->dtype ||
      indices->dtype != TB_DTYPE_INT64 || !same_planes(input, out) ||
      !emu_same_shape(out, indices) || !pool_args_ok(args, 1, true)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: unsupported dtypes, shapes or arguments",
                    name);
  }
  return emu_launch(name, stream, args, count, run_max_pool, 0, NULL);
}

/* max_pool2d_with_indices_backward.grad_input: (grad_output, self, kernel_size, stride,
 * padding, dilation, ceil_mode, indices, grad_input) */
static void run_max_pool_backward(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *grad = a[0].as.tensor, *indices = a[7].as.tensor, *gin = a[8].as.tensor;
  pool_job job = {.g = geometry(gin, grad, NULL, NULL, NULL, NULL)};
  job.ct = compute_type(gin->dtype);
  if (gin->numel == 0) return;
  run_planes(task, "max_pool2d_with_indices_backward", &job, grad, gin, indices, false,
             job.g.ih * job.g.iw + job.g.oh * job.g.ow, BY_FLOAT_TYPE(job.ct, max_pool_backward));
}

static tb_status kernel_max_pool_backward(tb_stream stream, const tb_value *args, int32_t count) {
  static const char name[] = "max_pool2d_with_indices_backward.grad_input";
  tb_status status = emu_check_args(name, args, count, "TTIIIIbTT");
  if (status != TB_OK) return status;
  const tb_tensor *grad = args[0].as.tensor, *self = args[1].as.tensor;
  const tb_tensor *indices = args[7].as.tensor, *gin = args[8].as.tensor;
  if (!emu_is_floating(grad->dtype) || gin->dtype != grad->dtype ||
      indices->dtype != TB_DTYPE_INT64 || !same_planes(self, grad) ||
      !emu_same_shape(grad, indices) || !emu_same_shape(self, gin)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: unsupported dtypes or shapes", name);
  }
  return emu_launch(name, stream, args, count, run_max_pool_backward, 0, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* avg_pool2d.out: (self, kernel_size, stride, padding, ceil_mode, count_include_pad,
 * divisor_override?, out)                                                                     */

static void run_avg_pool(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *input = a[0].as.tensor, *out = a[7].as.tensor;
  pool_job job = {.g = geometry(input, out, &a[1], &a[2], &a[3], NULL)};
  job.g.count_include_pad = a[5].as.b;
  job.g.divisor = a[6].kind == TB_VALUE_INT ? a[6].as.i : 0;
  job.ct = compute_type(input->dtype);
  if (out->numel == 0) return;
  run_planes(task, "avg_pool2d", &job, input, out, NULL, false,
             job.g.oh * job.g.ow * job.g.kh * job.g.kw, BY_TYPE(job.ct, avg_pool));
}

static bool avg_types_ok(tb_dtype d) { return emu_is_floating(d) || d == TB_DTYPE_INT64; }

static bool divisor_ok(const tb_value *v) {
  return v->kind == TB_VALUE_NONE || (v->kind == TB_VALUE_INT && v->as.i != 0);
}

static tb_status kernel_avg_pool(tb_stream stream, const tb_value *args, int32_t count) {
  static const char name[] = "avg_pool2d.out";
  tb_status status = emu_check_args(name, args, count, "TIIIbb?T");
  if (status != TB_OK) return status;
  const tb_tensor *input = args[0].as.tensor, *out = args[7].as.tensor;
  if (!avg_types_ok(input->dtype) || out->dtype != input->dtype || !same_planes(input, out) ||
      !pool_args_ok(args, 1, false) || !divisor_ok(&args[6])) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: unsupported dtypes, shapes or arguments",
                    name);
  }
  return emu_launch(name, stream, args, count, run_avg_pool, 0, NULL);
}

/* avg_pool2d_backward.grad_input: (grad_output, self, kernel_size, stride, padding, ceil_mode,
 * count_include_pad, divisor_override?, grad_input) */
static void run_avg_pool_backward(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *grad = a[0].as.tensor, *gin = a[8].as.tensor;
  pool_job job = {.g = geometry(gin, grad, &a[2], &a[3], &a[4], NULL)};
  job.g.count_include_pad = a[6].as.b;
  job.g.divisor = a[7].kind == TB_VALUE_INT ? a[7].as.i : 0;
  job.ct = compute_type(gin->dtype);
  if (gin->numel == 0) return;
  run_planes(task, "avg_pool2d_backward", &job, grad, gin, NULL, false,
             job.g.ih * job.g.iw + job.g.oh * job.g.ow * job.g.kh * job.g.kw,
             BY_TYPE(job.ct, avg_pool_backward));
}

static tb_status kernel_avg_pool_backward(tb_stream stream, const tb_value *args, int32_t count) {
  static const char name[] = "avg_pool2d_backward.grad_input";
  tb_status status = emu_check_args(name, args, count, "TTIIIbb?T");
  if (status != TB_OK) return status;
  const tb_tensor *grad = args[0].as.tensor, *self = args[1].as.tensor, *gin = args[8].as.tensor;
  if (!avg_types_ok(grad->dtype) || gin->dtype != grad->dtype || !same_planes(self, grad) ||
      !emu_same_shape(self, gin) || !pool_args_ok(args, 2, false) || !divisor_ok(&args[7])) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: unsupported dtypes, shapes or arguments",
                    name);
  }
  return emu_launch(name, stream, args, count, run_avg_pool_backward, 0, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* _adaptive_avg_pool2d: (self, output_size, out)                                              */

static void run_adaptive(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *input = a[0].as.tensor, *out = a[2].as.tensor;
  pool_job job = {.g = geometry(input, out, NULL, NULL, NULL, NULL)};
  job.ct = compute_type(input->dtype);
  if (out->numel == 0) return;
  int64_t window =
      (job.g.ih / (job.g.oh ? job.g.oh : 1) + 1) * (job.g.iw / (job.g.ow ? job.g.ow : 1) + 1);
  run_planes(task, "_adaptive_avg_pool2d", &job, input, out, NULL, false,
             job.g.oh * job.g.ow * window, BY_FLOAT_TYPE(job.ct, adaptive_pool));
}

static tb_status kernel_adaptive(tb_stream stream, const tb_value *args, int32_t count) {
  static const char name[] = "_adaptive_avg_pool2d";
  tb_status status = emu_check_args(name, args, count, "TIT");
  if (status != TB_OK) return status;
  const tb_tensor *input = args[0].as.tensor, *out = args[2].as.tensor;
  if (!emu_is_floating(input->dtype) || out->dtype != input->dtype || !same_planes(input, out)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: unsupported dtypes or shapes", name);
  }
  /* an output over an empty input plane has empty windows: ATen's checks reject it */
  if (out->sizes[out->ndim - 2] * out->sizes[out->ndim - 1] > 0 &&
      input->sizes[input->ndim - 2] * input->sizes[input->ndim - 1] == 0) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: empty input plane", name);
  }
  return emu_launch(name, stream, args, count, run_adaptive, 0, NULL);
}

/* _adaptive_avg_pool2d_backward: (grad_output, self, out) */
static void run_adaptive_backward(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *grad = a[0].as.tensor, *gin = a[2].as.tensor;
  pool_job job = {.g = geometry(gin, grad, NULL, NULL, NULL, NULL)};
  job.ct = compute_type(gin->dtype);
  if (gin->numel == 0) return;
  run_planes(task, "_adaptive_avg_pool2d_backward", &job, grad, gin, NULL, false,
             job.g.ih * job.g.iw * 2, BY_FLOAT_TYPE(job.ct, adaptive_pool_backward));
}

static tb_status kernel_adaptive_backward(tb_stream stream, const tb_value *args, int32_t count) {
  static const char name[] = "_adaptive_avg_pool2d_backward";
  tb_status status = emu_check_args(name, args, count, "TTT");
  if (status != TB_OK) return status;
  const tb_tensor *grad = args[0].as.tensor, *self = args[1].as.tensor, *gin = args[2].as.tensor;
  if (!emu_is_floating(grad->dtype) || gin->dtype != grad->dtype || !same_planes(self, grad) ||
      !emu_same_shape(self, gin)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: unsupported dtypes or shapes", name);
  }
  if (grad->sizes[grad->ndim - 2] * grad->sizes[grad->ndim - 1] > 0 &&
      self->sizes[self->ndim - 2] * self->sizes[self->ndim - 1] == 0) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: empty input plane", name);
  }
  return emu_launch(name, stream, args, count, run_adaptive_backward, 0, NULL);
}

EMU_KERNEL(k_max_pool, "max_pool2d_with_indices.out", kernel_max_pool, EMU_FLOATS | EMU_INTS,
           "max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] "
           "padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) "
           "indices) -> (Tensor(a!), Tensor(b!))");
EMU_KERNEL(k_max_pool_backward, "max_pool2d_with_indices_backward.grad_input",
           kernel_max_pool_backward, EMU_FLOATS,
           "max_pool2d_with_indices_backward.grad_input(Tensor grad_output, Tensor self, int[2] "
           "kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor "
           "indices, *, Tensor(a!) grad_input) -> Tensor(a!)");
EMU_KERNEL(k_avg_pool, "avg_pool2d.out", kernel_avg_pool, EMU_FLOATS | TB_DTYPE_BIT(TB_DTYPE_INT64),
           "avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
           "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, "
           "Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_avg_pool_backward, "avg_pool2d_backward.grad_input", kernel_avg_pool_backward,
           EMU_FLOATS | TB_DTYPE_BIT(TB_DTYPE_INT64),
           "avg_pool2d_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, "
           "int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, int? "
           "divisor_override, *, Tensor(a!) grad_input) -> Tensor(a!)");
EMU_KERNEL(k_adaptive, "_adaptive_avg_pool2d", kernel_adaptive, EMU_FLOATS,
           "_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor");
EMU_KERNEL(k_adaptive_backward, "_adaptive_avg_pool2d_backward", kernel_adaptive_backward,
           EMU_FLOATS, "_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor");

const tb_kernel *const emu_pooling_kernels[] = {
    &k_max_pool, &k_max_pool_backward, &k_avg_pool, &k_avg_pool_backward,
    &k_adaptive, &k_adaptive_backward, NULL};
