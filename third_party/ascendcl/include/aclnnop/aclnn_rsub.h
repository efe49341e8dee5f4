/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_rsub.h, declared from the public documentation of
 * aclnnRsubs (ops-math math/rsub); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_RSUB_H_
#define TB_STANDIN_ACLNNOP_ACLNN_RSUB_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = other - alpha * self, other a scalar. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnRsubsGetWorkspaceSize(const aclTensor *self,
                                                           const aclScalar *other,
                                                           const aclScalar *alpha, aclTensor *out,
                                                           uint64_t *workspaceSize,
                                                           aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnRsubs(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_RSUB_H_ */
