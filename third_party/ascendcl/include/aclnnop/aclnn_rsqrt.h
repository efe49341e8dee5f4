/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_rsqrt.h, declared from the public documentation of
 * aclnnRsqrt&aclnnInplaceRsqrt (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_RSQRT_H_
#define TB_STANDIN_ACLNNOP_ACLNN_RSQRT_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = 1 / sqrt(self); integer and bool inputs compute in float. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnRsqrtGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                           uint64_t *workspaceSize,
                                                           aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnRsqrt(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);
/** selfRef = 1 / sqrt(selfRef). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceRsqrtGetWorkspaceSize(aclTensor *selfRef,
                                                                  uint64_t *workspaceSize,
                                                                  aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceRsqrt(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_RSQRT_H_ */
