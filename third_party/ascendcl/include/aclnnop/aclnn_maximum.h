/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_maximum.h, declared from the public documentation of
 * aclnnMaximum (ops-math math/maximum); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_MAXIMUM_H_
#define TB_STANDIN_ACLNNOP_ACLNN_MAXIMUM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = max(self, other), broadcast; NaN propagates. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnMaximumGetWorkspaceSize(const aclTensor *self,
                                                             const aclTensor *other, aclTensor *out,
                                                             uint64_t *workspaceSize,
                                                             aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnMaximum(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_MAXIMUM_H_ */
