/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's internals, shared by its files.  emu emulates an accelerator the way a vendor's runtime
 * would look: device memory in its own address range (guarded from host code), streams that are
 * worker threads running queues of tasks in order, events completed by those workers, and
 * kernels enqueued as tasks.
 *
 * State: everything that belongs to one use of the devices lives in the context (emu_context,
 * below).  What stays process-wide, and why: the last-error message (thread-local by the ABI's
 * contract), the worker pool (the host's cores, shared by every context), and the kernel table
 * (constant, built once).
 */
#ifndef TORCH_BACKEND_EMU_H_
#define TORCH_BACKEND_EMU_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <torch_backend/vendor.h>
#include <torch_backend/vendor_kit.h>

#define EMU_MAX_DEVICES 16
#define EMU_ALIGNMENT 256 /* device allocations: a multiple of TB_MEMORY_ALIGNMENT */

/* The spin-wait hint of busy loops: x86's pause, AArch64's yield, else only a compiler barrier
 * (the loop still works, it just does not tell the core it is spinning). */
static inline void emu_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
  __asm__ __volatile__("yield" ::: "memory");
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

/* Errors: tbk_fail sets the thread-local last-error message that tbk_last_error, emu's
 * tb_vendor::last_error, returns (vendor_kit.h). */

/* ----------------------------------------------------------------------------------------- */
/* The context (device.c): everything that belongs to one use of emu's devices, created by     */
/* tb_vendor::init and passed to every call.  Two contexts (two inits in one process: tools   */
/* open a library more than once) have separate device memory, streams and faults.            */

typedef struct emu_config {
  int32_t device_count; /* TORCH_BACKEND_EMU_DEVICE_COUNT, default 2 */
  uint64_t capacity;    /* TORCH_BACKEND_EMU_MEMORY per device, default 8 GiB */
  bool guard;           /* TORCH_BACKEND_EMU_GUARD, default off: host access allowed */
  int threads;          /* TORCH_BACKEND_EMU_THREADS, default: online CPUs */
  int spin_us;          /* TORCH_BACKEND_EMU_SPIN_US: busy-wait before sleeping, default 50 */
  bool profile;         /* TORCH_BACKEND_EMU_PROFILE: print time per kernel at finalize */
} emu_config;

typedef struct emu_arena emu_arena;           /* arena.c */
typedef struct emu_profile emu_profile;       /* profile.c */
typedef struct emu_meta_entry emu_meta_entry; /* storage_meta.c */
typedef struct emu_import emu_import;         /* ipc.c */

struct tb_context_impl {
  /* First member (the kit's rule): streams, events, faults.  The runtime owns the context's
   * lifetime: it frees the context once finalize has run and the last stream worker -- which
   * may finish a destroyed stream's work after finalize -- has exited. */
  tbk_runtime *runtime;
  uint32_t magic;
  emu_config config; /* read from the environment at init; read-only afterwards */
  _Atomic bool finalized;
  /* Device memory: one arena per device, guarded by arena_mutex (arena.c). */
  pthread_mutex_t arena_mutex;
  emu_arena *arenas;
  /* Time per kernel with TORCH_BACKEND_EMU_PROFILE=1, printed at finalize (profile.c). */
  emu_profile *profile;
  /* Per-storage metadata (storage_meta.c), guarded by meta_mutex. */
  pthread_mutex_t meta_mutex;
  emu_meta_entry *meta;
  size_t meta_count, meta_capacity;
  /* Memory of other processes mapped here (ipc.c), guarded by ipc_mutex. */
  pthread_mutex_t ipc_mutex;
  emu_import *imports;
  size_t import_count, import_capacity;
};
typedef struct tb_context_impl emu_context;

/* init and finalize (tb_vendor::init / finalize). */
tb_status emu_init(const tb_host_api *host, tb_context *ctx);
void emu_finalize(tb_context ctx);
/* TB_OK, or why `ctx` cannot be used (NULL, not emu's, finalized), with the message set. */
tb_status emu_check_context(const emu_context *ctx, const char *call);
/* emu_check_context, then that `device` is one of its devices. */
tb_status emu_check_device(const emu_context *ctx, int32_t device, const char *call);

/* ----------------------------------------------------------------------------------------- */
/* Device memory (arena.c).  Each device's memory is one memfd mapped twice: the "device" view
 * handed to callers (PROT_NONE in guard mode, so host code touching it faults) and a private
 * read-write "shadow" view that only emu's own execution uses.  emu_host() translates.        */

/* The context's arenas (not yet mapped: a device maps its memory on first allocation). */
tb_status emu_arenas_create(emu_context *ctx);
void emu_arenas_destroy(emu_context *ctx);
tb_status emu_arena_alloc(emu_context *ctx, int32_t device, size_t size, void **ptr);
tb_status emu_arena_free(emu_context *ctx, int32_t device, void *ptr);
void emu_arena_usage(emu_context *ctx, int32_t device, size_t *used, size_t *total);
/* Sharing with other processes (ipc.c).  export: the live allocation starting at `ptr`, its
 * offset in the device's memfd, its size, and a new descriptor of the memfd.  map_file: maps
 * `span` bytes of file `fd` from `file_offset` (page multiples) over the device range at `at`
 * (page aligned, inside one of this device's allocations), both views.  unmap_file: puts the
 * device's own memory back under that range. */
tb_status emu_arena_export(emu_context *ctx, int32_t device, const void *ptr, uint64_t *offset,
                           uint64_t *size, int *fd);
tb_status emu_arena_map_file(emu_context *ctx, int32_t device, void *at, size_t span, int fd,
                             uint64_t file_offset);
void emu_arena_unmap_file(emu_context *ctx, int32_t device, void *at, size_t span);
/* The shadow address of device address `ptr` on `device` (NULL stays NULL). */
void *emu_host(const emu_context *ctx, int32_t device, const void *ptr);
/* True when [ptr, ptr + size) lies inside `device`'s memory. */
bool emu_is_device_range(const emu_context *ctx, int32_t device, const void *ptr, size_t size);

/* ----------------------------------------------------------------------------------------- */
/* Streams, events, tasks and faults: tb_vendor_kit (vendor_kit.h), whose runtime is the       */
/* context's first member.                                                                    */

/* The context `stream` was created in. */
static inline emu_context *emu_stream_context(tb_stream stream) {
  return (emu_context *)tbk_runtime_user(tbk_stream_runtime(stream));
}

/* Profiles (profile.c; only with profiling on). */
tb_status emu_profile_create(emu_context *ctx);
/* Prints the table to stderr (at finalize) and frees it. */
void emu_profile_destroy(emu_context *ctx);
/* Records that `name` ran for `ns` nanoseconds. */
void emu_profile_record(emu_context *ctx, const char *name, uint64_t ns);

/* ----------------------------------------------------------------------------------------- */
/* Parallel loops (pool.c): split [0, n) into chunks of at least `grain` run on emu's worker
 * pool and the calling thread.  Runs inline when n <= grain or the pool is busy.
 *
 * The pool is process-wide, not per context: it stands for the host's cores, which every
 * context shares, and kernels reach it without a context.  Its size is the first context's
 * TORCH_BACKEND_EMU_THREADS; its threads start on the first parallel loop, never at init, so a
 * process that forks before using a device leaves no threads behind.                         */

typedef void (*emu_range_fn)(void *context, int64_t begin, int64_t end);
/* Sets the pool's size if it is not set yet (init calls it; the first call wins). */
void emu_parallel_configure(int threads);
void emu_parallel_for(int64_t n, int64_t grain, emu_range_fn fn, void *context);
/* Threads emu_parallel_for uses at most (helpers and the caller). */
int emu_parallel_threads(void);

/* ----------------------------------------------------------------------------------------- */
/* Kernels (kernels/).                                                                        */

const tb_kernel_api *emu_kernel_api(void);
/* emu's extension chain (kernels/registry.c): custom operators (ABI 2.0), collectives. */
const tb_extension_base *emu_extensions(void);
/* The collectives library (collectives.c), the second extension of the chain. */
extern const tb_collectives_extension emu_collectives;
extern const tb_graphs_extension emu_graphs;
extern const tb_storage_meta_extension emu_storage_meta;
extern const tb_ipc_extension emu_ipc;

#endif /* TORCH_BACKEND_EMU_H_ */
