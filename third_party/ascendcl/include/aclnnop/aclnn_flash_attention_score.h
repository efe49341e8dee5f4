/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_flash_attention_score.h: declared from Huawei's public
 * operator documentation (ops-transformer, attention/flash_attention_score/docs/
 * aclnnFlashAttentionScore.md); text our own.  The two-phase calling convention is described in
 * aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_FLASH_ATTENTION_SCORE_H_
#define TB_STANDIN_ACLNNOP_ACLNN_FLASH_ATTENTION_SCORE_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * attentionOutOut = Dropout(Softmax(Mask(scaleValue * (realShiftOptional + query key^T),
 * attenMaskOptional)), keepProb) value, the training forward of FlashAttention.
 *
 * - query [B, N, Sq, D], key [B, Nkv, Skv, D], value [B, Nkv, Skv, Dv] for inputLayout "BNSD"
 *   (CANN also documents "BSH", "SBH" and "BSND"), one dtype (FLOAT16, BFLOAT16, FLOAT); Dv <= D;
 *   N a multiple of Nkv (grouped-query attention); headNum is N.
 * - realShiftOptional (pse): query's dtype, [B, N, Sq, Skv], [1, N, Sq, Skv] or [B, N, 1, Skv];
 *   added to the product *before* the scale.
 * - dropMaskOptional: UINT8, one bit per element of the [B, N, Sq, Skv] scores in row-major
 *   order (bit e is bit e % 8 of byte e / 8; 1 keeps), as aclnnDropoutGenMask makes it; kept
 *   probabilities are divided by keepProb, in (0, 1].
 * - attenMaskOptional: BOOL or UINT8, 1 hides a key from a query; [Sq, Skv], [1, 1, Sq, Skv],
 *   [B, 1, Sq, Skv] or [B, N, Sq, Skv] with sparseMode 0 (the band preTokens / nextTokens
 *   around the diagonal is kept too) and 1, the compressed [2048, 2048] upper triangle with
 *   sparseMode 2 (leftUpCausal: key j hidden from query i when j > i) and 3 (rightDownCausal:
 *   when j > i + Skv - Sq).
 * - softmaxMaxOut, softmaxSumOut: FLOAT [B, N, Sq, 8], each row's maximum scaled score and the
 *   sum of exp(score - maximum), repeated over the last dimension; the backward's input.
 * - softmaxOutOut: reserved (may be NULL); paddingMaskOptional and prefixOptional: reserved /
 *   sparseMode 5 and 6.
 */
ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionScoreGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value,
    const aclTensor *realShiftOptional, const aclTensor *dropMaskOptional,
    const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, double scaleValue, double keepProb, int64_t preTokens,
    int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise,
    int64_t sparseMode, const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut,
    const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionScore(void *workspace, uint64_t workspaceSize,
                                                         aclOpExecutor *executor,
                                                         aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_FLASH_ATTENTION_SCORE_H_ */
