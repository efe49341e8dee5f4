/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 */

/**
 * @file vendor_kit.h
 * @brief tb_vendor_kit: the runtime every host-driven vendor needs, ready-made.
 *
 * A vendor whose device is driven from host threads -- an emulator, a DSP behind a command
 * queue, a runtime whose calls block -- needs the same machinery around its own memory and
 * kernels: streams that run their work in order on a thread of their own, events completed (and
 * timestamped) when a stream reaches them, waits across streams and devices, device faults that
 * stick until reset, device-wide synchronisation, and the rules of vendor.h about destroying
 * busy streams and events.  The kit is that machinery, tested by the conformance suite through
 * the bundled `emu` vendor, which runs on it.  It is a static C11 library with no libtorch
 * dependency (CMake: `TorchBackend::vendor_kit`); its kernel half, a strided iterator with
 * broadcasting and dtype dispatch and a kernel-table builder, is declared in
 * vendor_kit_kernels.h, included below.
 *
 * How a vendor uses it:
 *
 * @code
 * struct tb_context_impl {
 *   tbk_runtime *runtime;  // first member: the kit's slots find their state through it
 *   ...                    // the vendor's own state
 * };
 *
 * static tb_status my_init(const tb_host_api *host, tb_context *out) {
 *   struct tb_context_impl *ctx = calloc(1, sizeof *ctx);
 *   tbk_runtime_config config = {.struct_size = sizeof config, .name = "acme",
 *                                .device_count = 2, .user = ctx, .destroy = free};
 *   tb_status status = tbk_runtime_create(&config, &ctx->runtime);
 *   ...
 * }
 * // finalize: tbk_runtime_finalize(ctx->runtime); the kit frees ctx through `destroy`.
 *
 * static const tb_stream_api streams = {.struct_size = sizeof streams,
 *                                       .create = tbk_stream_create, ...};
 * @endcode
 *
 * Then every stream, event and device-synchronisation slot of the table can be the kit's
 * function of the same name (`tbk_<group>_<slot>`, with the slot's exact signature), and the
 * vendor's own asynchronous work -- copies, memset, kernels -- becomes tasks: tbk_task_new(),
 * fill the payload, tbk_stream_enqueue().  A task that fails calls tbk_task_fail(), which
 * faults its device (vendor.h, "Device faults"); the kit's slots then report the fault until
 * tb_device_api::reset.
 *
 * Messages: every failure sets a thread-local message (tbk_fail()), prefixed with the vendor's
 * name and the call, which tbk_last_error() returns; use it as the vendor's
 * tb_vendor::last_error, and tbk_fail() for the vendor's own failures too.
 *
 * Threads: a stream's worker is created with the stream, never at init, so a process that forks
 * before using a device keeps no threads (vendor.h, "The vendor context").  Every function is
 * safe to call from any thread.
 */
#ifndef TORCH_BACKEND_VENDOR_KIT_H_
#define TORCH_BACKEND_VENDOR_KIT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <torch_backend/vendor.h>
#include <torch_backend/vendor_kit_kernels.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup tbk_runtime_group Kit: errors and the runtime
 *  @{ */

/**
 * Sets the calling thread's last-error message (printf-style, truncated to 1023 bytes) and
 * returns @p status, so a slot can write `return tbk_fail(TB_ERROR_..., "acme: ...", ...)`.
 */
tb_status tbk_fail(tb_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** The calling thread's last-error message (tb_vendor::last_error's contract); @p ctx is
 *  unused: the message is per thread, whichever context failed. */
const char *tbk_last_error(tb_context ctx);

/** The devices, streams, events and faults of one vendor context. */
typedef struct tbk_runtime tbk_runtime;

/** How tbk_runtime_create() sets up a runtime. */
typedef struct tbk_runtime_config {
  /** `sizeof(tbk_runtime_config)`. */
  size_t struct_size;
  /** The vendor's device type; every message starts with it ("acme: stream query: ..."). */
  const char *name;
  /** Number of devices, in [0, 1024]; device indices are [0, device_count). */
  int32_t device_count;
  /** Microseconds a stream worker, or a thread waiting for a stream or event, spins before it
   *  sleeps: back-to-back small tasks then cost no wake-up.  0 sleeps at once. */
  int32_t spin_us;
  /** tb_stream_api::priority_range's answer: least and greatest priority (greatest <= least;
   *  both 0 for a vendor without priorities).  Streams keep the clamped priority; the kit does
   *  not schedule by it. */
  int32_t least_priority;
  /** See least_priority. */
  int32_t greatest_priority;
  /** The vendor's pointer, returned by tbk_runtime_user(); typically its context. */
  void *user;
  /** Optional: called with @p user once the runtime is gone -- after tbk_runtime_finalize()
   *  and the exit of the last stream worker (a stream destroyed with work queued, or never
   *  destroyed, keeps it alive) -- so the vendor can free what its tasks use. */
  void (*destroy)(void *user);
  /** Optional: called on the worker after each task with the task's name and its run time
   *  in nanoseconds (profiling).  NULL costs nothing. */
  void (*task_done)(void *user, const char *name, uint64_t ns);
} tbk_runtime_config;

/** Creates a runtime.  Starts no thread.  Fails with ::TB_ERROR_INVALID_ARGUMENT for a bad
 *  config, ::TB_ERROR_OUT_OF_MEMORY when out of host memory. */
tb_status tbk_runtime_create(const tbk_runtime_config *config, tbk_runtime **runtime);

/** Waits for the work queued on every device, makes every later call with the runtime fail
 *  (::TB_ERROR_UNAVAILABLE, "the context was finalized") and drops the creator's reference:
 *  config.destroy runs now or when the last stream worker exits.  For tb_vendor::finalize. */
void tbk_runtime_finalize(tbk_runtime *runtime);

/** The config's `user` pointer. */
void *tbk_runtime_user(const tbk_runtime *runtime);

/** The config's device count. */
int32_t tbk_runtime_device_count(const tbk_runtime *runtime);

/** The runtime of a context whose first member is a `tbk_runtime *` (see the file's
 *  description); NULL for a NULL context. */
static inline tbk_runtime *tbk_runtime_of(tb_context ctx) {
  return ctx != NULL ? *(tbk_runtime *const *)(const void *)ctx : NULL;
}

/** ::TB_OK when @p ctx holds a live (not finalized) runtime; otherwise sets the message. */
tb_status tbk_check_context(tb_context ctx, const char *call);

/** ::TB_OK when @p device is a valid index of @p ctx's runtime; ::TB_ERROR_INVALID_DEVICE with
 *  a message naming the call, the index and the count otherwise. */
tb_status tbk_check_device(tb_context ctx, int32_t device, const char *call);

/** Faults @p device with @p message (copied; the first fault's message stays until reset). */
void tbk_fault(tbk_runtime *runtime, int32_t device, const char *message);

/** Whether @p device is faulted; no lock, for skipping work (a task on a faulted device should
 *  not compute from what failed work left behind). */
bool tbk_is_faulted(const tbk_runtime *runtime, int32_t device);

/** ::TB_OK, or ::TB_ERROR_DEVICE_FAULT with the fault's message when @p device is faulted. */
tb_status tbk_check_fault(tb_context ctx, int32_t device, const char *call);

/** Waits until every stream of @p device has run the work queued before the call (no fault
 *  check).  ::TB_ERROR_OUT_OF_MEMORY only when the host is out of memory. */
tb_status tbk_wait_device(tb_context ctx, int32_t device, const char *call);

/** @} */

/** @defgroup tbk_task_group Kit: tasks, the unit of stream work
 *  @{ */

typedef struct tbk_task tbk_task;
/** What a task runs, on its stream's worker thread. */
typedef void (*tbk_task_fn)(tbk_task *task);

/** A unit of stream work.  Created by tbk_task_new(), owned by the kit once enqueued. */
struct tbk_task {
  /** The kit's queue link; do not touch. */
  _Atomic(tbk_task *) next;
  /** The kit's slot bookkeeping; do not touch. */
  _Atomic int slot_taken;
  /** The kit's slot bookkeeping; do not touch. */
  bool pooled;
  /** Runs the work (may be NULL: a marker). */
  tbk_task_fn fn;
  /** Optional: runs after `fn` instead of the kit's completion count, and must call
   *  tbk_stream_count_completion() itself (events use it to complete a record and count the
   *  task in one step). */
  tbk_task_fn finish;
  /** A static string naming the work (a kernel's name): in fault messages and profiles. */
  const char *name;
  /** The stream it runs on. */
  tb_stream stream;
  /** Size of `payload`. */
  size_t payload_size;
  /** The task's arguments, 16-byte aligned; copy what the work needs in here (the
   *  tb_kernel_call and its descriptors die when the kernel returns). */
  _Alignas(16) unsigned char payload[];
};

/** A task of @p stream running @p fn with @p payload_size bytes of payload, or NULL when out of
 *  memory.  Small tasks come from a ring per stream (no allocation).  Either enqueue it or
 *  discard it. */
tbk_task *tbk_task_new(tb_stream stream, tbk_task_fn fn, size_t payload_size);

/** Frees a task that was not enqueued. */
void tbk_task_discard(tbk_task *task);

/** Appends @p task to @p stream's queue (lock-free); the worker runs it after everything
 *  enqueued before.  Returns ::TB_OK. */
tb_status tbk_stream_enqueue(tb_stream stream, tbk_task *task);

/** Called by a running task whose work failed: faults its stream's device with the message
 *  and the task's name ("... (in add.out)"), unless the device is faulted already. */
void tbk_task_fail(tbk_task *task, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** For a tbk_task::finish hook: counts one task of @p stream complete. */
void tbk_stream_count_completion(tb_stream stream);

/** ::TB_OK when @p stream is a live stream of @p ctx's runtime; sets the message otherwise. */
tb_status tbk_check_stream(tb_context ctx, tb_stream stream, const char *call);

/** The device index of @p stream. */
int32_t tbk_stream_device(tb_stream stream);

/** The runtime of @p stream. */
tbk_runtime *tbk_stream_runtime(tb_stream stream);

/**
 * Enqueues a copy of @p args (@p size bytes) and @p fn on @p stream: the shortest way to make a
 * kernel asynchronous.  On the worker, @p fn receives the copy; a status other than ::TB_OK,
 * with a message written into @p message (of @p message_size bytes), faults the device.  Skipped
 * when the device is faulted.  Returns ::TB_ERROR_DEVICE_FAULT on a faulted device (nothing
 * enqueued), ::TB_ERROR_OUT_OF_MEMORY when out of host memory.
 */
tb_status tbk_launch(tb_context ctx, tb_stream stream, const char *name,
                     tb_status (*fn)(void *args, char *message, size_t message_size),
                     const void *args, size_t size);

/** @} */

/** @defgroup tbk_slot_group Kit: ready-made slots
 *  Each has the signature and the contract of the vendor.h slot it is named after
 *  (`tbk_stream_query` for tb_stream_api::query); every one finds the runtime through the
 *  context's first member.
 *  @{ */

/** tb_device_api::synchronize. */
tb_status tbk_device_synchronize(tb_context ctx, int32_t device);
/** tb_device_api::reset. */
tb_status tbk_device_reset(tb_context ctx, int32_t device);
/** tb_stream_api::create. */
tb_status tbk_stream_create(tb_context ctx, int32_t device, int32_t priority, tb_stream *stream);
/** tb_stream_api::destroy. */
tb_status tbk_stream_destroy(tb_context ctx, tb_stream stream);
/** tb_stream_api::query. */
tb_status tbk_stream_query(tb_context ctx, tb_stream stream);
/** tb_stream_api::synchronize. */
tb_status tbk_stream_synchronize(tb_context ctx, tb_stream stream);
/** tb_stream_api::wait_event. */
tb_status tbk_stream_wait_event(tb_context ctx, tb_stream stream, tb_event event);
/** tb_stream_api::priority_range. */
tb_status tbk_stream_priority_range(tb_context ctx, int32_t device, int32_t *least,
                                    int32_t *greatest);
/** tb_stream_api::inject_fault. */
tb_status tbk_stream_inject_fault(tb_context ctx, tb_stream stream, const char *message);
/** tb_stream_api::launch_host_func. */
tb_status tbk_stream_launch_host_func(tb_context ctx, tb_stream stream, tb_host_func fn,
                                      void *user_data);
/** tb_event_api::create. */
tb_status tbk_event_create(tb_context ctx, int32_t device, uint32_t flags, tb_event *event);
/** tb_event_api::destroy. */
tb_status tbk_event_destroy(tb_context ctx, tb_event event);
/** tb_event_api::record. */
tb_status tbk_event_record(tb_context ctx, tb_event event, tb_stream stream);
/** tb_event_api::query. */
tb_status tbk_event_query(tb_context ctx, tb_event event);
/** tb_event_api::synchronize. */
tb_status tbk_event_synchronize(tb_context ctx, tb_event event);
/** tb_event_api::elapsed_time. */
tb_status tbk_event_elapsed_time(tb_context ctx, tb_event start, tb_event end, float *ms);

/** @} */

/** @defgroup tbk_graph_group Kit: graphs (ABI 2.3)
 *
 * The functions of a ::tb_graphs_extension, ready-made: a capturing stream keeps the tasks
 * enqueued on it (tbk_stream_enqueue() records them) and a graph replays them in order as one
 * task of the launching stream.  A kit vendor's kernels, copies and memsets are captured as
 * they are, provided a task does not consume its payload when it runs (it runs once per
 * replay).  Event records and waits are captured as dependencies, not tasks: the kit captures
 * several streams with CUDA's rules (vendor.h's @ref tb_graphs), recording the work of every
 * stream that joined the capture into its one task list in the order the host enqueued it,
 * which a replay runs serially; at most 32 streams join one capture.  The kit's stream and
 * device synchronisation refuse to wait for a capturing stream (and invalidate the capture),
 * as vendor.h's @ref tb_graphs says.
 *
 * @code
 * static const tb_graphs_extension graphs = {
 *     .base = {.struct_size = sizeof graphs, .type = TB_EXTENSION_GRAPHS},
 *     .capture_begin = tbk_graph_capture_begin, .capture_end = tbk_graph_capture_end,
 *     .graph_launch = tbk_graph_launch, .graph_destroy = tbk_graph_destroy};
 * @endcode
 *
 * The vendor's own potentially unsafe calls -- the blocking copies -- begin with
 * tbk_check_capture().
 *  @{ */

/** tb_graphs_extension::capture_begin. */
tb_status tbk_graph_capture_begin(tb_context ctx, tb_stream stream, tb_capture_mode mode);
/** tb_graphs_extension::capture_end. */
tb_status tbk_graph_capture_end(tb_context ctx, tb_stream stream, tb_graph *graph);
/** tb_graphs_extension::graph_launch. */
tb_status tbk_graph_launch(tb_context ctx, tb_graph graph, tb_stream stream);
/** tb_graphs_extension::graph_destroy. */
tb_status tbk_graph_destroy(tb_context ctx, tb_graph graph);

/** For a potentially unsafe call on @p device (a blocking copy): ::TB_OK, or, while a capture
 *  of the device forbids such calls to this thread (mode ::TB_CAPTURE_GLOBAL, or
 *  ::TB_CAPTURE_THREAD_LOCAL begun by this thread), ::TB_ERROR_NOT_SUPPORTED with a message
 *  naming @p call, after invalidating that capture.  Costs one atomic load when nothing is
 *  captured. */
tb_status tbk_check_capture(tb_context ctx, int32_t device, const char *call);

/** @} */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORCH_BACKEND_VENDOR_KIT_H_ */
