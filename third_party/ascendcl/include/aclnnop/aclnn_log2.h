/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_log2.h, declared from the public documentation of
 * aclnnLog2&aclnnInplaceLog2 (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_LOG2_H_
#define TB_STANDIN_ACLNNOP_ACLNN_LOG2_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = log2(self); integer and bool inputs compute in float. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnLog2GetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnLog2(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);
/** selfRef = log2(selfRef). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceLog2GetWorkspaceSize(aclTensor *selfRef,
                                                                 uint64_t *workspaceSize,
                                                                 aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceLog2(void *workspace, uint64_t workspaceSize,
                                                 aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_LOG2_H_ */
