/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Streams of the stand-in.  A stream is a FIFO of tasks run in order by one worker thread,
 * started on the stream's first task (a process that forks before enqueueing anything has no
 * thread to lose).  Each device's default context has a default stream (aclrtStream NULL in
 * every call that takes one).  Tasks are copies, memsets, operators (standin_launch), event
 * records and event waits.  Once a task fails (standin_task_fail), its device is faulted:
 * later tasks of the device are dropped without running (their release still runs), and every
 * synchronisation reports the fault until aclrtResetDevice (standin.h).
 *
 * aclrtDestroyStream waits for the stream's tasks before it destroys it
 * (aclrtDestroyStream.md); so does the release of a device context.  A stream destroyed while
 * it captures (acl_mdl.h) loses its capture: the tasks recorded so far are released, no model
 * comes of it.
 *
 * While a stream captures, sd_stream_enqueue hands its tasks to the capture (model.c) instead
 * of the worker, and the calls that would wait for them (aclrtSynchronizeStream,
 * aclrtStreamQuery) fail with ACL_ERROR_RT_STREAM_CAPTURED and invalidate the capture.
 *
 * The registry of live handles lets every call check a stream or event handle without
 * touching memory behind a stale one.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

/* ---- registry of live handles: an open-addressing set of pointers ---- */

#define TOMBSTONE ((void *)1)

static void **g_slots;
static size_t g_slot_count; /* a power of two, or 0 */
static size_t g_live;       /* handles in the set */
static size_t g_used;       /* slots not NULL: handles and tombstones */

static size_t slot_of(const void *handle, size_t count) {
  uint64_t h = (uint64_t)(uintptr_t)handle;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return (size_t)(h & (count - 1));
}

/* Rebuilds the table without tombstones, with room for growth.  Caller holds handles_mutex. */
static bool rehash(void) {
  size_t count = 64;
  while (count < (g_live + 1) * 4) count *= 2;
  void **slots = calloc(count, sizeof *slots);
  if (slots == NULL) return false;
  for (size_t i = 0; i < g_slot_count; i++) {
    void *h = g_slots[i];
    if (h == NULL || h == TOMBSTONE) continue;
    size_t at = slot_of(h, count);
    while (slots[at] != NULL) at = (at + 1) & (count - 1);
    slots[at] = h;
  }
  free(g_slots);
  g_slots = slots;
  g_slot_count = count;
  g_used = g_live;
  return true;
}

bool sd_handle_add(void *handle) {
  pthread_mutex_lock(&g_rt.handles_mutex);
  if ((g_used + 1) * 2 > g_slot_count && !rehash()) {
    pthread_mutex_unlock(&g_rt.handles_mutex);
    return false;
  }
  size_t at = slot_of(handle, g_slot_count);
  while (g_slots[at] != NULL && g_slots[at] != TOMBSTONE) at = (at + 1) & (g_slot_count - 1);
  if (g_slots[at] == NULL) g_used++;
  g_slots[at] = handle;
  g_live++;
  pthread_mutex_unlock(&g_rt.handles_mutex);
  return true;
}

/* Caller holds handles_mutex.  The slot of `handle`, or g_slot_count. */
static size_t find(const void *handle) {
  if (g_slot_count == 0 || handle == NULL || handle == TOMBSTONE) return g_slot_count;
  size_t at = slot_of(handle, g_slot_count);
  for (size_t n = 0; n < g_slot_count && g_slots[at] != NULL; n++) {
    if (g_slots[at] == handle) return at;
    at = (at + 1) & (g_slot_count - 1);
  }
  return g_slot_count;
}

void sd_handle_remove(void *handle) {
  pthread_mutex_lock(&g_rt.handles_mutex);
  size_t at = find(handle);
  if (at < g_slot_count) {
    g_slots[at] = TOMBSTONE;
    g_live--;
  }
  pthread_mutex_unlock(&g_rt.handles_mutex);
}

bool sd_handle_live_locked(const void *handle) {
  return handle != NULL && find(handle) < g_slot_count;
}

bool sd_handle_live(const void *handle) {
  pthread_mutex_lock(&g_rt.handles_mutex);
  bool live = handle != NULL && find(handle) < g_slot_count;
  pthread_mutex_unlock(&g_rt.handles_mutex);
  return live;
}

void sd_handles_clear(void) {
  pthread_mutex_lock(&g_rt.handles_mutex);
  free(g_slots);
  g_slots = NULL;
  g_slot_count = g_used = g_live = 0;
  pthread_mutex_unlock(&g_rt.handles_mutex);
}

/* ---- streams ---- */

/* The task a worker is running, for standin_task_fail. */
static _Thread_local const sd_task *t_task;
static _Thread_local int32_t t_task_device = -1;

aclError sd_stream_new(int32_t device, uint64_t context, bool is_default, sd_stream **out) {
  sd_stream *s = calloc(1, sizeof *s);
  if (s == NULL) {
    return sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "out of host memory creating a stream");
  }
  s->magic = SD_STREAM_MAGIC;
  s->device = device;
  s->context = context;
  s->is_default = is_default;
  atomic_init(&s->refs, 1);
  pthread_mutex_init(&s->mutex, NULL);
  pthread_cond_init(&s->work, NULL);
  pthread_cond_init(&s->progress, NULL);
  *out = s;
  return ACL_SUCCESS;
}

void sd_stream_release(sd_stream *s) {
  if (atomic_fetch_sub(&s->refs, 1) != 1) return;
  pthread_mutex_destroy(&s->mutex);
  pthread_cond_destroy(&s->work);
  pthread_cond_destroy(&s->progress);
  s->magic = 0;
  free(s);
}

/* Runs `task`; true when it counted itself complete (records do). */
static bool run_task(sd_stream *s, sd_task *task) {
  switch (task->kind) {
    case SD_TASK_WORK:
      if (atomic_load_explicit(&g_rt.devices[s->device].fault, memory_order_acquire) == 0) {
        t_task = task;
        t_task_device = s->device;
        task->run(task->arg);
        t_task = NULL;
        t_task_device = -1;
      }
      if (task->release != NULL) task->release(task->arg);
      break;
    case SD_TASK_RECORD:
      /* The record completes together with the stream's count of completed tasks (under the
       * stream's lock), so whoever sees the event complete sees the stream reach it. */
      pthread_mutex_lock(&s->mutex);
      pthread_mutex_lock(&g_rt.records_mutex);
      task->record->time = sd_now_ns();
      task->record->done = true;
      pthread_cond_broadcast(&g_rt.records_cond);
      pthread_mutex_unlock(&g_rt.records_mutex);
      s->completed++;
      pthread_cond_broadcast(&s->progress);
      pthread_mutex_unlock(&s->mutex);
      sd_record_release(task->record);
      return true;
    case SD_TASK_WAIT:
      pthread_mutex_lock(&g_rt.records_mutex);
      while (!task->record->done) pthread_cond_wait(&g_rt.records_cond, &g_rt.records_mutex);
      pthread_mutex_unlock(&g_rt.records_mutex);
      sd_record_release(task->record);
      break;
  }
  return false;
}

static void *worker_main(void *arg) {
  sd_stream *s = arg;
  pthread_mutex_lock(&s->mutex);
  for (;;) {
    while (s->head == NULL && !s->stopping) pthread_cond_wait(&s->work, &s->mutex);
    sd_task *task = s->head;
    if (task == NULL) break; /* stopping, and nothing left */
    s->head = task->next;
    if (s->head == NULL) s->tail = NULL;
    pthread_mutex_unlock(&s->mutex);
    bool counted = run_task(s, task);
    free(task);
    pthread_mutex_lock(&s->mutex);
    if (!counted) {
      s->completed++;
      pthread_cond_broadcast(&s->progress);
    }
  }
  pthread_mutex_unlock(&s->mutex);
  return NULL;
}

void sd_run_nested(const sd_task *task, int32_t device) {
  const sd_task *outer = t_task;
  int32_t outer_device = t_task_device;
  t_task = task;
  t_task_device = device;
  task->run(task->arg);
  t_task = outer;
  t_task_device = outer_device;
}

aclError sd_stream_enqueue(sd_stream *s, sd_task *task, uint64_t *sequence) {
  task->next = NULL;
  pthread_mutex_lock(&s->mutex);
  if (s->capture != NULL) {
    aclError err = sd_capture_add(s, task);
    pthread_mutex_unlock(&s->mutex);
    if (err == ACL_SUCCESS && sequence != NULL) *sequence = 0; /* nothing to wait for */
    return err;
  }
  if (!s->started) {
    int rc = pthread_create(&s->thread, NULL, worker_main, s);
    if (rc != 0) {
      pthread_mutex_unlock(&s->mutex);
      return sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
                      "cannot start the worker thread of a stream of device %d: %s", (int)s->device,
                      strerror(rc));
    }
    s->started = true;
  }
  if (s->tail != NULL) {
    s->tail->next = task;
  } else {
    s->head = task;
  }
  s->tail = task;
  uint64_t n = ++s->enqueued;
  pthread_cond_signal(&s->work);
  pthread_mutex_unlock(&s->mutex);
  if (sequence != NULL) *sequence = n;
  return ACL_SUCCESS;
}

void sd_stream_wait(sd_stream *s, uint64_t target) {
  pthread_mutex_lock(&s->mutex);
  while (s->completed < target) pthread_cond_wait(&s->progress, &s->mutex);
  pthread_mutex_unlock(&s->mutex);
}

uint64_t sd_stream_enqueued(sd_stream *s) {
  pthread_mutex_lock(&s->mutex);
  uint64_t n = s->enqueued;
  pthread_mutex_unlock(&s->mutex);
  return n;
}

bool sd_stream_idle(sd_stream *s) {
  pthread_mutex_lock(&s->mutex);
  bool idle = s->completed == s->enqueued;
  pthread_mutex_unlock(&s->mutex);
  return idle;
}

void sd_stream_shutdown(sd_stream *s) {
  sd_handle_remove(s);
  pthread_mutex_lock(&s->mutex);
  s->stopping = true;
  bool started = s->started;
  pthread_cond_signal(&s->work);
  pthread_mutex_unlock(&s->mutex);
  if (started) pthread_join(s->thread, NULL); /* the worker drains the queue first */
  sd_stream_release(s);
}

aclError sd_resolve_stream(aclrtStream handle, bool on_current, const char *call, sd_stream **out) {
  int32_t current = -1;
  aclError err = ACL_SUCCESS;
  if (handle == NULL || on_current) err = sd_current_device(call, &current);
  if (err != ACL_SUCCESS) return err;
  sd_stream *s = NULL;
  if (handle == NULL) {
    sd_device *device = &g_rt.devices[current];
    pthread_mutex_lock(&device->mutex);
    s = device->default_stream;
    if (s != NULL) atomic_fetch_add(&s->refs, 1);
    pthread_mutex_unlock(&device->mutex);
    if (s == NULL) {
      return sd_error(ACL_ERROR_RT_CONTEXT_NULL, "%s: device %d has no default stream", call,
                      (int)current);
    }
  } else {
    pthread_mutex_lock(&g_rt.handles_mutex);
    bool live = find(handle) < g_slot_count;
    if (live) {
      s = handle;
      live = s->magic == SD_STREAM_MAGIC;
      if (live) atomic_fetch_add(&s->refs, 1);
    }
    pthread_mutex_unlock(&g_rt.handles_mutex);
    if (!live) {
      return sd_error(ACL_ERROR_RT_INVALID_HANDLE, "%s: %p is not a live stream", call, handle);
    }
    if (on_current && s->device != current) {
      int32_t device = s->device;
      sd_stream_release(s);
      return sd_error(ACL_ERROR_RT_STREAM_CONTEXT,
                      "%s: the stream belongs to device %d, but the current device is %d: call "
                      "aclrtSetDevice(%d) first",
                      call, (int)device, (int)current, (int)device);
    }
  }
  *out = s;
  return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream) {
  int32_t current = -1;
  aclError err = sd_check_init("aclrtCreateStream");
  if (err == ACL_SUCCESS) err = sd_current_device("aclrtCreateStream", &current);
  if (err != ACL_SUCCESS) return err;
  if (stream == NULL) return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is NULL");
  sd_device *device = &g_rt.devices[current];
  pthread_mutex_lock(&device->mutex);
  if (device->stream_count >= SD_MAX_STREAMS) {
    pthread_mutex_unlock(&device->mutex);
    return sd_error(ACL_ERROR_RT_NO_STREAM_RESOURCE,
                    "aclrtCreateStream: device %d has %d streams, the most it supports "
                    "(the default stream included)",
                    (int)current, SD_MAX_STREAMS);
  }
  sd_stream *s = NULL;
  err = sd_stream_new(current, atomic_load(&device->context), false, &s);
  if (err == ACL_SUCCESS && !sd_handle_add(s)) {
    sd_stream_release(s);
    err = sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "aclrtCreateStream: out of host memory");
  }
  if (err == ACL_SUCCESS) {
    s->next = device->streams;
    device->streams = s;
    device->stream_count++;
    *stream = s;
  }
  pthread_mutex_unlock(&device->mutex);
  return err;
}

aclError aclrtDestroyStream(aclrtStream stream) {
  aclError err = sd_check_init("aclrtDestroyStream");
  if (err != ACL_SUCCESS) return err;
  if (stream == NULL) {
    return sd_error(ACL_ERROR_INVALID_PARAM,
                    "aclrtDestroyStream: stream is NULL (the default stream cannot be destroyed)");
  }
  sd_stream *s = NULL;
  err = sd_resolve_stream(stream, true, "aclrtDestroyStream", &s);
  if (err != ACL_SUCCESS) return err;
  sd_device *device = &g_rt.devices[s->device];
  pthread_mutex_lock(&device->mutex);
  bool found = false;
  for (sd_stream **link = &device->streams; *link != NULL; link = &(*link)->next) {
    if (*link == s) {
      *link = s->next;
      found = true;
      break;
    }
  }
  if (found) {
    device->stream_count--;
    sd_capture_abandon(s); /* a capture in progress ends with its stream */
  }
  pthread_mutex_unlock(&device->mutex);
  sd_stream_release(s); /* the reference resolve took; the handle's stays for shutdown */
  if (!found) {
    return sd_error(ACL_ERROR_RT_INVALID_HANDLE, "aclrtDestroyStream: %p is being destroyed",
                    stream);
  }
  sd_stream_shutdown(s);
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  aclError err = sd_check_init("aclrtSynchronizeStream");
  sd_stream *s = NULL;
  if (err == ACL_SUCCESS) err = sd_resolve_stream(stream, false, "aclrtSynchronizeStream", &s);
  if (err != ACL_SUCCESS) return err;
  err = sd_capture_refuse_stream(s, "aclrtSynchronizeStream");
  if (err != ACL_SUCCESS) {
    sd_stream_release(s);
    return err;
  }
  sd_stream_wait(s, sd_stream_enqueued(s));
  int32_t device = s->device;
  sd_stream_release(s);
  return sd_check_fault(device, "aclrtSynchronizeStream");
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status) {
  aclError err = sd_check_init("aclrtStreamQuery");
  if (err != ACL_SUCCESS) return err;
  if (status == NULL) return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtStreamQuery: status is NULL");
  sd_stream *s = NULL;
  err = sd_resolve_stream(stream, false, "aclrtStreamQuery", &s);
  if (err != ACL_SUCCESS) return err;
  err = sd_capture_refuse_stream(s, "aclrtStreamQuery");
  if (err != ACL_SUCCESS) {
    sd_stream_release(s);
    return err;
  }
  bool idle = sd_stream_idle(s);
  int32_t device = s->device;
  sd_stream_release(s);
  err = sd_check_fault(device, "aclrtStreamQuery");
  if (err != ACL_SUCCESS) return err;
  *status = idle ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

/* ---- the operator library's entry points (standin.h) ---- */

aclError standin_launch(aclrtStream stream, const char *name, standin_task_fn run,
                        void (*release)(void *arg), void *arg) {
  aclError err = sd_check_init("standin_launch");
  if (err != ACL_SUCCESS) return err;
  if (run == NULL) return sd_error(ACL_ERROR_INVALID_PARAM, "standin_launch: run is NULL");
  const char *call = name != NULL ? name : "standin_launch";
  sd_stream *s = NULL;
  err = sd_resolve_stream(stream, true, call, &s);
  if (err != ACL_SUCCESS) return err;
  err = sd_check_fault(s->device, call);
  sd_task *task = NULL;
  if (err == ACL_SUCCESS) {
    task = calloc(1, sizeof *task);
    if (task == NULL) {
      err = sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "%s: out of host memory", call);
    }
  }
  if (err == ACL_SUCCESS) {
    task->kind = SD_TASK_WORK;
    task->name = call;
    task->run = run;
    task->release = release;
    task->arg = arg;
    err = sd_stream_enqueue(s, task, NULL);
    if (err != ACL_SUCCESS) free(task);
  }
  sd_stream_release(s);
  return err;
}

void standin_task_fail(const char *format, ...) {
  char message[SD_FAULT_MESSAGE_SIZE - 64];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  if (t_task == NULL) {
    standin_set_error("standin_task_fail called outside a running task: %s", message);
    fprintf(stderr, "ascendcl stand-in: standin_task_fail called outside a running task: %s\n",
            message);
    return;
  }
  char full[SD_FAULT_MESSAGE_SIZE];
  snprintf(full, sizeof full, "%s: %s", t_task->name, message);
  sd_fault_device(t_task_device, ACL_ERROR_RT_AICORE_EXCEPTION, full);
}
