/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's layer normalisation: native_layer_norm -> aclnnLayerNorm, native_layer_norm_backward
 * -> aclnnLayerNormBackward.  ATen's mean and rstd ([A..., 1, ..., 1]) are the operators'
 * meanOut/rstdOut as documented; a saved statistic of another dtype than the input (ATen keeps
 * them in float for reduced-precision inputs on some devices) runs on the CPU fallback.  The
 * backward's output mask: an output that is not asked for, or that torch_backend passes as
 * None, is left out (NULL, mask false).
 */
#include <aclnnop/aclnn_layer_norm.h>
#include <aclnnop/aclnn_layer_norm_backward.h>

#include "structured.h"

#define NORM_TYPES \
  (NPU_BIT(TB_DTYPE_FLOAT32) | NPU_BIT(TB_DTYPE_FLOAT16) | NPU_BIT(TB_DTYPE_BFLOAT16))

/* Every listed tensor argument that is present has the dtype of argument `like`. */
static tb_status same_dtype(npu_call *c, int32_t like, const int32_t *tensors, int count) {
  const tb_tensor *x = npu_tensor_arg(c, like);
  tb_status status = npu_require_dtype(c, x, NORM_TYPES, "input");
  for (int k = 0; status == TB_OK && k < count; k++) {
    const tb_tensor *t = npu_tensor_arg(c, tensors[k]);
    if (t != NULL && t->dtype != x->dtype) status = npu_decline(c, "operands of mixed dtypes");
  }
  return status;
}

/* native_layer_norm: [input, normalized_shape, weight?, bias?, eps, out, mean, rstd] */
static tb_status layer_norm(npu_call *c) {
  tb_status status = same_dtype(c, 0, (const int32_t[]){2, 3, 5, 6, 7}, 5);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, LayerNorm, npu_tensor(c, 0), npu_int_array(c, 1), npu_tensor(c, 2),
                   npu_tensor(c, 3), npu_arg_double(c, 4), npu_tensor(c, 5), npu_tensor(c, 6),
                   npu_tensor(c, 7));
}

/* native_layer_norm_backward: [grad_out, input, normalized_shape, mean, rstd, weight?, bias?,
 * output_mask, grad_input, grad_weight, grad_bias] */
static tb_status layer_norm_backward(npu_call *c) {
  tb_status status = same_dtype(c, 1, (const int32_t[]){0, 3, 4, 5, 6, 8, 9, 10}, 8);
  if (status != TB_OK) return status;
  const tb_value *mask = &c->args[7];
  if (mask->kind != TB_VALUE_BOOL_LIST || mask->as.bools.count != 3) {
    return npu_decline(c, "an output mask that is not three booleans");
  }
  bool wanted[3];
  aclTensor *outs[3];
  for (int k = 0; k < 3; k++) {
    wanted[k] = mask->as.bools.items[k] != 0 && npu_tensor_arg(c, 8 + k) != NULL;
    outs[k] = wanted[k] ? npu_tensor(c, 8 + k) : NULL;
  }
  aclBoolArray *output_mask = aclCreateBoolArray(wanted, 3);
  if (output_mask == NULL) {
    return npu_fail(c->ctx, TB_ERROR_INTERNAL, "npu: native_layer_norm_backward: %s",
                    aclGetRecentErrMsg());
  }
  status = NPU_ACLNN(c, LayerNormBackward, npu_tensor(c, 0), npu_tensor(c, 1), npu_int_array(c, 2),
                     npu_tensor(c, 3), npu_tensor(c, 4), npu_tensor(c, 5), npu_tensor(c, 6),
                     output_mask, outs[0], outs[1], outs[2]);
  aclDestroyBoolArray(output_mask);
  return status;
}

NPU_KERNEL(k_layer_norm, "native_layer_norm", layer_norm, NORM_TYPES,
           "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? "
           "bias, float eps) -> (Tensor, Tensor, Tensor)");
NPU_KERNEL(k_layer_norm_backward, "native_layer_norm_backward", layer_norm_backward, NORM_TYPES,
           "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
           "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> "
           "(Tensor, Tensor, Tensor)");

const tb_kernel *const npu_norm_kernels[] = {&k_layer_norm, &k_layer_norm_backward, NULL};
