/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The npu adapter's runtime half, beyond what the conformance suite checks: that init leaves
 * AscendCL alone (aclInit deferred), one AscendCL for several contexts and what finalize
 * releases, the error mapping and its messages, the range checks, the sticky fault record
 * (first message kept, npu_expect_fault, reset), busy streams destroyed later, negative elapsed
 * times, graphs beyond the conformance suite's checks (random kernels reading their generator
 * state when the graph runs, capture_end from another thread, graphs destroyed while their
 * launches run, what finalize releases), and the paths only a failing runtime takes.
 *
 * The adapter's sources are compiled into this program (CMake's tb_npu_objects) over the
 * AscendCL stand-in, so the test reaches the adapter's internals (npu_runtime.h) and can replace
 * AscendCL functions: the definitions of aclInit, aclrtRecordEvent and
 * aclrtDeviceEnablePeerAccess below take precedence over libascendcl's and forward to them
 * unless a test makes them fail.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "npu_runtime.h"
#include "standin.h"

static int g_failures;
static const char *g_test = "";

#define EXPECT(cond, ...)                                                                    \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "%s:%d: [%s] EXPECT(%s) failed: ", __FILE__, __LINE__, g_test, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                          \
      fputc('\n', stderr);                                                                   \
      g_failures++;                                                                          \
    }                                                                                        \
  } while (0)

/* The call returns `expected` and the last error contains `text` ("" for any). */
#define EXPECT_STATUS(expected, text, call)                                                       \
  do {                                                                                            \
    tb_status got_ = (call);                                                                      \
    const char *msg_ = npu_last_error(NULL);                                                      \
    if (got_ != (expected) || strstr(msg_, (text)) == NULL) {                                     \
      fprintf(stderr, "%s:%d: [%s] %s returned %s (\"%s\"), expected %s with \"%s\"\n", __FILE__, \
              __LINE__, g_test, #call, tb_status_name(got_), msg_, tb_status_name(expected),      \
              (text));                                                                            \
      g_failures++;                                                                               \
    }                                                                                             \
  } while (0)

#define EXPECT_OK(call) EXPECT_STATUS(TB_OK, "", call)

/* ---- AscendCL functions a test can make fail ---- */

static int g_fail_init;   /* aclInit fails with ACL_ERROR_INVALID_FILE */
static int g_fail_record; /* aclrtRecordEvent fails with ACL_ERROR_RT_AICORE_EXCEPTION */
static int
    g_fail_enable; /* aclrtDeviceEnablePeerAccess fails with ACL_ERROR_RT_FEATURE_NOT_SUPPORT */
static int g_init_calls;

/* The next definition of `name` (the stand-in's), stored into the function pointer at
 * `function` of `size` bytes: ISO C converts no void * to a function pointer, so the bytes are
 * copied (POSIX gives both one representation). */
static void next_symbol(const char *name, void *function, size_t size) {
  void *symbol = dlsym(RTLD_NEXT, name);
  if (symbol == NULL || size != sizeof symbol) {
    fprintf(stderr, "runtime_test: no next definition of %s\n", name);
    abort();
  }
  memcpy(function, &symbol, size);
}

aclError aclInit(const char *configPath) {
  g_init_calls++;
  if (g_fail_init) {
    standin_set_error("aclInit: injected failure");
    return ACL_ERROR_INVALID_FILE;
  }
  aclError (*real)(const char *) = NULL;
  next_symbol("aclInit", &real, sizeof real);
  return real(configPath);
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  if (g_fail_record) {
    standin_set_error("aclrtRecordEvent: injected AI Core exception");
    return ACL_ERROR_RT_AICORE_EXCEPTION;
  }
  aclError (*real)(aclrtEvent, aclrtStream) = NULL;
  next_symbol("aclrtRecordEvent", &real, sizeof real);
  return real(event, stream);
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags) {
  if (g_fail_enable) {
    standin_set_error("aclrtDeviceEnablePeerAccess: injected: not supported");
    return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
  }
  aclError (*real)(int32_t, uint32_t) = NULL;
  next_symbol("aclrtDeviceEnablePeerAccess", &real, sizeof real);
  return real(peerDeviceId, flags);
}

/* ---- helpers ---- */

static const tb_vendor *g_v;

static tb_context new_context(void) {
  tb_host_api host;
  memset(&host, 0, sizeof host);
  host.struct_size = sizeof host;
  host.abi_major = TB_ABI_VERSION_MAJOR;
  host.abi_minor = TB_ABI_VERSION_MINOR;
  host.torch_version = "npu runtime test";
  tb_context ctx = NULL;
  EXPECT_OK(g_v->init(&host, &ctx));
  return ctx;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

typedef struct gate {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int open;
} gate;

static void gate_task(void *arg) {
  gate *g = arg;
  pthread_mutex_lock(&g->mutex);
  while (!g->open) pthread_cond_wait(&g->cond, &g->mutex);
  pthread_mutex_unlock(&g->mutex);
}

static void *open_later(void *arg) {
  gate *g = arg;
  sleep_ms(50);
  pthread_mutex_lock(&g->mutex);
  g->open = 1;
  pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->mutex);
  return NULL;
}

static void sleep_task(void *arg) {
  (void)arg;
  sleep_ms(5);
}

static void fail_task(void *arg) { standin_task_fail("%s", (const char *)arg); }

/* Enqueues work on the adapter's stream that fails when the stream reaches it. */
static void enqueue_failure(tb_context ctx, tb_stream stream, const char *message) {
  EXPECT_OK(npu_enter(ctx, npu_stream_device(stream)));
  EXPECT(standin_launch(npu_acl_stream(stream), "aclnnTestOp", fail_task, NULL, (void *)message) ==
             ACL_SUCCESS,
         "standin_launch");
}

/* ---- tests ---- */

static void test_init_is_cheap(void) {
  g_test = "init_is_cheap";
  setenv("TORCH_BACKEND_NPU_ACL_CONFIG", "/no/such/acl.json", 1);
  tb_context bad = NULL;
  tb_host_api host = {sizeof host, TB_ABI_VERSION_MAJOR, TB_ABI_VERSION_MINOR, NULL};
  EXPECT_STATUS(TB_ERROR_UNAVAILABLE, "TORCH_BACKEND_NPU_ACL_CONFIG='/no/such/acl.json'",
                g_v->init(&host, &bad));
  unsetenv("TORCH_BACKEND_NPU_ACL_CONFIG");
  host.abi_major = 3;
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "ABI 3.", g_v->init(&host, &bad));
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "NULL", g_v->init(NULL, &bad));
  /* A stand-in variable the runtime cannot read fails the count, as unavailable. */
  setenv("TB_ASCEND_STANDIN_DEVICES", "lots", 1);
  tb_context ctx = new_context();
  int32_t count = -1;
  EXPECT_STATUS(TB_ERROR_UNAVAILABLE, "TB_ASCEND_STANDIN_DEVICES='lots'",
                g_v->device->count(ctx, &count));
  setenv("TB_ASCEND_STANDIN_DEVICES", "2", 1);
  /* init and count leave AscendCL uninitialised (aclrtGetSocName is NULL before aclInit). */
  EXPECT_OK(g_v->device->count(ctx, &count));
  EXPECT(count == 2, "count %d", count);
  EXPECT(g_init_calls == 0 && aclrtGetSocName() == NULL, "init and count called aclInit (%d calls)",
         g_init_calls);
  (void)aclGetRecentErrMsg();
  /* The first call that needs the runtime initialises it; a failure says why. */
  g_fail_init = 1;
  void *p = NULL;
  EXPECT_STATUS(TB_ERROR_UNAVAILABLE, "aclInit failed with ACL_ERROR_INVALID_FILE (100003)",
                g_v->memory->device_malloc(ctx, 0, 64, &p));
  g_fail_init = 0;
  EXPECT_OK(g_v->memory->device_malloc(ctx, 0, 64, &p));
  EXPECT(g_init_calls == 2 && aclrtGetSocName() != NULL, "aclInit calls: %d", g_init_calls);
  EXPECT_OK(g_v->memory->device_free(ctx, 0, p));
  g_v->finalize(ctx);
  EXPECT(aclrtGetSocName() == NULL, "the last finalize did not call aclFinalize");
  (void)aclGetRecentErrMsg();
  /* An application that initialised AscendCL itself keeps it after the last finalize. */
  EXPECT(aclInit(NULL) == ACL_SUCCESS, "aclInit");
  ctx = new_context();
  EXPECT_OK(g_v->memory->device_malloc(ctx, 0, 64, &p));
  EXPECT_OK(g_v->memory->device_free(ctx, 0, p));
  g_v->finalize(ctx);
  EXPECT(aclrtGetSocName() != NULL, "finalize ended the application's AscendCL");
  EXPECT(aclFinalize() == ACL_SUCCESS, "aclFinalize");
}

static void test_contexts(void) {
  g_test = "contexts";
  tb_context first = new_context(), second = new_context();
  size_t free0 = 0, total = 0, free1 = 0;
  void *mine = NULL, *theirs = NULL, *pinned = NULL;
  tb_stream stream = NULL;
  tb_event event = NULL;
  EXPECT_OK(g_v->memory->device_malloc(first, 0, 1 << 20, &mine));
  EXPECT_OK(g_v->memory->get_info(first, 0, &free0, &total));
  /* The second context leaves memory, a stream, an event and pinned memory to finalize. */
  EXPECT_OK(g_v->memory->device_malloc(second, 0, 4 << 20, &theirs));
  EXPECT_OK(g_v->memory->host_malloc(second, 4096, &pinned));
  EXPECT_OK(g_v->stream->create(second, 1, 0, &stream));
  EXPECT_OK(g_v->event->create(second, 1, TB_EVENT_FLAG_TIMING, &event));
  EXPECT_OK(g_v->event->record(second, event, stream));
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "belongs to another context",
                g_v->stream->synchronize(first, stream));
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "belongs to another context",
                g_v->event->query(first, event));
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "device_malloc returned on npu:0",
                g_v->memory->device_free(first, 0, theirs));
  g_v->finalize(second);
  EXPECT_OK(g_v->memory->get_info(first, 0, &free1, &total));
  EXPECT(free1 == free0, "finalize left %zu bytes of the second context's memory", free0 - free1);
  EXPECT(aclrtGetSocName() != NULL, "finalize of one context ended AscendCL for the other");
  EXPECT_OK(g_v->memory->device_free(first, 0, mine));
  g_v->finalize(first);
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "is not a context", g_v->device->synchronize(NULL, 0));
}

static void test_errors(void) {
  g_test = "errors";
  tb_context ctx = new_context();
  void *on0 = NULL, *pinned = NULL;
  unsigned char host[256] = {0};
  tb_stream s1 = NULL;
  tb_event e0 = NULL;
  EXPECT_OK(g_v->memory->device_malloc(ctx, 0, 256, &on0));
  EXPECT_OK(g_v->stream->create(ctx, 1, 0, &s1));
  EXPECT_OK(g_v->event->create(ctx, 0, 0, &e0));
  EXPECT_STATUS(TB_ERROR_INVALID_DEVICE, "device index 2 is out of range (device count 2)",
                g_v->memory->device_malloc(ctx, 2, 64, &pinned));
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "device_malloc returned on npu:1",
                g_v->memory->device_free(ctx, 1, on0));
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "not memory that device_malloc returned on npu:1",
                g_v->memory->copy_h2d(ctx, 1, on0, host, 256));
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "[",
                g_v->memory->copy_d2h(ctx, 0, host, (char *)on0 + 8, 256)); /* past the end */
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "not memory that device_malloc returned on npu:1",
                g_v->memory->memset_async(ctx, s1, on0, 0, 256));
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "host_malloc returned",
                g_v->memory->host_free(ctx, host));
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "the event belongs to npu:0, the stream to npu:1",
                g_v->event->record(ctx, e0, s1));
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "unknown flags", g_v->event->create(ctx, 0, 0x10, &e0));
  /* host_malloc from a thread that has no current device. */
  EXPECT_OK(g_v->memory->host_malloc(ctx, 100, &pinned));
  EXPECT_OK(g_v->memory->host_free(ctx, pinned));
  /* npu_check: names, codes, statuses and AscendCL's message. */
  EXPECT_STATUS(TB_ERROR_OUT_OF_MEMORY,
                "aclrtMalloc failed on npu:0 with ACL_ERROR_RT_MEMORY_ALLOCATION (207001): "
                "no message",
                npu_check(ctx, 0, ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc"));
  EXPECT_STATUS(TB_ERROR_INTERNAL, "x failed with an unknown code (123456)",
                npu_check(ctx, -1, 123456, "x"));
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT,
                "aclnnAddGetWorkspaceSize failed on npu:0 with ACLNN_ERR_PARAM_INVALID (161002)",
                npu_check(ctx, 0, 161002, "aclnnAddGetWorkspaceSize"));
  aclError err = aclrtFree(NULL);
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT,
                "aclrtFree failed with ACL_ERROR_INVALID_PARAM (100000): aclrtFree: devPtr is NULL",
                npu_check(ctx, -1, err, "aclrtFree"));
  npu_fail(ctx, TB_ERROR_INTERNAL, "before");
  EXPECT(npu_check(ctx, 0, ACL_ERROR_RT_EVENT_NOT_COMPLETE, "x") == TB_ERROR_NOT_READY &&
             strcmp(npu_last_error(ctx), "before") == 0,
         "NOT_READY changed the message: %s", npu_last_error(ctx));
  EXPECT_OK(g_v->event->destroy(ctx, e0));
  EXPECT_OK(g_v->stream->destroy(ctx, s1));
  EXPECT_OK(g_v->memory->device_free(ctx, 0, on0));
  g_v->finalize(ctx);
}

static void test_faults(void) {
  g_test = "faults";
  tb_context ctx = new_context();
  tb_stream s0 = NULL, other = NULL, s1 = NULL;
  tb_event e = NULL, timing = NULL;
  void *d = NULL, *more = NULL;
  unsigned char host[64];
  EXPECT_OK(g_v->stream->create(ctx, 0, 0, &s0));
  EXPECT_OK(g_v->stream->create(ctx, 0, 0, &other));
  EXPECT_OK(g_v->stream->create(ctx, 1, 0, &s1));
  EXPECT_OK(g_v->event->create(ctx, 0, 0, &e));
  EXPECT_OK(g_v->event->create(ctx, 0, TB_EVENT_FLAG_TIMING, &timing));
  EXPECT_OK(g_v->memory->device_malloc(ctx, 0, 64, &d));
  enqueue_failure(ctx, s0, "index 7 is out of range");
  static const char first[] = "aclnnTestOp: index 7 is out of range";
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT, first, g_v->stream->synchronize(ctx, s0));
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT, "with ACL_ERROR_RT_AICORE_EXCEPTION (507015)",
                g_v->stream->synchronize(ctx, s0));
  /* The first failure is the one reported. */
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT, first,
                npu_check(ctx, 0, ACL_ERROR_RT_VECTOR_CORE_EXCEPTION, "aclrtSynchronizeStream"));
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT, first, g_v->stream->query(ctx, other));
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT, first, g_v->device->synchronize(ctx, 0));
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT, first, g_v->memory->copy_d2h(ctx, 0, host, d, 64));
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT, first, g_v->memory->copy_h2d_async(ctx, other, d, host, 64));
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT, first, g_v->memory->memset_async(ctx, other, d, 0, 64));
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT, first, g_v->stream->wait_event(ctx, other, e));
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT, first, npu_enter(ctx, 0)); /* kernels */
  /* Releasing, records, creating keep working; device 1 does not care. */
  EXPECT_OK(g_v->event->record(ctx, e, other));
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT, first, g_v->event->query(ctx, e));
  EXPECT_OK(g_v->memory->device_malloc(ctx, 0, 64, &more));
  EXPECT_OK(g_v->memory->device_free(ctx, 0, more));
  EXPECT_OK(g_v->stream->synchronize(ctx, s1));
  /* A record the runtime refuses with a fault code is lost, not an error. */
  g_fail_record = 1;
  EXPECT_OK(g_v->event->record(ctx, timing, other));
  g_fail_record = 0;
  /* reset clears the runtime's fault and the adapter's record; everything stays valid. */
  EXPECT_OK(g_v->device->reset(ctx, 0));
  EXPECT_OK(g_v->stream->synchronize(ctx, s0));
  EXPECT_OK(g_v->event->synchronize(ctx, e));
  EXPECT_OK(g_v->event->query(ctx, timing)); /* its record was lost: complete */
  EXPECT_OK(g_v->stream->wait_event(ctx, other, timing));
  float ms = 0;
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "recorded while npu:0 was faulted",
                g_v->event->elapsed_time(ctx, timing, timing, &ms));
  memset(host, 3, sizeof host);
  EXPECT_OK(g_v->memory->copy_h2d(ctx, 0, d, host, 64));
  EXPECT_OK(g_v->device->reset(ctx, 0)); /* a healthy device: nothing to do */
  /* inject_fault's message leads the record (npu_expect_fault). */
  npu_expect_fault(0, "conformance: injected fault 4711");
  enqueue_failure(ctx, s0, "index 9 is out of range");
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT,
                "conformance: injected fault 4711 (in inject_fault): aclrtSynchronizeStream failed "
                "on npu:0 with ACL_ERROR_RT_AICORE_EXCEPTION (507015)",
                g_v->stream->synchronize(ctx, s0));
  EXPECT_OK(g_v->device->reset(ctx, 0));
  /* After a reset, the next fault has its own message, without the expectation. */
  enqueue_failure(ctx, s0, "index 11 is out of range");
  EXPECT_STATUS(TB_ERROR_DEVICE_FAULT, "index 11", g_v->stream->synchronize(ctx, s0));
  EXPECT(strstr(npu_last_error(ctx), "inject_fault") == NULL, "stale expectation: %s",
         npu_last_error(ctx));
  EXPECT_OK(g_v->device->reset(ctx, 0));
  EXPECT_OK(g_v->memory->device_free(ctx, 0, d));
  EXPECT_OK(g_v->event->destroy(ctx, e));
  EXPECT_OK(g_v->event->destroy(ctx, timing));
  EXPECT_OK(g_v->stream->destroy(ctx, s0));
  EXPECT_OK(g_v->stream->destroy(ctx, other));
  EXPECT_OK(g_v->stream->destroy(ctx, s1));
  g_v->finalize(ctx);
}

static void test_streams_and_events(void) {
  g_test = "streams_and_events";
  tb_context ctx = new_context();
  tb_stream s = NULL;
  tb_event start = NULL, end = NULL;
  EXPECT_OK(g_v->stream->create(ctx, 0, 0, &s));
  /* A busy stream's destroy returns at once; the stream goes once its work is done. */
  gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  EXPECT_OK(npu_enter(ctx, 0));
  EXPECT(standin_launch(npu_acl_stream(s), "gate", gate_task, NULL, &g) == ACL_SUCCESS, "launch");
  pthread_t opener;
  pthread_create(&opener, NULL, open_later, &g);
  EXPECT_OK(g_v->stream->destroy(ctx, s));
  pthread_mutex_lock(&g.mutex);
  int opened = g.open;
  pthread_mutex_unlock(&g.mutex);
  pthread_mutex_lock(&ctx->mutex);
  bool buried = ctx->graveyard != NULL;
  pthread_mutex_unlock(&ctx->mutex);
  EXPECT(!opened && buried, "destroy waited (%d), or left no grave (%d)", opened, buried);
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "not a live stream", g_v->stream->query(ctx, s));
  EXPECT_OK(g_v->device->synchronize(ctx, 0)); /* waits for the gate, then sweeps */
  pthread_mutex_lock(&ctx->mutex);
  buried = ctx->graveyard != NULL;
  pthread_mutex_unlock(&ctx->mutex);
  EXPECT(!buried, "the finished stream stayed in the graveyard");
  pthread_join(opener, NULL);
  /* The end recorded before the start: a negative time. */
  EXPECT_OK(g_v->stream->create(ctx, 0, 0, &s));
  EXPECT_OK(g_v->event->create(ctx, 0, TB_EVENT_FLAG_TIMING, &start));
  EXPECT_OK(g_v->event->create(ctx, 0, TB_EVENT_FLAG_TIMING, &end));
  EXPECT_OK(g_v->event->record(ctx, end, s));
  EXPECT_OK(npu_enter(ctx, 0));
  EXPECT(standin_launch(npu_acl_stream(s), "sleep", sleep_task, NULL, NULL) == ACL_SUCCESS,
         "launch");
  EXPECT_OK(g_v->event->record(ctx, start, s));
  EXPECT_OK(g_v->stream->synchronize(ctx, s));
  float ms = 0;
  EXPECT_OK(g_v->event->elapsed_time(ctx, start, end, &ms));
  EXPECT(ms <= 0, "end before start gave %f ms", (double)ms);
  EXPECT_OK(g_v->event->elapsed_time(ctx, end, start, &ms));
  EXPECT(ms >= 0, "start after end gave %f ms", (double)ms);
  EXPECT_OK(g_v->event->destroy(ctx, start));
  EXPECT_OK(g_v->event->destroy(ctx, end));
  EXPECT_OK(g_v->stream->destroy(ctx, s));
  g_v->finalize(ctx);
}

static void test_peer_copies(void) {
  g_test = "peer_copies";
  /* Peer access the runtime refuses to enable: copies between devices go through the host. */
  g_fail_enable = 1;
  tb_context ctx = new_context();
  void *a = NULL, *b = NULL;
  unsigned char in[4096], out[4096];
  for (int i = 0; i < 4096; i++) in[i] = (unsigned char)(i * 13);
  memset(out, 0, sizeof out);
  EXPECT_OK(g_v->memory->device_malloc(ctx, 0, 4096, &a));
  EXPECT_OK(g_v->memory->device_malloc(ctx, 1, 4096, &b));
  EXPECT_OK(g_v->memory->copy_h2d(ctx, 0, a, in, 4096));
  EXPECT_OK(g_v->memory->copy_d2d(ctx, 1, b, 0, a, 4096));
  EXPECT_OK(g_v->memory->copy_d2h(ctx, 1, out, b, 4096));
  EXPECT(memcmp(in, out, 4096) == 0, "bytes through the host");
  g_fail_enable = 0;
  EXPECT_OK(g_v->memory->device_free(ctx, 0, a));
  EXPECT_OK(g_v->memory->device_free(ctx, 1, b));
  g_v->finalize(ctx);
}

/* ---- graphs ---- */

static const tb_graphs_extension *graphs_of(const tb_vendor *v) {
  for (const tb_extension_base *e = v->extensions; e != NULL; e = e->next) {
    if (e->type == TB_EXTENSION_GRAPHS) return (const tb_graphs_extension *)e;
  }
  return NULL;
}

/* The kernels' workspace: device_malloc'd and kept until the test frees it (a captured
 * kernel's scratch stays reserved for the graph's launches). */
static tb_context g_scratch_ctx;
static void *g_scratch[16];
static int g_scratch_count;

static tb_status scratch(const tb_kernel_call *call, size_t bytes, void **ptr) {
  (void)call;
  if (ptr == NULL) return TB_ERROR_INVALID_ARGUMENT;
  if (bytes == 0) {
    *ptr = NULL;
    return TB_OK;
  }
  if (g_scratch_count == 16) return TB_ERROR_OUT_OF_MEMORY;
  tb_status status = g_v->memory->device_malloc(g_scratch_ctx, 0, bytes, ptr);
  if (status == TB_OK) g_scratch[g_scratch_count++] = *ptr;
  return status;
}

static void scratch_free(void) {
  for (int i = 0; i < g_scratch_count; i++) {
    EXPECT_OK(g_v->memory->device_free(g_scratch_ctx, 0, g_scratch[i]));
  }
  g_scratch_count = 0;
}

/* bernoulli_.float(self, p, generator) through the npu kernel table. */
static tb_status bernoulli(tb_context ctx, tb_stream stream, const tb_tensor *self, double p,
                           tb_rng_key key) {
  const tb_kernel_api *api = g_v->kernels;
  const tb_kernel *kernel = NULL;
  for (int64_t i = 0; api != NULL && i < api->count; i++) {
    if (strcmp(api->kernels[i]->name, "bernoulli_.float") == 0) kernel = api->kernels[i];
  }
  if (kernel == NULL) return npu_fail(ctx, TB_ERROR_NOT_SUPPORTED, "no bernoulli_.float kernel");
  tb_value args[3];
  memset(args, 0, sizeof args);
  args[0].kind = TB_VALUE_TENSOR;
  args[0].as.tensor = self;
  args[1].kind = TB_VALUE_DOUBLE;
  args[1].as.f = p;
  args[2].kind = TB_VALUE_RNG;
  args[2].as.rng = key;
  tb_kernel_call call = {sizeof call, stream, args, 3, kernel, scratch, NULL};
  return kernel->fn(ctx, &call);
}

typedef struct end_args {
  tb_context ctx;
  const tb_graphs_extension *graphs;
  tb_stream stream;
  tb_graph graph;
  tb_status status;
  char message[512];
} end_args;

static void *end_elsewhere(void *arg) {
  end_args *a = arg;
  a->status = a->graphs->capture_end(a->ctx, a->stream, &a->graph);
  snprintf(a->message, sizeof a->message, "%s", npu_last_error(a->ctx));
  return NULL;
}

static bool graveyard_empty(tb_context ctx) {
  pthread_mutex_lock(&ctx->mutex);
  bool empty = ctx->graph_graveyard == NULL;
  pthread_mutex_unlock(&ctx->mutex);
  return empty;
}

static void test_graphs(void) {
  g_test = "graphs";
  const tb_graphs_extension *gx = graphs_of(g_v);
  EXPECT(gx != NULL && gx->base.struct_size == sizeof *gx && gx->capture_begin != NULL &&
             gx->capture_end != NULL && gx->graph_launch != NULL && gx->graph_destroy != NULL,
         "no complete TB_EXTENSION_GRAPHS in the chain");
  if (gx == NULL) return;
  tb_context ctx = new_context();
  g_scratch_ctx = ctx;
  tb_stream s = NULL, other = NULL;
  EXPECT_OK(g_v->stream->create(ctx, 0, 0, &s));
  EXPECT_OK(g_v->stream->create(ctx, 0, 0, &other));
  enum { N = 1000 };
  void *data = NULL, *state_dev = NULL;
  EXPECT_OK(g_v->memory->device_malloc(ctx, 0, N * sizeof(float), &data));
  EXPECT_OK(g_v->memory->device_malloc(ctx, 0, 2 * sizeof(uint64_t), &state_dev));
  const int64_t sizes[2] = {N / 10, 10}, strides[2] = {10, 1};
  const tb_tensor self = {sizeof(tb_tensor), data, TB_DTYPE_FLOAT32, 0, 2, sizes, strides};
  static float eager1[N], eager2[N], got[N];

  /* A random kernel captured with its generator state in device memory draws, at each launch,
   * what an eager call from the state the memory holds then draws. */
  EXPECT_OK(bernoulli(ctx, s, &self, 0.3, (tb_rng_key){42, 100, NULL}));
  EXPECT_OK(g_v->stream->synchronize(ctx, s));
  EXPECT_OK(g_v->memory->copy_d2h(ctx, 0, eager1, data, sizeof eager1));
  EXPECT_OK(bernoulli(ctx, s, &self, 0.3, (tb_rng_key){7, 4100, NULL}));
  EXPECT_OK(g_v->stream->synchronize(ctx, s));
  EXPECT_OK(g_v->memory->copy_d2h(ctx, 0, eager2, data, sizeof eager2));
  EXPECT(memcmp(eager1, eager2, sizeof eager1) != 0, "two generator states drew the same");
  uint64_t state[2] = {42, 0};
  EXPECT_OK(g_v->memory->copy_h2d(ctx, 0, state_dev, state, sizeof state));
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_GLOBAL));
  EXPECT_OK(bernoulli(ctx, s, &self, 0.3, (tb_rng_key){42, 100, (const uint64_t *)state_dev}));
  tb_graph g = NULL;
  EXPECT_OK(gx->capture_end(ctx, s, &g));
  const float *want[2] = {eager1, eager2};
  const uint64_t states[2][2] = {{42, 0}, {7, 4000}};
  for (int run = 0; run < 2; run++) {
    EXPECT_OK(g_v->memory->copy_h2d(ctx, 0, state_dev, states[run], sizeof states[run]));
    EXPECT_OK(g_v->memory->memset_async(ctx, s, data, 0x7f, N * sizeof(float)));
    EXPECT_OK(gx->graph_launch(ctx, g, s));
    EXPECT_OK(g_v->stream->synchronize(ctx, s));
    EXPECT_OK(g_v->memory->copy_d2h(ctx, 0, got, data, sizeof got));
    EXPECT(memcmp(got, want[run], sizeof got) == 0, "launch %d drew other numbers", run);
  }
  EXPECT_OK(gx->graph_destroy(ctx, g));
  scratch_free();

  /* capture_end belongs to the thread that began the capture (unless relaxed): from another
   * one it fails and the capture goes on. */
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_THREAD_LOCAL));
  end_args a = {ctx, gx, s, NULL, TB_OK, ""};
  pthread_t thread;
  pthread_create(&thread, NULL, end_elsewhere, &a);
  pthread_join(thread, NULL);
  EXPECT(a.status == TB_ERROR_INVALID_ARGUMENT && a.graph == NULL &&
             strstr(a.message, "ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD") != NULL,
         "capture_end from another thread: %s (%s)", tb_status_name(a.status), a.message);
  EXPECT(npu_stream_capturing(ctx, s), "the capture ended");
  EXPECT_OK(gx->capture_end(ctx, s, &g));
  EXPECT_OK(gx->graph_destroy(ctx, g));
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_RELAXED));
  pthread_create(&thread, NULL, end_elsewhere, &a);
  pthread_join(thread, NULL);
  EXPECT(a.status == TB_OK && a.graph != NULL, "relaxed: %s (%s)", tb_status_name(a.status),
         a.message);
  EXPECT_OK(gx->graph_destroy(ctx, a.graph));

  /* Host memory host_malloc did not allocate: AscendCL copies it synchronously, which a capture
   * cannot record; host_malloc memory is captured. */
  void *pinned = NULL;
  unsigned char pageable[64] = {0};
  EXPECT_OK(g_v->memory->host_malloc(ctx, 64, &pinned));
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_RELAXED));
  EXPECT_OK(g_v->memory->copy_h2d_async(ctx, s, data, pinned, 64));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "npu: copy_h2d_async: not permitted while stream",
                g_v->memory->copy_h2d_async(ctx, s, data, pageable, 64));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT",
                gx->capture_end(ctx, s, &g));
  EXPECT(g == NULL, "an invalidated capture gave a graph");
  /* In GLOBAL mode the same copy on another stream is an unsafe call: refused, and the capture
   * is invalidated, as by a blocking copy. */
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_GLOBAL));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "copy_d2h_async",
                g_v->memory->copy_d2h_async(ctx, other, pageable, data, 64));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "copy_d2h_async", gx->capture_end(ctx, s, &g));
  EXPECT_OK(g_v->memory->host_free(ctx, pinned));

  /* A graph destroyed while its launches are queued goes when they are done. */
  gate gt = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_GLOBAL));
  EXPECT_OK(g_v->memory->memset_async(ctx, s, data, 1, 64));
  EXPECT_OK(gx->capture_end(ctx, s, &g));
  EXPECT_OK(npu_enter(ctx, 0));
  EXPECT(standin_launch(npu_acl_stream(other), "gate", gate_task, NULL, &gt) == ACL_SUCCESS,
         "launch");
  EXPECT_OK(gx->graph_launch(ctx, g, other));
  EXPECT_OK(gx->graph_destroy(ctx, g));
  EXPECT(!graveyard_empty(ctx), "the graph with a queued launch was not kept");
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "not a live graph", gx->graph_launch(ctx, g, s));
  pthread_create(&thread, NULL, open_later, &gt);
  EXPECT_OK(g_v->device->synchronize(ctx, 0)); /* waits for the launch, then sweeps */
  pthread_join(thread, NULL);
  EXPECT(graveyard_empty(ctx), "the graph stayed in the graveyard");

  /* A stream destroyed while it captures ends the capture; finalize releases the graphs, the
   * graveyard's and the captures left. */
  EXPECT_OK(gx->capture_begin(ctx, other, TB_CAPTURE_GLOBAL));
  EXPECT_OK(g_v->memory->memset_async(ctx, other, data, 2, 64));
  EXPECT_OK(g_v->stream->destroy(ctx, other));
  EXPECT_OK(g_v->stream->create(ctx, 0, 0, &other));
  EXPECT_OK(gx->capture_begin(ctx, other, TB_CAPTURE_GLOBAL));
  EXPECT_OK(g_v->memory->memset_async(ctx, other, data, 3, 64));
  EXPECT_OK(gx->capture_end(ctx, other, &g));
  tb_graph queued = NULL;
  EXPECT_OK(gx->capture_begin(ctx, other, TB_CAPTURE_GLOBAL));
  EXPECT_OK(g_v->memory->memset_async(ctx, other, data, 4, 64));
  EXPECT_OK(gx->capture_end(ctx, other, &queued));
  gt.open = 0;
  EXPECT(standin_launch(npu_acl_stream(s), "gate", gate_task, NULL, &gt) == ACL_SUCCESS, "launch");
  EXPECT_OK(gx->graph_launch(ctx, queued, s));
  EXPECT_OK(gx->graph_destroy(ctx, queued));
  EXPECT_OK(gx->capture_begin(ctx, other, TB_CAPTURE_RELAXED));
  pthread_create(&thread, NULL, open_later, &gt);
  g_v->finalize(ctx); /* g live, queued in the graveyard, other capturing */
  pthread_join(thread, NULL);
}

/* Multi-stream capture (graph.c): a stream that waits for an event recorded in a capture
 * joins it -- its work is recorded into the capture, in host order, and runs at each launch
 * after the work the event marks -- and the capture's misuses fail as CUDA's do. */
static void test_multi_stream_capture(void) {
  g_test = "multi-stream capture";
  const tb_graphs_extension *gx = graphs_of(g_v);
  if (gx == NULL) return;
  tb_context ctx = new_context();
  tb_stream s = NULL, side = NULL, third = NULL, remote = NULL;
  tb_event fork = NULL, join = NULL;
  EXPECT_OK(g_v->stream->create(ctx, 0, 0, &s));
  EXPECT_OK(g_v->stream->create(ctx, 0, 0, &side));
  EXPECT_OK(g_v->stream->create(ctx, 0, 0, &third));
  EXPECT_OK(g_v->stream->create(ctx, 1, 0, &remote));
  EXPECT_OK(g_v->event->create(ctx, 0, 0, &fork));
  EXPECT_OK(g_v->event->create(ctx, 0, 0, &join));
  void *a = NULL, *b = NULL;
  unsigned char got[256];
  EXPECT_OK(g_v->memory->device_malloc(ctx, 0, sizeof got, &a));
  EXPECT_OK(g_v->memory->device_malloc(ctx, 0, sizeof got, &b));
  EXPECT_OK(g_v->memory->memset_async(ctx, s, b, 0, sizeof got));
  EXPECT_OK(g_v->stream->synchronize(ctx, s));

  /* Fork and join: the side stream's copy runs after the memset at each launch. */
  tb_graph g = NULL;
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_GLOBAL));
  EXPECT_OK(g_v->memory->memset_async(ctx, s, a, 0x33, sizeof got));
  EXPECT_OK(g_v->event->record(ctx, fork, s));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "event query", g_v->event->query(ctx, fork));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "event query", gx->capture_end(ctx, s, &g));
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_GLOBAL));
  EXPECT_OK(g_v->memory->memset_async(ctx, s, a, 0x33, sizeof got));
  EXPECT_OK(g_v->event->record(ctx, fork, s));
  EXPECT_OK(g_v->stream->wait_event(ctx, side, fork));
  EXPECT(npu_stream_capturing(ctx, side), "the side stream did not join");
  EXPECT_OK(g_v->memory->copy_d2d_async(ctx, side, 0, b, 0, a, sizeof got));
  EXPECT_OK(g_v->event->record(ctx, join, side));
  EXPECT_OK(g_v->stream->wait_event(ctx, s, join));
  EXPECT_OK(gx->capture_end(ctx, s, &g));
  EXPECT(!npu_stream_capturing(ctx, side), "the side stream still captures");
  EXPECT_OK(g_v->memory->copy_d2h(ctx, 0, got, b, sizeof got));
  EXPECT(got[0] == 0 && got[255] == 0, "the side stream's copy ran at capture");
  EXPECT_OK(gx->graph_launch(ctx, g, third));
  EXPECT_OK(g_v->stream->synchronize(ctx, third));
  EXPECT_OK(g_v->memory->copy_d2h(ctx, 0, got, b, sizeof got));
  EXPECT(got[0] == 0x33 && got[255] == 0x33, "the launch gave 0x%02x", got[0]);
  EXPECT_OK(gx->graph_destroy(ctx, g));
  EXPECT_OK(g_v->event->query(ctx, fork)); /* its capture ended: nothing to wait for */
  EXPECT_OK(g_v->stream->wait_event(ctx, third, fork));
  EXPECT_OK(g_v->memory->memset_async(ctx, side, b, 0x44, sizeof got)); /* its own again */
  EXPECT_OK(g_v->stream->synchronize(ctx, side));
  EXPECT_OK(g_v->memory->copy_d2h(ctx, 0, got, b, sizeof got));
  EXPECT(got[7] == 0x44, "the side stream's own work did not run after the capture");

  /* Not joined back; joined back and given more work; capture_end from the joined stream. */
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_GLOBAL));
  EXPECT_OK(g_v->event->record(ctx, fork, s));
  EXPECT_OK(g_v->stream->wait_event(ctx, side, fork));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "cudaErrorStreamCaptureUnjoined",
                gx->capture_end(ctx, s, &g));
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_GLOBAL));
  EXPECT_OK(g_v->event->record(ctx, fork, s));
  EXPECT_OK(g_v->stream->wait_event(ctx, side, fork));
  EXPECT_OK(g_v->event->record(ctx, join, side));
  EXPECT_OK(g_v->stream->wait_event(ctx, s, join));
  EXPECT_OK(g_v->memory->memset_async(ctx, side, b, 1, sizeof got));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "cudaErrorStreamCaptureUnmatched",
                gx->capture_end(ctx, side, &g));
  EXPECT_STATUS(TB_ERROR_INVALID_ARGUMENT, "capturing already",
                gx->capture_begin(ctx, side, TB_CAPTURE_GLOBAL));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "cudaErrorStreamCaptureUnmatched",
                gx->capture_end(ctx, s, &g)); /* the first refusal's message */

  /* Across captures, across devices, and a joined stream destroyed. */
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_RELAXED));
  EXPECT_OK(gx->capture_begin(ctx, third, TB_CAPTURE_RELAXED));
  EXPECT_OK(g_v->event->record(ctx, fork, s));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "cudaErrorStreamCaptureIsolation",
                g_v->stream->wait_event(ctx, third, fork));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "cudaErrorStreamCaptureIsolation",
                gx->capture_end(ctx, third, &g));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "cudaErrorStreamCaptureIsolation",
                gx->capture_end(ctx, s, &g));
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_RELAXED));
  EXPECT_OK(g_v->event->record(ctx, fork, s));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "another device",
                g_v->stream->wait_event(ctx, remote, fork));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "another device", gx->capture_end(ctx, s, &g));
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_GLOBAL));
  EXPECT_OK(g_v->event->record(ctx, fork, s));
  EXPECT_OK(g_v->stream->wait_event(ctx, side, fork));
  EXPECT_OK(g_v->stream->destroy(ctx, side));
  EXPECT_STATUS(TB_ERROR_NOT_SUPPORTED, "had joined the capture", gx->capture_end(ctx, s, &g));
  /* The origin destroyed while a stream has joined: the joined stream gets its own back. */
  EXPECT_OK(g_v->stream->create(ctx, 0, 0, &side));
  EXPECT_OK(gx->capture_begin(ctx, s, TB_CAPTURE_GLOBAL));
  EXPECT_OK(g_v->event->record(ctx, fork, s));
  EXPECT_OK(g_v->stream->wait_event(ctx, side, fork));
  EXPECT_OK(g_v->stream->destroy(ctx, s));
  EXPECT(!npu_stream_capturing(ctx, side), "the joined stream outlived its capture");
  EXPECT_OK(g_v->memory->memset_async(ctx, side, b, 0x55, sizeof got));
  EXPECT_OK(g_v->stream->synchronize(ctx, side));
  EXPECT_OK(g_v->memory->copy_d2h(ctx, 0, got, b, sizeof got));
  EXPECT(got[9] == 0x55, "the joined stream's own work did not run");

  EXPECT_OK(g_v->event->destroy(ctx, fork));
  EXPECT_OK(g_v->event->destroy(ctx, join));
  EXPECT_OK(g_v->memory->device_free(ctx, 0, a));
  EXPECT_OK(g_v->memory->device_free(ctx, 0, b));
  EXPECT_OK(g_v->stream->destroy(ctx, side));
  EXPECT_OK(g_v->stream->destroy(ctx, third));
  EXPECT_OK(g_v->stream->destroy(ctx, remote));
  g_v->finalize(ctx);
}

int main(void) {
  setenv("TB_ASCEND_STANDIN_DEVICES", "2", 1);
  setenv("TB_ASCEND_STANDIN_MEMORY", "256M", 1);
  unsetenv("TB_ASCEND_STANDIN_PEER");
  g_v = tb_vendor_get(TB_ABI_VERSION_MAJOR, NULL);
  if (g_v == NULL || g_v->init == NULL) {
    fprintf(stderr, "no npu vendor table\n");
    return 1;
  }
  test_init_is_cheap();
  test_contexts();
  test_errors();
  test_faults();
  test_streams_and_events();
  test_peer_copies();
  test_graphs();
  test_multi_stream_capture();
  if (g_failures != 0) {
    fprintf(stderr, "npu runtime test: %d failures\n", g_failures);
    return 1;
  }
  printf("npu runtime test: all checks passed\n");
  return 0;
}
