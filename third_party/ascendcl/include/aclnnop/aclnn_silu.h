/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_silu.h, declared from the public documentation of
 * aclnnSilu (ops-nn activation/silu); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_SILU_H_
#define TB_STANDIN_ACLNNOP_ACLNN_SILU_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self * sigmoid(self). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnSiluGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnSilu(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_SILU_H_ */
