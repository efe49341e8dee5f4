/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_exp.h, declared from the public documentation of
 * aclnnExp&aclnnInplaceExp (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_EXP_H_
#define TB_STANDIN_ACLNNOP_ACLNN_EXP_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = e ** self; integer and bool inputs compute in float. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnExpGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnExp(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);
/** selfRef = e ** self. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceExpGetWorkspaceSize(aclTensor *selfRef,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceExp(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_EXP_H_ */
