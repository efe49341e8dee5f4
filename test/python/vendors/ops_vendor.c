/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * A test vendor on fake's defaults (host memory, synchronous streams) whose kernels and custom
 * operators carry the mistakes torch_backend must catch when it loads them (vendor.h, ABI 2.0).
 * The Python suites compile it with one -D per variant (conftest.build_test_vendor):
 *
 *   (none)               kernels: mul.out with the right schema, a real kernel; add.out and
 *                        hardtanh.out with schemas of another torch (refused); sub.out without
 *                        a schema (unchecked, always declines); div.out with a schema that does
 *                        not parse; no_such_op.out (no such operator); empty_like (a Layout?
 *                        argument no tb_value carries).  Refused kernels write 1e9 everywhere,
 *                        so a call that reached one would show in the results.  Custom
 *                        operators opstest::twice(Tensor a) -> Tensor (2 * a) and its backward,
 *                        for contiguous float32 only: they decline anything else.
 *   CUSTOM_<PROBLEM>     no kernels; opstest::twice and its backward, with that problem:
 *                        BAD_SCHEMA, NO_NAMESPACE, ATEN_NAMESPACE, MUTATES, NO_SHAPE,
 *                        UNKNOWN_BACKWARD, BAD_BACKWARD, DUPLICATE, REPEATED_EXTENSION.
 */
#include <stdbool.h>
#include <stddef.h>
#include <torch_backend/fake.h>

const char *tbv_device_type(void) { return "opstest"; }
const char *tbv_vendor_name(void) { return "torch_backend test vendor"; }

static bool contiguous_f32(const tb_value *v) {
  if (v->kind != TB_VALUE_TENSOR || v->as.tensor->dtype != TB_DTYPE_FLOAT32) return false;
  int64_t expected = 1;
  for (int32_t d = v->as.tensor->ndim - 1; d >= 0; d--) {
    if (v->as.tensor->sizes[d] != 1 && v->as.tensor->strides[d] != expected) return false;
    expected *= v->as.tensor->sizes[d];
  }
  return true;
}

static int64_t numel(const tb_tensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++) n *= t->sizes[d];
  return n;
}

#if !defined(CUSTOM_BAD_SCHEMA) && !defined(CUSTOM_NO_NAMESPACE) &&                             \
    !defined(CUSTOM_ATEN_NAMESPACE) && !defined(CUSTOM_MUTATES) && !defined(CUSTOM_NO_SHAPE) && \
    !defined(CUSTOM_UNKNOWN_BACKWARD) && !defined(CUSTOM_BAD_BACKWARD) &&                       \
    !defined(CUSTOM_DUPLICATE) && !defined(CUSTOM_REPEATED_EXTENSION)

/* mul.out(self, other, *, out): float32, contiguous, operands of out's shape (torch_backend's
 * compiled wrapper broadcasts them); fake's memory is host memory and its streams synchronous,
 * so the kernel computes at once. */
static tb_status mul_out(tb_stream stream, const tb_value *args, int32_t count) {
  (void)stream;
  if (count != 3 || !contiguous_f32(&args[0]) || !contiguous_f32(&args[1]) ||
      !contiguous_f32(&args[2])) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "opstest: mul.out: contiguous float32 only");
  }
  const float *a = args[0].as.tensor->data, *b = args[1].as.tensor->data;
  float *out = args[2].as.tensor->data;
  for (int64_t i = 0; i < numel(args[2].as.tensor); i++) out[i] = a[i] * b[i];
  return TB_OK;
}

/* What a refused kernel would do if it were ever called: garbage in every output. */
static tb_status poison(tb_stream stream, const tb_value *args, int32_t count) {
  (void)stream;
  for (int32_t i = 0; i < count; i++) {
    if (contiguous_f32(&args[i])) {
      float *data = args[i].as.tensor->data;
      for (int64_t k = 0; k < numel(args[i].as.tensor); k++) data[k] = 1e9f;
    }
  }
  return TB_OK;
}

static tb_status decline(tb_stream stream, const tb_value *args, int32_t count) {
  (void)stream, (void)args, (void)count;
  return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "opstest: declines every call");
}

#define KERNEL(symbol, op, function, text)                                   \
  static const tb_kernel symbol = {.struct_size = sizeof(tb_kernel),         \
                                   .name = op,                               \
                                   .fn = function,                           \
                                   .dtypes = TB_DTYPE_BIT(TB_DTYPE_FLOAT32), \
                                   .schema = text}
KERNEL(k_mul, "mul.out", mul_out,
       "mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
/* alpha before the `*`: as if an older torch had it positional */
KERNEL(k_add, "add.out", poison,
       "aten::add.out(Tensor self, Tensor other, Scalar alpha=1, *, Tensor(a!) out) -> "
       "Tensor(a!)");
/* no max_val */
KERNEL(k_hardtanh, "hardtanh.out", poison,
       "hardtanh.out(Tensor self, Scalar min_val=-1, *, Tensor(a!) out) -> Tensor(a!)");
KERNEL(k_sub, "sub.out", decline, NULL);
KERNEL(k_div, "div.out", poison, "div.out(Tensor self, Tensor other, *, Tensor(a!) out");
KERNEL(k_unknown, "no_such_op.out", poison,
       "no_such_op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
KERNEL(k_empty_like, "empty_like", poison,
       "empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
       "device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor");

static const tb_kernel *const k_kernels[] = {&k_mul, &k_add,     &k_hardtanh,  &k_sub,
                                             &k_div, &k_unknown, &k_empty_like};
static const tb_kernel_api k_kernel_api = {
    .struct_size = sizeof(tb_kernel_api),
    .count = sizeof k_kernels / sizeof k_kernels[0],
    .kernels = k_kernels,
};
const tb_kernel_api *tbv_kernels(void) { return &k_kernel_api; }

#endif

/* ---- custom operators: opstest::twice and its backward ---- */

/* out = factor * a for contiguous float32 (args: a, [b,] out); declines anything else */
static tb_status scaled(const tb_value *a, const tb_value *out, float factor) {
  if (!contiguous_f32(a) || !contiguous_f32(out)) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "opstest: twice: contiguous float32 only");
  }
  const float *in = a->as.tensor->data;
  float *result = out->as.tensor->data;
  for (int64_t i = 0; i < numel(out->as.tensor); i++) result[i] = factor * in[i];
  return TB_OK;
}

/* twice: (a, out) */
static tb_status twice(tb_stream stream, const tb_value *args, int32_t count) {
  (void)stream;
  return count == 2 ? scaled(&args[0], &args[1], 2.0f) : TB_ERROR_INVALID_ARGUMENT;
}

/* twice_backward: (grad, a, grad_a) */
static tb_status twice_backward(tb_stream stream, const tb_value *args, int32_t count) {
  (void)stream;
  return count == 3 ? scaled(&args[0], &args[2], 2.0f) : TB_ERROR_INVALID_ARGUMENT;
}

static tb_status same_shape(const tb_value *args, int32_t count, tb_shape *outputs,
                            int32_t num_outputs) {
  (void)count;
  for (int32_t k = 0; k < num_outputs; k++) {
    outputs[k].dtype = args[0].as.tensor->dtype;
    outputs[k].ndim = args[0].as.tensor->ndim;
    for (int32_t d = 0; d < outputs[k].ndim; d++) outputs[k].sizes[d] = args[0].as.tensor->sizes[d];
  }
  return TB_OK;
}

#if defined(CUSTOM_BAD_SCHEMA)
#define SCHEMA "opstest::twice(Tensor a -> Tensor"
#elif defined(CUSTOM_NO_NAMESPACE)
#define SCHEMA "twice(Tensor a) -> Tensor"
#elif defined(CUSTOM_ATEN_NAMESPACE)
#define SCHEMA "aten::twice(Tensor a) -> Tensor"
#elif defined(CUSTOM_MUTATES)
#define SCHEMA "opstest::twice(Tensor(a!) a) -> Tensor(a!)"
#else
#define SCHEMA "opstest::twice(Tensor a) -> Tensor"
#endif

#if defined(CUSTOM_UNKNOWN_BACKWARD)
#define BACKWARD "opstest::twice_backwards"
#else
#define BACKWARD "twice_backward"
#endif

#if defined(CUSTOM_BAD_BACKWARD) /* forgets the forward's argument */
#define BACKWARD_SCHEMA "opstest::twice_backward(Tensor grad) -> Tensor"
#else
#define BACKWARD_SCHEMA "opstest::twice_backward(Tensor grad, Tensor a) -> Tensor"
#endif

static const tb_custom_op k_twice = {
    .struct_size = sizeof(tb_custom_op),
    .schema = SCHEMA,
    .fn = twice,
#if !defined(CUSTOM_NO_SHAPE)
    .shape = same_shape,
#endif
    .backward = BACKWARD,
};
static const tb_custom_op k_twice_backward = {
    .struct_size = sizeof(tb_custom_op),
    .schema = BACKWARD_SCHEMA,
    .fn = twice_backward,
    .shape = same_shape,
};
#if defined(CUSTOM_DUPLICATE)
static const tb_custom_op *const k_ops[] = {&k_twice, &k_twice_backward, &k_twice};
#else
static const tb_custom_op *const k_ops[] = {&k_twice, &k_twice_backward};
#endif
#if defined(CUSTOM_REPEATED_EXTENSION)
static const tb_custom_ops_extension k_first = {
    .base = {sizeof(tb_custom_ops_extension), TB_EXTENSION_CUSTOM_OPS, NULL},
    .count = 0,
    .ops = NULL};
#define NEXT &k_first.base
#else
#define NEXT NULL
#endif
static const tb_custom_ops_extension k_extension = {
    .base = {sizeof(tb_custom_ops_extension), TB_EXTENSION_CUSTOM_OPS, NEXT},
    .count = sizeof k_ops / sizeof k_ops[0],
    .ops = k_ops};
const tb_extension_base *tbv_extensions(void) { return &k_extension.base; }
