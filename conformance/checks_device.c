/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks of tb_device_api and of the error-reporting rules every group shares.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

static tb_check_outcome check_count(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  int32_t first = tbc_device_count(ctx);
  if (first < 0) goto done;
  for (int i = 0; i < 3; i++) {
    int32_t again = -1;
    EXPECT_OK(ctx->vendor->device.count(ctx->vendor->context, &again));
    EXPECT_TRUE(again == first, "device.count answered %d, then %d", (int)first, (int)again);
  }
  EXPECT_STATUS(ctx->vendor->device.count(ctx->vendor->context, NULL), TB_ERROR_INVALID_ARGUMENT);
  if (first == 0) SKIP("the vendor reports 0 devices; device checks have nothing to run on");
  outcome = TB_CHECK_PASS;
done:
  return outcome;
}

static tb_check_outcome check_properties(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  for (int32_t d = 0; d < count; d++) {
    tb_device_properties props;
    memset(&props, 0, sizeof props);
    props.struct_size = sizeof props;
    EXPECT_OK(ctx->vendor->device.get_properties(ctx->vendor->context, d, &props));
    EXPECT_TRUE(props.struct_size == sizeof props,
                "device %d: get_properties changed struct_size from %zu to %zu", (int)d,
                sizeof props, props.struct_size);
    EXPECT_TRUE(memchr(props.name, '\0', sizeof props.name) != NULL,
                "device %d: properties.name is not NUL-terminated", (int)d);
    EXPECT_TRUE(props.name[0] != '\0', "device %d: properties.name is empty", (int)d);
    EXPECT_TRUE(props.total_memory > 0, "device %d: properties.total_memory is 0", (int)d);
    EXPECT_TRUE(props.compute_units >= 0, "device %d: properties.compute_units is %d", (int)d,
                (int)props.compute_units);
    const uint64_t known = (UINT64_C(1) << TB_DTYPE_COUNT) - 1;
    EXPECT_TRUE((props.dtypes & ~known) == 0,
                "device %d: properties.dtypes 0x%llx has bits beyond the tb_dtype values "
                "(0x%llx)",
                (int)d, (unsigned long long)props.dtypes, (unsigned long long)known);
  }
  outcome = TB_CHECK_PASS;
done:
  return outcome;
}

/* An older caller's smaller struct must not be written past its struct_size. */
static tb_check_outcome check_properties_struct_size(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  {
    const size_t old_size = TB_STRUCT_SIZE(tb_device_properties, name);
    unsigned char buffer[sizeof(tb_device_properties) + 64];
    memset(buffer, 0xA5, sizeof buffer);
    tb_device_properties *props = (tb_device_properties *)buffer;
    props->struct_size = old_size;
    EXPECT_OK(ctx->vendor->device.get_properties(ctx->vendor->context, 0, props));
    EXPECT_TRUE(props->struct_size == old_size, "get_properties changed struct_size");
    for (size_t i = old_size; i < sizeof buffer; i++) {
      EXPECT_TRUE(buffer[i] == 0xA5,
                  "get_properties wrote byte %zu of a struct whose struct_size is %zu "
                  "(an older caller's memory would be corrupted)",
                  i, old_size);
    }
    EXPECT_TRUE(memchr(props->name, '\0', sizeof props->name) != NULL && props->name[0] != '\0',
                "get_properties with a name-only struct_size did not fill name");
  }
  outcome = TB_CHECK_PASS;
done:
  return outcome;
}

static tb_check_outcome check_invalid_index(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  tb_stream stream = NULL;
  tb_event event = NULL;
  void *ptr = NULL;
  const tb_vendor_handle *v = ctx->vendor;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  const int32_t bad[] = {-1, count, count + 7, INT32_MIN};
  unsigned char host[16] = {0};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int32_t d = bad[i];
    tb_device_properties props;
    memset(&props, 0, sizeof props);
    props.struct_size = sizeof props;
    EXPECT_STATUS(v->device.get_properties(v->context, d, &props), TB_ERROR_INVALID_DEVICE);
    EXPECT_STATUS(v->device.synchronize(v->context, d), TB_ERROR_INVALID_DEVICE);
    EXPECT_STATUS(v->memory.device_malloc(v->context, d, 64, &ptr), TB_ERROR_INVALID_DEVICE);
    EXPECT_TRUE(ptr == NULL, "device_malloc on invalid device %d changed *ptr", (int)d);
    EXPECT_STATUS(v->memory.copy_h2d(v->context, d, host, host + 8, 8), TB_ERROR_INVALID_DEVICE);
    EXPECT_STATUS(v->memory.copy_d2h(v->context, d, host, host + 8, 8), TB_ERROR_INVALID_DEVICE);
    EXPECT_STATUS(v->stream.create(v->context, d, 0, &stream), TB_ERROR_INVALID_DEVICE);
    EXPECT_TRUE(stream == NULL, "stream.create on invalid device %d changed *stream", (int)d);
    EXPECT_STATUS(v->event.create(v->context, d, 0, &event), TB_ERROR_INVALID_DEVICE);
    EXPECT_TRUE(event == NULL, "event.create on invalid device %d changed *event", (int)d);
    if (v->memory.get_info != NULL) {
      size_t free_bytes = 0, total_bytes = 0;
      EXPECT_STATUS(v->memory.get_info(v->context, d, &free_bytes, &total_bytes),
                    TB_ERROR_INVALID_DEVICE);
    }
    if (v->stream.priority_range != NULL) {
      int32_t least = 0, greatest = 0;
      EXPECT_STATUS(v->stream.priority_range(v->context, d, &least, &greatest),
                    TB_ERROR_INVALID_DEVICE);
    }
    {
      char message[512];
      snprintf(message, sizeof message, "%s", v->last_error(v->context));
      char index[16];
      snprintf(index, sizeof index, "%d", (int)d);
      EXPECT_TRUE(strstr(message, index) != NULL,
                  "the message for invalid device %d does not name the index: \"%s\"", (int)d,
                  message);
    }
  }
  outcome = TB_CHECK_PASS;
done:
  /* Only reached with a handle on a vendor bug; release it on device 0 where it came from. */
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (event != NULL) v->event.destroy(v->context, event);
  return outcome;
}

static tb_check_outcome check_synchronize(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  for (int32_t d = 0; d < count; d++)
    EXPECT_OK(ctx->vendor->device.synchronize(ctx->vendor->context, d));
  outcome = TB_CHECK_PASS;
done:
  return outcome;
}

typedef struct other_thread {
  const tb_vendor_handle *vendor;
  char message[512];
} other_thread;

static void *read_last_error(void *arg) {
  other_thread *other = arg;
  snprintf(other->message, sizeof other->message, "%s",
           other->vendor->last_error(other->vendor->context));
  return NULL;
}

/* last_error is per thread, never NULL, and a success does not have to clear it. */
static tb_check_outcome check_last_error(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  EXPECT_TRUE(v->last_error(v->context) != NULL, "last_error() returned NULL");
  EXPECT_STATUS(v->device.synchronize(v->context, count + 3), TB_ERROR_INVALID_DEVICE);
  {
    char mine[512];
    snprintf(mine, sizeof mine, "%s", v->last_error(v->context));
    other_thread other = {.vendor = v, .message = ""};
    pthread_t thread;
    EXPECT_TRUE(pthread_create(&thread, NULL, read_last_error, &other) == 0,
                "could not start a thread");
    pthread_join(thread, NULL);
    EXPECT_TRUE(strcmp(other.message, mine) != 0 || *mine == '\0',
                "a fresh thread sees this thread's last error \"%s\": the message must be "
                "per thread",
                mine);
    EXPECT_TRUE(strcmp(v->last_error(v->context), mine) == 0,
                "last_error() changed after another thread read its own");
  }
  outcome = TB_CHECK_PASS;
done:
  return outcome;
}

const tb_check tbc_device_checks[] = {
    {"device", "count", "count() succeeds, is stable, and rejects a NULL output", check_count},
    {"device", "properties",
     "every device has a non-empty NUL-terminated name and non-zero total memory",
     check_properties},
    {"device", "properties_struct_size",
     "get_properties writes nothing beyond the caller's struct_size (older callers stay safe)",
     check_properties_struct_size},
    {"device", "invalid_index",
     "every call taking a device index answers TB_ERROR_INVALID_DEVICE for -1, count and "
     "beyond, with a message naming the index and outputs untouched",
     check_invalid_index},
    {"device", "synchronize", "synchronize succeeds on every device", check_synchronize},
    {"device", "last_error", "last_error is never NULL and holds a message per calling thread",
     check_last_error},
};
const size_t tbc_device_check_count = sizeof tbc_device_checks / sizeof tbc_device_checks[0];
