/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's losses: nll_loss_forward.output -> aclnnNLLLoss, nll_loss_backward.grad_input ->
 * aclnnNLLLossBackward, mse_loss.out -> aclnnMseLoss, mse_loss_backward.grad_input ->
 * aclnnMseLossBackward.  Translations for the NLL pair, whose aclnn conventions differ from
 * ATen's:
 * - aclnnNLLLoss requires a weight: ATen's None becomes a scratch tensor of ones
 *   (aclnnInplaceFillScalar on the same stream);
 * - aclnn documents one-element results as (1,) where ATen has 0-dim tensors (the reduced loss,
 *   total_weight, the reduced loss's gradient): the adapter passes (1,) views of them;
 * - aclnnNLLLoss leaves totalWeightOut undefined without a reduction, where ATen sets it to 0:
 *   the adapter clears it (aclrtMemsetAsync).
 */
#include <aclnnop/aclnn_fill_scalar.h>
#include <aclnnop/aclnn_mse_loss.h>
#include <aclnnop/aclnn_mse_loss_backward.h>
#include <aclnnop/aclnn_nll_loss.h>
#include <aclnnop/aclnn_nll_loss_backward.h>

#include "structured.h"

#define LOSS_TYPES \
  (NPU_BIT(TB_DTYPE_FLOAT32) | NPU_BIT(TB_DTYPE_FLOAT16) | NPU_BIT(TB_DTYPE_BFLOAT16))
#define TARGET_TYPES (NPU_BIT(TB_DTYPE_INT64) | NPU_BIT(TB_DTYPE_INT32) | NPU_BIT(TB_DTYPE_UINT8))
enum { REDUCTION_NONE = 0 };

/* Argument `k` as aclnn takes it: a 0-dim tensor as a (1,) view, others as they are. */
static aclTensor *one_element(npu_call *c, int32_t k) {
  const tb_tensor *t = npu_tensor_arg(c, k);
  if (t != NULL && t->ndim == 0) return npu_tensor_reshaped(c, t, 1, (const int64_t[]){1});
  return npu_tensor(c, k);
}

/* The weight argument `k` of an NLL loss over `self`: the tensor, or for None a scratch tensor
 * of ones (C elements of self's dtype) filled on the call's stream. */
static aclTensor *nll_weight(npu_call *c, int32_t k, const tb_tensor *self, tb_status *status) {
  if (npu_tensor_arg(c, k) != NULL) return npu_tensor(c, k);
  const int64_t classes = self->sizes[self->ndim - 1];
  aclTensor *ones = npu_scratch_tensor(c, self->dtype, 1, &classes);
  *status = NPU_ACLNN(c, InplaceFillScalar, ones, npu_scalar_f(c, 1.0, ACL_FLOAT));
  return ones;
}

/* The dtype checks of both NLL kernels: self (`x`) and the present weight floating and alike,
 * target integer, and self of 1 or 2 dimensions. */
static tb_status nll_check(npu_call *c, int32_t x, int32_t target, int32_t weight) {
  const tb_tensor *self = npu_tensor_arg(c, x), *w = npu_tensor_arg(c, weight);
  tb_status status = npu_require_dtype(c, self, LOSS_TYPES, "self");
  if (status == TB_OK)
    status = npu_require_dtype(c, npu_tensor_arg(c, target), TARGET_TYPES, "target");
  if (status != TB_OK) return status;
  if (w != NULL && w->dtype != self->dtype) return npu_decline(c, "a weight of another dtype");
  if (self->ndim < 1 || self->ndim > 2)
    return npu_decline(c, "self of %d dimensions", (int)self->ndim);
  return TB_OK;
}

/* nll_loss_forward.output: [self, target, weight?, reduction, ignore_index, output,
 * total_weight] */
static tb_status nll_forward(npu_call *c) {
  tb_status status = nll_check(c, 0, 1, 2);
  if (status != TB_OK) return status;
  const tb_tensor *self = npu_tensor_arg(c, 0), *total = npu_tensor_arg(c, 6);
  const int64_t reduction = npu_arg_int(c, 3);
  aclTensor *weight = nll_weight(c, 2, self, &status);
  if (status != TB_OK) return status;
  if (reduction == REDUCTION_NONE && npu_numel(total) > 0) {
    static const size_t item[TB_DTYPE_COUNT] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
    const size_t bytes = (size_t)npu_numel(total) * item[total->dtype];
    aclError err = aclrtMemsetAsync(total->data, bytes, 0, bytes, npu_acl_stream(c->call->stream));
    if (err != ACL_SUCCESS) return npu_check(c->ctx, c->device, err, "aclrtMemsetAsync");
  }
  return NPU_ACLNN(c, NLLLoss, npu_tensor(c, 0), npu_tensor(c, 1), weight, reduction,
                   npu_arg_int(c, 4), one_element(c, 5), one_element(c, 6));
}

/* nll_loss_backward.grad_input: [grad_output, self, target, weight?, reduction, ignore_index,
 * total_weight, grad_input] */
static tb_status nll_backward(npu_call *c) {
  tb_status status = nll_check(c, 1, 2, 3);
  if (status != TB_OK) return status;
  const tb_tensor *self = npu_tensor_arg(c, 1);
  if (npu_tensor_arg(c, 0)->dtype != self->dtype || npu_tensor_arg(c, 7)->dtype != self->dtype) {
    return npu_decline(c, "gradients of another dtype than self");
  }
  aclTensor *weight = nll_weight(c, 3, self, &status);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, NLLLossBackward, one_element(c, 0), npu_tensor(c, 1), npu_tensor(c, 2),
                   weight, npu_arg_int(c, 4), npu_arg_int(c, 5), one_element(c, 6),
                   npu_tensor(c, 7));
}

/* Every listed tensor argument of one floating dtype. */
static tb_status same_floats(npu_call *c, const int32_t *tensors, int count) {
  const tb_tensor *first = npu_tensor_arg(c, tensors[0]);
  for (int k = 0; k < count; k++) {
    const tb_tensor *t = npu_tensor_arg(c, tensors[k]);
    tb_status status = npu_require_dtype(c, t, LOSS_TYPES, "an operand");
    if (status != TB_OK) return status;
    if (t->dtype != first->dtype) return npu_decline(c, "operands of mixed dtypes");
  }
  return TB_OK;
}

/* mse_loss.out: [self, target, reduction, out] */
static tb_status mse_forward(npu_call *c) {
  tb_status status = same_floats(c, (const int32_t[]){0, 1, 3}, 3);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, MseLoss, npu_tensor(c, 0), npu_tensor(c, 1), npu_arg_int(c, 2),
                   npu_tensor(c, 3));
}

/* mse_loss_backward.grad_input: [grad_output, self, target, reduction, grad_input] */
static tb_status mse_backward(npu_call *c) {
  tb_status status = same_floats(c, (const int32_t[]){0, 1, 2, 4}, 4);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, MseLossBackward, npu_tensor(c, 0), npu_tensor(c, 1), npu_tensor(c, 2),
                   npu_arg_int(c, 3), npu_tensor(c, 4));
}

NPU_KERNEL(
    k_nll_forward, "nll_loss_forward.output", nll_forward, LOSS_TYPES,
    "nll_loss_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt "
    "ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))");
NPU_KERNEL(k_nll_backward, "nll_loss_backward.grad_input", nll_backward, LOSS_TYPES,
           "nll_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Tensor? "
           "weight, int reduction, SymInt ignore_index, Tensor total_weight, *, Tensor(a!) "
           "grad_input) -> Tensor(a!)");
NPU_KERNEL(
    k_mse, "mse_loss.out", mse_forward, LOSS_TYPES,
    "mse_loss.out(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)");
NPU_KERNEL(k_mse_backward, "mse_loss_backward.grad_input", mse_backward, LOSS_TYPES,
           "mse_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, int "
           "reduction, *, Tensor(a!) grad_input) -> Tensor(a!)");

const tb_kernel *const npu_loss_kernels[] = {&k_nll_forward, &k_nll_backward, &k_mse,
                                             &k_mse_backward, NULL};
