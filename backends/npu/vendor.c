/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's vendor table and entry point, its context (init and finalize), AscendCL's process-wide
 * initialisation, and npu_enter: the step every device call takes first.
 *
 * init is cheap and fork-safe (vendor.h, "The vendor context"): it reads the environment and
 * allocates the context, nothing more.  aclInit is deferred to the first call that needs the
 * runtime (npu_acl_ready): on CANN it loads the driver and starts threads, which a process that
 * forks before using a device must not have, and which torch_backend's import (init runs there)
 * should not pay for.  tb_device_api::count asks aclrtGetDeviceCount, which needs no aclInit.
 *
 * AscendCL is one per process while the ABI allows several contexts (tools open the library
 * more than once): the first context that needs the runtime calls aclInit, the last finalize
 * calls aclFinalize -- unless aclInit answered ACL_ERROR_REPEAT_INITIALIZE, meaning that the
 * application initialised AscendCL itself and will finalize it.
 *
 * AscendCL keeps a current device per thread, the ABI passes device indices explicitly:
 * npu_enter / npu_activate make the call's device current on the calling thread (aclrtSetDevice
 * when aclrtGetDevice says another one, or none, is), so the runtime's per-thread state always
 * follows the ABI's arguments.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu_runtime.h"

#ifndef TORCH_BACKEND_VERSION
#define TORCH_BACKEND_VERSION "0.0.0"
#endif

#define NPU_CONTEXT_MAGIC 0x6e707563u /* "npuc" */

/* AscendCL has no stream priorities in the calls the adapter uses (aclrtCreateStream's streams
 * all have the highest one; aclrtCreateStreamWithConfig is not used): priority_range is
 * absent, and torch_backend treats every priority as 0.  inject_fault is the kernel half's
 * (kernels/fault.c): an aclnn operator that faults the device for real. */
static const tb_device_api k_device = {
    .struct_size = sizeof(tb_device_api),
    .count = npu_device_count,
    .get_properties = npu_device_get_properties,
    .synchronize = npu_device_synchronize,
    .reset = npu_device_reset,
};
static const tb_memory_api k_memory = {
    .struct_size = sizeof(tb_memory_api),
    .device_malloc = npu_memory_device_malloc,
    .device_free = npu_memory_device_free,
    .host_malloc = npu_memory_host_malloc,
    .host_free = npu_memory_host_free,
    .copy_h2d = npu_memory_copy_h2d,
    .copy_d2h = npu_memory_copy_d2h,
    .copy_d2d = npu_memory_copy_d2d,
    .copy_h2d_async = npu_memory_copy_h2d_async,
    .copy_d2h_async = npu_memory_copy_d2h_async,
    .copy_d2d_async = npu_memory_copy_d2d_async,
    .memset_async = npu_memory_memset_async,
    .get_info = npu_memory_get_info,
};
static const tb_stream_api k_stream = {
    .struct_size = sizeof(tb_stream_api),
    .create = npu_stream_create,
    .destroy = npu_stream_destroy,
    .query = npu_stream_query,
    .synchronize = npu_stream_synchronize,
    .wait_event = npu_stream_wait_event,
    .priority_range = NULL,
    .inject_fault = npu_inject_fault,
};
static const tb_event_api k_event = {
    .struct_size = sizeof(tb_event_api),
    .create = npu_event_create,
    .destroy = npu_event_destroy,
    .record = npu_event_record,
    .query = npu_event_query,
    .synchronize = npu_event_synchronize,
    .elapsed_time = npu_event_elapsed_time,
};

static tb_vendor g_vendor;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build(void) {
  g_vendor = (tb_vendor){
      .struct_size = sizeof(tb_vendor),
      .abi_major = TB_ABI_VERSION_MAJOR,
      .abi_minor = TB_ABI_VERSION_MINOR,
      .device_type = "npu",
      .vendor_name = "torch_backend Ascend adapter (AscendCL)",
      .vendor_version = TORCH_BACKEND_VERSION,
      .init = npu_init,
      .finalize = npu_finalize,
      .last_error = npu_last_error,
      .device = &k_device,
      .memory = &k_memory,
      .stream = &k_stream,
      .event = &k_event,
      .kernels = npu_kernel_api(),
      .extensions = npu_extensions(), /* graph.c, storage_meta.c */
  };
}

TB_EXPORT const tb_vendor *tb_vendor_get(uint32_t abi_major, const char **error) {
  if (abi_major != TB_ABI_VERSION_MAJOR) {
    if (error != NULL) *error = "npu implements ABI major 2 only";
    return NULL;
  }
  pthread_once(&g_once, build);
  return &g_vendor;
}

/* ---- AscendCL's process-wide state ---- */

static struct {
  pthread_mutex_t mutex;
  int contexts; /* live contexts */
  bool ready;   /* aclInit succeeded (or AscendCL was initialised already) */
  bool owned;   /* our aclInit did it: the last finalize calls aclFinalize */
} g_acl = {.mutex = PTHREAD_MUTEX_INITIALIZER};

/* sdk guide: init */
tb_status npu_acl_ready(npu_context *ctx, const char *call) {
  pthread_mutex_lock(&g_acl.mutex);
  tb_status status = TB_OK;
  if (!g_acl.ready) {
    aclError err = aclInit(ctx->acl_config[0] != '\0' ? ctx->acl_config : NULL);
    if (err == ACL_SUCCESS || err == ACL_ERROR_REPEAT_INITIALIZE) {
      /* aclInit.md: a repeated aclInit's error may be ignored -- someone else initialised it */
      if (err != ACL_SUCCESS) npu_drop_acl_messages();
      g_acl.ready = true;
      g_acl.owned = err == ACL_SUCCESS;
    } else {
      char reason[64];
      snprintf(reason, sizeof reason, "%s: aclInit", call);
      status = npu_check(ctx, -1, err, reason);
      if (status == TB_ERROR_INVALID_ARGUMENT || status == TB_ERROR_INTERNAL) {
        status = TB_ERROR_UNAVAILABLE;
      }
    }
  }
  pthread_mutex_unlock(&g_acl.mutex);
  return status;
}
/* sdk guide: end */

/* ---- the context ---- */

tb_status npu_init(const tb_host_api *host, tb_context *out) {
  if (host == NULL || out == NULL) {
    return npu_fail(NULL, TB_ERROR_INVALID_ARGUMENT, "npu: init: host or ctx is NULL");
  }
  if (host->struct_size < TB_HOST_API_V2_0_SIZE || host->abi_major != TB_ABI_VERSION_MAJOR) {
    return npu_fail(NULL, TB_ERROR_NOT_SUPPORTED,
                    "npu: init: torch_backend speaks ABI %u.%u; npu implements %d.%d",
                    (unsigned)host->abi_major, (unsigned)host->abi_minor, TB_ABI_VERSION_MAJOR,
                    TB_ABI_VERSION_MINOR);
  }
  /* TORCH_BACKEND_NPU_ACL_CONFIG: an acl.json for aclInit (dump, profiling, ...; aclInit.md). */
  const char *config = getenv("TORCH_BACKEND_NPU_ACL_CONFIG");
  if (config != NULL && *config != '\0') {
    if (strlen(config) >= sizeof((npu_context *)0)->acl_config) {
      return npu_fail(NULL, TB_ERROR_UNAVAILABLE, "npu: TORCH_BACKEND_NPU_ACL_CONFIG is too long");
    }
    if (access(config, R_OK) != 0) {
      return npu_fail(NULL, TB_ERROR_UNAVAILABLE,
                      "npu: TORCH_BACKEND_NPU_ACL_CONFIG='%s' cannot be read: %s", config,
                      strerror(errno));
    }
  }
  npu_context *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) return npu_fail(NULL, TB_ERROR_OUT_OF_MEMORY, "npu: init: out of host memory");
  ctx->magic = NPU_CONTEXT_MAGIC;
  atomic_init(&ctx->finalized, false);
  if (config != NULL) snprintf(ctx->acl_config, sizeof ctx->acl_config, "%s", config);
  atomic_init(&ctx->device_count, -1);
  pthread_mutex_init(&ctx->mutex, NULL);
  pthread_mutex_lock(&g_acl.mutex);
  g_acl.contexts++;
  pthread_mutex_unlock(&g_acl.mutex);
  *out = ctx;
  return TB_OK;
}

/* Releases what the caller left (streams, events, memory), then, with the last context,
 * AscendCL itself. */
void npu_finalize(tb_context ctx) {
  if (npu_check_context(ctx, "finalize") != TB_OK) return;
  pthread_mutex_lock(&g_acl.mutex);
  bool ready = g_acl.ready;
  pthread_mutex_unlock(&g_acl.mutex);
  if (ready) { /* (the context is still valid here: destroying a stream makes its device current) */
    npu_streams_release(ctx);
    npu_graphs_release(ctx); /* after the streams: no launch is left */
    npu_events_release(ctx);
    npu_ipc_release(ctx); /* imports closed and out of the blocks before those are freed */
    npu_blocks_release(&ctx->device_blocks, false);
    npu_blocks_release(&ctx->host_blocks, true);
  }
  atomic_store(&ctx->finalized, true);
  pthread_mutex_lock(&g_acl.mutex);
  if (--g_acl.contexts == 0 && g_acl.ready) {
    if (g_acl.owned) {
      aclError err = aclFinalize();
      if (err != ACL_SUCCESS) npu_check(ctx, -1, err, "npu: finalize: aclFinalize");
    }
    g_acl.ready = false;
    g_acl.owned = false;
    npu_faults_reset(); /* the runtime's faults and peer access ended with it */
    npu_peers_reset();
  }
  pthread_mutex_unlock(&g_acl.mutex);
  free(ctx->device_blocks.items);
  free(ctx->host_blocks.items);
  free(ctx->formats);
  free(ctx->ipc);
  pthread_mutex_destroy(&ctx->mutex);
  ctx->magic = 0;
  free(ctx);
}

tb_status npu_check_context(const npu_context *ctx, const char *call) {
  if (ctx == NULL || ctx->magic != NPU_CONTEXT_MAGIC) {
    return npu_fail(NULL, TB_ERROR_INVALID_ARGUMENT,
                    "npu: %s: %p is not a context npu's init created", call, (const void *)ctx);
  }
  if (atomic_load_explicit(&ctx->finalized, memory_order_relaxed)) {
    return npu_fail(NULL, TB_ERROR_UNAVAILABLE, "npu: %s: the context was finalized", call);
  }
  return TB_OK;
}

/* The device count, read once per context (vendor.h: the same answer on every call); a failed
 * read is tried again by the next call. */
static tb_status device_count(npu_context *ctx, int32_t *count) {
  int32_t known = atomic_load_explicit(&ctx->device_count, memory_order_acquire);
  if (known >= 0) {
    *count = known;
    return TB_OK;
  }
  pthread_mutex_lock(&ctx->mutex);
  uint32_t answer = 0;
  aclError err = aclrtGetDeviceCount(&answer);
  if (err == ACL_SUCCESS) {
    known = answer > NPU_MAX_DEVICES ? NPU_MAX_DEVICES : (int32_t)answer;
    atomic_store_explicit(&ctx->device_count, known, memory_order_release);
  }
  pthread_mutex_unlock(&ctx->mutex);
  if (err != ACL_SUCCESS) {
    /* No count, no devices: the runtime is not usable in this process (a missing driver, a bad
     * environment); the message says why. */
    tb_status status = npu_check(ctx, -1, err, "aclrtGetDeviceCount");
    return status == TB_ERROR_OUT_OF_MEMORY ? status : TB_ERROR_UNAVAILABLE;
  }
  *count = known;
  return TB_OK;
}

tb_status npu_device_count(tb_context ctx, int32_t *count) {
  tb_status status = npu_check_context(ctx, "count");
  if (status != TB_OK) return status;
  if (count == NULL) return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: count is NULL");
  return device_count(ctx, count);
}

tb_status npu_check_device(npu_context *ctx, int32_t device, const char *call) {
  tb_status status = npu_check_context(ctx, call);
  int32_t count = 0;
  if (status == TB_OK) status = device_count(ctx, &count);
  if (status != TB_OK) return status;
  if (device < 0 || device >= count) {
    return npu_fail(ctx, TB_ERROR_INVALID_DEVICE,
                    "npu: %s: device index %d is out of range (device count %d)", call, (int)device,
                    (int)count);
  }
  return TB_OK;
}

/* sdk guide: current device */
tb_status npu_activate(tb_context ctx, int32_t device, const char *call) {
  tb_status status = npu_check_device(ctx, device, call);
  if (status == TB_OK) status = npu_acl_ready(ctx, call);
  if (status != TB_OK) return status;
  int32_t current = -1;
  aclError err = aclrtGetDevice(&current);
  if (err == ACL_SUCCESS && current == device) return TB_OK;
  if (err != ACL_SUCCESS) npu_drop_acl_messages(); /* no current device yet: expected */
  return npu_check(ctx, device, aclrtSetDevice(device), "aclrtSetDevice");
}

tb_status npu_enter(tb_context ctx, int32_t device) {
  tb_status status = npu_check_device(ctx, device, "npu_enter");
  if (status == TB_OK) status = npu_fault_check(device, NULL);
  if (status == TB_OK) status = npu_activate(ctx, device, "npu_enter");
  return status;
}
/* sdk guide: end */
