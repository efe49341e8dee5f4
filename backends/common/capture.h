/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Multi-stream graph capture with CUDA's rules (vendor.h, @ref tb_graphs), the part every
 * bundled vendor's graphs share (the kit's, npu's, opencl's): each keeps its own record of a
 * capture's streams, and these helpers keep the vector clocks and the refusals' wording the same.
 *
 * A capture's streams are members 0 (the one that began it) to n - 1 (those that joined).  Each
 * member counts its ops (recorded work and waits) and keeps a clock: how many of each member's
 * ops it has waited for.  An event recorded on a member is a mark, that member's clock with its
 * own count in its own entry; a member that waits for a mark merges it into its clock.  At
 * capture_end, member 0's clock must cover every joined member's ops: each was joined back.
 * Compiled into each vendor (not installed, not part of the ABI).
 */
#ifndef TORCH_BACKEND_BACKENDS_COMMON_CAPTURE_H_
#define TORCH_BACKEND_BACKENDS_COMMON_CAPTURE_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "torch_backend/vendor.h"

/* Streams one capture may span. */
#define TB_CAPTURE_MAX_STREAMS 32

/* PyTorch's name of a capture mode ("global", "thread_local", "relaxed"). */
static inline const char *tb_capture_mode_name(tb_capture_mode mode) {
  switch (mode) {
    case TB_CAPTURE_GLOBAL:
      return "global";
    case TB_CAPTURE_THREAD_LOCAL:
      return "thread_local";
    case TB_CAPTURE_RELAXED:
      return "relaxed";
  }
  return "unknown";
}

/* The mark of an event recorded on member `self`, whose clock is `clock` and whose ops number
 * `ops`. */
static inline void tb_clock_mark(uint64_t mark[TB_CAPTURE_MAX_STREAMS],
                                 const uint64_t clock[TB_CAPTURE_MAX_STREAMS], size_t self,
                                 uint64_t ops) {
  for (size_t i = 0; i < TB_CAPTURE_MAX_STREAMS; i++) mark[i] = clock[i];
  mark[self] = ops;
}

/* A member waited for `mark`: everything it covers happens before what the member does next. */
static inline void tb_clock_merge(uint64_t clock[TB_CAPTURE_MAX_STREAMS],
                                  const uint64_t mark[TB_CAPTURE_MAX_STREAMS]) {
  for (size_t i = 0; i < TB_CAPTURE_MAX_STREAMS; i++) {
    if (mark[i] > clock[i]) clock[i] = mark[i];
  }
}

/* The message of `call` refused because stream `stream` of device `device` (named with its
 * type, "ocl:0") captures in `mode`, for reason `why`. */
static inline void tb_capture_refusal(char *message, size_t size, const char *call,
                                      const void *stream, const char *device_type, int32_t device,
                                      tb_capture_mode mode, const char *why) {
  snprintf(message, size,
           "%s: not permitted while stream %p of %s:%d captures a graph (mode %s): %s; the "
           "capture is invalidated",
           call, stream, device_type, (int)device, tb_capture_mode_name(mode), why);
}

/* Why a refused multi-stream call was refused, CUDA's error named. */
#define TB_CAPTURE_OTHER_DEVICE_WHY "a stream of another device cannot join the capture"
#define TB_CAPTURE_FULL_WHY "the stream would join a capture that has 32 streams already"

/* A wait for an event recorded in the capture begun on `origin`, by a stream of another. */
static inline void tb_capture_isolation_why(char *why, size_t size, const void *origin) {
  snprintf(why, size,
           "the event was recorded in another capture (that of stream %p): a dependency between "
           "two captures (CUDA's cudaErrorStreamCaptureIsolation)",
           origin);
}

/* capture_end on a stream that joined the capture begun on `origin`. */
static inline void tb_capture_unmatched_why(char *why, size_t size, const void *origin) {
  snprintf(why, size,
           "the stream joined the capture begun on stream %p and cannot end it (CUDA's "
           "cudaErrorStreamCaptureUnmatched)",
           origin);
}

/* capture_end of the capture begun on `origin`, which `joined` joined and was not joined back
 * into. */
static inline void tb_capture_unjoined_why(char *why, size_t size, const void *joined,
                                           const void *origin) {
  snprintf(why, size,
           "stream %p joined the capture (it waited for an event recorded in it) and was not "
           "joined back into stream %p before capture_end: record an event on it after its last "
           "work and make stream %p wait for it (CUDA's cudaErrorStreamCaptureUnjoined)",
           joined, origin, origin);
}

#endif /* TORCH_BACKEND_BACKENDS_COMMON_CAPTURE_H_ */
