/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's memory slots over aclrtMalloc/aclrtFree, aclrtMallocHost/aclrtFreeHost, aclrtMemcpy,
 * aclrtMemcpyAsync and aclrtMemsetAsync (aclrtGetMemInfo is in device.c).
 *
 * The context remembers its blocks (device and pinned): AscendCL cannot say which device an
 * address belongs to with the calls the adapter uses, and the ABI names the device of every
 * copy, so the adapter checks the ranges itself (a wrong device or a stale pointer fails with
 * TB_ERROR_INVALID_ARGUMENT and a message instead of reaching the runtime), and finalize frees
 * what the caller left.  torch_backend's caching allocator sits above: the lists stay short.
 *
 * Copies between two devices need peer access (aclrtMemcpy.md): the first such copy asks
 * aclrtDeviceCanAccessPeer and enables it (aclrtDeviceEnablePeerAccess) from the source's
 * device; where it is not available, the bytes go through a pinned host buffer, and an
 * asynchronous copy first waits for its stream (so it stays ordered, but blocks).
 *
 * Graph capture (graph.c): AscendCL refuses the blocking copies (aclrtMemcpy) while a capture
 * forbids them (GLOBAL mode: every thread; THREAD_LOCAL: the capturing thread), and an
 * asynchronous copy of host memory host_malloc did not allocate, which it runs synchronously;
 * the adapter reports TB_ERROR_NOT_SUPPORTED and invalidates the captures concerned
 * (npu_capture_refused).  A copy between devices without peer access goes through the host and
 * cannot be captured either.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_runtime.h"

/* The result `err` of AscendCL's `acl_call` for `call` on `device` (and `other`, the copy's
 * other device), on `stream` (NULL: a blocking copy): a capture's refusal invalidates the
 * captures concerned (graph.c). */
static tb_status copy_result(npu_context *ctx, int32_t device, int32_t other, tb_stream stream,
                             aclError err, const char *call, const char *acl_call) {
  if (err != ACL_SUCCESS && npu_is_capture_code(err)) {
    return npu_capture_refused(ctx, device, other, stream, err, call, acl_call);
  }
  return npu_check(ctx, device, err, acl_call);
}

/* ---- block lists ---- */

/* Index of the first block whose base is greater than `address`. */
static size_t upper(const npu_blocks *blocks, uintptr_t address) {
  size_t low = 0, high = blocks->count;
  while (low < high) {
    size_t mid = low + (high - low) / 2;
    if (blocks->items[mid].base <= address) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return low;
}

int npu_blocks_add(npu_blocks *blocks, uintptr_t base, size_t size, int32_t device) {
  if (blocks->count == blocks->capacity) {
    size_t capacity = blocks->capacity ? 2 * blocks->capacity : 64;
    npu_block *grown = realloc(blocks->items, capacity * sizeof *grown);
    if (grown == NULL) return -1;
    blocks->items = grown;
    blocks->capacity = capacity;
  }
  size_t at = upper(blocks, base);
  memmove(&blocks->items[at + 1], &blocks->items[at], (blocks->count - at) * sizeof(npu_block));
  blocks->items[at] = (npu_block){base, size, device};
  blocks->count++;
  return 0;
}

int npu_blocks_remove(npu_blocks *blocks, uintptr_t base, int32_t device) {
  size_t at = upper(blocks, base);
  if (at == 0 || blocks->items[at - 1].base != base || blocks->items[at - 1].device != device) {
    return -1;
  }
  memmove(&blocks->items[at - 1], &blocks->items[at], (blocks->count - at) * sizeof(npu_block));
  blocks->count--;
  return 0;
}

const npu_block *npu_blocks_find(const npu_blocks *blocks, uintptr_t address, size_t size) {
  size_t at = upper(blocks, address);
  if (at == 0) return NULL;
  const npu_block *block = &blocks->items[at - 1];
  size_t offset = address - block->base;
  return offset <= block->size && size <= block->size - offset ? block : NULL;
}

void npu_blocks_release(npu_blocks *blocks, bool host) {
  for (size_t i = 0; i < blocks->count; i++) {
    void *ptr = (void *)blocks->items[i].base;
    aclError err = host ? aclrtFreeHost(ptr) : aclrtFree(ptr);
    if (err != ACL_SUCCESS) npu_drop_acl_messages(); /* finalize must not fail */
  }
  blocks->count = 0;
}

/* TB_OK when [ptr, ptr + size) lies inside one device_malloc block of `device`. */
static tb_status check_range(npu_context *ctx, int32_t device, const void *ptr, size_t size,
                             const char *call, const char *what) {
  pthread_mutex_lock(&ctx->mutex);
  const npu_block *block = npu_blocks_find(&ctx->device_blocks, (uintptr_t)ptr, size);
  bool ok = block != NULL && block->device == device;
  pthread_mutex_unlock(&ctx->mutex);
  if (ok) return TB_OK;
  return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                  "npu: %s: the %s [%p, +%zu) is not memory that device_malloc returned on "
                  "npu:%d",
                  call, what, ptr, size, (int)device);
}

/* ---- device memory ---- */

/* sdk guide: malloc */
tb_status npu_memory_device_malloc(tb_context ctx, int32_t device, size_t size, void **ptr) {
  tb_status status = npu_check_device(ctx, device, "device_malloc");
  if (status != TB_OK) return status;
  if (ptr == NULL)
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: device_malloc: ptr is NULL");
  if (size == 0) {
    *ptr = NULL;
    return TB_OK;
  }
  status = npu_activate(ctx, device, "device_malloc");
  if (status != TB_OK) return status;
  void *memory = NULL;
  /* HUGE_FIRST: 2 MiB pages where the request is large, ordinary ones otherwise
   * (aclrtMemMallocPolicy.md), as torch_npu allocates. */
  status =
      npu_check(ctx, device, aclrtMalloc(&memory, size, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
  if (status != TB_OK) return status;
  pthread_mutex_lock(&ctx->mutex);
  int added = npu_blocks_add(&ctx->device_blocks, (uintptr_t)memory, size, device);
  pthread_mutex_unlock(&ctx->mutex);
  if (added != 0) {
    if (aclrtFree(memory) != ACL_SUCCESS) npu_drop_acl_messages();
    return npu_fail(ctx, TB_ERROR_OUT_OF_MEMORY, "npu: device_malloc: out of host memory");
  }
  *ptr = memory;
  return TB_OK;
}
/* sdk guide: end */

tb_status npu_memory_device_free(tb_context ctx, int32_t device, void *ptr) {
  tb_status status = npu_check_device(ctx, device, "device_free");
  if (status != TB_OK || ptr == NULL) return status;
  if (npu_ipc_is_import(ctx, device, ptr)) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: device_free: %p was imported from another process: close_memory ends "
                    "it",
                    ptr);
  }
  status = npu_ipc_end_export(ctx, device, ptr);
  if (status != TB_OK) return status;
  pthread_mutex_lock(&ctx->mutex);
  int removed = npu_blocks_remove(&ctx->device_blocks, (uintptr_t)ptr, device);
  pthread_mutex_unlock(&ctx->mutex);
  if (removed != 0) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: device_free: %p is not an address device_malloc returned on npu:%d", ptr,
                    (int)device);
  }
  return npu_check(ctx, device, aclrtFree(ptr), "aclrtFree");
}

/* ---- pinned host memory ---- */

tb_status npu_memory_host_malloc(tb_context ctx, size_t size, void **ptr) {
  tb_status status = npu_check_context(ctx, "host_malloc");
  if (status != TB_OK) return status;
  if (ptr == NULL) return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: host_malloc: ptr is NULL");
  if (size == 0) {
    *ptr = NULL;
    return TB_OK;
  }
  status = npu_acl_ready(ctx, "host_malloc");
  if (status != TB_OK) return status;
  /* torch_npu allocates pinned memory with a device context current; give the thread one when it
   * has none (device 0), so that the call behaves the same whatever thread makes it. */
  int32_t current = -1, count = 0;
  if (aclrtGetDevice(&current) != ACL_SUCCESS) {
    npu_drop_acl_messages();
    status = npu_device_count(ctx, &count);
    if (status == TB_OK && count > 0) status = npu_activate(ctx, 0, "host_malloc");
    if (status != TB_OK) return status;
  }
  void *memory = NULL;
  status = npu_check(ctx, -1, aclrtMallocHost(&memory, size), "aclrtMallocHost");
  if (status != TB_OK) return status;
  pthread_mutex_lock(&ctx->mutex);
  int added = npu_blocks_add(&ctx->host_blocks, (uintptr_t)memory, size, -1);
  pthread_mutex_unlock(&ctx->mutex);
  if (added != 0) {
    if (aclrtFreeHost(memory) != ACL_SUCCESS) npu_drop_acl_messages();
    return npu_fail(ctx, TB_ERROR_OUT_OF_MEMORY, "npu: host_malloc: out of host memory");
  }
  *ptr = memory;
  return TB_OK;
}

tb_status npu_memory_host_free(tb_context ctx, void *ptr) {
  tb_status status = npu_check_context(ctx, "host_free");
  if (status != TB_OK || ptr == NULL) return status;
  pthread_mutex_lock(&ctx->mutex);
  int removed = npu_blocks_remove(&ctx->host_blocks, (uintptr_t)ptr, -1);
  pthread_mutex_unlock(&ctx->mutex);
  if (removed != 0) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: host_free: %p is not an address host_malloc returned", ptr);
  }
  return npu_check(ctx, -1, aclrtFreeHost(ptr), "aclrtFreeHost");
}

/* ---- peer access ---- */

static pthread_mutex_t g_peer_mutex = PTHREAD_MUTEX_INITIALIZER;
/* 0: not asked yet; 1: enabled from the first index to the second; -1: not available. */
static signed char g_peer[NPU_MAX_DEVICES][NPU_MAX_DEVICES];

void npu_peers_reset(void) {
  pthread_mutex_lock(&g_peer_mutex);
  memset(g_peer, 0, sizeof g_peer);
  pthread_mutex_unlock(&g_peer_mutex);
}

/* Whether copies from `from`'s memory to `to`'s may go directly; enables them on first use.
 * Lock order: g_peer_mutex is taken after AscendCL's process state (vendor.c) and before the
 * fault record (error.c), so the device is made current before it is taken. */
static tb_status peer_access(npu_context *ctx, int32_t from, int32_t to, bool *direct) {
  pthread_mutex_lock(&g_peer_mutex);
  signed char known = g_peer[from][to];
  pthread_mutex_unlock(&g_peer_mutex);
  if (known != 0) {
    *direct = known == 1;
    return TB_OK;
  }
  /* aclrtDeviceEnablePeerAccess.md: from the current device to the peer, one direction. */
  tb_status status = npu_activate(ctx, from, "copy_d2d");
  if (status != TB_OK) return status;
  pthread_mutex_lock(&g_peer_mutex);
  if (g_peer[from][to] == 0) {
    int32_t can = 0;
    status =
        npu_check(ctx, from, aclrtDeviceCanAccessPeer(&can, from, to), "aclrtDeviceCanAccessPeer");
    if (status == TB_OK && can) {
      aclError err = aclrtDeviceEnablePeerAccess(to, 0);
      if (err == ACL_ERROR_RT_FEATURE_NOT_SUPPORT || err == ACL_ERROR_FEATURE_UNSUPPORTED) {
        npu_drop_acl_messages(); /* then through the host */
        can = 0;
      } else {
        status = npu_check(ctx, from, err, "aclrtDeviceEnablePeerAccess");
      }
    }
    if (status == TB_OK) g_peer[from][to] = can ? 1 : -1;
  }
  *direct = g_peer[from][to] == 1;
  pthread_mutex_unlock(&g_peer_mutex);
  return status;
}

/* Copies between two devices through a pinned host buffer, in pieces (for `call`). */
static tb_status staged_copy(npu_context *ctx, const char *call, int32_t dst_device, void *dst,
                             int32_t src_device, const void *src, size_t size) {
  size_t piece = size < ((size_t)8 << 20) ? size : ((size_t)8 << 20);
  void *bounce = NULL;
  tb_status status = npu_check(ctx, -1, aclrtMallocHost(&bounce, piece), "aclrtMallocHost");
  for (size_t done = 0; status == TB_OK && done < size; done += piece) {
    size_t n = size - done < piece ? size - done : piece;
    status =
        copy_result(ctx, src_device, dst_device, NULL,
                    aclrtMemcpy(bounce, n, (const char *)src + done, n, ACL_MEMCPY_DEVICE_TO_HOST),
                    call, "aclrtMemcpy");
    if (status == TB_OK) {
      status = copy_result(ctx, dst_device, src_device, NULL,
                           aclrtMemcpy((char *)dst + done, n, bounce, n, ACL_MEMCPY_HOST_TO_DEVICE),
                           call, "aclrtMemcpy");
    }
  }
  if (bounce != NULL && aclrtFreeHost(bounce) != ACL_SUCCESS) npu_drop_acl_messages();
  return status;
}

/* ---- synchronous copies ---- */

tb_status npu_memory_copy_h2d(tb_context ctx, int32_t device, void *dst, const void *src,
                              size_t size) {
  tb_status status = npu_check_device(ctx, device, "copy_h2d");
  if (status != TB_OK || size == 0) return status;
  if (dst == NULL || src == NULL) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: copy_h2d: %s is NULL for %zu bytes",
                    dst == NULL ? "dst" : "src", size);
  }
  status = npu_fault_check(device, "copy_h2d");
  if (status == TB_OK) status = check_range(ctx, device, dst, size, "copy_h2d", "destination");
  if (status == TB_OK) status = npu_activate(ctx, device, "copy_h2d");
  if (status != TB_OK) return status;
  return copy_result(ctx, device, device, NULL,
                     aclrtMemcpy(dst, size, src, size, ACL_MEMCPY_HOST_TO_DEVICE), "copy_h2d",
                     "aclrtMemcpy");
}

tb_status npu_memory_copy_d2h(tb_context ctx, int32_t device, void *dst, const void *src,
                              size_t size) {
  tb_status status = npu_check_device(ctx, device, "copy_d2h");
  if (status != TB_OK || size == 0) return status;
  if (dst == NULL || src == NULL) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: copy_d2h: %s is NULL for %zu bytes",
                    dst == NULL ? "dst" : "src", size);
  }
  status = npu_fault_check(device, "copy_d2h");
  if (status == TB_OK) status = check_range(ctx, device, src, size, "copy_d2h", "source");
  if (status == TB_OK) status = npu_activate(ctx, device, "copy_d2h");
  if (status != TB_OK) return status;
  return copy_result(ctx, device, device, NULL,
                     aclrtMemcpy(dst, size, src, size, ACL_MEMCPY_DEVICE_TO_HOST), "copy_d2h",
                     "aclrtMemcpy");
}

/* The checks every device-to-device copy makes: devices, faults, ranges. */
static tb_status check_d2d(npu_context *ctx, const char *call, int32_t dst_device, void *dst,
                           int32_t src_device, const void *src, size_t size) {
  tb_status status = npu_check_device(ctx, dst_device, call);
  if (status == TB_OK) status = npu_check_device(ctx, src_device, call);
  if (status != TB_OK || size == 0) return status;
  if (dst == NULL || src == NULL) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: %s: %s is NULL for %zu bytes", call,
                    dst == NULL ? "dst" : "src", size);
  }
  status = npu_fault_check(dst_device, call);
  if (status == TB_OK) status = npu_fault_check(src_device, call);
  if (status == TB_OK) status = check_range(ctx, dst_device, dst, size, call, "destination");
  if (status == TB_OK) status = check_range(ctx, src_device, src, size, call, "source");
  return status;
}

tb_status npu_memory_copy_d2d(tb_context ctx, int32_t dst_device, void *dst, int32_t src_device,
                              const void *src, size_t size) {
  tb_status status = check_d2d(ctx, "copy_d2d", dst_device, dst, src_device, src, size);
  if (status != TB_OK || size == 0) return status;
  bool direct = true;
  if (src_device != dst_device) status = peer_access(ctx, src_device, dst_device, &direct);
  if (status == TB_OK) status = npu_activate(ctx, src_device, "copy_d2d");
  if (status != TB_OK) return status;
  if (!direct) return staged_copy(ctx, "copy_d2d", dst_device, dst, src_device, src, size);
  return copy_result(ctx, src_device, dst_device, NULL,
                     aclrtMemcpy(dst, size, src, size, ACL_MEMCPY_DEVICE_TO_DEVICE), "copy_d2d",
                     "aclrtMemcpy");
}

/* ---- asynchronous copies and memset ---- */

tb_status npu_memory_copy_h2d_async(tb_context ctx, tb_stream stream, void *dst, const void *src,
                                    size_t size) {
  tb_status status = npu_stream_check(ctx, stream, "copy_h2d_async");
  if (status != TB_OK || size == 0) return status;
  int32_t device = npu_stream_device(stream);
  if (dst == NULL || src == NULL) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: copy_h2d_async: %s is NULL",
                    dst == NULL ? "dst" : "src");
  }
  status = npu_fault_check(device, "copy_h2d_async");
  if (status == TB_OK)
    status = check_range(ctx, device, dst, size, "copy_h2d_async", "destination");
  if (status == TB_OK) status = npu_activate(ctx, device, "copy_h2d_async");
  if (status != TB_OK) return status;
  return copy_result(
      ctx, device, device, stream,
      aclrtMemcpyAsync(dst, size, src, size, ACL_MEMCPY_HOST_TO_DEVICE, npu_acl_stream(stream)),
      "copy_h2d_async", "aclrtMemcpyAsync");
}

tb_status npu_memory_copy_d2h_async(tb_context ctx, tb_stream stream, void *dst, const void *src,
                                    size_t size) {
  tb_status status = npu_stream_check(ctx, stream, "copy_d2h_async");
  if (status != TB_OK || size == 0) return status;
  int32_t device = npu_stream_device(stream);
  if (dst == NULL || src == NULL) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: copy_d2h_async: %s is NULL",
                    dst == NULL ? "dst" : "src");
  }
  status = npu_fault_check(device, "copy_d2h_async");
  if (status == TB_OK) status = check_range(ctx, device, src, size, "copy_d2h_async", "source");
  if (status == TB_OK) status = npu_activate(ctx, device, "copy_d2h_async");
  if (status != TB_OK) return status;
  return copy_result(
      ctx, device, device, stream,
      aclrtMemcpyAsync(dst, size, src, size, ACL_MEMCPY_DEVICE_TO_HOST, npu_acl_stream(stream)),
      "copy_d2h_async", "aclrtMemcpyAsync");
}

tb_status npu_memory_copy_d2d_async(tb_context ctx, tb_stream stream, int32_t dst_device, void *dst,
                                    int32_t src_device, const void *src, size_t size) {
  tb_status status = npu_stream_check(ctx, stream, "copy_d2d_async");
  if (status != TB_OK) return status;
  int32_t device = npu_stream_device(stream);
  status = check_d2d(ctx, "copy_d2d_async", dst_device, dst, src_device, src, size);
  if (status != TB_OK || size == 0) return status;
  if (device != dst_device && device != src_device) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: copy_d2d_async: the stream belongs to npu:%d, neither the source "
                    "(npu:%d) nor the destination (npu:%d)",
                    (int)device, (int)src_device, (int)dst_device);
  }
  bool direct = true;
  if (src_device != dst_device) status = peer_access(ctx, src_device, dst_device, &direct);
  if (status == TB_OK) status = npu_activate(ctx, device, "copy_d2d_async");
  if (status != TB_OK) return status;
  if (!direct) {
    /* No peer access: the stream's earlier work first, then the bytes through the host. */
    char why[160];
    snprintf(why, sizeof why,
             "without peer access from npu:%d to npu:%d the bytes go through the host, which "
             "cannot be captured",
             (int)src_device, (int)dst_device);
    status = npu_capture_check_stream(ctx, stream, "copy_d2d_async", why);
    if (status == TB_OK) {
      status = npu_check(ctx, device, aclrtSynchronizeStream(npu_acl_stream(stream)),
                         "aclrtSynchronizeStream");
    }
    return status != TB_OK
               ? status
               : staged_copy(ctx, "copy_d2d_async", dst_device, dst, src_device, src, size);
  }
  return copy_result(
      ctx, device, device == src_device ? dst_device : src_device, stream,
      aclrtMemcpyAsync(dst, size, src, size, ACL_MEMCPY_DEVICE_TO_DEVICE, npu_acl_stream(stream)),
      "copy_d2d_async", "aclrtMemcpyAsync");
}

tb_status npu_memory_memset_async(tb_context ctx, tb_stream stream, void *ptr, int value,
                                  size_t size) {
  tb_status status = npu_stream_check(ctx, stream, "memset_async");
  if (status != TB_OK || size == 0) return status;
  int32_t device = npu_stream_device(stream);
  if (ptr == NULL)
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: memset_async: ptr is NULL");
  status = npu_fault_check(device, "memset_async");
  if (status == TB_OK) status = check_range(ctx, device, ptr, size, "memset_async", "range");
  if (status == TB_OK) status = npu_activate(ctx, device, "memset_async");
  if (status != TB_OK) return status;
  return copy_result(
      ctx, device, device, stream,
      aclrtMemsetAsync(ptr, size, (int32_t)(unsigned char)value, size, npu_acl_stream(stream)),
      "memset_async", "aclrtMemsetAsync");
}
