/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_arange.h, declared from the public documentation of
 * aclnnArange (ops-math math/arange); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_ARANGE_H_
#define TB_STANDIN_ACLNNOP_ACLNN_ARANGE_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out[i] = start + i * step for the ceil((end - start) / step) elements of the 1-D out. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnArangeGetWorkspaceSize(const aclScalar *start,
                                                            const aclScalar *end,
                                                            const aclScalar *step, aclTensor *out,
                                                            uint64_t *workspaceSize,
                                                            aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnArange(void *workspace, uint64_t workspaceSize,
                                            aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_ARANGE_H_ */
