/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_ne_tensor.h, declared from the public documentation of
 * aclnnNeTensor (ops-math); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_NE_TENSOR_H_
#define TB_STANDIN_ACLNNOP_ACLNN_NE_TENSOR_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = (self != other) as bool, compared in the promoted type, broadcast. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnNeTensorGetWorkspaceSize(const aclTensor *self,
                                                              const aclTensor *other,
                                                              aclTensor *out,
                                                              uint64_t *workspaceSize,
                                                              aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnNeTensor(void *workspace, uint64_t workspaceSize,
                                              aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_NE_TENSOR_H_ */
