/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_index_select.h: declared from Huawei's public operator
 * documentation (hicann/ops-nn, aclnnIndexSelect.md); text our own.  The two-phase calling
 * convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_INDEX_SELECT_H_
#define TB_STANDIN_ACLNNOP_ACLNN_INDEX_SELECT_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = the slices of self along dim named by the 1-d (or 0-d) INT32/INT64 index; an index
 *  outside [0, self.size(dim)) fails the device when the operator runs. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnIndexSelectGetWorkspaceSize(const aclTensor *self, int64_t dim,
                                                                 const aclTensor *index,
                                                                 aclTensor *out,
                                                                 uint64_t *workspaceSize,
                                                                 aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnIndexSelect(void *workspace, uint64_t workspaceSize,
                                                 aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_INDEX_SELECT_H_ */
