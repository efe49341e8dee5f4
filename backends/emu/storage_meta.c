/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's per-storage metadata (vendor.h, "Per-storage metadata", ABI 2.4): emu keeps whatever
 * named values it is given for a storage of its device memory -- any name, any value -- so
 * that code written for a device with storage formats (Ascend's) runs on it; its own kernels
 * read none.  The values live in the context, in one list under a lock: a program gives values
 * to few storages.
 */
#include <stdlib.h>
#include <string.h>

#include "emu.h"

struct emu_meta_entry {
  int32_t device;
  const void *data;
  char name[32];
  int64_t value;
};

static tb_status meta_set(tb_context ctx, int32_t device, void *data, size_t bytes,
                          const char *name, int64_t value) {
  tb_status status = emu_check_device(ctx, device, "storage_meta.set");
  if (status != TB_OK) return status;
  if (data == NULL || name == NULL || strlen(name) == 0 || strlen(name) > 31) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: storage_meta.set: data %p, name '%s': needs a storage and a name of "
                    "1 to 31 characters",
                    data, name == NULL ? "(null)" : name);
  }
  if (!emu_is_device_range(ctx, device, data, bytes)) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: storage_meta.set: %p (%zu bytes) is not memory of device %d", data, bytes,
                    (int)device);
  }
  pthread_mutex_lock(&ctx->meta_mutex);
  for (size_t i = 0; i < ctx->meta_count; i++) {
    emu_meta_entry *e = &ctx->meta[i];
    if (e->device == device && e->data == data && strcmp(e->name, name) == 0) {
      e->value = value;
      pthread_mutex_unlock(&ctx->meta_mutex);
      return TB_OK;
    }
  }
  if (ctx->meta_count == ctx->meta_capacity) {
    size_t capacity = ctx->meta_capacity == 0 ? 16 : 2 * ctx->meta_capacity;
    emu_meta_entry *grown = realloc(ctx->meta, capacity * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&ctx->meta_mutex);
      return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: storage_meta.set: out of host memory");
    }
    ctx->meta = grown;
    ctx->meta_capacity = capacity;
  }
  emu_meta_entry *e = &ctx->meta[ctx->meta_count++];
  e->device = device;
  e->data = data;
  strcpy(e->name, name); /* fits: checked above */
  e->value = value;
  pthread_mutex_unlock(&ctx->meta_mutex);
  return TB_OK;
}

static tb_status meta_get(tb_context ctx, int32_t device, const void *data, const char **names,
                          int64_t *values, int32_t capacity, int32_t *count) {
  tb_status status = emu_check_device(ctx, device, "storage_meta.get");
  if (status != TB_OK) return status;
  if (count == NULL || (capacity > 0 && (names == NULL || values == NULL))) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: storage_meta.get: NULL output");
  }
  int32_t found = 0;
  pthread_mutex_lock(&ctx->meta_mutex);
  for (size_t i = 0; i < ctx->meta_count; i++) {
    const emu_meta_entry *e = &ctx->meta[i];
    if (e->device != device || e->data != data) continue;
    if (found < capacity) {
      names[found] = e->name;
      values[found] = e->value;
    }
    found++;
  }
  pthread_mutex_unlock(&ctx->meta_mutex);
  *count = found;
  return TB_OK;
}

static tb_status meta_release(tb_context ctx, int32_t device, void *data) {
  tb_status status = emu_check_device(ctx, device, "storage_meta.release");
  if (status != TB_OK) return status;
  pthread_mutex_lock(&ctx->meta_mutex);
  size_t kept = 0;
  for (size_t i = 0; i < ctx->meta_count; i++) {
    if (ctx->meta[i].device == device && ctx->meta[i].data == data) continue;
    ctx->meta[kept++] = ctx->meta[i];
  }
  ctx->meta_count = kept;
  pthread_mutex_unlock(&ctx->meta_mutex);
  return TB_OK;
}

/* A link of emu's extension chain (after the graphs, vendor.c; before ipc.c's). */
const tb_storage_meta_extension emu_storage_meta = {
    .base = {.struct_size = sizeof(tb_storage_meta_extension),
             .type = TB_EXTENSION_STORAGE_META,
             .next = &emu_ipc.base},
    .names = NULL, /* any name */
    .set = meta_set,
    .get = meta_get,
    .release = meta_release,
};
