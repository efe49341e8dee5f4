/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The structured kernels' shared translations (structured.h).
 */
#include "structured.h"

#include <stdlib.h>

int64_t npu_numel(const tb_tensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++) n *= t->sizes[d];
  return n;
}

tb_status npu_require_dtype(npu_call *c, const tb_tensor *t, uint64_t dtypes, const char *what) {
  if (t == NULL) return npu_decline(c, "%s is absent", what);
  if (!(dtypes & NPU_BIT(t->dtype))) {
    return npu_decline(c, "%s has a dtype (%d) the aclnn operator does not take", what,
                       (int)t->dtype);
  }
  return TB_OK;
}

aclIntArray *npu_dims_or_all(npu_call *c, int32_t k, int32_t ndim) {
  const tb_value *v = &c->args[k];
  if (v->kind == TB_VALUE_INT_LIST && v->as.ints.count > 0) return npu_int_array(c, k);
  int64_t all[NPU_MAX_DIMS];
  for (int32_t d = 0; d < ndim && d < NPU_MAX_DIMS; d++) all[d] = d;
  return npu_int_array_of(c, all, ndim < NPU_MAX_DIMS ? ndim : NPU_MAX_DIMS);
}

/* Contiguous strides of `sizes`. */
static void contiguous(int32_t ndim, const int64_t *sizes, int64_t *strides) {
  int64_t s = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    s *= sizes[d] > 1 ? sizes[d] : 1;
  }
}

aclTensor *npu_tensor_reshaped(npu_call *c, const tb_tensor *t, int32_t ndim,
                               const int64_t *sizes) {
  int64_t strides[NPU_MAX_DIMS];
  contiguous(ndim, sizes, strides);
  tb_tensor view = {sizeof(tb_tensor), t->data, t->dtype, t->device, ndim, sizes, strides};
  return npu_tensor_of(c, &view);
}

aclTensor *npu_scratch_tensor(npu_call *c, tb_dtype dtype, int32_t ndim, const int64_t *sizes) {
  static const size_t item[TB_DTYPE_COUNT] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  int64_t strides[NPU_MAX_DIMS], numel = 1;
  contiguous(ndim, sizes, strides);
  for (int32_t d = 0; d < ndim; d++) numel *= sizes[d];
  void *data = NULL;
  tb_status status = c->call->workspace(c->call, (size_t)numel * item[dtype], &data);
  if (status != TB_OK) {
    if (c->failed == TB_OK) {
      c->failed = npu_fail(c->ctx, status, "npu: %s: no scratch memory of %lld bytes on npu:%d",
                           c->call->kernel->name, (long long)numel * (long long)item[dtype],
                           (int)c->device);
    }
    return NULL;
  }
  tb_tensor scratch = {sizeof(tb_tensor), data, dtype, c->device, ndim, sizes, strides};
  return npu_tensor_of(c, &scratch);
}

aclTensor *npu_list_item(const tb_tensor *t) {
  int64_t extent = npu_numel(t) > 0 ? 1 : 0;
  for (int32_t d = 0; extent > 0 && d < t->ndim; d++) extent += (t->sizes[d] - 1) * t->strides[d];
  return aclCreateTensor(t->sizes, (uint64_t)t->ndim, npu_acl_dtype(t->dtype), t->strides, 0,
                         ACL_FORMAT_ND, &extent, 1, t->data);
}

aclTensorList *npu_list_of(npu_call *c, const tb_tensor *const *items, int64_t n,
                           tb_status *status) {
  static const int64_t empty[1] = {0};
  aclTensor **tensors = calloc((size_t)(n > 0 ? n : 1), sizeof *tensors);
  bool ok = tensors != NULL;
  for (int64_t i = 0; ok && i < n; i++) {
    tensors[i] = items[i] != NULL
                     ? npu_list_item(items[i])
                     : aclCreateTensor(empty, 1, ACL_INT64, NULL, 0, ACL_FORMAT_ND, empty, 1, NULL);
    ok = tensors[i] != NULL;
  }
  aclTensorList *list =
      ok ? aclCreateTensorList((const aclTensor *const *)tensors, (uint64_t)n) : NULL;
  if (list == NULL) {
    for (int64_t i = 0; tensors != NULL && i < n; i++) {
      if (tensors[i] != NULL) aclDestroyTensor(tensors[i]);
    }
    *status = npu_fail(c->ctx, tensors == NULL ? TB_ERROR_OUT_OF_MEMORY : TB_ERROR_INTERNAL,
                       "npu: %s: building a tensor list: %s", c->call->kernel->name,
                       tensors == NULL ? "out of host memory" : aclGetRecentErrMsg());
  }
  free(tensors);
  return list;
}
