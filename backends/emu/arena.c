/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's device memory.  Each device owns one memfd of `capacity` bytes, mapped twice:
 *   - the device view, whose addresses device_malloc hands out: read-write by default, so the
 *     device reports TB_DEVICE_HOST_ACCESS (torch.compile runs Inductor's C++ kernels on device
 *     tensors); with TORCH_BACKEND_EMU_GUARD=1 it is PROT_NONE instead, so host code that
 *     reads or writes device memory faults at once instead of silently working (the sanitizer
 *     runs and the tests of csrc's own host paths use this);
 *   - the shadow view, read-write, used only by emu's copies and kernels (emu_host()).
 * Allocation is best-fit over a sorted, coalesced list of free ranges; freeing large ranges
 * punches holes in the memfd so the pages go back to the system.
 *
 * State: the context's arenas, guarded by its arena_mutex (allocation and free are rare:
 * torch_backend's caching allocator sits above).  emu_host() reads only the bases, written once
 * before the first pointer of a device is handed out.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu.h"

/* Under AddressSanitizer the arena tells ASan what is addressable, as malloc does for the heap:
 * each allocation is followed by a poisoned redzone of EMU_REDZONE bytes, and freed ranges are
 * poisoned until they are handed out again, so a kernel or copy that runs past a device
 * allocation, or uses one after device_free, is reported where it happens (ASan checks the
 * shadow view, which is where emu's own code touches device memory).  Never-allocated space
 * stays unpoisoned: poisoning 8 GiB of arena up front would cost 1 GiB of ASan shadow. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define EMU_REDZONE EMU_ALIGNMENT
#else
#define EMU_REDZONE 0
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

typedef struct range {
  uint64_t offset;
  uint64_t size;
} range;

typedef struct emu_arena {
  bool ready;
  int fd;
  char *device_base;
  char *shadow_base;
  uint64_t capacity;
  uint64_t used;
  range *free_ranges; /* sorted by offset, never adjacent */
  size_t free_count, free_capacity;
  range *live; /* open-addressing table of allocations: offset + 1 -> size (0 = empty) */
  size_t live_capacity, live_count;
} arena;

static uint64_t round_up(uint64_t size) {
  return (size + EMU_ALIGNMENT - 1) & ~(uint64_t)(EMU_ALIGNMENT - 1);
}

tb_status emu_arenas_create(emu_context *ctx) {
  ctx->arenas = calloc(EMU_MAX_DEVICES, sizeof(arena));
  return ctx->arenas != NULL ? TB_OK
                             : tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: init: out of host memory");
}

/* Unmaps every device's memory: allocations still live are gone with it. */
void emu_arenas_destroy(emu_context *ctx) {
  if (ctx->arenas == NULL) return;
  for (int d = 0; d < EMU_MAX_DEVICES; d++) {
    arena *a = &ctx->arenas[d];
    if (!a->ready) continue;
    ASAN_UNPOISON_MEMORY_REGION(a->shadow_base, a->capacity);
    munmap(a->device_base, a->capacity);
    munmap(a->shadow_base, a->capacity);
    close(a->fd);
    free(a->free_ranges);
    free(a->live);
  }
  free(ctx->arenas);
  ctx->arenas = NULL;
}

/* Maps the device's memory on first use.  Caller holds the context's arena_mutex. */
static tb_status setup(emu_context *ctx, int32_t device) {
  arena *a = &ctx->arenas[device];
  if (a->ready) return TB_OK;
  const emu_config *config = &ctx->config;
  char name[32];
  snprintf(name, sizeof name, "tb-emu-device-%d", (int)device);
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) {
    return tbk_fail(TB_ERROR_UNAVAILABLE, "emu: device %d: memfd_create failed: %s", (int)device,
                    strerror(errno));
  }
  if (ftruncate(fd, (off_t)config->capacity) != 0) {
    close(fd);
    return tbk_fail(TB_ERROR_UNAVAILABLE, "emu: device %d: cannot size device memory: %s",
                    (int)device, strerror(errno));
  }
  int device_prot = config->guard ? PROT_NONE : PROT_READ | PROT_WRITE;
  void *device_view = mmap(NULL, config->capacity, device_prot, MAP_SHARED, fd, 0);
  void *shadow_view = mmap(NULL, config->capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (device_view == MAP_FAILED || shadow_view == MAP_FAILED) {
    if (device_view != MAP_FAILED) munmap(device_view, config->capacity);
    if (shadow_view != MAP_FAILED) munmap(shadow_view, config->capacity);
    close(fd);
    return tbk_fail(TB_ERROR_UNAVAILABLE, "emu: device %d: cannot map %llu bytes: %s", (int)device,
                    (unsigned long long)config->capacity, strerror(errno));
  }
  a->free_ranges = malloc(16 * sizeof(range));
  a->live = calloc(1024, sizeof(range));
  if (a->free_ranges == NULL || a->live == NULL) {
    free(a->free_ranges);
    free(a->live);
    munmap(device_view, config->capacity);
    munmap(shadow_view, config->capacity);
    close(fd);
    return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: out of host memory setting up device %d",
                    (int)device);
  }
  a->fd = fd;
  a->device_base = device_view;
  a->shadow_base = shadow_view;
  a->capacity = config->capacity;
  a->free_capacity = 16;
  a->free_ranges[0] = (range){0, config->capacity};
  a->free_count = 1;
  a->live_capacity = 1024;
  a->ready = true;
  return TB_OK;
}

/* ---- the table of live allocations (offset -> size) ---- */

static size_t slot_of(const arena *a, uint64_t offset) {
  uint64_t key = offset / EMU_ALIGNMENT;
  key *= 0x9e3779b97f4a7c15ull;
  return (size_t)(key >> 17) & (a->live_capacity - 1);
}

static int live_insert(arena *a, uint64_t offset, uint64_t size);

static int live_grow(arena *a) {
  range *old = a->live;
  size_t old_capacity = a->live_capacity;
  range *table = calloc(old_capacity * 2, sizeof(range));
  if (table == NULL) return -1;
  a->live = table;
  a->live_capacity = old_capacity * 2;
  a->live_count = 0;
  for (size_t i = 0; i < old_capacity; i++) {
    if (old[i].offset != 0) live_insert(a, old[i].offset - 1, old[i].size);
  }
  free(old);
  return 0;
}

static int live_insert(arena *a, uint64_t offset, uint64_t size) {
  if ((a->live_count + 1) * 2 > a->live_capacity && live_grow(a) != 0) return -1;
  size_t i = slot_of(a, offset);
  while (a->live[i].offset != 0) i = (i + 1) & (a->live_capacity - 1);
  a->live[i] = (range){offset + 1, size};
  a->live_count++;
  return 0;
}

/* Removes the allocation at `offset`; returns its size, or 0 when there is none. */
static uint64_t live_remove(arena *a, uint64_t offset) {
  size_t i = slot_of(a, offset);
  while (a->live[i].offset != 0 && a->live[i].offset != offset + 1) {
    i = (i + 1) & (a->live_capacity - 1);
  }
  if (a->live[i].offset == 0) return 0;
  uint64_t size = a->live[i].size;
  a->live[i] = (range){0, 0};
  a->live_count--;
  /* Re-insert the rest of the cluster so that lookups keep finding them. */
  for (size_t j = (i + 1) & (a->live_capacity - 1); a->live[j].offset != 0;
       j = (j + 1) & (a->live_capacity - 1)) {
    range moved = a->live[j];
    a->live[j] = (range){0, 0};
    a->live_count--;
    live_insert(a, moved.offset - 1, moved.size);
  }
  return size;
}

/* ---- free ranges ---- */

static int free_insert_at(arena *a, size_t index, range r) {
  if (a->free_count == a->free_capacity) {
    range *grown = realloc(a->free_ranges, 2 * a->free_capacity * sizeof(range));
    if (grown == NULL) return -1;
    a->free_ranges = grown;
    a->free_capacity *= 2;
  }
  memmove(&a->free_ranges[index + 1], &a->free_ranges[index],
          (a->free_count - index) * sizeof(range));
  a->free_ranges[index] = r;
  a->free_count++;
  return 0;
}

static void free_remove_at(arena *a, size_t index) {
  memmove(&a->free_ranges[index], &a->free_ranges[index + 1],
          (a->free_count - index - 1) * sizeof(range));
  a->free_count--;
}

tb_status emu_arena_alloc(emu_context *ctx, int32_t device, size_t size, void **ptr) {
  uint64_t rounded = round_up(size) + EMU_REDZONE;
  pthread_mutex_t *mutex = &ctx->arena_mutex;
  pthread_mutex_lock(mutex);
  tb_status status = setup(ctx, device);
  if (status != TB_OK) {
    pthread_mutex_unlock(mutex);
    return status;
  }
  arena *a = &ctx->arenas[device];
  size_t best = a->free_count;
  for (size_t i = 0; i < a->free_count; i++) {
    if (a->free_ranges[i].size >= rounded &&
        (best == a->free_count || a->free_ranges[i].size < a->free_ranges[best].size)) {
      best = i;
    }
  }
  if (size > a->capacity || best == a->free_count) {
    uint64_t used = a->used, capacity = a->capacity;
    pthread_mutex_unlock(mutex);
    return tbk_fail(TB_ERROR_OUT_OF_MEMORY,
                    "emu: device %d cannot allocate %zu bytes: %llu of %llu bytes in use and "
                    "no free range large enough",
                    (int)device, size, (unsigned long long)used, (unsigned long long)capacity);
  }
  range *r = &a->free_ranges[best];
  uint64_t offset = r->offset;
  if (live_insert(a, offset, rounded) != 0) {
    pthread_mutex_unlock(mutex);
    return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: out of host memory tracking allocations");
  }
  r->offset += rounded;
  r->size -= rounded;
  if (r->size == 0) free_remove_at(a, best);
  a->used += rounded;
  ASAN_UNPOISON_MEMORY_REGION(a->shadow_base + offset, size);
  ASAN_POISON_MEMORY_REGION(a->shadow_base + offset + size, rounded - size);
  *ptr = a->device_base + offset;
  pthread_mutex_unlock(mutex);
  return TB_OK;
}

tb_status emu_arena_free(emu_context *ctx, int32_t device, void *ptr) {
  pthread_mutex_t *mutex = &ctx->arena_mutex;
  pthread_mutex_lock(mutex);
  arena *a = &ctx->arenas[device];
  char *p = ptr;
  if (!a->ready || p < a->device_base || p >= a->device_base + a->capacity) {
    pthread_mutex_unlock(mutex);
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: device_free: %p is not memory of device %d",
                    ptr, (int)device);
  }
  uint64_t offset = (uint64_t)(p - a->device_base);
  uint64_t size = live_remove(a, offset);
  if (size == 0) {
    pthread_mutex_unlock(mutex);
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: device_free: %p was not returned by device_malloc on device %d (or "
                    "was already freed)",
                    ptr, (int)device);
  }
  a->used -= size;
  ASAN_POISON_MEMORY_REGION(a->shadow_base + offset, size);
  if (size >= (1u << 20)) {
    /* Give the pages back; the range stays mapped and reads as zeros when reused. */
    fallocate(a->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)size);
  }
  /* Insert [offset, offset + size) into the sorted free list, merging with neighbours. */
  size_t index = 0;
  while (index < a->free_count && a->free_ranges[index].offset < offset) index++;
  bool merge_left =
      index > 0 && a->free_ranges[index - 1].offset + a->free_ranges[index - 1].size == offset;
  bool merge_right = index < a->free_count && offset + size == a->free_ranges[index].offset;
  if (merge_left && merge_right) {
    a->free_ranges[index - 1].size += size + a->free_ranges[index].size;
    free_remove_at(a, index);
  } else if (merge_left) {
    a->free_ranges[index - 1].size += size;
  } else if (merge_right) {
    a->free_ranges[index].offset = offset;
    a->free_ranges[index].size += size;
  } else if (free_insert_at(a, index, (range){offset, size}) != 0) {
    /* Out of host memory: the range is lost to this process, the block is still freed. */
  }
  pthread_mutex_unlock(mutex);
  return TB_OK;
}

void emu_arena_usage(emu_context *ctx, int32_t device, size_t *used, size_t *total) {
  pthread_mutex_lock(&ctx->arena_mutex);
  *used = (size_t)ctx->arenas[device].used;
  *total = (size_t)ctx->config.capacity;
  pthread_mutex_unlock(&ctx->arena_mutex);
}

void *emu_host(const emu_context *ctx, int32_t device, const void *ptr) {
  if (ptr == NULL) return NULL;
  const arena *a = &ctx->arenas[device];
  return a->shadow_base + ((const char *)ptr - a->device_base);
}

bool emu_is_device_range(const emu_context *ctx, int32_t device, const void *ptr, size_t size) {
  const arena *a = &ctx->arenas[device];
  const char *p = ptr;
  return a->ready && p >= a->device_base && size <= a->capacity &&
         p + size <= a->device_base + a->capacity;
}

/* ---- sharing with other processes (ipc.c) ---- */

tb_status emu_arena_export(emu_context *ctx, int32_t device, const void *ptr, uint64_t *offset,
                           uint64_t *size, int *fd) {
  pthread_mutex_lock(&ctx->arena_mutex);
  arena *a = &ctx->arenas[device];
  const char *p = ptr;
  uint64_t found = 0, at = 0;
  if (a->ready && p >= a->device_base && p < a->device_base + a->capacity) {
    at = (uint64_t)(p - a->device_base);
    size_t i = slot_of(a, at);
    while (a->live[i].offset != 0 && a->live[i].offset != at + 1) {
      i = (i + 1) & (a->live_capacity - 1);
    }
    found = a->live[i].size;
  }
  int copy = found != 0 ? fcntl(a->fd, F_DUPFD_CLOEXEC, 0) : -1;
  int error = errno;
  pthread_mutex_unlock(&ctx->arena_mutex);
  if (found == 0) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: export_memory: %p is not the start of a live allocation of device %d",
                    ptr, (int)device);
  }
  if (copy < 0) {
    return tbk_fail(TB_ERROR_UNAVAILABLE,
                    "emu: export_memory: cannot duplicate device %d's memfd: %s", (int)device,
                    strerror(error));
  }
  *offset = at;
  *size = found - EMU_REDZONE;
  *fd = copy;
  return TB_OK;
}

/* Maps `span` bytes of `fd` from `file_offset` at device address `at` and at its shadow. */
tb_status emu_arena_map_file(emu_context *ctx, int32_t device, void *at, size_t span, int fd,
                             uint64_t file_offset) {
  arena *a = &ctx->arenas[device];
  char *shadow = emu_host(ctx, device, at);
  int device_prot = ctx->config.guard ? PROT_NONE : PROT_READ | PROT_WRITE;
  if (mmap(at, span, device_prot, MAP_SHARED | MAP_FIXED, fd, (off_t)file_offset) == MAP_FAILED ||
      mmap(shadow, span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)file_offset) ==
          MAP_FAILED) {
    int error = errno;
    emu_arena_unmap_file(ctx, device, at, span);
    return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: import_memory: cannot map %zu bytes: %s", span,
                    strerror(error));
  }
  (void)a;
  return TB_OK;
}

/* Puts the device's own memory back under [at, at + span) (both views). */
void emu_arena_unmap_file(emu_context *ctx, int32_t device, void *at, size_t span) {
  arena *a = &ctx->arenas[device];
  uint64_t offset = (uint64_t)((char *)at - a->device_base);
  int device_prot = ctx->config.guard ? PROT_NONE : PROT_READ | PROT_WRITE;
  /* Mapping over a mapping replaces it; failing that (address space exhausted) the range
   * would show another process's memory, so it is made inaccessible instead. */
  if (mmap(at, span, device_prot, MAP_SHARED | MAP_FIXED, a->fd, (off_t)offset) == MAP_FAILED) {
    mmap(at, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  }
  char *shadow = a->shadow_base + offset;
  if (mmap(shadow, span, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, a->fd, (off_t)offset) ==
      MAP_FAILED) {
    mmap(shadow, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  }
}
