/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_flash_attention_score_grad.h: declared from Huawei's
 * public operator documentation (ops-transformer, attention/flash_attention_score_grad/docs/
 * aclnnFlashAttentionScoreGrad.md); text our own.  The two-phase calling convention is
 * described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_FLASH_ATTENTION_SCORE_GRAD_H_
#define TB_STANDIN_ACLNNOP_ACLNN_FLASH_ATTENTION_SCORE_GRAD_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The backward of aclnnFlashAttentionScore: dqOut, dkOut, dvOut (query's, keyIn's and value's
 * shapes and dtype) from dy (the forward output's gradient), the forward's inputs and
 * arguments, and its softmaxMaxOptional / softmaxSumOptional ([B, N, Sq, 8] FLOAT), from which
 * the probabilities are recomputed: P = exp(score - max) / sum.  dropMaskOptional must be the
 * forward's mask.  CANN documents dpseOut as not used yet: it is not written.
 * softmaxInOptional is reserved; attentionInOptional, the forward's output, may be NULL.
 */
ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionScoreGradGetWorkspaceSize(
    const aclTensor *query, const aclTensor *keyIn, const aclTensor *value, const aclTensor *dy,
    const aclTensor *pseShiftOptional, const aclTensor *dropMaskOptional,
    const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclTensor *softmaxMaxOptional, const aclTensor *softmaxSumOptional,
    const aclTensor *softmaxInOptional, const aclTensor *attentionInOptional,
    const aclIntArray *prefixOptional, double scaleValue, double keepProb, int64_t preTokens,
    int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise,
    int64_t sparseMode, const aclTensor *dqOut, const aclTensor *dkOut, const aclTensor *dvOut,
    const aclTensor *dpseOut, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionScoreGrad(void *workspace,
                                                             uint64_t workspaceSize,
                                                             aclOpExecutor *executor,
                                                             aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_FLASH_ATTENTION_SCORE_GRAD_H_ */
