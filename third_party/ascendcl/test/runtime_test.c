/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The stand-in runtime's test: each AscendCL call of libascendcl.so with its documented
 * results and error codes, the sticky fault contract of standin.h, stream capture into model
 * runtime instances (acl_mdl.h), the operator library's entry points, and host access to
 * device memory (a forked child that touches a device pointer dies of SIGSEGV).  Plain C, no
 * framework: each test function checks with EXPECT_* and the program exits 1 when any check failed.
 */
#define _GNU_SOURCE

#include <acl/acl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* The call returns `expected`; on a mismatch, prints the runtime's message. */
#define EXPECT_ACL(expected, call)                                                          \
  do {                                                                                      \
    aclError got_ = (call);                                                                 \
    if (got_ != (expected)) {                                                               \
      const char *msg_ = aclGetRecentErrMsg();                                              \
      fprintf(stderr, "%s:%d: [%s] %s returned %d, expected %d (%s)\n", __FILE__, __LINE__, \
              g_test, #call, got_, (int)(expected), msg_ ? msg_ : "no message");            \
      g_failures++;                                                                         \
    }                                                                                       \
  } while (0)

#define EXPECT_OK(call) EXPECT_ACL(ACL_SUCCESS, call)

/* The call fails with `expected` and aclGetRecentErrMsg names `text`. */
#define EXPECT_FAIL(expected, text, call)                                                         \
  do {                                                                                            \
    (void)aclGetRecentErrMsg();                                                                   \
    aclError got_ = (call);                                                                       \
    const char *msg_ = aclGetRecentErrMsg();                                                      \
    if (got_ != (expected) || msg_ == NULL || strstr(msg_, (text)) == NULL) {                     \
      fprintf(stderr, "%s:%d: [%s] %s returned %d (\"%s\"), expected %d with \"%s\"\n", __FILE__, \
              __LINE__, g_test, #call, got_, msg_ ? msg_ : "(null)", (int)(expected), (text));    \
      g_failures++;                                                                               \
    }                                                                                             \
  } while (0)

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- tasks for standin_launch ---- */

/* A task that blocks its stream until the gate opens. */
typedef struct gate {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int open;
} gate;

static void gate_init(gate *g) {
  pthread_mutex_init(&g->mutex, NULL);
  pthread_cond_init(&g->cond, NULL);
  g->open = 0;
}

static void gate_task(void *arg) {
  gate *g = arg;
  pthread_mutex_lock(&g->mutex);
  while (!g->open) pthread_cond_wait(&g->cond, &g->mutex);
  pthread_mutex_unlock(&g->mutex);
}

static void gate_open(gate *g) {
  pthread_mutex_lock(&g->mutex);
  g->open = 1;
  pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->mutex);
}

static void *gate_open_later(void *arg) {
  sleep_ms(50);
  gate_open(arg);
  return NULL;
}

typedef struct order_log {
  _Atomic int count;
  int values[256];
} order_log;

typedef struct order_item {
  order_log *log;
  int value;
} order_item;

static void order_task(void *arg) {
  order_item *item = arg;
  int at = atomic_fetch_add(&item->log->count, 1);
  if (at < 256) item->log->values[at] = item->value;
}

static _Atomic int g_released;
static void count_release(void *arg) {
  (void)arg;
  atomic_fetch_add(&g_released, 1);
}

static _Atomic int g_ran;
static void count_run(void *arg) {
  (void)arg;
  atomic_fetch_add(&g_ran, 1);
}

static void fail_task(void *arg) { standin_task_fail("index %d is out of range", *(int *)arg); }

static void fail_twice_task(void *arg) {
  (void)arg;
  standin_task_fail("first failure");
  standin_task_fail("second failure");
}

static void sleep_task(void *arg) { sleep_ms(*(int *)arg); }

/* Writes through the shadow address of a device range, as an operator would. */
typedef struct fill_args {
  void *device;
  size_t bytes;
  unsigned char value;
} fill_args;

static void fill_task(void *arg) {
  fill_args *f = arg;
  void *host = standin_device_to_host(f->device, f->bytes);
  if (host == NULL) {
    standin_task_fail("fill: %p is not device memory", f->device);
    return;
  }
  memset(host, f->value, f->bytes);
}

/* ---- tests ---- */

static void test_before_init(void) {
  g_test = "before_init";
  EXPECT(aclGetRecentErrMsg() == NULL, "no message before any call");
  uint32_t count = 99;
  EXPECT_OK(aclrtGetDeviceCount(&count)); /* needs no aclInit */
  EXPECT(count == 2, "count %u", count);
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "count is NULL", aclrtGetDeviceCount(NULL));
  EXPECT_FAIL(ACL_ERROR_UNINITIALIZE, "aclInit", aclrtSetDevice(0));
  void *p = NULL;
  EXPECT_FAIL(ACL_ERROR_UNINITIALIZE, "aclrtMalloc",
              aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_FAIL(ACL_ERROR_REPEAT_FINALIZE, "not initialized", aclFinalize());
  EXPECT(aclrtGetSocName() == NULL, "no SoC name before aclInit");
  /* Messages accumulate newest first, and reading them clears them. */
  (void)aclGetRecentErrMsg();
  EXPECT_ACL(ACL_ERROR_UNINITIALIZE, aclrtSetDevice(0));
  EXPECT_ACL(ACL_ERROR_UNINITIALIZE, aclrtCreateStream(NULL));
  const char *both = aclGetRecentErrMsg();
  EXPECT(both != NULL && strstr(both, "aclrtCreateStream") != NULL &&
             strstr(both, "aclrtSetDevice") != NULL &&
             strstr(both, "aclrtCreateStream") < strstr(both, "aclrtSetDevice"),
         "messages not newest first: %s", both ? both : "(null)");
  EXPECT(aclGetRecentErrMsg() == NULL, "aclGetRecentErrMsg did not clear");
  /* A bad environment fails aclInit and the count. */
  setenv("TB_ASCEND_STANDIN_DEVICES", "seventeen", 1);
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "TB_ASCEND_STANDIN_DEVICES", aclrtGetDeviceCount(&count));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "TB_ASCEND_STANDIN_DEVICES", aclInit(NULL));
  setenv("TB_ASCEND_STANDIN_DEVICES", "2", 1);
  setenv("TB_ASCEND_STANDIN_MEMORY", "12Q", 1);
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "TB_ASCEND_STANDIN_MEMORY", aclInit(NULL));
  setenv("TB_ASCEND_STANDIN_MEMORY", "64M", 1);
  EXPECT(aclDataTypeSize(ACL_FLOAT) == 4 && aclDataTypeSize(ACL_BF16) == 2 &&
             aclDataTypeSize(ACL_INT64) == 8 && aclDataTypeSize(ACL_BOOL) == 1 &&
             aclDataTypeSize(ACL_COMPLEX128) == 16 && aclDataTypeSize(ACL_STRING) == 0 &&
             aclDataTypeSize(ACL_DT_UNDEFINED) == 0,
         "aclDataTypeSize");
}

static void test_init(void) {
  g_test = "init";
  EXPECT_FAIL(ACL_ERROR_INVALID_FILE, "/no/such/acl.json", aclInit("/no/such/acl.json"));
  char path[] = "/tmp/ascendcl-test-XXXXXX";
  int fd = mkstemp(path);
  EXPECT(fd >= 0, "mkstemp");
  if (fd >= 0) {
    EXPECT(write(fd, "[1]", 3) == 3, "write");
    close(fd);
    EXPECT_FAIL(ACL_ERROR_INVALID_FILE, "JSON object", aclInit(path));
    FILE *file = fopen(path, "w");
    fputs("  {\"err_msg_mode\": \"0\"}\n", file);
    fclose(file);
    EXPECT_OK(aclInit(path));
    unlink(path);
  }
  EXPECT_FAIL(ACL_ERROR_REPEAT_INITIALIZE, "initialized already", aclInit(NULL));
  EXPECT(aclrtGetSocName() != NULL && strcmp(aclrtGetSocName(), "Ascend910B-standin") == 0,
         "SoC name");
}

static void *other_thread_device(void *arg) {
  int32_t *out = arg;
  *out = -2;
  if (aclrtGetDevice(out) != ACL_ERROR_RT_CONTEXT_NULL) return NULL;
  (void)aclGetRecentErrMsg();
  if (aclrtSetDevice(1) != ACL_SUCCESS) return NULL;
  if (aclrtGetDevice(out) != ACL_SUCCESS) *out = -3;
  return NULL;
}

static void test_devices(void) {
  g_test = "devices";
  int32_t device = -1;
  EXPECT_FAIL(ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice first", aclrtGetDevice(&device));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_DEVICEID, "out of range", aclrtSetDevice(2));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_DEVICEID, "out of range", aclrtSetDevice(-1));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_DEVICEID, "out of range", aclrtResetDevice(5));
  EXPECT_FAIL(ACL_ERROR_RT_CONTEXT_NULL, "no context", aclrtResetDevice(1));
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "NULL", aclrtGetDevice(NULL));
  EXPECT_OK(aclrtGetDevice(&device));
  EXPECT(device == 0, "current device %d", device);
  /* The current device is per thread. */
  pthread_t thread;
  int32_t theirs = -1;
  pthread_create(&thread, NULL, other_thread_device, &theirs);
  pthread_join(thread, NULL);
  EXPECT(theirs == 1, "the other thread's device: %d", theirs);
  EXPECT_OK(aclrtGetDevice(&device));
  EXPECT(device == 0, "current device after the other thread set 1: %d", device);
  /* The other thread set device 1 once: one reset releases its context; a thread whose device
   * was reset has no current device. */
  EXPECT_OK(aclrtSetDevice(1));
  EXPECT_OK(aclrtResetDevice(1));
  EXPECT_OK(aclrtGetDevice(&device)); /* still set once */
  EXPECT(device == 1, "device %d", device);
  EXPECT_OK(aclrtResetDevice(1));
  EXPECT_FAIL(ACL_ERROR_RT_CONTEXT_NULL, "was reset", aclrtGetDevice(&device));
  EXPECT_FAIL(ACL_ERROR_RT_CONTEXT_NULL, "no context", aclrtResetDevice(1));
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_OK(aclrtSynchronizeDevice());
}

static void test_memory(void) {
  g_test = "memory";
  EXPECT_OK(aclrtSetDevice(0));
  void *a = NULL, *b = NULL;
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "size is 0", aclrtMalloc(&a, 0, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "devPtr is NULL",
              aclrtMalloc(NULL, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "huge pages",
              aclrtMalloc(&a, 64, ACL_MEM_MALLOC_HUGE_ONLY));
  EXPECT_FAIL(ACL_ERROR_RT_MEMORY_ALLOCATION, "exceed",
              aclrtMalloc(&a, (size_t)1 << 40, ACL_MEM_MALLOC_HUGE_FIRST));
  size_t free0 = 0, total = 0;
  EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free0, &total));
  EXPECT(total == (64u << 20) && free0 == total, "HBM %zu of %zu free", free0, total);
  EXPECT_OK(aclrtMalloc(&a, 100, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(aclrtMalloc(&b, 4096, ACL_MEM_MALLOC_NORMAL_ONLY));
  EXPECT(((uintptr_t)a % 64) == 0 && ((uintptr_t)b % 64) == 0, "alignment %p %p", a, b);
  size_t free1 = 0;
  EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free1, &total));
  /* 100 -> 128 + 32 -> 192; 4096 -> 4128 -> 4160 (aclrtMalloc.md's rounding, 64-aligned). */
  EXPECT(free0 - free1 == 192 + 4160, "used %zu", free0 - free1);
  size_t ddr_free = 1, ddr_total = 1;
  EXPECT_OK(aclrtGetMemInfo(ACL_DDR_MEM, &ddr_free, &ddr_total));
  EXPECT(ddr_free == 0 && ddr_total == 0, "DDR %zu/%zu", ddr_free, ddr_total);
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "unknown attribute",
              aclrtGetMemInfo((aclrtMemAttr)99, &free1, &total));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "NULL", aclrtGetMemInfo(ACL_HBM_MEM, NULL, &total));

  /* Copies: host <-> device <-> device, with the kind checked against the pointers. */
  unsigned char in[4096], out[4096], host[4096];
  for (int i = 0; i < 4096; i++) in[i] = (unsigned char)(i * 7 + 1);
  memset(out, 0, sizeof out);
  EXPECT_OK(aclrtMemcpy(b, 4096, in, 4096, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_OK(aclrtMemcpy(a, 100, (char *)b + 8, 100, ACL_MEMCPY_DEVICE_TO_DEVICE));
  EXPECT_OK(aclrtMemcpy(out, 100, a, 100, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT(memcmp(out, in + 8, 100) == 0, "device-to-device bytes");
  EXPECT_OK(aclrtMemcpy(out, 4096, b, 4096, ACL_MEMCPY_DEFAULT));
  EXPECT(memcmp(out, in, 4096) == 0, "ACL_MEMCPY_DEFAULT bytes");
  EXPECT_OK(aclrtMemcpy(host, 16, in, 16, ACL_MEMCPY_HOST_TO_HOST));
  EXPECT(memcmp(host, in, 16) == 0, "host-to-host bytes");
  EXPECT_OK(aclrtMemcpy(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE)); /* count 0 */
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "the destination",
              aclrtMemcpy(out, 64, b, 64, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "is host memory",
              aclrtMemcpy(out, 64, in, 64, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "is device memory",
              aclrtMemcpy(b, 64, a, 64, ACL_MEMCPY_HOST_TO_HOST));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "is host memory",
              aclrtMemcpy(b, 64, in, 64, ACL_MEMCPY_DEVICE_TO_DEVICE));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "exceeds destMax",
              aclrtMemcpy(b, 16, in, 64, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "dst is NULL",
              aclrtMemcpy(NULL, 64, in, 64, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "unknown aclrtMemcpyKind",
              aclrtMemcpy(b, 64, in, 64, (aclrtMemcpyKind)9));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "not inside one live allocation",
              aclrtMemcpy(out, 200, a, 200, ACL_MEMCPY_DEVICE_TO_HOST)); /* past its end */

  /* Operators' address translation. */
  EXPECT(standin_is_device_range(a, 100) && standin_is_device_range((char *)a + 100, 0) &&
             !standin_is_device_range(a, 101) && !standin_is_device_range(in, 1),
         "standin_is_device_range");
  EXPECT(standin_device_to_host(b, 4096) != NULL && standin_device_to_host(b, 4096) != b &&
             standin_device_to_host(in, 16) == NULL,
         "standin_device_to_host");
  EXPECT(memcmp(standin_device_to_host(b, 16), in, 16) == 0, "the shadow holds the bytes");

  /* Frees. */
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "devPtr is NULL", aclrtFree(NULL));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "not device memory", aclrtFree(in));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "inside a block", aclrtFree((char *)b + 64));
  EXPECT_OK(aclrtFree(a));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "freed already", aclrtFree(a));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "not inside one live allocation",
              aclrtMemcpy(out, 16, a, 16, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT(!standin_is_device_range(a, 1), "a freed block is not device memory");
  EXPECT_OK(aclrtFree(b));
  size_t free2 = 0;
  EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM_NORMAL, &free2, &total));
  EXPECT(free2 == free0, "free after freeing: %zu, before: %zu", free2, free0);
  /* Fill the device, then free: the free list coalesces back into one range. */
  void *blocks[64];
  int n = 0;
  while (n < 64 && aclrtMalloc(&blocks[n], 1u << 20, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS) n++;
  const char *oom = aclGetRecentErrMsg();
  EXPECT(n == 63 && oom != NULL && strstr(oom, "out of device memory") != NULL,
         "%d blocks of 1 MiB in 64 MiB (%s)", n, oom ? oom : "no message");
  for (int i = 0; i < n; i += 2) EXPECT_OK(aclrtFree(blocks[i]));
  for (int i = 1; i < n; i += 2) EXPECT_OK(aclrtFree(blocks[i]));
  EXPECT_OK(aclrtMalloc(&a, (64u << 20) - 64, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(aclrtFree(a));

  /* Page-locked host memory. */
  void *pinned = NULL;
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "size is 0", aclrtMallocHost(&pinned, 0));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "hostPtr is NULL", aclrtMallocHost(NULL, 16));
  EXPECT_OK(aclrtMallocHost(&pinned, 1000));
  EXPECT(((uintptr_t)pinned % 64) == 0, "pinned alignment");
  memset(pinned, 3, 1000); /* host-addressable */
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "aclrtMallocHost returned",
              aclrtFreeHost((char *)pinned + 8));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "hostPtr is NULL", aclrtFreeHost(NULL));
  EXPECT_OK(aclrtFreeHost(pinned));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "aclrtMallocHost returned", aclrtFreeHost(pinned));
}

static void test_peer(void) {
  g_test = "peer";
  void *on0 = NULL, *on1 = NULL;
  unsigned char in[256], out[256];
  for (int i = 0; i < 256; i++) in[i] = (unsigned char)(255 - i);
  EXPECT_OK(aclrtSetDevice(1));
  EXPECT_OK(aclrtMalloc(&on1, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_OK(aclrtMalloc(&on0, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(aclrtMemcpy(on0, 256, in, 256, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_FAIL(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtDeviceEnablePeerAccess",
              aclrtMemcpy(on1, 256, on0, 256, ACL_MEMCPY_DEVICE_TO_DEVICE));
  int32_t can = -1;
  EXPECT_OK(aclrtDeviceCanAccessPeer(&can, 0, 1));
  EXPECT(can == 1, "can access peer: %d", can);
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "both 0", aclrtDeviceCanAccessPeer(&can, 0, 0));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "NULL", aclrtDeviceCanAccessPeer(NULL, 0, 1));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_DEVICEID, "out of range", aclrtDeviceCanAccessPeer(&can, 0, 7));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "reserved", aclrtDeviceEnablePeerAccess(1, 1));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "current device", aclrtDeviceEnablePeerAccess(0, 0));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_DEVICEID, "out of range", aclrtDeviceEnablePeerAccess(3, 0));
  EXPECT_OK(aclrtDeviceEnablePeerAccess(1, 0));
  EXPECT_OK(aclrtMemcpy(on1, 256, on0, 256, ACL_MEMCPY_DEVICE_TO_DEVICE));
  /* One direction only. */
  EXPECT_FAIL(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "from device 1 to device 0",
              aclrtMemcpy(on0, 256, on1, 256, ACL_MEMCPY_DEVICE_TO_DEVICE));
  EXPECT_OK(aclrtMemcpy(out, 256, on1, 256, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT(memcmp(in, out, 256) == 0, "bytes across devices");
  EXPECT_OK(aclrtFree(on0));
  EXPECT_OK(aclrtFree(on1));
  EXPECT_OK(aclrtSetDevice(1));
  EXPECT_OK(aclrtResetDevice(1));
  EXPECT_OK(aclrtResetDevice(1)); /* both sets of device 1 matched: its context is gone */
  EXPECT_OK(aclrtSetDevice(0));
}

static void test_streams(void) {
  g_test = "streams";
  EXPECT_OK(aclrtSetDevice(0));
  aclrtStream s = NULL;
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "stream is NULL", aclrtCreateStream(NULL));
  EXPECT_OK(aclrtCreateStream(&s));
  /* Tasks run in order, on the stream's worker. */
  order_log log;
  atomic_init(&log.count, 0);
  order_item items[100];
  for (int i = 0; i < 100; i++) {
    items[i] = (order_item){&log, i};
    EXPECT_OK(standin_launch(s, "order", order_task, NULL, &items[i]));
  }
  EXPECT_OK(aclrtSynchronizeStream(s));
  int in_order = atomic_load(&log.count) == 100;
  for (int i = 0; in_order && i < 100; i++) in_order = log.values[i] == i;
  EXPECT(in_order, "tasks ran out of order (%d ran)", atomic_load(&log.count));
  /* Query while a task blocks the stream. */
  gate g;
  gate_init(&g);
  aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
  EXPECT_OK(standin_launch(s, "gate", gate_task, NULL, &g));
  EXPECT_OK(aclrtStreamQuery(s, &status));
  EXPECT(status == ACL_STREAM_STATUS_NOT_READY, "status %d while blocked", (int)status);
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "status is NULL", aclrtStreamQuery(s, NULL));
  gate_open(&g);
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT_OK(aclrtStreamQuery(s, &status));
  EXPECT(status == ACL_STREAM_STATUS_COMPLETE, "status %d after synchronize", (int)status);
  /* The default stream: NULL. */
  atomic_store(&g_ran, 0);
  EXPECT_OK(standin_launch(NULL, "default", count_run, count_release, NULL));
  EXPECT_OK(aclrtSynchronizeStream(NULL));
  EXPECT(atomic_load(&g_ran) == 1, "the default stream ran %d tasks", atomic_load(&g_ran));
  EXPECT_OK(aclrtStreamQuery(NULL, &status));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "run is NULL", standin_launch(s, "x", NULL, NULL, NULL));
  /* Destroying waits for the stream's work. */
  gate_init(&g);
  pthread_t opener;
  pthread_create(&opener, NULL, gate_open_later, &g);
  atomic_store(&g_ran, 0);
  EXPECT_OK(standin_launch(s, "gate", gate_task, NULL, &g));
  EXPECT_OK(standin_launch(s, "after", count_run, NULL, NULL));
  EXPECT_OK(aclrtDestroyStream(s));
  EXPECT(atomic_load(&g_ran) == 1, "aclrtDestroyStream returned before the stream's work ran");
  pthread_join(opener, NULL);
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live stream", aclrtDestroyStream(s));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live stream", aclrtSynchronizeStream(s));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live stream",
              standin_launch(s, "x", count_run, NULL, NULL));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "default stream", aclrtDestroyStream(NULL));
  /* Enqueueing calls need a stream of the current device. */
  aclrtStream on1 = NULL;
  EXPECT_OK(aclrtSetDevice(1));
  EXPECT_OK(aclrtCreateStream(&on1));
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_FAIL(ACL_ERROR_RT_STREAM_CONTEXT, "aclrtSetDevice(1)",
              standin_launch(on1, "x", count_run, NULL, NULL));
  EXPECT_FAIL(ACL_ERROR_RT_STREAM_CONTEXT, "belongs to device 1", aclrtDestroyStream(on1));
  EXPECT_OK(aclrtSynchronizeStream(on1)); /* synchronising is allowed from any device */
  EXPECT_OK(aclrtSetDevice(1));
  EXPECT_OK(aclrtDestroyStream(on1));
  EXPECT_OK(aclrtResetDevice(1));
  EXPECT_OK(aclrtResetDevice(1)); /* device 1 was set twice */
  EXPECT_OK(aclrtSetDevice(0));
  /* At most 1984 streams per device, the default one included. */
  static aclrtStream many[2000];
  int created = 0;
  while (created < 2000 && aclrtCreateStream(&many[created]) == ACL_SUCCESS) created++;
  const char *why = aclGetRecentErrMsg();
  EXPECT(created == 1983 && why != NULL && strstr(why, "1984") != NULL, "%d streams (%s)", created,
         why ? why : "no message");
  for (int i = 0; i < created; i++) EXPECT_OK(aclrtDestroyStream(many[i]));
}

static void test_async_memory(void) {
  g_test = "async_memory";
  EXPECT_OK(aclrtSetDevice(0));
  aclrtStream s = NULL;
  EXPECT_OK(aclrtCreateStream(&s));
  void *d = NULL, *pinned = NULL;
  EXPECT_OK(aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(aclrtMallocHost(&pinned, 4096));
  unsigned char pageable[4096];
  /* Pinned memory: the copy is only enqueued. */
  gate g;
  gate_init(&g);
  memset(pinned, 0x11, 4096);
  EXPECT_OK(standin_launch(s, "gate", gate_task, NULL, &g));
  EXPECT_OK(aclrtMemsetAsync(d, 4096, 0x1234, 4096, s)); /* low byte: 0x34 */
  EXPECT_OK(aclrtMemcpyAsync(pinned, 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s));
  EXPECT(((unsigned char *)pinned)[0] == 0x11, "the pinned copy ran before the stream got there");
  gate_open(&g);
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(((unsigned char *)pinned)[0] == 0x34 && ((unsigned char *)pinned)[4095] == 0x34,
         "memset then copy: %#x", ((unsigned char *)pinned)[0]);
  /* Pageable memory: the call returns once the copy is done. */
  gate_init(&g);
  pthread_t opener;
  memset(pageable, 0, sizeof pageable);
  EXPECT_OK(standin_launch(s, "gate", gate_task, NULL, &g));
  pthread_create(&opener, NULL, gate_open_later, &g);
  EXPECT_OK(aclrtMemcpyAsync(pageable, 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s));
  EXPECT(pageable[100] == 0x34, "the pageable copy returned before it ran");
  pthread_join(opener, NULL);
  memset(pageable, 0x56, sizeof pageable);
  EXPECT_OK(aclrtMemcpyAsync(d, 4096, pageable, 4096, ACL_MEMCPY_HOST_TO_DEVICE, NULL));
  EXPECT_OK(aclrtMemcpy(pinned, 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT(((unsigned char *)pinned)[7] == 0x56, "host-to-device on the default stream");
  EXPECT_OK(aclrtMemcpyAsync(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE, s)); /* count 0 */
  /* Errors. */
  EXPECT_FAIL(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "host-to-host",
              aclrtMemcpyAsync(pageable, 16, pinned, 16, ACL_MEMCPY_HOST_TO_HOST, s));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "is host memory",
              aclrtMemcpyAsync(pageable, 16, pinned, 16, ACL_MEMCPY_DEVICE_TO_HOST, s));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live stream",
              aclrtMemcpyAsync(d, 16, pinned, 16, ACL_MEMCPY_HOST_TO_DEVICE, (aclrtStream)pinned));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "exceeds maxCount", aclrtMemsetAsync(d, 16, 0, 32, s));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "devPtr is NULL", aclrtMemsetAsync(NULL, 16, 0, 16, s));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "neither device memory",
              aclrtMemsetAsync(pageable, 16, 0, 16, s));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "not inside one live allocation",
              aclrtMemsetAsync(d, 8192, 0, 8192, s));
  EXPECT_OK(aclrtMemsetAsync(pinned, 4096, 0x77, 4096, s)); /* aclrtMallocHost memory */
  EXPECT_OK(aclrtMemsetAsync(d, 0, 0, 0, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(((unsigned char *)pinned)[9] == 0x77, "memset of pinned memory");
  /* Memory of another device than the stream's. */
  void *on1 = NULL;
  EXPECT_OK(aclrtSetDevice(1));
  EXPECT_OK(aclrtMalloc(&on1, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "the stream to device 0",
              aclrtMemsetAsync(on1, 64, 0, 64, s));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "moves memory of device 1",
              aclrtMemcpyAsync(on1, 64, pinned, 64, ACL_MEMCPY_HOST_TO_DEVICE, s));
  EXPECT_OK(aclrtFree(on1));
  EXPECT_OK(aclrtSetDevice(1));
  EXPECT_OK(aclrtResetDevice(1));
  EXPECT_OK(aclrtResetDevice(1)); /* device 1 was set twice */
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_OK(aclrtFree(d));
  EXPECT_OK(aclrtFreeHost(pinned));
  EXPECT_OK(aclrtDestroyStream(s));
}

static void test_events(void) {
  g_test = "events";
  EXPECT_OK(aclrtSetDevice(0));
  aclrtStream a = NULL, b = NULL;
  EXPECT_OK(aclrtCreateStream(&a));
  EXPECT_OK(aclrtCreateStream(&b));
  aclrtEvent e = NULL, timed = NULL, plain = NULL;
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "event is NULL",
              aclrtCreateEventWithFlag(NULL, ACL_EVENT_SYNC));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "unknown flag", aclrtCreateEventWithFlag(&e, 0x100));
  EXPECT_OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  EXPECT_OK(aclrtCreateEventWithFlag(&timed, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE));
  EXPECT_OK(aclrtCreateEventWithFlag(&plain, 0));
  /* Never recorded: NOT_READY to a query, nothing to wait for. */
  aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_COMPLETE;
  EXPECT_OK(aclrtQueryEventStatus(e, &status));
  EXPECT(status == ACL_EVENT_RECORDED_STATUS_NOT_READY, "never recorded: %d", (int)status);
  EXPECT_OK(aclrtSynchronizeEvent(e));
  EXPECT_OK(aclrtStreamWaitEvent(b, e));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "status is NULL", aclrtQueryEventStatus(e, NULL));
  /* A wait orders b's later work after a's recorded work. */
  gate g;
  gate_init(&g);
  order_log log;
  atomic_init(&log.count, 0);
  order_item first = {&log, 1}, second = {&log, 2};
  EXPECT_OK(standin_launch(a, "gate", gate_task, NULL, &g));
  EXPECT_OK(standin_launch(a, "first", order_task, NULL, &first));
  EXPECT_OK(aclrtRecordEvent(e, a));
  EXPECT_OK(aclrtStreamWaitEvent(b, e));
  EXPECT_OK(standin_launch(b, "second", order_task, NULL, &second));
  EXPECT_OK(aclrtQueryEventStatus(e, &status));
  EXPECT(status == ACL_EVENT_RECORDED_STATUS_NOT_READY, "recorded behind a gate: %d", (int)status);
  /* Recording again does not change what the enqueued wait waits for. */
  EXPECT_OK(aclrtRecordEvent(e, b));
  sleep_ms(20);
  EXPECT(atomic_load(&log.count) == 0, "b ran past its wait");
  gate_open(&g);
  EXPECT_OK(aclrtSynchronizeEvent(e));
  EXPECT_OK(aclrtSynchronizeStream(a));
  EXPECT(atomic_load(&log.count) == 2 && log.values[0] == 1 && log.values[1] == 2,
         "order across streams: %d tasks", atomic_load(&log.count));
  EXPECT_OK(aclrtQueryEventStatus(e, &status));
  EXPECT(status == ACL_EVENT_RECORDED_STATUS_COMPLETE, "after synchronize: %d", (int)status);
  /* Waits need ACL_EVENT_SYNC. */
  EXPECT_OK(aclrtRecordEvent(plain, a));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "ACL_EVENT_SYNC", aclrtStreamWaitEvent(b, plain));
  /* Timing. */
  aclrtEvent end = NULL;
  EXPECT_OK(aclrtCreateEventWithFlag(&end, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE));
  float ms = -1;
  EXPECT_FAIL(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, "never recorded",
              aclrtEventElapsedTime(&ms, timed, end));
  int sleep_for = 30;
  EXPECT_OK(aclrtRecordEvent(timed, a));
  EXPECT_OK(standin_launch(a, "sleep", sleep_task, NULL, &sleep_for));
  EXPECT_OK(aclrtRecordEvent(end, a));
  EXPECT_FAIL(ACL_ERROR_RT_EVENT_NOT_COMPLETE, "not completed",
              aclrtEventElapsedTime(&ms, timed, end));
  EXPECT_OK(aclrtSynchronizeStream(a));
  EXPECT_OK(aclrtEventElapsedTime(&ms, timed, end));
  EXPECT(ms >= 29.0f && ms < 1000.0f, "elapsed %f ms for a 30 ms task", (double)ms);
  EXPECT_FAIL(ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL, "before the start",
              aclrtEventElapsedTime(&ms, end, timed));
  EXPECT_FAIL(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, "without ACL_EVENT_TIME_LINE",
              aclrtEventElapsedTime(&ms, timed, e));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "ms is NULL", aclrtEventElapsedTime(NULL, timed, end));
  /* Events and streams of another device. */
  aclrtStream on1 = NULL;
  aclrtEvent event1 = NULL;
  EXPECT_OK(aclrtSetDevice(1));
  EXPECT_OK(aclrtCreateStream(&on1));
  EXPECT_OK(aclrtCreateEventWithFlag(&event1, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE));
  EXPECT_FAIL(ACL_ERROR_RESOURCE_NOT_MATCH, "device 0, the stream to device 1",
              aclrtRecordEvent(e, on1));
  EXPECT_OK(aclrtRecordEvent(event1, on1));
  EXPECT_OK(aclrtSynchronizeStream(on1));
  EXPECT_FAIL(ACL_ERROR_RESOURCE_NOT_MATCH, "devices 0 and 1",
              aclrtEventElapsedTime(&ms, timed, event1));
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_FAIL(ACL_ERROR_RT_STREAM_CONTEXT, "current device is 0", aclrtRecordEvent(event1, on1));
  EXPECT_OK(aclrtStreamWaitEvent(a, event1)); /* waits may cross devices */
  EXPECT_OK(aclrtSynchronizeStream(a));
  /* Destroying an event whose record is pending returns at once; its waits still complete. */
  gate_init(&g);
  EXPECT_OK(standin_launch(a, "gate", gate_task, NULL, &g));
  EXPECT_OK(aclrtRecordEvent(e, a));
  EXPECT_OK(aclrtStreamWaitEvent(b, e));
  EXPECT_OK(aclrtDestroyEvent(e));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live event", aclrtQueryEventStatus(e, &status));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live event", aclrtDestroyEvent(e));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live event", aclrtRecordEvent(a, a));
  gate_open(&g);
  EXPECT_OK(aclrtSynchronizeStream(b));
  EXPECT_OK(aclrtDestroyEvent(timed));
  EXPECT_OK(aclrtDestroyEvent(end));
  EXPECT_OK(aclrtDestroyEvent(plain));
  /* At most 65536 ACL_EVENT_SYNC events per device. */
  static aclrtEvent many[65537];
  int created = 0;
  while (created < 65537 &&
         aclrtCreateEventWithFlag(&many[created], ACL_EVENT_SYNC) == ACL_SUCCESS) {
    created++;
  }
  const char *why = aclGetRecentErrMsg();
  EXPECT(created == 65536 && why != NULL && strstr(why, "65536") != NULL, "%d events (%s)", created,
         why ? why : "no message");
  EXPECT_OK(aclrtCreateEventWithFlag(&plain, ACL_EVENT_TIME_LINE)); /* not counted */
  EXPECT_OK(aclrtDestroyEvent(plain));
  for (int i = 0; i < created; i++) EXPECT_OK(aclrtDestroyEvent(many[i]));
  EXPECT_OK(aclrtDestroyStream(a));
  EXPECT_OK(aclrtDestroyStream(b));
  EXPECT_OK(aclrtSetDevice(1));
  EXPECT_OK(aclrtResetDevice(1));
  EXPECT_OK(aclrtResetDevice(1)); /* the last of two sets: releases on1 and event1 with it */
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live stream", aclrtSynchronizeStream(on1));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live event", aclrtSynchronizeEvent(event1));
}

static void test_faults(void) {
  g_test = "faults";
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_OK(aclrtSetDevice(0)); /* a second reference: the reset below keeps the context */
  aclrtStream s = NULL, other = NULL;
  aclrtEvent e = NULL;
  void *d = NULL;
  unsigned char host[256];
  EXPECT_OK(aclrtCreateStream(&s));
  EXPECT_OK(aclrtCreateStream(&other));
  EXPECT_OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  EXPECT_OK(aclrtMalloc(&d, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  /* Outside a task, standin_task_fail faults nothing. */
  standin_task_fail("stray %d", 1);
  const char *stray = aclGetRecentErrMsg();
  EXPECT(stray != NULL && strstr(stray, "outside a running task") != NULL, "stray: %s",
         stray ? stray : "(null)");
  int index = 7;
  atomic_store(&g_ran, 0);
  atomic_store(&g_released, 0);
  gate g;
  gate_init(&g);
  EXPECT_OK(standin_launch(s, "gate", gate_task, NULL, &g));
  EXPECT_OK(standin_launch(s, "aclnnIndexSelect", fail_task, NULL, &index));
  EXPECT_OK(standin_launch(s, "dropped", count_run, count_release, NULL));
  gate_open(&g);
  static const char k_fault[] = "aclnnIndexSelect: index 7 is out of range";
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault, aclrtSynchronizeStream(s));
  EXPECT(atomic_load(&g_ran) == 0 && atomic_load(&g_released) == 1,
         "a task after the fault ran (%d) or was not released (%d)", atomic_load(&g_ran),
         atomic_load(&g_released));
  /* Sticky: every synchronisation, query, copy and enqueue of the device reports it. */
  aclrtStreamStatus stream_status;
  aclrtEventRecordedStatus event_status;
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault, aclrtSynchronizeStream(s));
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault, aclrtSynchronizeStream(other));
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault, aclrtStreamQuery(other, &stream_status));
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault, aclrtSynchronizeDevice());
  EXPECT_OK(aclrtRecordEvent(e, other)); /* records keep working */
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault, aclrtQueryEventStatus(e, &event_status));
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault, aclrtSynchronizeEvent(e));
  memset(host, 0xEE, sizeof host);
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault,
              aclrtMemcpy(host, 256, d, 256, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault,
              aclrtMemcpy(d, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault,
              aclrtMemcpyAsync(host, 256, d, 256, ACL_MEMCPY_DEVICE_TO_HOST, other));
  EXPECT(host[0] == 0xEE && host[255] == 0xEE, "bytes of a faulted device reached the host");
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault, aclrtMemsetAsync(d, 256, 0, 256, other));
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault,
              standin_launch(other, "x", count_run, NULL, NULL));
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, k_fault, aclrtStreamWaitEvent(other, e));
  /* Releasing and creating keep working. */
  void *more = NULL;
  aclrtStream third = NULL;
  aclrtEvent e2 = NULL;
  EXPECT_OK(aclrtMalloc(&more, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(aclrtFree(more));
  EXPECT_OK(aclrtCreateStream(&third));
  EXPECT_OK(aclrtDestroyStream(third));
  EXPECT_OK(aclrtCreateEventWithFlag(&e2, ACL_EVENT_SYNC));
  EXPECT_OK(aclrtDestroyEvent(e2));
  /* Other devices are not affected. */
  EXPECT_OK(aclrtSetDevice(1));
  EXPECT_OK(aclrtSynchronizeDevice());
  EXPECT_OK(standin_launch(NULL, "on device 1", count_run, NULL, NULL));
  EXPECT_OK(aclrtSynchronizeStream(NULL));
  EXPECT_OK(aclrtResetDevice(1));
  EXPECT_OK(aclrtSetDevice(0));
  /* aclrtResetDevice clears it; the context (set twice) stays, with its streams and memory. */
  EXPECT_OK(aclrtResetDevice(0));
  atomic_store(&g_ran, 0);
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT_OK(aclrtSynchronizeEvent(e));
  EXPECT_OK(aclrtMemcpy(d, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_OK(standin_launch(s, "after reset", count_run, NULL, NULL));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(atomic_load(&g_ran) == 1, "work after the reset ran %d times", atomic_load(&g_ran));
  /* The first failure wins. */
  EXPECT_OK(standin_launch(s, "aclnnGather", fail_twice_task, NULL, NULL));
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, "aclnnGather: first failure",
              aclrtSynchronizeStream(s));
  EXPECT_OK(aclrtSynchronizeStream(s) == ACL_ERROR_RT_AICORE_EXCEPTION &&
                    strstr(aclGetRecentErrMsg(), "second") == NULL
                ? ACL_SUCCESS
                : ACL_ERROR_FAILURE);
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_OK(aclrtResetDevice(0));
  EXPECT_OK(aclrtFree(d));
  EXPECT_OK(aclrtDestroyEvent(e));
  EXPECT_OK(aclrtDestroyStream(s));
  EXPECT_OK(aclrtDestroyStream(other));
}

static void test_reset_releases(void) {
  g_test = "reset_releases";
  EXPECT_OK(aclrtSetDevice(1));
  aclrtStream s = NULL;
  aclrtEvent e = NULL;
  void *d = NULL;
  EXPECT_OK(aclrtCreateStream(&s));
  EXPECT_OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  EXPECT_OK(aclrtMalloc(&d, 1u << 20, ACL_MEM_MALLOC_HUGE_FIRST));
  int sleep_for = 20;
  atomic_store(&g_ran, 0);
  EXPECT_OK(standin_launch(s, "sleep", sleep_task, NULL, &sleep_for));
  EXPECT_OK(standin_launch(s, "last", count_run, NULL, NULL));
  EXPECT_OK(aclrtResetDevice(1)); /* the last reference: waits, then releases everything */
  EXPECT(atomic_load(&g_ran) == 1, "the reset did not wait for the stream's work");
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live stream", aclrtSynchronizeStream(s));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live event", aclrtDestroyEvent(e));
  EXPECT_FAIL(ACL_ERROR_RT_PARAM_INVALID, "aclrtMalloc returned", aclrtFree(d));
  EXPECT_OK(aclrtSetDevice(1));
  size_t free_bytes = 0, total = 0;
  EXPECT_OK(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total));
  EXPECT(free_bytes == total, "memory after the release: %zu of %zu free", free_bytes, total);
  EXPECT_OK(aclrtResetDevice(1));
  EXPECT_OK(aclrtSetDevice(0));
}

/* ---- stream capture (acl_mdl.h) ---- */

/* Tasks of a model run one at a time even when two streams run the model. */
static _Atomic int g_active, g_max_active;
static void overlap_task(void *arg) {
  int now = atomic_fetch_add(&g_active, 1) + 1;
  int seen = atomic_load(&g_max_active);
  while (now > seen && !atomic_compare_exchange_weak(&g_max_active, &seen, now)) {
  }
  sleep_ms(*(int *)arg);
  atomic_fetch_sub(&g_active, 1);
}

/* Whether a gate of the test was passed, and runs that ran before it was. */
static _Atomic int g_passed, g_early;
static void pass_task(void *arg) {
  (void)arg;
  atomic_store(&g_passed, 1);
}
static void check_passed_task(void *arg) {
  (void)arg;
  if (!atomic_load(&g_passed)) atomic_fetch_add(&g_early, 1);
  atomic_fetch_add(&g_ran, 1);
}

typedef struct capture_thread_args {
  aclrtStream stream;
  void *dst;
  const void *src;
  size_t bytes;
  aclmdlRI model;
  aclError result;
} capture_thread_args;

/* Another thread's aclrtMemcpy host -> device. */
static void *memcpy_thread(void *arg) {
  capture_thread_args *a = arg;
  a->result = aclrtMemcpy(a->dst, a->bytes, a->src, a->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  (void)aclGetRecentErrMsg();
  return NULL;
}

/* Another thread's aclmdlRICaptureEnd. */
static void *end_thread(void *arg) {
  capture_thread_args *a = arg;
  a->result = aclmdlRICaptureEnd(a->stream, &a->model);
  (void)aclGetRecentErrMsg();
  return NULL;
}

static aclError memcpy_from_other_thread(void *dst, const void *src, size_t bytes) {
  capture_thread_args a = {NULL, dst, src, bytes, NULL, -1};
  pthread_t thread;
  pthread_create(&thread, NULL, memcpy_thread, &a);
  pthread_join(thread, NULL);
  return a.result;
}

static aclmdlRICaptureStatus capture_status(aclrtStream s) {
  aclmdlRICaptureStatus status = (aclmdlRICaptureStatus)-1;
  aclmdlRI model = NULL;
  EXPECT_OK(aclmdlRICaptureGetInfo(s, &status, &model));
  EXPECT((status == ACL_MODEL_RI_CAPTURE_STATUS_NONE) == (model == NULL), "status %d with model %p",
         (int)status, model);
  return status;
}

static void test_capture(void) {
  g_test = "capture";
  EXPECT_OK(aclrtSetDevice(0));
  aclrtStream s = NULL, other = NULL;
  EXPECT_OK(aclrtCreateStream(&s));
  EXPECT_OK(aclrtCreateStream(&other));
  aclmdlRI model = NULL, model2 = NULL;

  /* Arguments. */
  EXPECT_FAIL(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, "default stream",
              aclmdlRICaptureBegin(NULL, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "unknown aclmdlRICaptureMode 7",
              aclmdlRICaptureBegin(s, (aclmdlRICaptureMode)7));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live stream",
              aclmdlRICaptureBegin((aclrtStream)&model, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_FAIL(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "does not capture", aclmdlRICaptureEnd(s, &model));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "modelRI is NULL", aclmdlRICaptureEnd(s, NULL));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "both NULL", aclmdlRICaptureGetInfo(s, NULL, NULL));
  EXPECT(capture_status(s) == ACL_MODEL_RI_CAPTURE_STATUS_NONE, "a fresh stream captures");
  EXPECT(capture_status(NULL) == ACL_MODEL_RI_CAPTURE_STATUS_NONE, "the default stream");
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "not a live model", aclmdlRIExecuteAsync(NULL, s));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "not a live model", aclmdlRIExecuteAsync(s, s));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "not a live model", aclmdlRIDestroy(&model));

  /* Captured work does not run; each run of the model runs it again, and its arguments are
   * released with the model. */
  atomic_store(&g_ran, 0);
  atomic_store(&g_released, 0);
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_FAIL(ACL_ERROR_RT_STREAM_CAPTURED, "captures already",
              aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  EXPECT(capture_status(s) == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, "capturing");
  EXPECT(capture_status(other) == ACL_MODEL_RI_CAPTURE_STATUS_NONE, "another stream");
  aclmdlRI building = NULL;
  EXPECT_OK(aclmdlRICaptureGetInfo(s, NULL, &building));
  EXPECT_FAIL(ACL_ERROR_RT_MODEL_CAPTURED, "being captured", aclmdlRIExecuteAsync(building, other));
  EXPECT_FAIL(ACL_ERROR_RT_MODEL_CAPTURED, "being captured", aclmdlRIDestroy(building));
  for (int i = 0; i < 3; i++) EXPECT_OK(standin_launch(s, "count", count_run, count_release, NULL));
  sleep_ms(20);
  EXPECT(atomic_load(&g_ran) == 0, "captured work ran: %d", atomic_load(&g_ran));
  EXPECT_OK(aclrtSynchronizeStream(other)); /* other streams are unaffected */
  EXPECT_OK(aclmdlRICaptureEnd(s, &model));
  EXPECT(model == building, "the model %p is not the one being built (%p)", model, building);
  EXPECT(capture_status(s) == ACL_MODEL_RI_CAPTURE_STATUS_NONE, "the capture ended");
  EXPECT_OK(aclrtSynchronizeStream(s)); /* nothing was queued */
  EXPECT(atomic_load(&g_ran) == 0, "captured work ran at the end of the capture");
  EXPECT_OK(aclmdlRIExecuteAsync(model, s));
  EXPECT_OK(aclmdlRIExecuteAsync(model, other)); /* any stream of the device */
  EXPECT_OK(aclmdlRIExecuteAsync(model, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT_OK(aclrtSynchronizeStream(other));
  EXPECT(atomic_load(&g_ran) == 9, "three runs of three tasks ran %d tasks", atomic_load(&g_ran));
  EXPECT(atomic_load(&g_released) == 0, "a run released its tasks' arguments");
  EXPECT_OK(aclmdlRIDestroy(model));
  EXPECT(atomic_load(&g_released) == 3, "destroy released %d arguments", atomic_load(&g_released));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "not a live model", aclmdlRIDestroy(model));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "not a live model", aclmdlRIExecuteAsync(model, s));

  /* Copies and memsets: each run reads and writes the bytes the addresses hold then. */
  enum { N = 256 };
  unsigned char *in = NULL, *out = NULL, expect[N];
  void *d = NULL;
  EXPECT_OK(aclrtMallocHost((void **)&in, N));
  EXPECT_OK(aclrtMallocHost((void **)&out, N));
  EXPECT_OK(aclrtMalloc(&d, N, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(aclrtMemcpyAsync(d, N, in, N, ACL_MEMCPY_HOST_TO_DEVICE, s));
  EXPECT_OK(aclrtMemsetAsync((char *)d + N / 2, N / 4, 0x5a, N / 4, s));
  EXPECT_OK(aclrtMemcpyAsync(out, N, d, N, ACL_MEMCPY_DEVICE_TO_HOST, s));
  EXPECT_OK(aclmdlRICaptureEnd(s, &model));
  for (int run = 0; run < 3; run++) {
    for (int i = 0; i < N; i++) in[i] = (unsigned char)(i * 7 + run);
    memset(out, 0, N);
    for (int i = 0; i < N; i++) {
      expect[i] = i >= N / 2 && i < N / 2 + N / 4 ? 0x5a : (unsigned char)(i * 7 + run);
    }
    EXPECT_OK(aclmdlRIExecuteAsync(model, run % 2 ? other : s));
    EXPECT_OK(aclrtSynchronizeStream(run % 2 ? other : s));
    EXPECT(memcmp(out, expect, N) == 0, "run %d copied other bytes", run);
  }
  EXPECT_OK(aclmdlRIDestroy(model));

  /* Runs of one model never overlap, whatever stream runs them. */
  int nap = 20;
  atomic_store(&g_active, 0);
  atomic_store(&g_max_active, 0);
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(standin_launch(s, "overlap", overlap_task, NULL, &nap));
  EXPECT_OK(aclmdlRICaptureEnd(s, &model));
  EXPECT_OK(aclmdlRIExecuteAsync(model, s));
  EXPECT_OK(aclmdlRIExecuteAsync(model, other));
  /* Destroying a model with queued runs is refused; it works once they are done. */
  EXPECT_FAIL(ACL_ERROR_RT_MODEL_RUNNING, "queued or running", aclmdlRIDestroy(model));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT_OK(aclrtSynchronizeStream(other));
  EXPECT(atomic_load(&g_max_active) == 1, "%d runs of one model overlapped",
         atomic_load(&g_max_active));
  EXPECT_OK(aclmdlRIDestroy(model));

  /* Runs of one model run in the order of their launches: a run on an idle stream waits for an
   * earlier run queued behind slow work on another stream. */
  gate slow;
  gate_init(&slow);
  atomic_store(&g_passed, 0);
  atomic_store(&g_early, 0);
  atomic_store(&g_ran, 0);
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(standin_launch(s, "check", check_passed_task, NULL, NULL));
  EXPECT_OK(aclmdlRICaptureEnd(s, &model));
  EXPECT_OK(standin_launch(s, "gate", gate_task, NULL, &slow));
  EXPECT_OK(standin_launch(s, "pass", pass_task, NULL, NULL));
  EXPECT_OK(aclmdlRIExecuteAsync(model, s));
  EXPECT_OK(aclmdlRIExecuteAsync(model, other));
  pthread_t opener;
  pthread_create(&opener, NULL, gate_open_later, &slow);
  EXPECT_OK(aclrtSynchronizeStream(other));
  EXPECT(atomic_load(&g_early) == 0 && atomic_load(&g_ran) >= 1,
         "the second run did not wait for the first: %d early of %d", atomic_load(&g_early),
         atomic_load(&g_ran));
  pthread_join(opener, NULL);
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(atomic_load(&g_ran) == 2, "%d runs", atomic_load(&g_ran));
  EXPECT_OK(aclmdlRIDestroy(model));

  /* Synchronisation of the capturing stream or its device fails and invalidates the capture;
   * the end of the capture says why, and yields no model. */
  const char *waits[3] = {"aclrtSynchronizeStream", "aclrtStreamQuery", "aclrtSynchronizeDevice"};
  for (int k = 0; k < 3; k++) {
    atomic_store(&g_released, 0);
    atomic_store(&g_ran, 0);
    EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    EXPECT_OK(standin_launch(s, "count", count_run, count_release, NULL));
    aclrtStreamStatus state;
    if (k == 0) EXPECT_FAIL(ACL_ERROR_RT_STREAM_CAPTURED, waits[k], aclrtSynchronizeStream(s));
    if (k == 1) EXPECT_FAIL(ACL_ERROR_RT_STREAM_CAPTURED, waits[k], aclrtStreamQuery(s, &state));
    if (k == 2) EXPECT_FAIL(ACL_ERROR_RT_STREAM_CAPTURED, waits[k], aclrtSynchronizeDevice());
    EXPECT(capture_status(s) == ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED, "after %s", waits[k]);
    EXPECT_OK(standin_launch(s, "count", count_run, count_release, NULL)); /* dropped */
    EXPECT_OK(aclrtStreamQuery(other, &state)); /* other streams are unaffected */
    model = NULL;
    EXPECT_FAIL(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, waits[k], aclmdlRICaptureEnd(s, &model));
    EXPECT(model == NULL, "an invalidated capture gave a model");
    EXPECT(atomic_load(&g_released) == 2 && atomic_load(&g_ran) == 0,
           "the invalidated capture's tasks: %d released, %d ran", atomic_load(&g_released),
           atomic_load(&g_ran));
    EXPECT(capture_status(s) == ACL_MODEL_RI_CAPTURE_STATUS_NONE, "the capture ended");
    EXPECT_OK(aclrtSynchronizeStream(s));
  }

  /* Events: a record cannot be captured (the stand-in has no multi-stream capture); a wait for
   * a complete record needs no task and is allowed, one for an incomplete record is not. */
  aclrtEvent e = NULL;
  EXPECT_OK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC));
  EXPECT_OK(aclrtRecordEvent(e, other));
  EXPECT_OK(aclrtSynchronizeEvent(e));
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(aclrtStreamWaitEvent(s, e));
  EXPECT(capture_status(s) == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, "a wait for a complete record");
  EXPECT_FAIL(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtRecordEvent", aclrtRecordEvent(e, s));
  EXPECT(capture_status(s) == ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED, "after a record");
  EXPECT_OK(aclrtQueryEventStatus(e, &(aclrtEventRecordedStatus){0})); /* its record stays */
  EXPECT_FAIL(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, "aclrtRecordEvent",
              aclmdlRICaptureEnd(s, &model));
  gate g;
  gate_init(&g);
  EXPECT_OK(standin_launch(other, "gate", gate_task, NULL, &g));
  EXPECT_OK(aclrtRecordEvent(e, other));
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_FAIL(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "aclrtStreamWaitEvent", aclrtStreamWaitEvent(s, e));
  EXPECT_FAIL(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, "aclrtStreamWaitEvent",
              aclmdlRICaptureEnd(s, &model));
  gate_open(&g);
  EXPECT_OK(aclrtSynchronizeStream(other));
  EXPECT_OK(aclrtDestroyEvent(e));

  /* Unsafe calls by capture mode: GLOBAL refuses every thread's, THREAD_LOCAL the capturing
   * thread's, RELAXED none; the capture goes on.  Another device is not concerned. */
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_FAIL(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, "ACL_MODEL_RI_CAPTURE_MODE_GLOBAL",
              aclrtMemcpy(d, N, in, N, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT(memcpy_from_other_thread(d, in, N) == ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
         "another thread's unsafe call in GLOBAL mode");
  unsigned char pageable[N];
  EXPECT_FAIL(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, "not permitted",
              aclrtMemcpyAsync(d, N, pageable, N, ACL_MEMCPY_HOST_TO_DEVICE, other));
  EXPECT_OK(aclrtMemcpyAsync(d, N, in, N, ACL_MEMCPY_HOST_TO_DEVICE, other)); /* pinned: fine */
  EXPECT_OK(aclrtSynchronizeStream(other));
  EXPECT_OK(aclrtMemcpy(pageable, N, in, N, ACL_MEMCPY_HOST_TO_HOST)); /* no device */
  EXPECT(capture_status(s) == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, "refused unsafe calls");
  EXPECT_OK(aclrtSetDevice(1));
  void *d1 = NULL;
  EXPECT_OK(aclrtMalloc(&d1, N, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(aclrtMemcpy(d1, N, in, N, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_OK(aclrtFree(d1));
  EXPECT_OK(aclrtResetDevice(1));
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_OK(aclmdlRICaptureEnd(s, &model));
  EXPECT_OK(aclmdlRIDestroy(model));
  EXPECT_OK(aclrtMemcpy(d, N, in, N, ACL_MEMCPY_HOST_TO_DEVICE)); /* allowed again */
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
  EXPECT_FAIL(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, "the capturing thread",
              aclrtMemcpy(d, N, in, N, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT(memcpy_from_other_thread(d, in, N) == ACL_SUCCESS,
         "another thread's unsafe call in THREAD_LOCAL mode");
  EXPECT_OK(aclmdlRICaptureEnd(s, &model));
  EXPECT_OK(aclmdlRIDestroy(model));
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  EXPECT_OK(aclrtMemcpy(d, N, in, N, ACL_MEMCPY_HOST_TO_DEVICE));
  EXPECT_OK(aclrtMemcpyAsync(d, N, pageable, N, ACL_MEMCPY_HOST_TO_DEVICE, other));
  EXPECT(memcpy_from_other_thread(d, in, N) == ACL_SUCCESS, "RELAXED");
  /* On the capturing stream itself a synchronous copy cannot be recorded, whatever the mode. */
  EXPECT_FAIL(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, "cannot be captured",
              aclrtMemcpyAsync(d, N, pageable, N, ACL_MEMCPY_HOST_TO_DEVICE, s));
  EXPECT_FAIL(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, "cannot be captured",
              aclmdlRICaptureEnd(s, &model));

  /* The capture ends on the thread that began it, unless RELAXED. */
  capture_thread_args a = {s, NULL, NULL, 0, NULL, -1};
  pthread_t thread;
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
  pthread_create(&thread, NULL, end_thread, &a);
  pthread_join(thread, NULL);
  EXPECT(a.result == ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, "another thread ended it: %d",
         a.result);
  EXPECT(capture_status(s) == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, "after the wrong thread");
  EXPECT_OK(aclmdlRICaptureEnd(s, &model));
  EXPECT_OK(aclmdlRIDestroy(model));
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  pthread_create(&thread, NULL, end_thread, &a);
  pthread_join(thread, NULL);
  EXPECT(a.result == ACL_SUCCESS && a.model != NULL, "RELAXED: another thread's end: %d", a.result);
  EXPECT_OK(aclmdlRIDestroy(a.model));

  /* A model runs on a stream of its device that does not capture. */
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(standin_launch(s, "count", count_run, NULL, NULL));
  EXPECT_OK(aclmdlRICaptureEnd(s, &model));
  EXPECT_OK(aclmdlRICaptureBegin(other, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_FAIL(ACL_ERROR_RT_STREAM_CAPTURED, "does not nest", aclmdlRIExecuteAsync(model, other));
  EXPECT_OK(aclmdlRICaptureEnd(other, &model2));
  EXPECT_OK(aclmdlRIDestroy(model2));
  EXPECT_OK(aclrtSetDevice(1));
  aclrtStream s1 = NULL;
  EXPECT_OK(aclrtCreateStream(&s1));
  EXPECT_FAIL(ACL_ERROR_RT_MODEL_CONTEXT, "belongs to device 0", aclmdlRIExecuteAsync(model, s1));
  EXPECT_OK(aclrtSetDevice(0));

  /* A failing task faults the device when the model runs, naming the task; the rest of the run
   * is dropped. */
  int index = 9;
  atomic_store(&g_ran, 0);
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(standin_launch(s, "aclnnIndexSelect", fail_task, NULL, &index));
  EXPECT_OK(standin_launch(s, "count", count_run, NULL, NULL));
  EXPECT_OK(aclmdlRICaptureEnd(s, &model2));
  EXPECT(atomic_load(&g_ran) == 0, "captured tasks ran");
  EXPECT_OK(aclmdlRIExecuteAsync(model2, s));
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, "aclnnIndexSelect: index 9 is out of range",
              aclrtSynchronizeStream(s));
  EXPECT(atomic_load(&g_ran) == 0, "the run went on after the failure");
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, "faulted", aclmdlRIExecuteAsync(model, s));
  EXPECT_FAIL(ACL_ERROR_RT_AICORE_EXCEPTION, "faulted",
              aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_OK(aclrtResetDevice(0)); /* clears the fault (set twice: the context stays) */
  EXPECT_OK(aclmdlRIExecuteAsync(model, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(atomic_load(&g_ran) == 1, "after the reset the model ran %d tasks", atomic_load(&g_ran));
  EXPECT_OK(aclmdlRIDestroy(model));
  EXPECT_OK(aclmdlRIDestroy(model2));

  /* A stream destroyed while it captures loses the capture; the release of a device context
   * ends its captures and destroys its models. */
  atomic_store(&g_released, 0);
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(standin_launch(s, "count", count_run, count_release, NULL));
  EXPECT_OK(aclrtDestroyStream(s));
  EXPECT(atomic_load(&g_released) == 1, "the destroyed stream's capture kept its tasks");
  EXPECT_OK(aclrtSetDevice(1));
  aclrtStream s2 = NULL;
  EXPECT_OK(aclrtCreateStream(&s2));
  EXPECT_OK(aclmdlRICaptureBegin(s1, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(standin_launch(s1, "count", count_run, count_release, NULL));
  EXPECT_OK(aclmdlRICaptureEnd(s1, &model));
  EXPECT_OK(aclmdlRICaptureBegin(s2, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(standin_launch(s2, "count", count_run, count_release, NULL));
  EXPECT_OK(aclrtResetDevice(1));
  EXPECT_OK(aclrtResetDevice(1)); /* both sets of device 1: its context goes */
  EXPECT(atomic_load(&g_released) == 3, "the context's release released %d of 3",
         atomic_load(&g_released) - 1);
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_FAIL(ACL_ERROR_INVALID_PARAM, "not a live model", aclmdlRIDestroy(model));

  EXPECT_OK(aclrtFree(d));
  EXPECT_OK(aclrtFreeHost(in));
  EXPECT_OK(aclrtFreeHost(out));
  EXPECT_OK(aclrtDestroyStream(other));
}

/* Host code touching device memory faults, in the device view; the shadow view works. */
static void test_host_access(void) {
  g_test = "host_access";
  EXPECT_OK(aclrtSetDevice(0));
  void *d = NULL;
  EXPECT_OK(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  fflush(NULL);
  for (int write_access = 0; write_access < 2; write_access++) {
    pid_t child = fork();
    if (child == 0) {
      signal(SIGSEGV, SIG_DFL);
      volatile unsigned char *p = d;
      if (write_access) {
        p[3] = 1;
      } else {
        (void)p[3];
      }
      _exit(0); /* survived: the test fails */
    }
    int status = 0;
    EXPECT(child > 0 && waitpid(child, &status, 0) == child, "fork/waitpid");
    EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
           "a child %s device memory was not killed by SIGSEGV (status %#x)",
           write_access ? "writing" : "reading", status);
  }
  unsigned char *shadow = standin_device_to_host(d, 64);
  EXPECT(shadow != NULL, "no shadow address");
  if (shadow != NULL) shadow[3] = 42;
  unsigned char back = 0;
  EXPECT_OK(aclrtMemcpy(&back, 1, (char *)d + 3, 1, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT(back == 42, "byte written through the shadow: %d", back);
  fill_args f = {d, 64, 9};
  EXPECT_OK(standin_launch(NULL, "fill", fill_task, NULL, &f));
  EXPECT_OK(aclrtSynchronizeStream(NULL));
  EXPECT_OK(aclrtMemcpy(&back, 1, (char *)d + 63, 1, ACL_MEMCPY_DEVICE_TO_HOST));
  EXPECT(back == 9, "byte written by a task: %d", back);
  EXPECT_OK(aclrtFree(d));
}

/* Several threads, each with its own stream, enqueue and synchronise at once (for TSan). */
typedef struct worker_args {
  int device;
  aclError result;
  char message[512]; /* the runtime's message when result is an error */
} worker_args;

static void *concurrent_worker(void *arg) {
  worker_args *w = arg;
  aclrtStream s = NULL;
  void *d = NULL;
  unsigned char in[512], out[512];
  for (int i = 0; i < 512; i++) in[i] = (unsigned char)(i ^ w->device);
  w->result = aclrtSetDevice(w->device);
  if (w->result == ACL_SUCCESS) w->result = aclrtCreateStream(&s);
  for (int round = 0; w->result == ACL_SUCCESS && round < 50; round++) {
    w->result = aclrtMalloc(&d, 512, ACL_MEM_MALLOC_HUGE_FIRST);
    if (w->result == ACL_SUCCESS) {
      w->result = aclrtMemcpyAsync(d, 512, in, 512, ACL_MEMCPY_HOST_TO_DEVICE, s);
    }
    if (w->result == ACL_SUCCESS) {
      w->result = aclrtMemcpyAsync(out, 512, d, 512, ACL_MEMCPY_DEVICE_TO_HOST, s);
    }
    if (w->result == ACL_SUCCESS) w->result = aclrtSynchronizeStream(s);
    if (w->result == ACL_SUCCESS && memcmp(in, out, 512) != 0) w->result = -1;
    if (d != NULL && aclrtFree(d) != ACL_SUCCESS && w->result == ACL_SUCCESS) w->result = -2;
    d = NULL;
  }
  if (w->result != ACL_SUCCESS) {
    const char *message = aclGetRecentErrMsg();
    snprintf(w->message, sizeof w->message, "%s", message != NULL ? message : "no message");
  }
  if (s != NULL) aclrtDestroyStream(s);
  aclrtResetDevice(w->device);
  return NULL;
}

static void test_concurrency(void) {
  g_test = "concurrency";
  pthread_t threads[4];
  worker_args args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (worker_args){i % 2, -1, ""};
    pthread_create(&threads[i], NULL, concurrent_worker, &args[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(threads[i], NULL);
    EXPECT(args[i].result == ACL_SUCCESS, "thread %d: %d (%s)", i, args[i].result, args[i].message);
  }
}

/* Messages are per thread. */
static void *message_thread(void *arg) {
  const char **out = arg;
  *out = aclGetRecentErrMsg();
  return NULL;
}

static void test_finalize(void) {
  g_test = "finalize";
  EXPECT_ACL(ACL_ERROR_INVALID_PARAM, aclrtMalloc(NULL, 1, ACL_MEM_MALLOC_HUGE_FIRST));
  const char *theirs = "unset";
  pthread_t thread;
  pthread_create(&thread, NULL, message_thread, &theirs);
  pthread_join(thread, NULL);
  EXPECT(theirs == NULL, "another thread saw this thread's message: %s", theirs ? theirs : "");
  EXPECT(aclGetRecentErrMsg() != NULL, "this thread's message is gone");
  /* aclFinalize waits for queued work and releases everything. */
  EXPECT_OK(aclrtSetDevice(0));
  aclrtStream s = NULL;
  void *d = NULL;
  EXPECT_OK(aclrtCreateStream(&s));
  EXPECT_OK(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  int sleep_for = 20;
  atomic_store(&g_ran, 0);
  EXPECT_OK(standin_launch(s, "sleep", sleep_task, NULL, &sleep_for));
  EXPECT_OK(standin_launch(s, "last", count_run, NULL, NULL));
  EXPECT_OK(aclFinalize());
  EXPECT(atomic_load(&g_ran) == 1, "aclFinalize did not wait for queued work");
  EXPECT_FAIL(ACL_ERROR_REPEAT_FINALIZE, "finalized already", aclFinalize());
  EXPECT_FAIL(ACL_ERROR_UNINITIALIZE, "aclInit", aclrtSynchronizeStream(s));
  EXPECT(!standin_is_device_range(d, 1), "device memory survived aclFinalize");
  /* aclInit again: a fresh runtime. */
  EXPECT_OK(aclInit(NULL));
  int32_t device = -1;
  EXPECT_FAIL(ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice", aclrtGetDevice(&device));
  EXPECT_OK(aclrtSetDevice(0));
  EXPECT_FAIL(ACL_ERROR_RT_INVALID_HANDLE, "not a live stream", aclrtSynchronizeStream(s));
  EXPECT_OK(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  EXPECT_OK(aclrtFree(d));
  EXPECT_OK(aclFinalize());
}

int main(void) {
  setenv("TB_ASCEND_STANDIN_DEVICES", "2", 1);
  setenv("TB_ASCEND_STANDIN_MEMORY", "64M", 1);
  unsetenv("TB_ASCEND_STANDIN_PEER");
  test_before_init();
  test_init();
  test_devices();
  test_memory();
  test_peer();
  test_streams();
  test_async_memory();
  test_events();
  test_faults();
  test_reset_releases();
  test_capture();
  test_host_access();
  test_concurrency();
  test_finalize();
  if (g_failures != 0) {
    fprintf(stderr, "ascendcl stand-in runtime test: %d failures\n", g_failures);
    return 1;
  }
  printf("ascendcl stand-in runtime test: all checks passed\n");
  return 0;
}
