/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Stream capture of the stand-in (acl_mdl.h): aclmdlRICaptureBegin, aclmdlRICaptureGetInfo,
 * aclmdlRICaptureEnd, aclmdlRIExecuteAsync and aclmdlRIDestroy, after their pages of the
 * AscendCL runtime reference ("aclgraph": capture of a single stream).
 *
 * A capture belongs to its stream (sd_stream::capture) and to its device's list of captures
 * (for the calls that concern the whole device); it fills a model runtime instance.  Every task
 * enqueued on the capturing stream -- operators (standin_launch), aclrtMemcpyAsync,
 * aclrtMemsetAsync -- goes into the model instead of the worker: the model owns it from then on
 * and runs it at every aclmdlRIExecuteAsync, with the arguments it was given (device and host
 * addresses, scalars).  A task of the stand-in is therefore
 * re-runnable: its run function does not consume its argument (the operators' executors
 * translate their device addresses afresh at each run); `release` frees the argument once, when
 * the model goes away.  One run of a model is one task on the launching stream, which runs the
 * model's tasks in order.  Runs of one model run one after another in the order of their
 * aclmdlRIExecuteAsync calls, whatever streams they were enqueued on (CANN orders them with a
 * notify before and after each execution): a run first waits until the previous run is done.
 * Once the device has faulted, the remaining tasks of a run are dropped, as on a stream; a task
 * that fails faults the device with a message naming it.
 *
 * What the documentation leaves open, the stand-in decides as follows (the stricter reading,
 * CUDA's where CANN's is not documented):
 *
 *   - aclrtSynchronizeStream and aclrtStreamQuery of a capturing stream, and
 *     aclrtSynchronizeDevice of its device, fail with ACL_ERROR_RT_STREAM_CAPTURED (CANN's
 *     runtime refuses them "during the capture stage") and invalidate the capture;
 *   - event records and waits cannot be recorded (CANN turns them into a multi-stream capture,
 *     which the stand-in does not implement): ACL_ERROR_RT_FEATURE_NOT_SUPPORT, the capture is
 *     invalidated;
 *   - the unsafe calls (acl_mdl.h) are refused per the capture mode with
 *     ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT and leave the capture valid, as CANN's do; the
 *     restriction applies to the devices whose streams capture (CANN keeps the mode per
 *     context, that is per device); on the capturing stream itself, the synchronous form of
 *     aclrtMemcpyAsync (pageable host memory) cannot be recorded: it fails with that code in
 *     every mode and invalidates the capture (memory.c);
 *   - work enqueued on an invalidated capture is accepted and dropped; aclmdlRICaptureEnd then
 *     fails with ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, its message giving the first reason;
 *   - a model is not nested: aclmdlRIExecuteAsync on a capturing stream fails with
 *     ACL_ERROR_RT_STREAM_CAPTURED (the capture goes on);
 *   - aclmdlRIDestroy refuses a model with runs queued or running (ACL_ERROR_RT_MODEL_RUNNING,
 *     as CANN documents) and one being captured (ACL_ERROR_RT_MODEL_CAPTURED);
 *   - the release of a device context (the last aclrtResetDevice, aclFinalize) ends its
 *     captures without a model and destroys its models.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

struct sd_capture {
  sd_stream *stream;
  sd_model *model;
  aclmdlRICaptureMode mode;
  pthread_t thread; /* the thread that began it */
  bool invalidated; /* guarded by the stream's mutex */
  char reason[SD_FAULT_MESSAGE_SIZE];
  sd_capture *next; /* the device's captures (device mutex) */
};

struct sd_model {
  uint32_t magic;
  int32_t device;
  _Atomic int refs;       /* the handle's, and each queued run's */
  _Atomic bool capturing; /* still being captured: cannot run nor be destroyed */
  pthread_mutex_t run;    /* held while a run runs */
  sd_record *last;        /* completes when the latest run is done (g_rt.records_mutex) */
  sd_task **tasks;        /* owned; appended under the capturing stream's mutex */
  size_t count, capacity;
  sd_model *prev, *next; /* the device's models (device mutex) */
};

static const char *mode_name(aclmdlRICaptureMode mode) {
  switch (mode) {
    case ACL_MODEL_RI_CAPTURE_MODE_GLOBAL:
      return "ACL_MODEL_RI_CAPTURE_MODE_GLOBAL";
    case ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL:
      return "ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL";
    case ACL_MODEL_RI_CAPTURE_MODE_RELAXED:
      return "ACL_MODEL_RI_CAPTURE_MODE_RELAXED";
  }
  return "an unknown mode";
}

/* ---- models ---- */

static void model_release(sd_model *m) {
  if (atomic_fetch_sub(&m->refs, 1) != 1) return;
  for (size_t i = 0; i < m->count; i++) {
    sd_task *task = m->tasks[i];
    if (task->release != NULL) task->release(task->arg);
    free(task);
  }
  free(m->tasks);
  sd_record_release(m->last);
  pthread_mutex_destroy(&m->run);
  m->magic = 0;
  free(m);
}

/* Takes `m` out of the device's list and the registry and drops the handle's reference.  The
 * caller holds the device's mutex. */
static void model_discard(sd_device *device, sd_model *m) {
  if (m->prev != NULL) {
    m->prev->next = m->next;
  } else if (device->models == m) {
    device->models = m->next;
  }
  if (m->next != NULL) m->next->prev = m->prev;
  m->prev = m->next = NULL;
  sd_handle_remove(m);
  model_release(m);
}

void sd_models_release(sd_device *device) {
  while (device->models != NULL) model_discard(device, device->models);
}

/* A live model handle with a reference taken, or NULL (message set). */
static sd_model *resolve_model(aclmdlRI handle, const char *call) {
  sd_model *m = NULL;
  /* The registry holds models, streams and events (each starts with its magic).  A model
   * leaves the registry before the handle's reference goes: one found live under the
   * registry's lock still holds that reference while this one is taken. */
  pthread_mutex_lock(&g_rt.handles_mutex);
  if (sd_handle_live_locked(handle) && ((const sd_model *)handle)->magic == SD_MODEL_MAGIC) {
    m = handle;
    atomic_fetch_add(&m->refs, 1);
  }
  pthread_mutex_unlock(&g_rt.handles_mutex);
  if (m == NULL) {
    sd_error(ACL_ERROR_INVALID_PARAM, "%s: %p is not a live model runtime instance", call, handle);
  }
  return m;
}

/* One run of a model: after the run before it (NULL: none), completing `done`. */
typedef struct model_run {
  sd_model *model; /* a reference */
  sd_record *after, *done;
} model_run;

static void complete(sd_record *r) {
  pthread_mutex_lock(&g_rt.records_mutex);
  r->time = sd_now_ns();
  r->done = true;
  pthread_cond_broadcast(&g_rt.records_cond);
  pthread_mutex_unlock(&g_rt.records_mutex);
}

/* The run of a model: once the previous run is done, its tasks in order, on the launching
 * stream's worker. */
static void run_model(void *arg) {
  model_run *run = arg;
  sd_model *m = run->model;
  if (run->after != NULL) {
    pthread_mutex_lock(&g_rt.records_mutex);
    while (!run->after->done) pthread_cond_wait(&g_rt.records_cond, &g_rt.records_mutex);
    pthread_mutex_unlock(&g_rt.records_mutex);
  }
  pthread_mutex_lock(&m->run);
  for (size_t i = 0; i < m->count; i++) {
    if (atomic_load_explicit(&g_rt.devices[m->device].fault, memory_order_acquire) != 0) break;
    sd_run_nested(m->tasks[i], m->device);
  }
  pthread_mutex_unlock(&m->run);
}

/* After the run, or instead of it when the device had faulted: the next run may go. */
static void release_run(void *arg) {
  model_run *run = arg;
  complete(run->done);
  sd_record_release(run->after);
  sd_record_release(run->done);
  model_release(run->model);
  free(run);
}

/* ---- captures ---- */

static void invalidate(sd_capture *c, const char *reason) {
  if (c->invalidated) return;
  c->invalidated = true;
  snprintf(c->reason, sizeof c->reason, "%s", reason);
}

aclError sd_capture_add(sd_stream *s, sd_task *task) {
  sd_capture *c = s->capture;
  if (task->kind != SD_TASK_WORK) {
    char reason[SD_FAULT_MESSAGE_SIZE];
    snprintf(reason, sizeof reason,
             "%s: stream %p of device %d captures (aclmdlRICaptureBegin): the stand-in records "
             "no event records or waits into a model (CANN's multi-stream capture); the capture "
             "is invalidated",
             task->name, (void *)s, (int)s->device);
    invalidate(c, reason);
    return sd_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s", reason);
  }
  if (c->invalidated) { /* dropped: the capture yields no model anyway */
    if (task->release != NULL) task->release(task->arg);
    free(task);
    return ACL_SUCCESS;
  }
  sd_model *m = c->model;
  if (m->count == m->capacity) {
    size_t capacity = m->capacity ? 2 * m->capacity : 64;
    sd_task **grown = realloc(m->tasks, capacity * sizeof *grown);
    if (grown == NULL) {
      invalidate(c, "out of host memory recording a task");
      return sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
                      "%s: out of host memory recording the task into the capture of stream %p; "
                      "the capture is invalidated",
                      task->name, (void *)s);
    }
    m->tasks = grown;
    m->capacity = capacity;
  }
  m->tasks[m->count++] = task;
  return ACL_SUCCESS;
}

bool sd_stream_capturing(sd_stream *s) {
  pthread_mutex_lock(&s->mutex);
  bool capturing = s->capture != NULL;
  pthread_mutex_unlock(&s->mutex);
  return capturing;
}

aclError sd_capture_refuse_call(sd_stream *s, aclError code, const char *call, const char *why) {
  char reason[SD_FAULT_MESSAGE_SIZE];
  pthread_mutex_lock(&s->mutex);
  sd_capture *c = s->capture;
  if (c != NULL) {
    snprintf(reason, sizeof reason,
             "%s: stream %p of device %d captures (aclmdlRICaptureBegin, %s): %s; the capture "
             "is invalidated",
             call, (void *)s, (int)s->device, mode_name(c->mode), why);
    invalidate(c, reason);
  } else {
    snprintf(reason, sizeof reason, "%s: %s", call, why);
  }
  pthread_mutex_unlock(&s->mutex);
  return sd_error(code, "%s", reason);
}

aclError sd_capture_refuse_stream(sd_stream *s, const char *call) {
  if (!sd_stream_capturing(s)) return ACL_SUCCESS;
  return sd_capture_refuse_call(s, ACL_ERROR_RT_STREAM_CAPTURED, call,
                                "it would wait for the captured work, which only runs in the "
                                "model");
}

aclError sd_capture_refuse_device(int32_t index, const char *call) {
  sd_device *device = &g_rt.devices[index];
  if (atomic_load_explicit(&device->capture_count, memory_order_acquire) == 0) return ACL_SUCCESS;
  char reason[SD_FAULT_MESSAGE_SIZE] = "";
  pthread_mutex_lock(&device->mutex);
  for (sd_capture *c = device->captures; c != NULL; c = c->next) {
    pthread_mutex_lock(&c->stream->mutex);
    if (reason[0] == '\0') {
      snprintf(reason, sizeof reason,
               "%s: stream %p of device %d captures (aclmdlRICaptureBegin, %s): it would wait "
               "for the captured work, which only runs in the model; the device's captures are "
               "invalidated",
               call, (void *)c->stream, (int)index, mode_name(c->mode));
    }
    invalidate(c, reason);
    pthread_mutex_unlock(&c->stream->mutex);
  }
  pthread_mutex_unlock(&device->mutex);
  if (reason[0] == '\0') return ACL_SUCCESS; /* the captures ended meanwhile */
  return sd_error(ACL_ERROR_RT_STREAM_CAPTURED, "%s", reason);
}

aclError sd_capture_check_unsafe(int32_t index, const char *call) {
  sd_device *device = &g_rt.devices[index];
  if (atomic_load_explicit(&device->capture_count, memory_order_acquire) == 0) return ACL_SUCCESS;
  pthread_t self = pthread_self();
  aclError err = ACL_SUCCESS;
  pthread_mutex_lock(&device->mutex);
  for (sd_capture *c = device->captures; c != NULL && err == ACL_SUCCESS; c = c->next) {
    bool global = c->mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;
    if (global ||
        (c->mode == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL && pthread_equal(c->thread, self))) {
      err = sd_error(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
                     "%s: operation not permitted while stream %p of device %d captures in %s "
                     "(%s)",
                     call, (void *)c->stream, (int)index, mode_name(c->mode),
                     global ? "no thread may make unsafe calls"
                            : "the capturing thread may not make unsafe calls");
    }
  }
  pthread_mutex_unlock(&device->mutex);
  return err;
}

/* Takes `c` out of its device's list; the caller holds the device's and the stream's mutex. */
static void unlink_capture(sd_device *device, sd_capture *c) {
  for (sd_capture **link = &device->captures; *link != NULL; link = &(*link)->next) {
    if (*link == c) {
      *link = c->next;
      atomic_fetch_sub(&device->capture_count, 1);
      break;
    }
  }
  c->stream->capture = NULL;
}

void sd_capture_abandon(sd_stream *s) {
  sd_device *device = &g_rt.devices[s->device];
  pthread_mutex_lock(&s->mutex);
  sd_capture *c = s->capture;
  if (c != NULL) unlink_capture(device, c);
  pthread_mutex_unlock(&s->mutex);
  if (c == NULL) return;
  model_discard(device, c->model);
  free(c);
}

/* ---- the API ---- */

aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode) {
  static const char call[] = "aclmdlRICaptureBegin";
  aclError err = sd_check_init(call);
  if (err != ACL_SUCCESS) return err;
  if (stream == NULL) {
    return sd_error(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
                    "%s: the default stream cannot be captured: create a stream", call);
  }
  if ((int)mode < (int)ACL_MODEL_RI_CAPTURE_MODE_GLOBAL ||
      (int)mode > (int)ACL_MODEL_RI_CAPTURE_MODE_RELAXED) {
    return sd_error(ACL_ERROR_INVALID_PARAM, "%s: unknown aclmdlRICaptureMode %d", call, (int)mode);
  }
  sd_stream *s = NULL;
  err = sd_resolve_stream(stream, true, call, &s);
  if (err != ACL_SUCCESS) return err;
  err = sd_check_fault(s->device, call);
  sd_model *m = NULL;
  sd_capture *c = NULL;
  if (err == ACL_SUCCESS) {
    m = calloc(1, sizeof *m);
    c = calloc(1, sizeof *c);
    if (m == NULL || c == NULL || !sd_handle_add(m)) {
      err = sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "%s: out of host memory", call);
    }
  }
  if (err != ACL_SUCCESS) {
    if (m != NULL) sd_handle_remove(m);
    free(m);
    free(c);
    sd_stream_release(s);
    return err;
  }
  m->magic = SD_MODEL_MAGIC;
  m->device = s->device;
  atomic_init(&m->refs, 1);
  atomic_init(&m->capturing, true);
  pthread_mutex_init(&m->run, NULL);
  c->stream = s;
  c->model = m;
  c->mode = mode;
  c->thread = pthread_self();
  sd_device *device = &g_rt.devices[s->device];
  pthread_mutex_lock(&device->mutex);
  pthread_mutex_lock(&s->mutex);
  bool capturing = s->capture != NULL;
  if (!capturing) {
    s->capture = c;
    c->next = device->captures;
    device->captures = c;
    atomic_fetch_add(&device->capture_count, 1);
    m->next = device->models;
    if (device->models != NULL) device->models->prev = m;
    device->models = m;
  }
  pthread_mutex_unlock(&s->mutex);
  pthread_mutex_unlock(&device->mutex);
  if (capturing) {
    sd_handle_remove(m);
    pthread_mutex_destroy(&m->run);
    free(m);
    free(c);
    err = sd_error(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p captures already", call, stream);
  }
  sd_stream_release(s); /* the capture ends before the stream goes (aclrtDestroyStream) */
  return err;
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status,
                                aclmdlRI *modelRI) {
  static const char call[] = "aclmdlRICaptureGetInfo";
  aclError err = sd_check_init(call);
  if (err != ACL_SUCCESS) return err;
  if (status == NULL && modelRI == NULL) {
    return sd_error(ACL_ERROR_INVALID_PARAM, "%s: status and modelRI are both NULL", call);
  }
  sd_stream *s = NULL;
  err = sd_resolve_stream(stream, false, call, &s);
  if (err != ACL_SUCCESS) return err;
  pthread_mutex_lock(&s->mutex);
  const sd_capture *c = s->capture;
  aclmdlRICaptureStatus state = c == NULL        ? ACL_MODEL_RI_CAPTURE_STATUS_NONE
                                : c->invalidated ? ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED
                                                 : ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
  aclmdlRI model = c != NULL ? c->model : NULL;
  pthread_mutex_unlock(&s->mutex);
  sd_stream_release(s);
  if (status != NULL) *status = state;
  if (modelRI != NULL) *modelRI = model;
  return ACL_SUCCESS;
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI) {
  static const char call[] = "aclmdlRICaptureEnd";
  aclError err = sd_check_init(call);
  if (err != ACL_SUCCESS) return err;
  if (modelRI == NULL) return sd_error(ACL_ERROR_INVALID_PARAM, "%s: modelRI is NULL", call);
  if (stream == NULL) {
    return sd_error(ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                    "%s: the default stream does not capture (it cannot)", call);
  }
  sd_stream *s = NULL;
  err = sd_resolve_stream(stream, false, call, &s);
  if (err != ACL_SUCCESS) return err;
  sd_device *device = &g_rt.devices[s->device];
  pthread_mutex_lock(&device->mutex);
  pthread_mutex_lock(&s->mutex);
  sd_capture *c = s->capture;
  if (c == NULL) {
    err = sd_error(ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                   "%s: stream %p does not capture (aclmdlRICaptureBegin)", call, stream);
  } else if (c->mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED &&
             !pthread_equal(c->thread, pthread_self())) {
    err = sd_error(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
                   "%s: the capture of stream %p began in %s on another thread; only that "
                   "thread may end it",
                   call, stream, mode_name(c->mode));
    c = NULL; /* the capture goes on */
  } else {
    unlink_capture(device, c);
  }
  pthread_mutex_unlock(&s->mutex);
  if (c != NULL && c->invalidated) {
    err = sd_error(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
                   "%s: the capture of stream %p was invalidated: %s", call, stream, c->reason);
    model_discard(device, c->model);
  } else if (c != NULL) {
    atomic_store(&c->model->capturing, false);
    *modelRI = c->model;
  }
  pthread_mutex_unlock(&device->mutex);
  free(c);
  sd_stream_release(s);
  return err;
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream) {
  static const char call[] = "aclmdlRIExecuteAsync";
  aclError err = sd_check_init(call);
  if (err != ACL_SUCCESS) return err;
  sd_model *m = resolve_model(modelRI, call);
  if (m == NULL) return ACL_ERROR_INVALID_PARAM;
  sd_stream *s = NULL;
  if (atomic_load(&m->capturing)) {
    err = sd_error(ACL_ERROR_RT_MODEL_CAPTURED,
                   "%s: model %p is being captured (aclmdlRICaptureEnd ends it)", call, modelRI);
  } else {
    err = sd_resolve_stream(stream, true, call, &s);
  }
  if (err == ACL_SUCCESS && s->device != m->device) {
    err = sd_error(ACL_ERROR_RT_MODEL_CONTEXT,
                   "%s: model %p belongs to device %d, the stream to device %d", call, modelRI,
                   (int)m->device, (int)s->device);
  }
  if (err == ACL_SUCCESS && sd_stream_capturing(s)) {
    err = sd_error(ACL_ERROR_RT_STREAM_CAPTURED,
                   "%s: stream %p captures: the stand-in does not nest models", call, stream);
  }
  if (err == ACL_SUCCESS) err = sd_check_fault(s->device, call);
  sd_task *task = NULL;
  model_run *run = NULL;
  sd_record *done = NULL;
  if (err == ACL_SUCCESS) {
    task = calloc(1, sizeof *task);
    run = calloc(1, sizeof *run);
    done = calloc(1, sizeof *done);
    if (task == NULL || run == NULL || done == NULL) {
      free(task);
      free(run);
      free(done);
      err = sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "%s: out of memory", call);
    }
  }
  if (err == ACL_SUCCESS) {
    /* In the order of the calls: after the latest run, before the next one. */
    done->refs = 2; /* the model's (as its latest run) and the run's */
    pthread_mutex_lock(&g_rt.records_mutex);
    sd_record *after = m->last;
    m->last = done;
    pthread_mutex_unlock(&g_rt.records_mutex);
    *run = (model_run){m, after, done}; /* m: the reference resolve_model took */
    task->kind = SD_TASK_WORK;
    task->name = call;
    task->run = run_model;
    task->release = release_run;
    task->arg = run;
    err = sd_stream_enqueue(s, task, NULL);
    if (err != ACL_SUCCESS) { /* the runs after it wait for nothing on its account */
      free(task);
      release_run(run);
    }
    sd_stream_release(s);
    return err;
  }
  if (s != NULL) sd_stream_release(s);
  model_release(m);
  return err;
}

aclError aclmdlRIDestroy(aclmdlRI modelRI) {
  static const char call[] = "aclmdlRIDestroy";
  aclError err = sd_check_init(call);
  if (err != ACL_SUCCESS) return err;
  sd_model *m = resolve_model(modelRI, call);
  if (m == NULL) return ACL_ERROR_INVALID_PARAM;
  sd_device *device = &g_rt.devices[m->device];
  pthread_mutex_lock(&device->mutex);
  int refs = atomic_load(&m->refs);
  if (!sd_handle_live(m)) {
    err = sd_error(ACL_ERROR_INVALID_PARAM, "%s: %p is being destroyed", call, modelRI);
  } else if (atomic_load(&m->capturing)) {
    err = sd_error(ACL_ERROR_RT_MODEL_CAPTURED,
                   "%s: model %p is being captured (aclmdlRICaptureEnd ends it)", call, modelRI);
  } else if (refs > 2) { /* the handle's, ours, and queued runs' */
    err = sd_error(ACL_ERROR_RT_MODEL_RUNNING,
                   "%s: model %p has %d runs queued or running; destroy it once they are done",
                   call, modelRI, refs - 2);
  } else {
    model_discard(device, m); /* the handle's reference */
  }
  pthread_mutex_unlock(&device->mutex);
  model_release(m); /* ours */
  return err;
}
