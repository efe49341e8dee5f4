/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Which kernel enqueued which aclnn operator, per device (npu.h, npu_fault_work): a fault the
 * runtime reports names the aclnn operator that failed; the fault record names the ATen
 * operator too.  One entry per aclnn operator and device (the last kernel to launch it), a
 * fixed table: remembering costs a short lock and a scan of the operators launched so far.
 */
#include <pthread.h>
#include <string.h>

#include "common.h"

#define WORK_MAX_DEVICES 64
#define WORK_MAX_OPERATORS 256

typedef struct work_entry {
  const char *aclnn; /* "aclnnIndexSelect" (static) */
  const char *aten;  /* "index_select.out" (the tb_kernel's static name) */
} work_entry;

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static work_entry g_work[WORK_MAX_DEVICES][WORK_MAX_OPERATORS];
static int g_count[WORK_MAX_DEVICES];

void npu_note_work(int32_t device, const char *aclnn, const char *aten) {
  if (device < 0 || device >= WORK_MAX_DEVICES || aclnn == NULL || aten == NULL) return;
  pthread_mutex_lock(&g_mutex);
  work_entry *table = g_work[device];
  int k = 0;
  while (k < g_count[device] && table[k].aclnn != aclnn && strcmp(table[k].aclnn, aclnn) != 0) {
    k++;
  }
  if (k < g_count[device]) {
    table[k].aten = aten;
  } else if (k < WORK_MAX_OPERATORS) {
    table[k] = (work_entry){aclnn, aten};
    g_count[device]++;
  }
  pthread_mutex_unlock(&g_mutex);
}

const char *npu_fault_work(int32_t device, const char *runtime_message) {
  if (device < 0 || device >= WORK_MAX_DEVICES || runtime_message == NULL) return NULL;
  const char *found = NULL;
  pthread_mutex_lock(&g_mutex);
  /* every "aclnn<Name>:" of the message, first to last */
  for (const char *p = strstr(runtime_message, "aclnn"); p != NULL && found == NULL;
       p = strstr(p + 1, "aclnn")) {
    size_t n = strcspn(p, ": ");
    if (p[n] != ':') continue;
    for (int k = 0; k < g_count[device] && found == NULL; k++) {
      if (strlen(g_work[device][k].aclnn) == n && strncmp(g_work[device][k].aclnn, p, n) == 0) {
        found = g_work[device][k].aten;
      }
    }
  }
  pthread_mutex_unlock(&g_mutex);
  return found;
}
