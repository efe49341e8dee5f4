/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_gather.h: declared from Huawei's public operator documentation
 * (hicann/ops-nn, aclnnGather.md); text our own.  The two-phase calling convention is described in
 * aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_GATHER_H_
#define TB_STANDIN_ACLNNOP_ACLNN_GATHER_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out[i][j][k] = self[index[i][j][k]][j][k] (for dim 0; likewise for other dims): out has
 *  index's shape. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnGatherGetWorkspaceSize(const aclTensor *self,
                                                            const int64_t dim,
                                                            const aclTensor *index, aclTensor *out,
                                                            uint64_t *workspaceSize,
                                                            aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnGather(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_GATHER_H_ */
