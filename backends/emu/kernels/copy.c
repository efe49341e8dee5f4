/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Data movement kernels torch_backend's own operators use: copy_ (any layout, any dtype pair,
 * across devices), fill_ and zero_.
 */
#include "kernel.h"

/* copy_: (self, src, non_blocking); src is broadcast to self's shape already. */
static void run_copy(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  emu_copy_tensor(call->args[0].as.tensor, call->args[1].as.tensor);
}

static tb_status kernel_copy(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("copy_", args, count, "TTb");
  if (status != TB_OK) return status;
  const tb_tensor *dst = args[0].as.tensor, *src = args[1].as.tensor;
  if (dst->ndim != src->ndim) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: copy_: source not broadcast to the destination");
  }
  for (int32_t d = 0; d < dst->ndim; d++) {
    if (dst->sizes[d] != src->sizes[d]) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED,
                      "emu: copy_: source not broadcast to the destination");
    }
  }
  return emu_launch("copy_", stream, args, count, run_copy, 0, NULL);
}

/* fill_.Scalar: (self, value) */
static void run_fill(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *self = call->args[0].as.tensor;
  emu_tensor value;
  char storage[16];
  ew_operand(&call->args[1], self->dtype, self, &value, storage);
  emu_copy_tensor(self, &value);
}

static tb_status kernel_fill(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("fill_.Scalar", args, count, "Tn");
  if (status != TB_OK) return status;
  return emu_launch("fill_.Scalar", stream, args, count, run_fill, 0, NULL);
}

/* zero_: (self) */
static void run_zero(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *self = call->args[0].as.tensor;
  emu_arg zero = {.kind = TB_VALUE_INT};
  emu_tensor value;
  char storage[16];
  ew_operand(&zero, self->dtype, self, &value, storage);
  emu_copy_tensor(self, &value);
}

static tb_status kernel_zero(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("zero_", args, count, "T");
  if (status != TB_OK) return status;
  return emu_launch("zero_", stream, args, count, run_zero, 0, NULL);
}

EMU_KERNEL(k_copy, "copy_", kernel_copy, EMU_ALL_TYPES,
           "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)");
EMU_KERNEL(k_fill, "fill_.Scalar", kernel_fill, EMU_ALL_TYPES,
           "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)");
EMU_KERNEL(k_zero, "zero_", kernel_zero, EMU_ALL_TYPES, "zero_(Tensor(a!) self) -> Tensor(a!)");

const tb_kernel *const emu_copy_kernels[] = {&k_copy, &k_fill, &k_zero, NULL};
