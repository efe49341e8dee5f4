/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's matrix products: mm.out -> aclnnMm, bmm.out -> aclnnBatchMatMul, addmm.out ->
 * aclnnAddmm.  cubeMathType 0 (KEEP_DTYPE): the product in the operands' own precision, as
 * ATen computes it on the CPU (torch_npu does the same unless HF32 is allowed).  The aclnn
 * operators take FLOAT, FLOAT16 and BFLOAT16: other dtypes run on the CPU fallback.
 */
#include <aclnnop/aclnn_addmm.h>
#include <aclnnop/aclnn_batch_matmul.h>
#include <aclnnop/aclnn_mm.h>

#include "structured.h"

#define MATMUL_TYPES \
  (NPU_BIT(TB_DTYPE_FLOAT32) | NPU_BIT(TB_DTYPE_FLOAT16) | NPU_BIT(TB_DTYPE_BFLOAT16))
enum { KEEP_DTYPE = 0 };

/* Every tensor argument in `tensors` (indices) of one documented dtype. */
static tb_status check_operands(npu_call *c, const int32_t *tensors, int count) {
  const tb_tensor *first = npu_tensor_arg(c, tensors[0]);
  for (int k = 0; k < count; k++) {
    const tb_tensor *t = npu_tensor_arg(c, tensors[k]);
    tb_status status = npu_require_dtype(c, t, MATMUL_TYPES, "an operand");
    if (status != TB_OK) return status;
    if (t->dtype != first->dtype) return npu_decline(c, "operands of different dtypes");
  }
  return TB_OK;
}

/* mm.out: [self, mat2, out] */
static tb_status mm_out(npu_call *c) {
  tb_status status = check_operands(c, (const int32_t[]){0, 1, 2}, 3);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, Mm, npu_tensor(c, 0), npu_tensor(c, 1), npu_tensor(c, 2), KEEP_DTYPE);
}

/* bmm.out: [self, mat2, out] */
static tb_status bmm_out(npu_call *c) {
  tb_status status = check_operands(c, (const int32_t[]){0, 1, 2}, 3);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, BatchMatMul, npu_tensor(c, 0), npu_tensor(c, 1), npu_tensor(c, 2),
                   KEEP_DTYPE);
}

/* addmm.out: [self, mat1, mat2, beta, alpha, out] -> out = beta * self + alpha * mat1 @ mat2 */
static tb_status addmm_out(npu_call *c) {
  tb_status status = check_operands(c, (const int32_t[]){0, 1, 2, 5}, 4);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, Addmm, npu_tensor(c, 0), npu_tensor(c, 1), npu_tensor(c, 2), npu_scalar(c, 3),
                   npu_scalar(c, 4), npu_tensor(c, 5), KEEP_DTYPE);
}

NPU_KERNEL(k_mm, "mm.out", mm_out, MATMUL_TYPES,
           "mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
NPU_KERNEL(k_bmm, "bmm.out", bmm_out, MATMUL_TYPES,
           "bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
NPU_KERNEL(k_addmm, "addmm.out", addmm_out, MATMUL_TYPES,
           "addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, "
           "Tensor(a!) out) -> Tensor(a!)");

const tb_kernel *const npu_blas_kernels[] = {&k_mm, &k_bmm, &k_addmm, NULL};
