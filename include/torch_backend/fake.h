/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 */

/**
 * @file fake.h
 * @brief The fake vendor: a complete vendor whose every function is a replaceable weak symbol.
 *
 * `fake` is the start of a port.  It implements the whole of vendor.h on host memory:
 * devices are numbered slices of host RAM (count from `TORCH_BACKEND_FAKE_DEVICE_COUNT`,
 * default 1; capacity per device from `TORCH_BACKEND_FAKE_MEMORY`, default 16 GiB, suffixes
 * K, M, G accepted), streams run their work synchronously on the calling thread, and events
 * carry monotonic-clock timestamps.  It passes the conformance suite.
 *
 * Every slot of the table is a function named `tbv_<group>_<slot>` declared below, and fake
 * defines each one as a weak symbol.  fake's own ::tb_vendor_get builds the table from these
 * names.  A vendor starts by linking fake (CMake: `TorchBackend::fake_defaults`) into its
 * shared library; from then on, defining a function of the same name and signature in the
 * vendor's own code replaces fake's version at link time, one slot at a time:
 *
 * @code
 * #include <torch_backend/fake.h>
 *
 * // Step 1 of a port: our own device allocator; everything else is still fake's.
 * tb_status tbv_memory_device_malloc(int32_t device, size_t size, void **ptr) { ... }
 * tb_status tbv_memory_device_free(int32_t device, void *ptr) { ... }
 * @endcode
 *
 * Replace functions in the pairs that share state: device_malloc with device_free and the
 * copies (fake's device pointers are plain host pointers with a header in front), host_malloc
 * with host_free, stream create/destroy with every function taking a stream, event
 * create/destroy with every function taking an event.  Run `tb-conformance` after each step.
 *
 * A replacement reports failure by returning a status and setting the message that fake's
 * tbv_last_error returns, with tb_fake_set_error().
 */
#ifndef TORCH_BACKEND_FAKE_H_
#define TORCH_BACKEND_FAKE_H_

#include <torch_backend/vendor.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup tb_fake fake: the weak default of every slot
 *  Each function implements the tb_vendor member or group slot of the same name; see vendor.h
 *  for its contract.
 *  @{ */

/** Slot tb_vendor::device_type.  fake: "fake". */
const char *tbv_device_type(void);
/** Slot tb_vendor::vendor_name.  fake: "torch_backend fake vendor". */
const char *tbv_vendor_name(void);
/** Slot tb_vendor::vendor_version.  fake: the torch_backend version. */
const char *tbv_vendor_version(void);
/** Slot tb_vendor::last_error.  fake: the message set by tb_fake_set_error() on this thread. */
const char *tbv_last_error(void);

/** Slot tb_device_api::count. */
tb_status tbv_device_count(int32_t *count);
/** Slot tb_device_api::get_properties. */
tb_status tbv_device_get_properties(int32_t device, tb_device_properties *properties);
/** Slot tb_device_api::synchronize. */
tb_status tbv_device_synchronize(int32_t device);
/** Slot tb_device_api::reset (ABI 1.2).  fake: clears the device's fault. */
tb_status tbv_device_reset(int32_t device);

/** Slot tb_memory_api::device_malloc. */
tb_status tbv_memory_device_malloc(int32_t device, size_t size, void **ptr);
/** Slot tb_memory_api::device_free. */
tb_status tbv_memory_device_free(int32_t device, void *ptr);
/** Slot tb_memory_api::host_malloc. */
tb_status tbv_memory_host_malloc(size_t size, void **ptr);
/** Slot tb_memory_api::host_free. */
tb_status tbv_memory_host_free(void *ptr);
/** Slot tb_memory_api::copy_h2d. */
tb_status tbv_memory_copy_h2d(int32_t device, void *dst, const void *src, size_t size);
/** Slot tb_memory_api::copy_d2h. */
tb_status tbv_memory_copy_d2h(int32_t device, void *dst, const void *src, size_t size);
/** Slot tb_memory_api::copy_d2d. */
tb_status tbv_memory_copy_d2d(int32_t dst_device, void *dst, int32_t src_device, const void *src,
                              size_t size);
/** Slot tb_memory_api::copy_h2d_async. */
tb_status tbv_memory_copy_h2d_async(tb_stream stream, void *dst, const void *src, size_t size);
/** Slot tb_memory_api::copy_d2h_async. */
tb_status tbv_memory_copy_d2h_async(tb_stream stream, void *dst, const void *src, size_t size);
/** Slot tb_memory_api::copy_d2d_async. */
tb_status tbv_memory_copy_d2d_async(tb_stream stream, int32_t dst_device, void *dst,
                                    int32_t src_device, const void *src, size_t size);
/** Slot tb_memory_api::memset_async. */
tb_status tbv_memory_memset_async(tb_stream stream, void *ptr, int value, size_t size);
/** Slot tb_memory_api::get_info. */
tb_status tbv_memory_get_info(int32_t device, size_t *free_bytes, size_t *total_bytes);

/** Slot tb_stream_api::create. */
tb_status tbv_stream_create(int32_t device, int32_t priority, tb_stream *stream);
/** Slot tb_stream_api::destroy. */
tb_status tbv_stream_destroy(tb_stream stream);
/** Slot tb_stream_api::query. */
tb_status tbv_stream_query(tb_stream stream);
/** Slot tb_stream_api::synchronize. */
tb_status tbv_stream_synchronize(tb_stream stream);
/** Slot tb_stream_api::wait_event. */
tb_status tbv_stream_wait_event(tb_stream stream, tb_event event);
/** Slot tb_stream_api::priority_range.  fake: least 0, greatest -1. */
tb_status tbv_stream_priority_range(int32_t device, int32_t *least, int32_t *greatest);
/** Slot tb_stream_api::inject_fault (ABI 1.2).  fake: faults the stream's device at once (work runs
 *  when it is enqueued). */
tb_status tbv_stream_inject_fault(tb_stream stream, const char *message);

/** Slot tb_event_api::create. */
tb_status tbv_event_create(int32_t device, uint32_t flags, tb_event *event);
/** Slot tb_event_api::destroy. */
tb_status tbv_event_destroy(tb_event event);
/** Slot tb_event_api::record. */
tb_status tbv_event_record(tb_event event, tb_stream stream);
/** Slot tb_event_api::query. */
tb_status tbv_event_query(tb_event event);
/** Slot tb_event_api::synchronize. */
tb_status tbv_event_synchronize(tb_event event);
/** Slot tb_event_api::elapsed_time. */
tb_status tbv_event_elapsed_time(tb_event start, tb_event end, float *ms);

/** Slot tb_vendor::kernels (ABI 1.1): the vendor's kernel table, read once when the table is
 *  built.  fake: NULL, no kernels.  A vendor that brings kernels returns a static table. */
const tb_kernel_api *tbv_kernels(void);

/** Slot tb_vendor::extensions (ABI 2.0): the first extension of the vendor's chain (custom
 *  operators, see @ref tb_extension_group), read once when the table is built.  fake: NULL,
 *  no extensions. */
const tb_extension_base *tbv_extensions(void);

/** @} */

/**
 * Sets the message fake's tbv_last_error() returns on the calling thread and returns
 * @p status, so a replacement slot can write `return tb_fake_set_error(TB_ERROR_..., "...")`.
 * printf-style; the message is truncated to 1023 bytes.  Not a slot: never replace it.
 */
tb_status tb_fake_set_error(tb_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORCH_BACKEND_FAKE_H_ */
