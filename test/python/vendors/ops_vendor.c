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
 *                        argument no tb_value carries); three whose outputs the boxed wrapper
 *                        cannot provide: _fused_moving_avg_obs_fq_helper (writes arguments and
 *                        returns new tensors), sparse_dim (returns an int), _foreach_add.List_out
 *                        (a list of out tensors); maximum.out stating minimum.out's schema.
 *                        Refused kernels write 1e9 everywhere,
 *                        so a call that reached one would show in the results.  Custom
 *                        operators opstest::twice(Tensor a) -> Tensor (2 * a) and its backward,
 *                        for contiguous float32 only: they decline anything else; and
 *                        opstest::broken(Tensor a) -> Tensor, whose shape function gives 17
 *                        dimensions.
 *   WRONG_MUL            as (none), but mul.out adds 1 to every product: a kernel that computes
 *                        wrong numbers, for python -m torch_backend.check_kernels to catch
 *                        (test_check_kernels.py).
 *   FAILING_MUL          as (none), but mul.out fails every call it accepts with
 *                        TB_ERROR_INTERNAL and a message (tb_fake_set_error): a kernel that
 *                        always raises, which check_kernels must report as failing, not as
 *                        "no samples" (test_check_kernels.py).
 *   FAULTING_MUL         as (none), but mul.out faults the device after computing
 *                        (tb_stream_api::inject_fault on the call's stream) and returns TB_OK: a
 *                        fault a later call reports, as a device-side error would be on a real
 *                        device (test_check_kernels.py).
 *   WRONG_SGD            as (none), plus a _fused_sgd_ that forgets momentum (param -= lr *
 *                        grad): an optimizer kernel no OpInfo reaches, whose generated samples
 *                        check_kernels must fail where momentum is set (test_check_kernels.py).
 *   FOREACH              as (none), plus two foreach kernels no OpInfo reaches as they are
 *                        published: _foreach_mul_.Scalar (right) and _foreach_add_.List, which
 *                        ignores alpha (wrong where alpha != 1), for check_kernels' generated
 *                        samples to pass and fail (test_check_kernels.py).
 *   CUSTOM_<PROBLEM>     no kernels; opstest::twice and its backward, with that problem:
 *                        BAD_SCHEMA, NO_NAMESPACE, ATEN_NAMESPACE, MUTATES, NO_SHAPE, NO_KERNEL,
 *                        NO_SCHEMA, NULL_OP, SMALL_OP, RETURNS_NOTHING, RETURNS_LIST,
 *                        LAYOUT_ARGUMENT, ALREADY_DEFINED, UNKNOWN_BACKWARD, BAD_BACKWARD,
 *                        DUPLICATE, REPEATED_EXTENSION, EXTENSION_CYCLE, SMALL_EXTENSION,
 *                        SMALL_BASE, NEGATIVE_COUNT.
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

/* Any CUSTOM_ variant: one broken custom-operator declaration, and no kernels. */
#if defined(CUSTOM_BAD_SCHEMA) || defined(CUSTOM_NO_NAMESPACE) ||                                  \
    defined(CUSTOM_ATEN_NAMESPACE) || defined(CUSTOM_MUTATES) || defined(CUSTOM_NO_SHAPE) ||       \
    defined(CUSTOM_NO_KERNEL) || defined(CUSTOM_NO_SCHEMA) || defined(CUSTOM_NULL_OP) ||           \
    defined(CUSTOM_SMALL_OP) || defined(CUSTOM_RETURNS_NOTHING) || defined(CUSTOM_RETURNS_LIST) || \
    defined(CUSTOM_LAYOUT_ARGUMENT) || defined(CUSTOM_ALREADY_DEFINED) ||                          \
    defined(CUSTOM_UNKNOWN_BACKWARD) || defined(CUSTOM_BAD_BACKWARD) ||                            \
    defined(CUSTOM_DUPLICATE) || defined(CUSTOM_REPEATED_EXTENSION) ||                             \
    defined(CUSTOM_EXTENSION_CYCLE) || defined(CUSTOM_SMALL_EXTENSION) ||                          \
    defined(CUSTOM_SMALL_BASE) || defined(CUSTOM_NEGATIVE_COUNT)
#define CUSTOM_VARIANT 1
#endif

#if !defined(CUSTOM_VARIANT)

/* mul.out(self, other, *, out): float32, contiguous, operands of out's shape (torch_backend's
 * compiled wrapper broadcasts them); fake's memory is host memory and its streams synchronous,
 * so the kernel computes at once. */
static tb_status mul_out(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  const tb_value *args = call->args;
  const int32_t count = call->num_args;
  if (count != 3 || !contiguous_f32(&args[0]) || !contiguous_f32(&args[1]) ||
      !contiguous_f32(&args[2])) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "opstest: mul.out: contiguous float32 only");
  }
#if defined(FAILING_MUL) /* the failure check_kernels must report */
  return tb_fake_set_error(TB_ERROR_INTERNAL, "opstest: mul.out: the kernel failed (FAILING_MUL)");
#endif
  const float *a = args[0].as.tensor->data, *b = args[1].as.tensor->data;
  float *out = args[2].as.tensor->data;
#if defined(WRONG_MUL) /* the mistake check_kernels must catch */
  for (int64_t i = 0; i < numel(args[2].as.tensor); i++) out[i] = a[i] * b[i] + 1.0f;
#else
  for (int64_t i = 0; i < numel(args[2].as.tensor); i++) out[i] = a[i] * b[i];
#endif
#if defined(FAULTING_MUL) /* found while the work ran: reported by the calls that follow */
  return tbv_stream_inject_fault(ctx, call->stream, "opstest: mul.out: bad address (FAULTING_MUL)");
#else
  return TB_OK;
#endif
}

/* What a refused kernel would do if it were ever called: garbage in every output. */
static tb_status poison(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  const tb_value *args = call->args;
  const int32_t count = call->num_args;
  for (int32_t i = 0; i < count; i++) {
    if (contiguous_f32(&args[i])) {
      float *data = args[i].as.tensor->data;
      for (int64_t k = 0; k < numel(args[i].as.tensor); k++) data[k] = 1e9f;
    }
  }
  return TB_OK;
}

static tb_status decline(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  (void)call;
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

KERNEL(k_writes_and_returns, "_fused_moving_avg_obs_fq_helper", poison,
       "_fused_moving_avg_obs_fq_helper(Tensor self, Tensor observer_on, Tensor fake_quant_on, "
       "Tensor(a!) running_min, Tensor(b!) running_max, Tensor(c!) scale, Tensor(d!) zero_point, "
       "float averaging_const, int quant_min, int quant_max, int ch_axis, bool "
       "per_row_fake_quant=False, bool symmetric_quant=False) -> (Tensor output, Tensor mask)");
KERNEL(k_returns_int, "sparse_dim", poison, "sparse_dim(Tensor self) -> int");
/* the schema of another operator */
KERNEL(k_misnamed, "maximum.out", poison,
       "minimum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
KERNEL(k_list_out, "_foreach_add.List_out", poison,
       "_foreach_add.List_out(Tensor[] self, Tensor[] other, *, Scalar alpha=1, Tensor(a!)[] out) "
       "-> ()");

#if defined(WRONG_SGD) /* the mistake the generated optimizer samples must catch */
/* _fused_sgd_(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr, ...): only
 * param -= lr * grad, contiguous float32, no grad_scale or found_inf. */
static tb_status forgetful_sgd(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  const tb_value *args = call->args;
  if (call->num_args != 12 || args[0].kind != TB_VALUE_TENSOR_LIST ||
      args[5].kind != TB_VALUE_DOUBLE || args[10].kind != TB_VALUE_NONE ||
      args[11].kind != TB_VALUE_NONE) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "opstest: _fused_sgd_: no grad scaler");
  }
  for (int64_t k = 0; k < args[0].as.tensors.count; k++) {
    const tb_value param = {.kind = TB_VALUE_TENSOR, .as.tensor = args[0].as.tensors.items[k]};
    const tb_value grad = {.kind = TB_VALUE_TENSOR, .as.tensor = args[1].as.tensors.items[k]};
    if (!contiguous_f32(&param) || !contiguous_f32(&grad)) {
      return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "opstest: _fused_sgd_: float32 only");
    }
  }
  for (int64_t k = 0; k < args[0].as.tensors.count; k++) {
    float *p = args[0].as.tensors.items[k]->data;
    const float *g = args[1].as.tensors.items[k]->data;
    for (int64_t i = 0; i < numel(args[0].as.tensors.items[k]); i++) {
      p[i] -= (float)args[5].as.f * g[i];
    }
  }
  return TB_OK;
}
KERNEL(k_sgd, "_fused_sgd_", forgetful_sgd,
       "_fused_sgd_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] momentum_buffer_list, *, "
       "float weight_decay, float momentum, float lr, float dampening, bool nesterov, bool "
       "maximize, bool is_first_step, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()");
#endif

#if defined(FOREACH)
/* Whether every element of list argument i is a contiguous float32 tensor. */
static bool f32_list(const tb_value *arg) {
  if (arg->kind != TB_VALUE_TENSOR_LIST) return false;
  for (int64_t k = 0; k < arg->as.tensors.count; k++) {
    const tb_value t = {.kind = TB_VALUE_TENSOR, .as.tensor = arg->as.tensors.items[k]};
    if (t.as.tensor == NULL || !contiguous_f32(&t)) return false;
  }
  return true;
}
/* _foreach_mul_.Scalar(Tensor(a!)[] self, Scalar scalar) -> (): self[k] *= scalar. */
static tb_status foreach_mul(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  const tb_value *args = call->args;
  if (call->num_args != 2 || !f32_list(&args[0]) ||
      (args[1].kind != TB_VALUE_DOUBLE && args[1].kind != TB_VALUE_INT)) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "opstest: _foreach_mul_: float32 only");
  }
  const double scalar = args[1].kind == TB_VALUE_DOUBLE ? args[1].as.f : (double)args[1].as.i;
  for (int64_t k = 0; k < args[0].as.tensors.count; k++) {
    float *x = args[0].as.tensors.items[k]->data;
    for (int64_t i = 0; i < numel(args[0].as.tensors.items[k]); i++) x[i] = (float)(x[i] * scalar);
  }
  return TB_OK;
}
/* _foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> (): wrong,
 * self[k] += other[k] whatever alpha says. */
static tb_status foreach_add(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  const tb_value *args = call->args;
  if (call->num_args != 3 || !f32_list(&args[0]) || !f32_list(&args[1])) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "opstest: _foreach_add_: float32 only");
  }
  for (int64_t k = 0; k < args[0].as.tensors.count; k++) {
    float *x = args[0].as.tensors.items[k]->data;
    const float *y = args[1].as.tensors.items[k]->data;
    for (int64_t i = 0; i < numel(args[0].as.tensors.items[k]); i++) x[i] += y[i];
  }
  return TB_OK;
}
KERNEL(k_foreach_mul, "_foreach_mul_.Scalar", foreach_mul,
       "_foreach_mul_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()");
KERNEL(k_foreach_add, "_foreach_add_.List", foreach_add,
       "_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()");
#endif

static const tb_kernel *const k_kernels[] = {
    &k_mul,         &k_add,         &k_hardtanh,   &k_sub,
    &k_div,         &k_unknown,     &k_empty_like, &k_writes_and_returns,
    &k_returns_int, &k_list_out,    &k_misnamed,
#if defined(WRONG_SGD)
    &k_sgd,
#endif
#if defined(FOREACH)
    &k_foreach_mul, &k_foreach_add,
#endif
};
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

/* twice: (a, out); unused by the variant without a kernel */
__attribute__((unused)) static tb_status twice(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  const tb_value *args = call->args;
  const int32_t count = call->num_args;
  return count == 2 ? scaled(&args[0], &args[1], 2.0f) : TB_ERROR_INVALID_ARGUMENT;
}

/* twice_backward: (grad, a, grad_a) */
static tb_status twice_backward(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  const tb_value *args = call->args;
  const int32_t count = call->num_args;
  return count == 3 ? scaled(&args[0], &args[2], 2.0f) : TB_ERROR_INVALID_ARGUMENT;
}

static tb_status same_shape(tb_context ctx, const tb_value *args, int32_t count, tb_shape *outputs,
                            int32_t num_outputs) {
  (void)ctx;
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
#elif defined(CUSTOM_RETURNS_NOTHING)
#define SCHEMA "opstest::twice(Tensor a) -> ()"
#elif defined(CUSTOM_RETURNS_LIST)
#define SCHEMA "opstest::twice(Tensor a) -> Tensor[]"
#elif defined(CUSTOM_LAYOUT_ARGUMENT)
#define SCHEMA "opstest::twice(Tensor a, Layout layout) -> Tensor"
#elif defined(CUSTOM_ALREADY_DEFINED) /* an operator PyTorch itself defines */
#define SCHEMA "profiler::_record_function_enter(str name, str? args=None) -> Tensor"
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
#if defined(CUSTOM_SMALL_OP)
    .struct_size = TB_STRUCT_SIZE(tb_custom_op, dtypes),
#else
    .struct_size = sizeof(tb_custom_op),
#endif
#if !defined(CUSTOM_NO_SCHEMA)
    .schema = SCHEMA,
#endif
#if !defined(CUSTOM_NO_KERNEL)
    .fn = twice,
#endif
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
#if !defined(CUSTOM_VARIANT)
static tb_status too_many_dims(tb_context ctx, const tb_value *args, int32_t count,
                               tb_shape *outputs, int32_t num_outputs) {
  (void)ctx;
  (void)args, (void)count, (void)num_outputs;
  outputs[0].dtype = TB_DTYPE_FLOAT32;
  outputs[0].ndim = TB_SHAPE_MAX_DIMS + 1;
  return TB_OK;
}
static const tb_custom_op k_broken = {
    .struct_size = sizeof(tb_custom_op),
    .schema = "opstest::broken(Tensor a) -> Tensor",
    .fn = twice,
    .shape = too_many_dims,
};
static const tb_custom_op *const k_ops[] = {&k_twice, &k_twice_backward, &k_broken};
#elif defined(CUSTOM_DUPLICATE)
static const tb_custom_op *const k_ops[] = {&k_twice, &k_twice_backward, &k_twice};
#elif defined(CUSTOM_NULL_OP)
static const tb_custom_op *const k_ops[] = {&k_twice_backward, NULL, &k_twice};
#else
static const tb_custom_op *const k_ops[] = {&k_twice, &k_twice_backward};
#endif
#if defined(CUSTOM_REPEATED_EXTENSION)
static const tb_custom_ops_extension k_first = {
    .base = {sizeof(tb_custom_ops_extension), TB_EXTENSION_CUSTOM_OPS, NULL},
    .count = 0,
    .ops = NULL};
#define NEXT &k_first.base
#elif defined(CUSTOM_EXTENSION_CYCLE) /* an extension of a type torch_backend skips, looping */
static const tb_extension_base k_loop = {sizeof(tb_extension_base), (tb_extension_type)99, &k_loop};
#define NEXT &k_loop
#elif defined(CUSTOM_SMALL_BASE)
static const tb_extension_base k_small = {sizeof(tb_extension_base) - 1, (tb_extension_type)99,
                                          NULL};
#define NEXT &k_small
#else
#define NEXT NULL
#endif
static const tb_custom_ops_extension k_extension = {
#if defined(CUSTOM_SMALL_EXTENSION)
    .base = {sizeof(tb_extension_base), TB_EXTENSION_CUSTOM_OPS, NEXT},
#else
    .base = {sizeof(tb_custom_ops_extension), TB_EXTENSION_CUSTOM_OPS, NEXT},
#endif
#if defined(CUSTOM_NEGATIVE_COUNT)
    .count = -1,
#else
    .count = sizeof k_ops / sizeof k_ops[0],
#endif
    .ops = k_ops};
const tb_extension_base *tbv_extensions(void) { return &k_extension.base; }
