/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks of the vendor context (vendor.h, "The vendor context: init and finalize"): init
 * accepts what a newer torch_backend passes, and a context created beside the one under test
 * works on its own and goes away with finalize without disturbing the other.  Every other check
 * passes the handle's context to every call.
 */
#include <stdio.h>
#include <string.h>

#include "support.h"

/* A tb_host_api as a torch_backend of a later minor would pass it: larger, with fields this
 * vendor does not know. */
typedef struct future_host {
  tb_host_api base;
  uint64_t unknown[4];
} future_host;

/* Creates a second context with a host from a later minor; SKIPs when the vendor has no init or
 * runs one context per process (TB_ERROR_UNAVAILABLE, as vendor.h allows). */
#define SECOND_CONTEXT(v, out)                                                                 \
  do {                                                                                         \
    if ((v)->init == NULL)                                                                     \
      SKIP("the vendor has no init: it has one context (NULL, or the ABI 1.x adapter's)");     \
    future_host host;                                                                          \
    memset(&host, 0xA5, sizeof host);                                                          \
    host.base.struct_size = sizeof host;                                                       \
    host.base.abi_major = TB_ABI_VERSION_MAJOR;                                                \
    host.base.abi_minor = TB_ABI_VERSION_MINOR + 1;                                            \
    host.base.torch_version = "conformance";                                                   \
    tb_status init_status_ = (v)->init(&host.base, &(out));                                    \
    if (init_status_ == TB_ERROR_UNAVAILABLE) {                                                \
      SKIP(                                                                                    \
          "the vendor runs one context per process (a second init gave TB_ERROR_UNAVAILABLE: " \
          "%s)",                                                                               \
          (v)->last_error(NULL));                                                              \
    }                                                                                          \
    if (init_status_ != TB_OK) {                                                               \
      tbc_fail(ctx,                                                                            \
               "init with a tb_host_api of ABI %u.%u (struct_size %zu) returned %s, expected " \
               "TB_OK: %s",                                                                    \
               host.base.abi_major, host.base.abi_minor, sizeof host,                          \
               tb_status_name(init_status_), (v)->last_error(NULL));                           \
      goto done;                                                                               \
    }                                                                                          \
    created = 1;                                                                               \
  } while (0)

/* A round trip of `size` bytes through device 0 with context `c`: malloc, h2d, d2h, free. */
static tb_check_outcome round_trip(tb_check_context *ctx, tb_context c, const char *which) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  unsigned char in[256], out[256];
  void *p = NULL;
  tbc_fill(in, sizeof in, 7);
  memset(out, 0, sizeof out);
  tb_status status = v->memory.device_malloc(c, 0, sizeof in, &p);
  if (status != TB_OK) {
    tbc_fail(ctx, "%s: memory.device_malloc returned %s: %s", which, tb_status_name(status),
             v->last_error(c));
    goto done;
  }
  status = v->memory.copy_h2d(c, 0, p, in, sizeof in);
  if (status == TB_OK) status = v->memory.copy_d2h(c, 0, out, p, sizeof out);
  if (status != TB_OK) {
    tbc_fail(ctx, "%s: a copy returned %s: %s", which, tb_status_name(status), v->last_error(c));
    goto done;
  }
  EXPECT_TRUE(memcmp(in, out, sizeof in) == 0, "%s: the bytes copied back differ", which);
  outcome = TB_CHECK_PASS;
done:
  if (p != NULL) v->memory.device_free(c, 0, p);
  return outcome;
}

static tb_check_outcome check_future_host(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_context second = NULL;
  int created = 0;
  SECOND_CONTEXT(v, second);
  {
    int32_t count = -1;
    EXPECT_OK(v->device.count(second, &count));
    EXPECT_TRUE(v->last_error(second) != NULL, "last_error(ctx) returned NULL");
    if (count == 0) SKIP("no devices");
    if (round_trip(ctx, second, "the new context") != TB_CHECK_PASS) goto done;
  }
  outcome = TB_CHECK_PASS;
done:
  if (created && v->finalize != NULL) v->finalize(second);
  return outcome;
}

/* Work on a second context, then its finalize, leave the first context's memory and streams
 * intact. */
static tb_check_outcome check_independent(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_context second = NULL;
  int created = 0;
  void *mine = NULL;
  tb_stream stream = NULL;
  unsigned char in[512], out[512];
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  tbc_fill(in, sizeof in, 11);
  memset(out, 0, sizeof out);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, sizeof in, &mine));
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, mine, in, sizeof in));
  SECOND_CONTEXT(v, second);
  {
    void *theirs = NULL;
    tb_stream their_stream = NULL;
    tb_status status = v->memory.device_malloc(second, 0, 4096, &theirs);
    if (status == TB_OK) status = v->stream.create(second, 0, 0, &their_stream);
    if (status == TB_OK) status = v->memory.memset_async(second, their_stream, theirs, 0x5A, 4096);
    if (status == TB_OK) status = v->stream.synchronize(second, their_stream);
    if (status != TB_OK) {
      tbc_fail(ctx, "work on a second context failed with %s: %s", tb_status_name(status),
               v->last_error(second));
    }
    if (their_stream != NULL) v->stream.destroy(second, their_stream);
    if (theirs != NULL) v->memory.device_free(second, 0, theirs);
    if (status != TB_OK) goto done;
    if (round_trip(ctx, second, "the second context") != TB_CHECK_PASS) goto done;
  }
  if (v->finalize != NULL) v->finalize(second);
  created = 0;
  /* The first context still has its memory and makes streams. */
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->memory.copy_d2h_async(v->context, stream, out, mine, sizeof out));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_TRUE(memcmp(in, out, sizeof in) == 0,
              "memory of the context under test changed while a second context came and went");
  outcome = TB_CHECK_PASS;
done:
  if (created && v->finalize != NULL) v->finalize(second);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (mine != NULL) v->memory.device_free(v->context, 0, mine);
  return outcome;
}

const tb_check tbc_context_checks[] = {
    {"context", "future_host",
     "init accepts a tb_host_api from a later minor; its context works; finalize releases it",
     check_future_host},
    {"context", "independent",
     "a second context works beside the first, and its finalize leaves the first intact",
     check_independent},
};
const size_t tbc_context_check_count = sizeof tbc_context_checks / sizeof tbc_context_checks[0];
