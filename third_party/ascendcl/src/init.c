/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * aclInit / aclFinalize (aclInit.md, aclFinalize.md), the stand-in's configuration and
 * aclDataTypeSize (aclDataTypeSize.md).
 *
 * aclInit reads the configuration and marks the runtime initialised; it starts no thread and
 * maps no memory (devices get their memory on first allocation, streams their worker on their
 * first task), so a process may fork after it.  A repeated aclInit returns
 * ACL_ERROR_REPEAT_INITIALIZE and changes nothing; one aclFinalize ends it whatever the number
 * of aclInit calls (aclInit.md), releasing every device's streams, events and memory; a second
 * aclFinalize returns ACL_ERROR_REPEAT_FINALIZE; aclInit may then start it again.
 *
 * Configuration, read by aclInit (and by aclrtGetDeviceCount, which works before aclInit):
 *   TB_ASCEND_STANDIN_DEVICES  number of devices, 0..16, default 2
 *   TB_ASCEND_STANDIN_MEMORY   memory per device ("512M", "16G"; at least 1M), default 8G
 *   TB_ASCEND_STANDIN_PEER     1 (default): devices can access each other's memory once
 *                              aclrtDeviceEnablePeerAccess allowed it; 0: they cannot
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

sd_runtime g_rt = {
    .mutex = PTHREAD_MUTEX_INITIALIZER,
    .handles_mutex = PTHREAD_MUTEX_INITIALIZER,
    .records_mutex = PTHREAD_MUTEX_INITIALIZER,
    .records_cond = PTHREAD_COND_INITIALIZER,
    .pinned_mutex = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t g_devices_once = PTHREAD_ONCE_INIT;

/* The devices' locks, once per process (they outlive aclFinalize). */
static void init_devices(void) {
  for (int d = 0; d < SD_MAX_DEVICES; d++) {
    sd_device *device = &g_rt.devices[d];
    pthread_mutex_init(&device->mutex, NULL);
    pthread_mutex_init(&device->fault_mutex, NULL);
    atomic_init(&device->context, 0);
    atomic_init(&device->fault, 0);
    sd_arena_init(&device->arena);
  }
}

static aclError env_long(const char *name, long low, long high, long fallback, long *out,
                         const char *call) {
  const char *text = getenv(name);
  if (text == NULL || *text == '\0') {
    *out = fallback;
    return ACL_SUCCESS;
  }
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < low || value > high) {
    return sd_error(ACL_ERROR_INVALID_PARAM, "%s: %s='%s' is not an integer in [%ld, %ld]", call,
                    name, text, low, high);
  }
  *out = value;
  return ACL_SUCCESS;
}

/* "123", "64K", "512M", "16G", "1T" (binary units). */
static int parse_size(const char *text, uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno != 0 || end == text || *text == '-') return -1;
  unsigned shift = 0;
  switch (*end) {
    case 'K':
    case 'k':
      shift = 10;
      break;
    case 'M':
    case 'm':
      shift = 20;
      break;
    case 'G':
    case 'g':
      shift = 30;
      break;
    case 'T':
    case 't':
      shift = 40;
      break;
    case '\0':
      break;
    default:
      return -1;
  }
  if (shift != 0) end++;
  if (*end != '\0' || value > (UINT64_MAX >> shift)) return -1;
  *out = (uint64_t)value << shift;
  return 0;
}

aclError sd_read_config(sd_config *config, const char *call) {
  long devices = 0, peer = 0;
  aclError err = env_long("TB_ASCEND_STANDIN_DEVICES", 0, SD_MAX_DEVICES, 2, &devices, call);
  if (err == ACL_SUCCESS) err = env_long("TB_ASCEND_STANDIN_PEER", 0, 1, 1, &peer, call);
  if (err != ACL_SUCCESS) return err;
  uint64_t capacity = 8ull << 30;
  const char *memory = getenv("TB_ASCEND_STANDIN_MEMORY");
  if (memory != NULL && *memory != '\0' &&
      (parse_size(memory, &capacity) != 0 || capacity < (1u << 20) ||
       capacity > ((uint64_t)1 << 46))) {
    return sd_error(ACL_ERROR_INVALID_PARAM,
                    "%s: TB_ASCEND_STANDIN_MEMORY='%s' is not a size between 1M and 64T such as "
                    "512M or 16G",
                    call, memory);
  }
  config->device_count = (int32_t)devices;
  config->capacity = capacity & ~(uint64_t)(SD_ALIGNMENT - 1);
  config->peer = peer != 0;
  return ACL_SUCCESS;
}

aclError sd_check_init(const char *call) {
  if (atomic_load_explicit(&g_rt.initialized, memory_order_acquire)) return ACL_SUCCESS;
  return sd_error(ACL_ERROR_UNINITIALIZE, "%s: AscendCL is not initialized: call aclInit first",
                  call);
}

/* aclInit.md: configPath names a JSON file (NULL: defaults).  The stand-in has no option to
 * read from it, but it checks that the file is there and holds a JSON object. */
static aclError check_config_file(const char *path) {
  FILE *file = fopen(path, "r");
  if (file == NULL) {
    return sd_error(ACL_ERROR_INVALID_FILE, "aclInit: cannot open the configuration file '%s': %s",
                    path, strerror(errno));
  }
  int c;
  do {
    c = fgetc(file);
  } while (c == ' ' || c == '\t' || c == '\n' || c == '\r');
  fclose(file);
  if (c != '{') {
    return sd_error(ACL_ERROR_INVALID_FILE,
                    "aclInit: the configuration file '%s' does not hold a JSON object", path);
  }
  return ACL_SUCCESS;
}

aclError aclInit(const char *configPath) {
  pthread_once(&g_devices_once, init_devices);
  pthread_mutex_lock(&g_rt.mutex);
  aclError err = ACL_SUCCESS;
  if (atomic_load(&g_rt.initialized)) {
    err = sd_error(ACL_ERROR_REPEAT_INITIALIZE, "aclInit: AscendCL is initialized already");
  } else if (configPath == NULL || (err = check_config_file(configPath)) == ACL_SUCCESS) {
    err = sd_read_config(&g_rt.config, "aclInit");
    if (err == ACL_SUCCESS) atomic_store_explicit(&g_rt.initialized, true, memory_order_release);
  }
  pthread_mutex_unlock(&g_rt.mutex);
  return err;
}

aclError aclFinalize(void) {
  pthread_once(&g_devices_once, init_devices);
  pthread_mutex_lock(&g_rt.mutex);
  if (!atomic_load(&g_rt.initialized)) {
    pthread_mutex_unlock(&g_rt.mutex);
    return sd_error(ACL_ERROR_REPEAT_FINALIZE,
                    "aclFinalize: AscendCL is not initialized (finalized already?)");
  }
  atomic_store(&g_rt.initialized, false);
  sd_devices_finalize();
  sd_pinned_clear();
  sd_handles_clear();
  pthread_mutex_unlock(&g_rt.mutex);
  return ACL_SUCCESS;
}

size_t aclDataTypeSize(aclDataType dataType) {
  switch (dataType) {
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
      return 1;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16:
      return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
      return 4;
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_DOUBLE:
    case ACL_COMPLEX64:
      return 8;
    case ACL_COMPLEX128:
      return 16;
    case ACL_STRING:
    case ACL_DT_UNDEFINED:
      return 0;
  }
  return 0;
}
