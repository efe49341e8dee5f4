/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks of the device-fault contract (vendor.h, "Device faults", ABI 1.2): once asynchronous
 * work fails, every later query, synchronize and copy of that device reports the failure, with
 * its message, until tb_device_api::reset; other devices are not affected.  The failure is
 * injected with tb_stream_api::inject_fault, so the checks depend on no particular kernel;
 * vendors without it are skipped.
 */
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define BYTES 4096
static const char k_message[] = "conformance: injected fault 4711";

/* Fail unless `call` reports the fault: TB_ERROR_DEVICE_FAULT with the injected message. */
#define EXPECT_FAULT(call)                                                              \
  do {                                                                                  \
    tb_status tbc_status_ = (call);                                                     \
    if (tbc_status_ != TB_ERROR_DEVICE_FAULT) {                                         \
      tbc_fail_status(ctx, #call, tbc_status_, TB_ERROR_DEVICE_FAULT);                  \
      goto done;                                                                        \
    }                                                                                   \
    const char *tbc_message_ = v->last_error(v->context);                               \
    if (tbc_message_ == NULL || strstr(tbc_message_, k_message) == NULL) {              \
      tbc_fail(ctx,                                                                     \
               "%s reported the fault with the message \"%s\", which lacks the failed " \
               "work's \"%s\"",                                                         \
               #call, tbc_message_ != NULL ? tbc_message_ : "(null)", k_message);       \
      goto done;                                                                        \
    }                                                                                   \
  } while (0)

static tb_check_outcome check_sticky(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_stream faulting = NULL, other = NULL;
  tb_event event = NULL;
  void *buffer = NULL;
  unsigned char host[BYTES], expected[BYTES];
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  if (v->stream.inject_fault == NULL) SKIP("the vendor has no stream.inject_fault (ABI 1.2)");
  EXPECT_OK(v->memory.device_malloc(v->context, 0, BYTES, &buffer));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &faulting));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &other));
  EXPECT_OK(v->event.create(v->context, 0, 0, &event));
  EXPECT_OK(v->stream.inject_fault(v->context, faulting, k_message));
  /* Reported by the first synchronize, and by every later call the contract lists. */
  EXPECT_FAULT(v->stream.synchronize(v->context, faulting));
  EXPECT_FAULT(v->stream.synchronize(v->context, faulting));
  EXPECT_FAULT(v->stream.query(v->context, faulting));
  EXPECT_FAULT(v->stream.synchronize(v->context, other));
  EXPECT_FAULT(v->stream.query(v->context, other));
  EXPECT_FAULT(v->device.synchronize(v->context, 0));
  EXPECT_OK(v->event.record(v->context, event, other));
  EXPECT_FAULT(v->event.query(v->context, event));
  EXPECT_FAULT(v->event.synchronize(v->context, event));
  /* No bytes of a faulted device reach the host, and no new work is accepted. */
  tbc_fill(host, BYTES, 7);
  memcpy(expected, host, BYTES);
  EXPECT_FAULT(v->memory.copy_d2h(v->context, 0, host, buffer, BYTES));
  EXPECT_FAULT(v->memory.copy_d2h_async(v->context, other, host, buffer, BYTES));
  EXPECT_FAULT(v->memory.copy_h2d(v->context, 0, buffer, host, BYTES));
  EXPECT_FAULT(v->memory.memset_async(v->context, other, buffer, 0, BYTES));
  EXPECT_TRUE(tbc_first_difference(host, expected, BYTES) < 0,
              "a refused copy from the faulted device wrote to the host buffer");
  /* Still reported after all of that: nothing above cleared it. */
  EXPECT_FAULT(v->stream.synchronize(v->context, faulting));
  outcome = TB_CHECK_PASS;
done:
  /* Releasing keeps working on a faulted device. */
  if (event != NULL && v->event.destroy(v->context, event) != TB_OK && outcome == TB_CHECK_PASS) {
    outcome = tbc_fail(ctx, "event.destroy failed on a faulted device");
  }
  if (faulting != NULL && v->stream.destroy(v->context, faulting) != TB_OK &&
      outcome == TB_CHECK_PASS) {
    outcome = tbc_fail(ctx, "stream.destroy failed on a faulted device");
  }
  if (other != NULL) v->stream.destroy(v->context, other);
  if (buffer != NULL && v->memory.device_free(v->context, 0, buffer) != TB_OK &&
      outcome == TB_CHECK_PASS) {
    outcome = tbc_fail(ctx, "memory.device_free failed on a faulted device");
  }
  if (v->device.reset != NULL && count > 0) v->device.reset(v->context, 0);
  return outcome;
}

static tb_check_outcome check_isolation(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_stream faulting = NULL, healthy = NULL;
  void *buffer = NULL;
  unsigned char in[BYTES], out[BYTES];
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count < 2) SKIP("needs two devices, the vendor has %d", (int)count);
  if (v->stream.inject_fault == NULL) SKIP("the vendor has no stream.inject_fault (ABI 1.2)");
  EXPECT_OK(v->stream.create(v->context, 0, 0, &faulting));
  EXPECT_OK(v->stream.create(v->context, 1, 0, &healthy));
  EXPECT_OK(v->memory.device_malloc(v->context, 1, BYTES, &buffer));
  EXPECT_OK(v->stream.inject_fault(v->context, faulting, k_message));
  EXPECT_FAULT(v->stream.synchronize(v->context, faulting));
  tbc_fill(in, BYTES, 11);
  EXPECT_OK(v->memory.copy_h2d_async(v->context, healthy, buffer, in, BYTES));
  EXPECT_OK(v->memory.copy_d2h_async(v->context, healthy, out, buffer, BYTES));
  EXPECT_OK(v->stream.synchronize(v->context, healthy));
  EXPECT_OK(v->device.synchronize(v->context, 1));
  EXPECT_TRUE(tbc_first_difference(in, out, BYTES) < 0,
              "device 1's copies returned wrong bytes while device 0 was faulted");
  outcome = TB_CHECK_PASS;
done:
  if (faulting != NULL) v->stream.destroy(v->context, faulting);
  if (healthy != NULL) v->stream.destroy(v->context, healthy);
  if (buffer != NULL) v->memory.device_free(v->context, 1, buffer);
  if (v->device.reset != NULL && count > 0) v->device.reset(v->context, 0);
  return outcome;
}

static tb_check_outcome check_reset(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_stream stream = NULL;
  tb_event event = NULL;
  void *buffer = NULL;
  unsigned char in[BYTES], out[BYTES];
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  if (v->device.reset == NULL) SKIP("the vendor has no device.reset (faults last until exit)");
  EXPECT_OK(v->device.reset(v->context, 0)); /* on a healthy device: nothing to do */
  EXPECT_STATUS(v->device.reset(v->context, count), TB_ERROR_INVALID_DEVICE);
  if (v->stream.inject_fault == NULL) SKIP("the vendor has no stream.inject_fault (ABI 1.2)");
  EXPECT_OK(v->memory.device_malloc(v->context, 0, BYTES, &buffer));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->event.create(v->context, 0, 0, &event));
  EXPECT_OK(v->stream.inject_fault(v->context, stream, k_message));
  EXPECT_FAULT(v->stream.synchronize(v->context, stream));
  EXPECT_OK(v->device.reset(v->context, 0));
  /* The same handles and memory work again. */
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_OK(v->stream.query(v->context, stream));
  EXPECT_OK(v->device.synchronize(v->context, 0));
  tbc_fill(in, BYTES, 13);
  EXPECT_OK(v->memory.copy_h2d_async(v->context, stream, buffer, in, BYTES));
  EXPECT_OK(v->event.record(v->context, event, stream));
  EXPECT_OK(v->event.synchronize(v->context, event));
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, out, buffer, BYTES));
  EXPECT_TRUE(tbc_first_difference(in, out, BYTES) < 0,
              "after reset, a copy round trip returned wrong bytes");
  outcome = TB_CHECK_PASS;
done:
  if (event != NULL) v->event.destroy(v->context, event);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (buffer != NULL) v->memory.device_free(v->context, 0, buffer);
  if (v->device.reset != NULL && count > 0) v->device.reset(v->context, 0);
  return outcome;
}

const tb_check tbc_fault_checks[] = {
    {"fault", "sticky",
     "after injected work fails, every query and synchronize of the device's streams, events "
     "and the device reports TB_ERROR_DEVICE_FAULT with the failure's message, every copy to or "
     "from it is refused, and releasing still works",
     check_sticky},
    {"fault", "isolation", "a fault of device 0 leaves device 1 working", check_isolation},
    {"fault", "reset",
     "device.reset clears a fault: the same streams, events and memory work again", check_reset},
};
const size_t tbc_fault_check_count = sizeof tbc_fault_checks / sizeof tbc_fault_checks[0];
