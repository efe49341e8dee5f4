/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_index.h: declared from Huawei's public operator documentation
 * (hicann/ops-nn, index/index/docs/aclnnIndex.md); text our own.  The two-phase calling convention
 * is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_INDEX_H_
#define TB_STANDIN_ACLNNOP_ACLNN_INDEX_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self[indices]: advanced indexing by a list of INT32/INT64 index tensors, one per
 *  leading dimension of self; a tensor with no elements leaves its dimension whole. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnIndexGetWorkspaceSize(const aclTensor *self,
                                                           const aclTensorList *indices,
                                                           aclTensor *out, uint64_t *workspaceSize,
                                                           aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnIndex(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_INDEX_H_ */
