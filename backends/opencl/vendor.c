/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The opencl vendor's table and entry point, and its context: init reads the environment and
 * allocates the context, nothing more (vendor.h, "The vendor context": cheap and fork-safe;
 * OpenCL implementations start threads when a platform is first queried).  OpenCL itself
 * starts on the first call that needs a device (ocl_start, device.c).
 *
 * The environment:
 *   TORCH_BACKEND_OPENCL_PLATFORM  the platform: its index in clGetPlatformIDs' list, or a part
 *                                  of its name or vendor (case-insensitive); default: the first
 *                                  platform with a GPU, else with an accelerator, else any.
 *   TORCH_BACKEND_OPENCL_DEVICES   which of the platform's devices, in the order of ocl:N:
 *                                  comma-separated indices into its list sorted GPUs first,
 *                                  then accelerators, then CPUs; default: all of them.
 *   TORCH_BACKEND_OPENCL_MEMORY    "auto" (default): coarse-grained SVM where every chosen
 *                                  device has it, else buffers; "svm" or "buffer" to force one.
 *   TORCH_BACKEND_OPENCL_MEMORY_LIMIT  a byte count ("512M", "4G"): each device reports at
 *                                  most this much memory and allocates no more (to share a
 *                                  GPU, or to test running out of memory).
 *   TORCH_BACKEND_OPENCL_CACHE     where compiled programs are kept; default
 *                                  $XDG_CACHE_HOME/torch_backend/opencl (~/.cache/...); "" or
 *                                  "off" turns the cache off.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/size.h"
#include "kernels/kernels.h"
#include "opencl.h"

#ifndef TORCH_BACKEND_VERSION
#define TORCH_BACKEND_VERSION "0.0.0"
#endif

#define OCL_CONTEXT_MAGIC 0x6f636c63u /* "oclc" */

static void copy_env(char *dst, size_t size, const char *name, const char *fallback) {
  const char *value = getenv(name);
  snprintf(dst, size, "%s", value != NULL ? value : fallback);
}

static tb_status ocl_init(const tb_host_api *host, tb_context *out) {
  (void)host;
  if (out == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "init: ctx is NULL");
  tb_context ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) return ocl_fail(TB_ERROR_OUT_OF_MEMORY, "init: out of host memory");
  ctx->magic = OCL_CONTEXT_MAGIC;
  copy_env(ctx->platform_choice, sizeof ctx->platform_choice, "TORCH_BACKEND_OPENCL_PLATFORM", "");
  copy_env(ctx->devices_choice, sizeof ctx->devices_choice, "TORCH_BACKEND_OPENCL_DEVICES", "");
  copy_env(ctx->memory_choice, sizeof ctx->memory_choice, "TORCH_BACKEND_OPENCL_MEMORY", "auto");
  const char *cache = getenv("TORCH_BACKEND_OPENCL_CACHE");
  if (cache != NULL) {
    bool off = cache[0] == '\0' || strcmp(cache, "off") == 0;
    snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s", off ? "" : cache);
  } else {
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (xdg != NULL && xdg[0] != '\0') {
      snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s/torch_backend/opencl", xdg);
    } else if (home != NULL && home[0] != '\0') {
      snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s/.cache/torch_backend/opencl", home);
    }
  }
  const char *limit = getenv("TORCH_BACKEND_OPENCL_MEMORY_LIMIT");
  if (limit != NULL && limit[0] != '\0' &&
      (tb_parse_size(limit, &ctx->memory_limit) != 0 || ctx->memory_limit == 0)) {
    free(ctx);
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "TORCH_BACKEND_OPENCL_MEMORY_LIMIT='%s' is not a byte count such as 512M or 4G",
                    limit);
  }
  if (strcmp(ctx->memory_choice, "auto") != 0 && strcmp(ctx->memory_choice, "svm") != 0 &&
      strcmp(ctx->memory_choice, "buffer") != 0) {
    tb_status status = ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                                "TORCH_BACKEND_OPENCL_MEMORY='%s' is not one of auto, svm, buffer",
                                ctx->memory_choice);
    free(ctx);
    return status;
  }
  pthread_mutex_init(&ctx->start_lock, NULL);
  pthread_mutex_init(&ctx->programs_lock, NULL);
  pthread_mutex_init(&ctx->memo_lock, NULL);
  pthread_mutex_init(&ctx->captures_lock, NULL);
  atomic_init(&ctx->active_captures, 0);
  pthread_rwlock_init(&ctx->blocks_lock, NULL);
  atomic_init(&ctx->started, false);
  *out = ctx;
  return TB_OK;
}

static void ocl_finalize(tb_context ctx) {
  if (ctx == NULL || ctx->magic != OCL_CONTEXT_MAGIC) return;
  if (atomic_load(&ctx->started) && ctx->start_status == TB_OK) {
    for (int32_t d = 0; d < ctx->count; d++) {
      (void)clFinish(ctx->devices[d].internal);
    }
    ocl_captures_release(ctx);
    ocl_streams_release(ctx);
    ocl_programs_release(ctx);
    ocl_memory_release(ctx);
    ocl_devices_release(ctx);
  }
  pthread_rwlock_destroy(&ctx->blocks_lock);
  pthread_mutex_destroy(&ctx->programs_lock);
  pthread_mutex_destroy(&ctx->memo_lock);
  pthread_mutex_destroy(&ctx->captures_lock);
  pthread_mutex_destroy(&ctx->start_lock);
  ctx->magic = 0;
  free(ctx);
}

static const tb_device_api k_device = {
    .struct_size = sizeof(tb_device_api),
    .count = ocl_device_count,
    .get_properties = ocl_device_get_properties,
    .synchronize = ocl_device_synchronize,
    .reset = ocl_device_reset,
};
/* host_malloc/host_free are absent: OpenCL 1.2 has no pinned host allocation of its own
 * (CL_MEM_ALLOC_HOST_PTR memory is reached through a map, and its pointer is not accepted by
 * other queues' copies as pinned), so torch_backend's pinned tensors are ordinary host memory. */
static const tb_memory_api k_memory = {
    .struct_size = sizeof(tb_memory_api),
    .device_malloc = ocl_memory_device_malloc,
    .device_free = ocl_memory_device_free,
    .host_malloc = NULL,
    .host_free = NULL,
    .copy_h2d = ocl_memory_copy_h2d,
    .copy_d2h = ocl_memory_copy_d2h,
    .copy_d2d = ocl_memory_copy_d2d,
    .copy_h2d_async = ocl_memory_copy_h2d_async,
    .copy_d2h_async = ocl_memory_copy_d2h_async,
    .copy_d2d_async = ocl_memory_copy_d2d_async,
    .memset_async = ocl_memory_memset_async,
    .get_info = ocl_memory_get_info,
};
/* No priorities: OpenCL 1.2 queues have none (cl_khr_priority_hints is an extension few
 * drivers have); no host functions: the device's memory is not the host's (no
 * TB_DEVICE_HOST_ACCESS), so torch.compile never enqueues any. */
static const tb_stream_api k_stream = {
    .struct_size = sizeof(tb_stream_api),
    .create = ocl_stream_create,
    .destroy = ocl_stream_destroy,
    .query = ocl_stream_query,
    .synchronize = ocl_stream_synchronize,
    .wait_event = ocl_stream_wait_event,
    .priority_range = NULL,
    .inject_fault = ocl_stream_inject_fault,
    .launch_host_func = NULL,
};
static const tb_event_api k_event = {
    .struct_size = sizeof(tb_event_api),
    .create = ocl_event_create,
    .destroy = ocl_event_destroy,
    .record = ocl_event_record,
    .query = ocl_event_query,
    .synchronize = ocl_event_synchronize,
    .elapsed_time = ocl_event_elapsed_time,
};

static tb_vendor g_vendor; /* built once under g_once, then constant */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build(void) {
  g_vendor = (tb_vendor){
      .struct_size = sizeof(tb_vendor),
      .abi_major = TB_ABI_VERSION_MAJOR,
      .abi_minor = TB_ABI_VERSION_MINOR,
      .device_type = "ocl",
      .vendor_name = "torch_backend OpenCL vendor (OpenCL ICD)",
      .vendor_version = TORCH_BACKEND_VERSION,
      .init = ocl_init,
      .finalize = ocl_finalize,
      .last_error = ocl_last_error,
      .device = &k_device,
      .memory = &k_memory,
      .stream = &k_stream,
      .event = &k_event,
      .kernels = ocl_kernel_api(),
      .extensions = ocl_graphs_extension(),
  };
}

TB_EXPORT const tb_vendor *tb_vendor_get(uint32_t abi_major, const char **error) {
  if (abi_major != TB_ABI_VERSION_MAJOR) {
    if (error != NULL) *error = "opencl implements ABI major 2 only";
    return NULL;
  }
  pthread_once(&g_once, build);
  return &g_vendor;
}
