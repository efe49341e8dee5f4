/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_nll_loss_backward.h: declared from Huawei's public operator
 * documentation (hicann/ops-nn, loss/nll_loss_grad/docs/aclnnNLLLossBackward.md); text our own. The
 * two-phase calling convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_NLL_LOSS_BACKWARD_H_
#define TB_STANDIN_ACLNNOP_ACLNN_NLL_LOSS_BACKWARD_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out (self's shape) = the gradient of aclnnNLLLoss: -gradOutput * weight[target] at each
 *  target (divided by totalWeight for reduction 1), 0 elsewhere and for ignoreIndex. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target,
    const aclTensor *weight, int64_t reduction, int64_t ignoreIndex, const aclTensor *totalWeight,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnNLLLossBackward(void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_NLL_LOSS_BACKWARD_H_ */
