/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_nll_loss.h: declared from Huawei's public operator
 * documentation (hicann/ops-nn, loss/nll_loss/docs/aclnnNLLLoss.md); text our own.  The two-phase
 * calling convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_NLL_LOSS_H_
#define TB_STANDIN_ACLNNOP_ACLNN_NLL_LOSS_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Negative log likelihood of self [N, C] (or [C]) at target [N] (or []), weighted by weight
 *  [C]; targets equal to ignoreIndex weigh 0.  reduction 0 none (out [N]), 1 mean (sum divided
 *  by the total weight), 2 sum; out and totalWeightOut are [1] when reduced. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnNLLLossGetWorkspaceSize(
    const aclTensor *self, const aclTensor *target, const aclTensor *weight, int64_t reduction,
    int64_t ignoreIndex, aclTensor *out, aclTensor *totalWeightOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnNLLLoss(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_NLL_LOSS_H_ */
