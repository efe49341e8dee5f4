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
 *                                "memory.device_malloc"); unset: forward everything
 *   TORCH_BACKEND_FAULTY_AFTER   let this many calls succeed first (default 0)
 *   TORCH_BACKEND_FAULTY_TIMES   fail this many times, then succeed again (default: forever)
 *   TORCH_BACKEND_FAULTY_STATUS  the status to return (default TB_ERROR_INTERNAL)
 *   TORCH_BACKEND_FAULTY_FORGET_FAULTS  1: break the device-fault contract the way a careless
 *                                vendor would, reporting TB_ERROR_DEVICE_FAULT once and then
 *                                answering TB_OK as if the fault had cleared (the conformance
 *                                suite must catch this)
 *
 * The shim takes the wrapped vendor's device type, so PyTorch code written for that device runs
 * unchanged.  Global state: the configuration and wrapped handle are written once under
 * pthread_once; the call counter is atomic; the injected-error flag is thread-local.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <torch_backend/loader.h>

static struct {
  tb_vendor_handle *wrapped;
  char error[4096];  /* why the wrapped vendor could not be loaded */
  char call[64];     /* "group.function" to fail, or "" */
  long after;        /* successful calls before failing */
  long times;        /* failures to inject; < 0: unlimited */
  tb_status status;  /* status to inject */
  int forget_faults; /* report a device fault once, then pretend it cleared */
  char name[192];
} g_config;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static _Atomic long g_calls;         /* calls of the configured function so far */
static _Atomic long g_injected;      /* failures injected so far */
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

static void configure(void) {
  const char *wrapped = getenv("TORCH_BACKEND_FAULTY_VENDOR");
  if (wrapped == NULL || *wrapped == '\0') wrapped = "fake";
  if (strcmp(wrapped, "faulty") == 0) {
    snprintf(g_config.error, sizeof g_config.error, "faulty cannot wrap itself");
  } else if (tb_loader_open(wrapped, &g_config.wrapped, g_config.error, sizeof g_config.error) !=
             TB_OK) {
    g_config.wrapped = NULL;
  }
  const char *call = getenv("TORCH_BACKEND_FAULTY_CALL");
  snprintf(g_config.call, sizeof g_config.call, "%s", call != NULL ? call : "");
  g_config.after = env_long("TORCH_BACKEND_FAULTY_AFTER", 0);
  g_config.times = env_long("TORCH_BACKEND_FAULTY_TIMES", -1);
  g_config.status = parse_status(getenv("TORCH_BACKEND_FAULTY_STATUS"));
  g_config.forget_faults = env_long("TORCH_BACKEND_FAULTY_FORGET_FAULTS", 0) != 0;
  snprintf(g_config.name, sizeof g_config.name, "torch_backend faulty shim over %s",
           g_config.wrapped != NULL ? g_config.wrapped->vendor_name : wrapped);
}

/* Decides whether this call of `call` fails; if so, sets the message and returns 1. */
static int inject(const char *call, tb_status *status) {
  if (g_config.call[0] == '\0' || strcmp(g_config.call, call) != 0) return 0;
  long index = atomic_fetch_add(&g_calls, 1);
  if (index < g_config.after) return 0;
  if (g_config.times >= 0 && atomic_fetch_add(&g_injected, 1) >= g_config.times) return 0;
  *status = g_config.status;
  t_injected = 1;
  snprintf(t_message, sizeof t_message, "faulty: injected %s into %s (call %ld)",
           tb_status_name(g_config.status), call, index + 1);
  return 1;
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

/* One forwarding function per slot: fail if configured, else call the wrapped vendor. */
#define FORWARD(group, fn, params, args)                    \
  static tb_status faulty_##group##_##fn params {           \
    tb_status injected;                                     \
    if (inject(#group "." #fn, &injected)) return injected; \
    return pass(W->group.fn args);                          \
  }

FORWARD(device, count, (int32_t * count), (count))
FORWARD(device, get_properties, (int32_t d, tb_device_properties *p), (d, p))
FORWARD(device, synchronize, (int32_t d), (d))
/* reset: forwarded; a reset also ends forget_faults' pretence. */
static tb_status faulty_device_reset(int32_t d) {
  tb_status injected;
  if (inject("device.reset", &injected)) return injected;
  tb_status status = pass(W->device.reset(d));
  if (status == TB_OK) atomic_store(&g_fault_reported, 0);
  return status;
}
FORWARD(memory, device_malloc, (int32_t d, size_t n, void **p), (d, n, p))
FORWARD(memory, device_free, (int32_t d, void *p), (d, p))
FORWARD(memory, host_malloc, (size_t n, void **p), (n, p))
FORWARD(memory, host_free, (void *p), (p))
FORWARD(memory, copy_h2d, (int32_t d, void *dst, const void *src, size_t n), (d, dst, src, n))
FORWARD(memory, copy_d2h, (int32_t d, void *dst, const void *src, size_t n), (d, dst, src, n))
FORWARD(memory, copy_d2d, (int32_t dd, void *dst, int32_t sd, const void *src, size_t n),
        (dd, dst, sd, src, n))
FORWARD(memory, copy_h2d_async, (tb_stream s, void *dst, const void *src, size_t n),
        (s, dst, src, n))
FORWARD(memory, copy_d2h_async, (tb_stream s, void *dst, const void *src, size_t n),
        (s, dst, src, n))
FORWARD(memory, copy_d2d_async,
        (tb_stream s, int32_t dd, void *dst, int32_t sd, const void *src, size_t n),
        (s, dd, dst, sd, src, n))
FORWARD(memory, memset_async, (tb_stream s, void *p, int v, size_t n), (s, p, v, n))
FORWARD(memory, get_info, (int32_t d, size_t *f, size_t *t), (d, f, t))
FORWARD(stream, create, (int32_t d, int32_t prio, tb_stream *s), (d, prio, s))
FORWARD(stream, destroy, (tb_stream s), (s))
FORWARD(stream, query, (tb_stream s), (s))
FORWARD(stream, synchronize, (tb_stream s), (s))
FORWARD(stream, wait_event, (tb_stream s, tb_event e), (s, e))
FORWARD(stream, priority_range, (int32_t d, int32_t *l, int32_t *g), (d, l, g))
FORWARD(stream, inject_fault, (tb_stream s, const char *message), (s, message))
FORWARD(event, create, (int32_t d, uint32_t flags, tb_event *e), (d, flags, e))
FORWARD(event, destroy, (tb_event e), (e))
FORWARD(event, record, (tb_event e, tb_stream s), (e, s))
FORWARD(event, query, (tb_event e), (e))
FORWARD(event, synchronize, (tb_event e), (e))
FORWARD(event, elapsed_time, (tb_event a, tb_event b, float *ms), (a, b, ms))

static tb_device_api g_device;
static tb_memory_api g_memory;
static tb_stream_api g_stream;
static tb_event_api g_event;
static tb_vendor g_vendor;
static pthread_once_t g_table_once = PTHREAD_ONCE_INIT;

/* Optional slots stay NULL when the wrapped vendor leaves them NULL. */
#define SLOT(group, fn) (W->group.fn != NULL ? faulty_##group##_##fn : NULL)

static void build_table(void) {
  g_device = (tb_device_api){sizeof g_device, SLOT(device, count), SLOT(device, get_properties),
                             SLOT(device, synchronize), SLOT(device, reset)};
  g_memory = (tb_memory_api){sizeof g_memory,
                             SLOT(memory, device_malloc),
                             SLOT(memory, device_free),
                             SLOT(memory, host_malloc),
                             SLOT(memory, host_free),
                             SLOT(memory, copy_h2d),
                             SLOT(memory, copy_d2h),
                             SLOT(memory, copy_d2d),
                             SLOT(memory, copy_h2d_async),
                             SLOT(memory, copy_d2h_async),
                             SLOT(memory, copy_d2d_async),
                             SLOT(memory, memset_async),
                             SLOT(memory, get_info)};
  g_stream = (tb_stream_api){sizeof g_stream,
                             SLOT(stream, create),
                             SLOT(stream, destroy),
                             SLOT(stream, query),
                             SLOT(stream, synchronize),
                             SLOT(stream, wait_event),
                             SLOT(stream, priority_range),
                             SLOT(stream, inject_fault)};
  g_event = (tb_event_api){sizeof g_event,           SLOT(event, create), SLOT(event, destroy),
                           SLOT(event, record),      SLOT(event, query),  SLOT(event, synchronize),
                           SLOT(event, elapsed_time)};
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
