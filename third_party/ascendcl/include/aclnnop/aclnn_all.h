/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_all.h: declared from Huawei's public operator documentation
 * (hicann/ops-math, math/reduce_all/docs/aclnnAll.md); text our own.  The two-phase calling
 * convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_ALL_H_
#define TB_STANDIN_ACLNNOP_ACLNN_ALL_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = whether every element of self over the axes in dim (all axes when dim is []) is
 *  non-zero; out BOOL or UINT8. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnAllGetWorkspaceSize(const aclTensor *self,
                                                         const aclIntArray *dim, bool keepdim,
                                                         aclTensor *out, uint64_t *workspaceSize,
                                                         aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnAll(void *workspace, uint64_t workspaceSize,
                                         aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_ALL_H_ */
