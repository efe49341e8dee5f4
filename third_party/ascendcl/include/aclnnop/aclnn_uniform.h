/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_uniform.h, declared from the public documentation of
 * aclnnInplaceUniform and aclnnInplaceUniformTensor (ops-math random/dsa_random_uniform); text
 * our own.
 *
 * aclnnInplaceUniformTensor is the form graph capture needs (aclmdlRICaptureBegin, acl_mdl.h):
 * its key and base counter are device tensors read when the operator runs, not scalars fixed
 * when it is enqueued, so a captured operator draws new numbers at every run of the model when
 * the application rewrites them in between (torch_npu's generator does, in graph mode).
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_UNIFORM_H_
#define TB_STANDIN_ACLNNOP_ACLNN_UNIFORM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Fills selfRef with numbers drawn uniformly from [from, to) (from <= to; floating types, and
 *  integer types, whose elements take the floor), from the Philox-4x32-10 stream of key seed
 *  starting at counter offset.  In the stand-in, element i of selfRef (row-major) takes 32-bit
 *  output number offset + i, u = output / 2^32 and the element from + (to - from) * u: the
 *  numbers aclnnInplaceBernoulli compares with its probability for the same key and counter. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceUniformGetWorkspaceSize(const aclTensor *selfRef,
                                                                    double from, double to,
                                                                    uint64_t seed, uint64_t offset,
                                                                    uint64_t *workspaceSize,
                                                                    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceUniform(void *workspace, uint64_t workspaceSize,
                                                    aclOpExecutor *executor,
                                                    const aclrtStream stream);

/** aclnnInplaceUniform with the key in seedTensor and the first counter offsetTensor's value
 *  plus offset: seedTensor and offsetTensor are one-element ACL_UINT64 device tensors, read
 *  when the operator runs. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceUniformTensorGetWorkspaceSize(
    const aclTensor *selfRef, double from, double to, const aclTensor *seedTensor,
    const aclTensor *offsetTensor, uint64_t offset, uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceUniformTensor(void *workspace, uint64_t workspaceSize,
                                                          aclOpExecutor *executor,
                                                          const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_UNIFORM_H_ */
