/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's aclnnop/aclnn_mm.h: declared from Huawei's public operator documentation
 * (hicann/ops-nn, matmul/mat_mul_v3/docs/aclnnMm.md); text our own.  The two-phase calling
 * convention is described in aclnn/aclnn_base.h.
 */
#ifndef TB_STANDIN_ACLNNOP_ACLNN_MM_H_
#define TB_STANDIN_ACLNNOP_ACLNN_MM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** out = self @ mat2 for 2-d self [m, k] and mat2 [k, n] (FLOAT, FLOAT16, BFLOAT16; self and
 *  mat2 promote to one type, out takes it).  cubeMathType: 0 KEEP_DTYPE, 1
 *  ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32, 4 USE_FP32_ADD (the stand-in computes in
 *  the input type for every value). */
ACL_FUNC_VISIBILITY aclnnStatus aclnnMmGetWorkspaceSize(const aclTensor *self,
                                                        const aclTensor *mat2, aclTensor *out,
                                                        int8_t cubeMathType,
                                                        uint64_t *workspaceSize,
                                                        aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnMm(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACLNNOP_ACLNN_MM_H_ */
