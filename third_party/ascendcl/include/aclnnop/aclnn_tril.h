/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_tril.h, declared from the public documentation of
 * aclnnTril&aclnnInplaceTril (ops-math math/tril); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_TRIL_H_
#define TB_STANDIN_ACLNNOP_ACLNN_TRIL_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self below and on diagonal `diagonal` of the last two dimensions, 0 above. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnTrilGetWorkspaceSize(const aclTensor *self, int64_t diagonal,
                                                          aclTensor *out, uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnTril(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_TRIL_H_ */
