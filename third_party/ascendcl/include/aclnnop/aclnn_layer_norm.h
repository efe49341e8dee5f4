/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_layer_norm.h: declared from Huawei's public operator
 * documentation (hicann/ops-nn,
 * norm/layer_norm_v4/docs/aclnnLayerNorm&aclnnLayerNormWithImplMode.md); text our own.  The
 * two-phase calling convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_LAYER_NORM_H_
#define TB_STANDIN_ACLNNOP_ACLNN_LAYER_NORM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = (input - E[x]) / sqrt(Var[x] + eps) * weight + bias over the trailing
 *  normalizedShape dimensions of input [A..., R...]; meanOutOptional = E[x] and
 *  rstdOutOptional = 1 / sqrt(Var[x] + eps), both shaped [A..., 1, ..., 1] (either may be
 *  NULL); a NULL weight is all ones, a NULL bias all zeros. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnLayerNormGetWorkspaceSize(
    const aclTensor *input, const aclIntArray *normalizedShape, const aclTensor *weightOptional,
    const aclTensor *biasOptional, double eps, aclTensor *out, aclTensor *meanOutOptional,
    aclTensor *rstdOutOptional, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnLayerNorm(void *workspace, uint64_t workspaceSize,
                                               aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_LAYER_NORM_H_ */
