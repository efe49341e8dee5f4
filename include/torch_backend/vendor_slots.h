/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 */

/**
 * @file vendor_slots.h
 * @brief Every function slot of vendor.h, once, as X-macro lists.
 *
 * vendor.h's hand-written structs are the documentation of the ABI; this header is the same
 * table in a form code can iterate over.  Everything in torch_backend that handles "every slot"
 * derives from these lists instead of naming the slots again: the loader's validation and its
 * adapter for ABI 1.x vendors, the runtime's call functions (csrc), fake's weak defaults
 * (fake.h), faulty's forwarding shim, the conformance suite's per-slot coverage and the slot
 * table of the documentation (printed by `tb-conformance --slots`).
 *
 * Each line reads
 *
 * @code
 * X(group_type, group_field, slot, required, since_minor, return_type, (params), (names))
 * @endcode
 *
 * - `group_type`, `group_field`: the group struct (::tb_device_api) and the ::tb_vendor member
 *   that points to it (`device`);
 * - `slot`: the function pointer member;
 * - `required`: 1 when the loader refuses a table in which it is NULL, 0 for optional slots;
 * - `since_minor`: the minor of the current major that added it (0: there since 2.0);
 * - `return_type`, `(params)`: the member's type is `return_type (*)(params)`; the first
 *   parameter is always `tb_context ctx`;
 * - `(names)`: the parameter names, to forward a call.
 *
 * When C11 and GCC or Clang compile this header, it checks that the lists match vendor.h
 * exactly: every line's member exists with that type at that position, and every group struct
 * has no member the list lacks (::TB_SLOT_STATIC_CHECKS).  Adding a slot to vendor.h without
 * adding its line here therefore fails the build.
 */
#ifndef TORCH_BACKEND_VENDOR_SLOTS_H_
#define TORCH_BACKEND_VENDOR_SLOTS_H_

#include <stddef.h>
#include <torch_backend/vendor.h>

/* The lists are laid out by hand: clang-format would read the pointer parameters as
 * multiplications, and `tb-conformance --slots` prints them as written. */
/* clang-format off */
/** The slots of ::tb_device_api, in member order. */
#define TB_DEVICE_SLOTS(X)                                                                  \
  X(tb_device_api, device, count, 1, 0, tb_status, (tb_context ctx, int32_t *count),       \
    (ctx, count))                                                                           \
  X(tb_device_api, device, get_properties, 1, 0, tb_status,                                 \
    (tb_context ctx, int32_t device, tb_device_properties *properties),                    \
    (ctx, device, properties))                                                              \
  X(tb_device_api, device, synchronize, 1, 0, tb_status, (tb_context ctx, int32_t device), \
    (ctx, device))                                                                          \
  X(tb_device_api, device, reset, 0, 0, tb_status, (tb_context ctx, int32_t device), (ctx, device))

/** The slots of ::tb_memory_api, in member order. */
#define TB_MEMORY_SLOTS(X)                                                                      \
  X(tb_memory_api, memory, device_malloc, 1, 0, tb_status,                                      \
    (tb_context ctx, int32_t device, size_t size, void **ptr), (ctx, device, size, ptr))        \
  X(tb_memory_api, memory, device_free, 1, 0, tb_status,                                        \
    (tb_context ctx, int32_t device, void *ptr), (ctx, device, ptr))                            \
  X(tb_memory_api, memory, host_malloc, 0, 0, tb_status,                                        \
    (tb_context ctx, size_t size, void **ptr), (ctx, size, ptr))                                \
  X(tb_memory_api, memory, host_free, 0, 0, tb_status, (tb_context ctx, void *ptr), (ctx, ptr)) \
  X(tb_memory_api, memory, copy_h2d, 1, 0, tb_status,                                           \
    (tb_context ctx, int32_t device, void *dst, const void *src, size_t size),                  \
    (ctx, device, dst, src, size))                                                              \
  X(tb_memory_api, memory, copy_d2h, 1, 0, tb_status,                                           \
    (tb_context ctx, int32_t device, void *dst, const void *src, size_t size),                  \
    (ctx, device, dst, src, size))                                                              \
  X(tb_memory_api, memory, copy_d2d, 1, 0, tb_status,                                           \
    (tb_context ctx, int32_t dst_device, void *dst, int32_t src_device, const void *src,        \
     size_t size),                                                                              \
    (ctx, dst_device, dst, src_device, src, size))                                              \
  X(tb_memory_api, memory, copy_h2d_async, 1, 0, tb_status,                                     \
    (tb_context ctx, tb_stream stream, void *dst, const void *src, size_t size),                \
    (ctx, stream, dst, src, size))                                                              \
  X(tb_memory_api, memory, copy_d2h_async, 1, 0, tb_status,                                     \
    (tb_context ctx, tb_stream stream, void *dst, const void *src, size_t size),                \
    (ctx, stream, dst, src, size))                                                              \
  X(tb_memory_api, memory, copy_d2d_async, 1, 0, tb_status,                                     \
    (tb_context ctx, tb_stream stream, int32_t dst_device, void *dst, int32_t src_device,       \
     const void *src, size_t size),                                                             \
    (ctx, stream, dst_device, dst, src_device, src, size))                                      \
  X(tb_memory_api, memory, memset_async, 1, 0, tb_status,                                       \
    (tb_context ctx, tb_stream stream, void *ptr, int value, size_t size),                      \
    (ctx, stream, ptr, value, size))                                                            \
  X(tb_memory_api, memory, get_info, 0, 0, tb_status,                                           \
    (tb_context ctx, int32_t device, size_t *free_bytes, size_t *total_bytes),                \
    (ctx, device, free_bytes, total_bytes))

/** The slots of ::tb_stream_api, in member order. */
#define TB_STREAM_SLOTS(X)                                                                   \
  X(tb_stream_api, stream, create, 1, 0, tb_status,                                          \
    (tb_context ctx, int32_t device, int32_t priority, tb_stream *stream),                  \
    (ctx, device, priority, stream))                                                         \
  X(tb_stream_api, stream, destroy, 1, 0, tb_status, (tb_context ctx, tb_stream stream),     \
    (ctx, stream))                                                                           \
  X(tb_stream_api, stream, query, 1, 0, tb_status, (tb_context ctx, tb_stream stream),       \
    (ctx, stream))                                                                           \
  X(tb_stream_api, stream, synchronize, 1, 0, tb_status, (tb_context ctx, tb_stream stream), \
    (ctx, stream))                                                                           \
  X(tb_stream_api, stream, wait_event, 1, 0, tb_status,                                      \
    (tb_context ctx, tb_stream stream, tb_event event), (ctx, stream, event))                \
  X(tb_stream_api, stream, priority_range, 0, 0, tb_status,                                  \
    (tb_context ctx, int32_t device, int32_t *least, int32_t *greatest),                   \
    (ctx, device, least, greatest))                                                          \
  X(tb_stream_api, stream, inject_fault, 0, 0, tb_status,                                    \
    (tb_context ctx, tb_stream stream, const char *message), (ctx, stream, message))         \
  X(tb_stream_api, stream, launch_host_func, 0, 1, tb_status,                                \
    (tb_context ctx, tb_stream stream, tb_host_func fn, void *user_data),                    \
    (ctx, stream, fn, user_data))

/** The slots of ::tb_event_api, in member order. */
#define TB_EVENT_SLOTS(X)                                                                        \
  X(tb_event_api, event, create, 1, 0, tb_status,                                                \
    (tb_context ctx, int32_t device, uint32_t flags, tb_event *event),                          \
    (ctx, device, flags, event))                                                                 \
  X(tb_event_api, event, destroy, 1, 0, tb_status, (tb_context ctx, tb_event event), (ctx, event)) \
  X(tb_event_api, event, record, 1, 0, tb_status,                                                \
    (tb_context ctx, tb_event event, tb_stream stream), (ctx, event, stream))                    \
  X(tb_event_api, event, query, 1, 0, tb_status, (tb_context ctx, tb_event event), (ctx, event))  \
  X(tb_event_api, event, synchronize, 1, 0, tb_status, (tb_context ctx, tb_event event),         \
    (ctx, event))                                                                                \
  X(tb_event_api, event, elapsed_time, 0, 0, tb_status,                                          \
    (tb_context ctx, tb_event start, tb_event end, float *ms), (ctx, start, end, ms))

/** Every function slot of the four groups (device, memory, stream, event), in table order. */
#define TB_VENDOR_SLOTS(X) TB_DEVICE_SLOTS(X) TB_MEMORY_SLOTS(X) TB_STREAM_SLOTS(X) TB_EVENT_SLOTS(X)

/**
 * The function members of ::tb_vendor itself, in member order:
 * `X(slot, required, since_minor, return_type, (params), (names))`.  Their parameters differ
 * (init creates the context), so they are listed apart from the groups.
 */
#define TB_VENDOR_OWN_SLOTS(X)                                                             \
  X(init, 0, 0, tb_status, (const tb_host_api *host, tb_context *ctx), (host, ctx))        \
  X(finalize, 0, 0, void, (tb_context ctx), (ctx))                                          \
  X(last_error, 1, 0, const char *, (tb_context ctx), (ctx))
/* clang-format on */

/** Expands to the parameters of a slot after its leading `tb_context ctx`: use as
 *  `TB_SLOT_AFTER_CTX params` (the parenthesised list of an X line). */
#define TB_SLOT_AFTER_CTX(...) TB_SLOT_AFTER_CTX_(__VA_ARGS__)
/** Implementation of ::TB_SLOT_AFTER_CTX. */
#define TB_SLOT_AFTER_CTX_(ctx, ...) __VA_ARGS__
/** Removes the parentheses of a list: `TB_SLOT_UNPAREN params`. */
#define TB_SLOT_UNPAREN(...) __VA_ARGS__

/**
 * 1 when the compile-time checks of the lists against vendor.h run in this translation unit
 * (C11 with GCC or Clang, whose `__builtin_types_compatible_p` compares the member types), 0
 * otherwise.  C++ translation units check the same with `static_assert` in csrc.
 */
#if !defined(__cplusplus) && defined(__GNUC__) && defined(__STDC_VERSION__) && \
    __STDC_VERSION__ >= 201112L && !defined(__DOXYGEN__)
#define TB_SLOT_STATIC_CHECKS 1
#else
#define TB_SLOT_STATIC_CHECKS 0
#endif

#if TB_SLOT_STATIC_CHECKS
/* A mirror of each group built from its list alone: same members, same order, same types.
 * Equal sizes and equal offsets of every member prove the list and the struct agree, and that
 * the struct has no member the list lacks. */
#define TB_SLOT_MIRROR_MEMBER_(gt, gf, slot, req, since, ret, params, names) ret(*slot) params;
#define TB_SLOT_CHECK_(gt, gf, slot, req, since, ret, params, names)                         \
  _Static_assert(__builtin_types_compatible_p(__typeof__(((gt *)0)->slot), ret(*) params),   \
                 "vendor_slots.h: " #gt "::" #slot " does not have the type its line says"); \
  _Static_assert(offsetof(gt, slot) == offsetof(struct tb_slot_mirror_##gf, slot),           \
                 "vendor_slots.h: " #gt "::" #slot                                           \
                 " is not where the list puts it (member order)");                           \
  _Static_assert((since) != 0 || TB_STRUCT_SIZE(gt, slot) <= TB_SLOT_V2_0_SIZE_##gf,         \
                 "vendor_slots.h: a 2.0 slot lies beyond " #gt "'s ABI 2.0 minimum size");
#define TB_SLOT_V2_0_SIZE_device TB_DEVICE_API_V2_0_SIZE
#define TB_SLOT_V2_0_SIZE_memory TB_MEMORY_API_V2_0_SIZE
#define TB_SLOT_V2_0_SIZE_stream TB_STREAM_API_V2_0_SIZE
#define TB_SLOT_V2_0_SIZE_event TB_EVENT_API_V2_0_SIZE
#define TB_SLOT_GROUP_CHECK_(gt, gf, LIST)                         \
  struct tb_slot_mirror_##gf {                                     \
    size_t struct_size;                                            \
    LIST(TB_SLOT_MIRROR_MEMBER_)                                   \
  };                                                               \
  _Static_assert(sizeof(gt) == sizeof(struct tb_slot_mirror_##gf), \
                 "vendor_slots.h: " #gt                            \
                 " has members its slot list lacks, or "           \
                 "lacks members its list has");                    \
  LIST(TB_SLOT_CHECK_)
TB_SLOT_GROUP_CHECK_(tb_device_api, device, TB_DEVICE_SLOTS)
TB_SLOT_GROUP_CHECK_(tb_memory_api, memory, TB_MEMORY_SLOTS)
TB_SLOT_GROUP_CHECK_(tb_stream_api, stream, TB_STREAM_SLOTS)
TB_SLOT_GROUP_CHECK_(tb_event_api, event, TB_EVENT_SLOTS)
#define TB_SLOT_OWN_CHECK_(slot, req, since, ret, params, names)                                  \
  _Static_assert(__builtin_types_compatible_p(__typeof__(((tb_vendor *)0)->slot), ret(*) params), \
                 "vendor_slots.h: tb_vendor::" #slot " does not have the type its line says");
TB_VENDOR_OWN_SLOTS(TB_SLOT_OWN_CHECK_)
_Static_assert(offsetof(tb_vendor, init) == offsetof(tb_vendor, vendor_version) + sizeof(char *) &&
                   offsetof(tb_vendor, finalize) == offsetof(tb_vendor, init) + sizeof(void *) &&
                   offsetof(tb_vendor, last_error) ==
                       offsetof(tb_vendor, finalize) + sizeof(void *),
               "vendor_slots.h: tb_vendor's own slots are not in the listed order after "
               "vendor_version");
#undef TB_SLOT_MIRROR_MEMBER_
#undef TB_SLOT_CHECK_
#undef TB_SLOT_GROUP_CHECK_
#undef TB_SLOT_OWN_CHECK_
#endif

#endif /* TORCH_BACKEND_VENDOR_SLOTS_H_ */
