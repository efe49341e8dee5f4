/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's collectives library (vendor.h, ABI 2.2, TB_EXTENSION_COLLECTIVES): what NCCL is to
 * CUDA, for emulated devices in one or several processes of one machine.
 *
 * A group's ranks share one POSIX shared-memory segment, named by the group's tb_comm_id: a
 * header (the ranks' process ids, each collective's signature, a barrier counter, an abort
 * message) and, per rank, two staging slots of EMU_COLL_CHUNK bytes.  A collective is a stream
 * task: it runs on the worker of the caller's stream in stream order, moves its data through
 * the slots chunk by chunk (a rank writes its part of a chunk into its slot, all ranks meet at
 * a barrier, each reads what it needs from every slot), and the two slots alternate so that
 * one barrier per chunk suffices.  Every rank reduces the slots in rank order, so every rank
 * gets bit-identical results.
 *
 * Failures fault the stream's device with a message (vendor.h, "Device faults"): ranks whose
 * signatures (collective, dtype, count, operation, root) differ, a peer process that exited,
 * a wait longer than the communicator's timeout, or another rank that failed (the first rank
 * that fails writes the reason into the segment, and the others stop with it instead of
 * waiting for the timeout).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "emu.h"
#include "kernels/kernel.h"

#define EMU_COLL_MAX_RANKS 64
#define EMU_COLL_CHUNK ((size_t)2 << 20) /* bytes per rank and slot */
#define EMU_COLL_HEADER ((size_t)16 << 10)
#define EMU_COLL_DEFAULT_TIMEOUT_MS 300000
#define COMM_MAGIC 0x636f6d6du /* "comm" */
#define ID_PREFIX "tb-emu-coll:"

typedef enum {
  OP_ALL_REDUCE,
  OP_BROADCAST,
  OP_ALL_GATHER,
  OP_REDUCE_SCATTER,
  OP_ALL_TO_ALL
} coll_kind;
static const char *const k_kind_names[] = {"all_reduce", "broadcast", "all_gather",
                                           "reduce_scatter", "all_to_all"};

/* One collective as a rank issued it; ranks compare these before moving data. */
typedef struct {
  int64_t kind, dtype, count, op_or_root;
} coll_signature;

typedef struct {
  _Atomic int32_t pid; /* 0: not joined */
  /* The signatures of this rank's collectives alternate between the two, so that a rank that
   * moves on to its next collective never overwrites one a slower rank is still comparing. */
  coll_signature signature[2];
} rank_slot;

/* The segment's header.  A fresh segment is zero-filled by ftruncate; the first rank to move
 * `state` from 0 to 1 sets `nranks` and publishes 2. */
typedef struct {
  _Atomic uint32_t state;
  int32_t nranks;
  _Atomic int32_t joined;
  _Atomic uint64_t arrivals; /* barrier: every rank adds 1 per barrier, never reset */
  _Atomic int32_t aborted;   /* 1 once `abort_message` is written */
  char abort_message[512];
  rank_slot ranks[EMU_COLL_MAX_RANKS];
} coll_header;
_Static_assert(sizeof(coll_header) <= EMU_COLL_HEADER, "header fits its page range");

struct tb_comm_impl {
  uint32_t magic;
  emu_context *ctx;
  int32_t device, nranks, rank;
  int64_t timeout_ms;
  char name[64];
  coll_header *header;
  unsigned char *slots; /* [2][nranks][EMU_COLL_CHUNK] */
  size_t size;
  uint64_t barriers; /* barriers this rank passed (touched by the stream worker only) */
  unsigned step;     /* which of the two slot sets the next chunk uses */
  uint64_t issued;   /* collectives this rank ran (the stream worker only) */
  _Atomic int refs;  /* comm_init's and one per queued collective */
};

static unsigned char *slot(struct tb_comm_impl *comm, int32_t rank) {
  return comm->slots +
         ((size_t)(comm->step & 1u) * (size_t)comm->nranks + (size_t)rank) * EMU_COLL_CHUNK;
}

static void comm_release(struct tb_comm_impl *comm) {
  if (atomic_fetch_sub(&comm->refs, 1) != 1) return;
  munmap(comm->header, comm->size);
  comm->magic = 0;
  free(comm);
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Marks the group failed with `message` (the first failure's message wins). */
static void comm_abort(struct tb_comm_impl *comm, const char *message) {
  int32_t expected = 0;
  if (atomic_load(&comm->header->aborted) != 0) return;
  /* A lock-free "first writer wins": 2 while writing, 1 once the message is complete. */
  if (atomic_compare_exchange_strong(&comm->header->aborted, &expected, 2)) {
    snprintf(comm->header->abort_message, sizeof comm->header->abort_message, "%s", message);
    atomic_store(&comm->header->aborted, 1);
  }
}

/* Whether process `pid` still runs: a process that exited but was not yet reaped by its parent
 * (a zombie, state Z in /proc/<pid>/stat) counts as gone. */
static bool process_alive(int32_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  char path[64], line[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *file = fopen(path, "r");
  if (file == NULL) return true; /* no procfs: kill's answer stands */
  size_t n = fread(line, 1, sizeof line - 1, file);
  fclose(file);
  line[n] = '\0';
  const char *end = strrchr(line, ')'); /* the state follows the command name's ')' */
  return end == NULL || end[1] != ' ' || (end[2] != 'Z' && end[2] != 'X');
}

/* Waits until `done(comm, arg)` holds.  Spins, then yields, then sleeps in short naps; checks
 * the peers' liveness and the group's abort flag.  On failure writes why to `why` and returns
 * false (after aborting the group). */
typedef bool (*wait_done_fn)(struct tb_comm_impl *comm, uint64_t arg);

static bool wait_for(struct tb_comm_impl *comm, wait_done_fn done, uint64_t arg, const char *what,
                     char *why, size_t why_size) {
  int64_t start = -1;
  for (uint64_t spin = 0;; spin++) {
    if (done(comm, arg)) return true;
    if (atomic_load(&comm->header->aborted) == 1) {
      snprintf(why, why_size, "%s", comm->header->abort_message);
      return false;
    }
    if (spin < 4096) {
      emu_cpu_relax();
      continue;
    }
    if (spin < 8192) {
      sched_yield();
      continue;
    }
    if (start < 0) start = now_ms();
    if ((spin & 63u) == 0) {
      for (int32_t r = 0; r < comm->nranks; r++) {
        int32_t pid = atomic_load(&comm->header->ranks[r].pid);
        if (pid > 0 && pid != getpid() && !process_alive(pid)) {
          snprintf(why, why_size, "rank %d (process %d) exited while rank %d waited in %s", r,
                   (int)pid, comm->rank, what);
          comm_abort(comm, why);
          return false;
        }
      }
      if (now_ms() - start > comm->timeout_ms) {
        snprintf(why, why_size, "rank %d waited more than %" PRId64 " ms for the other ranks in %s",
                 comm->rank, comm->timeout_ms, what);
        comm_abort(comm, why);
        return false;
      }
    }
    struct timespec nap = {0, 20000};
    nanosleep(&nap, NULL);
  }
}

static bool all_arrived(struct tb_comm_impl *comm, uint64_t target) {
  return atomic_load_explicit(&comm->header->arrivals, memory_order_acquire) >= target;
}

static bool barrier(struct tb_comm_impl *comm, const char *what, char *why, size_t why_size) {
  comm->barriers++;
  atomic_fetch_add_explicit(&comm->header->arrivals, 1, memory_order_acq_rel);
  return wait_for(comm, all_arrived, comm->barriers * (uint64_t)comm->nranks, what, why, why_size);
}

/* ---- reductions: dst = dst op src, elementwise ---- */

#define REDUCE_LOOP(T, EXPR)                         \
  do {                                               \
    T *d = (T *)dst;                                 \
    const T *s = (const T *)src;                     \
    for (size_t i = 0; i < n; i++) d[i] = (T)(EXPR); \
  } while (0)
#define REDUCE_NUMERIC(T)                                          \
  switch (op) {                                                    \
    case TB_REDUCE_SUM:                                            \
    case TB_REDUCE_AVG:                                            \
      REDUCE_LOOP(T, d[i] + s[i]);                                 \
      break;                                                       \
    case TB_REDUCE_PRODUCT:                                        \
      REDUCE_LOOP(T, d[i] * s[i]);                                 \
      break;                                                       \
    case TB_REDUCE_MAX:                                            \
      REDUCE_LOOP(T, (s[i] > d[i] || s[i] != s[i]) ? s[i] : d[i]); \
      break;                                                       \
    case TB_REDUCE_MIN:                                            \
      REDUCE_LOOP(T, (s[i] < d[i] || s[i] != s[i]) ? s[i] : d[i]); \
      break;                                                       \
  }
#define REDUCE_INT(T)                                  \
  switch (op) {                                        \
    case TB_REDUCE_SUM:                                \
    case TB_REDUCE_AVG:                                \
      REDUCE_LOOP(T, (uint64_t)d[i] + (uint64_t)s[i]); \
      break;                                           \
    case TB_REDUCE_PRODUCT:                            \
      REDUCE_LOOP(T, (uint64_t)d[i] * (uint64_t)s[i]); \
      break;                                           \
    case TB_REDUCE_MAX:                                \
      REDUCE_LOOP(T, s[i] > d[i] ? s[i] : d[i]);       \
      break;                                           \
    case TB_REDUCE_MIN:                                \
      REDUCE_LOOP(T, s[i] < d[i] ? s[i] : d[i]);       \
      break;                                           \
  }
#define REDUCE_16(TO_F, FROM_F)                \
  do {                                         \
    uint16_t *d = (uint16_t *)dst;             \
    const uint16_t *s = (const uint16_t *)src; \
    for (size_t i = 0; i < n; i++) {           \
      float a = TO_F(d[i]), b = TO_F(s[i]), r; \
      switch (op) {                            \
        case TB_REDUCE_PRODUCT:                \
          r = a * b;                           \
          break;                               \
        case TB_REDUCE_MAX:                    \
          r = (b > a || b != b) ? b : a;       \
          break;                               \
        case TB_REDUCE_MIN:                    \
          r = (b < a || b != b) ? b : a;       \
          break;                               \
        default:                               \
          r = a + b;                           \
          break;                               \
      }                                        \
      d[i] = FROM_F(r);                        \
    }                                          \
  } while (0)

static void reduce_into(void *dst, const void *src, size_t n, tb_dtype dtype, tb_reduce_op op) {
  switch (dtype) {
    case TB_DTYPE_FLOAT32:
      REDUCE_NUMERIC(float);
      break;
    case TB_DTYPE_FLOAT64:
      REDUCE_NUMERIC(double);
      break;
    case TB_DTYPE_FLOAT16:
      REDUCE_16(emu_half_to_float, emu_float_to_half);
      break;
    case TB_DTYPE_BFLOAT16:
      REDUCE_16(emu_bf16_to_float, emu_float_to_bf16);
      break;
    case TB_DTYPE_INT64:
      REDUCE_INT(int64_t);
      break;
    case TB_DTYPE_INT32:
      REDUCE_INT(int32_t);
      break;
    case TB_DTYPE_INT16:
      REDUCE_INT(int16_t);
      break;
    case TB_DTYPE_INT8:
      REDUCE_INT(int8_t);
      break;
    case TB_DTYPE_UINT8:
      REDUCE_INT(uint8_t);
      break;
    case TB_DTYPE_BOOL: {
      unsigned char *d = dst;
      const unsigned char *s = src;
      bool any = op == TB_REDUCE_SUM || op == TB_REDUCE_MAX;
      for (size_t i = 0; i < n; i++) d[i] = any ? (d[i] | s[i]) != 0 : (d[i] & s[i]) != 0;
      break;
    }
    default:
      break;
  }
}

/* AVG's division of the sums by the group size (floating-point dtypes only). */
static void divide(void *dst, size_t n, tb_dtype dtype, int32_t by) {
  switch (dtype) {
    case TB_DTYPE_FLOAT32:
      for (size_t i = 0; i < n; i++) ((float *)dst)[i] /= (float)by;
      break;
    case TB_DTYPE_FLOAT64:
      for (size_t i = 0; i < n; i++) ((double *)dst)[i] /= (double)by;
      break;
    case TB_DTYPE_FLOAT16:
      for (size_t i = 0; i < n; i++) {
        uint16_t *d = (uint16_t *)dst + i;
        *d = emu_float_to_half(emu_half_to_float(*d) / (float)by);
      }
      break;
    case TB_DTYPE_BFLOAT16:
      for (size_t i = 0; i < n; i++) {
        uint16_t *d = (uint16_t *)dst + i;
        *d = emu_float_to_bf16(emu_bf16_to_float(*d) / (float)by);
      }
      break;
    default:
      break;
  }
}

static size_t dtype_size(tb_dtype dtype) {
  switch (dtype) {
    case TB_DTYPE_BOOL:
    case TB_DTYPE_UINT8:
    case TB_DTYPE_INT8:
      return 1;
    case TB_DTYPE_INT16:
    case TB_DTYPE_FLOAT16:
    case TB_DTYPE_BFLOAT16:
      return 2;
    case TB_DTYPE_INT32:
    case TB_DTYPE_FLOAT32:
      return 4;
    case TB_DTYPE_INT64:
    case TB_DTYPE_FLOAT64:
      return 8;
    default:
      return 0;
  }
}

/* ---- the collective task ---- */

typedef struct {
  struct tb_comm_impl *comm;
  coll_kind kind;
  const unsigned char *send; /* host (shadow) addresses */
  unsigned char *recv;
  size_t count;
  tb_dtype dtype;
  int32_t op_or_root;
} coll_payload;

static const char *dtype_name(int64_t dtype) {
  static const char *const names[] = {"bool",  "uint8",   "int8",     "int16",   "int32",
                                      "int64", "float16", "bfloat16", "float32", "float64"};
  return dtype >= 0 && dtype < TB_DTYPE_COUNT ? names[dtype] : "unknown dtype";
}

static void describe(char *out, size_t size, const coll_signature *s) {
  static const char *const ops[] = {"sum", "product", "max", "min", "avg"};
  int kind = (int)s->kind;
  const char *name = kind >= 0 && kind < 5 ? k_kind_names[kind] : "?";
  const char *dtype = dtype_name(s->dtype);
  if (s->kind == OP_ALL_REDUCE || s->kind == OP_REDUCE_SCATTER) {
    snprintf(out, size, "%s(%s) of %" PRId64 " %s", name,
             s->op_or_root >= 0 && s->op_or_root < 5 ? ops[s->op_or_root] : "?", s->count, dtype);
  } else if (s->kind == OP_BROADCAST) {
    snprintf(out, size, "%s from rank %" PRId64 " of %" PRId64 " %s", name, s->op_or_root, s->count,
             dtype);
  } else {
    snprintf(out, size, "%s of %" PRId64 " %s", name, s->count, dtype);
  }
}

/* Every rank publishes its signature, meets the others, and compares. */
static bool agree(struct tb_comm_impl *comm, const coll_payload *call, char *why, size_t size) {
  coll_signature mine = {call->kind, call->dtype, (int64_t)call->count, call->op_or_root};
  unsigned parity = (unsigned)(comm->issued++ & 1u);
  comm->header->ranks[comm->rank].signature[parity] = mine;
  if (!barrier(comm, k_kind_names[call->kind], why, size)) return false;
  for (int32_t r = 0; r < comm->nranks; r++) {
    const coll_signature *other = &comm->header->ranks[r].signature[parity];
    if (memcmp(other, &mine, sizeof mine) == 0) continue;
    char a[160], b[160];
    describe(a, sizeof a, &mine);
    describe(b, sizeof b, other);
    snprintf(why, size, "the ranks issued different collectives: rank %d %s, rank %d %s",
             comm->rank, a, r, b);
    return false;
  }
  return true;
}

static void run_collective(tbk_task *task) {
  const coll_payload *call = (const coll_payload *)task->payload;
  struct tb_comm_impl *comm = call->comm;
  tb_stream stream = task->stream;
  char why[512] = "";
  const char *name = k_kind_names[call->kind];
  if (tbk_is_faulted(tbk_stream_runtime(stream), tbk_stream_device(stream))) {
    /* Tell the peers, which would otherwise wait for this rank until the timeout. */
    snprintf(why, sizeof why, "rank %d's device emu:%d is faulted", comm->rank, comm->device);
    comm_abort(comm, why);
    return;
  }
  bool ok = agree(comm, call, why, sizeof why);
  size_t es = dtype_size(call->dtype), n = (size_t)comm->nranks;
  size_t bytes = call->count * es;
  tb_reduce_op op = (tb_reduce_op)call->op_or_root;
  if (ok) {
    switch (call->kind) {
      case OP_ALL_REDUCE:
      case OP_BROADCAST:
      case OP_ALL_GATHER: {
        size_t chunk = EMU_COLL_CHUNK / es * es;
        for (size_t off = 0; ok && off < bytes; off += chunk) {
          size_t len = bytes - off < chunk ? bytes - off : chunk;
          if (call->kind != OP_BROADCAST || comm->rank == call->op_or_root) {
            memcpy(slot(comm, comm->rank), call->send + off, len);
          }
          if (!(ok = barrier(comm, name, why, sizeof why))) break;
          if (call->kind == OP_ALL_REDUCE) {
            memcpy(call->recv + off, slot(comm, 0), len);
            for (int32_t r = 1; r < comm->nranks; r++) {
              reduce_into(call->recv + off, slot(comm, r), len / es, call->dtype, op);
            }
            if (op == TB_REDUCE_AVG) divide(call->recv + off, len / es, call->dtype, comm->nranks);
          } else if (call->kind == OP_BROADCAST) {
            memcpy(call->recv + off, slot(comm, call->op_or_root), len);
          } else {
            for (int32_t r = 0; r < comm->nranks; r++) {
              memcpy(call->recv + (size_t)r * bytes + off, slot(comm, r), len);
            }
          }
          comm->step++;
        }
        break;
      }
      case OP_REDUCE_SCATTER:
      case OP_ALL_TO_ALL: {
        /* Each step moves `chunk` bytes of every block: block p of this rank's send goes to
         * part p of its slot, and this rank reads part `rank` of every slot. */
        size_t chunk = EMU_COLL_CHUNK / n / es * es;
        for (size_t off = 0; ok && off < bytes; off += chunk) {
          size_t len = bytes - off < chunk ? bytes - off : chunk;
          unsigned char *mine = slot(comm, comm->rank);
          for (size_t p = 0; p < n; p++)
            memcpy(mine + p * chunk, call->send + p * bytes + off, len);
          if (!(ok = barrier(comm, name, why, sizeof why))) break;
          size_t part = (size_t)comm->rank * chunk;
          if (call->kind == OP_REDUCE_SCATTER) {
            memcpy(call->recv + off, slot(comm, 0) + part, len);
            for (int32_t r = 1; r < comm->nranks; r++) {
              reduce_into(call->recv + off, slot(comm, r) + part, len / es, call->dtype, op);
            }
            if (op == TB_REDUCE_AVG) divide(call->recv + off, len / es, call->dtype, comm->nranks);
          } else {
            for (int32_t r = 0; r < comm->nranks; r++) {
              memcpy(call->recv + (size_t)r * bytes + off, slot(comm, r) + part, len);
            }
          }
          comm->step++;
        }
        break;
      }
    }
  }
  if (!ok) {
    comm_abort(comm, why);
    tbk_task_fail(task, "%s on rank %d of %d failed: %s", name, comm->rank, comm->nranks, why);
  }
}

static void finish_collective(tbk_task *task) {
  const coll_payload *call = (const coll_payload *)task->payload;
  comm_release(call->comm);
  tbk_stream_count_completion(task->stream);
}

static tb_status check_comm(const emu_context *ctx, tb_comm comm, const char *call) {
  tb_status status = emu_check_context(ctx, call);
  if (status != TB_OK) return status;
  if (comm == NULL || comm->magic != COMM_MAGIC || comm->ctx != ctx) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: %p is not a live communicator", call,
                    (void *)comm);
  }
  return TB_OK;
}

static tb_status enqueue(tb_context ctx, tb_comm comm, coll_kind kind, const void *send, void *recv,
                         size_t count, tb_dtype dtype, int32_t op_or_root, tb_stream stream) {
  const char *name = k_kind_names[kind];
  tb_status status = check_comm(ctx, comm, name);
  if (status == TB_OK) status = tbk_check_stream(ctx, stream, name);
  if (status != TB_OK) return status;
  if (tbk_stream_device(stream) != comm->device) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: %s: the stream is on emu:%d, the communicator on emu:%d", name,
                    tbk_stream_device(stream), comm->device);
  }
  size_t es = dtype_size(dtype);
  if (es == 0)
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: unknown dtype %d", name, (int)dtype);
  if (kind == OP_ALL_REDUCE || kind == OP_REDUCE_SCATTER) {
    if (op_or_root < TB_REDUCE_SUM || op_or_root > TB_REDUCE_AVG) {
      return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: unknown reduction %d", name, op_or_root);
    }
    bool floating = dtype == TB_DTYPE_FLOAT32 || dtype == TB_DTYPE_FLOAT64 ||
                    dtype == TB_DTYPE_FLOAT16 || dtype == TB_DTYPE_BFLOAT16;
    if (op_or_root == TB_REDUCE_AVG && !floating) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: TB_REDUCE_AVG of %s (floating-point only)",
                      name, dtype_name(dtype));
    }
  }
  if (kind == OP_BROADCAST && (op_or_root < 0 || op_or_root >= comm->nranks)) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: broadcast: root %d is not a rank of %d",
                    op_or_root, comm->nranks);
  }
  size_t blocks = (kind == OP_ALL_REDUCE || kind == OP_BROADCAST) ? 1 : (size_t)comm->nranks;
  if (count > SIZE_MAX / es / blocks) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: count %zu overflows", name, count);
  }
  size_t send_bytes =
      count * es * (kind == OP_REDUCE_SCATTER || kind == OP_ALL_TO_ALL ? blocks : 1);
  size_t recv_bytes = count * es * (kind == OP_ALL_GATHER || kind == OP_ALL_TO_ALL ? blocks : 1);
  bool reads = kind != OP_BROADCAST || op_or_root == comm->rank;
  if (count > 0 && ((reads && !emu_is_device_range(ctx, comm->device, send, send_bytes)) ||
                    !emu_is_device_range(ctx, comm->device, recv, recv_bytes))) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: %s: send %p (%zu bytes) or recv %p (%zu bytes) is not memory of emu:%d",
                    name, send, send_bytes, recv, recv_bytes, comm->device);
  }
  if (kind == OP_ALL_TO_ALL && count > 0 &&
      (const unsigned char *)send < (unsigned char *)recv + recv_bytes &&
      (unsigned char *)recv < (const unsigned char *)send + send_bytes) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: all_to_all: send and recv overlap");
  }
  tbk_task *task = tbk_task_new(stream, run_collective, sizeof(coll_payload));
  if (task == NULL) return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: %s: out of memory", name);
  task->name = name;
  task->finish = finish_collective;
  atomic_fetch_add(&comm->refs, 1);
  *(coll_payload *)task->payload = (coll_payload){
      .comm = comm,
      .kind = kind,
      .send = emu_host(ctx, comm->device, send),
      .recv = emu_host(ctx, comm->device, recv),
      .count = count,
      .dtype = dtype,
      .op_or_root = op_or_root,
  };
  status = tbk_stream_enqueue(stream, task);
  if (status != TB_OK) comm_release(comm); /* the stream freed the task without running it */
  return status;
}

/* ---- the extension's functions ---- */

static tb_status get_unique_id(tb_context ctx, tb_comm_id *id) {
  tb_status status = emu_check_context(ctx, "get_unique_id");
  if (status != TB_OK) return status;
  if (id == NULL) return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: get_unique_id: id is NULL");
  uint64_t nonce[2];
  if (getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce) {
    return tbk_fail(TB_ERROR_INTERNAL, "emu: get_unique_id: getrandom failed: %s", strerror(errno));
  }
  memset(id, 0, sizeof *id);
  snprintf((char *)id->bytes, sizeof id->bytes, ID_PREFIX "/tb-emu-%d-%016" PRIx64 "%016" PRIx64,
           (int)getpid(), nonce[0], nonce[1]);
  return TB_OK;
}

static bool header_ready(struct tb_comm_impl *comm, uint64_t unused) {
  (void)unused;
  return atomic_load(&comm->header->state) == 2;
}

static bool all_joined(struct tb_comm_impl *comm, uint64_t nranks) {
  return (uint64_t)atomic_load(&comm->header->joined) >= nranks;
}

static tb_status comm_init(tb_context ctx, int32_t device, int32_t nranks, int32_t rank,
                           const tb_comm_id *id, const tb_comm_config *config, tb_comm *out) {
  tb_status status = emu_check_device(ctx, device, "comm_init");
  if (status != TB_OK) return status;
  if (id == NULL || out == NULL) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: comm_init: id or comm is NULL");
  }
  if (nranks < 1 || nranks > EMU_COLL_MAX_RANKS || rank < 0 || rank >= nranks) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: comm_init: rank %d of %d (emu supports 1 to %d ranks)", rank, nranks,
                    EMU_COLL_MAX_RANKS);
  }
  const char *text = (const char *)id->bytes;
  if (memchr(text, '\0', sizeof id->bytes) == NULL ||
      strncmp(text, ID_PREFIX, strlen(ID_PREFIX)) != 0) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: comm_init: the id was not made by emu's get_unique_id");
  }
  struct tb_comm_impl *comm = calloc(1, sizeof *comm);
  if (comm == NULL) return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: comm_init: out of memory");
  *comm = (struct tb_comm_impl){.magic = COMM_MAGIC,
                                .ctx = ctx,
                                .device = device,
                                .nranks = nranks,
                                .rank = rank,
                                .timeout_ms = EMU_COLL_DEFAULT_TIMEOUT_MS};
  atomic_init(&comm->refs, 1);
  if (TB_STRUCT_HAS_FIELD(config, tb_comm_config, timeout_ms) && config->timeout_ms > 0) {
    comm->timeout_ms = config->timeout_ms;
  }
  snprintf(comm->name, sizeof comm->name, "%s", text + strlen(ID_PREFIX));
  comm->size = EMU_COLL_HEADER + 2 * (size_t)nranks * EMU_COLL_CHUNK;
  int fd = shm_open(comm->name, O_CREAT | O_RDWR, 0600);
  if (fd < 0 || ftruncate(fd, (off_t)comm->size) != 0) {
    int error = errno;
    if (fd >= 0) close(fd);
    free(comm);
    return tbk_fail(TB_ERROR_INTERNAL, "emu: comm_init: shared memory %s: %s", text,
                    strerror(error));
  }
  void *base = mmap(NULL, comm->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    int error = errno;
    size_t size = comm->size;
    free(comm);
    return tbk_fail(TB_ERROR_INTERNAL, "emu: comm_init: mmap of %zu bytes: %s", size,
                    strerror(error));
  }
  comm->header = base;
  comm->slots = (unsigned char *)base + EMU_COLL_HEADER;
  coll_header *h = comm->header;
  uint32_t fresh = 0;
  if (atomic_compare_exchange_strong(&h->state, &fresh, 1)) {
    h->nranks = nranks;
    atomic_store(&h->state, 2);
  }
  char why[512] = "";
  int32_t expected_pid = 0;
  bool ok = wait_for(comm, header_ready, 0, "comm_init", why, sizeof why);
  if (ok && h->nranks != nranks) {
    snprintf(why, sizeof why, "rank %d says the group has %d ranks, another rank said %d", rank,
             nranks, h->nranks);
    ok = false;
  } else if (ok && !atomic_compare_exchange_strong(&h->ranks[rank].pid, &expected_pid,
                                                   (int32_t)getpid())) {
    snprintf(why, sizeof why, "rank %d joined twice (processes %d and %d)", rank, (int)expected_pid,
             (int)getpid());
    ok = false;
  }
  if (ok) {
    atomic_fetch_add(&h->joined, 1);
    ok = wait_for(comm, all_joined, (uint64_t)nranks, "comm_init", why, sizeof why);
  }
  /* Once every rank has mapped the segment its name is no longer needed; a failed init removes
   * it too, so nothing outlives the group. */
  if (!ok || rank == 0) shm_unlink(comm->name);
  if (!ok) {
    munmap(base, comm->size);
    free(comm);
    return tbk_fail(TB_ERROR_INTERNAL, "emu: comm_init of rank %d of %d on emu:%d failed: %s", rank,
                    nranks, device, why);
  }
  *out = comm;
  return TB_OK;
}

static tb_status comm_destroy(tb_context ctx, tb_comm comm) {
  tb_status status = check_comm(ctx, comm, "comm_destroy");
  if (status != TB_OK) return status;
  comm->magic = COMM_MAGIC ^ 1u; /* no new collectives; queued ones hold references */
  comm_release(comm);
  return TB_OK;
}

static tb_status all_reduce(tb_context ctx, tb_comm comm, const void *send, void *recv,
                            size_t count, tb_dtype dtype, tb_reduce_op op, tb_stream stream) {
  return enqueue(ctx, comm, OP_ALL_REDUCE, send, recv, count, dtype, (int32_t)op, stream);
}

static tb_status broadcast(tb_context ctx, tb_comm comm, const void *send, void *recv, size_t count,
                           tb_dtype dtype, int32_t root, tb_stream stream) {
  return enqueue(ctx, comm, OP_BROADCAST, send, recv, count, dtype, root, stream);
}

static tb_status all_gather(tb_context ctx, tb_comm comm, const void *send, void *recv,
                            size_t count, tb_dtype dtype, tb_stream stream) {
  return enqueue(ctx, comm, OP_ALL_GATHER, send, recv, count, dtype, 0, stream);
}

static tb_status reduce_scatter(tb_context ctx, tb_comm comm, const void *send, void *recv,
                                size_t count, tb_dtype dtype, tb_reduce_op op, tb_stream stream) {
  return enqueue(ctx, comm, OP_REDUCE_SCATTER, send, recv, count, dtype, (int32_t)op, stream);
}

static tb_status all_to_all(tb_context ctx, tb_comm comm, const void *send, void *recv,
                            size_t count, tb_dtype dtype, tb_stream stream) {
  return enqueue(ctx, comm, OP_ALL_TO_ALL, send, recv, count, dtype, 0, stream);
}

const tb_collectives_extension emu_collectives = {
    .base = {.struct_size = sizeof(tb_collectives_extension),
             .type = TB_EXTENSION_COLLECTIVES,
             .next = &emu_graphs.base},
    .dtypes = EMU_ALL_TYPES,
    .get_unique_id = get_unique_id,
    .comm_init = comm_init,
    .comm_destroy = comm_destroy,
    .all_reduce = all_reduce,
    .broadcast = broadcast,
    .all_gather = all_gather,
    .reduce_scatter = reduce_scatter,
    .all_to_all = all_to_all,
};
