/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Internals of npu's runtime half (vendor.c, error.c, device.c, memory.c, stream.c,
 * event.c, graph.c), beside npu.h, which is what the kernel half sees.  Like the rest of the
 * adapter it includes only AscendCL's public headers.
 *
 * State.  AscendCL is one per process: its initialisation, its devices' faults and peer access
 * are process-wide, so they are kept process-wide here too (vendor.c: g_acl; error.c: the fault
 * record; memory.c: the peer table).
 * Everything that belongs to one use of the devices -- the streams, events and allocations a
 * context made, so that its finalize can release what the caller left -- lives in the context.
 */
#ifndef TB_NPU_NPU_RUNTIME_H_
#define TB_NPU_NPU_RUNTIME_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <torch_backend/vendor_slots.h>

#include "../common/capture.h"
#include "npu.h"

/* Every slot is npu_<group>_<slot> (vendor.c wires them; the optional ones npu lacks are not
 * defined). */
#define NPU_DECLARE_SLOT(gt, gf, slot, required, since, ret, params, names) \
  ret npu_##gf##_##slot params;
TB_VENDOR_SLOTS(NPU_DECLARE_SLOT)
#undef NPU_DECLARE_SLOT

/* Devices the adapter keeps per-device state for: c10::DeviceIndex is 8-bit. */
#define NPU_MAX_DEVICES 128

/* ---- the context (vendor.c) ---- */

typedef struct npu_stream_rec npu_stream_rec; /* stream.c */
typedef struct npu_event_rec npu_event_rec;   /* event.c */
typedef struct tb_graph_impl npu_graph;       /* graph.c */

/* One device_malloc or host_malloc block: where it starts, its size, its device (-1: host). */
typedef struct npu_block {
  uintptr_t base;
  size_t size;
  int32_t device;
} npu_block;

/* A sorted array of blocks (by base). */
typedef struct npu_blocks {
  npu_block *items;
  size_t count, capacity;
} npu_blocks;

/* A storage's declared format (storage_meta.c). */
typedef struct npu_ipc_entry npu_ipc_entry; /* ipc.c */

typedef struct npu_storage_format {
  int32_t device;
  const void *data;
  aclFormat format;
} npu_storage_format;

struct tb_context_impl {
  uint32_t magic;
  _Atomic bool finalized;
  char acl_config[1024];        /* TORCH_BACKEND_NPU_ACL_CONFIG: aclInit's configPath ("" : NULL) */
  _Atomic int32_t device_count; /* -1 until aclrtGetDeviceCount answered */
  pthread_mutex_t mutex;        /* guards everything below */
  npu_stream_rec *streams;      /* live streams */
  npu_stream_rec *graveyard;    /* destroyed while busy: aclrtDestroyStream would block */
  npu_event_rec *events;
  npu_graph *graphs;          /* live graphs (graph.c) */
  npu_graph *graph_graveyard; /* destroyed while their launches run: aclmdlRIDestroy refused */
  uint64_t next_capture_id;   /* under mutex; capture ids start at 1 */
  npu_blocks device_blocks;
  npu_blocks host_blocks;
  npu_storage_format *formats; /* storages given a format (storage_meta.c) */
  size_t formats_count, formats_capacity;
  npu_ipc_entry *ipc; /* exported blocks and imports (ipc.c) */
  size_t ipc_count, ipc_capacity;
};
typedef struct tb_context_impl npu_context;

tb_status npu_init(const tb_host_api *host, tb_context *ctx);
extern const tb_storage_meta_extension npu_storage_meta;
extern const tb_ipc_extension npu_ipc;
/* ipc.c: device_free ends a block's export before freeing it; an import is not freed; finalize
 * closes what is left. */
tb_status npu_ipc_end_export(npu_context *ctx, int32_t device, void *ptr);
bool npu_ipc_is_import(npu_context *ctx, int32_t device, const void *ptr);
void npu_ipc_release(npu_context *ctx);
void npu_finalize(tb_context ctx);
const char *npu_last_error(tb_context ctx);

/* TB_OK, or why `ctx` cannot be used (NULL, not npu's, finalized), with the message set. */
tb_status npu_check_context(const npu_context *ctx, const char *call);
/* npu_check_context, then that `device` is one of its devices (TB_ERROR_INVALID_DEVICE). */
tb_status npu_check_device(npu_context *ctx, int32_t device, const char *call);
/* Initialises AscendCL for the process on first use (aclInit is deferred to here, see
 * vendor.c), then makes `device` current on the calling thread; unlike npu_enter, whatever
 * the device's fault state.  For the calls that keep working on a faulted device
 * (vendor.h, "Device faults"): allocation, freeing, records, creating and destroying. */
tb_status npu_activate(tb_context ctx, int32_t device, const char *call);
/* aclInit on first use (vendor.c); TB_OK once AscendCL is initialised. */
tb_status npu_acl_ready(npu_context *ctx, const char *call);

/* ---- errors and faults (error.c) ---- */

/* TB_OK, or TB_ERROR_DEVICE_FAULT with the recorded message when `device` is faulted; `call`
 * (may be NULL) prefixes the message. */
tb_status npu_fault_check(int32_t device, const char *call);
/* Whether `device` is faulted (no message). */
bool npu_is_faulted(int32_t device);
/* Forgets the fault of `device` (tb_device_api::reset). */
void npu_fault_clear(int32_t device);
/* Forgets every fault (aclFinalize ends them). */
void npu_faults_reset(void);
/* Whether `err` is the code of an asynchronous device failure (which faults the device). */
bool npu_is_fault_code(int err);
/* Discards the calling thread's AscendCL messages after an expected failure. */
void npu_drop_acl_messages(void);
/* Whether `err` is one of the codes a stream capture refuses a call with (acl_mdl.h:
 * ACL_ERROR_RT_STREAM_CAPTURED, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, ...); they map to
 * TB_ERROR_NOT_SUPPORTED. */
bool npu_is_capture_code(int err);

/* OPS-B's stream.inject_fault: the next fault npu_check records for `device` gets
 * "<message> (in inject_fault)" in front of its message (error.c). */
void npu_expect_fault(int32_t device, const char *message);

/* ---- blocks (memory.c) ---- */

int npu_blocks_add(npu_blocks *blocks, uintptr_t base, size_t size, int32_t device);
/* Removes the block starting exactly at `base` of `device`; -1 when there is none. */
int npu_blocks_remove(npu_blocks *blocks, uintptr_t base, int32_t device);
/* The block containing [address, address + size), or NULL. */
const npu_block *npu_blocks_find(const npu_blocks *blocks, uintptr_t address, size_t size);
/* Frees every block left (finalize). */
void npu_blocks_release(npu_blocks *blocks, bool host);
/* Forgets which devices were given peer access (aclFinalize ends it). */
void npu_peers_reset(void);

/* ---- streams and events (stream.c, event.c) ---- */

/* A graph capture in progress on a stream (graph.c): what the ABI's rules need besides
 * AscendCL's own state of the capture (aclmdlRICaptureGetInfo) -- the mode and thread, and
 * whether a refused call invalidated it, with the first refusal's message, which capture_end
 * reports. */
#define NPU_CAPTURE_MAX_STREAMS TB_CAPTURE_MAX_STREAMS

/* A stream of a capture: the one that began it (members[0]) or one that joined it. */
typedef struct npu_capture_member {
  npu_stream_rec *stream; /* NULL once a joined stream was destroyed */
  aclrtStream own;        /* a joined stream's own AscendCL stream, restored when it leaves */
  uint64_t base;          /* its npu_stream::launches when it joined */
  uint64_t clock[NPU_CAPTURE_MAX_STREAMS]; /* how much of each member's work it waited for */
} npu_capture_member;

typedef struct npu_capture {
  tb_capture_mode mode;
  pthread_t thread; /* the thread that began it */
  bool invalid;
  char message[1024];
  uint64_t id; /* from npu_context::next_capture_id */
  size_t member_count;
  npu_capture_member members[NPU_CAPTURE_MAX_STREAMS];
} npu_capture;

/* A stream: npu.h's npu_stream first, so that a tb_stream (what the kernels cast to
 * npu_stream *) is the record's address. */
struct npu_stream_rec {
  npu_stream base;
  uint32_t magic;
  npu_context *ctx;
  npu_stream_rec *prev, *next; /* the context's live streams, or its graveyard (next only) */
  /* Under ctx->mutex; NULL when the stream does not capture; the capture it began or joined. */
  npu_capture *capture;
};

/* What an event's last record is. */
enum {
  NPU_EVENT_NEVER_RECORDED = 0, /* complete, nothing to wait for (vendor.h) */
  NPU_EVENT_RECORDED = 1,       /* AscendCL holds the record */
  NPU_EVENT_RECORD_LOST = 2     /* aclrtRecordEvent failed on a faulted device */
};

struct npu_event_rec {
  uint32_t magic;
  npu_context *ctx;
  aclrtEvent handle;
  int32_t device;
  uint32_t flags; /* TB_EVENT_FLAG_* */
  _Atomic int state;
  npu_event_rec *prev, *next; /* the context's events */
  /* Under ctx->mutex: the capture its latest record was made in (0: none) and the recording
   * stream's clock then (graph.c). */
  uint64_t capture_id;
  uint64_t clock[NPU_CAPTURE_MAX_STREAMS];
};

/* TB_OK when `stream` is a live stream of `ctx`. */
tb_status npu_stream_check(npu_context *ctx, tb_stream stream, const char *call);

/* Destroys the streams of the graveyard whose work is done (all of them with `all`). */
void npu_streams_sweep(npu_context *ctx, bool all);
/* Releases every stream and event of `ctx` (finalize). */
void npu_streams_release(npu_context *ctx);
void npu_events_release(npu_context *ctx);

/* ---- graphs (graph.c) ---- */

/* The extension chain of the vendor table (vendor.c): TB_EXTENSION_GRAPHS. */
const tb_extension_base *npu_extensions(void);

tb_status npu_graph_capture_begin(tb_context ctx, tb_stream stream, tb_capture_mode mode);
tb_status npu_graph_capture_end(tb_context ctx, tb_stream stream, tb_graph *graph);
tb_status npu_graph_launch(tb_context ctx, tb_graph graph, tb_stream stream);
tb_status npu_graph_destroy(tb_context ctx, tb_graph graph);

/* TB_OK when `stream` (a live stream of ctx) does not capture; otherwise refuses `call`
 * (TB_ERROR_NOT_SUPPORTED, "... not permitted while stream ... captures a graph ...: <why>")
 * and invalidates the capture. */
tb_status npu_capture_check_stream(npu_context *ctx, tb_stream stream, const char *call,
                                   const char *why);
/* The same for a call that waits for all of `device`'s work: every capture of the device. */
tb_status npu_capture_check_device(npu_context *ctx, int32_t device, const char *call);
/* A call `call` concerning `device` and `other_device` (the same for a call of one device),
 * on `stream` (NULL for a call without one), whose AscendCL call `acl_call` was refused with a
 * capture code (npu_is_capture_code): the error with AscendCL's message, as
 * TB_ERROR_NOT_SUPPORTED, invalidating the captures that refuse it -- the capture of `stream`,
 * and for ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT (an unsafe call) those of the devices whose
 * mode forbids the calling thread such a call. */
tb_status npu_capture_refused(npu_context *ctx, int32_t device, int32_t other_device,
                              tb_stream stream, int err, const char *call, const char *acl_call);
/* Multi-stream capture (vendor.h @ref tb_graphs), as the kit's: an event recorded on a
 * capturing stream marks the capture and the recording stream's clock (no AscendCL record); a
 * stream that waits for it joins the capture -- its work then goes to the capturing stream's
 * AscendCL stream, which records it in host order -- and must be joined back before
 * capture_end.  npu_capture_record marks `e` (TB_ERROR_NOT_READY: `stream` does not capture,
 * record it as usual); npu_capture_wait applies a wait of `stream` for `e` (TB_ERROR_NOT_READY:
 * `e` was not recorded in a capture under way, wait as usual); npu_capture_check_event refuses
 * `call` (query, synchronize, elapsed_time) of an event recorded in a capture under way. */
tb_status npu_capture_record(npu_context *ctx, npu_event_rec *e, tb_stream stream);
tb_status npu_capture_wait(npu_context *ctx, tb_stream stream, npu_event_rec *e);
tb_status npu_capture_check_event(npu_context *ctx, npu_event_rec *e, const char *call);
/* Whether `stream` captures (a snapshot). */
bool npu_stream_capturing(npu_context *ctx, tb_stream stream);
/* Ends the capture of stream `s` without a graph (the stream is being destroyed). */
void npu_capture_abandon(npu_context *ctx, npu_stream_rec *s);
/* Destroys the graphs of the graveyard whose launches are done (stream create, device
 * synchronize, graph destroy); all of them at finalize, after the streams (npu_graphs_release,
 * which releases the live graphs too). */
void npu_graphs_sweep(npu_context *ctx);
void npu_graphs_release(npu_context *ctx);

#endif /* TB_NPU_NPU_RUNTIME_H_ */
