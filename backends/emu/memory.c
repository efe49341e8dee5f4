/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's devices and memory calls: properties, allocation (arena.c), pinned host memory, and
 * copies and memsets, synchronous or enqueued as stream tasks.  Copies move bytes between the
 * host and the devices' shadow views; large ones are split across emu's worker pool.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"

tb_status emu_device_count(tb_context ctx, int32_t *count) {
  tb_status status = emu_check_context(ctx, "count");
  if (status != TB_OK) return status;
  if (count == NULL) return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: count is NULL");
  *count = ctx->config.device_count;
  return TB_OK;
}

tb_status emu_device_get_properties(tb_context ctx, int32_t device,
                                    tb_device_properties *properties) {
  tb_status status = emu_check_device(ctx, device, "get_properties");
  if (status != TB_OK) return status;
  if (properties == NULL || properties->struct_size < sizeof(size_t)) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: get_properties: properties is NULL or its struct_size is 0");
  }
  tb_device_properties mine;
  memset(&mine, 0, sizeof mine);
  snprintf(mine.name, sizeof mine.name, "Emulated Accelerator %d", (int)device);
  mine.total_memory = ctx->config.capacity;
  mine.compute_units = ctx->config.threads;
  mine.arch_major = 1;
  mine.arch_minor = 0;
  mine.dtypes = ((uint64_t)1 << TB_DTYPE_COUNT) - 1; /* every element type: memory is bytes */
  /* Unguarded, the device view is the host's own read-write mapping of the arena: device
   * pointers are host addresses (torch.compile runs Inductor's C++ kernels on them). */
  mine.capabilities = ctx->config.guard ? 0 : TB_DEVICE_HOST_ACCESS;
  size_t size = properties->struct_size < sizeof mine ? properties->struct_size : sizeof mine;
  memcpy((char *)properties + sizeof(size_t), (const char *)&mine + sizeof(size_t),
         size - sizeof(size_t));
  return TB_OK;
}

tb_status emu_memory_device_malloc(tb_context ctx, int32_t device, size_t size, void **ptr) {
  tb_status status = emu_check_device(ctx, device, "device_malloc");
  if (status != TB_OK) return status;
  if (ptr == NULL) return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: device_malloc: ptr is NULL");
  if (size == 0) {
    *ptr = NULL;
    return TB_OK;
  }
  return emu_arena_alloc(ctx, device, size, ptr);
}

tb_status emu_memory_device_free(tb_context ctx, int32_t device, void *ptr) {
  tb_status status = emu_check_device(ctx, device, "device_free");
  if (status != TB_OK || ptr == NULL) return status;
  return emu_arena_free(ctx, device, ptr);
}

tb_status emu_memory_host_malloc(tb_context ctx, size_t size, void **ptr) {
  tb_status status = emu_check_context(ctx, "host_malloc");
  if (status != TB_OK) return status;
  if (ptr == NULL) return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: host_malloc: ptr is NULL");
  if (size == 0) {
    *ptr = NULL;
    return TB_OK;
  }
  void *memory = size > SIZE_MAX - 4096 ? NULL : aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
  if (memory == NULL) {
    return tbk_fail(TB_ERROR_OUT_OF_MEMORY,
                    "emu: host_malloc: %zu bytes of pinned memory are "
                    "not available",
                    size);
  }
  *ptr = memory;
  return TB_OK;
}

tb_status emu_memory_host_free(tb_context ctx, void *ptr) {
  tb_status status = emu_check_context(ctx, "host_free");
  if (status != TB_OK) return status;
  free(ptr);
  return TB_OK;
}

tb_status emu_memory_get_info(tb_context ctx, int32_t device, size_t *free_bytes,
                              size_t *total_bytes) {
  tb_status status = emu_check_device(ctx, device, "get_info");
  if (status != TB_OK) return status;
  if (free_bytes == NULL || total_bytes == NULL) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: get_info: NULL output pointer");
  }
  size_t used = 0, total = 0;
  emu_arena_usage(ctx, device, &used, &total);
  *free_bytes = total - used;
  *total_bytes = total;
  return TB_OK;
}

/* ---- copies ---- */

typedef struct copy_args {
  char *dst;
  const char *src;
  size_t size;
  int32_t src_device; /* -1: host */
} copy_args;

static void copy_range(void *context, int64_t begin, int64_t end) {
  const copy_args *c = context;
  memcpy(c->dst + begin, c->src + begin, (size_t)(end - begin));
}

/* memcpy, split across the pool for large sizes. */
static void parallel_copy(char *dst, const char *src, size_t size) {
  copy_args c = {dst, src, size, -1};
  emu_parallel_for((int64_t)size, 1 << 22, copy_range, &c);
}

/* Resolves a device range to its shadow address, validating it. */
static tb_status device_address(emu_context *ctx, int32_t device, const void *ptr, size_t size,
                                const char *call, char **out) {
  if (!emu_is_device_range(ctx, device, ptr, size)) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: [%p, +%zu) is not memory of device %d",
                    call, ptr, size, (int)device);
  }
  *out = emu_host(ctx, device, ptr);
  return TB_OK;
}

/* Validates a copy and resolves both ends: device ends become shadow addresses. */
static tb_status resolve(emu_context *ctx, const char *call, int32_t dst_device, void *dst,
                         int32_t src_device, const void *src, size_t size, char **dst_out,
                         const char **src_out) {
  tb_status status = TB_OK;
  if (dst_device >= 0) status = emu_check_device(ctx, dst_device, call);
  if (status == TB_OK && src_device >= 0) status = emu_check_device(ctx, src_device, call);
  /* no copy to or from a faulted device (vendor.h, "Device faults") */
  if (status == TB_OK && dst_device >= 0) status = tbk_check_fault(ctx, dst_device, call);
  if (status == TB_OK && src_device >= 0) status = tbk_check_fault(ctx, src_device, call);
  if (status != TB_OK) return status;
  if (dst == NULL || src == NULL) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: %s is NULL for %zu bytes", call,
                    dst == NULL ? "dst" : "src", size);
  }
  char *d = dst;
  const char *s = src;
  if (dst_device >= 0) status = device_address(ctx, dst_device, dst, size, call, &d);
  if (status == TB_OK && src_device >= 0) {
    char *resolved = NULL;
    status = device_address(ctx, src_device, src, size, call, &resolved);
    s = resolved;
  }
  *dst_out = d;
  *src_out = s;
  return status;
}

tb_status emu_memory_copy_h2d(tb_context ctx, int32_t device, void *dst, const void *src,
                              size_t size) {
  tb_status status = emu_check_device(ctx, device, "copy_h2d");
  if (status == TB_OK) status = tbk_check_capture(ctx, device, "copy_h2d");
  if (status != TB_OK || size == 0) return status;
  char *d = NULL;
  const char *s = NULL;
  status = resolve(ctx, "copy_h2d", device, dst, -1, src, size, &d, &s);
  if (status == TB_OK) parallel_copy(d, s, size);
  return status;
}

tb_status emu_memory_copy_d2h(tb_context ctx, int32_t device, void *dst, const void *src,
                              size_t size) {
  tb_status status = emu_check_device(ctx, device, "copy_d2h");
  if (status == TB_OK) status = tbk_check_capture(ctx, device, "copy_d2h");
  if (status != TB_OK || size == 0) return status;
  char *d = NULL;
  const char *s = NULL;
  status = resolve(ctx, "copy_d2h", -1, dst, device, src, size, &d, &s);
  if (status == TB_OK) parallel_copy(d, s, size);
  return status;
}

tb_status emu_memory_copy_d2d(tb_context ctx, int32_t dst_device, void *dst, int32_t src_device,
                              const void *src, size_t size) {
  tb_status status = emu_check_device(ctx, dst_device, "copy_d2d");
  if (status == TB_OK) status = emu_check_device(ctx, src_device, "copy_d2d");
  if (status == TB_OK) status = tbk_check_capture(ctx, dst_device, "copy_d2d");
  if (status == TB_OK && src_device != dst_device) {
    status = tbk_check_capture(ctx, src_device, "copy_d2d");
  }
  if (status != TB_OK || size == 0) return status;
  char *d = NULL;
  const char *s = NULL;
  status = resolve(ctx, "copy_d2d", dst_device, dst, src_device, src, size, &d, &s);
  if (status == TB_OK) parallel_copy(d, s, size);
  return status;
}

static void run_copy(tbk_task *task) {
  const copy_args *c = (const copy_args *)task->payload;
  /* a source that faulted after the copy was enqueued has no bytes worth moving */
  if (c->src_device >= 0 && tbk_is_faulted(tbk_stream_runtime(task->stream), c->src_device)) {
    return;
  }
  parallel_copy(c->dst, c->src, c->size);
}

static tb_status enqueue_copy(tb_stream stream, char *dst, const char *src, size_t size,
                              int32_t src_device) {
  tbk_task *task = tbk_task_new(stream, run_copy, sizeof(copy_args));
  if (task == NULL) return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: out of memory enqueuing a copy");
  task->name = "copy (async)";
  *(copy_args *)task->payload = (copy_args){dst, src, size, src_device};
  return tbk_stream_enqueue(stream, task);
}

tb_status emu_memory_copy_h2d_async(tb_context ctx, tb_stream stream, void *dst, const void *src,
                                    size_t size) {
  tb_status status = tbk_check_stream(ctx, stream, "copy_h2d_async");
  if (status != TB_OK || size == 0) return status;
  char *d = NULL;
  const char *s = NULL;
  status = resolve(ctx, "copy_h2d_async", tbk_stream_device(stream), dst, -1, src, size, &d, &s);
  return status != TB_OK ? status : enqueue_copy(stream, d, s, size, -1);
}

tb_status emu_memory_copy_d2h_async(tb_context ctx, tb_stream stream, void *dst, const void *src,
                                    size_t size) {
  tb_status status = tbk_check_stream(ctx, stream, "copy_d2h_async");
  if (status != TB_OK || size == 0) return status;
  char *d = NULL;
  const char *s = NULL;
  status = resolve(ctx, "copy_d2h_async", -1, dst, tbk_stream_device(stream), src, size, &d, &s);
  return status != TB_OK ? status : enqueue_copy(stream, d, s, size, tbk_stream_device(stream));
}

tb_status emu_memory_copy_d2d_async(tb_context ctx, tb_stream stream, int32_t dst_device, void *dst,
                                    int32_t src_device, const void *src, size_t size) {
  tb_status status = tbk_check_stream(ctx, stream, "copy_d2d_async");
  if (status != TB_OK || size == 0) return status;
  int32_t device = tbk_stream_device(stream);
  if (device != dst_device && device != src_device) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: copy_d2d_async: the stream belongs to device %d, neither the source "
                    "(%d) nor the destination (%d)",
                    (int)device, (int)src_device, (int)dst_device);
  }
  char *d = NULL;
  const char *s = NULL;
  status = resolve(ctx, "copy_d2d_async", dst_device, dst, src_device, src, size, &d, &s);
  return status != TB_OK ? status : enqueue_copy(stream, d, s, size, src_device);
}

typedef struct memset_args {
  char *ptr;
  int value;
  size_t size;
} memset_args;

static void memset_range(void *context, int64_t begin, int64_t end) {
  const memset_args *m = context;
  memset(m->ptr + begin, m->value, (size_t)(end - begin));
}

static void run_memset(tbk_task *task) {
  memset_args *m = (memset_args *)task->payload;
  emu_parallel_for((int64_t)m->size, 1 << 22, memset_range, m);
}

tb_status emu_memory_memset_async(tb_context ctx, tb_stream stream, void *ptr, int value,
                                  size_t size) {
  tb_status status = tbk_check_stream(ctx, stream, "memset_async");
  if (status != TB_OK || size == 0) return status;
  int32_t device = tbk_stream_device(stream);
  status = tbk_check_fault(ctx, device, "memset_async");
  if (status != TB_OK) return status;
  if (ptr == NULL) return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: memset_async: ptr is NULL");
  char *d = NULL;
  status = device_address(ctx, device, ptr, size, "memset_async", &d);
  if (status != TB_OK) return status;
  tbk_task *task = tbk_task_new(stream, run_memset, sizeof(memset_args));
  if (task == NULL) return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: out of memory enqueuing memset");
  task->name = "memset (async)";
  *(memset_args *)task->payload = (memset_args){d, (unsigned char)value, size};
  return tbk_stream_enqueue(stream, task);
}
