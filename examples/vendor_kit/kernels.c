/*
 * acme's kernels: the twelve the demo's MLP (examples/models.py "mlp") trains with, so that its
 * training step runs no CPU fallback; this file replaces a `tb-vendor new acme` src/kernels.c.
 * A kernel checks what the schema leaves open (dtypes, ranks, options), declining the rest with
 * TB_ERROR_NOT_SUPPORTED and nothing enqueued (the CPU fallback runs it); copies what its work
 * needs by value, as the tb_tensor descriptors die when it returns; and tbk_launch() enqueues the
 * copy on call->stream, whose worker thread runs it in order.  Device memory is host memory here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acme.h"

#define F32 TB_DTYPE_BIT(TB_DTYPE_FLOAT32)

static tb_status decline(const tb_kernel_call *call, const char *why) {
  return tbk_fail(TB_ERROR_NOT_SUPPORTED, "acme: %s: %s", call->kernel->name, why);
}
static bool is_f32(const tb_tensor *t) { return t != NULL && t->dtype == TB_DTYPE_FLOAT32; }

/* ---- Elementwise: tbk_iter broadcasts, walks any strides; tbk_map_binary computes in double.
 * relu(x) is threshold_backward(x, x, 0): all four are binary maps, told apart by kernel->data. */
typedef struct map_op {
  tbk_binary_fn fn;
  int second, param; /* the argument of the second input, and of alpha or threshold (0: none) */
} map_op;
typedef struct map_work {
  tbk_iter it;
  tbk_binary_fn fn;
  double param;
} map_work;
static double add(double x, double y, const void *alpha) { return x + *(const double *)alpha * y; }
static double mul(double x, double y, const void *unused) {
  (void)unused;
  return x * y;
}
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
/* add.out [self, other, alpha, out], mul.out [self, other, out], relu [self, out],
 * threshold_backward.grad_input [grad_output, self, threshold, grad_input]: the inputs have the
 * output's dtype, and a number (a CPU scalar) becomes a constant of the iterator. */
static tb_status map_kernel(tb_context ctx, const tb_kernel_call *call) {
  const map_op *op = call->kernel->data;
  const tb_tensor *out = tbk_arg_tensor(call, call->num_args - 1);
  const tb_value *in[2] = {tbk_arg(call, 0), tbk_arg(call, op->second)};
  map_work w = {.fn = op->fn, .param = 0};
  char msg[256];
  if (op->param != 0) tbk_arg_number(call, op->param, &w.param);
  tb_status status = tbk_iter_init_values(&w.it, out, in, 2, out->dtype, msg, sizeof msg);
  if (status != TB_OK) return tbk_fail(status, "acme: %s: %s", call->kernel->name, msg);
  return tbk_launch(ctx, call->stream, call->kernel->name, run_map, &w, sizeof w);
}

/* ---- Float32 matrices, any strides. */
typedef struct matrix {
  float *data;
  int64_t rs, cs; /* strides in elements; 0 along dimensions of size 1 or missing (broadcast) */
} matrix;
static matrix matrix_of(const tb_tensor *t) {
  matrix m = {t->data, 0, 0};
  if (t->ndim >= 1 && t->sizes[t->ndim - 1] != 1) m.cs = t->strides[t->ndim - 1];
  if (t->ndim == 2 && t->sizes[0] != 1) m.rs = t->strides[0];
  return m;
}
static float *at(const matrix *m, int64_t i, int64_t j) { return m->data + i * m->rs + j * m->cs; }
static bool is_matrix(const tb_tensor *t) { return is_f32(t) && t->ndim == 2; }

typedef struct gemm_work {
  matrix a, b, out, bias; /* bias.data NULL: none */
  int64_t m, n, k;
  double alpha, beta;
} gemm_work;
/* out = beta * bias + alpha * a @ b, each dot product in double. */
static tb_status run_gemm(void *args, char *message, size_t message_size) {
  const gemm_work *w = args;
  (void)message, (void)message_size;
  for (int64_t i = 0; i < w->m; i++) {
    for (int64_t j = 0; j < w->n; j++) {
      double dot = 0;
      for (int64_t p = 0; p < w->k; p++) dot += (double)*at(&w->a, i, p) * *at(&w->b, p, j);
      double c = w->bias.data != NULL ? w->beta * *at(&w->bias, i, j) : 0;
      *at(&w->out, i, j) = (float)(c + w->alpha * dot);
    }
  }
  return TB_OK;
}
/* mm.out [self, mat2, out]; addmm.out [self (the bias), mat1, mat2, beta, alpha, out]. */
static tb_status gemm_kernel(tb_context ctx, const tb_kernel_call *call) {
  const int addmm = strcmp(call->kernel->name, "addmm.out") == 0; /* 1: mat1 is argument 1 */
  const tb_tensor *a = tbk_arg_tensor(call, addmm), *b = tbk_arg_tensor(call, addmm + 1);
  const tb_tensor *bias = tbk_arg_tensor(call, 0), *out = tbk_arg_tensor(call, addmm ? 5 : 2);
  double beta = 0, alpha = 1; /* mm's: it has no arguments 3 and 4 */
  tbk_arg_number(call, 3, &beta);
  tbk_arg_number(call, 4, &alpha);
  if (!is_matrix(a) || !is_matrix(b) || !is_matrix(out) || !is_f32(bias) || bias->ndim > 2) {
    return decline(call, "float32 matrices only");
  }
  gemm_work w = {matrix_of(a),  matrix_of(b), matrix_of(out), {NULL, 0, 0}, out->sizes[0],
                 out->sizes[1], a->sizes[1],  alpha,          beta};
  if (beta != 0) w.bias = matrix_of(bias); /* beta 0 ignores the bias, NaN included */
  return tbk_launch(ctx, call->stream, call->kernel->name, run_gemm, &w, sizeof w);
}

/* ---- Rows of a matrix: sums, log_softmax and its backward, each sum in double. */
enum { SUM, LOG_SOFTMAX, LOG_SOFTMAX_BACKWARD };
typedef struct rows_work {
  matrix x, y, out; /* x: the input or grad_output; y: log_softmax's output (backward only) */
  int64_t rows, cols;
  int op;
} rows_work;
/* Row i: SUM: out[i] = sum(x); LOG_SOFTMAX: out = x - max - log(sum(exp(x - max)));
 * LOG_SOFTMAX_BACKWARD: out = x - exp(y) * sum(x). */
static tb_status run_rows(void *args, char *message, size_t message_size) {
  const rows_work *w = args;
  (void)message, (void)message_size;
  for (int64_t i = 0; i < w->rows; i++) {
    double max = w->op == LOG_SOFTMAX ? -INFINITY : 0, sum = 0;
    for (int64_t j = 0; j < w->cols && w->op == LOG_SOFTMAX; j++) max = fmax(max, *at(&w->x, i, j));
    for (int64_t j = 0; j < w->cols; j++) {
      sum += w->op == LOG_SOFTMAX ? exp(*at(&w->x, i, j) - max) : *at(&w->x, i, j);
    }
    if (w->op == SUM) *at(&w->out, i, 0) = (float)sum;
    for (int64_t j = 0; j < w->cols && w->op != SUM; j++) {
      double x = *at(&w->x, i, j), y = w->op == LOG_SOFTMAX ? 0 : *at(&w->y, i, j);
      *at(&w->out, i, j) = (float)(w->op == LOG_SOFTMAX ? x - max - log(sum) : x - exp(y) * sum);
    }
  }
  return TB_OK;
}
/* sum.IntList_out [self, dim?, keepdim, dtype?, out] over one dimension of a matrix (a Linear's
 * bias gradient): the rows of self for dimension 1, of self transposed for dimension 0. */
static tb_status sum_kernel(tb_context ctx, const tb_kernel_call *call) {
  const tb_tensor *self = tbk_arg_tensor(call, 0), *out = tbk_arg_tensor(call, 4);
  int64_t dims = 0;
  const int64_t *dim = tbk_arg_ints(call, 1, &dims);
  if (!is_matrix(self) || !is_f32(out) || dim == NULL || dims != 1) {
    return decline(call, "one dimension of a float32 matrix only"); /* dtype= is out's dtype */
  }
  const int64_t d = (dim[0] + 2) % 2;                           /* 0 or 1 */
  const matrix x = matrix_of(self), x_t = {x.data, x.cs, x.rs}; /* x_t: self transposed */
  const matrix column = {out->data, out->strides[out->ndim == 2 ? 1 - d : 0], 0};
  rows_work w = {d == 1 ? x : x_t, x, column, self->sizes[1 - d], self->sizes[d], SUM};
  return tbk_launch(ctx, call->stream, "sum.IntList_out", run_rows, &w, sizeof w);
}
/* _log_softmax.out [self, dim, half_to_float, out]; _log_softmax_backward_data.out
 * [grad_output, output, dim, input_dtype, out]. */
static tb_status log_softmax_kernel(tb_context ctx, const tb_kernel_call *call) {
  const bool backward = strcmp(call->kernel->name, "_log_softmax.out") != 0;
  const tb_tensor *x = tbk_arg_tensor(call, 0), *out = tbk_arg_tensor(call, backward ? 4 : 3);
  const tb_tensor *y = backward ? tbk_arg_tensor(call, 1) : x;
  int64_t dim;
  tbk_arg_int(call, backward ? 2 : 1, &dim);
  if (!is_matrix(x) || !is_matrix(y) || !is_matrix(out) || (dim != 1 && dim != -1)) {
    return decline(call, "the last dimension of float32 matrices only");
  }
  rows_work w = {matrix_of(x), matrix_of(y), matrix_of(out),
                 x->sizes[0],  x->sizes[1],  backward ? LOG_SOFTMAX_BACKWARD : LOG_SOFTMAX};
  return tbk_launch(ctx, call->stream, call->kernel->name, run_rows, &w, sizeof w);
}

/* ---- nll_loss: self [N, C] of log-probabilities, target [N] of int64 classes, no class weights,
 * reduction 1 (mean) or 2 (sum). */
typedef struct nll_work {
  matrix self, out; /* out: forward's loss, or backward's grad_input */
  const int64_t *target;
  float *grad, *total; /* backward's grad_output; total_weight, written forward, read backward */
  int64_t target_stride, n, classes, reduction, ignore_index;
  bool backward;
} nll_work;
static tb_status run_nll(void *args, char *message, size_t message_size) {
  const nll_work *w = args;
  double sum = 0, count = 0;
  for (int64_t i = 0; i < w->n; i++) {
    int64_t t = w->target[i * w->target_stride];
    bool ignored = t == w->ignore_index;
    if (!ignored && (t < 0 || t >= w->classes)) { /* faults the device, as CUDA's assert */
      snprintf(message, message_size, "target %lld is out of bounds", (long long)t);
      return TB_ERROR_INVALID_ARGUMENT;
    }
    if (w->backward) {
      double grad = *w->grad / (w->reduction == 1 ? *w->total : 1);
      for (int64_t c = 0; c < w->classes; c++) *at(&w->out, i, c) = c == t && !ignored ? -grad : 0;
      continue;
    }
    sum -= ignored ? 0 : *at(&w->self, i, t);
    count += !ignored;
  }
  if (w->backward) return TB_OK;
  *w->out.data = (float)(w->reduction == 1 ? sum / count : sum);
  *w->total = (float)count;
  return TB_OK;
}
/* nll_loss_forward.output [self, target, weight?, reduction, ignore_index, output, total_weight];
 * nll_loss_backward.grad_input [grad_output, self, ..., ignore_index, total_weight, grad_input]. */
static tb_status nll_kernel(tb_context ctx, const tb_kernel_call *call) {
  const int s = strcmp(call->kernel->name, "nll_loss_forward.output") != 0; /* self's index */
  const tb_tensor *self = tbk_arg_tensor(call, s), *target = tbk_arg_tensor(call, s + 1);
  const tb_tensor *grad = tbk_arg_tensor(call, 0), *total = tbk_arg_tensor(call, 6);
  const tb_tensor *out = tbk_arg_tensor(call, s ? 7 : 5); /* output, or grad_input */
  int64_t reduction, ignore_index;
  tbk_arg_int(call, s + 3, &reduction);
  tbk_arg_int(call, s + 4, &ignore_index);
  if (!is_matrix(self) || target->dtype != TB_DTYPE_INT64 || target->ndim != 1 || reduction == 0 ||
      tbk_arg_tensor(call, s + 2) != NULL || !is_f32(grad) || !is_f32(total) || !is_f32(out)) {
    return decline(call, "float32 [N, C], int64 targets, no weights, a reduction only");
  }
  nll_work w = {matrix_of(self), matrix_of(out),     target->data,   grad->data,
                total->data,     target->strides[0], self->sizes[0], self->sizes[1],
                reduction,       ignore_index,       s == 1};
  return tbk_launch(ctx, call->stream, call->kernel->name, run_nll, &w, sizeof w);
}

/* ---- _fused_sgd_ [params, grads, momentum_buffers, weight_decay, momentum, lr, dampening,
 * nesterov, maximize, is_first_step, grad_scale?, found_inf?], in float as on the CPU: one task,
 * a tbk_iter per parameter, so the work is built on the heap (tbk_launch copies it). */
typedef struct sgd_work {
  float weight_decay, momentum, lr, dampening;
  bool nesterov, maximize, first_step;
  int64_t count;
  tbk_iter params[]; /* operands: param (the output), grad, and the buffer when momentum != 0 */
} sgd_work;
static void sgd_loop(char **data, const int64_t *strides, int64_t n, void *work) {
  const sgd_work *w = work;
  for (int64_t i = 0; i < n; i++) {
    float *param = (float *)(data[0] + i * strides[0]);
    float g = *(const float *)(data[1] + i * strides[1]) * (w->maximize ? -1 : 1);
    if (w->weight_decay != 0) g += w->weight_decay * *param;
    if (w->momentum != 0) {
      float *buffer = (float *)(data[2] + i * strides[2]);
      *buffer = w->first_step ? g : w->momentum * *buffer + (1 - w->dampening) * g;
      g = w->nesterov ? g + w->momentum * *buffer : *buffer;
    }
    *param -= w->lr * g;
  }
}
static tb_status run_sgd(void *args, char *message, size_t message_size) {
  sgd_work *w = args;
  (void)message, (void)message_size;
  for (int64_t k = 0; k < w->count; k++) tbk_iter_run(&w->params[k], sgd_loop, w);
  return TB_OK;
}

static tb_status sgd_kernel(tb_context ctx, const tb_kernel_call *call) {
  int64_t n = 0, grads = 0, buffers = 0;
  const tb_tensor *const *p = tbk_arg_tensors(call, 0, &n);
  const tb_tensor *const *g = tbk_arg_tensors(call, 1, &grads);
  const tb_tensor *const *b = tbk_arg_tensors(call, 2, &buffers);
  double v[7]; /* weight_decay, momentum, lr, dampening, nesterov, maximize, is_first_step */
  for (int i = 0; i < 7; i++) tbk_arg_number(call, 3 + i, &v[i]);
  if (grads != n || buffers != (v[1] != 0 ? n : 0) || tbk_arg_tensor(call, 10) != NULL ||
      tbk_arg_tensor(call, 11) != NULL) {
    return decline(call, "no grad_scale, no found_inf");
  }
  const size_t size = sizeof(sgd_work) + (size_t)n * sizeof(tbk_iter);
  sgd_work *w = malloc(size);
  if (w == NULL) return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "acme: _fused_sgd_: out of memory");
  *w = (sgd_work){(float)v[0], (float)v[1], (float)v[2], (float)v[3], v[4], v[5], v[6], n};
  tb_status status = TB_OK;
  char msg[256] = "float32 tensors only";
  for (int64_t k = 0; k < n && status == TB_OK; k++) {
    const tb_tensor *in[2] = {g[k], buffers != 0 ? b[k] : NULL};
    bool f32 = is_f32(p[k]) && is_f32(in[0]) && (in[1] == NULL || is_f32(in[1]));
    status = f32 ? tbk_iter_init(&w->params[k], p[k], in, 1 + !!in[1], msg, sizeof msg)
                 : TB_ERROR_NOT_SUPPORTED;
  }
  if (status != TB_OK) status = tbk_fail(status, "acme: _fused_sgd_: %s", msg);
  if (status == TB_OK) status = tbk_launch(ctx, call->stream, "_fused_sgd_", run_sgd, w, size);
  free(w);
  return status;
}

TBK_KERNEL_TABLE(
    acme_kernels,
    TBK_KERNEL_DATA(
        "add.out",
        "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
        map_kernel, F32 | TB_DTYPE_BIT(TB_DTYPE_FLOAT64), &add_op),
    TBK_KERNEL_DATA("mul.out",
                    "mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
                    map_kernel, F32 | TB_DTYPE_BIT(TB_DTYPE_FLOAT64), &mul_op),
    TBK_KERNEL_DATA("relu", "relu(Tensor self) -> Tensor", map_kernel, F32, &relu_op),
    TBK_KERNEL_DATA("threshold_backward.grad_input",
                    "threshold_backward.grad_input(Tensor grad_output, Tensor self, Scalar "
                    "threshold, *, Tensor(a!) grad_input) -> Tensor(a!)",
                    map_kernel, F32, &threshold_backward_op),
    TBK_KERNEL("addmm.out",
               "addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, "
               "Tensor(a!) out) -> Tensor(a!)",
               gemm_kernel, F32),
    TBK_KERNEL("mm.out", "mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
               gemm_kernel, F32),
    TBK_KERNEL("sum.IntList_out",
               "sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
               "dtype=None, Tensor(a!) out) -> Tensor(a!)",
               sum_kernel, F32),
    TBK_KERNEL("_log_softmax.out",
               "_log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> "
               "Tensor(a!)",
               log_softmax_kernel, F32),
    TBK_KERNEL("_log_softmax_backward_data.out",
               "_log_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, "
               "ScalarType input_dtype, *, Tensor(a!) out) -> Tensor(a!)",
               log_softmax_kernel, F32),
    TBK_KERNEL("nll_loss_forward.output",
               "nll_loss_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, "
               "SymInt ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> "
               "(Tensor(a!), Tensor(b!))",
               nll_kernel, F32),
    TBK_KERNEL("nll_loss_backward.grad_input",
               "nll_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, "
               "Tensor? weight, int reduction, SymInt ignore_index, Tensor total_weight, *, "
               "Tensor(a!) grad_input) -> Tensor(a!)",
               nll_kernel, F32),
    TBK_KERNEL("_fused_sgd_",
               "_fused_sgd_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] "
               "momentum_buffer_list, *, float weight_decay, float momentum, float lr, float "
               "dampening, bool nesterov, bool maximize, bool is_first_step, Tensor? "
               "grad_scale=None, Tensor? found_inf=None) -> ()",
               sgd_kernel, F32));
