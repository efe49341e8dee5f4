/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's event slots (and stream.wait_event) over aclrtCreateEventWithFlag, aclrtRecordEvent,
 * aclrtQueryEventStatus, aclrtSynchronizeEvent, aclrtStreamWaitEvent, aclrtEventElapsedTime
 * and aclrtDestroyEvent.
 *
 * Where AscendCL and the ABI differ, the adapter keeps the ABI's rules itself:
 *   - every event is created with ACL_EVENT_SYNC, since any event may be waited for
 *     (aclrtStreamWaitEvent needs it, aclrtCreateEventWithFlag.md), plus ACL_EVENT_TIME_LINE
 *     for TB_EVENT_FLAG_TIMING;
 *   - an event never recorded is complete for the ABI, NOT_READY for aclrtQueryEventStatus
 *     (aclrtEventRecordedStatus.md): the adapter remembers whether it recorded an event and
 *     answers for one it never recorded without asking;
 *   - recording keeps working on a faulted device (vendor.h): when aclrtRecordEvent fails with
 *     a fault code, the fault is recorded and the event's record counts as lost -- complete
 *     once the device is reset, with no time to measure;
 *   - a negative elapsed time is an error for aclrtEventElapsedTime
 *     (ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL) and a value for the ABI: the adapter measures the
 *     other way round and negates;
 *   - on a stream capturing a graph, a record is a mark of the capture and a wait for one joins
 *     the waiting stream into the capture (graph.c, multi-stream capture, as vendor.h says):
 *     neither reaches AscendCL.  A wait of a capturing stream for an event recorded outside
 *     the capture and not yet complete is refused, invalidating the capture (CUDA's
 *     cudaErrorStreamCaptureIsolation); a complete one needs no wait.
 */
#define _GNU_SOURCE

#include <stdlib.h>

#include "npu_runtime.h"

#define NPU_EVENT_MAGIC 0x6e707565u /* "npue" */

static npu_event_rec *rec_of(tb_event event) { return (npu_event_rec *)event; }

static tb_status check_event(npu_context *ctx, tb_event event, const char *call) {
  tb_status status = npu_check_context(ctx, call);
  if (status != TB_OK) return status;
  const npu_event_rec *e = rec_of(event);
  if (e == NULL || e->magic != NPU_EVENT_MAGIC) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: %s: %p is not a live event", call,
                    (void *)event);
  }
  if (e->ctx != ctx) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: %s: event %p belongs to another context than the call's", call,
                    (void *)event);
  }
  return TB_OK;
}

static void unlink_event(npu_context *ctx, npu_event_rec *e) {
  if (e->prev != NULL) {
    e->prev->next = e->next;
  } else {
    ctx->events = e->next;
  }
  if (e->next != NULL) e->next->prev = e->prev;
  e->prev = e->next = NULL;
}

void npu_events_release(npu_context *ctx) {
  pthread_mutex_lock(&ctx->mutex);
  npu_event_rec *e = ctx->events;
  ctx->events = NULL;
  pthread_mutex_unlock(&ctx->mutex);
  while (e != NULL) {
    npu_event_rec *next = e->next;
    if (aclrtDestroyEvent(e->handle) != ACL_SUCCESS) npu_drop_acl_messages();
    e->magic = 0;
    free(e);
    e = next;
  }
}

tb_status npu_event_create(tb_context ctx, int32_t device, uint32_t flags, tb_event *event) {
  tb_status status = npu_check_device(ctx, device, "event create");
  if (status != TB_OK) return status;
  if (event == NULL) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: event create: event is NULL");
  }
  if ((flags & ~TB_EVENT_FLAG_TIMING) != 0) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: event create: unknown flags 0x%x",
                    (unsigned)flags);
  }
  status = npu_activate(ctx, device, "event create");
  if (status != TB_OK) return status;
  npu_event_rec *e = calloc(1, sizeof *e);
  if (e == NULL) return npu_fail(ctx, TB_ERROR_OUT_OF_MEMORY, "npu: event create: out of memory");
  uint32_t acl_flags = ACL_EVENT_SYNC | ((flags & TB_EVENT_FLAG_TIMING) ? ACL_EVENT_TIME_LINE : 0);
  status = npu_check(ctx, device, aclrtCreateEventWithFlag(&e->handle, acl_flags),
                     "aclrtCreateEventWithFlag");
  if (status != TB_OK) {
    free(e);
    return status;
  }
  e->magic = NPU_EVENT_MAGIC;
  e->ctx = ctx;
  e->device = device;
  e->flags = flags;
  atomic_init(&e->state, NPU_EVENT_NEVER_RECORDED);
  pthread_mutex_lock(&ctx->mutex);
  e->next = ctx->events;
  if (ctx->events != NULL) ctx->events->prev = e;
  ctx->events = e;
  pthread_mutex_unlock(&ctx->mutex);
  *event = (tb_event)e;
  return TB_OK;
}

tb_status npu_event_destroy(tb_context ctx, tb_event event) {
  tb_status status = check_event(ctx, event, "event destroy");
  if (status != TB_OK) return status;
  npu_event_rec *e = rec_of(event);
  pthread_mutex_lock(&ctx->mutex);
  unlink_event(ctx, e);
  e->magic = 0;
  pthread_mutex_unlock(&ctx->mutex);
  /* aclrtDestroyEvent.md: returns at once, the record completes on its own. */
  status = npu_check(ctx, e->device, aclrtDestroyEvent(e->handle), "aclrtDestroyEvent");
  free(e);
  return status;
}

tb_status npu_event_record(tb_context ctx, tb_event event, tb_stream stream) {
  tb_status status = check_event(ctx, event, "event record");
  if (status == TB_OK) status = npu_stream_check(ctx, stream, "event record");
  if (status != TB_OK) return status;
  npu_event_rec *e = rec_of(event);
  int32_t device = npu_stream_device(stream);
  if (device != e->device) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: event record: the event belongs to npu:%d, the stream to npu:%d",
                    (int)e->device, (int)device);
  }
  status = npu_capture_record(ctx, e, stream);
  if (status != TB_ERROR_NOT_READY) return status; /* a mark in the capture of `stream` */
  status = npu_activate(ctx, device, "event record");
  if (status != TB_OK) return status;
  aclError err = aclrtRecordEvent(e->handle, npu_acl_stream(stream));
  if (err == ACL_SUCCESS) {
    atomic_store(&e->state, NPU_EVENT_RECORDED);
    return TB_OK;
  }
  if (npu_is_fault_code(err)) {
    (void)npu_check(ctx, device, err, "aclrtRecordEvent"); /* records the fault */
    atomic_store(&e->state, NPU_EVENT_RECORD_LOST);
    return TB_OK;
  }
  return npu_check(ctx, device, err, "aclrtRecordEvent");
}

tb_status npu_event_query(tb_context ctx, tb_event event) {
  tb_status status = check_event(ctx, event, "event query");
  if (status != TB_OK) return status;
  npu_event_rec *e = rec_of(event);
  status = npu_capture_check_event(ctx, e, "event query");
  if (status == TB_OK) status = npu_fault_check(e->device, "event query");
  if (status != TB_OK || atomic_load(&e->state) != NPU_EVENT_RECORDED) return status;
  status = npu_activate(ctx, e->device, "event query");
  if (status != TB_OK) return status;
  aclrtEventRecordedStatus state = ACL_EVENT_RECORDED_STATUS_NOT_READY;
  status =
      npu_check(ctx, e->device, aclrtQueryEventStatus(e->handle, &state), "aclrtQueryEventStatus");
  if (status != TB_OK) return status;
  return state == ACL_EVENT_RECORDED_STATUS_COMPLETE ? TB_OK : TB_ERROR_NOT_READY;
}

tb_status npu_event_synchronize(tb_context ctx, tb_event event) {
  tb_status status = check_event(ctx, event, "event synchronize");
  if (status != TB_OK) return status;
  npu_event_rec *e = rec_of(event);
  status = npu_capture_check_event(ctx, e, "event synchronize");
  if (status == TB_OK) status = npu_fault_check(e->device, "event synchronize");
  if (status != TB_OK || atomic_load(&e->state) != NPU_EVENT_RECORDED) return status;
  status = npu_activate(ctx, e->device, "event synchronize");
  if (status != TB_OK) return status;
  return npu_check(ctx, e->device, aclrtSynchronizeEvent(e->handle), "aclrtSynchronizeEvent");
}

tb_status npu_stream_wait_event(tb_context ctx, tb_stream stream, tb_event event) {
  tb_status status = npu_stream_check(ctx, stream, "stream wait_event");
  if (status == TB_OK) status = check_event(ctx, event, "stream wait_event");
  if (status != TB_OK) return status;
  npu_event_rec *e = rec_of(event);
  int32_t device = npu_stream_device(stream);
  status = npu_fault_check(device, "stream wait_event");
  if (status != TB_OK) return status;
  status = npu_capture_wait(ctx, stream, e);
  if (status != TB_ERROR_NOT_READY) return status; /* a mark of a capture under way */
  /* Never recorded, or its record lost: complete, nothing to wait for. */
  if (atomic_load(&e->state) != NPU_EVENT_RECORDED) return TB_OK;
  status = npu_activate(ctx, device, "stream wait_event");
  if (status != TB_OK) return status;
  if (npu_stream_capturing(ctx, stream)) {
    /* Complete: nothing to wait for, nothing to capture.  Not yet: refused. */
    aclrtEventRecordedStatus state = ACL_EVENT_RECORDED_STATUS_NOT_READY;
    status = npu_check(ctx, e->device, aclrtQueryEventStatus(e->handle, &state),
                       "aclrtQueryEventStatus");
    if (status != TB_OK || state == ACL_EVENT_RECORDED_STATUS_COMPLETE) return status;
    return npu_capture_check_stream(ctx, stream, "stream wait_event",
                                    "the event was recorded outside the capture and is not "
                                    "complete: a dependency on work outside the capture (CUDA's "
                                    "cudaErrorStreamCaptureIsolation)");
  }
  return npu_check(ctx, device, aclrtStreamWaitEvent(npu_acl_stream(stream), e->handle),
                   "aclrtStreamWaitEvent");
}

/* Whether the record of `e` is complete: TB_OK, TB_ERROR_NOT_READY, or a failure. */
static tb_status record_done(npu_context *ctx, const npu_event_rec *e) {
  aclrtEventRecordedStatus state = ACL_EVENT_RECORDED_STATUS_NOT_READY;
  tb_status status =
      npu_check(ctx, e->device, aclrtQueryEventStatus(e->handle, &state), "aclrtQueryEventStatus");
  if (status != TB_OK) return status;
  return state == ACL_EVENT_RECORDED_STATUS_COMPLETE ? TB_OK : TB_ERROR_NOT_READY;
}

tb_status npu_event_elapsed_time(tb_context ctx, tb_event start, tb_event end, float *ms) {
  tb_status status = check_event(ctx, start, "elapsed_time (start)");
  if (status == TB_OK) status = check_event(ctx, end, "elapsed_time (end)");
  if (status != TB_OK) return status;
  if (ms == NULL) return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: elapsed_time: ms is NULL");
  npu_event_rec *s = rec_of(start), *e = rec_of(end);
  status = npu_capture_check_event(ctx, s, "elapsed_time");
  if (status == TB_OK) status = npu_capture_check_event(ctx, e, "elapsed_time");
  if (status != TB_OK) return status;
  if (!(s->flags & TB_EVENT_FLAG_TIMING) || !(e->flags & TB_EVENT_FLAG_TIMING)) {
    return npu_fail(ctx, TB_ERROR_NOT_SUPPORTED,
                    "npu: elapsed_time: the %s event was created without TB_EVENT_FLAG_TIMING",
                    (s->flags & TB_EVENT_FLAG_TIMING) ? "end" : "start");
  }
  if (s->device != e->device) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: elapsed_time: the events belong to npu:%d and npu:%d", (int)s->device,
                    (int)e->device);
  }
  int state_s = atomic_load(&s->state), state_e = atomic_load(&e->state);
  if (state_s == NPU_EVENT_NEVER_RECORDED || state_e == NPU_EVENT_NEVER_RECORDED) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: elapsed_time: the %s event was never recorded",
                    state_s == NPU_EVENT_NEVER_RECORDED ? "start" : "end");
  }
  status = npu_fault_check(s->device, "elapsed_time");
  if (status != TB_OK) return status;
  if (state_s == NPU_EVENT_RECORD_LOST || state_e == NPU_EVENT_RECORD_LOST) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: elapsed_time: the %s event was recorded while npu:%d was faulted: it "
                    "has no time",
                    state_s == NPU_EVENT_RECORD_LOST ? "start" : "end", (int)s->device);
  }
  status = npu_activate(ctx, s->device, "elapsed_time");
  if (status == TB_OK) status = record_done(ctx, s);
  if (status == TB_OK) status = record_done(ctx, e);
  if (status != TB_OK) return status;
  float value = 0;
  aclError err = aclrtEventElapsedTime(&value, s->handle, e->handle);
  if (err == ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL) {
    /* The end completed first: the ABI wants the negative time. */
    npu_drop_acl_messages();
    err = aclrtEventElapsedTime(&value, e->handle, s->handle);
    value = -value;
  }
  status = npu_check(ctx, s->device, err, "aclrtEventElapsedTime");
  if (status == TB_OK) *ms = value;
  return status;
}
