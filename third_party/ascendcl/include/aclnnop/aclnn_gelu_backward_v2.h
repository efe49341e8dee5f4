/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_gelu_backward_v2.h, declared from the public documentation of
 * aclnnGeluBackwardV2 (ops-nn activation/gelu_grad_v2); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_GELU_BACKWARD_V2_H_
#define TB_STANDIN_ACLNNOP_ACLNN_GELU_BACKWARD_V2_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** gradInput = gradOutput * gelu'(self); approximate "none" (erf) or "tanh". */
ACL_FUNC_VISIBILITY aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, char *approximate, aclTensor *gradInput,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnGeluBackwardV2(void *workspace, uint64_t workspaceSize,
                                                    aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_GELU_BACKWARD_V2_H_ */
