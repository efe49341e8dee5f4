/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * tb_stream_api::inject_fault with documented AscendCL calls only: the device faults for real,
 * the way a kernel with a bad index faults it.  The work enqueued is an aclnnIndexSelect of a
 * one-element tensor at index 1, out of range: the operator finds it when the stream reaches
 * it, and the runtime reports the fault (an AI Core exception) from then on.  npu_expect_fault
 * makes the caller's message the fault record's.
 *
 * The operands live in one small device buffer per device, allocated on first use and kept for
 * the process (the adapter's reset keeps allocations): the index (INT64 1, written on the
 * stream before the operator), self and out (one FLOAT element; out is never written: the
 * operator faults first).  The index is written with two memsets (eight zero bytes, then a low
 * byte of 1: the devices are little-endian) rather than copied from host memory, so that a
 * stream capturing a graph records inject_fault like any work (an asynchronous copy from host
 * memory aclrtMallocHost did not allocate is synchronous, which a capture refuses).
 */
#include <aclnnop/aclnn_index_select.h>
#include <pthread.h>
#include <stdint.h>

#include "common.h"

#define FAULT_MAX_DEVICES 64
enum { INDEX_OFFSET = 0, VALUE_OFFSET = 8, BUFFER_BYTES = 64 };

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static void *g_buffer[FAULT_MAX_DEVICES];

/* Device `device`'s buffer (current on the calling thread), allocated on first use. */
static tb_status device_buffer(tb_context ctx, int32_t device, char **buffer) {
  pthread_mutex_lock(&g_mutex);
  aclError err = ACL_SUCCESS;
  if (g_buffer[device] == NULL) {
    err = aclrtMalloc(&g_buffer[device], BUFFER_BYTES, ACL_MEM_MALLOC_HUGE_FIRST);
    if (err != ACL_SUCCESS) g_buffer[device] = NULL;
  }
  *buffer = g_buffer[device];
  pthread_mutex_unlock(&g_mutex);
  return err == ACL_SUCCESS ? TB_OK : npu_check(ctx, device, err, "aclrtMalloc");
}

tb_status npu_inject_fault(tb_context ctx, tb_stream stream, const char *message) {
  if (stream == NULL || message == NULL) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: stream inject_fault: %s is NULL",
                    stream == NULL ? "the stream" : "the message");
  }
  const int32_t device = npu_stream_device(stream);
  if (device < 0 || device >= FAULT_MAX_DEVICES) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: stream inject_fault: device %d",
                    (int)device);
  }
  tb_status status = npu_enter(ctx, device);
  char *buffer = NULL;
  if (status == TB_OK) status = device_buffer(ctx, device, &buffer);
  if (status != TB_OK) return status;
  const aclrtStream handle = npu_acl_stream(stream);
  aclError err =
      aclrtMemsetAsync(buffer + INDEX_OFFSET, sizeof(int64_t), 0, sizeof(int64_t), handle);
  if (err == ACL_SUCCESS) err = aclrtMemsetAsync(buffer + INDEX_OFFSET, 1, 1, 1, handle);
  if (err != ACL_SUCCESS) return npu_check(ctx, device, err, "aclrtMemsetAsync");
  static const int64_t one[1] = {1}, storage[1] = {1};
  aclTensor *self =
      aclCreateTensor(one, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, storage, 1, buffer + VALUE_OFFSET);
  aclTensor *index =
      aclCreateTensor(one, 1, ACL_INT64, NULL, 0, ACL_FORMAT_ND, storage, 1, buffer + INDEX_OFFSET);
  aclTensor *out =
      aclCreateTensor(one, 1, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, storage, 1, buffer + VALUE_OFFSET);
  uint64_t workspace_size = 0;
  aclOpExecutor *executor = NULL;
  aclnnStatus st =
      self != NULL && index != NULL && out != NULL
          ? aclnnIndexSelectGetWorkspaceSize(self, 0, index, out, &workspace_size, &executor)
          : ACLNN_ERR_INNER;
  if (self != NULL) aclDestroyTensor(self);
  if (index != NULL) aclDestroyTensor(index);
  if (out != NULL) aclDestroyTensor(out);
  if (st != ACLNN_SUCCESS) return npu_check(ctx, device, st, "aclnnIndexSelectGetWorkspaceSize");
  if (workspace_size > 0) { /* the documented operator needs none for one element */
    if (aclSetAclOpExecutorRepeatable(executor) == ACLNN_SUCCESS) {
      aclDestroyAclOpExecutor(executor);
    }
    return npu_fail(ctx, TB_ERROR_INTERNAL,
                    "npu: stream inject_fault: aclnnIndexSelect asks for a workspace");
  }
  npu_expect_fault(device, message);
  npu_note_work(device, "aclnnIndexSelect", "stream.inject_fault");
  st = aclnnIndexSelect(NULL, 0, executor, handle);
  if (st == ACLNN_SUCCESS) return TB_OK;
  npu_expect_fault(device, ""); /* nothing will fault */
  return npu_check(ctx, device, st, "aclnnIndexSelect");
}
