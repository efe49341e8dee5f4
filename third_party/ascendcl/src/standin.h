/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The stand-in's internal interface between its runtime (libascendcl: devices, memory,
 * streams, events) and its operator library (libopapi: the aclnn operators).  Not part of
 * AscendCL: nothing outside third_party/ascendcl includes this header, and the npu adapter
 * never calls these functions (a test checks that libtb_vendor_npu.so imports only documented
 * AscendCL names).  In CANN the same split exists between the runtime and the operator
 * packages; these few functions are the stand-in's version of it.
 */
#ifndef TB_STANDIN_STANDIN_H_
#define TB_STANDIN_STANDIN_H_

#include <stdarg.h>
#include <stddef.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STANDIN_API __attribute__((visibility("default")))

/** Work run by a stream's worker thread. */
typedef void (*standin_task_fn)(void *arg);

/**
 * Enqueues `run(arg)` on @p stream (NULL: the default stream of the calling thread's current
 * device), after everything enqueued on it before.  `release(arg)` (may be NULL) runs once the
 * task is finished or dropped -- a task is dropped, without running, when its device has
 * faulted.  @p name (a static string, typically the aclnn function name) names the work in
 * fault messages.  On failure nothing is enqueued, `release` is not called (the caller still
 * owns @p arg) and the calling thread's recent error message says why.
 * @p stream must belong to the calling thread's current device, as AscendCL requires of
 * every enqueueing call.
 * Returns ACL_SUCCESS, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL (no current device),
 * ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_STREAM_CONTEXT (a stream of another device),
 * ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, or the device's fault code when it has faulted.
 */
STANDIN_API aclError standin_launch(aclrtStream stream, const char *name, standin_task_fn run,
                                    void (*release)(void *arg), void *arg);

/**
 * Host address of the @p bytes bytes of device memory at @p device_ptr, for tasks running on
 * a worker thread (device memory is not host-accessible otherwise); NULL when the range is not
 * inside one live allocation of a device.  @p bytes may be 0 (then @p device_ptr must lie in,
 * or one past the end of, a live allocation).
 */
STANDIN_API void *standin_device_to_host(const void *device_ptr, size_t bytes);

/**
 * Whether [@p device_ptr, @p device_ptr + @p bytes) lies inside one live device allocation
 * (any thread; used by operators' phase one to validate addresses without touching them).
 */
STANDIN_API int standin_is_device_range(const void *device_ptr, size_t bytes);

/**
 * Called by a running task whose work failed (an index out of range, an address outside
 * device memory): faults the task's device with ACL_ERROR_RT_AICORE_EXCEPTION and the message
 * "<task name>: <formatted message>".  The fault is sticky until aclrtResetDevice: every later
 * synchronisation of the device's streams and events returns that code (with the message in
 * aclGetRecentErrMsg), and every later enqueue and copy on the device fails with it.
 */
STANDIN_API void standin_task_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

/** Sets the calling thread's aclGetRecentErrMsg text. */
STANDIN_API void standin_set_error(const char *format, ...) __attribute__((format(printf, 1, 2)));
STANDIN_API void standin_set_verror(const char *format, va_list args);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_STANDIN_H_ */
