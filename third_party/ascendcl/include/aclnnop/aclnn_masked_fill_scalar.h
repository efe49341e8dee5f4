/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_masked_fill_scalar.h, declared from the public documentation of
 * aclnnInplaceMaskedFillScalar (ops-math math/masked_fill); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_MASKED_FILL_SCALAR_H_
#define TB_STANDIN_ACLNNOP_ACLNN_MASKED_FILL_SCALAR_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** selfRef[mask] = value (converted to selfRef's type); mask (bool) broadcasts to selfRef. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceMaskedFillScalarGetWorkspaceSize(
    aclTensor *selfRef, const aclTensor *mask, const aclScalar *value, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceMaskedFillScalar(void *workspace,
                                                             uint64_t workspaceSize,
                                                             aclOpExecutor *executor,
                                                             aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_MASKED_FILL_SCALAR_H_ */
