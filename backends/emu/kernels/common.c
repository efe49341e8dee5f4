/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Shared machinery of emu's kernels: argument checking and capture, dtype conversion, strided
 * tensor helpers and the elementwise engine.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>

#include "kernel.h"

/* ------------------------------------------------------------------------------------------ */
/* Arguments                                                                                    */

static int64_t numel_of(const tb_tensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++) n *= t->sizes[d];
  return n;
}

_Thread_local emu_context *emu_kernel_context;

tb_status emu_kernel_entry(tb_context ctx, const tb_kernel_call *call,
                           tb_status (*function)(tb_stream, const tb_value *, int32_t)) {
  const char *name = call->kernel != NULL ? call->kernel->name : "kernel";
  tb_status status = tbk_check_stream(ctx, call->stream, name);
  if (status != TB_OK) return status;
  emu_context *outer = emu_kernel_context; /* a kernel never calls another, but be exact */
  emu_kernel_context = ctx;
  status = function(call->stream, call->args, call->num_args);
  emu_kernel_context = outer;
  return status;
}

/* Checks one tensor descriptor: rank, dtype, and that its extent lies in device memory. */
static tb_status check_tensor(const char *kernel, int32_t index, const tb_tensor *t) {
  if (t == NULL) return TB_OK; /* absent element of a Tensor?[] */
  if (t->struct_size < TB_STRUCT_SIZE(tb_tensor, strides) || t->ndim < 0) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: %s: argument %d is a malformed tensor (struct_size %zu, ndim %d)", kernel,
                    (int)index, t->struct_size, (int)t->ndim);
  }
  if (t->ndim > EMU_MAX_DIMS) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: argument %d has %d dimensions (at most %d)",
                    kernel, (int)index, (int)t->ndim, EMU_MAX_DIMS);
  }
  if ((int)t->dtype < 0 || t->dtype >= TB_DTYPE_COUNT) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: argument %d has unknown dtype %d", kernel,
                    (int)index, (int)t->dtype);
  }
  int64_t numel = numel_of(t);
  if (numel == 0) return TB_OK;
  int64_t last = 0;
  for (int32_t d = 0; d < t->ndim; d++) {
    if (t->strides[d] < 0) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: argument %d has a negative stride", kernel,
                      (int)index);
    }
    last += (t->sizes[d] - 1) * t->strides[d];
  }
  size_t extent = (size_t)(last + 1) * emu_itemsize(t->dtype);
  const emu_context *ctx = emu_kernel_context;
  if (t->device < 0 || t->device >= ctx->config.device_count ||
      !emu_is_device_range(ctx, t->device, t->data, extent)) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: %s: argument %d ([%p, +%zu) on device %d) is not device memory", kernel,
                    (int)index, t->data, extent, (int)t->device);
  }
  return TB_OK;
}

tb_status emu_check_args(const char *kernel, const tb_value *args, int32_t count,
                         const char *kinds) {
  if ((int32_t)strlen(kinds) != count) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: expected %zu arguments, got %d", kernel,
                    strlen(kinds), (int)count);
  }
  for (int32_t i = 0; i < count; i++) {
    const tb_value *v = &args[i];
    bool ok;
    switch (kinds[i]) {
      case 'T':
        ok = v->kind == TB_VALUE_TENSOR;
        break;
      case 't':
        ok = v->kind == TB_VALUE_TENSOR || v->kind == TB_VALUE_NONE;
        break;
      case 'L':
        ok = v->kind == TB_VALUE_TENSOR_LIST;
        break;
      case 'i':
        ok = v->kind == TB_VALUE_INT;
        break;
      case 'f':
        ok = v->kind == TB_VALUE_DOUBLE || v->kind == TB_VALUE_INT;
        break;
      case 'n':
        ok = emu_is_number(v);
        break;
      case 'N':
        ok = emu_is_number(v) || v->kind == TB_VALUE_NONE;
        break;
      case 'b':
        ok = v->kind == TB_VALUE_BOOL;
        break;
      case 'I':
        ok = v->kind == TB_VALUE_INT_LIST;
        break;
      case 'J':
        ok = v->kind == TB_VALUE_INT_LIST || v->kind == TB_VALUE_NONE;
        break;
      case 'B':
        ok = v->kind == TB_VALUE_BOOL_LIST;
        break;
      case 's':
        ok = v->kind == TB_VALUE_STRING;
        break;
      case 'd':
        ok = v->kind == TB_VALUE_DTYPE || v->kind == TB_VALUE_NONE;
        break;
      case 'r':
        ok = v->kind == TB_VALUE_RNG;
        break;
      case 'x':
        ok = v->kind == TB_VALUE_TENSOR || emu_is_number(v);
        break;
      case '?':
        ok = true;
        break;
      default:
        ok = false;
        break;
    }
    if (!ok) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: argument %d has kind %d, expected '%c'",
                      kernel, (int)i, (int)v->kind, kinds[i]);
    }
    if (v->kind == TB_VALUE_TENSOR) {
      tb_status status = check_tensor(kernel, i, v->as.tensor);
      if (status != TB_OK) return status;
    } else if (v->kind == TB_VALUE_TENSOR_LIST) {
      for (int64_t k = 0; k < v->as.tensors.count; k++) {
        tb_status status = check_tensor(kernel, i, v->as.tensors.items[k]);
        if (status != TB_OK) return status;
      }
    }
  }
  return TB_OK;
}

static void capture_tensor(const emu_context *ctx, emu_tensor *dst, const tb_tensor *src) {
  memset(dst, 0, sizeof *dst);
  dst->ndim = -1; /* absent (NULL in a Tensor?[]) */
  if (src == NULL) return;
  dst->ndim = src->ndim;
  dst->dtype = src->dtype;
  dst->numel = numel_of(src);
  for (int32_t d = 0; d < src->ndim; d++) {
    dst->sizes[d] = src->sizes[d];
    dst->strides[d] = src->strides[d];
  }
  dst->data = dst->numel == 0 ? NULL : emu_host(ctx, src->device, src->data);
}

static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

tb_status emu_launch(const char *kernel, tb_stream stream, const tb_value *args, int32_t count,
                     tbk_task_fn fn, size_t scratch_size, const void *scratch) {
  /* a faulted device accepts no work (vendor.h, "Device faults") */
  emu_context *ctx = emu_stream_context(stream);
  tb_status status = tbk_check_fault(ctx, tbk_stream_device(stream), kernel);
  if (status != TB_OK) return status;
  /* One allocation: emu_call | args | tensors | integer/bool lists | strings | scratch. */
  size_t tensors = 0, words = 0, bytes = 0;
  for (int32_t i = 0; i < count; i++) {
    const tb_value *v = &args[i];
    if (v->kind == TB_VALUE_TENSOR) tensors++;
    if (v->kind == TB_VALUE_TENSOR_LIST) tensors += (size_t)v->as.tensors.count;
    if (v->kind == TB_VALUE_INT_LIST) words += (size_t)v->as.ints.count;
    if (v->kind == TB_VALUE_BOOL_LIST) words += (size_t)v->as.bools.count;
    if (v->kind == TB_VALUE_STRING) bytes += strlen(v->as.string) + 1;
  }
  size_t size = align16(sizeof(emu_call)) + align16(count * sizeof(emu_arg)) +
                align16(tensors * sizeof(emu_tensor)) + align16(words * sizeof(int64_t)) +
                align16(bytes) + align16(scratch_size);
  tbk_task *task = tbk_task_new(stream, fn, size);
  if (task == NULL) return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: %s: out of memory", kernel);
  task->name = kernel;
  char *cursor = (char *)task->payload;
  emu_call *call = (emu_call *)cursor;
  cursor += align16(sizeof(emu_call));
  call->count = count;
  call->args = (emu_arg *)cursor;
  cursor += align16(count * sizeof(emu_arg));
  emu_tensor *tensor_space = (emu_tensor *)cursor;
  cursor += align16(tensors * sizeof(emu_tensor));
  int64_t *word_space = (int64_t *)cursor;
  cursor += align16(words * sizeof(int64_t));
  char *byte_space = cursor;
  cursor += align16(bytes);
  call->scratch = scratch_size ? cursor : NULL;
  if (scratch_size) {
    if (scratch != NULL) {
      memcpy(cursor, scratch, scratch_size);
    } else {
      memset(cursor, 0, scratch_size);
    }
  }
  for (int32_t i = 0; i < count; i++) {
    const tb_value *v = &args[i];
    emu_arg *a = &call->args[i];
    memset(a, 0, sizeof *a);
    a->kind = v->kind;
    switch (v->kind) {
      case TB_VALUE_TENSOR:
        a->as.tensor = tensor_space++;
        capture_tensor(ctx, a->as.tensor, v->as.tensor);
        break;
      case TB_VALUE_TENSOR_LIST:
        a->as.tensors.items = tensor_space;
        a->as.tensors.count = v->as.tensors.count;
        for (int64_t k = 0; k < v->as.tensors.count; k++) {
          capture_tensor(ctx, tensor_space++, v->as.tensors.items[k]);
        }
        break;
      case TB_VALUE_INT:
        a->as.i = v->as.i;
        break;
      case TB_VALUE_DOUBLE:
        a->as.f = v->as.f;
        break;
      case TB_VALUE_BOOL:
        a->as.b = v->as.b;
        break;
      case TB_VALUE_INT_LIST:
        a->as.ints.items = word_space;
        a->as.ints.count = v->as.ints.count;
        for (int64_t k = 0; k < v->as.ints.count; k++) *word_space++ = v->as.ints.items[k];
        break;
      case TB_VALUE_BOOL_LIST:
        a->as.bools.items = (int *)word_space;
        a->as.bools.count = v->as.bools.count;
        for (int64_t k = 0; k < v->as.bools.count; k++) {
          ((int *)word_space)[k] = v->as.bools.items[k];
        }
        word_space += v->as.bools.count;
        break;
      case TB_VALUE_STRING: {
        size_t length = strlen(v->as.string) + 1;
        memcpy(byte_space, v->as.string, length);
        a->as.string = byte_space;
        byte_space += length;
        break;
      }
      case TB_VALUE_DTYPE:
        a->as.dtype = v->as.dtype;
        break;
      case TB_VALUE_RNG:
        a->as.rng.seed = v->as.rng.seed;
        a->as.rng.offset = v->as.rng.offset;
        a->as.rng.device_state =
            v->as.rng.device_state == NULL
                ? NULL
                : emu_host(ctx, tbk_stream_device(stream), v->as.rng.device_state);
        break;
      case TB_VALUE_NONE:
        break;
    }
  }
  return tbk_stream_enqueue(stream, task);
}

/* ------------------------------------------------------------------------------------------ */
/* dtype conversion                                                                             */

double emu_load_double(const char *p, tb_dtype d) {
  switch (d) {
    case TB_DTYPE_BOOL:
      return *(const uint8_t *)p ? 1.0 : 0.0;
    case TB_DTYPE_UINT8:
      return *(const uint8_t *)p;
    case TB_DTYPE_INT8:
      return *(const int8_t *)p;
    case TB_DTYPE_INT16:
      return *(const int16_t *)p;
    case TB_DTYPE_INT32:
      return *(const int32_t *)p;
    case TB_DTYPE_INT64:
      return (double)*(const int64_t *)p;
    case TB_DTYPE_FLOAT16:
      return emu_half_to_float(*(const uint16_t *)p);
    case TB_DTYPE_BFLOAT16:
      return emu_bf16_to_float(*(const uint16_t *)p);
    case TB_DTYPE_FLOAT32:
      return *(const float *)p;
    case TB_DTYPE_FLOAT64:
      return *(const double *)p;
    default:
      return 0;
  }
}

int64_t emu_load_int(const char *p, tb_dtype d) {
  switch (d) {
    case TB_DTYPE_BOOL:
      return *(const uint8_t *)p ? 1 : 0;
    case TB_DTYPE_UINT8:
      return *(const uint8_t *)p;
    case TB_DTYPE_INT8:
      return *(const int8_t *)p;
    case TB_DTYPE_INT16:
      return *(const int16_t *)p;
    case TB_DTYPE_INT32:
      return *(const int32_t *)p;
    case TB_DTYPE_INT64:
      return *(const int64_t *)p;
    default:
      return (int64_t)emu_load_double(p, d);
  }
}

void emu_store_double(char *p, tb_dtype d, double v) {
  switch (d) {
    case TB_DTYPE_BOOL:
      *(uint8_t *)p = v != 0;
      break;
    case TB_DTYPE_UINT8:
    case TB_DTYPE_INT8:
    case TB_DTYPE_INT16:
    case TB_DTYPE_INT32:
    case TB_DTYPE_INT64:
      emu_store_int(p, d, (int64_t)v); /* truncated toward zero, then wrapped */
      break;
    case TB_DTYPE_FLOAT16:
      *(uint16_t *)p = emu_float_to_half((float)v);
      break;
    case TB_DTYPE_BFLOAT16:
      *(uint16_t *)p = emu_float_to_bf16((float)v);
      break;
    case TB_DTYPE_FLOAT32:
      *(float *)p = (float)v;
      break;
    case TB_DTYPE_FLOAT64:
      *(double *)p = v;
      break;
    default:
      break;
  }
}

void emu_store_int(char *p, tb_dtype d, int64_t v) {
  switch (d) {
    case TB_DTYPE_BOOL:
      *(uint8_t *)p = v != 0;
      break;
    case TB_DTYPE_UINT8:
      *(uint8_t *)p = (uint8_t)v;
      break;
    case TB_DTYPE_INT8:
      *(int8_t *)p = (int8_t)v;
      break;
    case TB_DTYPE_INT16:
      *(int16_t *)p = (int16_t)v;
      break;
    case TB_DTYPE_INT32:
      *(int32_t *)p = (int32_t)v;
      break;
    case TB_DTYPE_INT64:
      *(int64_t *)p = v;
      break;
    default:
      emu_store_double(p, d, (double)v);
      break;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* The elementwise engine                                                                       */

typedef struct ew_plan {
  int count; /* operands, output included */
  int ndim;  /* dimensions after coalescing, innermost first */
  int64_t sizes[EMU_MAX_DIMS];
  int64_t strides[EW_MAX_OPERANDS][EMU_MAX_DIMS]; /* bytes */
  char *data[EW_MAX_OPERANDS];
  ew_loop loop;
  const ew_params *params;
} ew_plan;

static void ew_range(void *context, int64_t begin, int64_t end) {
  const ew_plan *p = context;
  int64_t index[EMU_MAX_DIMS];
  char *ptr[EW_MAX_OPERANDS];
  int64_t inner[EW_MAX_OPERANDS];
  int64_t rest = begin;
  for (int d = 0; d < p->ndim; d++) {
    index[d] = rest % p->sizes[d];
    rest /= p->sizes[d];
  }
  for (int k = 0; k < p->count; k++) {
    ptr[k] = p->data[k];
    for (int d = 0; d < p->ndim; d++) ptr[k] += index[d] * p->strides[k][d];
    inner[k] = p->strides[k][0];
  }
  while (begin < end) {
    int64_t n = p->sizes[0] - index[0];
    if (n > end - begin) n = end - begin;
    p->loop(ptr, inner, n, p->params);
    begin += n;
    index[0] += n;
    for (int k = 0; k < p->count; k++) ptr[k] += n * p->strides[k][0];
    for (int d = 0; d + 1 < p->ndim && index[d] == p->sizes[d]; d++) {
      index[d] = 0;
      index[d + 1]++;
      for (int k = 0; k < p->count; k++) {
        ptr[k] += p->strides[k][d + 1] - p->sizes[d] * p->strides[k][d];
      }
    }
  }
}

void ew_run(const emu_tensor *out, const emu_tensor *inputs, int count, ew_loop loop,
            const ew_params *params) {
  if (out->numel == 0) return;
  ew_plan plan;
  plan.count = count + 1;
  plan.loop = loop;
  plan.params = params;
  const emu_tensor *operands[EW_MAX_OPERANDS];
  operands[0] = out;
  for (int k = 0; k < count; k++) operands[k + 1] = &inputs[k];
  for (int k = 0; k < plan.count; k++) plan.data[k] = operands[k]->data;
  /* Innermost first, dropping size-1 dimensions. */
  plan.ndim = 0;
  for (int d = out->ndim - 1; d >= 0; d--) {
    if (out->sizes[d] == 1) continue;
    plan.sizes[plan.ndim] = out->sizes[d];
    for (int k = 0; k < plan.count; k++) {
      plan.strides[k][plan.ndim] =
          operands[k]->strides[d] * (int64_t)emu_itemsize(operands[k]->dtype);
    }
    plan.ndim++;
  }
  if (plan.ndim == 0) {
    plan.ndim = 1;
    plan.sizes[0] = 1;
    for (int k = 0; k < plan.count; k++) plan.strides[k][0] = 0;
  }
  /* Merge dimension d + 1 into d when every operand steps through them as one. */
  int merged = 0;
  for (int d = 1; d < plan.ndim; d++) {
    bool mergeable = true;
    for (int k = 0; k < plan.count && mergeable; k++) {
      mergeable = plan.strides[k][d] == plan.strides[k][merged] * plan.sizes[merged];
    }
    if (mergeable) {
      plan.sizes[merged] *= plan.sizes[d];
    } else {
      merged++;
      plan.sizes[merged] = plan.sizes[d];
      for (int k = 0; k < plan.count; k++) plan.strides[k][merged] = plan.strides[k][d];
    }
  }
  plan.ndim = merged + 1;
  emu_parallel_for(out->numel, 1 << 15, ew_range, &plan);
}

void ew_operand(const emu_arg *a, tb_dtype dtype, const emu_tensor *like, emu_tensor *operand,
                char *storage) {
  if (a->kind == TB_VALUE_TENSOR) {
    *operand = *a->as.tensor;
    return;
  }
  memset(operand, 0, sizeof *operand);
  operand->dtype = dtype;
  operand->ndim = like->ndim;
  operand->numel = like->numel;
  for (int d = 0; d < like->ndim; d++) operand->sizes[d] = like->sizes[d];
  if (a->kind == TB_VALUE_DOUBLE) {
    emu_store_double(storage, dtype, a->as.f);
  } else {
    emu_store_int(storage, dtype, emu_arg_int(a));
  }
  operand->data = storage;
}

/* ------------------------------------------------------------------------------------------ */
/* Strided tensors                                                                              */

bool emu_is_contiguous(const emu_tensor *t) {
  int64_t expected = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (t->sizes[d] != 1 && t->strides[d] != expected) return false;
    expected *= t->sizes[d];
  }
  return true;
}

/* Same-dtype element copy loops (sizes 1, 2, 4, 8 bytes). */
#define COPY_LOOP(bits)                                                                \
  static void copy_loop_##bits(char **d, const int64_t *s, int64_t n, const void *p) { \
    (void)p;                                                                           \
    typedef uint##bits##_t T;                                                          \
    if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                                      \
      memcpy(d[0], d[1], (size_t)n * sizeof(T));                                       \
      return;                                                                          \
    }                                                                                  \
    char *o = d[0];                                                                    \
    const char *a = d[1];                                                              \
    for (int64_t i = 0; i < n; i++) *(T *)(o + i * s[0]) = *(const T *)(a + i * s[1]); \
  }
COPY_LOOP(8)
COPY_LOOP(16)
COPY_LOOP(32)
COPY_LOOP(64)

typedef struct convert_params {
  ew_params base;
  tb_dtype to, from;
} convert_params;

static void convert_loop(char **d, const int64_t *s, int64_t n, const void *p) {
  const convert_params *c = p;
  char *o = d[0];
  const char *a = d[1];
  if (c->to == TB_DTYPE_FLOAT32 && c->from == TB_DTYPE_BFLOAT16) {
    for (int64_t i = 0; i < n; i++) {
      *(float *)(o + i * s[0]) = emu_bf16_to_float(*(const uint16_t *)(a + i * s[1]));
    }
  } else if (c->to == TB_DTYPE_BFLOAT16 && c->from == TB_DTYPE_FLOAT32) {
    for (int64_t i = 0; i < n; i++) {
      *(uint16_t *)(o + i * s[0]) = emu_float_to_bf16(*(const float *)(a + i * s[1]));
    }
  } else if (c->to == TB_DTYPE_FLOAT32 && c->from == TB_DTYPE_FLOAT16) {
    for (int64_t i = 0; i < n; i++) {
      *(float *)(o + i * s[0]) = emu_half_to_float(*(const uint16_t *)(a + i * s[1]));
    }
  } else if (c->to == TB_DTYPE_FLOAT16 && c->from == TB_DTYPE_FLOAT32) {
    for (int64_t i = 0; i < n; i++) {
      *(uint16_t *)(o + i * s[0]) = emu_float_to_half(*(const float *)(a + i * s[1]));
    }
  } else if (c->to == TB_DTYPE_FLOAT64 && c->from == TB_DTYPE_FLOAT32) {
    for (int64_t i = 0; i < n; i++) *(double *)(o + i * s[0]) = *(const float *)(a + i * s[1]);
  } else if (c->to == TB_DTYPE_FLOAT32 && c->from == TB_DTYPE_FLOAT64) {
    for (int64_t i = 0; i < n; i++) {
      *(float *)(o + i * s[0]) = (float)*(const double *)(a + i * s[1]);
    }
  } else if (c->to == TB_DTYPE_FLOAT32 && (c->from == TB_DTYPE_BOOL || c->from == TB_DTYPE_UINT8)) {
    /* masks (dropout's, comparisons') promoted to float: no dtype switch per element */
    for (int64_t i = 0; i < n; i++) {
      *(float *)(o + i * s[0]) = (float)*(const uint8_t *)(a + i * s[1]);
    }
  } else if (!emu_is_floating(c->to) && !emu_is_floating(c->from)) {
    for (int64_t i = 0; i < n; i++) {
      emu_store_int(o + i * s[0], c->to, emu_load_int(a + i * s[1], c->from));
    }
  } else if (c->to == TB_DTYPE_BOOL) {
    for (int64_t i = 0; i < n; i++) {
      *(uint8_t *)(o + i * s[0]) = emu_load_double(a + i * s[1], c->from) != 0;
    }
  } else if (!emu_is_floating(c->to)) {
    /* float -> integer: truncate toward zero through int64, as C casts (and PyTorch) do. */
    for (int64_t i = 0; i < n; i++) {
      emu_store_int(o + i * s[0], c->to, (int64_t)emu_load_double(a + i * s[1], c->from));
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      emu_store_double(o + i * s[0], c->to, emu_load_double(a + i * s[1], c->from));
    }
  }
}

void emu_copy_tensor(const emu_tensor *dst, const emu_tensor *src) {
  if (dst->dtype == src->dtype) {
    static const ew_loop loops[9] = {NULL, copy_loop_8, copy_loop_16, NULL,        copy_loop_32,
                                     NULL, NULL,        NULL,         copy_loop_64};
    ew_run(dst, src, 1, loops[emu_itemsize(dst->dtype)], NULL);
    return;
  }
  convert_params params = {.to = dst->dtype, .from = src->dtype};
  ew_run(dst, src, 1, convert_loop, &params.base);
}

const char *emu_contiguous_as(const emu_tensor *t, tb_dtype dtype, void **scratch) {
  static const char no_elements[1];
  *scratch = NULL;
  if (t->numel == 0) return no_elements; /* never read; NULL would mean out of memory */
  if (t->dtype == dtype && emu_is_contiguous(t)) return t->data;
  char *buffer = malloc((size_t)t->numel * emu_itemsize(dtype));
  if (buffer == NULL) return NULL;
  emu_tensor dst = *t;
  int64_t stride = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    dst.strides[d] = stride;
    stride *= t->sizes[d];
  }
  dst.data = buffer;
  dst.dtype = dtype;
  emu_copy_tensor(&dst, t);
  *scratch = buffer;
  return buffer;
}

const char *emu_contiguous(const emu_tensor *t, void **scratch) {
  return emu_contiguous_as(t, t->dtype, scratch);
}

void emu_scatter_from(const emu_tensor *t, const char *src, tb_dtype dtype) {
  emu_tensor from = *t;
  int64_t stride = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    from.strides[d] = stride;
    stride *= t->sizes[d];
  }
  from.data = (char *)src;
  from.dtype = dtype;
  emu_copy_tensor(t, &from);
}

void emu_scatter(const emu_tensor *t, const char *src) { emu_scatter_from(t, src, t->dtype); }

char *emu_output_begin(const emu_tensor *t, tb_dtype dtype) {
  if (t->numel > 0 && t->dtype == dtype && emu_is_contiguous(t)) return t->data;
  return malloc((size_t)(t->numel > 0 ? t->numel : 1) * emu_itemsize(dtype));
}

void emu_output_end(const emu_tensor *t, char *buffer, tb_dtype dtype, bool store) {
  if (buffer == NULL || buffer == t->data) return;
  if (store && t->numel > 0) emu_scatter_from(t, buffer, dtype);
  free(buffer);
}

bool emu_spans_overlap(const tb_tensor *a, const tb_tensor *b) {
  if (a->data == NULL || b->data == NULL) return false;
  int64_t ea = 1, eb = 1;
  for (int32_t d = 0; d < a->ndim; d++) ea += (a->sizes[d] - 1) * a->strides[d];
  for (int32_t d = 0; d < b->ndim; d++) eb += (b->sizes[d] - 1) * b->strides[d];
  const char *pa = a->data, *pb = b->data;
  return pa < pb + eb * (int64_t)emu_itemsize(b->dtype) &&
         pb < pa + ea * (int64_t)emu_itemsize(a->dtype);
}
