/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's pointwise kernels over the aclnn operators of the same family.  torch_backend hands
 * elementwise operators operands of the output's shape and of the compute dtype (vendor.h,
 * "Elementwise operators"); a CPU scalar operand arrives as a number, which maps to the aclnn
 * operator's scalar form (aclnnAdds for add with a number).
 */
#include <aclnnop/aclnn_add.h>

#include "common.h"

/* add.out: [self, other, alpha, out] -> aclnnAdd / aclnnAdds (out = self + alpha * other) */
static tb_status add_out(npu_call *c) {
  if (!npu_is_tensor(&c->args[0])) return npu_decline(c, "self is a number");
  aclTensor *self = npu_tensor(c, 0), *out = npu_tensor(c, 3);
  aclScalar *alpha = npu_scalar(c, 2);
  if (npu_is_number(&c->args[1])) return NPU_ACLNN(c, Adds, self, npu_scalar(c, 1), alpha, out);
  return NPU_ACLNN(c, Add, self, npu_tensor(c, 1), alpha, out);
}
NPU_KERNEL(k_add, "add.out", add_out, NPU_ALL,
           "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");

const tb_kernel *const npu_pointwise_kernels[] = {&k_add, NULL};
