/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's configuration (read once from the environment), device slots and the thread-local
 * error message.  Global state: g_config is written once under pthread_once and read-only
 * afterwards; t_error is thread-local by the last-error contract.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/size.h"
#include "emu.h"

static _Thread_local char t_error[1024];

tb_status emu_fail(tb_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(t_error, sizeof t_error, format, args);
  va_end(args);
  return status;
}

const char *emu_last_error(void) { return t_error; }

static emu_config g_config;
static tb_status g_init_status;
static char g_init_error[512];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static int env_int(const char *name, long low, long high, long fallback, long *out) {
  const char *text = getenv(name);
  if (text == NULL || *text == '\0') {
    *out = fallback;
    return 0;
  }
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < low || value > high) {
    snprintf(g_init_error, sizeof g_init_error, "emu: %s='%s' is not an integer in [%ld, %ld]",
             name, text, low, high);
    return -1;
  }
  *out = value;
  return 0;
}

static void read_config(void) {
  long count = 0, guard = 0, threads = 0, spin = 0, profile = 0;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1) cpus = 1;
  g_init_status = TB_ERROR_UNAVAILABLE;
  if (env_int("TORCH_BACKEND_EMU_DEVICE_COUNT", 0, EMU_MAX_DEVICES, 2, &count) ||
      env_int("TORCH_BACKEND_EMU_GUARD", 0, 1, 1, &guard) ||
      env_int("TORCH_BACKEND_EMU_THREADS", 1, 256, cpus, &threads) ||
      env_int("TORCH_BACKEND_EMU_SPIN_US", 0, 1000000, 50, &spin) ||
      env_int("TORCH_BACKEND_EMU_PROFILE", 0, 1, 0, &profile)) {
    return;
  }
  uint64_t capacity = 8ull << 30;
  const char *memory = getenv("TORCH_BACKEND_EMU_MEMORY");
  if (memory != NULL && *memory != '\0' &&
      (tb_parse_size(memory, &capacity) != 0 || capacity < (1u << 20))) {
    snprintf(g_init_error, sizeof g_init_error,
             "emu: TORCH_BACKEND_EMU_MEMORY='%s' is not a size of at least 1M such as 512M or "
             "16G",
             memory);
    return;
  }
  g_config.device_count = (int32_t)count;
  g_config.capacity = capacity & ~(uint64_t)(EMU_ALIGNMENT - 1);
  g_config.guard = guard != 0;
  g_config.threads = (int)threads;
  g_config.spin_us = (int)spin;
  g_config.profile = profile != 0;
  g_init_status = TB_OK;
}

tb_status emu_init(void) {
  pthread_once(&g_once, read_config);
  if (g_init_status != TB_OK) return emu_fail(g_init_status, "%s", g_init_error);
  return TB_OK;
}

const emu_config *emu_get_config(void) { return &g_config; }

tb_status emu_check_device(int32_t device, const char *call) {
  tb_status status = emu_init();
  if (status != TB_OK) return status;
  if (device < 0 || device >= g_config.device_count) {
    return emu_fail(TB_ERROR_INVALID_DEVICE,
                    "emu: %s: device index %d is out of range (device count %d)", call, (int)device,
                    (int)g_config.device_count);
  }
  return TB_OK;
}
