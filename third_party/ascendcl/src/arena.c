/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Device memory of the stand-in.  A device's memory is one memfd of TB_ASCEND_STANDIN_MEMORY
 * bytes, mapped on its first aclrtMalloc at two addresses:
 *
 *   - the device view, PROT_NONE: aclrtMalloc returns addresses inside it, so host code that
 *     dereferences a device pointer gets SIGSEGV, as it would on an NPU;
 *   - the shadow view, read-write: the runtime's copies and the operators' tasks reach the
 *     bytes through it (sd_arena_translate, standin_device_to_host).
 *
 * Blocks are carved best-fit from a sorted list of free ranges, coalesced on free; large frees
 * give their pages back to the system (fallocate's hole punching).  The live blocks sit in an
 * array sorted by offset, so translating an address is a binary search under a read lock:
 * that is what every copy and every operator argument costs.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime.h"

#define PUNCH_MIN (1u << 20) /* frees of at least this much give their pages back */

void sd_arena_init(sd_arena *arena) {
  memset(arena, 0, sizeof *arena);
  pthread_rwlock_init(&arena->lock, NULL);
  arena->fd = -1;
}

static void unmap(sd_arena *arena) {
  if (!arena->mapped) return;
  munmap(arena->device_base, arena->capacity);
  munmap(arena->shadow_base, arena->capacity);
  close(arena->fd);
  free(arena->live);
  free(arena->free);
  arena->mapped = false;
  arena->fd = -1;
  arena->device_base = arena->shadow_base = NULL;
  arena->live = NULL;
  arena->free = NULL;
  arena->live_count = arena->live_capacity = arena->free_count = arena->free_capacity = 0;
  arena->used = 0;
}

void sd_arena_destroy(sd_arena *arena) {
  pthread_rwlock_wrlock(&arena->lock);
  unmap(arena);
  pthread_rwlock_unlock(&arena->lock);
}

static void punch(sd_arena *arena, uint64_t offset, uint64_t size) {
  long page = sysconf(_SC_PAGESIZE);
  uint64_t begin = (offset + (uint64_t)page - 1) & ~((uint64_t)page - 1);
  uint64_t end = (offset + size) & ~((uint64_t)page - 1);
  if (end > begin && end - begin >= PUNCH_MIN) {
    /* Best effort: without hole punching the pages simply stay allocated. */
    (void)fallocate(arena->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)begin,
                    (off_t)(end - begin));
  }
}

void sd_arena_clear(sd_arena *arena) {
  pthread_rwlock_wrlock(&arena->lock);
  if (arena->mapped) {
    arena->live_count = 0;
    arena->used = 0;
    arena->free[0] = (sd_range){0, arena->capacity};
    arena->free_count = 1;
    punch(arena, 0, arena->capacity);
  }
  pthread_rwlock_unlock(&arena->lock);
}

/* Maps the memory of `device` on first use.  Caller holds the write lock. */
static aclError map(sd_arena *arena, int32_t device, uint64_t capacity) {
  if (arena->mapped) return ACL_SUCCESS;
  char name[48];
  snprintf(name, sizeof name, "ascendcl-standin-device-%d", (int)device);
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) {
    return sd_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc: device %d: memfd_create: %s",
                    (int)device, strerror(errno));
  }
  if (ftruncate(fd, (off_t)capacity) != 0) {
    int e = errno;
    close(fd);
    return sd_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                    "aclrtMalloc: device %d: cannot size %llu bytes of device memory: %s",
                    (int)device, (unsigned long long)capacity, strerror(e));
  }
  void *device_view = mmap(NULL, capacity, PROT_NONE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  void *shadow_view =
      mmap(NULL, capacity, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  sd_block *live = malloc(64 * sizeof *live);
  sd_range *free_ranges = malloc(16 * sizeof *free_ranges);
  if (device_view == MAP_FAILED || shadow_view == MAP_FAILED || live == NULL ||
      free_ranges == NULL) {
    int e = errno;
    if (device_view != MAP_FAILED) munmap(device_view, capacity);
    if (shadow_view != MAP_FAILED) munmap(shadow_view, capacity);
    free(live);
    free(free_ranges);
    close(fd);
    return sd_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                    "aclrtMalloc: device %d: cannot map %llu bytes of device memory: %s",
                    (int)device, (unsigned long long)capacity, strerror(e));
  }
  arena->fd = fd;
  arena->device_base = device_view;
  arena->shadow_base = shadow_view;
  arena->capacity = capacity;
  arena->used = 0;
  arena->live = live;
  arena->live_capacity = 64;
  arena->live_count = 0;
  arena->free = free_ranges;
  arena->free_capacity = 16;
  arena->free[0] = (sd_range){0, capacity};
  arena->free_count = 1;
  arena->mapped = true;
  return ACL_SUCCESS;
}

static int grow(void **array, size_t *capacity, size_t element) {
  size_t bigger = *capacity * 2;
  void *grown = realloc(*array, bigger * element);
  if (grown == NULL) return -1;
  *array = grown;
  *capacity = bigger;
  return 0;
}

/* Index of the first live block whose offset is greater than `offset`. */
static size_t live_upper(const sd_arena *arena, uint64_t offset) {
  size_t low = 0, high = arena->live_count;
  while (low < high) {
    size_t mid = low + (high - low) / 2;
    if (arena->live[mid].offset <= offset) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return low;
}

aclError sd_arena_alloc(sd_arena *arena, int32_t device, uint64_t capacity, size_t size,
                        void **ptr) {
  /* aclrtMalloc.md: the size rounded up to 32 bytes, plus 32; blocks start 64-byte aligned. */
  if (size > capacity) {
    return sd_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                    "aclrtMalloc: %zu bytes exceed the %llu bytes of device %d", size,
                    (unsigned long long)capacity, (int)device);
  }
  uint64_t reserved = (((uint64_t)size + 31) & ~(uint64_t)31) + 32;
  reserved = (reserved + SD_ALIGNMENT - 1) & ~(uint64_t)(SD_ALIGNMENT - 1);
  pthread_rwlock_wrlock(&arena->lock);
  aclError err = map(arena, device, capacity);
  if (err != ACL_SUCCESS) {
    pthread_rwlock_unlock(&arena->lock);
    return err;
  }
  size_t best = arena->free_count;
  for (size_t i = 0; i < arena->free_count; i++) {
    if (arena->free[i].size >= reserved &&
        (best == arena->free_count || arena->free[i].size < arena->free[best].size)) {
      best = i;
    }
  }
  if (best == arena->free_count ||
      (arena->live_count == arena->live_capacity &&
       grow((void **)&arena->live, &arena->live_capacity, sizeof *arena->live) != 0)) {
    uint64_t used = arena->used;
    pthread_rwlock_unlock(&arena->lock);
    return sd_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                    "aclrtMalloc: out of device memory on device %d: %zu bytes requested, "
                    "%llu of %llu bytes in use",
                    (int)device, size, (unsigned long long)used, (unsigned long long)capacity);
  }
  uint64_t offset = arena->free[best].offset;
  arena->free[best].offset += reserved;
  arena->free[best].size -= reserved;
  if (arena->free[best].size == 0) {
    memmove(&arena->free[best], &arena->free[best + 1],
            (arena->free_count - best - 1) * sizeof *arena->free);
    arena->free_count--;
  }
  size_t at = live_upper(arena, offset);
  memmove(&arena->live[at + 1], &arena->live[at], (arena->live_count - at) * sizeof *arena->live);
  arena->live[at] = (sd_block){offset, size, reserved};
  arena->live_count++;
  arena->used += reserved;
  *ptr = arena->device_base + offset;
  pthread_rwlock_unlock(&arena->lock);
  return ACL_SUCCESS;
}

/* Returns [offset, offset + size) to the free list, merging neighbours; -1 only when the list
 * must grow and the host is out of memory. */
static int release_range(sd_arena *arena, uint64_t offset, uint64_t size) {
  size_t at = 0;
  while (at < arena->free_count && arena->free[at].offset < offset) at++;
  bool merge_left = at > 0 && arena->free[at - 1].offset + arena->free[at - 1].size == offset;
  bool merge_right = at < arena->free_count && offset + size == arena->free[at].offset;
  if (merge_left && merge_right) {
    arena->free[at - 1].size += size + arena->free[at].size;
    memmove(&arena->free[at], &arena->free[at + 1],
            (arena->free_count - at - 1) * sizeof *arena->free);
    arena->free_count--;
  } else if (merge_left) {
    arena->free[at - 1].size += size;
  } else if (merge_right) {
    arena->free[at].offset = offset;
    arena->free[at].size += size;
  } else {
    if (arena->free_count == arena->free_capacity &&
        grow((void **)&arena->free, &arena->free_capacity, sizeof *arena->free) != 0) {
      return -1;
    }
    memmove(&arena->free[at + 1], &arena->free[at], (arena->free_count - at) * sizeof *arena->free);
    arena->free[at] = (sd_range){offset, size};
    arena->free_count++;
  }
  return 0;
}

aclError sd_arena_free(sd_arena *arena, void *ptr) {
  pthread_rwlock_wrlock(&arena->lock);
  if (!arena->mapped || (char *)ptr < arena->device_base ||
      (char *)ptr >= arena->device_base + arena->capacity) {
    pthread_rwlock_unlock(&arena->lock);
    return sd_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtFree: %p is not device memory", ptr);
  }
  uint64_t offset = (uint64_t)((char *)ptr - arena->device_base);
  size_t at = live_upper(arena, offset);
  if (at == 0 || arena->live[at - 1].offset != offset) {
    pthread_rwlock_unlock(&arena->lock);
    return sd_error(ACL_ERROR_RT_PARAM_INVALID,
                    "aclrtFree: %p is not an address aclrtMalloc returned (freed already, or "
                    "inside a block)",
                    ptr);
  }
  sd_block block = arena->live[at - 1];
  if (release_range(arena, block.offset, block.reserved) != 0) {
    pthread_rwlock_unlock(&arena->lock);
    return sd_error(ACL_ERROR_RT_MEMORY_FREE, "aclrtFree: out of host memory freeing %p", ptr);
  }
  memmove(&arena->live[at - 1], &arena->live[at], (arena->live_count - at) * sizeof *arena->live);
  arena->live_count--;
  arena->used -= block.reserved;
  if (block.reserved >= PUNCH_MIN) punch(arena, block.offset, block.reserved);
  pthread_rwlock_unlock(&arena->lock);
  return ACL_SUCCESS;
}

void *sd_arena_translate(sd_arena *arena, const void *ptr, size_t bytes) {
  void *shadow = NULL;
  pthread_rwlock_rdlock(&arena->lock);
  if (arena->mapped && (const char *)ptr >= arena->device_base &&
      (const char *)ptr < arena->device_base + arena->capacity) {
    uint64_t offset = (uint64_t)((const char *)ptr - arena->device_base);
    size_t at = live_upper(arena, offset);
    if (at > 0) {
      const sd_block *block = &arena->live[at - 1];
      uint64_t end = block->offset + block->size;
      if (offset <= end && bytes <= end - offset) shadow = arena->shadow_base + offset;
    }
  }
  pthread_rwlock_unlock(&arena->lock);
  return shadow;
}

bool sd_arena_contains(sd_arena *arena, const void *ptr) {
  pthread_rwlock_rdlock(&arena->lock);
  bool inside = arena->mapped && (const char *)ptr >= arena->device_base &&
                (const char *)ptr < arena->device_base + arena->capacity;
  pthread_rwlock_unlock(&arena->lock);
  return inside;
}

void sd_arena_usage(sd_arena *arena, uint64_t capacity, size_t *free_bytes, size_t *total) {
  pthread_rwlock_rdlock(&arena->lock);
  uint64_t used = arena->mapped ? arena->used : 0;
  pthread_rwlock_unlock(&arena->lock);
  *total = (size_t)capacity;
  *free_bytes = (size_t)(capacity - used);
}

/* ---- memory shared between processes (ipc.c) ---- */

aclError sd_arena_export(sd_arena *arena, const void *ptr, size_t size, uint64_t *offset, int *fd) {
  aclError err = ACL_SUCCESS;
  pthread_rwlock_rdlock(&arena->lock);
  const char *p = ptr;
  bool inside = false;
  if (arena->mapped && p >= arena->device_base && p < arena->device_base + arena->capacity) {
    uint64_t at = (uint64_t)(p - arena->device_base);
    size_t i = live_upper(arena, at);
    inside = i > 0 && at + size <= arena->live[i - 1].offset + arena->live[i - 1].size;
    *offset = at;
  }
  if (!inside) {
    err = sd_error(ACL_ERROR_INVALID_PARAM,
                   "aclrtIpcMemGetExportKey: [%p, +%zu) is not inside one block of aclrtMalloc",
                   ptr, size);
  } else if ((*fd = fcntl(arena->fd, F_DUPFD_CLOEXEC, 0)) < 0) {
    err = sd_error(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtIpcMemGetExportKey: dup: %s",
                   strerror(errno));
  }
  pthread_rwlock_unlock(&arena->lock);
  return err;
}

aclError sd_arena_map_file(sd_arena *arena, void *at, size_t span, int fd, uint64_t file_offset) {
  char *shadow = arena->shadow_base + ((char *)at - arena->device_base);
  if (mmap(at, span, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, (off_t)file_offset) == MAP_FAILED ||
      mmap(shadow, span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)file_offset) ==
          MAP_FAILED) {
    int e = errno;
    sd_arena_unmap_file(arena, at, span);
    return sd_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                    "aclrtIpcMemImportByKey: cannot map %zu bytes: %s", span, strerror(e));
  }
  return ACL_SUCCESS;
}

void sd_arena_unmap_file(sd_arena *arena, void *at, size_t span) {
  uint64_t offset = (uint64_t)((char *)at - arena->device_base);
  if (mmap(at, span, PROT_NONE, MAP_SHARED | MAP_FIXED, arena->fd, (off_t)offset) == MAP_FAILED) {
    mmap(at, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  }
  char *shadow = arena->shadow_base + offset;
  if (mmap(shadow, span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, arena->fd,
           (off_t)offset) == MAP_FAILED) {
    mmap(shadow, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  }
}
