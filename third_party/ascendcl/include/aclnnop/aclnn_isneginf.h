/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_isneginf.h, declared from the public documentation of
 * aclnnIsNegInf (ops-math math/is_neg_inf); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_ISNEGINF_H_
#define TB_STANDIN_ACLNNOP_ACLNN_ISNEGINF_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out (bool) = self == -inf (false for integers and bool). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnIsNegInfGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                              uint64_t *workspaceSize,
                                                              aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnIsNegInf(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_ISNEGINF_H_ */
