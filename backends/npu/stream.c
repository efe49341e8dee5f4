/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's stream slots over aclrtCreateStream, aclrtDestroyStream, aclrtStreamQuery,
 * aclrtSynchronizeStream and aclrtStreamWaitEvent.
 *
 * Destroying a busy stream.  The ABI's destroy does not block and lets queued work finish;
 * aclrtDestroyStream waits for the stream's work (aclrtDestroyStream.md).  A stream whose work
 * is done is destroyed at once; a busy one goes to the context's graveyard, whose streams are
 * destroyed once aclrtStreamQuery says they are done -- looked at whenever a stream is created
 * or destroyed and the device synchronised -- and at finalize.  The handle is invalid at once
 * either way, and tb_device_api::synchronize (aclrtSynchronizeDevice) still waits for the
 * graveyard's work, as the ABI asks.
 *
 * A stream that captures a graph (graph.c) refuses query and synchronize: they would wait for
 * the captured work.  A stream destroyed while it captures ends the capture without a graph.
 */
#define _GNU_SOURCE

#include <stdlib.h>

#include "npu_runtime.h"

#define NPU_STREAM_MAGIC 0x6e707573u /* "npus" */

static npu_stream_rec *rec_of(tb_stream stream) { return (npu_stream_rec *)stream; }

tb_status npu_stream_check(npu_context *ctx, tb_stream stream, const char *call) {
  tb_status status = npu_check_context(ctx, call);
  if (status != TB_OK) return status;
  const npu_stream_rec *s = rec_of(stream);
  if (s == NULL || s->magic != NPU_STREAM_MAGIC) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: %s: %p is not a live stream", call,
                    (void *)stream);
  }
  if (s->ctx != ctx) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: %s: stream %p belongs to another context than the call's", call,
                    (void *)stream);
  }
  return TB_OK;
}

/* aclrtDestroyStream of a stream whose work is done (or which must go now); blocks until its
 * work is done. */
static void destroy_now(npu_context *ctx, npu_stream_rec *s) {
  npu_capture_abandon(ctx, s);
  /* aclrtDestroyStream.md: the stream must belong to the current context. */
  if (npu_activate(ctx, s->base.device, "stream destroy") == TB_OK) {
    aclError err = aclrtDestroyStream(s->base.handle);
    if (err != ACL_SUCCESS) npu_drop_acl_messages(); /* the handle is gone for the caller anyway */
  }
  s->magic = 0;
  free(s);
}

/* Whether the stream's work is done: COMPLETE, or a failure (a faulted device drops the rest). */
static bool stream_done(npu_stream_rec *s) {
  aclrtStreamStatus status = ACL_STREAM_STATUS_NOT_READY;
  aclError err = aclrtStreamQuery(s->base.handle, &status);
  if (err != ACL_SUCCESS) npu_drop_acl_messages();
  return err != ACL_SUCCESS || status == ACL_STREAM_STATUS_COMPLETE;
}

void npu_streams_sweep(npu_context *ctx, bool all) {
  pthread_mutex_lock(&ctx->mutex);
  npu_stream_rec *graves = ctx->graveyard;
  ctx->graveyard = NULL;
  pthread_mutex_unlock(&ctx->mutex);
  npu_stream_rec *keep = NULL;
  while (graves != NULL) {
    npu_stream_rec *next = graves->next;
    if (all || (npu_activate(ctx, graves->base.device, "stream destroy") == TB_OK &&
                stream_done(graves))) {
      destroy_now(ctx, graves);
    } else {
      graves->next = keep;
      keep = graves;
    }
    graves = next;
  }
  if (keep == NULL) return;
  pthread_mutex_lock(&ctx->mutex);
  npu_stream_rec *last = keep;
  while (last->next != NULL) last = last->next;
  last->next = ctx->graveyard;
  ctx->graveyard = keep;
  pthread_mutex_unlock(&ctx->mutex);
}

void npu_streams_release(npu_context *ctx) {
  pthread_mutex_lock(&ctx->mutex);
  npu_stream_rec *live = ctx->streams;
  ctx->streams = NULL;
  pthread_mutex_unlock(&ctx->mutex);
  while (live != NULL) {
    npu_stream_rec *next = live->next;
    destroy_now(ctx, live);
    live = next;
  }
  npu_streams_sweep(ctx, true);
}

tb_status npu_stream_create(tb_context ctx, int32_t device, int32_t priority, tb_stream *stream) {
  (void)priority; /* AscendCL streams of aclrtCreateStream have one priority (vendor.c) */
  tb_status status = npu_check_device(ctx, device, "stream create");
  if (status != TB_OK) return status;
  if (stream == NULL) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: stream create: stream is NULL");
  }
  status = npu_activate(ctx, device, "stream create");
  if (status != TB_OK) return status;
  npu_streams_sweep(ctx, false);
  npu_graphs_sweep(ctx);
  npu_stream_rec *s = calloc(1, sizeof *s);
  if (s == NULL) return npu_fail(ctx, TB_ERROR_OUT_OF_MEMORY, "npu: stream create: out of memory");
  status = npu_activate(ctx, device, "stream create");
  if (status == TB_OK) {
    aclrtStream handle = NULL;
    status = npu_check(ctx, device, aclrtCreateStream(&handle), "aclrtCreateStream");
    atomic_init(&s->base.handle, handle);
  }
  if (status != TB_OK) {
    free(s);
    return status;
  }
  s->base.device = device;
  s->magic = NPU_STREAM_MAGIC;
  s->ctx = ctx;
  pthread_mutex_lock(&ctx->mutex);
  s->next = ctx->streams;
  if (ctx->streams != NULL) ctx->streams->prev = s;
  ctx->streams = s;
  pthread_mutex_unlock(&ctx->mutex);
  *stream = (tb_stream)&s->base;
  return TB_OK;
}

tb_status npu_stream_destroy(tb_context ctx, tb_stream stream) {
  tb_status status = npu_stream_check(ctx, stream, "stream destroy");
  if (status != TB_OK) return status;
  npu_stream_rec *s = rec_of(stream);
  pthread_mutex_lock(&ctx->mutex);
  if (s->prev != NULL) {
    s->prev->next = s->next;
  } else {
    ctx->streams = s->next;
  }
  if (s->next != NULL) s->next->prev = s->prev;
  s->prev = NULL;
  s->magic = 0; /* the handle is invalid from now on */
  pthread_mutex_unlock(&ctx->mutex);
  npu_capture_abandon(ctx, s); /* (its query would refuse a capturing stream) */
  if (npu_activate(ctx, s->base.device, "stream destroy") == TB_OK && stream_done(s)) {
    destroy_now(ctx, s);
  } else {
    pthread_mutex_lock(&ctx->mutex);
    s->next = ctx->graveyard;
    ctx->graveyard = s;
    pthread_mutex_unlock(&ctx->mutex);
  }
  npu_streams_sweep(ctx, false);
  return TB_OK;
}

tb_status npu_stream_query(tb_context ctx, tb_stream stream) {
  tb_status status = npu_stream_check(ctx, stream, "stream query");
  if (status == TB_OK) {
    status = npu_capture_check_stream(ctx, stream, "stream query",
                                      "it would wait for the captured work, which only runs in "
                                      "the graph");
  }
  if (status != TB_OK) return status;
  int32_t device = npu_stream_device(stream);
  status = npu_fault_check(device, "stream query");
  if (status == TB_OK) status = npu_activate(ctx, device, "stream query");
  if (status != TB_OK) return status;
  aclrtStreamStatus state = ACL_STREAM_STATUS_NOT_READY;
  status =
      npu_check(ctx, device, aclrtStreamQuery(npu_acl_stream(stream), &state), "aclrtStreamQuery");
  if (status != TB_OK) return status;
  return state == ACL_STREAM_STATUS_COMPLETE ? TB_OK : TB_ERROR_NOT_READY;
}

tb_status npu_stream_synchronize(tb_context ctx, tb_stream stream) {
  tb_status status = npu_stream_check(ctx, stream, "stream synchronize");
  if (status == TB_OK) {
    status = npu_capture_check_stream(ctx, stream, "stream synchronize",
                                      "it would wait for the captured work, which only runs in "
                                      "the graph");
  }
  if (status != TB_OK) return status;
  int32_t device = npu_stream_device(stream);
  status = npu_fault_check(device, "stream synchronize");
  if (status == TB_OK) status = npu_activate(ctx, device, "stream synchronize");
  if (status != TB_OK) return status;
  return npu_check(ctx, device, aclrtSynchronizeStream(npu_acl_stream(stream)),
                   "aclrtSynchronizeStream");
}
