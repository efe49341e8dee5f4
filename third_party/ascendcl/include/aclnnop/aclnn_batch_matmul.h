/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_batch_matmul.h: declared from Huawei's public operator
 * documentation (hicann/ops-nn, matmul/batch_mat_mul_v3/docs/aclnnBatchMatMul.md); text our own.
 * The two-phase calling convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_BATCH_MATMUL_H_
#define TB_STANDIN_ACLNNOP_ACLNN_BATCH_MATMUL_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out[b] = self[b] @ mat2[b] for 3-d self [B, m, k] and mat2 [B, k, n] (a batch of 1
 *  broadcasts); cubeMathType as for aclnnMm. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnBatchMatMulGetWorkspaceSize(
    const aclTensor *self, const aclTensor *mat2, aclTensor *out, int8_t cubeMathType,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnBatchMatMul(void *workspace, uint64_t workspaceSize,
                                                 aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_BATCH_MATMUL_H_ */
