/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_erf.h, declared from the public documentation of
 * aclnnErf&aclnnInplaceErf (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_ERF_H_
#define TB_STANDIN_ACLNNOP_ACLNN_ERF_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = erf(self); integer and bool inputs compute in float. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnErfGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnErf(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);
/** selfRef = erf(selfRef). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceErfGetWorkspaceSize(aclTensor *selfRef,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceErf(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_ERF_H_ */
