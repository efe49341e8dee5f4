/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_mse_loss_backward.h: declared from Huawei's public operator
 * documentation (hicann/ops-nn, loss/mse_loss_grad_v2/docs/aclnnMseLossBackward.md); text our own.
 * The two-phase calling convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_MSE_LOSS_BACKWARD_H_
#define TB_STANDIN_ACLNNOP_ACLNN_MSE_LOSS_BACKWARD_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = 2 * gradOutput * (self - target), divided by self's element count for reduction 1
 *  (mean); all three broadcast to out's shape. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnMseLossBackwardGetWorkspaceSize(
    const aclTensor *gradOutput, const aclTensor *self, const aclTensor *target, int64_t reduction,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnMseLossBackward(void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_MSE_LOSS_BACKWARD_H_ */
