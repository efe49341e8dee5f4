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
 *                                "memory.device_malloc", or "programs.build" of the device
 *                                programs extension, which faulty forwards when the wrapped
 *                                vendor has it), "vendor.init" for the context's
 *                                creation, "kernel.<operator>" for one of the wrapped vendor's
 *                                kernels ("kernel.mm.out"), or "kernel" for any kernel; several
 *                                calls separated by commas ("event.record,stream.synchronize")
 *                                share the counts below; unset: forward everything
 *   TORCH_BACKEND_FAULTY_AFTER   let this many calls succeed first (default 0)
 *   TORCH_BACKEND_FAULTY_TIMES   fail this many times, then succeed again (default: forever)
 *   TORCH_BACKEND_FAULTY_STATUS  the status to return (default TB_ERROR_INTERNAL)
 *   TORCH_BACKEND_FAULTY_FORGET_FAULTS  1: break the device-fault contract the way a careless
 *                                vendor would, reporting TB_ERROR_DEVICE_FAULT once and then
 *                                answering TB_OK as if the fault had cleared (the conformance
 *                                suite must catch this)
 *   TORCH_BACKEND_FAULTY_DEVICE_COUNT  report this device count instead of the wrapped vendor's
 *                                (torch_backend must refuse counts it cannot address)
 *
 * Tests that inject many faults in one process change the configuration at run time with
 * tb_faulty_configure(), read how often each call ran with tb_faulty_counts() and how many
 * failures were injected with tb_faulty_fired() (exported; load them with dlsym or ctypes from
 * the same library).
 *
 * Kernels: every wrapped kernel is republished with one forwarding function; its tb_kernel::data
 * points at faulty's record of the wrapped kernel, which the forwarder finds through
 * tb_kernel_call::kernel.
 *
 * The shim takes the wrapped vendor's device type, so PyTorch code written for that device runs
 * unchanged.  Global state: the loaded vendor and table are written once under pthread_once;
 * the injection settings are guarded by a reader-writer lock (tests change them while the
 * device's threads call in); counters are atomic; the injected-error flag is thread-local.
 */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <torch_backend/loader.h>
#include <torch_backend/vendor_slots.h>

/* Every slot of the table, from vendor_slots.h's list. */
#define SLOT_ID(gt, gf, slot, required, since, ret, params, names) SLOT_##gf##_##slot,
enum { TB_VENDOR_SLOTS(SLOT_ID) SLOT_COUNT };
#undef SLOT_ID

#define SLOT_NAME(gt, gf, slot, required, since, ret, params, names) #gf "." #slot,
static const char *const k_slot_names[SLOT_COUNT] = {TB_VENDOR_SLOTS(SLOT_NAME)};
#undef SLOT_NAME

static struct {
  tb_vendor_handle *wrapped;
  char error[4096];  /* why the wrapped vendor could not be loaded */
  int forget_faults; /* report a device fault once, then pretend it cleared */
  long device_count; /* unless LONG_MIN: the count to report instead of the wrapped one */
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
static _Atomic int g_fault_reported; /* forget_faults: a device fault was reported once */

static _Thread_local int t_injected; /* the calling thread's last failure was ours */
static _Thread_local char t_message[1024];

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
  g_config.device_count = env_long("TORCH_BACKEND_FAULTY_DEVICE_COUNT", LONG_MIN);
  snprintf(g_config.name, sizeof g_config.name, "torch_backend faulty shim over %s",
           g_config.wrapped != NULL ? g_config.wrapped->vendor_name : wrapped);
}

/* Whether `name` is one of the rule's comma-separated calls. */
static int rule_lists(const char *name) {
  const size_t length = strlen(name);
  for (const char *entry = g_rule.call; *entry != '\0';) {
    const char *end = strchr(entry, ',');
    const size_t n = end != NULL ? (size_t)(end - entry) : strlen(entry);
    if (n == length && strncmp(entry, name, n) == 0) return 1;
    if (end == NULL) break;
    entry = end + 1;
  }
  return 0;
}

/* Whether the rule names `call` (a slot, or kernel `kernel_name` for call == "kernel"). */
static int rule_matches(const char *call, const char *kernel_name) {
  if (g_rule.call[0] == '\0') return 0;
  if (kernel_name == NULL) return rule_lists(call);
  if (rule_lists("kernel")) return 1;
  char name[sizeof g_rule.call];
  snprintf(name, sizeof name, "kernel.%s", kernel_name);
  return rule_lists(name);
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

static const char *faulty_last_error(tb_context ctx) {
  (void)ctx; /* faulty's own context is NULL: its state is global */
  return t_injected ? t_message : g_config.wrapped->last_error(g_config.wrapped->context);
}

/* Contexts handed out: faulty's own is NULL (its state is global), and every one of them uses
 * the wrapped vendor's single context, finalized with the last of them. */
static pthread_mutex_t g_contexts_mutex = PTHREAD_MUTEX_INITIALIZER;
static long g_contexts;

/* init: creates the wrapped vendor's context the first time. */
static tb_status faulty_init(const tb_host_api *host, tb_context *ctx) {
  tb_status injected;
  if (inject("vendor.init", NULL, &injected)) return injected;
  char error[sizeof t_message - 64];
  pthread_mutex_lock(&g_contexts_mutex);
  tb_status status = tb_loader_init(g_config.wrapped, host, error, sizeof error);
  if (status == TB_OK) g_contexts++;
  pthread_mutex_unlock(&g_contexts_mutex);
  if (status != TB_OK) {
    t_injected = 1; /* not injected, but the message is faulty's to give */
    snprintf(t_message, sizeof t_message, "faulty: the wrapped vendor: %s", error);
    return status;
  }
  *ctx = NULL;
  return TB_OK;
}

static void faulty_finalize(tb_context ctx) {
  (void)ctx;
  pthread_mutex_lock(&g_contexts_mutex);
  if (g_contexts > 0 && --g_contexts == 0) tb_loader_finalize(g_config.wrapped);
  pthread_mutex_unlock(&g_contexts_mutex);
}

#define W (g_config.wrapped)

/* One forwarding function per slot: count, fail if configured, else call the wrapped vendor
 * with its own context. */
#define FORWARD(gt, gf, slot, required, since, ret, params, names)                         \
  static ret faulty_##gf##_##slot params {                                                 \
    (void)ctx;                                                                             \
    atomic_fetch_add_explicit(&g_slot_calls[SLOT_##gf##_##slot], 1, memory_order_relaxed); \
    tb_status injected;                                                                    \
    if (inject(#gf "." #slot, NULL, &injected)) return injected;                           \
    tb_status status = pass(W->gf.slot(W->context, TB_SLOT_AFTER_CTX names));              \
    /* a reset also ends forget_faults' pretence */                                        \
    if (SLOT_##gf##_##slot == SLOT_device_reset && status == TB_OK) {                      \
      atomic_store(&g_fault_reported, 0);                                                  \
    }                                                                                      \
    return status;                                                                         \
  }
TB_VENDOR_SLOTS(FORWARD)
#undef FORWARD

/* TORCH_BACKEND_FAULTY_DEVICE_COUNT: a vendor reporting a count torch_backend cannot represent
 * (or any other count), to test how the runtime refuses it. */
static tb_status faulty_device_count_override(tb_context ctx, int32_t *count) {
  tb_status status = faulty_device_count(ctx, count);
  if (status == TB_OK) *count = (int32_t)g_config.device_count;
  return status;
}

/* ---- kernels: one forwarder for all; tb_kernel::data says which wrapped kernel ---- */

typedef struct faulty_kernel {
  const tb_kernel *wrapped;
  _Atomic long calls;
} faulty_kernel;

static faulty_kernel *g_wrapped_kernels; /* one per wrapped kernel */
static int64_t g_kernel_count;

static tb_status forward_kernel(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  faulty_kernel *k = call->kernel->data;
  atomic_fetch_add_explicit(&k->calls, 1, memory_order_relaxed);
  tb_status injected;
  if (inject("kernel", k->wrapped->name, &injected)) return injected;
  /* The wrapped vendor sees its own kernel in the call; host_private (the workspace's state)
   * travels with the copy. */
  tb_kernel_call forwarded = *call;
  forwarded.kernel = k->wrapped;
  tb_status status = k->wrapped->fn(W->context, &forwarded);
  /* declining is an answer, not a failure: keep the wrapped vendor's message for it */
  return status == TB_ERROR_NOT_SUPPORTED ? status : pass(status);
}

static tb_kernel *g_kernels;
static const tb_kernel **g_kernel_table;
static tb_kernel_api g_kernel_api;

/* The wrapped vendor's kernels, each forwarded (same names, dtypes, flags and schemas). */
static void build_kernels(void) {
  int64_t count = W->kernels.count;
  g_wrapped_kernels = count > 0 ? calloc((size_t)count, sizeof *g_wrapped_kernels) : NULL;
  g_kernels = count > 0 ? calloc((size_t)count, sizeof *g_kernels) : NULL;
  g_kernel_table = count > 0 ? calloc((size_t)count, sizeof *g_kernel_table) : NULL;
  if (count > 0 && (g_wrapped_kernels == NULL || g_kernels == NULL || g_kernel_table == NULL)) {
    fprintf(stderr, "faulty: out of memory wrapping %lld kernels; publishing none\n",
            (long long)count);
    count = 0;
  }
  for (int64_t i = 0; i < count; i++) {
    g_wrapped_kernels[i].wrapped = W->kernels.kernels[i];
    atomic_init(&g_wrapped_kernels[i].calls, 0);
    g_kernels[i] = *W->kernels.kernels[i];
    g_kernels[i].struct_size = sizeof(tb_kernel);
    g_kernels[i].fn = forward_kernel;
    g_kernels[i].data = &g_wrapped_kernels[i];
    g_kernel_table[i] = &g_kernels[i];
  }
  g_kernel_count = count;
  g_kernel_api = (tb_kernel_api){sizeof g_kernel_api, count, g_kernel_table};
}

/* ---- device programs (TB_EXTENSION_PROGRAMS): forwarded when the wrapped vendor has them,
 * failing as "programs.build", "programs.get_kernel", "programs.launch", "programs.release" ---- */

static const tb_programs_extension *g_wrapped_programs;
static tb_programs_extension g_programs;

static tb_status faulty_programs_build(tb_context ctx, int32_t device, tb_program_language language,
                                       const char *source, size_t size, const char *options,
                                       tb_program *program) {
  (void)ctx;
  tb_status injected;
  if (inject("programs.build", NULL, &injected)) return injected;
  return pass(
      g_wrapped_programs->build(W->context, device, language, source, size, options, program));
}

static tb_status faulty_programs_get_kernel(tb_context ctx, tb_program program, const char *name,
                                            tb_program_kernel *kernel,
                                            tb_program_kernel_info *info) {
  (void)ctx;
  tb_status injected;
  if (inject("programs.get_kernel", NULL, &injected)) return injected;
  return pass(g_wrapped_programs->get_kernel(W->context, program, name, kernel, info));
}

static tb_status faulty_programs_launch(tb_context ctx, tb_stream stream, tb_program_kernel kernel,
                                        const tb_launch_dims *dims, const void *const *args,
                                        size_t count) {
  (void)ctx;
  tb_status injected;
  if (inject("programs.launch", NULL, &injected)) return injected;
  return pass(g_wrapped_programs->launch(W->context, stream, kernel, dims, args, count));
}

static tb_status faulty_programs_release(tb_context ctx, tb_program program) {
  (void)ctx;
  tb_status injected;
  if (inject("programs.release", NULL, &injected)) return injected;
  return pass(g_wrapped_programs->release(W->context, program));
}

/* The extension chain: the wrapped vendor's programs, if it has usable ones. */
static const tb_extension_base *build_extensions(void) {
  char error[256];
  g_wrapped_programs = tb_loader_programs(W, error, sizeof error);
  if (g_wrapped_programs == NULL) return NULL;
  g_programs = (tb_programs_extension){
      .base = {sizeof g_programs, TB_EXTENSION_PROGRAMS, NULL},
      .languages = g_wrapped_programs->languages,
      .build = faulty_programs_build,
      .get_kernel = faulty_programs_get_kernel,
      .launch = faulty_programs_launch,
      .release = faulty_programs_release,
  };
  return &g_programs.base;
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
#define SET(gt, gf, slot, required, since, ret, params, names) \
  g_##gf.slot = W->gf.slot != NULL ? faulty_##gf##_##slot : NULL;
  TB_VENDOR_SLOTS(SET)
#undef SET
  if (g_config.device_count != LONG_MIN) g_device.count = faulty_device_count_override;
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
      .init = faulty_init,
      .finalize = faulty_finalize,
      .last_error = faulty_last_error,
      .device = &g_device,
      .memory = &g_memory,
      .stream = &g_stream,
      .event = &g_event,
      .kernels = g_kernel_api.count > 0 ? &g_kernel_api : NULL,
      .extensions = build_extensions(),
  };
}

TB_EXPORT const tb_vendor *tb_vendor_get(uint32_t abi_major, const char **error) {
  if (abi_major != TB_ABI_VERSION_MAJOR) {
    if (error != NULL) *error = "faulty implements ABI major 2 only";
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
  for (int64_t i = 0; i < SLOT_COUNT + g_kernel_count; i++) {
    long calls = i < SLOT_COUNT ? atomic_load(&g_slot_calls[i])
                                : atomic_load(&g_wrapped_kernels[i - SLOT_COUNT].calls);
    if (calls == 0) continue;
    char line[192];
    int n = i < SLOT_COUNT ? snprintf(line, sizeof line, "%s %ld\n", k_slot_names[i], calls)
                           : snprintf(line, sizeof line, "kernel.%s %ld\n",
                                      g_wrapped_kernels[i - SLOT_COUNT].wrapped->name, calls);
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
  for (int64_t i = 0; i < g_kernel_count; i++) atomic_store(&g_wrapped_kernels[i].calls, 0);
}
