/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Device memory shared between processes: aclrtIpcMemGetExportKey, aclrtIpcMemImportByKey,
 * aclrtIpcMemClose (acl_rt.h).  A device's memory is a memfd (arena.c).  An export duplicates
 * that memfd and writes a key naming the exporting process, the duplicate's descriptor number
 * and the range; an importer opens the exporter's descriptor through /proc/<pid>/fd (what
 * CANN's key lookup does through its driver), reserves a block of its current device's arena a
 * page larger than the range, and maps the exporter's pages over it at both views, so copies
 * and operators reach the shared bytes through the addresses they already translate.  Closing
 * an export closes the duplicate (later imports of the key fail); closing an import puts the
 * importer's own memory back and frees the reservation.
 *
 * State: the process's exports and imports, under g_ipc_mutex (a leaf lock).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

#define KEY_LEN 65

typedef struct ipc_entry {
  char key[KEY_LEN];
  bool imported; /* false: an export of this process */
  int fd;        /* exports: the duplicate the key names */
  int32_t device;
  void *base; /* imports: the reservation; `aligned` is where the pages are */
  char *aligned;
  size_t span;
} ipc_entry;

static pthread_mutex_t g_ipc_mutex = PTHREAD_MUTEX_INITIALIZER;
static ipc_entry *g_entries;
static size_t g_count, g_capacity;

/* A free entry (caller holds the mutex); NULL when out of host memory. */
static ipc_entry *add_entry(void) {
  if (g_count == g_capacity) {
    size_t capacity = g_capacity ? 2 * g_capacity : 8;
    ipc_entry *grown = realloc(g_entries, capacity * sizeof *grown);
    if (grown == NULL) return NULL;
    g_entries = grown;
    g_capacity = capacity;
  }
  return &g_entries[g_count++];
}

static ipc_entry *find_entry(const char *key) {
  for (size_t i = 0; i < g_count; i++) {
    if (strcmp(g_entries[i].key, key) == 0) return &g_entries[i];
  }
  return NULL;
}

aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key, size_t len, uint64_t flags) {
  int32_t current = -1;
  aclError err = sd_check_init("aclrtIpcMemGetExportKey");
  if (err == ACL_SUCCESS) err = sd_current_device("aclrtIpcMemGetExportKey", &current);
  if (err != ACL_SUCCESS) return err;
  if (devPtr == NULL || key == NULL || size == 0 || len != KEY_LEN) {
    return sd_error(ACL_ERROR_INVALID_PARAM,
                    "aclrtIpcMemGetExportKey: devPtr %p, size %zu, key %p, len %zu: needs memory, "
                    "a size and a key buffer of length 65",
                    devPtr, size, (void *)key, len);
  }
  if (flags != ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION) {
    return sd_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "aclrtIpcMemGetExportKey: flags %" PRIu64
                    ": the stand-in keeps no whitelist of importing processes; export with "
                    "ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION",
                    flags);
  }
  uint64_t offset = 0;
  int fd = -1;
  err = sd_arena_export(&g_rt.devices[current].arena, devPtr, size, &offset, &fd);
  if (err != ACL_SUCCESS) return err;
  pthread_mutex_lock(&g_ipc_mutex);
  ipc_entry *entry = add_entry();
  if (entry == NULL) {
    pthread_mutex_unlock(&g_ipc_mutex);
    close(fd);
    return sd_error(ACL_ERROR_BAD_ALLOC, "aclrtIpcMemGetExportKey: out of host memory");
  }
  memset(entry, 0, sizeof *entry);
  snprintf(entry->key, sizeof entry->key, "sdipc-%ld-%d-%d-%" PRIu64 "-%zu", (long)getpid(), fd,
           (int)current, offset, size);
  entry->fd = fd;
  entry->device = current;
  memcpy(key, entry->key, KEY_LEN);
  pthread_mutex_unlock(&g_ipc_mutex);
  return ACL_SUCCESS;
}

aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flags) {
  int32_t current = -1;
  aclError err = sd_check_init("aclrtIpcMemImportByKey");
  if (err == ACL_SUCCESS) err = sd_current_device("aclrtIpcMemImportByKey", &current);
  if (err != ACL_SUCCESS) return err;
  (void)flags; /* peer access: one host, every device reaches every other */
  long pid = 0;
  int fd = -1, device = -1, used = 0;
  uint64_t offset = 0;
  size_t size = 0;
  if (devPtr == NULL || key == NULL ||
      sscanf(key, "sdipc-%ld-%d-%d-%" SCNu64 "-%zu%n", &pid, &fd, &device, &offset, &size, &used) !=
          5 ||
      key[used] != '\0' || size == 0) {
    return sd_error(ACL_ERROR_INVALID_PARAM,
                    "aclrtIpcMemImportByKey: '%s' is not a key aclrtIpcMemGetExportKey made",
                    key == NULL ? "(null)" : key);
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/fd/%d", pid, fd);
  int file = open(path, O_RDWR | O_CLOEXEC);
  if (file < 0) {
    return sd_error(ACL_ERROR_INVALID_PARAM,
                    "aclrtIpcMemImportByKey: key '%s' is no longer exported (process %ld exited "
                    "or closed it): %s",
                    key, pid, strerror(errno));
  }
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  uint64_t floor = offset & ~(uint64_t)(page - 1);
  size_t lead = (size_t)(offset - floor);
  size_t span = (lead + size + page - 1) & ~(page - 1);
  sd_arena *arena = &g_rt.devices[current].arena;

  pthread_mutex_lock(&g_ipc_mutex);
  ipc_entry *entry = find_entry(key) != NULL && find_entry(key)->imported ? NULL : add_entry();
  if (entry == NULL) {
    pthread_mutex_unlock(&g_ipc_mutex);
    close(file);
    return sd_error(ACL_ERROR_INVALID_PARAM,
                    "aclrtIpcMemImportByKey: key '%s' is imported already (or out of host memory)",
                    key);
  }
  void *base = NULL;
  err = sd_arena_alloc(arena, current, g_rt.config.capacity, span + page, &base);
  char *aligned = (char *)(((uintptr_t)base + page - 1) & ~(uintptr_t)(page - 1));
  if (err == ACL_SUCCESS) {
    err = sd_arena_map_file(arena, aligned, span, file, floor);
    if (err != ACL_SUCCESS) sd_arena_free(arena, base);
  }
  close(file);
  if (err != ACL_SUCCESS) {
    g_count--;
    pthread_mutex_unlock(&g_ipc_mutex);
    return err;
  }
  memset(entry, 0, sizeof *entry);
  snprintf(entry->key, sizeof entry->key, "%s", key);
  entry->imported = true;
  entry->fd = -1;
  entry->device = current;
  entry->base = base;
  entry->aligned = aligned;
  entry->span = span;
  *devPtr = aligned + lead;
  pthread_mutex_unlock(&g_ipc_mutex);
  return ACL_SUCCESS;
}

aclError aclrtIpcMemClose(const char *key) {
  aclError err = sd_check_init("aclrtIpcMemClose");
  if (err != ACL_SUCCESS) return err;
  if (key == NULL) return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemClose: key is NULL");
  pthread_mutex_lock(&g_ipc_mutex);
  ipc_entry *entry = find_entry(key);
  if (entry == NULL) {
    pthread_mutex_unlock(&g_ipc_mutex);
    return sd_error(ACL_ERROR_INVALID_PARAM,
                    "aclrtIpcMemClose: key '%s' is neither exported nor imported by this process",
                    key);
  }
  ipc_entry closing = *entry;
  *entry = g_entries[--g_count];
  pthread_mutex_unlock(&g_ipc_mutex);
  if (!closing.imported) {
    close(closing.fd);
    return ACL_SUCCESS;
  }
  sd_arena *arena = &g_rt.devices[closing.device].arena;
  sd_arena_unmap_file(arena, closing.aligned, closing.span);
  return sd_arena_free(arena, closing.base);
}
