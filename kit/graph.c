/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The kit's graphs (vendor.h, ABI 2.3, TB_EXTENSION_GRAPHS): a capturing stream keeps the
 * tasks enqueued on it instead of running them, and a graph replays them, in order, as one
 * task.  Because a kit vendor's work is already a self-contained task (its payload holds
 * everything the work needs), capture costs nothing to write for the vendor: its kernels,
 * copies and memsets are captured as they are.
 *
 * A captured task must run again at every replay, so it must not consume its payload (release
 * references, free buffers it was given) when it runs.  The kit's own tasks that do -- event
 * records and waits -- are not captured as tasks: inside a capture they are dependencies,
 * as in CUDA.  An event recorded on a capturing stream marks how far each stream of the capture
 * had got (a vector clock, tbk_capture_mark); a stream that waits for it joins the capture (a
 * fork) or learns that clock (a join).  Every joined stream's work goes into the one task list
 * in the order the host enqueued it, which respects every captured dependency, so a replay
 * runs it serially on the launching stream.  capture_end refuses a capture whose joined
 * streams were not joined back into the stream that began it (cudaErrorStreamCaptureUnjoined).
 *
 * State: a capture is reachable from its stream (stream.c reads it on every enqueue) and from
 * the runtime's list (for device-wide checks); its task list has a mutex of its own, since
 * several threads may enqueue on one stream.  Whoever uses a capture found through its stream
 * holds streams_mutex, as capture_end does to end it, so that a capture ending on another
 * thread is never freed under a call that found it.  A graph is immutable once
 * captured, reference counted (the handle and each queued launch), and runs under its own
 * mutex.  Launches of one graph run in launch order, whatever their streams (vendor.h: a replay
 * runs "after every earlier launch of graph"): each launch takes a ticket as it is enqueued, and
 * a replay waits for its turn before it runs.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GRAPH_MAGIC 0x74626b67u /* "tbkg" */

/* A stream of a capture: the one that began it (members[0]) or one that joined it. */
typedef struct capture_member {
  tb_stream stream;
  uint64_t ops; /* its captured tasks and waits so far */
  /* How many of each member's ops this one has waited for (its own entry unused). */
  uint64_t clock[TBK_CAPTURE_MAX_STREAMS];
} capture_member;

struct tbk_capture {
  tbk_runtime *rt;
  uint64_t id;
  tb_stream stream; /* the stream that began it */
  int32_t device;
  tb_capture_mode mode;
  pthread_t thread; /* the thread that began it (TB_CAPTURE_THREAD_LOCAL) */
  struct tbk_capture *next;
  /* The streams of the capture; changed (a join) and read under streams_mutex, `ops` and
   * `clock` also under `mutex`. */
  size_t member_count;
  capture_member members[TBK_CAPTURE_MAX_STREAMS];
  pthread_mutex_t mutex; /* guards everything below, and the members' ops and clocks */
  tbk_task **tasks;
  size_t count, capacity;
  bool invalid;
  char message[512]; /* why it is invalid: the first refused call */
};

struct tb_graph_impl {
  uint32_t magic;
  tbk_runtime *rt;
  int32_t device;
  _Atomic int refs;
  /* Held from taking a ticket to enqueueing its launch, so that launches on one stream are
   * queued in ticket order (a replay waiting for a ticket queued behind it would never run). */
  pthread_mutex_t launch;
  uint64_t next_ticket; /* guarded by `launch` */
  pthread_mutex_t run;  /* held while a launch runs, and guards `serving` */
  pthread_cond_t turn;  /* broadcast when `serving` moves on */
  uint64_t serving;     /* the ticket of the launch whose turn it is */
  tbk_task **tasks;
  size_t count;
};

/* The payload of a launch's task. */
typedef struct graph_launch {
  tb_graph graph;
  uint64_t ticket;
} graph_launch;

static void free_tasks(tbk_task **tasks, size_t count) {
  for (size_t i = 0; i < count; i++) tbk_task_discard(tasks[i]);
  free(tasks);
}

/* ---- capture ---- */

/* The member of `c` that is `stream`, or NULL.  Under streams_mutex or c->mutex. */
static capture_member *member_of(tbk_capture *c, tb_stream stream) {
  for (size_t i = 0; i < c->member_count; i++) {
    if (c->members[i].stream == stream) return &c->members[i];
  }
  return NULL;
}

/* Out of host memory recording `task`: discards it and invalidates the capture. */
static tb_status add_failed(tbk_capture *c, tbk_task *task) {
  const char *name = task->name != NULL ? task->name : "task"; /* static: outlives the task */
  tbk_task_discard(task);
  (void)tbk_capture_refuse(c->rt, c, name, "out of host memory");
  return tbk_fail_as(c->rt->name, TB_ERROR_OUT_OF_MEMORY,
                     "%s: out of host memory recording it into a graph; the capture is "
                     "invalidated",
                     name);
}

tb_status tbk_capture_add(tbk_capture *c, tbk_task *task) {
  if (task->pooled) {
    /* Made before the capture began (by another thread): a slot of the stream's ring must not
     * live as long as the graph, which may outlive the stream.  Moved to the heap. */
    size_t size = sizeof(tbk_task) + task->payload_size;
    tbk_task *moved = malloc(size);
    if (moved == NULL) return add_failed(c, task);
    memcpy(moved, task, size);
    atomic_init(&moved->next, NULL);
    atomic_init(&moved->slot_taken, 1);
    moved->pooled = false;
    tbk_task_discard(task);
    task = moved;
  }
  pthread_mutex_lock(&c->mutex);
  if (c->count == c->capacity) {
    size_t capacity = c->capacity ? 2 * c->capacity : 64;
    tbk_task **grown = realloc(c->tasks, capacity * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&c->mutex);
      return add_failed(c, task);
    }
    c->tasks = grown;
    c->capacity = capacity;
  }
  c->tasks[c->count++] = task;
  capture_member *m = member_of(c, task->stream);
  if (m != NULL) m->ops++;
  pthread_mutex_unlock(&c->mutex);
  return TB_OK;
}

void tbk_capture_mark_record(tbk_capture *c, tb_stream stream, tbk_capture_mark *mark) {
  pthread_mutex_lock(&c->mutex);
  capture_member *m = member_of(c, stream);
  memset(mark, 0, sizeof *mark);
  mark->capture_id = c->id;
  if (m != NULL) tb_clock_mark(mark->clock, m->clock, (size_t)(m - c->members), m->ops);
  pthread_mutex_unlock(&c->mutex);
}

tbk_capture *tbk_capture_find(tbk_runtime *rt, uint64_t id) {
  for (tbk_capture *c = rt->captures; c != NULL; c = c->next) {
    if (c->id == id) return c;
  }
  return NULL;
}

tb_status tbk_capture_wait(tbk_capture *c, tb_stream stream, const tbk_capture_mark *mark) {
  tbk_runtime *rt = c->rt;
  _Atomic(tbk_capture *) *slot = tbk_stream_capture_slot(stream);
  tbk_capture *own = atomic_load_explicit(slot, memory_order_acquire);
  if (own == c) { /* a join, or a wait within one stream */
    pthread_mutex_lock(&c->mutex);
    capture_member *m = member_of(c, stream);
    tb_clock_merge(m->clock, mark->clock);
    m->ops++; /* the wait itself: a stream that joined has work to join back */
    pthread_mutex_unlock(&c->mutex);
    return TB_OK;
  }
  if (own != NULL) { /* cudaErrorStreamCaptureIsolation */
    char why[200];
    tb_capture_isolation_why(why, sizeof why, (void *)c->stream);
    (void)tbk_capture_refuse(rt, c, "stream wait_event", why);
    return tbk_capture_refuse(rt, own, "stream wait_event", why);
  }
  if (tbk_stream_device(stream) != c->device) {
    return tbk_capture_refuse(rt, c, "stream wait_event", TB_CAPTURE_OTHER_DEVICE_WHY);
  }
  if (c->member_count == TBK_CAPTURE_MAX_STREAMS) {
    return tbk_capture_refuse(rt, c, "stream wait_event", TB_CAPTURE_FULL_WHY);
  }
  /* The fork: `stream` joins the capture; its work is recorded from now on. */
  pthread_mutex_lock(&c->mutex);
  capture_member *m = &c->members[c->member_count];
  memset(m, 0, sizeof *m);
  m->stream = stream;
  tb_clock_merge(m->clock, mark->clock);
  m->ops = 1; /* the wait: it must be joined back even if it enqueues nothing more */
  c->member_count++;
  pthread_mutex_unlock(&c->mutex);
  tbk_stream_retain(stream); /* until the capture ends */
  atomic_store_explicit(slot, c, memory_order_release);
  return TB_OK;
}

tb_status tbk_capture_refuse(tbk_runtime *rt, tbk_capture *c, const char *call, const char *why) {
  char message[512];
  tb_capture_refusal(message, sizeof message, call, (void *)c->stream, rt->name, c->device, c->mode,
                     why);
  pthread_mutex_lock(&c->mutex);
  if (!c->invalid) {
    c->invalid = true;
    snprintf(c->message, sizeof c->message, "%s", message);
  }
  pthread_mutex_unlock(&c->mutex);
  return tbk_fail_as(rt->name, TB_ERROR_NOT_SUPPORTED, "%s", message);
}

tb_status tbk_runtime_check_no_capture(tbk_runtime *rt, int32_t device, const char *call) {
  if (atomic_load_explicit(&rt->active_captures, memory_order_acquire) == 0) return TB_OK;
  tb_status status = TB_OK;
  pthread_mutex_lock(&rt->streams_mutex);
  for (tbk_capture *c = rt->captures; c != NULL; c = c->next) {
    if (c->device == device) {
      status = tbk_capture_refuse(rt, c, call, "it would wait for captured work");
    }
  }
  pthread_mutex_unlock(&rt->streams_mutex);
  return status;
}

tb_status tbk_check_capture(tb_context ctx, int32_t device, const char *call) {
  tbk_runtime *rt = tbk_runtime_of(ctx);
  if (rt == NULL || atomic_load_explicit(&rt->active_captures, memory_order_acquire) == 0) {
    return TB_OK;
  }
  tb_status status = TB_OK;
  pthread_t self = pthread_self();
  pthread_mutex_lock(&rt->streams_mutex);
  for (tbk_capture *c = rt->captures; c != NULL; c = c->next) {
    if (c->device != device) continue;
    if (c->mode == TB_CAPTURE_GLOBAL ||
        (c->mode == TB_CAPTURE_THREAD_LOCAL && pthread_equal(c->thread, self))) {
      status = tbk_capture_refuse(rt, c, call, "a potentially unsafe call in this capture mode");
    }
  }
  pthread_mutex_unlock(&rt->streams_mutex);
  return status;
}

tb_status tbk_graph_capture_begin(tb_context ctx, tb_stream stream, tb_capture_mode mode) {
  tb_status status = tbk_check_stream(ctx, stream, "graph capture_begin");
  if (status != TB_OK) return status;
  tbk_runtime *rt = tbk_runtime_of(ctx);
  if (mode != TB_CAPTURE_GLOBAL && mode != TB_CAPTURE_THREAD_LOCAL && mode != TB_CAPTURE_RELAXED) {
    return tbk_fail_as(rt->name, TB_ERROR_INVALID_ARGUMENT,
                       "graph capture_begin: unknown capture mode %d", (int)mode);
  }
  int32_t device = tbk_stream_device(stream);
  status = tbk_check_fault(ctx, device, "graph capture_begin");
  if (status != TB_OK) return status;
  tbk_capture *c = calloc(1, sizeof *c);
  if (c == NULL) {
    return tbk_fail_as(rt->name, TB_ERROR_OUT_OF_MEMORY, "graph capture_begin: out of memory");
  }
  c->rt = rt;
  c->stream = stream;
  c->device = device;
  c->mode = mode;
  c->thread = pthread_self();
  c->member_count = 1;
  c->members[0].stream = stream;
  pthread_mutex_init(&c->mutex, NULL);
  _Atomic(tbk_capture *) *slot = tbk_stream_capture_slot(stream);
  pthread_mutex_lock(&rt->streams_mutex);
  c->id = ++rt->next_capture_id;
  tbk_capture *expected = NULL;
  if (!atomic_compare_exchange_strong(slot, &expected, c)) {
    pthread_mutex_unlock(&rt->streams_mutex);
    pthread_mutex_destroy(&c->mutex);
    free(c);
    return tbk_fail_as(rt->name, TB_ERROR_INVALID_ARGUMENT,
                       "graph capture_begin: stream %p is capturing already", (void *)stream);
  }
  c->next = rt->captures;
  rt->captures = c;
  atomic_fetch_add_explicit(&rt->active_captures, 1, memory_order_release);
  pthread_mutex_unlock(&rt->streams_mutex);
  tbk_stream_retain(stream); /* until the capture ends */
  return TB_OK;
}

tb_status tbk_graph_capture_end(tb_context ctx, tb_stream stream, tb_graph *graph) {
  tb_status status = tbk_check_context(ctx, "graph capture_end");
  if (status != TB_OK) return status;
  tbk_runtime *rt = tbk_runtime_of(ctx);
  if (graph == NULL) {
    return tbk_fail_as(rt->name, TB_ERROR_INVALID_ARGUMENT, "graph capture_end: graph is NULL");
  }
  *graph = NULL;
  if (stream == NULL) {
    return tbk_fail_as(rt->name, TB_ERROR_INVALID_ARGUMENT, "graph capture_end: stream is NULL");
  }
  /* The capture is found through the runtime's list, so that a stream destroyed while it
   * captured can still end its capture. */
  pthread_mutex_lock(&rt->streams_mutex);
  tbk_capture **link = &rt->captures;
  while (*link != NULL && (*link)->stream != stream) link = &(*link)->next;
  tbk_capture *c = *link;
  if (c == NULL) {
    /* A stream that joined a capture does not end it (cudaErrorStreamCaptureUnmatched). */
    tbk_capture *joined =
        atomic_load_explicit(tbk_stream_capture_slot(stream), memory_order_acquire);
    if (joined != NULL) {
      char why[200];
      tb_capture_unmatched_why(why, sizeof why, (void *)joined->stream);
      status = tbk_capture_refuse(rt, joined, "graph capture_end", why);
      pthread_mutex_unlock(&rt->streams_mutex);
      return status;
    }
  } else {
    *link = c->next;
    for (size_t i = 0; i < c->member_count; i++) {
      atomic_store(tbk_stream_capture_slot(c->members[i].stream), NULL);
    }
    atomic_fetch_sub_explicit(&rt->active_captures, 1, memory_order_release);
  }
  pthread_mutex_unlock(&rt->streams_mutex);
  if (c == NULL) {
    return tbk_fail_as(rt->name, TB_ERROR_INVALID_ARGUMENT,
                       "graph capture_end: stream %p is not capturing", (void *)stream);
  }
  /* As with CUDA, ending a capture while another thread still enqueues on the stream is the
   * caller's race: the ends of both calls are not ordered.  (Nothing else uses `c` from now on:
   * stream.c uses a capture under streams_mutex only, after finding it in its slot again.) */
  /* Every joined stream must have been joined back: the stream that began the capture waited
   * for an event recorded on it after its last captured work. */
  for (size_t i = 1; i < c->member_count && !c->invalid; i++) {
    const capture_member *m = &c->members[i];
    if (c->members[0].clock[i] < m->ops) {
      c->invalid = true;
      tb_capture_unjoined_why(c->message, sizeof c->message, (void *)m->stream, (void *)stream);
    }
  }
  for (size_t i = 0; i < c->member_count; i++) tbk_stream_release(c->members[i].stream);
  status = TB_OK;
  tb_graph g = NULL;
  if (c->invalid) {
    status = tbk_fail_as(rt->name, TB_ERROR_NOT_SUPPORTED,
                         "graph capture_end: the capture was invalidated: %s", c->message);
  } else if ((g = calloc(1, sizeof *g)) == NULL) {
    status = tbk_fail_as(rt->name, TB_ERROR_OUT_OF_MEMORY, "graph capture_end: out of memory");
  }
  if (status != TB_OK) {
    free_tasks(c->tasks, c->count);
  } else {
    g->magic = GRAPH_MAGIC;
    g->rt = rt;
    g->device = c->device;
    atomic_init(&g->refs, 1);
    pthread_mutex_init(&g->launch, NULL);
    pthread_mutex_init(&g->run, NULL);
    pthread_cond_init(&g->turn, NULL);
    g->next_ticket = 0;
    g->serving = 0;
    g->tasks = c->tasks;
    g->count = c->count;
    *graph = g;
  }
  pthread_mutex_destroy(&c->mutex);
  free(c);
  return status;
}

/* ---- graphs ---- */

static void graph_release(tb_graph g) {
  if (atomic_fetch_sub(&g->refs, 1) != 1) return;
  free_tasks(g->tasks, g->count);
  pthread_mutex_destroy(&g->launch);
  pthread_mutex_destroy(&g->run);
  pthread_cond_destroy(&g->turn);
  g->magic = 0;
  free(g);
}

static tb_status check_graph(tb_context ctx, tb_graph g, const char *call) {
  tb_status status = tbk_check_context(ctx, call);
  if (status != TB_OK) return status;
  tbk_runtime *rt = tbk_runtime_of(ctx);
  if (g == NULL || g->magic != GRAPH_MAGIC || g->rt != rt) {
    return tbk_fail_as(rt->name, TB_ERROR_INVALID_ARGUMENT,
                       "%s: %p is not a live graph of this context", call, (void *)g);
  }
  return TB_OK;
}

/* One launch: once the earlier launches have run, every captured task, in order, on the
 * launching stream's worker. */
static void run_graph(tbk_task *task) {
  const graph_launch launch = *(const graph_launch *)task->payload;
  tb_graph g = launch.graph;
  void (*task_done)(void *, const char *, uint64_t) = g->rt->config.task_done;
  pthread_mutex_lock(&g->run);
  while (g->serving != launch.ticket) pthread_cond_wait(&g->turn, &g->run);
  for (size_t i = 0; i < g->count; i++) {
    tbk_task *t = g->tasks[i];
    t->stream = task->stream; /* faults name the device of the launch */
    if (t->fn == NULL) continue;
    if (task_done != NULL) {
      uint64_t start = tbk_now_ns();
      t->fn(t);
      task_done(g->rt->config.user, t->name, tbk_now_ns() - start);
    } else {
      t->fn(t);
    }
  }
  g->serving++;
  pthread_cond_broadcast(&g->turn);
  pthread_mutex_unlock(&g->run);
  graph_release(g);
}

tb_status tbk_graph_launch(tb_context ctx, tb_graph g, tb_stream stream) {
  tb_status status = check_graph(ctx, g, "graph launch");
  if (status == TB_OK) status = tbk_check_stream(ctx, stream, "graph launch");
  if (status != TB_OK) return status;
  tbk_runtime *rt = tbk_runtime_of(ctx);
  if (tbk_stream_device(stream) != g->device) {
    return tbk_fail_as(rt->name, TB_ERROR_INVALID_ARGUMENT,
                       "graph launch: the graph belongs to device %d, the stream to device %d",
                       (int)g->device, (int)tbk_stream_device(stream));
  }
  if (atomic_load(tbk_stream_capture_slot(stream)) != NULL) {
    return tbk_fail_as(rt->name, TB_ERROR_INVALID_ARGUMENT,
                       "graph launch: stream %p is capturing (graphs are not nested)",
                       (void *)stream);
  }
  status = tbk_check_fault(ctx, g->device, "graph launch");
  if (status != TB_OK) return status;
  tbk_task *task = tbk_task_new(stream, run_graph, sizeof(graph_launch));
  if (task == NULL) {
    return tbk_fail_as(rt->name, TB_ERROR_OUT_OF_MEMORY, "graph launch: out of host memory");
  }
  task->name = NULL; /* the worker's profile hook sees the graph's own tasks instead */
  atomic_fetch_add(&g->refs, 1);
  pthread_mutex_lock(&g->launch);
  *(graph_launch *)task->payload = (graph_launch){g, g->next_ticket++};
  status = tbk_stream_enqueue(stream, task);
  if (status != TB_OK) g->next_ticket--; /* the task is gone: no later launch waits for it */
  pthread_mutex_unlock(&g->launch);
  if (status != TB_OK) graph_release(g); /* the task's reference */
  return status;
}

tb_status tbk_graph_destroy(tb_context ctx, tb_graph g) {
  tb_status status = check_graph(ctx, g, "graph destroy");
  if (status != TB_OK) return status;
  g->magic = 0; /* the handle is invalid from now on; queued launches keep the graph */
  graph_release(g);
  return TB_OK;
}
