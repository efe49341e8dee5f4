/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's device memory shared between processes (vendor.h, "Device memory shared between
 * processes", ABI 2.5) over AscendCL's IPC calls (aclrtIpcMemGetExportKey.md):
 *   export_memory -> aclrtIpcMemGetExportKey on the whole device_malloc block, without the
 *                    whitelist of importing processes (torch_backend does not know the
 *                    consumer when it sends); the key travels in tb_ipc_handle::bytes;
 *   import_memory -> aclrtIpcMemImportByKey on the device; the address joins the blocks the
 *                    copies and kernels check, with the exported size;
 *   close_memory  -> aclrtIpcMemClose of the import.
 * An export lasts as long as its block: device_free (memory.c) closes it before aclrtFree, the
 * order AscendCL asks for (importers close first -- torch_backend's reference counts see to it
 * -- then the exporter, then the free).  One key per block, made on its first export.
 *
 * State: the context's exports and imports, under its mutex.
 */
#include <stdlib.h>
#include <string.h>

#include "npu_runtime.h"

#define KEY_LEN 65 /* aclrtIpcMemGetExportKey's len, the terminator included */

_Static_assert(KEY_LEN - 1 <= TB_IPC_HANDLE_BYTES, "a key fits a tb_ipc_handle");

struct npu_ipc_entry {
  bool imported;
  int32_t device;
  void *ptr;
  size_t size;
  char key[KEY_LEN];
};

/* The entry for `ptr` on `device` (caller holds the mutex). */
static npu_ipc_entry *find(npu_context *ctx, int32_t device, const void *ptr, bool imported) {
  for (size_t i = 0; i < ctx->ipc_count; i++) {
    npu_ipc_entry *e = &ctx->ipc[i];
    if (e->device == device && e->ptr == ptr && e->imported == imported) return e;
  }
  return NULL;
}

static npu_ipc_entry *add(npu_context *ctx) {
  if (ctx->ipc_count == ctx->ipc_capacity) {
    size_t capacity = ctx->ipc_capacity ? 2 * ctx->ipc_capacity : 8;
    npu_ipc_entry *grown = realloc(ctx->ipc, capacity * sizeof *grown);
    if (grown == NULL) return NULL;
    ctx->ipc = grown;
    ctx->ipc_capacity = capacity;
  }
  return &ctx->ipc[ctx->ipc_count++];
}

static tb_status export_memory(tb_context ctx, int32_t device, void *ptr, tb_ipc_handle *handle) {
  tb_status status = npu_check_device(ctx, device, "export_memory");
  if (status != TB_OK) return status;
  if (handle == NULL)
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: export_memory: NULL handle");
  pthread_mutex_lock(&ctx->mutex);
  const npu_block *block = npu_blocks_find(&ctx->device_blocks, (uintptr_t)ptr, 1);
  size_t size =
      block != NULL && block->base == (uintptr_t)ptr && block->device == device ? block->size : 0;
  npu_ipc_entry *entry = size != 0 ? find(ctx, device, ptr, false) : NULL;
  char key[KEY_LEN] = "";
  if (entry != NULL) memcpy(key, entry->key, KEY_LEN);
  pthread_mutex_unlock(&ctx->mutex);
  if (size == 0) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: export_memory: %p is not an address device_malloc returned on npu:%d",
                    ptr, (int)device);
  }
  if (key[0] == '\0') {
    status = npu_activate(ctx, device, "export_memory");
    if (status != TB_OK) return status;
    status = npu_check(ctx, device,
                       aclrtIpcMemGetExportKey(ptr, size, key, KEY_LEN,
                                               ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION),
                       "aclrtIpcMemGetExportKey");
    if (status != TB_OK) return status;
    pthread_mutex_lock(&ctx->mutex);
    entry = add(ctx);
    if (entry != NULL) *entry = (npu_ipc_entry){false, device, ptr, size, {0}};
    if (entry != NULL) memcpy(entry->key, key, KEY_LEN);
    pthread_mutex_unlock(&ctx->mutex);
    if (entry == NULL) {
      if (aclrtIpcMemClose(key) != ACL_SUCCESS) npu_drop_acl_messages();
      return npu_fail(ctx, TB_ERROR_OUT_OF_MEMORY, "npu: export_memory: out of host memory");
    }
  }
  memset(handle, 0, sizeof *handle);
  handle->fd = -1;
  handle->size = size;
  key[KEY_LEN - 1] = '\0';
  memcpy(handle->bytes, key, strlen(key)); /* at most 64 characters: no terminator needed */
  return TB_OK;
}

static tb_status import_memory(tb_context ctx, int32_t device, const tb_ipc_handle *handle,
                               void **ptr) {
  tb_status status = npu_check_device(ctx, device, "import_memory");
  if (status != TB_OK) return status;
  if (handle == NULL || ptr == NULL) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: import_memory: NULL handle or result");
  }
  char key[KEY_LEN] = "";
  memcpy(key, handle->bytes, KEY_LEN - 1);
  if (key[0] == '\0' || handle->size == 0) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: import_memory: the handle holds no AscendCL key (another vendor's, or "
                    "damaged)");
  }
  status = npu_activate(ctx, device, "import_memory");
  if (status != TB_OK) return status;
  void *memory = NULL;
  aclError err = aclrtIpcMemImportByKey(&memory, key, ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT);
  if (err == ACL_ERROR_INVALID_PARAM || err == ACL_ERROR_RT_PARAM_INVALID) {
    /* a key AscendCL does not know: the caller's mistake, with AscendCL's reason */
    const char *message = aclGetRecentErrMsg();
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: import_memory: aclrtIpcMemImportByKey: %s",
                    message != NULL ? message : "(no message)");
  }
  status = npu_check(ctx, device, err, "aclrtIpcMemImportByKey");
  if (status != TB_OK) return status;
  pthread_mutex_lock(&ctx->mutex);
  npu_ipc_entry *entry = add(ctx);
  int added = entry != NULL
                  ? npu_blocks_add(&ctx->device_blocks, (uintptr_t)memory, handle->size, device)
                  : -1;
  if (entry != NULL && added == 0) {
    *entry = (npu_ipc_entry){true, device, memory, handle->size, {0}};
    memcpy(entry->key, key, KEY_LEN);
  } else if (entry != NULL) {
    ctx->ipc_count--;
  }
  pthread_mutex_unlock(&ctx->mutex);
  if (entry == NULL || added != 0) {
    if (aclrtIpcMemClose(key) != ACL_SUCCESS) npu_drop_acl_messages();
    return npu_fail(ctx, TB_ERROR_OUT_OF_MEMORY, "npu: import_memory: out of host memory");
  }
  *ptr = memory;
  return TB_OK;
}

/* Removes the entry for `ptr` and closes its key: imports from close_memory, exports from
 * device_free. */
static tb_status close_entry(npu_context *ctx, int32_t device, void *ptr, bool imported,
                             const char *call) {
  pthread_mutex_lock(&ctx->mutex);
  npu_ipc_entry *entry = find(ctx, device, ptr, imported);
  npu_ipc_entry closing = entry != NULL ? *entry : (npu_ipc_entry){0};
  if (entry != NULL) {
    *entry = ctx->ipc[--ctx->ipc_count];
    if (imported) npu_blocks_remove(&ctx->device_blocks, (uintptr_t)ptr, device);
  }
  pthread_mutex_unlock(&ctx->mutex);
  if (entry == NULL) {
    if (!imported) return TB_OK; /* a block never exported */
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: %s: %p is no import of npu:%d (never imported, or closed already)", call,
                    ptr, (int)device);
  }
  tb_status status = npu_activate(ctx, device, call);
  if (status != TB_OK) return status;
  return npu_check(ctx, device, aclrtIpcMemClose(closing.key), "aclrtIpcMemClose");
}

static tb_status close_memory(tb_context ctx, int32_t device, void *ptr) {
  tb_status status = npu_check_device(ctx, device, "close_memory");
  if (status != TB_OK) return status;
  return close_entry(ctx, device, ptr, true, "close_memory");
}

tb_status npu_ipc_end_export(npu_context *ctx, int32_t device, void *ptr) {
  return close_entry(ctx, device, ptr, false, "device_free");
}

bool npu_ipc_is_import(npu_context *ctx, int32_t device, const void *ptr) {
  pthread_mutex_lock(&ctx->mutex);
  bool found = find(ctx, device, ptr, true) != NULL;
  pthread_mutex_unlock(&ctx->mutex);
  return found;
}

void npu_ipc_release(npu_context *ctx) {
  while (ctx->ipc_count > 0) {
    npu_ipc_entry *e = &ctx->ipc[ctx->ipc_count - 1];
    if (close_entry(ctx, e->device, e->ptr, e->imported, "finalize") != TB_OK) {
      npu_drop_acl_messages();
    }
  }
  free(ctx->ipc);
  ctx->ipc = NULL;
  ctx->ipc_capacity = 0;
}

/* The last link of npu's extension chain (after the per-storage metadata, storage_meta.c). */
const tb_ipc_extension npu_ipc = {
    .base = {.struct_size = sizeof(tb_ipc_extension), .type = TB_EXTENSION_IPC, .next = NULL},
    .export_memory = export_memory,
    .import_memory = import_memory,
    .close_memory = close_memory,
};
