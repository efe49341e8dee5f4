/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_apply_adam_w_v2.h: declared from Huawei's public operator
 * documentation (hicann/ops-nn, aclnnApplyAdamWV2.md); text our own.  The two-phase calling
 * convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_APPLY_ADAM_W_V2_H_
#define TB_STANDIN_ACLNNOP_ACLNN_APPLY_ADAM_W_V2_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One AdamW step in place: mRef = beta1 mRef + (1 - beta1) g, vRef = beta2 vRef + (1 - beta2)
 *  g^2, varRef -= lr * weightDecay * varRef + lr * m^ / (sqrt(v^) + eps) with the bias
 *  corrections of step (a one-element INT64 or FLOAT32 tensor); g = -grad when maximize; with
 *  amsgrad maxGradNormOptionalRef keeps the running maximum of vRef and replaces it in v^. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnApplyAdamWV2GetWorkspaceSize(
    aclTensor *varRef, aclTensor *mRef, aclTensor *vRef, aclTensor *maxGradNormOptionalRef,
    const aclTensor *grad, const aclTensor *step, float lr, float beta1, float beta2,
    float weightDecay, float eps, bool amsgrad, bool maximize, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnApplyAdamWV2(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_APPLY_ADAM_W_V2_H_ */
