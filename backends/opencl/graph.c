/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The opencl vendor's graphs (vendor.h, ABI 2.3, TB_EXTENSION_GRAPHS).
 *
 * Every asynchronous call describes its work as an ocl_command and hands it to ocl_submit
 * (stream.c); while the stream captures, the command is recorded here instead of enqueued.  A
 * kernel is recorded as a clone (clCloneKernel, OpenCL 2.1 and 3.0) taken while its owner
 * still holds the kernel's lock with the arguments set, so later calls that reuse the kernel
 * with other arguments do not change the graph.  A replay enqueues the recorded commands, in
 * the order the host enqueued them on any of the capture's streams, on the launching stream's
 * queue: the launch costs one driver call per command and nothing of PyTorch's dispatch,
 * Python or the vendor's argument packing.  A driver with cl_khr_command_buffer could take the
 * same list as one command buffer; the list is what every OpenCL 2.1+ driver runs.
 *
 * Several streams, with CUDA's rules (vendor.h): an event recorded on a capturing stream is not
 * a marker but a point in the capture (ocl_capture_mark: how many commands and waits of each
 * stream it covers, a vector clock); a stream that waits for it joins the capture (a fork) or
 * learns its clock (a join).  capture_end refuses a capture whose joined streams were not
 * joined back into the stream that began it (cudaErrorStreamCaptureUnjoined).
 *
 * Locks: the context's captures_lock guards the list of captures, the streams' `capture`
 * pointers (also set under each stream's lock, which ocl_submit holds while it records) and
 * every capture's lifetime; a capture's own mutex guards its commands, its members' counts and
 * its validity, since streams of one capture record from several threads.  Order:
 * captures_lock, then a stream's lock, then a capture's mutex.  A graph is immutable once
 * captured; its lock orders its launches (a launch on another stream than the previous one
 * waits for that one's marker: launches of one graph never overlap).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl.h"

#define GRAPH_MAGIC 0x6f636c67u /* "oclg" */

typedef struct ocl_capture ocl_capture;

/* A stream of a capture: the one that began it (members[0]) or one that joined it. */
typedef struct capture_member {
  ocl_stream *stream; /* NULL once destroyed */
  uint64_t ops;       /* its recorded commands and waits so far */
  /* How many of each member's ops this one has waited for (its own entry unused). */
  uint64_t clock[TB_CAPTURE_MAX_STREAMS];
} capture_member;

/* A recorded command: the command, with the kernel a clone and the kept sub-buffers its own. */
typedef struct recorded {
  ocl_command command; /* `what` points at `name` once the graph is made */
  cl_mem *keep;
  char name[96];
} recorded;

struct ocl_capture {
  uint64_t id;
  ocl_stream *stream; /* the stream that began it */
  int32_t device;
  tb_capture_mode mode;
  pthread_t thread;                  /* the thread that began it (TB_CAPTURE_THREAD_LOCAL) */
  unsigned long long fault_launches; /* the device's count when it began */
  struct ocl_capture *next;
  size_t member_count; /* changed under captures_lock and `mutex` */
  capture_member members[TB_CAPTURE_MAX_STREAMS];
  pthread_mutex_t mutex; /* guards what follows and the members' ops and clocks */
  recorded *commands;
  size_t count, capacity;
  bool invalid;
  char message[512]; /* why it is invalid: the first refused call */
};

struct tb_graph_impl {
  uint32_t magic;
  int32_t device;
  /* Whether a replay may write the device's fault record: kernels that can were launched on
   * the device while the capture lasted (possibly on other streams: an over-estimate costs the
   * next synchronize one read of the record). */
  bool faults;
  recorded *commands;
  size_t count;
  pthread_mutex_t lock; /* orders launches; guards `last` and `last_stream` */
  cl_event last;        /* the marker after the latest launch (NULL: none yet) */
  const ocl_stream *last_stream;
};

static void free_commands(recorded *commands, size_t count) {
  for (size_t i = 0; i < count; i++) {
    if (commands[i].command.kernel != NULL) clReleaseKernel(commands[i].command.kernel);
    for (size_t k = 0; k < commands[i].command.keep_count; k++) {
      clReleaseMemObject(commands[i].keep[k]);
    }
    free(commands[i].keep);
  }
  free(commands);
}

static void capture_free(ocl_capture *c) {
  free_commands(c->commands, c->count);
  pthread_mutex_destroy(&c->mutex);
  free(c);
}

/* The member of `c` that is `stream`, or NULL.  Under captures_lock or c->mutex. */
static capture_member *member_of(ocl_capture *c, const ocl_stream *stream) {
  for (size_t i = 0; i < c->member_count; i++) {
    if (c->members[i].stream == stream) return &c->members[i];
  }
  return NULL;
}

/* Invalidates `c` for `call` (the first reason is kept) and returns TB_ERROR_NOT_SUPPORTED with
 * the message. */
static tb_status refuse(ocl_capture *c, const char *call, const char *why) {
  char message[512];
  tb_capture_refusal(message, sizeof message, call, c->stream, "ocl", c->device, c->mode, why);
  pthread_mutex_lock(&c->mutex);
  if (!c->invalid) {
    c->invalid = true;
    snprintf(c->message, sizeof c->message, "%s", message);
  }
  pthread_mutex_unlock(&c->mutex);
  return ocl_fail(TB_ERROR_NOT_SUPPORTED, "%s", message);
}

static ocl_capture *find_capture(tb_context ctx, uint64_t id) {
  for (ocl_capture *c = ctx->captures; c != NULL; c = c->next) {
    if (c->id == id) return c;
  }
  return NULL;
}

/* ---- recording ---- */

tb_status ocl_capture_record(tb_context ctx, ocl_capture *c, ocl_stream *stream,
                             const ocl_command *command) {
  (void)ctx;
  recorded r = {*command, NULL, ""};
  snprintf(r.name, sizeof r.name, "%s", command->what);
  r.command.what = NULL;
  r.command.keep = NULL;
  r.command.keep_count = 0;
  tb_status status = TB_OK;
  if (command->kind == OCL_COMMAND_KERNEL) {
    cl_int err = CL_SUCCESS;
    r.command.kernel = clCloneKernel(command->kernel, &err);
    if (err != CL_SUCCESS) {
      char why[160];
      snprintf(why, sizeof why, "clCloneKernel (%s) failed with %s (%d)", command->what,
               ocl_error_name(err), (int)err);
      return refuse(c, command->what, why);
    }
    if (command->keep_count > 0) {
      r.keep = malloc(command->keep_count * sizeof *r.keep);
      if (r.keep == NULL) status = TB_ERROR_OUT_OF_MEMORY;
      for (size_t k = 0; r.keep != NULL && k < command->keep_count; k++) {
        clRetainMemObject(command->keep[k]);
        r.keep[k] = command->keep[k];
        r.command.keep_count++;
      }
    }
  }
  pthread_mutex_lock(&c->mutex);
  if (status == TB_OK && c->count == c->capacity) {
    size_t capacity = c->capacity ? 2 * c->capacity : 64;
    recorded *grown = realloc(c->commands, capacity * sizeof *grown);
    if (grown != NULL) {
      c->commands = grown;
      c->capacity = capacity;
    } else {
      status = TB_ERROR_OUT_OF_MEMORY;
    }
  }
  if (status == TB_OK) {
    c->commands[c->count++] = r;
    capture_member *m = member_of(c, stream);
    if (m != NULL) m->ops++;
  }
  pthread_mutex_unlock(&c->mutex);
  if (status != TB_OK) {
    if (r.command.kernel != NULL) clReleaseKernel(r.command.kernel);
    for (size_t k = 0; k < r.command.keep_count; k++) clReleaseMemObject(r.keep[k]);
    free(r.keep);
    (void)refuse(c, command->what, "out of host memory recording it into the graph");
    return ocl_fail(TB_ERROR_OUT_OF_MEMORY,
                    "%s: out of host memory recording it into a graph; the capture is "
                    "invalidated",
                    command->what);
  }
  return TB_OK;
}

/* ---- refusals ---- */

tb_status ocl_capture_refuse_stream(tb_context ctx, ocl_stream *stream, const char *call,
                                    const char *why) {
  if (atomic_load_explicit(&ctx->active_captures, memory_order_acquire) == 0) return TB_OK;
  tb_status status = TB_OK;
  pthread_mutex_lock(&ctx->captures_lock);
  if (stream->capture != NULL) {
    status = refuse(stream->capture, call, why);
  }
  pthread_mutex_unlock(&ctx->captures_lock);
  return status;
}

tb_status ocl_capture_refuse_device(tb_context ctx, int32_t device, const char *call) {
  if (atomic_load_explicit(&ctx->active_captures, memory_order_acquire) == 0) return TB_OK;
  tb_status status = TB_OK;
  pthread_mutex_lock(&ctx->captures_lock);
  for (ocl_capture *c = ctx->captures; c != NULL; c = c->next) {
    if (c->device == device) status = refuse(c, call, "it would wait for captured work");
  }
  pthread_mutex_unlock(&ctx->captures_lock);
  return status;
}

tb_status ocl_capture_check_unsafe(tb_context ctx, int32_t device, const char *call) {
  if (atomic_load_explicit(&ctx->active_captures, memory_order_acquire) == 0) return TB_OK;
  tb_status status = TB_OK;
  pthread_t self = pthread_self();
  pthread_mutex_lock(&ctx->captures_lock);
  for (ocl_capture *c = ctx->captures; c != NULL; c = c->next) {
    if (c->device != device) continue;
    if (c->mode == TB_CAPTURE_GLOBAL ||
        (c->mode == TB_CAPTURE_THREAD_LOCAL && pthread_equal(c->thread, self))) {
      status = refuse(c, call, "a potentially unsafe call in this capture mode");
    }
  }
  pthread_mutex_unlock(&ctx->captures_lock);
  return status;
}

/* ---- events ---- */

bool ocl_capture_mark_event(tb_context ctx, ocl_stream *stream, ocl_event *event) {
  if (atomic_load_explicit(&ctx->active_captures, memory_order_acquire) == 0) return false;
  pthread_mutex_lock(&ctx->captures_lock);
  ocl_capture *c = stream->capture;
  if (c == NULL) {
    pthread_mutex_unlock(&ctx->captures_lock);
    return false;
  }
  ocl_capture_mark mark = {c->id, {0}};
  pthread_mutex_lock(&c->mutex);
  const capture_member *m = member_of(c, stream); /* never NULL: the stream records into c */
  if (m != NULL) tb_clock_mark(mark.clock, m->clock, (size_t)(m - c->members), m->ops);
  pthread_mutex_unlock(&c->mutex);
  /* A captured record never completes outside a replay: the earlier marker is forgotten. */
  pthread_mutex_lock(&event->lock);
  cl_event old = event->marker;
  event->marker = NULL;
  event->mark = mark;
  pthread_mutex_unlock(&event->lock);
  pthread_mutex_unlock(&ctx->captures_lock);
  if (old != NULL) clReleaseEvent(old);
  return true;
}

/* The stream wait for `mark` of capture `c`, under captures_lock. */
static tb_status capture_wait(ocl_capture *c, ocl_stream *stream, const ocl_capture_mark *mark) {
  ocl_capture *own = stream->capture;
  if (own == c) { /* a join, or a wait within one stream */
    pthread_mutex_lock(&c->mutex);
    capture_member *m = member_of(c, stream);
    if (m != NULL) {
      tb_clock_merge(m->clock, mark->clock);
      m->ops++; /* the wait itself: a stream that joined has work to join back */
    }
    pthread_mutex_unlock(&c->mutex);
    return TB_OK;
  }
  if (own != NULL) { /* cudaErrorStreamCaptureIsolation */
    char why[200];
    tb_capture_isolation_why(why, sizeof why, c->stream);
    (void)refuse(c, "stream wait_event", why);
    return refuse(own, "stream wait_event", why);
  }
  if (stream->device != c->device) {
    return refuse(c, "stream wait_event", TB_CAPTURE_OTHER_DEVICE_WHY);
  }
  if (c->member_count == TB_CAPTURE_MAX_STREAMS) {
    return refuse(c, "stream wait_event", TB_CAPTURE_FULL_WHY);
  }
  /* The fork: `stream` joins the capture; its commands are recorded from now on. */
  pthread_mutex_lock(&c->mutex);
  capture_member *m = &c->members[c->member_count];
  memset(m, 0, sizeof *m);
  m->stream = stream;
  tb_clock_merge(m->clock, mark->clock);
  m->ops = 1; /* the wait: it must be joined back even if it enqueues nothing more */
  c->member_count++;
  pthread_mutex_unlock(&c->mutex);
  pthread_mutex_lock(&stream->lock);
  stream->capture = c;
  pthread_mutex_unlock(&stream->lock);
  return TB_OK;
}

bool ocl_capture_wait(tb_context ctx, ocl_stream *stream, const ocl_event *event,
                      tb_status *status) {
  if (atomic_load_explicit(&ctx->active_captures, memory_order_acquire) == 0) return false;
  pthread_mutex_lock(&ctx->captures_lock);
  ocl_capture_mark mark;
  pthread_mutex_lock((pthread_mutex_t *)&event->lock);
  mark = event->mark;
  pthread_mutex_unlock((pthread_mutex_t *)&event->lock);
  ocl_capture *c = mark.capture_id != 0 ? find_capture(ctx, mark.capture_id) : NULL;
  if (c != NULL) *status = capture_wait(c, stream, &mark);
  pthread_mutex_unlock(&ctx->captures_lock);
  return c != NULL;
}

tb_status ocl_capture_refuse_event(tb_context ctx, const ocl_event *event, const char *call) {
  if (atomic_load_explicit(&ctx->active_captures, memory_order_acquire) == 0) return TB_OK;
  tb_status status = TB_OK;
  pthread_mutex_lock(&ctx->captures_lock);
  pthread_mutex_lock((pthread_mutex_t *)&event->lock);
  uint64_t id = event->mark.capture_id;
  pthread_mutex_unlock((pthread_mutex_t *)&event->lock);
  ocl_capture *c = id != 0 ? find_capture(ctx, id) : NULL;
  if (c != NULL) {
    status = refuse(c, call,
                    "the event was recorded in the capture, and waiting for it would wait for "
                    "captured work, which runs only in replays");
  }
  pthread_mutex_unlock(&ctx->captures_lock);
  return status;
}

/* ---- begin and end ---- */

static tb_status capture_begin(tb_context ctx, tb_stream handle, tb_capture_mode mode) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  ocl_stream *stream = ocl_stream_of(handle);
  if (stream == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "graph capture_begin: stream is NULL");
  }
  if (mode != TB_CAPTURE_GLOBAL && mode != TB_CAPTURE_THREAD_LOCAL && mode != TB_CAPTURE_RELAXED) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "graph capture_begin: unknown capture mode %d",
                    (int)mode);
  }
  status = ocl_fault_status(ctx, stream->device);
  if (status != TB_OK) return status;
  /* Kernels are recorded as clCloneKernel copies: OpenCL 2.1 and later. */
  const ocl_device *dev = &ctx->devices[stream->device];
  int major = 0, minor = 0;
  if (sscanf(dev->version, "OpenCL %d.%d", &major, &minor) != 2 || major * 10 + minor < 21) {
    return ocl_fail(TB_ERROR_NOT_SUPPORTED,
                    "graph capture_begin: ocl:%d (%s) reports '%s'; graphs record kernels with "
                    "clCloneKernel, which needs OpenCL 2.1 or later",
                    (int)stream->device, dev->name, dev->version);
  }
  ocl_capture *c = calloc(1, sizeof *c);
  if (c == NULL) {
    return ocl_fail(TB_ERROR_OUT_OF_MEMORY, "graph capture_begin: out of host memory");
  }
  c->stream = stream;
  c->device = stream->device;
  c->mode = mode;
  c->thread = pthread_self();
  c->fault_launches = atomic_load(&ctx->devices[stream->device].fault_launches);
  c->member_count = 1;
  c->members[0].stream = stream;
  pthread_mutex_init(&c->mutex, NULL);
  pthread_mutex_lock(&ctx->captures_lock);
  pthread_mutex_lock(&stream->lock);
  bool busy = stream->capture != NULL;
  if (!busy) stream->capture = c;
  pthread_mutex_unlock(&stream->lock);
  if (!busy) {
    c->id = ++ctx->next_capture_id;
    c->next = ctx->captures;
    ctx->captures = c;
    atomic_fetch_add_explicit(&ctx->active_captures, 1, memory_order_release);
  }
  pthread_mutex_unlock(&ctx->captures_lock);
  if (busy) {
    capture_free(c);
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "graph capture_begin: stream %p is capturing already (or joined a capture)",
                    (void *)stream);
  }
  return TB_OK;
}

/* Unlinks `c` and detaches its streams; under captures_lock. */
static void capture_unlink(tb_context ctx, ocl_capture *c) {
  ocl_capture **link = &ctx->captures;
  while (*link != c) link = &(*link)->next;
  *link = c->next;
  for (size_t i = 0; i < c->member_count; i++) {
    ocl_stream *s = c->members[i].stream;
    if (s == NULL) continue;
    pthread_mutex_lock(&s->lock);
    s->capture = NULL;
    pthread_mutex_unlock(&s->lock);
  }
  atomic_fetch_sub_explicit(&ctx->active_captures, 1, memory_order_release);
}

static tb_status capture_end(tb_context ctx, tb_stream handle, tb_graph *graph) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  if (graph == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "graph capture_end: graph is NULL");
  }
  *graph = NULL;
  ocl_stream *stream = ocl_stream_of(handle);
  if (stream == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "graph capture_end: stream is NULL");
  }
  pthread_mutex_lock(&ctx->captures_lock);
  ocl_capture *c = stream->capture;
  if (c != NULL && c->stream != stream) {
    /* A stream that joined a capture does not end it (cudaErrorStreamCaptureUnmatched). */
    char why[200];
    tb_capture_unmatched_why(why, sizeof why, c->stream);
    status = refuse(c, "graph capture_end", why);
    pthread_mutex_unlock(&ctx->captures_lock);
    return status;
  }
  if (c != NULL) capture_unlink(ctx, c);
  pthread_mutex_unlock(&ctx->captures_lock);
  if (c == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "graph capture_end: stream %p is not capturing",
                    (void *)stream);
  }
  /* Every joined stream must have been joined back: the stream that began the capture waited
   * for an event recorded on it after its last recorded work. */
  for (size_t i = 1; i < c->member_count && !c->invalid; i++) {
    const capture_member *m = &c->members[i];
    if (c->members[0].clock[i] < m->ops) {
      c->invalid = true;
      tb_capture_unjoined_why(c->message, sizeof c->message, m->stream, stream);
    }
  }
  tb_graph g = NULL;
  if (c->invalid) {
    status = ocl_fail(TB_ERROR_NOT_SUPPORTED, "graph capture_end: the capture was invalidated: %s",
                      c->message);
  } else if ((g = calloc(1, sizeof *g)) == NULL) {
    status = ocl_fail(TB_ERROR_OUT_OF_MEMORY, "graph capture_end: out of host memory");
  }
  if (g != NULL) {
    g->magic = GRAPH_MAGIC;
    g->device = c->device;
    g->faults = atomic_load(&ctx->devices[c->device].fault_launches) != c->fault_launches;
    g->commands = c->commands;
    g->count = c->count;
    for (size_t i = 0; i < g->count; i++) g->commands[i].command.what = g->commands[i].name;
    pthread_mutex_init(&g->lock, NULL);
    c->commands = NULL;
    c->count = 0;
    *graph = g;
  }
  capture_free(c);
  return status;
}

void ocl_capture_forget_stream(tb_context ctx, ocl_stream *stream) {
  if (atomic_load_explicit(&ctx->active_captures, memory_order_acquire) == 0) return;
  pthread_mutex_lock(&ctx->captures_lock);
  ocl_capture *c = stream->capture;
  if (c != NULL) {
    (void)refuse(c, "stream destroy", "a stream of the capture was destroyed");
    pthread_mutex_lock(&c->mutex);
    capture_member *m = member_of(c, stream);
    if (m != NULL) m->stream = NULL;
    pthread_mutex_unlock(&c->mutex);
    if (c->stream == stream) c->stream = NULL; /* no capture_end can name it any more */
    stream->capture = NULL;
  }
  pthread_mutex_unlock(&ctx->captures_lock);
}

void ocl_captures_release(tb_context ctx) {
  while (ctx->captures != NULL) {
    ocl_capture *c = ctx->captures;
    capture_unlink(ctx, c);
    capture_free(c);
  }
}

/* ---- graphs ---- */

static tb_status check_graph(tb_context ctx, tb_graph g, const char *call) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  if (g == NULL || g->magic != GRAPH_MAGIC) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "%s: %p is not a live graph of this context", call,
                    (void *)g);
  }
  return TB_OK;
}

static tb_status graph_launch(tb_context ctx, tb_graph g, tb_stream handle) {
  tb_status status = check_graph(ctx, g, "graph launch");
  if (status != TB_OK) return status;
  ocl_stream *stream = ocl_stream_of(handle);
  if (stream == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "graph launch: stream is NULL");
  if (stream->device != g->device) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "graph launch: the graph belongs to ocl:%d, the stream to ocl:%d",
                    (int)g->device, (int)stream->device);
  }
  status = ocl_fault_status(ctx, g->device);
  if (status != TB_OK) return status;
  pthread_mutex_lock(&g->lock);
  ocl_stream_begin(stream);
  if (stream->capture != NULL) {
    ocl_stream_end(stream, false);
    pthread_mutex_unlock(&g->lock);
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "graph launch: stream %p is capturing (graphs are not nested)", (void *)stream);
  }
  cl_int err = CL_SUCCESS;
  if (g->last != NULL && g->last_stream != stream) {
    /* The previous launch ran on another queue: this one starts after it. */
    err = clEnqueueBarrierWithWaitList(stream->queue, 1, &g->last, NULL);
    status = ocl_check(ctx, g->device, err, "clEnqueueBarrierWithWaitList (graph launch)");
  }
  if (status == TB_OK && g->faults) {
    atomic_fetch_add(&ctx->devices[g->device].fault_launches, 1);
  }
  for (size_t i = 0; i < g->count && status == TB_OK; i++) {
    status = ocl_command_enqueue(ctx, g->device, stream->queue, &g->commands[i].command, CL_FALSE);
  }
  cl_event marker = NULL;
  if (status == TB_OK) {
    err = clEnqueueMarkerWithWaitList(stream->queue, 0, NULL, &marker);
    status = ocl_check(ctx, g->device, err, "clEnqueueMarkerWithWaitList (graph launch)");
  }
  if (marker != NULL) {
    clRetainEvent(marker); /* one for the stream, one for the graph */
    ocl_stream_end_marker(stream, marker);
    if (g->last != NULL) clReleaseEvent(g->last);
    g->last = marker;
    g->last_stream = stream;
  } else {
    ocl_stream_end(stream, true); /* part of the replay may be queued */
  }
  pthread_mutex_unlock(&g->lock);
  if (status == TB_OK) status = ocl_check(ctx, g->device, clFlush(stream->queue), "clFlush");
  return status;
}

static tb_status graph_destroy(tb_context ctx, tb_graph g) {
  tb_status status = check_graph(ctx, g, "graph destroy");
  if (status != TB_OK) return status;
  /* Queued launches hold OpenCL's own references to the kernels and sub-buffers they use. */
  g->magic = 0;
  free_commands(g->commands, g->count);
  if (g->last != NULL) clReleaseEvent(g->last);
  pthread_mutex_destroy(&g->lock);
  free(g);
  return TB_OK;
}

static tb_graphs_extension g_graphs; /* built once under g_graphs_once, then constant */
static pthread_once_t g_graphs_once = PTHREAD_ONCE_INIT;

static void build_graphs(void) {
  g_graphs = (tb_graphs_extension){
      .base = {sizeof(tb_graphs_extension), TB_EXTENSION_GRAPHS, ocl_programs_extension()},
      .capture_begin = capture_begin,
      .capture_end = capture_end,
      .graph_launch = graph_launch,
      .graph_destroy = graph_destroy,
  };
}

const tb_extension_base *ocl_graphs_extension(void) {
  pthread_once(&g_graphs_once, build_graphs);
  return &g_graphs.base;
}
