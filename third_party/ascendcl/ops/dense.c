/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Contiguous copies of captured tensors and the structured operators' phase-one helpers (see
 * dense.h).
 */
#include "dense.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *dense_alloc(int64_t count, size_t size) {
  if (count < 0 || (count > 0 && (uint64_t)count > SIZE_MAX / size)) return NULL;
  size_t bytes = (size_t)count * size;
  return malloc(bytes > 0 ? bytes : 1);
}

void dense_fail_memory(void) { standin_task_fail("out of host memory"); }

/* Copies (or converts) one element of `from` at `src` to `to` at `dst`. */
static void convert(void *dst, aclDataType to, const void *src, aclDataType from) {
  if (to == from) {
    memcpy(dst, src, sop_size(to));
  } else if (sop_is_float(to)) {
    sop_store_f(dst, to, sop_load_f(src, from));
  } else {
    sop_store_i(dst, to, sop_load_i(src, from));
  }
}

bool dense_is_contiguous(const aclTensor *t) {
  int64_t expected = 1;
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    if (t->dims[d] != 1 && t->strides[d] != expected) return false;
    expected *= t->dims[d];
  }
  return true;
}

/* n contiguous elements of `from` at `src` to `to` at `dst`: the common conversions in typed
 * loops, the rest element by element. */
static void convert_run(void *dst, aclDataType to, const void *src, aclDataType from, int64_t n) {
  if (to == from) {
    memcpy(dst, src, (size_t)n * sop_size(to));
  } else if (from == ACL_FLOAT && to == ACL_DOUBLE) {
    for (int64_t e = 0; e < n; e++) ((double *)dst)[e] = ((const float *)src)[e];
  } else if (from == ACL_DOUBLE && to == ACL_FLOAT) {
    for (int64_t e = 0; e < n; e++) ((float *)dst)[e] = (float)((const double *)src)[e];
  } else if (from == ACL_INT32 && to == ACL_INT64) {
    for (int64_t e = 0; e < n; e++) ((int64_t *)dst)[e] = ((const int32_t *)src)[e];
  } else {
    const size_t to_size = sop_size(to), from_size = sop_size(from);
    for (int64_t e = 0; e < n; e++) {
      convert((char *)dst + (size_t)e * to_size, to, (const char *)src + (size_t)e * from_size,
              from);
    }
  }
}

void *dense_load_as(const aclOpExecutor *ex, int32_t k, aclDataType as, int32_t ndim,
                    const int64_t *dims) {
  const aclTensor *t = &ex->t[k];
  const bool own_shape = ndim < 0;
  if (own_shape) {
    ndim = t->ndim;
    dims = t->dims;
  }
  int64_t numel = 1;
  for (int32_t d = 0; d < ndim; d++) numel *= dims[d];
  const size_t item = sop_size(as);
  char *out = dense_alloc(numel, item);
  if (out == NULL || numel == 0) return out;
  if (own_shape && dense_is_contiguous(t)) {
    convert_run(out, as, sop_host(ex, k), t->dtype, numel);
    return out;
  }
  sop_iter it;
  void *base = sop_host(ex, k);
  sop_iter_init(&it, ndim, dims, 1, &t, &base);
  for (int64_t e = 0; e < numel; e++, sop_iter_next(&it)) {
    convert(out + (size_t)e * item, as, it.ptr[0], t->dtype);
  }
  return out;
}

double *dense_load(const aclOpExecutor *ex, int32_t k) {
  return dense_load_as(ex, k, ACL_DOUBLE, -1, NULL);
}

int64_t *dense_load_i(const aclOpExecutor *ex, int32_t k) {
  return dense_load_as(ex, k, ACL_INT64, -1, NULL);
}

void dense_store_as(const aclOpExecutor *ex, int32_t k, const void *src, aclDataType from) {
  const aclTensor *t = &ex->t[k];
  const size_t item = sop_size(from);
  sop_iter it;
  void *base = sop_host(ex, k);
  int64_t numel = sop_iter_init(&it, t->ndim, t->dims, 1, &t, &base);
  if (base == NULL) return; /* empty */
  if (dense_is_contiguous(t)) {
    convert_run(base, t->dtype, src, from, numel);
    return;
  }
  for (int64_t e = 0; e < numel; e++, sop_iter_next(&it)) {
    convert(it.ptr[0], t->dtype, (const char *)src + (size_t)e * item, from);
  }
}

void dense_store(const aclOpExecutor *ex, int32_t k, const double *src) {
  dense_store_as(ex, k, src, ACL_DOUBLE);
}

aclnnStatus dense_wrap_dim(const char *op, const char *arg, int64_t dim, int32_t ndim,
                           int64_t *wrapped) {
  const int64_t bound = ndim > 0 ? ndim : 1;
  if (dim < -bound || dim >= bound) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "%s %lld is out of range for a tensor of %d dimensions (expected [%lld, %lld])",
                    arg, (long long)dim, (int)ndim, (long long)-bound, (long long)bound - 1);
  }
  *wrapped = dim < 0 ? dim + bound : dim;
  return ACLNN_SUCCESS;
}

aclnnStatus dense_dim_mask(const char *op, const char *arg, const aclIntArray *dims, int32_t ndim,
                           bool empty_is_all, bool *mask) {
  for (int32_t d = 0; d < ndim; d++) mask[d] = dims->size == 0 && empty_is_all;
  for (uint64_t i = 0; i < dims->size; i++) {
    int64_t d = 0;
    SOP_CHECK(dense_wrap_dim(op, arg, dims->values[i], ndim, &d));
    if (ndim == 0) continue; /* a 0-dim tensor reduces over nothing */
    if (mask[d]) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s names dimension %lld twice", arg,
                      (long long)d);
    }
    mask[d] = true;
  }
  return ACLNN_SUCCESS;
}

aclnnStatus dense_check_shape(const char *op, const char *arg, const aclTensor *t, int32_t ndim,
                              const int64_t *dims) {
  bool same = t->ndim == ndim;
  for (int32_t d = 0; same && d < ndim; d++) same = t->dims[d] == dims[d];
  if (same) return ACLNN_SUCCESS;
  char have[160], want[160] = "[";
  size_t n = 1;
  for (int32_t d = 0; d < ndim && n < sizeof want - 24; d++) {
    n += (size_t)snprintf(want + n, sizeof want - n, "%s%lld", d ? ", " : "", (long long)dims[d]);
  }
  snprintf(want + n, sizeof want - n, "]");
  return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s has shape %s, expected %s", arg,
                  sop_shape_str(t, have), want);
}
