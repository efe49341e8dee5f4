/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The kit's runtime: the thread-local error message, the runtime object (its devices, faults
 * and lifetime), and the device-level slots.  Global state: t_error only, thread-local by the
 * last-error contract.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#define RUNTIME_MAGIC 0x74626b72u /* "tbkr" */
#define MAX_DEVICES 1024

static _Thread_local char t_error[1024];

tb_status tbk_fail(tb_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(t_error, sizeof t_error, format, args);
  va_end(args);
  return status;
}

tb_status tbk_fail_as(const char *name, tb_status status, const char *format, ...) {
  char message[sizeof t_error];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  return tbk_fail(status, "%s: %s", name, message);
}

const char *tbk_last_error(tb_context ctx) {
  (void)ctx;
  return t_error;
}

uint64_t tbk_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void runtime_free(tbk_runtime *rt) {
  if (rt->streams != NULL) {
    for (int32_t d = 0; d < rt->config.device_count; d++) free(rt->streams[d].streams);
  }
  free(rt->streams);
  free(rt->faulted);
  free(rt->fault_message);
  pthread_mutex_destroy(&rt->streams_mutex);
  pthread_mutex_destroy(&rt->faults_mutex);
  rt->magic = 0;
  free(rt);
}

tb_status tbk_runtime_create(const tbk_runtime_config *config, tbk_runtime **out) {
  if (config == NULL || out == NULL || config->struct_size < sizeof(tbk_runtime_config) ||
      config->name == NULL) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "tbk_runtime_create: config or runtime is NULL, or config has no name or "
                    "a struct_size below sizeof(tbk_runtime_config)");
  }
  if (config->device_count < 0 || config->device_count > MAX_DEVICES || config->spin_us < 0 ||
      config->greatest_priority > config->least_priority) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "%s: tbk_runtime_create: device_count %d not in [0, %d], spin_us %d "
                    "negative, or priorities (least %d, greatest %d) with greatest > least",
                    config->name, (int)config->device_count, MAX_DEVICES, (int)config->spin_us,
                    (int)config->least_priority, (int)config->greatest_priority);
  }
  tbk_runtime *rt = calloc(1, sizeof *rt);
  size_t devices = config->device_count > 0 ? (size_t)config->device_count : 1;
  if (rt == NULL)
    return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "%s: init: out of host memory", config->name);
  rt->magic = RUNTIME_MAGIC;
  rt->config = *config;
  snprintf(rt->name, sizeof rt->name, "%s", config->name);
  rt->config.name = rt->name;
  atomic_init(&rt->refs, 1);
  atomic_init(&rt->finalized, false);
  atomic_init(&rt->active_captures, 0);
  rt->captures = NULL;
  pthread_mutex_init(&rt->streams_mutex, NULL);
  pthread_mutex_init(&rt->faults_mutex, NULL);
  rt->streams = calloc(devices, sizeof *rt->streams);
  rt->faulted = calloc(devices, sizeof *rt->faulted);
  rt->fault_message = calloc(devices, sizeof *rt->fault_message);
  if (rt->streams == NULL || rt->faulted == NULL || rt->fault_message == NULL) {
    runtime_free(rt);
    return tbk_fail(TB_ERROR_OUT_OF_MEMORY, "%s: init: out of host memory", config->name);
  }
  for (size_t d = 0; d < devices; d++) atomic_init(&rt->faulted[d], false);
  *out = rt;
  return TB_OK;
}

void tbk_runtime_release(tbk_runtime *rt) {
  if (atomic_fetch_sub(&rt->refs, 1) != 1) return;
  void (*destroy)(void *) = rt->config.destroy;
  void *user = rt->config.user;
  runtime_free(rt);
  if (destroy != NULL) destroy(user);
}

void tbk_runtime_finalize(tbk_runtime *rt) {
  if (rt == NULL || rt->magic != RUNTIME_MAGIC || atomic_exchange(&rt->finalized, true)) return;
  for (int32_t d = 0; d < rt->config.device_count; d++) tbk_runtime_wait_device(rt, d, "finalize");
  tbk_runtime_release(rt);
}

void *tbk_runtime_user(const tbk_runtime *rt) { return rt->config.user; }

int32_t tbk_runtime_device_count(const tbk_runtime *rt) { return rt->config.device_count; }

tb_status tbk_check_context(tb_context ctx, const char *call) {
  const tbk_runtime *rt = tbk_runtime_of(ctx);
  if (rt == NULL || rt->magic != RUNTIME_MAGIC) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "%s: %p is not a context whose first member is a tb_vendor_kit runtime", call,
                    (void *)ctx);
  }
  if (atomic_load_explicit(&rt->finalized, memory_order_relaxed)) {
    return tbk_fail(TB_ERROR_UNAVAILABLE, "%s: %s: the context was finalized", rt->name, call);
  }
  return TB_OK;
}

tb_status tbk_check_device(tb_context ctx, int32_t device, const char *call) {
  tb_status status = tbk_check_context(ctx, call);
  if (status != TB_OK) return status;
  const tbk_runtime *rt = tbk_runtime_of(ctx);
  if (device < 0 || device >= rt->config.device_count) {
    return tbk_fail(TB_ERROR_INVALID_DEVICE,
                    "%s: %s: device index %d is out of range (device count %d)", rt->name, call,
                    (int)device, (int)rt->config.device_count);
  }
  return TB_OK;
}

/* ---- device faults (vendor.h, "Device faults") ---- */

void tbk_fault(tbk_runtime *rt, int32_t device, const char *message) {
  pthread_mutex_lock(&rt->faults_mutex);
  if (!atomic_load(&rt->faulted[device])) {
    snprintf(rt->fault_message[device], sizeof rt->fault_message[device], "%s", message);
    atomic_store(&rt->faulted[device], true);
  }
  pthread_mutex_unlock(&rt->faults_mutex);
}

bool tbk_is_faulted(const tbk_runtime *rt, int32_t device) {
  return atomic_load_explicit(&rt->faulted[device], memory_order_acquire);
}

tb_status tbk_check_fault(tb_context ctx, int32_t device, const char *call) {
  return tbk_runtime_check_fault(tbk_runtime_of(ctx), device, call);
}

tb_status tbk_runtime_check_fault(tbk_runtime *rt, int32_t device, const char *call) {
  if (!tbk_is_faulted(rt, device)) return TB_OK;
  pthread_mutex_lock(&rt->faults_mutex);
  tb_status status = tbk_fail(TB_ERROR_DEVICE_FAULT, "%s: %s: device %d is faulted: %s", rt->name,
                              call, (int)device, rt->fault_message[device]);
  pthread_mutex_unlock(&rt->faults_mutex);
  return status;
}

/* ---- the device slots ---- */

tb_status tbk_device_synchronize(tb_context ctx, int32_t device) {
  tb_status status = tbk_check_device(ctx, device, "device synchronize");
  if (status == TB_OK) {
    status = tbk_runtime_check_no_capture(tbk_runtime_of(ctx), device, "device synchronize");
  }
  if (status == TB_OK) status = tbk_wait_device(ctx, device, "device synchronize");
  return status != TB_OK ? status : tbk_check_fault(ctx, device, "device synchronize");
}

tb_status tbk_device_reset(tb_context ctx, int32_t device) {
  tb_status status = tbk_check_device(ctx, device, "device reset");
  if (status == TB_OK) status = tbk_wait_device(ctx, device, "device reset");
  if (status != TB_OK) return status;
  tbk_runtime *rt = tbk_runtime_of(ctx);
  pthread_mutex_lock(&rt->faults_mutex);
  atomic_store(&rt->faulted[device], false);
  rt->fault_message[device][0] = '\0';
  pthread_mutex_unlock(&rt->faults_mutex);
  return TB_OK;
}
