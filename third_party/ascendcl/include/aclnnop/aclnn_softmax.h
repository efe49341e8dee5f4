/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_softmax.h: declared from Huawei's public operator documentation
 * (hicann/ops-nn, activation/softmax_v2/docs/aclnnSoftmax.md); text our own.  The two-phase calling
 * convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_SOFTMAX_H_
#define TB_STANDIN_ACLNNOP_ACLNN_SOFTMAX_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = exp(self) / sum(exp(self)) along dim (negative dims count from the end); out has
 *  self's shape. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim,
                                                             aclTensor *out,
                                                             uint64_t *workspaceSize,
                                                             aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnSoftmax(void *workspace, uint64_t workspaceSize,
                                             aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_SOFTMAX_H_ */
