/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * TORCH_BACKEND_EMU_PROFILE=1: time spent per kernel on the stream workers, printed to stderr
 * when the context is finalized (at process exit, for the runtime).  A vendor's first tool for
 * finding which kernel to speed up.
 *
 * State: one table per context, guarded by its mutex; names are static strings compared by
 * address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"

enum { MAX_ENTRIES = 512 };

typedef struct entry {
  const char *name;
  uint64_t ns, calls;
} entry;

struct emu_profile {
  pthread_mutex_t mutex;
  entry entries[MAX_ENTRIES];
  int count;
};

static int by_time(const void *a, const void *b) {
  const entry *x = a, *y = b;
  return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

tb_status emu_profile_create(emu_context *ctx) {
  ctx->profile = calloc(1, sizeof *ctx->profile);
  if (ctx->profile == NULL) return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: init: out of memory");
  pthread_mutex_init(&ctx->profile->mutex, NULL);
  return TB_OK;
}

void emu_profile_destroy(emu_context *ctx) {
  emu_profile *p = ctx->profile;
  if (p == NULL) return;
  ctx->profile = NULL;
  qsort(p->entries, (size_t)p->count, sizeof p->entries[0], by_time);
  uint64_t total = 0;
  for (int i = 0; i < p->count; i++) total += p->entries[i].ns;
  fprintf(stderr, "emu profile: %.3f ms in stream work\n%-36s %10s %8s %10s %6s\n",
          (double)total / 1e6, "work", "total ms", "calls", "us/call", "share");
  for (int i = 0; i < p->count; i++) {
    const entry *e = &p->entries[i];
    fprintf(stderr, "%-36s %10.3f %8llu %10.2f %5.1f%%\n", e->name, (double)e->ns / 1e6,
            (unsigned long long)e->calls, (double)e->ns / 1e3 / (double)e->calls,
            total ? 100.0 * (double)e->ns / (double)total : 0.0);
  }
  pthread_mutex_destroy(&p->mutex);
  free(p);
}

void emu_profile_record(emu_context *ctx, const char *name, uint64_t ns) {
  emu_profile *p = ctx->profile;
  if (p == NULL) return; /* finalized: the table was printed */
  pthread_mutex_lock(&p->mutex);
  int i = 0;
  while (i < p->count && p->entries[i].name != name) i++;
  if (i == p->count && p->count < MAX_ENTRIES) p->entries[p->count++] = (entry){name, 0, 0};
  if (i < p->count) {
    p->entries[i].ns += ns;
    p->entries[i].calls++;
  }
  pthread_mutex_unlock(&p->mutex);
}
