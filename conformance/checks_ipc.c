/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks of a vendor's device memory shared between processes (vendor.h, ABI 2.5,
 * TB_EXTENSION_IPC, @ref tb_ipc), in one process as vendor.h describes: an allocation is
 * exported and its handle imported on the same device, and the two addresses must show the
 * same bytes both ways -- at the start and at an offset inside -- while closing the import
 * leaves the exported allocation intact.  export_memory refuses an address inside an
 * allocation, import_memory a handle it cannot read, close_memory an address that is no
 * (longer an) import.  Skipped when the vendor has no such extension.  Allocations are
 * device_malloc's, on device 0, of an odd size; the bytes move with the synchronous copies.
 *
 * Whether an import leaks is not checked: no check compares memory usage before and after,
 * and a vendor's get_info may move with its own caching.
 */
#define _POSIX_C_SOURCE 200809L /* close */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

/* An odd size, not a multiple of any page: the import must cover the allocation's last bytes. */
#define BYTES ((size_t)(1024 * 1024 + 768))

#define FIND_IPC()                                                                 \
  do {                                                                             \
    char error_[512];                                                              \
    ipc = tb_loader_ipc(ctx->vendor, error_, sizeof error_);                       \
    if (ipc == NULL) {                                                             \
      if (error_[0] != '\0') return tbc_fail(ctx, "%s", error_);                   \
      return tbc_skip(ctx,                                                         \
                      "the vendor has no device memory sharing between processes " \
                      "(TB_EXTENSION_IPC, ABI 2.5)");                              \
    }                                                                              \
    int32_t devices_ = tbc_device_count(ctx);                                      \
    if (devices_ < 0) return TB_CHECK_FAIL;                                        \
    if (devices_ == 0) return tbc_skip(ctx, "no devices");                         \
  } while (0)

/* A handle that names nothing: its descriptor -1, so closing it is a no-op. */
static tb_ipc_handle no_handle(void) {
  tb_ipc_handle handle;
  memset(&handle, 0, sizeof handle);
  handle.fd = -1;
  return handle;
}

/* Closes the handle's descriptor, which export_memory gave to the caller (vendor.h). */
static void close_handle(tb_ipc_handle *handle) {
  if (handle->fd >= 0) close(handle->fd);
  handle->fd = -1;
}

/* Fails unless the `size` device bytes at `ptr` equal `expected`; `what` names them. */
static bool expect_bytes(tb_check_context *ctx, const void *ptr, const unsigned char *expected,
                         unsigned char *scratch, size_t size, const char *what) {
  const tb_vendor_handle *v = ctx->vendor;
  memset(scratch, 0, size);
  tb_status status = v->memory.copy_d2h(v->context, 0, scratch, ptr, size);
  if (status != TB_OK) {
    char call[160];
    snprintf(call, sizeof call, "memory.copy_d2h of %zu bytes from %s", size, what);
    tbc_fail_status(ctx, call, status, TB_OK);
    return false;
  }
  long at = tbc_first_difference(scratch, expected, size);
  if (at >= 0) {
    tbc_fail(ctx, "%s: byte %ld of %zu is 0x%02x, expected 0x%02x", what, at, size, scratch[at],
             expected[at]);
    return false;
  }
  return true;
}

static tb_check_outcome check_round_trip(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_ipc_extension *ipc = NULL;
  void *a = NULL, *imported = NULL;
  tb_ipc_handle handle = no_handle();
  unsigned char *first = NULL, *second = NULL, *scratch = NULL;
  FIND_IPC();
  first = malloc(BYTES);
  second = malloc(BYTES);
  scratch = malloc(BYTES);
  EXPECT_TRUE(first != NULL && second != NULL && scratch != NULL,
              "out of host memory for three buffers of %zu bytes", BYTES);
  tbc_fill(first, BYTES, 0x1bc);
  tbc_fill(second, BYTES, 0x2bc);

  EXPECT_OK(v->memory.device_malloc(v->context, 0, BYTES, &a));
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, a, first, BYTES));
  EXPECT_OK(ipc->export_memory(v->context, 0, a, &handle));
  EXPECT_TRUE(handle.size >= BYTES,
              "export_memory of an allocation of %zu bytes gave a handle of %llu bytes", BYTES,
              (unsigned long long)handle.size);
  EXPECT_OK(ipc->import_memory(v->context, 0, &handle, &imported));
  EXPECT_TRUE(imported != NULL, "import_memory returned TB_OK and a NULL pointer");
  /* The descriptor stays the caller's after import_memory (vendor.h): the import must outlive
   * it, as it does in a process that closes what it received. */
  close_handle(&handle);

  /* The import shows what was written through the allocation ... */
  if (!expect_bytes(ctx, imported, first, scratch, BYTES,
                    "the import (import_memory's pointer), after copy_h2d to the allocation")) {
    goto done;
  }
  /* ... and the allocation what is written through the import. */
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, imported, second, BYTES));
  if (!expect_bytes(ctx, a, second, scratch, BYTES,
                    "the exported allocation, after copy_h2d to its import")) {
    goto done;
  }
  EXPECT_OK(ipc->close_memory(v->context, 0, imported));
  imported = NULL;
  if (!expect_bytes(ctx, a, second, scratch, BYTES,
                    "the exported allocation, after close_memory of its import")) {
    goto done;
  }
  /* The allocation is still the device's to write. */
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, a, first, BYTES));
  if (!expect_bytes(ctx, a, first, scratch, BYTES,
                    "the exported allocation, written after close_memory of its import")) {
    goto done;
  }
  outcome = TB_CHECK_PASS;
done:
  if (imported != NULL) ipc->close_memory(v->context, 0, imported);
  close_handle(&handle);
  if (a != NULL) v->memory.device_free(v->context, 0, a);
  free(first);
  free(second);
  free(scratch);
  return outcome;
}

static tb_check_outcome check_offset(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_ipc_extension *ipc = NULL;
  void *a = NULL, *imported = NULL;
  tb_ipc_handle handle = no_handle();
  unsigned char *pattern = NULL;
  unsigned char in[64], out[64];
  /* Inside the allocation at odd places: past the first page, and its very last bytes. */
  const size_t offsets[] = {BYTES / 2 + 13, BYTES - sizeof in};
  FIND_IPC();
  pattern = malloc(BYTES);
  EXPECT_TRUE(pattern != NULL, "out of host memory for a buffer of %zu bytes", BYTES);
  tbc_fill(pattern, BYTES, 0x3bc);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, BYTES, &a));
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, a, pattern, BYTES));
  EXPECT_OK(ipc->export_memory(v->context, 0, a, &handle));
  EXPECT_OK(ipc->import_memory(v->context, 0, &handle, &imported));
  for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
    size_t k = offsets[i];
    char what[160];
    snprintf(what, sizeof what, "the import + %zu (of an allocation of %zu bytes)", k, BYTES);
    if (!expect_bytes(ctx, (char *)imported + k, pattern + k, out, sizeof in, what)) goto done;
    tbc_fill(in, sizeof in, (uint32_t)(0x4bc + i));
    EXPECT_OK(v->memory.copy_h2d(v->context, 0, (char *)imported + k, in, sizeof in));
    snprintf(what, sizeof what, "the exported allocation + %zu, after copy_h2d to the import + %zu",
             k, k);
    if (!expect_bytes(ctx, (char *)a + k, in, out, sizeof in, what)) goto done;
  }
  outcome = TB_CHECK_PASS;
done:
  if (imported != NULL) ipc->close_memory(v->context, 0, imported);
  close_handle(&handle);
  if (a != NULL) v->memory.device_free(v->context, 0, a);
  free(pattern);
  return outcome;
}

static tb_check_outcome check_refusals(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_ipc_extension *ipc = NULL;
  void *a = NULL, *imported = NULL, *refused = NULL, *closed = NULL;
  tb_ipc_handle handle = no_handle(), inside = no_handle(), empty = no_handle();
  FIND_IPC();
  EXPECT_OK(v->memory.device_malloc(v->context, 0, BYTES, &a));
  /* Not the start of an allocation. */
  EXPECT_STATUS(ipc->export_memory(v->context, 0, (char *)a + 256, &inside),
                TB_ERROR_INVALID_ARGUMENT);
  /* A handle of zeros names nothing. */
  EXPECT_STATUS(ipc->import_memory(v->context, 0, &empty, &refused), TB_ERROR_INVALID_ARGUMENT);
  /* device_malloc's memory is no import. */
  EXPECT_STATUS(ipc->close_memory(v->context, 0, a), TB_ERROR_INVALID_ARGUMENT);
  /* Nor is an import once closed. */
  EXPECT_OK(ipc->export_memory(v->context, 0, a, &handle));
  EXPECT_OK(ipc->import_memory(v->context, 0, &handle, &imported));
  closed = imported;
  EXPECT_OK(ipc->close_memory(v->context, 0, imported));
  imported = NULL;
  EXPECT_STATUS(ipc->close_memory(v->context, 0, closed), TB_ERROR_INVALID_ARGUMENT);
  outcome = TB_CHECK_PASS;
done:
  if (imported != NULL) ipc->close_memory(v->context, 0, imported);
  if (refused != NULL) ipc->close_memory(v->context, 0, refused);
  close_handle(&inside);
  close_handle(&handle);
  if (a != NULL) v->memory.device_free(v->context, 0, a);
  return outcome;
}

const tb_check tbc_ipc_checks[] = {
    {"ipc", "round_trip",
     "an exported allocation imported in the same process shows the same bytes both ways, "
     "after its handle's descriptor is closed, and close_memory leaves the allocation intact",
     check_round_trip},
    {"ipc", "offset",
     "an import plus an offset inside the allocation reaches the allocation's bytes at that "
     "offset, its last bytes included",
     check_offset},
    {"ipc", "refusals",
     "export_memory of an address inside an allocation, import_memory of a handle of zeros and "
     "close_memory of an address that is no import (or closed already) return "
     "TB_ERROR_INVALID_ARGUMENT and a message",
     check_refusals},
};
const size_t tbc_ipc_check_count = sizeof tbc_ipc_checks / sizeof tbc_ipc_checks[0];
