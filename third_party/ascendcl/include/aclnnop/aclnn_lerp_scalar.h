/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_lerp_scalar.h, declared from the public documentation of
 * aclnnLerps (ops-math math/lerp); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_LERP_SCALAR_H_
#define TB_STANDIN_ACLNNOP_ACLNN_LERP_SCALAR_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self + weight * (end - self), weight a scalar. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnLerpsGetWorkspaceSize(const aclTensor *self,
                                                           const aclTensor *end,
                                                           const aclScalar *weight, aclTensor *out,
                                                           uint64_t *workspaceSize,
                                                           aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnLerps(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_LERP_SCALAR_H_ */
