/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * What npu's structured kernels (blas.c, softmax.c, reduce.c, index.c, norm.c, loss.c,
 * optim.c) share beyond common.h: the translations between ATen's conventions and aclnn's
 * (explicit dimension lists where ATen means "every dimension", one-element views where aclnn
 * documents (1,) and ATen gives a 0-dim tensor, scratch tensors in the call's workspace).
 */
#ifndef TB_NPU_KERNELS_STRUCTURED_H_
#define TB_NPU_KERNELS_STRUCTURED_H_

#include "common.h"

/** The tensor of argument @p k, or NULL when it is None or not a tensor. */
static inline const tb_tensor *npu_tensor_arg(const npu_call *c, int32_t k) {
  return k < c->count && npu_is_tensor(&c->args[k]) ? c->args[k].as.tensor : NULL;
}

/** Number of elements of @p t. */
int64_t npu_numel(const tb_tensor *t);

/** Declines unless @p t is present and of a dtype in @p dtypes (@p what names it). */
tb_status npu_require_dtype(npu_call *c, const tb_tensor *t, uint64_t dtypes, const char *what);

/** The dimension list of argument @p k (an int list, or None): the list as given, or, for None
 *  and for an empty list, every dimension of a tensor of @p ndim dimensions (ATen's "all";
 *  aclnn operators take explicit lists). */
aclIntArray *npu_dims_or_all(npu_call *c, int32_t k, int32_t ndim);

/** An aclTensor over @p t's memory with another shape: @p ndim sizes, contiguous strides (the
 *  translation of a 0-dim ATen tensor into aclnn's documented (1,)). */
aclTensor *npu_tensor_reshaped(npu_call *c, const tb_tensor *t, int32_t ndim, const int64_t *sizes);

/** An aclTensor over @p t (its sizes and strides, storage covering the view) that the call does
 *  not own: for an aclTensorList, which takes its tensors (aclCreateTensorList); NULL with
 *  AscendCL's message when aclCreateTensor fails. */
aclTensor *npu_list_item(const tb_tensor *t);

/** An aclTensorList of @p n tensors made by npu_list_item, or (NULL items) empty INT64 tensors;
 *  NULL, with the failure returned in @p status, when one cannot be made.  The caller destroys
 *  it (aclDestroyTensorList destroys its tensors). */
aclTensorList *npu_list_of(npu_call *c, const tb_tensor *const *items, int64_t n,
                           tb_status *status);

/** A contiguous scratch tensor of @p ndim @p sizes and @p dtype in the call's workspace
 *  (torch_backend's caching allocator, ordered on the call's stream); NULL with the failure
 *  recorded (NPU_ACLNN then reports it) when no memory is left. */
aclTensor *npu_scratch_tensor(npu_call *c, tb_dtype dtype, int32_t ndim, const int64_t *sizes);

#endif /* TB_NPU_KERNELS_STRUCTURED_H_ */
