/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_tanh.h, declared from the public documentation of
 * aclnnTanh&aclnnInplaceTanh (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_TANH_H_
#define TB_STANDIN_ACLNNOP_ACLNN_TANH_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = tanh(self); integer and bool inputs compute in float. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnTanhGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnTanh(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);
/** selfRef = tanh(selfRef). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceTanhGetWorkspaceSize(aclTensor *selfRef,
                                                                 uint64_t *workspaceSize,
                                                                 aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceTanh(void *workspace, uint64_t workspaceSize,
                                                 aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_TANH_H_ */
