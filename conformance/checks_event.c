/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks of tb_event_api: lifetime, queries, timing and its errors, busy destruction.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define MIB ((size_t)1 << 20)

/* Enqueues `rounds` device-to-device copies of `size` bytes between a and b on `stream`. */
static tb_status enqueue_work(const tb_vendor_handle *v, tb_stream stream, void *a, void *b,
                              size_t size, int rounds) {
  for (int i = 0; i < rounds; i++) {
    tb_status status =
        v->memory.copy_d2d_async(v->context, stream, 0, (i % 2) ? a : b, 0, (i % 2) ? b : a, size);
    if (status != TB_OK) return status;
  }
  return TB_OK;
}

static tb_check_outcome check_create_destroy(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_event plain = NULL, timing = NULL, bogus = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  for (int32_t d = 0; d < count; d++) {
    EXPECT_OK(v->event.create(v->context, d, 0, &plain));
    EXPECT_OK(v->event.create(v->context, d, TB_EVENT_FLAG_TIMING, &timing));
    EXPECT_TRUE(plain != NULL && timing != NULL && plain != timing,
                "event.create returned NULL or duplicate handles");
    tb_event p = plain, t = timing;
    plain = timing = NULL;
    EXPECT_OK(v->event.destroy(v->context, p));
    EXPECT_OK(v->event.destroy(v->context, t));
  }
  EXPECT_STATUS(v->event.create(v->context, 0, 0x80000000u, &bogus), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(bogus == NULL, "event.create with unknown flags changed *event");
  EXPECT_STATUS(v->event.create(v->context, 0, 0, NULL), TB_ERROR_INVALID_ARGUMENT);
  outcome = TB_CHECK_PASS;
done:
  if (plain != NULL) v->event.destroy(v->context, plain);
  if (timing != NULL) v->event.destroy(v->context, timing);
  if (bogus != NULL) v->event.destroy(v->context, bogus);
  return outcome;
}

static tb_check_outcome check_unrecorded(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_event event = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_OK(v->event.create(v->context, 0, TB_EVENT_FLAG_TIMING, &event));
  EXPECT_STATUS(v->event.query(v->context, event), TB_OK);
  EXPECT_OK(v->event.synchronize(v->context, event));
  outcome = TB_CHECK_PASS;
done:
  if (event != NULL) v->event.destroy(v->context, event);
  return outcome;
}

static tb_check_outcome check_record_query(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = 16 * MIB;
  void *a = NULL, *b = NULL;
  tb_stream stream = NULL;
  tb_event event = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &a));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &b));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->event.create(v->context, 0, 0, &event));
  EXPECT_OK(enqueue_work(v, stream, a, b, size, 8));
  EXPECT_OK(v->event.record(v->context, event, stream));
  {
    tb_status before = v->event.query(v->context, event);
    EXPECT_TRUE(before == TB_OK || before == TB_ERROR_NOT_READY,
                "event.query behind queued work returned %s", tb_status_name(before));
  }
  EXPECT_OK(v->event.synchronize(v->context, event));
  EXPECT_STATUS(v->event.query(v->context, event), TB_OK);
  EXPECT_STATUS(v->stream.query(v->context, stream), TB_OK);
  /* Re-recording on an idle stream gives a completed event again. */
  EXPECT_OK(v->event.record(v->context, event, stream));
  EXPECT_OK(v->event.synchronize(v->context, event));
  EXPECT_STATUS(v->event.query(v->context, event), TB_OK);
  outcome = TB_CHECK_PASS;
done:
  if (stream != NULL) v->stream.synchronize(v->context, stream);
  if (event != NULL) v->event.destroy(v->context, event);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (a != NULL) v->memory.device_free(v->context, 0, a);
  if (b != NULL) v->memory.device_free(v->context, 0, b);
  return outcome;
}

static tb_check_outcome check_elapsed_time(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = 16 * MIB;
  void *a = NULL, *b = NULL;
  tb_stream stream = NULL;
  tb_event e[3] = {0};
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  if (v->event.elapsed_time == NULL) SKIP("event.elapsed_time is not provided (optional)");
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &a));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &b));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  for (int i = 0; i < 3; i++)
    EXPECT_OK(v->event.create(v->context, 0, TB_EVENT_FLAG_TIMING, &e[i]));
  EXPECT_OK(v->event.record(v->context, e[0], stream));
  EXPECT_OK(enqueue_work(v, stream, a, b, size, 6));
  EXPECT_OK(v->event.record(v->context, e[1], stream));
  EXPECT_OK(enqueue_work(v, stream, a, b, size, 6));
  EXPECT_OK(v->event.record(v->context, e[2], stream));
  EXPECT_OK(v->event.synchronize(v->context, e[2]));
  {
    float t01 = -1, t12 = -1, t02 = -1, t10 = 0;
    EXPECT_OK(v->event.elapsed_time(v->context, e[0], e[1], &t01));
    EXPECT_OK(v->event.elapsed_time(v->context, e[1], e[2], &t12));
    EXPECT_OK(v->event.elapsed_time(v->context, e[0], e[2], &t02));
    EXPECT_OK(v->event.elapsed_time(v->context, e[1], e[0], &t10));
    EXPECT_TRUE(isfinite(t01) && isfinite(t12) && isfinite(t02),
                "elapsed_time gave a non-finite value");
    EXPECT_TRUE(t01 >= 0 && t12 >= 0 && t02 >= 0,
                "elapsed times between events recorded in order are negative: %g, %g, %g",
                (double)t01, (double)t12, (double)t02);
    EXPECT_TRUE(fabs((double)t02 - ((double)t01 + (double)t12)) <= 0.01 + 1e-3 * (double)t02,
                "elapsed times are inconsistent: e0->e2 is %g ms but e0->e1 + e1->e2 is %g ms",
                (double)t02, (double)t01 + (double)t12);
    EXPECT_TRUE(fabs((double)t10 + (double)t01) <= 0.01 + 1e-3 * (double)t01,
                "elapsed_time(e1, e0) is %g ms, expected about %g", (double)t10, -(double)t01);
  }
  outcome = TB_CHECK_PASS;
done:
  if (stream != NULL) v->stream.synchronize(v->context, stream);
  for (int i = 0; i < 3; i++) {
    if (e[i] != NULL) v->event.destroy(v->context, e[i]);
  }
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (a != NULL) v->memory.device_free(v->context, 0, a);
  if (b != NULL) v->memory.device_free(v->context, 0, b);
  return outcome;
}

static tb_check_outcome check_elapsed_errors(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_stream stream = NULL;
  tb_event plain = NULL, t1 = NULL, t2 = NULL, never = NULL;
  float ms = 0;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  if (v->event.elapsed_time == NULL) SKIP("event.elapsed_time is not provided (optional)");
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->event.create(v->context, 0, 0, &plain));
  EXPECT_OK(v->event.create(v->context, 0, TB_EVENT_FLAG_TIMING, &t1));
  EXPECT_OK(v->event.create(v->context, 0, TB_EVENT_FLAG_TIMING, &t2));
  EXPECT_OK(v->event.create(v->context, 0, TB_EVENT_FLAG_TIMING, &never));
  EXPECT_OK(v->event.record(v->context, plain, stream));
  EXPECT_OK(v->event.record(v->context, t1, stream));
  EXPECT_OK(v->event.record(v->context, t2, stream));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_STATUS(v->event.elapsed_time(v->context, plain, t2, &ms), TB_ERROR_NOT_SUPPORTED);
  EXPECT_STATUS(v->event.elapsed_time(v->context, t1, plain, &ms), TB_ERROR_NOT_SUPPORTED);
  EXPECT_STATUS(v->event.elapsed_time(v->context, t1, never, &ms), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(v->event.elapsed_time(v->context, never, t2, &ms), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(v->event.elapsed_time(v->context, t1, t2, NULL), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_OK(v->event.elapsed_time(v->context, t1, t2, &ms));
  outcome = TB_CHECK_PASS;
done:
  if (plain != NULL) v->event.destroy(v->context, plain);
  if (t1 != NULL) v->event.destroy(v->context, t1);
  if (t2 != NULL) v->event.destroy(v->context, t2);
  if (never != NULL) v->event.destroy(v->context, never);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  return outcome;
}

/* An event destroyed while still pending, with a stream waiting on it: nothing blocks and
 * the waiting stream still runs after the recorded work. */
static tb_check_outcome check_destroy_busy(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = 16 * MIB;
  unsigned char *in = malloc(size), *out = malloc(size);
  void *a = NULL, *b = NULL;
  tb_stream producer = NULL, consumer = NULL;
  tb_event event = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_TRUE(in != NULL && out != NULL, "host allocation failed");
  tbc_fill(in, size, 51);
  memset(out, 0, size);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &a));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &b));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &producer));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &consumer));
  EXPECT_OK(v->event.create(v->context, 0, TB_EVENT_FLAG_TIMING, &event));
  EXPECT_OK(v->memory.copy_h2d_async(v->context, producer, a, in, size));
  EXPECT_OK(enqueue_work(v, producer, a, b, size, 6)); /* ends with the data in a */
  EXPECT_OK(v->event.record(v->context, event, producer));
  EXPECT_OK(v->stream.wait_event(v->context, consumer, event));
  {
    tb_event busy = event;
    event = NULL;
    EXPECT_OK(v->event.destroy(v->context, busy));
  }
  EXPECT_OK(v->memory.copy_d2h_async(v->context, consumer, out, a, size));
  EXPECT_OK(v->stream.synchronize(v->context, consumer));
  long diff = tbc_first_difference(in, out, size);
  EXPECT_TRUE(diff < 0,
              "a wait on an event destroyed while pending did not order the work (byte %ld)", diff);
  EXPECT_OK(v->device.synchronize(v->context, 0));
  outcome = TB_CHECK_PASS;
done:
  if (producer != NULL) v->stream.synchronize(v->context, producer);
  if (event != NULL) v->event.destroy(v->context, event);
  if (producer != NULL) v->stream.destroy(v->context, producer);
  if (consumer != NULL) v->stream.destroy(v->context, consumer);
  if (a != NULL) v->memory.device_free(v->context, 0, a);
  if (b != NULL) v->memory.device_free(v->context, 0, b);
  free(in);
  free(out);
  return outcome;
}

static tb_check_outcome check_record_wrong_device(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_stream s1 = NULL;
  tb_event e0 = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count < 2) SKIP("needs two devices; the vendor reports %d", (int)count);
  EXPECT_OK(v->stream.create(v->context, 1, 0, &s1));
  EXPECT_OK(v->event.create(v->context, 0, 0, &e0));
  EXPECT_STATUS(v->event.record(v->context, e0, s1), TB_ERROR_INVALID_ARGUMENT);
  outcome = TB_CHECK_PASS;
done:
  if (e0 != NULL) v->event.destroy(v->context, e0);
  if (s1 != NULL) v->stream.destroy(v->context, s1);
  return outcome;
}

static tb_check_outcome check_invalid_handle(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_stream stream = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_STATUS(v->event.query(v->context, NULL), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(v->event.synchronize(v->context, NULL), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(v->event.destroy(v->context, NULL), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_STATUS(v->event.record(v->context, NULL, stream), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(v->stream.wait_event(v->context, stream, NULL), TB_ERROR_INVALID_ARGUMENT);
  outcome = TB_CHECK_PASS;
done:
  if (stream != NULL) v->stream.destroy(v->context, stream);
  return outcome;
}

const tb_check tbc_event_checks[] = {
    {"event", "create_destroy",
     "events are created with and without timing and destroyed; unknown flags are rejected",
     check_create_destroy},
    {"event", "unrecorded",
     "an event never recorded is complete: query is TB_OK, synchronize "
     "returns at once",
     check_unrecorded},
    {"event", "record_query",
     "query behind queued work is TB_OK or TB_ERROR_NOT_READY, and TB_OK after synchronize",
     check_record_query},
    {"event", "elapsed_time",
     "elapsed times are finite, non-negative in record order, additive and antisymmetric",
     check_elapsed_time},
    {"event", "elapsed_errors",
     "timing without TB_EVENT_FLAG_TIMING is TB_ERROR_NOT_SUPPORTED; an unrecorded event or "
     "NULL output is TB_ERROR_INVALID_ARGUMENT",
     check_elapsed_errors},
    {"event", "destroy_busy",
     "destroying a pending event that a stream waits on does not block and keeps the order",
     check_destroy_busy},
    {"event", "record_wrong_device",
     "recording an event on a stream of another device is TB_ERROR_INVALID_ARGUMENT",
     check_record_wrong_device},
    {"event", "invalid_handle", "a NULL event is rejected with TB_ERROR_INVALID_ARGUMENT",
     check_invalid_handle},
};
const size_t tbc_event_check_count = sizeof tbc_event_checks / sizeof tbc_event_checks[0];
