/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_threshold_backward.h, declared from the public documentation of
 * aclnnThresholdBackward (ops-nn activation/threshold_grad); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_THRESHOLD_BACKWARD_H_
#define TB_STANDIN_ACLNNOP_ACLNN_THRESHOLD_BACKWARD_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self <= threshold ? 0 : gradOutput. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclScalar *threshold, aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnThresholdBackward(void *workspace, uint64_t workspaceSize,
                                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_THRESHOLD_BACKWARD_H_ */
