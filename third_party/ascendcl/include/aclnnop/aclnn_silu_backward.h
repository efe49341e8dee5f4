/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_silu_backward.h, declared from the public documentation of
 * aclnnSiluBackward (ops-nn activation/silu_grad); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_SILU_BACKWARD_H_
#define TB_STANDIN_ACLNNOP_ACLNN_SILU_BACKWARD_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** gradInput = gradOutput * s * (1 + self * (1 - s)), s = sigmoid(self). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnSiluBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                  const aclTensor *self,
                                                                  aclTensor *gradInput,
                                                                  uint64_t *workspaceSize,
                                                                  aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnSiluBackward(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_SILU_BACKWARD_H_ */
