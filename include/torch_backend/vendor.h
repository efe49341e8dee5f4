/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 */

/**
 * @file vendor.h
 * @brief The torch_backend vendor ABI: the one C interface an accelerator implements.
 *
 * An accelerator joins PyTorch through torch_backend by shipping one shared library, written in
 * any language that can export C symbols, that exports ::tb_vendor_get.  That function returns a
 * ::tb_vendor table: the vendor's identity plus groups of function pointers for devices
 * (::tb_device_api), memory (::tb_memory_api), streams (::tb_stream_api) and events
 * (::tb_event_api).  torch_backend's C++ layer (csrc/) turns those primitives into a PyTorch
 * device: caching allocator, stream pools, guards, generators and operator registration are
 * written once, above this header, for every vendor.
 *
 * This header is the whole contract.  It depends on nothing but the C standard library and
 * never on libtorch, so a vendor library built against it with any compiler and any C++
 * standard library loads under every PyTorch release torch_backend supports.
 *
 * @section tb_versioning Versioning rules
 *
 * - The ABI has a major and a minor version (::TB_ABI_VERSION_MAJOR, ::TB_ABI_VERSION_MINOR).
 *   This header is ABI 2.5.
 * - Every struct that crosses the boundary starts with a `size_t struct_size` holding
 *   `sizeof` the struct as its producer compiled it.  Either side may therefore be older than
 *   the other: a reader only touches fields that lie wholly inside `struct_size`
 *   (::TB_STRUCT_HAS_FIELD) and treats the rest as absent (NULL / zero).
 * - Fields are only ever appended, in a new minor version.  Existing fields never move, never
 *   change type and never change meaning within a major version.
 * - Removing or changing a field, or changing the meaning of a call, requires a major bump.
 *   A major bump is a new contract: a vendor built against major N implements major N's
 *   table, whose layout and calling conventions may share nothing with major N-1's.  The first
 *   three members of ::tb_vendor (`struct_size`, `abi_major`, `abi_minor`) keep their types
 *   and offsets in every major, so a loader can always read them.
 * - torch_backend asks the vendor for the major it speaks first (the `abi_major` argument of
 *   ::tb_vendor_get) and, when the vendor returns NULL, for each older major it still
 *   supports.  A vendor may serve several majors from one library.
 * - A vendor built against an older minor works with a newer torch_backend: fields it does not
 *   know lie outside its `struct_size` and are treated as absent.  A vendor built against a
 *   newer minor works with an older torch_backend, which simply ignores the trailing fields.
 *
 * @section tb_history History, and ABI 1.x vendors
 *
 * - 1.0: devices, memory, streams, events.
 * - 1.1: kernels keyed by ATen operator name (::tb_kernel_api).
 * - 1.2: sticky device faults (@ref tb_faults), tb_device_api::reset,
 *   tb_stream_api::inject_fault, ::TB_ERROR_DEVICE_FAULT, tb_device_properties::dtypes.
 * - 2.0: a vendor context (::tb_context) created by tb_vendor::init, released by
 *   tb_vendor::finalize and passed as the first argument of every call; kernels take one
 *   ::tb_kernel_call (stream, arguments, the ::tb_kernel itself, and a workspace allocator);
 *   a kernel names the ATen schema it was written for (tb_kernel::schema) and carries a vendor
 *   pointer (tb_kernel::data); tensor lists are arrays of pointers to size-prefixed
 *   ::tb_tensor, NULL standing for an absent optional element.
 * - 2.1: tb_device_properties::capabilities, with ::TB_DEVICE_HOST_ACCESS: a device whose
 *   memory the host may read and write through the device pointers themselves (torch.compile
 *   then generates C++ kernels for it; see @ref tb_memory_model); tb_stream_api::launch_host_func,
 *   host functions in stream order.
 * - 2.2: ::TB_EXTENSION_COLLECTIVES, a vendor's collectives library (@ref tb_collectives), the
 *   way NCCL sits under CUDA and HCCL under Ascend.
 * - 2.3: ::TB_EXTENSION_GRAPHS, capture of a stream's work into a graph replayed with one
 *   launch (@ref tb_graphs); tb_rng_key::device_state, the generator state a captured random
 *   kernel reads when it runs.
 * - 2.4: ::TB_EXTENSION_STORAGE_META, named values a vendor keeps per storage (a storage
 *   format), carried through torch.save/torch.load (@ref tb_storage_meta).
 * - 2.5: ::TB_EXTENSION_IPC, device memory shared with other processes (@ref tb_ipc):
 *   device tensors sent through torch.multiprocessing.
 * - 2.6: ::TB_EXTENSION_PROGRAMS, device programs built from source at run time
 *   (@ref tb_programs): the kernels torch.compile generates and `torch.<device>.compile_kernel`.
 * - 2.7: faults from device programs: in OpenCL C a kernel declares `TB_FAULT_PARAM` and
 *   reports an index out of range with `TB_FAULT_INDEX`, macros the vendor defines; the
 *   vendor binds the parameters it stands for and get_kernel leaves them out (@ref tb_programs).
 *
 * torch_backend 2.x still loads vendors built against any 1.x header, unchanged and without a
 * rebuild: when a library returns no table for major 2, the loader asks it for major 1 and
 * wraps the 1.x table in a 2.0 one (the context of a wrapped vendor is the loader's; each
 * kernel call is converted to the 1.x calling convention, tensor lists included).  Porting a
 * 1.x vendor to 2.0 (see the porting guide) is a mechanical change: add `tb_context ctx` as the
 * first parameter of every function, take the kernel arguments from ::tb_kernel_call, read
 * tensor list elements through pointers, and optionally move process globals into a context.
 *
 * @section tb_context_rules The vendor context: init and finalize
 *
 * tb_vendor::init creates the vendor's state -- its ::tb_context -- and tb_vendor::finalize
 * releases it; torch_backend passes the context as the first argument of every other call.  A
 * vendor keeps in the context what belongs to one use of its devices (configuration, memory
 * pools, per-device state) instead of in process globals.
 *
 * - torch_backend's runtime calls init exactly once per process, lazily, from the single path
 *   through which it reaches the vendor, before any other call of the table (tb_device_api::count
 *   included) and never twice.  Because the device count is read when `torch_backend` is
 *   imported, init runs at import.  A process may fork() after that and before using a device,
 *   and the child then continues with the context init created in the parent: init must
 *   therefore be cheap and fork-safe -- read configuration, validate the environment, allocate
 *   the context -- and leave threads, driver contexts and device memory to the first call that
 *   needs them.  torch_backend never calls init (nor anything else) in a child forked after the
 *   parent used a device.
 * - When init fails, its status and tb_vendor::last_error message become the error of whatever
 *   triggered it (`"<device type>: init failed with <STATUS>: <message>"`), at import for the
 *   runtime; the vendor is then unusable in that process.
 * - finalize is called at most once per successful init, after all of torch_backend's work: the
 *   runtime calls it from an `atexit` handler, never in a forked child.  After finalize returns
 *   torch_backend makes no call with that context.  finalize must not block indefinitely.
 * - Tools and tests that open the same library several times in one process (the conformance
 *   suite, faulty over another vendor) call init once per opened table, and finalize once per
 *   context.  A vendor whose state is per process may return the same context (or NULL) from
 *   every init; a vendor that cannot run two contexts at once returns
 *   ::TB_ERROR_UNAVAILABLE, with a message, from the second init.
 *
 * @section tb_required Required and optional functions
 *
 * Every function pointer is required unless its documentation says "Optional".  The loader
 * refuses a table in which a required pointer is NULL and names every missing one.  An optional
 * pointer may be NULL; torch_backend then uses the documented replacement behaviour.
 *
 * @section tb_errors Errors
 *
 * Every call returns a ::tb_status.  ::TB_OK is success.  ::TB_ERROR_NOT_READY is not a failure:
 * it is the answer of a query whose work has not finished.  Any other status is a failure: the
 * call had no effect (no memory is allocated, no work is enqueued, no handle is created, output
 * arguments are left unchanged unless stated otherwise), and tb_vendor::last_error returns a
 * human-readable message for it on the calling thread.  Messages should name what was wrong
 * (the argument, the device index, the vendor runtime's own error text); torch_backend shows
 * them to users verbatim, prefixed with the vendor's name and the call.
 *
 * @section tb_faults Device faults
 *
 * Work that fails after its enqueueing call returned (a kernel that finds an index out of
 * range, a copy the device cannot complete) leaves its device *faulted*: like CUDA's sticky
 * errors, the failure cannot be forgotten by reporting it once, because the results of that
 * work, and of everything that depended on it, are garbage.  From the moment the failing work
 * runs until tb_device_api::reset clears it (or the process ends):
 *
 * - every tb_stream_api::query and tb_stream_api::synchronize of any stream of the device,
 *   every tb_event_api::query and tb_event_api::synchronize of any event of the device, and
 *   tb_device_api::synchronize of the device return ::TB_ERROR_DEVICE_FAULT (query returns it
 *   in place of ::TB_ERROR_NOT_READY too) with the original failure's message, naming the work
 *   that failed (the kernel's operator name) and what went wrong;
 * - every copy from or to the device's memory, synchronous or asynchronous, and every enqueue
 *   of new work on its streams (kernels, memset, event waits) returns ::TB_ERROR_DEVICE_FAULT
 *   without doing anything: no bytes of a faulted device reach the host;
 * - allocation, freeing, recording events, and creating or destroying streams and events keep
 *   working, so that the caller can release what it holds (a caching allocator records events
 *   when it frees memory used on several streams);
 * - other devices are not affected.
 *
 * Which failure is reported when several fail: the first one on the device.  Work enqueued
 * before the fault may or may not run.
 *
 * @section tb_threads Threads
 *
 * Unless a function says otherwise, every function may be called concurrently from any number
 * of threads, with one exception: a handle must not be destroyed while another thread is
 * using that same handle.  Vendors keep no hidden "current device": every call that concerns a
 * device takes its index explicitly, and streams and events remember the device they were
 * created on.  A vendor over a runtime that keeps a current device per thread (AscendCL, the CUDA
 * runtime) makes the call's device current itself, on whichever thread calls: torch_backend
 * never sets a vendor runtime's current device (the npu adapter's npu_enter is the pattern).  Every
 * call receives the ::tb_context init returned; calls on several threads share it, so the vendor
 * guards what it mutates in it.  tb_vendor::init and tb_vendor::finalize are the exception:
 * torch_backend never runs them concurrently with each other or with any other call of the same
 * context.  torch_backend never uses a vendor in a child process created by `fork()` after the
 * parent used it, so a vendor need not survive `fork()`.
 *
 * @section tb_blocking Blocking
 *
 * Each function says whether it may block.  "Does not block" means the call returns without
 * waiting for device work (it may still take short internal locks).  "Asynchronous" calls
 * enqueue work on a stream and return; the work runs later, in stream order.
 *
 * @section tb_memory_model Memory model
 *
 * Device memory is addressed by `void*` values returned by tb_memory_api::device_malloc.
 * Host code must not dereference them (a vendor may place them in another address space, or
 * make them inaccessible to the host); only the vendor's own calls read or write through them.
 * The one exception is a device that reports ::TB_DEVICE_HOST_ACCESS in
 * tb_device_properties::capabilities: its device pointers are host addresses of the same bytes,
 * and host code may read and write through them once the stream work that uses those bytes has
 * completed (torch_backend synchronizes the stream first).  torch.compile uses this to run the
 * C++ kernels Inductor generates directly on device tensors; without the capability it runs a
 * graph of the vendor's own kernels instead.
 * Pointer arithmetic inside an allocation is allowed: `(char*)p + k` for `k` within the
 * allocation addresses byte `k` of it, in every call that takes a device pointer.
 */
#ifndef TORCH_BACKEND_VENDOR_H_
#define TORCH_BACKEND_VENDOR_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup tb_version Version and portability macros
 *  @{ */

/** Major version of this ABI.  Bumped only for incompatible changes (see @ref tb_versioning). */
#define TB_ABI_VERSION_MAJOR 2
/** Minor version of this ABI.  Bumped when fields are appended to a struct. */
#define TB_ABI_VERSION_MINOR 7

/** Marks a symbol as exported from the vendor's shared library. */
#if defined(_WIN32)
#define TB_EXPORT __declspec(dllexport)
#else
#define TB_EXPORT __attribute__((visibility("default")))
#endif

/** Size of @p type up to and including @p field: the `struct_size` an older producer that
 *  ended the struct at @p field would report. */
#define TB_STRUCT_SIZE(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/** True when the struct at @p ptr (of type @p type) is large enough to contain @p field.
 *  Read a field only when this holds; otherwise treat it as absent. */
#define TB_STRUCT_HAS_FIELD(ptr, type, field) \
  ((ptr) != NULL && (ptr)->struct_size >= TB_STRUCT_SIZE(type, field))

/** @} */

/** @defgroup tb_status_group Status codes
 *  @{ */

/**
 * Result of every vendor call.
 *
 * Values are stable across minor versions; new codes may be appended.  A caller that receives
 * a code it does not know treats it as ::TB_ERROR_INTERNAL.
 */
typedef enum tb_status {
  /** Success. */
  TB_OK = 0,
  /** An argument is invalid: NULL where a pointer is required, an unknown handle, a flag the
   *  vendor does not know, a pointer that the vendor did not allocate. */
  TB_ERROR_INVALID_ARGUMENT = 1,
  /** A device index is negative or not below tb_device_api::count's answer. */
  TB_ERROR_INVALID_DEVICE = 2,
  /** The device (or pinned host pool) cannot satisfy an allocation.  The vendor stays usable:
   *  the caller may free memory and retry. */
  TB_ERROR_OUT_OF_MEMORY = 3,
  /** Not a failure: the queried stream or event still has work outstanding.  Does not change
   *  the last-error message. */
  TB_ERROR_NOT_READY = 4,
  /** The call is valid but this vendor or device does not support it (for example timing on an
   *  event created without ::TB_EVENT_FLAG_TIMING). */
  TB_ERROR_NOT_SUPPORTED = 5,
  /** A failure inside the vendor or its runtime that no argument explains (driver error, lost
   *  device, failed kernel).  The message carries the runtime's own text. */
  TB_ERROR_INTERNAL = 6,
  /** The vendor's runtime is not usable in this process (no driver, failed initialisation). */
  TB_ERROR_UNAVAILABLE = 7,
  /** The device is faulted: earlier asynchronous work on it failed, and it reports that
   *  failure until it is reset (see @ref tb_faults).  The message is the failure's. */
  TB_ERROR_DEVICE_FAULT = 8
} tb_status;

/**
 * The name of a status code as a static string, such as "TB_ERROR_OUT_OF_MEMORY".
 * Unknown codes give "TB_ERROR_UNKNOWN".
 */
static inline const char *tb_status_name(tb_status status) {
  switch (status) {
    case TB_OK:
      return "TB_OK";
    case TB_ERROR_INVALID_ARGUMENT:
      return "TB_ERROR_INVALID_ARGUMENT";
    case TB_ERROR_INVALID_DEVICE:
      return "TB_ERROR_INVALID_DEVICE";
    case TB_ERROR_OUT_OF_MEMORY:
      return "TB_ERROR_OUT_OF_MEMORY";
    case TB_ERROR_NOT_READY:
      return "TB_ERROR_NOT_READY";
    case TB_ERROR_NOT_SUPPORTED:
      return "TB_ERROR_NOT_SUPPORTED";
    case TB_ERROR_INTERNAL:
      return "TB_ERROR_INTERNAL";
    case TB_ERROR_UNAVAILABLE:
      return "TB_ERROR_UNAVAILABLE";
    case TB_ERROR_DEVICE_FAULT:
      return "TB_ERROR_DEVICE_FAULT";
  }
  return "TB_ERROR_UNKNOWN";
}

/** @} */

/** @defgroup tb_handles Handles
 *  @{ */

/**
 * The vendor's own state, created by tb_vendor::init and passed as the first argument of every
 * other call (see @ref tb_context_rules).
 *
 * Opaque: the vendor defines `struct tb_context_impl` (or never defines it and casts).  NULL is
 * a valid context: the one a vendor without init receives, and the one a vendor whose init
 * sets none keeps.  torch_backend never looks inside it.
 */
typedef struct tb_context_impl *tb_context;

/**
 * An ordered queue of device work, created by tb_stream_api::create.
 *
 * Opaque: the vendor defines `struct tb_stream_impl` (or never defines it and casts).  A stream
 * belongs to the device it was created on for its whole life.  Work enqueued on one stream
 * runs in the order it was enqueued; work on different streams is unordered unless an event
 * orders it (tb_stream_api::wait_event).
 */
typedef struct tb_stream_impl *tb_stream;

/**
 * A marker in a stream's work, created by tb_event_api::create.
 *
 * Opaque like ::tb_stream.  An event belongs to the device it was created on.  It completes
 * when the stream it was last recorded on has finished all work enqueued before the record.
 */
typedef struct tb_event_impl *tb_event;

/** @} */

/** @defgroup tb_device_group Devices
 *  @{ */

/** Length, including the terminating NUL, of tb_device_properties::name. */
#define TB_DEVICE_NAME_SIZE 256

/**
 * What a device is, filled in by tb_device_api::get_properties.
 *
 * The caller zero-initialises the struct, sets `struct_size = sizeof(tb_device_properties)`
 * and passes it in.  The vendor writes only the fields that lie wholly inside the caller's
 * `struct_size` and inside its own definition; fields it does not fill stay zero, and zero
 * means "unknown".  The vendor never writes `struct_size`.
 */
typedef struct tb_device_properties {
  /** Set by the caller to `sizeof(tb_device_properties)`. */
  size_t struct_size;
  /** Human-readable model name, NUL-terminated, never empty (for example "Emulated
   *  Accelerator").  Shown by `torch.<device>.get_device_name()`. */
  char name[TB_DEVICE_NAME_SIZE];
  /** Bytes of device memory the device has in total (what tb_memory_api::get_info reports as
   *  total).  Must be non-zero. */
  uint64_t total_memory;
  /** Number of parallel compute units (cores, SMs, AI cores); 0 when unknown. */
  int32_t compute_units;
  /** Vendor-defined architecture generation, major part; 0 when unknown. */
  int32_t arch_major;
  /** Vendor-defined architecture generation, minor part; 0 when unknown. */
  int32_t arch_minor;
  /** Bit set (::TB_DTYPE_BIT) of the element types the device handles natively; 0 means
   *  every ::tb_dtype.  Informational: device memory holds any element type as bytes and the
   *  CPU fallback computes what kernels do not, so `torch.accelerator.get_device_capability()`
   *  reports every dtype PyTorch has (quantized ones aside) as `supported_dtypes`, as CUDA
   *  does. */
  uint64_t dtypes;
  /** Bit set of ::TB_DEVICE_HOST_ACCESS and future capabilities (ABI 2.1); 0, or a vendor
   *  older than 2.1: none. */
  uint64_t capabilities;
} tb_device_properties;

/** tb_device_properties::capabilities bit: the host may read and write the device's memory
 *  through its device pointers, which are host addresses of the same bytes, once the stream
 *  work that uses those bytes has completed (see @ref tb_memory_model).  A device whose memory
 *  lives in another address space, or that the host reaches only through copies, leaves it
 *  clear. */
#define TB_DEVICE_HOST_ACCESS ((uint64_t)1 << 0)

/**
 * Device discovery and device-wide synchronisation.
 *
 * Device indices are `0 .. count-1` and do not change for the life of the process.  Every
 * function that takes a device index returns ::TB_ERROR_INVALID_DEVICE for an index outside
 * that range, including negative ones.
 */
typedef struct tb_device_api {
  /** `sizeof(tb_device_api)` as the vendor compiled it. */
  size_t struct_size;

  /**
   * Number of devices the vendor exposes in this process.
   *
   * @param[out] count  Receives the count; 0 is allowed (torch then reports the device as
   *                    unavailable).
   * May block on first use while the vendor initialises.  Returns the same answer on every
   * call.
   */
  tb_status (*count)(tb_context ctx, int32_t *count);

  /**
   * Describes device @p device.
   *
   * @param device      Device index.
   * @param[in,out] properties  Caller-owned; see ::tb_device_properties for the size rule.
   * Does not block.
   */
  tb_status (*get_properties)(tb_context ctx, int32_t device, tb_device_properties *properties);

  /**
   * Blocks until all work enqueued on every stream of @p device has finished.
   *
   * Returns the first failure of that work, if any: ::TB_ERROR_DEVICE_FAULT while the device is
   * faulted (see @ref tb_faults).  May block.
   */
  tb_status (*synchronize)(tb_context ctx, int32_t device);

  /**
   * Optional.  Clears a fault of @p device (see @ref tb_faults): waits until no work
   * of the device is running, then lets the device accept work and copies again.  Allocations,
   * streams and events stay valid; memory written by the failed work, or by work that ran
   * after it, holds unspecified bytes.  Succeeds and does nothing on a device that is not
   * faulted.  When NULL, a faulted device stays faulted until the process ends.  May block.
   */
  tb_status (*reset)(tb_context ctx, int32_t device);
} tb_device_api;

/** @} */

/** @defgroup tb_memory_group Memory
 *  @{ */

/** Every device and pinned host allocation of non-zero size is aligned to at least this many
 *  bytes. */
#define TB_MEMORY_ALIGNMENT 64

/**
 * Device memory, pinned host memory and copies between them.
 *
 * Synchronous copies (copy_h2d, copy_d2h, copy_d2d) return when the bytes have arrived.  They
 * are not ordered with work queued on streams: a caller that depends on stream work
 * synchronises that stream first.  Asynchronous copies take a ::tb_stream and run in that
 * stream's order; host buffers passed to them must stay valid and unmodified (source) or
 * untouched (destination) until the copy completes, whether or not they are pinned.
 *
 * Copies of size 0 succeed and do nothing, whatever the pointers.  Source and destination
 * ranges must not overlap.
 */
typedef struct tb_memory_api {
  /** `sizeof(tb_memory_api)` as the vendor compiled it. */
  size_t struct_size;

  /**
   * Allocates @p size bytes of memory on @p device.
   *
   * @param device    Device index.
   * @param size      Bytes.  0 succeeds and stores NULL in @p *ptr.
   * @param[out] ptr  Receives the device pointer, aligned to ::TB_MEMORY_ALIGNMENT.  Owned by
   *                  the caller until passed to device_free.  Unchanged on failure.
   * Returns ::TB_ERROR_OUT_OF_MEMORY when the device cannot satisfy the request, including
   * requests larger than the device's total memory; the vendor stays usable.  The memory's
   * contents are unspecified.  May block (briefly) but never waits for stream work.
   */
  tb_status (*device_malloc)(tb_context ctx, int32_t device, size_t size, void **ptr);

  /**
   * Returns memory obtained from device_malloc on the same @p device.
   *
   * @p ptr NULL succeeds and does nothing.  The caller guarantees that no work still queued or
   * running on any stream uses the memory (torch_backend's caching allocator tracks this with
   * events), so the vendor need not wait.  Does not block.
   */
  tb_status (*device_free)(tb_context ctx, int32_t device, void *ptr);

  /**
   * Optional.  Allocates @p size bytes of page-locked ("pinned") host memory, directly
   * readable and writable by the host and usable as the host side of every copy on every
   * device, typically faster for asynchronous copies.
   *
   * @param size      Bytes.  0 succeeds and stores NULL in @p *ptr.
   * @param[out] ptr  Receives the host pointer, aligned to ::TB_MEMORY_ALIGNMENT.
   * When NULL, torch_backend uses ordinary host memory for pinned tensors.  May block.
   */
  tb_status (*host_malloc)(tb_context ctx, size_t size, void **ptr);

  /**
   * Optional (required when host_malloc is provided).  Returns memory from host_malloc.
   * @p ptr NULL succeeds.  The caller guarantees no queued copy still uses it.  Does not block.
   */
  tb_status (*host_free)(tb_context ctx, void *ptr);

  /**
   * Copies @p size bytes from host memory @p src to device memory @p dst on @p device.
   * Blocks until the copy is complete.
   */
  tb_status (*copy_h2d)(tb_context ctx, int32_t device, void *dst, const void *src, size_t size);

  /**
   * Copies @p size bytes from device memory @p src on @p device to host memory @p dst.
   * Blocks until the copy is complete.
   */
  tb_status (*copy_d2h)(tb_context ctx, int32_t device, void *dst, const void *src, size_t size);

  /**
   * Copies @p size bytes from device memory @p src on @p src_device to device memory @p dst
   * on @p dst_device.  The devices may differ.  Blocks until the copy is complete.
   */
  tb_status (*copy_d2d)(tb_context ctx, int32_t dst_device, void *dst, int32_t src_device,
                        const void *src, size_t size);

  /**
   * Enqueues a copy of @p size bytes from host memory @p src to device memory @p dst on the
   * device of @p stream.  Asynchronous.
   */
  tb_status (*copy_h2d_async)(tb_context ctx, tb_stream stream, void *dst, const void *src,
                              size_t size);

  /**
   * Enqueues a copy of @p size bytes from device memory @p src, on the device of @p stream,
   * to host memory @p dst.  Asynchronous: @p dst holds the bytes once the stream reaches and
   * finishes the copy (synchronise the stream or an event recorded after it).
   */
  tb_status (*copy_d2h_async)(tb_context ctx, tb_stream stream, void *dst, const void *src,
                              size_t size);

  /**
   * Enqueues a device-to-device copy.  @p stream belongs to @p dst_device or @p src_device;
   * the copy is ordered on that stream only.  Asynchronous.
   */
  tb_status (*copy_d2d_async)(tb_context ctx, tb_stream stream, int32_t dst_device, void *dst,
                              int32_t src_device, const void *src, size_t size);

  /**
   * Enqueues setting @p size bytes of device memory at @p ptr, on the device of @p stream, to
   * the byte `(unsigned char)value`.  Asynchronous.
   */
  tb_status (*memset_async)(tb_context ctx, tb_stream stream, void *ptr, int value, size_t size);

  /**
   * Optional.  Reports free and total device memory of @p device, in bytes, as the vendor
   * sees it (torch_backend's cached blocks count as used).  When NULL, torch_backend reports
   * tb_device_properties::total_memory as total and derives free from its own allocations.
   * Does not block.
   */
  tb_status (*get_info)(tb_context ctx, int32_t device, size_t *free_bytes, size_t *total_bytes);
} tb_memory_api;

/** @} */

/** @defgroup tb_stream_group Streams
 *  @{ */

/**
 * A host function enqueued by tb_stream_api::launch_host_func: returns ::TB_OK, or another
 * status after writing a NUL-terminated message of at most @p message_size bytes (including the
 * NUL) into @p message.
 */
typedef tb_status (*tb_host_func)(void *user_data, char *message, size_t message_size);

/**
 * Creation, ordering and completion of streams.
 *
 * Priorities follow CUDA's convention: a lower number is a higher priority, and
 * priority_range reports `least` (the default, lowest priority, usually 0) and `greatest`
 * (the highest priority, `greatest <= least`).
 *
 * Destroying a busy stream: tb_stream_api::destroy may be called while work is still queued
 * on the stream.  It does not block, the handle is invalid as soon as it returns, and the
 * queued work still runs to completion (events recorded behind it complete, memory it writes
 * is written, tb_device_api::synchronize waits for it).  The vendor releases the stream's
 * resources once that work has finished.
 */
typedef struct tb_stream_api {
  /** `sizeof(tb_stream_api)` as the vendor compiled it. */
  size_t struct_size;

  /**
   * Creates a stream on @p device.
   *
   * @param device        Device index.
   * @param priority      Scheduling priority; values outside priority_range are clamped into
   *                      it.  0 is always valid.
   * @param[out] stream   Receives the handle, owned by the caller until destroy.
   * Does not block.
   */
  tb_status (*create)(tb_context ctx, int32_t device, int32_t priority, tb_stream *stream);

  /** Destroys @p stream; see "Destroying a busy stream" above.  Does not block. */
  tb_status (*destroy)(tb_context ctx, tb_stream stream);

  /**
   * Reports whether all work enqueued on @p stream has finished: ::TB_OK when it has,
   * ::TB_ERROR_NOT_READY while some is outstanding.  A stream with no work is finished.
   * ::TB_ERROR_DEVICE_FAULT while the stream's device is faulted (see @ref tb_faults).
   * Does not block.
   */
  tb_status (*query)(tb_context ctx, tb_stream stream);

  /**
   * Blocks until all work enqueued on @p stream before this call has finished.  Returns
   * ::TB_ERROR_DEVICE_FAULT while the stream's device is faulted (see @ref tb_faults), whether
   * the failed work was on this stream or another.  May block.
   */
  tb_status (*synchronize)(tb_context ctx, tb_stream stream);

  /**
   * Makes all work enqueued on @p stream after this call wait until @p event completes (as
   * recorded at the time of this call: recording the event again later, even on another
   * stream, does not change what this wait waits for).  @p event may belong to another device.
   * An event never recorded is complete, so waiting on it is a no-op.  Asynchronous: does not
   * block the host.
   */
  tb_status (*wait_event)(tb_context ctx, tb_stream stream, tb_event event);

  /**
   * Optional.  Reports the range of stream priorities of @p device.  When NULL, every
   * priority is treated as 0.  Does not block.
   */
  tb_status (*priority_range)(tb_context ctx, int32_t device, int32_t *least, int32_t *greatest);

  /**
   * Optional, for tests of fault handling.  Enqueues work on @p stream that fails
   * when the stream reaches it, faulting the stream's device with @p message (copied) as the
   * failure's message, exactly as a failing kernel would (see @ref tb_faults).  The
   * conformance suite and torch_backend's tests use it to check the fault contract without
   * depending on any particular kernel; vendors without it are not checked.  Asynchronous.
   */
  tb_status (*inject_fault)(tb_context ctx, tb_stream stream, const char *message);

  /**
   * Optional (ABI 2.1).  Enqueues a call of @p fn with @p user_data on @p stream: the vendor
   * calls it on a thread of its own once all work enqueued on the stream before it has completed,
   * and work enqueued after it starts only once it has returned -- CUDA's `cudaLaunchHostFunc`,
   * AscendCL's `aclrtLaunchCallback`.  torch.compile enqueues the C++ kernels Inductor generates
   * for a device with ::TB_DEVICE_HOST_ACCESS this way, so they keep stream order without the
   * host waiting for the stream; when NULL it waits for the stream and runs them itself.
   *
   * @p fn must not call the vendor.  When it returns a status other than ::TB_OK, having written
   * a NUL-terminated message into its @p message buffer of @p message_size bytes, its work has
   * failed: the stream's device is faulted with that message, as by a failing kernel (see
   * @ref tb_faults).  Enqueueing on a faulted device returns ::TB_ERROR_DEVICE_FAULT and never
   * calls @p fn.  Asynchronous.
   */
  tb_status (*launch_host_func)(tb_context ctx, tb_stream stream, tb_host_func fn, void *user_data);
} tb_stream_api;

/** @} */

/** @defgroup tb_event_group Events
 *  @{ */

/** tb_event_api::create flag: the event records a timestamp usable by
 *  tb_event_api::elapsed_time.  Without it, timing is ::TB_ERROR_NOT_SUPPORTED and
 *  recording may be cheaper. */
#define TB_EVENT_FLAG_TIMING 0x1u

/**
 * Markers in streams, for ordering work across streams and timing it.
 *
 * Destroying a busy event: tb_event_api::destroy may be called while the event is recorded
 * but not yet complete, and while streams wait on it.  It does not block, the handle is
 * invalid as soon as it returns, and waits already enqueued still complete when the recorded
 * work does.
 */
typedef struct tb_event_api {
  /** `sizeof(tb_event_api)` as the vendor compiled it. */
  size_t struct_size;

  /**
   * Creates an event on @p device.
   *
   * @param device       Device index.
   * @param flags        0 or ::TB_EVENT_FLAG_TIMING; unknown bits give
   *                     ::TB_ERROR_INVALID_ARGUMENT.
   * @param[out] event   Receives the handle, owned by the caller until destroy.
   * A new event counts as complete.  Does not block.
   */
  tb_status (*create)(tb_context ctx, int32_t device, uint32_t flags, tb_event *event);

  /** Destroys @p event; see "Destroying a busy event" above.  Does not block. */
  tb_status (*destroy)(tb_context ctx, tb_event event);

  /**
   * Records @p event at the current end of @p stream, replacing any earlier record (query,
   * synchronize and elapsed_time then refer to this record; waits enqueued earlier keep
   * waiting for the record they saw).  The
   * stream must belong to the event's device (otherwise ::TB_ERROR_INVALID_ARGUMENT).  For a
   * timing event, the timestamp is taken when the stream reaches the record, not when record
   * is called.  Asynchronous.
   */
  tb_status (*record)(tb_context ctx, tb_event event, tb_stream stream);

  /**
   * Reports whether the work before the latest record has finished: ::TB_OK when it has (or
   * the event was never recorded), ::TB_ERROR_NOT_READY otherwise; ::TB_ERROR_DEVICE_FAULT
   * while the event's device is faulted (see @ref tb_faults).  Does not block.
   */
  tb_status (*query)(tb_context ctx, tb_event event);

  /** Blocks until @p event completes.  Returns at once for an event never recorded.  Returns
   *  ::TB_ERROR_DEVICE_FAULT while the event's device is faulted (see @ref tb_faults).  May
   *  block. */
  tb_status (*synchronize)(tb_context ctx, tb_event event);

  /**
   * Optional.  Milliseconds between the completion of @p start and of @p end, both created
   * with ::TB_EVENT_FLAG_TIMING on the same device and both recorded.
   *
   * @param[out] ms  Receives the time; negative when @p end completed before @p start.
   * Returns ::TB_ERROR_NOT_READY if either has not completed, ::TB_ERROR_NOT_SUPPORTED if
   * either lacks ::TB_EVENT_FLAG_TIMING, ::TB_ERROR_INVALID_ARGUMENT if either was never
   * recorded or they belong to different devices.  When the pointer is NULL, torch_backend
   * reports timing as unsupported.  Does not block.
   */
  tb_status (*elapsed_time)(tb_context ctx, tb_event start, tb_event end, float *ms);
} tb_event_api;

/** @} */

/** @defgroup tb_kernel_group Kernels
 *
 * A vendor publishes compute kernels keyed by ATen operator name with overload, such as
 * "add.out" or "native_layer_norm".  torch_backend registers a PyTorch kernel for every
 * operator whose vendor kernel exists (decided once, when the vendor is loaded) and sends every
 * other operator to its CPU fallback.
 *
 * A kernel is one ::tb_kernel_fn: it receives the vendor's context and one ::tb_kernel_call,
 * which carries the stream, the arguments, the ::tb_kernel being called (so one function can
 * serve several kernels through tb_kernel::data) and a workspace allocator.
 *
 * @section tb_kernel_args Arguments
 *
 * A kernel receives the operator's arguments (tb_kernel_call::args) as an array of ::tb_value
 * in the order of the ATen schema, followed, for each returned tensor that is not one of the
 * arguments, by the output tensor torch_backend allocated for it.  Examples:
 *
 * - `add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)`:
 *   `[self, other, alpha, out]`.
 * - `native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias,
 *   float eps) -> (Tensor, Tensor, Tensor)`: `[input, normalized_shape, weight, bias, eps,
 *   out0, out1, out2]`.
 *
 * Functional and in-place variants of an operator that has an out variant all call the out
 * variant's kernel: `add.Tensor` and `add_.Tensor` call "add.out" with a freshly allocated
 * `out`, or with `out` being `self`.
 *
 * Shapes, dtypes and strides of outputs come from ATen's own meta functions; the kernel never
 * computes them.  Outputs are allocated by torch_backend's caching allocator before the call.
 *
 * @section tb_kernel_elementwise Elementwise operators
 *
 * For operators ATen implements with TensorIterator (unary, binary and ternary pointwise
 * operators, comparisons, `where`, activation backwards), torch_backend prepares the operands:
 * every tensor input has the output's shape (broadcast dimensions have stride 0) and the
 * operation's compute dtype (ATen's common dtype); a CPU scalar operand arrives as a
 * ::TB_VALUE_INT, ::TB_VALUE_DOUBLE or ::TB_VALUE_BOOL standing for a tensor of that constant.
 * The output has the compute dtype, or bool for comparisons and logical operators; any other
 * output dtype a user asks for is produced by torch_backend through a temporary and a copy.
 *
 * @section tb_kernel_aliasing Aliasing and contiguity
 *
 * - Outputs never overlap inputs, except that in-place variants pass the same tensor as input
 *   and output (same data, sizes and strides), and elementwise kernels must support that.
 * - Inputs may overlap each other.
 * - Tensors may be non-contiguous: any non-negative strides, 0 included.  Outputs that
 *   torch_backend allocates are contiguous (or follow the input's memory format, as ATen's
 *   meta functions decide); `out=` arguments and in-place operands are the user's tensors.
 *   A kernel that does not handle a layout returns ::TB_ERROR_NOT_SUPPORTED for that call,
 *   which then runs on the CPU fallback.
 *
 * @section tb_kernel_async Execution
 *
 * A kernel call validates its arguments and enqueues the work on the given stream; it does not
 * wait for it.  Everything the arguments point to (descriptors, size arrays, lists, strings) is
 * valid only during the call: the vendor copies what the work needs.  Tensor data is device
 * memory that torch_backend keeps alive until the stream has passed the work.
 *
 * A kernel that cannot handle these particular arguments (a dtype, a rank, an option it does
 * not implement) returns ::TB_ERROR_NOT_SUPPORTED without enqueuing anything; torch_backend
 * then runs that call on the CPU fallback.  Errors found while the work runs (an index out of
 * range) fault the device (see @ref tb_faults): every later synchronize or query reports them,
 * naming the operator, until the device is reset.  On a faulted device a kernel returns
 * ::TB_ERROR_DEVICE_FAULT without enqueuing anything.
 *
 * @section tb_kernel_workspace Workspace
 *
 * A kernel that needs scratch device memory (a library's workspace, a temporary for a layout
 * change) asks for it with tb_kernel_call::workspace instead of allocating it itself: the memory
 * comes from torch_backend's caching allocator on the call's device, so it costs no device
 * allocation in steady state and counts in the memory statistics.  It is stream-ordered, like
 * every block of the caching allocator: valid for the work this call enqueues on
 * tb_kernel_call::stream, and returned to the cache when the kernel returns, to be reused only
 * by work ordered after this call's work on that stream.  The kernel must therefore not use it
 * from another stream, nor from the host.
 *
 * @section tb_kernel_rng Random numbers
 *
 * An argument of type `Generator?` arrives as ::TB_VALUE_RNG: a Philox-4x32-10 key (`seed`) and
 * the first counter value (`offset`, in units of 32-bit outputs) reserved for this call from the
 * device's generator.  The kernel may use the `4 * numel` counter values that follow, where
 * `numel` is the element count of the operator's first tensor argument.
 *
 * @section tb_kernel_runtime Kernels torch_backend itself calls
 *
 * Besides the operators it registers, torch_backend's own built-in operators look up two
 * kernels by name and use them when present (otherwise they stage through the host):
 *
 * - "copy_" -- `[self, src, non_blocking]`: copies `src` into `self` element by element,
 *   converting the element type.  Both tensors are on the same device and have the same sizes
 *   (`src` is already broadcast: its broadcast dimensions have stride 0); strides and dtypes
 *   differ arbitrarily; `non_blocking` is false.  torch_backend uses it for copies between
 *   tensors of one device whose layouts or dtypes differ (a plain byte copy does the rest) and
 *   to rearrange a device tensor before a copy to the host.
 * - "fill_.Scalar" -- `[self, value]`, `value` a ::TB_VALUE_INT, ::TB_VALUE_DOUBLE or
 *   ::TB_VALUE_BOOL: sets every element of `self` (any strides) to `value` converted to its
 *   dtype.  torch_backend uses it for `fill_` and `zero_` on tensors that are not dense, and for
 *   values whose bytes are not all equal (a dense tensor with a uniform byte pattern is filled
 *   with tb_memory_api::memset_async instead).
 *
 * Both follow every rule of this section; returning ::TB_ERROR_NOT_SUPPORTED sends the call to
 * the staged path.
 *
 * @section tb_kernel_attention Attention (ABI 2.3)
 *
 * `scaled_dot_product_attention` on device tensors takes PyTorch's PrivateUse1 route,
 * `SDPBackend.OVERRIDEABLE`, when the vendor publishes both kernels below for the query's dtype
 * (and the user has not disabled that backend with `sdpa_kernel`); otherwise it takes the math
 * path, ATen's composite over the vendor's matmul and softmax kernels.  Both kernels are
 * published under the ATen operators' names and receive the operators' arguments in schema
 * order, with these conventions:
 *
 * - "_scaled_dot_product_fused_attention_overrideable" -- `[query, key, value, attn_bias,
 *   dropout_p, is_causal, return_debug_mask, scale, output, logsumexp, rng]`: query (B, H, L,
 *   E), key (B, H, S, E), value (B, H, S, Ev), all of one dtype and head count; attn_bias
 *   ::TB_VALUE_NONE or an additive mask of query's dtype already broadcast to (B, H, L, S)
 *   (boolean masks arrive converted: -inf where false); `scale` ::TB_VALUE_NONE means
 *   1 / sqrt(E); `is_causal` hides key j from query i when j > i.  The kernel writes `output`
 *   (B, H, L, Ev) and `logsumexp` (B, H, L, float32: the log-sum-exp of each row's scaled,
 *   masked scores).  `rng` is ::TB_VALUE_NONE when dropout_p is 0, else the key and first
 *   counter reserved for it: element (b, h, i, j) of the row-major (B, H, L, S) scores may use
 *   the four counter values of Philox block `offset / 4 + ((b * H + h) * L + i) * S + j`.
 * - "_scaled_dot_product_fused_attention_overrideable_backward" -- `[grad_out, query, key,
 *   value, attn_bias, grad_input_mask, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k,
 *   dropout_p, is_causal, philox_seed, philox_offset, scale, grad_query, grad_key, grad_value,
 *   grad_attn_bias]`: attn_bias as in the forward; cum_seq_q and cum_seq_k ::TB_VALUE_NONE;
 *   philox_seed and philox_offset ::TB_VALUE_INT, the forward's `rng` key and first counter,
 *   from which the kernel regenerates the forward's dropout mask; grad_attn_bias
 *   ::TB_VALUE_NONE unless grad_input_mask[3] and a bias exist, then (B, H, L, S), reduced to
 *   the bias's shape by torch_backend.  The kernel writes every gradient output it receives.
 *
 * A kernel that declines a call (::TB_ERROR_NOT_SUPPORTED) -- a forward or a backward, say
 * one asked for grad_attn_bias that its SDK cannot produce -- is replaced by the math
 * computation for that call; with dropout it raises NotImplementedError instead (the mask is
 * the vendor's to draw and regenerate).  A captured graph cannot hold a forward with dropout
 * yet.
 *
 * @section tb_kernel_quantized Quantized tensors (ABI 2.4)
 *
 * Quantized device tensors need nothing from a vendor: torch_backend keeps their integer
 * representation in device memory and computes on the CPU's quantizer.  A vendor that
 * publishes these two kernels quantizes and dequantizes per-tensor affine tensors (qint8,
 * quint8, qint32) on the device instead; both receive `[self, scale, zero_point, out]` --
 * scale ::TB_VALUE_DOUBLE (positive), zero_point ::TB_VALUE_INT -- and compute PyTorch's
 * reference arithmetic (ATen's quantize_val/dequantize_val; `backends/emu/kernels/quantize.c`
 * is one):
 *
 * - "quantize_per_tensor": `self` float32, `out` the representation (int8, uint8 or int32:
 *   which says the quantized dtype), of self's shape, any strides:
 *   out = clamp(nearbyint(x * inv) + zero_point), inv = 1 / (float)scale, the product rounded
 *   to float, ties to even, NaN giving the top of the 8-bit ranges and the bottom of int32's.
 *   PyTorch's own CPU kernels agree with it except at exact ties on some releases (2.13's
 *   FBGEMM loop adds the zero point before rounding).  tb_kernel::dtypes is about `self`.
 * - "dequantize.self": `self` the representation, `out` float32:
 *   out = (float)(self - zero_point) * (float)scale.  tb_kernel::dtypes is about `self`.
 *
 * Declining (::TB_ERROR_NOT_SUPPORTED) sends the call to the CPU.
 *
 * @section tb_kernel_schemas Schemas (ABI 2.0)
 *
 * A kernel states, in tb_kernel::schema, the ATen schema it was written for.  PyTorch releases
 * change operators now and then (an argument is added, renamed, becomes keyword-only); a
 * kernel keyed by name alone would then be called with arguments it does not expect.  When
 * the vendor loads, torch_backend parses the stated schema and compares it with the running
 * torch's schema of the operator named tb_kernel::name: the operator name and overload, every
 * argument's name, type (`int[2]` and `int[]` differ) and alias annotation (`Tensor(a!)`),
 * which arguments are keyword-only (after `*`), and the returns with their alias annotations
 * and names.  Default values are not compared: they never change what a kernel receives.
 *
 * A kernel whose schema differs, does not parse, or names an operator this torch does not have
 * is refused: torch_backend warns once, naming the operator and printing both schemas, and the
 * operator (with every variant that would have called the kernel) runs on the CPU fallback.
 * `torch_backend.refused_kernels()` and `torch_backend.op_coverage()` (state "refused") report
 * it in Python, and `tb-conformance --schemas FILE` reports it without torch, against the list
 * `python -m torch_backend.schemas > FILE` writes.  A NULL schema is accepted unchecked.
 *
 * @section tb_kernel_any_op Any ATen operator (ABI 2.0)
 *
 * A kernel may be published for any ATen operator whose arguments a ::tb_value can carry
 * (Tensor, Tensor?, Tensor[], Tensor?[], int, SymInt, float, bool, Scalar, str, ScalarType,
 * Generator?, int[] / SymInt[], bool[], and their optional forms), not only for those
 * torch_backend compiles wrappers for (its `codegen/ops.yaml`).  When the vendor loads,
 * torch_backend registers such a kernel through one generic wrapper built from the
 * dispatcher's schema, with the same argument order as above:
 *
 * - an out variant (`"hardtanh.out"`) serves itself and the functional and in-place variants
 *   whose schemas match it (`hardtanh`, `hardtanh_`): outputs are allocated by the caching
 *   allocator (functional), are `self` (in-place), or are the user's `out=` tensors resized as
 *   ATen resizes them;
 * - a functional kernel receives, after the arguments, one allocated output per returned
 *   tensor; an in-place or other mutating kernel receives the arguments only.
 *
 * Output shapes and dtypes come from ATen's meta functions, run on meta copies of the
 * arguments (memoized by the arguments' shapes).  Unlike the compiled wrappers of
 * @ref tb_kernel_elementwise, this path does not prepare operands: tensors arrive as the user
 * passed them (their own shapes, strides and dtypes; broadcasting is the kernel's job), and a
 * CPU scalar tensor arrives as a number.  A kernel declines (::TB_ERROR_NOT_SUPPORTED) what it
 * does not handle, a dtype mix for example, and that call runs on the CPU fallback.  An
 * argument type no ::tb_value kind carries (Layout, Device, MemoryFormat, float[], ...)
 * refuses the kernel at load with a message.  Kernels named after operators torch_backend
 * implements itself (`empty.memory_format`, `copy_`, `fill_.Scalar`, `zero_`, ...) are not
 * registered this way; torch_backend's own implementations call `copy_` and `fill_.Scalar`.
 *  @{ */

/** Element types of tensor data.  Values are stable; new types are appended. */
typedef enum tb_dtype {
  TB_DTYPE_BOOL = 0,     /**< 1 byte, 0 or 1 */
  TB_DTYPE_UINT8 = 1,    /**< uint8_t */
  TB_DTYPE_INT8 = 2,     /**< int8_t */
  TB_DTYPE_INT16 = 3,    /**< int16_t */
  TB_DTYPE_INT32 = 4,    /**< int32_t */
  TB_DTYPE_INT64 = 5,    /**< int64_t */
  TB_DTYPE_FLOAT16 = 6,  /**< IEEE 754 binary16 */
  TB_DTYPE_BFLOAT16 = 7, /**< bfloat16: the upper 16 bits of a binary32 */
  TB_DTYPE_FLOAT32 = 8,  /**< IEEE 754 binary32 */
  TB_DTYPE_FLOAT64 = 9,  /**< IEEE 754 binary64 */
  TB_DTYPE_COUNT = 10    /**< number of dtypes in this ABI version */
} tb_dtype;

/** The bit of @p dtype in tb_kernel::dtypes. */
#define TB_DTYPE_BIT(dtype) ((uint64_t)1 << (dtype))

/**
 * A strided view of device memory, as a kernel argument.
 *
 * Element `(i0, ..., in-1)` lives at `(char *)data + (i0 * strides[0] + ... ) * itemsize`.
 */
typedef struct tb_tensor {
  /** `sizeof(tb_tensor)` as the producer compiled it. */
  size_t struct_size;
  /** Device address of element (0, ..., 0) (storage offset applied); may be NULL when the
   *  tensor has no elements. */
  void *data;
  /** Element type. */
  tb_dtype dtype;
  /** Device index the memory belongs to. */
  int32_t device;
  /** Number of dimensions, 0 for a scalar tensor. */
  int32_t ndim;
  /** `ndim` sizes. */
  const int64_t *sizes;
  /** `ndim` strides in elements, each >= 0. */
  const int64_t *strides;
} tb_tensor;

/** What a ::tb_value holds.  Values are stable; new kinds are appended. */
typedef enum tb_value_kind {
  TB_VALUE_NONE = 0,        /**< an omitted optional argument (None) */
  TB_VALUE_TENSOR = 1,      /**< as.tensor */
  TB_VALUE_TENSOR_LIST = 2, /**< as.tensors: Tensor[] and Tensor?[] (an absent optional
                                 element is a NULL pointer) */
  TB_VALUE_INT = 3,         /**< as.i: int, SymInt, integral Scalar, or a CPU integer scalar */
  TB_VALUE_DOUBLE = 4,      /**< as.f: float, floating Scalar, or a CPU floating scalar */
  TB_VALUE_BOOL = 5,        /**< as.b (0 or 1): bool, boolean Scalar, or a CPU bool scalar */
  TB_VALUE_INT_LIST = 6,    /**< as.ints: int[] / SymInt[] */
  TB_VALUE_BOOL_LIST = 7,   /**< as.bools: bool[] */
  TB_VALUE_STRING = 8,      /**< as.string: str */
  TB_VALUE_DTYPE = 9,       /**< as.dtype: ScalarType */
  TB_VALUE_RNG = 10         /**< as.rng: Generator? (see @ref tb_kernel_rng) */
} tb_value_kind;

/** A list of tensors: tb_value::as for ::TB_VALUE_TENSOR_LIST. */
typedef struct tb_tensor_list {
  /** `count` pointers to tensors, each with its own tb_tensor::struct_size; a NULL element is an
   *  absent optional tensor (an element of a `Tensor?[]` that is None).  (ABI 1.x passed an
   *  array of tb_tensor structs, with `ndim` -1 for an absent element.) */
  const tb_tensor *const *items;
  /** Number of elements. */
  int64_t count;
} tb_tensor_list;

/** A list of integers: tb_value::as for ::TB_VALUE_INT_LIST. */
typedef struct tb_int_list {
  /** `count` integers. */
  const int64_t *items;
  /** Number of integers. */
  int64_t count;
} tb_int_list;

/** A list of booleans: tb_value::as for ::TB_VALUE_BOOL_LIST. */
typedef struct tb_bool_list {
  /** `count` values, each 0 or 1. */
  const int *items;
  /** Number of values. */
  int64_t count;
} tb_bool_list;

/** A random-number key and counter range: tb_value::as for ::TB_VALUE_RNG (see
 *  @ref tb_kernel_rng). */
typedef struct tb_rng_key {
  /** Philox key. */
  uint64_t seed;
  /** First reserved counter value. */
  uint64_t offset;
  /** ABI 2.3.  NULL, except in a call enqueued while its stream captures a graph (see
   *  @ref tb_graphs; only vendors with ::TB_EXTENSION_GRAPHS are captured): then a device
   *  pointer to two `uint64_t` that torch_backend rewrites, in stream order, before each
   *  replay -- the key, and a base counter.  The kernel's work must read them when it runs,
   *  not when it is enqueued, and use key `device_state[0]` and first counter
   *  `device_state[1] + offset` (`seed` is then the key at capture time and `offset` the
   *  counter relative to the graph's start), so that every replay draws new numbers, the same
   *  ones an eager run from the same generator state would draw.  The memory stays valid as
   *  long as the graph does. */
  const uint64_t *device_state;
} tb_rng_key;

/**
 * One kernel argument: a tagged union.
 *
 * Its size is fixed within a major version (`reserved` pads the union; it is the same in
 * majors 1 and 2): new kinds only use space within it, so arrays of tb_value keep their layout
 * across minor versions.
 */
typedef struct tb_value {
  /** Which member of `as` is valid. */
  tb_value_kind kind;
  /** The value. */
  union {
    /** ::TB_VALUE_TENSOR. */
    const tb_tensor *tensor;
    /** ::TB_VALUE_TENSOR_LIST. */
    tb_tensor_list tensors;
    /** ::TB_VALUE_INT. */
    int64_t i;
    /** ::TB_VALUE_DOUBLE. */
    double f;
    /** ::TB_VALUE_BOOL. */
    int b;
    /** ::TB_VALUE_INT_LIST. */
    tb_int_list ints;
    /** ::TB_VALUE_BOOL_LIST. */
    tb_bool_list bools;
    /** ::TB_VALUE_STRING, NUL-terminated. */
    const char *string;
    /** ::TB_VALUE_DTYPE. */
    tb_dtype dtype;
    /** ::TB_VALUE_RNG. */
    tb_rng_key rng;
    /** Fixes the union's size; never read. */
    uint8_t reserved[48];
  } as;
} tb_value;

struct tb_kernel;

/**
 * One kernel call: everything a ::tb_kernel_fn receives besides the context.
 *
 * Built by torch_backend for the duration of the call; nothing it points to outlives the call
 * (see @ref tb_kernel_async).
 */
typedef struct tb_kernel_call {
  /** `sizeof(tb_kernel_call)` as torch_backend compiled it.  A kernel reads members beyond
   *  `workspace` only when they lie inside it (::TB_STRUCT_HAS_FIELD). */
  size_t struct_size;
  /** The stream to enqueue on: the current stream of the output's device (of the first tensor
   *  argument's device for an operator without outputs). */
  tb_stream stream;
  /** The arguments (see @ref tb_kernel_args). */
  const tb_value *args;
  /** Number of arguments. */
  int32_t num_args;
  /** The ::tb_kernel being called, as the vendor published it: a kernel function shared by
   *  several kernels tells them apart by tb_kernel::name or tb_kernel::data. */
  const struct tb_kernel *kernel;
  /**
   * Stream-ordered scratch memory on the call's device from torch_backend's caching allocator
   * (see @ref tb_kernel_workspace).
   *
   * @param call       The call the kernel received (or a copy of it with the same
   *                   `host_private`, as a shim forwarding the call makes).
   * @param bytes      Size; 0 succeeds and stores NULL.
   * @param[out] ptr   Receives device memory aligned to ::TB_MEMORY_ALIGNMENT, valid for the
   *                   work this call enqueues on `stream` and released when the kernel
   *                   returns.  Unchanged on failure.
   * @return ::TB_OK, or ::TB_ERROR_OUT_OF_MEMORY when the allocator cannot provide it (the
   *         kernel then returns ::TB_ERROR_OUT_OF_MEMORY without enqueuing anything, and
   *         torch_backend raises `torch.OutOfMemoryError` with the allocator's message), or
   *         ::TB_ERROR_INVALID_ARGUMENT for a NULL @p ptr.  Does not set the vendor's last
   *         error.
   * May be called several times per call; only during the kernel call, on the calling thread.
   * May block briefly (the allocator's lock, a device allocation).
   */
  tb_status (*workspace)(const struct tb_kernel_call *call, size_t bytes, void **ptr);
  /** torch_backend's own state for the call; vendors never read or write it. */
  void *host_private;
} tb_kernel_call;

/**
 * A kernel: enqueue the operator's work on tb_kernel_call::stream.
 *
 * @param ctx    The vendor's context.
 * @param call   The call: stream, arguments, the kernel, workspace.  Valid only during the call.
 * @return ::TB_OK once enqueued; ::TB_ERROR_NOT_SUPPORTED (nothing enqueued) to have this call
 *         run on the CPU fallback; another status for a failure (nothing enqueued).
 * Asynchronous.  Called from any thread.
 */
typedef tb_status (*tb_kernel_fn)(tb_context ctx, const tb_kernel_call *call);

/** One published kernel. */
typedef struct tb_kernel {
  /** `sizeof(tb_kernel)` as the vendor compiled it. */
  size_t struct_size;
  /** ATen operator name with overload, for example "add.out", "mm.out", "_fused_adamw_". */
  const char *name;
  /** The kernel. */
  tb_kernel_fn fn;
  /** Bit set of the dtypes (::TB_DTYPE_BIT) of the first tensor argument the kernel handles;
   *  calls with another dtype go to the CPU fallback without calling the kernel. */
  uint64_t dtypes;
  /** Reserved for options of later minor versions: 0 (the loader rejects other values, which
   *  would ask for behaviour this torch_backend does not have). */
  uint32_t flags;
  /** ABI 2.0.  The ATen schema the kernel was written for, as PyTorch prints it, for example
   *  `"add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"`
   *  (the `aten::` prefix is optional; `python -m torch_backend.schemas` prints every schema of
   *  the installed torch).  When the vendor loads, torch_backend compares it with the running
   *  torch's schema of operator `name` (see @ref tb_kernel_schemas) and refuses the kernel when
   *  they differ.  NULL: unchecked -- the kernel is used as it is, and
   *  `torch_backend.unchecked_kernels()` and `tb-conformance` list it. */
  const char *schema;
  /** ABI 2.0.  The vendor's own pointer for this kernel (a descriptor, a function of its SDK);
   *  torch_backend never reads or writes through it; the kernel finds it through
   *  tb_kernel_call::kernel. */
  void *data;
} tb_kernel;

/** The kernel table.  Optional group: a vendor without kernels leaves tb_vendor::kernels NULL
 *  and every operator runs on the CPU fallback. */
typedef struct tb_kernel_api {
  /** `sizeof(tb_kernel_api)` as the vendor compiled it. */
  size_t struct_size;
  /** Number of kernels. */
  int64_t count;
  /** `count` kernels with distinct names, owned by the vendor, valid until it is unloaded. */
  const tb_kernel *const *kernels;
} tb_kernel_api;

/** @} */

/** @defgroup tb_extension_group Extensions (ABI 2.0)
 *
 * Optional feature groups reach torch_backend through a chain of extension structs hanging off
 * tb_vendor::extensions, in the style of PJRT's `PJRT_Extension_Base`: each starts with a
 * ::tb_extension_base saying its size and type and pointing at the next one.  A new feature
 * becomes a new extension type instead of a new member of ::tb_vendor, so a vendor opts in to
 * exactly the features it has, and a reader skips the types it does not know.  Each type
 * appears at most once in a chain; torch_backend refuses a chain that repeats one.
 *  @{ */

/** What an extension struct is.  Values are stable; new types are appended, so a reader meets
 *  values it does not know (from a newer vendor) and skips them: it compares the member as an
 *  integer rather than assuming it holds one of the values below. */
typedef enum tb_extension_type {
  /** A ::tb_custom_ops_extension: operators the vendor declares (see @ref tb_custom_ops). */
  TB_EXTENSION_CUSTOM_OPS = 1,
  /** ABI 2.2.  A ::tb_collectives_extension: the vendor's collectives library (see
   *  @ref tb_collectives). */
  TB_EXTENSION_COLLECTIVES = 2,
  /** ABI 2.3.  A ::tb_graphs_extension: capture and replay of stream work (see
   *  @ref tb_graphs). */
  TB_EXTENSION_GRAPHS = 3,
  /** ABI 2.4.  A ::tb_storage_meta_extension: per-storage metadata (see @ref tb_storage_meta). */
  TB_EXTENSION_STORAGE_META = 4,
  /** ABI 2.5.  A ::tb_ipc_extension: device memory shared between processes (see
   *  @ref tb_ipc). */
  TB_EXTENSION_IPC = 5,
  /** ABI 2.6.  A ::tb_programs_extension: device programs built from source at run time (see
   *  @ref tb_programs). */
  TB_EXTENSION_PROGRAMS = 6
} tb_extension_type;

/**
 * The first member of every extension struct.
 *
 * The chain and everything it points to is owned by the vendor, immutable, and valid until the
 * vendor library is unloaded.
 */
typedef struct tb_extension_base {
  /** `sizeof` the whole extension struct (not only this base) as the vendor compiled it. */
  size_t struct_size;
  /** Which extension this is; tells the reader what struct the base begins. */
  tb_extension_type type;
  /** The next extension, or NULL at the end of the chain. */
  const struct tb_extension_base *next;
} tb_extension_base;

/** @} */

/** @defgroup tb_custom_ops Custom operators (ABI 2.0)
 *
 * A vendor may declare operators of its own, such as a fused normalisation or attention,
 * through a ::tb_custom_ops_extension.  When the vendor loads, torch_backend defines each one
 * in PyTorch's dispatcher from its schema, where Python finds it as
 * `torch.ops.<namespace>.<name>`, and registers:
 *
 * - a kernel for the device: outputs are allocated by the caching allocator with the metadata
 *   the shape function gives, then tb_custom_op::fn enqueues the work;
 * - a Meta kernel that runs the shape function only, which serves meta tensors and the fake
 *   tensors of `torch.compile` and `torch.library.opcheck` (symbolic sizes are specialised to
 *   their values: the shape function sees integers);
 * - when tb_custom_op::backward names another operator of the table, an autograd formula
 *   (`torch.library.register_autograd`) that calls it.
 *
 * A custom operator is functional: its schema has a namespace other than `aten`, no alias
 * annotations, and returns one or more `Tensor`s.  Its kernel receives the arguments in schema
 * order followed by one output per returned tensor, exactly as a functional ATen kernel (see
 * @ref tb_kernel_args); tensors arrive as the caller passed them.  A custom operator has no
 * CPU fallback: a kernel that declines a call (::TB_ERROR_NOT_SUPPORTED, or a first tensor
 * whose dtype is outside tb_custom_op::dtypes) makes the call raise `NotImplementedError`
 * with the vendor's message.
 *
 * torch_backend refuses to load a vendor (the import fails with a message naming the vendor
 * and the operator) whose custom operator has a schema that does not parse, has no namespace
 * or the `aten` namespace, mutates or aliases an argument, returns something other than
 * tensors, takes an argument type no ::tb_value carries, or lacks `fn` or `shape`; or whose
 * `backward` names no operator of the table, or one whose schema does not take (one gradient
 * per returned tensor, then the forward's arguments) and return one tensor per tensor argument.
 *  @{ */

/** The most dimensions an output of a custom operator may have. */
#define TB_SHAPE_MAX_DIMS 16

/** One output's metadata, filled by a ::tb_shape_fn.  Outputs are contiguous. */
typedef struct tb_shape {
  /** Set by torch_backend to `sizeof(tb_shape)`; the vendor never writes it. */
  size_t struct_size;
  /** Element type of the output. */
  tb_dtype dtype;
  /** Number of dimensions, 0 for a scalar tensor, at most ::TB_SHAPE_MAX_DIMS.  -1 means no
   *  output at all: the operator returns an undefined tensor (None in Python) there, which is
   *  how a backward operator says "no gradient for this argument". */
  int32_t ndim;
  /** `ndim` sizes, each >= 0. */
  int64_t sizes[TB_SHAPE_MAX_DIMS];
} tb_shape;

/**
 * Computes a custom operator's output metadata from its arguments alone.
 *
 * @param ctx          The vendor's context (see tb_vendor::init).
 * @param args         The operator's arguments in schema order (no outputs), as a kernel gets
 *                     them, except that tensor arguments have `data` NULL: they may be meta or
 *                     fake tensors that have no memory.  Valid only during the call.
 * @param num_args     Number of arguments.
 * @param[out] outputs One ::tb_shape per returned tensor, zeroed by torch_backend with
 *                     `struct_size` set; the function fills `dtype`, `ndim` and `sizes`.
 * @param num_outputs  Number of outputs.
 * @return ::TB_OK, or a failure status with a message (tb_vendor::last_error) explaining what
 *         is wrong with the arguments (a shape mismatch, an unsupported dtype), which
 *         torch_backend raises as an error of the call.
 * Must not touch devices or block; called from any thread.
 */
typedef tb_status (*tb_shape_fn)(tb_context ctx, const tb_value *args, int32_t num_args,
                                 tb_shape *outputs, int32_t num_outputs);

/** One custom operator. */
typedef struct tb_custom_op {
  /** `sizeof(tb_custom_op)` as the vendor compiled it. */
  size_t struct_size;
  /** The operator's full schema with its namespace, for example
   *  `"emu::mymuladd(Tensor a, Tensor b, float c) -> Tensor"`.  Default values are allowed. */
  const char *schema;
  /** The kernel (see @ref tb_kernel_group for its contract). */
  tb_kernel_fn fn;
  /** Bit set of the dtypes (::TB_DTYPE_BIT) of the first tensor argument the kernel handles;
   *  0 means every dtype. */
  uint64_t dtypes;
  /** The vendor's own pointer, as tb_kernel::data. */
  void *data;
  /** The shape function: required. */
  tb_shape_fn shape;
  /** Optional: the name (`"emu::mymuladd_backward"`, or without the namespace) of another
   *  operator of the same table that computes the gradients.  It is called with one gradient
   *  per returned tensor of this operator followed by this operator's arguments, and returns
   *  one tensor per Tensor argument of this operator, in order (ndim -1 in its shape function:
   *  no gradient for that argument).  NULL: the operator is not differentiable. */
  const char *backward;
} tb_custom_op;

/** The ::TB_EXTENSION_CUSTOM_OPS extension: the vendor's custom operators. */
typedef struct tb_custom_ops_extension {
  /** `struct_size` is `sizeof(tb_custom_ops_extension)`, `type` ::TB_EXTENSION_CUSTOM_OPS. */
  tb_extension_base base;
  /** Number of operators. */
  int64_t count;
  /** `count` operators with distinct names, owned by the vendor. */
  const tb_custom_op *const *ops;
} tb_custom_ops_extension;

/** @} */

/** @defgroup tb_collectives Collectives (ABI 2.2)
 *
 * A vendor with a collectives library of its own (NCCL's role for CUDA, HCCL's for Ascend)
 * offers it through a ::tb_collectives_extension.  torch_backend's process group (`tbccl`,
 * see the Python package) then runs the collectives of device tensors through it, enqueued on
 * the device's streams, instead of over Gloo through host memory.  A vendor without the
 * extension still gets every collective, over Gloo.
 *
 * The model is NCCL's:
 *
 * - A *communicator* (::tb_comm) is one rank's membership of a group of `nranks` ranks, on one
 *   device.  Ranks are usually processes, one device each, but two communicators of one
 *   process on two devices are equally valid (the conformance suite runs two threads).  Rank
 *   0 calls tb_collectives_extension::get_unique_id, torch_backend sends the ::tb_comm_id to
 *   the other ranks (through the process group's store) and every rank calls
 *   tb_collectives_extension::comm_init with it.
 * - A collective is enqueued on a stream of the communicator's device and returns at once: it
 *   runs after the work before it on that stream and before the work after it, like a kernel.
 *   Every rank issues the same collectives, with the same counts, dtype, operation and root,
 *   in the same order; a rank's collectives on one communicator are issued from one thread at
 *   a time, on one stream.
 * - A collective that fails once it runs (a rank that disagrees about the count or dtype, a
 *   peer that exited, the communicator's timeout) faults the device (see @ref tb_faults) with
 *   a message naming the collective and the reason: torch_backend raises it from the next
 *   synchronisation, and the process group reports it as the collective's error.
 * - Buffers are device memory of the communicator's device, contiguous, `count` elements of
 *   `dtype` (see each call for how counts relate across ranks).  In-place operation
 *   (`send == recv`, or for all_gather `send == recv + rank * count`, for reduce_scatter
 *   `recv == send + rank * count`) is allowed.
 *
 * tb-conformance checks an extension it finds: two communicators on two devices, every
 * collective and reduction against the host's arithmetic, stream order, and that a rank that
 * disagrees about a count faults the device.
 *  @{ */

/** Size of ::tb_comm_id. */
#define TB_COMM_ID_BYTES 128

/** The rendezvous token of one group: opaque bytes made by the vendor on one rank and copied
 *  unchanged to the others. */
typedef struct tb_comm_id {
  /** The vendor's bytes. */
  unsigned char bytes[TB_COMM_ID_BYTES];
} tb_comm_id;

/** A communicator, created by tb_collectives_extension::comm_init. */
typedef struct tb_comm_impl *tb_comm;

/** Reduction of tb_collectives_extension::all_reduce and reduce_scatter.  Values are stable. */
typedef enum tb_reduce_op {
  TB_REDUCE_SUM = 0,     /**< sum (for bool: logical or) */
  TB_REDUCE_PRODUCT = 1, /**< product (for bool: logical and) */
  TB_REDUCE_MAX = 2,     /**< maximum */
  TB_REDUCE_MIN = 3,     /**< minimum */
  TB_REDUCE_AVG = 4      /**< sum divided by the number of ranks; floating-point dtypes only */
} tb_reduce_op;

/** Options of tb_collectives_extension::comm_init.  Grows by appending fields. */
typedef struct tb_comm_config {
  /** Set by torch_backend to `sizeof(tb_comm_config)`. */
  size_t struct_size;
  /** How long comm_init, and each collective once it runs, may wait for the other ranks before
   *  failing, in milliseconds; 0: the vendor's default. */
  int64_t timeout_ms;
} tb_comm_config;

/** The ::TB_EXTENSION_COLLECTIVES extension.  Every function but all_to_all is required;
 *  torch_backend refuses an extension that lacks one, naming it.  (Point-to-point send and
 *  recv, and what the extension lacks, go over Gloo.) */
typedef struct tb_collectives_extension {
  /** `struct_size` is `sizeof(tb_collectives_extension)`, `type` ::TB_EXTENSION_COLLECTIVES. */
  tb_extension_base base;
  /** Bit set (::TB_DTYPE_BIT) of the dtypes the collectives handle; the others go over Gloo. */
  uint64_t dtypes;

  /** Makes a fresh rendezvous token in @p id.  Called on one rank per group.  Does not block. */
  tb_status (*get_unique_id)(tb_context ctx, tb_comm_id *id);

  /**
   * Creates this rank's communicator of the group @p id on @p device.  Blocks until every one
   * of the @p nranks ranks has joined, or fails (::TB_ERROR_INTERNAL with a message) when they
   * have not within the timeout.
   *
   * @param config  Options; NULL: defaults.  Valid during the call only.
   * @param[out] comm  The communicator; unchanged on failure.
   */
  tb_status (*comm_init)(tb_context ctx, int32_t device, int32_t nranks, int32_t rank,
                         const tb_comm_id *id, const tb_comm_config *config, tb_comm *comm);

  /** Releases @p comm after the work enqueued with it has completed (the call may wait for it).
   *  The other ranks' communicators stay valid. */
  tb_status (*comm_destroy)(tb_context ctx, tb_comm comm);

  /** Reduces @p count elements of every rank's @p send with @p op into every rank's @p recv. */
  tb_status (*all_reduce)(tb_context ctx, tb_comm comm, const void *send, void *recv, size_t count,
                          tb_dtype dtype, tb_reduce_op op, tb_stream stream);

  /** Copies @p count elements of rank @p root's @p send into every rank's @p recv (@p send is
   *  read on the root only). */
  tb_status (*broadcast)(tb_context ctx, tb_comm comm, const void *send, void *recv, size_t count,
                         tb_dtype dtype, int32_t root, tb_stream stream);

  /** Gathers @p count elements of every rank's @p send into every rank's @p recv, which holds
   *  `nranks * count` elements: rank r's at `recv + r * count`. */
  tb_status (*all_gather)(tb_context ctx, tb_comm comm, const void *send, void *recv, size_t count,
                          tb_dtype dtype, tb_stream stream);

  /** Reduces every rank's @p send (`nranks * count` elements) with @p op and leaves block r
   *  (`count` elements at `r * count`) of the result in rank r's @p recv. */
  tb_status (*reduce_scatter)(tb_context ctx, tb_comm comm, const void *send, void *recv,
                              size_t count, tb_dtype dtype, tb_reduce_op op, tb_stream stream);

  /** Optional.  Every rank's @p send and @p recv hold `nranks * count` elements; block p of
   *  rank r's send arrives as block r of rank p's recv.  @p send and @p recv do not overlap. */
  tb_status (*all_to_all)(tb_context ctx, tb_comm comm, const void *send, void *recv, size_t count,
                          tb_dtype dtype, tb_stream stream);
} tb_collectives_extension;

/** @} */

/** @defgroup tb_graphs Graphs (ABI 2.3)
 *
 * A vendor may let torch_backend capture the work enqueued on a stream into a graph and replay
 * it later with one launch, through a ::tb_graphs_extension: what CUDA graphs are to CUDA and
 * aclgraph (`aclmdlRICaptureBegin`) to Ascend.  `torch.accelerator.Graph` (and
 * `torch.<device>.graph`) use it; small-kernel workloads then stop paying the host's cost per
 * launch.  A vendor without the extension has no graph capture: `torch.accelerator.Graph`
 * raises `NotImplementedError` naming the vendor.
 *
 * Between tb_graphs_extension::capture_begin and capture_end on a stream, that stream
 * captures:
 *
 * - the asynchronous calls that take the stream -- kernels, tb_memory_api::copy_h2d_async,
 *   copy_d2h_async, copy_d2d_async, memset_async, tb_stream_api::launch_host_func,
 *   tb_stream_api::inject_fault -- validate their arguments and return as usual, but their
 *   work is recorded into the graph instead of running.  Each replay runs it again, in the
 *   captured order, with the arguments of the capture: the same device addresses (their
 *   contents may change between replays: that is how a graph takes new inputs), the same host
 *   addresses for host-memory copies (read or written when the replay runs), the same scalars.
 *   Random kernels read their generator state from tb_rng_key::device_state when they run.
 * - Calls that would wait for captured work, or that cannot be recorded, fail with
 *   ::TB_ERROR_NOT_SUPPORTED and a message naming the call and the capture, and invalidate the
 *   capture: tb_stream_api::query and synchronize of the capturing stream,
 *   tb_device_api::synchronize of its device, tb_event_api::record on it and
 *   tb_stream_api::wait_event on it (for an event not yet complete; a vendor may support
 *   either, as below), and -- depending on the capture mode -- the blocking
 *   copies (copy_h2d, copy_d2h, copy_d2d) of the device.  capture_end of an invalidated
 *   capture fails (::TB_ERROR_NOT_SUPPORTED, the first error's message) and ends it without a
 *   graph.
 * - A vendor that accepts tb_event_api::record on a capturing stream captures several streams,
 *   with CUDA's rules (what PyTorch's autograd engine, whole-network capture and
 *   `make_graphed_callables` rely on): the record is a point in the graph, not work; a stream
 *   of the device that is not capturing and waits for that event joins the capture (a fork):
 *   its work from then on is captured into the same graph, after the work the event marks;
 *   a wait of a capturing stream for it orders what follows after the marked work (a join).
 *   capture_end, called on the stream that began the capture, ends it for every stream that
 *   joined, and fails (::TB_ERROR_NOT_SUPPORTED, invalidated) unless each joined stream was
 *   joined back: the beginning stream waited for an event recorded on it after its last
 *   captured work (cudaErrorStreamCaptureUnjoined).  capture_end on a stream that only joined
 *   fails and invalidates the capture (cudaErrorStreamCaptureUnmatched); a wait that would link
 *   two captures fails and invalidates both (cudaErrorStreamCaptureIsolation).  An event
 *   recorded in a capture cannot be queried or synchronized while the capture lasts (both
 *   fail and invalidate it); once it ended, the event has nothing to wait for.
 * - torch_backend itself never sends a capturing stream what cannot be captured: it raises,
 *   naming the operation, before calling the vendor (a CPU fallback, a blocking copy, a
 *   synchronize), and it serves allocations on the capturing stream from the graph's private
 *   memory pool, which stays reserved for the graph's replays.
 *
 * A graph belongs to the device of the stream it was captured on, and may be launched on any
 * stream of that device; launches of one graph run one after another, never concurrently with
 * each other.  Destroying a graph whose launches are queued is allowed: it goes away when they
 * are done.
 *
 * tb-conformance checks an extension it finds: capture of copies, memsets and host functions,
 * replays after changing the captured inputs, replay on another stream, the failures of the
 * calls above, and destroying a graph with queued launches.
 *  @{ */

/** A captured graph, created by tb_graphs_extension::capture_end.  Opaque like ::tb_stream. */
typedef struct tb_graph_impl *tb_graph;

/** What a capture prohibits besides the capturing stream's own synchronisation, as PyTorch's
 *  `capture_error_mode` (and CUDA's `cudaStreamCaptureMode`) define it.  Values are stable. */
typedef enum tb_capture_mode {
  /** While the capture lasts, no thread may make a potentially unsafe call on the device (a
   *  blocking copy): it fails and invalidates the capture.  PyTorch's default. */
  TB_CAPTURE_GLOBAL = 0,
  /** Only the thread that began the capture may not make potentially unsafe calls. */
  TB_CAPTURE_THREAD_LOCAL = 1,
  /** Potentially unsafe calls are allowed; only calls that conflict with the capture itself
   *  (synchronising the capturing stream or its device) fail. */
  TB_CAPTURE_RELAXED = 2
} tb_capture_mode;

/** The ::TB_EXTENSION_GRAPHS extension.  Every function is required. */
typedef struct tb_graphs_extension {
  /** `struct_size` is `sizeof(tb_graphs_extension)`, `type` ::TB_EXTENSION_GRAPHS. */
  tb_extension_base base;

  /**
   * Starts capturing @p stream.  Work already queued on it is not part of the graph (the caller
   * has usually synchronized it).
   * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT for a stream that is capturing already or an
   *         unknown @p mode; ::TB_ERROR_DEVICE_FAULT on a faulted device.  Does not block.
   */
  tb_status (*capture_begin)(tb_context ctx, tb_stream stream, tb_capture_mode mode);

  /**
   * Ends the capture of @p stream.
   * @param[out] graph  Receives the graph (which may be empty); NULL on failure.
   * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT when @p stream is not capturing;
   *         ::TB_ERROR_NOT_SUPPORTED when the capture was invalidated (the message is the
   *         first failure's), ::TB_ERROR_OUT_OF_MEMORY.  The capture ends in every case.
   * Does not block.
   */
  tb_status (*capture_end)(tb_context ctx, tb_stream stream, tb_graph *graph);

  /**
   * Enqueues one replay of @p graph on @p stream, a stream of the graph's device that is not
   * capturing.  Asynchronous: the replay runs after the work enqueued on @p stream before it,
   * and after every earlier launch of @p graph.
   * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT for a stream of another device or a capturing
   *         one; ::TB_ERROR_DEVICE_FAULT on a faulted device.  Failures while the replay runs
   *         fault the device, naming the captured work that failed.
   */
  tb_status (*graph_launch)(tb_context ctx, tb_graph graph, tb_stream stream);

  /** Releases @p graph; queued launches still run.  Does not block. */
  tb_status (*graph_destroy)(tb_context ctx, tb_graph graph);
} tb_graphs_extension;

/** @} */

/** @defgroup tb_storage_meta Per-storage metadata (ABI 2.4)
 *
 * Some devices keep facts about a tensor's memory beside the memory: Ascend's storage formats
 * (ND, NCHW, NC1HWC0, FRACTAL_NZ), a tiling or compression mode.  Such a fact belongs to the
 * storage -- the allocation behind a tensor and all its views -- and must survive what keeps
 * the storage (views, detach, in-place updates, torch.compile's graphs, which run on the
 * tensors given them) and torch.save/torch.load, which writes the bytes and reads them into a
 * new storage.  A vendor with a ::tb_storage_meta_extension keeps such facts as named integer
 * values per storage:
 *
 * - torch_backend calls tb_storage_meta_extension::set when a user sets a value
 *   (`torch_backend.set_storage_meta(t, "format", 29)`, or PyTorch's
 *   `torch._utils.set_tensor_metadata(t, {"format=29": True})`) and when torch.load rebuilds a
 *   storage that had values when saved; the vendor refuses a name or value it does not know
 *   (::TB_ERROR_INVALID_ARGUMENT, a message saying what it takes), and the caller gets that
 *   error.
 * - get lists a storage's values: `torch_backend.storage_meta(t)` and torch.save (in PyTorch's
 *   tensor metadata, whose values are booleans: each value travels as the key "name=value").
 * - release tells the vendor that a storage it holds values for was freed (its memory goes
 *   back to the caching allocator, which may hand it to a new storage): the values go.
 *
 * A storage is named by its device and the address of its first byte (`data`), which is the
 * address of an allocation of torch_backend's caching allocator (a block of a segment from
 * tb_memory_api::device_malloc, not necessarily a whole segment).  A new storage -- an
 * operator's result, a clone, a copy -- starts with no values; the vendor's kernels may read
 * the values of their tensors' storages by address.  Work already enqueued that uses a
 * storage may still run after its release.
 *
 * Without the extension, storages have no values, torch.save writes none, and setting one
 * raises NotImplementedError naming the vendor.  tb-conformance checks an extension it finds:
 * set, get and release round trips, refusals, and values kept apart per storage and device.
 *  @{ */

/** The ::TB_EXTENSION_STORAGE_META extension.  Every function is required; all are called
 *  from any thread, and none blocks on device work.  release may be called for a storage that
 *  has no values (one whose set failed): it then does nothing. */
typedef struct tb_storage_meta_extension {
  /** `struct_size` is `sizeof(tb_storage_meta_extension)`, `type` ::TB_EXTENSION_STORAGE_META. */
  tb_extension_base base;

  /** The names the vendor takes, NULL-terminated (its values it checks itself), or NULL when it
   *  takes any name.  torch_backend refuses other names before calling set; tb-conformance
   *  checks that set refuses them too. */
  const char *const *names;

  /**
   * Sets the value named @p name of the storage at @p data (@p bytes long) on @p device,
   * replacing the value of that name it had.
   * @param name  A C identifier of at most 31 characters (torch_backend checks the form).
   * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT for a name or value the vendor does not take,
   *         with a message naming it and what it takes; ::TB_ERROR_OUT_OF_MEMORY.
   */
  tb_status (*set)(tb_context ctx, int32_t device, void *data, size_t bytes, const char *name,
                   int64_t value);

  /**
   * Lists the values of the storage at @p data on @p device: up to @p capacity names into
   * @p names (strings the vendor owns, valid until the storage's release or the next set on
   * it) and values into @p values.
   * @param[out] count  Receives how many values the storage has, which may exceed @p capacity
   *                    (call again with more room); 0 for a storage without values.
   * @return ::TB_OK.
   */
  tb_status (*get)(tb_context ctx, int32_t device, const void *data, const char **names,
                   int64_t *values, int32_t capacity, int32_t *count);

  /** The storage at @p data on @p device, which has values, was freed: forget them.
   *  @return ::TB_OK. */
  tb_status (*release)(tb_context ctx, int32_t device, void *data);
} tb_storage_meta_extension;

/** @} */

/** @defgroup tb_ipc Device memory shared between processes (ABI 2.5)
 *
 * A device tensor put on a torch.multiprocessing Queue (or passed to a Pool, or any pickling
 * by multiprocessing's ForkingPickler) reaches the other process as a tensor over the same
 * device memory, not a copy -- what CUDA does with cudaIpcGetMemHandle.  A vendor with a
 * ::tb_ipc_extension makes that possible; torch_backend does the rest, with CUDA's rules:
 *
 * - The producer exports the whole allocation behind a storage (a segment from
 *   tb_memory_api::device_malloc; the storage is somewhere inside it) and sends the handle,
 *   the storage's place in the allocation and a slot of a shared reference count.  It keeps
 *   the storage alive until every consumer has released it, even after its own tensors are
 *   gone.
 * - The consumer imports the handle once per allocation (the import is shared by every storage
 *   it receives from that allocation) and closes it when the last of them is freed.
 * - Work the producer queued on the storage's memory before sending is complete before the
 *   consumer's tensor is returned to it.
 * - A tensor received from another process cannot be sent on again (CUDA's rule too): the
 *   producer alone knows when its memory may be freed.
 *
 * Without the extension, pickling a device tensor for another process raises
 * NotImplementedError naming the vendor (for a Queue, in its feeder thread, which reports it
 * and drops the item, as it does for anything it cannot pickle).
 * tb-conformance checks an extension it finds by exporting an allocation and importing it in
 * the same process: the two addresses must show the same bytes both ways, and close must
 * leave the exported allocation intact.
 *  @{ */

/** The opaque bytes of a handle, at most (CUDA's cudaIpcMemHandle_t has 64). */
#define TB_IPC_HANDLE_BYTES 64

/**
 * What names an exported allocation to another process.  A handle crosses processes as it
 * is: torch_backend pickles @p bytes and @p size, and sends @p fd (when not -1) the way the
 * operating system passes descriptors (SCM_RIGHTS), so the importing process receives its own
 * descriptor of the same open file -- a memfd or dma-buf, for instance -- in @p fd.
 */
typedef struct tb_ipc_handle {
  /** A descriptor the handle needs, or -1.  export_memory's descriptor belongs to the caller,
   *  who closes it once sent; import_memory's stays the caller's too (the vendor duplicates
   *  or maps what it keeps). */
  int32_t fd;
  /** The exported allocation's size in bytes. */
  uint64_t size;
  /** Vendor data naming the allocation (a key, an offset, the exporting process). */
  unsigned char bytes[TB_IPC_HANDLE_BYTES];
} tb_ipc_handle;

/** The ::TB_EXTENSION_IPC extension.  Every function is required and may be called from any
 *  thread; none waits for device work. */
typedef struct tb_ipc_extension {
  /** `struct_size` is `sizeof(tb_ipc_extension)`, `type` ::TB_EXTENSION_IPC. */
  tb_extension_base base;

  /**
   * Exports the allocation that starts at @p ptr (an address tb_memory_api::device_malloc
   * returned on @p device and has not been freed) so that other processes can import it.  The
   * export lasts as long as the allocation: the vendor ends it when the allocation is freed.
   * @param[out] handle  Receives the handle.
   * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT when @p ptr is not the start of a live
   *         allocation of @p device; ::TB_ERROR_UNAVAILABLE when the system refuses (out of
   *         descriptors), with the system's reason.
   */
  tb_status (*export_memory)(tb_context ctx, int32_t device, void *ptr, tb_ipc_handle *handle);

  /**
   * Imports, in this process, an allocation another process exported on device @p device:
   * @p ptr receives an address of @p device whose `handle->size` bytes are the exported
   * allocation's -- usable by every copy, memset and kernel like device_malloc's memory, and
   * not to be passed to device_free.
   * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT for a handle the vendor cannot read (another
   *         vendor's, a damaged one) or whose exporter has ended the export, with why;
   *         ::TB_ERROR_OUT_OF_MEMORY when there is no room to map it.
   */
  tb_status (*import_memory)(tb_context ctx, int32_t device, const tb_ipc_handle *handle,
                             void **ptr);

  /** Ends an import: @p ptr, from import_memory on @p device, is no longer used (work that
   *  used it has completed).  The exporter's allocation is untouched.
   *  @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT when @p ptr is no import of @p device. */
  tb_status (*close_memory)(tb_context ctx, int32_t device, void *ptr);
} tb_ipc_extension;

/** @} */

/** @defgroup tb_programs Device programs built at run time (ABI 2.6)
 *
 * Kernels that exist only once the program runs: the fused kernels torch.compile generates
 * for a graph, and the kernels a user writes as a string (`torch.<device>.compile_kernel`).  A
 * vendor whose device runs programs it builds from source -- OpenCL C, SPIR-V, PTX, its own
 * language -- offers that through a ::tb_programs_extension, the way CUDA offers NVRTC and the
 * driver API's cuModuleLoadData / cuLaunchKernel, and OpenCL clBuildProgram /
 * clEnqueueNDRangeKernel:
 *
 * - tb_programs_extension::languages says which source languages the vendor builds
 *   (::tb_program_language); torch.compile generates code for the first it knows.
 * - tb_programs_extension::build compiles a source with options into a ::tb_program for one
 *   device; a source that does not compile fails with ::TB_ERROR_INVALID_ARGUMENT and the
 *   compiler's log in the last error, which torch_backend shows the user.
 * - tb_programs_extension::get_kernel finds a kernel of the program by name and describes its
 *   parameters (::tb_program_param): device memory or a scalar of a given size.
 * - tb_programs_extension::launch queues the kernel on a stream, in stream order like any
 *   kernel, over a grid of work items in up to three dimensions (::tb_launch_dims), with one
 *   value per parameter: a device pointer (an address from tb_memory_api::device_malloc, or
 *   inside one) or a scalar's bytes.
 * - tb_programs_extension::release frees a program and its kernels once work queued with them
 *   no longer needs them (the vendor keeps what queued work still uses).
 *
 * Builds are slow (tens to hundreds of milliseconds) and the same sources come back in every
 * process, so a vendor should cache what it builds across processes -- on disk, under a key
 * made of everything that decides the binary (device, driver, options and source).
 * torch_backend also keeps each program it built for the life of the process, keyed by source
 * and options, and calls build once per key and device.
 *
 * Device faults (@ref tb_faults) apply: a kernel that finds an error writes it where the
 * vendor's own kernels would, and the next synchronizing call reports it.  Since ABI 2.7 a
 * vendor says how in each language it builds; in OpenCL C it defines two macros in every
 * program (no other names of its own):
 *
 * - `TB_FAULT_PARAM`, which a kernel that may find an error declares among its parameters
 *   (last, by convention).  It stands for parameters of the vendor's choosing (on opencl the
 *   device's fault record and the kernel's name in it), which the vendor binds at each launch:
 *   tb_programs_extension::get_kernel does not describe them, and a launch passes values for
 *   the other parameters only.
 * - `TB_FAULT_INDEX(index, size)`, a statement: `index` (a signed integer) is outside
 *   `[0, size)`.  The kernel goes on, and must not touch memory through that index; the next
 *   synchronizing call on the device fails with ::TB_ERROR_DEVICE_FAULT, naming the kernel,
 *   the index and the size, and the device stays faulted until tb_device_api::reset.
 *
 * A source can test `#ifdef TB_FAULT_PARAM` to build for vendors with and without them
 * (torch.compile's kernels do: without, an index out of range is only skipped).  tb-conformance
 * checks an extension it finds with a source in each language the vendor declares that it
 * knows: a build error's log, an unknown kernel, parameter descriptions, a launch over an odd
 * number of work items reading and writing device memory at an offset, scalars of each size,
 * launch arguments refused, and release.  A vendor without the extension keeps compiled graphs
 * on its own kernels, and compile_kernel raises NotImplementedError naming it.
 *  @{ */

/** A source language of device programs.  Values are stable; new languages are appended. */
typedef enum tb_program_language {
  /** OpenCL C (OpenCL 1.2's, or the device's newer version).  Device memory parameters are
   *  `__global T *`; scalars are OpenCL C scalars (`int`, `long`, `float`, ...).  Faults:
   *  `TB_FAULT_PARAM` and `TB_FAULT_INDEX` (ABI 2.7, above). */
  TB_PROGRAM_OPENCL_C = 1,
  /** SPIR-V binary modules (OpenCL's or Vulkan's environment, the vendor says which). */
  TB_PROGRAM_SPIRV = 2,
  /** NVIDIA PTX assembly. */
  TB_PROGRAM_PTX = 3,
  /** ISO C11 compiled for and run by the host, over device pointers it may address (a device
   *  with ::TB_DEVICE_HOST_ACCESS). */
  TB_PROGRAM_HOST_C = 4,
  /** The first value of a vendor's own languages: vendors agree on nothing above it, and
   *  torch.compile generates none of them. */
  TB_PROGRAM_VENDOR = 1024
} tb_program_language;

/** The bit of @p language in tb_programs_extension::languages (languages below 64). */
#define TB_PROGRAM_LANGUAGE_BIT(language) (UINT64_C(1) << (unsigned)(language))

/** A program built for one device, by tb_programs_extension::build.  Opaque. */
typedef struct tb_program_impl *tb_program;
/** A kernel of a ::tb_program, from tb_programs_extension::get_kernel; lives as long as its
 *  program.  Opaque. */
typedef struct tb_program_kernel_impl *tb_program_kernel;

/** What a kernel parameter is.  Values are stable. */
typedef enum tb_param_kind {
  /** Device memory: the launch passes a device pointer (`void *`). */
  TB_PARAM_POINTER = 1,
  /** A signed integer of tb_program_param::size bytes (1, 2, 4 or 8). */
  TB_PARAM_INT = 2,
  /** An unsigned integer of tb_program_param::size bytes (1, 2, 4 or 8). */
  TB_PARAM_UINT = 3,
  /** A floating-point number of tb_program_param::size bytes (2, 4 or 8). */
  TB_PARAM_FLOAT = 4,
  /** Anything else passed by value (a struct, a vector type): tb_program_param::size bytes
   *  the caller lays out as the language does. */
  TB_PARAM_BYTES = 5
} tb_param_kind;

/** One parameter of a kernel, as tb_programs_extension::get_kernel describes it. */
typedef struct tb_program_param {
  /** What it is. */
  tb_param_kind kind;
  /** Its size in bytes: `sizeof(void *)` for ::TB_PARAM_POINTER. */
  uint32_t size;
} tb_program_param;

/** What tb_programs_extension::get_kernel tells about a kernel.  Owned by the vendor, valid
 *  as long as the kernel's program. */
typedef struct tb_program_kernel_info {
  /** `sizeof(tb_program_kernel_info)` as the vendor compiled it. */
  size_t struct_size;
  /** How many parameters the kernel takes. */
  uint32_t param_count;
  /** Each parameter, in order: `param_count` entries. */
  const tb_program_param *params;
  /** The most work items one work group (thread block) of this kernel may hold on its
   *  device. */
  uint64_t max_group_size;
} tb_program_kernel_info;

/** The grid of a launch: `global[d]` work items in each of `dims` dimensions, in work groups
 *  of `local[d]` (all 0: the vendor chooses).  Unused dimensions are ignored. */
typedef struct tb_launch_dims {
  /** 1, 2 or 3. */
  uint32_t dims;
  /** Work items in each dimension; 0 in a used dimension launches nothing. */
  uint64_t global[3];
  /** Work items per group in each dimension, or all 0.  `global[d]` need not be a multiple
   *  of `local[d]`: the vendor may then run whole groups, up to the next multiple (OpenCL
   *  1.2 and CUDA do), so a kernel checks its index against the size it was given. */
  uint64_t local[3];
} tb_launch_dims;

/** The ::TB_EXTENSION_PROGRAMS extension.  Every function is required and may be called from
 *  any thread. */
typedef struct tb_programs_extension {
  /** `struct_size` is `sizeof(tb_programs_extension)`, `type` ::TB_EXTENSION_PROGRAMS. */
  tb_extension_base base;

  /** The languages the vendor builds: ::TB_PROGRAM_LANGUAGE_BIT of each; not 0. */
  uint64_t languages;

  /**
   * Builds @p source, @p size bytes in @p language (text need not end with a NUL), for
   * @p device, with @p options (the language's compiler options, such as "-cl-fast-relaxed-math"
   * for OpenCL C; "" or NULL for none).  May take long; may use a cache.
   * @param[out] program  Receives the program.  Unchanged on failure.
   * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT when the source does not build (the last
   *         error holds the compiler's log), the language is not one the vendor builds, or
   *         the options are refused; ::TB_ERROR_OUT_OF_MEMORY; ::TB_ERROR_DEVICE_FAULT.
   */
  tb_status (*build)(tb_context ctx, int32_t device, tb_program_language language,
                     const char *source, size_t size, const char *options, tb_program *program);

  /**
   * Finds the kernel @p name of @p program.
   * @param[out] kernel  Receives the kernel.
   * @param[out] info    Receives its description (the vendor sets every field the caller's
   *                     `info->struct_size` holds).
   * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT when the program has no such kernel (naming
   *         it), or a kernel has a parameter the vendor cannot describe.
   */
  tb_status (*get_kernel)(tb_context ctx, tb_program program, const char *name,
                          tb_program_kernel *kernel, tb_program_kernel_info *info);

  /**
   * Queues @p kernel on @p stream (of the program's device) over @p dims, with @p args: one
   * pointer per parameter, to the parameter's value -- for ::TB_PARAM_POINTER a `void *`
   * holding the device pointer (NULL allowed), otherwise the parameter's `size` bytes -- read
   * before the call returns (the caller's variables may change afterwards).  A device pointer
   * may lie anywhere inside an allocation; a device that can pass memory to a kernel only at
   * aligned places (OpenCL 1.2 buffers: CL_DEVICE_MEM_BASE_ADDR_ALIGN) may refuse others,
   * saying so -- every device takes multiples of 4096 bytes.  Returns once the launch is
   * queued: the kernel runs after the work queued before it on the stream.
   * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT for @p arg_count other than the kernel's
   *         parameter count, a device pointer that is no memory of the device, a stream of
   *         another device, or dimensions the device cannot run (saying which);
   *         ::TB_ERROR_DEVICE_FAULT.
   */
  tb_status (*launch)(tb_context ctx, tb_stream stream, tb_program_kernel kernel,
                      const tb_launch_dims *dims, const void *const *args, size_t arg_count);

  /**
   * Releases @p program and its kernels.  Launches already queued still run.
   * @return ::TB_OK; ::TB_ERROR_INVALID_ARGUMENT for NULL.
   */
  tb_status (*release)(tb_context ctx, tb_program program);
} tb_programs_extension;

/** @} */

/** @defgroup tb_vendor_group The vendor table and its entry point
 *  @{ */

/**
 * What torch_backend tells the vendor about itself when it calls tb_vendor::init.
 *
 * Owned by torch_backend, valid during the call only (copy what you keep).  Grows by appending
 * fields: read those beyond `torch_version` only when ::TB_STRUCT_HAS_FIELD says they are there.
 */
typedef struct tb_host_api {
  /** `sizeof(tb_host_api)` as torch_backend compiled it. */
  size_t struct_size;
  /** The ABI major torch_backend speaks (::TB_ABI_VERSION_MAJOR of its build; for a vendor
   *  loaded through the 1.x adapter there is no init, so a vendor's init always sees 2 or
   *  more). */
  uint32_t abi_major;
  /** The ABI minor torch_backend was built against. */
  uint32_t abi_minor;
  /** The PyTorch release torch_backend runs under, such as "2.13.0+cpu", for messages and
   *  vendor logs; NULL when torch_backend runs without PyTorch (the conformance suite). */
  const char *torch_version;
} tb_host_api;

/**
 * Everything torch_backend knows about a vendor: identity, its context's life cycle, the
 * last-error function and the function groups.
 *
 * Returned by ::tb_vendor_get.  The table and everything it points to is owned by the vendor,
 * immutable, and valid until the vendor library is unloaded.  Groups are reached through
 * pointers so that each can grow on its own (every group has its own `struct_size`).
 */
typedef struct tb_vendor {
  /** `sizeof(tb_vendor)` as the vendor compiled it. */
  size_t struct_size;
  /** The ABI major the table implements; must equal the major requested from
   *  ::tb_vendor_get. */
  uint32_t abi_major;
  /** The ABI minor the vendor was built against. */
  uint32_t abi_minor;
  /** The device type users type in `torch.device(...)`, for example "emu".  Lowercase ASCII
   *  letters, digits and '_', starting with a letter, at most 31 characters, and not a name
   *  PyTorch already uses ("cpu", "cuda", ...). */
  const char *device_type;
  /** Human-readable vendor or product name, for messages and `vendor_info()`. */
  const char *vendor_name;
  /** The vendor library's own version string, free-form (for example "2.1.0"). */
  const char *vendor_version;

  /**
   * Optional.  Creates the vendor's context (see @ref tb_context_rules for when torch_backend
   * calls it: once, before any other call, fork-safe).
   *
   * @param host      What torch_backend is (::tb_host_api); valid during the call only.
   * @param[out] ctx  Receives the context passed to every later call (NULL is allowed).
   *                  Unchanged on failure.
   * @return ::TB_OK, or a failure whose last_error(NULL) message says why (no driver, a bad
   *         environment variable, a host ABI the vendor does not support): the vendor is then
   *         unusable in this process.  last_error is called with a NULL context for it.
   * When NULL, every call receives a NULL context.  May block while the vendor initialises.
   */
  tb_status (*init)(const tb_host_api *host, tb_context *ctx);

  /**
   * Optional.  Releases @p ctx after the last call torch_backend makes with it (see
   * @ref tb_context_rules): at process exit for the runtime, never in a forked child.  Work
   * still queued on the context's streams has been waited for by the caller (synchronize) or
   * may be abandoned; streams, events and allocations the caller did not release may still
   * exist, and the vendor reclaims them.  May block briefly; must not fail.
   */
  void (*finalize)(tb_context ctx);

  /**
   * Message describing the most recent failed call (any status other than ::TB_OK and
   * ::TB_ERROR_NOT_READY) made on the calling thread with @p ctx, init included (for which
   * @p ctx is NULL); "" if there was none.  Never NULL.  The string is owned by the vendor and
   * valid until the next vendor call on the same thread.  Does not block.
   */
  const char *(*last_error)(tb_context ctx);

  /** Device discovery; required. */
  const tb_device_api *device;
  /** Memory and copies; required. */
  const tb_memory_api *memory;
  /** Streams; required. */
  const tb_stream_api *stream;
  /** Events; required. */
  const tb_event_api *event;
  /** Kernels; optional (see @ref tb_kernel_group). */
  const tb_kernel_api *kernels;
  /** ABI 2.0.  The first extension of the chain (see @ref tb_extension_group); NULL when the
   *  vendor has none. */
  const tb_extension_base *extensions;
} tb_vendor;

/** Name of the entry point every vendor library exports (see ::tb_vendor_get). */
#define TB_VENDOR_ENTRY_POINT "tb_vendor_get"

/**
 * Signature of the vendor entry point.
 *
 * @param abi_major   The ABI major torch_backend asks for: its own (::TB_ABI_VERSION_MAJOR of
 *                    the caller) first, then, when the vendor returns NULL, each older major it
 *                    still loads (see @ref tb_history).
 * @param[out] error  On failure, receives a static, human-readable reason (for example "this
 *                    library implements ABI major 3 only" or "no driver found"); may be NULL.
 * @return The vendor's table for @p abi_major, or NULL when the vendor cannot serve it.
 *
 * Must be cheap and must not initialise anything: torch_backend calls it at import time, and
 * the vendor initialises in tb_vendor::init and lazily on the first call that needs a device.
 * May be called several times, from any thread; returns the same table each time.
 */
typedef const tb_vendor *(*tb_vendor_get_fn)(uint32_t abi_major, const char **error);

/** The entry point, exported with C linkage by every vendor library.  See ::tb_vendor_get_fn. */
TB_EXPORT const tb_vendor *tb_vendor_get(uint32_t abi_major, const char **error);

/** @} */

/** @defgroup tb_min_sizes Minimum struct sizes of ABI 2.0
 *  The smallest `struct_size` a vendor implementing major 2 may report for each struct: the
 *  size the struct had in ABI 2.0.  The loader refuses smaller tables, naming the struct.
 *  Every function slot of ABI 2.0 lies inside these sizes (vendor_slots.h checks it), so a
 *  2.0 vendor's groups are complete; slots appended in later minors are absent from older
 *  vendors' groups and read as NULL.
 *  @{ */
/** Smallest valid tb_vendor::struct_size. */
#define TB_VENDOR_V2_0_SIZE TB_STRUCT_SIZE(tb_vendor, kernels)
/** Smallest valid tb_device_api::struct_size. */
#define TB_DEVICE_API_V2_0_SIZE TB_STRUCT_SIZE(tb_device_api, reset)
/** Smallest valid tb_memory_api::struct_size. */
#define TB_MEMORY_API_V2_0_SIZE TB_STRUCT_SIZE(tb_memory_api, get_info)
/** Smallest valid tb_stream_api::struct_size. */
#define TB_STREAM_API_V2_0_SIZE TB_STRUCT_SIZE(tb_stream_api, inject_fault)
/** Smallest valid tb_event_api::struct_size. */
#define TB_EVENT_API_V2_0_SIZE TB_STRUCT_SIZE(tb_event_api, elapsed_time)
/** Smallest valid tb_kernel_api::struct_size. */
#define TB_KERNEL_API_V2_0_SIZE TB_STRUCT_SIZE(tb_kernel_api, kernels)
/** Smallest valid tb_kernel::struct_size. */
#define TB_KERNEL_V2_0_SIZE TB_STRUCT_SIZE(tb_kernel, data)
/** Smallest tb_kernel_call::struct_size a kernel can be given. */
#define TB_KERNEL_CALL_V2_0_SIZE TB_STRUCT_SIZE(tb_kernel_call, host_private)
/** Smallest tb_host_api::struct_size init can be given. */
#define TB_HOST_API_V2_0_SIZE TB_STRUCT_SIZE(tb_host_api, torch_version)
/** @} */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORCH_BACKEND_VENDOR_H_ */
