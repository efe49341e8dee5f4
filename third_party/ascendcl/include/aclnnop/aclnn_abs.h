/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_abs.h, declared from the public documentation of
 * aclnnAbs&aclnnInplaceAbs (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_ABS_H_
#define TB_STANDIN_ACLNNOP_ACLNN_ABS_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = |self| (integers wrap at their minimum). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnAbsGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnAbs(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);
/** selfRef = |selfRef| (integers wrap at their minimum). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceAbsGetWorkspaceSize(aclTensor *selfRef,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceAbs(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_ABS_H_ */
