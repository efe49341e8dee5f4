/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnn/acl_meta.h: the argument objects of the aclnn operator API
 * (tensors, scalars, arrays, tensor lists), declared from Huawei's public documentation
 * ("aclCreateTensor", "aclCreateScalar", "aclCreateIntArray", ...); text our own.
 *
 * The objects live on the host and describe their arguments by value: aclCreateScalar copies
 * the value, aclCreateIntArray/aclCreateFloatArray/aclCreateBoolArray copy the array,
 * aclCreateTensor copies the shapes and strides and keeps the device address.
 * aclCreateTensorList takes the tensors it is given: aclDestroyTensorList destroys them with the
 * list ("aclDestroyTensorList": the tensors of a list need not be destroyed again), so a tensor
 * belongs to at most one list and is not destroyed on its own once listed.
 */
#ifndef TB_STANDIN_ACLNN_ACL_META_H_
#define TB_STANDIN_ACLNN_ACL_META_H_

#include <stdbool.h>
#include <stdint.h>

#include "acl/acl_base.h"
#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclFloatArray aclFloatArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclTensorList aclTensorList;

/**
 * A strided view of device memory.  Element (i0, ..., in-1) of the view lives at element
 * `offset + sum(ik * stride[k])` of the storage that starts at @p tensorData (offset and
 * strides in elements, all non-negative; @p stride NULL: the contiguous strides of
 * @p viewDims).  @p storageDims describes the whole storage (for ACL_FORMAT_ND: one dimension
 * holding its element count is enough).  @p tensorData may be NULL (a descriptor whose address
 * is set later, or an empty tensor).  Returns NULL on invalid arguments.
 */
ACL_FUNC_VISIBILITY aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum,
                                               aclDataType dataType, const int64_t *stride,
                                               int64_t offset, aclFormat format,
                                               const int64_t *storageDims, uint64_t storageDimsNum,
                                               void *tensorData);
/** A scalar of type @p dataType read from @p value (copied). */
ACL_FUNC_VISIBILITY aclScalar *aclCreateScalar(void *value, aclDataType dataType);
ACL_FUNC_VISIBILITY aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size);
ACL_FUNC_VISIBILITY aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size);
ACL_FUNC_VISIBILITY aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size);
ACL_FUNC_VISIBILITY aclTensorList *aclCreateTensorList(const aclTensor *const *value,
                                                       uint64_t size);

ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensor(const aclTensor *tensor);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyScalar(const aclScalar *scalar);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyIntArray(const aclIntArray *array);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyFloatArray(const aclFloatArray *array);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyBoolArray(const aclBoolArray *array);
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensorList(const aclTensorList *array);

/**
 * Makes @p executor repeatable (call it right after the phase one that created it): its
 * aclnnXxx calls then run it without releasing it, any number of times, and the caller releases
 * it with aclDestroyAclOpExecutor.  A caller that cannot run an executor it obtained (its
 * workspace could not be allocated) releases it this way too.
 */
ACL_FUNC_VISIBILITY aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);
/** Releases a repeatable executor (work already enqueued with it still runs). */
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNN_ACL_META_H_ */
