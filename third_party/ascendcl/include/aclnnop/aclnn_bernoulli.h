/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_bernoulli.h, declared from the public documentation of
 * aclnnBernoulli&aclnnInplaceBernoulli (ops-math random/bernoulli); text our own.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_BERNOULLI_H_
#define TB_STANDIN_ACLNNOP_ACLNN_BERNOULLI_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Each element of selfRef = 1 with probability prob (0 <= prob <= 1), else 0, from the
 * Philox-4x32-10 stream of key seed starting at counter offset. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceBernoulliGetWorkspaceSize(const aclTensor *selfRef,
                                                                      const aclScalar *prob,
                                                                      int64_t seed, int64_t offset,
                                                                      uint64_t *workspaceSize,
                                                                      aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnInplaceBernoulli(void *workspace, uint64_t workspaceSize,
                                                      aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_BERNOULLI_H_ */
