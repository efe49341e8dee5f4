/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_reduce_sum.h: declared from Huawei's public operator
 * documentation (hicann/ops-math, math/reduce_sum_op/docs/aclnnReduceSum.md); text our own.  The
 * two-phase calling convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_REDUCE_SUM_H_
#define TB_STANDIN_ACLNNOP_ACLNN_REDUCE_SUM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = sum of self over the axes in dims (distinct, in [-rank, rank)), keeping them as size 1
 *  when keepDims; computed and stored as dtype, which must equal out's type. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnReduceSumGetWorkspaceSize(
    const aclTensor *self, const aclIntArray *dims, bool keepDims, aclDataType dtype,
    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnReduceSum(void *workspace, uint64_t workspaceSize,
                                               aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_REDUCE_SUM_H_ */
