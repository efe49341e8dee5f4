/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_sigmoid_backward.h, declared from the public documentation of
 * aclnnSigmoidBackward (ops-nn activation/sigmoid_grad); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_SIGMOID_BACKWARD_H_
#define TB_STANDIN_ACLNNOP_ACLNN_SIGMOID_BACKWARD_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** gradInput = gradOutput * (1 - output) * output. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnSigmoidBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                     const aclTensor *output,
                                                                     aclTensor *gradInput,
                                                                     uint64_t *workspaceSize,
                                                                     aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnSigmoidBackward(void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_SIGMOID_BACKWARD_H_ */
