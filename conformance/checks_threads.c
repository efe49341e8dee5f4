/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks that the vendor is thread-safe as vendor.h promises: many threads allocating,
 * copying and using their own streams, or one stream they share, at once.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

enum { THREADS = 8, ITERATIONS = 200 };

typedef struct worker {
  const tb_vendor_handle *vendor;
  int index;
  int32_t device;
  int use_stream;
  tb_stream shared; /* non-NULL: enqueue on this stream, shared by all threads */
  char error[512];  /* empty on success */
} worker;

static void *alloc_free_worker(void *arg) {
  worker *w = arg;
  const tb_vendor_handle *v = w->vendor;
  enum { MAX = 64 * 1024 + 17 };
  unsigned char *in = malloc(MAX), *out = malloc(MAX);
  tb_stream stream = NULL;
  tb_event done_event = NULL; /* before the first jump to `done`, which destroys it */
  if (in == NULL || out == NULL) {
    snprintf(w->error, sizeof w->error, "thread %d: host allocation failed", w->index);
    goto done;
  }
  if (w->shared != NULL) {
    tb_status status = v->event.create(v->context, w->device, 0, &done_event);
    if (status != TB_OK) {
      snprintf(w->error, sizeof w->error, "thread %d: event.create returned %s: %s", w->index,
               tb_status_name(status), v->last_error(v->context));
      goto done;
    }
  } else if (w->use_stream) {
    tb_status status = v->stream.create(v->context, w->device, 0, &stream);
    if (status != TB_OK) {
      snprintf(w->error, sizeof w->error, "thread %d: stream.create returned %s: %s", w->index,
               tb_status_name(status), v->last_error(v->context));
      goto done;
    }
  }
  for (int i = 0; i < ITERATIONS; i++) {
    size_t size = 1 + (size_t)((w->index * 7919u + (unsigned)i * 104729u) % MAX);
    void *dev = NULL;
    tb_status status = v->memory.device_malloc(v->context, w->device, size, &dev);
    if (status != TB_OK) {
      snprintf(w->error, sizeof w->error, "thread %d: device_malloc(%zu) returned %s: %s", w->index,
               size, tb_status_name(status), v->last_error(v->context));
      goto done;
    }
    tbc_fill(in, size, (uint32_t)(w->index * 1000 + i));
    if (w->shared != NULL) { /* this thread's copies keep their order among the others' */
      status = v->memory.copy_h2d_async(v->context, w->shared, dev, in, size);
      if (status == TB_OK) status = v->memory.copy_d2h_async(v->context, w->shared, out, dev, size);
      if (status == TB_OK && i % 2 == 0) {
        status = v->event.record(v->context, done_event, w->shared);
        if (status == TB_OK) status = v->event.synchronize(v->context, done_event);
      } else if (status == TB_OK) {
        status = v->stream.synchronize(v->context, w->shared);
      }
    } else if (stream != NULL) {
      status = v->memory.copy_h2d_async(v->context, stream, dev, in, size);
      if (status == TB_OK) status = v->memory.copy_d2h_async(v->context, stream, out, dev, size);
      if (status == TB_OK) status = v->stream.synchronize(v->context, stream);
    } else {
      status = v->memory.copy_h2d(v->context, w->device, dev, in, size);
      if (status == TB_OK) status = v->memory.copy_d2h(v->context, w->device, out, dev, size);
    }
    long diff = status == TB_OK ? tbc_first_difference(in, out, size) : -1;
    tb_status freed = v->memory.device_free(v->context, w->device, dev);
    if (status != TB_OK || freed != TB_OK) {
      snprintf(w->error, sizeof w->error, "thread %d: copy or free returned %s: %s", w->index,
               tb_status_name(status != TB_OK ? status : freed), v->last_error(v->context));
      goto done;
    }
    if (diff >= 0) {
      snprintf(w->error, sizeof w->error,
               "thread %d: %zu bytes round-tripped with byte %ld changed: another thread's "
               "data leaked in",
               w->index, size, diff);
      goto done;
    }
  }
done:
  if (done_event != NULL) v->event.destroy(v->context, done_event);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  free(in);
  free(out);
  return NULL;
}

/* use_stream: 0 synchronous copies, 1 a stream per thread, 2 one stream for all threads. */
static tb_check_outcome run_workers(tb_check_context *ctx, int use_stream) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  worker workers[THREADS];
  pthread_t threads[THREADS];
  int started = 0;
  tb_stream shared = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  if (use_stream == 2) EXPECT_OK(ctx->vendor->stream.create(ctx->vendor->context, 0, 0, &shared));
  for (started = 0; started < THREADS; started++) {
    memset(&workers[started], 0, sizeof workers[started]);
    workers[started].vendor = ctx->vendor;
    workers[started].index = started;
    workers[started].device = shared != NULL ? 0 : started % count;
    workers[started].use_stream = use_stream;
    workers[started].shared = shared;
    if (pthread_create(&threads[started], NULL, alloc_free_worker, &workers[started]) != 0) {
      tbc_fail(ctx, "could not start thread %d", started);
      break;
    }
  }
  for (int i = 0; i < started; i++) pthread_join(threads[i], NULL);
  if (started < THREADS) goto done;
  for (int i = 0; i < THREADS; i++)
    EXPECT_TRUE(workers[i].error[0] == '\0', "%s", workers[i].error);
  outcome = TB_CHECK_PASS;
done:
  if (shared != NULL) ctx->vendor->stream.destroy(ctx->vendor->context, shared);
  return outcome;
}

static tb_check_outcome check_alloc_free(tb_check_context *ctx) { return run_workers(ctx, 0); }

static tb_check_outcome check_streams(tb_check_context *ctx) { return run_workers(ctx, 1); }

static tb_check_outcome check_shared_stream(tb_check_context *ctx) { return run_workers(ctx, 2); }

const tb_check tbc_thread_checks[] = {
    {"threads", "alloc_free",
     "8 threads allocate, copy and free at once (devices shared round-robin) with no error and "
     "no crossed data",
     check_alloc_free},
    {"threads", "streams", "8 threads each drive their own stream with asynchronous copies at once",
     check_streams},
    {"threads", "shared_stream",
     "8 threads enqueue copies, records and synchronizes on one stream at once; each thread's "
     "work keeps its order",
     check_shared_stream},
};
const size_t tbc_thread_check_count = sizeof tbc_thread_checks / sizeof tbc_thread_checks[0];
