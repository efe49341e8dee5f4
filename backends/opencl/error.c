/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The opencl vendor's error model: OpenCL's error codes mapped to tb_status with the call and
 * the code's name in the message, the thread's last error, and the sticky device fault
 * (vendor.h, "Device faults").
 *
 * Messages read "<call> failed on ocl:<device> (<device name>) with <CL name> (<code>)".
 *
 * A device faults in three ways, all ending here: a command whose event reports a negative
 * execution status (the OpenCL runtime failed it asynchronously: ocl_event_state); a kernel
 * that detected a failure (an index out of range) and wrote the device's fault record, read
 * back once the work completed (ocl_check_fault_record); and stream.inject_fault, which is
 * such a kernel.  The first fault is kept with its message; every call of the contract's list
 * returns TB_ERROR_DEVICE_FAULT with it until device.reset clears it.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl.h"

#define OCL_MESSAGE_SIZE 4096

static _Thread_local char t_error[OCL_MESSAGE_SIZE];

void ocl_append(char *buffer, size_t size, const char *format, ...) {
  size_t used = strlen(buffer);
  if (used + 1 >= size) return;
  va_list args;
  va_start(args, format);
  vsnprintf(buffer + used, size - used, format, args);
  va_end(args);
}

tb_status ocl_fail(tb_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(t_error, sizeof t_error, format, args);
  va_end(args);
  return status;
}

const char *ocl_last_error(tb_context ctx) {
  (void)ctx; /* per thread, whichever context failed */
  return t_error;
}

const char *ocl_error_name(cl_int err) {
  switch (err) {
#define OCL_NAME(code) \
  case code:           \
    return #code;
    OCL_NAME(CL_SUCCESS)
    OCL_NAME(CL_DEVICE_NOT_FOUND)
    OCL_NAME(CL_DEVICE_NOT_AVAILABLE)
    OCL_NAME(CL_COMPILER_NOT_AVAILABLE)
    OCL_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    OCL_NAME(CL_OUT_OF_RESOURCES)
    OCL_NAME(CL_OUT_OF_HOST_MEMORY)
    OCL_NAME(CL_PROFILING_INFO_NOT_AVAILABLE)
    OCL_NAME(CL_MEM_COPY_OVERLAP)
    OCL_NAME(CL_IMAGE_FORMAT_MISMATCH)
    OCL_NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    OCL_NAME(CL_BUILD_PROGRAM_FAILURE)
    OCL_NAME(CL_MAP_FAILURE)
    OCL_NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    OCL_NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    OCL_NAME(CL_COMPILE_PROGRAM_FAILURE)
    OCL_NAME(CL_LINKER_NOT_AVAILABLE)
    OCL_NAME(CL_LINK_PROGRAM_FAILURE)
    OCL_NAME(CL_DEVICE_PARTITION_FAILED)
    OCL_NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    OCL_NAME(CL_INVALID_VALUE)
    OCL_NAME(CL_INVALID_DEVICE_TYPE)
    OCL_NAME(CL_INVALID_PLATFORM)
    OCL_NAME(CL_INVALID_DEVICE)
    OCL_NAME(CL_INVALID_CONTEXT)
    OCL_NAME(CL_INVALID_QUEUE_PROPERTIES)
    OCL_NAME(CL_INVALID_COMMAND_QUEUE)
    OCL_NAME(CL_INVALID_HOST_PTR)
    OCL_NAME(CL_INVALID_MEM_OBJECT)
    OCL_NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    OCL_NAME(CL_INVALID_IMAGE_SIZE)
    OCL_NAME(CL_INVALID_SAMPLER)
    OCL_NAME(CL_INVALID_BINARY)
    OCL_NAME(CL_INVALID_BUILD_OPTIONS)
    OCL_NAME(CL_INVALID_PROGRAM)
    OCL_NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    OCL_NAME(CL_INVALID_KERNEL_NAME)
    OCL_NAME(CL_INVALID_KERNEL_DEFINITION)
    OCL_NAME(CL_INVALID_KERNEL)
    OCL_NAME(CL_INVALID_ARG_INDEX)
    OCL_NAME(CL_INVALID_ARG_VALUE)
    OCL_NAME(CL_INVALID_ARG_SIZE)
    OCL_NAME(CL_INVALID_KERNEL_ARGS)
    OCL_NAME(CL_INVALID_WORK_DIMENSION)
    OCL_NAME(CL_INVALID_WORK_GROUP_SIZE)
    OCL_NAME(CL_INVALID_WORK_ITEM_SIZE)
    OCL_NAME(CL_INVALID_GLOBAL_OFFSET)
    OCL_NAME(CL_INVALID_EVENT_WAIT_LIST)
    OCL_NAME(CL_INVALID_EVENT)
    OCL_NAME(CL_INVALID_OPERATION)
    OCL_NAME(CL_INVALID_GL_OBJECT)
    OCL_NAME(CL_INVALID_BUFFER_SIZE)
    OCL_NAME(CL_INVALID_MIP_LEVEL)
    OCL_NAME(CL_INVALID_GLOBAL_WORK_SIZE)
    OCL_NAME(CL_INVALID_PROPERTY)
    OCL_NAME(CL_INVALID_IMAGE_DESCRIPTOR)
    OCL_NAME(CL_INVALID_COMPILER_OPTIONS)
    OCL_NAME(CL_INVALID_LINKER_OPTIONS)
    OCL_NAME(CL_INVALID_DEVICE_PARTITION_COUNT)
    OCL_NAME(CL_INVALID_PIPE_SIZE)
    OCL_NAME(CL_INVALID_DEVICE_QUEUE)
    OCL_NAME(CL_INVALID_SPEC_ID)
    OCL_NAME(CL_MAX_SIZE_RESTRICTION_EXCEEDED)
#undef OCL_NAME
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR"; /* the ICD loader: no platform installed */
    default:
      return "CL_UNKNOWN_ERROR";
  }
}

static tb_status status_of(cl_int err) {
  switch (err) {
    case CL_SUCCESS:
      return TB_OK;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE:
      return TB_ERROR_OUT_OF_MEMORY;
    case CL_DEVICE_NOT_FOUND:
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_COMPILER_NOT_AVAILABLE:
    case -1001:
      return TB_ERROR_UNAVAILABLE;
    case CL_INVALID_VALUE:
    case CL_INVALID_HOST_PTR:
    case CL_INVALID_MEM_OBJECT:
    case CL_INVALID_EVENT:
    case CL_INVALID_EVENT_WAIT_LIST:
    case CL_INVALID_COMMAND_QUEUE:
    case CL_MEM_COPY_OVERLAP:
      return TB_ERROR_INVALID_ARGUMENT;
    case CL_INVALID_OPERATION:
    case CL_INVALID_QUEUE_PROPERTIES:
      return TB_ERROR_NOT_SUPPORTED;
    default:
      return TB_ERROR_INTERNAL;
  }
}

tb_status ocl_check(tb_context ctx, int32_t device, cl_int err, const char *call) {
  if (err == CL_SUCCESS) return TB_OK;
  if (ctx != NULL && device >= 0 && device < ctx->count) {
    return ocl_fail(status_of(err), "%s failed on ocl:%d (%s) with %s (%d)", call, (int)device,
                    ctx->devices[device].name, ocl_error_name(err), (int)err);
  }
  return ocl_fail(status_of(err), "%s failed with %s (%d)", call, ocl_error_name(err), (int)err);
}

tb_status ocl_fault(tb_context ctx, int32_t device, const char *message) {
  ocl_device *dev = &ctx->devices[device];
  pthread_mutex_lock(&dev->lock);
  if (!atomic_load(&dev->faulted)) {
    snprintf(dev->fault_message, sizeof dev->fault_message, "%s", message);
    atomic_store(&dev->faulted, true);
  }
  tb_status status =
      ocl_fail(TB_ERROR_DEVICE_FAULT, "device %d is faulted: %s", (int)device, dev->fault_message);
  pthread_mutex_unlock(&dev->lock);
  return status;
}

tb_status ocl_fault_status(tb_context ctx, int32_t device) {
  ocl_device *dev = &ctx->devices[device];
  if (!atomic_load(&dev->faulted)) return TB_OK;
  return ocl_fault(ctx, device, ""); /* already faulted: reports the recorded message */
}

tb_status ocl_check_fault_record(tb_context ctx, int32_t device, unsigned long long launches,
                                 bool drained) {
  ocl_device *dev = &ctx->devices[device];
  if (atomic_load(&dev->faulted)) return ocl_fault_status(ctx, device);
  pthread_mutex_lock(&dev->lock);
  bool fresh = launches == dev->fault_checked;
  pthread_mutex_unlock(&dev->lock);
  if (fresh) return TB_OK;
  ocl_fault_record record;
  cl_int err = clEnqueueReadBuffer(dev->internal, dev->fault, CL_TRUE, 0, sizeof record, &record, 0,
                                   NULL, NULL);
  if (err != CL_SUCCESS) return ocl_check(ctx, device, err, "clEnqueueReadBuffer (fault record)");
  if (record.code == 0) {
    /* Clean so far -- but kernels launched on other streams may still be running, so the
     * next check reads again; only a drain (every queue of the device finished) may mark the
     * launches counted so far as read. */
    if (drained) {
      pthread_mutex_lock(&dev->lock);
      if (dev->fault_checked < launches) dev->fault_checked = launches;
      pthread_mutex_unlock(&dev->lock);
    }
    return TB_OK;
  }
  char message[1024];
  switch ((ocl_fault_site)(record.code - 1)) {
    case OCL_FAULT_INJECTED: {
      pthread_mutex_lock(&dev->lock);
      snprintf(message, sizeof message, "%s (in inject_fault)",
               dev->injected[(size_t)record.values[0] % 4]);
      pthread_mutex_unlock(&dev->lock);
      break;
    }
    case OCL_FAULT_INDEX: {
      pthread_mutex_lock(&dev->lock);
      const char *op = record.op < dev->fault_op_count ? dev->fault_ops[record.op] : "a kernel";
      pthread_mutex_unlock(&dev->lock);
      snprintf(message, sizeof message,
               "%s: index %lld is out of bounds for a dimension of size %lld", op,
               (long long)record.values[0], (long long)record.values[1]);
      break;
    }
    default:
      snprintf(message, sizeof message, "a kernel reported failure %u", (unsigned)record.code);
      break;
  }
  return ocl_fault(ctx, device, message);
}

cl_uint ocl_fault_op(tb_context ctx, int32_t device, const char *name, bool copy) {
  ocl_device *dev = &ctx->devices[device];
  pthread_mutex_lock(&dev->lock);
  if (dev->fault_op_count == 0) dev->fault_ops[dev->fault_op_count++] = "a kernel";
  cl_uint index = 0;
  /* A static name is found by its address, a copied one by its text. */
  for (cl_uint i = 1; i < dev->fault_op_count && index == 0; i++) {
    const char *owned = dev->fault_op_copies[i];
    if (copy ? owned != NULL && strcmp(owned, name) == 0
             : owned == NULL && dev->fault_ops[i] == name)
      index = i;
  }
  if (index == 0 && dev->fault_op_count < sizeof dev->fault_ops / sizeof dev->fault_ops[0]) {
    const char *stored = name;
    if (copy) {
      size_t size = strlen(name) + 1;
      char *text = malloc(size);
      if (text != NULL) memcpy(text, name, size);
      dev->fault_op_copies[dev->fault_op_count] = text;
      stored = text; /* NULL: out of memory, and "a kernel" names it */
    }
    if (stored != NULL) {
      index = dev->fault_op_count;
      dev->fault_ops[dev->fault_op_count++] = stored;
    }
  }
  pthread_mutex_unlock(&dev->lock);
  return index;
}

tb_status ocl_event_state(tb_context ctx, int32_t device, cl_event event, const char *what) {
  cl_int state = CL_COMPLETE;
  cl_int err = clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL);
  if (err != CL_SUCCESS) return ocl_check(ctx, device, err, "clGetEventInfo");
  if (state == CL_COMPLETE) return TB_OK;
  if (state > 0) return TB_ERROR_NOT_READY;
  char message[512];
  snprintf(message, sizeof message, "%s failed on the device with %s (%d)", what,
           ocl_error_name(state), (int)state);
  return ocl_fault(ctx, device, message);
}
