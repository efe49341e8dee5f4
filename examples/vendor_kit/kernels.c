/*
 * acme's kernels: the twelve the demo's MLP trains with (no CPU fallback), float32 and float64,
 * with ATen's semantics; docs/writing_kernels.rst walks through each.  This file replaces a
 * `tb-vendor new acme` project's src/kernels.c.  Device memory is host memory here: the work
 * reads and writes elements with tbk_load() and tbk_store().
 */
/* writing kernels: common */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acme.h"

#define FLOATS (TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64))

static tb_status fail(tb_status status, const tb_kernel_call *call, const char *why) {
  return tbk_fail(status, "acme: %s: %s", call->kernel->name, why);
}
static bool is_float(const tb_tensor *t) {
  return t != NULL && (t->dtype == TB_DTYPE_FLOAT32 || t->dtype == TB_DTYPE_FLOAT64);
}
/* writing kernels: elementwise */
/* add.out [self, other, alpha, out], mul.out [self, other, out], relu [self, out] and
 * threshold_backward.grad_input [grad_output, self, threshold, grad_input]: binary maps, told
 * apart by kernel->data.  relu(x) is threshold_backward(x, x, 0). */
typedef struct map_op {
  tbk_binary_fn fn;
  int second, param; /* the second input's argument; alpha's or threshold's (0: none) */
} map_op;
typedef struct map_work {
  tbk_iter it;
  tbk_binary_fn fn;
  double param;
} map_work;
static double add(double x, double y, const void *alpha) { return x + *(const double *)alpha * y; }
static double mul(double x, double y, const void *unused) { return (void)unused, x * y; }
static double threshold_backward(double grad, double x, const void *threshold) {
  return x <= *(const double *)threshold ? 0 : grad; /* NaN stays NaN, as on the CPU */
}
static map_op add_op = {add, 1, 2}, mul_op = {mul, 1, 0}, relu_op = {threshold_backward, 0, 0},
              threshold_backward_op = {threshold_backward, 1, 2};

static tb_status run_map(void *args, char *message, size_t message_size) {
  const map_work *w = args;
  (void)message, (void)message_size;
  return tbk_map_binary(&w->it, w->fn, &w->param);
}
static tb_status map_kernel(tb_context ctx, const tb_kernel_call *call) {
  const map_op *op = call->kernel->data;
  const tb_tensor *out = tbk_arg_tensor(call, call->num_args - 1);
  const tb_value *in[2] = {tbk_arg(call, 0), tbk_arg(call, op->second)};
  map_work w = {.fn = op->fn, .param = 1};
  char msg[256];
  if (op->param != 0 && !tbk_arg_number(call, op->param, &w.param)) {
    return fail(TB_ERROR_INVALID_ARGUMENT, call, "alpha or threshold is not a number");
  }
  if (op == &relu_op) w.param = 0;
  tb_status status = tbk_iter_init_values(&w.it, out, in, 2, TB_DTYPE_FLOAT64, msg, sizeof msg);
  if (status != TB_OK) return fail(status, call, msg);
  return tbk_launch(ctx, call->stream, call->kernel->name, run_map, &w, sizeof w);
}
/* writing kernels: matrices */
/* mm.out [self, mat2, out]; addmm.out [self (the bias, broadcast), mat1, mat2, beta, alpha,
 * out]: out = beta * bias + alpha * mat1 @ mat2, each dot product in double, any strides. */
typedef struct matrix {
  char *data;
  int64_t row, col; /* byte strides; 0 along a missing or size-1 (broadcast) dimension */
  tb_dtype dtype;
} matrix;
static matrix matrix_of(const tb_tensor *t) {
  const int64_t size = (int64_t)tbk_dtype_size(t->dtype);
  matrix m = {t->data, 0, 0, t->dtype};
  if (t->ndim >= 1 && t->sizes[t->ndim - 1] != 1) m.col = t->strides[t->ndim - 1] * size;
  if (t->ndim == 2 && t->sizes[0] != 1) m.row = t->strides[0] * size;
  return m;
}
static double get(const matrix *m, int64_t i, int64_t j) {
  return tbk_load(m->dtype, m->data + i * m->row + j * m->col);
}
typedef struct gemm_work {
  matrix a, b, out, bias; /* bias.data NULL: none */
  int64_t m, n, k;
  double alpha, beta;
} gemm_work;
static tb_status run_gemm(void *args, char *message, size_t message_size) {
  const gemm_work *w = args;
  (void)message, (void)message_size;
  for (int64_t i = 0; i < w->m; i++) {
    for (int64_t j = 0; j < w->n; j++) {
      double dot = 0;
      for (int64_t p = 0; p < w->k; p++) dot += get(&w->a, i, p) * get(&w->b, p, j);
      double c = w->bias.data != NULL ? w->beta * get(&w->bias, i, j) : 0;
      tbk_store(w->out.dtype, w->out.data + i * w->out.row + j * w->out.col, c + w->alpha * dot);
    }
  }
  return TB_OK;
}
static tb_status gemm_kernel(tb_context ctx, const tb_kernel_call *call) {
  const int addmm = strcmp(call->kernel->name, "addmm.out") == 0; /* 1: mat1 is argument 1 */
  const tb_tensor *a = tbk_arg_tensor(call, addmm), *b = tbk_arg_tensor(call, addmm + 1);
  const tb_tensor *bias = tbk_arg_tensor(call, 0), *out = tbk_arg_tensor(call, addmm ? 5 : 2);
  double beta = 0, alpha = 1; /* mm has neither */
  if (addmm && (!tbk_arg_number(call, 3, &beta) || !tbk_arg_number(call, 4, &alpha))) {
    return fail(TB_ERROR_INVALID_ARGUMENT, call, "beta or alpha is not a number");
  }
  if (!is_float(a) || !is_float(b) || !is_float(out) || a->ndim != 2 || b->ndim != 2 ||
      out->ndim != 2 || (addmm && (!is_float(bias) || bias->ndim > 2))) {
    return fail(TB_ERROR_NOT_SUPPORTED, call, "floating matrices only");
  }
  gemm_work w = {matrix_of(a),  matrix_of(b),  matrix_of(out), {NULL, 0, 0, out->dtype},
                 out->sizes[0], out->sizes[1], a->sizes[1],    alpha,
                 beta};
  if (addmm && beta != 0) w.bias = matrix_of(bias); /* beta 0 ignores the bias, NaN included */
  return tbk_launch(ctx, call->stream, call->kernel->name, run_gemm, &w, sizeof w);
}
/* writing kernels: reductions */
/* sum.IntList_out [self, dim?, keepdim, dtype?, out]: tbk_reduce applies ATen's dim list
 * (None or [] is every dimension) and keepdim, and checks out's shape; ATen has given out the
 * result dtype (tbk_reduce_dtype). */
static tb_status run_sum(void *args, char *message, size_t message_size) {
  (void)message, (void)message_size;
  return tbk_reduce_run(args, TBK_REDUCE_SUM);
}
static tb_status sum_kernel(tb_context ctx, const tb_kernel_call *call) {
  const tb_tensor *self = tbk_arg_tensor(call, 0), *out = tbk_arg_tensor(call, 4);
  int64_t ndims = 0;
  const int64_t *dims = tbk_arg_ints(call, 1, &ndims); /* NULL, ndims 0: dim is None */
  bool keepdim = false;
  tbk_reduce r;
  char msg[256];
  if (self == NULL || out == NULL || !tbk_arg_bool(call, 2, &keepdim)) {
    return fail(TB_ERROR_INVALID_ARGUMENT, call, "unexpected arguments");
  }
  if (!is_float(self) ||
      out->dtype != tbk_reduce_dtype(TBK_REDUCE_SUM, self->dtype, tbk_arg(call, 3))) {
    return fail(TB_ERROR_NOT_SUPPORTED, call, "floating tensors only");
  }
  tb_status status = tbk_reduce_init(&r, out, self, dims, ndims, keepdim, msg, sizeof msg);
  if (status != TB_OK) return fail(status, call, msg);
  return tbk_launch(ctx, call->stream, "sum.IntList_out", run_sum, &r, sizeof r);
}
/* writing kernels: log_softmax */
/* _log_softmax.out [self, dim, half_to_float, out]: each row along dim becomes
 * x - max - log(sum(exp(x - max))).  _log_softmax_backward_data.out [grad_output, output, dim,
 * input_dtype, out]: each row becomes g - exp(y) * sum(g).  Rows come from tbk_slices. */
typedef struct rows_work {
  tbk_reduce rows; /* operands: out, x (self or grad_output), y (output, backward only) */
  bool backward;
} rows_work;
static void log_softmax_row(char **data, const int64_t *step, int64_t n, void *work) {
  const rows_work *w = work;
  const tb_dtype *dt = w->rows.outer.dtypes;
  double max = w->backward ? 0 : -INFINITY, sum = 0;
  for (int64_t i = 0; i < n && !w->backward; i++)
    max = fmax(max, tbk_load(dt[1], data[1] + i * step[1]));
  for (int64_t i = 0; i < n; i++) {
    double x = tbk_load(dt[1], data[1] + i * step[1]);
    sum += w->backward ? x : exp(x - max);
  }
  for (int64_t i = 0; i < n; i++) {
    double x = tbk_load(dt[1], data[1] + i * step[1]);
    double y =
        w->backward ? x - exp(tbk_load(dt[2], data[2] + i * step[2])) * sum : x - max - log(sum);
    tbk_store(dt[0], data[0] + i * step[0], y);
  }
}
static tb_status run_rows(void *args, char *message, size_t message_size) {
  (void)message, (void)message_size;
  return tbk_slices_run(&((rows_work *)args)->rows, log_softmax_row, args);
}
static tb_status log_softmax_kernel(tb_context ctx, const tb_kernel_call *call) {
  const bool backward = strcmp(call->kernel->name, "_log_softmax.out") != 0;
  const tb_tensor *rows[3] = {tbk_arg_tensor(call, backward ? 4 : 3), tbk_arg_tensor(call, 0),
                              tbk_arg_tensor(call, 1)};
  bool half_to_float = false;
  int64_t dim;
  rows_work w = {.backward = backward};
  char msg[256];
  if (!tbk_arg_int(call, backward ? 2 : 1, &dim) ||
      (!backward && !tbk_arg_bool(call, 2, &half_to_float))) {
    return fail(TB_ERROR_INVALID_ARGUMENT, call, "unexpected arguments");
  }
  if (!is_float(rows[0]) || !is_float(rows[1]) || (backward && !is_float(rows[2])) ||
      half_to_float) {
    return fail(TB_ERROR_NOT_SUPPORTED, call, "floating tensors only, no half_to_float");
  }
  tb_status status = tbk_slices_init(&w.rows, rows, backward ? 3 : 2, dim, msg, sizeof msg);
  if (status != TB_OK) return fail(status, call, msg);
  return tbk_launch(ctx, call->stream, call->kernel->name, run_rows, &w, sizeof w);
}
/* writing kernels: nll_loss */
/* nll_loss_forward.output [self, target, weight?, reduction, ignore_index, output, total_weight]
 * and nll_loss_backward.grad_input [grad_output, self, target, weight?, reduction, ignore_index,
 * total_weight, grad_input]: self [N, C] or [C], target [N] or [] (int64), weight [C] or None;
 * reduction 0 (none: output [N]), 1 (mean: divided by total_weight) or 2 (sum). */
typedef struct nll_work {
  matrix self, target, weight, out; /* out: output or grad_input; weight.data NULL: none */
  char *grad, *total;               /* grad_output (backward); total_weight */
  int64_t grad_step;                /* grad_output's byte stride (backward, reduction none) */
  tb_dtype total_dtype;
  int64_t n, classes, reduction, ignore_index;
  bool backward;
} nll_work;
static tb_status run_nll(void *args, char *message, size_t message_size) {
  const nll_work *w = args;
  double sum = 0, total = 0, scale = 1;
  if (w->backward && w->reduction != 0) scale = tbk_load(w->out.dtype, w->grad);
  if (w->backward && w->reduction == 1) scale /= tbk_load(w->total_dtype, w->total);
  for (int64_t i = 0; i < w->n; i++) {
    const int64_t t = (int64_t)get(&w->target, 0, i);
    if (t != w->ignore_index && (t < 0 || t >= w->classes)) { /* faults the device */
      snprintf(message, message_size, "target %lld is out of bounds", (long long)t);
      return TB_ERROR_INVALID_ARGUMENT;
    }
    const double weight = t == w->ignore_index ? 0 : w->weight.data ? get(&w->weight, 0, t) : 1;
    if (w->backward) {
      const double g =
          w->reduction == 0 ? tbk_load(w->out.dtype, w->grad + i * w->grad_step) : scale;
      for (int64_t c = 0; c < w->classes; c++) {
        tbk_store(w->out.dtype, w->out.data + i * w->out.row + c * w->out.col,
                  c == t ? -weight * g : 0);
      }
    } else if (w->reduction == 0) {
      tbk_store(w->out.dtype, w->out.data + i * w->out.col,
                t == w->ignore_index ? 0 : -weight * get(&w->self, i, t));
    } else {
      sum -= t == w->ignore_index ? 0 : weight * get(&w->self, i, t);
      total += weight;
    }
  }
  if (w->backward) return TB_OK;
  if (w->reduction != 0)
    tbk_store(w->out.dtype, w->out.data, w->reduction == 1 ? sum / total : sum);
  tbk_store(w->total_dtype, w->total, total); /* 0 for reduction none */
  return TB_OK;
}
static tb_status nll_kernel(tb_context ctx, const tb_kernel_call *call) {
  const int b = strcmp(call->kernel->name, "nll_loss_forward.output") != 0; /* 1: backward */
  const tb_tensor *self = tbk_arg_tensor(call, b), *target = tbk_arg_tensor(call, b + 1);
  const tb_tensor *weight = tbk_arg_tensor(call, b + 2), *grad = tbk_arg_tensor(call, 0);
  const tb_tensor *out = tbk_arg_tensor(call, b ? 7 : 5), *total = tbk_arg_tensor(call, 6);
  int64_t reduction, ignore_index;
  if (self == NULL || target == NULL || out == NULL || total == NULL ||
      !tbk_arg_int(call, b + 3, &reduction) || !tbk_arg_int(call, b + 4, &ignore_index)) {
    return fail(TB_ERROR_INVALID_ARGUMENT, call, "unexpected arguments");
  }
  if (!is_float(self) || self->ndim < 1 || self->ndim > 2 || target->dtype != TB_DTYPE_INT64 ||
      (weight != NULL && weight->dtype != self->dtype) || out->dtype != self->dtype) {
    return fail(TB_ERROR_NOT_SUPPORTED, call, "floating [N, C] or [C], int64 targets");
  }
  /* A [C] input is one row: its target is 0-dim. */
  nll_work w = {matrix_of(self),
                matrix_of(target),
                {NULL, 0, 0, self->dtype},
                matrix_of(out),
                b ? grad->data : NULL,
                total->data,
                0,
                total->dtype,
                self->ndim == 2 ? self->sizes[0] : 1,
                self->sizes[self->ndim - 1],
                reduction,
                ignore_index,
                b == 1};
  if (self->ndim == 1) w.self.row = w.out.row = 0;
  if (b && reduction == 0 && grad->ndim == 1)
    w.grad_step = grad->strides[0] * (int64_t)tbk_dtype_size(grad->dtype);
  if (weight != NULL) w.weight = matrix_of(weight);
  return tbk_launch(ctx, call->stream, call->kernel->name, run_nll, &w, sizeof w);
}
/* writing kernels: fused SGD */
/* _fused_sgd_ [params, grads, momentum_buffer_list, weight_decay, momentum, lr, dampening,
 * nesterov, maximize, is_first_step, grad_scale?, found_inf?]: every parameter in one task, a
 * tbk_iter each (param, grad, and the buffer when momentum != 0), so the work is on the heap. */
typedef struct sgd_work {
  double weight_decay, momentum, lr, dampening;
  bool nesterov, maximize, first_step;
  const float *grad_scale, *found_inf; /* device scalars, read when the task runs; NULL: none */
  int64_t count;
  tbk_iter params[];
} sgd_work;
static void sgd_loop(char **data, const int64_t *step, int64_t n, void *work) {
  const sgd_work *w = work;
  for (int64_t i = 0; i < n; i++) {
    char *param = data[0] + i * step[0], *grad = data[1] + i * step[1];
    const tb_dtype dtype = w->params[0].dtypes[0];
    double g = tbk_load(dtype, grad), p = tbk_load(dtype, param);
    if (w->grad_scale != NULL) tbk_store(dtype, grad, g /= *w->grad_scale); /* unscaled, kept */
    if (w->maximize) g = -g;
    if (w->weight_decay != 0) g += w->weight_decay * p;
    if (w->momentum != 0) {
      char *buffer = data[2] + i * step[2];
      double b = w->first_step ? g : w->momentum * tbk_load(dtype, buffer) + (1 - w->dampening) * g;
      tbk_store(dtype, buffer, b);
      g = w->nesterov ? g + w->momentum * tbk_load(dtype, buffer) : tbk_load(dtype, buffer);
    }
    tbk_store(dtype, param, p - w->lr * g);
  }
}
static tb_status run_sgd(void *args, char *message, size_t message_size) {
  sgd_work *w = args;
  (void)message, (void)message_size;
  if (w->found_inf != NULL && *w->found_inf == 1.0f) return TB_OK; /* an inf/NaN step: skipped */
  for (int64_t k = 0; k < w->count; k++) tbk_iter_run(&w->params[k], sgd_loop, w);
  return TB_OK;
}
static tb_status sgd_kernel(tb_context ctx, const tb_kernel_call *call) {
  int64_t n = 0, grads = -1, buffers = -1;
  const tb_tensor *const *p = tbk_arg_tensors(call, 0, &n);
  const tb_tensor *const *g = tbk_arg_tensors(call, 1, &grads);
  const tb_tensor *const *b = tbk_arg_tensors(call, 2, &buffers);
  const tb_tensor *scale = tbk_arg_tensor(call, 10), *inf = tbk_arg_tensor(call, 11);
  double v[7]; /* weight_decay, momentum, lr, dampening, nesterov, maximize, is_first_step */
  for (int i = 0; i < 7; i++) {
    if (!tbk_arg_number(call, 3 + i, &v[i]))
      return fail(TB_ERROR_INVALID_ARGUMENT, call, "an option is not a number");
  }
  if (grads != n || buffers != (v[1] != 0 ? n : 0)) {
    return fail(TB_ERROR_INVALID_ARGUMENT, call,
                "params, grads and momentum buffers differ in number");
  }
  if ((scale != NULL && scale->dtype != TB_DTYPE_FLOAT32) ||
      (inf != NULL && inf->dtype != TB_DTYPE_FLOAT32)) {
    return fail(TB_ERROR_NOT_SUPPORTED, call, "float32 grad_scale and found_inf only");
  }
  const size_t size = sizeof(sgd_work) + (size_t)n * sizeof(tbk_iter);
  sgd_work *w = malloc(size);
  if (w == NULL) return fail(TB_ERROR_OUT_OF_MEMORY, call, "out of memory");
  *w = (sgd_work){
      v[0], v[1], v[2], v[3], v[4], v[5], v[6], scale ? scale->data : NULL, inf ? inf->data : NULL,
      n};
  tb_status status = TB_OK;
  char msg[256] = "one floating dtype for every tensor";
  for (int64_t k = 0; k < n && status == TB_OK; k++) {
    const tb_tensor *in[2] = {g[k], buffers != 0 ? b[k] : NULL};
    bool same = is_float(p[k]) && p[k]->dtype == p[0]->dtype && g[k]->dtype == p[k]->dtype &&
                (in[1] == NULL || in[1]->dtype == p[k]->dtype);
    status = same ? tbk_iter_init(&w->params[k], p[k], in, 1 + (in[1] != NULL), msg, sizeof msg)
                  : TB_ERROR_NOT_SUPPORTED;
  }
  if (status != TB_OK) status = fail(status, call, msg);
  if (status == TB_OK && n > 0)
    status = tbk_launch(ctx, call->stream, "_fused_sgd_", run_sgd, w, size);
  free(w);
  return status;
}
/* writing kernels: the table */
TBK_KERNEL_TABLE(
    acme_kernels,
    TBK_KERNEL_DATA(
        "add.out",
        "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
        map_kernel, FLOATS, &add_op),
    TBK_KERNEL_DATA("mul.out",
                    "mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
                    map_kernel, FLOATS, &mul_op),
    TBK_KERNEL_DATA("relu", "relu(Tensor self) -> Tensor", map_kernel, FLOATS, &relu_op),
    TBK_KERNEL_DATA("threshold_backward.grad_input",
                    "threshold_backward.grad_input(Tensor grad_output, Tensor self, Scalar "
                    "threshold, *, Tensor(a!) grad_input) -> Tensor(a!)",
                    map_kernel, FLOATS, &threshold_backward_op),
    TBK_KERNEL("addmm.out",
               "addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, "
               "Tensor(a!) out) -> Tensor(a!)",
               gemm_kernel, FLOATS),
    TBK_KERNEL("mm.out", "mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
               gemm_kernel, FLOATS),
    TBK_KERNEL("sum.IntList_out",
               "sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
               "dtype=None, Tensor(a!) out) -> Tensor(a!)",
               sum_kernel, FLOATS),
    TBK_KERNEL("_log_softmax.out",
               "_log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> "
               "Tensor(a!)",
               log_softmax_kernel, FLOATS),
    TBK_KERNEL("_log_softmax_backward_data.out",
               "_log_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, "
               "ScalarType input_dtype, *, Tensor(a!) out) -> Tensor(a!)",
               log_softmax_kernel, FLOATS),
    TBK_KERNEL("nll_loss_forward.output",
               "nll_loss_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, "
               "SymInt ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> "
               "(Tensor(a!), Tensor(b!))",
               nll_kernel, FLOATS),
    TBK_KERNEL("nll_loss_backward.grad_input",
               "nll_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, "
               "Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight, *, "
               "Tensor(a!) grad_input) -> Tensor(a!)",
               nll_kernel, FLOATS),
    TBK_KERNEL("_fused_sgd_",
               "_fused_sgd_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] "
               "momentum_buffer_list, *, float weight_decay, float momentum, float lr, float "
               "dampening, bool nesterov, bool maximize, bool is_first_step, Tensor? "
               "grad_scale=None, Tensor? found_inf=None) -> ()",
               sgd_kernel, FLOATS));
