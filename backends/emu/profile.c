/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * TORCH_BACKEND_EMU_PROFILE=1: time spent per kernel on the stream workers, printed to stderr
 * when the process exits.  A vendor's first tool for finding which kernel to speed up.
 *
 * Global state: the table, guarded by g_mutex; names are static strings compared by address.
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

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static entry g_entries[MAX_ENTRIES];
static int g_count;
static int g_registered;

static int by_time(const void *a, const void *b) {
  const entry *x = a, *y = b;
  return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static void print_profile(void) {
  pthread_mutex_lock(&g_mutex);
  qsort(g_entries, (size_t)g_count, sizeof g_entries[0], by_time);
  uint64_t total = 0;
  for (int i = 0; i < g_count; i++) total += g_entries[i].ns;
  fprintf(stderr, "emu profile: %.3f ms in stream work\n%-36s %10s %8s %10s %6s\n",
          (double)total / 1e6, "work", "total ms", "calls", "us/call", "share");
  for (int i = 0; i < g_count; i++) {
    const entry *e = &g_entries[i];
    fprintf(stderr, "%-36s %10.3f %8llu %10.2f %5.1f%%\n", e->name, (double)e->ns / 1e6,
            (unsigned long long)e->calls, (double)e->ns / 1e3 / (double)e->calls,
            total ? 100.0 * (double)e->ns / (double)total : 0.0);
  }
  pthread_mutex_unlock(&g_mutex);
}

void emu_profile_record(const char *name, uint64_t ns) {
  pthread_mutex_lock(&g_mutex);
  if (!g_registered) {
    g_registered = 1;
    atexit(print_profile);
  }
  int i = 0;
  while (i < g_count && g_entries[i].name != name) i++;
  if (i == g_count && g_count < MAX_ENTRIES) g_entries[g_count++] = (entry){name, 0, 0};
  if (i < g_count) {
    g_entries[i].ns += ns;
    g_entries[i].calls++;
  }
  pthread_mutex_unlock(&g_mutex);
}
