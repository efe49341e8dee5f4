/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_log1p.h, declared from the public documentation of
 * aclnnLog1p&aclnnInplaceLog1p (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_LOG1P_H_
#define TB_STANDIN_ACLNNOP_ACLNN_LOG1P_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = ln(1 + self); integer and bool inputs compute in float. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnLog1pGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                           uint64_t *workspaceSize,
                                                           aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnLog1p(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);
/** selfRef = ln(1 + selfRef). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceLog1pGetWorkspaceSize(aclTensor *selfRef,
                                                                  uint64_t *workspaceSize,
                                                                  aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceLog1p(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_LOG1P_H_ */
