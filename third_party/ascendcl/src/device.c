/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Devices of the stand-in: count, the calling thread's current device, contexts, faults,
 * peer access and device-wide synchronisation.
 *
 * aclrtSetDevice (aclrtSetDevice.md) makes a device current for the calling thread and counts
 * one reference to the device's default context, created with its default stream on the first
 * one; every thread that sets the device shares that context.  aclrtResetDevice
 * (aclrtResetDevice.md) waits for the device's work, clears a fault of the device (the
 * stand-in's sticky faults, standin.h) and drops one reference; the last one releases the
 * context: its streams (the default one included), its events, its model runtime instances
 * (captures in progress end without a model) and its memory.  A thread whose current device
 * lost its context that way has no current device any more (ACL_ERROR_RT_CONTEXT_NULL), as
 * after aclFinalize.
 *
 * aclrtSynchronizeDevice would wait for the captured work of a capturing stream of the device
 * (acl_mdl.h): it fails with ACL_ERROR_RT_STREAM_CAPTURED and invalidates the device's captures.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

static const char k_soc_name[] = "Ascend910B-standin";

/* The calling thread's current device and the context it was set in. */
static _Thread_local int32_t t_device = -1;
static _Thread_local uint64_t t_context = 0;

aclError sd_check_device(int32_t device, const char *call) {
  if (device < 0 || device >= g_rt.config.device_count) {
    return sd_error(ACL_ERROR_RT_INVALID_DEVICEID, "%s: device id %d is out of range (%d devices)",
                    call, (int)device, (int)g_rt.config.device_count);
  }
  return ACL_SUCCESS;
}

aclError sd_current_device(const char *call, int32_t *device) {
  if (t_device >= 0 && t_context != 0 &&
      atomic_load_explicit(&g_rt.devices[t_device].context, memory_order_acquire) == t_context) {
    *device = t_device;
    return ACL_SUCCESS;
  }
  if (t_device >= 0) {
    return sd_error(ACL_ERROR_RT_CONTEXT_NULL,
                    "%s: the calling thread's device %d was reset (its context is gone): call "
                    "aclrtSetDevice again",
                    call, (int)t_device);
  }
  return sd_error(ACL_ERROR_RT_CONTEXT_NULL,
                  "%s: the calling thread has no current device: call aclrtSetDevice first", call);
}

aclError aclrtGetDeviceCount(uint32_t *count) {
  if (count == NULL) return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is NULL");
  /* Works before aclInit, as on CANN (torch_npu counts devices without initialising). */
  if (atomic_load_explicit(&g_rt.initialized, memory_order_acquire)) {
    *count = (uint32_t)g_rt.config.device_count;
    return ACL_SUCCESS;
  }
  sd_config config;
  aclError err = sd_read_config(&config, "aclrtGetDeviceCount");
  if (err == ACL_SUCCESS) *count = (uint32_t)config.device_count;
  return err;
}

aclError aclrtSetDevice(int32_t deviceId) {
  aclError err = sd_check_init("aclrtSetDevice");
  if (err == ACL_SUCCESS) err = sd_check_device(deviceId, "aclrtSetDevice");
  if (err != ACL_SUCCESS) return err;
  sd_device *device = &g_rt.devices[deviceId];
  pthread_mutex_lock(&device->mutex);
  uint64_t context = atomic_load(&device->context);
  if (context == 0) {
    pthread_mutex_lock(&g_rt.handles_mutex);
    context = ++g_rt.next_context;
    pthread_mutex_unlock(&g_rt.handles_mutex);
    sd_stream *stream = NULL;
    err = sd_stream_new(deviceId, context, true, &stream);
    if (err != ACL_SUCCESS) {
      pthread_mutex_unlock(&device->mutex);
      return err;
    }
    device->streams = stream;
    device->default_stream = stream;
    device->stream_count = 1;
    device->sync_event_count = 0;
    device->events = NULL;
    atomic_store_explicit(&device->context, context, memory_order_release);
  }
  device->set_count++;
  pthread_mutex_unlock(&device->mutex);
  t_device = deviceId;
  t_context = context;
  return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t *deviceId) {
  aclError err = sd_check_init("aclrtGetDevice");
  if (err != ACL_SUCCESS) return err;
  if (deviceId == NULL)
    return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is NULL");
  return sd_current_device("aclrtGetDevice", deviceId);
}

/* Releases the context of `device` (set count zero): its streams (after their work), events and
 * memory.  The caller holds the device's mutex, which this releases once the context is gone,
 * so that an aclrtSetDevice racing with the release creates a fresh context after it. */
static void release_context(sd_device *device) {
  for (sd_stream *s = device->streams; s != NULL; s = s->next) sd_capture_abandon(s);
  sd_stream *streams = device->streams;
  sd_event *events = device->events;
  device->streams = NULL;
  device->default_stream = NULL;
  device->events = NULL;
  device->stream_count = 0;
  device->sync_event_count = 0;
  int32_t index = (int32_t)(device - g_rt.devices);
  for (int d = 0; d < SD_MAX_DEVICES; d++) device->peer[d] = false;
  atomic_store_explicit(&device->context, 0, memory_order_release);
  /* Workers never take a device's mutex: shutting the streams down under it cannot deadlock. */
  while (streams != NULL) {
    sd_stream *next = streams->next;
    sd_stream_shutdown(streams);
    streams = next;
  }
  while (events != NULL) {
    sd_event *next = events->next;
    sd_handle_remove(events);
    sd_event_free(events);
    events = next;
  }
  sd_models_release(device); /* after the streams: no run of a model is left */
  sd_arena_clear(&device->arena);
  pthread_mutex_unlock(&device->mutex);
  /* Access other devices granted to this one ends with its context (one lock at a time). */
  for (int d = 0; d < SD_MAX_DEVICES; d++) {
    if (d == index) continue;
    pthread_mutex_lock(&g_rt.devices[d].mutex);
    g_rt.devices[d].peer[index] = false;
    pthread_mutex_unlock(&g_rt.devices[d].mutex);
  }
}

static void clear_fault(sd_device *device) {
  pthread_mutex_lock(&device->fault_mutex);
  atomic_store(&device->fault, 0);
  device->fault_message[0] = '\0';
  pthread_mutex_unlock(&device->fault_mutex);
}

aclError aclrtResetDevice(int32_t deviceId) {
  aclError err = sd_check_init("aclrtResetDevice");
  if (err == ACL_SUCCESS) err = sd_check_device(deviceId, "aclrtResetDevice");
  if (err != ACL_SUCCESS) return err;
  sd_device *device = &g_rt.devices[deviceId];
  pthread_mutex_lock(&device->mutex);
  bool set = device->set_count > 0;
  pthread_mutex_unlock(&device->mutex);
  if (!set) {
    return sd_error(ACL_ERROR_RT_CONTEXT_NULL,
                    "aclrtResetDevice: device %d has no context: every aclrtSetDevice was matched "
                    "by an aclrtResetDevice already",
                    (int)deviceId);
  }
  sd_wait_device(deviceId);
  clear_fault(device);
  pthread_mutex_lock(&device->mutex);
  if (device->set_count > 0 && --device->set_count == 0) {
    release_context(device); /* unlocks */
  } else {
    pthread_mutex_unlock(&device->mutex);
  }
  return ACL_SUCCESS;
}

void sd_devices_finalize(void) {
  for (int d = 0; d < SD_MAX_DEVICES; d++) {
    sd_device *device = &g_rt.devices[d];
    pthread_mutex_lock(&device->mutex);
    device->set_count = 0;
    if (atomic_load(&device->context) != 0) {
      release_context(device); /* unlocks */
    } else {
      pthread_mutex_unlock(&device->mutex);
    }
    sd_arena_destroy(&device->arena);
    clear_fault(device);
  }
}

void sd_wait_device(int32_t index) {
  sd_device *device = &g_rt.devices[index];
  pthread_mutex_lock(&device->mutex);
  size_t count = 0;
  for (sd_stream *s = device->streams; s != NULL; s = s->next) count++;
  sd_stream **streams = count ? malloc(count * sizeof *streams) : NULL;
  uint64_t *targets = count ? malloc(count * sizeof *targets) : NULL;
  if (count != 0 && (streams == NULL || targets == NULL)) {
    /* Out of host memory: wait holding the lock instead (blocks stream creation meanwhile). */
    for (sd_stream *s = device->streams; s != NULL; s = s->next) {
      sd_stream_wait(s, sd_stream_enqueued(s));
    }
    pthread_mutex_unlock(&device->mutex);
    free(streams);
    free(targets);
    return;
  }
  size_t i = 0;
  for (sd_stream *s = device->streams; s != NULL; s = s->next, i++) {
    atomic_fetch_add(&s->refs, 1);
    streams[i] = s;
    targets[i] = sd_stream_enqueued(s);
  }
  pthread_mutex_unlock(&device->mutex);
  for (i = 0; i < count; i++) {
    sd_stream_wait(streams[i], targets[i]);
    sd_stream_release(streams[i]);
  }
  free(streams);
  free(targets);
}

aclError aclrtSynchronizeDevice(void) {
  int32_t device = -1;
  aclError err = sd_check_init("aclrtSynchronizeDevice");
  if (err == ACL_SUCCESS) err = sd_current_device("aclrtSynchronizeDevice", &device);
  if (err == ACL_SUCCESS) err = sd_capture_refuse_device(device, "aclrtSynchronizeDevice");
  if (err != ACL_SUCCESS) return err;
  sd_wait_device(device);
  return sd_check_fault(device, "aclrtSynchronizeDevice");
}

const char *aclrtGetSocName(void) {
  if (sd_check_init("aclrtGetSocName") != ACL_SUCCESS) return NULL;
  return k_soc_name;
}

/* ---- faults ---- */

void sd_fault_device(int32_t index, aclError code, const char *message) {
  sd_device *device = &g_rt.devices[index];
  pthread_mutex_lock(&device->fault_mutex);
  if (atomic_load(&device->fault) == 0) {
    snprintf(device->fault_message, sizeof device->fault_message, "%s", message);
    atomic_store_explicit(&device->fault, code, memory_order_release);
  }
  pthread_mutex_unlock(&device->fault_mutex);
}

aclError sd_check_fault(int32_t index, const char *call) {
  sd_device *device = &g_rt.devices[index];
  aclError code = atomic_load_explicit(&device->fault, memory_order_acquire);
  if (code == 0) return ACL_SUCCESS;
  pthread_mutex_lock(&device->fault_mutex);
  sd_error(code, "%s: device %d is faulted: %s (aclrtResetDevice clears the fault)", call,
           (int)index, device->fault_message);
  pthread_mutex_unlock(&device->fault_mutex);
  return code;
}

/* ---- peer access (aclrtDeviceCanAccessPeer.md, aclrtDeviceEnablePeerAccess.md) ---- */

aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId, int32_t peerDeviceId) {
  aclError err = sd_check_init("aclrtDeviceCanAccessPeer");
  if (err == ACL_SUCCESS) err = sd_check_device(deviceId, "aclrtDeviceCanAccessPeer");
  if (err == ACL_SUCCESS) err = sd_check_device(peerDeviceId, "aclrtDeviceCanAccessPeer");
  if (err != ACL_SUCCESS) return err;
  if (canAccessPeer == NULL) {
    return sd_error(ACL_ERROR_INVALID_PARAM, "aclrtDeviceCanAccessPeer: canAccessPeer is NULL");
  }
  if (deviceId == peerDeviceId) {
    return sd_error(ACL_ERROR_INVALID_PARAM,
                    "aclrtDeviceCanAccessPeer: deviceId and peerDeviceId are both %d",
                    (int)deviceId);
  }
  *canAccessPeer = g_rt.config.peer ? 1 : 0;
  return ACL_SUCCESS;
}

aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags) {
  int32_t current = -1;
  aclError err = sd_check_init("aclrtDeviceEnablePeerAccess");
  if (err == ACL_SUCCESS) err = sd_current_device("aclrtDeviceEnablePeerAccess", &current);
  if (err == ACL_SUCCESS) err = sd_check_device(peerDeviceId, "aclrtDeviceEnablePeerAccess");
  if (err != ACL_SUCCESS) return err;
  if (flags != 0) {
    return sd_error(ACL_ERROR_INVALID_PARAM,
                    "aclrtDeviceEnablePeerAccess: flags is 0x%x; it is reserved and must be 0",
                    (unsigned)flags);
  }
  if (peerDeviceId == current) {
    return sd_error(ACL_ERROR_INVALID_PARAM,
                    "aclrtDeviceEnablePeerAccess: device %d is the current device", (int)current);
  }
  if (!g_rt.config.peer) {
    return sd_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                    "aclrtDeviceEnablePeerAccess: devices %d and %d cannot access each other "
                    "(TB_ASCEND_STANDIN_PEER=0)",
                    (int)current, (int)peerDeviceId);
  }
  sd_device *device = &g_rt.devices[current];
  pthread_mutex_lock(&device->mutex);
  device->peer[peerDeviceId] = true;
  pthread_mutex_unlock(&device->mutex);
  return ACL_SUCCESS;
}

bool sd_peer_allowed(int32_t from, int32_t to) {
  if (from == to) return true;
  sd_device *device = &g_rt.devices[from];
  pthread_mutex_lock(&device->mutex);
  bool allowed = device->peer[to];
  pthread_mutex_unlock(&device->mutex);
  return allowed;
}

/* ---- where an address lives ---- */

int32_t sd_locate(const void *ptr, size_t bytes, void **shadow, bool *inside_arena) {
  *shadow = NULL;
  *inside_arena = false;
  if (!atomic_load_explicit(&g_rt.initialized, memory_order_acquire)) return -1;
  for (int32_t d = 0; d < g_rt.config.device_count; d++) {
    sd_arena *arena = &g_rt.devices[d].arena;
    void *found = sd_arena_translate(arena, ptr, bytes);
    if (found != NULL) {
      *shadow = found;
      *inside_arena = true;
      return d;
    }
    if (sd_arena_contains(arena, ptr)) {
      *inside_arena = true;
      return -1;
    }
  }
  return -1;
}
