/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The kit's dtype conversions, strided iterator and elementwise maps
 * (vendor_kit_kernels.h).  No global mutable state: the only statics are constant tables.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <torch_backend/vendor_kit_kernels.h>

#include "iter_internal.h"

/* ------------------------------------------------------------------------------------------ */
/* dtypes                                                                                       */

static bool known(tb_dtype dtype) { return (unsigned)dtype < TB_DTYPE_COUNT; }

size_t tbk_dtype_size(tb_dtype dtype) {
  static const size_t sizes[TB_DTYPE_COUNT] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  return known(dtype) ? sizes[dtype] : 0;
}

bool tbk_dtype_is_floating(tb_dtype dtype) {
  return known(dtype) && (TBK_DTYPES_FLOATING & TB_DTYPE_BIT(dtype)) != 0;
}

static uint32_t bits_of(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

static float float_of(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

float tbk_half_to_float(uint16_t bits) {
  uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return float_of(sign | 0x7f800000u | mantissa << 13); /* inf, nan */
  if (exponent != 0) return float_of(sign | (exponent + 112) << 23 | mantissa << 13);
  float magnitude = (float)mantissa * 0x1p-24f; /* zero or subnormal: exact */
  return sign ? -magnitude : magnitude;
}

uint16_t tbk_float_to_half(float value) {
  uint32_t x = bits_of(value);
  uint32_t sign = (x >> 16) & 0x8000u, abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | (abs >> 13 & 0x3ffu)); /* nan */
  if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* 65520 and up: infinity */
  uint32_t result, rest, half;
  if (abs >= 0x38800000u) { /* a normal half: rebias the exponent, keep 10 mantissa bits */
    result = (abs - 0x38000000u) >> 13;
    rest = abs & 0x1fffu;
    half = 0x1000u;
  } else if (abs >= 0x33000000u) { /* a subnormal half, in units of 2^-24 */
    uint32_t shift = 126 - (abs >> 23), mantissa = (abs & 0x7fffffu) | 0x800000u;
    result = mantissa >> shift;
    rest = mantissa & ((1u << shift) - 1);
    half = 1u << (shift - 1);
  } else { /* below 2^-25: zero */
    return (uint16_t)sign;
  }
  if (rest > half || (rest == half && (result & 1u))) result++; /* a carry rounds up a binade */
  return (uint16_t)(sign | result);
}

float tbk_bfloat16_to_float(uint16_t bits) { return float_of((uint32_t)bits << 16); }

uint16_t tbk_float_to_bfloat16(float value) {
  if (value != value) return 0x7fc0u; /* c10::BFloat16's nan */
  uint32_t x = bits_of(value);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* Truncation toward zero into int32 / int64 as x86-64 converts: NaN and values out of range
 * give the type's minimum (vendor_kit_kernels.h, "Kit: dtypes"). */
static int32_t to_int32(double v) {
  return v > -2147483649.0 && v < 2147483648.0 ? (int32_t)v : INT32_MIN;
}
static int64_t to_int64(double v) {
  return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
}

typedef double (*load_fn)(const char *p);
typedef void (*store_fn)(char *p, double value);

#define LOAD(name, type) \
  static double load_##name(const char *p) { return (double)*(const type *)p; }
LOAD(u8, uint8_t)
LOAD(i8, int8_t)
LOAD(i16, int16_t)
LOAD(i32, int32_t)
LOAD(i64, int64_t)
LOAD(f32, float)
LOAD(f64, double)
static double load_bool(const char *p) { return *(const uint8_t *)p != 0; }
static double load_f16(const char *p) { return tbk_half_to_float(*(const uint16_t *)p); }
static double load_bf16(const char *p) { return tbk_bfloat16_to_float(*(const uint16_t *)p); }

/* Integers are written through the unsigned type of their width: the low bits, defined in C. */
static void store_bool(char *p, double v) { *(uint8_t *)p = v != 0; }
static void store_u8(char *p, double v) { *(uint8_t *)p = (uint8_t)to_int64(v); }
static void store_i8(char *p, double v) { *(uint8_t *)p = (uint8_t)to_int32(v); }
static void store_i16(char *p, double v) { *(uint16_t *)p = (uint16_t)to_int32(v); }
static void store_i32(char *p, double v) { *(uint32_t *)p = (uint32_t)to_int32(v); }
static void store_i64(char *p, double v) { *(uint64_t *)p = (uint64_t)to_int64(v); }
static void store_f16(char *p, double v) { *(uint16_t *)p = tbk_float_to_half((float)v); }
static void store_bf16(char *p, double v) { *(uint16_t *)p = tbk_float_to_bfloat16((float)v); }
static void store_f32(char *p, double v) { *(float *)p = (float)v; }
static void store_f64(char *p, double v) { *(double *)p = v; }

static const load_fn loads[TB_DTYPE_COUNT] = {load_bool, load_u8,  load_i8,   load_i16, load_i32,
                                              load_i64,  load_f16, load_bf16, load_f32, load_f64};
static const store_fn stores[TB_DTYPE_COUNT] = {store_bool, store_u8,  store_i8,  store_i16,
                                                store_i32,  store_i64, store_f16, store_bf16,
                                                store_f32,  store_f64};

double tbk_load(tb_dtype dtype, const void *p) { return known(dtype) ? loads[dtype](p) : 0; }

void tbk_store(tb_dtype dtype, void *p, double value) {
  if (known(dtype)) stores[dtype](p, value);
}

/* ------------------------------------------------------------------------------------------ */
/* The iterator                                                                                 */

tb_status tbk_msg_fail(char *msg, size_t msg_size, tb_status status, const char *format, ...) {
  if (msg != NULL && msg_size > 0) {
    va_list args;
    va_start(args, format);
    vsnprintf(msg, msg_size, format, args);
    va_end(args);
  }
  return status;
}

/* "[2, 3]" into buf. */
void tbk_format_sizes(char *buf, size_t size, const tb_tensor *t) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int32_t d = 0; d < t->ndim && used < size; d++) {
    used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, d ? ", " : "", t->sizes[d]);
  }
  if (used < size) snprintf(buf + used, size - used, "]");
}

tb_status tbk_check_tensor(const tb_tensor *t, const char *name, char *msg, size_t msg_size) {
  if (t == NULL) return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT, "%s is NULL", name);
  if (t->ndim < 0 || (t->ndim > 0 && (t->sizes == NULL || t->strides == NULL))) {
    return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT,
                        "%s has ndim %" PRId32 " and %s sizes", name, t->ndim,
                        t->sizes == NULL ? "no" : "some");
  }
  if (!known(t->dtype)) {
    return tbk_msg_fail(msg, msg_size, TB_ERROR_NOT_SUPPORTED, "%s has unknown dtype %d", name,
                        (int)t->dtype);
  }
  for (int32_t d = 0; d < t->ndim; d++) {
    if (t->sizes[d] < 0) {
      return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT,
                          "%s has size %" PRId64 " in dimension %" PRId32, name, t->sizes[d], d);
    }
  }
  return TB_OK;
}

/* Input k: a tensor (operands[k + 1]) or a number held in the iterator. */
static tb_status add_input(tbk_iter *it, const tb_tensor **operands, int k, const tb_tensor *t,
                           const tb_value *value, tb_dtype scalar_dtype, char *msg,
                           size_t msg_size) {
  char name[32];
  snprintf(name, sizeof name, "input %d", k);
  double number;
  if (t == NULL && tbk_value_number(value, &number)) {
    if (!known(scalar_dtype)) {
      return tbk_msg_fail(msg, msg_size, TB_ERROR_NOT_SUPPORTED, "%s: unknown scalar dtype %d",
                          name, (int)scalar_dtype);
    }
    it->constant_mask |= 1u << (k + 1);
    it->dtypes[k + 1] = scalar_dtype;
    if (value->kind == TB_VALUE_INT && scalar_dtype == TB_DTYPE_INT64) {
      it->constants[k + 1].i64 = value->as.i; /* exact beyond 2^53 */
    } else {
      tbk_store(scalar_dtype, &it->constants[k + 1], number);
    }
    return TB_OK;
  }
  if (t == NULL && value != NULL && value->kind != TB_VALUE_TENSOR) {
    return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT,
                        "%s is neither a tensor nor a number", name);
  }
  tb_status status = tbk_check_tensor(t, name, msg, msg_size);
  if (status != TB_OK) return status;
  const tb_tensor *out = operands[0];
  int32_t lead = out->ndim - t->ndim; /* the input's dimension d is the output's lead + d */
  bool broadcasts = lead >= 0;
  for (int32_t d = 0; broadcasts && d < t->ndim; d++) {
    broadcasts = t->sizes[d] == out->sizes[lead + d] || t->sizes[d] == 1;
  }
  if (!broadcasts) {
    char have[TBK_ITER_MAX_DIMS * 24], want[TBK_ITER_MAX_DIMS * 24];
    tbk_format_sizes(have, sizeof have, t);
    tbk_format_sizes(want, sizeof want, out);
    return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT,
                        "%s with sizes %s does not broadcast to the output's sizes %s", name, have,
                        want);
  }
  operands[k + 1] = t;
  it->data[k + 1] = t->data;
  it->dtypes[k + 1] = t->dtype;
  return TB_OK;
}

/* The output's dimensions, innermost first, without size-1 ones, merged where every operand
 * steps through two neighbours as through one. */
static tb_status add_dims(tbk_iter *it, const tb_tensor *const *operands, char *msg,
                          size_t msg_size) {
  const tb_tensor *out = operands[0];
  for (int32_t d = out->ndim - 1; d >= 0; d--) {
    int64_t size = out->sizes[d], strides[TBK_ITER_MAX_OPERANDS];
    if (size == 1) continue;
    bool merge = it->ndim > 0;
    for (int k = 0; k < it->num_operands; k++) {
      const tb_tensor *t = operands[k]; /* NULL: a number */
      int32_t dt = t != NULL ? d - (out->ndim - t->ndim) : -1;
      strides[k] =
          dt >= 0 && t->sizes[dt] != 1 ? t->strides[dt] * (int64_t)tbk_dtype_size(t->dtype) : 0;
      merge = merge && strides[k] == it->strides[k][it->ndim - 1] * it->sizes[it->ndim - 1];
    }
    if (merge) {
      it->sizes[it->ndim - 1] *= size;
      continue;
    }
    if (it->ndim == TBK_ITER_MAX_DIMS) {
      return tbk_msg_fail(msg, msg_size, TB_ERROR_NOT_SUPPORTED,
                          "the operands have more than %d dimensions that do not merge",
                          TBK_ITER_MAX_DIMS);
    }
    it->sizes[it->ndim] = size;
    for (int k = 0; k < it->num_operands; k++) it->strides[k][it->ndim] = strides[k];
    it->ndim++;
  }
  if (it->ndim == 0) { /* a 0-dim output, or only size-1 dimensions: one element */
    it->ndim = 1;
    it->sizes[0] = 1;
  }
  return TB_OK;
}

static tb_status init(tbk_iter *it, const tb_tensor *out, const tb_tensor *const *tensors,
                      const tb_value *const *values, int num_inputs, tb_dtype scalar_dtype,
                      char *msg, size_t msg_size) {
  if (msg != NULL && msg_size > 0) msg[0] = '\0';
  if (it == NULL || (num_inputs > 0 && tensors == NULL && values == NULL)) {
    return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT, "NULL iterator or inputs");
  }
  if (num_inputs < 0 || num_inputs > TBK_ITER_MAX_INPUTS) {
    return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT, "%d inputs (at most %d)",
                        num_inputs, TBK_ITER_MAX_INPUTS);
  }
  tb_status status = tbk_check_tensor(out, "the output", msg, msg_size);
  if (status != TB_OK) return status;
  memset(it, 0, sizeof *it);
  it->num_operands = num_inputs + 1;
  it->data[0] = out->data;
  it->dtypes[0] = out->dtype;
  const tb_tensor *operands[TBK_ITER_MAX_OPERANDS] = {out};
  for (int k = 0; k < num_inputs; k++) {
    const tb_value *value = values != NULL ? values[k] : NULL;
    const tb_tensor *t = tensors != NULL                                   ? tensors[k]
                         : value != NULL && value->kind == TB_VALUE_TENSOR ? value->as.tensor
                                                                           : NULL;
    status = add_input(it, operands, k, t, value, scalar_dtype, msg, msg_size);
    if (status != TB_OK) return status;
  }
  it->numel = 1;
  for (int32_t d = 0; d < out->ndim; d++) it->numel *= out->sizes[d];
  if (it->numel == 0) { /* nothing to run: one empty dimension */
    it->ndim = 1;
    return TB_OK;
  }
  return add_dims(it, operands, msg, msg_size);
}

tb_status tbk_iter_init(tbk_iter *it, const tb_tensor *out, const tb_tensor *const *inputs,
                        int num_inputs, char *msg, size_t msg_size) {
  return init(it, out, inputs, NULL, num_inputs, TB_DTYPE_FLOAT64, msg, msg_size);
}

tb_status tbk_iter_init_values(tbk_iter *it, const tb_tensor *out, const tb_value *const *inputs,
                               int num_inputs, tb_dtype scalar_dtype, char *msg, size_t msg_size) {
  return init(it, out, NULL, inputs, num_inputs, scalar_dtype, msg, msg_size);
}

void tbk_iter_run_range(const tbk_iter *it, int64_t begin, int64_t end, tbk_loop_fn loop,
                        void *user) {
  if (begin < 0) begin = 0;
  if (end > it->numel) end = it->numel;
  if (begin >= end) return;
  int64_t index[TBK_ITER_MAX_DIMS], inner[TBK_ITER_MAX_OPERANDS];
  char *ptr[TBK_ITER_MAX_OPERANDS], *args[TBK_ITER_MAX_OPERANDS];
  int64_t rest = begin;
  for (int d = 0; d < it->ndim; d++) {
    index[d] = rest % it->sizes[d];
    rest /= it->sizes[d];
  }
  for (int k = 0; k < it->num_operands; k++) {
    ptr[k] = (it->constant_mask >> k & 1u) ? (char *)&it->constants[k] : it->data[k];
    for (int d = 0; d < it->ndim; d++) ptr[k] += index[d] * it->strides[k][d];
    inner[k] = it->strides[k][0];
  }
  while (begin < end) {
    int64_t n = it->sizes[0] - index[0] < end - begin ? it->sizes[0] - index[0] : end - begin;
    memcpy(args, ptr, sizeof args);
    loop(args, inner, n, user);
    begin += n;
    index[0] += n;
    for (int k = 0; k < it->num_operands; k++) ptr[k] += n * inner[k];
    for (int d = 0; d + 1 < it->ndim && index[d] == it->sizes[d]; d++) { /* carry */
      index[d] = 0;
      index[d + 1]++;
      for (int k = 0; k < it->num_operands; k++) {
        ptr[k] += it->strides[k][d + 1] - it->sizes[d] * it->strides[k][d];
      }
    }
  }
}

void tbk_iter_run(const tbk_iter *it, tbk_loop_fn loop, void *user) {
  tbk_iter_run_range(it, 0, it->numel, loop, user);
}

/* ------------------------------------------------------------------------------------------ */
/* Elementwise maps                                                                             */

typedef struct map {
  tbk_unary_fn unary;
  tbk_binary_fn binary;
  const void *params;
  load_fn load[2];
  store_fn store;
} map;

static void unary_loop(char **data, const int64_t *s, int64_t n, void *user) {
  const map *m = user;
  char *out = data[0], *x = data[1];
  for (int64_t i = 0; i < n; i++, out += s[0], x += s[1]) {
    m->store(out, m->unary(m->load[0](x), m->params));
  }
}

static void unary_f32_loop(char **data, const int64_t *s, int64_t n, void *user) {
  const map *m = user;
  char *out = data[0], *x = data[1];
  for (int64_t i = 0; i < n; i++, out += s[0], x += s[1]) {
    *(float *)out = (float)m->unary(*(const float *)x, m->params);
  }
}

static void binary_loop(char **data, const int64_t *s, int64_t n, void *user) {
  const map *m = user;
  char *out = data[0], *x = data[1], *y = data[2];
  for (int64_t i = 0; i < n; i++, out += s[0], x += s[1], y += s[2]) {
    m->store(out, m->binary(m->load[0](x), m->load[1](y), m->params));
  }
}

static void binary_f32_loop(char **data, const int64_t *s, int64_t n, void *user) {
  const map *m = user;
  char *out = data[0], *x = data[1], *y = data[2];
  for (int64_t i = 0; i < n; i++, out += s[0], x += s[1], y += s[2]) {
    *(float *)out = (float)m->binary(*(const float *)x, *(const float *)y, m->params);
  }
}

static bool all_float32(const tbk_iter *it) {
  for (int k = 0; k < it->num_operands; k++) {
    if (it->dtypes[k] != TB_DTYPE_FLOAT32) return false;
  }
  return true;
}

static bool known_dtypes(const tbk_iter *it) {
  for (int k = 0; k < it->num_operands; k++) {
    if (!known(it->dtypes[k])) return false;
  }
  return true;
}

tb_status tbk_map_unary(const tbk_iter *it, tbk_unary_fn fn, const void *params) {
  if (it == NULL || it->num_operands != 2 || fn == NULL || !known_dtypes(it)) {
    return TB_ERROR_INVALID_ARGUMENT;
  }
  map m = {fn, NULL, params, {loads[it->dtypes[1]], NULL}, stores[it->dtypes[0]]};
  tbk_iter_run(it, all_float32(it) ? unary_f32_loop : unary_loop, &m);
  return TB_OK;
}

tb_status tbk_map_binary(const tbk_iter *it, tbk_binary_fn fn, const void *params) {
  if (it == NULL || it->num_operands != 3 || fn == NULL || !known_dtypes(it)) {
    return TB_ERROR_INVALID_ARGUMENT;
  }
  map m = {NULL, fn, params, {loads[it->dtypes[1]], loads[it->dtypes[2]]}, stores[it->dtypes[0]]};
  tbk_iter_run(it, all_float32(it) ? binary_f32_loop : binary_loop, &m);
  return TB_OK;
}
