/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's context (init and finalize), its configuration (read from the environment at init)
 * and device checks.  No global state (the last-error message is the kit's, thread-local).
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

#define EMU_CONTEXT_MAGIC 0x656d7563u /* "emuc" */

static tb_status env_int(const char *name, long low, long high, long fallback, long *out) {
  const char *text = getenv(name);
  if (text == NULL || *text == '\0') {
    *out = fallback;
    return TB_OK;
  }
  char *end = NULL;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < low || value > high) {
    return tbk_fail(TB_ERROR_UNAVAILABLE, "emu: %s='%s' is not an integer in [%ld, %ld]", name,
                    text, low, high);
  }
  *out = value;
  return TB_OK;
}

static tb_status read_config(emu_config *config) {
  long count = 0, guard = 0, threads = 0, spin = 0, profile = 0;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1) cpus = 1;
  tb_status status = TB_OK;
  if ((status = env_int("TORCH_BACKEND_EMU_DEVICE_COUNT", 0, EMU_MAX_DEVICES, 2, &count)) ||
      (status = env_int("TORCH_BACKEND_EMU_GUARD", 0, 1, 0, &guard)) ||
      (status = env_int("TORCH_BACKEND_EMU_THREADS", 1, 256, cpus, &threads)) ||
      (status = env_int("TORCH_BACKEND_EMU_SPIN_US", 0, 1000000, 50, &spin)) ||
      (status = env_int("TORCH_BACKEND_EMU_PROFILE", 0, 1, 0, &profile))) {
    return status;
  }
  uint64_t capacity = 8ull << 30;
  const char *memory = getenv("TORCH_BACKEND_EMU_MEMORY");
  if (memory != NULL && *memory != '\0' &&
      (tb_parse_size(memory, &capacity) != 0 || capacity < (1u << 20))) {
    return tbk_fail(TB_ERROR_UNAVAILABLE,
                    "emu: TORCH_BACKEND_EMU_MEMORY='%s' is not a size of at least 1M such as "
                    "512M or 16G",
                    memory);
  }
  config->device_count = (int32_t)count;
  config->capacity = capacity & ~(uint64_t)(EMU_ALIGNMENT - 1);
  config->guard = guard != 0;
  config->threads = (int)threads;
  config->spin_us = (int)spin;
  config->profile = profile != 0;
  return TB_OK;
}

/* Frees what init created; each part tolerates never having been created. */
static void destroy(void *user) {
  emu_context *ctx = user;
  emu_profile_destroy(ctx);
  emu_arenas_destroy(ctx);
  pthread_mutex_destroy(&ctx->arena_mutex);
  pthread_mutex_destroy(&ctx->meta_mutex);
  free(ctx->meta);
  pthread_mutex_destroy(&ctx->ipc_mutex);
  free(ctx->imports);
  ctx->magic = 0;
  free(ctx);
}

static void profile_task(void *user, const char *name, uint64_t ns) {
  emu_profile_record(user, name, ns);
}

/* Fork-safe (vendor.h, "The vendor context"): reads the environment and allocates bookkeeping;
 * device memory is mapped, and threads started, by the first call that needs them. */
tb_status emu_init(const tb_host_api *host, tb_context *out) {
  if (host == NULL || out == NULL) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: init: host or ctx is NULL");
  }
  if (host->struct_size < TB_HOST_API_V2_0_SIZE || host->abi_major != TB_ABI_VERSION_MAJOR) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED,
                    "emu: init: torch_backend speaks ABI %u.%u; emu implements %d.%d",
                    (unsigned)host->abi_major, (unsigned)host->abi_minor, TB_ABI_VERSION_MAJOR,
                    TB_ABI_VERSION_MINOR);
  }
  emu_config config;
  tb_status status = read_config(&config);
  if (status != TB_OK) return status;
  emu_context *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "emu: init: out of host memory");
  ctx->magic = EMU_CONTEXT_MAGIC;
  ctx->config = config;
  atomic_init(&ctx->finalized, false);
  pthread_mutex_init(&ctx->arena_mutex, NULL);
  pthread_mutex_init(&ctx->meta_mutex, NULL);
  pthread_mutex_init(&ctx->ipc_mutex, NULL);
  if ((status = emu_arenas_create(ctx)) != TB_OK ||
      (config.profile && (status = emu_profile_create(ctx)) != TB_OK)) {
    destroy(ctx);
    return status;
  }
  /* Streams and events: the kit's runtime, which frees the context (destroy) once finalize has
   * run and every stream worker has exited.  Priorities: 0 (default) and -1 (high). */
  tbk_runtime_config runtime = {.struct_size = sizeof runtime,
                                .name = "emu",
                                .device_count = config.device_count,
                                .spin_us = config.spin_us,
                                .least_priority = 0,
                                .greatest_priority = -1,
                                .user = ctx,
                                .destroy = destroy,
                                .task_done = config.profile ? profile_task : NULL};
  if ((status = tbk_runtime_create(&runtime, &ctx->runtime)) != TB_OK) {
    destroy(ctx);
    return status;
  }
  emu_parallel_configure(config.threads);
  *out = ctx;
  return TB_OK;
}

/* Waits for the work of every device, prints the profile, and finalizes the runtime: the
 * context goes away now, or when the last stream worker (of a stream never destroyed, or
 * destroyed with work queued) exits. */
void emu_finalize(tb_context ctx) {
  if (emu_check_context(ctx, "finalize") != TB_OK) return;
  for (int32_t d = 0; d < ctx->config.device_count; d++) tbk_wait_device(ctx, d, "finalize");
  atomic_store(&ctx->finalized, true);
  emu_profile_destroy(ctx);
  tbk_runtime_finalize(ctx->runtime);
}

tb_status emu_check_context(const emu_context *ctx, const char *call) {
  if (ctx == NULL || ctx->magic != EMU_CONTEXT_MAGIC) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: %p is not a context emu's init created",
                    call, (const void *)ctx);
  }
  if (atomic_load_explicit(&ctx->finalized, memory_order_relaxed)) {
    return tbk_fail(TB_ERROR_UNAVAILABLE, "emu: %s: the context was finalized", call);
  }
  return TB_OK;
}

tb_status emu_check_device(const emu_context *ctx, int32_t device, const char *call) {
  tb_status status = emu_check_context(ctx, call);
  if (status != TB_OK) return status;
  if (device < 0 || device >= ctx->config.device_count) {
    return tbk_fail(TB_ERROR_INVALID_DEVICE,
                    "emu: %s: device index %d is out of range (device count %d)", call, (int)device,
                    (int)ctx->config.device_count);
  }
  return TB_OK;
}
