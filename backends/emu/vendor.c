/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's vendor table and entry point.
 */
#include "emu.h"

#ifndef TORCH_BACKEND_VERSION
#define TORCH_BACKEND_VERSION "0.0.0"
#endif

/* Defined in memory.c and stream.c. */
tb_status emu_device_count(int32_t *count);
tb_status emu_device_get_properties(int32_t device, tb_device_properties *properties);
tb_status emu_device_synchronize(int32_t device);
tb_status emu_device_reset(int32_t device);
tb_status emu_device_malloc(int32_t device, size_t size, void **ptr);
tb_status emu_device_free(int32_t device, void *ptr);
tb_status emu_host_malloc(size_t size, void **ptr);
tb_status emu_host_free(void *ptr);
tb_status emu_copy_h2d(int32_t device, void *dst, const void *src, size_t size);
tb_status emu_copy_d2h(int32_t device, void *dst, const void *src, size_t size);
tb_status emu_copy_d2d(int32_t dst_device, void *dst, int32_t src_device, const void *src,
                       size_t size);
tb_status emu_copy_h2d_async(tb_stream stream, void *dst, const void *src, size_t size);
tb_status emu_copy_d2h_async(tb_stream stream, void *dst, const void *src, size_t size);
tb_status emu_copy_d2d_async(tb_stream stream, int32_t dst_device, void *dst, int32_t src_device,
                             const void *src, size_t size);
tb_status emu_memset_async(tb_stream stream, void *ptr, int value, size_t size);
tb_status emu_memory_get_info(int32_t device, size_t *free_bytes, size_t *total_bytes);
tb_status emu_stream_create(int32_t device, int32_t priority, tb_stream *stream);
tb_status emu_stream_destroy(tb_stream stream);
tb_status emu_stream_query(tb_stream stream);
tb_status emu_stream_synchronize(tb_stream stream);
tb_status emu_stream_wait_event(tb_stream stream, tb_event event);
tb_status emu_stream_priority_range(int32_t device, int32_t *least, int32_t *greatest);
tb_status emu_stream_inject_fault(tb_stream stream, const char *message);
tb_status emu_event_create(int32_t device, uint32_t flags, tb_event *event);
tb_status emu_event_destroy(tb_event event);
tb_status emu_event_record(tb_event event, tb_stream stream);
tb_status emu_event_query(tb_event event);
tb_status emu_event_synchronize(tb_event event);
tb_status emu_event_elapsed_time(tb_event start, tb_event end, float *ms);

static const tb_device_api k_device = {
    .struct_size = sizeof(tb_device_api),
    .count = emu_device_count,
    .get_properties = emu_device_get_properties,
    .synchronize = emu_device_synchronize,
    .reset = emu_device_reset,
};

static const tb_memory_api k_memory = {
    .struct_size = sizeof(tb_memory_api),
    .device_malloc = emu_device_malloc,
    .device_free = emu_device_free,
    .host_malloc = emu_host_malloc,
    .host_free = emu_host_free,
    .copy_h2d = emu_copy_h2d,
    .copy_d2h = emu_copy_d2h,
    .copy_d2d = emu_copy_d2d,
    .copy_h2d_async = emu_copy_h2d_async,
    .copy_d2h_async = emu_copy_d2h_async,
    .copy_d2d_async = emu_copy_d2d_async,
    .memset_async = emu_memset_async,
    .get_info = emu_memory_get_info,
};

static const tb_stream_api k_stream = {
    .struct_size = sizeof(tb_stream_api),
    .create = emu_stream_create,
    .destroy = emu_stream_destroy,
    .query = emu_stream_query,
    .synchronize = emu_stream_synchronize,
    .wait_event = emu_stream_wait_event,
    .priority_range = emu_stream_priority_range,
    .inject_fault = emu_stream_inject_fault,
};

static const tb_event_api k_event = {
    .struct_size = sizeof(tb_event_api),
    .create = emu_event_create,
    .destroy = emu_event_destroy,
    .record = emu_event_record,
    .query = emu_event_query,
    .synchronize = emu_event_synchronize,
    .elapsed_time = emu_event_elapsed_time,
};

static tb_vendor g_vendor;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build(void) {
  g_vendor = (tb_vendor){
      .struct_size = sizeof(tb_vendor),
      .abi_major = TB_ABI_VERSION_MAJOR,
      .abi_minor = TB_ABI_VERSION_MINOR,
      .device_type = "emu",
      .vendor_name = "torch_backend emulated accelerator",
      .vendor_version = TORCH_BACKEND_VERSION,
      .last_error = emu_last_error,
      .device = &k_device,
      .memory = &k_memory,
      .stream = &k_stream,
      .event = &k_event,
      .kernels = emu_kernel_api(),
      .extensions = emu_extensions(),
  };
}

TB_EXPORT const tb_vendor *tb_vendor_get(uint32_t abi_major, const char **error) {
  if (abi_major != TB_ABI_VERSION_MAJOR) {
    if (error != NULL) *error = "emu implements ABI major 1 only";
    return NULL;
  }
  pthread_once(&g_once, build);
  return &g_vendor;
}
