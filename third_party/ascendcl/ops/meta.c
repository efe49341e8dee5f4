/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The aclnn argument objects (aclnn/acl_meta.h), written from the public documentation of
 * aclCreateTensor, aclCreateScalar, aclCreateIntArray, aclCreateFloatArray, aclCreateBoolArray,
 * aclCreateTensorList and their destroy functions.  Invalid arguments give NULL (create) or
 * ACLNN_ERR_PARAM_NULLPTR (destroy of NULL), with the reason in aclGetRecentErrMsg.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void *fail_null(const char *call, const char *what) {
  standin_set_error("%s: %s", call, what);
  return NULL;
}

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData) {
  static const char call[] = "aclCreateTensor";
  if (viewDimsNum > SOP_TENSOR_MAX_DIMS || storageDimsNum > SOP_TENSOR_MAX_DIMS) {
    standin_set_error("%s: %llu view / %llu storage dimensions; at most %d are supported", call,
                      (unsigned long long)viewDimsNum, (unsigned long long)storageDimsNum,
                      SOP_TENSOR_MAX_DIMS);
    return NULL;
  }
  if ((viewDimsNum > 0 && viewDims == NULL) || (storageDimsNum > 0 && storageDims == NULL)) {
    return fail_null(call, "viewDims or storageDims is a null pointer with a non-zero count");
  }
  if (sop_size(dataType) == 0) {
    standin_set_error("%s: dataType %d is not a tensor element type", call, (int)dataType);
    return NULL;
  }
  if (format < ACL_FORMAT_NCHW ||
      (format > ACL_FORMAT_FRACTAL_Z && format != ACL_FORMAT_FRACTAL_NZ)) {
    standin_set_error("%s: format %d is not an aclFormat", call, (int)format);
    return NULL;
  }
  if (offset < 0) {
    standin_set_error("%s: offset %lld is negative", call, (long long)offset);
    return NULL;
  }
  aclTensor *t = calloc(1, sizeof *t);
  if (t == NULL) return fail_null(call, "out of host memory");
  t->dtype = dataType;
  t->format = format;
  t->ndim = (int32_t)viewDimsNum;
  t->storage_ndim = (int32_t)storageDimsNum;
  t->offset = offset;
  t->data = tensorData;
  int64_t contiguous = 1;
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    int64_t s = stride != NULL ? stride[d] : contiguous;
    if (viewDims[d] < 0 || s < 0) {
      free(t);
      standin_set_error("%s: dimension %d has size %lld and stride %lld; both must be >= 0", call,
                        (int)d, (long long)viewDims[d], (long long)s);
      return NULL;
    }
    t->dims[d] = viewDims[d];
    t->strides[d] = s;
    contiguous *= viewDims[d] > 0 ? viewDims[d] : 1;
  }
  int64_t storage = 1;
  for (int32_t d = 0; d < t->storage_ndim; d++) {
    if (storageDims[d] < 0) {
      free(t);
      standin_set_error("%s: storage dimension %d is negative", call, (int)d);
      return NULL;
    }
    t->storage_dims[d] = storageDims[d];
    storage *= storageDims[d];
  }
  /* The view must lie inside the storage (for ND-like formats, whose storage is plain). */
  int64_t extent = sop_extent(t);
  if (format <= ACL_FORMAT_ND && extent > 0 && offset + extent > storage) {
    free(t);
    standin_set_error("%s: the view reaches element %lld of a storage of %lld elements", call,
                      (long long)(offset + extent - 1), (long long)storage);
    return NULL;
  }
  return t;
}

aclScalar *aclCreateScalar(void *value, aclDataType dataType) {
  if (value == NULL) return fail_null("aclCreateScalar", "value is a null pointer");
  size_t size = sop_size(dataType);
  if (size == 0 || size > sizeof(((aclScalar *)0)->value)) {
    standin_set_error("aclCreateScalar: dataType %d is not a supported scalar type", (int)dataType);
    return NULL;
  }
  aclScalar *s = calloc(1, sizeof *s);
  if (s == NULL) return fail_null("aclCreateScalar", "out of host memory");
  s->dtype = dataType;
  memcpy(s->value, value, size);
  return s;
}

/* The arrays: a header and a copy of the values; size 0 gives an empty array. */
#define ARRAY_CREATE(Type, Elem, call)                                        \
  Type *p = calloc(1, sizeof *p);                                             \
  if (p == NULL) return fail_null(call, "out of host memory");                \
  if (size > 0) {                                                             \
    if (value == NULL) {                                                      \
      free(p);                                                                \
      return fail_null(call, "value is a null pointer with a non-zero size"); \
    }                                                                         \
    p->values = malloc(size * sizeof(Elem));                                  \
    if (p->values == NULL) {                                                  \
      free(p);                                                                \
      return fail_null(call, "out of host memory");                           \
    }                                                                         \
    memcpy(p->values, value, size * sizeof(Elem));                            \
  }                                                                           \
  p->size = size;                                                             \
  return p;

aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size){
    ARRAY_CREATE(aclIntArray, int64_t,
                 "aclCreateIntArray")} aclFloatArray *aclCreateFloatArray(const float *value,
                                                                          uint64_t size){
    ARRAY_CREATE(aclFloatArray, float,
                 "aclCreateFloatArray")} aclBoolArray *aclCreateBoolArray(const bool *value,
                                                                          uint64_t size){
    ARRAY_CREATE(aclBoolArray, bool, "aclCreateBoolArray")}

aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size) {
  static const char call[] = "aclCreateTensorList";
  if (size > 0 && value == NULL) return fail_null(call, "value is a null pointer");
  aclTensorList *l = calloc(1, sizeof *l);
  if (l == NULL) return fail_null(call, "out of host memory");
  if (size > 0) {
    l->items = malloc(size * sizeof *l->items);
    if (l->items == NULL) {
      free(l);
      return fail_null(call, "out of host memory");
    }
    for (uint64_t k = 0; k < size; k++) l->items[k] = (aclTensor *)value[k];
  }
  l->size = size;
  return l;
}

static aclnnStatus destroy_null(const char *call) {
  standin_set_error("%s: the object is a null pointer", call);
  return ACLNN_ERR_PARAM_NULLPTR;
}

aclnnStatus aclDestroyTensor(const aclTensor *tensor) {
  if (tensor == NULL) return destroy_null("aclDestroyTensor");
  free((void *)tensor);
  return ACLNN_SUCCESS;
}
aclnnStatus aclDestroyScalar(const aclScalar *scalar) {
  if (scalar == NULL) return destroy_null("aclDestroyScalar");
  free((void *)scalar);
  return ACLNN_SUCCESS;
}
#define ARRAY_DESTROY(array, call)              \
  if (array == NULL) return destroy_null(call); \
  free((void *)array->values);                  \
  free((void *)array);                          \
  return ACLNN_SUCCESS;
aclnnStatus aclDestroyIntArray(const aclIntArray *array){
    ARRAY_DESTROY(array, "aclDestroyIntArray")} aclnnStatus
    aclDestroyFloatArray(const aclFloatArray *array){
        ARRAY_DESTROY(array, "aclDestroyFloatArray")} aclnnStatus
    aclDestroyBoolArray(const aclBoolArray *array){
        ARRAY_DESTROY(array, "aclDestroyBoolArray")} aclnnStatus
    aclDestroyTensorList(const aclTensorList *array) {
  if (array == NULL) return destroy_null("aclDestroyTensorList");
  for (uint64_t k = 0; k < array->size; k++) free(array->items[k]);
  free(array->items);
  free((void *)array);
  return ACLNN_SUCCESS;
}

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor) {
  if (executor == NULL) {
    standin_set_error("aclSetAclOpExecutorRepeatable: executor is a null pointer");
    return SOP_ERR_INNER_NULLPTR;
  }
  executor->repeatable = true;
  return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor) {
  if (executor == NULL) {
    standin_set_error("aclDestroyAclOpExecutor: executor is a null pointer");
    return SOP_ERR_INNER_NULLPTR;
  }
  if (!executor->repeatable) {
    standin_set_error(
        "aclDestroyAclOpExecutor: the executor of %s is not repeatable "
        "(aclSetAclOpExecutorRepeatable): its aclnn call releases it",
        executor->name);
    return ACLNN_ERR_PARAM_INVALID;
  }
  sop_executor_release(executor);
  return ACLNN_SUCCESS;
}
