/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's per-storage metadata (vendor.h, "Per-storage metadata", ABI 2.4): a storage's format,
 * the fact torch_npu keeps per storage (its NPUStorageDesc), under the one name "format", with
 * AscendCL's aclFormat numbers.  This adapter has no format casts (npu_format_cast): every
 * storage holds its elements in a plain layout, so it takes the plain formats -- ACL_FORMAT_ND
 * (2), ACL_FORMAT_NCHW (0), ACL_FORMAT_NHWC (1) -- and refuses the private ones (NC1HWC0,
 * FRACTAL_Z, FRACTAL_NZ), whose bytes only a cast could produce.  The formats are kept in the
 * context, guarded by its mutex.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_runtime.h"

static const char *const k_names[] = {"format", NULL};

static const char *format_name(int64_t value) {
  switch (value) {
    case ACL_FORMAT_NCHW:
      return "ACL_FORMAT_NCHW";
    case ACL_FORMAT_NHWC:
      return "ACL_FORMAT_NHWC";
    case ACL_FORMAT_ND:
      return "ACL_FORMAT_ND";
    case ACL_FORMAT_NC1HWC0:
      return "ACL_FORMAT_NC1HWC0";
    case ACL_FORMAT_FRACTAL_Z:
      return "ACL_FORMAT_FRACTAL_Z";
    case ACL_FORMAT_FRACTAL_NZ:
      return "ACL_FORMAT_FRACTAL_NZ";
    default:
      return NULL;
  }
}

static npu_storage_format *find(npu_context *ctx, int32_t device, const void *data) {
  for (size_t i = 0; i < ctx->formats_count; i++) {
    if (ctx->formats[i].device == device && ctx->formats[i].data == data) return &ctx->formats[i];
  }
  return NULL;
}

static tb_status meta_set(tb_context ctx, int32_t device, void *data, size_t bytes,
                          const char *name, int64_t value) {
  tb_status status = npu_check_device(ctx, device, "storage_meta.set");
  if (status != TB_OK) return status;
  if (name == NULL || strcmp(name, "format") != 0) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: storage_meta.set: npu keeps no storage metadata named '%s' (it takes: "
                    "format)",
                    name == NULL ? "(null)" : name);
  }
  const char *format = format_name(value);
  if (format == NULL ||
      (value != ACL_FORMAT_ND && value != ACL_FORMAT_NCHW && value != ACL_FORMAT_NHWC)) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: storage_meta.set: format %lld (%s) is not a plain layout; npu takes "
                    "ACL_FORMAT_ND (2), ACL_FORMAT_NCHW (0) and ACL_FORMAT_NHWC (1): the private "
                    "formats need a format cast, which this adapter does not have",
                    (long long)value, format == NULL ? "not an aclFormat" : format);
  }
  pthread_mutex_lock(&ctx->mutex);
  const npu_block *block = npu_blocks_find(&ctx->device_blocks, (uintptr_t)data, bytes);
  if (block == NULL || block->device != device) {
    pthread_mutex_unlock(&ctx->mutex);
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: storage_meta.set: %p (%zu bytes) is not memory of device %d", data, bytes,
                    (int)device);
  }
  npu_storage_format *entry = find(ctx, device, data);
  if (entry == NULL) {
    if (ctx->formats_count == ctx->formats_capacity) {
      size_t capacity = ctx->formats_capacity == 0 ? 16 : 2 * ctx->formats_capacity;
      npu_storage_format *grown = realloc(ctx->formats, capacity * sizeof *grown);
      if (grown == NULL) {
        pthread_mutex_unlock(&ctx->mutex);
        return npu_fail(ctx, TB_ERROR_OUT_OF_MEMORY, "npu: storage_meta.set: out of host memory");
      }
      ctx->formats = grown;
      ctx->formats_capacity = capacity;
    }
    entry = &ctx->formats[ctx->formats_count++];
    entry->device = device;
    entry->data = data;
  }
  entry->format = (aclFormat)value;
  pthread_mutex_unlock(&ctx->mutex);
  return TB_OK;
}

static tb_status meta_get(tb_context ctx, int32_t device, const void *data, const char **names,
                          int64_t *values, int32_t capacity, int32_t *count) {
  tb_status status = npu_check_device(ctx, device, "storage_meta.get");
  if (status != TB_OK) return status;
  if (count == NULL || (capacity > 0 && (names == NULL || values == NULL))) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: storage_meta.get: NULL output");
  }
  pthread_mutex_lock(&ctx->mutex);
  const npu_storage_format *entry = find(ctx, device, data);
  *count = entry != NULL;
  if (entry != NULL && capacity > 0) {
    names[0] = k_names[0];
    values[0] = entry->format;
  }
  pthread_mutex_unlock(&ctx->mutex);
  return TB_OK;
}

static tb_status meta_release(tb_context ctx, int32_t device, void *data) {
  tb_status status = npu_check_device(ctx, device, "storage_meta.release");
  if (status != TB_OK) return status;
  pthread_mutex_lock(&ctx->mutex);
  npu_storage_format *entry = find(ctx, device, data);
  if (entry != NULL) *entry = ctx->formats[--ctx->formats_count];
  pthread_mutex_unlock(&ctx->mutex);
  return TB_OK;
}

/* The last link of npu's extension chain (after the graphs, graph.c). */
const tb_storage_meta_extension npu_storage_meta = {
    .base = {.struct_size = sizeof(tb_storage_meta_extension),
             .type = TB_EXTENSION_STORAGE_META,
             .next = &npu_ipc.base},
    .names = k_names,
    .set = meta_set,
    .get = meta_get,
    .release = meta_release,
};
