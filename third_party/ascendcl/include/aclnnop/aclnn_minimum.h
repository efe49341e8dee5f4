/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_minimum.h, declared from the public documentation of
 * aclnnMinimum (ops-math math/minimum); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_MINIMUM_H_
#define TB_STANDIN_ACLNNOP_ACLNN_MINIMUM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = min(self, other), broadcast; NaN propagates. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnMinimumGetWorkspaceSize(const aclTensor *self,
                                                             const aclTensor *other, aclTensor *out,
                                                             uint64_t *workspaceSize,
                                                             aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnMinimum(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_MINIMUM_H_ */
