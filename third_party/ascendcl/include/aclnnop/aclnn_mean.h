/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_mean.h: declared from Huawei's public operator documentation
 * (hicann/ops-math, aclnnMean.md); text our own.  The two-phase calling convention is described in
 * aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_MEAN_H_
#define TB_STANDIN_ACLNNOP_ACLNN_MEAN_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = mean of self over the axes in dim, keeping them as size 1 when keepDim; dtype is
 *  out's floating type. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnMeanGetWorkspaceSize(const aclTensor *self,
                                                          const aclIntArray *dim, bool keepDim,
                                                          aclDataType dtype, aclTensor *out,
                                                          uint64_t *workspaceSize,
                                                          aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnMean(void *workspace, uint64_t workspaceSize,
                                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_MEAN_H_ */
