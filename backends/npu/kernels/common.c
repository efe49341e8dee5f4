/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's kernel plumbing (common.h): the entry every kernel goes through, aclnn argument objects
 * made from tb_values and destroyed when the call returns, and the aclnn two-phase call with
 * its workspace from torch_backend's caching allocator.
 */
#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

enum { OBJ_TENSOR, OBJ_SCALAR, OBJ_INT_ARRAY, OBJ_BOOL_ARRAY, OBJ_TENSOR_LIST };

static const char *op_name(const npu_call *c) { return c->call->kernel->name; }

tb_status npu_decline(npu_call *c, const char *format, ...) {
  char why[256];
  va_list args;
  va_start(args, format);
  vsnprintf(why, sizeof why, format, args);
  va_end(args);
  return npu_fail(c->ctx, TB_ERROR_NOT_SUPPORTED, "npu: %s: %s", op_name(c), why);
}

tb_status npu_kernel_entry(tb_context ctx, const tb_kernel_call *call, npu_body_fn body) {
  if (call == NULL || call->struct_size < TB_KERNEL_CALL_V2_0_SIZE || call->stream == NULL ||
      call->kernel == NULL || (call->num_args > 0 && call->args == NULL)) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: a kernel call without %s",
                    call == NULL ? "a call" : "a stream, kernel or arguments");
  }
  npu_call *c = malloc(sizeof *c);
  if (c == NULL) {
    return npu_fail(ctx, TB_ERROR_OUT_OF_MEMORY, "npu: %s: out of host memory", call->kernel->name);
  }
  c->ctx = ctx;
  c->call = call;
  c->args = call->args;
  c->count = call->num_args;
  c->device = npu_stream_device(call->stream);
  c->num_objects = 0;
  c->failed = TB_OK;
  c->workspace_size = 0;
  c->executor = NULL;
  tb_status status = npu_enter(ctx, c->device);
  if (status == TB_OK) status = body(c);
  npu_release_objects(c, 0);
  free(c);
  return status;
}

/* Destroys an aclnn argument object of kind `kind` (OBJ_*). */
static void destroy_object(int kind, const void *p) {
  switch (kind) {
    case OBJ_TENSOR:
      aclDestroyTensor(p);
      break;
    case OBJ_SCALAR:
      aclDestroyScalar(p);
      break;
    case OBJ_INT_ARRAY:
      aclDestroyIntArray(p);
      break;
    case OBJ_BOOL_ARRAY:
      aclDestroyBoolArray(p);
      break;
    default:
      aclDestroyTensorList(p);
      break;
  }
}

void npu_release_objects(npu_call *c, int32_t mark) {
  for (int32_t k = c->num_objects - 1; k >= mark; k--) {
    const void *p = c->objects[k].p;
    destroy_object(c->objects[k].kind, p);
  }
  if (mark < c->num_objects) c->num_objects = mark;
}

/* ---- dtypes ---- */

aclDataType npu_acl_dtype(tb_dtype dtype) {
  switch (dtype) {
    case TB_DTYPE_BOOL:
      return ACL_BOOL;
    case TB_DTYPE_UINT8:
      return ACL_UINT8;
    case TB_DTYPE_INT8:
      return ACL_INT8;
    case TB_DTYPE_INT16:
      return ACL_INT16;
    case TB_DTYPE_INT32:
      return ACL_INT32;
    case TB_DTYPE_INT64:
      return ACL_INT64;
    case TB_DTYPE_FLOAT16:
      return ACL_FLOAT16;
    case TB_DTYPE_BFLOAT16:
      return ACL_BF16;
    case TB_DTYPE_FLOAT32:
      return ACL_FLOAT;
    case TB_DTYPE_FLOAT64:
      return ACL_DOUBLE;
    default:
      return ACL_DT_UNDEFINED;
  }
}

bool npu_is_floating(tb_dtype dtype) { return (NPU_FLOATS & NPU_BIT(dtype)) != 0; }

/* ---- arguments ---- */

bool npu_is_number(const tb_value *v) {
  return v->kind == TB_VALUE_INT || v->kind == TB_VALUE_DOUBLE || v->kind == TB_VALUE_BOOL;
}
bool npu_is_tensor(const tb_value *v) { return v->kind == TB_VALUE_TENSOR && v->as.tensor != NULL; }

/* Records the first failure; returns NULL for the caller to pass on. */
static void *failure(npu_call *c, tb_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void *failure(npu_call *c, tb_status status, const char *format, ...) {
  if (c->failed != TB_OK) return NULL;
  char why[512];
  va_list args;
  va_start(args, format);
  vsnprintf(why, sizeof why, format, args);
  va_end(args);
  c->failed = npu_fail(c->ctx, status, "npu: %s: %s", op_name(c), why);
  return NULL;
}

/* Keeps @p p for destruction; NULL from its creator is a failure with AscendCL's message. */
static void *own(npu_call *c, int kind, const void *p, const char *creator) {
  if (p == NULL) {
    return failure(c, TB_ERROR_INTERNAL, "%s failed: %s", creator, aclGetRecentErrMsg());
  }
  if (c->num_objects == NPU_MAX_OBJECTS) {
    destroy_object(kind, p);
    return failure(c, TB_ERROR_NOT_SUPPORTED, "more than %d aclnn argument objects",
                   NPU_MAX_OBJECTS);
  }
  c->objects[c->num_objects].kind = kind;
  c->objects[c->num_objects].p = p;
  c->num_objects++;
  return (void *)p;
}

static const tb_value *arg(npu_call *c, int32_t k, const char *what) {
  if (k >= c->count) {
    failure(c, TB_ERROR_INVALID_ARGUMENT, "argument %d (%s) is missing", (int)k, what);
    return NULL;
  }
  return &c->args[k];
}

const tb_tensor *npu_arg_tensor(const npu_call *c, int32_t k) {
  return k < c->count && c->args[k].kind == TB_VALUE_TENSOR ? c->args[k].as.tensor : NULL;
}

double npu_arg_double(const npu_call *c, int32_t k) {
  const tb_value *v = &c->args[k];
  return v->kind == TB_VALUE_DOUBLE ? v->as.f
         : v->kind == TB_VALUE_INT  ? (double)v->as.i
                                    : (double)v->as.b;
}
int64_t npu_arg_int(const npu_call *c, int32_t k) {
  const tb_value *v = &c->args[k];
  return v->kind == TB_VALUE_INT      ? v->as.i
         : v->kind == TB_VALUE_DOUBLE ? (int64_t)v->as.f
                                      : (int64_t)v->as.b;
}

/* A tensor built directly (no list): owned by the call. */
static aclTensor *make_tensor(npu_call *c, const tb_tensor *t) {
  if (t->ndim > NPU_MAX_DIMS) {
    return failure(c, TB_ERROR_NOT_SUPPORTED, "a tensor of %d dimensions (aclnn takes at most %d)",
                   (int)t->ndim, NPU_MAX_DIMS);
  }
  aclDataType dtype = npu_acl_dtype(t->dtype);
  if (dtype == ACL_DT_UNDEFINED) {
    return failure(c, TB_ERROR_NOT_SUPPORTED, "dtype %d has no aclDataType", (int)t->dtype);
  }
  /* storage: one dimension spanning the view (its last element + 1), 0 when empty */
  int64_t extent = 1;
  for (int32_t d = 0; d < t->ndim; d++) {
    if (t->sizes[d] == 0) {
      extent = 0;
      break;
    }
    extent += (t->sizes[d] - 1) * t->strides[d];
  }
  return aclCreateTensor(t->sizes, (uint64_t)t->ndim, dtype, t->strides, 0, ACL_FORMAT_ND, &extent,
                         1, t->data);
}

aclTensor *npu_dense_tensor(npu_call *c, int32_t ndim, const int64_t *sizes, aclDataType dtype,
                            const void *data) {
  if (ndim > NPU_MAX_DIMS) {
    return failure(c, TB_ERROR_NOT_SUPPORTED, "a tensor of %d dimensions (aclnn takes at most %d)",
                   (int)ndim, NPU_MAX_DIMS);
  }
  int64_t strides[NPU_MAX_DIMS + 1] = {0};
  int64_t numel = 1;
  for (int32_t d = ndim - 1; d >= 0; d--) {
    strides[d] = numel;
    numel *= sizes[d];
  }
  aclTensor *x = aclCreateTensor(sizes, (uint64_t)ndim, dtype, strides, 0, ACL_FORMAT_ND, &numel, 1,
                                 (void *)(uintptr_t)data);
  return own(c, OBJ_TENSOR, x, "aclCreateTensor");
}

aclTensor *npu_tensor_of(npu_call *c, const tb_tensor *t) {
  if (t == NULL) return NULL;
  aclTensor *x = make_tensor(c, t);
  if (x == NULL && c->failed != TB_OK) return NULL; /* declined */
  return own(c, OBJ_TENSOR, x, "aclCreateTensor");
}

aclTensor *npu_tensor(npu_call *c, int32_t k) {
  const tb_value *v = arg(c, k, "a tensor");
  if (v == NULL || v->kind == TB_VALUE_NONE) return NULL;
  if (v->kind != TB_VALUE_TENSOR) {
    return failure(c, TB_ERROR_INVALID_ARGUMENT, "argument %d is not a tensor", (int)k);
  }
  return npu_tensor_of(c, v->as.tensor);
}

aclScalar *npu_scalar(npu_call *c, int32_t k) {
  const tb_value *v = arg(c, k, "a number");
  if (v == NULL) return NULL;
  int64_t i;
  double f;
  bool b;
  switch (v->kind) {
    case TB_VALUE_INT:
      i = v->as.i;
      return own(c, OBJ_SCALAR, aclCreateScalar(&i, ACL_INT64), "aclCreateScalar");
    case TB_VALUE_DOUBLE:
      f = v->as.f;
      return own(c, OBJ_SCALAR, aclCreateScalar(&f, ACL_DOUBLE), "aclCreateScalar");
    case TB_VALUE_BOOL:
      b = v->as.b != 0;
      return own(c, OBJ_SCALAR, aclCreateScalar(&b, ACL_BOOL), "aclCreateScalar");
    default:
      return failure(c, TB_ERROR_INVALID_ARGUMENT, "argument %d is not a number", (int)k);
  }
}

aclScalar *npu_scalar_f(npu_call *c, double value, aclDataType dtype) {
  float f = (float)value;
  int64_t i = (int64_t)value;
  bool b = value != 0;
  void *p = dtype == ACL_FLOAT   ? (void *)&f
            : dtype == ACL_INT64 ? (void *)&i
            : dtype == ACL_BOOL  ? (void *)&b
                                 : (void *)&value;
  if (dtype != ACL_FLOAT && dtype != ACL_INT64 && dtype != ACL_BOOL) dtype = ACL_DOUBLE;
  return own(c, OBJ_SCALAR, aclCreateScalar(p, dtype), "aclCreateScalar");
}

aclScalar *npu_scalar_i(npu_call *c, int64_t value) {
  return own(c, OBJ_SCALAR, aclCreateScalar(&value, ACL_INT64), "aclCreateScalar");
}

aclIntArray *npu_int_array_of(npu_call *c, const int64_t *values, int64_t count) {
  return own(c, OBJ_INT_ARRAY, aclCreateIntArray(values, (uint64_t)count), "aclCreateIntArray");
}

aclIntArray *npu_int_array(npu_call *c, int32_t k) {
  const tb_value *v = arg(c, k, "an int list");
  if (v == NULL) return NULL;
  if (v->kind != TB_VALUE_INT_LIST) {
    return failure(c, TB_ERROR_INVALID_ARGUMENT, "argument %d is not an int list", (int)k);
  }
  return npu_int_array_of(c, v->as.ints.items, v->as.ints.count);
}

aclBoolArray *npu_bool_array(npu_call *c, int32_t k) {
  const tb_value *v = arg(c, k, "a bool list");
  if (v == NULL) return NULL;
  if (v->kind != TB_VALUE_BOOL_LIST) {
    return failure(c, TB_ERROR_INVALID_ARGUMENT, "argument %d is not a bool list", (int)k);
  }
  int64_t n = v->as.bools.count;
  bool *values = malloc((size_t)(n > 0 ? n : 1) * sizeof *values);
  if (values == NULL) return failure(c, TB_ERROR_OUT_OF_MEMORY, "out of host memory");
  for (int64_t i = 0; i < n; i++) values[i] = v->as.bools.items[i] != 0;
  aclBoolArray *a = aclCreateBoolArray(values, (uint64_t)n);
  free(values);
  return own(c, OBJ_BOOL_ARRAY, a, "aclCreateBoolArray");
}

aclTensorList *npu_tensor_list(npu_call *c, int32_t k) {
  const tb_value *v = arg(c, k, "a tensor list");
  if (v == NULL) return NULL;
  if (v->kind != TB_VALUE_TENSOR_LIST) {
    return failure(c, TB_ERROR_INVALID_ARGUMENT, "argument %d is not a tensor list", (int)k);
  }
  int64_t n = v->as.tensors.count;
  aclTensor **items = calloc((size_t)(n > 0 ? n : 1), sizeof *items);
  if (items == NULL) return failure(c, TB_ERROR_OUT_OF_MEMORY, "out of host memory");
  bool ok = true;
  for (int64_t i = 0; i < n && ok; i++) {
    const tb_tensor *t = v->as.tensors.items[i];
    if (t == NULL) continue; /* an absent optional element */
    items[i] = make_tensor(c, t);
    if (items[i] == NULL) {
      ok = false;
      if (c->failed == TB_OK) own(c, OBJ_TENSOR, NULL, "aclCreateTensor");
    }
  }
  aclTensorList *list =
      ok ? aclCreateTensorList((const aclTensor *const *)items, (uint64_t)n) : NULL;
  if (list == NULL) { /* the tensors are still ours */
    for (int64_t i = 0; i < n; i++) {
      if (items[i] != NULL) aclDestroyTensor(items[i]);
    }
  }
  free(items);
  if (!ok) return NULL;
  return own(c, OBJ_TENSOR_LIST, list, "aclCreateTensorList");
}

/* ---- the two-phase call ---- */

/* Releases an executor that will not run (documented: make it repeatable, destroy it). */
static void drop_executor(aclOpExecutor *executor) {
  if (executor != NULL && aclSetAclOpExecutorRepeatable(executor) == ACLNN_SUCCESS) {
    aclDestroyAclOpExecutor(executor);
  }
}

/* sdk guide: two phases */
tb_status npu_aclnn_launch(npu_call *c, const char *name, aclnnStatus status,
                           npu_aclnn_run_fn run) {
  uint64_t size = c->workspace_size;
  aclOpExecutor *executor = c->executor;
  c->workspace_size = 0;
  c->executor = NULL;
  if (c->failed != TB_OK) { /* an argument object could not be made: phase one saw a NULL */
    if (status == ACLNN_SUCCESS) drop_executor(executor);
    return c->failed;
  }
  if (status != ACLNN_SUCCESS) {
    char call[96];
    snprintf(call, sizeof call, "%sGetWorkspaceSize", name);
    return npu_check(c->ctx, c->device, status, call);
  }
  void *workspace = NULL;
  if (size > 0) {
    tb_status st = c->call->workspace(c->call, (size_t)size, &workspace);
    if (st != TB_OK) {
      drop_executor(executor);
      return npu_fail(c->ctx, st, "npu: %s: no workspace of %llu bytes on npu:%d (%s)", name,
                      (unsigned long long)size, (int)c->device, tb_status_name(st));
    }
  }
  aclrtStream stream = npu_acl_stream(c->call->stream);
  npu_note_work(c->device, name, op_name(c));
  status = run(workspace, size, executor, stream);
  if (status == ACLNN_SUCCESS) return TB_OK;
  tb_status st = npu_check(c->ctx, c->device, status, name);
  if (status == ACLNN_ERR_RUNTIME_ERROR) {
    /* the runtime refused the task: when the device has faulted, that fault is the answer (not
     * asked of a capturing stream, whose query would invalidate its capture: acl_mdl.h) */
    aclmdlRICaptureStatus capture = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
    if (aclmdlRICaptureGetInfo(stream, &capture, NULL) != ACL_SUCCESS) {
      (void)aclGetRecentErrMsg();
    } else if (capture == ACL_MODEL_RI_CAPTURE_STATUS_NONE) {
      aclrtStreamStatus stream_status;
      aclError err = aclrtStreamQuery(stream, &stream_status);
      if (err != ACL_SUCCESS) st = npu_check(c->ctx, c->device, err, name);
    }
  }
  return st;
}
/* sdk guide: end */
