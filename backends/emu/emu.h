/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's internals, shared by its files.  emu emulates an accelerator the way a vendor's runtime
 * would look: device memory in its own address range (guarded from host code), streams that are
 * worker threads running queues of tasks in order, events completed by those workers, and
 * kernels enqueued as tasks.
 *
 * State: everything that belongs to one use of the devices lives in the context (emu_context,
 * below).  What stays process-wide, and why: the last-error message (thread-local by the ABI's
 * contract), the worker pool (the host's cores, shared by every context), and the kernel table
 * (constant, built once).
 */
#ifndef TORCH_BACKEND_EMU_H_
#define TORCH_BACKEND_EMU_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <torch_backend/vendor.h>

#define EMU_MAX_DEVICES 16
#define EMU_ALIGNMENT 256 /* device allocations: a multiple of TB_MEMORY_ALIGNMENT */

/* The spin-wait hint of busy loops: x86's pause, AArch64's yield, else only a compiler barrier
 * (the loop still works, it just does not tell the core it is spinning). */
static inline void emu_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
  __asm__ __volatile__("yield" ::: "memory");
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

/* ----------------------------------------------------------------------------------------- */
/* Errors (device.c): the thread-local last-error message.                                    */

tb_status emu_fail(tb_status status, const char *format, ...) __attribute__((format(printf, 2, 3)));
const char *emu_last_error(tb_context ctx);

/* ----------------------------------------------------------------------------------------- */
/* The context (device.c): everything that belongs to one use of emu's devices, created by     */
/* tb_vendor::init and passed to every call.  Two contexts (two inits in one process: tools   */
/* open a library more than once) have separate device memory, streams and faults.            */

typedef struct emu_config {
  int32_t device_count; /* TORCH_BACKEND_EMU_DEVICE_COUNT, default 2 */
  uint64_t capacity;    /* TORCH_BACKEND_EMU_MEMORY per device, default 8 GiB */
  bool guard;           /* TORCH_BACKEND_EMU_GUARD, default off: host access allowed */
  int threads;          /* TORCH_BACKEND_EMU_THREADS, default: online CPUs */
  int spin_us;          /* TORCH_BACKEND_EMU_SPIN_US: busy-wait before sleeping, default 50 */
  bool profile;         /* TORCH_BACKEND_EMU_PROFILE: print time per kernel at finalize */
} emu_config;

typedef struct emu_arena emu_arena;                   /* arena.c */
typedef struct emu_device_streams emu_device_streams; /* stream.c */
typedef struct emu_profile emu_profile;               /* profile.c */

struct tb_context_impl {
  uint32_t magic;
  emu_config config; /* read from the environment at init; read-only afterwards */
  /* References: init's (dropped by finalize) and one per stream whose worker runs.  The last
   * one frees the context, so workers that finish a destroyed stream's work after finalize
   * still find their device's state. */
  _Atomic int refs;
  _Atomic bool finalized;
  /* Device memory: one arena per device, guarded by arena_mutex (arena.c). */
  pthread_mutex_t arena_mutex;
  emu_arena *arenas;
  /* The live streams of each device, for device synchronisation (stream.c). */
  pthread_mutex_t streams_mutex;
  emu_device_streams *streams;
  /* Each device's fault (vendor.h, "Device faults"): `faulted` is the fast check; the message
   * is written and read under faults_mutex. */
  pthread_mutex_t faults_mutex;
  _Atomic bool faulted[EMU_MAX_DEVICES];
  char fault_message[EMU_MAX_DEVICES][512];
  /* Time per kernel with TORCH_BACKEND_EMU_PROFILE=1, printed at finalize (profile.c). */
  emu_profile *profile;
};
typedef struct tb_context_impl emu_context;

/* init and finalize (tb_vendor::init / finalize). */
tb_status emu_init(const tb_host_api *host, tb_context *ctx);
void emu_finalize(tb_context ctx);
/* Drops a reference to `ctx` (a stream worker's, or finalize's); the last one frees it. */
void emu_context_release(emu_context *ctx);
/* TB_OK, or why `ctx` cannot be used (NULL, not emu's, finalized), with the message set. */
tb_status emu_check_context(const emu_context *ctx, const char *call);
/* emu_check_context, then that `device` is one of its devices. */
tb_status emu_check_device(const emu_context *ctx, int32_t device, const char *call);

/* ----------------------------------------------------------------------------------------- */
/* Device memory (arena.c).  Each device's memory is one memfd mapped twice: the "device" view
 * handed to callers (PROT_NONE in guard mode, so host code touching it faults) and a private
 * read-write "shadow" view that only emu's own execution uses.  emu_host() translates.        */

/* The context's arenas (not yet mapped: a device maps its memory on first allocation). */
tb_status emu_arenas_create(emu_context *ctx);
void emu_arenas_destroy(emu_context *ctx);
tb_status emu_arena_alloc(emu_context *ctx, int32_t device, size_t size, void **ptr);
tb_status emu_arena_free(emu_context *ctx, int32_t device, void *ptr);
void emu_arena_usage(emu_context *ctx, int32_t device, size_t *used, size_t *total);
/* The shadow address of device address `ptr` on `device` (NULL stays NULL). */
void *emu_host(const emu_context *ctx, int32_t device, const void *ptr);
/* True when [ptr, ptr + size) lies inside `device`'s memory. */
bool emu_is_device_range(const emu_context *ctx, int32_t device, const void *ptr, size_t size);

/* ----------------------------------------------------------------------------------------- */
/* Streams and tasks (stream.c).                                                              */

typedef struct emu_task emu_task;
typedef void (*emu_task_fn)(emu_task *task);
struct tb_stream_impl;

/* A unit of stream work.  `fn` runs on the stream's worker; `payload` holds its arguments
 * (allocated with the task, `payload_size` bytes, 16-byte aligned).  A task whose work fails
 * sets an error with emu_task_fail.  `finish`, when set, runs after `fn` and must call
 * emu_stream_count_completion itself, under the lock that guards what it publishes (an event
 * record), so that the stream's progress and the publication become visible together. */
struct emu_task {
  _Atomic(emu_task *) next;
  /* A task in its stream's slot ring: 1 while taken (from emu_task_new until the worker is
   * done with it), 0 while free.  Tasks too big for a slot, or created while every slot was
   * taken, are malloc'd instead (pooled false). */
  _Atomic int slot_taken;
  bool pooled;
  emu_task_fn fn;
  emu_task_fn finish;
  const char *name; /* static string naming the work (kernel name), for profiles */
  struct tb_stream_impl *stream;
  size_t payload_size;
  _Alignas(16) unsigned char payload[];
};

typedef struct tb_stream_impl emu_stream;

tb_status emu_streams_create(emu_context *ctx);
void emu_streams_destroy(emu_context *ctx);
/* Waits for the work enqueued so far on every stream of `device` (no fault check). */
tb_status emu_wait_device(emu_context *ctx, int32_t device, const char *call);

/* A task for `stream` (a live stream: the caller checked it) with `payload_size` bytes of
 * payload.  Launches take one per call, so small tasks come from a ring of slots in the stream
 * (no heap allocation, no lock: a slot is claimed with one compare-and-swap and given back by
 * the worker); bigger ones, and those made while the ring is full, are malloc'd.  NULL when out
 * of memory.  A task that is not enqueued after all goes back with emu_task_discard. */
emu_task *emu_task_new(tb_stream stream, emu_task_fn fn, size_t payload_size);
void emu_task_discard(emu_task *task);
/* Enqueues `task` (made for `stream` by emu_task_new) on `stream`, which takes ownership. */
tb_status emu_stream_enqueue(tb_stream stream, emu_task *task);
int32_t emu_stream_device(tb_stream stream);
/* The context `stream` was created in. */
emu_context *emu_stream_context(tb_stream stream);
/* Counts one task of `stream` complete: only emu_task::finish calls it. */
void emu_stream_count_completion(tb_stream stream);
/* TB_OK when `stream` is a live stream of `ctx`. */
tb_status emu_check_stream(const emu_context *ctx, tb_stream stream, const char *call);
/* Called by a running task to report that its work failed: faults the stream's device (vendor.h,
 * "Device faults") with the message and the task's name, unless it is faulted already. */
void emu_task_fail(emu_task *task, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* Whether `device` is faulted (no lock: for skipping work). */
bool emu_is_faulted(const emu_context *ctx, int32_t device);
/* TB_OK, or TB_ERROR_DEVICE_FAULT with the fault's message when `device` is faulted. */
tb_status emu_check_fault(emu_context *ctx, int32_t device, const char *call);

/* Profiles (profile.c; only with profiling on). */
tb_status emu_profile_create(emu_context *ctx);
/* Prints the table to stderr (at finalize) and frees it. */
void emu_profile_destroy(emu_context *ctx);
/* Records that `name` ran for `ns` nanoseconds. */
void emu_profile_record(emu_context *ctx, const char *name, uint64_t ns);

/* ----------------------------------------------------------------------------------------- */
/* Parallel loops (pool.c): split [0, n) into chunks of at least `grain` run on emu's worker
 * pool and the calling thread.  Runs inline when n <= grain or the pool is busy.
 *
 * The pool is process-wide, not per context: it stands for the host's cores, which every
 * context shares, and kernels reach it without a context.  Its size is the first context's
 * TORCH_BACKEND_EMU_THREADS; its threads start on the first parallel loop, never at init, so a
 * process that forks before using a device leaves no threads behind.                         */

typedef void (*emu_range_fn)(void *context, int64_t begin, int64_t end);
/* Sets the pool's size if it is not set yet (init calls it; the first call wins). */
void emu_parallel_configure(int threads);
void emu_parallel_for(int64_t n, int64_t grain, emu_range_fn fn, void *context);
/* Threads emu_parallel_for uses at most (helpers and the caller). */
int emu_parallel_threads(void);

/* ----------------------------------------------------------------------------------------- */
/* Kernels (kernels/).                                                                        */

const tb_kernel_api *emu_kernel_api(void);
/* emu's extension chain (kernels/registry.c): custom operators (ABI 2.0), collectives. */
const tb_extension_base *emu_extensions(void);
/* The collectives library (collectives.c), the second extension of the chain. */
extern const tb_collectives_extension emu_collectives;

#endif /* TORCH_BACKEND_EMU_H_ */
