/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The opencl vendor's streams and events.
 *
 * A stream is an in-order command queue with profiling on.  Commands record no event: the
 * stream enqueues a marker after them only when a query, synchronize or destroy looks (the
 * `dirty` flag), so that a launch costs the driver one command, not a command and an event.
 * An event is the marker (clEnqueueMarkerWithWaitList) its latest record enqueued: query reads the
 * marker's execution status, synchronize waits for it, elapsed_time reads the markers'
 * CL_PROFILING_COMMAND_END, and a stream waits for it with a barrier whose wait list holds it
 * (markers of another device's queue are fine: the devices share one cl_context).  Every record
 * flushes its queue: OpenCL says a queue whose event another queue waits for must be flushed, and a
 * queue nobody flushes may never start.
 *
 * The device keeps the list of its live queues, so that device.synchronize finishes them all,
 * and the marker of each destroyed stream's last work until that work completes (vendor.h,
 * "Destroying a busy stream": the queue is released at once, its work still runs, and the
 * device's synchronize waits for it).
 *
 * Faults: a marker whose status is negative (the runtime failed a command) faults the device;
 * after each wait, the fault record kernels write is read back (error.c).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl.h"

/* ---- streams ---- */

static const char k_waits[] = "it would wait for captured work";

static cl_int last_command(ocl_stream *stream, cl_event *out);

static tb_status add_stream(ocl_device *dev, ocl_stream *stream) {
  pthread_mutex_lock(&dev->lock);
  if (dev->stream_count == dev->stream_capacity) {
    size_t capacity = dev->stream_capacity ? 2 * dev->stream_capacity : 16;
    ocl_stream **grown = realloc(dev->streams, capacity * sizeof *grown);
    if (grown == NULL) {
      pthread_mutex_unlock(&dev->lock);
      return ocl_fail(TB_ERROR_OUT_OF_MEMORY, "stream.create: out of host memory");
    }
    dev->streams = grown;
    dev->stream_capacity = capacity;
  }
  dev->streams[dev->stream_count++] = stream;
  pthread_mutex_unlock(&dev->lock);
  return TB_OK;
}

/* Drops the retired markers that completed; under the device's lock. */
static void prune_retired(ocl_device *dev) {
  size_t kept = 0;
  for (size_t i = 0; i < dev->retired_count; i++) {
    cl_int state = CL_COMPLETE;
    clGetEventInfo(dev->retired[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL);
    if (state <= CL_COMPLETE) {
      clReleaseEvent(dev->retired[i]);
    } else {
      dev->retired[kept++] = dev->retired[i];
    }
  }
  dev->retired_count = kept;
}

tb_status ocl_stream_create(tb_context ctx, int32_t device, int32_t priority, tb_stream *out) {
  (void)priority; /* no priorities: every stream is 0 */
  tb_status status = ocl_enter(ctx, device);
  if (status != TB_OK) return status;
  if (out == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "stream.create: stream is NULL");
  ocl_device *dev = &ctx->devices[device];
  ocl_stream *stream = calloc(1, sizeof *stream);
  if (stream == NULL) return ocl_fail(TB_ERROR_OUT_OF_MEMORY, "stream.create: out of host memory");
  cl_int err = CL_SUCCESS;
  stream->device = device;
  pthread_mutex_init(&stream->lock, NULL);
  stream->queue = clCreateCommandQueue(ctx->context, dev->id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) {
    pthread_mutex_destroy(&stream->lock);
    free(stream);
    return ocl_check(ctx, device, err, "clCreateCommandQueue");
  }
  status = add_stream(dev, stream);
  if (status != TB_OK) {
    clReleaseCommandQueue(stream->queue);
    pthread_mutex_destroy(&stream->lock);
    free(stream);
    return status;
  }
  *out = (tb_stream)stream;
  return TB_OK;
}

tb_status ocl_stream_destroy(tb_context ctx, tb_stream handle) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  ocl_stream *stream = ocl_stream_of(handle);
  if (stream == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "stream.destroy: stream is NULL");
  ocl_device *dev = &ctx->devices[stream->device];
  ocl_capture_forget_stream(ctx, stream);
  /* Its last command, which device.synchronize waits for until it completes.  Without a
   * marker (none could be enqueued), the queue's work is waited for here. */
  cl_event last = NULL;
  if (last_command(stream, &last) != CL_SUCCESS) clFinish(stream->queue);
  if (stream->last != NULL) clReleaseEvent(stream->last);
  stream->last = NULL;
  clFlush(stream->queue);
  pthread_mutex_lock(&dev->lock);
  for (size_t i = 0; i < dev->stream_count; i++) {
    if (dev->streams[i] == stream) {
      dev->streams[i] = dev->streams[--dev->stream_count];
      break;
    }
  }
  prune_retired(dev);
  if (last != NULL) {
    cl_event *grown = dev->retired;
    if (dev->retired_count == dev->retired_capacity) {
      size_t capacity = dev->retired_capacity ? 2 * dev->retired_capacity : 16;
      grown = realloc(dev->retired, capacity * sizeof *grown);
      if (grown != NULL) {
        dev->retired = grown;
        dev->retired_capacity = capacity;
      }
    }
    if (grown != NULL) {
      dev->retired[dev->retired_count++] = last;
      last = NULL;
    }
  }
  pthread_mutex_unlock(&dev->lock);
  if (last != NULL) { /* no room to keep it: wait for the work instead */
    clWaitForEvents(1, &last);
    clReleaseEvent(last);
  }
  /* The queue's work still runs: releasing a queue flushes it, and OpenCL keeps it until its
   * commands complete. */
  clReleaseCommandQueue(stream->queue);
  pthread_mutex_destroy(&stream->lock);
  free(stream);
  return TB_OK;
}

void ocl_stream_begin(ocl_stream *stream) { pthread_mutex_lock(&stream->lock); }

void ocl_stream_end(ocl_stream *stream, bool enqueued) {
  if (enqueued) stream->dirty = true;
  pthread_mutex_unlock(&stream->lock);
}

void ocl_stream_end_marker(ocl_stream *stream, cl_event event) {
  cl_event old = NULL;
  if (event != NULL) {
    old = stream->last;
    stream->last = event;
    stream->dirty = false;
  }
  pthread_mutex_unlock(&stream->lock);
  if (old != NULL) clReleaseEvent(old);
}

tb_status ocl_command_enqueue(tb_context ctx, int32_t device, cl_command_queue queue,
                              const ocl_command *c, cl_bool blocking) {
  cl_int err = CL_SUCCESS;
  const char *call = "";
  switch (c->kind) {
    case OCL_COMMAND_KERNEL:
      call = "clEnqueueNDRangeKernel";
      err = clEnqueueNDRangeKernel(queue, c->kernel, c->dims, NULL, c->global,
                                   c->has_local ? c->local : NULL, 0, NULL, NULL);
      break;
    case OCL_COMMAND_SVM_COPY:
      call = "clEnqueueSVMMemcpy";
      err = clEnqueueSVMMemcpy(queue, blocking, c->dst, c->src, c->size, 0, NULL, NULL);
      break;
    case OCL_COMMAND_COPY:
      call = "clEnqueueCopyBuffer";
      err = clEnqueueCopyBuffer(queue, c->src_mem, c->dst_mem, c->src_offset, c->dst_offset,
                                c->size, 0, NULL, NULL);
      if (err == CL_SUCCESS && blocking) err = clFinish(queue);
      break;
    case OCL_COMMAND_WRITE:
      call = "clEnqueueWriteBuffer";
      err = clEnqueueWriteBuffer(queue, c->dst_mem, blocking, c->dst_offset, c->size, c->src, 0,
                                 NULL, NULL);
      break;
    case OCL_COMMAND_READ:
      call = "clEnqueueReadBuffer";
      err = clEnqueueReadBuffer(queue, c->src_mem, blocking, c->src_offset, c->size, c->dst, 0,
                                NULL, NULL);
      break;
    case OCL_COMMAND_SVM_FILL:
      call = "clEnqueueSVMMemFill";
      err = clEnqueueSVMMemFill(queue, c->dst, &c->byte, 1, c->size, 0, NULL, NULL);
      break;
    case OCL_COMMAND_FILL:
      call = "clEnqueueFillBuffer";
      err = clEnqueueFillBuffer(queue, c->dst_mem, &c->byte, 1, c->dst_offset, c->size, 0, NULL,
                                NULL);
      break;
  }
  if (err == CL_SUCCESS) return TB_OK;
  char name[200];
  snprintf(name, sizeof name, "%s (%s)", call, c->what);
  return ocl_check(ctx, device, err, name);
}

bool ocl_stream_capturing(ocl_stream *stream) {
  pthread_mutex_lock(&stream->lock);
  bool capturing = stream->capture != NULL;
  pthread_mutex_unlock(&stream->lock);
  return capturing;
}

tb_status ocl_submit(tb_context ctx, ocl_stream *stream, const ocl_command *command) {
  ocl_stream_begin(stream);
  if (stream->capture != NULL) {
    tb_status status = ocl_capture_record(ctx, stream->capture, stream, command);
    ocl_stream_end(stream, false);
    return status;
  }
  tb_status status = ocl_command_enqueue(ctx, stream->device, stream->queue, command, CL_FALSE);
  ocl_stream_end(stream, status == TB_OK);
  return status;
}

/* A marker after every command enqueued on the stream so far, retained, into `out` (NULL:
 * nothing enqueued yet): the last one when nothing was enqueued after it, else a new one. */
static cl_int last_command(ocl_stream *stream, cl_event *out) {
  cl_event old = NULL;
  cl_int err = CL_SUCCESS;
  pthread_mutex_lock(&stream->lock);
  if (stream->dirty) {
    cl_event marker = NULL;
    err = clEnqueueMarkerWithWaitList(stream->queue, 0, NULL, &marker);
    if (err == CL_SUCCESS) {
      old = stream->last;
      stream->last = marker;
      stream->dirty = false;
    }
  }
  cl_event last = stream->last;
  if (last != NULL) clRetainEvent(last);
  pthread_mutex_unlock(&stream->lock);
  if (old != NULL) clReleaseEvent(old);
  *out = last;
  return err;
}

tb_status ocl_stream_query(tb_context ctx, tb_stream handle) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  ocl_stream *stream = ocl_stream_of(handle);
  if (stream == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "stream.query: stream is NULL");
  status = ocl_capture_refuse_stream(ctx, stream, "stream query", k_waits);
  if (status == TB_OK) status = ocl_fault_status(ctx, stream->device);
  if (status != TB_OK) return status;
  unsigned long long launches = atomic_load(&ctx->devices[stream->device].fault_launches);
  cl_event last = NULL;
  cl_int marked = last_command(stream, &last);
  if (marked != CL_SUCCESS) {
    if (last != NULL) clReleaseEvent(last);
    return ocl_check(ctx, stream->device, marked, "clEnqueueMarkerWithWaitList");
  }
  if (last != NULL) {
    status = ocl_event_state(ctx, stream->device, last, "a command of the stream");
    clReleaseEvent(last);
    if (status == TB_ERROR_NOT_READY) {
      cl_int err = clFlush(stream->queue); /* so that it gets there */
      if (err != CL_SUCCESS) return ocl_check(ctx, stream->device, err, "clFlush");
    }
    if (status != TB_OK) return status;
  }
  return ocl_check_fault_record(ctx, stream->device, launches, false);
}

tb_status ocl_stream_synchronize(tb_context ctx, tb_stream handle) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  ocl_stream *stream = ocl_stream_of(handle);
  if (stream == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "stream.synchronize: stream is NULL");
  }
  status = ocl_capture_refuse_stream(ctx, stream, "stream synchronize", k_waits);
  if (status == TB_OK) status = ocl_fault_status(ctx, stream->device);
  if (status != TB_OK) return status;
  unsigned long long launches = atomic_load(&ctx->devices[stream->device].fault_launches);
  cl_event last = NULL;
  cl_int marked = last_command(stream, &last);
  if (marked != CL_SUCCESS) {
    if (last != NULL) clReleaseEvent(last);
    return ocl_check(ctx, stream->device, marked, "clEnqueueMarkerWithWaitList");
  }
  if (last != NULL) {
    cl_int err = clFlush(stream->queue);
    if (err == CL_SUCCESS) err = clWaitForEvents(1, &last);
    status = ocl_event_state(ctx, stream->device, last, "a command of the stream");
    clReleaseEvent(last);
    if (status == TB_OK && err != CL_SUCCESS) {
      status = ocl_check(ctx, stream->device, err, "clWaitForEvents");
    }
    if (status != TB_OK) return status;
  }
  return ocl_check_fault_record(ctx, stream->device, launches, false);
}

tb_status ocl_device_drain(tb_context ctx, int32_t device) {
  ocl_device *dev = &ctx->devices[device];
  unsigned long long launches = atomic_load(&dev->fault_launches);
  /* Take references, so that streams destroyed meanwhile stay finishable. */
  pthread_mutex_lock(&dev->lock);
  prune_retired(dev);
  size_t queues = dev->stream_count, events = dev->retired_count;
  cl_command_queue *queue = malloc((queues + 1) * sizeof *queue);
  cl_event *event = malloc((events + 1) * sizeof *event);
  if (queue == NULL || event == NULL) {
    pthread_mutex_unlock(&dev->lock);
    free(queue);
    free(event);
    return ocl_fail(TB_ERROR_OUT_OF_MEMORY, "device.synchronize: out of host memory");
  }
  for (size_t i = 0; i < queues; i++) {
    queue[i] = dev->streams[i]->queue;
    clRetainCommandQueue(queue[i]);
  }
  for (size_t i = 0; i < events; i++) {
    event[i] = dev->retired[i];
    clRetainEvent(event[i]);
  }
  pthread_mutex_unlock(&dev->lock);
  cl_int err = CL_SUCCESS;
  for (size_t i = 0; i < queues; i++) {
    cl_int e = clFinish(queue[i]);
    if (err == CL_SUCCESS) err = e;
    clReleaseCommandQueue(queue[i]);
  }
  for (size_t i = 0; i < events; i++) {
    clWaitForEvents(1, &event[i]); /* a failed command's status is read below */
    cl_int state = CL_COMPLETE;
    clGetEventInfo(event[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL);
    if (state < 0) (void)ocl_event_state(ctx, device, event[i], "a command of a destroyed stream");
    clReleaseEvent(event[i]);
  }
  free(queue);
  free(event);
  cl_int e = clFinish(dev->internal);
  if (err == CL_SUCCESS) err = e;
  tb_status status = ocl_fault_status(ctx, device);
  if (status != TB_OK) return status;
  if (err != CL_SUCCESS) return ocl_check(ctx, device, err, "clFinish");
  return ocl_check_fault_record(ctx, device, launches, true);
}

void ocl_streams_release(tb_context ctx) {
  for (int32_t d = 0; d < ctx->count; d++) {
    ocl_device *dev = &ctx->devices[d];
    for (size_t i = 0; i < dev->stream_count; i++) {
      clFinish(dev->streams[i]->queue);
      if (dev->streams[i]->last != NULL) clReleaseEvent(dev->streams[i]->last);
      clReleaseCommandQueue(dev->streams[i]->queue);
      pthread_mutex_destroy(&dev->streams[i]->lock);
      free(dev->streams[i]);
    }
    dev->stream_count = 0;
  }
}

/* ---- events ---- */

static ocl_event *event_of(tb_event event) { return (ocl_event *)event; }

/* The event's current marker, retained (NULL: never recorded). */
static cl_event current_marker(ocl_event *event) {
  pthread_mutex_lock(&event->lock);
  cl_event marker = event->marker;
  if (marker != NULL) clRetainEvent(marker);
  pthread_mutex_unlock(&event->lock);
  return marker;
}

tb_status ocl_event_create(tb_context ctx, int32_t device, uint32_t flags, tb_event *out) {
  tb_status status = ocl_enter(ctx, device);
  if (status != TB_OK) return status;
  if (out == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "event.create: event is NULL");
  if ((flags & ~TB_EVENT_FLAG_TIMING) != 0) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "event.create: unknown flags 0x%x",
                    (unsigned)(flags & ~TB_EVENT_FLAG_TIMING));
  }
  ocl_event *event = calloc(1, sizeof *event);
  if (event == NULL) return ocl_fail(TB_ERROR_OUT_OF_MEMORY, "event.create: out of host memory");
  event->device = device;
  event->flags = flags;
  pthread_mutex_init(&event->lock, NULL);
  *out = (tb_event)event;
  return TB_OK;
}

tb_status ocl_event_destroy(tb_context ctx, tb_event handle) {
  (void)ctx;
  ocl_event *event = event_of(handle);
  if (event == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "event.destroy: event is NULL");
  /* Waits already enqueued hold their own reference to the marker. */
  if (event->marker != NULL) clReleaseEvent(event->marker);
  pthread_mutex_destroy(&event->lock);
  free(event);
  return TB_OK;
}

tb_status ocl_event_record(tb_context ctx, tb_event handle, tb_stream stream_handle) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  ocl_event *event = event_of(handle);
  const ocl_stream *stream = ocl_stream_of(stream_handle);
  if (event == NULL || stream == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "event.record: %s is NULL",
                    event == NULL ? "event" : "stream");
  }
  if (stream->device != event->device) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "event.record: the event belongs to ocl:%d, the stream to ocl:%d",
                    (int)event->device, (int)stream->device);
  }
  if (ocl_capture_mark_event(ctx, ocl_stream_of(stream_handle), event)) return TB_OK;
  cl_event marker = NULL;
  ocl_stream_begin(ocl_stream_of(stream_handle));
  cl_int err = clEnqueueMarkerWithWaitList(stream->queue, 0, NULL, &marker);
  if (err == CL_SUCCESS) clRetainEvent(marker); /* one for the stream, one for the event */
  ocl_stream_end_marker(ocl_stream_of(stream_handle), err == CL_SUCCESS ? marker : NULL);
  if (err == CL_SUCCESS) err = clFlush(stream->queue);
  if (err != CL_SUCCESS) {
    if (marker != NULL) clReleaseEvent(marker);
    return ocl_check(ctx, stream->device, err, "clEnqueueMarkerWithWaitList");
  }
  pthread_mutex_lock(&event->lock);
  cl_event old = event->marker;
  event->marker = marker;
  event->mark.capture_id = 0;
  pthread_mutex_unlock(&event->lock);
  if (old != NULL) clReleaseEvent(old);
  return TB_OK;
}

tb_status ocl_event_query(tb_context ctx, tb_event handle) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  ocl_event *event = event_of(handle);
  if (event == NULL) return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "event.query: event is NULL");
  status = ocl_capture_refuse_event(ctx, event, "event query");
  if (status == TB_OK) status = ocl_fault_status(ctx, event->device);
  if (status != TB_OK) return status;
  unsigned long long launches = atomic_load(&ctx->devices[event->device].fault_launches);
  cl_event marker = current_marker(event);
  if (marker == NULL) return TB_OK;
  status = ocl_event_state(ctx, event->device, marker, "a command before the event");
  clReleaseEvent(marker);
  if (status != TB_OK) return status;
  return ocl_check_fault_record(ctx, event->device, launches, false);
}

tb_status ocl_event_synchronize(tb_context ctx, tb_event handle) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  ocl_event *event = event_of(handle);
  if (event == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "event.synchronize: event is NULL");
  }
  status = ocl_capture_refuse_event(ctx, event, "event synchronize");
  if (status == TB_OK) status = ocl_fault_status(ctx, event->device);
  if (status != TB_OK) return status;
  unsigned long long launches = atomic_load(&ctx->devices[event->device].fault_launches);
  cl_event marker = current_marker(event);
  if (marker == NULL) return TB_OK;
  cl_int err = clWaitForEvents(1, &marker);
  status = ocl_event_state(ctx, event->device, marker, "a command before the event");
  clReleaseEvent(marker);
  if (status == TB_OK && err != CL_SUCCESS) {
    status = ocl_check(ctx, event->device, err, "clWaitForEvents");
  }
  if (status != TB_OK) return status;
  return ocl_check_fault_record(ctx, event->device, launches, false);
}

tb_status ocl_stream_wait_event(tb_context ctx, tb_stream stream_handle, tb_event handle) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  const ocl_stream *stream = ocl_stream_of(stream_handle);
  ocl_event *event = event_of(handle);
  if (event == NULL || stream == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "stream.wait_event: %s is NULL",
                    event == NULL ? "event" : "stream");
  }
  status = ocl_fault_status(ctx, stream->device);
  if (status != TB_OK) return status;
  /* An event recorded in a capture: the stream joins it, or learns how far it got. */
  if (ocl_capture_wait(ctx, ocl_stream_of(stream_handle), event, &status)) return status;
  cl_event marker = current_marker(event);
  if (marker == NULL) return TB_OK; /* never recorded, or recorded in a capture that ended */
  if (atomic_load_explicit(&ctx->active_captures, memory_order_acquire) != 0) {
    /* A capturing stream may wait only for work that is done: a replay could not. */
    status = ocl_event_state(ctx, stream->device, marker, "a command before the event");
    if (status == TB_ERROR_NOT_READY) {
      status = ocl_capture_refuse_stream(
          ctx, ocl_stream_of(stream_handle), "stream wait_event",
          "the event was recorded outside the capture and is not complete: a dependency on "
          "work outside the capture (CUDA's cudaErrorStreamCaptureIsolation)");
    }
    if (status != TB_OK) {
      clReleaseEvent(marker);
      return status;
    }
  }
  cl_event barrier = NULL;
  ocl_stream_begin(ocl_stream_of(stream_handle));
  cl_int err = clEnqueueBarrierWithWaitList(stream->queue, 1, &marker, &barrier);
  ocl_stream_end_marker(ocl_stream_of(stream_handle), err == CL_SUCCESS ? barrier : NULL);
  clReleaseEvent(marker);
  return ocl_check(ctx, stream->device, err, "clEnqueueBarrierWithWaitList");
}

tb_status ocl_event_elapsed_time(tb_context ctx, tb_event start_handle, tb_event end_handle,
                                 float *ms) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  ocl_event *start = event_of(start_handle), *end = event_of(end_handle);
  if (start == NULL || end == NULL || ms == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "event.elapsed_time: %s is NULL",
                    start == NULL ? "start"
                    : end == NULL ? "end"
                                  : "ms");
  }
  if (!(start->flags & TB_EVENT_FLAG_TIMING) || !(end->flags & TB_EVENT_FLAG_TIMING)) {
    return ocl_fail(TB_ERROR_NOT_SUPPORTED,
                    "event.elapsed_time: the %s event was created without TB_EVENT_FLAG_TIMING",
                    !(start->flags & TB_EVENT_FLAG_TIMING) ? "start" : "end");
  }
  if (start->device != end->device) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "event.elapsed_time: the events belong to ocl:%d and ocl:%d",
                    (int)start->device, (int)end->device);
  }
  cl_event a = current_marker(start), b = current_marker(end);
  if (a == NULL || b == NULL) {
    if (a != NULL) clReleaseEvent(a);
    if (b != NULL) clReleaseEvent(b);
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "event.elapsed_time: the %s event was never recorded",
                    a == NULL ? "start" : "end");
  }
  status = ocl_event_state(ctx, start->device, a, "a command before the start event");
  if (status == TB_OK)
    status = ocl_event_state(ctx, start->device, b, "a command before the end event");
  cl_ulong t0 = 0, t1 = 0;
  if (status == TB_OK) {
    cl_int err = clGetEventProfilingInfo(a, CL_PROFILING_COMMAND_END, sizeof t0, &t0, NULL);
    if (err == CL_SUCCESS)
      err = clGetEventProfilingInfo(b, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    status = ocl_check(ctx, start->device, err, "clGetEventProfilingInfo");
  }
  clReleaseEvent(a);
  clReleaseEvent(b);
  if (status != TB_OK) return status;
  *ms = (float)(((double)t1 - (double)t0) / 1e6);
  return TB_OK;
}

/* ---- faults ---- */

/* The injection kernel: writes the fault record as a kernel that found a failure does. */
static const char k_inject_source[] =
    "__kernel void tb_inject_fault(__global uint *fault, ulong slot) {\n"
    "  tb_report_fault(fault, 0u, TB_FAULT_INJECTED, (long)slot, 0);\n"
    "}\n";

tb_status ocl_stream_inject_fault(tb_context ctx, tb_stream handle, const char *message) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  const ocl_stream *stream = ocl_stream_of(handle);
  if (stream == NULL || message == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "stream.inject_fault: %s is NULL",
                    stream == NULL ? "stream" : "message");
  }
  status = ocl_fault_status(ctx, stream->device);
  if (status != TB_OK) return status;
  ocl_kernel *kernel = NULL;
  const char *sources[] = {k_inject_source};
  status =
      ocl_kernel_get(ctx, stream->device, "inject_fault", sources, 1, "tb_inject_fault", &kernel);
  if (status != TB_OK) return status;
  ocl_device *dev = &ctx->devices[stream->device];
  pthread_mutex_lock(&dev->lock);
  cl_ulong slot = dev->injected_next++ % 4;
  snprintf(dev->injected[slot], sizeof dev->injected[slot], "%s", message);
  pthread_mutex_unlock(&dev->lock);
  atomic_fetch_add(&dev->fault_launches, 1);
  size_t global = 1;
  pthread_mutex_lock(&kernel->lock);
  cl_int err = clSetKernelArg(kernel->kernel, 0, sizeof(cl_mem), &dev->fault);
  if (err == CL_SUCCESS) err = clSetKernelArg(kernel->kernel, 1, sizeof slot, &slot);
  status = ocl_check(ctx, stream->device, err, "clSetKernelArg (inject_fault)");
  if (status == TB_OK) {
    const ocl_command command = {.kind = OCL_COMMAND_KERNEL,
                                 .what = "inject_fault",
                                 .kernel = kernel->kernel,
                                 .dims = 1,
                                 .global = {global}};
    status = ocl_submit(ctx, ocl_stream_of(handle), &command);
  }
  pthread_mutex_unlock(&kernel->lock);
  if (status != TB_OK) return status;
  return ocl_check(ctx, stream->device, clFlush(stream->queue), "clFlush");
}
