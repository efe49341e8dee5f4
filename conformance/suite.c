/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The registry of all checks, in group order, the function that runs one, and the slot table
 * with the counting wrappers behind tb-conformance's coverage report (both generated from
 * vendor_slots.h's lists).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <torch_backend/vendor_slots.h>

#include "support.h"

static const tb_check *const k_groups[] = {
    tbc_context_checks,    tbc_device_checks, tbc_memory_checks,       tbc_stream_checks,
    tbc_event_checks,      tbc_thread_checks, tbc_fault_checks,        tbc_kernel_checks,
    tbc_collective_checks, tbc_graph_checks,  tbc_storage_meta_checks, tbc_ipc_checks,
    tbc_program_checks};

/* Flattened once (pthread_once) from the constant group arrays into one array sized to fit;
 * read-only afterwards. */
static tb_check *g_checks;
static size_t g_count;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void flatten(void) {
  const size_t counts[] = {
      tbc_context_check_count, tbc_device_check_count,       tbc_memory_check_count,
      tbc_stream_check_count,  tbc_event_check_count,        tbc_thread_check_count,
      tbc_fault_check_count,   tbc_kernel_check_count,       tbc_collective_check_count,
      tbc_graph_check_count,   tbc_storage_meta_check_count, tbc_ipc_check_count,
      tbc_program_check_count};
  _Static_assert(sizeof counts / sizeof counts[0] == sizeof k_groups / sizeof k_groups[0],
                 "one count per check group");
  size_t total = 0;
  for (size_t g = 0; g < sizeof counts / sizeof counts[0]; g++) total += counts[g];
  g_checks = malloc(total * sizeof *g_checks);
  if (g_checks == NULL) {
    fprintf(stderr, "tb_conformance: out of memory listing %zu checks\n", total);
    abort();
  }
  size_t n = 0;
  for (size_t g = 0; g < sizeof counts / sizeof counts[0]; g++) {
    for (size_t i = 0; i < counts[g]; i++) g_checks[n++] = k_groups[g][i];
  }
  g_count = n;
}

const tb_check *tb_conformance_checks(size_t *count) {
  pthread_once(&g_once, flatten);
  if (count != NULL) *count = g_count;
  return g_checks;
}

/* ---- the slot table ---- */

#define SLOT_INFO(gt, gf, slot, required, since, ret, params, names) \
  {#gf, #slot, required, since, #ret, #params},
#define OWN_SLOT_INFO(slot, required, since, ret, params, names) \
  {"vendor", #slot, required, since, #ret, #params},
static const tb_slot_info k_slots[] = {TB_VENDOR_SLOTS(SLOT_INFO)
                                           TB_VENDOR_OWN_SLOTS(OWN_SLOT_INFO)};
#undef SLOT_INFO
#undef OWN_SLOT_INFO

#define SLOT_ID(gt, gf, slot, required, since, ret, params, names) SLOT_##gf##_##slot,
#define OWN_SLOT_ID(slot, required, since, ret, params, names) SLOT_vendor_##slot,
enum { TB_VENDOR_SLOTS(SLOT_ID) TB_VENDOR_OWN_SLOTS(OWN_SLOT_ID) SLOT_COUNT };
#undef SLOT_ID
#undef OWN_SLOT_ID

const tb_slot_info *tb_conformance_slots(size_t *count) {
  if (count != NULL) *count = SLOT_COUNT;
  return k_slots;
}

int tb_conformance_slot_present(const tb_vendor_handle *vendor, size_t index) {
#define PRESENT(gt, gf, slot, required, since, ret, params, names) \
  case SLOT_##gf##_##slot:                                         \
    return vendor->gf.slot != NULL;
#define OWN_PRESENT(slot, required, since, ret, params, names) \
  case SLOT_vendor_##slot:                                     \
    return vendor->slot != NULL;
  switch (index) {
    TB_VENDOR_SLOTS(PRESENT)
    TB_VENDOR_OWN_SLOTS(OWN_PRESENT)
    default:
      return 0;
  }
#undef PRESENT
#undef OWN_PRESENT
}

/* ---- counting wrappers: the vendor of the running check, and one counter per slot ---- */

static pthread_mutex_t g_run_mutex = PTHREAD_MUTEX_INITIALIZER;
static const tb_vendor_handle *g_counted; /* written under g_run_mutex before the check runs */
static _Atomic uint64_t g_calls[SLOT_COUNT];

/* Each wrapper counts and forwards every argument unchanged, the context included. */
#define COUNT(gt, gf, slot, required, since, ret, params, names)                      \
  static ret count_##gf##_##slot params {                                             \
    atomic_fetch_add_explicit(&g_calls[SLOT_##gf##_##slot], 1, memory_order_relaxed); \
    return g_counted->gf.slot names;                                                  \
  }
TB_VENDOR_SLOTS(COUNT)
#undef COUNT
/* The vendor's own slots, written out: finalize returns void, which ISO C may not `return`. */
static tb_status count_vendor_init(const tb_host_api *host, tb_context *ctx) {
  atomic_fetch_add_explicit(&g_calls[SLOT_vendor_init], 1, memory_order_relaxed);
  return g_counted->init(host, ctx);
}
static void count_vendor_finalize(tb_context ctx) {
  atomic_fetch_add_explicit(&g_calls[SLOT_vendor_finalize], 1, memory_order_relaxed);
  g_counted->finalize(ctx);
}
static const char *count_vendor_last_error(tb_context ctx) {
  atomic_fetch_add_explicit(&g_calls[SLOT_vendor_last_error], 1, memory_order_relaxed);
  return g_counted->last_error(ctx);
}

tb_check_outcome tb_conformance_run(const tb_check *check, tb_vendor_handle *vendor, char *message,
                                    size_t message_size, uint64_t *slot_calls) {
  tb_check_context context;
  memset(&context, 0, sizeof context);
  char error[sizeof context.message];
  if (tb_loader_init(vendor, NULL, error, sizeof error) != TB_OK) {
    if (message != NULL && message_size > 0) {
      snprintf(message, message_size, "the vendor's init failed: %s", error);
    }
    return TB_CHECK_FAIL;
  }
  if (slot_calls == NULL) {
    context.vendor = vendor;
    tb_check_outcome outcome = check->run(&context);
    if (message != NULL && message_size > 0) snprintf(message, message_size, "%s", context.message);
    return outcome;
  }
  tb_vendor_handle *counted = malloc(sizeof *counted); /* large (paths): not on the stack */
  if (counted == NULL) {
    if (message != NULL && message_size > 0) snprintf(message, message_size, "out of memory");
    return TB_CHECK_FAIL;
  }
  *counted = *vendor;
#define WRAP(gt, gf, slot, required, since, ret, params, names) \
  if (counted->gf.slot != NULL) counted->gf.slot = count_##gf##_##slot;
  TB_VENDOR_SLOTS(WRAP)
#undef WRAP
#define OWN_WRAP(slot, required, since, ret, params, names) \
  if (counted->slot != NULL) counted->slot = count_vendor_##slot;
  TB_VENDOR_OWN_SLOTS(OWN_WRAP)
#undef OWN_WRAP
  pthread_mutex_lock(&g_run_mutex);
  g_counted = vendor;
  for (size_t i = 0; i < SLOT_COUNT; i++) atomic_store(&g_calls[i], 0);
  context.vendor = counted;
  tb_check_outcome outcome = check->run(&context);
  for (size_t i = 0; i < SLOT_COUNT; i++) slot_calls[i] += atomic_load(&g_calls[i]);
  pthread_mutex_unlock(&g_run_mutex);
  free(counted);
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
