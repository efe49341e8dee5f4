/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_softmax_backward.h: declared from Huawei's public operator
 * documentation (hicann/ops-nn, aclnnSoftmaxBackward.md); text our own.  The two-phase calling
 * convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_SOFTMAX_BACKWARD_H_
#define TB_STANDIN_ACLNNOP_ACLNN_SOFTMAX_BACKWARD_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = output * (gradOutput - sum(gradOutput * output, dim)), the gradient of aclnnSoftmax
 *  given its result `output`. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor *gradOutput,
                                                                     const aclTensor *output,
                                                                     int64_t dim, aclTensor *out,
                                                                     uint64_t *workspaceSize,
                                                                     aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnSoftmaxBackward(void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_SOFTMAX_BACKWARD_H_ */
