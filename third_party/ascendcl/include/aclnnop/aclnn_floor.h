/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_floor.h, declared from the public documentation of
 * aclnnFloor&aclnnInplaceFloor (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_FLOOR_H_
#define TB_STANDIN_ACLNNOP_ACLNN_FLOOR_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = floor(self) (floating types). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnFloorGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                                           uint64_t *workspaceSize,
                                                           aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFloor(void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream);
/** selfRef = floor(selfRef) (floating types). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceFloorGetWorkspaceSize(aclTensor *selfRef,
                                                                  uint64_t *workspaceSize,
                                                                  aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceFloor(void *workspace, uint64_t workspaceSize,
                                                  aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_FLOOR_H_ */
