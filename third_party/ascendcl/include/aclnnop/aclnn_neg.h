/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_neg.h, declared from the public documentation of
 * aclnnNeg&aclnnInplaceNeg (ops-math math/neg); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_NEG_H_
#define TB_STANDIN_ACLNNOP_ACLNN_NEG_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = -self. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnNegGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                         uint64_t *workspaceSize,
                                                         aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnNeg(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);
/** selfRef = -selfRef. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceNegGetWorkspaceSize(aclTensor *selfRef,
                                                                uint64_t *workspaceSize,
                                                                aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceNeg(void *workspace, uint64_t workspaceSize,
                                                aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_NEG_H_ */
