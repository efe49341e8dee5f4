/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks of a vendor's per-storage metadata (vendor.h, ABI 2.4, TB_EXTENSION_STORAGE_META,
 * @ref tb_storage_meta): a value set on a storage is listed for it and for no other, a second
 * set of a name replaces its value, release forgets them (and is harmless on a storage without
 * values), get reports the count beyond its capacity, and set refuses a name outside the
 * vendor's list and memory that is not the device's.  Skipped when the vendor has no such
 * extension.  The storages are device_malloc allocations of device 0.
 */
#include <stdio.h>
#include <string.h>

#include "support.h"

#define BYTES ((size_t)4096)

/* Values a vendor may take for its first name: the first that set accepts is used. */
static const int64_t k_candidates[] = {2, 0, 1, 3, 29, 7};

#define FIND_META()                                                                               \
  do {                                                                                            \
    char error_[512];                                                                             \
    mx = tb_loader_storage_meta(ctx->vendor, error_, sizeof error_);                              \
    if (mx == NULL) {                                                                             \
      if (error_[0] != '\0') return tbc_fail(ctx, "%s", error_);                                  \
      return tbc_skip(ctx,                                                                        \
                      "the vendor has no storage metadata extension (TB_EXTENSION_STORAGE_META, " \
                      "ABI 2.4)");                                                                \
    }                                                                                             \
    int32_t devices_ = tbc_device_count(ctx);                                                     \
    if (devices_ < 0) return TB_CHECK_FAIL;                                                       \
    if (devices_ == 0) return tbc_skip(ctx, "no devices");                                        \
  } while (0)

static const char *first_name(const tb_storage_meta_extension *mx) {
  return mx->names != NULL && mx->names[0] != NULL ? mx->names[0] : "tb_conformance";
}

/* Sets the first candidate value `mx` accepts for `name`, skipping `other` (-1: none); returns
 * whether one was accepted, in *value. */
static bool set_some_value(const tb_vendor_handle *v, const tb_storage_meta_extension *mx,
                           void *data, const char *name, int64_t other, int64_t *value) {
  for (size_t i = 0; i < sizeof k_candidates / sizeof k_candidates[0]; i++) {
    if (k_candidates[i] == other) continue;
    if (mx->set(v->context, 0, data, BYTES, name, k_candidates[i]) == TB_OK) {
      *value = k_candidates[i];
      return true;
    }
  }
  return false;
}

/* Fails unless `data` has exactly the values (name, value) given (count 0 or 1). */
static bool expect_values(tb_check_context *ctx, const tb_storage_meta_extension *mx, void *data,
                          int32_t expected, const char *name, int64_t value) {
  const tb_vendor_handle *v = ctx->vendor;
  const char *names[4] = {NULL, NULL, NULL, NULL};
  int64_t values[4] = {0, 0, 0, 0};
  int32_t count = -1;
  tb_status status = mx->get(v->context, 0, data, names, values, 4, &count);
  if (status != TB_OK) {
    tbc_fail_status(ctx, "storage_meta.get", status, TB_OK);
    return false;
  }
  if (count != expected) {
    tbc_fail(ctx, "storage_meta.get of %p reported %d values, expected %d", data, (int)count,
             (int)expected);
    return false;
  }
  if (expected == 1 && (names[0] == NULL || strcmp(names[0], name) != 0 || values[0] != value)) {
    tbc_fail(ctx, "storage_meta.get of %p gave %s=%lld, expected %s=%lld", data,
             names[0] == NULL ? "(null)" : names[0], (long long)values[0], name, (long long)value);
    return false;
  }
  return true;
}

static tb_check_outcome check_round_trip(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_storage_meta_extension *mx = NULL;
  void *a = NULL, *b = NULL;
  FIND_META();
  const char *name = first_name(mx);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, BYTES, &a));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, BYTES, &b));
  if (!expect_values(ctx, mx, a, 0, name, 0)) goto done;
  int64_t value = 0, second = 0;
  EXPECT_TRUE(set_some_value(v, mx, a, name, -1, &value),
              "storage_meta.set refused every value tried for '%s' on a fresh allocation", name);
  if (!expect_values(ctx, mx, a, 1, name, value)) goto done;
  if (!expect_values(ctx, mx, b, 0, name, 0)) goto done;
  /* A second set of the name replaces the value (or sets the same one again). */
  if (!set_some_value(v, mx, a, name, value, &second)) second = value;
  if (second == value) EXPECT_OK(mx->set(v->context, 0, a, BYTES, name, value));
  if (!expect_values(ctx, mx, a, 1, name, second)) goto done;
  /* get with no room still counts. */
  {
    int32_t count = -1;
    EXPECT_OK(mx->get(v->context, 0, a, NULL, NULL, 0, &count));
    EXPECT_TRUE(count == 1, "storage_meta.get with capacity 0 reported %d values, expected 1",
                (int)count);
  }
  EXPECT_OK(mx->release(v->context, 0, a));
  if (!expect_values(ctx, mx, a, 0, name, 0)) goto done;
  EXPECT_OK(mx->release(v->context, 0, b)); /* a storage without values */
  outcome = TB_CHECK_PASS;
done:
  if (a != NULL) v->memory.device_free(v->context, 0, a);
  if (b != NULL) v->memory.device_free(v->context, 0, b);
  return outcome;
}

static tb_check_outcome check_refusals(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_storage_meta_extension *mx = NULL;
  void *a = NULL;
  unsigned char host[BYTES];
  FIND_META();
  const char *name = first_name(mx);
  int64_t value = 0;
  EXPECT_OK(v->memory.device_malloc(v->context, 0, BYTES, &a));
  EXPECT_TRUE(set_some_value(v, mx, a, name, -1, &value),
              "storage_meta.set refused every value tried for '%s' on a fresh allocation", name);
  EXPECT_OK(mx->release(v->context, 0, a));
  if (mx->names != NULL) {
    EXPECT_STATUS(mx->set(v->context, 0, a, BYTES, "tb_conformance_unknown", value),
                  TB_ERROR_INVALID_ARGUMENT);
  }
  EXPECT_STATUS(mx->set(v->context, 0, host, BYTES, name, value), TB_ERROR_INVALID_ARGUMENT);
  if (!expect_values(ctx, mx, a, 0, name, 0)) goto done;
  outcome = TB_CHECK_PASS;
done:
  if (a != NULL) {
    mx->release(v->context, 0, a);
    v->memory.device_free(v->context, 0, a);
  }
  return outcome;
}

const tb_check tbc_storage_meta_checks[] = {
    {"storage_meta", "round_trip",
     "a value set on a storage is listed for it and no other, a second set replaces it, get "
     "with capacity 0 counts, release forgets the values and is harmless without any",
     check_round_trip},
    {"storage_meta", "refusals",
     "set refuses a name outside the vendor's list and memory that is not the device's with "
     "TB_ERROR_INVALID_ARGUMENT and a message",
     check_refusals},
};
const size_t tbc_storage_meta_check_count =
    sizeof tbc_storage_meta_checks / sizeof tbc_storage_meta_checks[0];
