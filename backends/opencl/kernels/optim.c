/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The fused optimizer steps (_fused_sgd_, _fused_adam_, _fused_adamw_) and the _foreach_
 * operators, a launch per eight tensors as CUDA's multi_tensor_apply (an optimizer step of a
 * model with a hundred parameters is thirteen launches, not a hundred); each element's whole
 * update in one work-item, or on CPU devices a run of elements per work-item.  The random kernels
 * draw from the device's own Philox stream (vendor.h, "Random numbers": element i uses the counter
 * values from offset + 4 i).  Dense tensors only; grad_scale and found_inf (AMP's scaler) are
 * declined to the CPU fallback.
 *
 * The grouped kernels take many arguments (tb_adamw: 96 pointers and offsets, about 900 bytes),
 * within the 1024 bytes of CL_DEVICE_MAX_PARAMETER_SIZE that OpenCL guarantees a full-profile
 * device.
 */
#include <stdio.h>
#include <string.h>

#include "kernels.h"

static tb_status kernel_for(tb_context ctx, int32_t device, tb_dtype dtype, const char *name,
                            ocl_kernel **kernel) {
  char defines[128];
  snprintf(defines, sizeof defines, "#define T %s\n#define ACC %s\n", ocl_type_name(dtype),
           dtype == TB_DTYPE_FLOAT64 ? "double" : "float");
  const char *sources[] = {defines, ocl_source_optim};
  return ocl_kernel_get(ctx, device, defines, sources, 2, name, kernel);
}

/* The i-th tensor of list argument `arg`, checked to be dense with `numel` elements of `dtype`
 * on `device`; NULL when it is not. */
static const tb_tensor *member(const tb_value *arg, int64_t i, tb_dtype dtype, int64_t numel) {
  if (arg->kind != TB_VALUE_TENSOR_LIST || i >= arg->as.tensors.count) return NULL;
  const tb_tensor *t = arg->as.tensors.items[i];
  int64_t n = 0;
  if (t == NULL || t->dtype != dtype || !ocl_dense(t, &n) || n != numel) return NULL;
  return t;
}

/* The fused steps: SGD, Adam (weight decay added to the gradient) and AdamW (decoupled: the
 * parameter decays), the last two one kernel, tb_adamw. */
typedef enum optim_kind { O_SGD, O_ADAM, O_ADAMW } optim_kind;

/* Elements per work-item of tb_adamw and tb_foreach: on CPU devices a run of them, which the
 * driver vectorizes (and tb_adamw's two pow() calls once per run); elsewhere 1, so that
 * neighbouring work-items touch neighbouring elements. */
static cl_long run_length(tb_context ctx, int32_t device) {
  return ctx->devices[device].type & CL_DEVICE_TYPE_CPU ? 256 : 1;
}

enum {
  GROUP = 8,   /* tensors (or parameters) per launch: the slots of tb_foreach, tb_sgd, tb_adamw */
  WINDOW = 256 /* tensors ordered by size at a time */
};

/* order[0..count) by sizes[order[i]], largest first (a group's launch spans its largest
 * tensor, so that neighbours in this order waste least).  Insertion sort: lists are a model's
 * parameters, tens to hundreds. */
static void sort_by_size(const int64_t *sizes, int64_t *order, int64_t count) {
  for (int64_t i = 1; i < count; i++) {
    int64_t key = order[i], j = i;
    for (; j > 0 && sizes[order[j - 1]] < sizes[key]; j--) order[j] = order[j - 1];
    order[j] = key;
  }
}

/* A fused step's call, checked: its kind, arguments, scalars (SGD: weight_decay, momentum, lr,
 * dampening; AdamW: lr, beta1, beta2, weight_decay, eps) and flags (SGD: nesterov, maximize,
 * is_first_step; AdamW: amsgrad, maximize). */
typedef struct fused_args {
  optim_kind kind;
  const tb_value *a;
  const double *s;
  const int *flags;
  bool momentum, amsgrad;
} fused_args;

/* One launch of tb_sgd or tb_adamw over parameters window + order[k], k < members, whose
 * element counts are sizes[order[k]] (the largest first). */
static tb_status fused_group(tb_context ctx, int32_t device, const tb_kernel_call *call,
                             ocl_kernel *kernel, const fused_args *f, int64_t window,
                             const int64_t *sizes, const int64_t *order, int64_t members) {
  /* tensors per parameter: AdamW's param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step */
  enum { MOST = 6 };
  int tensors = f->kind == O_SGD ? 3 : MOST;
  const tb_value *a = f->a;
  cl_long numels[GROUP] = {0};
  ocl_place places[MOST * GROUP];
  if (sizes[order[0]] == 0) return TB_OK; /* the largest is empty: all are */
  tb_status status = TB_OK;
  for (int64_t k = 0; k < GROUP && status == TB_OK; k++) {
    numels[k] = k < members ? sizes[order[k]] : 0;
    if (numels[k] == 0) { /* an empty parameter or an unused slot: no work-item reads it */
      for (int l = 0; l < tensors; l++) places[tensors * k + l] = places[l];
      continue;
    }
    int64_t i = window + order[k];
    ocl_place *mine = &places[tensors * k];
    status = ocl_tensor_place(ctx, device, a[0].as.tensors.items[i], "self", &mine[0]);
    for (int l = 1; l < tensors && status == TB_OK; l++) {
      bool used = !(f->kind == O_SGD && l == 2 && !f->momentum) &&
                  !(f->kind != O_SGD && l == 4 && !f->amsgrad);
      mine[l] = mine[0];
      if (used) {
        status =
            ocl_tensor_place(ctx, device, a[l].as.tensors.items[i], "optimizer state", &mine[l]);
      }
    }
  }
  if (status != TB_OK) return status;
  tb_dtype dtype = a[0].as.tensors.items[window + order[0]]->dtype;
  cl_long chunk = run_length(ctx, device);
  size_t global[2] = {(size_t)((numels[0] + chunk - 1) / chunk), (size_t)members};
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  for (int k = 0; k < tensors * GROUP; k++) ocl_arg_place(&args, &places[k]);
  ocl_arg_value(&args, sizeof numels, numels);
  const double *s = f->s;
  if (f->kind == O_SGD) { /* lr, weight_decay, momentum, dampening */
    ocl_arg_acc(&args, dtype, s[2]);
    ocl_arg_acc(&args, dtype, s[0]);
    ocl_arg_acc(&args, dtype, s[1]);
    ocl_arg_acc(&args, dtype, s[3]);
    for (int k = 0; k < 3; k++) ocl_arg_value(&args, sizeof(cl_int), &f->flags[k]);
  } else { /* lr, beta1, beta2, weight_decay, eps */
    for (int k = 0; k < 5; k++) ocl_arg_acc(&args, dtype, s[k]);
    for (int k = 0; k < 2; k++) ocl_arg_value(&args, sizeof(cl_int), &f->flags[k]);
    cl_int decoupled = f->kind == O_ADAMW;
    ocl_arg_value(&args, sizeof decoupled, &decoupled);
  }
  ocl_arg_value(&args, sizeof chunk, &chunk);
  status = ocl_args_done(&args);
  if (status == TB_OK) {
    status = ocl_enqueue_grid(ctx, device, call, kernel, 2, global, NULL, call->kernel->name);
  }
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* _fused_sgd_ [self, grads, momentum_buffer_list, weight_decay, momentum, lr, dampening,
 * nesterov, maximize, is_first_step, grad_scale, found_inf];
 * _fused_adam_, _fused_adamw_ [self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
 * state_steps, lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf] */
static tb_status fused_step(tb_context ctx, const tb_kernel_call *call) {
  optim_kind kind = (optim_kind)(intptr_t)call->kernel->data;
  const tb_value *a = call->args;
  int32_t expected = kind == O_SGD ? 12 : 15;
  if (call->num_args < expected || a[0].kind != TB_VALUE_TENSOR_LIST) {
    return ocl_decline(call, "unexpected arguments");
  }
  if (a[expected - 2].kind != TB_VALUE_NONE || a[expected - 1].kind != TB_VALUE_NONE) {
    return ocl_decline(call, "grad_scale or found_inf");
  }
  double s[5] = {0};
  int flags[3] = {0};
  int first_scalar = kind == O_SGD ? 3 : 6, scalars = kind == O_SGD ? 4 : 5;
  for (int k = 0; k < scalars; k++) {
    if (!ocl_number(&a[first_scalar + k], &s[k], NULL))
      return ocl_decline(call, "unexpected arguments");
  }
  for (int k = 0; k < (kind == O_SGD ? 3 : 2); k++) {
    const tb_value *v = &a[first_scalar + scalars + k];
    if (v->kind != TB_VALUE_BOOL) return ocl_decline(call, "unexpected arguments");
    flags[k] = v->as.b;
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  /* Check every parameter's tensors before enqueueing anything. */
  int64_t count = a[0].as.tensors.count;
  if (count == 0) return TB_OK;
  bool amsgrad = kind != O_SGD && flags[0];
  bool momentum = kind == O_SGD && s[1] != 0;
  for (int64_t i = 0; i < count; i++) {
    const tb_tensor *p = a[0].as.tensors.items[i];
    int64_t n = 0;
    if (p == NULL || (p->dtype != TB_DTYPE_FLOAT32 && p->dtype != TB_DTYPE_FLOAT64) ||
        !ocl_dense(p, &n) || member(&a[1], i, p->dtype, n) == NULL) {
      return ocl_decline(call, "a parameter or gradient that is not dense float32/float64");
    }
    if (p->dtype != a[0].as.tensors.items[0]->dtype) { /* one kernel (T) per launch */
      return ocl_decline(call, "parameters of different dtypes");
    }
    if (p->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
      return ocl_decline(call, "float64 on a device without cl_khr_fp64");
    }
    if (kind == O_SGD && momentum && member(&a[2], i, p->dtype, n) == NULL) {
      return ocl_decline(call, "a momentum buffer that is not dense");
    }
    if (kind != O_SGD &&
        (member(&a[2], i, p->dtype, n) == NULL || member(&a[3], i, p->dtype, n) == NULL ||
         (amsgrad && member(&a[4], i, p->dtype, n) == NULL) ||
         member(&a[5], i, TB_DTYPE_FLOAT32, 1) == NULL)) {
      return ocl_decline(call, "optimizer state that is not dense, or a step that is not float32");
    }
  }
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, a[0].as.tensors.items[0]->dtype,
                      kind == O_SGD ? "tb_sgd" : "tb_adamw", &kernel);
  fused_args args = {kind, a, s, flags, momentum, amsgrad};
  /* Windows of up to WINDOW parameters, each ordered by size and launched in groups. */
  for (int64_t window = 0; window < count && status == TB_OK; window += WINDOW) {
    int64_t order[WINDOW], sizes[WINDOW];
    int64_t size = count - window < WINDOW ? count - window : WINDOW;
    for (int64_t i = 0; i < size; i++) {
      order[i] = i;
      ocl_dense(a[0].as.tensors.items[window + i], &sizes[i]);
    }
    sort_by_size(sizes, order, size);
    for (int64_t first = 0; first < size && status == TB_OK; first += GROUP) {
      int64_t members = size - first < GROUP ? size - first : GROUP;
      status = fused_group(ctx, device, call, kernel, &args, window, sizes, order + first, members);
    }
  }
  return status;
}

/* A number a random kernel takes between its counter and its generator state. */
typedef struct rng_param {
  size_t size;
  const void *value;
} rng_param;

/* Launches random kernel `name` of optim.cl over dense `self` (n elements), whose parameters
 * are (self, n, seed, offset, params..., state, captured), with `items` work-items.  In a
 * capture the kernel reads its key and base counter from the device memory
 * tb_rng_key::device_state names, when it runs (vendor.h); otherwise `state` is any place (the
 * kernel does not read it) and `captured` 0. */
static tb_status launch_random(tb_context ctx, const tb_kernel_call *call, const char *name,
                               const tb_tensor *self, int64_t n, const tb_rng_key *rng,
                               const rng_param *params, int count, int64_t items) {
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK || n == 0) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, self->dtype, name, &kernel);
  ocl_place place = {0};
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, self, "self", &place);
  cl_int captured = rng->device_state != NULL;
  ocl_place state = place;
  if (status == TB_OK && captured) {
    status = ocl_place_of(ctx, device, rng->device_state, 2 * sizeof(uint64_t),
                          "the generator state", &state);
  }
  if (status != TB_OK) return status;
  cl_long elements = n;
  cl_ulong seed = rng->seed, offset = rng->offset;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &place);
  ocl_arg_value(&args, sizeof elements, &elements);
  ocl_arg_value(&args, sizeof seed, &seed);
  ocl_arg_value(&args, sizeof offset, &offset);
  for (int i = 0; i < count; i++) ocl_arg_value(&args, params[i].size, params[i].value);
  ocl_arg_place(&args, &state);
  ocl_arg_value(&args, sizeof captured, &captured);
  status = ocl_args_done(&args);
  if (status == TB_OK) status = ocl_enqueue(ctx, device, call, kernel, items, call->kernel->name);
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* random_.from [self, from, to, generator]: integers in [from, to).  `to` None (the dtype's
 * range above `from`) and bool are declined (the CPU fallback). */
static tb_status random_from(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 4 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_INT ||
      a[3].kind != TB_VALUE_RNG) {
    return ocl_decline(call, "unexpected arguments");
  }
  if (a[2].kind != TB_VALUE_INT) return ocl_decline(call, "to=None");
  const tb_tensor *self = a[0].as.tensor;
  int64_t n = 0;
  if (self->dtype == TB_DTYPE_BOOL || ocl_type_name(self->dtype) == NULL || !ocl_dense(self, &n)) {
    return ocl_decline(call, "a bool tensor, or one that is not dense");
  }
  int64_t from = a[1].as.i, to = a[2].as.i;
  if (from >= to) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "random_.from: from %lld must be less than to %lld",
                    (long long)from, (long long)to);
  }
  cl_long low = from;
  cl_ulong range = (cl_ulong)to - (cl_ulong)from;
  const rng_param params[] = {{sizeof low, &low}, {sizeof range, &range}};
  return launch_random(ctx, call, "tb_random_from", self, n, &a[3].as.rng, params, 2, n);
}

/* uniform_ [self, from, to, generator] (kernel data 0), normal_ [self, mean, std, generator]
 * (data 1) and exponential_ [self, lambd, generator] (data 2) of a dense float32/float64 self;
 * the host checks (csrc/aten/HostChecks.h) have refused from > to, std < 0 and lambd <= 0. */
static tb_status real_random(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  cl_int kind = (cl_int)(intptr_t)call->kernel->data;
  int rng = kind == 2 ? 2 : 3; /* the generator's argument */
  if (call->num_args < rng + 1 || a[0].kind != TB_VALUE_TENSOR || a[rng].kind != TB_VALUE_RNG) {
    return ocl_decline(call, "unexpected arguments");
  }
  double first = 0, second = 0;
  if (!ocl_number(&a[1], &first, NULL) || (rng == 3 && !ocl_number(&a[2], &second, NULL))) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor;
  int64_t n = 0;
  if (!ocl_is_float(self->dtype) || !ocl_dense(self, &n)) {
    return ocl_decline(call, "a tensor that is not dense float32/float64");
  }
  cl_double wide[2] = {first, second};
  cl_float narrow[2] = {(cl_float)first, (cl_float)second};
  bool is_double = self->dtype == TB_DTYPE_FLOAT64;
  size_t size = is_double ? sizeof(cl_double) : sizeof(cl_float);
  const rng_param params[] = {{size, is_double ? (const void *)&wide[0] : &narrow[0]},
                              {size, is_double ? (const void *)&wide[1] : &narrow[1]},
                              {sizeof kind, &kind}};
  return launch_random(ctx, call, "tb_real_random", self, n, &a[rng].as.rng, params, 3, n);
}

/* bernoulli_.float [self, p, generator] */
static tb_status bernoulli(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 3 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_DOUBLE ||
      a[2].kind != TB_VALUE_RNG) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor;
  int64_t n = 0;
  if (ocl_type_name(self->dtype) == NULL || !ocl_dense(self, &n)) {
    return ocl_decline(call, "a tensor that is not dense");
  }
  double p = a[1].as.f;
  if (!(p >= 0 && p <= 1)) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "bernoulli_: p must be in [0, 1], got %g", p);
  }
  cl_float probability = (cl_float)p;
  const rng_param params[] = {{sizeof probability, &probability}};
  /* sixteen elements per work-item */
  return launch_random(ctx, call, "tb_bernoulli", self, n, &a[2].as.rng, params, 1, (n + 15) / 16);
}

/* The _foreach_ operators with a kernel (tb_foreach's op) and how many lists each takes:
 * [self, other, alpha], [self, scalar], [self, scalar], [self, tensors1, weight], [self,
 * tensor1, tensor2, value]. */
typedef enum foreach_op {
  F_ADD_LIST,
  F_ADD_SCALAR,
  F_MUL_SCALAR,
  F_LERP_SCALAR,
  F_ADDCMUL_SCALAR
} foreach_op;
static int foreach_lists(foreach_op op) {
  return op == F_ADDCMUL_SCALAR ? 3 : op == F_ADD_LIST || op == F_LERP_SCALAR ? 2 : 1;
}
/* One launch of tb_foreach over tensors order[k], k < members, of the call's lists (lists[0] is
 * self; an operator with fewer lists repeats it), sizes[i] the element count of tensor i. */
static tb_status foreach_group(tb_context ctx, int32_t device, const tb_kernel_call *call,
                               ocl_kernel *kernel, foreach_op op,
                               const tb_tensor *const *const lists[3], const int64_t *sizes,
                               const int64_t *order, int64_t members, double alpha) {
  static const char *const what[3] = {"self", "a tensor of the second list",
                                      "a tensor of the third list"};
  cl_long numels[GROUP] = {0};
  ocl_place places[3 * GROUP];
  if (sizes[order[0]] == 0) return TB_OK; /* the largest is empty: all are */
  tb_status status = TB_OK;
  for (int64_t k = 0; k < GROUP && status == TB_OK; k++) {
    numels[k] = k < members ? sizes[order[k]] : 0;
    for (int l = 0; l < 3 && status == TB_OK; l++) {
      if (numels[k] == 0) { /* an empty tensor or an unused slot: no work-item reads it */
        places[3 * k + l] = places[l];
      } else if (l > 0 && lists[l] == lists[0]) { /* an operand the operator does not take */
        places[3 * k + l] = places[3 * k];
      } else {
        status = ocl_tensor_place(ctx, device, lists[l][order[k]], what[l], &places[3 * k + l]);
      }
    }
  }
  if (status != TB_OK) return status;
  cl_long chunk = run_length(ctx, device);
  cl_int code = (cl_int)op;
  size_t global[2] = {(size_t)((numels[0] + chunk - 1) / chunk), (size_t)members};
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  for (int k = 0; k < 3 * GROUP; k++) ocl_arg_place(&args, &places[k]);
  ocl_arg_value(&args, sizeof numels, numels);
  ocl_arg_acc(&args, lists[0][order[0]]->dtype, alpha);
  ocl_arg_value(&args, sizeof code, &code);
  ocl_arg_value(&args, sizeof chunk, &chunk);
  status = ocl_args_done(&args);
  if (status == TB_OK) {
    status = ocl_enqueue_grid(ctx, device, call, kernel, 2, global, NULL, call->kernel->name);
  }
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* _foreach_add_.List, _foreach_add_.Scalar, _foreach_mul_.Scalar, _foreach_lerp_.Scalar,
 * _foreach_addcmul_.Scalar: the lists (foreach_lists(op) of them), then the scalar.  Dense
 * float32/float64 tensors of one dtype on the call's device, the tensors at one position of
 * equal size; any other call is declined, and the operator's wrapper runs ATen's per-tensor
 * path on the device (codegen/ops.yaml, declined:), which also raises ATen's errors for lists
 * of different lengths. */
static tb_status foreach_apply(tb_context ctx, const tb_kernel_call *call) {
  foreach_op op = (foreach_op)(intptr_t)call->kernel->data;
  const tb_value *a = call->args;
  int used = foreach_lists(op);
  double alpha = 0;
  if (call->num_args < used + 1 || !ocl_number(&a[used], &alpha, NULL)) {
    return ocl_decline(call, "unexpected arguments");
  }
  for (int l = 0; l < used; l++) {
    if (a[l].kind != TB_VALUE_TENSOR_LIST || a[l].as.tensors.count != a[0].as.tensors.count) {
      return ocl_decline(call, "lists of different lengths");
    }
  }
  int64_t count = a[0].as.tensors.count;
  if (count == 0) return ocl_decline(call, "an empty list");
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  const tb_tensor *const *lists[3];
  for (int l = 0; l < 3; l++) lists[l] = a[l < used ? l : 0].as.tensors.items;
  tb_dtype dtype = lists[0][0] != NULL ? lists[0][0]->dtype : TB_DTYPE_FLOAT32;
  for (int64_t i = 0; i < count; i++) {
    int64_t n = 0;
    bool fits = lists[0][i] != NULL && ocl_is_float(dtype) && ocl_dense(lists[0][i], &n);
    for (int l = 0; l < used && fits; l++) {
      fits = member(&a[l], i, dtype, n) != NULL && lists[l][i]->device == device;
    }
    if (!fits) {
      return ocl_decline(call,
                         "a tensor that is not dense float32/float64 of the list's dtype "
                         "on the call's device");
    }
  }
  if (dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, dtype, "tb_foreach", &kernel);
  /* Windows of up to WINDOW tensors, each ordered by size and launched in groups. */
  for (int64_t window = 0; window < count && status == TB_OK; window += WINDOW) {
    const tb_tensor *const *in[3] = {lists[0] + window, lists[1] + window, lists[2] + window};
    int64_t order[WINDOW], sizes[WINDOW];
    int64_t size = count - window < WINDOW ? count - window : WINDOW;
    for (int64_t i = 0; i < size; i++) {
      order[i] = i;
      ocl_dense(in[0][i], &sizes[i]);
    }
    sort_by_size(sizes, order, size);
    for (int64_t first = 0; first < size && status == TB_OK; first += GROUP) {
      int64_t members = size - first < GROUP ? size - first : GROUP;
      status =
          foreach_group(ctx, device, call, kernel, op, in, sizes, order + first, members, alpha);
    }
  }
  return status;
}

#define FLOATS (TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64))

static const tb_kernel k_sgd = {
    sizeof(tb_kernel),
    "_fused_sgd_",
    fused_step,
    FLOATS,
    0,
    "_fused_sgd_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] momentum_buffer_list, *, "
    "float weight_decay, float momentum, float lr, float dampening, bool nesterov, bool maximize, "
    "bool is_first_step, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()",
    (void *)(intptr_t)O_SGD};
static const tb_kernel k_adamw = {
    sizeof(tb_kernel),
    "_fused_adamw_",
    fused_step,
    FLOATS,
    0,
    "_fused_adamw_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, Tensor(d!)[] "
    "exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, float lr, float beta1, "
    "float beta2, float weight_decay, float eps, bool amsgrad, bool maximize, Tensor? "
    "grad_scale=None, Tensor? found_inf=None) -> ()",
    (void *)(intptr_t)O_ADAMW};
static const tb_kernel k_adam = {
    sizeof(tb_kernel),
    "_fused_adam_",
    fused_step,
    FLOATS,
    0,
    "_fused_adam_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, Tensor(d!)[] "
    "exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, float lr, float beta1, "
    "float beta2, float weight_decay, float eps, bool amsgrad, bool maximize, Tensor? "
    "grad_scale=None, Tensor? found_inf=None) -> ()",
    (void *)(intptr_t)O_ADAM};
static const tb_kernel k_bernoulli = {
    sizeof(tb_kernel),
    "bernoulli_.float",
    bernoulli,
    0,
    0,
    "bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)",
    NULL};

static const tb_kernel k_random_from = {
    sizeof(tb_kernel),
    "random_.from",
    random_from,
    0,
    0,
    "random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> "
    "Tensor(a!)",
    NULL};

static const tb_kernel k_uniform = {
    sizeof(tb_kernel),
    "uniform_",
    real_random,
    FLOATS,
    0,
    "uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? generator=None) -> "
    "Tensor(a!)",
    NULL};
static const tb_kernel k_normal = {
    sizeof(tb_kernel),
    "normal_",
    real_random,
    FLOATS,
    0,
    "normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? generator=None) -> "
    "Tensor(a!)",
    (void *)(intptr_t)1};
static const tb_kernel k_exponential = {
    sizeof(tb_kernel),
    "exponential_",
    real_random,
    FLOATS,
    0,
    "exponential_(Tensor(a!) self, float lambd=1., *, Generator? generator=None) -> Tensor(a!)",
    (void *)(intptr_t)2};

static const tb_kernel k_foreach_add_list = {
    sizeof(tb_kernel),
    "_foreach_add_.List",
    foreach_apply,
    FLOATS,
    0,
    "_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
    (void *)(intptr_t)F_ADD_LIST};
static const tb_kernel k_foreach_add_scalar = {
    sizeof(tb_kernel),
    "_foreach_add_.Scalar",
    foreach_apply,
    FLOATS,
    0,
    "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
    (void *)(intptr_t)F_ADD_SCALAR};
static const tb_kernel k_foreach_mul_scalar = {
    sizeof(tb_kernel),
    "_foreach_mul_.Scalar",
    foreach_apply,
    FLOATS,
    0,
    "_foreach_mul_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
    (void *)(intptr_t)F_MUL_SCALAR};

static const tb_kernel k_foreach_lerp_scalar = {
    sizeof(tb_kernel),
    "_foreach_lerp_.Scalar",
    foreach_apply,
    FLOATS,
    0,
    "_foreach_lerp_.Scalar(Tensor(a!)[] self, Tensor[] tensors1, Scalar weight) -> ()",
    (void *)(intptr_t)F_LERP_SCALAR};
static const tb_kernel k_foreach_addcmul_scalar = {
    sizeof(tb_kernel),
    "_foreach_addcmul_.Scalar",
    foreach_apply,
    FLOATS,
    0,
    "_foreach_addcmul_.Scalar(Tensor(a!)[] self, Tensor[] tensor1, Tensor[] tensor2, Scalar "
    "value=1) -> ()",
    (void *)(intptr_t)F_ADDCMUL_SCALAR};

const tb_kernel *const ocl_optim_kernels[] = {&k_sgd,
                                              &k_adam,
                                              &k_adamw,
                                              &k_bernoulli,
                                              &k_random_from,
                                              &k_uniform,
                                              &k_normal,
                                              &k_exponential,
                                              &k_foreach_add_list,
                                              &k_foreach_add_scalar,
                                              &k_foreach_mul_scalar,
                                              &k_foreach_lerp_scalar,
                                              &k_foreach_addcmul_scalar,
                                              NULL};
