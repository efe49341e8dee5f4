/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's graphs (vendor.h, "Graphs", ABI 2.3: TB_EXTENSION_GRAPHS) over AscendCL's stream
 * capture ("aclgraph", acl/acl_mdl.h): capture_begin is aclmdlRICaptureBegin, capture_end
 * aclmdlRICaptureEnd (the graph is the model runtime instance it returns), graph_launch
 * aclmdlRIExecuteAsync and graph_destroy aclmdlRIDestroy.  The capture modes are the same three
 * (TB_CAPTURE_GLOBAL / THREAD_LOCAL / RELAXED -> ACL_MODEL_RI_CAPTURE_MODE_*), and AscendCL
 * itself records the work enqueued on the capturing stream -- kernels (aclnn operators),
 * aclrtMemcpyAsync, aclrtMemsetAsync, inject_fault's failing operator -- and refuses the
 * unsafe calls of the mode (aclrtMemcpy: the blocking copies) with
 * ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT.
 *
 * Where the ABI asks more than AscendCL documents, the adapter keeps the rule itself, with a
 * record of each capture in its stream (npu_capture: mode, thread, and whether it was
 * invalidated, with the first refusal's message):
 *
 *   - a refused call invalidates the capture (AscendCL leaves a capture valid after an unsafe
 *     call it refused): capture_end then ends AscendCL's capture, destroys the model it returns
 *     and fails with TB_ERROR_NOT_SUPPORTED and the first message;
 *   - the calls the ABI refuses are refused here before they reach AscendCL, whatever a CANN
 *     release would do with them: query and synchronize of the capturing stream, synchronize of
 *     its device, and wait_event on it of an event recorded outside the capture whose record
 *     is not complete (one that is complete needs no wait, and is allowed);
 *   - several streams are captured with vendor.h's (CUDA's) rules, by the adapter rather than
 *     AscendCL's own multi-stream capture, which the stand-in lacks: an event recorded on a
 *     capturing stream is a mark (the capture and the recording stream's vector clock), not an
 *     AscendCL record; a stream that waits for it joins the capture, and until the capture
 *     ends its work goes to the capturing stream's AscendCL stream (npu_stream::handle), which
 *     records it in the order the host enqueued it -- a valid order of the captured graph;
 *     capture_end fails unless every joined stream was joined back (counted from
 *     npu_stream::launches), and on a stream that only joined;
 *   - what AscendCL refuses with a capture code otherwise (a blocking copy; an asynchronous
 *     copy of host memory host_malloc did not allocate, which AscendCL runs synchronously and
 *     cannot capture) fails with TB_ERROR_NOT_SUPPORTED and invalidates the captures concerned
 *     (npu_capture_refused);
 *   - aclmdlRIDestroy refuses a model whose runs are queued (ACL_ERROR_RT_MODEL_RUNNING) while
 *     the ABI's graph_destroy lets queued launches run: such a graph goes to the context's
 *     graph graveyard and is destroyed once AscendCL accepts it (looked at on graph destroy,
 *     stream create and device synchronize; finalize destroys the rest after its streams);
 *   - a stream destroyed while it captures ends the capture without a graph.
 *
 * As on CANN, capture_end in GLOBAL or THREAD_LOCAL mode must come from the thread that began
 * the capture: from another one it fails (TB_ERROR_INVALID_ARGUMENT) and the capture goes on
 * (the one exception to vendor.h's "the capture ends in every case": AscendCL offers no way to
 * end it from there; callers normally end a capture on the thread that began it).  A graph runs
 * on any stream of its device; AscendCL runs the launches of one model one after another, in
 * launch order, as vendor.h asks.
 *
 * Random kernels read their key and counter from tb_rng_key::device_state when they run
 * (kernels/pointwise.c, bernoulli_captured).
 *
 * Captures are per context: a blocking copy refused because of another context's capture
 * (AscendCL's restriction is per device) invalidates nothing of this context's.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_runtime.h"

#define NPU_GRAPH_MAGIC 0x6e707567u /* "npug" */

struct tb_graph_impl {
  uint32_t magic;
  npu_context *ctx;
  int32_t device;
  aclmdlRI model;
  npu_graph *prev, *next; /* the context's live graphs, or its graveyard (next only) */
};

static const tb_graphs_extension k_graphs = {
    .base = {.struct_size = sizeof(tb_graphs_extension),
             .type = TB_EXTENSION_GRAPHS,
             .next = &npu_storage_meta.base},
    .capture_begin = npu_graph_capture_begin,
    .capture_end = npu_graph_capture_end,
    .graph_launch = npu_graph_launch,
    .graph_destroy = npu_graph_destroy,
};

const tb_extension_base *npu_extensions(void) { return &k_graphs.base; }

static npu_stream_rec *rec_of(tb_stream stream) { return (npu_stream_rec *)stream; }

static bool acl_mode(tb_capture_mode mode, aclmdlRICaptureMode *out) {
  switch (mode) {
    case TB_CAPTURE_GLOBAL:
      *out = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;
      return true;
    case TB_CAPTURE_THREAD_LOCAL:
      *out = ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL;
      return true;
    case TB_CAPTURE_RELAXED:
      *out = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
      return true;
  }
  return false;
}

/* ---- refusals ---- */

/* Writes the refusal of `call` by the capture of `s` into `message`, and invalidates the
 * capture with it unless it was already.  The caller holds ctx->mutex; `s` captures. */
static void refuse_locked(npu_stream_rec *s, const char *call, const char *why, char *message,
                          size_t size) {
  npu_capture *c = s->capture;
  char text[900];
  tb_capture_refusal(text, sizeof text, call, (void *)s, "npu", s->base.device, c->mode, why);
  snprintf(message, size, "npu: %s", text);
  if (!c->invalid) {
    c->invalid = true;
    snprintf(c->message, sizeof c->message, "%s", message);
  }
}

tb_status npu_capture_check_stream(npu_context *ctx, tb_stream stream, const char *call,
                                   const char *why) {
  npu_stream_rec *s = rec_of(stream);
  char message[1024];
  pthread_mutex_lock(&ctx->mutex);
  bool capturing = s->capture != NULL;
  if (capturing) refuse_locked(s, call, why, message, sizeof message);
  pthread_mutex_unlock(&ctx->mutex);
  return capturing ? npu_fail(ctx, TB_ERROR_NOT_SUPPORTED, "%s", message) : TB_OK;
}

tb_status npu_capture_check_device(npu_context *ctx, int32_t device, const char *call) {
  char message[1024] = "", other[1024];
  pthread_mutex_lock(&ctx->mutex);
  for (npu_stream_rec *s = ctx->streams; s != NULL; s = s->next) {
    if (s->capture == NULL || s->base.device != device) continue;
    refuse_locked(s, call, "it would wait for the captured work, which only runs in the graph",
                  message[0] == '\0' ? message : other, sizeof message);
  }
  pthread_mutex_unlock(&ctx->mutex);
  return message[0] != '\0' ? npu_fail(ctx, TB_ERROR_NOT_SUPPORTED, "%s", message) : TB_OK;
}

tb_status npu_capture_refused(npu_context *ctx, int32_t device, int32_t other_device,
                              tb_stream stream, int err, const char *call, const char *acl_call) {
  /* AscendCL's own message, through the error table: "<acl_call> failed on npu:<device> ..." */
  char why[1024], message[1024] = "", other[1024];
  (void)npu_check(ctx, device, err, acl_call);
  snprintf(why, sizeof why, "%s", npu_last_error(ctx));
  pthread_t self = pthread_self();
  pthread_mutex_lock(&ctx->mutex);
  for (npu_stream_rec *s = ctx->streams; s != NULL; s = s->next) {
    const npu_capture *c = s->capture;
    if (c == NULL) continue;
    bool concerned = stream != NULL && (tb_stream)&s->base == stream;
    if (!concerned && err == ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT &&
        (s->base.device == device || s->base.device == other_device)) {
      concerned = c->mode == TB_CAPTURE_GLOBAL ||
                  (c->mode == TB_CAPTURE_THREAD_LOCAL && pthread_equal(c->thread, self));
    }
    if (concerned) {
      refuse_locked(s, call, why, message[0] == '\0' ? message : other, sizeof message);
    }
  }
  pthread_mutex_unlock(&ctx->mutex);
  if (message[0] == '\0') { /* another context's capture: nothing of ours to invalidate */
    return npu_fail(ctx, TB_ERROR_NOT_SUPPORTED, "npu: %s: %s", call, why);
  }
  return npu_fail(ctx, TB_ERROR_NOT_SUPPORTED, "%s", message);
}

/* ---- multi-stream capture ---- */

/* The member of `c` that is `s`, or NULL.  Under ctx->mutex. */
static npu_capture_member *member_of(npu_capture *c, const npu_stream_rec *s) {
  for (size_t i = 0; i < c->member_count; i++) {
    if (c->members[i].stream == s) return &c->members[i];
  }
  return NULL;
}

/* How much work member `m` has had in the capture: the join (or begin) and each enqueue. */
static uint64_t ops_of(const npu_capture_member *m) {
  if (m->stream == NULL) return 0;
  return 1 + (atomic_load_explicit(&m->stream->base.launches, memory_order_relaxed) - m->base);
}

/* The capture under way with id `id`, or NULL.  Under ctx->mutex. */
static npu_capture *find_capture(npu_context *ctx, uint64_t id) {
  if (id == 0) return NULL;
  for (npu_stream_rec *s = ctx->streams; s != NULL; s = s->next) {
    if (s->capture != NULL && s->capture->id == id) return s->capture;
  }
  return NULL;
}

/* A stream leaves its capture: its work goes to its own AscendCL stream again. */
static void leave(npu_capture_member *m) {
  if (m->stream == NULL) return;
  atomic_store_explicit(&m->stream->base.handle, m->own, memory_order_release);
  m->stream->capture = NULL;
}

tb_status npu_capture_record(npu_context *ctx, npu_event_rec *e, tb_stream stream) {
  npu_stream_rec *s = rec_of(stream);
  pthread_mutex_lock(&ctx->mutex);
  npu_capture *c = s->capture;
  if (c != NULL) {
    const npu_capture_member *m = member_of(c, s); /* never NULL: s->capture is c */
    memset(e->clock, 0, sizeof e->clock);
    if (m != NULL) tb_clock_mark(e->clock, m->clock, (size_t)(m - c->members), ops_of(m));
    e->capture_id = c->id;
    /* A mark, not a record: once the capture ends, waits for it have nothing to wait for. */
    atomic_store(&e->state, NPU_EVENT_NEVER_RECORDED);
  } else {
    e->capture_id = 0;
  }
  pthread_mutex_unlock(&ctx->mutex);
  return c != NULL ? TB_OK : TB_ERROR_NOT_READY;
}

tb_status npu_capture_wait(npu_context *ctx, tb_stream stream, npu_event_rec *e) {
  npu_stream_rec *s = rec_of(stream);
  char message[1024] = "", other[1024];
  pthread_mutex_lock(&ctx->mutex);
  npu_capture *c = find_capture(ctx, e->capture_id);
  if (c == NULL) {
    pthread_mutex_unlock(&ctx->mutex);
    return TB_ERROR_NOT_READY;
  }
  npu_stream_rec *origin = c->members[0].stream;
  npu_capture_member *own = s->capture == c ? member_of(c, s) : NULL;
  if (own != NULL) { /* a join, or a wait within the capture */
    tb_clock_merge(own->clock, e->clock);
  } else if (s->capture != NULL) {
    char why[200];
    tb_capture_isolation_why(why, sizeof why, (void *)origin);
    refuse_locked(s, "stream wait_event", why, message, sizeof message);
    refuse_locked(origin, "stream wait_event", why, other, sizeof other);
  } else if (s->base.device != origin->base.device) {
    refuse_locked(origin, "stream wait_event", TB_CAPTURE_OTHER_DEVICE_WHY, message,
                  sizeof message);
  } else if (c->member_count == NPU_CAPTURE_MAX_STREAMS) {
    refuse_locked(origin, "stream wait_event", TB_CAPTURE_FULL_WHY, message, sizeof message);
  } else { /* the fork: its work goes to the capturing stream's AscendCL stream from now on */
    npu_capture_member *m = &c->members[c->member_count++];
    memset(m, 0, sizeof *m);
    m->stream = s;
    m->own = atomic_load_explicit(&s->base.handle, memory_order_acquire);
    m->base = atomic_load_explicit(&s->base.launches, memory_order_relaxed);
    memcpy(m->clock, e->clock, sizeof m->clock);
    s->capture = c;
    atomic_store_explicit(&s->base.handle,
                          atomic_load_explicit(&origin->base.handle, memory_order_acquire),
                          memory_order_release);
  }
  pthread_mutex_unlock(&ctx->mutex);
  return message[0] == '\0' ? TB_OK : npu_fail(ctx, TB_ERROR_NOT_SUPPORTED, "%s", message);
}

tb_status npu_capture_check_event(npu_context *ctx, npu_event_rec *e, const char *call) {
  char message[1024] = "";
  pthread_mutex_lock(&ctx->mutex);
  npu_capture *c = find_capture(ctx, e->capture_id);
  if (c != NULL) {
    refuse_locked(c->members[0].stream, call,
                  "the event was recorded in the capture, and waiting for it would wait for "
                  "captured work, which runs only in the graph",
                  message, sizeof message);
  }
  pthread_mutex_unlock(&ctx->mutex);
  return c != NULL ? npu_fail(ctx, TB_ERROR_NOT_SUPPORTED, "%s", message) : TB_OK;
}

bool npu_stream_capturing(npu_context *ctx, tb_stream stream) {
  pthread_mutex_lock(&ctx->mutex);
  bool capturing = rec_of(stream)->capture != NULL;
  pthread_mutex_unlock(&ctx->mutex);
  return capturing;
}

void npu_capture_abandon(npu_context *ctx, npu_stream_rec *s) {
  pthread_mutex_lock(&ctx->mutex);
  npu_capture *c = s->capture;
  if (c != NULL && c->members[0].stream != s) {
    /* A stream that joined a capture: it leaves it, and the capture cannot end well. */
    npu_capture_member *m = member_of(c, s);
    char message[1024];
    if (m != NULL) {
      leave(m);
      m->stream = NULL;
    }
    s->capture = c; /* for the message */
    refuse_locked(s, "stream destroy", "the stream had joined the capture", message,
                  sizeof message);
    s->capture = NULL;
    pthread_mutex_unlock(&ctx->mutex);
    return;
  }
  if (c != NULL) {
    for (size_t i = 1; i < c->member_count; i++) leave(&c->members[i]);
  }
  s->capture = NULL;
  pthread_mutex_unlock(&ctx->mutex);
  if (c == NULL) return;
  if (npu_activate(ctx, s->base.device, "stream destroy") == TB_OK) {
    aclmdlRI model = NULL;
    aclError err = aclmdlRICaptureEnd(s->base.handle, &model);
    if (err == ACL_SUCCESS) err = aclmdlRIDestroy(model);
    /* Failing (another thread began it; it was invalidated): aclrtDestroyStream ends it. */
    if (err != ACL_SUCCESS) npu_drop_acl_messages();
  }
  free(c);
}

/* ---- graphs ---- */

static tb_status check_graph(npu_context *ctx, tb_graph graph, const char *call) {
  tb_status status = npu_check_context(ctx, call);
  if (status != TB_OK) return status;
  if (graph == NULL || graph->magic != NPU_GRAPH_MAGIC) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: %s: %p is not a live graph", call,
                    (void *)graph);
  }
  if (graph->ctx != ctx) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: %s: graph %p belongs to another context than the call's", call,
                    (void *)graph);
  }
  return TB_OK;
}

/* aclmdlRIDestroy of a graph's model: true when it is gone (or cannot be destroyed at all),
 * false while its launches run. */
static bool destroy_model(npu_context *ctx, npu_graph *g) {
  if (npu_activate(ctx, g->device, "graph destroy") != TB_OK) return false;
  aclError err = aclmdlRIDestroy(g->model);
  if (err != ACL_SUCCESS) npu_drop_acl_messages();
  return err != ACL_ERROR_RT_MODEL_RUNNING;
}

void npu_graphs_sweep(npu_context *ctx) {
  pthread_mutex_lock(&ctx->mutex);
  npu_graph *graves = ctx->graph_graveyard;
  ctx->graph_graveyard = NULL;
  pthread_mutex_unlock(&ctx->mutex);
  npu_graph *keep = NULL, *last = NULL;
  while (graves != NULL) {
    npu_graph *next = graves->next;
    if (destroy_model(ctx, graves)) {
      free(graves);
    } else {
      graves->next = keep;
      if (keep == NULL) last = graves;
      keep = graves;
    }
    graves = next;
  }
  if (keep == NULL) return;
  pthread_mutex_lock(&ctx->mutex);
  last->next = ctx->graph_graveyard;
  ctx->graph_graveyard = keep;
  pthread_mutex_unlock(&ctx->mutex);
}

void npu_graphs_release(npu_context *ctx) {
  pthread_mutex_lock(&ctx->mutex);
  npu_graph *lists[2] = {ctx->graphs, ctx->graph_graveyard};
  ctx->graphs = NULL;
  ctx->graph_graveyard = NULL;
  pthread_mutex_unlock(&ctx->mutex);
  for (int k = 0; k < 2; k++) {
    while (lists[k] != NULL) {
      npu_graph *next = lists[k]->next;
      (void)destroy_model(ctx, lists[k]); /* the streams are gone: no launch is left */
      lists[k]->magic = 0;
      free(lists[k]);
      lists[k] = next;
    }
  }
}

/* ---- the extension's functions ---- */

tb_status npu_graph_capture_begin(tb_context ctx, tb_stream stream, tb_capture_mode mode) {
  tb_status status = npu_stream_check(ctx, stream, "graph capture_begin");
  if (status != TB_OK) return status;
  aclmdlRICaptureMode acl = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;
  if (!acl_mode(mode, &acl)) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: graph capture_begin: unknown mode %d",
                    (int)mode);
  }
  int32_t device = npu_stream_device(stream);
  status = npu_fault_check(device, "graph capture_begin");
  if (status == TB_OK) status = npu_activate(ctx, device, "graph capture_begin");
  if (status != TB_OK) return status;
  npu_capture *c = calloc(1, sizeof *c);
  if (c == NULL) {
    return npu_fail(ctx, TB_ERROR_OUT_OF_MEMORY, "npu: graph capture_begin: out of memory");
  }
  c->mode = mode;
  c->thread = pthread_self();
  npu_stream_rec *s = rec_of(stream);
  c->member_count = 1;
  c->members[0].stream = s;
  c->members[0].base = atomic_load_explicit(&s->base.launches, memory_order_relaxed);
  pthread_mutex_lock(&ctx->mutex);
  bool capturing = s->capture != NULL;
  if (!capturing) {
    s->capture = c; /* taken: a second capture_begin fails */
    c->id = ++ctx->next_capture_id;
  }
  pthread_mutex_unlock(&ctx->mutex);
  if (capturing) {
    free(c);
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: graph capture_begin: stream %p is capturing already", (void *)stream);
  }
  aclError err = aclmdlRICaptureBegin(npu_acl_stream(stream), acl);
  if (err != ACL_SUCCESS) {
    pthread_mutex_lock(&ctx->mutex);
    s->capture = NULL;
    pthread_mutex_unlock(&ctx->mutex);
    free(c);
    status = npu_check(ctx, device, err, "aclmdlRICaptureBegin");
    /* Captured already (by AscendCL's account): the ABI's invalid argument. */
    return err == ACL_ERROR_RT_STREAM_CAPTURED ? TB_ERROR_INVALID_ARGUMENT : status;
  }
  npu_graphs_sweep(ctx);
  return TB_OK;
}

tb_status npu_graph_capture_end(tb_context ctx, tb_stream stream, tb_graph *graph) {
  tb_status status = npu_check_context(ctx, "graph capture_end");
  if (status != TB_OK) return status;
  if (graph == NULL) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: graph capture_end: graph is NULL");
  }
  *graph = NULL;
  status = npu_stream_check(ctx, stream, "graph capture_end");
  if (status != TB_OK) return status;
  npu_stream_rec *s = rec_of(stream);
  int32_t device = s->base.device;
  char message[1024] = "";
  pthread_mutex_lock(&ctx->mutex);
  npu_capture *c = s->capture;
  if (c != NULL && c->members[0].stream != s) {
    char why[256];
    tb_capture_unmatched_why(why, sizeof why, (void *)c->members[0].stream);
    refuse_locked(s, "graph capture_end", why, message, sizeof message);
  }
  pthread_mutex_unlock(&ctx->mutex);
  if (message[0] != '\0') return npu_fail(ctx, TB_ERROR_NOT_SUPPORTED, "%s", message);
  if (c == NULL) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: graph capture_end: stream %p is not "
                    "capturing",
                    (void *)stream);
  }
  status = npu_activate(ctx, device, "graph capture_end");
  if (status != TB_OK) return status;
  aclmdlRI model = NULL;
  aclError err = aclmdlRICaptureEnd(npu_acl_stream(stream), &model);
  if (err == ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD) {
    /* The capture goes on: only the thread that began it may end it (mode not relaxed). */
    return npu_check(ctx, device, err, "aclmdlRICaptureEnd");
  }
  /* The capture has ended, with a model or without one, for every stream that joined it; each
   * must have been joined back (the beginning stream waited for what it captured). */
  pthread_mutex_lock(&ctx->mutex);
  for (size_t i = 1; i < c->member_count && !c->invalid; i++) {
    const npu_capture_member *m = &c->members[i];
    if (m->stream != NULL && c->members[0].clock[i] < ops_of(m)) {
      c->invalid = true;
      char why[400];
      tb_capture_unjoined_why(why, sizeof why, (void *)m->stream, (void *)s);
      snprintf(c->message, sizeof c->message, "npu: %s", why);
    }
  }
  for (size_t i = 1; i < c->member_count; i++) leave(&c->members[i]);
  s->capture = NULL;
  pthread_mutex_unlock(&ctx->mutex);
  if (c->invalid) { /* refused calls invalidated it: the first one's message */
    if (err == ACL_SUCCESS) err = aclmdlRIDestroy(model);
    if (err != ACL_SUCCESS) npu_drop_acl_messages();
    status = npu_fail(ctx, TB_ERROR_NOT_SUPPORTED,
                      "npu: graph capture_end: the capture was invalidated: %s", c->message);
    free(c);
    return status;
  }
  free(c);
  if (err != ACL_SUCCESS) {
    /* ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED: TB_ERROR_NOT_SUPPORTED, with AscendCL's reason */
    return npu_check(ctx, device, err, "aclmdlRICaptureEnd");
  }
  npu_graph *g = calloc(1, sizeof *g);
  if (g == NULL) {
    if (aclmdlRIDestroy(model) != ACL_SUCCESS) npu_drop_acl_messages();
    return npu_fail(ctx, TB_ERROR_OUT_OF_MEMORY, "npu: graph capture_end: out of memory");
  }
  g->magic = NPU_GRAPH_MAGIC;
  g->ctx = ctx;
  g->device = device;
  g->model = model;
  pthread_mutex_lock(&ctx->mutex);
  g->next = ctx->graphs;
  if (ctx->graphs != NULL) ctx->graphs->prev = g;
  ctx->graphs = g;
  pthread_mutex_unlock(&ctx->mutex);
  *graph = g;
  return TB_OK;
}

tb_status npu_graph_launch(tb_context ctx, tb_graph graph, tb_stream stream) {
  tb_status status = check_graph(ctx, graph, "graph launch");
  if (status == TB_OK) status = npu_stream_check(ctx, stream, "graph launch");
  if (status != TB_OK) return status;
  int32_t device = npu_stream_device(stream);
  if (device != graph->device) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: graph launch: the graph belongs to npu:%d, the stream to npu:%d",
                    (int)graph->device, (int)device);
  }
  if (npu_stream_capturing(ctx, stream)) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: graph launch: stream %p is capturing (graphs are not nested)",
                    (void *)stream);
  }
  status = npu_fault_check(device, "graph launch");
  if (status == TB_OK) status = npu_activate(ctx, device, "graph launch");
  if (status != TB_OK) return status;
  return npu_check(ctx, device, aclmdlRIExecuteAsync(graph->model, npu_acl_stream(stream)),
                   "aclmdlRIExecuteAsync");
}

tb_status npu_graph_destroy(tb_context ctx, tb_graph graph) {
  tb_status status = check_graph(ctx, graph, "graph destroy");
  if (status != TB_OK) return status;
  npu_graph *g = graph;
  pthread_mutex_lock(&ctx->mutex);
  if (g->prev != NULL) {
    g->prev->next = g->next;
  } else {
    ctx->graphs = g->next;
  }
  if (g->next != NULL) g->next->prev = g->prev;
  g->prev = NULL;
  g->magic = 0; /* the handle is invalid from now on; queued launches keep the model */
  pthread_mutex_unlock(&ctx->mutex);
  if (destroy_model(ctx, g)) {
    free(g);
  } else { /* its launches run (ACL_ERROR_RT_MODEL_RUNNING): later */
    pthread_mutex_lock(&ctx->mutex);
    g->next = ctx->graph_graveyard;
    ctx->graph_graveyard = g;
    pthread_mutex_unlock(&ctx->mutex);
  }
  npu_graphs_sweep(ctx);
  return TB_OK;
}
