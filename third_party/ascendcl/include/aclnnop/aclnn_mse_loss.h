/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_mse_loss.h: declared from Huawei's public operator
 * documentation (hicann/ops-nn, loss/mse_loss/docs/aclnnMseLoss.md); text our own.  The two-phase
 * calling convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_MSE_LOSS_H_
#define TB_STANDIN_ACLNNOP_ACLNN_MSE_LOSS_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = (self - target)^2 (broadcast), reduced by reduction 0 none, 1 mean, 2 sum (then out
 *  is 0-d). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnMseLossGetWorkspaceSize(const aclTensor *self,
                                                             const aclTensor *target,
                                                             int64_t reduction, aclTensor *out,
                                                             uint64_t *workspaceSize,
                                                             aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnMseLoss(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_MSE_LOSS_H_ */
