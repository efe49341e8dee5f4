/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's softmax family: _softmax.out -> aclnnSoftmax, _log_softmax.out -> aclnnLogSoftmax, and
 * their backwards -> aclnnSoftmaxBackward / aclnnLogSoftmaxBackward.  ATen's half_to_float (a
 * float result from a half input) and a backward's input_dtype other than the gradient's are
 * dtype changes the aclnn operators do not document: those calls run on the CPU fallback.
 */
#include <aclnnop/aclnn_logsoftmax.h>
#include <aclnnop/aclnn_logsoftmax_backward.h>
#include <aclnnop/aclnn_softmax.h>
#include <aclnnop/aclnn_softmax_backward.h>

#include "structured.h"

/* Every listed tensor argument floating and of one dtype. */
static tb_status same_floats(npu_call *c, const int32_t *tensors, int count) {
  const tb_tensor *first = npu_tensor_arg(c, tensors[0]);
  for (int k = 0; k < count; k++) {
    const tb_tensor *t = npu_tensor_arg(c, tensors[k]);
    tb_status status = npu_require_dtype(c, t, NPU_FLOATS, "an operand");
    if (status != TB_OK) return status;
    if (t->dtype != first->dtype) {
      return npu_decline(c, "a dtype change (half_to_float, input_dtype)");
    }
  }
  return TB_OK;
}

/* _softmax.out / _log_softmax.out: [self, dim, half_to_float, out] */
static tb_status softmax_out(npu_call *c) {
  tb_status status = same_floats(c, (const int32_t[]){0, 3}, 2);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, Softmax, npu_tensor(c, 0), npu_arg_int(c, 1), npu_tensor(c, 3));
}
static tb_status log_softmax_out(npu_call *c) {
  tb_status status = same_floats(c, (const int32_t[]){0, 3}, 2);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, LogSoftmax, npu_tensor(c, 0), npu_arg_int(c, 1), npu_tensor(c, 3));
}

/* _softmax_backward_data.out / _log_softmax_backward_data.out: [grad_output, output, dim,
 * input_dtype, grad_input] */
static tb_status softmax_backward_out(npu_call *c) {
  tb_status status = same_floats(c, (const int32_t[]){0, 1, 4}, 3);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, SoftmaxBackward, npu_tensor(c, 0), npu_tensor(c, 1), npu_arg_int(c, 2),
                   npu_tensor(c, 4));
}
static tb_status log_softmax_backward_out(npu_call *c) {
  tb_status status = same_floats(c, (const int32_t[]){0, 1, 4}, 3);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, LogSoftmaxBackward, npu_tensor(c, 0), npu_tensor(c, 1), npu_arg_int(c, 2),
                   npu_tensor(c, 4));
}

NPU_KERNEL(
    k_softmax, "_softmax.out", softmax_out, NPU_FLOATS,
    "_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)");
NPU_KERNEL(
    k_log_softmax, "_log_softmax.out", log_softmax_out, NPU_FLOATS,
    "_log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)");
NPU_KERNEL(k_softmax_backward, "_softmax_backward_data.out", softmax_backward_out, NPU_FLOATS,
           "_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType "
           "input_dtype, *, Tensor(a!) grad_input) -> Tensor(a!)");
NPU_KERNEL(k_log_softmax_backward, "_log_softmax_backward_data.out", log_softmax_backward_out,
           NPU_FLOATS,
           "_log_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType "
           "input_dtype, *, Tensor(a!) out) -> Tensor(a!)");

const tb_kernel *const npu_softmax_kernels[] = {&k_softmax, &k_log_softmax, &k_softmax_backward,
                                                &k_log_softmax_backward, NULL};
