/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's device memory shared between processes (vendor.h, "Device memory shared between
 * processes", ABI 2.5).  A device's memory is a memfd (arena.c), so an allocation is a range of
 * a file: the handle carries a descriptor of that memfd (torch_backend passes it to the other
 * process with SCM_RIGHTS) and the range's offset and size.  The importer reserves a range of
 * its own device's address space -- an ordinary allocation of its arena, a page larger than
 * needed so that a page-aligned stretch fits -- and maps the exporter's pages over it, at the
 * device view and at the shadow view, so every copy and kernel of emu reaches the shared bytes
 * through the addresses it already handles.  Closing maps the importer's own memory back and
 * frees the reservation.  The file stays alive as long as either process maps it, so an import
 * stays valid even when its exporter exits first.
 *
 * State: the context's imports, guarded by its ipc_mutex.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu.h"

#define HANDLE_MAGIC "tb-emu-1"

/* What emu writes into tb_ipc_handle::bytes. */
typedef struct handle_data {
  char magic[8];
  uint64_t offset; /* of the allocation in the exporter's memfd */
  int32_t device;
  int32_t pid; /* of the exporter, for messages */
} handle_data;

_Static_assert(sizeof(handle_data) <= TB_IPC_HANDLE_BYTES, "handle_data fits a tb_ipc_handle");

struct emu_import {
  int32_t device;
  char *ptr;     /* what import_memory returned */
  void *base;    /* the reservation in this process's arena */
  char *aligned; /* where the exporter's pages are mapped */
  size_t span;
};

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static tb_status export_memory(tb_context ctx, int32_t device, void *ptr, tb_ipc_handle *handle) {
  tb_status status = emu_check_device(ctx, device, "export_memory");
  if (status != TB_OK) return status;
  if (handle == NULL) return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: export_memory: NULL handle");
  handle_data data;
  memset(&data, 0, sizeof data);
  memcpy(data.magic, HANDLE_MAGIC, sizeof data.magic);
  uint64_t size = 0;
  int fd = -1;
  status = emu_arena_export(ctx, device, ptr, &data.offset, &size, &fd);
  if (status != TB_OK) return status;
  data.device = device;
  data.pid = (int32_t)getpid();
  memset(handle, 0, sizeof *handle);
  handle->fd = fd;
  handle->size = size;
  memcpy(handle->bytes, &data, sizeof data);
  return TB_OK;
}

static tb_status import_memory(tb_context ctx, int32_t device, const tb_ipc_handle *handle,
                               void **ptr) {
  tb_status status = emu_check_device(ctx, device, "import_memory");
  if (status != TB_OK) return status;
  if (handle == NULL || ptr == NULL) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: import_memory: NULL handle or result");
  }
  handle_data data;
  memcpy(&data, handle->bytes, sizeof data);
  if (memcmp(data.magic, HANDLE_MAGIC, sizeof data.magic) != 0) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: import_memory: not a handle emu exported (another vendor's, or damaged)");
  }
  struct stat st;
  if (handle->fd < 0 || fstat(handle->fd, &st) != 0 || handle->size == 0 ||
      data.offset + handle->size > (uint64_t)st.st_size) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: import_memory: the handle of %llu bytes at offset %llu exported by "
                    "process %d (device %d) does not come with that process's device memory "
                    "(descriptor %d)",
                    (unsigned long long)handle->size, (unsigned long long)data.offset,
                    (int)data.pid, (int)data.device, (int)handle->fd);
  }
  size_t page = page_size();
  uint64_t floor = data.offset & ~(uint64_t)(page - 1);
  size_t lead = (size_t)(data.offset - floor);
  size_t span = (lead + handle->size + page - 1) & ~(page - 1);

  pthread_mutex_lock(&ctx->ipc_mutex);
  if (ctx->import_count == ctx->import_capacity) {
    size_t capacity = ctx->import_capacity ? 2 * ctx->import_capacity : 8;
    emu_import *grown = realloc(ctx->imports, capacity * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&ctx->ipc_mutex);
      return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: import_memory: out of host memory");
    }
    ctx->imports = grown;
    ctx->import_capacity = capacity;
  }
  void *base = NULL;
  status = emu_arena_alloc(ctx, device, span + page, &base);
  if (status != TB_OK) {
    pthread_mutex_unlock(&ctx->ipc_mutex);
    return status;
  }
  char *aligned = (char *)(((uintptr_t)base + page - 1) & ~(uintptr_t)(page - 1));
  status = emu_arena_map_file(ctx, device, aligned, span, handle->fd, floor);
  if (status != TB_OK) {
    emu_arena_free(ctx, device, base);
    pthread_mutex_unlock(&ctx->ipc_mutex);
    return status;
  }
  emu_import *entry = &ctx->imports[ctx->import_count++];
  *entry = (emu_import){device, aligned + lead, base, aligned, span};
  *ptr = entry->ptr;
  pthread_mutex_unlock(&ctx->ipc_mutex);
  return TB_OK;
}

static tb_status close_memory(tb_context ctx, int32_t device, void *ptr) {
  tb_status status = emu_check_device(ctx, device, "close_memory");
  if (status != TB_OK) return status;
  pthread_mutex_lock(&ctx->ipc_mutex);
  for (size_t i = 0; i < ctx->import_count; i++) {
    emu_import entry = ctx->imports[i];
    if (entry.device != device || entry.ptr != ptr) continue;
    ctx->imports[i] = ctx->imports[--ctx->import_count];
    emu_arena_unmap_file(ctx, device, entry.aligned, entry.span);
    status = emu_arena_free(ctx, device, entry.base);
    pthread_mutex_unlock(&ctx->ipc_mutex);
    return status;
  }
  pthread_mutex_unlock(&ctx->ipc_mutex);
  return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                  "emu: close_memory: %p is no import of device %d (never imported, or closed "
                  "already)",
                  ptr, (int)device);
}

/* The last link of emu's extension chain (after the per-storage metadata, storage_meta.c). */
const tb_ipc_extension emu_ipc = {
    .base = {.struct_size = sizeof(tb_ipc_extension), .type = TB_EXTENSION_IPC, .next = NULL},
    .export_memory = export_memory,
    .import_memory = import_memory,
    .close_memory = close_memory,
};
