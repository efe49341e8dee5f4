/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_fill_scalar.h, declared from the public documentation of
 * aclnnInplaceFillScalar (ops-math math/fill); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_FILL_SCALAR_H_
#define TB_STANDIN_ACLNNOP_ACLNN_FILL_SCALAR_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Every element of selfRef = value converted to selfRef's type. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor *selfRef,
                                                                       const aclScalar *value,
                                                                       uint64_t *workspaceSize,
                                                                       aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceFillScalar(void *workspace, uint64_t workspaceSize,
                                                       aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_FILL_SCALAR_H_ */
