/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_gelu_backward.h, declared from the public documentation of
 * aclnnGeluBackward (ops-nn activation/gelu_grad); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_GELU_BACKWARD_H_
#define TB_STANDIN_ACLNNOP_ACLNN_GELU_BACKWARD_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** gradInput = gradOutput * gelu'(self) (the erf form). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnGeluBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                  const aclTensor *self,
                                                                  aclTensor *gradInput,
                                                                  uint64_t *workspaceSize,
                                                                  aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnGeluBackward(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_GELU_BACKWARD_H_ */
