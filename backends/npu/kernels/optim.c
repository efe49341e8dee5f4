/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's fused optimizer steps (torch.optim's fused=True):
 * - _fused_adamw_ -> aclnnApplyAdamWV2 once per parameter (the documented AdamW step: bias
 *   corrections from the step tensor, decoupled weight decay, amsgrad, maximize);
 * - _fused_sgd_ -> no aclnn operator is SGD with momentum, so the step is composed, as
 *   torch_npu composes it, of documented pointwise operators on the call's stream: aclnnMuls
 *   (maximize), aclnnAdd / aclnnInplaceAdd (weight decay, momentum, the update), aclnnInplaceMuls
 *   and aclnnInplaceCopy (the momentum buffer), with one scratch tensor in the call's workspace.
 * Both follow ATen's CPU kernels step for step.  Gradient scaling (grad_scale, found_inf) runs
 * on the CPU fallback.
 */
#include <aclnnop/aclnn_add.h>
#include <aclnnop/aclnn_apply_adam_w_v2.h>
#include <aclnnop/aclnn_copy.h>
#include <aclnnop/aclnn_mul.h>

#include "structured.h"

#define OPTIM_TYPES \
  (NPU_BIT(TB_DTYPE_FLOAT32) | NPU_BIT(TB_DTYPE_FLOAT16) | NPU_BIT(TB_DTYPE_BFLOAT16))

static const tb_tensor *item(const npu_call *c, int32_t list, int64_t i) {
  return c->args[list].as.tensors.items[i];
}
static int64_t length(const npu_call *c, int32_t list) { return c->args[list].as.tensors.count; }

/* The lists `lists[0..count)` (those in `optional` may be empty) of equal length, with tensors
 * of the first one's shape and dtype, a dtype in `dtypes`; no gradient scaling. */
static tb_status check_lists(npu_call *c, const int32_t *lists, int count, uint64_t optional,
                             uint64_t dtypes, int32_t grad_scale) {
  if (npu_tensor_arg(c, grad_scale) != NULL || npu_tensor_arg(c, grad_scale + 1) != NULL) {
    return npu_decline(c, "gradient scaling (grad_scale, found_inf)");
  }
  const int64_t n = length(c, lists[0]);
  for (int k = 0; k < count; k++) {
    const int64_t len = length(c, lists[k]);
    if (len == 0 && (optional >> k) & 1) continue;
    if (len != n) return npu_decline(c, "tensor lists of different lengths");
    for (int64_t i = 0; i < n; i++) {
      const tb_tensor *t = item(c, lists[k], i), *p = item(c, lists[0], i);
      if (t == NULL) return npu_decline(c, "an absent tensor in a list");
      if (!(dtypes & NPU_BIT(t->dtype)) || t->dtype != p->dtype) {
        return npu_decline(c, "tensors of another dtype than their parameter's");
      }
      bool same = t->ndim == p->ndim;
      for (int32_t d = 0; same && d < t->ndim; d++) same = t->sizes[d] == p->sizes[d];
      if (!same) return npu_decline(c, "tensors of another shape than their parameter's");
    }
  }
  return TB_OK;
}

/* _fused_adamw_: [params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr,
 * beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale?, found_inf?] */
static tb_status fused_adamw(npu_call *c) {
  const bool amsgrad = npu_arg_int(c, 11) != 0, maximize = npu_arg_int(c, 12) != 0;
  tb_status status =
      check_lists(c, (const int32_t[]){0, 1, 2, 3, 4}, 5, amsgrad ? 0 : 1u << 4, OPTIM_TYPES, 13);
  if (status != TB_OK) return status;
  const int64_t n = length(c, 0);
  if (length(c, 5) != n) return npu_decline(c, "a state_steps list of another length");
  for (int64_t i = 0; i < n; i++) {
    const tb_tensor *step = item(c, 5, i);
    if (step == NULL || npu_numel(step) != 1 ||
        !(NPU_BIT(step->dtype) & (NPU_BIT(TB_DTYPE_FLOAT32) | NPU_BIT(TB_DTYPE_INT64)))) {
      return npu_decline(c, "a step that is not one FLOAT32 or INT64 element");
    }
  }
  const float lr = (float)npu_arg_double(c, 6), beta1 = (float)npu_arg_double(c, 7);
  const float beta2 = (float)npu_arg_double(c, 8), weight_decay = (float)npu_arg_double(c, 9);
  const float eps = (float)npu_arg_double(c, 10);
  for (int64_t i = 0; i < n && status == TB_OK; i++) {
    const int32_t mark = c->num_objects;
    status =
        NPU_ACLNN(c, ApplyAdamWV2, npu_tensor_of(c, item(c, 0, i)), npu_tensor_of(c, item(c, 2, i)),
                  npu_tensor_of(c, item(c, 3, i)), amsgrad ? npu_tensor_of(c, item(c, 4, i)) : NULL,
                  npu_tensor_of(c, item(c, 1, i)), npu_tensor_of(c, item(c, 5, i)), lr, beta1,
                  beta2, weight_decay, eps, amsgrad, maximize);
    npu_release_objects(c, mark);
  }
  return status;
}

/* One parameter's SGD step (ATen's order): g = -g (maximize); g += weight_decay * p;
 * buf = g (first step) or momentum * buf + (1 - dampening) * g; g = g + momentum * buf
 * (nesterov) or buf; p -= lr * g.  `scratch` holds the modified gradient (the gradient itself
 * is not written). */
typedef struct sgd_options {
  double weight_decay, momentum, lr, dampening;
  bool nesterov, maximize, first;
  aclDataType scalar_type; /* the parameters' compute type, as ATen's opmath */
} sgd_options;

static tb_status sgd_step(npu_call *c, aclTensor *p, aclTensor *g, aclTensor *buf,
                          aclTensor *scratch, const sgd_options *o) {
  tb_status status = TB_OK;
  aclTensor *grad = g; /* the current gradient: g, or scratch once modified */
  const aclDataType st = o->scalar_type;
  if (o->maximize) {
    status = NPU_ACLNN(c, Muls, g, npu_scalar_f(c, -1.0, st), scratch);
    grad = scratch;
  }
  if (status == TB_OK && o->weight_decay != 0) {
    aclScalar *wd = npu_scalar_f(c, o->weight_decay, st);
    status = grad == scratch ? NPU_ACLNN(c, InplaceAdd, scratch, p, wd)
                             : NPU_ACLNN(c, Add, g, p, wd, scratch);
    grad = scratch;
  }
  if (status == TB_OK && o->momentum != 0) {
    if (o->first) {
      status = NPU_ACLNN(c, InplaceCopy, buf, grad);
    } else {
      status = NPU_ACLNN(c, InplaceMuls, buf, npu_scalar_f(c, o->momentum, st));
      if (status == TB_OK) {
        status = NPU_ACLNN(c, InplaceAdd, buf, grad, npu_scalar_f(c, 1 - o->dampening, st));
      }
    }
    if (status == TB_OK && o->nesterov) {
      aclScalar *m = npu_scalar_f(c, o->momentum, st);
      status = grad == scratch ? NPU_ACLNN(c, InplaceAdd, scratch, buf, m)
                               : NPU_ACLNN(c, Add, g, buf, m, scratch);
      grad = scratch;
    } else {
      grad = buf;
    }
  }
  if (status == TB_OK) status = NPU_ACLNN(c, InplaceAdd, p, grad, npu_scalar_f(c, -o->lr, st));
  return status;
}

/* _fused_sgd_: [params, grads, momentum_buffer_list, weight_decay, momentum, lr, dampening,
 * nesterov, maximize, is_first_step, grad_scale?, found_inf?] */
static tb_status fused_sgd(npu_call *c) {
  sgd_options o = {
      npu_arg_double(c, 3),   npu_arg_double(c, 4),   npu_arg_double(c, 5),   npu_arg_double(c, 6),
      npu_arg_int(c, 7) != 0, npu_arg_int(c, 8) != 0, npu_arg_int(c, 9) != 0, ACL_FLOAT};
  tb_status status = check_lists(c, (const int32_t[]){0, 1, 2}, 3, o.momentum != 0 ? 0 : 1u << 2,
                                 OPTIM_TYPES | NPU_BIT(TB_DTYPE_FLOAT64), 10);
  if (status != TB_OK) return status;
  const int64_t n = length(c, 0);
  if (n == 0) return TB_OK;
  const tb_dtype dtype = item(c, 0, 0)->dtype;
  if (dtype == TB_DTYPE_FLOAT64) o.scalar_type = ACL_DOUBLE;
  /* one scratch tensor, as large as the largest parameter, reused by every step (the steps are
   * ordered on the stream) */
  int64_t largest = 0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t numel = npu_numel(item(c, 0, i));
    if (numel > largest) largest = numel;
  }
  static const size_t item_size[TB_DTYPE_COUNT] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  void *scratch = NULL;
  const bool needs_scratch = o.maximize || o.weight_decay != 0 || (o.momentum != 0 && o.nesterov);
  if (needs_scratch && largest > 0) {
    status = c->call->workspace(c->call, (size_t)largest * item_size[dtype], &scratch);
    if (status != TB_OK) {
      return npu_fail(c->ctx, status, "npu: _fused_sgd_: no scratch memory of %lld bytes on npu:%d",
                      (long long)largest * (long long)item_size[dtype], (int)c->device);
    }
  }
  for (int64_t i = 0; i < n && status == TB_OK; i++) {
    const int32_t mark = c->num_objects;
    const tb_tensor *p = item(c, 0, i);
    if (npu_numel(p) == 0) continue;
    int64_t strides[NPU_MAX_DIMS], s = 1;
    for (int32_t d = p->ndim - 1; d >= 0 && d < NPU_MAX_DIMS; d--) {
      strides[d] = s;
      s *= p->sizes[d];
    }
    tb_tensor view = {sizeof(tb_tensor), scratch, dtype, p->device, p->ndim, p->sizes, strides};
    status = sgd_step(c, npu_tensor_of(c, p), npu_tensor_of(c, item(c, 1, i)),
                      o.momentum != 0 ? npu_tensor_of(c, item(c, 2, i)) : NULL,
                      needs_scratch ? npu_tensor_of(c, &view) : NULL, &o);
    npu_release_objects(c, mark);
  }
  return status;
}

NPU_KERNEL(k_adamw, "_fused_adamw_", fused_adamw, OPTIM_TYPES,
           "_fused_adamw_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, "
           "Tensor(d!)[] exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, float "
           "lr, float beta1, float beta2, float weight_decay, float eps, bool amsgrad, bool "
           "maximize, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()");
NPU_KERNEL(k_sgd, "_fused_sgd_", fused_sgd, OPTIM_TYPES | NPU_BIT(TB_DTYPE_FLOAT64),
           "_fused_sgd_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] momentum_buffer_list, "
           "*, float weight_decay, float momentum, float lr, float dampening, bool nesterov, bool "
           "maximize, bool is_first_step, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()");

const tb_kernel *const npu_optim_kernels[] = {&k_adamw, &k_sgd, NULL};
