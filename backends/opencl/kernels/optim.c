/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The fused optimizer steps (_fused_sgd_, _fused_adamw_: one launch per parameter; each
 * element's whole update in one work-item, or for AdamW on CPU devices a run of elements per
 * work-item) and bernoulli_ on the device's own Philox stream (vendor.h, "Random numbers":
 * element i uses the counter values from offset + 4 i).  Dense tensors only; grad_scale and
 * found_inf (AMP's scaler) are declined to the CPU fallback.
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

typedef enum optim_kind { O_SGD, O_ADAMW } optim_kind;

/* _fused_sgd_ [self, grads, momentum_buffer_list, weight_decay, momentum, lr, dampening,
 * nesterov, maximize, is_first_step, grad_scale, found_inf];
 * _fused_adamw_ [self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
 * beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf] */
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
  bool amsgrad = kind == O_ADAMW && flags[0];
  bool momentum = kind == O_SGD && s[1] != 0;
  for (int64_t i = 0; i < count; i++) {
    const tb_tensor *p = a[0].as.tensors.items[i];
    int64_t n = 0;
    if (p == NULL || (p->dtype != TB_DTYPE_FLOAT32 && p->dtype != TB_DTYPE_FLOAT64) ||
        !ocl_dense(p, &n) || member(&a[1], i, p->dtype, n) == NULL) {
      return ocl_decline(call, "a parameter or gradient that is not dense float32/float64");
    }
    if (p->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
      return ocl_decline(call, "float64 on a device without cl_khr_fp64");
    }
    if (kind == O_SGD && momentum && member(&a[2], i, p->dtype, n) == NULL) {
      return ocl_decline(call, "a momentum buffer that is not dense");
    }
    if (kind == O_ADAMW &&
        (member(&a[2], i, p->dtype, n) == NULL || member(&a[3], i, p->dtype, n) == NULL ||
         (amsgrad && member(&a[4], i, p->dtype, n) == NULL) ||
         member(&a[5], i, TB_DTYPE_FLOAT32, 1) == NULL)) {
      return ocl_decline(call, "optimizer state that is not dense, or a step that is not float32");
    }
  }
  /* Elements per work-item of tb_adamw (optim.cl): on CPU devices a run of them, which the
   * driver vectorizes, and the step's two pow() calls once per run; elsewhere 1, so that
   * neighbouring work-items touch neighbouring elements. */
  cl_long chunk = ctx->devices[device].type & CL_DEVICE_TYPE_CPU ? 256 : 1;
  for (int64_t i = 0; i < count && status == TB_OK; i++) {
    const tb_tensor *p = a[0].as.tensors.items[i];
    int64_t n = 0;
    ocl_dense(p, &n);
    if (n == 0) continue;
    ocl_kernel *kernel = NULL;
    status = kernel_for(ctx, device, p->dtype, kind == O_SGD ? "tb_sgd" : "tb_adamw", &kernel);
    if (status != TB_OK) break;
    ocl_place places[6];
    int tensors = kind == O_SGD ? 3 : 6;
    status = ocl_tensor_place(ctx, device, p, "self", &places[0]);
    for (int k = 1; k < tensors && status == TB_OK; k++) {
      bool used =
          !(kind == O_SGD && k == 2 && !momentum) && !(kind == O_ADAMW && k == 4 && !amsgrad);
      places[k] = places[0];
      if (used) {
        status =
            ocl_tensor_place(ctx, device, a[k].as.tensors.items[i], "optimizer state", &places[k]);
      }
    }
    if (status != TB_OK) break;
    cl_long elements = n;
    pthread_mutex_lock(&kernel->lock);
    ocl_args args = ocl_args_begin(ctx, device, kernel);
    for (int k = 0; k < tensors; k++) ocl_arg_place(&args, &places[k]);
    ocl_arg_value(&args, sizeof elements, &elements);
    if (kind == O_SGD) { /* lr, weight_decay, momentum, dampening */
      ocl_arg_acc(&args, p->dtype, s[2]);
      ocl_arg_acc(&args, p->dtype, s[0]);
      ocl_arg_acc(&args, p->dtype, s[1]);
      ocl_arg_acc(&args, p->dtype, s[3]);
      for (int k = 0; k < 3; k++) ocl_arg_value(&args, sizeof(cl_int), &flags[k]);
    } else { /* lr, beta1, beta2, weight_decay, eps */
      for (int k = 0; k < 5; k++) ocl_arg_acc(&args, p->dtype, s[k]);
      for (int k = 0; k < 2; k++) ocl_arg_value(&args, sizeof(cl_int), &flags[k]);
      ocl_arg_value(&args, sizeof chunk, &chunk);
    }
    status = ocl_args_done(&args);
    if (status == TB_OK && kind == O_ADAMW && chunk > 1) {
      size_t items = (size_t)((n + chunk - 1) / chunk), one = 1;
      status = ocl_enqueue_grid(ctx, device, call, kernel, 1, &items, &one, call->kernel->name);
    } else if (status == TB_OK) {
      status = ocl_enqueue(ctx, device, call, kernel, n, call->kernel->name);
    }
    pthread_mutex_unlock(&kernel->lock);
  }
  return status;
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
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK || n == 0) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, self->dtype, "tb_bernoulli", &kernel);
  ocl_place place;
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, self, "self", &place);
  if (status != TB_OK) return status;
  cl_long elements = n;
  cl_ulong seed = a[2].as.rng.seed, offset = a[2].as.rng.offset;
  cl_float probability = (cl_float)p;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &place);
  ocl_arg_value(&args, sizeof elements, &elements);
  ocl_arg_value(&args, sizeof seed, &seed);
  ocl_arg_value(&args, sizeof offset, &offset);
  ocl_arg_value(&args, sizeof probability, &probability);
  status = ocl_args_done(&args);
  if (status == TB_OK) { /* sixteen elements per work-item */
    status = ocl_enqueue(ctx, device, call, kernel, (n + 15) / 16, "bernoulli_.float");
  }
  pthread_mutex_unlock(&kernel->lock);
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
static const tb_kernel k_bernoulli = {
    sizeof(tb_kernel),
    "bernoulli_.float",
    bernoulli,
    0,
    0,
    "bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)",
    NULL};

const tb_kernel *const ocl_optim_kernels[] = {&k_sgd, &k_adamw, &k_bernoulli, NULL};
