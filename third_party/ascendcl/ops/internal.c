/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * What every stand-in operator shares (internal.h): dtype rules (the "deduction" and
 * "conversion" relationships of the aclnn documentation), element loads and stores, shapes,
 * phase-one checks, the executor and its launch on a stream, strided iteration, and the
 * pointwise engine.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- dtypes ---- */

size_t sop_size(aclDataType dtype) {
  switch (dtype) {
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
      return 1;
    case ACL_INT16:
    case ACL_UINT16:
    case ACL_FLOAT16:
    case ACL_BF16:
      return 2;
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_FLOAT:
      return 4;
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_DOUBLE:
    case ACL_COMPLEX64:
      return 8;
    case ACL_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

const char *sop_dtype_name(aclDataType dtype) {
  switch (dtype) {
    case ACL_FLOAT:
      return "ACL_FLOAT";
    case ACL_FLOAT16:
      return "ACL_FLOAT16";
    case ACL_BF16:
      return "ACL_BF16";
    case ACL_DOUBLE:
      return "ACL_DOUBLE";
    case ACL_INT8:
      return "ACL_INT8";
    case ACL_UINT8:
      return "ACL_UINT8";
    case ACL_INT16:
      return "ACL_INT16";
    case ACL_UINT16:
      return "ACL_UINT16";
    case ACL_INT32:
      return "ACL_INT32";
    case ACL_UINT32:
      return "ACL_UINT32";
    case ACL_INT64:
      return "ACL_INT64";
    case ACL_UINT64:
      return "ACL_UINT64";
    case ACL_BOOL:
      return "ACL_BOOL";
    case ACL_COMPLEX64:
      return "ACL_COMPLEX64";
    case ACL_COMPLEX128:
      return "ACL_COMPLEX128";
    case ACL_STRING:
      return "ACL_STRING";
    default:
      return "ACL_DT_UNDEFINED";
  }
}

bool sop_is_float(aclDataType d) {
  return d == ACL_FLOAT || d == ACL_FLOAT16 || d == ACL_BF16 || d == ACL_DOUBLE;
}
bool sop_is_int(aclDataType d) {
  return d == ACL_INT8 || d == ACL_UINT8 || d == ACL_INT16 || d == ACL_INT32 || d == ACL_INT64 ||
         d == ACL_UINT16 || d == ACL_UINT32 || d == ACL_UINT64;
}
static bool is_unsigned_wide(aclDataType d) {
  return d == ACL_UINT16 || d == ACL_UINT32 || d == ACL_UINT64;
}
static int float_rank(aclDataType d) {
  return d == ACL_DOUBLE ? 3 : d == ACL_FLOAT ? 2 : 1; /* f16 and bf16 */
}

aclDataType sop_promote(aclDataType a, aclDataType b) {
  if (a == b) return sop_size(a) > 0 ? a : ACL_DT_UNDEFINED;
  bool known_a = sop_is_float(a) || sop_is_int(a) || a == ACL_BOOL;
  bool known_b = sop_is_float(b) || sop_is_int(b) || b == ACL_BOOL;
  /* u16/u32/u64 combine only with themselves; complex types are not implemented. */
  if (!known_a || !known_b || is_unsigned_wide(a) || is_unsigned_wide(b)) {
    return ACL_DT_UNDEFINED;
  }
  if (sop_is_float(a) && sop_is_float(b)) {
    int ra = float_rank(a), rb = float_rank(b);
    return ra == rb ? ACL_FLOAT : ra > rb ? a : b; /* f16 with bf16 gives f32 */
  }
  if (sop_is_float(a)) return a;
  if (sop_is_float(b)) return b;
  if (a == ACL_BOOL) return b;
  if (b == ACL_BOOL) return a;
  if ((a == ACL_UINT8 && b == ACL_INT8) || (a == ACL_INT8 && b == ACL_UINT8)) return ACL_INT16;
  return sop_size(a) >= sop_size(b) ? a : b;
}

aclDataType sop_promote_scalar(aclDataType tensor, aclDataType scalar) {
  bool known = sop_is_float(scalar) || sop_is_int(scalar) || scalar == ACL_BOOL;
  if (!known || sop_size(tensor) == 0) return ACL_DT_UNDEFINED;
  if (sop_is_float(tensor)) return tensor;
  if (sop_is_int(tensor)) return sop_is_float(scalar) ? ACL_FLOAT : tensor;
  if (tensor != ACL_BOOL) return ACL_DT_UNDEFINED;
  if (sop_is_float(scalar)) return ACL_FLOAT;
  return is_unsigned_wide(scalar) ? ACL_DT_UNDEFINED : scalar;
}

bool sop_can_cast(aclDataType from, aclDataType to) {
  if (from == to) return sop_size(from) > 0;
  if (to == ACL_BOOL) return false;
  if (from == ACL_BOOL) return sop_is_int(to) || sop_is_float(to);
  if (sop_is_int(from)) return sop_is_int(to) || sop_is_float(to);
  if (sop_is_float(from)) return sop_is_float(to);
  return false;
}

/* binary16 and bfloat16 <-> binary32, round to nearest even */
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  float f;
  if (exp == 0x1f) {
    uint32_t bits = sign | 0x7f800000u | (man << 13);
    memcpy(&f, &bits, sizeof f);
    return f;
  }
  if (exp == 0) { /* zero or subnormal: man * 2^-24 */
    f = ldexpf((float)man, -24);
    return sign ? -f : f;
  }
  uint32_t bits = sign | ((exp + 112) << 23) | (man << 13);
  memcpy(&f, &bits, sizeof f);
  return f;
}

static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
  if (abs >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* overflows to infinity */
  if (abs < 0x38800000u) {                                   /* subnormal or zero */
    float a;
    memcpy(&a, &abs, sizeof a);
    return (uint16_t)(sign | (uint16_t)nearbyintf(a * 16777216.0f)); /* units of 2^-24 */
  }
  uint32_t value = (abs - 0x38000000u) >> 13, rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (value & 1u))) value++;
  return (uint16_t)(sign | value);
}

static float bf16_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

#define LOAD(T)                \
  do {                         \
    T v_;                      \
    memcpy(&v_, p, sizeof v_); \
    return v_;                 \
  } while (0)

double sop_load_f(const void *p, aclDataType d) {
  uint16_t h;
  switch (d) {
    case ACL_FLOAT:
      LOAD(float);
    case ACL_DOUBLE:
      LOAD(double);
    case ACL_FLOAT16:
      memcpy(&h, p, 2);
      return half_to_float(h);
    case ACL_BF16:
      memcpy(&h, p, 2);
      return bf16_to_float(h);
    case ACL_UINT64: {
      uint64_t u;
      memcpy(&u, p, 8);
      return (double)u;
    }
    default:
      return (double)sop_load_i(p, d);
  }
}

int64_t sop_load_i(const void *p, aclDataType d) {
  switch (d) {
    case ACL_BOOL:
      return *(const uint8_t *)p != 0;
    case ACL_UINT8:
      return *(const uint8_t *)p;
    case ACL_INT8:
      return *(const int8_t *)p;
    case ACL_INT16:
      LOAD(int16_t);
    case ACL_UINT16:
      LOAD(uint16_t);
    case ACL_INT32:
      LOAD(int32_t);
    case ACL_UINT32:
      LOAD(uint32_t);
    case ACL_INT64:
      LOAD(int64_t);
    case ACL_UINT64:
      LOAD(uint64_t);
    default: {
      double v = sop_load_f(p, d);
      if (v != v) return 0;
      if (v >= 9223372036854775807.0) return INT64_MAX;
      if (v <= -9223372036854775808.0) return INT64_MIN;
      return (int64_t)v;
    }
  }
}

#define STORE(T, x)            \
  do {                         \
    T v_ = (T)(x);             \
    memcpy(p, &v_, sizeof v_); \
  } while (0)

void sop_store_f(void *p, aclDataType d, double v) {
  uint16_t h;
  switch (d) {
    case ACL_FLOAT:
      STORE(float, v);
      return;
    case ACL_DOUBLE:
      STORE(double, v);
      return;
    case ACL_FLOAT16:
      h = float_to_half((float)v);
      memcpy(p, &h, 2);
      return;
    case ACL_BF16:
      h = float_to_bf16((float)v);
      memcpy(p, &h, 2);
      return;
    case ACL_BOOL:
      *(uint8_t *)p = v != 0;
      return;
    default: {
      int64_t i = v != v                        ? 0
                  : v >= 9223372036854775807.0  ? INT64_MAX
                  : v <= -9223372036854775808.0 ? INT64_MIN
                                                : (int64_t)v;
      sop_store_i(p, d, i);
    }
  }
}

void sop_store_i(void *p, aclDataType d, int64_t v) {
  switch (d) {
    case ACL_BOOL:
      *(uint8_t *)p = v != 0;
      return;
    case ACL_UINT8:
      *(uint8_t *)p = (uint8_t)v;
      return;
    case ACL_INT8:
      *(int8_t *)p = (int8_t)(uint8_t)v;
      return;
    case ACL_INT16:
      STORE(int16_t, (uint16_t)v);
      return;
    case ACL_UINT16:
      STORE(uint16_t, v);
      return;
    case ACL_INT32:
      STORE(int32_t, (uint32_t)v);
      return;
    case ACL_UINT32:
      STORE(uint32_t, v);
      return;
    case ACL_INT64:
      STORE(int64_t, v);
      return;
    case ACL_UINT64:
      STORE(uint64_t, v);
      return;
    default:
      sop_store_f(p, d, (double)v);
      return;
  }
}

sop_value sop_load(const void *p, aclDataType dtype, aclDataType compute) {
  sop_value v;
  if (sop_is_float(compute)) {
    v.f = sop_load_f(p, dtype);
  } else {
    v.i = sop_load_i(p, dtype);
  }
  return v;
}

void sop_store(void *p, aclDataType dtype, sop_value v, aclDataType compute) {
  if (sop_is_float(compute)) {
    sop_store_f(p, dtype, v.f);
  } else {
    sop_store_i(p, dtype, v.i);
  }
}

sop_value sop_round(sop_value v, aclDataType compute) {
  unsigned char tmp[8];
  if (compute == ACL_DOUBLE || compute == ACL_INT64 || sop_size(compute) == 0) return v;
  sop_store(tmp, compute, v, compute);
  return sop_load(tmp, compute, compute);
}

/* ---- shapes ---- */

int64_t sop_numel(const aclTensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++) n *= t->dims[d];
  return n;
}

int64_t sop_extent(const aclTensor *t) {
  int64_t last = 0;
  for (int32_t d = 0; d < t->ndim; d++) {
    if (t->dims[d] == 0) return 0;
    last += (t->dims[d] - 1) * t->strides[d];
  }
  return last + 1;
}

const char *sop_shape_str(const aclTensor *t, char *buf) {
  size_t n = 0;
  buf[n++] = '[';
  buf[n] = '\0';
  for (int32_t d = 0; d < t->ndim && n < 140; d++) {
    n += (size_t)snprintf(buf + n, 160 - n, d ? ", %lld" : "%lld", (long long)t->dims[d]);
  }
  snprintf(buf + n, 160 - n, "]");
  return buf;
}

bool sop_same_shape(const aclTensor *a, const aclTensor *b) {
  if (a->ndim != b->ndim) return false;
  for (int32_t d = 0; d < a->ndim; d++) {
    if (a->dims[d] != b->dims[d]) return false;
  }
  return true;
}

bool sop_broadcasts_to(const aclTensor *t, int32_t ndim, const int64_t *dims) {
  if (t->ndim > ndim) return false;
  for (int32_t d = 0; d < t->ndim; d++) {
    int64_t s = t->dims[t->ndim - 1 - d], o = dims[ndim - 1 - d];
    if (s != o && s != 1) return false;
  }
  return true;
}

/* ---- phase one checks ---- */

aclnnStatus sop_fail(aclnnStatus status, const char *op, const char *format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  standin_set_error("%s: %s", op, message);
  return status;
}

aclnnStatus sop_check_nonnull(const char *op, const char *arg, const void *p) {
  return p != NULL ? ACLNN_SUCCESS
                   : sop_fail(ACLNN_ERR_PARAM_NULLPTR, op, "%s is a null pointer", arg);
}

aclnnStatus sop_check_tensor(const char *op, const char *arg, const aclTensor *t, uint64_t dtypes) {
  SOP_CHECK(sop_check_nonnull(op, arg, t));
  if (sop_size(t->dtype) == 0 || !(dtypes & SOP_BIT(t->dtype))) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s has dtype %s, which is not supported", arg,
                    sop_dtype_name(t->dtype));
  }
  if (t->ndim > SOP_OP_MAX_DIMS) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s has %d dimensions; at most %d are supported",
                    arg, (int)t->ndim, SOP_OP_MAX_DIMS);
  }
  if (t->format > ACL_FORMAT_ND) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s has format %d; only ND is supported", arg,
                    (int)t->format);
  }
  int64_t extent = sop_extent(t);
  if (extent > 0 && t->host == NULL) {
    size_t size = sop_size(t->dtype);
    if (t->data == NULL) {
      return sop_fail(ACLNN_ERR_PARAM_NULLPTR, op, "%s has elements but no device address", arg);
    }
    const char *first = (const char *)t->data + t->offset * (int64_t)size;
    if (!standin_is_device_range(first, (size_t)extent * size)) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                      "%s's %lld bytes at %p are not inside one device allocation", arg,
                      (long long)extent * (long long)size, (const void *)first);
    }
  }
  return ACLNN_SUCCESS;
}

aclnnStatus sop_check_scalar(const char *op, const char *arg, const aclScalar *s, uint64_t dtypes) {
  SOP_CHECK(sop_check_nonnull(op, arg, s));
  if (!(dtypes & SOP_BIT(s->dtype))) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s has dtype %s, which is not supported", arg,
                    sop_dtype_name(s->dtype));
  }
  return ACLNN_SUCCESS;
}

aclnnStatus sop_check_same_shape(const char *op, const char *arg, const aclTensor *t,
                                 const char *like_arg, const aclTensor *like) {
  char a[160], b[160];
  if (sop_same_shape(t, like)) return ACLNN_SUCCESS;
  return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s has shape %s but %s has shape %s", arg,
                  sop_shape_str(t, a), like_arg, sop_shape_str(like, b));
}

aclnnStatus sop_check_cast(const char *op, aclDataType from, const char *arg, const aclTensor *t) {
  if (sop_can_cast(from, t->dtype)) return ACLNN_SUCCESS;
  return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "a result of type %s cannot be stored into %s (%s)",
                  sop_dtype_name(from), arg, sop_dtype_name(t->dtype));
}

/* ---- the executor ---- */

aclOpExecutor *sop_executor_new(const char *name, int32_t count, sop_run_fn run) {
  aclOpExecutor *ex = calloc(1, sizeof *ex);
  size_t n = count > 0 ? (size_t)count : 1;
  if (ex != NULL) {
    ex->t = calloc(n, sizeof *ex->t);
    ex->host = calloc(n, sizeof *ex->host);
  }
  if (ex == NULL || ex->t == NULL || ex->host == NULL) {
    if (ex != NULL) {
      free(ex->t);
      free(ex->host);
      free(ex);
    }
    sop_fail(ACLNN_ERR_INNER, name, "out of host memory creating the executor");
    return NULL;
  }
  ex->name = name;
  ex->run = run;
  ex->count = count;
  atomic_init(&ex->refs, 1);
  for (int32_t k = 0; k < count; k++) ex->t[k].ndim = -1;
  return ex;
}

void sop_executor_release(aclOpExecutor *ex) {
  if (ex == NULL || atomic_fetch_sub(&ex->refs, 1) != 1) return;
  if (ex->state_free != NULL) ex->state_free(ex->state);
  aclOpExecutor *parent = ex->parent;
  free(ex->t);
  free(ex->host);
  free(ex);
  sop_executor_release(parent);
}

void sop_capture(aclOpExecutor *ex, int32_t k, const aclTensor *t) {
  if (t == NULL) {
    memset(&ex->t[k], 0, sizeof ex->t[k]);
    ex->t[k].ndim = -1;
  } else {
    ex->t[k] = *t;
  }
}

void sop_capture_scalar(aclOpExecutor *ex, int32_t k, int32_t slot, const aclScalar *s) {
  memset(&ex->t[k], 0, sizeof ex->t[k]);
  memcpy(ex->consts[slot], s->value, sizeof ex->consts[slot]);
  ex->t[k].dtype = s->dtype;
  ex->t[k].format = ACL_FORMAT_ND;
  ex->t[k].host = ex->consts[slot];
}

aclnnStatus sop_finish(aclOpExecutor *ex, uint64_t workspace, uint64_t *workspaceSize,
                       aclOpExecutor **executor) {
  if (workspaceSize == NULL || executor == NULL) {
    const char *name = ex->name;
    sop_executor_release(ex);
    return sop_fail(ACLNN_ERR_PARAM_NULLPTR, name, "%s is a null pointer",
                    workspaceSize == NULL ? "workspaceSize" : "executor");
  }
  ex->workspace_size = workspace;
  *workspaceSize = workspace;
  *executor = ex;
  return ACLNN_SUCCESS;
}

/* Runs on the stream's worker: translates every device address, then runs the operator.  It
 * leaves the executor as it found it but for the translations, so that a task recorded into a
 * model (stream capture, acl_mdl.h) runs again at every run of the model. */
static void task_run(void *arg) {
  aclOpExecutor *ex = arg;
  for (int32_t k = 0; k < ex->count; k++) {
    const aclTensor *t = &ex->t[k];
    ex->host[k] = NULL;
    if (t->ndim < 0) continue;
    if (t->host != NULL) {
      ex->host[k] = (void *)t->host;
      continue;
    }
    int64_t extent = sop_extent(t);
    if (extent == 0) continue;
    size_t size = sop_size(t->dtype);
    const char *first = (const char *)t->data + t->offset * (int64_t)size;
    ex->host[k] = standin_device_to_host(first, (size_t)extent * size);
    if (ex->host[k] == NULL) {
      standin_task_fail("tensor argument %d (%lld bytes at %p) is not inside device memory", (int)k,
                        (long long)extent * (long long)size, (const void *)first);
      return;
    }
  }
  if (ex->workspace_size > 0) {
    void *device = ex->workspace_device;
    ex->workspace = standin_device_to_host(device, ex->workspace_size);
    if (ex->workspace == NULL) {
      standin_task_fail("the workspace (%llu bytes at %p) is not inside device memory",
                        (unsigned long long)ex->workspace_size, device);
      return;
    }
  }
  ex->run(ex);
}

static void task_release(void *arg) { sop_executor_release(arg); }

/* A run of a repeatable executor: a copy of it (own tables, shared state) holding a
 * reference to it. */
static aclOpExecutor *clone_run(aclOpExecutor *ex) {
  aclOpExecutor *run = sop_executor_new(ex->name, ex->count, ex->run);
  if (run == NULL) return NULL;
  /* field by field: ex->refs is another thread's to change (earlier runs releasing theirs) */
  run->workspace_size = ex->workspace_size;
  memcpy(run->t, ex->t, (size_t)ex->count * sizeof *ex->t);
  memcpy(run->f, ex->f, sizeof run->f);
  memcpy(run->i, ex->i, sizeof run->i);
  memcpy(run->consts, ex->consts, sizeof run->consts);
  for (int32_t k = 0; k < ex->count; k++) {
    /* scalar constants point into the executor's own const slots */
    if (ex->t[k].host != NULL) {
      run->t[k].host = (const unsigned char *)ex->t[k].host - (const unsigned char *)ex->consts +
                       (const unsigned char *)run->consts;
    }
  }
  run->compute = ex->compute;
  run->result = ex->result;
  run->elem = ex->elem;
  run->state = ex->state; /* shared, released with ex */
  run->parent = ex;
  atomic_fetch_add(&ex->refs, 1);
  return run;
}

aclnnStatus sop_launch(const char *name, void *workspace, uint64_t workspaceSize,
                       aclOpExecutor *executor, aclrtStream stream) {
  if (executor == NULL) {
    return sop_fail(ACLNN_ERR_PARAM_NULLPTR, name, "executor is a null pointer");
  }
  aclOpExecutor *ex = executor;
  aclnnStatus status = ACLNN_SUCCESS;
  if (strcmp(ex->name, name) != 0) {
    status = sop_fail(ACLNN_ERR_PARAM_INVALID, name,
                      "the executor was created by %sGetWorkspaceSize, not %sGetWorkspaceSize",
                      ex->name, name);
  } else if (workspaceSize < ex->workspace_size) {
    status = sop_fail(ACLNN_ERR_PARAM_INVALID, name,
                      "workspaceSize %llu is smaller than the %llu bytes phase one asked for",
                      (unsigned long long)workspaceSize, (unsigned long long)ex->workspace_size);
  } else if (ex->workspace_size > 0 && workspace == NULL) {
    status = sop_fail(ACLNN_ERR_PARAM_NULLPTR, name, "workspace is a null pointer");
  } else if (ex->workspace_size > 0 && !standin_is_device_range(workspace, ex->workspace_size)) {
    status = sop_fail(ACLNN_ERR_PARAM_INVALID, name,
                      "the workspace at %p is not %llu bytes of device memory", workspace,
                      (unsigned long long)ex->workspace_size);
  }
  if (status == ACLNN_SUCCESS && ex->repeatable) {
    ex = clone_run(executor);
    if (ex == NULL) status = ACLNN_ERR_INNER;
  }
  if (status != ACLNN_SUCCESS) {
    if (!executor->repeatable) sop_executor_release(executor);
    return status;
  }
  ex->workspace_device = workspace;
  aclError err = standin_launch(stream, name, task_run, task_release, ex);
  if (err != ACL_SUCCESS) {
    char reason[512];
    snprintf(reason, sizeof reason, "%s", aclGetRecentErrMsg());
    sop_executor_release(ex);
    return sop_fail(ACLNN_ERR_RUNTIME_ERROR, name, "the runtime refused the task (error %d): %s",
                    (int)err, reason);
  }
  return ACLNN_SUCCESS;
}

/* ---- strided iteration ---- */

int64_t sop_iter_init(sop_iter *it, int32_t ndim, const int64_t *dims, int32_t count,
                      const aclTensor *const *t, void *const *base) {
  int64_t n = 1;
  it->ndim = ndim;
  it->count = count;
  for (int32_t d = 0; d < ndim; d++) {
    it->dims[d] = dims[d];
    it->idx[d] = 0;
    n *= dims[d];
  }
  for (int32_t k = 0; k < count; k++) {
    const aclTensor *x = t[k];
    int64_t size = (int64_t)sop_size(x->dtype);
    it->ptr[k] = base[k];
    for (int32_t d = 0; d < ndim; d++) {
      int32_t s = d - (ndim - x->ndim); /* x's dimension aligned with d */
      it->step[k][d] = s < 0 || x->dims[s] == 1 ? 0 : x->strides[s] * size;
    }
  }
  return n;
}

void sop_iter_next(sop_iter *it) {
  for (int32_t d = it->ndim - 1; d >= 0; d--) {
    if (++it->idx[d] < it->dims[d]) {
      for (int32_t k = 0; k < it->count; k++) it->ptr[k] += it->step[k][d];
      return;
    }
    it->idx[d] = 0;
    for (int32_t k = 0; k < it->count; k++) it->ptr[k] -= it->step[k][d] * (it->dims[d] - 1);
  }
}

/* ---- pointwise operators ---- */

aclnnStatus sop_pointwise_prepare(const char *op, sop_elem_fn elem, const char *out_arg,
                                  const aclTensor *out, int32_t n, const sop_operand *in,
                                  aclDataType compute, aclDataType result, aclOpExecutor **ex) {
  char a[160], b[160];
  if (n + 1 > SOP_ITER_MAX) return sop_fail(ACLNN_ERR_INNER, op, "too many operands");
  /* out's shape must be the broadcast shape of the tensor inputs: each input broadcasts to it,
   * and each dimension of out other than 1 comes from some input (or there are no tensors) */
  int32_t ndim = -1;
  bool covered[SOP_TENSOR_MAX_DIMS] = {false};
  for (int32_t k = 0; k < n; k++) {
    const aclTensor *t = in[k].t;
    if (t == NULL) continue;
    if (!sop_broadcasts_to(t, out->ndim, out->dims)) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s's shape %s does not broadcast to %s's %s",
                      in[k].arg, sop_shape_str(t, a), out_arg, sop_shape_str(out, b));
    }
    if (t->ndim > ndim) ndim = t->ndim;
    for (int32_t d = 0; d < t->ndim; d++) {
      if (t->dims[d] != 1) covered[out->ndim - t->ndim + d] = true;
    }
  }
  for (int32_t d = 0; ndim >= 0 && d < out->ndim; d++) {
    if (ndim != out->ndim || (out->dims[d] != 1 && !covered[d])) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                      "%s's shape %s is not the broadcast shape of the inputs", out_arg,
                      sop_shape_str(out, a));
    }
  }
  SOP_CHECK(sop_check_cast(op, result, out_arg, out));
  aclOpExecutor *e = sop_executor_new(op, n + 1, sop_pointwise_run);
  if (e == NULL) return ACLNN_ERR_INNER;
  sop_capture(e, 0, out);
  int32_t slot = 0;
  for (int32_t k = 0; k < n; k++) {
    if (in[k].t != NULL) {
      sop_capture(e, k + 1, in[k].t);
    } else {
      sop_capture_scalar(e, k + 1, slot++, in[k].s);
    }
  }
  e->compute = compute;
  e->result = result;
  e->elem = elem;
  *ex = e;
  return ACLNN_SUCCESS;
}

/* n elements of `dtype` at p, p + step, ... (bytes; 0: one element repeated) into dst[0],
 * dst[stride], ... in the representation of `compute`: the common cases in typed loops, the
 * rest through sop_load (which the typed loops match value for value). */
static void load_run(sop_value *dst, int32_t stride, const char *p, int64_t step, aclDataType dtype,
                     aclDataType compute, int64_t n) {
  const bool is_float = sop_is_float(compute);
  if (step == 0) {
    const sop_value v = sop_load(p, dtype, compute);
    for (int64_t e = 0; e < n; e++) dst[e * stride] = v;
    return;
  }
#define LOAD_RUN(T, field)                \
  for (int64_t e = 0; e < n; e++) {       \
    T v_;                                 \
    memcpy(&v_, p + e * step, sizeof v_); \
    dst[e * stride].field = v_;           \
  }                                       \
  return
  if (is_float && dtype == ACL_FLOAT) {
    LOAD_RUN(float, f);
  } else if (is_float && dtype == ACL_DOUBLE) {
    LOAD_RUN(double, f);
  } else if (!is_float && dtype == ACL_INT64) {
    LOAD_RUN(int64_t, i);
  } else if (!is_float && dtype == ACL_INT32) {
    LOAD_RUN(int32_t, i);
  } else if (!is_float && (dtype == ACL_BOOL || dtype == ACL_UINT8)) {
    for (int64_t e = 0; e < n; e++) {
      const uint8_t v = *(const uint8_t *)(p + e * step);
      dst[e * stride].i = dtype == ACL_BOOL ? v != 0 : v;
    }
    return;
  }
#undef LOAD_RUN
  for (int64_t e = 0; e < n; e++) dst[e * stride] = sop_load(p + e * step, dtype, compute);
}

/* n results (in `result`'s representation) rounded to `result` and stored converted into
 * `dtype` at p, p + step, ...: sop_round then sop_store, in typed loops where the store's
 * conversion is the rounding itself. */
static void store_run(char *p, int64_t step, aclDataType dtype, const sop_value *v,
                      aclDataType result, int64_t n) {
#define STORE_RUN(T, expr)                \
  for (int64_t e = 0; e < n; e++) {       \
    const T v_ = (T)(expr);               \
    memcpy(p + e * step, &v_, sizeof v_); \
  }                                       \
  return
  if (dtype == result) {
    switch (dtype) {
      case ACL_FLOAT:
        STORE_RUN(float, v[e].f);
      case ACL_DOUBLE:
        STORE_RUN(double, v[e].f);
      case ACL_INT64:
        STORE_RUN(int64_t, v[e].i);
      case ACL_INT32:
        STORE_RUN(int32_t, (uint32_t)v[e].i);
      case ACL_BOOL:
        STORE_RUN(uint8_t, v[e].i != 0);
      default:
        break;
    }
  }
#undef STORE_RUN
  for (int64_t e = 0; e < n; e++) sop_store(p + e * step, dtype, sop_round(v[e], result), result);
}

/* Drops sop_iter's dimensions of size 1 and merges adjacent dimensions every operand steps
 * through as one, so that the innermost dimension is as long as the layouts allow. */
static void iter_coalesce(sop_iter *it) {
  int32_t nd = 0;
  for (int32_t d = 0; d < it->ndim; d++) {
    if (it->dims[d] == 1) continue;
    bool merge = nd > 0;
    for (int32_t k = 0; merge && k < it->count; k++) {
      merge = it->step[k][nd - 1] == it->step[k][d] * it->dims[d];
    }
    if (merge) {
      it->dims[nd - 1] *= it->dims[d];
    } else {
      it->dims[nd++] = it->dims[d];
    }
    for (int32_t k = 0; k < it->count; k++) it->step[k][nd - 1] = it->step[k][d];
  }
  it->ndim = nd;
}

/* Whether out's elements (spanning `out_bytes` from out's first) are written before an input
 * reads them when runs are loaded whole: out overlaps an input that is not exactly out (same
 * first element, same steps), or out writes some element twice. */
static bool out_overlaps(const sop_iter *it, const int64_t *bytes) {
  for (int32_t d = 0; d < it->ndim; d++) {
    if (it->step[0][d] == 0) return true;
  }
  const char *o = it->ptr[0];
  for (int32_t k = 1; k < it->count; k++) {
    const char *p = it->ptr[k];
    if (p + bytes[k] <= o || o + bytes[0] <= p) continue;
    bool same = p == o;
    for (int32_t d = 0; same && d < it->ndim; d++) same = it->step[k][d] == it->step[0][d];
    if (!same) return true;
  }
  return false;
}

void sop_pointwise_run(aclOpExecutor *ex) {
  const aclTensor *t[SOP_ITER_MAX];
  void *base[SOP_ITER_MAX];
  int64_t bytes[SOP_ITER_MAX];
  for (int32_t k = 0; k < ex->count; k++) {
    t[k] = &ex->t[k];
    base[k] = sop_host(ex, k);
    bytes[k] = t[k]->host != NULL ? 0 : sop_extent(t[k]) * (int64_t)sop_size(t[k]->dtype);
  }
  sop_iter it;
  const int64_t numel = sop_iter_init(&it, t[0]->ndim, t[0]->dims, ex->count, t, base);
  if (numel == 0) return;
  iter_coalesce(&it);
  /* Runs along the innermost dimension, SOP_RUN elements at a time (one at a time where out
   * overlaps an input otherwise than exactly, where element order matters). */
  const int32_t inner_dim = it.ndim - 1;
  const int64_t inner = it.ndim > 0 ? it.dims[inner_dim] : 1;
  const int64_t chunk = out_overlaps(&it, bytes) ? 1 : SOP_RUN;
  int64_t step[SOP_ITER_MAX];
  for (int32_t k = 0; k < ex->count; k++) step[k] = it.ndim > 0 ? it.step[k][inner_dim] : 0;
  if (it.ndim > 0) it.ndim--; /* sop_iter walks the outer dimensions */
  const int32_t nin = ex->count - 1;
  const bool is_float = sop_is_float(ex->compute);
  sop_value in[SOP_RUN * (SOP_ITER_MAX - 1)], out[SOP_RUN];
  for (int64_t row = 0; row < numel / inner; row++, sop_iter_next(&it)) {
    for (int64_t at = 0; at < inner; at += chunk) {
      const int64_t n = inner - at < chunk ? inner - at : chunk;
      for (int32_t k = 1; k < ex->count; k++) {
        load_run(in + k - 1, nin, it.ptr[k] + at * step[k], step[k], t[k]->dtype, ex->compute, n);
      }
      ex->elem(out, in, nin, n, is_float, ex);
      store_run(it.ptr[0] + at * step[0], step[0], t[0]->dtype, out, ex->result, n);
    }
  }
}

aclnnStatus sop_pointwise_op(const sop_pointwise_spec *spec, const char *out_arg,
                             const aclTensor *out, int32_t n, const sop_operand *in,
                             aclOpExecutor **ex) {
  const char *op = spec->name;
  for (int32_t k = 0; k < n; k++) {
    SOP_CHECK(sop_check_nonnull(op, in[k].arg, in[k].t != NULL ? (const void *)in[k].t : in[k].s));
  }
  SOP_CHECK(sop_check_nonnull(op, out_arg, out));
  aclDataType tensors = ACL_DT_UNDEFINED, compute = ACL_DT_UNDEFINED;
  for (int32_t k = 0; k < n; k++) {
    if (in[k].flags & SOP_MASK) {
      SOP_CHECK(sop_check_tensor(op, in[k].arg, in[k].t, SOP_BIT(ACL_BOOL) | SOP_BIT(ACL_UINT8)));
    } else if (in[k].t != NULL) {
      SOP_CHECK(sop_check_tensor(op, in[k].arg, in[k].t, spec->inputs));
      tensors = tensors == ACL_DT_UNDEFINED ? in[k].t->dtype : sop_promote(tensors, in[k].t->dtype);
      if (tensors == ACL_DT_UNDEFINED) {
        return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                        "%s (%s) has no common type with the inputs before it", in[k].arg,
                        sop_dtype_name(in[k].t->dtype));
      }
    } else {
      SOP_CHECK(sop_check_scalar(op, in[k].arg, in[k].s, SOP_ALL));
    }
  }
  SOP_CHECK(sop_check_tensor(op, out_arg, out, spec->inputs));
  compute = tensors;
  for (int32_t k = 0; k < n; k++) {
    if (in[k].t != NULL || (in[k].flags & SOP_MASK)) continue;
    compute =
        compute == ACL_DT_UNDEFINED ? in[k].s->dtype : sop_promote_scalar(compute, in[k].s->dtype);
  }
  if (spec->flags & SOP_PW_FIRST_TYPE) {
    compute = in[0].t != NULL ? in[0].t->dtype : in[0].s->dtype;
  }
  if ((spec->flags & SOP_PW_INTS_TO_FLOAT) && compute != ACL_DT_UNDEFINED &&
      !sop_is_float(compute)) {
    compute = ACL_FLOAT;
  }
  if (compute == ACL_DT_UNDEFINED || !(spec->computes & SOP_BIT(compute))) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "the inputs' common type %s is not supported",
                    sop_dtype_name(compute));
  }
  aclDataType result = (spec->flags & SOP_PW_BOOL_RESULT) ? ACL_BOOL : compute;
  return sop_pointwise_prepare(op, spec->elem, out_arg, out, n, in, compute, result, ex);
}

void sop_param(aclOpExecutor *ex, int32_t k, const aclScalar *s) {
  if (s == NULL) return;
  ex->f[k] = sop_load_f(s->value, s->dtype);
  ex->i[k] = sop_load_i(s->value, s->dtype);
}
