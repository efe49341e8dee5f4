/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_bitwise_and_tensor.h, declared from the public documentation of
 * aclnnBitwiseAndTensor (ops-math math/bitwise_and); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_BITWISE_AND_TENSOR_H_
#define TB_STANDIN_ACLNNOP_ACLNN_BITWISE_AND_TENSOR_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self & other (integers and bool), broadcast. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnBitwiseAndTensorGetWorkspaceSize(const aclTensor *self,
                                                                      const aclTensor *other,
                                                                      aclTensor *out,
                                                                      uint64_t *workspaceSize,
                                                                      aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnBitwiseAndTensor(void *workspace, uint64_t workspaceSize,
                                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_BITWISE_AND_TENSOR_H_ */
