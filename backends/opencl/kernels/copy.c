/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The two kernels torch_backend itself calls (vendor.h, "Kernels torch_backend itself calls"):
 * copy_ between tensors of one device whose layouts or dtypes differ, and fill_.Scalar, both
 * through the elementwise engine.  float16 and bfloat16 are declined (staged through the host).
 */
#include "kernels.h"

/* copy_ [self, src, non_blocking] */
static tb_status copy(tb_context ctx, const tb_kernel_call *call) {
  if (call->num_args < 2 || call->args[0].kind != TB_VALUE_TENSOR ||
      call->args[1].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = call->args[0].as.tensor, *src = call->args[1].as.tensor;
  if (src->device != self->device) return ocl_decline(call, "tensors of two devices");
  ocl_operand in[1] = {{src, 0, 0}};
  ocl_map_spec spec = {"x0", ocl_compute_of(src->dtype), 1};
  return ocl_map(ctx, call, &spec, self, in, 1, 1);
}

/* fill_.Scalar [self, value]: the value as a number operand, exact for any int64. */
static tb_status fill(tb_context ctx, const tb_kernel_call *call) {
  if (call->num_args < 2 || call->args[0].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = call->args[0].as.tensor;
  const tb_value *value = &call->args[1];
  ocl_operand in[1] = {{NULL, 0, 0}};
  if (!ocl_number(value, &in[0].f, &in[0].i))
    return ocl_decline(call, "a value that is not a number");
  ocl_map_spec spec = {"x0", ocl_compute_of(self->dtype), 1};
  return ocl_map(ctx, call, &spec, self, in, 1, 1);
}

#define EVERY                                                                                   \
  (TB_DTYPE_BIT(TB_DTYPE_BOOL) | TB_DTYPE_BIT(TB_DTYPE_UINT8) | TB_DTYPE_BIT(TB_DTYPE_INT8) |   \
   TB_DTYPE_BIT(TB_DTYPE_INT16) | TB_DTYPE_BIT(TB_DTYPE_INT32) | TB_DTYPE_BIT(TB_DTYPE_INT64) | \
   TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64))

static const tb_kernel k_copy = {sizeof(tb_kernel),
                                 "copy_",
                                 copy,
                                 EVERY,
                                 0,
                                 "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> "
                                 "Tensor(a!)",
                                 NULL};
static const tb_kernel k_fill = {sizeof(tb_kernel),
                                 "fill_.Scalar",
                                 fill,
                                 EVERY,
                                 0,
                                 "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
                                 NULL};

const tb_kernel *const ocl_copy_kernels[] = {&k_copy, &k_fill, NULL};
