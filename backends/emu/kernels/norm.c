/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Layer normalization forward and backward over the trailing `normalized_shape` dimensions.
 * Rows (the leading dimensions) are split across the pool; statistics are computed in double.
 */
#include <stdlib.h>

#include "kernel.h"

typedef struct norm_job {
  const char *x, *w, *b, *dy;
  const emu_tensor *xt, *wt, *bt, *dyt;
  char *y; /* contiguous output (forward) or grad_input (backward), may be NULL */
  tb_dtype y_dtype;
  const emu_tensor *mean, *rstd;
  int64_t rows, n;
  double eps;
} norm_job;

/* Elements per parallel chunk: waking a pool thread costs several microseconds, more than
 * normalising a few thousand elements takes. */
enum { kRowGrain = 32768 };
/* Independent partial sums of the float32 row reductions. */
#define LANES 8

static double at(const char *base, tb_dtype dt, int64_t i) {
  if (dt == TB_DTYPE_FLOAT32) return ((const float *)base)[i];
  return emu_load_double(base + i * (int64_t)emu_itemsize(dt), dt);
}

static void put(char *base, tb_dtype dt, int64_t i, double v) {
  if (dt == TB_DTYPE_FLOAT32) {
    ((float *)base)[i] = (float)v;
  } else {
    emu_store_double(base + i * (int64_t)emu_itemsize(dt), dt, v);
  }
}

/* mean and rstd live in [rows] tensors (any strides: keepdim-shaped) */
static char *stat_address(const emu_tensor *t, int64_t row) {
  int64_t offset = 0, rest = row;
  for (int d = t->ndim - 1; d >= 0; d--) {
    offset += (rest % t->sizes[d]) * t->strides[d];
    rest /= t->sizes[d];
  }
  return t->data + offset * (int64_t)emu_itemsize(t->dtype);
}

/* One float32 row: statistics in double (as the generic path), the normalisation in float
 * over plain arrays, which the compiler vectorises. */
EMU_HOT_LOOP static void forward_row_f32(const float *x, float *y, const float *w, const float *b,
                                         int64_t n, double eps, double *mean_out,
                                         double *rstd_out) {
  /* LANES independent partial sums: one running sum would chain every addition's latency
   * (floating-point addition is not reassociated without -ffast-math). */
  double sums[LANES] = {0}, squares[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES) {
    for (int l = 0; l < LANES; l++) sums[l] += x[i + l];
  }
  double sum = 0;
  for (; i < n; i++) sum += x[i];
  for (int l = 0; l < LANES; l++) sum += sums[l];
  const double mean = sum / (double)n;
  for (i = 0; i + LANES <= n; i += LANES) {
    for (int l = 0; l < LANES; l++) {
      double d = x[i + l] - mean;
      squares[l] += d * d;
    }
  }
  double var = 0;
  for (; i < n; i++) {
    double d = x[i] - mean;
    var += d * d;
  }
  for (int l = 0; l < LANES; l++) var += squares[l];
  const double rstd = 1.0 / sqrt(var / (double)n + eps);
  const float m = (float)mean, k = (float)rstd;
  if (w != NULL && b != NULL) {
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * k * w[i] + b[i];
  } else if (w != NULL) {
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * k * w[i];
  } else if (b != NULL) {
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * k + b[i];
  } else {
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * k;
  }
  *mean_out = mean;
  *rstd_out = rstd;
}

static bool all_float32(const norm_job *j) {
  return j->xt->dtype == TB_DTYPE_FLOAT32 && j->y_dtype == TB_DTYPE_FLOAT32 &&
         (j->w == NULL || j->wt->dtype == TB_DTYPE_FLOAT32) &&
         (j->b == NULL || j->bt->dtype == TB_DTYPE_FLOAT32);
}

static void forward_rows(void *context, int64_t begin, int64_t end) {
  const norm_job *j = context;
  const tb_dtype xd = j->xt->dtype;
  if (all_float32(j)) {
    for (int64_t r = begin; r < end; r++) {
      double mean, rstd;
      forward_row_f32((const float *)j->x + r * j->n, (float *)j->y + r * j->n, (const float *)j->w,
                      (const float *)j->b, j->n, j->eps, &mean, &rstd);
      if (j->mean->data) emu_store_double(stat_address(j->mean, r), j->mean->dtype, mean);
      if (j->rstd->data) emu_store_double(stat_address(j->rstd, r), j->rstd->dtype, rstd);
    }
    return;
  }
  for (int64_t r = begin; r < end; r++) {
    const char *x = j->x + r * j->n * (int64_t)emu_itemsize(xd);
    double sum = 0;
    for (int64_t i = 0; i < j->n; i++) sum += at(x, xd, i);
    double mean = sum / (double)j->n, var = 0;
    for (int64_t i = 0; i < j->n; i++) {
      double d = at(x, xd, i) - mean;
      var += d * d;
    }
    var /= (double)j->n;
    double rstd = 1.0 / sqrt(var + j->eps);
    char *y = j->y + r * j->n * (int64_t)emu_itemsize(j->y_dtype);
    for (int64_t i = 0; i < j->n; i++) {
      double v = (at(x, xd, i) - mean) * rstd;
      if (j->w) v *= at(j->w, j->wt->dtype, i);
      if (j->b) v += at(j->b, j->bt->dtype, i);
      put(y, j->y_dtype, i, v);
    }
    if (j->mean->data) emu_store_double(stat_address(j->mean, r), j->mean->dtype, mean);
    if (j->rstd->data) emu_store_double(stat_address(j->rstd, r), j->rstd->dtype, rstd);
  }
}

/* native_layer_norm: (input, normalized_shape, weight?, bias?, eps, out, mean, rstd) */
static void run_forward(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *a = call->args;
  const emu_tensor *input = a[0].as.tensor, *out = a[5].as.tensor;
  norm_job job = {0};
  int64_t n = 1;
  for (int64_t k = 0; k < a[1].as.ints.count; k++) n *= a[1].as.ints.items[k];
  job.n = n;
  job.rows = n ? input->numel / n : 0;
  job.eps = emu_arg_double(&a[4]);
  job.xt = input;
  job.mean = a[6].as.tensor;
  job.rstd = a[7].as.tensor;
  void *scratch[4] = {NULL, NULL, NULL, NULL};
  if (n == 0) { /* empty rows: mean 0 and rstd NaN, as on the CPU */
    for (int64_t r = 0; r < job.mean->numel; r++) {
      emu_store_double(stat_address(job.mean, r), job.mean->dtype, 0.0);
      emu_store_double(stat_address(job.rstd, r), job.rstd->dtype, NAN);
    }
    return;
  }
  if (input->numel == 0) return;
  job.x = emu_contiguous(input, &scratch[0]);
  if (a[2].kind == TB_VALUE_TENSOR && a[2].as.tensor->data) {
    job.wt = a[2].as.tensor;
    job.w = emu_contiguous(job.wt, &scratch[1]);
  }
  if (a[3].kind == TB_VALUE_TENSOR && a[3].as.tensor->data) {
    job.bt = a[3].as.tensor;
    job.b = emu_contiguous(job.bt, &scratch[2]);
  }
  bool direct = emu_is_contiguous(out);
  job.y =
      direct ? out->data : malloc((size_t)(out->numel ? out->numel : 1) * emu_itemsize(out->dtype));
  job.y_dtype = out->dtype;
  if (job.x == NULL || job.y == NULL || (job.wt && !job.w) || (job.bt && !job.b)) {
    tbk_task_fail(task, "native_layer_norm: out of host memory");
  } else if (job.rows > 0 && n > 0) {
    emu_parallel_for(job.rows, n >= kRowGrain ? 1 : kRowGrain / n, forward_rows, &job);
    if (!direct) emu_scatter(out, job.y);
  }
  if (!direct) free(job.y);
  for (int k = 0; k < 4; k++) free(scratch[k]);
}

static tb_status kernel_forward(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("native_layer_norm", args, count, "TItt?TTT");
  if (status != TB_OK) return status;
  if (!emu_is_floating(args[0].as.tensor->dtype) || !emu_is_number(&args[4])) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: native_layer_norm: floating input only");
  }
  return emu_launch("native_layer_norm", stream, args, count, run_forward, 0, NULL);
}

/* native_layer_norm_backward: (grad_out, input, normalized_shape, mean, rstd, weight?, bias?,
 * output_mask, grad_input?, grad_weight?, grad_bias?) */
/* One float32 row of grad_input (w NULL: no weight), sums in double as the generic path. */
EMU_HOT_LOOP static void backward_row_f32(const float *x, const float *dy, const float *w,
                                          float *dx, int64_t n, double mean, double rstd) {
  double lane_dyw[LANES] = {0}, lane_dyw_xhat[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES) {
    for (int l = 0; l < LANES; l++) {
      double dyw = (double)dy[i + l] * (w != NULL ? (double)w[i + l] : 1.0);
      lane_dyw[l] += dyw;
      lane_dyw_xhat[l] += dyw * ((x[i + l] - mean) * rstd);
    }
  }
  double sum_dyw = 0, sum_dyw_xhat = 0;
  for (; i < n; i++) {
    double dyw = (double)dy[i] * (w != NULL ? (double)w[i] : 1.0);
    sum_dyw += dyw;
    sum_dyw_xhat += dyw * ((x[i] - mean) * rstd);
  }
  for (int l = 0; l < LANES; l++) {
    sum_dyw += lane_dyw[l];
    sum_dyw_xhat += lane_dyw_xhat[l];
  }
  const double inv_n = 1.0 / (double)n;
  const double a = inv_n * sum_dyw, b = inv_n * sum_dyw_xhat;
  for (i = 0; i < n; i++) {
    double dyw = (double)dy[i] * (w != NULL ? (double)w[i] : 1.0);
    double xhat = (x[i] - mean) * rstd;
    dx[i] = (float)(rstd * (dyw - a - xhat * b));
  }
}

/* grad_weight and grad_bias sums of one float32 row: sums[i] += dy * xhat, sums[n + i] += dy. */
EMU_HOT_LOOP static void affine_sums_f32(const float *x, const float *dy, double *sums, int64_t n,
                                         double mean, double rstd) {
  for (int64_t i = 0; i < n; i++) {
    double g = dy[i];
    sums[i] += g * ((x[i] - mean) * rstd);
    sums[n + i] += g;
  }
}

static void backward_rows(void *context, int64_t begin, int64_t end) {
  const norm_job *j = context;
  const tb_dtype xd = j->xt->dtype, gd = j->dyt->dtype;
  if (xd == TB_DTYPE_FLOAT32 && gd == TB_DTYPE_FLOAT32 && j->y_dtype == TB_DTYPE_FLOAT32 &&
      (j->w == NULL || j->wt->dtype == TB_DTYPE_FLOAT32)) {
    for (int64_t r = begin; r < end; r++) {
      double mean = emu_load_double(stat_address(j->mean, r), j->mean->dtype);
      double rstd = emu_load_double(stat_address(j->rstd, r), j->rstd->dtype);
      backward_row_f32((const float *)j->x + r * j->n, (const float *)j->dy + r * j->n,
                       (const float *)j->w, (float *)j->y + r * j->n, j->n, mean, rstd);
    }
    return;
  }
  for (int64_t r = begin; r < end; r++) {
    const char *x = j->x + r * j->n * (int64_t)emu_itemsize(xd);
    const char *dy = j->dy + r * j->n * (int64_t)emu_itemsize(gd);
    double mean = emu_load_double(stat_address(j->mean, r), j->mean->dtype);
    double rstd = emu_load_double(stat_address(j->rstd, r), j->rstd->dtype);
    double sum_dyw = 0, sum_dyw_xhat = 0;
    for (int64_t i = 0; i < j->n; i++) {
      double w = j->w ? at(j->w, j->wt->dtype, i) : 1.0;
      double dyw = at(dy, gd, i) * w;
      double xhat = (at(x, xd, i) - mean) * rstd;
      sum_dyw += dyw;
      sum_dyw_xhat += dyw * xhat;
    }
    double inv_n = 1.0 / (double)j->n;
    char *dx = j->y + r * j->n * (int64_t)emu_itemsize(j->y_dtype);
    for (int64_t i = 0; i < j->n; i++) {
      double w = j->w ? at(j->w, j->wt->dtype, i) : 1.0;
      double xhat = (at(x, xd, i) - mean) * rstd;
      double v = rstd * (at(dy, gd, i) * w - inv_n * sum_dyw - xhat * inv_n * sum_dyw_xhat);
      put(dx, j->y_dtype, i, v);
    }
  }
}

static void run_backward(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *a = call->args;
  const emu_tensor *dy = a[0].as.tensor, *input = a[1].as.tensor;
  const emu_tensor *dx = a[8].kind == TB_VALUE_TENSOR ? a[8].as.tensor : NULL;
  const emu_tensor *dw = a[9].kind == TB_VALUE_TENSOR ? a[9].as.tensor : NULL;
  const emu_tensor *db = a[10].kind == TB_VALUE_TENSOR ? a[10].as.tensor : NULL;
  norm_job job = {0};
  int64_t n = 1;
  for (int64_t k = 0; k < a[2].as.ints.count; k++) n *= a[2].as.ints.items[k];
  job.n = n;
  job.rows = n ? input->numel / n : 0;
  job.xt = input;
  job.dyt = dy;
  job.mean = a[3].as.tensor;
  job.rstd = a[4].as.tensor;
  void *scratch[3] = {NULL, NULL, NULL};
  job.x = emu_contiguous(input, &scratch[0]);
  job.dy = emu_contiguous(dy, &scratch[1]);
  if (a[5].kind == TB_VALUE_TENSOR && a[5].as.tensor->data) {
    job.wt = a[5].as.tensor;
    job.w = emu_contiguous(job.wt, &scratch[2]);
  }
  if (job.x == NULL || job.dy == NULL || (job.wt && !job.w)) {
    tbk_task_fail(task, "native_layer_norm_backward: out of host memory");
    goto done;
  }
  if (dx != NULL && dx->data != NULL && job.rows > 0) {
    bool direct = emu_is_contiguous(dx);
    job.y = direct ? dx->data : malloc((size_t)dx->numel * emu_itemsize(dx->dtype));
    job.y_dtype = dx->dtype;
    if (job.y == NULL) {
      tbk_task_fail(task, "native_layer_norm_backward: out of host memory");
      goto done;
    }
    emu_parallel_for(job.rows, n >= kRowGrain ? 1 : kRowGrain / n, backward_rows, &job);
    if (!direct) {
      emu_scatter(dx, job.y);
      free(job.y);
    }
  }
  if ((dw != NULL && dw->data != NULL) || (db != NULL && db->data != NULL)) {
    double *sums = calloc((size_t)(2 * n > 0 ? 2 * n : 1), sizeof(double));
    if (sums == NULL) {
      tbk_task_fail(task, "native_layer_norm_backward: out of host memory");
      goto done;
    }
    const bool f32 = input->dtype == TB_DTYPE_FLOAT32 && dy->dtype == TB_DTYPE_FLOAT32;
    for (int64_t r = 0; r < job.rows; r++) {
      const char *x = job.x + r * n * (int64_t)emu_itemsize(input->dtype);
      const char *g = job.dy + r * n * (int64_t)emu_itemsize(dy->dtype);
      double mean = emu_load_double(stat_address(job.mean, r), job.mean->dtype);
      double rstd = emu_load_double(stat_address(job.rstd, r), job.rstd->dtype);
      if (f32) {
        affine_sums_f32((const float *)x, (const float *)g, sums, n, mean, rstd);
        continue;
      }
      for (int64_t i = 0; i < n; i++) {
        double gv = at(g, dy->dtype, i);
        sums[i] += gv * (at(x, input->dtype, i) - mean) * rstd;
        sums[n + i] += gv;
      }
    }
    if (dw != NULL && dw->data != NULL) {
      char *buffer = malloc((size_t)(n > 0 ? n : 1) * emu_itemsize(dw->dtype));
      if (buffer == NULL) {
        free(sums);
        tbk_task_fail(task, "native_layer_norm_backward: out of host memory");
        goto done;
      }
      for (int64_t i = 0; i < n; i++) put(buffer, dw->dtype, i, sums[i]);
      emu_scatter(dw, buffer);
      free(buffer);
    }
    if (db != NULL && db->data != NULL) {
      char *buffer = malloc((size_t)(n > 0 ? n : 1) * emu_itemsize(db->dtype));
      if (buffer == NULL) {
        free(sums);
        tbk_task_fail(task, "native_layer_norm_backward: out of host memory");
        goto done;
      }
      for (int64_t i = 0; i < n; i++) put(buffer, db->dtype, i, sums[n + i]);
      emu_scatter(db, buffer);
      free(buffer);
    }
    free(sums);
  }
done:
  for (int k = 0; k < 3; k++) free(scratch[k]);
}

static tb_status kernel_backward(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("native_layer_norm_backward", args, count, "TTITTttBttt");
  if (status != TB_OK) return status;
  if (!emu_is_floating(args[0].as.tensor->dtype) || !emu_is_floating(args[1].as.tensor->dtype)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: native_layer_norm_backward: floating only");
  }
  return emu_launch("native_layer_norm_backward", stream, args, count, run_backward, 0, NULL);
}

EMU_KERNEL(k_forward, "native_layer_norm", kernel_forward, EMU_FLOATS,
           "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? "
           "bias, float eps) -> (Tensor, Tensor, Tensor)");
EMU_KERNEL(k_backward, "native_layer_norm_backward", kernel_backward, EMU_FLOATS,
           "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
           "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> "
           "(Tensor, Tensor, Tensor)");

const tb_kernel *const emu_norm_kernels[] = {&k_forward, &k_backward, NULL};

/* ---- emu::rms_norm, a custom operator (vendor.h, ABI 2.0, "Custom operators") ----
 *
 * emu::rms_norm(Tensor x, Tensor weight, float eps) -> Tensor normalises each row of x (its
 * last dimension) by its root mean square: y = x / sqrt(mean(x^2) + eps) * weight, in double.
 * emu::rms_norm_backward(grad, x, weight, eps) -> (grad_x, grad_weight) is its gradient:
 * with r = 1 / sqrt(mean(x^2) + eps) and xhat = x * r,
 *   grad_x = r * (grad * weight - xhat * mean(grad * weight * xhat)) per row,
 *   grad_weight = sum over rows of grad * xhat. */

typedef struct rms_job {
  const char *x, *w, *dy;
  tb_dtype dtype;
  char *y; /* output (forward) or grad_x (backward), contiguous, of `dtype` */
  int64_t n;
  double eps;
} rms_job;

static double rms_rstd(const rms_job *j, const char *x) {
  double squares = 0;
  for (int64_t i = 0; i < j->n; i++) squares += at(x, j->dtype, i) * at(x, j->dtype, i);
  return 1.0 / sqrt(squares / (double)j->n + j->eps);
}

static void rms_forward_rows(void *context, int64_t begin, int64_t end) {
  const rms_job *j = context;
  const int64_t row_bytes = j->n * (int64_t)emu_itemsize(j->dtype);
  for (int64_t r = begin; r < end; r++) {
    const char *x = j->x + r * row_bytes;
    double rstd = rms_rstd(j, x);
    for (int64_t i = 0; i < j->n; i++) {
      put(j->y + r * row_bytes, j->dtype, i, at(x, j->dtype, i) * rstd * at(j->w, j->dtype, i));
    }
  }
}

static void rms_backward_rows(void *context, int64_t begin, int64_t end) {
  const rms_job *j = context;
  const int64_t row_bytes = j->n * (int64_t)emu_itemsize(j->dtype);
  for (int64_t r = begin; r < end; r++) {
    const char *x = j->x + r * row_bytes, *dy = j->dy + r * row_bytes;
    double rstd = rms_rstd(j, x), dot = 0;
    for (int64_t i = 0; i < j->n; i++) {
      dot += at(dy, j->dtype, i) * at(j->w, j->dtype, i) * at(x, j->dtype, i) * rstd;
    }
    dot /= (double)j->n;
    for (int64_t i = 0; i < j->n; i++) {
      double gw = at(dy, j->dtype, i) * at(j->w, j->dtype, i);
      put(j->y + r * row_bytes, j->dtype, i, rstd * (gw - at(x, j->dtype, i) * rstd * dot));
    }
  }
}

/* x floating with at least one dimension, weight 1-d over x's last dimension, one dtype */
static tb_status rms_check(const char *name, const tb_value *args, int32_t count, int first) {
  if (count < first + 3 || args[first].kind != TB_VALUE_TENSOR ||
      args[first + 1].kind != TB_VALUE_TENSOR || !emu_is_number(&args[first + 2])) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: expected (x, weight, eps)", name);
  }
  const tb_tensor *x = args[first].as.tensor, *w = args[first + 1].as.tensor;
  if (!emu_is_floating(x->dtype) || w->dtype != x->dtype || x->ndim < 1 ||
      x->ndim > TB_SHAPE_MAX_DIMS) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: %s: x must be floating with 1 to %d dimensions, weight of its dtype",
                    name, TB_SHAPE_MAX_DIMS);
  }
  if (w->ndim != 1 || w->sizes[0] != x->sizes[x->ndim - 1]) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: %s: weight must have shape [%lld] (x's last dimension)", name,
                    (long long)x->sizes[x->ndim - 1]);
  }
  return TB_OK;
}

static void shape_of(tb_shape *shape, const tb_tensor *t) {
  shape->dtype = t->dtype;
  shape->ndim = t->ndim;
  for (int32_t d = 0; d < t->ndim; d++) shape->sizes[d] = t->sizes[d];
}

static tb_status rms_norm_shape(tb_context ctx, const tb_value *args, int32_t count,
                                tb_shape *outputs, int32_t num_outputs) {
  (void)ctx;
  tb_status status = rms_check("emu::rms_norm", args, count, 0);
  if (status != TB_OK) return status;
  if (num_outputs != 1) return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu::rms_norm: one output");
  shape_of(&outputs[0], args[0].as.tensor);
  return TB_OK;
}

static tb_status rms_norm_backward_shape(tb_context ctx, const tb_value *args, int32_t count,
                                         tb_shape *outputs, int32_t num_outputs) {
  (void)ctx;
  tb_status status = rms_check("emu::rms_norm_backward", args, count, 1);
  if (status != TB_OK) return status;
  if (num_outputs != 2 || args[0].kind != TB_VALUE_TENSOR ||
      !emu_same_shape(args[0].as.tensor, args[1].as.tensor)) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu::rms_norm_backward: grad must have x's shape; two outputs");
  }
  shape_of(&outputs[0], args[1].as.tensor);
  shape_of(&outputs[1], args[2].as.tensor);
  return TB_OK;
}

/* (x, weight, eps, out) */
static void run_rms_forward(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *x = a[0].as.tensor, *out = a[3].as.tensor;
  rms_job job = {.dtype = x->dtype, .n = x->sizes[x->ndim - 1], .eps = emu_arg_double(&a[2])};
  if (x->numel == 0) return;
  void *scratch[2] = {NULL, NULL};
  job.x = emu_contiguous(x, &scratch[0]);
  job.w = emu_contiguous(a[1].as.tensor, &scratch[1]);
  job.y = emu_output_begin(out, x->dtype);
  if (job.x == NULL || job.w == NULL || job.y == NULL) {
    tbk_task_fail(task, "emu::rms_norm: out of host memory");
  } else {
    emu_parallel_for(x->numel / job.n, job.n >= 4096 ? 1 : 4096 / job.n, rms_forward_rows, &job);
  }
  if (job.y != NULL) emu_output_end(out, job.y, x->dtype, job.x != NULL && job.w != NULL);
  for (int k = 0; k < 2; k++) free(scratch[k]);
}

static tb_status kernel_rms_norm(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("emu::rms_norm", args, count, "TTfT");
  if (status == TB_OK) status = rms_check("emu::rms_norm", args, count, 0);
  if (status != TB_OK) return status;
  if (!emu_same_shape(args[3].as.tensor, args[0].as.tensor) ||
      args[3].as.tensor->dtype != args[0].as.tensor->dtype) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: emu::rms_norm: an output unlike x");
  }
  return emu_launch("emu::rms_norm", stream, args, count, run_rms_forward, 0, NULL);
}

/* (grad, x, weight, eps, grad_x, grad_weight) */
static void run_rms_backward(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *dy = a[0].as.tensor, *x = a[1].as.tensor;
  const emu_tensor *dx = a[4].as.tensor, *dw = a[5].as.tensor;
  rms_job job = {.dtype = x->dtype, .n = x->sizes[x->ndim - 1], .eps = emu_arg_double(&a[3])};
  void *scratch[3] = {NULL, NULL, NULL};
  double *sums = calloc((size_t)(job.n > 0 ? job.n : 1), sizeof(double));
  char *dw_out = NULL;
  job.x = emu_contiguous(x, &scratch[0]);
  job.w = emu_contiguous(a[2].as.tensor, &scratch[1]);
  job.dy = emu_contiguous(dy, &scratch[2]);
  job.y = emu_output_begin(dx, x->dtype);
  dw_out = emu_output_begin(dw, x->dtype);
  bool ok = sums && job.x && job.w && job.dy && job.y && dw_out;
  if (!ok) {
    tbk_task_fail(task, "emu::rms_norm_backward: out of host memory");
  } else if (x->numel > 0) {
    int64_t rows = x->numel / job.n, row_bytes = job.n * (int64_t)emu_itemsize(job.dtype);
    emu_parallel_for(rows, job.n >= 4096 ? 1 : 4096 / job.n, rms_backward_rows, &job);
    for (int64_t r = 0; r < rows; r++) {
      const char *xr = job.x + r * row_bytes, *dyr = job.dy + r * row_bytes;
      double rstd = rms_rstd(&job, xr);
      for (int64_t i = 0; i < job.n; i++) {
        sums[i] += at(dyr, job.dtype, i) * at(xr, job.dtype, i) * rstd;
      }
    }
  }
  if (dw_out != NULL) {
    for (int64_t i = 0; ok && i < job.n; i++) put(dw_out, job.dtype, i, sums[i]);
    emu_output_end(dw, dw_out, x->dtype, ok);
  }
  if (job.y != NULL) emu_output_end(dx, job.y, x->dtype, ok);
  free(sums);
  for (int k = 0; k < 3; k++) free(scratch[k]);
}

static tb_status kernel_rms_norm_backward(tb_stream stream, const tb_value *args, int32_t count) {
  const char *name = "emu::rms_norm_backward";
  tb_status status = emu_check_args(name, args, count, "TTTfTT");
  if (status == TB_OK) status = rms_check(name, args, count, 1);
  if (status != TB_OK) return status;
  const tb_tensor *dy = args[0].as.tensor, *x = args[1].as.tensor, *w = args[2].as.tensor;
  if (!emu_same_shape(dy, x) || !emu_same_shape(args[4].as.tensor, x) ||
      !emu_same_shape(args[5].as.tensor, w) || dy->dtype != x->dtype ||
      args[4].as.tensor->dtype != x->dtype || args[5].as.tensor->dtype != x->dtype) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: grad or outputs unlike x and weight", name);
  }
  return emu_launch(name, stream, args, count, run_rms_backward, 0, NULL);
}

EMU_KERNEL_ENTRY(k_rms_norm, kernel_rms_norm)
EMU_KERNEL_ENTRY(k_rms_norm_backward, kernel_rms_norm_backward)

const tb_custom_op emu_op_rms_norm = {
    .struct_size = sizeof(tb_custom_op),
    .schema = "emu::rms_norm(Tensor x, Tensor weight, float eps=1e-06) -> Tensor",
    .fn = k_rms_norm_entry,
    .dtypes = EMU_FLOATS,
    .shape = rms_norm_shape,
    .backward = "emu::rms_norm_backward",
};
const tb_custom_op emu_op_rms_norm_backward = {
    .struct_size = sizeof(tb_custom_op),
    .schema =
        "emu::rms_norm_backward(Tensor grad, Tensor x, Tensor weight, float eps) -> "
        "(Tensor, Tensor)",
    .fn = k_rms_norm_backward_entry,
    .dtypes = EMU_FLOATS,
    .shape = rms_norm_backward_shape,
};
