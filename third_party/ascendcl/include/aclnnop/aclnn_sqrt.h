/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_sqrt.h, declared from the public documentation of
 * aclnnSqrt&aclnnInplaceSqrt (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_SQRT_H_
#define TB_STANDIN_ACLNNOP_ACLNN_SQRT_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = sqrt(self); integer and bool inputs compute in float. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnSqrtGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnSqrt(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);
/** selfRef = sqrt(selfRef). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceSqrtGetWorkspaceSize(aclTensor *selfRef,
                                                                 uint64_t *workspaceSize,
                                                                 aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceSqrt(void *workspace, uint64_t workspaceSize,
                                                 aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_SQRT_H_ */
