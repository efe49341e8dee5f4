/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The fake vendor: every slot of vendor.h implemented on host memory, each as a weak symbol
 * named tbv_<group>_<slot> so that a vendor linking this file replaces any subset by defining
 * strong symbols of the same names (see include/torch_backend/fake.h).
 *
 * Global state, and why it is safe:
 *   - g_config: written once under pthread_once, read-only afterwards.
 *   - g_used[]: per-device byte counters, atomics.
 *   - t_error: thread-local by definition of the last-error contract.
 *   - g_faulted[] / g_fault_message[]: each device's fault (vendor.h, "Device faults"); the flag
 *     is atomic, the message is written and read under g_fault_mutex.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <torch_backend/fake.h>

#include "../common/size.h"

#ifndef TORCH_BACKEND_VERSION
#define TORCH_BACKEND_VERSION "0.0.0"
#endif

#define TB_WEAK __attribute__((weak))
#define FAKE_MAX_DEVICES 64
#define FAKE_DEFAULT_MEMORY (16ull << 30)
#define FAKE_BLOCK_MAGIC 0x66616b65626c6b31ull /* "fakeblk1" */
#define FAKE_STREAM_MAGIC 0x66737472u          /* "fstr" */
#define FAKE_EVENT_MAGIC 0x66657674u           /* "fevt" */

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                   */

static _Thread_local char t_error[1024];

tb_status tb_fake_set_error(tb_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(t_error, sizeof t_error, format, args);
  va_end(args);
  return status;
}

TB_WEAK const char *tbv_last_error(tb_context ctx) {
  (void)ctx;
  return t_error;
}

/* ---------------------------------------------------------------------------------------- */
/* Configuration, read once from the environment                                           */

static struct {
  tb_status status; /* TB_OK, or why the environment is unusable */
  char message[256];
  int32_t device_count;
  uint64_t capacity;
} g_config;
static pthread_once_t g_config_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t g_used[FAKE_MAX_DEVICES];

static void read_config(void) {
  g_config.status = TB_OK;
  g_config.device_count = 1;
  g_config.capacity = FAKE_DEFAULT_MEMORY;
  const char *count = getenv("TORCH_BACKEND_FAKE_DEVICE_COUNT");
  if (count != NULL && *count != '\0') {
    uint64_t n = 0;
    if (tb_parse_size(count, &n) != 0 || n > FAKE_MAX_DEVICES || strpbrk(count, "KkMmGgTt")) {
      g_config.status = TB_ERROR_UNAVAILABLE;
      snprintf(g_config.message, sizeof g_config.message,
               "fake: TORCH_BACKEND_FAKE_DEVICE_COUNT='%s' is not an integer in [0, %d]", count,
               FAKE_MAX_DEVICES);
      return;
    }
    g_config.device_count = (int32_t)n;
  }
  const char *memory = getenv("TORCH_BACKEND_FAKE_MEMORY");
  if (memory != NULL && *memory != '\0') {
    uint64_t bytes = 0;
    if (tb_parse_size(memory, &bytes) != 0 || bytes == 0) {
      g_config.status = TB_ERROR_UNAVAILABLE;
      snprintf(g_config.message, sizeof g_config.message,
               "fake: TORCH_BACKEND_FAKE_MEMORY='%s' is not a positive size such as 4096, 512M "
               "or 16G",
               memory);
      return;
    }
    g_config.capacity = bytes;
  }
}

static tb_status config_status(void) {
  pthread_once(&g_config_once, read_config);
  if (g_config.status != TB_OK) return tb_fake_set_error(g_config.status, "%s", g_config.message);
  return TB_OK;
}

static tb_status check_device(int32_t device, const char *call) {
  tb_status status = config_status();
  if (status != TB_OK) return status;
  if (device < 0 || device >= g_config.device_count) {
    return tb_fake_set_error(TB_ERROR_INVALID_DEVICE,
                             "fake: %s: device index %d is out of range (device count %d)", call,
                             (int)device, (int)g_config.device_count);
  }
  return TB_OK;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------------------------------- */
/* Identity and devices                                                                     */

TB_WEAK const char *tbv_device_type(void) { return "fake"; }
TB_WEAK const char *tbv_vendor_name(void) { return "torch_backend fake vendor"; }
TB_WEAK const char *tbv_vendor_version(void) { return TORCH_BACKEND_VERSION; }

TB_WEAK tb_status tbv_device_count(tb_context ctx, int32_t *count) {
  (void)ctx;
  if (count == NULL) return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: count is NULL");
  tb_status status = config_status();
  if (status != TB_OK) return status;
  *count = g_config.device_count;
  return TB_OK;
}

TB_WEAK tb_status tbv_device_get_properties(tb_context ctx, int32_t device,
                                            tb_device_properties *properties) {
  (void)ctx;
  tb_status status = check_device(device, "get_properties");
  if (status != TB_OK) return status;
  if (properties == NULL || properties->struct_size < sizeof(size_t)) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT,
                             "fake: get_properties: properties is NULL or its struct_size is 0");
  }
  /* Write only what lies inside both the caller's struct and ours. */
  tb_device_properties mine;
  memset(&mine, 0, sizeof mine);
  snprintf(mine.name, sizeof mine.name, "Fake Device %d", (int)device);
  mine.total_memory = g_config.capacity;
  mine.compute_units = 1;
  mine.dtypes = ((uint64_t)1 << TB_DTYPE_COUNT) - 1; /* every element type: memory is bytes */
  size_t size = properties->struct_size < sizeof mine ? properties->struct_size : sizeof mine;
  memcpy((char *)properties + sizeof(size_t), (const char *)&mine + sizeof(size_t),
         size - sizeof(size_t));
  return TB_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Device faults: work runs when it is enqueued, so a fault is set by the call that enqueues   */
/* the failing work (inject_fault) and reported by every later call of the contract.          */

static pthread_mutex_t g_fault_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_faulted[FAKE_MAX_DEVICES];
static char g_fault_message[FAKE_MAX_DEVICES][512];

static tb_status check_fault(int32_t device, const char *call) {
  if (!atomic_load(&g_faulted[device])) return TB_OK;
  pthread_mutex_lock(&g_fault_mutex);
  tb_status status = tb_fake_set_error(TB_ERROR_DEVICE_FAULT, "fake: %s: device %d is faulted: %s",
                                       call, (int)device, g_fault_message[device]);
  pthread_mutex_unlock(&g_fault_mutex);
  return status;
}

static void fault_device(int32_t device, const char *message) {
  pthread_mutex_lock(&g_fault_mutex);
  if (!atomic_load(&g_faulted[device])) {
    snprintf(g_fault_message[device], sizeof g_fault_message[device], "%s", message);
    atomic_store(&g_faulted[device], 1);
  }
  pthread_mutex_unlock(&g_fault_mutex);
}

TB_WEAK tb_status tbv_device_synchronize(tb_context ctx, int32_t device) {
  (void)ctx;
  /* Streams run synchronously: when a call has returned, its work is done. */
  tb_status status = check_device(device, "device synchronize");
  return status != TB_OK ? status : check_fault(device, "device synchronize");
}

TB_WEAK tb_status tbv_device_reset(tb_context ctx, int32_t device) {
  (void)ctx;
  tb_status status = check_device(device, "device reset");
  if (status != TB_OK) return status;
  pthread_mutex_lock(&g_fault_mutex);
  atomic_store(&g_faulted[device], 0);
  g_fault_message[device][0] = '\0';
  pthread_mutex_unlock(&g_fault_mutex);
  return TB_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Memory                                                                                   */

/* Every device allocation is preceded by one of these (64 bytes, so the user pointer keeps
 * TB_MEMORY_ALIGNMENT). */
typedef struct fake_block {
  uint64_t magic;
  uint64_t size;
  int32_t device;
  char padding[TB_MEMORY_ALIGNMENT - 2 * sizeof(uint64_t) - sizeof(int32_t)];
} fake_block;
_Static_assert(sizeof(fake_block) == TB_MEMORY_ALIGNMENT, "header keeps alignment");

static size_t round_up(size_t size) {
  return (size + TB_MEMORY_ALIGNMENT - 1) & ~(size_t)(TB_MEMORY_ALIGNMENT - 1);
}

TB_WEAK tb_status tbv_memory_device_malloc(tb_context ctx, int32_t device, size_t size,
                                           void **ptr) {
  (void)ctx;
  tb_status status = check_device(device, "device_malloc");
  if (status != TB_OK) return status;
  if (ptr == NULL) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: device_malloc: ptr is NULL");
  }
  if (size == 0) {
    *ptr = NULL;
    return TB_OK;
  }
  uint64_t capacity = g_config.capacity;
  if (size > capacity || size > SIZE_MAX - 2 * TB_MEMORY_ALIGNMENT) {
    return tb_fake_set_error(TB_ERROR_OUT_OF_MEMORY,
                             "fake: device_malloc: %zu bytes requested on device %d, which has "
                             "%llu bytes in total",
                             size, (int)device, (unsigned long long)capacity);
  }
  size_t rounded = round_up(size);
  uint64_t used = atomic_fetch_add(&g_used[device], rounded) + rounded;
  if (used > capacity) {
    atomic_fetch_sub(&g_used[device], rounded);
    return tb_fake_set_error(TB_ERROR_OUT_OF_MEMORY,
                             "fake: device_malloc: %zu bytes requested on device %d with %llu of "
                             "%llu bytes in use",
                             size, (int)device, (unsigned long long)(used - rounded),
                             (unsigned long long)capacity);
  }
  fake_block *block = aligned_alloc(TB_MEMORY_ALIGNMENT, sizeof(fake_block) + rounded);
  if (block == NULL) {
    atomic_fetch_sub(&g_used[device], rounded);
    return tb_fake_set_error(TB_ERROR_OUT_OF_MEMORY,
                             "fake: device_malloc: host allocation of %zu bytes failed for device "
                             "%d",
                             size, (int)device);
  }
  block->magic = FAKE_BLOCK_MAGIC;
  block->size = rounded;
  block->device = device;
  *ptr = block + 1;
  return TB_OK;
}

TB_WEAK tb_status tbv_memory_device_free(tb_context ctx, int32_t device, void *ptr) {
  (void)ctx;
  tb_status status = check_device(device, "device_free");
  if (status != TB_OK || ptr == NULL) return status;
  fake_block *block = (fake_block *)ptr - 1;
  if (((uintptr_t)ptr % TB_MEMORY_ALIGNMENT) != 0 || block->magic != FAKE_BLOCK_MAGIC) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT,
                             "fake: device_free: %p was not returned by device_malloc (or was "
                             "already freed)",
                             ptr);
  }
  if (block->device != device) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT,
                             "fake: device_free: %p belongs to device %d, not device %d", ptr,
                             (int)block->device, (int)device);
  }
  block->magic = 0;
  atomic_fetch_sub(&g_used[device], block->size);
  free(block);
  return TB_OK;
}

TB_WEAK tb_status tbv_memory_host_malloc(tb_context ctx, size_t size, void **ptr) {
  (void)ctx;
  if (ptr == NULL) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: host_malloc: ptr is NULL");
  }
  if (size == 0) {
    *ptr = NULL;
    return TB_OK;
  }
  void *memory = size > SIZE_MAX - TB_MEMORY_ALIGNMENT
                     ? NULL
                     : aligned_alloc(TB_MEMORY_ALIGNMENT, round_up(size));
  if (memory == NULL) {
    return tb_fake_set_error(TB_ERROR_OUT_OF_MEMORY,
                             "fake: host_malloc: %zu bytes of host memory are not available", size);
  }
  *ptr = memory;
  return TB_OK;
}

TB_WEAK tb_status tbv_memory_host_free(tb_context ctx, void *ptr) {
  (void)ctx;
  free(ptr);
  return TB_OK;
}

static tb_status check_copy(const char *call, const void *dst, const void *src, size_t size) {
  if (size != 0 && (dst == NULL || src == NULL)) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: %s: %s is NULL for %zu bytes", call,
                             dst == NULL ? "dst" : "src", size);
  }
  return TB_OK;
}

TB_WEAK tb_status tbv_memory_copy_h2d(tb_context ctx, int32_t device, void *dst, const void *src,
                                      size_t size) {
  (void)ctx;
  tb_status status = check_device(device, "copy_h2d");
  if (status == TB_OK && size != 0) status = check_fault(device, "copy_h2d");
  if (status == TB_OK) status = check_copy("copy_h2d", dst, src, size);
  if (status == TB_OK && size != 0) memcpy(dst, src, size);
  return status;
}

TB_WEAK tb_status tbv_memory_copy_d2h(tb_context ctx, int32_t device, void *dst, const void *src,
                                      size_t size) {
  (void)ctx;
  tb_status status = check_device(device, "copy_d2h");
  if (status == TB_OK && size != 0) status = check_fault(device, "copy_d2h");
  if (status == TB_OK) status = check_copy("copy_d2h", dst, src, size);
  if (status == TB_OK && size != 0) memcpy(dst, src, size);
  return status;
}

TB_WEAK tb_status tbv_memory_copy_d2d(tb_context ctx, int32_t dst_device, void *dst,
                                      int32_t src_device, const void *src, size_t size) {
  (void)ctx;
  tb_status status = check_device(dst_device, "copy_d2d (destination)");
  if (status == TB_OK) status = check_device(src_device, "copy_d2d (source)");
  if (status == TB_OK && size != 0) status = check_fault(dst_device, "copy_d2d");
  if (status == TB_OK && size != 0) status = check_fault(src_device, "copy_d2d");
  if (status == TB_OK) status = check_copy("copy_d2d", dst, src, size);
  if (status == TB_OK && size != 0) memcpy(dst, src, size);
  return status;
}

/* ---------------------------------------------------------------------------------------- */
/* Streams: work runs on the calling thread, so an enqueued call is complete on return.     */

struct tb_stream_impl {
  uint32_t magic;
  int32_t device;
  int32_t priority;
};

static tb_status check_stream(tb_stream stream, const char *call) {
  if (stream == NULL || stream->magic != FAKE_STREAM_MAGIC) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: %s: %p is not a live stream", call,
                             (void *)stream);
  }
  return TB_OK;
}

TB_WEAK tb_status tbv_memory_copy_h2d_async(tb_context ctx, tb_stream stream, void *dst,
                                            const void *src, size_t size) {
  (void)ctx;
  tb_status status = check_stream(stream, "copy_h2d_async");
  return status != TB_OK ? status : tbv_memory_copy_h2d(ctx, stream->device, dst, src, size);
}

TB_WEAK tb_status tbv_memory_copy_d2h_async(tb_context ctx, tb_stream stream, void *dst,
                                            const void *src, size_t size) {
  (void)ctx;
  tb_status status = check_stream(stream, "copy_d2h_async");
  return status != TB_OK ? status : tbv_memory_copy_d2h(ctx, stream->device, dst, src, size);
}

TB_WEAK tb_status tbv_memory_copy_d2d_async(tb_context ctx, tb_stream stream, int32_t dst_device,
                                            void *dst, int32_t src_device, const void *src,
                                            size_t size) {
  (void)ctx;
  tb_status status = check_stream(stream, "copy_d2d_async");
  if (status != TB_OK) return status;
  if (stream->device != dst_device && stream->device != src_device) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT,
                             "fake: copy_d2d_async: the stream belongs to device %d, neither "
                             "the source (%d) nor the destination (%d)",
                             (int)stream->device, (int)src_device, (int)dst_device);
  }
  return tbv_memory_copy_d2d(ctx, dst_device, dst, src_device, src, size);
}

TB_WEAK tb_status tbv_memory_memset_async(tb_context ctx, tb_stream stream, void *ptr, int value,
                                          size_t size) {
  (void)ctx;
  tb_status status = check_stream(stream, "memset_async");
  if (status == TB_OK && size != 0) status = check_fault(stream->device, "memset_async");
  if (status != TB_OK) return status;
  if (size != 0 && ptr == NULL) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: memset_async: ptr is NULL");
  }
  if (size != 0) memset(ptr, value, size);
  return TB_OK;
}

TB_WEAK tb_status tbv_memory_get_info(tb_context ctx, int32_t device, size_t *free_bytes,
                                      size_t *total_bytes) {
  (void)ctx;
  tb_status status = check_device(device, "get_info");
  if (status != TB_OK) return status;
  if (free_bytes == NULL || total_bytes == NULL) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: get_info: NULL output pointer");
  }
  uint64_t used = atomic_load(&g_used[device]);
  *total_bytes = (size_t)g_config.capacity;
  *free_bytes = (size_t)(g_config.capacity - (used < g_config.capacity ? used : g_config.capacity));
  return TB_OK;
}

TB_WEAK tb_status tbv_stream_priority_range(tb_context ctx, int32_t device, int32_t *least,
                                            int32_t *greatest) {
  (void)ctx;
  tb_status status = check_device(device, "priority_range");
  if (status != TB_OK) return status;
  if (least == NULL || greatest == NULL) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT,
                             "fake: priority_range: NULL output pointer");
  }
  *least = 0;
  *greatest = -1;
  return TB_OK;
}

TB_WEAK tb_status tbv_stream_create(tb_context ctx, int32_t device, int32_t priority,
                                    tb_stream *stream) {
  (void)ctx;
  tb_status status = check_device(device, "stream create");
  if (status != TB_OK) return status;
  if (stream == NULL) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: stream create: stream is NULL");
  }
  struct tb_stream_impl *impl = malloc(sizeof *impl);
  if (impl == NULL) {
    return tb_fake_set_error(TB_ERROR_OUT_OF_MEMORY, "fake: stream create: out of host memory");
  }
  impl->magic = FAKE_STREAM_MAGIC;
  impl->device = device;
  impl->priority = priority < -1 ? -1 : (priority > 0 ? 0 : priority);
  *stream = impl;
  return TB_OK;
}

TB_WEAK tb_status tbv_stream_destroy(tb_context ctx, tb_stream stream) {
  (void)ctx;
  tb_status status = check_stream(stream, "stream destroy");
  if (status != TB_OK) return status;
  stream->magic = 0;
  free(stream);
  return TB_OK;
}

TB_WEAK tb_status tbv_stream_query(tb_context ctx, tb_stream stream) {
  (void)ctx;
  tb_status status = check_stream(stream, "stream query");
  return status != TB_OK ? status : check_fault(stream->device, "stream query");
}

TB_WEAK tb_status tbv_stream_synchronize(tb_context ctx, tb_stream stream) {
  (void)ctx;
  tb_status status = check_stream(stream, "stream synchronize");
  return status != TB_OK ? status : check_fault(stream->device, "stream synchronize");
}

TB_WEAK tb_status tbv_stream_inject_fault(tb_context ctx, tb_stream stream, const char *message) {
  (void)ctx;
  tb_status status = check_stream(stream, "stream inject_fault");
  if (status != TB_OK) return status;
  if (message == NULL) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: inject_fault: message is NULL");
  }
  char full[512];
  snprintf(full, sizeof full, "%s (in inject_fault)", message);
  fault_device(stream->device, full); /* the work "runs" now: streams are synchronous */
  return TB_OK;
}

TB_WEAK tb_status tbv_stream_launch_host_func(tb_context ctx, tb_stream stream, tb_host_func fn,
                                              void *user_data) {
  (void)ctx;
  tb_status status = check_stream(stream, "stream launch_host_func");
  if (status != TB_OK) return status;
  if (fn == NULL) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: launch_host_func: fn is NULL");
  }
  status = check_fault(stream->device, "stream launch_host_func");
  if (status != TB_OK) return status;
  /* Streams are synchronous: everything enqueued before has run, so the function runs now. */
  char message[400] = "";
  status = fn(user_data, message, sizeof message);
  if (status != TB_OK) {
    char full[512];
    message[sizeof message - 1] = '\0';
    snprintf(full, sizeof full, "host function failed with %s: %s", tb_status_name(status),
             message[0] != '\0' ? message : "(no message)");
    fault_device(stream->device, full);
  }
  return TB_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Events: recording happens after all earlier work has run, so it completes at once.       */

struct tb_event_impl {
  uint32_t magic;
  int32_t device;
  uint32_t flags;
  _Atomic uint64_t recorded_ns; /* 0 until first recorded */
};

static tb_status check_event(tb_event event, const char *call) {
  if (event == NULL || event->magic != FAKE_EVENT_MAGIC) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: %s: %p is not a live event", call,
                             (void *)event);
  }
  return TB_OK;
}

TB_WEAK tb_status tbv_stream_wait_event(tb_context ctx, tb_stream stream, tb_event event) {
  (void)ctx;
  tb_status status = check_stream(stream, "stream wait_event");
  if (status == TB_OK) status = check_event(event, "stream wait_event");
  return status != TB_OK ? status : check_fault(stream->device, "stream wait_event");
}

TB_WEAK tb_status tbv_event_create(tb_context ctx, int32_t device, uint32_t flags,
                                   tb_event *event) {
  (void)ctx;
  tb_status status = check_device(device, "event create");
  if (status != TB_OK) return status;
  if (event == NULL) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: event create: event is NULL");
  }
  if ((flags & ~TB_EVENT_FLAG_TIMING) != 0) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: event create: unknown flags 0x%x",
                             (unsigned)flags);
  }
  struct tb_event_impl *impl = malloc(sizeof *impl);
  if (impl == NULL) {
    return tb_fake_set_error(TB_ERROR_OUT_OF_MEMORY, "fake: event create: out of host memory");
  }
  impl->magic = FAKE_EVENT_MAGIC;
  impl->device = device;
  impl->flags = flags;
  atomic_init(&impl->recorded_ns, 0);
  *event = impl;
  return TB_OK;
}

TB_WEAK tb_status tbv_event_destroy(tb_context ctx, tb_event event) {
  (void)ctx;
  tb_status status = check_event(event, "event destroy");
  if (status != TB_OK) return status;
  event->magic = 0;
  free(event);
  return TB_OK;
}

TB_WEAK tb_status tbv_event_record(tb_context ctx, tb_event event, tb_stream stream) {
  (void)ctx;
  tb_status status = check_event(event, "event record");
  if (status == TB_OK) status = check_stream(stream, "event record");
  if (status != TB_OK) return status;
  if (stream->device != event->device) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT,
                             "fake: event record: the event belongs to device %d, the stream to "
                             "device %d",
                             (int)event->device, (int)stream->device);
  }
  atomic_store(&event->recorded_ns, now_ns());
  return TB_OK;
}

TB_WEAK tb_status tbv_event_query(tb_context ctx, tb_event event) {
  (void)ctx;
  tb_status status = check_event(event, "event query");
  return status != TB_OK ? status : check_fault(event->device, "event query");
}

TB_WEAK tb_status tbv_event_synchronize(tb_context ctx, tb_event event) {
  (void)ctx;
  tb_status status = check_event(event, "event synchronize");
  return status != TB_OK ? status : check_fault(event->device, "event synchronize");
}

TB_WEAK tb_status tbv_event_elapsed_time(tb_context ctx, tb_event start, tb_event end, float *ms) {
  (void)ctx;
  tb_status status = check_event(start, "elapsed_time (start)");
  if (status == TB_OK) status = check_event(end, "elapsed_time (end)");
  if (status != TB_OK) return status;
  if (ms == NULL) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: elapsed_time: ms is NULL");
  }
  if (!(start->flags & TB_EVENT_FLAG_TIMING) || !(end->flags & TB_EVENT_FLAG_TIMING)) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED,
                             "fake: elapsed_time: the %s event was created without "
                             "TB_EVENT_FLAG_TIMING",
                             (start->flags & TB_EVENT_FLAG_TIMING) ? "end" : "start");
  }
  if (start->device != end->device) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT,
                             "fake: elapsed_time: events belong to devices %d and %d",
                             (int)start->device, (int)end->device);
  }
  uint64_t t0 = atomic_load(&start->recorded_ns), t1 = atomic_load(&end->recorded_ns);
  if (t0 == 0 || t1 == 0) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT,
                             "fake: elapsed_time: the %s event was never recorded",
                             t0 == 0 ? "start" : "end");
  }
  *ms = (float)((double)((int64_t)(t1 - t0)) / 1e6);
  return TB_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* The context: fake's state is global (above), so its context is NULL.                      */

TB_WEAK tb_status tbv_init(const tb_host_api *host, tb_context *ctx) {
  if (host == NULL || ctx == NULL) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "fake: init: host or ctx is NULL");
  }
  if (host->abi_major != TB_ABI_VERSION_MAJOR) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED,
                             "fake: init: torch_backend speaks ABI %u.%u, fake implements %d.%d",
                             (unsigned)host->abi_major, (unsigned)host->abi_minor,
                             TB_ABI_VERSION_MAJOR, TB_ABI_VERSION_MINOR);
  }
  tb_status status = config_status(); /* a malformed environment fails here, at init */
  if (status != TB_OK) return status;
  *ctx = NULL;
  return TB_OK;
}

TB_WEAK void tbv_finalize(tb_context ctx) { (void)ctx; }

/* ---------------------------------------------------------------------------------------- */
/* The table, built from the tbv_ names (generated from vendor_slots.h's lists) so that      */
/* strong replacements take their slots.                                                     */

#define FAKE_SLOT(gt, gf, slot, required, since, ret, params, names) .slot = tbv_##gf##_##slot,

static const tb_device_api g_device_api = {.struct_size = sizeof(tb_device_api),
                                           TB_DEVICE_SLOTS(FAKE_SLOT)};
static const tb_memory_api g_memory_api = {.struct_size = sizeof(tb_memory_api),
                                           TB_MEMORY_SLOTS(FAKE_SLOT)};
static const tb_stream_api g_stream_api = {.struct_size = sizeof(tb_stream_api),
                                           TB_STREAM_SLOTS(FAKE_SLOT)};
static const tb_event_api g_event_api = {.struct_size = sizeof(tb_event_api),
                                         TB_EVENT_SLOTS(FAKE_SLOT)};

/* No kernels: every operator beyond the minimal set runs on the CPU fallback. */
TB_WEAK const tb_kernel_api *tbv_kernels(void) { return NULL; }

/* No extensions (ABI 2.0): no custom operators. */
TB_WEAK const tb_extension_base *tbv_extensions(void) { return NULL; }

static tb_vendor g_vendor;
static pthread_once_t g_vendor_once = PTHREAD_ONCE_INIT;

static void build_vendor(void) {
  g_vendor = (tb_vendor){
      .struct_size = sizeof(tb_vendor),
      .abi_major = TB_ABI_VERSION_MAJOR,
      .abi_minor = TB_ABI_VERSION_MINOR,
      .device_type = tbv_device_type(),
      .vendor_name = tbv_vendor_name(),
      .vendor_version = tbv_vendor_version(),
      .init = tbv_init,
      .finalize = tbv_finalize,
      .last_error = tbv_last_error,
      .device = &g_device_api,
      .memory = &g_memory_api,
      .stream = &g_stream_api,
      .event = &g_event_api,
      .kernels = tbv_kernels(),
      .extensions = tbv_extensions(),
  };
}

/* Weak as well, so a vendor that serves several ABI majors can bring its own entry point. */
TB_WEAK TB_EXPORT const tb_vendor *tb_vendor_get(uint32_t abi_major, const char **error) {
  if (abi_major != TB_ABI_VERSION_MAJOR) {
    if (error != NULL) *error = "the fake vendor implements ABI major 2 only";
    return NULL;
  }
  pthread_once(&g_vendor_once, build_vendor);
  return &g_vendor;
}
