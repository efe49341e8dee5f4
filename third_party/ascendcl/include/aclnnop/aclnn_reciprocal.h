/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_reciprocal.h, declared from the public documentation of
 * aclnnReciprocal&aclnnInplaceReciprocal (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_RECIPROCAL_H_
#define TB_STANDIN_ACLNNOP_ACLNN_RECIPROCAL_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = 1 / self; integer and bool inputs compute in float. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnReciprocalGetWorkspaceSize(const aclTensor *self,
                                                                aclTensor *out,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnReciprocal(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);
/** selfRef = 1 / self. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceReciprocalGetWorkspaceSize(aclTensor *selfRef,
                                                                       uint64_t *workspaceSize,
                                                                       aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceReciprocal(void *workspace, uint64_t workspaceSize,
                                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_RECIPROCAL_H_ */
