/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Events of the stand-in (aclrtCreateEventWithFlag.md, aclrtRecordEvent.md,
 * aclrtQueryEventStatus.md, aclrtSynchronizeEvent.md, aclrtStreamWaitEvent.md,
 * aclrtEventElapsedTime.md, aclrtDestroyEvent.md).
 *
 * aclrtRecordEvent captures the work enqueued so far on a stream: it enqueues a record that
 * completes, with a CLOCK_MONOTONIC timestamp, when the stream's worker reaches it.  Recording
 * again replaces the event's record; a wait already enqueued keeps the record it saw.  Events
 * belong to the device current when they were created.  What the documentation leaves to the
 * implementation, the stand-in decides strictly, so that a caller that works here works there:
 *
 *   - an event never recorded is NOT_READY to aclrtQueryEventStatus
 *     (aclrtEventRecordedStatus.md), while aclrtSynchronizeEvent returns at once (it captured
 *     nothing) and aclrtStreamWaitEvent waits for nothing;
 *   - aclrtStreamWaitEvent needs an event created with ACL_EVENT_SYNC;
 *   - aclrtEventElapsedTime needs two completed records of ACL_EVENT_TIME_LINE events of one
 *     device, and reports an end earlier than the start as ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL;
 *   - records keep working on a faulted device (they carry no work); queries and
 *     synchronisations report the fault;
 *   - on a capturing stream (acl_mdl.h), CANN records event records and waits into the model
 *     (multi-stream capture); the stand-in does not: aclrtRecordEvent, and aclrtStreamWaitEvent
 *     of a record not yet complete, fail with ACL_ERROR_RT_FEATURE_NOT_SUPPORT and invalidate
 *     the capture (sd_capture_add).  A wait for a complete record needs no task and succeeds.
 */
#define _GNU_SOURCE

#include <stdlib.h>
#include <time.h>

#include "runtime.h"

#define KNOWN_FLAGS (ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE)

uint64_t sd_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sd_record_release(sd_record *r) {
  if (r == NULL) return;
  pthread_mutex_lock(&g_rt.records_mutex);
  bool last = --r->refs == 0;
  pthread_mutex_unlock(&g_rt.records_mutex);
  if (last) free(r);
}

void sd_event_free(sd_event *e) {
  pthread_mutex_lock(&g_rt.records_mutex);
  sd_record *r = e->latest;
  e->latest = NULL;
  pthread_mutex_unlock(&g_rt.records_mutex);
  sd_record_release(r);
  e->magic = 0;
  free(e);
}

static aclError resolve_event(aclrtEvent handle, const char *call, sd_event **out) {
  if (handle == NULL || !sd_handle_live(handle) || ((sd_event *)handle)->magic != SD_EVENT_MAGIC) {
    return sd_error(ACL_ERROR_RT_INVALID_HANDLE, "%s: %p is not a live event", call, handle);
  }
  *out = handle;
  return ACL_SUCCESS;
}

aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag) {
  int32_t current = -1;
  aclError err = sd_check_init("aclrtCreateEventWithFlag");
  if (err == ACL_SUCCESS) err = sd_current_device("aclrtCreateEventWithFlag", &current);
  if (err != ACL_SUCCESS) return err;
  if (event == NULL) {
    return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtCreateEventWithFlag: event is NULL");
  }
  if ((flag & ~(uint32_t)KNOWN_FLAGS) != 0) {
    return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtCreateEventWithFlag: unknown flag bits 0x%x",
                    (unsigned)(flag & ~(uint32_t)KNOWN_FLAGS));
  }
  sd_device *device = &g_rt.devices[current];
  sd_event *e = calloc(1, sizeof *e);
  if (e == NULL) {
    return sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "aclrtCreateEventWithFlag: out of memory");
  }
  e->magic = SD_EVENT_MAGIC;
  e->device = current;
  e->flags = flag;
  pthread_mutex_lock(&device->mutex);
  bool sync = (flag & ACL_EVENT_SYNC) != 0;
  if (sync && device->sync_event_count >= SD_MAX_SYNC_EVENTS) {
    pthread_mutex_unlock(&device->mutex);
    free(e);
    return sd_error(ACL_ERROR_RT_NO_EVENT_RESOURCE,
                    "aclrtCreateEventWithFlag: device %d has %d events with ACL_EVENT_SYNC, the "
                    "most it supports",
                    (int)current, SD_MAX_SYNC_EVENTS);
  }
  if (!sd_handle_add(e)) {
    pthread_mutex_unlock(&device->mutex);
    free(e);
    return sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "aclrtCreateEventWithFlag: out of memory");
  }
  e->context = atomic_load(&device->context);
  e->next = device->events;
  if (device->events != NULL) device->events->prev = e;
  device->events = e;
  if (sync) device->sync_event_count++;
  pthread_mutex_unlock(&device->mutex);
  *event = e;
  return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event) {
  aclError err = sd_check_init("aclrtDestroyEvent");
  sd_event *e = NULL;
  if (err == ACL_SUCCESS) err = resolve_event(event, "aclrtDestroyEvent", &e);
  if (err != ACL_SUCCESS) return err;
  sd_device *device = &g_rt.devices[e->device];
  pthread_mutex_lock(&device->mutex);
  sd_handle_remove(e);
  if (e->prev != NULL) {
    e->prev->next = e->next;
  } else if (device->events == e) {
    device->events = e->next;
  }
  if (e->next != NULL) e->next->prev = e->prev;
  if (e->flags & ACL_EVENT_SYNC) device->sync_event_count--;
  pthread_mutex_unlock(&device->mutex);
  sd_event_free(e); /* queued records and waits keep their record */
  return ACL_SUCCESS;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  aclError err = sd_check_init("aclrtRecordEvent");
  sd_event *e = NULL;
  sd_stream *s = NULL;
  if (err == ACL_SUCCESS) err = resolve_event(event, "aclrtRecordEvent", &e);
  if (err == ACL_SUCCESS) err = sd_resolve_stream(stream, true, "aclrtRecordEvent", &s);
  if (err != ACL_SUCCESS) return err;
  if (s->device != e->device) {
    int32_t stream_device = s->device;
    sd_stream_release(s);
    return sd_error(ACL_ERROR_RESOURCE_NOT_MATCH,
                    "aclrtRecordEvent: the event belongs to device %d, the stream to device %d",
                    (int)e->device, (int)stream_device);
  }
  sd_record *r = calloc(1, sizeof *r);
  sd_task *task = calloc(1, sizeof *task);
  if (r == NULL || task == NULL) {
    free(r);
    free(task);
    sd_stream_release(s);
    return sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "aclrtRecordEvent: out of host memory");
  }
  r->refs = 2; /* the event's and the task's */
  task->kind = SD_TASK_RECORD;
  task->name = "aclrtRecordEvent";
  task->record = r;
  pthread_mutex_lock(&g_rt.records_mutex);
  sd_record *previous = e->latest;
  e->latest = r;
  pthread_mutex_unlock(&g_rt.records_mutex);
  err = sd_stream_enqueue(s, task, NULL);
  sd_stream_release(s);
  if (err != ACL_SUCCESS) {
    pthread_mutex_lock(&g_rt.records_mutex);
    e->latest = previous;
    pthread_mutex_unlock(&g_rt.records_mutex);
    free(task);
    free(r);
    return err;
  }
  sd_record_release(previous);
  return ACL_SUCCESS;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus *status) {
  aclError err = sd_check_init("aclrtQueryEventStatus");
  sd_event *e = NULL;
  if (err == ACL_SUCCESS) err = resolve_event(event, "aclrtQueryEventStatus", &e);
  if (err != ACL_SUCCESS) return err;
  if (status == NULL) {
    return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtQueryEventStatus: status is NULL");
  }
  err = sd_check_fault(e->device, "aclrtQueryEventStatus");
  if (err != ACL_SUCCESS) return err;
  pthread_mutex_lock(&g_rt.records_mutex);
  bool done = e->latest != NULL && e->latest->done;
  pthread_mutex_unlock(&g_rt.records_mutex);
  *status = done ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
  aclError err = sd_check_init("aclrtSynchronizeEvent");
  sd_event *e = NULL;
  if (err == ACL_SUCCESS) err = resolve_event(event, "aclrtSynchronizeEvent", &e);
  if (err != ACL_SUCCESS) return err;
  int32_t device = e->device;
  pthread_mutex_lock(&g_rt.records_mutex);
  sd_record *r = e->latest;
  if (r != NULL) {
    r->refs++;
    while (!r->done) pthread_cond_wait(&g_rt.records_cond, &g_rt.records_mutex);
  }
  pthread_mutex_unlock(&g_rt.records_mutex);
  sd_record_release(r);
  return sd_check_fault(device, "aclrtSynchronizeEvent");
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  aclError err = sd_check_init("aclrtStreamWaitEvent");
  sd_event *e = NULL;
  sd_stream *s = NULL;
  if (err == ACL_SUCCESS) err = resolve_event(event, "aclrtStreamWaitEvent", &e);
  if (err != ACL_SUCCESS) return err;
  if ((e->flags & ACL_EVENT_SYNC) == 0) {
    return sd_error(ACL_ERROR_RT_PARAM_INVALID,
                    "aclrtStreamWaitEvent: the event was created without ACL_EVENT_SYNC, which "
                    "stream waits need (aclrtCreateEventWithFlag)");
  }
  err = sd_resolve_stream(stream, true, "aclrtStreamWaitEvent", &s);
  if (err != ACL_SUCCESS) return err;
  err = sd_check_fault(s->device, "aclrtStreamWaitEvent");
  sd_record *r = NULL;
  if (err == ACL_SUCCESS) {
    pthread_mutex_lock(&g_rt.records_mutex);
    r = e->latest;
    if (r != NULL && r->done) r = NULL; /* nothing left to wait for */
    if (r != NULL) r->refs++;
    pthread_mutex_unlock(&g_rt.records_mutex);
  }
  if (r != NULL) {
    sd_task *task = calloc(1, sizeof *task);
    if (task == NULL) {
      sd_record_release(r);
      err = sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "aclrtStreamWaitEvent: out of memory");
    } else {
      task->kind = SD_TASK_WAIT;
      task->name = "aclrtStreamWaitEvent";
      task->record = r;
      err = sd_stream_enqueue(s, task, NULL);
      if (err != ACL_SUCCESS) {
        free(task);
        sd_record_release(r);
      }
    }
  }
  sd_stream_release(s);
  return err;
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent) {
  aclError err = sd_check_init("aclrtEventElapsedTime");
  sd_event *start = NULL, *end = NULL;
  if (err == ACL_SUCCESS) err = resolve_event(startEvent, "aclrtEventElapsedTime", &start);
  if (err == ACL_SUCCESS) err = resolve_event(endEvent, "aclrtEventElapsedTime", &end);
  if (err != ACL_SUCCESS) return err;
  if (ms == NULL) return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime: ms is NULL");
  if (!(start->flags & ACL_EVENT_TIME_LINE) || !(end->flags & ACL_EVENT_TIME_LINE)) {
    return sd_error(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                    "aclrtEventElapsedTime: the %s event was created without ACL_EVENT_TIME_LINE",
                    (start->flags & ACL_EVENT_TIME_LINE) ? "end" : "start");
  }
  if (start->device != end->device) {
    return sd_error(ACL_ERROR_RESOURCE_NOT_MATCH,
                    "aclrtEventElapsedTime: the events belong to devices %d and %d",
                    (int)start->device, (int)end->device);
  }
  pthread_mutex_lock(&g_rt.records_mutex);
  const sd_record *r0 = start->latest, *r1 = end->latest;
  bool recorded0 = r0 != NULL, recorded1 = r1 != NULL;
  bool done0 = recorded0 && r0->done, done1 = recorded1 && r1->done;
  uint64_t t0 = done0 ? r0->time : 0, t1 = done1 ? r1->time : 0;
  pthread_mutex_unlock(&g_rt.records_mutex);
  if (!recorded0 || !recorded1) {
    return sd_error(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                    "aclrtEventElapsedTime: the %s event was never recorded",
                    !recorded0 ? "start" : "end");
  }
  if (!done0 || !done1) {
    return sd_error(ACL_ERROR_RT_EVENT_NOT_COMPLETE,
                    "aclrtEventElapsedTime: the %s event's recorded work has not completed",
                    !done0 ? "start" : "end");
  }
  if (t1 < t0) {
    return sd_error(ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL,
                    "aclrtEventElapsedTime: the end event completed before the start event");
  }
  *ms = (float)((double)(t1 - t0) / 1e6);
  return ACL_SUCCESS;
}
