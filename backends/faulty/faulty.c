/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * faulty: a shim vendor that wraps another vendor and makes a chosen call fail, in the spirit
 * of SQLite's test VFS shims.  It is how torch_backend tests every error path above the ABI,
 * and a vendor can use it to see how its failures surface in PyTorch.
 *
 * Configuration (read when the entry point is first called):
 *   TORCH_BACKEND_FAULTY_VENDOR  the wrapped vendor, a bundled name or a path (default "fake")
 *   TORCH_BACKEND_FAULTY_CALL    the call to fail, as "group.function" (for example
 *                                "memory.device_malloc"), "kernel.<operator>" for one of the
 *                                wrapped vendor's kernels ("kernel.mm.out"), or "kernel" for
 *                                any kernel; unset: forward everything
 *   TORCH_BACKEND_FAULTY_AFTER   let this many calls succeed first (default 0)
 *   TORCH_BACKEND_FAULTY_TIMES   fail this many times, then succeed again (default: forever)
 *   TORCH_BACKEND_FAULTY_STATUS  the status to return (default TB_ERROR_INTERNAL)
 *   TORCH_BACKEND_FAULTY_FORGET_FAULTS  1: break the device-fault contract the way a careless
 *                                vendor would, reporting TB_ERROR_DEVICE_FAULT once and then
 *                                answering TB_OK as if the fault had cleared (the conformance
 *                                suite must catch this)
 *
 * Tests that inject many faults in one process change the configuration at run time with
 * tb_faulty_configure(), read how often each call ran with tb_faulty_counts() and how many
 * failures were injected with tb_faulty_fired() (exported; load them with dlsym or ctypes from
 * the same library).
 *
 * The shim takes the wrapped vendor's device type, so PyTorch code written for that device runs
 * unchanged.  Global state: the loaded vendor and table are written once under pthread_once;
 * the injection settings are guarded by a reader-writer lock (tests change them while the
 * device's threads call in); counters are atomic; the injected-error flag is thread-local.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <torch_backend/loader.h>

/* Every slot of the table: X(group, function, parameters, arguments). */
#define FAULTY_SLOTS(X)                                                                            \
  X(device, count, (int32_t * count), (count))                                                     \
  X(device, get_properties, (int32_t d, tb_device_properties * p), (d, p))                         \
  X(device, synchronize, (int32_t d), (d))                                                         \
  X(device, reset, (int32_t d), (d))                                                               \
  X(memory, device_malloc, (int32_t d, size_t n, void **p), (d, n, p))                             \
  X(memory, device_free, (int32_t d, void *p), (d, p))                                             \
  X(memory, host_malloc, (size_t n, void **p), (n, p))                                             \
  X(memory, host_free, (void *p), (p))                                                             \
  X(memory, copy_h2d, (int32_t d, void *dst, const void *src, size_t n), (d, dst, src, n))         \
  X(memory, copy_d2h, (int32_t d, void *dst, const void *src, size_t n), (d, dst, src, n))         \
  X(memory, copy_d2d, (int32_t dd, void *dst, int32_t sd, const void *src, size_t n),              \
    (dd, dst, sd, src, n))                                                                         \
  X(memory, copy_h2d_async, (tb_stream s, void *dst, const void *src, size_t n), (s, dst, src, n)) \
  X(memory, copy_d2h_async, (tb_stream s, void *dst, const void *src, size_t n), (s, dst, src, n)) \
  X(memory, copy_d2d_async,                                                                        \
    (tb_stream s, int32_t dd, void *dst, int32_t sd, const void *src, size_t n),                   \
    (s, dd, dst, sd, src, n))                                                                      \
  X(memory, memset_async, (tb_stream s, void *p, int v, size_t n), (s, p, v, n))                   \
  X(memory, get_info, (int32_t d, size_t * f, size_t * t), (d, f, t))                              \
  X(stream, create, (int32_t d, int32_t prio, tb_stream * s), (d, prio, s))                        \
  X(stream, destroy, (tb_stream s), (s))                                                           \
  X(stream, query, (tb_stream s), (s))                                                             \
  X(stream, synchronize, (tb_stream s), (s))                                                       \
  X(stream, wait_event, (tb_stream s, tb_event e), (s, e))                                         \
  X(stream, priority_range, (int32_t d, int32_t * l, int32_t * g), (d, l, g))                      \
  X(stream, inject_fault, (tb_stream s, const char *message), (s, message))                        \
  X(event, create, (int32_t d, uint32_t flags, tb_event * e), (d, flags, e))                       \
  X(event, destroy, (tb_event e), (e))                                                             \
  X(event, record, (tb_event e, tb_stream s), (e, s))                                              \
  X(event, query, (tb_event e), (e))                                                               \
  X(event, synchronize, (tb_event e), (e))                                                         \
  X(event, elapsed_time, (tb_event a, tb_event b, float *ms), (a, b, ms))

#define SLOT_ID(group, fn, params, args) SLOT_##group##_##fn,
enum { FAULTY_SLOTS(SLOT_ID) SLOT_COUNT };
#undef SLOT_ID

#define SLOT_NAME(group, fn, params, args) #group "." #fn,
static const char *const k_slot_names[SLOT_COUNT] = {FAULTY_SLOTS(SLOT_NAME)};
#undef SLOT_NAME

/* Kernels are forwarded through one trampoline each; a vendor with more is refused. */
#define FAULTY_MAX_KERNELS 600

static struct {
  tb_vendor_handle *wrapped;
  char error[4096];  /* why the wrapped vendor could not be loaded */
  int forget_faults; /* report a device fault once, then pretend it cleared */
  char name[192];
} g_config;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* What to inject, changed by tb_faulty_configure while other threads call in. */
static pthread_rwlock_t g_rule_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct {
  char call[128];   /* "group.function", "kernel.<op>", "kernel", or "" */
  long after;       /* successful calls before failing */
  long times;       /* failures to inject; < 0: unlimited */
  tb_status status; /* status to inject */
} g_rule;
static _Atomic long g_matched;  /* calls of the configured function since configured */
static _Atomic long g_injected; /* matched calls past `after` since configured */
static _Atomic long g_fired;    /* failures actually injected since configured */

static _Atomic long g_slot_calls[SLOT_COUNT];
static _Atomic long g_kernel_calls[FAULTY_MAX_KERNELS];
static _Atomic int g_fault_reported; /* forget_faults: a device fault was reported once */

static _Thread_local int t_injected; /* the calling thread's last failure was ours */
static _Thread_local char t_message[256];

static long env_long(const char *name, long fallback) {
  const char *value = getenv(name);
  if (value == NULL || *value == '\0') return fallback;
  char *end = NULL;
  long parsed = strtol(value, &end, 10);
  return *end == '\0' ? parsed : fallback;
}

static tb_status parse_status(const char *name) {
  static const tb_status all[] = {TB_ERROR_INVALID_ARGUMENT, TB_ERROR_INVALID_DEVICE,
                                  TB_ERROR_OUT_OF_MEMORY,    TB_ERROR_NOT_READY,
                                  TB_ERROR_NOT_SUPPORTED,    TB_ERROR_INTERNAL,
                                  TB_ERROR_UNAVAILABLE,      TB_ERROR_DEVICE_FAULT};
  for (size_t i = 0; name != NULL && i < sizeof all / sizeof all[0]; i++) {
    if (strcmp(name, tb_status_name(all[i])) == 0) return all[i];
  }
  return TB_ERROR_INTERNAL;
}

static void set_rule(const char *call, long after, long times, tb_status status) {
  pthread_rwlock_wrlock(&g_rule_lock);
  snprintf(g_rule.call, sizeof g_rule.call, "%s", call != NULL ? call : "");
  g_rule.after = after;
  g_rule.times = times;
  g_rule.status = status;
  atomic_store(&g_matched, 0);
  atomic_store(&g_injected, 0);
  atomic_store(&g_fired, 0);
  pthread_rwlock_unlock(&g_rule_lock);
}

static void configure(void) {
  const char *wrapped = getenv("TORCH_BACKEND_FAULTY_VENDOR");
  if (wrapped == NULL || *wrapped == '\0') wrapped = "fake";
  if (strcmp(wrapped, "faulty") == 0) {
    snprintf(g_config.error, sizeof g_config.error, "faulty cannot wrap itself");
  } else if (tb_loader_open(wrapped, &g_config.wrapped, g_config.error, sizeof g_config.error) !=
             TB_OK) {
    g_config.wrapped = NULL;
  }
  set_rule(getenv("TORCH_BACKEND_FAULTY_CALL"), env_long("TORCH_BACKEND_FAULTY_AFTER", 0),
           env_long("TORCH_BACKEND_FAULTY_TIMES", -1),
           parse_status(getenv("TORCH_BACKEND_FAULTY_STATUS")));
  g_config.forget_faults = env_long("TORCH_BACKEND_FAULTY_FORGET_FAULTS", 0) != 0;
  snprintf(g_config.name, sizeof g_config.name, "torch_backend faulty shim over %s",
           g_config.wrapped != NULL ? g_config.wrapped->vendor_name : wrapped);
}

/* Whether the rule names `call` (a slot, or kernel `kernel_name` for call == "kernel"). */
static int rule_matches(const char *call, const char *kernel_name) {
  if (g_rule.call[0] == '\0') return 0;
  if (kernel_name == NULL) return strcmp(g_rule.call, call) == 0;
  if (strcmp(g_rule.call, "kernel") == 0) return 1;
  return strncmp(g_rule.call, "kernel.", 7) == 0 && strcmp(g_rule.call + 7, kernel_name) == 0;
}

/* Decides whether this call fails; if so, sets the message and returns 1. */
static int inject(const char *call, const char *kernel_name, tb_status *status) {
  pthread_rwlock_rdlock(&g_rule_lock);
  int fail = 0;
  if (rule_matches(call, kernel_name)) {
    long index = atomic_fetch_add(&g_matched, 1);
    if (index >= g_rule.after &&
        (g_rule.times < 0 || atomic_fetch_add(&g_injected, 1) < g_rule.times)) {
      fail = 1;
      atomic_fetch_add(&g_fired, 1);
      *status = g_rule.status;
      t_injected = 1;
      snprintf(t_message, sizeof t_message, "faulty: injected %s into %s%s%s (call %ld)",
               tb_status_name(g_rule.status), call, kernel_name ? " " : "",
               kernel_name ? kernel_name : "", index + 1);
    }
  }
  pthread_rwlock_unlock(&g_rule_lock);
  return fail;
}

/* Passes a wrapped call's status through; a real failure makes last_error the wrapped one's. */
static tb_status pass(tb_status status) {
  if (status == TB_ERROR_DEVICE_FAULT && g_config.forget_faults &&
      atomic_exchange(&g_fault_reported, 1)) {
    return TB_OK; /* the contract violation under test: a fault reported only once */
  }
  if (status != TB_OK && status != TB_ERROR_NOT_READY) t_injected = 0;
  return status;
}

static const char *faulty_last_error(void) {
  return t_injected ? t_message : g_config.wrapped->last_error();
}

#define W (g_config.wrapped)

/* One forwarding function per slot: count, fail if configured, else call the wrapped vendor. */
#define FORWARD(group, fn, params, args)                                                    \
  static tb_status faulty_##group##_##fn params {                                           \
    atomic_fetch_add_explicit(&g_slot_calls[SLOT_##group##_##fn], 1, memory_order_relaxed); \
    tb_status injected;                                                                     \
    if (inject(#group "." #fn, NULL, &injected)) return injected;                           \
    tb_status status = pass(W->group.fn args);                                              \
    /* a reset also ends forget_faults' pretence */                                         \
    if (SLOT_##group##_##fn == SLOT_device_reset && status == TB_OK) {                      \
      atomic_store(&g_fault_reported, 0);                                                   \
    }                                                                                       \
    return status;                                                                          \
  }
FAULTY_SLOTS(FORWARD)
#undef FORWARD

/* ---- kernels: trampoline i forwards to the wrapped vendor's kernel i ---- */

static const tb_kernel *g_wrapped_kernels[FAULTY_MAX_KERNELS];

static tb_status forward_kernel(int i, tb_stream stream, const tb_value *args, int32_t count) {
  const tb_kernel *kernel = g_wrapped_kernels[i];
  atomic_fetch_add_explicit(&g_kernel_calls[i], 1, memory_order_relaxed);
  tb_status injected;
  if (inject("kernel", kernel->name, &injected)) return injected;
  tb_status status = kernel->fn(stream, args, count);
  /* declining is an answer, not a failure: keep the wrapped vendor's message for it */
  return status == TB_ERROR_NOT_SUPPORTED ? status : pass(status);
}

/* FAULTY_MAX_KERNELS trampolines, named by three decimal digits from 100 (no leading zero, so
 * no octal literals): trampoline_N forwards kernel N - 100. */
#define TRAMPOLINE(n)                                                              \
  static tb_status trampoline_##n(tb_stream s, const tb_value *a, int32_t count) { \
    return forward_kernel(n - 100, s, a, count);                                   \
  }
/* clang-format's layout of these repetition macros does not settle: kept by hand. */
// clang-format off
#define TEN(macro, p) \
  macro(p##0) macro(p##1) macro(p##2) macro(p##3) macro(p##4) \
  macro(p##5) macro(p##6) macro(p##7) macro(p##8) macro(p##9)
#define HUNDRED(macro, p) \
  TEN(macro, p##0) TEN(macro, p##1) TEN(macro, p##2) TEN(macro, p##3) TEN(macro, p##4) \
  TEN(macro, p##5) TEN(macro, p##6) TEN(macro, p##7) TEN(macro, p##8) TEN(macro, p##9)
#define ALL(macro) \
  HUNDRED(macro, 1) HUNDRED(macro, 2) HUNDRED(macro, 3) \
  HUNDRED(macro, 4) HUNDRED(macro, 5) HUNDRED(macro, 6)
// clang-format on
ALL(TRAMPOLINE)
#define POINTER(n) trampoline_##n,
static const tb_kernel_fn k_trampolines[FAULTY_MAX_KERNELS] = {ALL(POINTER)};
#undef POINTER
#undef ALL
#undef HUNDRED
#undef TEN
#undef TRAMPOLINE

static tb_kernel g_kernels[FAULTY_MAX_KERNELS];
static const tb_kernel *g_kernel_table[FAULTY_MAX_KERNELS];
static tb_kernel_api g_kernel_api;

/* The wrapped vendor's kernels, each behind its trampoline (same names, dtypes and flags). */
static void build_kernels(void) {
  int64_t count = W->kernels.count < FAULTY_MAX_KERNELS ? W->kernels.count : FAULTY_MAX_KERNELS;
  if (W->kernels.count > FAULTY_MAX_KERNELS) {
    fprintf(stderr, "faulty: the wrapped vendor has %lld kernels; only the first %d are wrapped\n",
            (long long)W->kernels.count, FAULTY_MAX_KERNELS);
  }
  for (int64_t i = 0; i < count; i++) {
    g_wrapped_kernels[i] = W->kernels.kernels[i];
    g_kernels[i] = *W->kernels.kernels[i];
    g_kernels[i].struct_size = sizeof(tb_kernel);
    g_kernels[i].fn = k_trampolines[i];
    g_kernel_table[i] = &g_kernels[i];
  }
  g_kernel_api = (tb_kernel_api){sizeof g_kernel_api, count, g_kernel_table};
}

/* ---- the table ---- */

static tb_device_api g_device;
static tb_memory_api g_memory;
static tb_stream_api g_stream;
static tb_event_api g_event;
static tb_vendor g_vendor;
static pthread_once_t g_table_once = PTHREAD_ONCE_INIT;

static void build_table(void) {
  /* Optional slots stay NULL when the wrapped vendor leaves them NULL. */
#define SET(group, fn, params, args) \
  g_##group.fn = W->group.fn != NULL ? faulty_##group##_##fn : NULL;
  FAULTY_SLOTS(SET)
#undef SET
  g_device.struct_size = sizeof g_device;
  g_memory.struct_size = sizeof g_memory;
  g_stream.struct_size = sizeof g_stream;
  g_event.struct_size = sizeof g_event;
  build_kernels();
  g_vendor = (tb_vendor){
      .struct_size = sizeof g_vendor,
      .abi_major = TB_ABI_VERSION_MAJOR,
      .abi_minor = TB_ABI_VERSION_MINOR,
      .device_type = W->device_type,
      .vendor_name = g_config.name,
      .vendor_version = W->vendor_version,
      .last_error = faulty_last_error,
      .device = &g_device,
      .memory = &g_memory,
      .stream = &g_stream,
      .event = &g_event,
      .kernels = g_kernel_api.count > 0 ? &g_kernel_api : NULL,
  };
}

TB_EXPORT const tb_vendor *tb_vendor_get(uint32_t abi_major, const char **error) {
  if (abi_major != TB_ABI_VERSION_MAJOR) {
    if (error != NULL) *error = "faulty implements ABI major 1 only";
    return NULL;
  }
  pthread_once(&g_once, configure);
  if (g_config.wrapped == NULL) {
    if (error != NULL) *error = g_config.error;
    return NULL;
  }
  pthread_once(&g_table_once, build_table);
  return &g_vendor;
}

/* ---- run-time control, for tests ---- */

/* Injects `status` (a TB_ERROR_* name; NULL: TB_ERROR_INTERNAL) into `call` (as
 * TORCH_BACKEND_FAULTY_CALL; NULL or "": nothing) after `after` successful calls, `times`
 * times (< 0: forever), counting from now.  Returns 0. */
TB_EXPORT int tb_faulty_configure(const char *call, long after, long times, const char *status) {
  pthread_once(&g_once, configure);
  set_rule(call, after, times, parse_status(status));
  return 0;
}

/* Writes "name count" lines, one per slot and kernel called at least once since the last
 * tb_faulty_reset_counts, into `buffer` (NUL-terminated, truncated to `size`).  Returns the
 * length the full text needs. */
TB_EXPORT size_t tb_faulty_counts(char *buffer, size_t size) {
  size_t length = 0;
  for (int i = 0; i < SLOT_COUNT + FAULTY_MAX_KERNELS; i++) {
    long calls = i < SLOT_COUNT ? atomic_load(&g_slot_calls[i])
                                : atomic_load(&g_kernel_calls[i - SLOT_COUNT]);
    if (calls == 0) continue;
    char line[192];
    int n = i < SLOT_COUNT ? snprintf(line, sizeof line, "%s %ld\n", k_slot_names[i], calls)
                           : snprintf(line, sizeof line, "kernel.%s %ld\n",
                                      g_wrapped_kernels[i - SLOT_COUNT]->name, calls);
    if (buffer != NULL && length + (size_t)n < size) memcpy(buffer + length, line, (size_t)n);
    length += (size_t)n;
  }
  if (buffer != NULL && size > 0) buffer[length < size ? length : size - 1] = '\0';
  return length + 1;
}

/* Failures injected since the last tb_faulty_configure (or load). */
TB_EXPORT long tb_faulty_fired(void) { return atomic_load(&g_fired); }

TB_EXPORT void tb_faulty_reset_counts(void) {
  for (int i = 0; i < SLOT_COUNT; i++) atomic_store(&g_slot_calls[i], 0);
  for (int i = 0; i < FAULTY_MAX_KERNELS; i++) atomic_store(&g_kernel_calls[i], 0);
}
