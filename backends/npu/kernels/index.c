/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's indexing kernels: index_select.out -> aclnnIndexSelect, gather.out -> aclnnGather,
 * cat.out -> aclnnCat, index.Tensor_out -> aclnnIndex, embedding_dense_backward ->
 * aclnnEmbeddingDenseBackward.  Indices out of range are found by the operators while they run
 * and fault the device (vendor.h, "Device faults"), as ATen's device kernels do.
 * Translations: a None of index's Tensor?[] becomes an empty tensor (how aclnnIndex marks a
 * dimension taken whole), cat's legacy-skipped 1-d empty tensors are left out, and embedding's
 * padding_idx -1 ("none") becomes a negative paddingIdx.
 */
#include <aclnnop/aclnn_cat.h>
#include <aclnnop/aclnn_embedding_dense_backward.h>
#include <aclnnop/aclnn_gather.h>
#include <aclnnop/aclnn_index.h>
#include <aclnnop/aclnn_index_select.h>
#include <stdlib.h>

#include "structured.h"

#define INDEX_TYPES (NPU_BIT(TB_DTYPE_INT32) | NPU_BIT(TB_DTYPE_INT64))

/* index_select.out: [self, dim, index, out] */
static tb_status index_select_out(npu_call *c) {
  const tb_tensor *self = npu_tensor_arg(c, 0);
  tb_status status = npu_require_dtype(c, npu_tensor_arg(c, 2), INDEX_TYPES, "index");
  if (status != TB_OK) return status;
  if (self->ndim == 0) return npu_decline(c, "a 0-dim self");
  return NPU_ACLNN(c, IndexSelect, npu_tensor(c, 0), npu_arg_int(c, 1), npu_tensor(c, 2),
                   npu_tensor(c, 3));
}

/* gather.out: [self, dim, index, sparse_grad, out] */
static tb_status gather_out(npu_call *c) {
  const tb_tensor *self = npu_tensor_arg(c, 0), *index = npu_tensor_arg(c, 2);
  tb_status status = npu_require_dtype(c, index, INDEX_TYPES, "index");
  if (status != TB_OK) return status;
  if (self->ndim == 0 || index->ndim != self->ndim) {
    return npu_decline(c, "self and index of %d and %d dimensions", (int)self->ndim,
                       (int)index->ndim);
  }
  return NPU_ACLNN(c, Gather, npu_tensor(c, 0), npu_arg_int(c, 1), npu_tensor(c, 2),
                   npu_tensor(c, 4));
}

/* cat.out: [tensors, dim, out].  ATen skips 1-d empty tensors (a legacy rule) whatever the
 * other tensors' shapes; aclnnCat's tensors agree in shape: the adapter leaves them out. */
static tb_status cat_out(npu_call *c) {
  const tb_value *list = &c->args[0];
  const tb_tensor *out = npu_tensor_arg(c, 2);
  const int64_t n = list->as.tensors.count;
  const tb_tensor **taking = calloc((size_t)(n > 0 ? n : 1), sizeof *taking);
  if (taking == NULL) {
    return npu_fail(c->ctx, TB_ERROR_OUT_OF_MEMORY, "npu: cat.out: out of host memory");
  }
  int64_t count = 0;
  tb_status status = TB_OK;
  for (int64_t i = 0; i < n && status == TB_OK; i++) {
    const tb_tensor *t = list->as.tensors.items[i];
    if (t == NULL) {
      status = npu_decline(c, "an absent tensor in the list");
    } else if (t->dtype != out->dtype) {
      status = npu_decline(c, "tensors of another dtype than out");
    } else if (!(t->ndim == 1 && t->sizes[0] == 0 && out->ndim != 1)) {
      taking[count++] = t;
    }
  }
  if (status == TB_OK && count > 0 && npu_numel(out) > 0) {
    aclTensorList *tensors = npu_list_of(c, taking, count, &status);
    if (tensors != NULL) {
      status = NPU_ACLNN(c, Cat, tensors, npu_arg_int(c, 1), npu_tensor(c, 2));
      aclDestroyTensorList(tensors);
    }
  }
  free((void *)taking);
  return status;
}

/* index.Tensor_out: [self, indices (Tensor?[]), out] */
static tb_status index_out(npu_call *c) {
  const tb_value *list = &c->args[1];
  const int64_t n = list->as.tensors.count;
  for (int64_t i = 0; i < n; i++) {
    const tb_tensor *t = list->as.tensors.items[i];
    if (t != NULL && !(INDEX_TYPES & NPU_BIT(t->dtype))) {
      return npu_decline(c, "boolean or byte masks (aclnnIndex takes their positions)");
    }
  }
  /* An empty result (an empty index, a mask with nothing set) has nothing to gather, and
   * aclnnIndex refuses empty index tensors. */
  if (npu_numel(c->args[2].as.tensor) == 0) return TB_OK;
  tb_status status = TB_OK;
  aclTensorList *indices = npu_list_of(c, list->as.tensors.items, n, &status);
  if (indices == NULL) return status;
  status = NPU_ACLNN(c, Index, npu_tensor(c, 0), indices, npu_tensor(c, 2));
  aclDestroyTensorList(indices);
  return status;
}

/* embedding_dense_backward: [grad_output, indices, num_weights, padding_idx,
 * scale_grad_by_freq, out] */
static tb_status embedding_backward(npu_call *c) {
  tb_status status = npu_require_dtype(c, npu_tensor_arg(c, 1), INDEX_TYPES, "indices");
  if (status != TB_OK) return status;
  const int64_t num_weights = npu_arg_int(c, 2), padding = npu_arg_int(c, 3);
  return NPU_ACLNN(c, EmbeddingDenseBackward, npu_tensor(c, 0), npu_tensor(c, 1),
                   (uint64_t)num_weights, (uint64_t)padding, npu_arg_int(c, 4) != 0,
                   npu_tensor(c, 5));
}

NPU_KERNEL(k_index_select, "index_select.out", index_select_out, NPU_ALL,
           "index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out) -> Tensor(a!)");
NPU_KERNEL(k_gather, "gather.out", gather_out, NPU_ALL,
           "gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) "
           "out) -> Tensor(a!)");
NPU_KERNEL(k_cat, "cat.out", cat_out, NPU_ALL,
           "cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)");
NPU_KERNEL(k_index, "index.Tensor_out", index_out, NPU_ALL,
           "index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)");
NPU_KERNEL(k_embedding_backward, "embedding_dense_backward", embedding_backward,
           NPU_BIT(TB_DTYPE_FLOAT32) | NPU_BIT(TB_DTYPE_FLOAT16) | NPU_BIT(TB_DTYPE_BFLOAT16),
           "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
           "SymInt padding_idx, bool scale_grad_by_freq) -> Tensor");

const tb_kernel *const npu_index_kernels[] = {&k_index_select,       &k_gather, &k_cat, &k_index,
                                              &k_embedding_backward, NULL};
