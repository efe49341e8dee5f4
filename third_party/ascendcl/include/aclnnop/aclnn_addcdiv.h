/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_addcdiv.h, declared from the public documentation of
 * aclnnAddcdiv (ops-math math/addcdiv); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_ADDCDIV_H_
#define TB_STANDIN_ACLNNOP_ACLNN_ADDCDIV_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self + value * tensor1 / tensor2, broadcast (floating types). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnAddcdivGetWorkspaceSize(
    const aclTensor *self, const aclTensor *tensor1, const aclTensor *tensor2,
    const aclScalar *value, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnAddcdiv(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_ADDCDIV_H_ */
