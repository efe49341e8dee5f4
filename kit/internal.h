/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The kit's runtime, shared by runtime.c (errors, devices, faults, lifetime) and stream.c
 * (streams, tasks, events).
 */
#ifndef TORCH_BACKEND_KIT_INTERNAL_H_
#define TORCH_BACKEND_KIT_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>
#include <torch_backend/vendor_kit.h>

#include "../backends/common/capture.h"

/* The spin-wait hint of busy loops: x86's pause, AArch64's yield, else only a compiler barrier
 * (the loop still works, it just does not tell the core it is spinning). */
static inline void tbk_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
  __asm__ __volatile__("yield" ::: "memory");
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

uint64_t tbk_now_ns(void);

typedef struct tbk_device_streams {
  struct tb_stream_impl **streams;
  size_t count, capacity;
} tbk_device_streams;

struct tbk_runtime {
  uint32_t magic;
  tbk_runtime_config config; /* name copied into `name` */
  char name[64];
  _Atomic int refs; /* the creator's and one per live stream worker */
  _Atomic bool finalized;
  /* The live streams of each device, for device synchronisation. */
  pthread_mutex_t streams_mutex;
  tbk_device_streams *streams;
  /* Each device's fault (vendor.h, "Device faults"): `faulted` is the fast check; the message
   * is written and read under faults_mutex. */
  pthread_mutex_t faults_mutex;
  _Atomic bool *faulted;
  char (*fault_message)[512];
  /* The captures under way (graph.c), linked through tbk_capture::next and guarded by
   * streams_mutex; `active_captures` counts them, so that calls check nothing when it is 0. */
  struct tbk_capture *captures;
  _Atomic int active_captures;
  uint64_t next_capture_id; /* guarded by streams_mutex; ids start at 1 */
};

/* ---- graphs (graph.c) ---- */

typedef struct tbk_capture tbk_capture;

/* The capture of a stream (NULL when it is not capturing): graph.c sets it, stream.c reads it
 * on every enqueue. */
_Atomic(tbk_capture *) *tbk_stream_capture_slot(tb_stream stream);
void tbk_stream_retain(tb_stream stream);
void tbk_stream_release(tb_stream stream);

/* Records `task` into the capture instead of running it; ::TB_ERROR_OUT_OF_MEMORY (the task is
 * discarded and the capture invalidated) when out of host memory. */
tb_status tbk_capture_add(tbk_capture *capture, tbk_task *task);

/* Multi-stream capture (graph.c): a stream that waits for an event recorded in a capture joins
 * it; the capture then records the work of every stream that joined, in the order the host
 * enqueued it (a valid order of the captured dependencies: a wait is always enqueued after the
 * record it waits for).  Each stream of a capture keeps a vector clock -- how much of each
 * stream's captured work it has waited for -- so that capture_end can check that every joined
 * stream was joined back into the one that began the capture, as CUDA does. */
#define TBK_CAPTURE_MAX_STREAMS TB_CAPTURE_MAX_STREAMS

/* What an event recorded in a capture carries: the capture and the recording stream's clock. */
typedef struct tbk_capture_mark {
  uint64_t capture_id; /* 0: the event's latest record was not made in a capture */
  uint64_t clock[TBK_CAPTURE_MAX_STREAMS];
} tbk_capture_mark;

/* With streams_mutex held and `stream` capturing `capture`: fills `mark` for an event recorded
 * on `stream` now. */
void tbk_capture_mark_record(tbk_capture *capture, tb_stream stream, tbk_capture_mark *mark);

/* With streams_mutex held: the capture under way with id `id`, or NULL once it has ended. */
tbk_capture *tbk_capture_find(tbk_runtime *runtime, uint64_t id);

/* With streams_mutex held: `stream` waits for `mark`, recorded in `capture`.  A stream of the
 * capture learns the recording stream's clock; a stream that captures nothing joins the
 * capture; a stream of another capture is refused (CUDA's cudaErrorStreamCaptureIsolation),
 * invalidating both. */
tb_status tbk_capture_wait(tbk_capture *capture, tb_stream stream, const tbk_capture_mark *mark);

/* Invalidates `capture` with a message naming `call`, and fails with ::TB_ERROR_NOT_SUPPORTED:
 * `call` cannot run while the stream captures. */
tb_status tbk_capture_refuse(tbk_runtime *runtime, tbk_capture *capture, const char *call,
                             const char *why);

/* For a call that synchronizes `device`: refuses it (invalidating them) while any stream of
 * the device captures. */
tb_status tbk_runtime_check_no_capture(tbk_runtime *runtime, int32_t device, const char *call);

/* tbk_fail with "NAME: " in front of the message. */
tb_status tbk_fail_as(const char *name, tb_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* tbk_check_fault and tbk_wait_device on a runtime (for callers without a context). */
tb_status tbk_runtime_check_fault(tbk_runtime *runtime, int32_t device, const char *call);
tb_status tbk_runtime_wait_device(tbk_runtime *runtime, int32_t device, const char *call);

/* Drops a reference; the last one calls config.destroy and frees the runtime. */
void tbk_runtime_release(tbk_runtime *runtime);

#endif /* TORCH_BACKEND_KIT_INTERNAL_H_ */
