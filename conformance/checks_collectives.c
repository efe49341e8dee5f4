/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks of a vendor's collectives library (vendor.h, ABI 2.2, TB_EXTENSION_COLLECTIVES): two
 * communicators of one group, each driven by its own thread on its own device (device 0 and
 * device 1, or device 0 twice on a one-device vendor), run every collective; the results are
 * compared with the host's arithmetic.  Skipped when the vendor has no such extension.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define RANKS 2
/* Large enough to take several chunks of any staging buffer up to a few MiB. */
#define BIG (3u << 20)

typedef struct {
  const tb_vendor_handle *v;
  const tb_collectives_extension *coll;
  tb_comm_id id;
  int rank;
  int32_t device;
  bool mismatch;     /* the mismatch check: rank 1 passes another count */
  tb_status status;  /* of the mismatch check's synchronize */
  char error[1024];  /* empty on success */
  char message[512]; /* the mismatch check's fault message */
} rank_job;

static void job_fail(rank_job *job, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void job_fail(rank_job *job, const char *format, ...) {
  if (job->error[0] != '\0') return;
  int n = snprintf(job->error, sizeof job->error, "rank %d: ", job->rank);
  va_list args;
  va_start(args, format);
  vsnprintf(job->error + n, sizeof job->error - (size_t)n, format, args);
  va_end(args);
}

#define JOB_OK(call)                                                          \
  do {                                                                        \
    tb_status job_status_ = (call);                                           \
    if (job_status_ != TB_OK) {                                               \
      job_fail(job, "%s returned %s: %s", #call, tb_status_name(job_status_), \
               v->last_error(v->context));                                    \
      goto done;                                                              \
    }                                                                         \
  } while (0)

static bool same_floats(rank_job *job, const char *what, const float *got, const float *want,
                        size_t count) {
  for (size_t i = 0; i < count; i++) {
    if (got[i] != want[i]) {
      job_fail(job, "%s: element %zu is %g, expected %g", what, i, (double)got[i], (double)want[i]);
      return false;
    }
  }
  return true;
}

/* The value rank r contributes at element i (small integers: sums and products are exact). */
static float value(int r, size_t i) { return (float)((i * 7u + (size_t)r * 3u) % 11u) - 5.0f; }

static void *run_rank(void *arg) {
  rank_job *job = arg;
  const tb_vendor_handle *v = job->v;
  const tb_collectives_extension *c = job->coll;
  const int r = job->rank;
  tb_comm comm = NULL;
  tb_stream stream = NULL;
  void *send = NULL, *recv = NULL;
  float *host = malloc((size_t)BIG * RANKS * sizeof(float));
  float *want = malloc((size_t)BIG * RANKS * sizeof(float));
  float *got = malloc((size_t)BIG * RANKS * sizeof(float));
  if (host == NULL || want == NULL || got == NULL) {
    job_fail(job, "out of host memory");
    goto done;
  }
  tb_comm_config config = {.struct_size = sizeof config, .timeout_ms = 20000};
  JOB_OK(c->comm_init(v->context, job->device, RANKS, r, &job->id, &config, &comm));
  JOB_OK(v->stream.create(v->context, job->device, 0, &stream));
  const size_t bytes = (size_t)BIG * RANKS * sizeof(float);
  JOB_OK(v->memory.device_malloc(v->context, job->device, bytes, &send));
  JOB_OK(v->memory.device_malloc(v->context, job->device, bytes, &recv));

  if (job->mismatch) {
    /* Rank 0 reduces 4 elements, rank 1 8: both devices fault, neither hangs. */
    JOB_OK(c->all_reduce(v->context, comm, send, recv, r == 0 ? 4 : 8, TB_DTYPE_FLOAT32,
                         TB_REDUCE_SUM, stream));
    job->status = v->stream.synchronize(v->context, stream);
    snprintf(job->message, sizeof job->message, "%s", v->last_error(v->context));
    if (v->device.reset != NULL) (void)v->device.reset(v->context, job->device);
    goto done;
  }

  /* all_reduce SUM over several chunks, then MAX, AVG and in place, on fewer elements. */
  static const struct {
    tb_reduce_op op;
    size_t count;
    bool in_place;
  } reductions[] = {{TB_REDUCE_SUM, BIG, false},
                    {TB_REDUCE_MAX, 1000, false},
                    {TB_REDUCE_MIN, 1000, true},
                    {TB_REDUCE_PRODUCT, 333, false},
                    {TB_REDUCE_AVG, 1000, true}};
  for (size_t k = 0; k < sizeof reductions / sizeof reductions[0]; k++) {
    size_t n = reductions[k].count;
    for (size_t i = 0; i < n; i++) {
      host[i] = value(r, i);
      float a = value(0, i), b = value(1, i);
      switch (reductions[k].op) {
        case TB_REDUCE_SUM:
          want[i] = a + b;
          break;
        case TB_REDUCE_MAX:
          want[i] = a > b ? a : b;
          break;
        case TB_REDUCE_MIN:
          want[i] = a < b ? a : b;
          break;
        case TB_REDUCE_PRODUCT:
          want[i] = a * b;
          break;
        case TB_REDUCE_AVG:
          want[i] = (a + b) / 2.0f;
          break;
      }
    }
    void *out = reductions[k].in_place ? send : recv;
    JOB_OK(v->memory.copy_h2d(v->context, job->device, send, host, n * sizeof(float)));
    JOB_OK(
        c->all_reduce(v->context, comm, send, out, n, TB_DTYPE_FLOAT32, reductions[k].op, stream));
    JOB_OK(v->stream.synchronize(v->context, stream));
    JOB_OK(v->memory.copy_d2h(v->context, job->device, got, out, n * sizeof(float)));
    char what[64];
    snprintf(what, sizeof what, "all_reduce #%zu of %zu floats", k + 1, n);
    if (!same_floats(job, what, got, want, n)) goto done;
  }

  /* broadcast from rank 1 */
  for (size_t i = 0; i < 5000; i++) host[i] = value(r, i), want[i] = value(1, i);
  JOB_OK(v->memory.copy_h2d(v->context, job->device, send, host, 5000 * sizeof(float)));
  JOB_OK(c->broadcast(v->context, comm, send, recv, 5000, TB_DTYPE_FLOAT32, 1, stream));
  JOB_OK(v->stream.synchronize(v->context, stream));
  JOB_OK(v->memory.copy_d2h(v->context, job->device, got, recv, 5000 * sizeof(float)));
  if (!same_floats(job, "broadcast from rank 1", got, want, 5000)) goto done;

  /* all_gather of BIG / 2 elements per rank */
  const size_t half = BIG / 2;
  for (size_t i = 0; i < half; i++) {
    host[i] = value(r, i);
    for (int p = 0; p < RANKS; p++) want[(size_t)p * half + i] = value(p, i);
  }
  JOB_OK(v->memory.copy_h2d(v->context, job->device, send, host, half * sizeof(float)));
  JOB_OK(c->all_gather(v->context, comm, send, recv, half, TB_DTYPE_FLOAT32, stream));
  JOB_OK(v->stream.synchronize(v->context, stream));
  JOB_OK(v->memory.copy_d2h(v->context, job->device, got, recv, RANKS * half * sizeof(float)));
  if (!same_floats(job, "all_gather", got, want, RANKS * half)) goto done;

  /* reduce_scatter SUM: block r of the sum over ranks */
  for (size_t i = 0; i < RANKS * half; i++) host[i] = value(r, i) + (float)r;
  for (size_t i = 0; i < half; i++) {
    size_t at = (size_t)r * half + i;
    want[i] = value(0, at) + value(1, at) + 1.0f;
  }
  JOB_OK(v->memory.copy_h2d(v->context, job->device, send, host, RANKS * half * sizeof(float)));
  JOB_OK(c->reduce_scatter(v->context, comm, send, recv, half, TB_DTYPE_FLOAT32, TB_REDUCE_SUM,
                           stream));
  JOB_OK(v->stream.synchronize(v->context, stream));
  JOB_OK(v->memory.copy_d2h(v->context, job->device, got, recv, half * sizeof(float)));
  if (!same_floats(job, "reduce_scatter", got, want, half)) goto done;

  /* all_to_all (optional): block p of rank q's send becomes block q of rank p's recv */
  if (TB_STRUCT_HAS_FIELD(&c->base, tb_collectives_extension, all_to_all) &&
      c->all_to_all != NULL) {
    const size_t n = 70000;
    for (int p = 0; p < RANKS; p++) {
      for (size_t i = 0; i < n; i++) {
        host[(size_t)p * n + i] = (float)(r * 100 + p) + value(r, i);
        want[(size_t)p * n + i] = (float)(p * 100 + r) + value(p, i);
      }
    }
    JOB_OK(v->memory.copy_h2d(v->context, job->device, send, host, RANKS * n * sizeof(float)));
    JOB_OK(c->all_to_all(v->context, comm, send, recv, n, TB_DTYPE_FLOAT32, stream));
    JOB_OK(v->stream.synchronize(v->context, stream));
    JOB_OK(v->memory.copy_d2h(v->context, job->device, got, recv, RANKS * n * sizeof(float)));
    if (!same_floats(job, "all_to_all", got, want, RANKS * n)) goto done;
  }

  /* Errors of the call itself: an unknown reduction, a broadcast root out of range. */
  if (c->all_reduce(v->context, comm, send, recv, 4, TB_DTYPE_FLOAT32, (tb_reduce_op)77, stream) !=
      TB_ERROR_INVALID_ARGUMENT) {
    job_fail(job, "all_reduce with reduction 77 did not return TB_ERROR_INVALID_ARGUMENT");
  } else if (c->broadcast(v->context, comm, send, recv, 4, TB_DTYPE_FLOAT32, RANKS, stream) !=
             TB_ERROR_INVALID_ARGUMENT) {
    job_fail(job, "broadcast from root %d of %d ranks did not return TB_ERROR_INVALID_ARGUMENT",
             RANKS, RANKS);
  }
done:
  if (stream != NULL) {
    (void)v->stream.synchronize(v->context, stream);
    v->stream.destroy(v->context, stream);
  }
  if (send != NULL) v->memory.device_free(v->context, job->device, send);
  if (recv != NULL) v->memory.device_free(v->context, job->device, recv);
  if (comm != NULL) {
    tb_status status = c->comm_destroy(v->context, comm);
    if (status != TB_OK) job_fail(job, "comm_destroy returned %s", tb_status_name(status));
  }
  free(host);
  free(want);
  free(got);
  return NULL;
}

/* Runs both ranks to the end; fills jobs[]. */
static tb_check_outcome run_group(tb_check_context *ctx, rank_job jobs[RANKS], bool mismatch) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  char error[512];
  const tb_collectives_extension *c = tb_loader_collectives(v, error, sizeof error);
  pthread_t threads[RANKS];
  int started = 0;
  EXPECT_TRUE(c != NULL || error[0] == '\0', "%s", error);
  if (c == NULL) SKIP("the vendor has no collectives extension (TB_EXTENSION_COLLECTIVES, 2.2)");
  int32_t count = tbc_device_count(ctx);
  if (count < 0) goto done;
  if (count == 0) SKIP("no devices");
  tb_comm_id id;
  memset(&id, 0, sizeof id);
  EXPECT_OK(c->get_unique_id(v->context, &id));
  for (int r = 0; r < RANKS; r++) {
    jobs[r] = (rank_job){
        .v = v, .coll = c, .id = id, .rank = r, .device = r % count, .mismatch = mismatch};
  }
  for (; started < RANKS; started++) {
    if (pthread_create(&threads[started], NULL, run_rank, &jobs[started]) != 0) {
      tbc_fail(ctx, "pthread_create failed");
      goto done;
    }
  }
  outcome = TB_CHECK_PASS;
done:
  for (int r = 0; r < started; r++) pthread_join(threads[r], NULL);
  if (outcome == TB_CHECK_PASS && started < RANKS) outcome = TB_CHECK_FAIL;
  return outcome;
}

static tb_check_outcome check_two_ranks(tb_check_context *ctx) {
  rank_job jobs[RANKS];
  tb_check_outcome outcome = run_group(ctx, jobs, false);
  if (outcome != TB_CHECK_PASS) return outcome;
  for (int r = 0; r < RANKS; r++) {
    if (jobs[r].error[0] != '\0') return tbc_fail(ctx, "%s", jobs[r].error);
  }
  return TB_CHECK_PASS;
}

static tb_check_outcome check_mismatch(tb_check_context *ctx) {
  if (ctx->vendor->device.reset == NULL) {
    return tbc_skip(ctx, "the vendor cannot reset a faulted device (device.reset is NULL)");
  }
  rank_job jobs[RANKS];
  tb_check_outcome outcome = run_group(ctx, jobs, true);
  if (outcome != TB_CHECK_PASS) return outcome;
  for (int r = 0; r < RANKS; r++) {
    if (jobs[r].error[0] != '\0') return tbc_fail(ctx, "%s", jobs[r].error);
    if (jobs[r].status != TB_ERROR_DEVICE_FAULT || jobs[r].message[0] == '\0') {
      return tbc_fail(ctx,
                      "rank %d reduced 4 elements, the other 8: synchronize on rank %d returned "
                      "%s with \"%s\" (expected TB_ERROR_DEVICE_FAULT with a message)",
                      r == 0 ? 0 : 1, r, tb_status_name(jobs[r].status), jobs[r].message);
    }
  }
  return TB_CHECK_PASS;
}

const tb_check tbc_collective_checks[] = {
    {"collectives", "two_ranks",
     "two communicators of one group, one thread each, get the host's results from all_reduce "
     "(sum, max, min, product, avg, in place, many chunks), broadcast, all_gather, "
     "reduce_scatter and all_to_all",
     check_two_ranks},
    {"collectives", "mismatch_faults",
     "ranks that disagree about a collective's count fault their devices with a message "
     "instead of hanging or mixing data",
     check_mismatch},
};
const size_t tbc_collective_check_count =
    sizeof tbc_collective_checks / sizeof tbc_collective_checks[0];
