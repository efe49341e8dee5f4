/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's error model: AscendCL's return codes (aclError.md: table 1, and table 2, the runtime's
 * codes passed through; the aclnn codes of the operator API) mapped to tb_status, the message
 * every failure leaves in tb_vendor::last_error, and the sticky fault record.
 *
 * Messages read "<call> failed on npu:<device> with <NAME> (<code>): <aclGetRecentErrMsg>".
 *
 * Faults (vendor.h, "Device faults").  The codes of asynchronous device failures -- AI Core,
 * vector core and AI CPU exceptions, traps and timeouts, DMA and memory errors -- mean that work
 * already enqueued failed.  The first one npu_check sees for a device is recorded here with
 * its message, and from then on every call of the contract's list (npu_enter and the checks
 * of stream.c, event.c and memory.c) returns TB_ERROR_DEVICE_FAULT with that message, until
 * tb_device_api::reset clears the record.  The record is process-wide, like AscendCL's
 * devices: a fault that one context observed is one the runtime reports to every other.  The
 * runtime keeps its own fault too (the stand-in's stays until aclrtResetDevice); the record
 * makes the contract hold whatever a runtime does after a failure.
 */
#define _GNU_SOURCE

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <aclnn/aclnn_base.h>

#include "npu_runtime.h"

/* aclnn return codes ("aclnn return codes"); defined here when the toolkit's aclnn_base.h does
 * not (CANN keeps them in aclnn/opdev/op_errno.h, which applications do not include). */
#ifndef ACLNN_ERR_PARAM_NULLPTR
#define ACLNN_ERR_PARAM_NULLPTR 161001
#endif
#ifndef ACLNN_ERR_PARAM_INVALID
#define ACLNN_ERR_PARAM_INVALID 161002
#endif
#ifndef ACLNN_ERR_RUNTIME_ERROR
#define ACLNN_ERR_RUNTIME_ERROR 361001
#endif
#ifndef ACLNN_ERR_INNER
#define ACLNN_ERR_INNER 561000
#endif

#define NPU_MESSAGE_SIZE 2048

static _Thread_local char t_error[NPU_MESSAGE_SIZE];

tb_status npu_fail(tb_context ctx, tb_status status, const char *format, ...) {
  (void)ctx; /* per thread, whichever context failed */
  va_list args;
  va_start(args, format);
  vsnprintf(t_error, sizeof t_error, format, args);
  va_end(args);
  return status;
}

const char *npu_last_error(tb_context ctx) {
  (void)ctx;
  return t_error;
}

/* ---- the code table ---- */

typedef struct code_info {
  int code;
  const char *name;
  tb_status status;
  bool fault; /* an asynchronous device failure: faults the device */
} code_info;

#define CODE(name, status) \
  { name, #name, status, false }
#define FAULT(name) \
  { name, #name, TB_ERROR_DEVICE_FAULT, true }

/* Looks `err` up.  The table is built per call (AscendCL's codes are `static const int`
 * objects, not constant expressions C accepts in a static initializer); only failures pay. */
static code_info lookup(int err) {
  const code_info table[] = {
      CODE(ACL_SUCCESS, TB_OK),
      /* 1xxxxx: the caller's environment or logic */
      CODE(ACL_ERROR_INVALID_PARAM, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_UNINITIALIZE, TB_ERROR_UNAVAILABLE),
      CODE(ACL_ERROR_REPEAT_INITIALIZE, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_INVALID_FILE, TB_ERROR_UNAVAILABLE),
      CODE(ACL_ERROR_UNSUPPORTED_DATA_TYPE, TB_ERROR_NOT_SUPPORTED),
      CODE(ACL_ERROR_FORMAT_NOT_MATCH, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_REPEAT_FINALIZE, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_PARAM_INVALID, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_RT_INVALID_DEVICEID, TB_ERROR_INVALID_DEVICE),
      CODE(ACL_ERROR_RT_CONTEXT_NULL, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_STREAM_CONTEXT, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_RT_MODEL_CONTEXT, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_RT_ADDR_UNALIGNED, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_RT_INVALID_MEMORY_TYPE, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_RT_INVALID_HANDLE, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_RT_WAIT_TIMEOUT, TB_ERROR_INTERNAL),
      FAULT(ACL_ERROR_RT_TASK_TIMEOUT),
      /* stream capture (acl_mdl.h): a call the capture refuses (vendor.h, "Graphs"), or a
       * capture call out of place */
      CODE(ACL_ERROR_RT_CAPTURE_DEPENDENCY, TB_ERROR_NOT_SUPPORTED),
      CODE(ACL_ERROR_RT_STREAM_UNJOINED, TB_ERROR_NOT_SUPPORTED),
      CODE(ACL_ERROR_RT_STREAM_CAPTURED, TB_ERROR_NOT_SUPPORTED),
      CODE(ACL_ERROR_RT_EVENT_CAPTURED, TB_ERROR_NOT_SUPPORTED),
      CODE(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, TB_ERROR_NOT_SUPPORTED),
      CODE(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, TB_ERROR_NOT_SUPPORTED),
      CODE(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, TB_ERROR_NOT_SUPPORTED),
      CODE(ACL_ERROR_RT_MODEL_CAPTURED, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_RT_STREAM_NOT_CAPTURED, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_RT_MODEL_RUNNING, TB_ERROR_INTERNAL),
      /* aclnn: arguments */
      CODE(ACLNN_ERR_PARAM_NULLPTR, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACLNN_ERR_PARAM_INVALID, TB_ERROR_INVALID_ARGUMENT),
      /* 2xxxxx: resources, or what the hardware does not support */
      CODE(ACL_ERROR_BAD_ALLOC, TB_ERROR_OUT_OF_MEMORY),
      CODE(ACL_ERROR_API_NOT_SUPPORT, TB_ERROR_NOT_SUPPORTED),
      CODE(ACL_ERROR_INVALID_DEVICE, TB_ERROR_INVALID_DEVICE),
      CODE(ACL_ERROR_MEMORY_ADDRESS_UNALIGNED, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_RESOURCE_NOT_MATCH, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_INVALID_RESOURCE_HANDLE, TB_ERROR_INVALID_ARGUMENT),
      CODE(ACL_ERROR_FEATURE_UNSUPPORTED, TB_ERROR_NOT_SUPPORTED),
      CODE(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, TB_ERROR_NOT_SUPPORTED),
      CODE(ACL_ERROR_RT_MEMORY_ALLOCATION, TB_ERROR_OUT_OF_MEMORY),
      CODE(ACL_ERROR_RT_MEMORY_FREE, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_NO_DEVICE, TB_ERROR_UNAVAILABLE),
      CODE(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_NO_EVENT_RESOURCE, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_NO_STREAM_RESOURCE, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_DEVIDE_OOM, TB_ERROR_OUT_OF_MEMORY),
      /* 3xxxxx: service errors */
      CODE(ACL_ERROR_STORAGE_OVER_LIMIT, TB_ERROR_OUT_OF_MEMORY),
      CODE(ACLNN_ERR_RUNTIME_ERROR, TB_ERROR_INTERNAL),
      /* 5xxxxx: internal errors, and the device's own failures */
      CODE(ACL_ERROR_INTERNAL_ERROR, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_FAILURE, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_GE_FAILURE, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_FAILURE, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_DRV_FAILURE, TB_ERROR_INTERNAL),
      CODE(ACLNN_ERR_INNER, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_INTERNAL_ERROR, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_TS_ERROR, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_STREAM_NOT_COMPLETE, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_EVENT_NOT_COMPLETE, TB_ERROR_NOT_READY),
      CODE(ACL_ERROR_RT_DEV_SETUP_ERROR, TB_ERROR_UNAVAILABLE),
      CODE(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, TB_ERROR_INTERNAL),
      CODE(ACL_ERROR_RT_DRV_INTERNAL_ERROR, TB_ERROR_INTERNAL),
      FAULT(ACL_ERROR_RT_SYS_DMA),
      FAULT(ACL_ERROR_RT_AICORE_TIMEOUT),
      FAULT(ACL_ERROR_RT_AICORE_EXCEPTION),
      FAULT(ACL_ERROR_RT_AICORE_TRAP_EXCEPTION),
      FAULT(ACL_ERROR_RT_AICPU_TIMEOUT),
      FAULT(ACL_ERROR_RT_AICPU_EXCEPTION),
      FAULT(ACL_ERROR_RT_VECTOR_CORE_TIMEOUT),
      FAULT(ACL_ERROR_RT_VECTOR_CORE_EXCEPTION),
      FAULT(ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION),
      FAULT(ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW),
      FAULT(ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW),
      FAULT(ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW),
      FAULT(ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW),
      FAULT(ACL_ERROR_RT_FFTS_PLUS_TIMEOUT),
      FAULT(ACL_ERROR_RT_FFTS_PLUS_EXCEPTION),
      FAULT(ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION),
      FAULT(ACL_ERROR_RT_DEVICE_MEM_ERROR),
      FAULT(ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR),
      FAULT(ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR),
      FAULT(ACL_ERROR_RT_LINK_ERROR),
      FAULT(ACL_ERROR_RT_SUSPECT_REMOTE_ERROR),
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (table[i].code == err) return table[i];
  }
  /* aclError.md, rule 5: unrecognised errors are internal errors. */
  return (code_info){err, "an unknown code", TB_ERROR_INTERNAL, false};
}

bool npu_is_fault_code(int err) { return err != ACL_SUCCESS && lookup(err).fault; }

bool npu_is_capture_code(int err) {
  return err == ACL_ERROR_RT_CAPTURE_DEPENDENCY || err == ACL_ERROR_RT_STREAM_UNJOINED ||
         err == ACL_ERROR_RT_STREAM_CAPTURED || err == ACL_ERROR_RT_EVENT_CAPTURED ||
         err == ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT ||
         err == ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT ||
         err == ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED;
}

void npu_drop_acl_messages(void) { (void)aclGetRecentErrMsg(); }

/* ---- the fault record ---- */

static pthread_mutex_t g_fault_mutex = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool g_faulted[NPU_MAX_DEVICES];
static char g_fault_message[NPU_MAX_DEVICES][NPU_MESSAGE_SIZE];
static char g_expected[NPU_MAX_DEVICES][512]; /* npu_expect_fault's message, "" when none */

static bool valid_index(int32_t device) { return device >= 0 && device < NPU_MAX_DEVICES; }

bool npu_is_faulted(int32_t device) {
  return valid_index(device) && atomic_load_explicit(&g_faulted[device], memory_order_acquire);
}

tb_status npu_fault_check(int32_t device, const char *call) {
  if (!npu_is_faulted(device)) return TB_OK;
  pthread_mutex_lock(&g_fault_mutex);
  tb_status status = npu_fail(
      NULL, TB_ERROR_DEVICE_FAULT, "%s%snpu:%d is faulted (resetting the device clears it): %s",
      call != NULL ? call : "", call != NULL ? ": " : "", (int)device, g_fault_message[device]);
  pthread_mutex_unlock(&g_fault_mutex);
  return status;
}

void npu_fault_clear(int32_t device) {
  if (!valid_index(device)) return;
  pthread_mutex_lock(&g_fault_mutex);
  atomic_store(&g_faulted[device], false);
  g_fault_message[device][0] = '\0';
  g_expected[device][0] = '\0';
  pthread_mutex_unlock(&g_fault_mutex);
}

void npu_faults_reset(void) {
  for (int32_t d = 0; d < NPU_MAX_DEVICES; d++) npu_fault_clear(d);
}

void npu_expect_fault(int32_t device, const char *message) {
  if (!valid_index(device) || message == NULL) return;
  pthread_mutex_lock(&g_fault_mutex);
  snprintf(g_expected[device], sizeof g_expected[device], "%s", message);
  pthread_mutex_unlock(&g_fault_mutex);
}

/* ---- npu_check ---- */

/* sdk guide: errors */
tb_status npu_check(tb_context ctx, int32_t device, int err, const char *call) {
  if (err == ACL_SUCCESS) return TB_OK;
  code_info info = lookup(err);
  const char *recent = aclGetRecentErrMsg();
  if (info.status == TB_ERROR_NOT_READY) return TB_ERROR_NOT_READY; /* not a failure */
  char text[NPU_MESSAGE_SIZE / 2];
  snprintf(text, sizeof text, "%s", recent != NULL && *recent != '\0' ? recent : "no message");
  for (char *c = text; *c != '\0'; c++) {
    if (*c == '\n') *c = ';'; /* several messages, newest first: one line */
  }
  char where[32] = "";
  if (device >= 0) snprintf(where, sizeof where, " on npu:%d", (int)device);
  char message[NPU_MESSAGE_SIZE];
  snprintf(message, sizeof message, "%s failed%s with %s (%d): %s", call, where, info.name, err,
           text);
  if (!info.fault || !valid_index(device)) return npu_fail(ctx, info.status, "%s", message);
  /* An asynchronous failure: record it (the first one stays) and report the record. */
  pthread_mutex_lock(&g_fault_mutex);
  if (!atomic_load(&g_faulted[device])) {
    if (g_expected[device][0] != '\0') {
      snprintf(g_fault_message[device], sizeof g_fault_message[device],
               "%.500s (in inject_fault): %.1500s", g_expected[device], message);
      g_expected[device][0] = '\0';
    } else { /* named by the ATen operator whose kernel enqueued the failing work */
      const char *work = npu_fault_work(device, message);
      snprintf(g_fault_message[device], sizeof g_fault_message[device], "%.200s%s%.1800s",
               work != NULL ? work : "", work != NULL ? ": " : "", message);
    }
    atomic_store_explicit(&g_faulted[device], true, memory_order_release);
  }
  tb_status status = npu_fail(ctx, TB_ERROR_DEVICE_FAULT, "%s", g_fault_message[device]);
  pthread_mutex_unlock(&g_fault_mutex);
  return status;
}
/* sdk guide: end */
