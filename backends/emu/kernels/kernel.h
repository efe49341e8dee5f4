/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * What emu's kernels share: argument capture (a kernel call's tb_values deep-copied into its
 * task, device addresses translated to shadow addresses), dtype conversions, the elementwise
 * iteration engine, and small helpers for strided tensors.
 *
 * Every kernel has two halves.  The enqueue half runs on the caller's thread: it validates the
 * arguments (returning TB_ERROR_NOT_SUPPORTED for cases it does not implement, so that the call
 * runs on the CPU fallback) and enqueues a task.  The run half runs later on the stream's
 * worker, reading only the task's own copy of the arguments.
 */
#ifndef TORCH_BACKEND_EMU_KERNEL_H_
#define TORCH_BACKEND_EMU_KERNEL_H_

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../emu.h"

/* Marks a hot loop to be compiled for several x86-64 levels (AVX-512, AVX2, baseline); the
 * dynamic loader picks the one the machine runs (GNU ifunc).  Elsewhere it does nothing. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__) && \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define EMU_HOT_LOOP __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define EMU_HOT_LOOP
#endif

#define EMU_MAX_DIMS 12

/* ---- captured arguments ---- */

typedef struct emu_tensor {
  char *data; /* shadow address of element (0, ..., 0); NULL when empty or absent */
  tb_dtype dtype;
  int32_t ndim; /* -1: absent (None) */
  int64_t numel;
  int64_t sizes[EMU_MAX_DIMS];
  int64_t strides[EMU_MAX_DIMS]; /* in elements */
} emu_tensor;

typedef struct emu_arg {
  tb_value_kind kind;
  union {
    emu_tensor *tensor;
    struct {
      emu_tensor *items;
      int64_t count;
    } tensors;
    int64_t i;
    double f;
    int b;
    struct {
      int64_t *items;
      int64_t count;
    } ints;
    struct {
      int *items;
      int64_t count;
    } bools;
    char *string;
    tb_dtype dtype;
    struct {
      uint64_t seed;
      uint64_t offset;
      const uint64_t *device_state; /* host view of tb_rng_key::device_state, or NULL */
    } rng;
  } as;
} emu_arg;

/* The task payload of a kernel call: its arguments, then `scratch_size` zeroed bytes the
 * enqueue half may use to pass precomputed state to the run half. */
typedef struct emu_call {
  int32_t count;
  emu_arg *args;
  void *scratch;
} emu_call;

/* Checks the argument kinds ("T" tensor, "t" optional tensor, "L" tensor list, "i" int, "f"
 * float, "n" number: int/float/bool, "b" bool, "I" int list, "B" bool list, "s" string,
 * "d" dtype, "r" rng, "?" anything; upper/lower case as listed) and that every tensor has at
 * most EMU_MAX_DIMS dimensions and lies in device memory.  Returns TB_OK or the failure. */
tb_status emu_check_args(const char *kernel, const tb_value *args, int32_t count,
                         const char *kinds);

/* Deep-copies the arguments into a new task running `fn`; enqueues it on `stream`. */
tb_status emu_launch(const char *kernel, tb_stream stream, const tb_value *args, int32_t count,
                     tbk_task_fn fn, size_t scratch_size, const void *scratch);

static inline emu_call *emu_call_of(tbk_task *task) { return (emu_call *)task->payload; }

/* Numeric value of an int/float/bool argument. */
static inline double emu_arg_double(const emu_arg *a) {
  return a->kind == TB_VALUE_DOUBLE ? a->as.f
         : a->kind == TB_VALUE_INT  ? (double)a->as.i
                                    : (double)a->as.b;
}
static inline int64_t emu_arg_int(const emu_arg *a) {
  return a->kind == TB_VALUE_INT      ? a->as.i
         : a->kind == TB_VALUE_DOUBLE ? (int64_t)a->as.f
                                      : (int64_t)a->as.b;
}
static inline bool emu_is_number(const tb_value *v) {
  return v->kind == TB_VALUE_INT || v->kind == TB_VALUE_DOUBLE || v->kind == TB_VALUE_BOOL;
}

/* ---- dtypes ---- */

static inline size_t emu_itemsize(tb_dtype d) {
  static const size_t sizes[TB_DTYPE_COUNT] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  return sizes[d];
}
static inline bool emu_is_floating(tb_dtype d) {
  return d == TB_DTYPE_FLOAT16 || d == TB_DTYPE_BFLOAT16 || d == TB_DTYPE_FLOAT32 ||
         d == TB_DTYPE_FLOAT64;
}
#define EMU_FLOATS                                                   \
  (TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64) | \
   TB_DTYPE_BIT(TB_DTYPE_FLOAT16) | TB_DTYPE_BIT(TB_DTYPE_BFLOAT16))
#define EMU_INTS                                                                               \
  (TB_DTYPE_BIT(TB_DTYPE_UINT8) | TB_DTYPE_BIT(TB_DTYPE_INT8) | TB_DTYPE_BIT(TB_DTYPE_INT16) | \
   TB_DTYPE_BIT(TB_DTYPE_INT32) | TB_DTYPE_BIT(TB_DTYPE_INT64))
#define EMU_ALL_TYPES (EMU_FLOATS | EMU_INTS | TB_DTYPE_BIT(TB_DTYPE_BOOL))

static inline float emu_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else { /* subnormal: normalise */
    exponent = 113;
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      exponent--;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint16_t emu_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((abs >> 13) & 0x3ffu)); /* nan */
  if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to infinity */
  uint32_t value, rem, half;
  if (abs >= 0x38800000u) { /* a normal half: rebias the exponent, round the mantissa */
    value = (abs - 0x38000000u) >> 13;
    rem = abs & 0x1fffu;
    half = 0x1000u;
  } else { /* a subnormal half, in units of 2^-24 */
    if (abs < 0x33000000u) return (uint16_t)sign;
    uint32_t shift = 126 - (abs >> 23);
    uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    value = mantissa >> shift;
    rem = mantissa & ((1u << shift) - 1);
    half = 1u << (shift - 1);
  }
  if (rem > half || (rem == half && (value & 1u))) value++;
  return (uint16_t)(sign | value);
}

static inline float emu_bf16_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static inline uint16_t emu_float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet nan */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

/* Element `p` of dtype `d` as a double / int64 / bool, and the reverse. */
double emu_load_double(const char *p, tb_dtype d);
int64_t emu_load_int(const char *p, tb_dtype d);
void emu_store_double(char *p, tb_dtype d, double v);
void emu_store_int(char *p, tb_dtype d, int64_t v);

/* ---- strided tensors ---- */

/* True when the two kernel arguments have the same sizes. */
static inline bool emu_same_shape(const tb_tensor *a, const tb_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (a->sizes[d] != b->sizes[d]) return false;
  }
  return true;
}

/* Whether the byte ranges that kernel arguments a and b span overlap (false when either has no
 * data). */
bool emu_spans_overlap(const tb_tensor *a, const tb_tensor *b);
/* True when the tensor's elements are contiguous in row-major order. */
bool emu_is_contiguous(const emu_tensor *t);
/* The tensor's elements in row-major order: its own data when contiguous, else a fresh
 * malloc'd copy stored in *scratch (free it; NULL when not needed).  NULL only when out of
 * host memory (an empty tensor gives a non-NULL pointer that must not be read). */
const char *emu_contiguous(const emu_tensor *t, void **scratch);
/* The same, converted to `dtype`: t's own data only when contiguous and of that dtype. */
const char *emu_contiguous_as(const emu_tensor *t, tb_dtype dtype, void **scratch);
/* Copies t's elements, contiguous in row-major order and of t's dtype, from `src` into t's
 * strided layout. */
void emu_scatter(const emu_tensor *t, const char *src);
/* The same from elements of `dtype`, converting. */
void emu_scatter_from(const emu_tensor *t, const char *src, tb_dtype dtype);
/* Where a kernel writes t's elements in row-major order as `dtype`: t's own data when contiguous
 * and of that dtype, else a malloc'd buffer (NULL when out of host memory).  emu_output_end
 * then copies the buffer into t (when `store`) and frees it; for t's own data it does nothing. */
char *emu_output_begin(const emu_tensor *t, tb_dtype dtype);
void emu_output_end(const emu_tensor *t, char *buffer, tb_dtype dtype, bool store);
/* Copies src's elements (any layout and dtype, same shape or broadcastable) into dst,
 * converting dtypes. */
void emu_copy_tensor(const emu_tensor *dst, const emu_tensor *src);

/* ---- the elementwise engine ---- */

#define EW_MAX_OPERANDS 6

/* A 1-d inner loop: `data[k]` is operand k's first element (0: the output), `strides[k]` its
 * step in bytes, `n` elements.  `params` is the op's constant block. */
typedef void (*ew_loop)(char **data, const int64_t *strides, int64_t n, const void *params);

typedef struct ew_params {
  double f[4];
  int64_t i[4];
} ew_params;

/* Runs `loop` over every element of `out`, with `inputs[k]` (same shape as out; scalars are
 * expressed as tensors with all strides 0) as operands 1..count.  Splits large loops across
 * emu's worker pool. */
void ew_run(const emu_tensor *out, const emu_tensor *inputs, int count, ew_loop loop,
            const ew_params *params);

/* An operand for ew_run: argument `a` as a tensor, or, for a number, a broadcast constant of
 * dtype `dtype` shaped like `like` whose value is written into `storage` (16 bytes). */
void ew_operand(const emu_arg *a, tb_dtype dtype, const emu_tensor *like, emu_tensor *operand,
                char *storage);

/* ---- matrix products (blas.c) ---- */

/* c = alpha * op(a) @ op(b) + beta * c for row-major float32 matrices (float64 when `dtype` is
 * TB_DTYPE_FLOAT64): op(a) is m x k, op(b) k x n, each stored transposed when trans_*.  One
 * single-threaded BLAS call on the calling thread: callers split large products over emu's
 * pool.  Every size and leading dimension must fit in an int; k may be 0 (c = beta * c). */
void emu_gemm(tb_dtype dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
              double alpha, const void *a, int64_t lda, const void *b, int64_t ldb, double beta,
              void *c, int64_t ldc);

/* Philox-4x32-10 blocks for `n` (<= EMU_PHILOX_BATCH) consecutive counters from `counter`
 * under `key`: out[w][k] is word w of block counter + k (random.c; attention.c's dropout uses
 * the same generator). */
enum { EMU_PHILOX_BATCH = 64 };
void emu_philox_batch(uint64_t key, uint64_t counter, int n, uint32_t out[4][EMU_PHILOX_BATCH]);

/* ---- the kernel table ---- */

/* Kernel tables of each file, NULL-terminated. */
extern const tb_kernel *const emu_elementwise_kernels[];
extern const tb_kernel *const emu_reduce_kernels[];
extern const tb_kernel *const emu_softmax_kernels[];
extern const tb_kernel *const emu_blas_kernels[];
extern const tb_kernel *const emu_index_kernels[];
extern const tb_kernel *const emu_norm_kernels[];
extern const tb_kernel *const emu_loss_kernels[];
extern const tb_kernel *const emu_random_kernels[];
extern const tb_kernel *const emu_optim_kernels[];
extern const tb_kernel *const emu_copy_kernels[];
extern const tb_kernel *const emu_conv_kernels[];
extern const tb_kernel *const emu_rnn_kernels[];
extern const tb_kernel *const emu_batchnorm_kernels[];
extern const tb_kernel *const emu_pooling_kernels[];
extern const tb_kernel *const emu_upsample_kernels[];
extern const tb_kernel *const emu_shape_kernels[];
extern const tb_kernel *const emu_attention_kernels[];
extern const tb_kernel *const emu_quantize_kernels[];
extern const tb_kernel *const emu_sort_kernels[];

/* The context of the kernel call running on this thread, set by the entry EMU_KERNEL generates
 * for the duration of the kernel function: the shared helpers above (emu_check_args) reach the
 * context's device memory through it, so that kernel functions keep the form
 * (stream, args, count) and need not pass the context along.  NULL outside kernel calls. */
extern _Thread_local emu_context *emu_kernel_context;

/* The ABI entry of every kernel: checks that the call's stream belongs to `ctx`, then runs
 * `function` with the call's stream and arguments and emu_kernel_context set to `ctx`. */
tb_status emu_kernel_entry(tb_context ctx, const tb_kernel_call *call,
                           tb_status (*function)(tb_stream, const tb_value *, int32_t));

/* emu's custom operators (vendor.h, ABI 2.0), defined with their kernels and published by
 * emu_extensions() (registry.c). */
extern const tb_custom_op emu_op_mymuladd;
extern const tb_custom_op emu_op_mymuladd_backward;
extern const tb_custom_op emu_op_rms_norm;
extern const tb_custom_op emu_op_rms_norm_backward;

/* The tb_kernel_fn entry of `function` (tb_status (tb_stream, const tb_value *, int32_t)), named
 * `symbol`_entry, around emu_kernel_entry. */
#define EMU_KERNEL_ENTRY(symbol, function)                                      \
  static tb_status symbol##_entry(tb_context ctx, const tb_kernel_call *call) { \
    return emu_kernel_entry(ctx, call, function);                               \
  }

/* Publishes `function` as kernel `symbol` for operator `opname`, written for the ATen `schema`
 * (tb_kernel::schema, checked against the running torch's when torch_backend loads emu). */
#define EMU_KERNEL(symbol, opname, function, dtype_mask, schema) \
  EMU_KERNEL_ENTRY(symbol, function)                             \
  static const tb_kernel symbol = {                              \
      sizeof(tb_kernel), opname, symbol##_entry, dtype_mask, 0, schema, NULL}

#endif /* TORCH_BACKEND_EMU_KERNEL_H_ */
