/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The opencl vendor's devices: starting OpenCL on first use (platform, devices, one cl_context
 * over them, the memory mode), what each device is, and device-wide synchronize and reset.
 *
 * One platform at a time: a cl_context spans the devices of one platform, and copies between
 * devices (clEnqueueCopyBuffer, clEnqueueSVMMemcpy) need one context.  Its devices are sorted
 * GPUs first, then accelerators, then CPUs (stable within a type), so that ocl:0 is the fastest
 * kind of device the platform has; TORCH_BACKEND_OPENCL_DEVICES picks from that list.  Devices
 * below OpenCL 1.2, unavailable, or without a compiler are left out.
 *
 * device.count runs at `import torch_backend` and must leave the process fork-safe (vendor.h,
 * "The vendor context"; a DataLoader forks after import).  OpenCL drivers are not: asking one
 * for its devices starts it (PoCL starts its worker threads), and a forked child that then
 * uses the device hangs.  So while OpenCL has not started in this process, count asks a child:
 * a fork that runs the same platform and device choice, writes the count (or the failure)
 * into a pipe and exits without touching anything else.  The parent starts OpenCL on its first
 * real call, exactly as CUDA's lazy initialisation does; the answer is the same because the
 * choice is the same code over the same environment.  Once any context of this process has
 * started OpenCL, a child would inherit a started driver without its threads and hang, so
 * count starts in-process instead (the process is no longer fork-safe anyway); where fork
 * fails, or the child does not answer within OCL_PROBE_TIMEOUT_MS (an application that started
 * OpenCL itself before importing torch), likewise.
 */

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opencl.h"

#define OCL_PROBE_TIMEOUT_MS 20000

/* Whether a context of this process has started OpenCL (process-wide on purpose: the driver is
 * one per process).  Set before the start, never cleared. */
static atomic_bool g_opencl_started_here = false;

#define OCL_MAX_PLATFORMS 16
#define OCL_MAX_DEVICES 64

static int type_rank(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return 0;
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return 1;
  if (type & CL_DEVICE_TYPE_CPU) return 2;
  return 3;
}

static bool contains_nocase(const char *haystack, const char *needle) {
  size_t n = strlen(needle);
  for (const char *h = haystack; *h != '\0'; h++) {
    size_t i = 0;
    while (i < n && h[i] != '\0' &&
           tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i])) {
      i++;
    }
    if (i == n) return true;
  }
  return n == 0;
}

static void platform_string(cl_platform_id platform, cl_platform_info what, char *out,
                            size_t size) {
  out[0] = '\0';
  if (clGetPlatformInfo(platform, what, size, out, NULL) != CL_SUCCESS) out[0] = '\0';
  out[size - 1] = '\0';
}

static void device_string(cl_device_id device, cl_device_info what, char *out, size_t size) {
  out[0] = '\0';
  if (clGetDeviceInfo(device, what, size, out, NULL) != CL_SUCCESS) out[0] = '\0';
  out[size - 1] = '\0';
  /* Drivers pad some strings with spaces. */
  size_t n = strlen(out);
  while (n > 0 && out[n - 1] == ' ') out[--n] = '\0';
}

/* The devices of `platform` that can run the vendor, sorted by type rank. */
static cl_uint usable_devices(cl_platform_id platform, cl_device_id *out) {
  cl_device_id all[OCL_MAX_DEVICES];
  cl_uint n = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, OCL_MAX_DEVICES, all, &n) != CL_SUCCESS) {
    return 0;
  }
  if (n > OCL_MAX_DEVICES) n = OCL_MAX_DEVICES;
  cl_uint kept = 0;
  for (int rank = 0; rank < 4; rank++) {
    for (cl_uint i = 0; i < n; i++) {
      cl_device_type type = 0;
      cl_bool available = CL_FALSE, compiler = CL_FALSE;
      char version[128];
      clGetDeviceInfo(all[i], CL_DEVICE_TYPE, sizeof type, &type, NULL);
      clGetDeviceInfo(all[i], CL_DEVICE_AVAILABLE, sizeof available, &available, NULL);
      clGetDeviceInfo(all[i], CL_DEVICE_COMPILER_AVAILABLE, sizeof compiler, &compiler, NULL);
      device_string(all[i], CL_DEVICE_VERSION, version, sizeof version);
      int major = 0, minor = 0;
      sscanf(version, "OpenCL %d.%d", &major, &minor);
      if (type_rank(type) != rank || !available || !compiler) continue;
      if (major < 1 || (major == 1 && minor < 2)) continue;
      out[kept++] = all[i];
    }
  }
  return kept;
}

/* Chooses the platform: TORCH_BACKEND_OPENCL_PLATFORM, or the one whose best device ranks
 * highest.  Fails with a message listing the platforms. */
static tb_status choose_platform(tb_context ctx) {
  cl_platform_id platforms[OCL_MAX_PLATFORMS];
  cl_uint n = 0;
  cl_int err = clGetPlatformIDs(OCL_MAX_PLATFORMS, platforms, &n);
  if (err == -1001 || (err == CL_SUCCESS && n == 0)) {
    return ocl_fail(TB_ERROR_UNAVAILABLE,
                    "no OpenCL platform is installed: the ICD loader found no driver in "
                    "/etc/OpenCL/vendors (on Debian, `apt-get install pocl-opencl-icd` for the "
                    "CPU, or the GPU vendor's OpenCL driver)");
  }
  if (err != CL_SUCCESS) return ocl_check(ctx, -1, err, "clGetPlatformIDs");
  if (n > OCL_MAX_PLATFORMS) n = OCL_MAX_PLATFORMS;
  char names[OCL_MAX_PLATFORMS][256];
  char list[2048] = "";
  for (cl_uint i = 0; i < n; i++) {
    char vendor[256];
    platform_string(platforms[i], CL_PLATFORM_NAME, names[i], sizeof names[i]);
    platform_string(platforms[i], CL_PLATFORM_VENDOR, vendor, sizeof vendor);
    ocl_append(list, sizeof list, "%s%u: %s (%s)", i ? "; " : "", (unsigned)i, names[i], vendor);
  }
  int chosen = -1;
  const char *choice = ctx->platform_choice;
  if (choice[0] != '\0') {
    char *end = NULL;
    long index = strtol(choice, &end, 10);
    if (end != choice && *end == '\0') {
      if (index >= 0 && index < (long)n) chosen = (int)index;
    } else {
      for (cl_uint i = 0; i < n && chosen < 0; i++) {
        char vendor[256];
        platform_string(platforms[i], CL_PLATFORM_VENDOR, vendor, sizeof vendor);
        if (contains_nocase(names[i], choice) || contains_nocase(vendor, choice)) chosen = (int)i;
      }
    }
    if (chosen < 0) {
      return ocl_fail(TB_ERROR_UNAVAILABLE,
                      "TORCH_BACKEND_OPENCL_PLATFORM='%s' names none of the OpenCL platforms "
                      "(%s)",
                      choice, list);
    }
  } else {
    int best_rank = 4;
    for (cl_uint i = 0; i < n; i++) {
      cl_device_id devices[OCL_MAX_DEVICES];
      cl_uint count = usable_devices(platforms[i], devices);
      if (count == 0) continue;
      cl_device_type type = 0;
      clGetDeviceInfo(devices[0], CL_DEVICE_TYPE, sizeof type, &type, NULL);
      if (type_rank(type) < best_rank) {
        best_rank = type_rank(type);
        chosen = (int)i;
      }
    }
    if (chosen < 0) {
      return ocl_fail(TB_ERROR_UNAVAILABLE,
                      "no OpenCL platform has a usable device (OpenCL 1.2 or later, available, "
                      "with a compiler): %s",
                      list);
    }
  }
  ctx->platform = platforms[chosen];
  snprintf(ctx->platform_name, sizeof ctx->platform_name, "%s", names[chosen]);
  return TB_OK;
}

/* Applies TORCH_BACKEND_OPENCL_DEVICES to the sorted list `all` of `n`; writes the chosen ones
 * to `out` and their count to `*count`. */
static tb_status choose_devices(tb_context ctx, const cl_device_id *all, cl_uint n,
                                cl_device_id *out, cl_uint *count) {
  const char *choice = ctx->devices_choice;
  if (choice[0] == '\0') {
    memcpy(out, all, n * sizeof *all);
    *count = n;
    return TB_OK;
  }
  cl_uint kept = 0;
  const char *p = choice;
  while (*p != '\0') {
    char *end = NULL;
    long index = strtol(p, &end, 10);
    if (end == p || index < 0 || index >= (long)n || (*end != ',' && *end != '\0')) {
      return ocl_fail(TB_ERROR_UNAVAILABLE,
                      "TORCH_BACKEND_OPENCL_DEVICES='%s' is not a comma-separated list of device "
                      "indices below %u (the devices of platform '%s')",
                      choice, (unsigned)n, ctx->platform_name);
    }
    for (cl_uint i = 0; i < kept; i++) {
      if (out[i] == all[index]) {
        return ocl_fail(TB_ERROR_UNAVAILABLE,
                        "TORCH_BACKEND_OPENCL_DEVICES='%s' names device %ld twice", choice, index);
      }
    }
    out[kept++] = all[index];
    p = *end == ',' ? end + 1 : end;
  }
  *count = kept;
  return TB_OK;
}

static void describe(ocl_device *dev) {
  device_string(dev->id, CL_DEVICE_NAME, dev->name, sizeof dev->name);
  if (dev->name[0] == '\0') snprintf(dev->name, sizeof dev->name, "OpenCL device");
  device_string(dev->id, CL_DEVICE_VERSION, dev->version, sizeof dev->version);
  device_string(dev->id, CL_DRIVER_VERSION, dev->driver_version, sizeof dev->driver_version);
  clGetDeviceInfo(dev->id, CL_DEVICE_TYPE, sizeof dev->type, &dev->type, NULL);
  clGetDeviceInfo(dev->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof dev->global_mem, &dev->global_mem,
                  NULL);
  clGetDeviceInfo(dev->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof dev->max_alloc, &dev->max_alloc,
                  NULL);
  clGetDeviceInfo(dev->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof dev->compute_units,
                  &dev->compute_units, NULL);
  sscanf(dev->version, "OpenCL %d.%d", &dev->cl_major, &dev->cl_minor);
  size_t size = 0;
  char *extensions = NULL;
  if (clGetDeviceInfo(dev->id, CL_DEVICE_EXTENSIONS, 0, NULL, &size) == CL_SUCCESS &&
      (extensions = calloc(1, size + 1)) != NULL &&
      clGetDeviceInfo(dev->id, CL_DEVICE_EXTENSIONS, size, extensions, NULL) == CL_SUCCESS) {
    dev->fp64 = strstr(extensions, "cl_khr_fp64") != NULL;
    dev->int64_atomics = strstr(extensions, "cl_khr_int64_base_atomics") != NULL;
    dev->fp16 = strstr(extensions, "cl_khr_fp16") != NULL;
  }
  free(extensions);
  dev->svm = false;
  if (dev->cl_major >= 2) {
    cl_device_svm_capabilities svm = 0;
    if (clGetDeviceInfo(dev->id, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, NULL) ==
        CL_SUCCESS) {
      dev->svm = (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0;
    }
  }
  /* Integers, bool, float32 and bfloat16 (stored as 16 bits, computed as float) everywhere;
   * float64 and float16 where the device has the extensions. */
  dev->dtypes = TB_DTYPE_BIT(TB_DTYPE_BOOL) | TB_DTYPE_BIT(TB_DTYPE_UINT8) |
                TB_DTYPE_BIT(TB_DTYPE_INT8) | TB_DTYPE_BIT(TB_DTYPE_INT16) |
                TB_DTYPE_BIT(TB_DTYPE_INT32) | TB_DTYPE_BIT(TB_DTYPE_INT64) |
                TB_DTYPE_BIT(TB_DTYPE_BFLOAT16) | TB_DTYPE_BIT(TB_DTYPE_FLOAT32);
  if (dev->fp64) dev->dtypes |= TB_DTYPE_BIT(TB_DTYPE_FLOAT64);
  if (dev->fp16) dev->dtypes |= TB_DTYPE_BIT(TB_DTYPE_FLOAT16);
}

/* Creates the device's own queue and zeroed fault record. */
static tb_status open_device(tb_context ctx, ocl_device *dev) {
  cl_int err = CL_SUCCESS;
  dev->internal = clCreateCommandQueue(ctx->context, dev->id, 0, &err);
  if (err != CL_SUCCESS) return ocl_check(ctx, dev->index, err, "clCreateCommandQueue");
  dev->fault =
      clCreateBuffer(ctx->context, CL_MEM_READ_WRITE, sizeof(ocl_fault_record), NULL, &err);
  if (err != CL_SUCCESS) return ocl_check(ctx, dev->index, err, "clCreateBuffer (fault record)");
  const ocl_fault_record zero = {0};
  err = clEnqueueWriteBuffer(dev->internal, dev->fault, CL_TRUE, 0, sizeof zero, &zero, 0, NULL,
                             NULL);
  if (err != CL_SUCCESS)
    return ocl_check(ctx, dev->index, err, "clEnqueueWriteBuffer (fault record)");
  return TB_OK;
}

void ocl_devices_release(tb_context ctx) {
  for (int32_t d = 0; d < ctx->count; d++) {
    ocl_device *dev = &ctx->devices[d];
    for (size_t i = 0; i < dev->retired_count; i++) clReleaseEvent(dev->retired[i]);
    free(dev->retired);
    free(dev->streams);
    if (dev->fault != NULL) clReleaseMemObject(dev->fault);
    if (dev->internal != NULL) clReleaseCommandQueue(dev->internal);
    for (size_t i = 0; i < sizeof dev->fault_op_copies / sizeof dev->fault_op_copies[0]; i++) {
      free(dev->fault_op_copies[i]);
    }
    pthread_mutex_destroy(&dev->lock);
  }
  free(ctx->devices);
  ctx->devices = NULL;
  ctx->count = 0;
  if (ctx->context != NULL) clReleaseContext(ctx->context);
  ctx->context = NULL;
}

static tb_status start(tb_context ctx) {
  tb_status status = choose_platform(ctx);
  if (status != TB_OK) return status;
  cl_device_id all[OCL_MAX_DEVICES], chosen[OCL_MAX_DEVICES];
  cl_uint n = usable_devices(ctx->platform, all), count = 0;
  status = choose_devices(ctx, all, n, chosen, &count);
  if (status != TB_OK) return status;
  if (count == 0) return TB_OK; /* a platform without usable devices: 0 devices */
  ctx->devices = calloc(count, sizeof *ctx->devices);
  if (ctx->devices == NULL) return ocl_fail(TB_ERROR_OUT_OF_MEMORY, "out of host memory");
  bool all_svm = true;
  for (cl_uint i = 0; i < count; i++) {
    ocl_device *dev = &ctx->devices[i];
    dev->id = chosen[i];
    dev->index = (int32_t)i;
    pthread_mutex_init(&dev->lock, NULL);
    atomic_init(&dev->faulted, false);
    atomic_init(&dev->fault_launches, 0);
    describe(dev);
    if (ctx->memory_limit != 0 && dev->global_mem > ctx->memory_limit) {
      dev->global_mem = ctx->memory_limit;
    }
    if (dev->max_alloc > dev->global_mem) dev->max_alloc = dev->global_mem;
    all_svm = all_svm && dev->svm;
  }
  ctx->count = (int32_t)count;
  if (strcmp(ctx->memory_choice, "svm") == 0 && !all_svm) {
    return ocl_fail(TB_ERROR_UNAVAILABLE,
                    "TORCH_BACKEND_OPENCL_MEMORY=svm, but not every device of platform '%s' has "
                    "coarse-grained SVM (OpenCL 2.0 CL_DEVICE_SVM_COARSE_GRAIN_BUFFER)",
                    ctx->platform_name);
  }
  ctx->mode =
      (all_svm && strcmp(ctx->memory_choice, "buffer") != 0) ? OCL_MEMORY_SVM : OCL_MEMORY_BUFFER;
  cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ctx->platform,
                                        0};
  cl_int err = CL_SUCCESS;
  ctx->context = clCreateContext(properties, count, chosen, NULL, NULL, &err);
  if (err != CL_SUCCESS) return ocl_check(ctx, -1, err, "clCreateContext");
  for (cl_uint i = 0; i < count; i++) {
    status = open_device(ctx, &ctx->devices[i]);
    if (status != TB_OK) return status;
  }
  /* Buffer mode's addresses: a range no host allocation uses is not needed (host code never
   * dereferences them), but a recognisable one helps whoever reads a pointer in a log. */
  ctx->next_address = (uintptr_t)1 << 44;
  return TB_OK;
}

tb_status ocl_start(tb_context ctx) {
  if (ctx == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "the context is NULL");
  if (atomic_load(&ctx->started)) {
    if (ctx->start_status != TB_OK) return ocl_fail(ctx->start_status, "%s", ctx->start_error);
    return TB_OK;
  }
  pthread_mutex_lock(&ctx->start_lock);
  if (!atomic_load(&ctx->started)) {
    atomic_store(&g_opencl_started_here, true);
    ctx->start_status = start(ctx);
    if (ctx->start_status != TB_OK) {
      snprintf(ctx->start_error, sizeof ctx->start_error, "%s", ocl_last_error(ctx));
      ocl_devices_release(ctx);
    }
    atomic_store(&ctx->started, true);
  }
  pthread_mutex_unlock(&ctx->start_lock);
  if (ctx->start_status != TB_OK) return ocl_fail(ctx->start_status, "%s", ctx->start_error);
  return TB_OK;
}

tb_status ocl_enter(tb_context ctx, int32_t device) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  if (device < 0 || device >= ctx->count) {
    return ocl_fail(TB_ERROR_INVALID_DEVICE, "device %d does not exist (ocl has %d device%s)",
                    (int)device, (int)ctx->count, ctx->count == 1 ? "" : "s");
  }
  return TB_OK;
}

/* What the probe child sends back. */
typedef struct probe_answer {
  int32_t status;
  int32_t count;
  char error[1024];
} probe_answer;

/* Runs the start in a forked child and reads its answer; -1 when no child could answer. */
static int probe(tb_context ctx, probe_answer *answer) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) { /* the child: start, answer, leave without cleanup of any kind */
    close(fds[0]);
    probe_answer mine = {0};
    mine.status = (int32_t)start(ctx);
    mine.count = mine.status == TB_OK ? ctx->count : 0;
    if (mine.status != TB_OK) snprintf(mine.error, sizeof mine.error, "%s", ocl_last_error(ctx));
    const char *p = (const char *)&mine;
    size_t left = sizeof mine;
    while (left > 0) {
      ssize_t n = write(fds[1], p, left);
      if (n <= 0 && errno != EINTR) break;
      if (n > 0) {
        p += n;
        left -= (size_t)n;
      }
    }
    _exit(left == 0 ? 0 : 1);
  }
  close(fds[1]);
  char *p = (char *)answer;
  size_t got = 0;
  while (got < sizeof *answer) {
    struct pollfd ready = {fds[0], POLLIN, 0};
    int polled = poll(&ready, 1, OCL_PROBE_TIMEOUT_MS);
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) { /* no answer: a driver the child cannot start */
      kill(pid, SIGKILL);
      break;
    }
    ssize_t n = read(fds[0], p + got, sizeof *answer - got);
    if (n == 0 || (n < 0 && errno != EINTR)) break;
    if (n > 0) got += (size_t)n;
  }
  close(fds[0]);
  int child = 0;
  while (waitpid(pid, &child, 0) < 0 && errno == EINTR) {
  }
  answer->error[sizeof answer->error - 1] = '\0';
  return got == sizeof *answer ? 0 : -1;
}

tb_status ocl_device_count(tb_context ctx, int32_t *count) {
  if (count == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "device.count: count is NULL");
  if (ctx == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "the context is NULL");
  if (!atomic_load(&ctx->started)) {
    pthread_mutex_lock(&ctx->start_lock);
    if (!atomic_load(&ctx->started) && !ctx->probed && !atomic_load(&g_opencl_started_here)) {
      probe_answer answer;
      if (probe(ctx, &answer) == 0) {
        ctx->probed = true;
        ctx->probed_status = (tb_status)answer.status;
        ctx->probed_count = answer.count;
        snprintf(ctx->start_error, sizeof ctx->start_error, "%s", answer.error);
      }
    }
    bool probed = ctx->probed && !atomic_load(&ctx->started);
    tb_status status = ctx->probed_status;
    int32_t probed_count = ctx->probed_count;
    pthread_mutex_unlock(&ctx->start_lock);
    if (probed) {
      if (status != TB_OK) return ocl_fail(status, "%s", ctx->start_error);
      *count = probed_count;
      return TB_OK;
    }
  }
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  *count = ctx->count;
  return TB_OK;
}

tb_status ocl_device_get_properties(tb_context ctx, int32_t device,
                                    tb_device_properties *properties) {
  tb_status status = ocl_enter(ctx, device);
  if (status != TB_OK) return status;
  if (properties == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "device.get_properties: properties is NULL");
  }
  const ocl_device *dev = &ctx->devices[device];
  tb_device_properties mine = {0};
  mine.struct_size = sizeof mine;
  snprintf(mine.name, sizeof mine.name, "%s", dev->name);
  mine.total_memory = dev->global_mem;
  mine.compute_units = (int32_t)dev->compute_units;
  mine.arch_major = dev->cl_major;
  mine.arch_minor = dev->cl_minor;
  mine.dtypes = dev->dtypes;
  mine.capabilities = 0; /* device memory is never the host's, even in SVM mode (coarse) */
  size_t size = properties->struct_size < sizeof mine ? properties->struct_size : sizeof mine;
  if (size > sizeof(size_t)) {
    memcpy((char *)properties + sizeof(size_t), (const char *)&mine + sizeof(size_t),
           size - sizeof(size_t));
  }
  return TB_OK;
}

tb_status ocl_device_synchronize(tb_context ctx, int32_t device) {
  tb_status status = ocl_enter(ctx, device);
  if (status == TB_OK) status = ocl_capture_refuse_device(ctx, device, "device synchronize");
  if (status != TB_OK) return status;
  return ocl_device_drain(ctx, device);
}

tb_status ocl_device_reset(tb_context ctx, int32_t device) {
  tb_status status = ocl_enter(ctx, device);
  if (status != TB_OK) return status;
  ocl_device *dev = &ctx->devices[device];
  /* Wait until no work of the device runs -- which also reads a fault record written by work
   * whose failure nobody has observed yet: that device is faulted too -- then clear the record
   * and the sticky state. */
  if (ocl_device_drain(ctx, device) == TB_OK) return TB_OK; /* healthy: nothing to clear */
  if (!atomic_load(&dev->faulted)) return ocl_fail(TB_ERROR_INTERNAL, "%s", ocl_last_error(ctx));
  const ocl_fault_record zero = {0};
  cl_int err = clEnqueueWriteBuffer(dev->internal, dev->fault, CL_TRUE, 0, sizeof zero, &zero, 0,
                                    NULL, NULL);
  if (err != CL_SUCCESS) return ocl_check(ctx, device, err, "clEnqueueWriteBuffer (fault record)");
  pthread_mutex_lock(&dev->lock);
  dev->fault_message[0] = '\0';
  dev->fault_checked = atomic_load(&dev->fault_launches);
  atomic_store(&dev->faulted, false);
  pthread_mutex_unlock(&dev->lock);
  return TB_OK;
}
