/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_dropout_gen_mask.h, declared from the public documentation
 * of aclnnDropoutGenMask; text our own.  The two-phase calling convention is described in
 * aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_DROPOUT_GEN_MASK_H_
#define TB_STANDIN_ACLNNOP_ACLNN_DROPOUT_GEN_MASK_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A dropout mask for a tensor of `shape`: one bit per element in row-major order (bit e is bit
 *  e % 8 of byte e / 8), 0 (dropped) with probability prob in [0, 1], else 1, drawn from
 *  (seed, offset).  out is UINT8 of align(numel, 128) / 8 elements; bits past numel are 0. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnDropoutGenMaskGetWorkspaceSize(const aclIntArray *shape,
                                                                    double prob, int64_t seed,
                                                                    int64_t offset, aclTensor *out,
                                                                    uint64_t *workspaceSize,
                                                                    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnDropoutGenMask(void *workspace, uint64_t workspaceSize,
                                                    aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_DROPOUT_GEN_MASK_H_ */
