/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Internals of the stand-in runtime (libascendcl.so): shared by its files, seen by nothing
 * else.  The stand-in implements the AscendCL runtime subset of include/acl/ on the host:
 *
 *   - init.c     aclInit/aclFinalize, the configuration (environment), aclDataTypeSize;
 *   - error.c    the thread-local message list behind aclGetRecentErrMsg;
 *   - device.c   devices: per-thread current device, set counts, default contexts, faults,
 *                peer access, aclrtSynchronizeDevice;
 *   - arena.c    device memory: one memfd per device mapped twice (device view PROT_NONE, so
 *                host code touching device memory faults; shadow view for the runtime);
 *   - memory.c   aclrtMalloc/Free, pinned host memory, copies, memset, aclrtGetMemInfo;
 *   - stream.c   streams (worker threads running tasks in order), standin_launch;
 *   - event.c    events, their records and timestamps, stream waits, elapsed time;
 *   - model.c    stream capture into model runtime instances (aclmdlRI*), their runs.
 *
 * Locking order (outer to inner): g_rt.mutex (init state) -> device.mutex -> stream.mutex ->
 * g_rt.records_mutex; arena locks and the handle registry's lock are leaves.  A model's run
 * mutex is held by the worker that runs it, which takes no other lock meanwhile but leaves
 * (a nested model's run mutex, the fault record).
 */
#ifndef TB_STANDIN_RUNTIME_H_
#define TB_STANDIN_RUNTIME_H_

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "standin.h"

#define SD_MAX_DEVICES 16
/* aclrtCreateStream.md: 1984 streams per device on A2/A3, the default stream included. */
#define SD_MAX_STREAMS 1984
/* aclrtCreateEventWithFlag.md: 65536 events with ACL_EVENT_SYNC per device. */
#define SD_MAX_SYNC_EVENTS 65536
/* aclrtMalloc.md: addresses 64-byte aligned; sizes rounded up to 32 bytes, plus 32. */
#define SD_ALIGNMENT 64
#define SD_FAULT_MESSAGE_SIZE 512

#define SD_STREAM_MAGIC 0x73647374u /* "sdst" */
#define SD_EVENT_MAGIC 0x73646576u  /* "sdev" */
#define SD_MODEL_MAGIC 0x73646d64u  /* "sdmd" */

/* ---- errors (error.c) ---------------------------------------------------------------- */

/* Adds "<message>" to the calling thread's messages (newest first) and returns @p code. */
aclError sd_error(aclError code, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* ---- configuration and init state (init.c) ------------------------------------------- */

typedef struct sd_config {
  int32_t device_count; /* TB_ASCEND_STANDIN_DEVICES, default 2 */
  uint64_t capacity;    /* TB_ASCEND_STANDIN_MEMORY per device, default 8G */
  bool peer;            /* TB_ASCEND_STANDIN_PEER: devices can access each other, default 1 */
} sd_config;

/* Reads the environment; on failure sets the message and returns the error. */
aclError sd_read_config(sd_config *config, const char *call);

/* ---- device memory (arena.c) --------------------------------------------------------- */

typedef struct sd_block {
  uint64_t offset;   /* from the arena's base */
  uint64_t size;     /* bytes the caller asked for: the addressable range */
  uint64_t reserved; /* bytes taken from the arena (size rounded as aclrtMalloc.md says) */
} sd_block;

typedef struct sd_range {
  uint64_t offset;
  uint64_t size;
} sd_range;

typedef struct sd_arena {
  pthread_rwlock_t lock;
  bool mapped;
  int fd;
  char *device_base; /* PROT_NONE: what aclrtMalloc hands out */
  char *shadow_base; /* read-write: where the runtime and the operators touch the bytes */
  uint64_t capacity;
  uint64_t used; /* reserved bytes of live blocks */
  sd_block *live;
  size_t live_count, live_capacity; /* sorted by offset */
  sd_range *free;
  size_t free_count, free_capacity; /* sorted by offset, never adjacent */
} sd_arena;

void sd_arena_init(sd_arena *arena);
/* Unmaps the arena (aclFinalize): every block is gone. */
void sd_arena_destroy(sd_arena *arena);
/* Frees every block (a device whose set count dropped to zero). */
void sd_arena_clear(sd_arena *arena);
aclError sd_arena_alloc(sd_arena *arena, int32_t device, uint64_t capacity, size_t size,
                        void **ptr);
aclError sd_arena_free(sd_arena *arena, void *ptr);
/* Shadow address of [ptr, ptr + bytes) when it lies inside one live block; else NULL. */
void *sd_arena_translate(sd_arena *arena, const void *ptr, size_t bytes);
/* Whether ptr lies inside the arena's address range at all (live or not). */
bool sd_arena_contains(sd_arena *arena, const void *ptr);
void sd_arena_usage(sd_arena *arena, uint64_t capacity, size_t *free_bytes, size_t *total);
/* Memory shared between processes (ipc.c).  export: the offset in the arena's memfd of
 * [ptr, ptr + size), which must lie inside one live block, and a new descriptor of the memfd.
 * map_file: maps `span` bytes of `fd` from `file_offset` (page multiples) over [at, at + span)
 * (page aligned, inside a live block), at both views.  unmap_file: the arena's own memory
 * back under that range. */
aclError sd_arena_export(sd_arena *arena, const void *ptr, size_t size, uint64_t *offset, int *fd);
aclError sd_arena_map_file(sd_arena *arena, void *at, size_t span, int fd, uint64_t file_offset);
void sd_arena_unmap_file(sd_arena *arena, void *at, size_t span);

/* ---- streams and tasks (stream.c) ---------------------------------------------------- */

typedef struct sd_record sd_record;
typedef struct sd_stream sd_stream;
typedef struct sd_capture sd_capture; /* model.c */
typedef struct sd_model sd_model;     /* model.c */

typedef enum sd_task_kind {
  SD_TASK_WORK,   /* run(arg); dropped (not run) once the device has faulted */
  SD_TASK_RECORD, /* completes `record` with a timestamp */
  SD_TASK_WAIT    /* blocks the stream until `record` completes */
} sd_task_kind;

typedef struct sd_task {
  struct sd_task *next;
  sd_task_kind kind;
  const char *name;
  standin_task_fn run;
  void (*release)(void *arg);
  void *arg;
  sd_record *record;
} sd_task;

struct sd_stream {
  uint32_t magic;
  int32_t device;
  uint64_t context; /* the device context it was created in */
  bool is_default;
  _Atomic int refs; /* the handle's, plus temporary ones of device synchronisation */
  pthread_mutex_t mutex;
  pthread_cond_t work;     /* tasks arrived, or the stream stops */
  pthread_cond_t progress; /* tasks completed */
  sd_task *head, *tail;
  uint64_t enqueued, completed; /* guarded by mutex */
  bool started, stopping;
  pthread_t thread;
  sd_stream *next; /* the device's list of streams */
  /* The capture in progress (aclmdlRICaptureBegin), NULL when none: read under mutex, changed
   * under the device's mutex and mutex.  sd_stream_enqueue hands it the stream's tasks. */
  sd_capture *capture;
};

/* A stream with its worker not started (it starts on the first task). */
aclError sd_stream_new(int32_t device, uint64_t context, bool is_default, sd_stream **out);
/* Waits for the stream's tasks, stops its worker and drops the handle's reference. */
void sd_stream_shutdown(sd_stream *stream);
void sd_stream_release(sd_stream *stream);
/* Enqueues `task` (which the stream then owns); returns the task's sequence number.  On a
 * capturing stream the task goes into the capture's model instead (sequence 0: nothing to wait
 * for), or is refused (see model.c); on failure the caller still owns the task. */
aclError sd_stream_enqueue(sd_stream *stream, sd_task *task, uint64_t *sequence);
/* Runs a task of a model on the calling worker (the replay of the model, a task itself): fault
 * messages (standin_task_fail) name `task`, on `device`. */
void sd_run_nested(const sd_task *task, int32_t device);
/* Waits until `target` tasks of the stream have completed. */
void sd_stream_wait(sd_stream *stream, uint64_t target);
uint64_t sd_stream_enqueued(sd_stream *stream);
bool sd_stream_idle(sd_stream *stream);

/* The stream of a call: NULL means the default stream of the calling thread's current
 * device; otherwise a live stream.  With @p on_current, the stream must belong to the current
 * device (ACL_ERROR_RT_STREAM_CONTEXT otherwise), as enqueueing calls require.  Takes a
 * reference the caller drops with sd_stream_release. */
aclError sd_resolve_stream(aclrtStream handle, bool on_current, const char *call, sd_stream **out);

/* ---- events (event.c) ---------------------------------------------------------------- */

struct sd_record {
  int refs;      /* guarded by g_rt.records_mutex */
  bool done;     /* guarded by g_rt.records_mutex */
  uint64_t time; /* CLOCK_MONOTONIC nanoseconds when the stream reached it */
};

typedef struct sd_event {
  uint32_t magic;
  int32_t device;
  uint64_t context;
  uint32_t flags;
  sd_record *latest;            /* guarded by g_rt.records_mutex; NULL: never recorded */
  struct sd_event *prev, *next; /* the device's list of events */
} sd_event;

void sd_record_release(sd_record *record);
/* Frees an event whose device context goes away (the caller unlinked it). */
void sd_event_free(sd_event *event);
uint64_t sd_now_ns(void);

/* ---- devices (device.c) -------------------------------------------------------------- */

typedef struct sd_device {
  pthread_mutex_t mutex;
  int64_t set_count;        /* aclrtSetDevice calls not yet matched by aclrtResetDevice */
  _Atomic uint64_t context; /* the live default context's id; 0: none */
  sd_stream *streams;       /* every stream of the context, the default one included */
  sd_stream *default_stream;
  int stream_count;
  int sync_event_count;
  sd_event *events;
  sd_capture *captures;      /* the captures in progress on its streams (model.c) */
  _Atomic int capture_count; /* their number, read without the mutex */
  sd_model *models;          /* its context's model runtime instances (model.c) */
  bool peer[SD_MAX_DEVICES]; /* access from this device to that one was enabled */
  /* The sticky fault (standin.h): the code, 0 when healthy; the message under fault_mutex. */
  _Atomic int fault;
  pthread_mutex_t fault_mutex;
  char fault_message[SD_FAULT_MESSAGE_SIZE];
  sd_arena arena;
} sd_device;

typedef struct sd_runtime {
  pthread_mutex_t mutex; /* guards initialisation and finalisation */
  _Atomic bool initialized;
  sd_config config;
  uint64_t next_context;
  sd_device devices[SD_MAX_DEVICES];
  /* Live stream and event handles: lookups never dereference a stale handle. */
  pthread_mutex_t handles_mutex;
  /* Event records: completion and the waits for it. */
  pthread_mutex_t records_mutex;
  pthread_cond_t records_cond;
  /* Pinned host memory (aclrtMallocHost), sorted by address. */
  pthread_mutex_t pinned_mutex;
  sd_range *pinned;
  size_t pinned_count, pinned_capacity;
} sd_runtime;

extern sd_runtime g_rt;

/* ACL_SUCCESS when aclInit has run, else ACL_ERROR_UNINITIALIZE with a message. */
aclError sd_check_init(const char *call);
/* The calling thread's current device, or ACL_ERROR_RT_CONTEXT_NULL with a message. */
aclError sd_current_device(const char *call, int32_t *device);
/* ACL_SUCCESS for a device index in range, else ACL_ERROR_RT_INVALID_DEVICEID. */
aclError sd_check_device(int32_t device, const char *call);
/* The device's fault code (0 when healthy); with a message naming @p call when faulted. */
aclError sd_check_fault(int32_t device, const char *call);
/* Faults @p device with @p message unless it is faulted already. */
void sd_fault_device(int32_t device, aclError code, const char *message);
/* Waits for every task enqueued so far on every stream of @p device. */
void sd_wait_device(int32_t device);
/* Releases every device context (aclFinalize). */
void sd_devices_finalize(void);
/* Whether copies from @p from's memory to @p to's may run (same device, or peer access). */
bool sd_peer_allowed(int32_t from, int32_t to);

/* ---- stream capture and models (model.c) --------------------------------------------- */

/* Called by sd_stream_enqueue with the stream's mutex held while it captures: records `task`
 * into the capture's model (ACL_SUCCESS: the model owns it), drops it when the capture is
 * invalidated already (ACL_SUCCESS: released), or refuses what a model cannot hold (event
 * records and waits), invalidating the capture (the caller keeps the task). */
aclError sd_capture_add(sd_stream *stream, sd_task *task);
/* A call that would wait for `stream`'s captured work (`call`): when the stream captures,
 * invalidates the capture and returns ACL_ERROR_RT_STREAM_CAPTURED with a message; else
 * ACL_SUCCESS. */
aclError sd_capture_refuse_stream(sd_stream *stream, const char *call);
/* The same for a call that waits for all of `device`'s work: every capture of the device. */
aclError sd_capture_refuse_device(int32_t device, const char *call);
/* An unsafe call (acl_mdl.h) concerning `device` by the calling thread:
 * ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT with a message when a capture of the device forbids it
 * (GLOBAL, or THREAD_LOCAL begun by this thread); the capture goes on.  ACL_SUCCESS otherwise. */
aclError sd_capture_check_unsafe(int32_t device, const char *call);
/* Invalidates the capture of `stream` (if any) because of `call`, which cannot be captured:
 * returns `code` with a message saying `why`. */
aclError sd_capture_refuse_call(sd_stream *stream, aclError code, const char *call,
                                const char *why);
/* Whether `stream` captures (a snapshot). */
bool sd_stream_capturing(sd_stream *stream);
/* Ends the capture of `stream` without a model (the stream is destroyed).  The caller holds
 * the device's mutex. */
void sd_capture_abandon(sd_stream *stream);
/* Releases the models of a device context going away (its streams are shut down, its captures
 * abandoned).  The caller holds the device's mutex. */
void sd_models_release(sd_device *device);

/* Registry of live handles (stream.c): membership tests that never dereference. */
bool sd_handle_add(void *handle);
void sd_handle_remove(void *handle);
bool sd_handle_live(const void *handle);
/* The same, for a caller holding g_rt.handles_mutex. */
bool sd_handle_live_locked(const void *handle);
void sd_handles_clear(void);

/* The device whose memory holds [ptr, ptr + bytes) and its shadow address; -1 when the range
 * is not inside one live allocation.  *inside_arena says whether ptr lies in some device's
 * address range at all (a freed or foreign address there is an error, not host memory). */
int32_t sd_locate(const void *ptr, size_t bytes, void **shadow, bool *inside_arena);
/* Whether [ptr, ptr + bytes) lies inside one aclrtMallocHost block. */
bool sd_pinned_range(const void *ptr, size_t bytes);
void sd_pinned_clear(void);

#endif /* TB_STANDIN_RUNTIME_H_ */
