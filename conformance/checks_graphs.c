/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks of a vendor's graph capture (vendor.h, ABI 2.3, TB_EXTENSION_GRAPHS, @ref tb_graphs):
 * captured copies, memsets and host functions are recorded, not run, and run again at every
 * replay with the captured arguments (reading the inputs' current contents); replays run on any
 * stream of the graph's device, in launch order; the calls a capture cannot record fail with
 * TB_ERROR_NOT_SUPPORTED and invalidate it, the blocking copies according to the capture mode;
 * misuse fails with TB_ERROR_INVALID_ARGUMENT; a graph destroyed with launches queued still runs
 * them; a failure during a replay faults the device.  Skipped when the vendor has no such
 * extension.  Only device 0 captures (device 1, when there is one, is the "other device").
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define MIB ((size_t)1 << 20)
/* The pipeline's block: not a multiple of anything in particular. */
#define PIPE_BYTES ((size_t)65536 + 192)
/* Each of the two buffers the slow work copies between. */
#define SLOW_BYTES (16 * MIB)
#define SENTINEL_BYTE 0x11
#define MEMSET_BYTE 0xA5

/* What capture_end must overwrite with NULL when it fails. */
static max_align_t g_not_a_graph;
#define NOT_A_GRAPH ((tb_graph)(void *)&g_not_a_graph)

/* ---- helpers ---- */

/* The vendor's graphs extension in *graphs, and TB_CHECK_PASS; a skip when the vendor has none
 * (or no device); a failure when the one it has is unusable. */
static tb_check_outcome find_graphs(tb_check_context *ctx, const tb_graphs_extension **graphs) {
  char error[512];
  *graphs = tb_loader_graphs(ctx->vendor, error, sizeof error);
  if (*graphs == NULL) {
    if (error[0] != '\0') return tbc_fail(ctx, "%s", error);
    return tbc_skip(ctx, "the vendor has no graphs extension (TB_EXTENSION_GRAPHS, ABI 2.3)");
  }
  int32_t count = tbc_device_count(ctx);
  if (count < 0) return TB_CHECK_FAIL;
  if (count == 0) return tbc_skip(ctx, "no devices");
  return TB_CHECK_PASS;
}

/* Starts a check: `gx` set, or `outcome` set and a jump to `done`. */
#define FIND_GRAPHS()                                    \
  do {                                                   \
    tb_check_outcome tbc_found_ = find_graphs(ctx, &gx); \
    if (tbc_found_ != TB_CHECK_PASS) {                   \
      outcome = tbc_found_;                              \
      goto done;                                         \
    }                                                    \
  } while (0)

/* Puts "step: " in front of a failure's message (the step a loop was at). */
static void prefix_step(tb_check_context *ctx, const char *step) {
  const size_t size = sizeof ctx->message;
  size_t s = strlen(step), m = strlen(ctx->message);
  if (s + 3 > size) return;
  if (m > size - 1 - s - 2) m = size - 1 - s - 2; /* truncated at the end */
  memmove(ctx->message + s + 2, ctx->message, m);
  memcpy(ctx->message, step, s);
  memcpy(ctx->message + s, ": ", 2);
  ctx->message[s + 2 + m] = '\0';
}

/* Host memory for the host side of asynchronous copies: pinned when the vendor has it. */
static void *host_alloc(const tb_vendor_handle *v, size_t size) {
  if (v->memory.host_malloc == NULL) return malloc(size);
  void *ptr = NULL;
  return v->memory.host_malloc(v->context, size, &ptr) == TB_OK ? ptr : NULL;
}

static void host_release(const tb_vendor_handle *v, void *ptr) {
  if (ptr == NULL) return;
  if (v->memory.host_malloc == NULL) {
    free(ptr);
  } else {
    v->memory.host_free(v->context, ptr);
  }
}

/* Ends a capture a failed check left open, without looking at the outcome. */
static void abandon_capture(const tb_vendor_handle *v, const tb_graphs_extension *gx,
                            tb_stream stream) {
  tb_graph graph = NULL;
  (void)gx->capture_end(v->context, stream, &graph);
  if (graph != NULL) (void)gx->graph_destroy(v->context, graph);
}

/* Ends the capture of `stream` expecting a graph: *graph receives it. */
static bool end_capture(tb_check_context *ctx, const tb_graphs_extension *gx, tb_stream stream,
                        tb_graph *graph) {
  const tb_vendor_handle *v = ctx->vendor;
  EXPECT_OK(gx->capture_end(v->context, stream, graph));
  EXPECT_TRUE(*graph != NULL && *graph != NOT_A_GRAPH,
              "capture_end returned TB_OK without a graph (%p)", (void *)*graph);
  return true;
done:
  return false;
}

/* Ends the capture of `stream`, which the refused call `what` invalidated: capture_end must fail
 * with TB_ERROR_NOT_SUPPORTED, with a message, and without a graph; afterwards the stream no
 * longer captures. */
static bool end_refused(tb_check_context *ctx, const tb_graphs_extension *gx, tb_stream stream,
                        const char *what) {
  const tb_vendor_handle *v = ctx->vendor;
  tb_graph graph = NOT_A_GRAPH;
  tb_status status = gx->capture_end(v->context, stream, &graph);
  const char *message = v->last_error(v->context);
  char copy[512];
  snprintf(copy, sizeof copy, "%s", message != NULL ? message : "(last_error returned NULL)");
  if (status == TB_OK && graph != NULL && graph != NOT_A_GRAPH) {
    (void)gx->graph_destroy(v->context, graph);
  }
  EXPECT_TRUE(status == TB_ERROR_NOT_SUPPORTED,
              "%s was refused during the capture, which invalidates it, but capture_end "
              "returned %s (expected TB_ERROR_NOT_SUPPORTED)%s%s",
              what, tb_status_name(status), status != TB_OK ? ": " : "",
              status != TB_OK ? copy : "");
  EXPECT_TRUE(copy[0] != '\0' && message != NULL,
              "capture_end of a capture invalidated by %s returned TB_ERROR_NOT_SUPPORTED, but "
              "last_error() gave an empty message (it should repeat the first failure's)",
              what);
  EXPECT_TRUE(graph == NULL,
              "capture_end of a capture invalidated by %s failed but left %p in *graph "
              "(expected NULL)",
              what, (void *)graph);
  graph = NOT_A_GRAPH;
  EXPECT_STATUS(gx->capture_end(v->context, stream, &graph), TB_ERROR_INVALID_ARGUMENT);
  return true;
done:
  return false;
}

/* Slow work: buffers the chain of device copies of enqueue_slow() runs between. */
typedef struct slow_buffers {
  void *p, *q;
} slow_buffers;

static bool slow_open(tb_check_context *ctx, slow_buffers *slow) {
  const tb_vendor_handle *v = ctx->vendor;
  EXPECT_OK(v->memory.device_malloc(v->context, 0, SLOW_BYTES, &slow->p));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, SLOW_BYTES, &slow->q));
  return true;
done:
  return false;
}

static void slow_close(const tb_vendor_handle *v, slow_buffers *slow) {
  if (slow->p != NULL) v->memory.device_free(v->context, 0, slow->p);
  if (slow->q != NULL) v->memory.device_free(v->context, 0, slow->q);
}

/* Enqueues on `stream` a chain of large device copies that keeps it busy well after the call
 * returns (tens of milliseconds on a host-driven device). */
static bool enqueue_slow(tb_check_context *ctx, tb_stream stream, slow_buffers *slow) {
  const tb_vendor_handle *v = ctx->vendor;
  EXPECT_OK(v->memory.memset_async(v->context, stream, slow->p, 3, SLOW_BYTES));
  for (int i = 0; i < 8; i++) {
    EXPECT_OK(v->memory.copy_d2d_async(v->context, stream, 0, slow->q, 0, slow->p, SLOW_BYTES));
    EXPECT_OK(v->memory.copy_d2d_async(v->context, stream, 0, slow->p, 0, slow->q, SLOW_BYTES));
  }
  return true;
done:
  return false;
}

/* ---- the pipeline: the work most checks capture ----
 *
 *   copy_h2d_async  a[0, n)         <- in[0, n)          (host input)
 *   memset_async    b[0, 2n)        <- MEMSET_BYTE
 *   copy_d2d_async  b[0, n)         <- a[0, n)
 *   copy_d2d_async  b[n, n + n/2)   <- src[0, n/2)       (device input)
 *   copy_d2h_async  out[0, 2n)      <- b[0, 2n)          (host output)
 */
typedef struct pipeline {
  size_t n;
  void *a, *b, *src;          /* device 0: n, 2n and n/2 bytes */
  unsigned char *in, *out;    /* host, for the asynchronous copies: n and 2n bytes */
  unsigned char *want, *read; /* host scratch: 2n bytes each */
} pipeline;

static bool pipeline_open(tb_check_context *ctx, pipeline *p) {
  const tb_vendor_handle *v = ctx->vendor;
  const size_t n = PIPE_BYTES;
  p->n = n;
  p->in = host_alloc(v, n);
  p->out = host_alloc(v, 2 * n);
  p->want = malloc(2 * n);
  p->read = malloc(2 * n);
  EXPECT_TRUE(p->in != NULL && p->out != NULL && p->want != NULL && p->read != NULL,
              "host allocation of %zu bytes failed", 2 * n);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n, &p->a));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, 2 * n, &p->b));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n / 2, &p->src));
  tbc_fill(p->in, n, 1);
  memset(p->out, SENTINEL_BYTE, 2 * n);
  tbc_fill(p->want, 2 * n, 2);
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, p->a, p->want, n));
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, p->b, p->want, 2 * n));
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, p->src, p->want + n, n / 2));
  return true;
done:
  return false;
}

static void pipeline_close(const tb_vendor_handle *v, pipeline *p) {
  if (p->a != NULL) v->memory.device_free(v->context, 0, p->a);
  if (p->b != NULL) v->memory.device_free(v->context, 0, p->b);
  if (p->src != NULL) v->memory.device_free(v->context, 0, p->src);
  host_release(v, p->in);
  host_release(v, p->out);
  free(p->want);
  free(p->read);
}

static bool pipeline_enqueue(tb_check_context *ctx, tb_stream stream, pipeline *p) {
  const tb_vendor_handle *v = ctx->vendor;
  const size_t n = p->n;
  EXPECT_OK(v->memory.copy_h2d_async(v->context, stream, p->a, p->in, n));
  EXPECT_OK(v->memory.memset_async(v->context, stream, p->b, MEMSET_BYTE, 2 * n));
  EXPECT_OK(v->memory.copy_d2d_async(v->context, stream, 0, p->b, 0, p->a, n));
  EXPECT_OK(v->memory.copy_d2d_async(v->context, stream, 0, (char *)p->b + n, 0, p->src, n / 2));
  EXPECT_OK(v->memory.copy_d2h_async(v->context, stream, p->out, p->b, 2 * n));
  return true;
done:
  return false;
}

/* Writes new contents into both inputs (the device one with a blocking copy) and the sentinel
 * into the output; the stream must be idle and nothing capturing. */
static bool pipeline_new_inputs(tb_check_context *ctx, pipeline *p, uint32_t seed) {
  const tb_vendor_handle *v = ctx->vendor;
  tbc_fill(p->in, p->n, seed);
  tbc_fill(p->read, p->n / 2, seed + 1000);
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, p->src, p->read, p->n / 2));
  memset(p->out, SENTINEL_BYTE, 2 * p->n);
  return true;
done:
  return false;
}

/* Fails unless `out` holds one run's result for the current inputs; `when` says after what. */
static bool pipeline_expect(tb_check_context *ctx, pipeline *p, const char *when) {
  const tb_vendor_handle *v = ctx->vendor;
  const size_t n = p->n;
  memcpy(p->want, p->in, n);
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, p->want + n, p->src, n / 2));
  memset(p->want + n + n / 2, MEMSET_BYTE, n - n / 2);
  long diff = tbc_first_difference(p->out, p->want, 2 * n);
  if (diff < 0) return true;
  const char *where = (size_t)diff < n           ? "bytes of the host input, via copy_h2d_async "
                                                   "and copy_d2d_async"
                      : (size_t)diff < n + n / 2 ? "bytes of the device input, via copy_d2d_async"
                                                 : "bytes of memset_async";
  tbc_fail(ctx,
           "%s: the output differs from the captured work's result at byte %ld of %zu (got "
           "0x%02x, expected 0x%02x, among the %s)%s",
           when, diff, 2 * n, p->out[diff], p->want[diff], where,
           p->out[diff] == SENTINEL_BYTE ? "; the output still holds the sentinel there: the "
                                           "copy_d2h_async did not write it"
                                         : "");
  return false;
done:
  return false;
}

/* ---- checks ---- */

/* (a) Captured work is recorded, not run; a launch runs it. */
static tb_check_outcome check_capture_records(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  pipeline p = {0};
  tb_stream stream = NULL;
  tb_graph graph = NULL;
  bool capturing = false;
  unsigned char *before = NULL, *after = NULL;
  FIND_GRAPHS();
  if (!pipeline_open(ctx, &p)) goto done;
  const size_t n = p.n;
  before = malloc(3 * n);
  after = malloc(3 * n);
  EXPECT_TRUE(before != NULL && after != NULL, "host allocation failed");
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, before, p.a, n));
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, before + n, p.b, 2 * n));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL));
  capturing = true;
  if (!pipeline_enqueue(ctx, stream, &p)) goto done;
  capturing = false;
  if (!end_capture(ctx, gx, stream, &graph)) goto done;
  /* Nothing was run: not during the capture, not at capture_end, not on the stream later. */
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  for (size_t i = 0; i < 2 * n; i++) {
    EXPECT_TRUE(p.out[i] == SENTINEL_BYTE,
                "the host buffer a captured copy_d2h_async writes changed at byte %zu before "
                "any launch (0x%02x, was 0x%02x): captured work must be recorded, not run",
                i, p.out[i], SENTINEL_BYTE);
  }
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, after, p.a, n));
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, after + n, p.b, 2 * n));
  long diff = tbc_first_difference(before, after, 3 * n);
  EXPECT_TRUE(diff < 0,
              "device memory written by the captured work (%s) changed at byte %ld before any "
              "launch: captured work must be recorded, not run",
              (size_t)diff < n ? "the destination of copy_h2d_async"
                               : "the destination of memset_async and copy_d2d_async",
              (size_t)diff < n ? diff : diff - (long)n);
  EXPECT_OK(gx->graph_launch(v->context, graph, stream));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  if (!pipeline_expect(ctx, &p, "after graph_launch and stream synchronize")) goto done;
  outcome = TB_CHECK_PASS;
done:
  if (capturing) abandon_capture(v, gx, stream);
  if (graph != NULL) gx->graph_destroy(v->context, graph);
  if (stream != NULL) {
    (void)v->stream.synchronize(v->context, stream);
    v->stream.destroy(v->context, stream);
  }
  pipeline_close(v, &p);
  free(before);
  free(after);
  return outcome;
}

/* (b) Every replay reads the inputs' current contents: new device and host bytes, new result. */
static tb_check_outcome check_replay_new_inputs(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  pipeline p = {0};
  tb_stream stream = NULL;
  tb_graph graph = NULL;
  bool capturing = false;
  FIND_GRAPHS();
  if (!pipeline_open(ctx, &p)) goto done;
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL));
  capturing = true;
  if (!pipeline_enqueue(ctx, stream, &p)) goto done;
  capturing = false;
  if (!end_capture(ctx, gx, stream, &graph)) goto done;
  EXPECT_OK(gx->graph_launch(v->context, graph, stream));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  if (!pipeline_expect(ctx, &p, "first replay")) goto done;
  for (uint32_t round = 0; round < 3; round++) {
    char when[200];
    snprintf(when, sizeof when,
             "replay %u, after new bytes were written into the captured device input (with "
             "copy_h2d) and host input: a replay reads the inputs' current contents",
             (unsigned)round + 2);
    if (!pipeline_new_inputs(ctx, &p, 40 + round)) goto done;
    EXPECT_OK(gx->graph_launch(v->context, graph, stream));
    EXPECT_OK(v->stream.synchronize(v->context, stream));
    if (!pipeline_expect(ctx, &p, when)) goto done;
  }
  outcome = TB_CHECK_PASS;
done:
  if (capturing) abandon_capture(v, gx, stream);
  if (graph != NULL) gx->graph_destroy(v->context, graph);
  if (stream != NULL) {
    (void)v->stream.synchronize(v->context, stream);
    v->stream.destroy(v->context, stream);
  }
  pipeline_close(v, &p);
  return outcome;
}

/* (c) A graph launches on any stream of its device; not on a capturing one, nor on another
 * device's. */
static tb_check_outcome check_launch_streams(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  pipeline p = {0};
  tb_stream first = NULL, second = NULL, other_device = NULL;
  tb_graph graph = NULL;
  bool capturing = false;
  FIND_GRAPHS();
  if (!pipeline_open(ctx, &p)) goto done;
  EXPECT_OK(v->stream.create(v->context, 0, 0, &first));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &second));
  EXPECT_OK(gx->capture_begin(v->context, first, TB_CAPTURE_GLOBAL));
  capturing = true;
  if (!pipeline_enqueue(ctx, first, &p)) goto done;
  capturing = false;
  if (!end_capture(ctx, gx, first, &graph)) goto done;
  if (!pipeline_new_inputs(ctx, &p, 50)) goto done;
  EXPECT_OK(gx->graph_launch(v->context, graph, second));
  EXPECT_OK(v->stream.synchronize(v->context, second));
  if (!pipeline_expect(ctx, &p, "a replay on a second stream of the device (synchronized)")) {
    goto done;
  }
  /* Not on a capturing stream: the first, capturing again. */
  EXPECT_OK(gx->capture_begin(v->context, first, TB_CAPTURE_GLOBAL));
  capturing = true;
  EXPECT_STATUS(gx->graph_launch(v->context, graph, first), TB_ERROR_INVALID_ARGUMENT);
  capturing = false;
  {
    tb_graph nested = NULL;
    tb_status status = gx->capture_end(v->context, first, &nested);
    if (nested != NULL) gx->graph_destroy(v->context, nested);
    EXPECT_TRUE(status == TB_OK || status == TB_ERROR_NOT_SUPPORTED,
                "capture_end after a refused graph_launch on the capturing stream returned %s",
                tb_status_name(status));
  }
  /* Not on a stream of another device. */
  if (tbc_device_count(ctx) >= 2) {
    EXPECT_OK(v->stream.create(v->context, 1, 0, &other_device));
    EXPECT_STATUS(gx->graph_launch(v->context, graph, other_device), TB_ERROR_INVALID_ARGUMENT);
  }
  /* The refused launches left the graph intact. */
  if (!pipeline_new_inputs(ctx, &p, 51)) goto done;
  EXPECT_OK(gx->graph_launch(v->context, graph, first));
  EXPECT_OK(v->stream.synchronize(v->context, first));
  if (!pipeline_expect(ctx, &p, "a replay after the refused launches")) goto done;
  outcome = TB_CHECK_PASS;
done:
  if (capturing) abandon_capture(v, gx, first);
  if (graph != NULL) gx->graph_destroy(v->context, graph);
  if (first != NULL) {
    (void)v->stream.synchronize(v->context, first);
    v->stream.destroy(v->context, first);
  }
  if (second != NULL) {
    (void)v->stream.synchronize(v->context, second);
    v->stream.destroy(v->context, second);
  }
  if (other_device != NULL) v->stream.destroy(v->context, other_device);
  pipeline_close(v, &p);
  return outcome;
}

/* Launches of one graph run in launch order, whatever their streams: a launch on an idle stream
 * waits for an earlier launch queued behind slow work on another.  The graph swaps two buffers
 * (through a third) and copies the first to the host, so running it before the slow work that
 * sets both buffers leaves a different result. */
static tb_check_outcome check_launch_order(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  const size_t n = 4096;
  slow_buffers slow = {0};
  void *x = NULL, *y = NULL, *t = NULL;
  unsigned char *out = NULL, *want_x = NULL, *want_y = NULL, *scratch = NULL;
  tb_stream first = NULL, second = NULL;
  tb_graph graph = NULL;
  bool capturing = false;
  FIND_GRAPHS();
  out = host_alloc(v, n);
  want_x = host_alloc(v, n);
  want_y = host_alloc(v, n);
  scratch = malloc(n);
  EXPECT_TRUE(out != NULL && want_x != NULL && want_y != NULL && scratch != NULL,
              "host allocation failed");
  if (!slow_open(ctx, &slow)) goto done;
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n, &x));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n, &y));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n, &t));
  tbc_fill(scratch, n, 60);
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, x, scratch, n));
  tbc_fill(scratch, n, 61);
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, y, scratch, n));
  tbc_fill(want_x, n, 62);
  tbc_fill(want_y, n, 63);
  EXPECT_OK(v->stream.create(v->context, 0, 0, &first));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &second));
  EXPECT_OK(gx->capture_begin(v->context, first, TB_CAPTURE_GLOBAL));
  capturing = true;
  EXPECT_OK(v->memory.copy_d2d_async(v->context, first, 0, t, 0, x, n));
  EXPECT_OK(v->memory.copy_d2d_async(v->context, first, 0, x, 0, y, n));
  EXPECT_OK(v->memory.copy_d2d_async(v->context, first, 0, y, 0, t, n));
  EXPECT_OK(v->memory.copy_d2h_async(v->context, first, out, x, n));
  capturing = false;
  if (!end_capture(ctx, gx, first, &graph)) goto done;
  /* first: slow work, then x = X and y = Y, then launch 1 (x = Y, y = X); second: launch 2,
   * which must come after launch 1 (x = X, y = Y, out = X). */
  if (!enqueue_slow(ctx, first, &slow)) goto done;
  EXPECT_OK(v->memory.copy_h2d_async(v->context, first, x, want_x, n));
  EXPECT_OK(v->memory.copy_h2d_async(v->context, first, y, want_y, n));
  EXPECT_OK(gx->graph_launch(v->context, graph, first));
  EXPECT_OK(gx->graph_launch(v->context, graph, second));
  EXPECT_OK(v->stream.synchronize(v->context, second));
  EXPECT_OK(v->stream.synchronize(v->context, first));
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, scratch, x, n));
  EXPECT_TRUE(
      tbc_first_difference(out, want_x, n) < 0 && tbc_first_difference(scratch, want_x, n) < 0,
      "a graph launched on stream 1 behind slow work, then on idle stream 2: the "
      "result is not that of the two launches in launch order (%s): the launch on "
      "stream 2 must run after the earlier launch on stream 1",
      tbc_first_difference(out, want_y, n) < 0
          ? "the output holds what a single swap gives: a launch ran before the work "
            "ahead of the first launch, or did not run"
          : "the output is neither expected value");
  outcome = TB_CHECK_PASS;
done:
  if (capturing) abandon_capture(v, gx, first);
  if (first != NULL) (void)v->stream.synchronize(v->context, first);
  if (second != NULL) (void)v->stream.synchronize(v->context, second);
  if (graph != NULL) gx->graph_destroy(v->context, graph);
  if (first != NULL) v->stream.destroy(v->context, first);
  if (second != NULL) v->stream.destroy(v->context, second);
  if (x != NULL) v->memory.device_free(v->context, 0, x);
  if (y != NULL) v->memory.device_free(v->context, 0, y);
  if (t != NULL) v->memory.device_free(v->context, 0, t);
  slow_close(v, &slow);
  host_release(v, out);
  host_release(v, want_x);
  host_release(v, want_y);
  free(scratch);
  return outcome;
}

/* (d) Query and synchronize of the capturing stream, and synchronize of its device, fail with
 * TB_ERROR_NOT_SUPPORTED and invalidate the capture, in every mode. */
static tb_check_outcome check_refused_calls(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  const size_t n = 4096;
  void *buffer = NULL;
  tb_stream stream = NULL;
  bool capturing = false;
  char step[160] = "";
  static const tb_capture_mode modes[] = {TB_CAPTURE_GLOBAL, TB_CAPTURE_THREAD_LOCAL,
                                          TB_CAPTURE_RELAXED};
  static const char *const mode_names[] = {"TB_CAPTURE_GLOBAL", "TB_CAPTURE_THREAD_LOCAL",
                                           "TB_CAPTURE_RELAXED"};
  static const char *const calls[] = {"stream.query of the capturing stream",
                                      "stream.synchronize of the capturing stream",
                                      "device.synchronize of the capturing stream's device"};
  FIND_GRAPHS();
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n, &buffer));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
      snprintf(step, sizeof step, "a capture in mode %s, then %s", mode_names[m], calls[c]);
      EXPECT_OK(gx->capture_begin(v->context, stream, modes[m]));
      capturing = true;
      EXPECT_OK(v->memory.memset_async(v->context, stream, buffer, (int)c, n));
      switch (c) {
        case 0:
          EXPECT_STATUS(v->stream.query(v->context, stream), TB_ERROR_NOT_SUPPORTED);
          break;
        case 1:
          EXPECT_STATUS(v->stream.synchronize(v->context, stream), TB_ERROR_NOT_SUPPORTED);
          break;
        default:
          EXPECT_STATUS(v->device.synchronize(v->context, 0), TB_ERROR_NOT_SUPPORTED);
          break;
      }
      capturing = false;
      if (!end_refused(ctx, gx, stream, calls[c])) goto done;
      /* The capture is over: the same calls work again. */
      EXPECT_OK(v->stream.synchronize(v->context, stream));
      EXPECT_STATUS(v->stream.query(v->context, stream), TB_OK);
      EXPECT_OK(v->device.synchronize(v->context, 0));
    }
  }
  step[0] = '\0';
  outcome = TB_CHECK_PASS;
done:
  if (outcome == TB_CHECK_FAIL && step[0] != '\0') prefix_step(ctx, step);
  if (capturing) abandon_capture(v, gx, stream);
  if (stream != NULL) {
    (void)v->stream.synchronize(v->context, stream);
    v->stream.destroy(v->context, stream);
  }
  if (buffer != NULL) v->memory.device_free(v->context, 0, buffer);
  return outcome;
}

/* Event record on the capturing stream, and a wait on it for an event not yet complete: the
 * vendor may capture either; a call it refuses fails with TB_ERROR_NOT_SUPPORTED and
 * invalidates the capture, one it accepts leaves a capture that yields a working graph. */
static tb_check_outcome check_capture_events(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  const size_t n = 4096;
  slow_buffers slow = {0};
  void *buffer = NULL;
  tb_stream stream = NULL, busy = NULL;
  tb_event event = NULL;
  tb_graph graph = NULL;
  bool capturing = false;
  char step[160] = "";
  FIND_GRAPHS();
  if (!slow_open(ctx, &slow)) goto done;
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n, &buffer));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &busy));
  EXPECT_OK(v->event.create(v->context, 0, 0, &event));
  for (int c = 0; c < 2; c++) {
    const char *what = c == 0 ? "event.record on the capturing stream"
                              : "stream.wait_event of the capturing stream for an event recorded "
                                "behind slow work on another stream";
    snprintf(step, sizeof step, "%s", what);
    if (c == 1) {
      if (!enqueue_slow(ctx, busy, &slow)) goto done;
      EXPECT_OK(v->event.record(v->context, event, busy));
    }
    EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL));
    capturing = true;
    EXPECT_OK(v->memory.memset_async(v->context, stream, buffer, 7, n));
    tb_status status = c == 0 ? v->event.record(v->context, event, stream)
                              : v->stream.wait_event(v->context, stream, event);
    EXPECT_TRUE(status == TB_OK || status == TB_ERROR_NOT_SUPPORTED,
                "%s returned %s (expected TB_OK when the vendor captures it, "
                "TB_ERROR_NOT_SUPPORTED when it does not)%s%s",
                what, tb_status_name(status), status != TB_OK ? ": " : "",
                status != TB_OK ? v->last_error(v->context) : "");
    if (status == TB_ERROR_NOT_SUPPORTED) {
      EXPECT_TRUE(tbc_has_message(ctx), "%s returned TB_ERROR_NOT_SUPPORTED without a message",
                  what);
      capturing = false;
      if (!end_refused(ctx, gx, stream, what)) goto done;
    } else {
      capturing = false;
      if (!end_capture(ctx, gx, stream, &graph)) goto done;
      EXPECT_OK(gx->graph_launch(v->context, graph, stream));
      EXPECT_OK(v->stream.synchronize(v->context, stream));
      EXPECT_OK(v->event.synchronize(v->context, event));
      EXPECT_OK(gx->graph_destroy(v->context, graph));
      graph = NULL;
    }
    EXPECT_OK(v->stream.synchronize(v->context, busy));
    EXPECT_OK(v->stream.synchronize(v->context, stream));
  }
  step[0] = '\0';
  outcome = TB_CHECK_PASS;
done:
  if (outcome == TB_CHECK_FAIL && step[0] != '\0') prefix_step(ctx, step);
  if (capturing) abandon_capture(v, gx, stream);
  if (busy != NULL) (void)v->stream.synchronize(v->context, busy);
  if (stream != NULL) (void)v->stream.synchronize(v->context, stream);
  if (graph != NULL) gx->graph_destroy(v->context, graph);
  if (event != NULL) v->event.destroy(v->context, event);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (busy != NULL) v->stream.destroy(v->context, busy);
  if (buffer != NULL) v->memory.device_free(v->context, 0, buffer);
  slow_close(v, &slow);
  return outcome;
}

/* Multi-stream capture (vendor.h, @ref tb_graphs), for a vendor that accepts event records on
 * a capturing stream: a side stream that waits for an event recorded in the capture joins it,
 * its work is captured (not run) and replayed after the work the event marks, the beginning
 * stream waits for an event recorded on the side stream to join it back; capture_end without
 * that join fails with TB_ERROR_NOT_SUPPORTED. */
static tb_check_outcome check_fork_join(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  const size_t n = 4096;
  void *a = NULL, *b = NULL;
  unsigned char *out = NULL;
  tb_stream stream = NULL, side = NULL;
  tb_event fork = NULL, join = NULL;
  tb_graph graph = NULL;
  bool capturing = false;
  FIND_GRAPHS();
  out = malloc(n);
  EXPECT_TRUE(out != NULL, "host allocation failed");
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n, &a));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n, &b));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &side));
  EXPECT_OK(v->event.create(v->context, 0, 0, &fork));
  EXPECT_OK(v->event.create(v->context, 0, 0, &join));
  EXPECT_OK(v->memory.memset_async(v->context, stream, a, 0x00, n));
  EXPECT_OK(v->memory.memset_async(v->context, stream, b, 0x00, n));
  EXPECT_OK(v->stream.synchronize(v->context, stream));

  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL));
  capturing = true;
  EXPECT_OK(v->memory.memset_async(v->context, stream, a, 0x5a, n));
  tb_status status = v->event.record(v->context, fork, stream);
  if (status == TB_ERROR_NOT_SUPPORTED) {
    capturing = false;
    abandon_capture(v, gx, stream);
    outcome = tbc_skip(ctx,
                       "the vendor refuses event records in a capture (no multi-stream "
                       "capture)");
    goto done;
  }
  EXPECT_TRUE(status == TB_OK, "event.record on the capturing stream returned %s: %s",
              tb_status_name(status), v->last_error(v->context));
  EXPECT_OK(v->stream.wait_event(v->context, side, fork)); /* side joins the capture */
  /* Captured on the side stream: runs after the memset the fork marks, at every replay. */
  EXPECT_OK(v->memory.copy_d2d_async(v->context, side, 0, b, 0, a, n));
  EXPECT_OK(v->event.record(v->context, join, side));
  EXPECT_OK(v->stream.wait_event(v->context, stream, join)); /* joined back */
  capturing = false;
  if (!end_capture(ctx, gx, stream, &graph)) goto done;
  EXPECT_OK(v->stream.synchronize(v->context, side));
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, out, b, n));
  EXPECT_TRUE(out[0] == 0x00 && out[n - 1] == 0x00,
              "the side stream's captured copy_d2d_async ran during the capture (0x%02x): "
              "captured work must be recorded, not run",
              out[0]);
  EXPECT_OK(gx->graph_launch(v->context, graph, stream));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, out, b, n));
  for (size_t i = 0; i < n; i++) {
    EXPECT_TRUE(out[i] == 0x5a,
                "after a launch, byte %zu of the output is 0x%02x, expected 0x5a: the side "
                "stream's copy did not run after the memset its fork event marks",
                i, out[i]);
  }
  EXPECT_OK(gx->graph_destroy(v->context, graph));
  graph = NULL;

  /* A side stream that joined and was never joined back. */
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL));
  capturing = true;
  EXPECT_OK(v->event.record(v->context, fork, stream));
  EXPECT_OK(v->stream.wait_event(v->context, side, fork));
  EXPECT_OK(v->memory.memset_async(v->context, side, b, 0x11, n));
  capturing = false;
  if (!end_refused(ctx, gx, stream, "a side stream not joined back before capture_end")) {
    goto done;
  }
  EXPECT_OK(v->stream.synchronize(v->context, side)); /* the capture ended for it as well */
  outcome = TB_CHECK_PASS;
done:
  if (capturing) abandon_capture(v, gx, stream);
  if (side != NULL) (void)v->stream.synchronize(v->context, side);
  if (stream != NULL) (void)v->stream.synchronize(v->context, stream);
  if (graph != NULL) gx->graph_destroy(v->context, graph);
  if (fork != NULL) v->event.destroy(v->context, fork);
  if (join != NULL) v->event.destroy(v->context, join);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (side != NULL) v->stream.destroy(v->context, side);
  if (a != NULL) v->memory.device_free(v->context, 0, a);
  if (b != NULL) v->memory.device_free(v->context, 0, b);
  free(out);
  return outcome;
}

/* A blocking copy_h2d made on another thread. */
typedef struct copy_job {
  const tb_vendor_handle *v;
  void *dst;
  const void *src;
  size_t size;
  tb_status status;
  char message[512];
} copy_job;

static void *copy_on_thread(void *arg) {
  copy_job *job = arg;
  const tb_vendor_handle *v = job->v;
  job->status = v->memory.copy_h2d(v->context, 0, job->dst, job->src, job->size);
  const char *message = job->status != TB_OK ? v->last_error(v->context) : "";
  snprintf(job->message, sizeof job->message, "%s", message != NULL ? message : "");
  return NULL;
}

/* Runs the copy of `job` on a thread of its own; false (a failure recorded) when the thread
 * cannot start. */
static bool copy_elsewhere(tb_check_context *ctx, copy_job *job) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, copy_on_thread, job) != 0) {
    tbc_fail(ctx, "pthread_create failed");
    return false;
  }
  pthread_join(thread, NULL);
  return true;
}

/* (e) The blocking copies during a capture, by mode: refused (invalidating it) on every thread
 * in TB_CAPTURE_GLOBAL, on the capturing thread only in TB_CAPTURE_THREAD_LOCAL, never in
 * TB_CAPTURE_RELAXED. */
static tb_check_outcome check_capture_modes(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  const size_t n = 4096;
  void *captured = NULL, *target = NULL;
  unsigned char *in = NULL, *out = NULL;
  tb_stream stream = NULL;
  tb_graph graph = NULL;
  bool capturing = false;
  char step[160] = "";
  FIND_GRAPHS();
  in = malloc(n);
  out = malloc(n);
  EXPECT_TRUE(in != NULL && out != NULL, "host allocation failed");
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n, &captured));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n, &target));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  tbc_fill(in, n, 70);

  /* TB_CAPTURE_GLOBAL, the capturing thread. */
  snprintf(step, sizeof step, "TB_CAPTURE_GLOBAL, a blocking copy_h2d on the capturing thread");
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL));
  capturing = true;
  EXPECT_OK(v->memory.memset_async(v->context, stream, captured, 1, n));
  EXPECT_STATUS(v->memory.copy_h2d(v->context, 0, target, in, n), TB_ERROR_NOT_SUPPORTED);
  capturing = false;
  if (!end_refused(ctx, gx, stream, "a blocking copy_h2d in TB_CAPTURE_GLOBAL")) goto done;

  /* TB_CAPTURE_GLOBAL, another thread. */
  snprintf(step, sizeof step, "TB_CAPTURE_GLOBAL, a blocking copy_h2d on another thread");
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL));
  capturing = true;
  EXPECT_OK(v->memory.memset_async(v->context, stream, captured, 2, n));
  {
    copy_job job = {.v = v, .dst = target, .src = in, .size = n};
    if (!copy_elsewhere(ctx, &job)) goto done;
    EXPECT_TRUE(job.status == TB_ERROR_NOT_SUPPORTED && job.message[0] != '\0',
                "copy_h2d on another thread returned %s%s%s (expected TB_ERROR_NOT_SUPPORTED "
                "with a message: no thread may make a blocking copy during a global capture)",
                tb_status_name(job.status), job.message[0] != '\0' ? ": " : "", job.message);
  }
  capturing = false;
  if (!end_refused(ctx, gx, stream, "a blocking copy_h2d in TB_CAPTURE_GLOBAL on another thread")) {
    goto done;
  }

  /* TB_CAPTURE_THREAD_LOCAL, another thread: allowed, the capture stays valid. */
  snprintf(step, sizeof step, "TB_CAPTURE_THREAD_LOCAL, a blocking copy_h2d on another thread");
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_THREAD_LOCAL));
  capturing = true;
  EXPECT_OK(v->memory.memset_async(v->context, stream, captured, 3, n));
  {
    copy_job job = {.v = v, .dst = target, .src = in, .size = n};
    if (!copy_elsewhere(ctx, &job)) goto done;
    EXPECT_TRUE(job.status == TB_OK,
                "copy_h2d on another thread than the capturing one returned %s: %s (expected "
                "TB_OK: a thread-local capture restricts its own thread only)",
                tb_status_name(job.status), job.message);
  }
  capturing = false;
  if (!end_capture(ctx, gx, stream, &graph)) goto done;
  EXPECT_OK(gx->graph_launch(v->context, graph, stream));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_OK(gx->graph_destroy(v->context, graph));
  graph = NULL;
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, out, target, n));
  EXPECT_TRUE(tbc_first_difference(in, out, n) < 0,
              "the copy_h2d another thread made returned TB_OK, but the bytes did not arrive");

  /* TB_CAPTURE_THREAD_LOCAL, the capturing thread: refused. */
  snprintf(step, sizeof step,
           "TB_CAPTURE_THREAD_LOCAL, a blocking copy_h2d on the capturing thread");
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_THREAD_LOCAL));
  capturing = true;
  EXPECT_OK(v->memory.memset_async(v->context, stream, captured, 4, n));
  EXPECT_STATUS(v->memory.copy_h2d(v->context, 0, target, in, n), TB_ERROR_NOT_SUPPORTED);
  capturing = false;
  if (!end_refused(ctx, gx, stream,
                   "a blocking copy_h2d on the capturing thread in TB_CAPTURE_THREAD_LOCAL")) {
    goto done;
  }

  /* TB_CAPTURE_RELAXED: blocking copies work, and the capture stays valid. */
  snprintf(step, sizeof step, "TB_CAPTURE_RELAXED, blocking copies on the capturing thread");
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_RELAXED));
  capturing = true;
  EXPECT_OK(v->memory.memset_async(v->context, stream, captured, 5, n));
  tbc_fill(in, n, 71);
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, target, in, n));
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, out, target, n));
  EXPECT_TRUE(tbc_first_difference(in, out, n) < 0,
              "copy_h2d then copy_d2h returned TB_OK, but the bytes read back differ");
  capturing = false;
  if (!end_capture(ctx, gx, stream, &graph)) goto done;
  EXPECT_OK(gx->graph_launch(v->context, graph, stream));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, out, captured, n));
  for (size_t i = 0; i < n; i++) {
    EXPECT_TRUE(out[i] == 5, "the graph's memset_async left 0x%02x at byte %zu, expected 0x05",
                out[i], i);
  }
  step[0] = '\0';
  outcome = TB_CHECK_PASS;
done:
  if (outcome == TB_CHECK_FAIL && step[0] != '\0') prefix_step(ctx, step);
  if (capturing) abandon_capture(v, gx, stream);
  if (graph != NULL) gx->graph_destroy(v->context, graph);
  if (stream != NULL) {
    (void)v->stream.synchronize(v->context, stream);
    v->stream.destroy(v->context, stream);
  }
  if (captured != NULL) v->memory.device_free(v->context, 0, captured);
  if (target != NULL) v->memory.device_free(v->context, 0, target);
  free(in);
  free(out);
  return outcome;
}

/* (f) Misuse: capture_begin on a capturing stream or with an unknown mode, capture_end on a
 * stream that does not capture. */
static tb_check_outcome check_invalid_use(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  tb_stream stream = NULL;
  tb_graph graph = NULL;
  bool capturing = false;
  FIND_GRAPHS();
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  /* capture_end of a stream that never captured */
  graph = NOT_A_GRAPH;
  EXPECT_STATUS(gx->capture_end(v->context, stream, &graph), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(graph == NULL, "capture_end failed but left %p in *graph (expected NULL)",
              (void *)graph);
  /* capture_begin twice */
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL));
  capturing = true;
  EXPECT_STATUS(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL),
                TB_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(gx->capture_begin(v->context, stream, TB_CAPTURE_RELAXED),
                TB_ERROR_INVALID_ARGUMENT);
  capturing = false;
  {
    tb_status status = gx->capture_end(v->context, stream, &graph);
    EXPECT_TRUE(status == TB_OK || status == TB_ERROR_NOT_SUPPORTED,
                "capture_end after the refused second capture_begin returned %s: %s",
                tb_status_name(status), status != TB_OK ? v->last_error(v->context) : "");
    if (graph != NULL) gx->graph_destroy(v->context, graph);
    graph = NULL;
  }
  /* capture_end once more: the capture is over */
  graph = NOT_A_GRAPH;
  EXPECT_STATUS(gx->capture_end(v->context, stream, &graph), TB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(graph == NULL, "capture_end failed but left %p in *graph (expected NULL)",
              (void *)graph);
  graph = NULL;
  /* unknown modes: refused, and no capture begins */
  static const int bad_modes[] = {3, 77, -1};
  for (size_t i = 0; i < sizeof bad_modes / sizeof bad_modes[0]; i++) {
    tb_status status = gx->capture_begin(v->context, stream, (tb_capture_mode)bad_modes[i]);
    if (status == TB_OK) capturing = true;
    EXPECT_TRUE(status == TB_ERROR_INVALID_ARGUMENT && tbc_has_message(ctx),
                "capture_begin with the unknown mode %d returned %s%s (expected "
                "TB_ERROR_INVALID_ARGUMENT with a message)",
                bad_modes[i], tb_status_name(status),
                status == TB_ERROR_INVALID_ARGUMENT ? " without a message" : "");
    graph = NOT_A_GRAPH;
    EXPECT_STATUS(gx->capture_end(v->context, stream, &graph), TB_ERROR_INVALID_ARGUMENT);
    graph = NULL;
  }
  /* The stream works normally afterwards. */
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  outcome = TB_CHECK_PASS;
done:
  if (capturing) abandon_capture(v, gx, stream);
  if (graph != NULL && graph != NOT_A_GRAPH) gx->graph_destroy(v->context, graph);
  if (stream != NULL) {
    (void)v->stream.synchronize(v->context, stream);
    v->stream.destroy(v->context, stream);
  }
  return outcome;
}

/* (g) Destroying a graph with launches queued: they still run. */
static tb_check_outcome check_destroy_queued(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  pipeline p = {0};
  slow_buffers slow = {0};
  unsigned char *next = NULL;
  tb_stream stream = NULL;
  tb_graph graph = NULL;
  bool capturing = false;
  FIND_GRAPHS();
  if (!pipeline_open(ctx, &p)) goto done;
  if (!slow_open(ctx, &slow)) goto done;
  next = host_alloc(v, p.n / 2);
  EXPECT_TRUE(next != NULL, "host allocation failed");
  tbc_fill(next, p.n / 2, 80);
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL));
  capturing = true;
  if (!pipeline_enqueue(ctx, stream, &p)) goto done;
  capturing = false;
  if (!end_capture(ctx, gx, stream, &graph)) goto done;
  /* Slow work, then new bytes in the device input, then three launches, then destroy. */
  if (!enqueue_slow(ctx, stream, &slow)) goto done;
  EXPECT_OK(v->memory.copy_h2d_async(v->context, stream, p.src, next, p.n / 2));
  for (int i = 0; i < 3; i++) EXPECT_OK(gx->graph_launch(v->context, graph, stream));
  {
    tb_graph doomed = graph;
    graph = NULL;
    EXPECT_OK(gx->graph_destroy(v->context, doomed));
  }
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  if (!pipeline_expect(ctx, &p,
                       "three launches queued behind slow work, the graph destroyed, "
                       "then stream synchronize")) {
    goto done;
  }
  outcome = TB_CHECK_PASS;
done:
  if (capturing) abandon_capture(v, gx, stream);
  if (graph != NULL) gx->graph_destroy(v->context, graph);
  if (stream != NULL) {
    (void)v->stream.synchronize(v->context, stream);
    v->stream.destroy(v->context, stream);
  }
  slow_close(v, &slow);
  pipeline_close(v, &p);
  host_release(v, next);
  return outcome;
}

/* (h) A captured host function runs once per replay, in order with the captured copies. */
typedef struct replay_log {
  const unsigned char *seen; /* the host buffer a captured copy_d2h_async fills */
  _Atomic int calls;
  _Atomic int values[8];
} replay_log;

static tb_status log_replay(void *user_data, char *message, size_t message_size) {
  (void)message;
  (void)message_size;
  replay_log *log = user_data;
  int call = atomic_fetch_add(&log->calls, 1);
  if (call < 8) atomic_store(&log->values[call], log->seen[0]);
  return TB_OK;
}

static tb_check_outcome check_host_func(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  const size_t n = 256;
  void *src = NULL;
  unsigned char *seen = NULL, bytes[256];
  tb_stream stream = NULL;
  tb_graph graph = NULL;
  bool capturing = false;
  replay_log log;
  atomic_init(&log.calls, 0);
  for (int i = 0; i < 8; i++) atomic_init(&log.values[i], -1);
  FIND_GRAPHS();
  if (v->stream.launch_host_func == NULL) SKIP("the vendor has no stream.launch_host_func (2.1)");
  seen = host_alloc(v, n);
  EXPECT_TRUE(seen != NULL, "host allocation failed");
  memset(seen, 0, n);
  log.seen = seen;
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n, &src));
  memset(bytes, 0, n);
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, src, bytes, n));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL));
  capturing = true;
  EXPECT_OK(v->memory.copy_d2h_async(v->context, stream, seen, src, n));
  EXPECT_OK(v->stream.launch_host_func(v->context, stream, log_replay, &log));
  capturing = false;
  if (!end_capture(ctx, gx, stream, &graph)) goto done;
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_TRUE(atomic_load(&log.calls) == 0,
              "a host function captured with launch_host_func ran %d time(s) before any launch: "
              "captured work must be recorded, not run",
              atomic_load(&log.calls));
  /* Three replays, each after new device bytes: the function sees each replay's copy. */
  for (int r = 0; r < 3; r++) {
    memset(bytes, 10 + r, n);
    EXPECT_OK(v->memory.copy_h2d(v->context, 0, src, bytes, n));
    EXPECT_OK(gx->graph_launch(v->context, graph, stream));
    EXPECT_OK(v->stream.synchronize(v->context, stream));
    EXPECT_TRUE(atomic_load(&log.calls) == r + 1,
                "after %d synchronized replay(s), the captured host function ran %d time(s)", r + 1,
                atomic_load(&log.calls));
    EXPECT_TRUE(atomic_load(&log.values[r]) == 10 + r,
                "replay %d: the captured host function saw byte %d in the buffer the captured "
                "copy_d2h_async before it fills (expected %d: it runs after the copies captured "
                "before it, with the replay's data)",
                r + 1, atomic_load(&log.values[r]), 10 + r);
  }
  /* Three launches back to back: three more calls. */
  for (int r = 0; r < 3; r++) EXPECT_OK(gx->graph_launch(v->context, graph, stream));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_TRUE(atomic_load(&log.calls) == 6,
              "after 3 more launches back to back, the captured host function ran %d time(s) in "
              "all, expected 6 (once per replay)",
              atomic_load(&log.calls));
  outcome = TB_CHECK_PASS;
done:
  if (capturing) abandon_capture(v, gx, stream);
  if (stream != NULL) (void)v->stream.synchronize(v->context, stream);
  if (graph != NULL) gx->graph_destroy(v->context, graph);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (src != NULL) v->memory.device_free(v->context, 0, src);
  host_release(v, seen);
  return outcome;
}

/* (i) An empty capture gives a graph that launches. */
static tb_check_outcome check_empty(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  tb_stream stream = NULL, second = NULL;
  tb_graph graph = NULL;
  bool capturing = false;
  FIND_GRAPHS();
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &second));
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL));
  capturing = true;
  capturing = false; /* nothing captured */
  if (!end_capture(ctx, gx, stream, &graph)) goto done;
  EXPECT_OK(gx->graph_launch(v->context, graph, stream));
  EXPECT_OK(gx->graph_launch(v->context, graph, stream));
  EXPECT_OK(gx->graph_launch(v->context, graph, second));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_OK(v->stream.synchronize(v->context, second));
  EXPECT_STATUS(v->stream.query(v->context, stream), TB_OK);
  {
    tb_graph doomed = graph;
    graph = NULL;
    EXPECT_OK(gx->graph_destroy(v->context, doomed));
  }
  outcome = TB_CHECK_PASS;
done:
  if (capturing) abandon_capture(v, gx, stream);
  if (graph != NULL) gx->graph_destroy(v->context, graph);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (second != NULL) v->stream.destroy(v->context, second);
  return outcome;
}

/* A failure during a replay faults the device with the failed work's message; a captured
 * inject_fault does not fault at capture. */
static const char k_fault_message[] = "conformance: injected fault 4713 in a graph";

static tb_check_outcome check_replay_fault(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_graphs_extension *gx = NULL;
  const size_t n = 4096;
  void *buffer = NULL;
  tb_stream stream = NULL;
  tb_graph graph = NULL;
  bool capturing = false, faulted = false;
  FIND_GRAPHS();
  if (v->stream.inject_fault == NULL) SKIP("the vendor has no stream.inject_fault (ABI 1.2)");
  if (v->device.reset == NULL) SKIP("the vendor cannot reset a faulted device (device.reset)");
  EXPECT_OK(v->memory.device_malloc(v->context, 0, n, &buffer));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL));
  capturing = true;
  EXPECT_OK(v->memory.memset_async(v->context, stream, buffer, 1, n));
  EXPECT_OK(v->stream.inject_fault(v->context, stream, k_fault_message));
  capturing = false;
  if (!end_capture(ctx, gx, stream, &graph)) goto done;
  {
    tb_status status = v->stream.synchronize(v->context, stream);
    faulted = status == TB_ERROR_DEVICE_FAULT;
    EXPECT_TRUE(status == TB_OK,
                "stream.synchronize after capturing an inject_fault (never launched) returned %s "
                "(expected TB_OK: captured work must be recorded, not run)%s%s",
                tb_status_name(status), status != TB_OK ? ": " : "",
                status != TB_OK ? v->last_error(v->context) : "");
  }
  EXPECT_OK(gx->graph_launch(v->context, graph, stream));
  faulted = true;
  {
    tb_status status = v->stream.synchronize(v->context, stream);
    const char *message = v->last_error(v->context);
    EXPECT_TRUE(status == TB_ERROR_DEVICE_FAULT && message != NULL &&
                    strstr(message, k_fault_message) != NULL,
                "a replay of a captured inject_fault: stream.synchronize returned %s with \"%s\" "
                "(expected TB_ERROR_DEVICE_FAULT with the injected message)",
                tb_status_name(status), message != NULL ? message : "(null)");
  }
  EXPECT_STATUS(gx->graph_launch(v->context, graph, stream), TB_ERROR_DEVICE_FAULT);
  EXPECT_STATUS(gx->capture_begin(v->context, stream, TB_CAPTURE_GLOBAL), TB_ERROR_DEVICE_FAULT);
  EXPECT_OK(v->device.reset(v->context, 0));
  faulted = false;
  outcome = TB_CHECK_PASS;
done:
  if (capturing) abandon_capture(v, gx, stream);
  if (stream != NULL) (void)v->stream.synchronize(v->context, stream);
  if (faulted) v->device.reset(v->context, 0);
  if (graph != NULL) gx->graph_destroy(v->context, graph);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (buffer != NULL) v->memory.device_free(v->context, 0, buffer);
  return outcome;
}

const tb_check tbc_graph_checks[] = {
    {"graphs", "capture_records",
     "copy_h2d_async, memset_async, copy_d2d_async and copy_d2h_async captured on a stream are "
     "recorded, not run (no byte changes until a launch); graph_launch then runs them",
     check_capture_records},
    {"graphs", "replay_new_inputs",
     "each replay reads the current contents of the captured inputs: new bytes written into "
     "the device and host inputs between replays give the new result",
     check_replay_new_inputs},
    {"graphs", "launch_streams",
     "a graph launches on another stream of its device; graph_launch on a capturing stream or "
     "a stream of another device fails with TB_ERROR_INVALID_ARGUMENT",
     check_launch_streams},
    {"graphs", "launch_order",
     "launches of one graph run in launch order: a launch on an idle stream runs after an "
     "earlier launch queued behind slow work on another stream",
     check_launch_order},
    {"graphs", "refused_calls",
     "query and synchronize of the capturing stream and synchronize of its device fail with "
     "TB_ERROR_NOT_SUPPORTED in every mode, and capture_end then fails with "
     "TB_ERROR_NOT_SUPPORTED and no graph",
     check_refused_calls},
    {"graphs", "capture_events",
     "event record on the capturing stream and a wait there for an incomplete event are either "
     "captured or refused with TB_ERROR_NOT_SUPPORTED, which invalidates the capture",
     check_capture_events},
    {"graphs", "fork_join",
     "where event records are captured: a stream waiting for an event recorded in a capture "
     "joins it (its work captured, replayed after the marked work), and capture_end fails "
     "with TB_ERROR_NOT_SUPPORTED unless it was joined back",
     check_fork_join},
    {"graphs", "capture_modes",
     "a blocking copy_h2d during a capture is refused and invalidates it in TB_CAPTURE_GLOBAL "
     "(any thread) and TB_CAPTURE_THREAD_LOCAL (the capturing thread); it works in "
     "TB_CAPTURE_RELAXED and from another thread in TB_CAPTURE_THREAD_LOCAL",
     check_capture_modes},
    {"graphs", "invalid_use",
     "capture_begin on a capturing stream or with an unknown mode, and capture_end on a stream "
     "that does not capture, fail with TB_ERROR_INVALID_ARGUMENT",
     check_invalid_use},
    {"graphs", "destroy_queued",
     "a graph destroyed with three launches queued behind slow work still runs them, with the "
     "right result",
     check_destroy_queued},
    {"graphs", "host_func",
     "a host function captured with launch_host_func runs once per replay, after the copies "
     "captured before it, never at capture",
     check_host_func},
    {"graphs", "empty", "an empty capture gives a graph that launches on any stream of the device",
     check_empty},
    {"graphs", "replay_fault",
     "a captured inject_fault does not fault at capture; its replay faults the device with its "
     "message, and graph_launch and capture_begin then fail with TB_ERROR_DEVICE_FAULT",
     check_replay_fault},
};
const size_t tbc_graph_check_count = sizeof tbc_graph_checks / sizeof tbc_graph_checks[0];
