/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_s_where.h, declared from the public documentation of
 * aclnnSWhere (ops-math math/select); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_S_WHERE_H_
#define TB_STANDIN_ACLNNOP_ACLNN_S_WHERE_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = condition ? self : other (condition bool or uint8), all broadcast. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnSWhereGetWorkspaceSize(const aclTensor *condition,
                                                            const aclTensor *self,
                                                            const aclTensor *other, aclTensor *out,
                                                            uint64_t *workspaceSize,
                                                            aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnSWhere(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_S_WHERE_H_ */
