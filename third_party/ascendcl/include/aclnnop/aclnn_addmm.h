/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_addmm.h: declared from Huawei's public operator documentation
 * (hicann/ops-nn, matmul/mat_mul_v3/docs/aclnnAddmm&aclnnInplaceAddmm.md); text our own.  The
 * two-phase calling convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_ADDMM_H_
#define TB_STANDIN_ACLNNOP_ACLNN_ADDMM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = beta * self + alpha * (mat1 @ mat2): mat1 [m, k], mat2 [k, n], self broadcastable to
 *  [m, n]; cubeMathType as for aclnnMm. */
/* (the name stays on its return type's line, where an import check looks for it) */
/* clang-format off */
ACL_FUNC_VISIBILITY aclnnStatus aclnnAddmmGetWorkspaceSize(
    const aclTensor *self, const aclTensor *mat1, const aclTensor *mat2, const aclScalar *beta,
    const aclScalar *alpha, aclTensor *out, int8_t cubeMathType, uint64_t *workspaceSize,
    aclOpExecutor **executor);
/* clang-format on */
ACL_FUNC_VISIBILITY aclnnStatus aclnnAddmm(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);

/** selfRef = beta * selfRef + alpha * (mat1 @ mat2), selfRef [m, n]. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceAddmmGetWorkspaceSize(
    const aclTensor *selfRef, const aclTensor *mat1, const aclTensor *mat2, const aclScalar *beta,
    const aclScalar *alpha, int8_t cubeMathType, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceAddmm(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_ADDMM_H_ */
