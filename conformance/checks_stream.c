/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks of tb_stream_api: lifetime, priorities, queries, cross-stream and cross-device order.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support.h"

#define MIB ((size_t)1 << 20)

static tb_check_outcome check_create_destroy(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  enum { N = 5 };
  tb_stream streams[N] = {0};
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  for (int32_t d = 0; d < count; d++) {
    int32_t least = 0, greatest = 0;
    if (v->stream.priority_range != NULL) {
      EXPECT_OK(v->stream.priority_range(v->context, d, &least, &greatest));
      EXPECT_TRUE(greatest <= least && least >= 0 && greatest <= 0,
                  "device %d: priority range least %d, greatest %d: expected greatest <= 0 <= "
                  "least",
                  (int)d, (int)least, (int)greatest);
    }
    /* In range, at both ends, and out of range on both sides (clamped, not rejected). */
    const int32_t priorities[N] = {0, least, greatest, greatest - 100, least + 100};
    for (int i = 0; i < N; i++) {
      EXPECT_OK(v->stream.create(v->context, d, priorities[i], &streams[i]));
      EXPECT_TRUE(streams[i] != NULL, "stream.create returned TB_OK and a NULL stream");
    }
    for (int i = 0; i < N; i++) {
      for (int j = 0; j < i; j++) {
        EXPECT_TRUE(streams[i] != streams[j], "stream.create returned the same handle twice");
      }
    }
    for (int i = 0; i < N; i++) {
      tb_stream s = streams[i];
      streams[i] = NULL;
      EXPECT_OK(v->stream.destroy(v->context, s));
    }
  }
  EXPECT_STATUS(v->stream.create(v->context, 0, 0, NULL), TB_ERROR_INVALID_ARGUMENT);
  outcome = TB_CHECK_PASS;
done:
  for (int i = 0; i < N; i++) {
    if (streams[i] != NULL) v->stream.destroy(v->context, streams[i]);
  }
  return outcome;
}

static tb_check_outcome check_query(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = 32 * MIB;
  unsigned char *host = malloc(size);
  void *a = NULL, *b = NULL;
  tb_stream stream = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_TRUE(host != NULL, "host allocation failed");
  memset(host, 1, size);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &a));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &b));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_STATUS(v->stream.query(v->context, stream), TB_OK); /* nothing enqueued: complete */
  EXPECT_OK(v->memory.copy_h2d_async(v->context, stream, a, host, size));
  for (int i = 0; i < 8; i++) {
    EXPECT_OK(v->memory.copy_d2d_async(v->context, stream, 0, b, 0, a, size));
    EXPECT_OK(v->memory.copy_d2d_async(v->context, stream, 0, a, 0, b, size));
  }
  {
    tb_status before = v->stream.query(v->context, stream);
    EXPECT_TRUE(before == TB_OK || before == TB_ERROR_NOT_READY,
                "stream.query with work in flight returned %s; expected TB_OK or "
                "TB_ERROR_NOT_READY",
                tb_status_name(before));
  }
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_STATUS(v->stream.query(v->context, stream), TB_OK);
  outcome = TB_CHECK_PASS;
done:
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (a != NULL) v->memory.device_free(v->context, 0, a);
  if (b != NULL) v->memory.device_free(v->context, 0, b);
  free(host);
  return outcome;
}

/* Enqueues on `stream` a copy of `in` into x, then a chain of device copies through y that
 * leaves the data in x: work that outlasts the host's next few calls.  False (the failure
 * recorded) if a call fails. */
static bool enqueue_slow_producer(tb_check_context *ctx, tb_stream stream, void *x, void *y,
                                  const void *in, size_t size) {
  const tb_vendor_handle *v = ctx->vendor;
  EXPECT_OK(v->memory.copy_h2d_async(v->context, stream, x, in, size));
  for (int i = 0; i < 6; i++) {
    EXPECT_OK(v->memory.copy_d2d_async(v->context, stream, 0, y, 0, x, size));
    EXPECT_OK(v->memory.copy_d2d_async(v->context, stream, 0, x, 0, y, size));
  }
  return true;
done:
  return false;
}

/* Stream 1 produces data behind a long chain of copies; stream 2 consumes it after waiting on an
 * event recorded by stream 1.  No host synchronisation in between. */
static tb_check_outcome check_event_orders_streams(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = 16 * MIB + 3;
  unsigned char *in = malloc(size), *out = malloc(size);
  void *x = NULL, *y = NULL;
  tb_stream producer = NULL, consumer = NULL;
  tb_event ready = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_TRUE(in != NULL && out != NULL, "host allocation failed");
  tbc_fill(in, size, 21);
  memset(out, 0, size);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &x));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &y));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &producer));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &consumer));
  EXPECT_OK(v->event.create(v->context, 0, 0, &ready));
  if (!enqueue_slow_producer(ctx, producer, x, y, in, size)) goto done;
  EXPECT_OK(v->event.record(v->context, ready, producer));
  EXPECT_OK(v->stream.wait_event(v->context, consumer, ready));
  EXPECT_OK(v->memory.copy_d2h_async(v->context, consumer, out, x, size));
  EXPECT_OK(v->stream.synchronize(v->context, consumer));
  long diff = tbc_first_difference(in, out, size);
  EXPECT_TRUE(diff < 0,
              "data read on the waiting stream differs at byte %ld: wait_event did not order it "
              "after the work recorded on the other stream",
              diff);
  EXPECT_STATUS(v->event.query(v->context, ready), TB_OK);
  outcome = TB_CHECK_PASS;
done:
  if (producer != NULL) v->stream.synchronize(v->context, producer);
  if (ready != NULL) v->event.destroy(v->context, ready);
  if (producer != NULL) v->stream.destroy(v->context, producer);
  if (consumer != NULL) v->stream.destroy(v->context, consumer);
  if (x != NULL) v->memory.device_free(v->context, 0, x);
  if (y != NULL) v->memory.device_free(v->context, 0, y);
  free(in);
  free(out);
  return outcome;
}

static tb_check_outcome check_wait_unrecorded(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_stream stream = NULL;
  tb_event event = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->event.create(v->context, 0, 0, &event));
  EXPECT_OK(v->stream.wait_event(v->context, stream, event));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_STATUS(v->stream.query(v->context, stream), TB_OK);
  outcome = TB_CHECK_PASS;
done:
  if (event != NULL) v->event.destroy(v->context, event);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  return outcome;
}

/* Work enqueued on a stream that is then destroyed still completes. */
static tb_check_outcome check_destroy_busy(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = 16 * MIB;
  unsigned char *in = malloc(size), *out = malloc(size);
  void *x = NULL, *y = NULL;
  tb_stream stream = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_TRUE(in != NULL && out != NULL, "host allocation failed");
  tbc_fill(in, size, 31);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &x));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &y));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->memory.copy_h2d_async(v->context, stream, x, in, size));
  for (int i = 0; i < 4; i++)
    EXPECT_OK(v->memory.copy_d2d_async(v->context, stream, 0, y, 0, x, size));
  {
    tb_stream busy = stream;
    stream = NULL;
    EXPECT_OK(v->stream.destroy(v->context, busy));
  }
  EXPECT_OK(v->device.synchronize(v->context, 0));
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, out, y, size));
  long diff = tbc_first_difference(in, out, size);
  EXPECT_TRUE(diff < 0,
              "work queued on a stream destroyed while busy did not complete (byte %ld differs "
              "after device synchronize)",
              diff);
  outcome = TB_CHECK_PASS;
done:
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (x != NULL) v->memory.device_free(v->context, 0, x);
  if (y != NULL) v->memory.device_free(v->context, 0, y);
  free(in);
  free(out);
  return outcome;
}

/* A wait captures the record it sees: recording the event again on an idle stream (so that
 * record completes first) must not release a wait enqueued behind the earlier, slower record.
 * The PyTorch side does this whenever a pooled event is reused. */
static tb_check_outcome check_wait_survives_rerecord(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = 16 * MIB + 5;
  unsigned char *in = malloc(size), *out = malloc(size);
  void *x = NULL, *y = NULL;
  tb_stream producer = NULL, consumer = NULL, idle = NULL;
  tb_event ready = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_TRUE(in != NULL && out != NULL, "host allocation failed");
  tbc_fill(in, size, 57);
  memset(out, 0, size);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &x));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &y));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &producer));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &consumer));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &idle));
  EXPECT_OK(v->event.create(v->context, 0, 0, &ready));
  if (!enqueue_slow_producer(ctx, producer, x, y, in, size)) goto done;
  EXPECT_OK(v->event.record(v->context, ready, producer));
  EXPECT_OK(v->stream.wait_event(v->context, consumer, ready));
  EXPECT_OK(v->event.record(v->context, ready, idle));
  EXPECT_OK(v->event.synchronize(v->context, ready));
  EXPECT_OK(v->memory.copy_d2h_async(v->context, consumer, out, x, size));
  EXPECT_OK(v->stream.synchronize(v->context, consumer));
  long diff = tbc_first_difference(in, out, size);
  EXPECT_TRUE(diff < 0,
              "data read after wait_event differs at byte %ld: recording the event again on "
              "another stream released a wait enqueued behind the earlier record",
              diff);
  outcome = TB_CHECK_PASS;
done:
  if (producer != NULL) v->stream.synchronize(v->context, producer);
  if (ready != NULL) v->event.destroy(v->context, ready);
  if (producer != NULL) v->stream.destroy(v->context, producer);
  if (consumer != NULL) v->stream.destroy(v->context, consumer);
  if (idle != NULL) v->stream.destroy(v->context, idle);
  if (x != NULL) v->memory.device_free(v->context, 0, x);
  if (y != NULL) v->memory.device_free(v->context, 0, y);
  free(in);
  free(out);
  return outcome;
}

/* A stream on device 1 waits for an event recorded on device 0, then copies the data over. */
static tb_check_outcome check_cross_device_wait(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = 8 * MIB + 1;
  unsigned char *in = malloc(size), *out = malloc(size);
  void *x0 = NULL, *y0 = NULL, *x1 = NULL;
  tb_stream s0 = NULL, s1 = NULL;
  tb_event e0 = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count < 2) SKIP("needs two devices; the vendor reports %d", (int)count);
  EXPECT_TRUE(in != NULL && out != NULL, "host allocation failed");
  tbc_fill(in, size, 41);
  memset(out, 0, size);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &x0));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &y0));
  EXPECT_OK(v->memory.device_malloc(v->context, 1, size, &x1));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &s0));
  EXPECT_OK(v->stream.create(v->context, 1, 0, &s1));
  EXPECT_OK(v->event.create(v->context, 0, 0, &e0));
  EXPECT_OK(v->memory.copy_h2d_async(v->context, s0, x0, in, size));
  for (int i = 0; i < 4; i++) {
    EXPECT_OK(v->memory.copy_d2d_async(v->context, s0, 0, y0, 0, x0, size));
    EXPECT_OK(v->memory.copy_d2d_async(v->context, s0, 0, x0, 0, y0, size));
  }
  EXPECT_OK(v->event.record(v->context, e0, s0));
  EXPECT_OK(v->stream.wait_event(v->context, s1, e0));
  EXPECT_OK(v->memory.copy_d2d_async(v->context, s1, 1, x1, 0, x0, size));
  EXPECT_OK(v->memory.copy_d2h_async(v->context, s1, out, x1, size));
  EXPECT_OK(v->stream.synchronize(v->context, s1));
  long diff = tbc_first_difference(in, out, size);
  EXPECT_TRUE(diff < 0,
              "device 1 read data before device 0's recorded work finished (byte %ld differs)",
              diff);
  outcome = TB_CHECK_PASS;
done:
  if (s0 != NULL) v->stream.synchronize(v->context, s0);
  if (e0 != NULL) v->event.destroy(v->context, e0);
  if (s0 != NULL) v->stream.destroy(v->context, s0);
  if (s1 != NULL) v->stream.destroy(v->context, s1);
  if (x0 != NULL) v->memory.device_free(v->context, 0, x0);
  if (y0 != NULL) v->memory.device_free(v->context, 0, y0);
  if (x1 != NULL) v->memory.device_free(v->context, 1, x1);
  free(in);
  free(out);
  return outcome;
}

static tb_check_outcome check_invalid_handle(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  unsigned char host[8] = {0};
  EXPECT_STATUS(v->stream.query(v->context, NULL), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(v->stream.synchronize(v->context, NULL), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(v->stream.destroy(v->context, NULL), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(v->memory.copy_h2d_async(v->context, NULL, host, host, 4),
                TB_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(v->memory.memset_async(v->context, NULL, host, 0, 4), TB_ERROR_INVALID_ARGUMENT);
  outcome = TB_CHECK_PASS;
done:
  return outcome;
}

/* launch_host_func (ABI 2.1): host functions run in stream order, after the work before them and
 * before the work after them, and a failing one faults the device with its message. */
typedef struct {
  _Atomic int order[4];
  _Atomic int next;
  _Atomic int sleep_ms; /* read by the vendor's thread */
  _Atomic int fail;
} host_func_log;

typedef struct {
  host_func_log *log;
  int id;
} host_func_arg;

static tb_status host_func(void *user_data, char *message, size_t message_size) {
  host_func_arg *arg = user_data;
  int sleep_ms = atomic_load(&arg->log->sleep_ms);
  if (sleep_ms > 0) {
    struct timespec pause = {0, (long)sleep_ms * 1000000L};
    nanosleep(&pause, NULL);
  }
  if (atomic_load(&arg->log->fail)) {
    snprintf(message, message_size, "conformance: host function 4712 failed");
    return TB_ERROR_INTERNAL;
  }
  int slot = atomic_fetch_add(&arg->log->next, 1);
  if (slot < 4) atomic_store(&arg->log->order[slot], arg->id);
  return TB_OK;
}

static tb_check_outcome check_host_func(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_stream stream = NULL;
  tb_event event = NULL;
  host_func_log log;
  atomic_init(&log.order[0], 0);
  atomic_init(&log.order[1], 0);
  atomic_init(&log.order[2], 0);
  atomic_init(&log.order[3], 0);
  atomic_init(&log.next, 0);
  atomic_init(&log.sleep_ms, 20);
  atomic_init(&log.fail, 0);
  host_func_arg first = {&log, 1}, second = {&log, 2};
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  if (v->stream.launch_host_func == NULL) SKIP("the vendor has no stream.launch_host_func (2.1)");
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->event.create(v->context, 0, 0, &event));
  /* The first sleeps: the second and the event behind them must still come after it. */
  EXPECT_OK(v->stream.launch_host_func(v->context, stream, host_func, &first));
  EXPECT_OK(v->stream.launch_host_func(v->context, stream, host_func, &second));
  EXPECT_OK(v->event.record(v->context, event, stream));
  EXPECT_OK(v->event.synchronize(v->context, event));
  EXPECT_TRUE(atomic_load(&log.next) == 2 && atomic_load(&log.order[0]) == 1 &&
                  atomic_load(&log.order[1]) == 2,
              "two host functions and an event behind them: the event completed with %d "
              "function(s) run, in the order %d, %d (expected 1, 2)",
              atomic_load(&log.next), atomic_load(&log.order[0]), atomic_load(&log.order[1]));
  EXPECT_STATUS(v->stream.launch_host_func(v->context, stream, NULL, NULL),
                TB_ERROR_INVALID_ARGUMENT);
  if (v->device.reset != NULL) {
    atomic_store(&log.fail, 1);
    atomic_store(&log.sleep_ms, 0);
    EXPECT_OK(v->stream.launch_host_func(v->context, stream, host_func, &first));
    tb_status status = v->stream.synchronize(v->context, stream);
    const char *message = v->last_error(v->context);
    EXPECT_TRUE(status == TB_ERROR_DEVICE_FAULT && message != NULL &&
                    strstr(message, "conformance: host function 4712 failed") != NULL,
                "a failing host function: synchronize returned %s with \"%s\" (expected "
                "TB_ERROR_DEVICE_FAULT with the function's message)",
                tb_status_name(status), message != NULL ? message : "(null)");
    EXPECT_OK(v->device.reset(v->context, 0));
  }
  outcome = TB_CHECK_PASS;
done:
  if (event != NULL) v->event.destroy(v->context, event);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  return outcome;
}

const tb_check tbc_stream_checks[] = {
    {"stream", "host_func",
     "launch_host_func runs host functions in stream order, before the work enqueued after "
     "them, and a failing one faults the device with its message",
     check_host_func},
    {"stream", "create_destroy",
     "streams are created at any priority (out-of-range values clamped) and destroyed; "
     "priority_range has greatest <= 0 <= least",
     check_create_destroy},
    {"stream", "query",
     "query is TB_OK on an idle stream, TB_OK or TB_ERROR_NOT_READY with work in flight, TB_OK "
     "after synchronize",
     check_query},
    {"stream", "event_orders_streams",
     "work after wait_event on one stream sees all work recorded before the event on another",
     check_event_orders_streams},
    {"stream", "wait_unrecorded",
     "waiting on an event that was never recorded does not block the stream",
     check_wait_unrecorded},
    {"stream", "destroy_busy",
     "destroying a stream with queued work does not block and the work still completes",
     check_destroy_busy},
    {"stream", "wait_survives_rerecord",
     "a wait keeps waiting for the record it saw when the event is recorded again elsewhere",
     check_wait_survives_rerecord},
    {"stream", "cross_device_wait",
     "a stream waits on an event recorded on another device and then reads its data",
     check_cross_device_wait},
    {"stream", "invalid_handle", "a NULL stream is rejected with TB_ERROR_INVALID_ARGUMENT",
     check_invalid_handle},
};
const size_t tbc_stream_check_count = sizeof tbc_stream_checks / sizeof tbc_stream_checks[0];
