/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The opencl vendor's internal interface: the context and the devices (vendor.c, device.c),
 * the address table that turns the ABI's device pointers into OpenCL memory (memory.c),
 * streams and events over command queues (stream.c), programs compiled per device and cached
 * on disk (program.c), and the error model (error.c) that every part reports through.
 *
 * The vendor talks to OpenCL only through the ICD loader (libOpenCL.so) and the Khronos
 * headers; OpenCL 1.2's core API is the floor, and 2.0's coarse-grained SVM is used where every
 * chosen device has it.  Everything lives in the tb_context: several contexts (tools that load
 * the library twice) each have their own cl_context and share nothing but the thread-local
 * last error.
 */
#ifndef TB_OPENCL_OPENCL_H_
#define TB_OPENCL_OPENCL_H_

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif

#include <CL/cl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <torch_backend/vendor.h>

#include "../common/capture.h"

/** How device pointers map onto OpenCL memory (docs/decisions.md, "OpenCL memory"). */
typedef enum ocl_memory_mode {
  /** OpenCL 1.2: every allocation is a cl_mem; its device pointer is an address of a range
   *  this vendor hands out, mapped back to (cl_mem, offset) through the address table. */
  OCL_MEMORY_BUFFER = 0,
  /** OpenCL 2.0 coarse-grained SVM: device pointers are clSVMAlloc's; kernels take them as
   *  they are (clSetKernelArgSVMPointer), copies use clEnqueueSVMMemcpy.  Each allocation
   *  also has a cl_mem over the same bytes, for libraries that take buffers (CLBlast). */
  OCL_MEMORY_SVM = 1
} ocl_memory_mode;

/** One allocation: the device pointer handed out, its size and the memory behind it. */
typedef struct ocl_block {
  uintptr_t base;
  size_t size;
  cl_mem mem; /* the buffer (both modes: in SVM mode, a buffer over the SVM bytes) */
  int32_t device;
} ocl_block;

/** Where a device pointer lives: the buffer and the byte offset in it. */
typedef struct ocl_place {
  cl_mem mem;
  size_t offset;
  void *svm; /* OCL_MEMORY_SVM: the pointer itself; NULL in buffer mode */
} ocl_place;

/** The bytes a kernel that detects a failure (an index out of range) writes, once, at the
 *  first failure on the device: program.c's OCL_FAULT_RECORD_SOURCE declares the same. */
typedef struct ocl_fault_record {
  cl_uint code;      /* 0: no failure; otherwise the site (ocl_fault_site) + 1 */
  cl_uint op;        /* the failing operator: its index in the device's fault_ops */
  cl_long values[2]; /* the site's message's two integers */
} ocl_fault_record;

/** Device-side failures that kernels detect, each with its message's format (two `%lld`). */
typedef enum ocl_fault_site {
  OCL_FAULT_INJECTED = 0, /* stream.inject_fault: values[0] is the message's slot */
  OCL_FAULT_INDEX = 1,    /* an index out of range: values are the index and the size */
  OCL_FAULT_SITE_COUNT
} ocl_fault_site;

struct ocl_stream;

/** Buckets of the context's program table (program.c). */
#define OCL_PROGRAM_BUCKETS 256

/** Slots of the context's kernel memo (program.c's ocl_kernel_recall). */
#define OCL_KERNEL_MEMO 512

/** A launch site's kernel named without text: @p site, a static object standing for what the
 *  site's sources are made of (its expression, its file), @p bits, the rest of what its defines
 *  depend on (dtypes, variants), packed by the site, and the device. */
typedef struct ocl_kernel_key {
  const void *site;
  uint64_t bits;
  int32_t device;
} ocl_kernel_key;

/** One chosen OpenCL device. */
typedef struct ocl_device {
  cl_device_id id;
  int32_t index;
  char name[TB_DEVICE_NAME_SIZE];
  char version[128];        /* CL_DEVICE_VERSION */
  char driver_version[128]; /* CL_DRIVER_VERSION */
  cl_device_type type;
  cl_ulong global_mem;
  cl_ulong max_alloc;
  cl_uint compute_units;
  int cl_major, cl_minor;
  bool fp64, fp16, svm;
  bool int64_atomics; /* cl_khr_int64_base_atomics: index_put_'s 64-bit accumulation */
  uint64_t dtypes;    /* TB_DTYPE_BIT set */

  /* The vendor's own queue on the device: synchronous copies and fault-record reads. */
  cl_command_queue internal;
  cl_mem fault; /* an ocl_fault_record, zeroed at start and by reset */

  pthread_mutex_t lock; /* guards everything below */
  struct ocl_stream **streams;
  size_t stream_count, stream_capacity;
  cl_event *retired; /* the last work of destroyed streams, until it completes */
  size_t retired_count, retired_capacity;
  size_t allocated; /* bytes of live device allocations */
  /* The sticky fault (vendor.h, "Device faults"): set once, cleared by reset. */
  atomic_bool faulted;
  char fault_message[1024];
  /* Kernels that may write the fault record bump this; checks read the record only when it
   * moved since the last one. */
  atomic_ullong fault_launches;
  unsigned long long fault_checked;
  /* The operators of fault-capable launches, by the index the kernel writes (ocl_fault_op). */
  const char *fault_ops[64];
  unsigned fault_op_count;
  /* The names among fault_ops the device owns (copies of program kernels' names, which their
   * programs may outlive in a record), freed with the device. */
  char *fault_op_copies[64];
  /* Messages of injected faults, by slot (OCL_FAULT_INJECTED's values[0]). */
  char injected[4][256];
  unsigned injected_next;
} ocl_device;

/** The vendor's context. */
struct tb_context_impl {
  uint32_t magic;
  /* The environment, read by init (cheap, fork-safe); OpenCL starts on first use. */
  char platform_choice[256];
  char devices_choice[256];
  char memory_choice[32];
  char cache_dir[1024];
  uint64_t memory_limit; /* TORCH_BACKEND_OPENCL_MEMORY_LIMIT; 0: none */

  pthread_mutex_t start_lock;
  atomic_bool started;
  tb_status start_status;
  char start_error[1024];
  /* device.count's answer from a forked child while OpenCL has not started here (device.c). */
  bool probed;
  tb_status probed_status;
  int32_t probed_count;

  cl_platform_id platform;
  char platform_name[256];
  cl_context context;
  ocl_memory_mode mode;
  int32_t count;
  ocl_device *devices;

  /* The address table (memory.c): blocks sorted by base. */
  pthread_rwlock_t blocks_lock;
  ocl_block *blocks;
  size_t block_count, block_capacity;
  uintptr_t next_address; /* buffer mode: where the next range starts */

  /* Programs (program.c). */
  pthread_mutex_t programs_lock;
  struct ocl_program *programs[OCL_PROGRAM_BUCKETS]; /* a hash table by key and device */
  /* Kernels by ocl_kernel_key, direct-mapped (a collision replaces), under memo_lock: what an
   * eager launch finds its kernel with instead of formatting and hashing its defines. */
  pthread_mutex_t memo_lock;
  struct {
    ocl_kernel_key key;
    struct ocl_kernel *kernel;
  } memo[OCL_KERNEL_MEMO];

  /* Graph captures under way (graph.c), a list under captures_lock; active_captures counts
   * them, so that calls check for a capture without the lock when there is none. */
  pthread_mutex_t captures_lock;
  struct ocl_capture *captures;
  uint64_t next_capture_id;
  atomic_int active_captures;
};

/** A stream: an in-order command queue of one device, and the marker that query and
 *  synchronize look at: `last`, the latest marker or barrier (NULL: none yet), which covers
 *  every command before it; `dirty` says commands were enqueued after it, so that the next
 *  look enqueues a new marker first.  Commands themselves record no event. */
typedef struct ocl_stream {
  int32_t device;
  cl_command_queue queue;
  pthread_mutex_t lock; /* guards last, dirty and capture */
  cl_event last;
  bool dirty;
  /* The capture this stream records into (graph.c), NULL when it runs its commands; set and
   * cleared under the context's captures_lock and this lock, read under either. */
  struct ocl_capture *capture;
} ocl_stream;

/** Where a record in a capture was made (graph.c): the capture's id (0: the latest record was
 *  not captured) and how many commands and waits of each of its streams it covers. */
typedef struct ocl_capture_mark {
  uint64_t capture_id;
  uint64_t clock[TB_CAPTURE_MAX_STREAMS];
} ocl_capture_mark;

/** An event: the marker of its latest record (NULL: never recorded, or recorded in a
 *  capture, which `mark` then locates). */
typedef struct ocl_event {
  int32_t device;
  uint32_t flags;
  pthread_mutex_t lock; /* guards marker and mark */
  cl_event marker;
  ocl_capture_mark mark;
} ocl_event;

/** What a command does (ocl_command). */
typedef enum ocl_command_kind {
  OCL_COMMAND_KERNEL,   /* clEnqueueNDRangeKernel */
  OCL_COMMAND_SVM_COPY, /* clEnqueueSVMMemcpy: dst <- src (device or host pointers) */
  OCL_COMMAND_COPY,     /* clEnqueueCopyBuffer: dst_mem <- src_mem */
  OCL_COMMAND_WRITE,    /* clEnqueueWriteBuffer: dst_mem <- host src */
  OCL_COMMAND_READ,     /* clEnqueueReadBuffer: host dst <- src_mem */
  OCL_COMMAND_SVM_FILL, /* clEnqueueSVMMemFill of dst with `byte` */
  OCL_COMMAND_FILL      /* clEnqueueFillBuffer of dst_mem with `byte` */
} ocl_command_kind;

/** One command for a stream.  Every asynchronous call of the vendor describes its work as a
 *  command and hands it to ocl_submit, which enqueues it -- or, while the stream captures a
 *  graph, records it (graph.c), to enqueue it again at each replay. */
typedef struct ocl_command {
  ocl_command_kind kind;
  const char *what; /* the kernel or call, for errors; static */
  /* OCL_COMMAND_KERNEL: the kernel with its arguments set (its owner's lock held) */
  cl_kernel kernel;
  cl_uint dims;
  size_t global[3], local[3];
  bool has_local;
  /* Sub-buffers the kernel's arguments name, which a recorded command keeps (buffer mode). */
  const cl_mem *keep;
  size_t keep_count;
  /* copies and fills */
  void *dst;
  const void *src;
  cl_mem dst_mem, src_mem;
  size_t dst_offset, src_offset, size;
  cl_uchar byte;
} ocl_command;

/* ---- error.c ---- */

/** The name of OpenCL error code @p err ("CL_OUT_OF_RESOURCES"), or "CL_UNKNOWN_ERROR". */
const char *ocl_error_name(cl_int err);

/** Appends printf-style text to the NUL-terminated string in @p buffer of @p size bytes,
 *  cutting what does not fit (messages are bounded on purpose). */
void ocl_append(char *buffer, size_t size, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** Sets the calling thread's last error (printf-style) and returns @p status. */
tb_status ocl_fail(tb_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/**
 * Maps the result @p err of OpenCL call @p call on device @p device (-1: none) to a tb_status;
 * for a failure, sets the last error to "<call> failed on ocl:<device> (<device name>) with
 * <CL name> (<code>)".  Allocation failures map to TB_ERROR_OUT_OF_MEMORY, bad arguments to
 * TB_ERROR_INVALID_ARGUMENT, a missing platform or device to TB_ERROR_UNAVAILABLE, the rest to
 * TB_ERROR_INTERNAL.  CL_SUCCESS maps to TB_OK.
 */
tb_status ocl_check(tb_context ctx, int32_t device, cl_int err, const char *call);

/** The last error of the calling thread (tb_vendor::last_error). */
const char *ocl_last_error(tb_context ctx);

/**
 * Records the sticky fault of @p device with @p message, unless it is already faulted (the
 * first failure is the one reported).  Returns TB_ERROR_DEVICE_FAULT with the recorded message
 * as the last error.
 */
tb_status ocl_fault(tb_context ctx, int32_t device, const char *message);

/** TB_ERROR_DEVICE_FAULT with the recorded message when @p device is faulted, else TB_OK. */
tb_status ocl_fault_status(tb_context ctx, int32_t device);

/**
 * Once work of @p device has completed as far as the caller knows (after a finish, or a
 * completed marker): reads the device's fault record when fault-capable kernels were launched
 * since the last drain, and faults the device with its message when a kernel wrote one.
 * @p launches is `fault_launches` as read before the wait; @p drained says that the wait
 * covered every queue of the device (device.synchronize), so that a clean record lets later
 * checks skip the read until the next fault-capable launch.  Returns TB_OK,
 * TB_ERROR_DEVICE_FAULT, or the read's failure.
 */
tb_status ocl_check_fault_record(tb_context ctx, int32_t device, unsigned long long launches,
                                 bool drained);

/** The index that kernels of @p device write into the fault record for operator @p name,
 *  registering it on first use; 0 ("a kernel") once the table is full.  @p name is a static
 *  string, or, with @p copy, one the caller may free (a program kernel's): the device then keeps
 *  a copy, one per distinct name, since a record may outlive the program. */
cl_uint ocl_fault_op(tb_context ctx, int32_t device, const char *name, bool copy);

/**
 * The completion status of @p event (CL_EVENT_COMMAND_EXECUTION_STATUS) on @p device: TB_OK
 * when complete, TB_ERROR_NOT_READY when not yet, and for a negative status (the command
 * failed asynchronously) the device's sticky fault naming @p what and the error.
 */
tb_status ocl_event_state(tb_context ctx, int32_t device, cl_event event, const char *what);

/* ---- vendor.c / device.c ---- */

/** Starts OpenCL on first use (platform, devices, context): TB_OK, or the start's failure
 *  (the same on every call). */
tb_status ocl_start(tb_context ctx);

/** ocl_start, then checks @p device's index: TB_OK or TB_ERROR_INVALID_DEVICE. */
tb_status ocl_enter(tb_context ctx, int32_t device);

/** Releases what device.c created for the context's devices (finalize). */
void ocl_devices_release(tb_context ctx);

tb_status ocl_device_count(tb_context ctx, int32_t *count);
tb_status ocl_device_get_properties(tb_context ctx, int32_t device,
                                    tb_device_properties *properties);
tb_status ocl_device_synchronize(tb_context ctx, int32_t device);
tb_status ocl_device_reset(tb_context ctx, int32_t device);

/* ---- memory.c ---- */

/**
 * Finds the allocation holding the @p size bytes at device pointer @p ptr on @p device.
 * TB_OK with @p place filled, or TB_ERROR_INVALID_ARGUMENT naming @p what ("dst", "src") when
 * the range is not inside one live allocation of that device.
 */
tb_status ocl_place_of(tb_context ctx, int32_t device, const void *ptr, size_t size,
                       const char *what, ocl_place *place);

/** Frees every allocation the caller left (finalize). */
void ocl_memory_release(tb_context ctx);

tb_status ocl_memory_device_malloc(tb_context ctx, int32_t device, size_t size, void **ptr);
tb_status ocl_memory_device_free(tb_context ctx, int32_t device, void *ptr);
tb_status ocl_memory_copy_h2d(tb_context ctx, int32_t device, void *dst, const void *src,
                              size_t size);
tb_status ocl_memory_copy_d2h(tb_context ctx, int32_t device, void *dst, const void *src,
                              size_t size);
tb_status ocl_memory_copy_d2d(tb_context ctx, int32_t dst_device, void *dst, int32_t src_device,
                              const void *src, size_t size);
tb_status ocl_memory_copy_h2d_async(tb_context ctx, tb_stream stream, void *dst, const void *src,
                                    size_t size);
tb_status ocl_memory_copy_d2h_async(tb_context ctx, tb_stream stream, void *dst, const void *src,
                                    size_t size);
tb_status ocl_memory_copy_d2d_async(tb_context ctx, tb_stream stream, int32_t dst_device, void *dst,
                                    int32_t src_device, const void *src, size_t size);
tb_status ocl_memory_memset_async(tb_context ctx, tb_stream stream, void *ptr, int value,
                                  size_t size);
tb_status ocl_memory_get_info(tb_context ctx, int32_t device, size_t *free_bytes,
                              size_t *total_bytes);

/* ---- stream.c ---- */

/** The stream behind a handle, NULL for NULL. */
static inline ocl_stream *ocl_stream_of(tb_stream stream) { return (ocl_stream *)stream; }

/**
 * Enqueueing on a stream: ocl_stream_begin takes the stream's lock; the caller enqueues one
 * command without asking for its event (an event costs the driver an allocation and a status
 * update per command) and tells ocl_stream_end whether the enqueue succeeded, which marks the
 * stream dirty and unlocks.  Holding the lock across the enqueue keeps markers ordered when
 * threads share a stream.  Query, synchronize and destroy enqueue a marker when the stream is
 * dirty and look at it.
 */
void ocl_stream_begin(ocl_stream *stream);
/** See ocl_stream_begin. */
void ocl_stream_end(ocl_stream *stream, bool enqueued);
/** Ends an enqueue of a marker or barrier whose event @p event (owned; NULL when the enqueue
 *  failed) covers every command before it: it becomes the stream's `last`. */
void ocl_stream_end_marker(ocl_stream *stream, cl_event event);

/** Whether @p stream records into a capture. */
bool ocl_stream_capturing(ocl_stream *stream);

/** Enqueues @p command on @p stream's queue, or records it while the stream captures. */
tb_status ocl_submit(tb_context ctx, ocl_stream *stream, const ocl_command *command);

/** Enqueues @p command on @p queue (of @p device), blocking for copies when @p blocking; an
 *  error names the command. */
tb_status ocl_command_enqueue(tb_context ctx, int32_t device, cl_command_queue queue,
                              const ocl_command *command, cl_bool blocking);

/**
 * Waits for every command queued on @p device so far (its streams', destroyed streams' and
 * the vendor's own), then checks the fault record.  Used by device.synchronize and reset.
 */
tb_status ocl_device_drain(tb_context ctx, int32_t device);

/** Releases the streams the caller left (finalize). */
void ocl_streams_release(tb_context ctx);

tb_status ocl_stream_create(tb_context ctx, int32_t device, int32_t priority, tb_stream *stream);
tb_status ocl_stream_destroy(tb_context ctx, tb_stream stream);
tb_status ocl_stream_query(tb_context ctx, tb_stream stream);
tb_status ocl_stream_synchronize(tb_context ctx, tb_stream stream);
tb_status ocl_stream_wait_event(tb_context ctx, tb_stream stream, tb_event event);
tb_status ocl_stream_inject_fault(tb_context ctx, tb_stream stream, const char *message);

tb_status ocl_event_create(tb_context ctx, int32_t device, uint32_t flags, tb_event *event);
tb_status ocl_event_destroy(tb_context ctx, tb_event event);
tb_status ocl_event_record(tb_context ctx, tb_event event, tb_stream stream);
tb_status ocl_event_query(tb_context ctx, tb_event event);
tb_status ocl_event_synchronize(tb_context ctx, tb_event event);
tb_status ocl_event_elapsed_time(tb_context ctx, tb_event start, tb_event end, float *ms);

/* ---- graph.c ---- */

/** The ::TB_EXTENSION_GRAPHS extension (its `next` is the programs extension). */
const tb_extension_base *ocl_graphs_extension(void);

/** Records @p command into @p capture (ocl_submit, the stream's lock held). */
tb_status ocl_capture_record(tb_context ctx, struct ocl_capture *capture, ocl_stream *stream,
                             const ocl_command *command);

/** TB_OK, or -- while @p stream captures -- refuses @p call for reason @p why
 *  (TB_ERROR_NOT_SUPPORTED, the capture invalidated). */
tb_status ocl_capture_refuse_stream(tb_context ctx, ocl_stream *stream, const char *call,
                                    const char *why);

/** TB_OK, or refuses @p call (which would wait for captured work) in every capture of
 *  @p device. */
tb_status ocl_capture_refuse_device(tb_context ctx, int32_t device, const char *call);

/** TB_OK, or refuses the blocking copy @p call in the captures of @p device whose mode
 *  prohibits it on this thread. */
tb_status ocl_capture_check_unsafe(tb_context ctx, int32_t device, const char *call);

/** event.record on a capturing stream: marks the capture's progress in @p event.  Returns
 *  false (nothing done) when @p stream does not capture. */
bool ocl_capture_mark_event(tb_context ctx, ocl_stream *stream, ocl_event *event);

/** stream.wait_event for an event whose latest record was captured: joins @p stream to the
 *  capture, or orders its next commands after the mark.  Returns false (nothing done) when
 *  that capture has ended: the event then has nothing to wait for. */
bool ocl_capture_wait(tb_context ctx, ocl_stream *stream, const ocl_event *event,
                      tb_status *status);

/** query / synchronize of an event recorded in a capture under way: refused. */
tb_status ocl_capture_refuse_event(tb_context ctx, const ocl_event *event, const char *call);

/** A stream that captures or joined a capture is being destroyed: it leaves the capture,
 *  which is invalidated. */
void ocl_capture_forget_stream(tb_context ctx, ocl_stream *stream);

/** Frees the captures the caller left (finalize). */
void ocl_captures_release(tb_context ctx);

/* ---- program.c ---- */

/** A kernel of a program built for one device, with the lock its argument setting needs
 *  (a cl_kernel's arguments are shared state: set and enqueue under the lock). */
typedef struct ocl_kernel {
  cl_kernel kernel;
  size_t work_group; /* CL_KERNEL_WORK_GROUP_SIZE on its device */
  pthread_mutex_t lock;
} ocl_kernel;

/**
 * Kernel @p name of the program identified by @p key (a short string naming everything the
 * sources depend on, e.g. "map add.out float") and its last source (a kernel file's static
 * text: two files may share their defines), built from the @p count OpenCL C @p sources
 * for @p device on first use -- from the disk cache when a binary for this device, driver and
 * source is there, otherwise from source, then stored -- and kept until finalize.  The sources
 * are compiled after the vendor's prelude.  TB_OK with @p kernel set, or the build's failure
 * with the compiler's log in the message.  @p name must be a static string.
 */
tb_status ocl_kernel_get(tb_context ctx, int32_t device, const char *key,
                         const char *const *sources, size_t count, const char *name,
                         ocl_kernel **kernel);

/**
 * The kernel remembered for @p key (ocl_kernel_remember), or NULL: a hot launch site asks
 * first and formats its defines for ocl_kernel_get only on a miss.  Kernels live until
 * finalize, so the pointer stays valid.
 */
ocl_kernel *ocl_kernel_recall(tb_context ctx, const ocl_kernel_key *key);

/** Remembers @p kernel, which ocl_kernel_get returned for the sources @p key stands for. */
void ocl_kernel_remember(tb_context ctx, const ocl_kernel_key *key, ocl_kernel *kernel);

/**
 * Sets argument @p index of @p kernel to the device memory at @p place: in SVM mode the
 * pointer, in buffer mode the buffer; @p index + 1 receives the byte offset (a `ulong`) --
 * every kernel's device-memory parameter is such a pair (OCL_PTR in the prelude).
 */
tb_status ocl_set_arg_place(tb_context ctx, int32_t device, cl_kernel kernel, cl_uint index,
                            const ocl_place *place);

/**
 * Builds the @p count OpenCL C @p sources, after the prelude, for @p device with the vendor's
 * options and @p extra (NULL: none), through the disk cache.  A build error is
 * TB_ERROR_INVALID_ARGUMENT for a @p user source and TB_ERROR_INTERNAL for the vendor's own,
 * with the compiler's log in the message.
 */
tb_status ocl_program_build(tb_context ctx, int32_t device, const char *const *sources,
                            size_t count, const char *extra, bool user, cl_program *program);

/** The ::TB_EXTENSION_PROGRAMS extension (device_programs.c). */
const tb_extension_base *ocl_programs_extension(void);

/** Releases every program and kernel (finalize). */
void ocl_programs_release(tb_context ctx);

/** The directory program binaries are cached in ("" when caching is off). */
const char *ocl_cache_dir(tb_context ctx);

#endif /* TB_OPENCL_OPENCL_H_ */
