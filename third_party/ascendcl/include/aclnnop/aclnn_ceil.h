/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_ceil.h, declared from the public documentation of
 * aclnnCeil&aclnnInplaceCeil (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_CEIL_H_
#define TB_STANDIN_ACLNNOP_ACLNN_CEIL_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = ceil(self) (floating types). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnCeilGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnCeil(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);
/** selfRef = ceil(selfRef) (floating types). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceCeilGetWorkspaceSize(aclTensor *selfRef,
                                                                 uint64_t *workspaceSize,
                                                                 aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceCeil(void *workspace, uint64_t workspaceSize,
                                                 aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_CEIL_H_ */
