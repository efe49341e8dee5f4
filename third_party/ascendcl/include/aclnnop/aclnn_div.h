/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_div.h, declared from the public documentation of
 * aclnnDiv&aclnnInplaceDiv, aclnnDivs&aclnnInplaceDivs (ops-math math/div); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_DIV_H_
#define TB_STANDIN_ACLNNOP_ACLNN_DIV_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self / other (true division: integer inputs compute in float). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnDivGetWorkspaceSize(const aclTensor *self,
                                                         const aclTensor *other, aclTensor *out,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnDiv(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);
/** out = self / other, other a scalar. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnDivsGetWorkspaceSize(const aclTensor *self,
                                                          const aclScalar *other, aclTensor *out,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnDivs(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);
/** selfRef /= other. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceDivGetWorkspaceSize(const aclTensor *selfRef,
                                                                const aclTensor *other,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceDiv(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);
/** selfRef /= other, other a scalar. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceDivsGetWorkspaceSize(const aclTensor *selfRef,
                                                                 const aclScalar *other,
                                                                 uint64_t *workspaceSize,
                                                                 aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceDivs(void *workspace, uint64_t workspaceSize,
                                                 aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_DIV_H_ */
