/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_trunc.h, declared from the public documentation of
 * aclnnTrunc&aclnnInplaceTrunc (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_TRUNC_H_
#define TB_STANDIN_ACLNNOP_ACLNN_TRUNC_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = trunc(self) (floating types). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnTruncGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                           uint64_t *workspaceSize,
                                                           aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnTrunc(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);
/** selfRef = trunc(selfRef) (floating types). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceTruncGetWorkspaceSize(aclTensor *selfRef,
                                                                  uint64_t *workspaceSize,
                                                                  aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceTrunc(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_TRUNC_H_ */
