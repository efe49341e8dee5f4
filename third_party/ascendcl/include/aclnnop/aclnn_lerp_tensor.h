/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_lerp_tensor.h, declared from the public documentation of
 * aclnnLerp (ops-math math/lerp); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_LERP_TENSOR_H_
#define TB_STANDIN_ACLNNOP_ACLNN_LERP_TENSOR_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self + weight * (end - self), all broadcast. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnLerpGetWorkspaceSize(const aclTensor *self,
                                                          const aclTensor *end,
                                                          const aclTensor *weight, aclTensor *out,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnLerp(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_LERP_TENSOR_H_ */
