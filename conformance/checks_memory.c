/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks of tb_memory_api: allocation, copies in every direction, memset, OOM, pinned memory.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define MIB ((size_t)1 << 20)

static tb_check_outcome check_alloc_free(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  enum { N = 6 };
  const size_t sizes[N] = {1, 63, 64, 4097, MIB + 3, 16 * MIB};
  void *ptrs[N] = {0};
  int32_t device = 0;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  for (device = 0; device < count; device++) {
    for (int i = 0; i < N; i++) {
      EXPECT_OK(v->memory.device_malloc(v->context, device, sizes[i], &ptrs[i]));
      EXPECT_TRUE(ptrs[i] != NULL, "device_malloc(%d, %zu) returned NULL with TB_OK", (int)device,
                  sizes[i]);
      EXPECT_TRUE((uintptr_t)ptrs[i] % TB_MEMORY_ALIGNMENT == 0,
                  "device_malloc(%d, %zu) returned %p, not aligned to %d bytes", (int)device,
                  sizes[i], ptrs[i], TB_MEMORY_ALIGNMENT);
    }
    for (int i = 0; i < N; i++) {
      for (int j = 0; j < N; j++) {
        uintptr_t a = (uintptr_t)ptrs[i], b = (uintptr_t)ptrs[j];
        EXPECT_TRUE(i == j || a + sizes[i] <= b || b + sizes[j] <= a,
                    "device %d: allocations %p (%zu bytes) and %p (%zu bytes) overlap", (int)device,
                    ptrs[i], sizes[i], ptrs[j], sizes[j]);
      }
    }
    for (int i = 0; i < N; i++) {
      void *p = ptrs[i];
      ptrs[i] = NULL;
      EXPECT_OK(v->memory.device_free(v->context, device, p));
    }
  }
  outcome = TB_CHECK_PASS;
done:
  for (int i = 0; i < N; i++) {
    if (ptrs[i] != NULL) v->memory.device_free(v->context, device, ptrs[i]);
  }
  return outcome;
}

static tb_check_outcome check_zero_size(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  void *ptr = (void *)&outcome;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_OK(v->memory.device_malloc(v->context, 0, 0, &ptr));
  EXPECT_TRUE(ptr == NULL, "device_malloc of 0 bytes stored %p instead of NULL", ptr);
  if (v->memory.host_malloc != NULL) {
    ptr = (void *)&outcome;
    EXPECT_OK(v->memory.host_malloc(v->context, 0, &ptr));
    EXPECT_TRUE(ptr == NULL, "host_malloc of 0 bytes stored %p instead of NULL", ptr);
  }
  EXPECT_STATUS(v->memory.device_malloc(v->context, 0, 64, NULL), TB_ERROR_INVALID_ARGUMENT);
  outcome = TB_CHECK_PASS;
done:
  return outcome;
}

static tb_check_outcome check_free_null(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  for (int32_t d = 0; d < count; d++) EXPECT_OK(v->memory.device_free(v->context, d, NULL));
  if (v->memory.host_free != NULL) EXPECT_OK(v->memory.host_free(v->context, NULL));
  outcome = TB_CHECK_PASS;
done:
  return outcome;
}

/* Host -> device -> host through synchronous copies at odd sizes and odd offsets on both sides. */
/* A device that reports TB_DEVICE_HOST_ACCESS (ABI 2.1) lets the host read and write its memory
 * through the device pointers once the stream work on them is done: torch.compile then runs
 * generated C++ kernels on device tensors, and a claim that is not true corrupts their results
 * or crashes them.  Checked in both directions on every device, through an odd offset. */
static tb_check_outcome check_host_access(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = 64 * 1024 + 3;
  unsigned char *in = malloc(size), *out = malloc(size);
  void *dev = NULL;
  int32_t device = 0, claimed = 0;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_TRUE(in != NULL && out != NULL, "host allocation failed");
  for (device = 0; device < count; device++) {
    tb_device_properties props;
    memset(&props, 0, sizeof props);
    props.struct_size = sizeof props;
    EXPECT_OK(v->device.get_properties(v->context, device, &props));
    if (!(props.capabilities & TB_DEVICE_HOST_ACCESS)) continue;
    claimed++;
    EXPECT_OK(v->memory.device_malloc(v->context, device, size + 1, &dev));
    unsigned char *host_view = (unsigned char *)dev + 1;
    tbc_fill(in, size, 7u + (uint32_t)device);
    EXPECT_OK(v->memory.copy_h2d(v->context, device, host_view, in, size));
    long diff = tbc_first_difference(in, host_view, size);
    EXPECT_TRUE(diff < 0,
                "device %d reports TB_DEVICE_HOST_ACCESS, but the host reads byte %ld of what "
                "copy_h2d wrote differently through the device pointer",
                (int)device, diff);
    for (size_t i = 0; i < size; i++) host_view[i] = (unsigned char)(in[i] ^ 0x5Au);
    EXPECT_OK(v->memory.copy_d2h(v->context, device, out, host_view, size));
    for (size_t i = 0; i < size; i++) {
      EXPECT_TRUE(out[i] == (unsigned char)(in[i] ^ 0x5Au),
                  "device %d reports TB_DEVICE_HOST_ACCESS, but copy_d2h returns byte %zu "
                  "other than what the host wrote through the device pointer",
                  (int)device, i);
    }
    void *p = dev;
    dev = NULL;
    EXPECT_OK(v->memory.device_free(v->context, device, p));
  }
  if (claimed == 0) SKIP("no device reports TB_DEVICE_HOST_ACCESS");
  outcome = TB_CHECK_PASS;
done:
  if (dev != NULL) v->memory.device_free(v->context, device, dev);
  free(in);
  free(out);
  return outcome;
}

static tb_check_outcome check_copy_roundtrip(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t capacity = 2 * MIB + 64;
  unsigned char *in = malloc(capacity), *out = malloc(capacity);
  void *dev = NULL;
  int32_t device = 0;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_TRUE(in != NULL && out != NULL, "host allocation failed");
  for (device = 0; device < count; device++) {
    EXPECT_OK(v->memory.device_malloc(v->context, device, capacity, &dev));
    const size_t sizes[] = {1, 3, 7, 64, 4097, MIB + 13, 2 * MIB};
    const size_t offsets[] = {0, 1, 3, 17};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
        size_t size = sizes[s], dev_off = offsets[o], host_off = offsets[(o + 1) % 4];
        tbc_fill(in, capacity, (uint32_t)(s * 31 + o));
        memset(out, 0, capacity);
        EXPECT_OK(
            v->memory.copy_h2d(v->context, device, (char *)dev + dev_off, in + host_off, size));
        EXPECT_OK(
            v->memory.copy_d2h(v->context, device, out + host_off, (char *)dev + dev_off, size));
        long diff = tbc_first_difference(in + host_off, out + host_off, size);
        EXPECT_TRUE(diff < 0,
                    "device %d: %zu bytes copied to device offset %zu from host offset %zu and "
                    "back differ at byte %ld",
                    (int)device, size, dev_off, host_off, diff);
        EXPECT_TRUE(out[host_off + size] == 0 && (host_off == 0 || out[host_off - 1] == 0),
                    "copy_d2h of %zu bytes wrote outside its destination range", size);
      }
    }
    void *p = dev;
    dev = NULL;
    EXPECT_OK(v->memory.device_free(v->context, device, p));
  }
  outcome = TB_CHECK_PASS;
done:
  if (dev != NULL) v->memory.device_free(v->context, device, dev);
  free(in);
  free(out);
  return outcome;
}

/* Device -> device on one device and, with two or more devices, across devices. */
static tb_check_outcome check_copy_d2d(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = MIB + 5;
  unsigned char *in = malloc(size + 64), *out = malloc(size + 64);
  void *a = NULL, *b = NULL;
  int32_t dst_device = 0;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_TRUE(in != NULL && out != NULL, "host allocation failed");
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size + 64, &a));
  for (dst_device = 0; dst_device < count; dst_device++) {
    tbc_fill(in, size + 64, (uint32_t)dst_device + 100);
    memset(out, 0, size + 64);
    EXPECT_OK(v->memory.device_malloc(v->context, dst_device, size + 64, &b));
    EXPECT_OK(v->memory.copy_h2d(v->context, 0, a, in, size + 64));
    EXPECT_OK(v->memory.copy_d2d(v->context, dst_device, (char *)b + 3, 0, (char *)a + 11, size));
    EXPECT_OK(v->memory.copy_d2h(v->context, dst_device, out, (char *)b + 3, size));
    long diff = tbc_first_difference(in + 11, out, size);
    EXPECT_TRUE(diff < 0, "copy_d2d from device 0 to device %d differs at byte %ld",
                (int)dst_device, diff);
    void *p = b;
    b = NULL;
    EXPECT_OK(v->memory.device_free(v->context, dst_device, p));
  }
  outcome = TB_CHECK_PASS;
done:
  if (b != NULL) v->memory.device_free(v->context, dst_device, b);
  if (a != NULL) v->memory.device_free(v->context, 0, a);
  free(in);
  free(out);
  return outcome;
}

static tb_check_outcome check_copy_zero_size(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  tb_stream stream = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, NULL, NULL, 0));
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, NULL, NULL, 0));
  EXPECT_OK(v->memory.copy_d2d(v->context, 0, NULL, 0, NULL, 0));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->memory.copy_h2d_async(v->context, stream, NULL, NULL, 0));
  EXPECT_OK(v->memory.copy_d2h_async(v->context, stream, NULL, NULL, 0));
  EXPECT_OK(v->memory.copy_d2d_async(v->context, stream, 0, NULL, 0, NULL, 0));
  EXPECT_OK(v->memory.memset_async(v->context, stream, NULL, 0, 0));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  outcome = TB_CHECK_PASS;
done:
  if (stream != NULL) v->stream.destroy(v->context, stream);
  return outcome;
}

/* A chain of dependent asynchronous copies on one stream, large enough that an
 * implementation which reorders or overlaps them produces wrong bytes. */
static tb_check_outcome check_async_order(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = 8 * MIB + 7;
  unsigned char *first = malloc(size), *second = malloc(size), *out1 = malloc(size),
                *out2 = malloc(size);
  void *x = NULL, *y = NULL;
  tb_stream stream = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_TRUE(first && second && out1 && out2, "host allocation failed");
  tbc_fill(first, size, 1);
  tbc_fill(second, size, 2);
  memset(out1, 0, size);
  memset(out2, 0, size);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &x));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &y));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  /* x <- first; y <- x; out1 <- y; x <- second; y <- x; out2 <- y, then overwrite y's head. */
  EXPECT_OK(v->memory.copy_h2d_async(v->context, stream, x, first, size));
  EXPECT_OK(v->memory.copy_d2d_async(v->context, stream, 0, y, 0, x, size));
  EXPECT_OK(v->memory.copy_d2h_async(v->context, stream, out1, y, size));
  EXPECT_OK(v->memory.copy_h2d_async(v->context, stream, x, second, size));
  EXPECT_OK(v->memory.copy_d2d_async(v->context, stream, 0, y, 0, x, size));
  EXPECT_OK(v->memory.copy_d2h_async(v->context, stream, out2, y, size));
  EXPECT_OK(v->memory.memset_async(v->context, stream, y, 0x5A, 4096));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  long diff = tbc_first_difference(first, out1, size);
  EXPECT_TRUE(diff < 0, "first round trip differs at byte %ld: copies ran out of order", diff);
  diff = tbc_first_difference(second, out2, size);
  EXPECT_TRUE(diff < 0, "second round trip differs at byte %ld: copies ran out of order", diff);
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, out1, y, 4096 + 16));
  for (size_t i = 0; i < 4096; i++) {
    EXPECT_TRUE(out1[i] == 0x5A, "memset_async enqueued last did not win at byte %zu", i);
  }
  EXPECT_TRUE(tbc_first_difference(second + 4096, out1 + 4096, 16) < 0,
              "memset_async of 4096 bytes wrote past its range");
  outcome = TB_CHECK_PASS;
done:
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (x != NULL) v->memory.device_free(v->context, 0, x);
  if (y != NULL) v->memory.device_free(v->context, 0, y);
  free(first);
  free(second);
  free(out1);
  free(out2);
  return outcome;
}

static tb_check_outcome check_memset(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = 100003;
  unsigned char *in = malloc(size), *out = malloc(size);
  void *dev = NULL;
  tb_stream stream = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  EXPECT_TRUE(in != NULL && out != NULL, "host allocation failed");
  tbc_fill(in, size, 7);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &dev));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->memory.copy_h2d_async(v->context, stream, dev, in, size));
  EXPECT_OK(
      v->memory.memset_async(v->context, stream, (char *)dev + 13, 0x1C3, 50001)); /* byte 0xC3 */
  EXPECT_OK(v->memory.copy_d2h_async(v->context, stream, out, dev, size));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  for (size_t i = 0; i < size; i++) {
    unsigned char expected = (i >= 13 && i < 13 + 50001) ? 0xC3 : in[i];
    EXPECT_TRUE(out[i] == expected, "byte %zu is 0x%02x after memset_async, expected 0x%02x", i,
                out[i], expected);
  }
  outcome = TB_CHECK_PASS;
done:
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (dev != NULL) v->memory.device_free(v->context, 0, dev);
  free(in);
  free(out);
  return outcome;
}

static tb_check_outcome check_get_info(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  if (v->memory.get_info == NULL) SKIP("memory.get_info is not provided (optional)");
  for (int32_t d = 0; d < count; d++) {
    size_t free_bytes = 0, total_bytes = 0;
    tb_device_properties props;
    memset(&props, 0, sizeof props);
    props.struct_size = sizeof props;
    EXPECT_OK(v->memory.get_info(v->context, d, &free_bytes, &total_bytes));
    EXPECT_OK(v->device.get_properties(v->context, d, &props));
    EXPECT_TRUE(total_bytes > 0 && free_bytes <= total_bytes,
                "device %d: get_info reports %zu free of %zu total", (int)d, free_bytes,
                total_bytes);
    EXPECT_TRUE((uint64_t)total_bytes == props.total_memory,
                "device %d: get_info total %zu differs from properties.total_memory %llu", (int)d,
                total_bytes, (unsigned long long)props.total_memory);
  }
  outcome = TB_CHECK_PASS;
done:
  return outcome;
}

/* Asking for more than exists is a status, not a crash, and the vendor stays usable. */
static tb_check_outcome check_out_of_memory(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  void *sentinel = (void *)&outcome, *ptr = sentinel, *small = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  {
    tb_device_properties props;
    memset(&props, 0, sizeof props);
    props.struct_size = sizeof props;
    EXPECT_OK(v->device.get_properties(v->context, 0, &props));
    size_t too_much =
        props.total_memory > SIZE_MAX / 4 ? SIZE_MAX / 2 : (size_t)props.total_memory * 2 + 1;
    const size_t requests[] = {too_much, SIZE_MAX, SIZE_MAX - 63};
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
      ptr = sentinel;
      EXPECT_STATUS(v->memory.device_malloc(v->context, 0, requests[i], &ptr),
                    TB_ERROR_OUT_OF_MEMORY);
      EXPECT_TRUE(ptr == sentinel, "device_malloc(%zu) failed but changed *ptr", requests[i]);
    }
    if (v->memory.host_malloc != NULL) {
      ptr = sentinel;
      EXPECT_STATUS(v->memory.host_malloc(v->context, SIZE_MAX - 63, &ptr), TB_ERROR_OUT_OF_MEMORY);
      EXPECT_TRUE(ptr == sentinel, "host_malloc(SIZE_MAX - 63) failed but changed *ptr");
    }
    EXPECT_OK(v->memory.device_malloc(v->context, 0, 4096, &small));
  }
  outcome = TB_CHECK_PASS;
done:
  if (small != NULL) v->memory.device_free(v->context, 0, small);
  return outcome;
}

static tb_check_outcome check_pinned(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const size_t size = 3 * MIB + 1;
  unsigned char *pinned_in = NULL, *pinned_out = NULL, *expected = malloc(size);
  void *dev = NULL;
  tb_stream stream = NULL;
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  if (v->memory.host_malloc == NULL) SKIP("memory.host_malloc is not provided (optional)");
  EXPECT_TRUE(expected != NULL, "host allocation failed");
  EXPECT_OK(v->memory.host_malloc(v->context, size, (void **)&pinned_in));
  EXPECT_OK(v->memory.host_malloc(v->context, size, (void **)&pinned_out));
  EXPECT_TRUE(pinned_in != NULL && (uintptr_t)pinned_in % TB_MEMORY_ALIGNMENT == 0,
              "host_malloc returned %p, not a %d-byte aligned pointer", (void *)pinned_in,
              TB_MEMORY_ALIGNMENT);
  tbc_fill(expected, size, 11);
  memcpy(pinned_in, expected, size); /* pinned memory is host memory */
  memset(pinned_out, 0, size);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, size, &dev));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->memory.copy_h2d_async(v->context, stream, dev, pinned_in, size));
  EXPECT_OK(v->memory.copy_d2h_async(v->context, stream, pinned_out, dev, size));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  long diff = tbc_first_difference(expected, pinned_out, size);
  EXPECT_TRUE(diff < 0, "pinned round trip differs at byte %ld", diff);
  outcome = TB_CHECK_PASS;
done:
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (dev != NULL) v->memory.device_free(v->context, 0, dev);
  if (pinned_in != NULL) v->memory.host_free(v->context, pinned_in);
  if (pinned_out != NULL) v->memory.host_free(v->context, pinned_out);
  free(expected);
  return outcome;
}

const tb_check tbc_memory_checks[] = {
    {"memory", "alloc_free",
     "allocations on every device are aligned, distinct, non-overlapping and freeable",
     check_alloc_free},
    {"memory", "zero_size", "allocating 0 bytes succeeds and gives NULL; a NULL out is rejected",
     check_zero_size},
    {"memory", "free_null", "freeing NULL succeeds (device and pinned)", check_free_null},
    {"memory", "host_access",
     "a device reporting TB_DEVICE_HOST_ACCESS reads and writes through device pointers on the "
     "host what the copies see",
     check_host_access},
    {"memory", "copy_roundtrip",
     "host->device->host copies of odd sizes at odd offsets return the same bytes and write "
     "nothing outside their range",
     check_copy_roundtrip},
    {"memory", "copy_d2d", "device->device copies, within and across devices, are exact",
     check_copy_d2d},
    {"memory", "copy_zero_size", "copies and memsets of 0 bytes succeed, even with NULL pointers",
     check_copy_zero_size},
    {"memory", "async_order",
     "asynchronous copies and memsets on one stream complete in the order enqueued",
     check_async_order},
    {"memory", "memset", "memset_async sets exactly its byte range to (unsigned char)value",
     check_memset},
    {"memory", "get_info", "get_info reports free <= total and total == properties.total_memory",
     check_get_info},
    {"memory", "out_of_memory",
     "impossible allocations return TB_ERROR_OUT_OF_MEMORY with a message, leave *ptr alone, "
     "and the vendor stays usable",
     check_out_of_memory},
    {"memory", "pinned", "pinned host memory is aligned, host-accessible and copies both ways",
     check_pinned},
};
const size_t tbc_memory_check_count = sizeof tbc_memory_checks / sizeof tbc_memory_checks[0];
