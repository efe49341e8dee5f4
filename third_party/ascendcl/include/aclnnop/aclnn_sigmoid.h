/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_sigmoid.h, declared from the public documentation of
 * aclnnSigmoid&aclnnInplaceSigmoid (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_SIGMOID_H_
#define TB_STANDIN_ACLNNOP_ACLNN_SIGMOID_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = 1 / (1 + e ** -self); integer and bool inputs compute in float. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnSigmoidGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                             uint64_t *workspaceSize,
                                                             aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnSigmoid(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);
/** selfRef = 1 / (1 + e ** -selfRef). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceSigmoidGetWorkspaceSize(aclTensor *selfRef,
                                                                    uint64_t *workspaceSize,
                                                                    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceSigmoid(void *workspace, uint64_t workspaceSize,
                                                    aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_SIGMOID_H_ */
