/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's internals, shared by its files.  emu emulates an accelerator the way a vendor's runtime
 * would look: device memory in its own address range (guarded from host code), streams that are
 * worker threads running queues of tasks in order, events completed by those workers, and
 * kernels enqueued as tasks.
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

/* ----------------------------------------------------------------------------------------- */
/* Errors (error.c): the thread-local last-error message.                                     */

tb_status emu_fail(tb_status status, const char *format, ...) __attribute__((format(printf, 2, 3)));
const char *emu_last_error(void);

/* ----------------------------------------------------------------------------------------- */
/* Configuration and devices (device.c).                                                      */

typedef struct emu_config {
  int32_t device_count; /* TORCH_BACKEND_EMU_DEVICE_COUNT, default 2 */
  uint64_t capacity;    /* TORCH_BACKEND_EMU_MEMORY per device, default 8 GiB */
  bool guard;           /* TORCH_BACKEND_EMU_GUARD, default on */
  int threads;          /* TORCH_BACKEND_EMU_THREADS, default: online CPUs */
  int spin_us;          /* TORCH_BACKEND_EMU_SPIN_US: busy-wait before sleeping, default 50 */
  bool profile;         /* TORCH_BACKEND_EMU_PROFILE: print time per kernel at exit */
} emu_config;

/* Reads the environment once; returns TB_OK or why it is unusable (message set). */
tb_status emu_init(void);
const emu_config *emu_get_config(void);
tb_status emu_check_device(int32_t device, const char *call);

/* ----------------------------------------------------------------------------------------- */
/* Device memory (arena.c).  Each device's memory is one memfd mapped twice: the "device" view
 * handed to callers (PROT_NONE in guard mode, so host code touching it faults) and a private
 * read-write "shadow" view that only emu's own execution uses.  emu_host() translates.        */

tb_status emu_arena_alloc(int32_t device, size_t size, void **ptr);
tb_status emu_arena_free(int32_t device, void *ptr);
void emu_arena_usage(int32_t device, size_t *used, size_t *total);
/* The shadow address of device address `ptr` on `device` (NULL stays NULL). */
void *emu_host(int32_t device, const void *ptr);
/* True when [ptr, ptr + size) lies inside `device`'s memory. */
bool emu_is_device_range(int32_t device, const void *ptr, size_t size);

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
  emu_task_fn fn;
  emu_task_fn finish;
  const char *name; /* static string naming the work (kernel name), for profiles */
  struct tb_stream_impl *stream;
  size_t payload_size;
  _Alignas(16) unsigned char payload[];
};

typedef struct tb_stream_impl emu_stream;

emu_task *emu_task_new(emu_task_fn fn, size_t payload_size);
/* Enqueues `task` on `stream` (which takes ownership). */
tb_status emu_stream_enqueue(tb_stream stream, emu_task *task);
int32_t emu_stream_device(tb_stream stream);
/* Counts one task of `stream` complete: only emu_task::finish calls it. */
void emu_stream_count_completion(tb_stream stream);
tb_status emu_check_stream(tb_stream stream, const char *call);
/* Called by a running task to report that its work failed: faults the stream's device (vendor.h,
 * "Device faults") with the message and the task's name, unless it is faulted already. */
void emu_task_fail(emu_task *task, const char *format, ...) __attribute__((format(printf, 2, 3)));
/* Whether `device` is faulted (no lock: for skipping work). */
bool emu_is_faulted(int32_t device);
/* TB_OK, or TB_ERROR_DEVICE_FAULT with the fault's message when `device` is faulted. */
tb_status emu_check_fault(int32_t device, const char *call);

/* Records that `name` ran for `ns` nanoseconds (profile.c; only with profiling on). */
void emu_profile_record(const char *name, uint64_t ns);

/* ----------------------------------------------------------------------------------------- */
/* Parallel loops (pool.c): split [0, n) into chunks of at least `grain` run on emu's worker
 * pool and the calling thread.  Runs inline when n <= grain or the pool is busy.             */

typedef void (*emu_range_fn)(void *context, int64_t begin, int64_t end);
void emu_parallel_for(int64_t n, int64_t grain, emu_range_fn fn, void *context);
/* Threads emu_parallel_for uses at most (helpers and the caller). */
int emu_parallel_threads(void);

/* ----------------------------------------------------------------------------------------- */
/* Kernels (kernels/).                                                                        */

const tb_kernel_api *emu_kernel_api(void);
/* ABI 2.0: emu's extension chain: its custom operators (kernels/registry.c). */
const tb_extension_base *emu_extensions(void);

#endif /* TORCH_BACKEND_EMU_H_ */
