/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The opencl vendor's memory: allocations, the address table, copies and memset.
 *
 * PyTorch does arithmetic on device pointers (storage offsets, views), and the ABI allows it
 * (vendor.h, "Memory model"); OpenCL 1.2's buffers are handles.  Each allocation therefore
 * gets a device pointer, and the address table -- allocations sorted by pointer, searched under
 * a read lock -- turns any pointer inside one back into (cl_mem, offset) for the OpenCL call
 * (docs/decisions.md, "OpenCL memory"):
 *
 * - buffer mode (OpenCL 1.2, or TORCH_BACKEND_OPENCL_MEMORY=buffer): the pointer is an address
 *   of a range this vendor hands out (never dereferenced by anyone); copies and kernels take the
 *   buffer and the offset.
 * - SVM mode (every device has coarse-grained SVM): the pointer is clSVMAlloc's; copies and
 *   memsets take it as it is (clEnqueueSVMMemcpy, clEnqueueSVMMemFill), kernels too
 *   (clSetKernelArgSVMPointer).  A buffer over the same bytes (CL_MEM_USE_HOST_PTR on the SVM
 *   pointer, which OpenCL 2.0 defines to share the storage) serves libraries that take
 *   buffers (CLBlast); the table still checks every pointer, so that a stale or foreign one is
 *   refused with a message instead of reaching the driver.
 *
 * Coarse-grained SVM is not host-accessible without a map, so neither mode reports
 * TB_DEVICE_HOST_ACCESS.  OpenCL reports no free memory, so get_info counts the vendor's own
 * allocations against CL_DEVICE_GLOBAL_MEM_SIZE, and allocations beyond either limit
 * (CL_DEVICE_MAX_MEM_ALLOC_SIZE for one buffer) are refused before reaching the driver; a new
 * buffer is migrated to its device at once, so that a driver that allocates lazily fails in
 * device_malloc rather than in the first kernel.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl.h"

/* Buffer mode: ranges are rounded up to this, and this much is left unused between two, so
 * that a pointer one past an allocation's end never falls inside the next one. */
#define OCL_RANGE_GRAIN ((uintptr_t)1 << 16)

/* ---- the address table ---- */

/* Index of the first block whose base is greater than `address`; under the lock. */
static size_t upper(tb_context ctx, uintptr_t address) {
  size_t low = 0, high = ctx->block_count;
  while (low < high) {
    size_t mid = low + (high - low) / 2;
    if (ctx->blocks[mid].base <= address) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return low;
}

static int add_block(tb_context ctx, const ocl_block *block) {
  if (ctx->block_count == ctx->block_capacity) {
    size_t capacity = ctx->block_capacity ? 2 * ctx->block_capacity : 64;
    ocl_block *grown = realloc(ctx->blocks, capacity * sizeof *grown);
    if (grown == NULL) return -1;
    ctx->blocks = grown;
    ctx->block_capacity = capacity;
  }
  size_t at = upper(ctx, block->base);
  memmove(&ctx->blocks[at + 1], &ctx->blocks[at], (ctx->block_count - at) * sizeof(ocl_block));
  ctx->blocks[at] = *block;
  ctx->block_count++;
  return 0;
}

tb_status ocl_place_of(tb_context ctx, int32_t device, const void *ptr, size_t size,
                       const char *what, ocl_place *place) {
  uintptr_t address = (uintptr_t)ptr;
  pthread_rwlock_rdlock(&ctx->blocks_lock);
  size_t at = upper(ctx, address);
  const ocl_block *block = at > 0 ? &ctx->blocks[at - 1] : NULL;
  bool inside = block != NULL && address - block->base <= block->size &&
                size <= block->size - (address - block->base);
  if (inside && block->device == device) {
    place->mem = block->mem;
    place->offset = address - block->base;
    place->svm = ctx->mode == OCL_MEMORY_SVM ? (void *)address : NULL;
    pthread_rwlock_unlock(&ctx->blocks_lock);
    return TB_OK;
  }
  int32_t owner = inside ? block->device : -1;
  pthread_rwlock_unlock(&ctx->blocks_lock);
  if (owner >= 0) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "%s %p (%zu bytes) is memory of ocl:%d, not of ocl:%d", what, ptr, size,
                    (int)owner, (int)device);
  }
  return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                  "%s %p (%zu bytes) is not inside an allocation of ocl:%d (freed, or not "
                  "allocated by this vendor)",
                  what, ptr, size, (int)device);
}

static void release_block(tb_context ctx, const ocl_block *block) {
  clReleaseMemObject(block->mem);
  if (ctx->mode == OCL_MEMORY_SVM) clSVMFree(ctx->context, (void *)block->base);
}

void ocl_memory_release(tb_context ctx) {
  for (size_t i = 0; i < ctx->block_count; i++) release_block(ctx, &ctx->blocks[i]);
  free(ctx->blocks);
  ctx->blocks = NULL;
  ctx->block_count = ctx->block_capacity = 0;
}

/* ---- allocation ---- */

tb_status ocl_memory_device_malloc(tb_context ctx, int32_t device, size_t size, void **ptr) {
  tb_status status = ocl_enter(ctx, device);
  if (status != TB_OK) return status;
  if (ptr == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "device_malloc: ptr is NULL");
  if (size == 0) {
    *ptr = NULL;
    return TB_OK;
  }
  ocl_device *dev = &ctx->devices[device];
  if (size > dev->max_alloc) {
    return ocl_fail(TB_ERROR_OUT_OF_MEMORY,
                    "cannot allocate %zu bytes on ocl:%d (%s): one buffer holds at most %llu "
                    "bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                    size, (int)device, dev->name, (unsigned long long)dev->max_alloc);
  }
  pthread_mutex_lock(&dev->lock);
  bool fits = size <= dev->global_mem - dev->allocated;
  if (fits) dev->allocated += size; /* reserved now, given back below on failure */
  size_t allocated = dev->allocated;
  pthread_mutex_unlock(&dev->lock);
  if (!fits) {
    return ocl_fail(TB_ERROR_OUT_OF_MEMORY,
                    "cannot allocate %zu bytes on ocl:%d (%s): %zu of its %llu bytes are "
                    "allocated",
                    size, (int)device, dev->name, allocated, (unsigned long long)dev->global_mem);
  }
  ocl_block block = {0, size, NULL, device};
  void *svm = NULL;
  cl_int err = CL_SUCCESS;
  if (ctx->mode == OCL_MEMORY_SVM) {
    svm = clSVMAlloc(ctx->context, CL_MEM_READ_WRITE, size, TB_MEMORY_ALIGNMENT);
    if (svm == NULL) {
      status = ocl_fail(TB_ERROR_OUT_OF_MEMORY, "clSVMAlloc of %zu bytes failed on ocl:%d (%s)",
                        size, (int)device, dev->name);
      goto failed;
    }
    block.base = (uintptr_t)svm;
    block.mem =
        clCreateBuffer(ctx->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, size, svm, &err);
    if (err != CL_SUCCESS) {
      status = ocl_check(ctx, device, err, "clCreateBuffer (over SVM)");
      goto failed;
    }
  } else {
    block.mem = clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, size, NULL, &err);
    if (err != CL_SUCCESS) {
      status = ocl_check(ctx, device, err, "clCreateBuffer");
      goto failed;
    }
  }
  /* Place it on its device now: lazy drivers fail here, not in the first kernel. */
  err = clEnqueueMigrateMemObjects(dev->internal, 1, &block.mem,
                                   CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, NULL);
  if (err == CL_SUCCESS) err = clFinish(dev->internal);
  if (err != CL_SUCCESS) {
    status = ocl_check(ctx, device, err, "clEnqueueMigrateMemObjects");
    goto failed;
  }
  pthread_rwlock_wrlock(&ctx->blocks_lock);
  if (ctx->mode == OCL_MEMORY_BUFFER) {
    block.base = ctx->next_address;
    ctx->next_address +=
        (size + OCL_RANGE_GRAIN - 1) / OCL_RANGE_GRAIN * OCL_RANGE_GRAIN + OCL_RANGE_GRAIN;
  }
  int added = add_block(ctx, &block);
  pthread_rwlock_unlock(&ctx->blocks_lock);
  if (added != 0) {
    status = ocl_fail(TB_ERROR_OUT_OF_MEMORY, "device_malloc: out of host memory");
    goto failed;
  }
  *ptr = (void *)block.base;
  return TB_OK;
failed:
  if (block.mem != NULL) clReleaseMemObject(block.mem);
  if (svm != NULL) clSVMFree(ctx->context, svm);
  pthread_mutex_lock(&dev->lock);
  dev->allocated -= size;
  pthread_mutex_unlock(&dev->lock);
  return status;
}

tb_status ocl_memory_device_free(tb_context ctx, int32_t device, void *ptr) {
  tb_status status = ocl_enter(ctx, device);
  if (status != TB_OK) return status;
  if (ptr == NULL) return TB_OK;
  pthread_rwlock_wrlock(&ctx->blocks_lock);
  size_t at = upper(ctx, (uintptr_t)ptr);
  ocl_block block = {0};
  bool found =
      at > 0 && ctx->blocks[at - 1].base == (uintptr_t)ptr && ctx->blocks[at - 1].device == device;
  if (found) {
    block = ctx->blocks[at - 1];
    memmove(&ctx->blocks[at - 1], &ctx->blocks[at], (ctx->block_count - at) * sizeof(ocl_block));
    ctx->block_count--;
  }
  pthread_rwlock_unlock(&ctx->blocks_lock);
  if (!found) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "device_free: %p is not an allocation of ocl:%d (freed twice, or not "
                    "returned by device_malloc on that device)",
                    ptr, (int)device);
  }
  release_block(ctx, &block);
  ocl_device *dev = &ctx->devices[device];
  pthread_mutex_lock(&dev->lock);
  dev->allocated -= block.size;
  pthread_mutex_unlock(&dev->lock);
  return TB_OK;
}

tb_status ocl_memory_get_info(tb_context ctx, int32_t device, size_t *free_bytes,
                              size_t *total_bytes) {
  tb_status status = ocl_enter(ctx, device);
  if (status != TB_OK) return status;
  if (free_bytes == NULL || total_bytes == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "get_info: free_bytes or total_bytes is NULL");
  }
  ocl_device *dev = &ctx->devices[device];
  pthread_mutex_lock(&dev->lock);
  *total_bytes = dev->global_mem;
  *free_bytes = dev->global_mem - dev->allocated;
  pthread_mutex_unlock(&dev->lock);
  return TB_OK;
}

/* ---- copies ---- */

/* The checks every copy starts with: the device exists and is not faulted. */
static tb_status enter_healthy(tb_context ctx, int32_t device) {
  tb_status status = ocl_enter(ctx, device);
  if (status != TB_OK) return status;
  return ocl_fault_status(ctx, device);
}

static tb_status stream_device(tb_context ctx, tb_stream stream, const char *call,
                               int32_t *device) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  if (stream == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "%s: stream is NULL", call);
  *device = ocl_stream_of(stream)->device;
  return ocl_fault_status(ctx, *device);
}

/* The command that copies `size` bytes from host `src` to device memory `dst`. */
static tb_status copy_in(tb_context ctx, int32_t device, void *dst, const void *src, size_t size,
                         ocl_command *c) {
  ocl_place place;
  tb_status status = ocl_place_of(ctx, device, dst, size, "dst", &place);
  if (status != TB_OK) return status;
  if (src == NULL)
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "copy to ocl:%d: src is NULL", (int)device);
  bool svm = ctx->mode == OCL_MEMORY_SVM;
  *c = (ocl_command){.kind = svm ? OCL_COMMAND_SVM_COPY : OCL_COMMAND_WRITE,
                     .what = "copy to the device",
                     .dst = dst,
                     .src = src,
                     .dst_mem = place.mem,
                     .dst_offset = place.offset,
                     .size = size};
  return TB_OK;
}

/* The command that copies `size` bytes from device memory `src` to host `dst`. */
static tb_status copy_out(tb_context ctx, int32_t device, void *dst, const void *src, size_t size,
                          ocl_command *c) {
  ocl_place place;
  tb_status status = ocl_place_of(ctx, device, src, size, "src", &place);
  if (status != TB_OK) return status;
  if (dst == NULL)
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "copy from ocl:%d: dst is NULL", (int)device);
  bool svm = ctx->mode == OCL_MEMORY_SVM;
  *c = (ocl_command){.kind = svm ? OCL_COMMAND_SVM_COPY : OCL_COMMAND_READ,
                     .what = "copy from the device",
                     .dst = dst,
                     .src = src,
                     .src_mem = place.mem,
                     .src_offset = place.offset,
                     .size = size};
  return TB_OK;
}

/* The command that copies `size` bytes between device memories (one context: any devices). */
static tb_status copy_across(tb_context ctx, int32_t dst_device, void *dst, int32_t src_device,
                             const void *src, size_t size, ocl_command *c) {
  ocl_place to, from;
  tb_status status = ocl_place_of(ctx, dst_device, dst, size, "dst", &to);
  if (status == TB_OK) status = ocl_place_of(ctx, src_device, src, size, "src", &from);
  if (status != TB_OK) return status;
  bool svm = ctx->mode == OCL_MEMORY_SVM;
  *c = (ocl_command){.kind = svm ? OCL_COMMAND_SVM_COPY : OCL_COMMAND_COPY,
                     .what = "copy between devices",
                     .dst = dst,
                     .src = src,
                     .dst_mem = to.mem,
                     .dst_offset = to.offset,
                     .src_mem = from.mem,
                     .src_offset = from.offset,
                     .size = size};
  return TB_OK;
}

/* A blocking copy: refused in a capture whose mode prohibits it, else run on the device's own
 * queue and waited for. */
static tb_status run_blocking(tb_context ctx, int32_t device, const char *call,
                              const ocl_command *c) {
  tb_status status = ocl_capture_check_unsafe(ctx, device, call);
  if (status != TB_OK) return status;
  return ocl_command_enqueue(ctx, device, ctx->devices[device].internal, c, CL_TRUE);
}

tb_status ocl_memory_copy_h2d(tb_context ctx, int32_t device, void *dst, const void *src,
                              size_t size) {
  tb_status status = enter_healthy(ctx, device);
  if (status != TB_OK || size == 0) return status;
  ocl_command c;
  status = copy_in(ctx, device, dst, src, size, &c);
  return status == TB_OK ? run_blocking(ctx, device, "copy_h2d", &c) : status;
}

tb_status ocl_memory_copy_d2h(tb_context ctx, int32_t device, void *dst, const void *src,
                              size_t size) {
  tb_status status = enter_healthy(ctx, device);
  if (status != TB_OK || size == 0) return status;
  ocl_command c;
  status = copy_out(ctx, device, dst, src, size, &c);
  return status == TB_OK ? run_blocking(ctx, device, "copy_d2h", &c) : status;
}

tb_status ocl_memory_copy_d2d(tb_context ctx, int32_t dst_device, void *dst, int32_t src_device,
                              const void *src, size_t size) {
  tb_status status = enter_healthy(ctx, dst_device);
  if (status == TB_OK) status = enter_healthy(ctx, src_device);
  if (status != TB_OK || size == 0) return status;
  ocl_command c;
  status = copy_across(ctx, dst_device, dst, src_device, src, size, &c);
  if (status == TB_OK && src_device != dst_device) {
    status = ocl_capture_check_unsafe(ctx, src_device, "copy_d2d");
  }
  return status == TB_OK ? run_blocking(ctx, dst_device, "copy_d2d", &c) : status;
}

tb_status ocl_memory_copy_h2d_async(tb_context ctx, tb_stream stream, void *dst, const void *src,
                                    size_t size) {
  int32_t device = -1;
  tb_status status = stream_device(ctx, stream, "copy_h2d_async", &device);
  if (status != TB_OK || size == 0) return status;
  ocl_command c;
  status = copy_in(ctx, device, dst, src, size, &c);
  return status == TB_OK ? ocl_submit(ctx, ocl_stream_of(stream), &c) : status;
}

tb_status ocl_memory_copy_d2h_async(tb_context ctx, tb_stream stream, void *dst, const void *src,
                                    size_t size) {
  int32_t device = -1;
  tb_status status = stream_device(ctx, stream, "copy_d2h_async", &device);
  if (status != TB_OK || size == 0) return status;
  ocl_command c;
  status = copy_out(ctx, device, dst, src, size, &c);
  return status == TB_OK ? ocl_submit(ctx, ocl_stream_of(stream), &c) : status;
}

tb_status ocl_memory_copy_d2d_async(tb_context ctx, tb_stream stream, int32_t dst_device, void *dst,
                                    int32_t src_device, const void *src, size_t size) {
  int32_t device = -1;
  tb_status status = stream_device(ctx, stream, "copy_d2d_async", &device);
  if (status == TB_OK) status = enter_healthy(ctx, dst_device);
  if (status == TB_OK) status = enter_healthy(ctx, src_device);
  if (status != TB_OK || size == 0) return status;
  if (device != dst_device && device != src_device) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "copy_d2d_async: the stream belongs to ocl:%d, neither the destination's "
                    "ocl:%d nor the source's ocl:%d",
                    (int)device, (int)dst_device, (int)src_device);
  }
  ocl_command c;
  status = copy_across(ctx, dst_device, dst, src_device, src, size, &c);
  return status == TB_OK ? ocl_submit(ctx, ocl_stream_of(stream), &c) : status;
}

tb_status ocl_memory_memset_async(tb_context ctx, tb_stream stream, void *ptr, int value,
                                  size_t size) {
  int32_t device = -1;
  tb_status status = stream_device(ctx, stream, "memset_async", &device);
  if (status != TB_OK || size == 0) return status;
  ocl_place place;
  status = ocl_place_of(ctx, device, ptr, size, "ptr", &place);
  if (status != TB_OK) return status;
  const ocl_command c = {
      .kind = ctx->mode == OCL_MEMORY_SVM ? OCL_COMMAND_SVM_FILL : OCL_COMMAND_FILL,
      .what = "memset_async",
      .dst = ptr,
      .dst_mem = place.mem,
      .dst_offset = place.offset,
      .size = size,
      .byte = (cl_uchar)value};
  return ocl_submit(ctx, ocl_stream_of(stream), &c);
}
