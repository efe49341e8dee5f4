/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnn/aclnn_base.h: the status type and the executor of the aclnn
 * single-operator API, declared from Huawei's public documentation ("aclnn return codes",
 * "two-phase interface"); text our own.
 *
 * Every aclnn operator Xxx is two calls:
 *
 *   aclnnStatus aclnnXxxGetWorkspaceSize(<inputs>, <outputs>, uint64_t *workspaceSize,
 *                                        aclOpExecutor **executor);
 *   aclnnStatus aclnnXxx(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
 *                        aclrtStream stream);
 *
 * The first validates the arguments (shapes, dtypes, formats) on the host, without touching
 * device memory, and returns an executor holding the operator's plan together with the
 * arguments' descriptors and addresses, and the device workspace the plan needs.  The second
 * enqueues the computation on @p stream with a workspace of at least that size (NULL when the
 * size is 0) and consumes the executor: an executor runs once and is released by its aclnnXxx
 * call, whether it succeeds or not.  The aclTensor/aclScalar/... objects passed to phase one
 * may be destroyed as soon as it returns.
 */
#ifndef TB_STANDIN_ACLNN_ACLNN_BASE_H_
#define TB_STANDIN_ACLNN_ACLNN_BASE_H_

#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Return code of aclnn calls. */
typedef int32_t aclnnStatus;

/** An operator's prepared execution: created by aclnnXxxGetWorkspaceSize, consumed by aclnnXxx. */
typedef struct aclOpExecutor aclOpExecutor;

#define ACLNN_SUCCESS 0
/** A required pointer argument is NULL. */
#define ACLNN_ERR_PARAM_NULLPTR 161001
/** An argument is invalid (dtype, shape, format, value). */
#define ACLNN_ERR_PARAM_INVALID 161002
/** The runtime failed (enqueueing, device). */
#define ACLNN_ERR_RUNTIME_ERROR 361001
/** Internal error of the operator library. */
#define ACLNN_ERR_INNER 561000

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNN_ACLNN_BASE_H_ */
