/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * tb_vendor_kit's graphs (vendor_kit.h, tbk_graph_group; vendor.h, ABI 2.3), driven directly
 * through the kit: captured tasks are recorded, not run, and run once per replay in captured
 * order; replays of one graph on two streams never overlap and run in launch order; the calls a
 * capture refuses, tbk_check_capture() per mode (TB_CAPTURE_THREAD_LOCAL from the capturing
 * thread and from another); a task failing during a replay faults the device with its name; a
 * graph destroyed with launches queued.  A plain C11 program: it prints every failed check and
 * exits with 1 when there is one.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <torch_backend/vendor_kit.h>

static int checks, failures;
static const char *context = ""; /* what the current test is doing, for failure messages */

static bool check(bool ok, const char *what, int line) {
  checks++;
  if (!ok) {
    failures++;
    printf("FAIL line %d [%s]: %s\n", line, context, what);
  }
  return ok;
}

static bool check_status(tb_status actual, tb_status expected, const char *call, int line) {
  checks++;
  if (actual == expected) return true;
  failures++;
  printf("FAIL line %d [%s]: %s returned %s, expected %s (last error: %s)\n", line, context, call,
         tb_status_name(actual), tb_status_name(expected), tbk_last_error(NULL));
  return false;
}

/* Whether the calling thread's last error contains `part`. */
static bool check_message(const char *part, int line) {
  checks++;
  const char *message = tbk_last_error(NULL);
  if (message != NULL && strstr(message, part) != NULL) return true;
  failures++;
  printf("FAIL line %d [%s]: the last error \"%s\" does not contain \"%s\"\n", line, context,
         message != NULL ? message : "(null)", part);
  return false;
}

#define CHECK(cond) check((cond), #cond, __LINE__)
#define CHECK_STATUS(call, expected) check_status((call), (expected), #call, __LINE__)
#define CHECK_OK(call) check_status((call), TB_OK, #call, __LINE__)
#define CHECK_MESSAGE(part) check_message((part), __LINE__)

/* ---- the vendor: a context whose first member is the runtime ---- */

struct tb_context_impl {
  tbk_runtime *runtime;
};
static struct tb_context_impl g_context;
#define CTX (&g_context)
static _Atomic bool g_runtime_gone;

static void on_destroy(void *user) {
  (void)user;
  atomic_store(&g_runtime_gone, true);
}

/* The profile hook: counts the tasks named "log" it sees, and calls without a name. */
static pthread_mutex_t g_profile_mutex = PTHREAD_MUTEX_INITIALIZER;
static int g_profiled_logs, g_profiled_unnamed;

static void on_task_done(void *user, const char *name, uint64_t ns) {
  (void)user;
  (void)ns;
  pthread_mutex_lock(&g_profile_mutex);
  if (name == NULL) {
    g_profiled_unnamed++;
  } else if (strcmp(name, "log") == 0) {
    g_profiled_logs++;
  }
  pthread_mutex_unlock(&g_profile_mutex);
}

static void profile_counts(int *logs, int *unnamed) {
  pthread_mutex_lock(&g_profile_mutex);
  *logs = g_profiled_logs;
  *unnamed = g_profiled_unnamed;
  g_profiled_logs = g_profiled_unnamed = 0;
  pthread_mutex_unlock(&g_profile_mutex);
}

/* ---- the log: what tasks ran, in order ---- */

#define LOG_CAPACITY 4096
static pthread_mutex_t g_log_mutex = PTHREAD_MUTEX_INITIALIZER;
static int g_log[LOG_CAPACITY];
static int g_log_count;

static void log_append(int id) {
  pthread_mutex_lock(&g_log_mutex);
  if (g_log_count < LOG_CAPACITY) g_log[g_log_count] = id;
  g_log_count++;
  pthread_mutex_unlock(&g_log_mutex);
}

static void log_reset(void) {
  pthread_mutex_lock(&g_log_mutex);
  g_log_count = 0;
  pthread_mutex_unlock(&g_log_mutex);
}

/* Copies the log into `out` (at most `capacity` entries); returns how many entries it has. */
static int log_read(int *out, int capacity) {
  pthread_mutex_lock(&g_log_mutex);
  int count = g_log_count;
  for (int i = 0; i < count && i < capacity && i < LOG_CAPACITY; i++) out[i] = g_log[i];
  pthread_mutex_unlock(&g_log_mutex);
  return count;
}

/* Checks that the log is exactly `expected[0, count)`. */
static bool check_log(const int *expected, int count, int line) {
  int got[LOG_CAPACITY];
  int n = log_read(got, LOG_CAPACITY);
  bool same = n == count;
  for (int i = 0; same && i < n; i++) same = got[i] == expected[i];
  checks++;
  if (same) return true;
  failures++;
  printf("FAIL line %d [%s]: the tasks ran as [", line, context);
  for (int i = 0; i < n && i < 40; i++) printf("%s%d", i ? " " : "", got[i]);
  printf("%s], expected [", n > 40 ? " ..." : "");
  for (int i = 0; i < count && i < 40; i++) printf("%s%d", i ? " " : "", expected[i]);
  printf("%s]\n", count > 40 ? " ..." : "");
  return false;
}
#define CHECK_LOG(...)                                                                           \
  check_log((const int[]){__VA_ARGS__}, (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int)), \
            __LINE__)

static void sleep_ms(int ms) {
  struct timespec pause = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

/* ---- tasks ---- */

static tb_status log_fn(void *args, char *message, size_t message_size) {
  (void)message;
  (void)message_size;
  int id;
  memcpy(&id, args, sizeof id);
  log_append(id);
  return TB_OK;
}

/* A kernel-like launch that appends `id` to the log. */
static tb_status launch_log(tb_stream stream, int id) {
  return tbk_launch(CTX, stream, "log", log_fn, &id, sizeof id);
}

typedef struct sleep_args {
  int ms, id;
} sleep_args;

static tb_status sleep_fn(void *args, char *message, size_t message_size) {
  (void)message;
  (void)message_size;
  sleep_args a;
  memcpy(&a, args, sizeof a);
  sleep_ms(a.ms);
  log_append(a.id);
  return TB_OK;
}

/* Work that keeps `stream` busy for `ms` milliseconds, then logs `id`. */
static tb_status launch_sleep(tb_stream stream, int ms, int id) {
  sleep_args a = {ms, id};
  return tbk_launch(CTX, stream, "sleep", sleep_fn, &a, sizeof a);
}

/* A task that notices when another of its kind runs at the same time. */
static _Atomic int g_inside, g_overlaps;

static tb_status exclusive_fn(void *args, char *message, size_t message_size) {
  (void)message;
  (void)message_size;
  int id;
  memcpy(&id, args, sizeof id);
  if (atomic_fetch_add(&g_inside, 1) != 0) atomic_fetch_add(&g_overlaps, 1);
  sleep_ms(1);
  log_append(id);
  atomic_fetch_sub(&g_inside, 1);
  return TB_OK;
}

static tb_status fail_fn(void *args, char *message, size_t message_size) {
  (void)args;
  snprintf(message, message_size, "boom 4714");
  return TB_ERROR_INTERNAL;
}

/* Tasks made the way a vendor makes its own: tbk_task_new, a payload, tbk_stream_enqueue. */
static void raw_log(tbk_task *task) {
  int id;
  memcpy(&id, task->payload, sizeof id);
  log_append(id);
}

static void raw_fail(tbk_task *task) {
  int id;
  memcpy(&id, task->payload, sizeof id);
  tbk_task_fail(task, "raw failure %d", id);
}

static tb_status enqueue_raw(tb_stream stream, tbk_task_fn fn, const char *name, int id) {
  tbk_task *task = tbk_task_new(stream, fn, sizeof id);
  if (task == NULL) return TB_ERROR_OUT_OF_MEMORY;
  task->name = name;
  memcpy(task->payload, &id, sizeof id);
  return tbk_stream_enqueue(stream, task);
}

/* ---- helpers ---- */

/* Ends the capture of `stream`, expecting a graph. */
static tb_graph end_ok(tb_stream stream, int line) {
  tb_graph graph = NULL;
  if (!check_status(tbk_graph_capture_end(CTX, stream, &graph), TB_OK, "capture_end", line)) {
    return NULL;
  }
  check(graph != NULL, "capture_end returned TB_OK and a graph", line);
  return graph;
}

/* Ends the capture of `stream`, expecting it invalidated by the call named `call`. */
static void end_refused(tb_stream stream, const char *call, int line) {
  tb_graph graph = (tb_graph)(void *)&graph; /* anything but NULL */
  check_status(tbk_graph_capture_end(CTX, stream, &graph), TB_ERROR_NOT_SUPPORTED, "capture_end",
               line);
  check(graph == NULL, "capture_end of an invalidated capture leaves NULL in *graph", line);
  check_message(call, line);
  if (graph != NULL && graph != (tb_graph)(void *)&graph) tbk_graph_destroy(CTX, graph);
}
#define END_OK(stream) end_ok((stream), __LINE__)
#define END_REFUSED(stream, call) end_refused((stream), (call), __LINE__)

/* tbk_check_capture() on another thread. */
typedef struct check_job {
  int32_t device;
  const char *call;
  tb_status status;
  char message[1024];
} check_job;

static void *check_on_thread(void *arg) {
  check_job *job = arg;
  job->status = tbk_check_capture(CTX, job->device, job->call);
  snprintf(job->message, sizeof job->message, "%s",
           job->status != TB_OK ? tbk_last_error(NULL) : "");
  return NULL;
}

static tb_status check_elsewhere(int32_t device, const char *call, char *message, size_t size) {
  check_job job = {.device = device, .call = call, .status = TB_ERROR_INTERNAL};
  pthread_t thread;
  if (pthread_create(&thread, NULL, check_on_thread, &job) != 0) {
    printf("pthread_create failed\n");
    exit(2);
  }
  pthread_join(thread, NULL);
  snprintf(message, size, "%s", job.message);
  return job.status;
}

/* ---- tests ---- */

static tb_stream new_stream(int32_t device) {
  tb_stream stream = NULL;
  if (tbk_stream_create(CTX, device, 0, &stream) != TB_OK) {
    printf("tbk_stream_create failed: %s\n", tbk_last_error(NULL));
    exit(2);
  }
  return stream;
}

static void test_capture_and_replay(void) {
  context = "capture and replay";
  tb_stream stream = new_stream(0);
  int logs = 0, unnamed = 0;
  log_reset();
  profile_counts(&logs, &unnamed);
  /* Work queued before the capture is not part of it, and still runs. */
  CHECK_OK(launch_sleep(stream, 20, 100));
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_GLOBAL));
  CHECK_OK(launch_log(stream, 1));
  CHECK_OK(enqueue_raw(stream, raw_log, "raw", 2));
  CHECK_OK(launch_log(stream, 3));
  tb_graph graph = END_OK(stream);
  CHECK_OK(tbk_stream_synchronize(CTX, stream));
  context = "capture and replay: nothing captured runs before a launch";
  CHECK_LOG(100);
  profile_counts(&logs, &unnamed);
  CHECK(logs == 0);
  if (graph == NULL) goto done;
  context = "capture and replay: once per replay, in captured order";
  log_reset();
  CHECK_OK(tbk_graph_launch(CTX, graph, stream));
  CHECK_OK(tbk_graph_launch(CTX, graph, stream));
  CHECK_OK(tbk_stream_synchronize(CTX, stream));
  CHECK_LOG(1, 2, 3, 1, 2, 3);
  /* The profile hook sees each captured task of each replay by its name, never a nameless
   * launch. */
  profile_counts(&logs, &unnamed);
  CHECK(logs == 4);
  CHECK(unnamed == 0);
  /* Work enqueued after a launch runs after the replay. */
  log_reset();
  CHECK_OK(tbk_graph_launch(CTX, graph, stream));
  CHECK_OK(launch_log(stream, 9));
  CHECK_OK(tbk_stream_synchronize(CTX, stream));
  CHECK_LOG(1, 2, 3, 9);
  CHECK_OK(tbk_graph_destroy(CTX, graph));

  /* More tasks than the stream's slot ring holds, replayed while the ring is in use. */
  context = "capture and replay: 300 tasks";
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_RELAXED));
  for (int i = 0; i < 300; i++) CHECK_OK(launch_log(stream, 1000 + i));
  graph = END_OK(stream);
  if (graph == NULL) goto done;
  log_reset();
  for (int i = 0; i < 200; i++) CHECK_OK(launch_log(stream, 5000 + i));
  CHECK_OK(tbk_graph_launch(CTX, graph, stream));
  for (int i = 0; i < 200; i++) CHECK_OK(launch_log(stream, 6000 + i));
  CHECK_OK(tbk_graph_launch(CTX, graph, stream));
  CHECK_OK(tbk_stream_synchronize(CTX, stream));
  {
    static int want[1000], got[LOG_CAPACITY];
    int n = 0;
    for (int i = 0; i < 200; i++) want[n++] = 5000 + i;
    for (int i = 0; i < 300; i++) want[n++] = 1000 + i;
    for (int i = 0; i < 200; i++) want[n++] = 6000 + i;
    for (int i = 0; i < 300; i++) want[n++] = 1000 + i;
    int count = log_read(got, LOG_CAPACITY);
    CHECK(count == n);
    int first_bad = -1;
    for (int i = 0; i < n && i < count && first_bad < 0; i++) {
      if (got[i] != want[i]) first_bad = i;
    }
    if (!CHECK(first_bad < 0)) {
      printf("  entry %d is %d, expected %d\n", first_bad, got[first_bad], want[first_bad]);
    }
  }
  CHECK_OK(tbk_graph_destroy(CTX, graph));
  /* An empty capture gives a graph that launches. */
  context = "capture and replay: an empty graph";
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_GLOBAL));
  graph = END_OK(stream);
  if (graph != NULL) {
    log_reset();
    CHECK_OK(tbk_graph_launch(CTX, graph, stream));
    CHECK_OK(launch_log(stream, 7));
    CHECK_OK(tbk_stream_synchronize(CTX, stream));
    CHECK_LOG(7);
    CHECK_OK(tbk_graph_destroy(CTX, graph));
  }
done:
  CHECK_OK(tbk_stream_destroy(CTX, stream));
}

static void test_two_streams(void) {
  tb_stream first = new_stream(0), second = new_stream(0);
  tb_graph graph = NULL;
  /* Replays on two streams never overlap: each runs its three tasks without the other's. */
  context = "two streams: replays do not overlap";
  CHECK_OK(tbk_graph_capture_begin(CTX, first, TB_CAPTURE_GLOBAL));
  for (int id = 1; id <= 3; id++) {
    CHECK_OK(tbk_launch(CTX, first, "exclusive", exclusive_fn, &id, sizeof id));
  }
  graph = END_OK(first);
  if (graph == NULL) goto done;
  log_reset();
  atomic_store(&g_overlaps, 0);
  for (int i = 0; i < 5; i++) {
    CHECK_OK(tbk_graph_launch(CTX, graph, first));
    CHECK_OK(tbk_graph_launch(CTX, graph, second));
  }
  CHECK_OK(tbk_stream_synchronize(CTX, first));
  CHECK_OK(tbk_stream_synchronize(CTX, second));
  CHECK(atomic_load(&g_overlaps) == 0);
  CHECK_LOG(1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2,
            3);
  CHECK_OK(tbk_graph_destroy(CTX, graph));
  graph = NULL;

  /* Launch order: a launch on an idle stream waits for the earlier launch queued behind slow
   * work on the other stream. */
  context = "two streams: launches run in launch order";
  CHECK_OK(tbk_graph_capture_begin(CTX, first, TB_CAPTURE_GLOBAL));
  CHECK_OK(launch_log(first, 7));
  graph = END_OK(first);
  if (graph == NULL) goto done;
  log_reset();
  CHECK_OK(launch_sleep(first, 50, 100));
  CHECK_OK(tbk_graph_launch(CTX, graph, first));
  CHECK_OK(tbk_graph_launch(CTX, graph, second));
  CHECK_OK(launch_log(second, 8));
  CHECK_OK(tbk_stream_synchronize(CTX, second));
  CHECK_OK(tbk_stream_synchronize(CTX, first));
  CHECK_LOG(100, 7, 7, 8);
  /* Many launches from two threads' worth of streams, back to back: all run, none lost. */
  log_reset();
  for (int i = 0; i < 50; i++) {
    CHECK_OK(tbk_graph_launch(CTX, graph, (i % 3) ? first : second));
  }
  CHECK_OK(tbk_stream_synchronize(CTX, first));
  CHECK_OK(tbk_stream_synchronize(CTX, second));
  {
    int got[LOG_CAPACITY];
    CHECK(log_read(got, LOG_CAPACITY) == 50);
  }
done:
  if (graph != NULL) CHECK_OK(tbk_graph_destroy(CTX, graph));
  CHECK_OK(tbk_stream_destroy(CTX, first));
  CHECK_OK(tbk_stream_destroy(CTX, second));
}

static void test_check_capture(void) {
  tb_stream stream = new_stream(0);
  tb_graph graph = NULL;
  char message[1024];
  context = "tbk_check_capture: no capture";
  CHECK_OK(tbk_check_capture(CTX, 0, "copy_h2d"));

  context = "tbk_check_capture: TB_CAPTURE_GLOBAL, the capturing thread";
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_GLOBAL));
  CHECK_OK(launch_log(stream, 1));
  CHECK_OK(tbk_check_capture(CTX, 1, "copy_h2d")); /* another device */
  CHECK_STATUS(tbk_check_capture(CTX, 0, "copy_h2d"), TB_ERROR_NOT_SUPPORTED);
  CHECK_MESSAGE("copy_h2d");
  CHECK_MESSAGE("global");
  /* A second refusal: capture_end reports the first. */
  CHECK_STATUS(tbk_check_capture(CTX, 0, "copy_d2h"), TB_ERROR_NOT_SUPPORTED);
  END_REFUSED(stream, "copy_h2d");
  CHECK(strstr(tbk_last_error(NULL), "copy_d2h") == NULL);
  CHECK_OK(tbk_check_capture(CTX, 0, "copy_h2d")); /* the capture is over */

  context = "tbk_check_capture: TB_CAPTURE_GLOBAL, another thread";
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_GLOBAL));
  CHECK_STATUS(check_elsewhere(0, "copy_d2d", message, sizeof message), TB_ERROR_NOT_SUPPORTED);
  CHECK(strstr(message, "copy_d2d") != NULL);
  END_REFUSED(stream, "copy_d2d");

  context = "tbk_check_capture: TB_CAPTURE_THREAD_LOCAL, another thread";
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_THREAD_LOCAL));
  CHECK_OK(launch_log(stream, 2));
  CHECK_STATUS(check_elsewhere(0, "copy_h2d", message, sizeof message), TB_OK);
  graph = END_OK(stream);
  if (graph != NULL) {
    log_reset();
    CHECK_OK(tbk_graph_launch(CTX, graph, stream));
    CHECK_OK(tbk_stream_synchronize(CTX, stream));
    CHECK_LOG(2);
    CHECK_OK(tbk_graph_destroy(CTX, graph));
  }

  context = "tbk_check_capture: TB_CAPTURE_THREAD_LOCAL, the capturing thread";
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_THREAD_LOCAL));
  CHECK_STATUS(tbk_check_capture(CTX, 0, "copy_h2d"), TB_ERROR_NOT_SUPPORTED);
  CHECK_MESSAGE("thread_local");
  END_REFUSED(stream, "copy_h2d");

  context = "tbk_check_capture: TB_CAPTURE_RELAXED";
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_RELAXED));
  CHECK_OK(tbk_check_capture(CTX, 0, "copy_h2d"));
  CHECK_STATUS(check_elsewhere(0, "copy_h2d", message, sizeof message), TB_OK);
  graph = END_OK(stream);
  if (graph != NULL) CHECK_OK(tbk_graph_destroy(CTX, graph));

  /* Two captures of one device, on two streams: a refusal invalidates both. */
  context = "tbk_check_capture: two captures of the device";
  tb_stream other = new_stream(0);
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_GLOBAL));
  CHECK_OK(tbk_graph_capture_begin(CTX, other, TB_CAPTURE_RELAXED));
  CHECK_STATUS(tbk_check_capture(CTX, 0, "copy_h2d"), TB_ERROR_NOT_SUPPORTED);
  graph = END_OK(other); /* relaxed: not invalidated */
  if (graph != NULL) CHECK_OK(tbk_graph_destroy(CTX, graph));
  END_REFUSED(stream, "copy_h2d");
  CHECK_OK(tbk_stream_destroy(CTX, other));
  CHECK_OK(tbk_stream_destroy(CTX, stream));
}

static void test_refusals(void) {
  tb_stream stream = new_stream(0), other = new_stream(0), remote = new_stream(1);
  tb_event event = NULL;
  tb_graph graph = NULL, refused = NULL;
  CHECK_OK(tbk_event_create(CTX, 0, 0, &event));

  context = "refusals: stream query";
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_RELAXED));
  CHECK_OK(launch_log(stream, 1));
  CHECK_STATUS(tbk_stream_query(CTX, stream), TB_ERROR_NOT_SUPPORTED);
  END_REFUSED(stream, "stream query");

  context = "refusals: stream synchronize";
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_RELAXED));
  CHECK_OK(tbk_stream_synchronize(CTX, other)); /* another stream: not captured */
  CHECK_STATUS(tbk_stream_synchronize(CTX, stream), TB_ERROR_NOT_SUPPORTED);
  END_REFUSED(stream, "stream synchronize");

  context = "refusals: device synchronize";
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_RELAXED));
  CHECK_OK(tbk_device_synchronize(CTX, 1)); /* another device */
  CHECK_STATUS(tbk_device_synchronize(CTX, 0), TB_ERROR_NOT_SUPPORTED);
  END_REFUSED(stream, "device synchronize");

  context = "refusals: query and synchronize of an event recorded in the capture";
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_GLOBAL));
  CHECK_OK(tbk_event_record(CTX, event, stream)); /* a dependency, not work */
  CHECK_STATUS(tbk_event_query(CTX, event), TB_ERROR_NOT_SUPPORTED);
  END_REFUSED(stream, "event query");
  CHECK_OK(tbk_event_query(CTX, event)); /* its capture ended: nothing to wait for */
  CHECK_OK(tbk_event_synchronize(CTX, event));
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_GLOBAL));
  CHECK_OK(tbk_event_record(CTX, event, stream));
  CHECK_STATUS(tbk_event_synchronize(CTX, event), TB_ERROR_NOT_SUPPORTED);
  END_REFUSED(stream, "event synchronize");

  context = "refusals: a wait for an event recorded outside the capture, not yet complete";
  CHECK_OK(launch_sleep(other, 50, 100));
  CHECK_OK(tbk_event_record(CTX, event, other));
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_GLOBAL));
  CHECK_STATUS(tbk_stream_wait_event(CTX, stream, event), TB_ERROR_NOT_SUPPORTED);
  CHECK_MESSAGE("cudaErrorStreamCaptureIsolation");
  END_REFUSED(stream, "wait_event");
  CHECK_OK(tbk_stream_synchronize(CTX, other));

  context = "refusals: a wait for a complete event records nothing";
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_GLOBAL));
  CHECK_OK(tbk_stream_wait_event(CTX, stream, event));
  graph = END_OK(stream);
  if (graph != NULL) CHECK_OK(tbk_graph_destroy(CTX, graph));
  graph = NULL;

  context = "refusals: misuse";
  CHECK_STATUS(tbk_graph_capture_end(CTX, stream, &refused), TB_ERROR_INVALID_ARGUMENT);
  CHECK(refused == NULL);
  CHECK_STATUS(tbk_graph_capture_begin(CTX, stream, (tb_capture_mode)3), TB_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(tbk_graph_capture_end(CTX, stream, &refused), TB_ERROR_INVALID_ARGUMENT);
  CHECK_OK(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_GLOBAL));
  CHECK_STATUS(tbk_graph_capture_begin(CTX, stream, TB_CAPTURE_RELAXED), TB_ERROR_INVALID_ARGUMENT);
  CHECK_OK(launch_log(stream, 3));
  graph = END_OK(stream); /* the first capture goes on */
  if (graph != NULL) {
    CHECK_OK(tbk_graph_capture_begin(CTX, other, TB_CAPTURE_GLOBAL));
    CHECK_STATUS(tbk_graph_launch(CTX, graph, other), TB_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE("capturing");
    refused = END_OK(other);
    if (refused != NULL) CHECK_OK(tbk_graph_destroy(CTX, refused));
    CHECK_STATUS(tbk_graph_launch(CTX, graph, remote), TB_ERROR_INVALID_ARGUMENT);
    log_reset();
    CHECK_OK(tbk_graph_launch(CTX, graph, other));
    CHECK_OK(tbk_stream_synchronize(CTX, other));
    CHECK_LOG(3);
    CHECK_OK(tbk_graph_destroy(CTX, graph));
  }

  /* A stream destroyed while it captures can still end its capture. */
  context = "refusals: a stream destroyed while it captures";
  tb_stream doomed = new_stream(0);
  CHECK_OK(tbk_graph_capture_begin(CTX, doomed, TB_CAPTURE_GLOBAL));
  CHECK_OK(launch_log(doomed, 4));
  CHECK_OK(tbk_stream_destroy(CTX, doomed));
  graph = END_OK(doomed);
  if (graph != NULL) {
    log_reset();
    CHECK_OK(tbk_graph_launch(CTX, graph, stream));
    CHECK_OK(tbk_stream_synchronize(CTX, stream));
    CHECK_LOG(4);
    CHECK_OK(tbk_graph_destroy(CTX, graph));
  }

  /* A task made before its stream began capturing, enqueued during the capture, is captured;
   * the graph outlives the stream (whose slot ring the task may have come from). */
  context = "refusals: a task made before the capture began";
  tb_stream maker = new_stream(0);
  tbk_task *early = tbk_task_new(maker, raw_log, sizeof(int));
  CHECK(early != NULL);
  if (early != NULL) {
    int id = 11;
    early->name = "raw";
    memcpy(early->payload, &id, sizeof id);
    CHECK_OK(tbk_graph_capture_begin(CTX, maker, TB_CAPTURE_GLOBAL));
    CHECK_OK(tbk_stream_enqueue(maker, early));
    graph = END_OK(maker);
  }
  CHECK_OK(tbk_stream_destroy(CTX, maker));
  sleep_ms(20); /* its worker exits, and the stream goes away */
  if (early != NULL && graph != NULL) {
    log_reset();
    CHECK_OK(tbk_graph_launch(CTX, graph, stream));
    CHECK_OK(tbk_stream_synchronize(CTX, stream));
    CHECK_LOG(11);
    CHECK_OK(tbk_graph_destroy(CTX, graph));
  }
  CHECK_OK(tbk_event_destroy(CTX, event));
  CHECK_OK(tbk_stream_destroy(CTX, stream));
  CHECK_OK(tbk_stream_destroy(CTX, other));
  CHECK_OK(tbk_stream_destroy(CTX, remote));
}

/* Multi-stream capture, as CUDA's: a stream that waits for an event recorded in a capture
 * joins it (a fork), its work is captured, and it must be joined back (the capturing stream
 * waits for an event recorded on it) before capture_end. */
static void test_fork_join(void) {
  tb_stream main_stream = new_stream(0), side = new_stream(0), side2 = new_stream(0);
  tb_stream remote = new_stream(1), lone = new_stream(0);
  tb_event fork = NULL, join = NULL, join2 = NULL;
  CHECK_OK(tbk_event_create(CTX, 0, 0, &fork));
  CHECK_OK(tbk_event_create(CTX, 0, 0, &join));
  CHECK_OK(tbk_event_create(CTX, 0, 0, &join2));

  context = "fork/join: two side streams, replayed in a dependency order";
  CHECK_OK(tbk_graph_capture_begin(CTX, main_stream, TB_CAPTURE_GLOBAL));
  CHECK_OK(launch_log(main_stream, 1));
  CHECK_OK(tbk_event_record(CTX, fork, main_stream));
  CHECK_OK(tbk_stream_wait_event(CTX, side, fork)); /* side joins */
  CHECK_OK(tbk_stream_wait_event(CTX, side2, fork));
  CHECK_OK(launch_sleep(side, 5, 2)); /* captured, not run */
  CHECK_OK(launch_log(side2, 3));
  CHECK_OK(launch_log(main_stream, 4));
  CHECK_STATUS(tbk_stream_query(CTX, side), TB_ERROR_NOT_SUPPORTED); /* side captures */
  END_REFUSED(main_stream, "stream query");
  CHECK_OK(tbk_stream_synchronize(CTX, side)); /* the capture ended for side too */
  CHECK_OK(tbk_stream_synchronize(CTX, side2));

  log_reset();
  CHECK_OK(tbk_graph_capture_begin(CTX, main_stream, TB_CAPTURE_GLOBAL));
  CHECK_OK(launch_log(main_stream, 1));
  CHECK_OK(tbk_event_record(CTX, fork, main_stream));
  CHECK_OK(tbk_stream_wait_event(CTX, side, fork));
  CHECK_OK(tbk_stream_wait_event(CTX, side2, fork));
  CHECK_OK(launch_sleep(side, 5, 2));
  CHECK_OK(launch_log(side2, 3));
  CHECK_OK(launch_log(main_stream, 4));
  CHECK_OK(tbk_event_record(CTX, join, side));
  CHECK_OK(tbk_stream_wait_event(CTX, main_stream, join));
  CHECK_OK(tbk_event_record(CTX, join2, side2));
  CHECK_OK(tbk_stream_wait_event(CTX, main_stream, join2));
  CHECK_OK(launch_log(main_stream, 5));
  tb_graph graph = END_OK(main_stream);
  sleep_ms(10);
  CHECK(log_read(NULL, 0) == 0); /* nothing ran during the capture */
  if (graph != NULL) {
    for (int replay = 0; replay < 2; replay++) {
      CHECK_OK(tbk_graph_launch(CTX, graph, lone));
    }
    CHECK_OK(tbk_stream_synchronize(CTX, lone));
    CHECK_LOG(1, 2, 3, 4, 5, 1, 2, 3, 4, 5);
    CHECK_OK(tbk_graph_destroy(CTX, graph));
  }
  /* Outside a capture the side streams run their own work again. */
  log_reset();
  CHECK_OK(launch_log(side, 6));
  CHECK_OK(tbk_stream_synchronize(CTX, side));
  CHECK_LOG(6);

  context = "fork/join: a joined stream not joined back";
  CHECK_OK(tbk_graph_capture_begin(CTX, main_stream, TB_CAPTURE_GLOBAL));
  CHECK_OK(tbk_event_record(CTX, fork, main_stream));
  CHECK_OK(tbk_stream_wait_event(CTX, side, fork));
  CHECK_OK(launch_log(side, 7));
  CHECK_OK(tbk_event_record(CTX, join, side));
  CHECK_OK(tbk_stream_wait_event(CTX, main_stream, join));
  CHECK_OK(launch_log(side, 8)); /* after the join: unjoined again */
  END_REFUSED(main_stream, "cudaErrorStreamCaptureUnjoined");
  /* A stream that joined and did nothing more must be joined back too. */
  CHECK_OK(tbk_graph_capture_begin(CTX, main_stream, TB_CAPTURE_GLOBAL));
  CHECK_OK(tbk_event_record(CTX, fork, main_stream));
  CHECK_OK(tbk_stream_wait_event(CTX, side, fork));
  END_REFUSED(main_stream, "not joined back");

  context = "fork/join: a join through another joined stream (transitive)";
  log_reset();
  CHECK_OK(tbk_graph_capture_begin(CTX, main_stream, TB_CAPTURE_GLOBAL));
  CHECK_OK(tbk_event_record(CTX, fork, main_stream));
  CHECK_OK(tbk_stream_wait_event(CTX, side, fork));
  CHECK_OK(launch_log(side, 1));
  CHECK_OK(tbk_event_record(CTX, join, side));
  CHECK_OK(tbk_stream_wait_event(CTX, side2, join)); /* side2 joins through side */
  CHECK_OK(launch_log(side2, 2));
  CHECK_OK(tbk_event_record(CTX, join2, side2));
  CHECK_OK(tbk_stream_wait_event(CTX, main_stream, join2)); /* covers side and side2 */
  graph = END_OK(main_stream);
  if (graph != NULL) {
    CHECK_OK(tbk_graph_launch(CTX, graph, lone));
    CHECK_OK(tbk_stream_synchronize(CTX, lone));
    CHECK_LOG(1, 2);
    CHECK_OK(tbk_graph_destroy(CTX, graph));
  }

  context = "fork/join: misuse";
  /* capture_end from a joined stream: refused and the capture invalidated, not ended. */
  CHECK_OK(tbk_graph_capture_begin(CTX, main_stream, TB_CAPTURE_GLOBAL));
  CHECK_OK(tbk_event_record(CTX, fork, main_stream));
  CHECK_OK(tbk_stream_wait_event(CTX, side, fork));
  tb_graph refused = NULL;
  CHECK_STATUS(tbk_graph_capture_end(CTX, side, &refused), TB_ERROR_NOT_SUPPORTED);
  CHECK_MESSAGE("cudaErrorStreamCaptureUnmatched");
  CHECK(refused == NULL);
  /* A joined stream cannot begin a capture of its own, nor launch a graph. */
  CHECK_STATUS(tbk_graph_capture_begin(CTX, side, TB_CAPTURE_GLOBAL), TB_ERROR_INVALID_ARGUMENT);
  END_REFUSED(main_stream, "cudaErrorStreamCaptureUnmatched");
  /* A stream of another device cannot join. */
  CHECK_OK(tbk_graph_capture_begin(CTX, main_stream, TB_CAPTURE_RELAXED));
  CHECK_OK(tbk_event_record(CTX, fork, main_stream));
  CHECK_STATUS(tbk_stream_wait_event(CTX, remote, fork), TB_ERROR_NOT_SUPPORTED);
  END_REFUSED(main_stream, "another device");
  /* A wait that links two captures invalidates both. */
  CHECK_OK(tbk_graph_capture_begin(CTX, main_stream, TB_CAPTURE_RELAXED));
  CHECK_OK(tbk_graph_capture_begin(CTX, side, TB_CAPTURE_RELAXED));
  CHECK_OK(tbk_event_record(CTX, fork, main_stream));
  CHECK_STATUS(tbk_stream_wait_event(CTX, side, fork), TB_ERROR_NOT_SUPPORTED);
  CHECK_MESSAGE("cudaErrorStreamCaptureIsolation");
  END_REFUSED(side, "cudaErrorStreamCaptureIsolation");
  END_REFUSED(main_stream, "cudaErrorStreamCaptureIsolation");
  /* An event recorded in an ended capture: waits for it wait for nothing. */
  CHECK_OK(tbk_stream_wait_event(CTX, lone, fork));
  CHECK_OK(tbk_stream_synchronize(CTX, lone));
  /* A record outside a capture makes the event an ordinary one again. */
  CHECK_OK(launch_sleep(side, 30, 9));
  CHECK_OK(tbk_event_record(CTX, fork, side));
  CHECK_STATUS(tbk_event_query(CTX, fork), TB_ERROR_NOT_READY);
  CHECK_OK(tbk_event_synchronize(CTX, fork));

  CHECK_OK(tbk_event_destroy(CTX, fork));
  CHECK_OK(tbk_event_destroy(CTX, join));
  CHECK_OK(tbk_event_destroy(CTX, join2));
  tb_stream all[] = {main_stream, side, side2, remote, lone};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    CHECK_OK(tbk_stream_synchronize(CTX, all[i]));
    CHECK_OK(tbk_stream_destroy(CTX, all[i]));
  }
}

static void test_fault(void) {
  tb_stream first = new_stream(0), second = new_stream(0);
  tb_graph graph = NULL, raw = NULL;
  int failing = 0;
  context = "fault: a task failing in a replay";
  CHECK_OK(tbk_graph_capture_begin(CTX, first, TB_CAPTURE_GLOBAL));
  CHECK_OK(launch_log(first, 1));
  CHECK_OK(tbk_launch(CTX, first, "my_kernel", fail_fn, &failing, sizeof failing));
  CHECK_OK(enqueue_raw(first, raw_fail, "raw_task", 5));
  CHECK_OK(launch_log(first, 2));
  graph = END_OK(first);
  CHECK_OK(tbk_graph_capture_begin(CTX, first, TB_CAPTURE_GLOBAL));
  CHECK_OK(enqueue_raw(first, raw_fail, "raw_task", 6));
  raw = END_OK(first);
  if (graph == NULL || raw == NULL) goto done;
  /* Captured, not run: nothing faulted. */
  CHECK_OK(tbk_stream_synchronize(CTX, first));
  CHECK(!tbk_is_faulted(g_context.runtime, 0));
  /* A replay on another stream of the device faults it with the first failing task's name. */
  log_reset();
  CHECK_OK(tbk_graph_launch(CTX, graph, second));
  CHECK_STATUS(tbk_stream_synchronize(CTX, second), TB_ERROR_DEVICE_FAULT);
  CHECK_MESSAGE("boom 4714");
  CHECK_MESSAGE("(in my_kernel)");
  CHECK(strstr(tbk_last_error(NULL), "raw_task") == NULL);
  CHECK_LOG(1); /* the launch after the failure is skipped on the faulted device */
  CHECK_STATUS(tbk_stream_synchronize(CTX, first), TB_ERROR_DEVICE_FAULT);
  CHECK_OK(tbk_check_fault(CTX, 1, "test")); /* the other device is not affected */
  CHECK_STATUS(tbk_graph_launch(CTX, graph, first), TB_ERROR_DEVICE_FAULT);
  CHECK_STATUS(tbk_graph_capture_begin(CTX, first, TB_CAPTURE_GLOBAL), TB_ERROR_DEVICE_FAULT);
  CHECK_OK(tbk_device_reset(CTX, 0));
  /* tbk_task_fail from a vendor's own task. */
  context = "fault: tbk_task_fail in a replayed task";
  CHECK_OK(tbk_graph_launch(CTX, raw, first));
  CHECK_STATUS(tbk_stream_synchronize(CTX, first), TB_ERROR_DEVICE_FAULT);
  CHECK_MESSAGE("raw failure 6 (in raw_task)");
  CHECK_OK(tbk_device_reset(CTX, 0));
  CHECK_OK(tbk_stream_synchronize(CTX, first));
done:
  if (graph != NULL) CHECK_OK(tbk_graph_destroy(CTX, graph));
  if (raw != NULL) CHECK_OK(tbk_graph_destroy(CTX, raw));
  CHECK_OK(tbk_stream_destroy(CTX, first));
  CHECK_OK(tbk_stream_destroy(CTX, second));
}

static void test_destroy_queued(void) {
  tb_stream first = new_stream(0), second = new_stream(0);
  context = "destroy with launches queued";
  CHECK_OK(tbk_graph_capture_begin(CTX, first, TB_CAPTURE_GLOBAL));
  CHECK_OK(launch_log(first, 1));
  CHECK_OK(enqueue_raw(first, raw_log, "raw", 2));
  tb_graph graph = END_OK(first);
  if (graph != NULL) {
    log_reset();
    CHECK_OK(launch_sleep(first, 50, 100));
    for (int i = 0; i < 3; i++) CHECK_OK(tbk_graph_launch(CTX, graph, first));
    CHECK_OK(tbk_graph_destroy(CTX, graph));
    CHECK_OK(tbk_stream_synchronize(CTX, first));
    CHECK_LOG(100, 1, 2, 1, 2, 1, 2);
  }
  context = "destroy with launches queued on two streams";
  CHECK_OK(tbk_graph_capture_begin(CTX, first, TB_CAPTURE_GLOBAL));
  CHECK_OK(launch_log(first, 3));
  graph = END_OK(first);
  if (graph != NULL) {
    log_reset();
    CHECK_OK(launch_sleep(first, 30, 100));
    CHECK_OK(tbk_graph_launch(CTX, graph, first));
    CHECK_OK(tbk_graph_launch(CTX, graph, second));
    CHECK_OK(tbk_graph_destroy(CTX, graph));
    CHECK_OK(tbk_stream_synchronize(CTX, second));
    CHECK_OK(tbk_stream_synchronize(CTX, first));
    CHECK_LOG(100, 3, 3);
  }
  /* The streams go away with a launch queued: the graph goes with the last launch. */
  context = "streams destroyed with launches queued";
  CHECK_OK(tbk_graph_capture_begin(CTX, first, TB_CAPTURE_GLOBAL));
  CHECK_OK(launch_log(first, 4));
  graph = END_OK(first);
  if (graph != NULL) {
    log_reset();
    CHECK_OK(launch_sleep(first, 20, 100));
    CHECK_OK(tbk_graph_launch(CTX, graph, first));
    CHECK_OK(tbk_graph_launch(CTX, graph, second));
    CHECK_OK(tbk_graph_destroy(CTX, graph));
  }
  CHECK_OK(tbk_stream_destroy(CTX, first));
  CHECK_OK(tbk_stream_destroy(CTX, second));
  CHECK_OK(tbk_device_synchronize(CTX, 0));
  if (graph != NULL) CHECK_LOG(100, 4, 4);
}

/* Another thread queries and enqueues on a stream while this one begins and ends captures of it:
 * every call sees the capture or not, and none uses one that ended (run under the sanitizers,
 * this is what finds a capture freed under a concurrent call). */
typedef struct racer {
  tb_stream stream;
  _Atomic bool stop;
  _Atomic int unexpected; /* a status other than the ones a query or launch may return */
} racer;

static _Atomic int g_counted;

static tb_status count_fn(void *args, char *message, size_t message_size) {
  (void)args;
  (void)message;
  (void)message_size;
  atomic_fetch_add(&g_counted, 1);
  return TB_OK;
}

static void *race(void *arg) {
  racer *r = arg;
  while (!atomic_load(&r->stop)) {
    tb_status status = tbk_stream_query(CTX, r->stream);
    if (status != TB_OK && status != TB_ERROR_NOT_READY && status != TB_ERROR_NOT_SUPPORTED) {
      atomic_fetch_add(&r->unexpected, 1);
    }
    if (tbk_launch(CTX, r->stream, "count", count_fn, NULL, 0) != TB_OK) {
      atomic_fetch_add(&r->unexpected, 1);
    }
  }
  return NULL;
}

static void test_concurrent_end(void) {
  context = "captures begun and ended while another thread uses the stream";
  racer r = {.stream = new_stream(0)};
  atomic_init(&r.stop, false);
  atomic_init(&r.unexpected, 0);
  pthread_t thread;
  if (pthread_create(&thread, NULL, race, &r) != 0) {
    printf("pthread_create failed\n");
    exit(2);
  }
  int bad_ends = 0, graphs = 0;
  for (int i = 0; i < 2000; i++) {
    if (tbk_graph_capture_begin(CTX, r.stream, TB_CAPTURE_RELAXED) != TB_OK) {
      bad_ends++;
      continue;
    }
    (void)tbk_launch(CTX, r.stream, "count", count_fn, NULL, 0);
    tb_graph graph = NULL;
    tb_status status = tbk_graph_capture_end(CTX, r.stream, &graph);
    if (status == TB_OK && graph != NULL) {
      graphs++;
      (void)tbk_graph_launch(CTX, graph, r.stream);
      (void)tbk_graph_destroy(CTX, graph);
    } else if (status != TB_ERROR_NOT_SUPPORTED || graph != NULL) {
      bad_ends++;
    }
  }
  atomic_store(&r.stop, true);
  pthread_join(thread, NULL);
  CHECK(bad_ends == 0);
  CHECK(atomic_load(&r.unexpected) == 0);
  CHECK_OK(tbk_stream_synchronize(CTX, r.stream));
  CHECK_OK(tbk_stream_destroy(CTX, r.stream));
  (void)graphs;
}

int main(void) {
  tbk_runtime_config config = {.struct_size = sizeof config,
                               .name = "graphtest",
                               .device_count = 2,
                               .spin_us = 20,
                               .user = &g_context,
                               .destroy = on_destroy,
                               .task_done = on_task_done};
  if (tbk_runtime_create(&config, &g_context.runtime) != TB_OK) {
    printf("tbk_runtime_create failed: %s\n", tbk_last_error(NULL));
    return 2;
  }
  test_capture_and_replay();
  test_two_streams();
  test_check_capture();
  test_refusals();
  test_fork_join();
  test_fault();
  test_destroy_queued();
  test_concurrent_end();
  /* Everything was released: the runtime goes away once the last worker exits. */
  context = "finalize";
  tbk_runtime_finalize(g_context.runtime);
  for (int i = 0; i < 5000 && !atomic_load(&g_runtime_gone); i++) sleep_ms(1);
  CHECK(atomic_load(&g_runtime_gone));
  printf("kit.graph: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
