/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_linalg_vector_norm.h: declared from Huawei's public operator
 * documentation (hicann/ops-math, aclnnLinalgVectorNorm.md); text our own.  The two-phase calling
 * convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_LINALG_VECTOR_NORM_H_
#define TB_STANDIN_ACLNNOP_ACLNN_LINALG_VECTOR_NORM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = (sum over dims of |self|^ord)^(1/ord) (ord inf: max |x|, -inf: min |x|, 0: count of
 *  non-zeros), self converted to dtype first. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnLinalgVectorNormGetWorkspaceSize(
    const aclTensor *self, const aclScalar *ord, const aclIntArray *dims, bool keepDims,
    const aclDataType dtype, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnLinalgVectorNorm(void *workspace, uint64_t workspaceSize,
                                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_LINALG_VECTOR_NORM_H_ */
