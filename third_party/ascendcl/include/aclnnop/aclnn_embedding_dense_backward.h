/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_embedding_dense_backward.h: declared from Huawei's public
 * operator documentation (hicann/ops-nn, aclnnEmbeddingDenseBackward.md); text our own.  The
 * two-phase calling convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_EMBEDDING_DENSE_BACKWARD_H_
#define TB_STANDIN_ACLNNOP_ACLNN_EMBEDDING_DENSE_BACKWARD_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out [numWeights, D] = the rows of grad [..., D] summed by their index in indices [...];
 *  rows whose index is paddingIdx add nothing (a negative paddingIdx pads nothing); with
 *  scaleGradByFreq each row is divided by its index's count. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnEmbeddingDenseBackwardGetWorkspaceSize(
    const aclTensor *grad, const aclTensor *indices, uint64_t numWeights, uint64_t paddingIdx,
    bool scaleGradByFreq, const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnEmbeddingDenseBackward(void *workspace, uint64_t workspaceSize,
                                                            aclOpExecutor *executor,
                                                            aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_EMBEDDING_DENSE_BACKWARD_H_ */
