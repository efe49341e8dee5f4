/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * ABI 1.x as the loader needs it to wrap a 1.x vendor in a 2.0 table (private to the loader).
 *
 * ABI 1.x is frozen: its group structs are the 2.0 groups' slots without the leading context
 * parameter, in the same order, so they are generated from vendor_slots.h's lists; the static
 * assertions below pin their sizes to those of ABI 1.2, so that a slot appended to a 2.x group
 * cannot silently change what the loader reads from a 1.x vendor.  The rest (tb_vendor, the
 * kernel types) is spelled out as test/abi/v1_1 and v1_2's verbatim headers define it; tb_value,
 * tb_tensor and the other kernel argument types are unchanged in 2.0 except the meaning of
 * tb_tensor_list::items (an array of structs in 1.x).
 */
#ifndef TORCH_BACKEND_LOADER_ABI1_H_
#define TORCH_BACKEND_LOADER_ABI1_H_

#include <torch_backend/loader.h>
#include <torch_backend/vendor_slots.h>

/* Expands to its argument for the slots ABI 1.x had (those 2.0 brought along: since_minor 0),
 * to nothing for the slots added in 2.1 and later. */
#define TB1_IF_V1(since, ...) TB1_IF_V1_##since(__VA_ARGS__)
#define TB1_IF_V1_0(...) __VA_ARGS__
#define TB1_IF_V1_1(...)

#define TB1_MEMBER(gt, gf, slot, req, since, ret, params, names) \
  TB1_IF_V1(since, ret (*slot)(TB_SLOT_AFTER_CTX params);)

typedef struct tb1_device_api {
  size_t struct_size;
  TB_DEVICE_SLOTS(TB1_MEMBER)
} tb1_device_api;

typedef struct tb1_memory_api {
  size_t struct_size;
  TB_MEMORY_SLOTS(TB1_MEMBER)
} tb1_memory_api;

typedef struct tb1_stream_api {
  size_t struct_size;
  TB_STREAM_SLOTS(TB1_MEMBER)
} tb1_stream_api;

typedef struct tb1_event_api {
  size_t struct_size;
  TB_EVENT_SLOTS(TB1_MEMBER)
} tb1_event_api;

#undef TB1_MEMBER

typedef void (*tb1_any_fn)(void);
_Static_assert(sizeof(tb1_device_api) == sizeof(size_t) + 4 * sizeof(tb1_any_fn),
               "ABI 1.x is frozen: tb_device_api had 4 slots in 1.2");
_Static_assert(sizeof(tb1_memory_api) == sizeof(size_t) + 12 * sizeof(tb1_any_fn),
               "ABI 1.x is frozen: tb_memory_api had 12 slots in 1.2");
_Static_assert(sizeof(tb1_stream_api) == sizeof(size_t) + 7 * sizeof(tb1_any_fn),
               "ABI 1.x is frozen: tb_stream_api had 7 slots in 1.2");
_Static_assert(sizeof(tb1_event_api) == sizeof(size_t) + 6 * sizeof(tb1_any_fn),
               "ABI 1.x is frozen: tb_event_api had 6 slots in 1.2");

typedef tb_status (*tb1_kernel_fn)(tb_stream stream, const tb_value *args, int32_t num_args);

typedef struct tb1_kernel {
  size_t struct_size;
  const char *name;
  tb1_kernel_fn fn;
  uint64_t dtypes;
  uint32_t flags;
} tb1_kernel;

typedef struct tb1_kernel_api {
  size_t struct_size;
  int64_t count;
  const tb1_kernel *const *kernels;
} tb1_kernel_api;

typedef struct tb1_vendor {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char *device_type;
  const char *vendor_name;
  const char *vendor_version;
  const char *(*last_error)(void);
  const tb1_device_api *device;
  const tb1_memory_api *memory;
  const tb1_stream_api *stream;
  const tb1_event_api *event;
  const tb1_kernel_api *kernels; /* ABI 1.1 */
} tb1_vendor;

/* The minimum sizes of ABI 1.x (1.0's structs; 1.1's for the kernel types). */
#define TB1_VENDOR_MIN_SIZE TB_STRUCT_SIZE(tb1_vendor, event)
#define TB1_DEVICE_API_MIN_SIZE TB_STRUCT_SIZE(tb1_device_api, synchronize)
#define TB1_MEMORY_API_MIN_SIZE TB_STRUCT_SIZE(tb1_memory_api, get_info)
#define TB1_STREAM_API_MIN_SIZE TB_STRUCT_SIZE(tb1_stream_api, priority_range)
#define TB1_EVENT_API_MIN_SIZE TB_STRUCT_SIZE(tb1_event_api, elapsed_time)
#define TB1_KERNEL_API_MIN_SIZE TB_STRUCT_SIZE(tb1_kernel_api, kernels)
#define TB1_KERNEL_MIN_SIZE TB_STRUCT_SIZE(tb1_kernel, flags)

typedef struct tb1_adapter tb1_adapter;

/*
 * Validates the 1.x table `v1` (from library `path`) and builds the 2.0 table that adapts it:
 * `*table` receives it, `*context` the context every call through it must be given.  On failure
 * writes the message and returns the status (TB_ERROR_NOT_SUPPORTED for a malformed table,
 * TB_ERROR_OUT_OF_MEMORY).
 */
tb_status tb1_adapter_create(const tb1_vendor *v1, const char *path, tb1_adapter **adapter,
                             const tb_vendor **table, tb_context *context, char *error,
                             size_t error_size);
void tb1_adapter_destroy(tb1_adapter *adapter);

#endif /* TORCH_BACKEND_LOADER_ABI1_H_ */
