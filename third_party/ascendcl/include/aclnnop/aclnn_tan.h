/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_tan.h, declared from the public documentation of
 * aclnnTan&aclnnInplaceTan (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_TAN_H_
#define TB_STANDIN_ACLNNOP_ACLNN_TAN_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = tan(self); integer and bool inputs compute in float. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnTanGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnTan(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);
/** selfRef = tan(selfRef). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceTanGetWorkspaceSize(aclTensor *selfRef,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceTan(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_TAN_H_ */
