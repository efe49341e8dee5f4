/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_layer_norm_backward.h: declared from Huawei's public operator
 * documentation (hicann/ops-nn, norm/layer_norm_grad_v3/docs/aclnnLayerNormBackward.md); text our
 * own. The two-phase calling convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_LAYER_NORM_BACKWARD_H_
#define TB_STANDIN_ACLNNOP_ACLNN_LAYER_NORM_BACKWARD_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The gradients of aclnnLayerNorm given its saved mean and rstd ([A..., 1, ..., 1]):
 *  gradInputOut, gradWeightOut, gradBiasOut, each computed when its outputMask entry is true
 *  (the output may be NULL when it is false). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnLayerNormBackwardGetWorkspaceSize(
    const aclTensor *gradOut, const aclTensor *input, const aclIntArray *normalizedShape,
    const aclTensor *mean, const aclTensor *rstd, const aclTensor *weightOptional,
    const aclTensor *biasOptional, const aclBoolArray *outputMask, aclTensor *gradInputOut,
    aclTensor *gradWeightOut, aclTensor *gradBiasOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnLayerNormBackward(void *workspace, uint64_t workspaceSize,
                                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_LAYER_NORM_BACKWARD_H_ */
