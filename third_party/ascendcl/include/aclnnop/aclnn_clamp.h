/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_clamp.h, declared from the public documentation of
 * aclnnClamp, aclnnClampMin, aclnnClampMinTensor, aclnnClampMax, aclnnClampMaxTensor (ops-math
 * math/clamp); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_CLAMP_H_
#define TB_STANDIN_ACLNNOP_ACLNN_CLAMP_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = min(max(self, clipValueMin), clipValueMax); either bound may be NULL, not both; NaN
 * propagates. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnClampGetWorkspaceSize(const aclTensor *self,
                                                           const aclScalar *clipValueMin,
                                                           const aclScalar *clipValueMax,
                                                           aclTensor *out, uint64_t *workspaceSize,
                                                           aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnClamp(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);
/** out = max(self, clipValueMin); NaN propagates. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnClampMinGetWorkspaceSize(const aclTensor *self,
                                                              const aclScalar *clipValueMin,
                                                              aclTensor *out,
                                                              uint64_t *workspaceSize,
                                                              aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnClampMin(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, aclrtStream stream);
/** out = max(self, clipValueMin), broadcast; NaN propagates. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnClampMinTensorGetWorkspaceSize(const aclTensor *self,
                                                                    const aclTensor *clipValueMin,
                                                                    aclTensor *out,
                                                                    uint64_t *workspaceSize,
                                                                    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnClampMinTensor(void *workspace, uint64_t workspaceSize,
                                                    aclOpExecutor *executor, aclrtStream stream);
/** out = min(self, clipValueMax); NaN propagates. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnClampMaxGetWorkspaceSize(const aclTensor *self,
                                                              const aclScalar *clipValueMax,
                                                              aclTensor *out,
                                                              uint64_t *workspaceSize,
                                                              aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnClampMax(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, aclrtStream stream);
/** out = min(self, clipValueMax), broadcast; NaN propagates. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnClampMaxTensorGetWorkspaceSize(const aclTensor *self,
                                                                    const aclTensor *clipValueMax,
                                                                    aclTensor *out,
                                                                    uint64_t *workspaceSize,
                                                                    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnClampMaxTensor(void *workspace, uint64_t workspaceSize,
                                                    aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_CLAMP_H_ */
