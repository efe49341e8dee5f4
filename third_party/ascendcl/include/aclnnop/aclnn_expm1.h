/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_expm1.h, declared from the public documentation of
 * aclnnExpm1&aclnnInplaceExpm1 (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_EXPM1_H_
#define TB_STANDIN_ACLNNOP_ACLNN_EXPM1_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = e ** self - 1; integer and bool inputs compute in float. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnExpm1GetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                           uint64_t *workspaceSize,
                                                           aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnExpm1(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);
/** selfRef = e ** selfRef - 1. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceExpm1GetWorkspaceSize(aclTensor *selfRef,
                                                                  uint64_t *workspaceSize,
                                                                  aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceExpm1(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_EXPM1_H_ */
