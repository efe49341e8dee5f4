/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The custom-operator tutorial's vendor (docs/custom_ops.rst includes this file): fake's
 * defaults (host memory, synchronous streams) under the device name "myops", plus one custom
 * operator declared in C, myops::mymuladd(Tensor a, Tensor b, float c) -> Tensor computing
 * a * b + c -- the operator of PyTorch's custom C++ operator tutorial -- with its shape
 * function and its backward, myops::mymuladd_backward.
 */
#include <stdbool.h>
#include <torch_backend/fake.h>

const char *tbv_device_type(void) { return "myops"; }
const char *tbv_vendor_name(void) { return "custom operator tutorial"; }

/* tutorial: helpers */
/* Element `linear` (row-major over the sizes) of a strided float32 tensor: kernels receive
 * tensors as the caller passed them, so gradients may be expanded (stride 0) or transposed. */
static float *element(const tb_tensor *t, int64_t linear) {
  int64_t offset = 0;
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    offset += (linear % t->sizes[d]) * t->strides[d];
    linear /= t->sizes[d];
  }
  return (float *)t->data + offset;
}

static int64_t numel(const tb_tensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++) n *= t->sizes[d];
  return n;
}

static bool same_shape(const tb_tensor *a, const tb_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (a->sizes[d] != b->sizes[d]) return false;
  }
  return true;
}

/* tutorial: shape functions */
/* Output metadata from the arguments alone (tensors have data NULL here): used for meta and
 * fake tensors (torch.compile, opcheck) and to allocate the outputs before each kernel call.
 * The checks belong here, so that they hold under torch.compile too. */
static tb_status mymuladd_shape(tb_context ctx, const tb_value *args, int32_t num_args,
                                tb_shape *outputs, int32_t num_outputs) {
  (void)ctx;
  const tb_tensor *a = args[0].as.tensor, *b = args[1].as.tensor;
  if (num_args != 3 || num_outputs != 1) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "myops::mymuladd: bad call");
  }
  if (a->dtype != TB_DTYPE_FLOAT32 || b->dtype != TB_DTYPE_FLOAT32 || !same_shape(a, b)) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT,
                             "myops::mymuladd: a and b must be float32 tensors of one shape");
  }
  outputs[0].dtype = TB_DTYPE_FLOAT32;
  outputs[0].ndim = a->ndim;
  for (int32_t d = 0; d < a->ndim; d++) outputs[0].sizes[d] = a->sizes[d];
  return TB_OK;
}

/* (grad, a, b, c) -> (grad_a, grad_b): the shapes of a and b */
static tb_status mymuladd_backward_shape(tb_context ctx, const tb_value *args, int32_t num_args,
                                         tb_shape *outputs, int32_t num_outputs) {
  if (num_args != 4 || num_outputs != 2) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "myops::mymuladd_backward: bad call");
  }
  tb_status status = mymuladd_shape(ctx, args + 1, 3, outputs, 1);
  if (status != TB_OK) return status;
  outputs[1] = outputs[0];
  return TB_OK;
}

/* tutorial: kernels */
/* Arguments in schema order, then one output per returned tensor, allocated by torch_backend
 * from the shape function: (a, b, c, out).  fake's streams are synchronous and its memory is
 * host memory, so this kernel computes at once; a real device enqueues work on `call->stream`. */
static tb_status mymuladd(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  const tb_value *args = call->args;
  const int32_t num_args = call->num_args;
  if (num_args != 4) return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "mymuladd: arguments");
  const tb_tensor *a = args[0].as.tensor, *b = args[1].as.tensor, *out = args[3].as.tensor;
  const float c = (float)args[2].as.f;
  for (int64_t i = 0; i < numel(out); i++) *element(out, i) = *element(a, i) * *element(b, i) + c;
  return TB_OK;
}

/* (grad, a, b, c, grad_a, grad_b): d(a * b + c) = grad * b da + grad * a db */
static tb_status mymuladd_backward(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  const tb_value *args = call->args;
  const int32_t num_args = call->num_args;
  if (num_args != 6) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "mymuladd_backward: arguments");
  }
  const tb_tensor *grad = args[0].as.tensor, *a = args[1].as.tensor, *b = args[2].as.tensor;
  const tb_tensor *grad_a = args[4].as.tensor, *grad_b = args[5].as.tensor;
  for (int64_t i = 0; i < numel(grad_a); i++) {
    *element(grad_a, i) = *element(grad, i) * *element(b, i);
    *element(grad_b, i) = *element(grad, i) * *element(a, i);
  }
  return TB_OK;
}

/* tutorial: declarations */
static const tb_custom_op k_mymuladd = {
    .struct_size = sizeof(tb_custom_op),
    .schema = "myops::mymuladd(Tensor a, Tensor b, float c) -> Tensor",
    .fn = mymuladd,
    .dtypes = TB_DTYPE_BIT(TB_DTYPE_FLOAT32),
    .shape = mymuladd_shape,
    .backward = "mymuladd_backward", /* an operator of this table, in this namespace */
};
static const tb_custom_op k_mymuladd_backward = {
    .struct_size = sizeof(tb_custom_op),
    .schema =
        "myops::mymuladd_backward(Tensor grad, Tensor a, Tensor b, float c) -> "
        "(Tensor, Tensor)",
    .fn = mymuladd_backward,
    .dtypes = TB_DTYPE_BIT(TB_DTYPE_FLOAT32),
    .shape = mymuladd_backward_shape,
};

static const tb_custom_op *const k_ops[] = {&k_mymuladd, &k_mymuladd_backward};
static const tb_custom_ops_extension k_custom_ops = {
    .base = {.struct_size = sizeof(tb_custom_ops_extension),
             .type = TB_EXTENSION_CUSTOM_OPS,
             .next = NULL},
    .count = sizeof k_ops / sizeof k_ops[0],
    .ops = k_ops,
};

/* fake's slot for tb_vendor::extensions: the chain starts with the custom operators. */
const tb_extension_base *tbv_extensions(void) { return &k_custom_ops.base; }
