/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The registry of all checks, in group order, and the function that runs one.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

#define TBC_MAX_CHECKS 128

static const tb_check *const k_groups[] = {tbc_device_checks, tbc_memory_checks, tbc_stream_checks,
                                           tbc_event_checks,  tbc_thread_checks, tbc_fault_checks,
                                           tbc_kernel_checks};

/* Flattened once (pthread_once) from the constant group arrays; read-only afterwards. */
static tb_check g_checks[TBC_MAX_CHECKS];
static size_t g_count;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void flatten(void) {
  const size_t counts[] = {tbc_device_check_count, tbc_memory_check_count, tbc_stream_check_count,
                           tbc_event_check_count,  tbc_thread_check_count, tbc_fault_check_count,
                           tbc_kernel_check_count};
  size_t n = 0;
  for (size_t g = 0; g < sizeof counts / sizeof counts[0]; g++) {
    for (size_t i = 0; i < counts[g] && n < TBC_MAX_CHECKS; i++) g_checks[n++] = k_groups[g][i];
  }
  g_count = n;
}

const tb_check *tb_conformance_checks(size_t *count) {
  pthread_once(&g_once, flatten);
  if (count != NULL) *count = g_count;
  return g_checks;
}

tb_check_outcome tb_conformance_run(const tb_check *check, const tb_vendor_handle *vendor,
                                    char *message, size_t message_size) {
  tb_check_context context;
  memset(&context, 0, sizeof context);
  context.vendor = vendor;
  tb_check_outcome outcome = check->run(&context);
  if (message != NULL && message_size > 0) snprintf(message, message_size, "%s", context.message);
  return outcome;
}

const char *tb_check_outcome_name(tb_check_outcome outcome) {
  switch (outcome) {
    case TB_CHECK_PASS:
      return "pass";
    case TB_CHECK_FAIL:
      return "FAIL";
    case TB_CHECK_SKIP:
      return "skip";
  }
  return "?";
}
