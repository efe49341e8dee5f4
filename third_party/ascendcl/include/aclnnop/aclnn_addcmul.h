/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_addcmul.h, declared from the public documentation of
 * aclnnAddcmul (ops-math math/addcmul); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_ADDCMUL_H_
#define TB_STANDIN_ACLNNOP_ACLNN_ADDCMUL_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self + value * tensor1 * tensor2, broadcast. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnAddcmulGetWorkspaceSize(
    const aclTensor *self, const aclTensor *tensor1, const aclTensor *tensor2,
    const aclScalar *value, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnAddcmul(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_ADDCMUL_H_ */
