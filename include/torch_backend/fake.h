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
 * Every slot of the table is a function named `tbv_<group>_<slot>` (`tbv_memory_device_malloc`
 * for tb_memory_api::device_malloc) with the slot's own signature, context first, and fake
 * defines each one as a weak symbol.  The group slots are declared below from the slot list
 * (vendor_slots.h), so they always match vendor.h: `tb-conformance --slots` and the ABI
 * reference's slot table list every name with its signature.  tb_vendor's own members are
 * `tbv_device_type`, `tbv_vendor_name`, `tbv_vendor_version`, `tbv_init`, `tbv_finalize`,
 * `tbv_last_error` and `tbv_kernels`.  fake's own ::tb_vendor_get builds the table from these
 * names.  A vendor starts by linking fake (CMake: `TorchBackend::fake_defaults`) into its
 * shared library; from then on, defining a function of the same name and signature in the
 * vendor's own code replaces fake's version at link time, one slot at a time:
 *
 * @code
 * #include <torch_backend/fake.h>
 *
 * // Step 1 of a port: our own device allocator; everything else is still fake's.
 * tb_status tbv_memory_device_malloc(tb_context ctx, int32_t device, size_t size, void **ptr) {
 *   ...
 * }
 * tb_status tbv_memory_device_free(tb_context ctx, int32_t device, void *ptr) { ... }
 * @endcode
 *
 * Replace functions in the pairs that share state: device_malloc with device_free and the
 * copies (fake's device pointers are plain host pointers with a header in front), host_malloc
 * with host_free, stream create/destroy with every function taking a stream, event
 * create/destroy with every function taking an event.  Run `tb-conformance` after each step.
 *
 * fake keeps its own state in process globals and ignores the context: its tbv_init gives a
 * NULL one.  A vendor that replaces tbv_init with one creating a context receives that context
 * in every slot, its replacements and fake's alike (fake's just ignore it), and replaces
 * tbv_finalize to release it.
 *
 * A replacement reports failure by returning a status and setting the message that fake's
 * tbv_last_error returns, with tb_fake_set_error().
 */
#ifndef TORCH_BACKEND_FAKE_H_
#define TORCH_BACKEND_FAKE_H_

#include <torch_backend/vendor.h>
#include <torch_backend/vendor_slots.h>

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
/** Slot tb_vendor::init.  fake: reads its environment (device count, memory) and fails with
 *  ::TB_ERROR_UNAVAILABLE when a variable is malformed; stores a NULL context. */
tb_status tbv_init(const tb_host_api *host, tb_context *ctx);
/** Slot tb_vendor::finalize.  fake: nothing to release. */
void tbv_finalize(tb_context ctx);
/** Slot tb_vendor::last_error.  fake: the message set by tb_fake_set_error() on this thread. */
const char *tbv_last_error(tb_context ctx);
/** Slot tb_vendor::kernels: the vendor's kernel table, read once when the table is built.
 *  fake: NULL, no kernels.  A vendor that brings kernels returns a static table. */
const tb_kernel_api *tbv_kernels(void);

/** Slot tb_vendor::extensions (ABI 2.0): the first extension of the vendor's chain (custom
 *  operators, see @ref tb_extension_group), read once when the table is built.  fake: NULL,
 *  no extensions. */
const tb_extension_base *tbv_extensions(void);
/** @cond TB_FAKE_GENERATED */
#define TB_FAKE_DECLARE_(gt, gf, slot, required, since, ret, params, names) \
  ret tbv_##gf##_##slot params;
TB_VENDOR_SLOTS(TB_FAKE_DECLARE_)
#undef TB_FAKE_DECLARE_
/** @endcond */

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
