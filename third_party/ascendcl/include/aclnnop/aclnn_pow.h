/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_pow.h, declared from the public documentation of
 * aclnnPowTensorScalar and aclnnPowScalarTensor (ops-math math/pow); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_POW_H_
#define TB_STANDIN_ACLNNOP_ACLNN_POW_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self ** exponent, in the tensor-scalar promoted type. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnPowTensorScalarGetWorkspaceSize(const aclTensor *self,
                                                                     const aclScalar *exponent,
                                                                     aclTensor *out,
                                                                     uint64_t *workspaceSize,
                                                                     aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnPowTensorScalar(void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor, aclrtStream stream);

/** out = self ** exponent with a scalar base, in the scalar-tensor promoted type. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnPowScalarTensorGetWorkspaceSize(const aclScalar *self,
                                                                     const aclTensor *exponent,
                                                                     aclTensor *out,
                                                                     uint64_t *workspaceSize,
                                                                     aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnPowScalarTensor(void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_POW_H_ */
