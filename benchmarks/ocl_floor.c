/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The OpenCL floor of benchmarks/bench.py's eager-latency rows on the opencl vendor: the same
 * kind of kernel launched straight through the OpenCL API in a C loop -- clSetKernelArg and
 * clEnqueueNDRangeKernel per launch, one clFinish at the end -- on the first device of the
 * platform the vendor uses (the first platform, or TORCH_BACKEND_OPENCL_PLATFORM's substring).
 * What torch_backend adds on top of it is the layer's cost.  Built by bench.py with the
 * machine's C compiler (cc -shared), loaded with ctypes.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  timespec_get(&t, TIME_UTC);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/*
 * Microseconds per launch of kernel `name` of `source` (taking `__global const float *x,
 * __global float *y, uint n`) over `n` floats in groups of 64, `calls` launches after a warm-up,
 * asking for each launch's event when `with_events` (and releasing it, as a layer that keeps
 * the last one would).  Negative on an OpenCL failure: the error code.
 */
double tb_ocl_floor_us(const char *source, const char *name, unsigned n, int calls,
                       int with_events) {
  cl_platform_id platforms[8];
  cl_uint count = 0;
  cl_int err = clGetPlatformIDs(8, platforms, &count);
  if (err != CL_SUCCESS || count == 0) return err != CL_SUCCESS ? err : -1;
  cl_platform_id platform = platforms[0];
  const char *wanted = getenv("TORCH_BACKEND_OPENCL_PLATFORM");
  for (cl_uint i = 0; wanted != NULL && i < count; i++) {
    char text[256] = "";
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof text, text, NULL);
    if (strstr(text, wanted) != NULL) platform = platforms[i];
  }
  cl_device_id device;
  err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
  if (err != CL_SUCCESS) return err;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  if (err != CL_SUCCESS) return err;
  cl_command_queue queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &err);
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
  if (err == CL_SUCCESS) err = clBuildProgram(program, 1, &device, "-cl-std=CL1.2", NULL, NULL);
  cl_kernel kernel = err == CL_SUCCESS ? clCreateKernel(program, name, &err) : NULL;
  cl_mem x = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
  cl_mem y = clCreateBuffer(context, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
  double result = -1;
  if (err == CL_SUCCESS) {
    size_t local = 64, global = (n + local - 1) / local * local;
    double start = 0;
    for (int i = -calls / 10 - 3; i < calls; i++) {
      if (i == 0) {
        clFinish(queue);
        start = now();
      }
      cl_event event = NULL;
      clSetKernelArg(kernel, 0, sizeof x, &x);
      clSetKernelArg(kernel, 1, sizeof y, &y);
      clSetKernelArg(kernel, 2, sizeof n, &n);
      err = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL,
                                   with_events ? &event : NULL);
      if (event != NULL) clReleaseEvent(event);
      if (err != CL_SUCCESS) break;
    }
    clFinish(queue);
    result = err == CL_SUCCESS ? 1e6 * (now() - start) / calls : err;
  }
  if (x != NULL) clReleaseMemObject(x);
  if (y != NULL) clReleaseMemObject(y);
  if (kernel != NULL) clReleaseKernel(kernel);
  if (program != NULL) clReleaseProgram(program);
  if (queue != NULL) clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return result;
}
