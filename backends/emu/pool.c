/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's worker pool: TORCH_BACKEND_EMU_THREADS - 1 helper threads that, together with the
 * calling thread, split large loops into chunks.
 *
 * The caller never waits for a helper that has not started: chunks are claimed from one
 * atomic ticket (region generation in the high bits, next index in the low bits), the caller
 * claims chunks itself until none are left, and then waits only for chunks a helper has
 * actually claimed.  On a loaded machine (more runnable threads than cores) a helper that is
 * not scheduled simply misses the region instead of stalling it for a scheduler tick.
 *
 * One region runs at a time; a caller that finds the pool busy (another stream's kernel) runs
 * its loop inline.  Global state (process-wide on purpose, see emu.h): g_pool, the job under its
 * state mutex, chunk claims and completions through atomics; its size, set by the first
 * context's init.
 */
#define _GNU_SOURCE

#include <stdlib.h>
#include <time.h>

#include "emu.h"

#define INDEX_BITS 40
#define INDEX_MASK ((1ull << INDEX_BITS) - 1)

static struct {
  pthread_once_t once;
  pthread_mutex_t region; /* held by the caller running a parallel region */
  pthread_mutex_t state;
  pthread_cond_t start;
  _Atomic int threads; /* TORCH_BACKEND_EMU_THREADS of the first context; 0: not set */
  int helpers;
  uint64_t generation; /* of the current region (state mutex) */
  emu_range_fn fn;     /* the current job (state mutex) */
  void *context;
  int64_t n, chunk;
  _Atomic uint64_t ticket; /* generation << INDEX_BITS | next chunk index */
  _Atomic int64_t done;    /* chunks completed in the current region */
} g_pool = {.once = PTHREAD_ONCE_INIT,
            .region = PTHREAD_MUTEX_INITIALIZER,
            .state = PTHREAD_MUTEX_INITIALIZER,
            .start = PTHREAD_COND_INITIALIZER};

/* Claims and runs chunks of region `generation` until none are left. */
static void run_chunks(uint64_t generation, emu_range_fn fn, void *context, int64_t n,
                       int64_t chunk) {
  int64_t chunks = (n + chunk - 1) / chunk;
  for (;;) {
    uint64_t ticket = atomic_load(&g_pool.ticket);
    if ((ticket >> INDEX_BITS) != (generation & ((1ull << (64 - INDEX_BITS)) - 1))) return;
    int64_t index = (int64_t)(ticket & INDEX_MASK);
    if (index >= chunks) return;
    if (!atomic_compare_exchange_weak(&g_pool.ticket, &ticket, ticket + 1)) continue;
    int64_t begin = index * chunk;
    int64_t end = begin + chunk < n ? begin + chunk : n;
    fn(context, begin, end);
    atomic_fetch_add(&g_pool.done, 1);
  }
}

static void *helper_main(void *arg) {
  (void)arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&g_pool.state);
  for (;;) {
    while (g_pool.generation == seen) pthread_cond_wait(&g_pool.start, &g_pool.state);
    seen = g_pool.generation;
    emu_range_fn fn = g_pool.fn;
    void *context = g_pool.context;
    int64_t n = g_pool.n, chunk = g_pool.chunk;
    pthread_mutex_unlock(&g_pool.state);
    run_chunks(seen, fn, context, n, chunk);
    pthread_mutex_lock(&g_pool.state);
  }
  return NULL;
}

void emu_parallel_configure(int threads) {
  int unset = 0;
  atomic_compare_exchange_strong(&g_pool.threads, &unset, threads);
}

static void start_pool(void) {
  int threads = atomic_load(&g_pool.threads);
  for (int i = 0; i < threads - 1; i++) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attr, helper_main, NULL) == 0) g_pool.helpers++;
    pthread_attr_destroy(&attr);
  }
}

int emu_parallel_threads(void) {
  pthread_once(&g_pool.once, start_pool);
  return g_pool.helpers + 1;
}

void emu_parallel_for(int64_t n, int64_t grain, emu_range_fn fn, void *context) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  pthread_once(&g_pool.once, start_pool);
  if (n <= grain || g_pool.helpers == 0 || pthread_mutex_trylock(&g_pool.region) != 0) {
    fn(context, 0, n);
    return;
  }
  int workers = g_pool.helpers + 1;
  int64_t chunks = n / grain;
  if (chunks > 4 * workers) chunks = 4 * workers;
  if (chunks < 2) chunks = 2;
  int64_t chunk = (n + chunks - 1) / chunks;
  chunks = (n + chunk - 1) / chunk;
  pthread_mutex_lock(&g_pool.state);
  uint64_t generation = ++g_pool.generation;
  g_pool.fn = fn;
  g_pool.context = context;
  g_pool.n = n;
  g_pool.chunk = chunk;
  atomic_store(&g_pool.done, 0);
  atomic_store(&g_pool.ticket, (generation & ((1ull << (64 - INDEX_BITS)) - 1)) << INDEX_BITS);
  pthread_cond_broadcast(&g_pool.start);
  pthread_mutex_unlock(&g_pool.state);
  run_chunks(generation, fn, context, n, chunk);
  /* Only chunks a helper is running remain: wait for them. */
  while (atomic_load(&g_pool.done) < chunks) emu_cpu_relax();
  pthread_mutex_unlock(&g_pool.region);
}
