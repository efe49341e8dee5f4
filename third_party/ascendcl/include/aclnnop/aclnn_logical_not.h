/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_logical_not.h, declared from the public documentation of
 * aclnnLogicalNot (ops-math math/logical_not); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_LOGICAL_NOT_H_
#define TB_STANDIN_ACLNNOP_ACLNN_LOGICAL_NOT_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = (self == 0), a bool stored into out's type. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnLogicalNotGetWorkspaceSize(const aclTensor *self,
                                                                aclTensor *out,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnLogicalNot(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_LOGICAL_NOT_H_ */
