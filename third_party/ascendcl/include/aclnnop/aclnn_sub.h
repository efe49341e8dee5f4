/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_sub.h, declared from the public documentation of
 * aclnnSub&aclnnInplaceSub, aclnnSubs&aclnnInplaceSubs (ops-math math/sub); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_SUB_H_
#define TB_STANDIN_ACLNNOP_ACLNN_SUB_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self - alpha * other, broadcast, in the promoted type. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnSubGetWorkspaceSize(const aclTensor *self,
                                                         const aclTensor *other,
                                                         const aclScalar *alpha, aclTensor *out,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnSub(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);
/** out = self - alpha * other, other a scalar. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnSubsGetWorkspaceSize(const aclTensor *self,
                                                          const aclScalar *other,
                                                          const aclScalar *alpha, aclTensor *out,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnSubs(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);
/** selfRef -= alpha * other. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceSubGetWorkspaceSize(const aclTensor *selfRef,
                                                                const aclTensor *other,
                                                                const aclScalar *alpha,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceSub(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);
/** selfRef -= alpha * other, other a scalar. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceSubsGetWorkspaceSize(const aclTensor *selfRef,
                                                                 const aclScalar *other,
                                                                 const aclScalar *alpha,
                                                                 uint64_t *workspaceSize,
                                                                 aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceSubs(void *workspace, uint64_t workspaceSize,
                                                 aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_SUB_H_ */
