/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Negative log-likelihood loss (the second half of cross_entropy), forward and backward, for
 * inputs of shape [N, C] or [C] (nll_loss) and [N, C, H, W] (nll_loss2d, which F.nll_loss
 * also uses for [N, C, d1, ...]) with class-index targets, optional class weights, reductions
 * none / mean / sum and an ignore index; and the mean squared error, forward and backward.
 */
#include <stdlib.h>

#include "kernel.h"

enum { REDUCTION_NONE = 0, REDUCTION_MEAN = 1, REDUCTION_SUM = 2 };

static double element(const emu_tensor *t, int64_t i0, int64_t i1) {
  int64_t offset = 0;
  if (t->ndim >= 1) offset += i0 * t->strides[0];
  if (t->ndim >= 2) offset += i1 * t->strides[1];
  return emu_load_double(t->data + offset * (int64_t)emu_itemsize(t->dtype), t->dtype);
}

static char *address(const emu_tensor *t, int64_t i0, int64_t i1) {
  int64_t offset = 0;
  if (t->ndim >= 1) offset += i0 * t->strides[0];
  if (t->ndim >= 2) offset += i1 * t->strides[1];
  return t->data + offset * (int64_t)emu_itemsize(t->dtype);
}

static int64_t target_at(const emu_tensor *target, int64_t n) {
  int64_t offset = target->ndim ? n * target->strides[0] : 0;
  return emu_load_int(target->data + offset * (int64_t)emu_itemsize(target->dtype), target->dtype);
}

/* nll_loss_forward.output: (self, target, weight?, reduction, ignore_index, output,
 * total_weight) */
static void run_forward(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *a = call->args;
  const emu_tensor *self = a[0].as.tensor, *target = a[1].as.tensor;
  const emu_tensor *weight = a[2].kind == TB_VALUE_TENSOR ? a[2].as.tensor : NULL;
  int64_t reduction = a[3].as.i, ignore = a[4].as.i;
  const emu_tensor *output = a[5].as.tensor, *total = a[6].as.tensor;
  bool batched = self->ndim == 2;
  int64_t n = batched ? self->sizes[0] : 1, classes = self->sizes[batched ? 1 : 0];
  double sum = 0, weights = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t t = target_at(target, i);
    double value = 0;
    if (t != ignore) {
      if (t < 0 || t >= classes) {
        tbk_task_fail(task, "nll_loss: target %lld is out of bounds for %lld classes", (long long)t,
                      (long long)classes);
        return;
      }
      double w = weight ? element(weight, t, 0) : 1.0;
      value = -w * (batched ? element(self, i, t) : element(self, t, 0));
      weights += w;
    }
    if (reduction == REDUCTION_NONE && batched) {
      emu_store_double(address(output, i, 0), output->dtype, value);
    }
    sum += value;
  }
  if (reduction != REDUCTION_NONE || !batched) {
    double result = reduction == REDUCTION_MEAN ? sum / weights : sum;
    emu_store_double(output->data, output->dtype, result);
  }
  if (total->data) emu_store_double(total->data, total->dtype, weights);
}

static tb_status kernel_forward(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("nll_loss_forward.output", args, count, "TTtiiTT");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[0].as.tensor;
  if (!emu_is_floating(self->dtype) || self->ndim < 1 || self->ndim > 2) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: nll_loss_forward: [N, C] or [C] floats only");
  }
  return emu_launch("nll_loss_forward.output", stream, args, count, run_forward, 0, NULL);
}

/* nll_loss_backward.grad_input: (grad_output, self, target, weight?, reduction, ignore_index,
 * total_weight, grad_input) */
static void run_backward(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *a = call->args;
  const emu_tensor *grad = a[0].as.tensor, *self = a[1].as.tensor, *target = a[2].as.tensor;
  const emu_tensor *weight = a[3].kind == TB_VALUE_TENSOR ? a[3].as.tensor : NULL;
  int64_t reduction = a[4].as.i, ignore = a[5].as.i;
  const emu_tensor *total = a[6].as.tensor, *grad_input = a[7].as.tensor;
  bool batched = self->ndim == 2;
  int64_t n = batched ? self->sizes[0] : 1, classes = self->sizes[batched ? 1 : 0];
  emu_arg zero = {.kind = TB_VALUE_INT};
  emu_tensor zeros;
  char storage[16];
  ew_operand(&zero, grad_input->dtype, grad_input, &zeros, storage);
  emu_copy_tensor(grad_input, &zeros);
  double total_weight = emu_load_double(total->data, total->dtype);
  for (int64_t i = 0; i < n; i++) {
    int64_t t = target_at(target, i);
    if (t == ignore) continue;
    if (t < 0 || t >= classes) {
      tbk_task_fail(task, "nll_loss_backward: target %lld is out of bounds for %lld classes",
                    (long long)t, (long long)classes);
      return;
    }
    double g = reduction == REDUCTION_NONE && batched ? element(grad, i, 0) : element(grad, 0, 0);
    if (reduction == REDUCTION_MEAN) g /= total_weight;
    double w = weight ? element(weight, t, 0) : 1.0;
    char *p = batched ? address(grad_input, i, t) : address(grad_input, t, 0);
    emu_store_double(p, grad_input->dtype, -w * g);
  }
}

static tb_status kernel_backward(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("nll_loss_backward.grad_input", args, count, "TTTtiiTT");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[1].as.tensor;
  if (!emu_is_floating(self->dtype) || self->ndim < 1 || self->ndim > 2) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: nll_loss_backward: [N, C] or [C] floats only");
  }
  return emu_launch("nll_loss_backward.grad_input", stream, args, count, run_backward, 0, NULL);
}

/* ---- nll_loss2d: self [N, C, H, W], target [N, H, W] (int64), weight [C]? ---- */

static double at4(const emu_tensor *t, int64_t n, int64_t c, int64_t h, int64_t w) {
  int64_t offset = n * t->strides[0] + c * t->strides[1] + h * t->strides[2] + w * t->strides[3];
  return emu_load_double(t->data + offset * (int64_t)emu_itemsize(t->dtype), t->dtype);
}
static char *address3(const emu_tensor *t, int64_t n, int64_t h, int64_t w) {
  int64_t offset = n * t->strides[0] + h * t->strides[1] + w * t->strides[2];
  return t->data + offset * (int64_t)emu_itemsize(t->dtype);
}

/* The rows (b, h) of a 2-d loss, split over the pool; a failed row stops its chunk. */
typedef struct nll2d_job {
  tbk_task *task;
  const emu_tensor *self, *target, *weight, *grad, *out; /* out: output or grad_input */
  int64_t reduction, ignore;
  double g;               /* backward with a reduction: -(grad / total_weight) or -grad */
  double *sums, *weights; /* forward with a reduction: per row, added in order afterwards */
} nll2d_job;

/* The row's target at w, or -1 (the task failed) when out of range and not ignored. */
static bool nll2d_target(const nll2d_job *job, int64_t b, int64_t h, int64_t w, int64_t *t) {
  *t = emu_load_int(address3(job->target, b, h, w), job->target->dtype);
  if (*t == job->ignore || (*t >= 0 && *t < job->self->sizes[1])) return true;
  tbk_task_fail(job->task, "nll_loss2d: target %lld is out of bounds for %lld classes",
                (long long)*t, (long long)job->self->sizes[1]);
  return false;
}

static void forward_2d_rows(void *context, int64_t begin, int64_t end) {
  const nll2d_job *job = context;
  const int64_t height = job->self->sizes[2], width = job->self->sizes[3];
  for (int64_t row = begin; row < end; row++) {
    int64_t b = row / height, h = row % height;
    double sum = 0, weights = 0;
    for (int64_t w = 0; w < width; w++) {
      int64_t t;
      if (!nll2d_target(job, b, h, w, &t)) return;
      double value = 0;
      if (t != job->ignore) {
        double cw = job->weight ? element(job->weight, t, 0) : 1.0;
        value = -at4(job->self, b, t, h, w) * cw;
        weights += cw;
      }
      if (job->reduction == REDUCTION_NONE) {
        emu_store_double(address3(job->out, b, h, w), job->out->dtype, value);
      }
      sum += value;
    }
    if (job->sums) {
      job->sums[row] = sum;
      job->weights[row] = weights;
    }
  }
}

/* nll_loss2d_forward.output: (self, target, weight?, reduction, ignore_index, output,
 * total_weight); sums in double */
static void run_forward_2d(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *a = call->args;
  const emu_tensor *self = a[0].as.tensor, *total = a[6].as.tensor;
  nll2d_job job = {.task = task,
                   .self = self,
                   .target = a[1].as.tensor,
                   .weight = a[2].kind == TB_VALUE_TENSOR ? a[2].as.tensor : NULL,
                   .out = a[5].as.tensor,
                   .reduction = a[3].as.i,
                   .ignore = a[4].as.i};
  const int64_t rows = self->sizes[0] * self->sizes[2], width = self->sizes[3];
  if (job.reduction != REDUCTION_NONE && rows > 0) {
    job.sums = malloc((size_t)rows * sizeof(double));
    job.weights = malloc((size_t)rows * sizeof(double));
    if (job.sums == NULL || job.weights == NULL) {
      tbk_task_fail(task, "nll_loss2d: out of host memory");
      free(job.sums);
      free(job.weights);
      return;
    }
  }
  emu_parallel_for(rows, width >= 4096 ? 1 : 4096 / (width > 0 ? width : 1), forward_2d_rows, &job);
  double sum = 0, weights = 0;
  for (int64_t row = 0; job.sums && row < rows; row++) {
    sum += job.sums[row];
    weights += job.weights[row];
  }
  free(job.sums);
  free(job.weights);
  if (job.reduction != REDUCTION_NONE) {
    emu_store_double(job.out->data, job.out->dtype,
                     job.reduction == REDUCTION_MEAN ? sum / weights : sum);
  }
  if (total->data)
    emu_store_double(total->data, total->dtype, job.reduction == REDUCTION_NONE ? 0 : weights);
}

static bool nll2d_shapes(const tb_tensor *self, const tb_tensor *target, const tb_value *weight) {
  if (!emu_is_floating(self->dtype) || self->ndim != 4 || target->ndim != 3 ||
      target->dtype != TB_DTYPE_INT64 || target->sizes[0] != self->sizes[0] ||
      target->sizes[1] != self->sizes[2] || target->sizes[2] != self->sizes[3]) {
    return false;
  }
  if (weight->kind != TB_VALUE_TENSOR) return true;
  const tb_tensor *w = weight->as.tensor;
  return w->dtype == self->dtype && w->ndim == 1 && w->sizes[0] == self->sizes[1];
}

static tb_status kernel_forward_2d(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("nll_loss2d_forward.output", args, count, "TTtiiTT");
  if (status != TB_OK) return status;
  const tb_tensor *output = args[5].as.tensor;
  bool none = args[3].as.i == REDUCTION_NONE;
  if (!nll2d_shapes(args[0].as.tensor, args[1].as.tensor, &args[2]) ||
      output->ndim != (none ? 3 : 0) || args[6].as.tensor->ndim != 0) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: nll_loss2d_forward: needs ATen's checks");
  }
  return emu_launch("nll_loss2d_forward.output", stream, args, count, run_forward_2d, 0, NULL);
}

static void backward_2d_rows(void *context, int64_t begin, int64_t end) {
  const nll2d_job *job = context;
  const emu_tensor *gi = job->out;
  const int64_t height = job->self->sizes[2], width = job->self->sizes[3];
  const int64_t item = (int64_t)emu_itemsize(gi->dtype);
  for (int64_t row = begin; row < end; row++) {
    int64_t b = row / height, h = row % height;
    for (int64_t w = 0; w < width; w++) {
      int64_t t;
      if (!nll2d_target(job, b, h, w, &t)) return;
      if (t == job->ignore) continue;
      double value;
      if (job->reduction == REDUCTION_NONE) {
        value = -(job->weight ? element(job->weight, t, 0) : 1.0) *
                emu_load_double(address3(job->grad, b, h, w), job->grad->dtype);
      } else {
        value = job->weight ? element(job->weight, t, 0) * job->g : job->g;
      }
      int64_t offset =
          b * gi->strides[0] + t * gi->strides[1] + h * gi->strides[2] + w * gi->strides[3];
      emu_store_double(gi->data + offset * item, gi->dtype, value);
    }
  }
}

/* nll_loss2d_backward.grad_input: (grad_output, self, target, weight?, reduction,
 * ignore_index, total_weight, grad_input); as the CPU: -(g / total_weight) (mean) or -g,
 * times the class weight */
static void run_backward_2d(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *a = call->args;
  const emu_tensor *self = a[1].as.tensor, *total = a[6].as.tensor;
  nll2d_job job = {.task = task,
                   .self = self,
                   .target = a[2].as.tensor,
                   .weight = a[3].kind == TB_VALUE_TENSOR ? a[3].as.tensor : NULL,
                   .grad = a[0].as.tensor,
                   .out = a[7].as.tensor,
                   .reduction = a[4].as.i,
                   .ignore = a[5].as.i};
  emu_arg zero = {.kind = TB_VALUE_INT};
  emu_tensor zeros;
  char storage[16];
  ew_operand(&zero, job.out->dtype, job.out, &zeros, storage);
  emu_copy_tensor(job.out, &zeros);
  if (job.out->numel == 0) return;
  if (job.reduction != REDUCTION_NONE) {
    job.g = element(job.grad, 0, 0);
    if (job.reduction == REDUCTION_MEAN) job.g /= emu_load_double(total->data, total->dtype);
    job.g = -job.g;
  }
  const int64_t rows = self->sizes[0] * self->sizes[2], width = self->sizes[3];
  emu_parallel_for(rows, width >= 4096 ? 1 : 4096 / width, backward_2d_rows, &job);
}

static tb_status kernel_backward_2d(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("nll_loss2d_backward.grad_input", args, count, "TTTtiiTT");
  if (status != TB_OK) return status;
  const tb_tensor *grad = args[0].as.tensor, *self = args[1].as.tensor;
  const tb_tensor *grad_input = args[7].as.tensor;
  bool none = args[4].as.i == REDUCTION_NONE;
  const tb_tensor *total = args[6].as.tensor;
  int64_t total_numel = 1;
  for (int32_t d = 0; d < total->ndim; d++) total_numel *= total->sizes[d];
  bool ok = nll2d_shapes(self, args[2].as.tensor, &args[3]) && grad->dtype == self->dtype &&
            grad_input->dtype == self->dtype && total->dtype == self->dtype &&
            grad_input->ndim == 4 && total_numel == 1;
  for (int32_t d = 0; ok && d < 4; d++) ok = grad_input->sizes[d] == self->sizes[d];
  if (ok && none) {
    ok = grad->ndim == 3;
    for (int32_t d = 0; ok && d < 3; d++) ok = grad->sizes[d] == args[2].as.tensor->sizes[d];
  } else if (ok) {
    int64_t numel = 1;
    for (int32_t d = 0; d < grad->ndim; d++) numel *= grad->sizes[d];
    ok = grad->ndim <= 1 && numel == 1;
  }
  if (!ok) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: nll_loss2d_backward: needs ATen's checks");
  }
  return emu_launch("nll_loss2d_backward.grad_input", stream, args, count, run_backward_2d, 0,
                    NULL);
}

/* ---- mean squared error ---- */

typedef struct mse_job {
  const char *a, *b, *g; /* contiguous self, target (compute dtype) and grad_output */
  char *out;             /* contiguous output (compute dtype) */
  tb_dtype dt;
  double g_scalar; /* grad_output when it is one value */
  double norm;
  bool g_full; /* grad_output has one value per element */
} mse_job;

static void mse_elements(void *context, int64_t begin, int64_t end) {
  const mse_job *j = context;
  if (j->dt == TB_DTYPE_FLOAT32) {
    const float *a = (const float *)j->a, *b = (const float *)j->b, *g = (const float *)j->g;
    float *out = (float *)j->out;
    if (j->g == NULL) { /* forward, no reduction */
      for (int64_t i = begin; i < end; i++) out[i] = (a[i] - b[i]) * (a[i] - b[i]);
    } else if (j->g_full) {
      for (int64_t i = begin; i < end; i++) out[i] = (float)j->norm * (a[i] - b[i]) * g[i];
    } else {
      float scale = (float)(j->norm * j->g_scalar);
      for (int64_t i = begin; i < end; i++) out[i] = scale * (a[i] - b[i]);
    }
    return;
  }
  size_t item = emu_itemsize(j->dt);
  for (int64_t i = begin; i < end; i++) {
    double d = emu_load_double(j->a + i * (int64_t)item, j->dt) -
               emu_load_double(j->b + i * (int64_t)item, j->dt);
    double v = j->g == NULL ? d * d
               : j->g_full  ? j->norm * d * emu_load_double(j->g + i * (int64_t)item, j->dt)
                            : j->norm * j->g_scalar * d;
    emu_store_double(j->out + i * (int64_t)item, j->dt, v);
  }
}

static tb_dtype mse_dtype(tb_dtype d) { return d == TB_DTYPE_FLOAT64 ? d : TB_DTYPE_FLOAT32; }

/* mse_loss.out: (self, target, reduction, out) */
static void run_mse(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *self = a[0].as.tensor, *target = a[1].as.tensor, *out = a[3].as.tensor;
  mse_job j = {.dt = mse_dtype(self->dtype)};
  void *scratch[2] = {NULL, NULL};
  j.a = emu_contiguous_as(self, j.dt, &scratch[0]);
  j.b = emu_contiguous_as(target, j.dt, &scratch[1]);
  if (j.a == NULL || j.b == NULL) {
    tbk_task_fail(task, "mse_loss: out of host memory");
  } else if (a[2].as.i == REDUCTION_NONE) {
    j.out = emu_output_begin(out, j.dt);
    if (j.out == NULL) {
      tbk_task_fail(task, "mse_loss: out of host memory");
    } else {
      emu_parallel_for(self->numel, 32768, mse_elements, &j);
    }
    emu_output_end(out, j.out, j.dt, j.out != NULL);
  } else {
    double sum = 0;
    size_t item = emu_itemsize(j.dt);
    for (int64_t i = 0; i < self->numel; i++) {
      double d = emu_load_double(j.a + i * (int64_t)item, j.dt) -
                 emu_load_double(j.b + i * (int64_t)item, j.dt);
      sum += d * d;
    }
    /* the mean of no elements is NaN, as on the CPU */
    emu_store_double(out->data, out->dtype,
                     a[2].as.i == REDUCTION_MEAN ? sum / (double)self->numel : sum);
  }
  for (int k = 0; k < 2; k++) free(scratch[k]);
}

static tb_status kernel_mse(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("mse_loss.out", args, count, "TTiT");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[0].as.tensor, *target = args[1].as.tensor, *out = args[3].as.tensor;
  int64_t reduction = args[2].as.i;
  if (!emu_same_shape(self, target) || target->dtype != self->dtype || out->dtype != self->dtype ||
      reduction < REDUCTION_NONE || reduction > REDUCTION_SUM ||
      (reduction != REDUCTION_NONE && out->ndim != 0) ||
      (reduction == REDUCTION_NONE && !emu_same_shape(out, self))) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED,
                    "emu: mse_loss.out: broadcast or mixed-dtype operands are not implemented");
  }
  return emu_launch("mse_loss.out", stream, args, count, run_mse, 0, NULL);
}

/* mse_loss_backward.grad_input: (grad_output, self, target, reduction, grad_input) */
static void run_mse_backward(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  const emu_tensor *self = a[1].as.tensor, *target = a[2].as.tensor, *gi = a[4].as.tensor;
  mse_job j = {.dt = mse_dtype(self->dtype)};
  j.norm = a[3].as.i == REDUCTION_MEAN ? 2.0 / (double)(self->numel ? self->numel : 1) : 2.0;
  void *scratch[3] = {NULL, NULL, NULL};
  j.a = emu_contiguous_as(self, j.dt, &scratch[0]);
  j.b = emu_contiguous_as(target, j.dt, &scratch[1]);
  bool ok = j.a != NULL && j.b != NULL;
  if (a[0].kind != TB_VALUE_TENSOR) {
    j.g_scalar = emu_arg_double(&a[0]);
    j.g = j.a; /* any non-NULL pointer: this is a backward */
  } else if (a[0].as.tensor->numel == 1 && self->numel != 1) {
    j.g_scalar = emu_load_double(a[0].as.tensor->data, a[0].as.tensor->dtype);
    j.g = j.a;
  } else {
    j.g_full = true;
    j.g = emu_contiguous_as(a[0].as.tensor, j.dt, &scratch[2]);
    ok = ok && j.g != NULL;
  }
  j.out = ok ? emu_output_begin(gi, j.dt) : NULL;
  if (j.out == NULL) {
    tbk_task_fail(task, "mse_loss_backward: out of host memory");
  } else {
    emu_parallel_for(self->numel, 32768, mse_elements, &j);
  }
  emu_output_end(gi, j.out, j.dt, j.out != NULL);
  for (int k = 0; k < 3; k++) free(scratch[k]);
}

static tb_status kernel_mse_backward(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("mse_loss_backward.grad_input", args, count, "?TTiT");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[1].as.tensor, *target = args[2].as.tensor;
  const tb_tensor *gi = args[4].as.tensor;
  bool grad_ok = emu_is_number(&args[0]) ||
                 (args[0].kind == TB_VALUE_TENSOR && args[0].as.tensor->dtype == self->dtype &&
                  (emu_same_shape(args[0].as.tensor, self) || args[0].as.tensor->ndim == 0));
  if (!grad_ok || !emu_same_shape(self, target) || !emu_same_shape(gi, self) ||
      target->dtype != self->dtype || gi->dtype != self->dtype) {
    return tbk_fail(
        TB_ERROR_NOT_SUPPORTED,
        "emu: mse_loss_backward: broadcast or mixed-dtype operands are not implemented");
  }
  return emu_launch("mse_loss_backward.grad_input", stream, args, count, run_mse_backward, 0, NULL);
}

EMU_KERNEL(
    k_forward, "nll_loss_forward.output", kernel_forward, EMU_FLOATS,
    "nll_loss_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt "
    "ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))");
EMU_KERNEL(k_backward, "nll_loss_backward.grad_input", kernel_backward, EMU_FLOATS,
           "nll_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Tensor? "
           "weight, int reduction, SymInt ignore_index, Tensor total_weight, *, Tensor(a!) "
           "grad_input) -> Tensor(a!)");
EMU_KERNEL(
    k_forward_2d, "nll_loss2d_forward.output", kernel_forward_2d, EMU_FLOATS,
    "nll_loss2d_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt "
    "ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))");
EMU_KERNEL(k_backward_2d, "nll_loss2d_backward.grad_input", kernel_backward_2d, EMU_FLOATS,
           "nll_loss2d_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Tensor? "
           "weight, int reduction, SymInt ignore_index, Tensor total_weight, *, Tensor(a!) "
           "grad_input) -> Tensor(a!)");
EMU_KERNEL(
    k_mse, "mse_loss.out", kernel_mse, EMU_FLOATS,
    "mse_loss.out(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_mse_backward, "mse_loss_backward.grad_input", kernel_mse_backward, EMU_FLOATS,
           "mse_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, int "
           "reduction, *, Tensor(a!) grad_input) -> Tensor(a!)");

const tb_kernel *const emu_loss_kernels[] = {
    &k_forward, &k_backward, &k_forward_2d, &k_backward_2d, &k_mse, &k_mse_backward, NULL};
