/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Helpers shared by the checks: messages, buffer patterns, device count.
 */
#include "support.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void vformat(tb_check_context *ctx, const char *format, va_list args) {
  vsnprintf(ctx->message, sizeof ctx->message, format, args);
}

tb_check_outcome tbc_fail(tb_check_context *ctx, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vformat(ctx, format, args);
  va_end(args);
  return TB_CHECK_FAIL;
}

tb_check_outcome tbc_skip(tb_check_context *ctx, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vformat(ctx, format, args);
  va_end(args);
  return TB_CHECK_SKIP;
}

void tbc_fail_status(tb_check_context *ctx, const char *call, tb_status got, tb_status expected) {
  const char *message = "";
  if (got != TB_OK && got != TB_ERROR_NOT_READY) {
    message = ctx->vendor->last_error(ctx->vendor->context);
    if (message == NULL) message = "(last_error returned NULL)";
  }
  tbc_fail(ctx, "%s returned %s, expected %s%s%s", call, tb_status_name(got),
           tb_status_name(expected), *message ? ": " : "", message);
}

bool tbc_has_message(tb_check_context *ctx) {
  const char *message = ctx->vendor->last_error(ctx->vendor->context);
  return message != NULL && *message != '\0';
}

int32_t tbc_device_count(tb_check_context *ctx) {
  int32_t count = -1;
  tb_status status = ctx->vendor->device.count(ctx->vendor->context, &count);
  if (status != TB_OK) {
    tbc_fail_status(ctx, "device.count(&count)", status, TB_OK);
    return -1;
  }
  if (count < 0) {
    tbc_fail(ctx, "device.count reported %d devices", (int)count);
    return -1;
  }
  return count;
}

void tbc_fill(unsigned char *buffer, size_t size, uint32_t seed) {
  uint32_t state = seed * 2654435761u + 0x9e3779b9u;
  for (size_t i = 0; i < size; i++) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    buffer[i] = (unsigned char)(state >> 24);
  }
}

long tbc_first_difference(const unsigned char *a, const unsigned char *b, size_t size) {
  if (memcmp(a, b, size) == 0) return -1;
  for (size_t i = 0; i < size; i++) {
    if (a[i] != b[i]) return (long)i;
  }
  return -1;
}
