/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_log.h, declared from the public documentation of
 * aclnnLog&aclnnInplaceLog (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_LOG_H_
#define TB_STANDIN_ACLNNOP_ACLNN_LOG_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = ln(self); integer and bool inputs compute in float. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnLogGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnLog(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);
/** selfRef = ln(selfRef). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceLogGetWorkspaceSize(aclTensor *selfRef,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceLog(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_LOG_H_ */
