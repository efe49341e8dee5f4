/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The kit's streams and events.  Every stream is a worker thread running a FIFO of tasks; events
 * are markers those workers complete (and timestamp) when they reach them; waits are tasks that
 * block their worker until an event completes.
 *
 * Lifetime: streams and events are reference counted.  The user's handle holds one reference,
 * queued tasks that touch an object hold one each, and device synchronisation holds one while
 * it waits, so destroying a busy stream or event returns at once and the object goes away when
 * its work is done (vendor.h's "destroying a busy stream/event" rule).  A stream's worker holds
 * a reference to the runtime until it exits.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The vendor name for messages, from a context already checked. */
#define CTX_NAME(ctx) (tbk_runtime_of(ctx)->name)

#define STREAM_MAGIC 0x74626b73u /* "tbks" */
#define EVENT_MAGIC 0x74626b65u  /* "tbke" */

/* The task queue: a multi-producer, single-consumer intrusive queue (Vyukov's): enqueue is one
 * atomic exchange, so callers never contend on a lock with the worker.  `stub` keeps it
 * non-empty; `head` is the consumer's, `tail` the producers'. */
typedef struct task_queue {
  tbk_task *head;
  _Atomic(tbk_task *) tail;
  tbk_task *stub; /* allocated: ISO C has no struct member with a flexible array */
} task_queue;

typedef struct tb_stream_impl tbk_stream;

struct tb_stream_impl {
  uint32_t magic;
  tbk_runtime *rt;
  int32_t device;
  int32_t priority;
  _Atomic int refs;
  pthread_mutex_t mutex;   /* guards the sleeping protocol of the conditions */
  pthread_cond_t work;     /* signalled when tasks arrive and the worker sleeps */
  pthread_cond_t progress; /* signalled when tasks complete and synchronizers sleep */
  task_queue queue;
  _Atomic uint64_t enqueued;  /* tasks enqueued so far */
  _Atomic uint64_t completed; /* tasks completed so far */
  _Atomic bool destroyed;     /* the user's handle is gone: exit once idle */
  _Atomic bool worker_sleeping;
  _Atomic int waiters; /* threads sleeping (or about to) on `progress` */
  pthread_t thread;
  /* The task slot ring (tbk_task_new): TASK_SLOTS slots of TASK_SLOT_BYTES, tried in turn. */
  unsigned char *slots;
  _Atomic uint64_t slot_cursor;
  /* The capture under way on this stream (graph.c), or NULL: enqueued tasks go to it. */
  _Atomic(tbk_capture *) capture;
};

/* 128 slots of 2 KiB hold a kernel call of up to seven tensors, and let the host run 128 tasks
 * ahead of the worker before launches fall back to malloc.  calloc maps the ring lazily: a
 * stream that never launches much touches a few pages of it. */
#define TASK_SLOTS 128u
#define TASK_SLOT_BYTES 2048u
_Static_assert(TASK_SLOT_BYTES % 16 == 0, "slots keep the payload's 16-byte alignment");

/* One record of an event: complete once its stream reaches it.  The event points at its
 * latest record; waits hold the record they saw, so a later record does not release them. */
typedef struct tbk_record {
  _Atomic int refs;
  bool done;             /* guarded by the event's mutex */
  uint64_t timestamp_ns; /* when the stream reached it */
} tbk_record;

struct tb_event_impl {
  uint32_t magic;
  tbk_runtime *rt;
  int32_t device;
  uint32_t flags;
  _Atomic int refs;
  pthread_mutex_t mutex;
  pthread_cond_t done; /* broadcast when any record of this event completes */
  tbk_record *latest;  /* NULL: never recorded (complete) */
  /* Where its latest record was made in a capture (graph.c): allocated on the first such
   * record; capture_id 0 when the latest record was not captured. */
  tbk_capture_mark *mark;
};

/* ---- the live streams of each device ---- */

static int device_add(tbk_stream *s) {
  tbk_runtime *rt = s->rt;
  pthread_mutex_lock(&rt->streams_mutex);
  tbk_device_streams *d = &rt->streams[s->device];
  if (d->count == d->capacity) {
    size_t capacity = d->capacity ? 2 * d->capacity : 16;
    struct tb_stream_impl **grown = realloc(d->streams, capacity * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&rt->streams_mutex);
      return -1;
    }
    d->streams = grown;
    d->capacity = capacity;
  }
  d->streams[d->count++] = s;
  pthread_mutex_unlock(&rt->streams_mutex);
  return 0;
}

static void device_remove(tbk_stream *s) {
  tbk_runtime *rt = s->rt;
  pthread_mutex_lock(&rt->streams_mutex);
  tbk_device_streams *d = &rt->streams[s->device];
  for (size_t i = 0; i < d->count; i++) {
    if (d->streams[i] == s) {
      d->streams[i] = d->streams[--d->count];
      break;
    }
  }
  pthread_mutex_unlock(&rt->streams_mutex);
}

/* ---- reference counting ---- */

static void stream_release(tbk_stream *s);

_Atomic(tbk_capture *) *tbk_stream_capture_slot(tb_stream s) { return &s->capture; }

void tbk_stream_retain(tb_stream s) { atomic_fetch_add(&s->refs, 1); }

void tbk_stream_release(tb_stream s) { stream_release(s); }

static void stream_release(tbk_stream *s) {
  if (atomic_fetch_sub(&s->refs, 1) != 1) return;
  pthread_mutex_destroy(&s->mutex);
  pthread_cond_destroy(&s->work);
  pthread_cond_destroy(&s->progress);
  s->magic = 0;
  free(s->queue.stub);
  free(s->slots);
  free(s);
}

static void record_release(tbk_record *r) {
  if (r != NULL && atomic_fetch_sub(&r->refs, 1) == 1) free(r);
}

static void event_release(tb_event e) {
  if (atomic_fetch_sub(&e->refs, 1) != 1) return;
  record_release(e->latest);
  free(e->mark);
  pthread_mutex_destroy(&e->mutex);
  pthread_cond_destroy(&e->done);
  e->magic = 0;
  free(e);
}

/* ---- tasks ---- */

/* A free slot of the ring, taken, or NULL: the slot the cursor points at is tried only, so a
 * launch never searches (a taken slot means the worker is TASK_SLOTS tasks behind, or another
 * thread's task is slow to finish; malloc is the right answer to both). */
static tbk_task *take_slot(tbk_stream *s, size_t size) {
  if (s->slots == NULL || size > TASK_SLOT_BYTES) return NULL;
  uint64_t k = atomic_fetch_add_explicit(&s->slot_cursor, 1, memory_order_relaxed) % TASK_SLOTS;
  tbk_task *task = (tbk_task *)(s->slots + k * TASK_SLOT_BYTES);
  int expected = 0;
  /* acquire: pairs with the worker's release in tbk_task_discard, so its last reads of the
   * task happen before this launch overwrites it. */
  if (!atomic_compare_exchange_strong_explicit(&task->slot_taken, &expected, 1,
                                               memory_order_acquire, memory_order_relaxed)) {
    return NULL;
  }
  task->pooled = true;
  return task;
}

tbk_task *tbk_task_new(tb_stream stream, tbk_task_fn fn, size_t payload_size) {
  size_t size = sizeof(tbk_task) + payload_size;
  /* A captured task lives as long as its graph: it must not hold a slot of the ring. */
  tbk_task *task = atomic_load_explicit(&stream->capture, memory_order_relaxed) == NULL
                       ? take_slot(stream, size)
                       : NULL;
  if (task == NULL) {
    /* malloc's alignment (16 bytes on the platforms the kit targets) suits the payload. */
    task = malloc(size);
    if (task == NULL) return NULL;
    atomic_init(&task->slot_taken, 1);
    task->pooled = false;
  }
  atomic_init(&task->next, NULL);
  task->fn = fn;
  task->finish = NULL;
  task->name = "task";
  task->stream = stream;
  task->payload_size = payload_size;
  return task;
}

void tbk_task_discard(tbk_task *task) {
  if (task == NULL) return;
  if (task->pooled) {
    atomic_store_explicit(&task->slot_taken, 0, memory_order_release);
  } else {
    free(task);
  }
}

void tbk_task_fail(tbk_task *task, const char *format, ...) {
  char message[448];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  char full[512];
  snprintf(full, sizeof full, "%s (in %s)", message, task->name);
  tbk_fault(task->stream->rt, task->stream->device, full);
}

tb_status tbk_check_stream(tb_context ctx, tb_stream stream, const char *call) {
  tb_status status = tbk_check_context(ctx, call);
  if (status != TB_OK) return status;
  if (stream == NULL || stream->magic != STREAM_MAGIC || stream->destroyed) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT, "%s: %p is not a live stream",
                       call, (void *)stream);
  }
  if (stream->rt != tbk_runtime_of(ctx)) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT,
                       "%s: stream %p belongs to another context than the call's", call,
                       (void *)stream);
  }
  return TB_OK;
}

int32_t tbk_stream_device(tb_stream stream) { return stream->device; }

tbk_runtime *tbk_stream_runtime(tb_stream stream) { return stream->rt; }

static void queue_init(task_queue *q) {
  atomic_init(&q->stub->next, NULL);
  q->head = q->stub;
  atomic_init(&q->tail, q->stub);
}

static void queue_push(task_queue *q, tbk_task *task) {
  atomic_store_explicit(&task->next, NULL, memory_order_relaxed);
  tbk_task *previous = atomic_exchange_explicit(&q->tail, task, memory_order_seq_cst);
  atomic_store_explicit(&previous->next, task, memory_order_release);
}

/* The oldest task, or NULL when the queue is empty or a producer is midway through a push. */
static tbk_task *queue_pop(task_queue *q) {
  tbk_task *head = q->head;
  tbk_task *next = atomic_load_explicit(&head->next, memory_order_acquire);
  if (head == q->stub) {
    if (next == NULL) return NULL;
    q->head = head = next;
    next = atomic_load_explicit(&head->next, memory_order_acquire);
  }
  if (next != NULL) {
    q->head = next;
    return head;
  }
  if (head != atomic_load_explicit(&q->tail, memory_order_seq_cst)) return NULL;
  queue_push(q, q->stub);
  next = atomic_load_explicit(&head->next, memory_order_acquire);
  if (next == NULL) return NULL;
  q->head = next;
  return head;
}

/* False only when the queue is certainly empty (no task, no push under way). */
static bool queue_busy(task_queue *q) {
  return q->head != q->stub || atomic_load(&q->stub->next) != NULL ||
         atomic_load(&q->tail) != q->stub;
}

/* While `s` captures: refuses the call `call` (invalidating the capture) and returns
 * TB_ERROR_NOT_SUPPORTED; otherwise TB_OK.  The capture is used under streams_mutex, which
 * capture_end takes to end it, so that it cannot be freed meanwhile (graph.c). */
static tb_status refuse_if_capturing(tbk_stream *s, const char *call, const char *why) {
  if (atomic_load_explicit(&s->capture, memory_order_acquire) == NULL) return TB_OK;
  tb_status status = TB_OK;
  pthread_mutex_lock(&s->rt->streams_mutex);
  tbk_capture *capture = atomic_load_explicit(&s->capture, memory_order_acquire);
  if (capture != NULL) status = tbk_capture_refuse(s->rt, capture, call, why);
  pthread_mutex_unlock(&s->rt->streams_mutex);
  return status;
}

tb_status tbk_stream_enqueue(tb_stream s, tbk_task *task) {
  task->stream = s;
  if (atomic_load_explicit(&s->capture, memory_order_acquire) != NULL) {
    /* Recorded into the capture, under streams_mutex (see refuse_if_capturing); enqueued as
     * usual if the capture ended meanwhile. */
    pthread_mutex_lock(&s->rt->streams_mutex);
    tbk_capture *capture = atomic_load_explicit(&s->capture, memory_order_acquire);
    tb_status status = capture != NULL ? tbk_capture_add(capture, task) : TB_OK;
    pthread_mutex_unlock(&s->rt->streams_mutex);
    if (capture != NULL) return status;
  }
  atomic_fetch_add_explicit(&s->enqueued, 1, memory_order_seq_cst);
  queue_push(&s->queue, task);
  /* Pairs with the worker's store of worker_sleeping before its last look at the queue: one of
   * the two sees the other. */
  if (atomic_load_explicit(&s->worker_sleeping, memory_order_seq_cst)) {
    pthread_mutex_lock(&s->mutex);
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->mutex);
  }
  return TB_OK;
}

void tbk_stream_count_completion(tb_stream s) {
  atomic_fetch_add_explicit(&s->completed, 1, memory_order_seq_cst);
}

/* Pairs with wait_for's increment of `waiters` before its last look at `completed`. */
static void wake_synchronizers(tbk_stream *s) {
  if (atomic_load_explicit(&s->waiters, memory_order_seq_cst) > 0) {
    pthread_mutex_lock(&s->mutex);
    pthread_cond_broadcast(&s->progress);
    pthread_mutex_unlock(&s->mutex);
  }
}

/* The worker: run tasks in order; spin briefly when idle, then sleep. */
static void *worker_main(void *arg) {
  tbk_stream *s = arg;
  tbk_runtime *rt = s->rt;
  const int spin_us = rt->config.spin_us;
  void (*task_done)(void *, const char *, uint64_t) = rt->config.task_done;
  for (;;) {
    tbk_task *task = queue_pop(&s->queue);
    if (task == NULL) {
      if (atomic_load(&s->destroyed) && !queue_busy(&s->queue)) break;
      /* Spin for a short while: small kernels arrive back to back. */
      uint64_t deadline = tbk_now_ns() + (uint64_t)spin_us * 1000u;
      while (!queue_busy(&s->queue) && tbk_now_ns() < deadline) {
        for (int i = 0; i < 64; i++) tbk_cpu_relax();
      }
      if (queue_busy(&s->queue)) continue;
      pthread_mutex_lock(&s->mutex);
      atomic_store_explicit(&s->worker_sleeping, true, memory_order_seq_cst);
      while (!queue_busy(&s->queue) && !atomic_load(&s->destroyed)) {
        pthread_cond_wait(&s->work, &s->mutex);
      }
      atomic_store_explicit(&s->worker_sleeping, false, memory_order_relaxed);
      pthread_mutex_unlock(&s->mutex);
      continue;
    }
    if (task->fn != NULL) {
      if (task_done != NULL && task->name != NULL) { /* a graph replay reports its own tasks */
        uint64_t start = tbk_now_ns();
        task->fn(task);
        task_done(rt->config.user, task->name, tbk_now_ns() - start);
      } else {
        task->fn(task);
      }
    }
    if (task->finish != NULL) {
      task->finish(task); /* counts the completion itself */
    } else {
      tbk_stream_count_completion(s);
    }
    tbk_task_discard(task);
    wake_synchronizers(s);
  }
  device_remove(s);
  stream_release(s);       /* the worker's reference */
  tbk_runtime_release(rt); /* the worker's reference to the runtime */
  return NULL;
}

/* Waits until `target` tasks of `s` have completed; spins first, then sleeps. */
static void wait_idle(tbk_stream *s, uint64_t target) {
  const int spin_us = s->rt->config.spin_us;
  if (atomic_load_explicit(&s->completed, memory_order_acquire) < target) {
    uint64_t deadline = tbk_now_ns() + (uint64_t)spin_us * 1000u;
    while (atomic_load_explicit(&s->completed, memory_order_acquire) < target &&
           tbk_now_ns() < deadline) {
      for (int i = 0; i < 64; i++) tbk_cpu_relax();
    }
  }
  pthread_mutex_lock(&s->mutex);
  /* Pairs with the worker's count, then load of `waiters`: one of the two sees the other. */
  atomic_fetch_add_explicit(&s->waiters, 1, memory_order_seq_cst);
  while (atomic_load_explicit(&s->completed, memory_order_seq_cst) < target) {
    pthread_cond_wait(&s->progress, &s->mutex);
  }
  atomic_fetch_sub_explicit(&s->waiters, 1, memory_order_relaxed);
  pthread_mutex_unlock(&s->mutex);
}

/* wait_idle, then the device's fault, if any. */
static tb_status wait_for(tbk_stream *s, uint64_t target, const char *call) {
  wait_idle(s, target);
  return tbk_runtime_check_fault(s->rt, s->device, call);
}

/* ---- the stream API ---- */

tb_status tbk_stream_priority_range(tb_context ctx, int32_t device, int32_t *least,
                                    int32_t *greatest) {
  tb_status status = tbk_check_device(ctx, device, "stream priority_range");
  if (status != TB_OK) return status;
  if (least == NULL || greatest == NULL) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT,
                       "priority_range: NULL output pointer");
  }
  *least = tbk_runtime_of(ctx)->config.least_priority;
  *greatest = tbk_runtime_of(ctx)->config.greatest_priority;
  return TB_OK;
}

tb_status tbk_stream_create(tb_context ctx, int32_t device, int32_t priority, tb_stream *stream) {
  tb_status status = tbk_check_device(ctx, device, "stream create");
  if (status != TB_OK) return status;
  if (stream == NULL) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT, "stream create: stream is NULL");
  }
  tbk_stream *s = calloc(1, sizeof *s);
  if (s == NULL)
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_OUT_OF_MEMORY, "stream create: out of memory");
  s->magic = STREAM_MAGIC;
  tbk_runtime *rt = tbk_runtime_of(ctx);
  s->rt = rt;
  s->device = device;
  s->priority = priority < rt->config.greatest_priority ? rt->config.greatest_priority
                : priority > rt->config.least_priority  ? rt->config.least_priority
                                                        : priority;
  atomic_init(&s->refs, 2); /* the handle and the worker */
  atomic_init(&s->enqueued, 0);
  atomic_init(&s->completed, 0);
  atomic_init(&s->destroyed, false);
  atomic_init(&s->worker_sleeping, false);
  atomic_init(&s->waiters, 0);
  atomic_init(&s->slot_cursor, 0);
  atomic_init(&s->capture, NULL);
  /* Without the ring (no memory for it) every task is malloc'd: slower, still correct. */
  s->slots = calloc(TASK_SLOTS, TASK_SLOT_BYTES);
  s->queue.stub = malloc(sizeof(tbk_task));
  if (s->queue.stub == NULL) {
    free(s->slots);
    free(s);
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_OUT_OF_MEMORY, "stream create: out of memory");
  }
  queue_init(&s->queue);
  pthread_mutex_init(&s->mutex, NULL);
  pthread_cond_init(&s->work, NULL);
  pthread_cond_init(&s->progress, NULL);
  if (device_add(s) != 0) {
    free(s->queue.stub);
    free(s->slots);
    free(s);
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_OUT_OF_MEMORY, "stream create: out of memory");
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  atomic_fetch_add(&rt->refs, 1); /* the worker's, released when it exits */
  int rc = pthread_create(&s->thread, &attr, worker_main, s);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    atomic_fetch_sub(&rt->refs, 1);
    device_remove(s);
    free(s->queue.stub);
    free(s->slots);
    free(s);
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INTERNAL,
                       "stream create: cannot start a worker thread: %s", strerror(rc));
  }
  *stream = s;
  return TB_OK;
}

tb_status tbk_stream_destroy(tb_context ctx, tb_stream s) {
  tb_status status = tbk_check_stream(ctx, s, "stream destroy");
  if (status != TB_OK) return status;
  pthread_mutex_lock(&s->mutex);
  atomic_store(&s->destroyed, true);
  pthread_cond_signal(&s->work);
  pthread_mutex_unlock(&s->mutex);
  stream_release(s); /* the handle's reference; the worker drains the queue, then exits */
  return TB_OK;
}

tb_status tbk_stream_query(tb_context ctx, tb_stream s) {
  tb_status status = tbk_check_stream(ctx, s, "stream query");
  if (status != TB_OK) return status;
  status = refuse_if_capturing(s, "stream query", "it would wait for captured work");
  if (status != TB_OK) return status;
  status = tbk_check_fault(ctx, s->device, "stream query");
  if (status != TB_OK) return status;
  return atomic_load(&s->completed) >= atomic_load(&s->enqueued) ? TB_OK : TB_ERROR_NOT_READY;
}

tb_status tbk_stream_synchronize(tb_context ctx, tb_stream s) {
  tb_status status = tbk_check_stream(ctx, s, "stream synchronize");
  if (status != TB_OK) return status;
  status = refuse_if_capturing(s, "stream synchronize", "it would wait for captured work");
  if (status != TB_OK) return status;
  return wait_for(s, atomic_load(&s->enqueued), "stream synchronize");
}

/* Waits until every stream of `device` has finished what was enqueued before the call. */
tb_status tbk_runtime_wait_device(tbk_runtime *rt, int32_t device, const char *call) {
  /* Snapshot the device's streams (with references) and their targets, then wait on each. */
  pthread_mutex_lock(&rt->streams_mutex);
  size_t count = rt->streams[device].count;
  tbk_stream **streams = count ? malloc(count * sizeof *streams) : NULL;
  if (count && streams == NULL) {
    pthread_mutex_unlock(&rt->streams_mutex);
    return tbk_fail_as(rt->name, TB_ERROR_OUT_OF_MEMORY, "%s: out of memory", call);
  }
  for (size_t i = 0; i < count; i++) {
    streams[i] = rt->streams[device].streams[i];
    atomic_fetch_add(&streams[i]->refs, 1);
  }
  pthread_mutex_unlock(&rt->streams_mutex);
  for (size_t i = 0; i < count; i++) {
    wait_idle(streams[i], atomic_load(&streams[i]->enqueued));
    stream_release(streams[i]);
  }
  free(streams);
  return TB_OK;
}

tb_status tbk_wait_device(tb_context ctx, int32_t device, const char *call) {
  return tbk_runtime_wait_device(tbk_runtime_of(ctx), device, call);
}

/* inject_fault: work that fails when the stream reaches it, with the caller's message. */
static void run_injected_fault(tbk_task *task) { tbk_task_fail(task, "%s", (char *)task->payload); }

tb_status tbk_stream_inject_fault(tb_context ctx, tb_stream s, const char *message) {
  tb_status status = tbk_check_stream(ctx, s, "stream inject_fault");
  if (status != TB_OK) return status;
  if (message == NULL) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT,
                       "stream inject_fault: message is NULL");
  }
  size_t length = strlen(message);
  tbk_task *task = tbk_task_new(s, run_injected_fault, length + 1);
  if (task == NULL)
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_OUT_OF_MEMORY, "inject_fault: out of memory");
  task->name = "inject_fault";
  memcpy(task->payload, message, length + 1);
  return tbk_stream_enqueue(s, task);
}

/* launch_host_func: the caller's function, called on the stream's worker in stream order.  It
 * is skipped on a faulted device (whatever it would compute from is garbage). */
typedef struct {
  tb_host_func fn;
  void *user_data;
} host_func_payload;

static void run_host_func(tbk_task *task) {
  const host_func_payload *call = (const host_func_payload *)task->payload;
  tbk_stream *stream = task->stream;
  if (tbk_is_faulted(stream->rt, stream->device)) return;
  char message[512] = "";
  tb_status status = call->fn(call->user_data, message, sizeof message);
  if (status != TB_OK) {
    message[sizeof message - 1] = '\0';
    tbk_task_fail(task, "host function failed with %s: %s", tb_status_name(status),
                  message[0] != '\0' ? message : "(no message)");
  }
}

tb_status tbk_stream_launch_host_func(tb_context ctx, tb_stream s, tb_host_func fn,
                                      void *user_data) {
  tb_status status = tbk_check_stream(ctx, s, "stream launch_host_func");
  if (status != TB_OK) return status;
  if (fn == NULL) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT,
                       "stream launch_host_func: fn is NULL");
  }
  tbk_task *task = tbk_task_new(s, run_host_func, sizeof(host_func_payload));
  if (task == NULL) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_OUT_OF_MEMORY, "launch_host_func: out of memory");
  }
  task->name = "host_func";
  *(host_func_payload *)task->payload = (host_func_payload){fn, user_data};
  return tbk_stream_enqueue(s, task);
}

/* ---- events ---- */

static tb_status check_event(tb_context ctx, tb_event e, const char *call) {
  tb_status status = tbk_check_context(ctx, call);
  if (status != TB_OK) return status;
  if (e == NULL || e->magic != EVENT_MAGIC) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT, "%s: %p is not a live event", call,
                       (void *)e);
  }
  if (e->rt != tbk_runtime_of(ctx)) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT,
                       "%s: event %p belongs to another context than the call's", call, (void *)e);
  }
  return TB_OK;
}

tb_status tbk_event_create(tb_context ctx, int32_t device, uint32_t flags, tb_event *event) {
  tb_status status = tbk_check_device(ctx, device, "event create");
  if (status != TB_OK) return status;
  if (event == NULL)
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT, "event create: event is NULL");
  if ((flags & ~TB_EVENT_FLAG_TIMING) != 0) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT, "event create: unknown flags 0x%x",
                       (unsigned)flags);
  }
  tb_event e = calloc(1, sizeof *e);
  if (e == NULL)
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_OUT_OF_MEMORY, "event create: out of memory");
  e->magic = EVENT_MAGIC;
  e->rt = tbk_runtime_of(ctx);
  e->device = device;
  e->flags = flags;
  atomic_init(&e->refs, 1);
  pthread_mutex_init(&e->mutex, NULL);
  pthread_cond_init(&e->done, NULL);
  *event = e;
  return TB_OK;
}

tb_status tbk_event_destroy(tb_context ctx, tb_event e) {
  tb_status status = check_event(ctx, e, "event destroy");
  if (status != TB_OK) return status;
  e->magic = 0; /* the handle is invalid from now on; queued markers keep the object */
  event_release(e);
  return TB_OK;
}

typedef struct marker {
  tb_event event;
  tbk_record *record;
} marker;

static void marker_release(marker *m) {
  record_release(m->record);
  event_release(m->event);
}

/* A record's `finish`: counts the task complete and completes the record in one step under
 * the event's lock, so whoever sees the one (stream query or synchronize, event query) sees
 * the other. */
static void finish_marker(tbk_task *task) {
  marker *m = (marker *)task->payload;
  tb_event e = m->event;
  pthread_mutex_lock(&e->mutex);
  tbk_stream_count_completion(task->stream);
  m->record->timestamp_ns = tbk_now_ns();
  m->record->done = true;
  pthread_cond_broadcast(&e->done);
  pthread_mutex_unlock(&e->mutex);
  marker_release(m);
}

/* An event recorded on a capturing stream is not a task: it marks where the capture's streams
 * stand (graph.c), for the waits that join streams into the capture.  Its earlier record is
 * forgotten: a captured record never completes outside a replay, so later waits outside the
 * capture have nothing to wait for.  TB_ERROR_NOT_READY when `s` stopped capturing
 * meanwhile (the caller records it as usual). */
static tb_status record_in_capture(tb_event e, tbk_stream *s) {
  tbk_capture_mark *fresh = NULL;
  pthread_mutex_lock(&e->mutex);
  bool has_mark = e->mark != NULL;
  pthread_mutex_unlock(&e->mutex);
  if (!has_mark && (fresh = malloc(sizeof *fresh)) == NULL) {
    return tbk_fail_as(s->rt->name, TB_ERROR_OUT_OF_MEMORY, "event record: out of memory");
  }
  tbk_capture_mark mark;
  pthread_mutex_lock(&s->rt->streams_mutex);
  tbk_capture *capture = atomic_load_explicit(&s->capture, memory_order_acquire);
  if (capture != NULL) {
    tbk_capture_mark_record(capture, s, &mark);
    pthread_mutex_lock(&e->mutex);
    if (e->mark == NULL) {
      e->mark = fresh;
      fresh = NULL;
    }
    *e->mark = mark;
    tbk_record *previous = e->latest;
    e->latest = NULL;
    pthread_mutex_unlock(&e->mutex);
    record_release(previous);
  }
  pthread_mutex_unlock(&s->rt->streams_mutex);
  free(fresh);
  return capture != NULL ? TB_OK : TB_ERROR_NOT_READY;
}

/* With streams_mutex held: the capture under way in which `e` was last recorded, or NULL. */
static tbk_capture *capture_of_event(tb_event e, tbk_capture_mark *mark) {
  pthread_mutex_lock(&e->mutex);
  uint64_t id = e->mark != NULL ? e->mark->capture_id : 0;
  if (id != 0 && mark != NULL) *mark = *e->mark;
  pthread_mutex_unlock(&e->mutex);
  return id != 0 ? tbk_capture_find(e->rt, id) : NULL;
}

/* Refuses `call` (query, synchronize, elapsed_time) of an event recorded in a capture under
 * way: it would wait for captured work, which runs only in the graph's replays. */
static tb_status refuse_if_captured(tb_event e, const char *call) {
  if (atomic_load_explicit(&e->rt->active_captures, memory_order_acquire) == 0) return TB_OK;
  tb_status status = TB_OK;
  pthread_mutex_lock(&e->rt->streams_mutex);
  tbk_capture *capture = capture_of_event(e, NULL);
  if (capture != NULL) {
    status = tbk_capture_refuse(e->rt, capture, call,
                                "the event was recorded in the capture, and waiting for it "
                                "would wait for captured work, which runs only in replays");
  }
  pthread_mutex_unlock(&e->rt->streams_mutex);
  return status;
}

tb_status tbk_event_record(tb_context ctx, tb_event e, tb_stream s) {
  tb_status status = check_event(ctx, e, "event record");
  if (status == TB_OK) status = tbk_check_stream(ctx, s, "event record");
  if (status != TB_OK) return status;
  if (s->device != e->device) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT,
                       "event record: the event belongs to device %d, the stream to device %d",
                       (int)e->device, (int)s->device);
  }
  if (atomic_load_explicit(&s->capture, memory_order_acquire) != NULL) {
    status = record_in_capture(e, s);
    if (status != TB_ERROR_NOT_READY) return status; /* not NOT_READY: the capture ended */
  }
  tbk_task *task = tbk_task_new(s, NULL, sizeof(marker));
  tbk_record *r = calloc(1, sizeof *r);
  if (task == NULL || r == NULL) {
    tbk_task_discard(task);
    free(r);
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_OUT_OF_MEMORY, "event record: out of memory");
  }
  task->name = "event record";
  task->finish = finish_marker;
  atomic_init(&r->refs, 2); /* the event's `latest` and the marker */
  pthread_mutex_lock(&e->mutex);
  tbk_record *previous = e->latest;
  e->latest = r;
  if (e->mark != NULL) e->mark->capture_id = 0;
  pthread_mutex_unlock(&e->mutex);
  record_release(previous);
  atomic_fetch_add(&e->refs, 1);
  *(marker *)task->payload = (marker){e, r};
  return tbk_stream_enqueue(s, task);
}

/* The latest record with a reference for the caller, or NULL when it is complete (or there is
 * none): nothing to wait for. */
static tbk_record *pending_record(tb_event e) {
  pthread_mutex_lock(&e->mutex);
  tbk_record *r = e->latest;
  if (r != NULL && r->done) r = NULL;
  if (r != NULL) atomic_fetch_add(&r->refs, 1);
  pthread_mutex_unlock(&e->mutex);
  return r;
}

static bool record_done(tb_event e, const tbk_record *r) {
  pthread_mutex_lock(&e->mutex);
  bool done = r->done;
  pthread_mutex_unlock(&e->mutex);
  return done;
}

tb_status tbk_event_query(tb_context ctx, tb_event e) {
  tb_status status = check_event(ctx, e, "event query");
  if (status == TB_OK) status = refuse_if_captured(e, "event query");
  if (status == TB_OK) status = tbk_check_fault(ctx, e->device, "event query");
  if (status != TB_OK) return status;
  tbk_record *r = pending_record(e);
  record_release(r);
  return r == NULL ? TB_OK : TB_ERROR_NOT_READY;
}

static void wait_record(tb_event e, const tbk_record *r) {
  const int spin_us = e->rt->config.spin_us;
  uint64_t deadline = tbk_now_ns() + (uint64_t)spin_us * 1000u;
  while (!record_done(e, r) && tbk_now_ns() < deadline) {
    for (int i = 0; i < 64; i++) tbk_cpu_relax();
  }
  pthread_mutex_lock(&e->mutex);
  while (!r->done) pthread_cond_wait(&e->done, &e->mutex);
  pthread_mutex_unlock(&e->mutex);
}

tb_status tbk_event_synchronize(tb_context ctx, tb_event e) {
  tb_status status = check_event(ctx, e, "event synchronize");
  if (status == TB_OK) status = refuse_if_captured(e, "event synchronize");
  if (status != TB_OK) return status;
  tbk_record *r = pending_record(e);
  if (r != NULL) wait_record(e, r);
  record_release(r);
  return tbk_check_fault(ctx, e->device, "event synchronize");
}

static void run_wait(tbk_task *task) {
  marker *m = (marker *)task->payload;
  wait_record(m->event, m->record);
  marker_release(m);
}

tb_status tbk_stream_wait_event(tb_context ctx, tb_stream s, tb_event e) {
  tb_status status = tbk_check_stream(ctx, s, "stream wait_event");
  if (status == TB_OK) status = check_event(ctx, e, "stream wait_event");
  if (status == TB_OK) status = tbk_check_fault(ctx, s->device, "stream wait_event");
  if (status != TB_OK) return status;
  if (atomic_load_explicit(&s->rt->active_captures, memory_order_acquire) != 0) {
    /* An event recorded in a capture: the stream joins it, or learns how far it got. */
    tbk_capture_mark mark;
    pthread_mutex_lock(&s->rt->streams_mutex);
    tbk_capture *capture = capture_of_event(e, &mark);
    if (capture != NULL) status = tbk_capture_wait(capture, s, &mark);
    pthread_mutex_unlock(&s->rt->streams_mutex);
    if (capture != NULL) return status;
  }
  tbk_record *r = pending_record(e);
  if (r == NULL) return TB_OK; /* never recorded, or already complete: nothing to wait for */
  status = refuse_if_capturing(s, "stream wait_event",
                               "the event was recorded outside the capture and is not complete: "
                               "a dependency on work outside the capture (CUDA's "
                               "cudaErrorStreamCaptureIsolation)");
  if (status != TB_OK) {
    record_release(r);
    return status;
  }
  tbk_task *task = tbk_task_new(s, run_wait, sizeof(marker));
  if (task == NULL) {
    record_release(r);
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_OUT_OF_MEMORY, "wait_event: out of memory");
  }
  task->name = "stream wait_event";
  atomic_fetch_add(&e->refs, 1);
  *(marker *)task->payload = (marker){e, r};
  return tbk_stream_enqueue(s, task);
}

/* Whether `e` was recorded; if so, whether its latest record is done and its timestamp. */
static bool latest_record(tb_event e, bool *done, uint64_t *timestamp_ns) {
  pthread_mutex_lock(&e->mutex);
  const tbk_record *r = e->latest;
  if (r != NULL) {
    *done = r->done;
    *timestamp_ns = r->timestamp_ns;
  }
  pthread_mutex_unlock(&e->mutex);
  return r != NULL;
}

tb_status tbk_event_elapsed_time(tb_context ctx, tb_event start, tb_event end, float *ms) {
  tb_status status = check_event(ctx, start, "elapsed_time (start)");
  if (status == TB_OK) status = check_event(ctx, end, "elapsed_time (end)");
  if (status == TB_OK) status = refuse_if_captured(start, "elapsed_time");
  if (status == TB_OK) status = refuse_if_captured(end, "elapsed_time");
  if (status != TB_OK) return status;
  if (ms == NULL)
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT, "elapsed_time: ms is NULL");
  if (!(start->flags & TB_EVENT_FLAG_TIMING) || !(end->flags & TB_EVENT_FLAG_TIMING)) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_NOT_SUPPORTED,
                       "elapsed_time: the %s event was created without TB_EVENT_FLAG_TIMING",
                       (start->flags & TB_EVENT_FLAG_TIMING) ? "end" : "start");
  }
  if (start->device != end->device) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT,
                       "elapsed_time: events of devices %d and %d", (int)start->device,
                       (int)end->device);
  }
  uint64_t t0 = 0, t1 = 0;
  bool d0 = false, d1 = false;
  const bool r0 = latest_record(start, &d0, &t0), r1 = latest_record(end, &d1, &t1);
  if (!r0 || !r1) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT,
                       "elapsed_time: the %s event was never recorded", !r0 ? "start" : "end");
  }
  if (!d0 || !d1) return TB_ERROR_NOT_READY;
  *ms = (float)((double)(int64_t)(t1 - t0) / 1e6);
  return TB_OK;
}

/* ---- tbk_launch: a function and a copy of its arguments as one task ---- */

typedef struct launch_payload {
  tb_status (*fn)(void *args, char *message, size_t message_size);
  _Alignas(16) unsigned char args[];
} launch_payload;

static void run_launch(tbk_task *task) {
  launch_payload *call = (launch_payload *)task->payload;
  if (tbk_is_faulted(task->stream->rt, task->stream->device)) return;
  char message[448] = "";
  tb_status status = call->fn(call->args, message, sizeof message);
  if (status != TB_OK) {
    message[sizeof message - 1] = '\0';
    tbk_task_fail(task, "%s: %s", tb_status_name(status),
                  message[0] != '\0' ? message : "(no message)");
  }
}

tb_status tbk_launch(tb_context ctx, tb_stream s, const char *name,
                     tb_status (*fn)(void *args, char *message, size_t message_size),
                     const void *args, size_t size) {
  tb_status status = tbk_check_stream(ctx, s, name != NULL ? name : "launch");
  if (status == TB_OK) status = tbk_check_fault(ctx, s->device, name != NULL ? name : "launch");
  if (status != TB_OK) return status;
  if (fn == NULL || (args == NULL && size != 0)) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_INVALID_ARGUMENT, "launch: fn or args is NULL");
  }
  tbk_task *task = tbk_task_new(s, run_launch, sizeof(launch_payload) + size);
  if (task == NULL) {
    return tbk_fail_as(CTX_NAME(ctx), TB_ERROR_OUT_OF_MEMORY, "%s: out of host memory",
                       name != NULL ? name : "launch");
  }
  task->name = name != NULL ? name : "launch";
  launch_payload *call = (launch_payload *)task->payload;
  call->fn = fn;
  if (size != 0) memcpy(call->args, args, size);
  return tbk_stream_enqueue(s, task);
}
