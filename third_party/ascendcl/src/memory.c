/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Memory calls of the stand-in: aclrtMalloc/aclrtFree (device memory, arena.c),
 * aclrtMallocHost/aclrtFreeHost (page-locked host memory), aclrtMemcpy, aclrtMemcpyAsync,
 * aclrtMemsetAsync and aclrtGetMemInfo, each as its page of the AscendCL documentation
 * describes it, and the operator library's address translation (standin.h).
 *
 * Where a copy's ends really are decides what it may do: the stand-in looks every pointer up
 * (a device allocation, aclrtMallocHost memory, or other host memory) and refuses a kind that
 * does not match with ACL_ERROR_RT_PARAM_INVALID and a message naming the wrong end.  (CANN 8
 * documents aclrtMemcpy's kind as reserved and infers the direction; earlier releases honour
 * it.  Insisting on the right kind keeps callers correct for both; ACL_MEMCPY_DEFAULT asks
 * for the inference.)  Copies between two devices need aclrtDeviceEnablePeerAccess from the
 * source's device to the destination's, as on A2 (aclrtMemcpy.md).  aclrtMemcpyAsync from or
 * to memory that aclrtMallocHost did not allocate returns once the copy is done
 * (aclrtMemcpyAsync.md); with aclrtMallocHost memory it only enqueues the copy.
 *
 * Stream capture (acl_mdl.h, aclmdlRICaptureBegin.md): aclrtMemcpy and the synchronous form of
 * aclrtMemcpyAsync (host memory aclrtMallocHost did not allocate) are the "unsafe" calls a
 * capture mode restricts on the capturing stream's device: refused with
 * ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, the capture going on (as CANN's runtime does).  On the
 * capturing stream itself the synchronous form cannot be recorded at all: it fails with that
 * code in every mode and invalidates the capture.  Copies and memsets of aclrtMallocHost or
 * device memory on a capturing stream are recorded like any task: each run of the model
 * copies the bytes the addresses hold then.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static const char *kind_name(aclrtMemcpyKind kind) {
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST:
      return "ACL_MEMCPY_HOST_TO_HOST";
    case ACL_MEMCPY_HOST_TO_DEVICE:
      return "ACL_MEMCPY_HOST_TO_DEVICE";
    case ACL_MEMCPY_DEVICE_TO_HOST:
      return "ACL_MEMCPY_DEVICE_TO_HOST";
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
      return "ACL_MEMCPY_DEVICE_TO_DEVICE";
    case ACL_MEMCPY_DEFAULT:
      return "ACL_MEMCPY_DEFAULT";
  }
  return "an unknown kind";
}

/* ---- device memory ---- */

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  int32_t current = -1;
  aclError err = sd_check_init("aclrtMalloc");
  if (err == ACL_SUCCESS) err = sd_current_device("aclrtMalloc", &current);
  if (err != ACL_SUCCESS) return err;
  if (devPtr == NULL) return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: devPtr is NULL");
  if (size == 0) return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: size is 0");
  /* aclrtMemMallocPolicy.md: the *_ONLY huge-page policies fail when no huge page is left; the
   * stand-in has none.  Other values (unknown ones included) take ordinary pages. */
  unsigned base = (unsigned)policy & 0xffu;
  if (base == ACL_MEM_MALLOC_HUGE_ONLY || base == 4 /* HUGE_ONLY_P2P */ ||
      base == 6 /* HUGE1G_ONLY */ || base == 7 /* HUGE1G_ONLY_P2P */) {
    return sd_error(ACL_ERROR_RT_MEMORY_ALLOCATION,
                    "aclrtMalloc: policy %u asks for huge pages only; the stand-in has none (use "
                    "ACL_MEM_MALLOC_HUGE_FIRST or ACL_MEM_MALLOC_NORMAL_ONLY)",
                    (unsigned)policy);
  }
  return sd_arena_alloc(&g_rt.devices[current].arena, current, g_rt.config.capacity, size, devPtr);
}

aclError aclrtFree(void *devPtr) {
  aclError err = sd_check_init("aclrtFree");
  if (err != ACL_SUCCESS) return err;
  if (devPtr == NULL) return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtFree: devPtr is NULL");
  for (int32_t d = 0; d < g_rt.config.device_count; d++) {
    if (sd_arena_contains(&g_rt.devices[d].arena, devPtr)) {
      return sd_arena_free(&g_rt.devices[d].arena, devPtr);
    }
  }
  return sd_error(ACL_ERROR_RT_PARAM_INVALID, "aclrtFree: %p is not device memory", devPtr);
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free_bytes, size_t *total) {
  int32_t current = -1;
  aclError err = sd_check_init("aclrtGetMemInfo");
  if (err == ACL_SUCCESS) err = sd_current_device("aclrtGetMemInfo", &current);
  if (err != ACL_SUCCESS) return err;
  if (free_bytes == NULL || total == NULL) {
    return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: free or total is NULL");
  }
  /* The stand-in's devices have HBM of ordinary pages only: the DDR and huge-page attributes
   * report 0 bytes, as aclrtGetMemInfo.md says for memory the hardware lacks. */
  switch (attr) {
    case ACL_HBM_MEM:
    case ACL_HBM_MEM_NORMAL:
      sd_arena_usage(&g_rt.devices[current].arena, g_rt.config.capacity, free_bytes, total);
      return ACL_SUCCESS;
    case ACL_DDR_MEM:
    case ACL_DDR_MEM_HUGE:
    case ACL_DDR_MEM_NORMAL:
    case ACL_HBM_MEM_HUGE:
      *free_bytes = 0;
      *total = 0;
      return ACL_SUCCESS;
  }
  return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: unknown attribute %d", (int)attr);
}

/* ---- page-locked host memory ---- */

/* Index of the first pinned block starting after `address`.  Caller holds pinned_mutex. */
static size_t pinned_upper(uint64_t address) {
  size_t low = 0, high = g_rt.pinned_count;
  while (low < high) {
    size_t mid = low + (high - low) / 2;
    if (g_rt.pinned[mid].offset <= address) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return low;
}

aclError aclrtMallocHost(void **hostPtr, size_t size) {
  aclError err = sd_check_init("aclrtMallocHost");
  if (err != ACL_SUCCESS) return err;
  if (hostPtr == NULL) return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: hostPtr is NULL");
  if (size == 0) return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: size is 0");
  void *memory = size > SIZE_MAX - 4096 ? NULL : aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
  if (memory == NULL) {
    return sd_error(ACL_ERROR_BAD_ALLOC,
                    "aclrtMallocHost: %zu bytes of host memory are not available", size);
  }
  pthread_mutex_lock(&g_rt.pinned_mutex);
  if (g_rt.pinned_count == g_rt.pinned_capacity) {
    size_t capacity = g_rt.pinned_capacity ? 2 * g_rt.pinned_capacity : 64;
    sd_range *grown = realloc(g_rt.pinned, capacity * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&g_rt.pinned_mutex);
      free(memory);
      return sd_error(ACL_ERROR_BAD_ALLOC, "aclrtMallocHost: out of host memory");
    }
    g_rt.pinned = grown;
    g_rt.pinned_capacity = capacity;
  }
  uint64_t address = (uint64_t)(uintptr_t)memory;
  size_t at = pinned_upper(address);
  memmove(&g_rt.pinned[at + 1], &g_rt.pinned[at], (g_rt.pinned_count - at) * sizeof(sd_range));
  g_rt.pinned[at] = (sd_range){address, size};
  g_rt.pinned_count++;
  pthread_mutex_unlock(&g_rt.pinned_mutex);
  *hostPtr = memory;
  return ACL_SUCCESS;
}

aclError aclrtFreeHost(void *hostPtr) {
  aclError err = sd_check_init("aclrtFreeHost");
  if (err != ACL_SUCCESS) return err;
  if (hostPtr == NULL) return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtFreeHost: hostPtr is NULL");
  uint64_t address = (uint64_t)(uintptr_t)hostPtr;
  pthread_mutex_lock(&g_rt.pinned_mutex);
  size_t at = pinned_upper(address);
  if (at == 0 || g_rt.pinned[at - 1].offset != address) {
    pthread_mutex_unlock(&g_rt.pinned_mutex);
    return sd_error(ACL_ERROR_RT_PARAM_INVALID,
                    "aclrtFreeHost: %p is not an address aclrtMallocHost returned", hostPtr);
  }
  memmove(&g_rt.pinned[at - 1], &g_rt.pinned[at], (g_rt.pinned_count - at) * sizeof(sd_range));
  g_rt.pinned_count--;
  pthread_mutex_unlock(&g_rt.pinned_mutex);
  free(hostPtr);
  return ACL_SUCCESS;
}

bool sd_pinned_range(const void *ptr, size_t bytes) {
  uint64_t address = (uint64_t)(uintptr_t)ptr;
  pthread_mutex_lock(&g_rt.pinned_mutex);
  size_t at = pinned_upper(address);
  bool inside = at > 0 && address - g_rt.pinned[at - 1].offset <= g_rt.pinned[at - 1].size &&
                bytes <= g_rt.pinned[at - 1].size - (address - g_rt.pinned[at - 1].offset);
  pthread_mutex_unlock(&g_rt.pinned_mutex);
  return inside;
}

/* aclFinalize releases the process's page-locked memory too. */
void sd_pinned_clear(void) {
  pthread_mutex_lock(&g_rt.pinned_mutex);
  for (size_t i = 0; i < g_rt.pinned_count; i++) free((void *)(uintptr_t)g_rt.pinned[i].offset);
  free(g_rt.pinned);
  g_rt.pinned = NULL;
  g_rt.pinned_count = g_rt.pinned_capacity = 0;
  pthread_mutex_unlock(&g_rt.pinned_mutex);
}

/* ---- copies ---- */

/* One end of a copy or memset: a device's memory (translated to the shadow view) or host
 * memory. */
typedef struct end {
  int32_t device; /* -1: host */
  char *address;  /* where the bytes are touched */
  bool pinned;    /* host memory from aclrtMallocHost */
} end;

static aclError locate(const char *call, const char *what, const void *ptr, size_t bytes,
                       end *out) {
  void *shadow = NULL;
  bool inside_arena = false;
  int32_t device = sd_locate(ptr, bytes, &shadow, &inside_arena);
  if (device < 0 && inside_arena) {
    return sd_error(ACL_ERROR_RT_PARAM_INVALID,
                    "%s: the %s [%p, +%zu) is device memory but not inside one live allocation "
                    "(freed, or past its end)",
                    call, what, ptr, bytes);
  }
  out->device = device;
  out->address = device >= 0 ? shadow : (char *)(uintptr_t)ptr;
  out->pinned = device < 0 && sd_pinned_range(ptr, bytes);
  return ACL_SUCCESS;
}

typedef struct copy_plan {
  end dst, src;
} copy_plan;

/* Checks a copy's arguments against its kind and the devices' state. */
static aclError plan_copy(const char *call, void *dst, size_t destMax, const void *src,
                          size_t count, aclrtMemcpyKind kind, copy_plan *plan) {
  if (dst == NULL || src == NULL) {
    return sd_error(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", call, dst == NULL ? "dst" : "src");
  }
  if (count > destMax) {
    return sd_error(ACL_ERROR_INVALID_PARAM, "%s: count %zu exceeds destMax %zu", call, count,
                    destMax);
  }
  if ((int)kind < (int)ACL_MEMCPY_HOST_TO_HOST || (int)kind > (int)ACL_MEMCPY_DEFAULT) {
    return sd_error(ACL_ERROR_INVALID_PARAM, "%s: unknown aclrtMemcpyKind %d", call, (int)kind);
  }
  aclError err = locate(call, "destination", dst, count, &plan->dst);
  if (err == ACL_SUCCESS) err = locate(call, "source", src, count, &plan->src);
  if (err != ACL_SUCCESS) return err;
  int want_dst = -1, want_src = -1; /* 1: device, 0: host, -1: either */
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST:
      want_dst = want_src = 0;
      break;
    case ACL_MEMCPY_HOST_TO_DEVICE:
      want_dst = 1;
      want_src = 0;
      break;
    case ACL_MEMCPY_DEVICE_TO_HOST:
      want_dst = 0;
      want_src = 1;
      break;
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
      want_dst = want_src = 1;
      break;
    case ACL_MEMCPY_DEFAULT:
      break;
  }
  const end *ends[2] = {&plan->dst, &plan->src};
  const int wants[2] = {want_dst, want_src};
  const char *names[2] = {"destination", "source"};
  const void *pointers[2] = {dst, src};
  for (int i = 0; i < 2; i++) {
    if (wants[i] < 0 || (ends[i]->device >= 0) == (wants[i] == 1)) continue;
    return sd_error(ACL_ERROR_RT_PARAM_INVALID, "%s: kind %s, but the %s %p is %s memory", call,
                    kind_name(kind), names[i], pointers[i],
                    ends[i]->device >= 0 ? "device" : "host");
  }
  if (plan->src.device >= 0 && plan->dst.device >= 0 &&
      !sd_peer_allowed(plan->src.device, plan->dst.device)) {
    return sd_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "%s: copies from device %d to device %d need aclrtDeviceEnablePeerAccess(%d) "
                    "on device %d first",
                    call, (int)plan->src.device, (int)plan->dst.device, (int)plan->dst.device,
                    (int)plan->src.device);
  }
  if (plan->src.device >= 0 && (err = sd_check_fault(plan->src.device, call)) != ACL_SUCCESS) {
    return err;
  }
  if (plan->dst.device >= 0 && (err = sd_check_fault(plan->dst.device, call)) != ACL_SUCCESS) {
    return err;
  }
  return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind) {
  aclError err = sd_check_init("aclrtMemcpy");
  if (err != ACL_SUCCESS || count == 0) return err;
  copy_plan plan;
  err = plan_copy("aclrtMemcpy", dst, destMax, src, count, kind, &plan);
  if (err == ACL_SUCCESS && plan.dst.device >= 0) {
    err = sd_capture_check_unsafe(plan.dst.device, "aclrtMemcpy");
  }
  if (err == ACL_SUCCESS && plan.src.device >= 0 && plan.src.device != plan.dst.device) {
    err = sd_capture_check_unsafe(plan.src.device, "aclrtMemcpy");
  }
  if (err == ACL_SUCCESS) memmove(plan.dst.address, plan.src.address, count);
  return err;
}

typedef struct copy_task {
  char *dst;
  const char *src;
  size_t count;
  int32_t src_device; /* -1: host; a faulted source has no bytes worth moving */
} copy_task;

static void run_copy(void *arg) {
  const copy_task *c = arg;
  if (c->src_device >= 0 && atomic_load(&g_rt.devices[c->src_device].fault) != 0) return;
  memmove(c->dst, c->src, c->count);
}

typedef struct memset_task {
  char *ptr;
  int value;
  size_t count;
} memset_task;

static void run_memset(void *arg) {
  const memset_task *m = arg;
  memset(m->ptr, m->value, m->count);
}

/* Enqueues run(arg) on `s`; with `wait`, returns once it ran (or was dropped by a fault).
 * Frees arg on failure. */
static aclError enqueue(sd_stream *s, const char *name, standin_task_fn run, void *arg, bool wait) {
  sd_task *task = calloc(1, sizeof *task);
  if (task == NULL) {
    free(arg);
    return sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "%s: out of host memory", name);
  }
  task->kind = SD_TASK_WORK;
  task->name = name;
  task->run = run;
  task->release = free;
  task->arg = arg;
  uint64_t sequence = 0;
  aclError err = sd_stream_enqueue(s, task, &sequence);
  if (err != ACL_SUCCESS) {
    free(task);
    free(arg);
    return err;
  }
  if (!wait) return ACL_SUCCESS;
  sd_stream_wait(s, sequence);
  return sd_check_fault(s->device, name);
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream) {
  static const char call[] = "aclrtMemcpyAsync";
  aclError err = sd_check_init(call);
  sd_stream *s = NULL;
  if (err == ACL_SUCCESS) err = sd_resolve_stream(stream, true, call, &s);
  if (err != ACL_SUCCESS) return err;
  copy_plan plan;
  err = count == 0 ? ACL_SUCCESS : plan_copy(call, dst, destMax, src, count, kind, &plan);
  if (err == ACL_SUCCESS && count != 0) {
    err = sd_check_fault(s->device, call);
  }
  if (err == ACL_SUCCESS && count != 0) {
    if (plan.dst.device < 0 && plan.src.device < 0) {
      err = sd_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                     "%s: host-to-host copies are not supported asynchronously (use aclrtMemcpy)",
                     call);
    } else if (plan.dst.device != s->device && plan.src.device != s->device) {
      err = sd_error(ACL_ERROR_RT_PARAM_INVALID,
                     "%s: the stream belongs to device %d, but the copy moves memory of device "
                     "%d",
                     call, (int)s->device,
                     (int)(plan.dst.device >= 0 ? plan.dst.device : plan.src.device));
    }
  }
  /* Memory aclrtMallocHost did not allocate: the call returns once the copy is done. */
  bool pageable =
      err == ACL_SUCCESS && count != 0 &&
      ((plan.dst.device < 0 && !plan.dst.pinned) || (plan.src.device < 0 && !plan.src.pinned));
  if (pageable && sd_stream_capturing(s)) {
    err = sd_capture_refuse_call(s, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, call,
                                 "a copy from or to host memory that aclrtMallocHost did not "
                                 "allocate is synchronous and cannot be captured");
  } else if (pageable) {
    err = sd_capture_check_unsafe(s->device, call);
  }
  if (err == ACL_SUCCESS && count != 0) {
    copy_task *c = malloc(sizeof *c);
    if (c == NULL) {
      err = sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "%s: out of host memory", call);
    } else {
      *c = (copy_task){plan.dst.address, plan.src.address, count, plan.src.device};
      err = enqueue(s, call, run_copy, c, pageable);
    }
  }
  sd_stream_release(s);
  return err;
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                          aclrtStream stream) {
  static const char call[] = "aclrtMemsetAsync";
  aclError err = sd_check_init(call);
  sd_stream *s = NULL;
  if (err == ACL_SUCCESS) err = sd_resolve_stream(stream, true, call, &s);
  if (err != ACL_SUCCESS) return err;
  end target = {-1, NULL, false};
  if (devPtr == NULL) {
    err = sd_error(ACL_ERROR_INVALID_PARAM, "%s: devPtr is NULL", call);
  } else if (count > maxCount) {
    err = sd_error(ACL_ERROR_INVALID_PARAM, "%s: count %zu exceeds maxCount %zu", call, count,
                   maxCount);
  } else if (count != 0) {
    err = locate(call, "memory", devPtr, count, &target);
    if (err == ACL_SUCCESS && target.device < 0 && !target.pinned) {
      err = sd_error(ACL_ERROR_RT_PARAM_INVALID,
                     "%s: [%p, +%zu) is neither device memory nor memory from aclrtMallocHost",
                     call, devPtr, count);
    } else if (err == ACL_SUCCESS && target.device >= 0 && target.device != s->device) {
      err = sd_error(ACL_ERROR_RT_PARAM_INVALID,
                     "%s: the memory belongs to device %d, the stream to device %d", call,
                     (int)target.device, (int)s->device);
    }
    if (err == ACL_SUCCESS) err = sd_check_fault(s->device, call);
  }
  if (err == ACL_SUCCESS && count != 0) {
    memset_task *m = malloc(sizeof *m);
    if (m == NULL) {
      err = sd_error(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "%s: out of host memory", call);
    } else {
      *m = (memset_task){target.address, (unsigned char)value, count};
      err = enqueue(s, call, run_memset, m, false);
    }
  }
  sd_stream_release(s);
  return err;
}

/* ---- the operator library's address translation (standin.h) ---- */

void *standin_device_to_host(const void *device_ptr, size_t bytes) {
  void *shadow = NULL;
  bool inside_arena = false;
  return sd_locate(device_ptr, bytes, &shadow, &inside_arena) >= 0 ? shadow : NULL;
}

int standin_is_device_range(const void *device_ptr, size_t bytes) {
  void *shadow = NULL;
  bool inside_arena = false;
  return sd_locate(device_ptr, bytes, &shadow, &inside_arena) >= 0;
}
