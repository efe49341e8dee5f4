/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_gelu_v2.h, declared from the public documentation of
 * aclnnGeluV2 (ops-nn activation/gelu_v2); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_GELU_V2_H_
#define TB_STANDIN_ACLNNOP_ACLNN_GELU_V2_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** y = gelu(x): approximate 0 the erf form, 1 the tanh approximation. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnGeluV2GetWorkspaceSize(const aclTensor *x, int64_t approximate,
                                                            aclTensor *y, uint64_t *workspaceSize,
                                                            aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnGeluV2(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_GELU_V2_H_ */
