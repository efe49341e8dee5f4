/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_copy.h, declared from the public documentation of
 * aclnnInplaceCopy (ops-math conversion/view_copy); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_COPY_H_
#define TB_STANDIN_ACLNNOP_ACLNN_COPY_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** selfRef = src, src broadcast to selfRef and converted to its type (any two types). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor *selfRef,
                                                                 const aclTensor *src,
                                                                 uint64_t *workspaceSize,
                                                                 aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceCopy(void *workspace, uint64_t workspaceSize,
                                                 aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_COPY_H_ */
