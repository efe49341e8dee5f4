/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The opencl vendor's device programs (vendor.h, ABI 2.6, TB_EXTENSION_PROGRAMS): OpenCL C
 * that torch.compile generates, or a user writes, built at run time and launched on a stream.
 *
 * A source is built after a prelude that only enables doubles (none of the vendor's own names,
 * program.c), with -cl-kernel-arg-info, through the same disk cache as the vendor's own kernels,
 * so that a process that meets a source again loads its binary.  A kernel's parameters are read
 * back with clGetKernelArgInfo: `__global` and `__constant` pointers are device memory, OpenCL C
 * scalars are described by their type name, and anything else (`__local` pointers, structs) is
 * refused by get_kernel, naming the parameter.
 *
 * A device pointer argument is the memory itself: in SVM mode the pointer (anywhere inside an
 * allocation), in buffer mode the buffer when the pointer is its start, otherwise a sub-buffer
 * from the pointer to the buffer's end (OpenCL keeps it while the launch needs it), which the
 * device's CL_DEVICE_MEM_BASE_ADDR_ALIGN must allow.  A launch enqueues the kernel under its
 * lock (a cl_kernel's arguments are shared state) and records no event of its own: the stream
 * adds a marker only when a query, a record or a synchronize needs one (stream.c).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl.h"

#define PROGRAM_MAGIC 0x6f636c70u /* "oclp" */

typedef struct program_kernel {
  char *name;
  cl_kernel kernel;
  pthread_mutex_t lock; /* guards the kernel's arguments between setting and enqueueing */
  tb_program_param *params;
  cl_uint *arg_index; /* the OpenCL argument of each described parameter */
  /* TB_FAULT_PARAM's two arguments (the record and the kernel's site in it), which the vendor
   * binds and get_kernel does not describe; -1 when the kernel does not declare it. */
  cl_int fault_record, fault_site;
  cl_uint site;
  tb_program_kernel_info info;
  struct program_kernel *next;
} program_kernel;

typedef struct program {
  uint32_t magic;
  int32_t device;
  cl_program program;
  pthread_mutex_t lock; /* guards kernels */
  program_kernel *kernels;
} program;

/* The parameter named by an OpenCL C scalar type, or kind 0 when it is none. */
static tb_program_param scalar_param(const char *type) {
  static const struct {
    const char *name;
    tb_param_kind kind;
    uint32_t size;
  } k_scalars[] = {
      {"char", TB_PARAM_INT, 1},    {"uchar", TB_PARAM_UINT, 1},  {"short", TB_PARAM_INT, 2},
      {"ushort", TB_PARAM_UINT, 2}, {"int", TB_PARAM_INT, 4},     {"uint", TB_PARAM_UINT, 4},
      {"long", TB_PARAM_INT, 8},    {"ulong", TB_PARAM_UINT, 8},  {"half", TB_PARAM_FLOAT, 2},
      {"float", TB_PARAM_FLOAT, 4}, {"double", TB_PARAM_FLOAT, 8}};
  /* "unsigned int" and friends are spelled with the u prefix by CL_KERNEL_ARG_TYPE_NAME. */
  for (size_t i = 0; i < sizeof k_scalars / sizeof k_scalars[0]; i++) {
    if (strcmp(type, k_scalars[i].name) == 0) {
      return (tb_program_param){k_scalars[i].kind, k_scalars[i].size};
    }
  }
  /* Vector types (float4, int2, ...): their bytes, laid out as OpenCL C does (3 as 4). */
  static const struct {
    const char *base;
    uint32_t size;
  } k_bases[] = {{"char", 1}, {"uchar", 1}, {"short", 2}, {"ushort", 2}, {"int", 4},   {"uint", 4},
                 {"long", 8}, {"ulong", 8}, {"half", 2},  {"float", 4},  {"double", 8}};
  for (size_t i = 0; i < sizeof k_bases / sizeof k_bases[0]; i++) {
    size_t length = strlen(k_bases[i].base);
    if (strncmp(type, k_bases[i].base, length) != 0) continue;
    int lanes = atoi(type + length);
    if (lanes == 2 || lanes == 3 || lanes == 4 || lanes == 8 || lanes == 16) {
      uint32_t stored = lanes == 3 ? 4u : (uint32_t)lanes;
      return (tb_program_param){TB_PARAM_BYTES, stored * k_bases[i].size};
    }
  }
  return (tb_program_param){(tb_param_kind)0, 0};
}

/* Describes the parameters of `entry->kernel` (of `count` arguments) into `entry->params`,
 * leaving out TB_FAULT_PARAM's, which it notes; TB_ERROR_NOT_SUPPORTED when the argument
 * information is not available (a binary without it). */
static tb_status describe(tb_context ctx, int32_t device, program_kernel *entry, cl_uint count) {
  const char *name = entry->name;
  cl_uint described = 0;
  entry->fault_record = entry->fault_site = -1;
  for (cl_uint i = 0; i < count; i++) {
    cl_kernel_arg_address_qualifier address = CL_KERNEL_ARG_ADDRESS_PRIVATE;
    char type[128] = "", arg_name[64] = "";
    cl_int err = clGetKernelArgInfo(entry->kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
                                    sizeof address, &address, NULL);
    if (err == CL_SUCCESS) {
      err = clGetKernelArgInfo(entry->kernel, i, CL_KERNEL_ARG_TYPE_NAME, sizeof type - 1, type,
                               NULL);
    }
    if (err == CL_SUCCESS) {
      err = clGetKernelArgInfo(entry->kernel, i, CL_KERNEL_ARG_NAME, sizeof arg_name - 1, arg_name,
                               NULL);
      if (err == CL_INVALID_VALUE) err = CL_SUCCESS; /* a longer name: not one of ours */
    }
    if (err == CL_KERNEL_ARG_INFO_NOT_AVAILABLE) return TB_ERROR_NOT_SUPPORTED;
    if (err != CL_SUCCESS) return ocl_check(ctx, device, err, "clGetKernelArgInfo");
    type[sizeof type - 1] = '\0';
    arg_name[sizeof arg_name - 1] = '\0';
    if (strcmp(arg_name, "tb_fault_record") == 0 && address == CL_KERNEL_ARG_ADDRESS_GLOBAL) {
      entry->fault_record = (cl_int)i;
      continue;
    }
    if (strcmp(arg_name, "tb_fault_site") == 0 && strcmp(type, "uint") == 0) {
      entry->fault_site = (cl_int)i;
      continue;
    }
    tb_program_param *param = &entry->params[described];
    entry->arg_index[described++] = i;
    if (address == CL_KERNEL_ARG_ADDRESS_GLOBAL || address == CL_KERNEL_ARG_ADDRESS_CONSTANT) {
      *param = (tb_program_param){TB_PARAM_POINTER, (uint32_t)sizeof(void *)};
      continue;
    }
    if (address == CL_KERNEL_ARG_ADDRESS_LOCAL) {
      return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                      "kernel '%s': parameter %u is a __local pointer, which a launch cannot size "
                      "(declare the local array inside the kernel)",
                      name, (unsigned)i);
    }
    *param = scalar_param(type);
    if (param->kind == 0) {
      return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                      "kernel '%s': parameter %u has type '%s', which is no OpenCL C scalar, "
                      "vector or __global pointer",
                      name, (unsigned)i, type);
    }
  }
  if ((entry->fault_record < 0) != (entry->fault_site < 0)) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "kernel '%s' declares one of TB_FAULT_PARAM's parameters (tb_fault_record, "
                    "tb_fault_site) without the other: declare them with TB_FAULT_PARAM",
                    name);
  }
  if (entry->fault_record >= 0) entry->site = ocl_fault_op(ctx, device, name, true);
  entry->info.param_count = described;
  return TB_OK;
}

static void kernel_free(program_kernel *entry) {
  if (entry->kernel != NULL) clReleaseKernel(entry->kernel);
  pthread_mutex_destroy(&entry->lock);
  free(entry->params);
  free(entry->arg_index);
  free(entry->name);
  free(entry);
}

static void program_free(program *p) {
  program_kernel *entry = p->kernels;
  while (entry != NULL) {
    program_kernel *next = entry->next;
    kernel_free(entry);
    entry = next;
  }
  if (p->program != NULL) clReleaseProgram(p->program);
  pthread_mutex_destroy(&p->lock);
  p->magic = 0;
  free(p);
}

static program *program_of(tb_program handle) {
  program *p = (program *)handle;
  return p != NULL && p->magic == PROGRAM_MAGIC ? p : NULL;
}

/* Builds `text` for `device` with argument information kept, through the disk cache. */
static tb_status build_text(tb_context ctx, int32_t device, const char *text, const char *options,
                            cl_program *out) {
  char extra[1100];
  int written =
      snprintf(extra, sizeof extra, "-cl-kernel-arg-info%s%s",
               options != NULL && options[0] != '\0' ? " " : "", options != NULL ? options : "");
  if (written < 0 || (size_t)written >= sizeof extra) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "programs.build: options longer than 1000 bytes");
  }
  const char *sources[] = {text};
  return ocl_program_build(ctx, device, sources, 1, extra, true, out);
}

static tb_status ext_build(tb_context ctx, int32_t device, tb_program_language language,
                           const char *source, size_t size, const char *options, tb_program *out) {
  tb_status status = ocl_enter(ctx, device);
  if (status != TB_OK) return status;
  if (source == NULL || out == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "programs.build: %s is NULL",
                    source == NULL ? "source" : "program");
  }
  if (language != TB_PROGRAM_OPENCL_C) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "programs.build: ocl builds OpenCL C (language %d) only, not language %d",
                    (int)TB_PROGRAM_OPENCL_C, (int)language);
  }
  status = ocl_fault_status(ctx, device);
  if (status != TB_OK) return status;
  char *text = malloc(size + 1);
  program *p = calloc(1, sizeof *p);
  if (text == NULL || p == NULL) {
    free(text);
    free(p);
    return ocl_fail(TB_ERROR_OUT_OF_MEMORY, "programs.build: out of host memory");
  }
  memcpy(text, source, size);
  text[size] = '\0';
  status = build_text(ctx, device, text, options, &p->program);
  free(text);
  if (status != TB_OK) {
    free(p);
    return status;
  }
  p->magic = PROGRAM_MAGIC;
  p->device = device;
  pthread_mutex_init(&p->lock, NULL);
  *out = (tb_program)p;
  return TB_OK;
}

static tb_status ext_get_kernel(tb_context ctx, tb_program handle, const char *name,
                                tb_program_kernel *out, tb_program_kernel_info *info) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  program *p = program_of(handle);
  if (p == NULL || name == NULL || out == NULL || info == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "programs.get_kernel: %s is NULL or invalid",
                    p == NULL      ? "program"
                    : name == NULL ? "name"
                    : out == NULL  ? "kernel"
                                   : "info");
  }
  pthread_mutex_lock(&p->lock);
  program_kernel *entry = p->kernels;
  while (entry != NULL && strcmp(entry->name, name) != 0) entry = entry->next;
  if (entry == NULL) {
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(p->program, name, &err);
    if (err != CL_SUCCESS) {
      pthread_mutex_unlock(&p->lock);
      if (err == CL_INVALID_KERNEL_NAME) {
        return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                        "programs.get_kernel: the program has no kernel named '%s'", name);
      }
      return ocl_check(ctx, p->device, err, "clCreateKernel");
    }
    cl_uint count = 0;
    err = clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof count, &count, NULL);
    entry = calloc(1, sizeof *entry);
    size_t name_size = strlen(name) + 1;
    if (entry != NULL) {
      entry->kernel = kernel;
      pthread_mutex_init(&entry->lock, NULL);
      entry->name = malloc(name_size);
      entry->params = calloc(count > 0 ? count : 1, sizeof *entry->params);
      entry->arg_index = calloc(count > 0 ? count : 1, sizeof *entry->arg_index);
    }
    if (entry == NULL || entry->name == NULL || entry->params == NULL || entry->arg_index == NULL) {
      if (entry != NULL) {
        kernel_free(entry);
      } else {
        clReleaseKernel(kernel);
      }
      pthread_mutex_unlock(&p->lock);
      return ocl_fail(TB_ERROR_OUT_OF_MEMORY, "programs.get_kernel: out of host memory");
    }
    memcpy(entry->name, name, name_size);
    status = err == CL_SUCCESS ? describe(ctx, p->device, entry, count)
                               : ocl_check(ctx, p->device, err, "clGetKernelInfo");
    if (status == TB_ERROR_NOT_SUPPORTED) {
      status = ocl_fail(TB_ERROR_INTERNAL,
                        "programs.get_kernel: the driver keeps no argument information of '%s' "
                        "(built with -cl-kernel-arg-info)",
                        name);
    }
    if (status != TB_OK) {
      kernel_free(entry);
      pthread_mutex_unlock(&p->lock);
      return status;
    }
    size_t group = 1;
    clGetKernelWorkGroupInfo(kernel, ctx->devices[p->device].id, CL_KERNEL_WORK_GROUP_SIZE,
                             sizeof group, &group, NULL);
    entry->info = (tb_program_kernel_info){sizeof(tb_program_kernel_info), entry->info.param_count,
                                           entry->params, group > 0 ? group : 1};
    entry->next = p->kernels;
    p->kernels = entry;
  }
  pthread_mutex_unlock(&p->lock);
  size_t size = info->struct_size < sizeof entry->info ? info->struct_size : sizeof entry->info;
  if (size > sizeof info->struct_size) {
    memcpy((char *)info + sizeof info->struct_size,
           (const char *)&entry->info + sizeof info->struct_size, size - sizeof info->struct_size);
  }
  *out = (tb_program_kernel)entry;
  return TB_OK;
}

/* Sets OpenCL argument `index` of `entry`, the launch's argument `shown`, to the device memory
 * at `ptr` (NULL allowed); `*sub` receives a sub-buffer the caller releases after the launch. */
static tb_status set_pointer(tb_context ctx, int32_t device, program_kernel *entry, cl_uint index,
                             size_t shown, void *ptr, cl_mem *sub) {
  cl_int err;
  if (ptr == NULL) {
    err = ctx->mode == OCL_MEMORY_SVM ? clSetKernelArgSVMPointer(entry->kernel, index, NULL)
                                      : clSetKernelArg(entry->kernel, index, sizeof(cl_mem), NULL);
    return ocl_check(ctx, device, err, "clSetKernelArg");
  }
  ocl_place place;
  char what[48];
  snprintf(what, sizeof what, "argument %zu", shown);
  tb_status status = ocl_place_of(ctx, device, ptr, 1, what, &place);
  if (status != TB_OK) return status;
  if (ctx->mode == OCL_MEMORY_SVM) {
    err = clSetKernelArgSVMPointer(entry->kernel, index, ptr);
    return ocl_check(ctx, device, err, "clSetKernelArgSVMPointer");
  }
  cl_mem mem = place.mem;
  if (place.offset != 0) {
    cl_uint align_bits = 0;
    clGetDeviceInfo(ctx->devices[device].id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits,
                    &align_bits, NULL);
    size_t align = align_bits >= 8 ? align_bits / 8 : 1;
    if (place.offset % align != 0) {
      return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                      "argument %zu points %zu bytes into its buffer, which ocl:%d (buffer mode) "
                      "can pass only at multiples of %zu bytes",
                      shown, place.offset, (int)device, align);
    }
    size_t total = 0;
    clGetMemObjectInfo(place.mem, CL_MEM_SIZE, sizeof total, &total, NULL);
    cl_buffer_region region = {place.offset, total - place.offset};
    mem = clCreateSubBuffer(place.mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region,
                            &err);
    if (err != CL_SUCCESS) return ocl_check(ctx, device, err, "clCreateSubBuffer");
    *sub = mem;
  }
  err = clSetKernelArg(entry->kernel, index, sizeof(cl_mem), &mem);
  return ocl_check(ctx, device, err, "clSetKernelArg");
}

static tb_status ext_launch(tb_context ctx, tb_stream stream_handle, tb_program_kernel kernel,
                            const tb_launch_dims *dims, const void *const *args, size_t count) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  ocl_stream *stream = ocl_stream_of(stream_handle);
  program_kernel *entry = (program_kernel *)kernel;
  if (stream == NULL || entry == NULL || dims == NULL || (count > 0 && args == NULL)) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "programs.launch: %s is NULL",
                    stream == NULL  ? "stream"
                    : entry == NULL ? "kernel"
                    : dims == NULL  ? "dims"
                                    : "args");
  }
  int32_t device = stream->device;
  status = ocl_fault_status(ctx, device);
  if (status != TB_OK) return status;
  if (count != entry->info.param_count) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "programs.launch: kernel '%s' takes %u arguments, the launch gave %zu",
                    entry->name, (unsigned)entry->info.param_count, count);
  }
  if (dims->dims < 1 || dims->dims > 3) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                    "programs.launch: kernel '%s' launched in %u dimensions (1 to 3)", entry->name,
                    (unsigned)dims->dims);
  }
  size_t global[3], local[3];
  bool has_local = false;
  uint64_t group = 1;
  for (uint32_t d = 0; d < dims->dims; d++) {
    if (dims->global[d] == 0) return TB_OK; /* nothing to run */
    global[d] = (size_t)dims->global[d];
    local[d] = (size_t)dims->local[d];
    has_local = has_local || local[d] != 0;
    group *= local[d] != 0 ? local[d] : 1;
  }
  if (has_local) {
    for (uint32_t d = 0; d < dims->dims; d++) {
      if (local[d] == 0) {
        return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                        "programs.launch: kernel '%s': a local size of 0 in dimension %u beside "
                        "others given",
                        entry->name, (unsigned)d);
      }
      global[d] = (global[d] + local[d] - 1) / local[d] * local[d];
    }
    if (group > entry->info.max_group_size) {
      return ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                      "programs.launch: kernel '%s': work groups of %llu items, more than its %llu "
                      "on ocl:%d",
                      entry->name, (unsigned long long)group,
                      (unsigned long long)entry->info.max_group_size, (int)device);
    }
  }
  /* Sub-buffers of this launch (buffer mode, pointers inside buffers), released once the
   * launch is queued (the command keeps what it uses). */
  cl_mem inline_subs[16];
  cl_mem *subs = inline_subs;
  if (ctx->mode != OCL_MEMORY_SVM && count > sizeof inline_subs / sizeof inline_subs[0]) {
    subs = calloc(count, sizeof *subs);
    if (subs == NULL)
      return ocl_fail(TB_ERROR_OUT_OF_MEMORY, "programs.launch: out of host memory");
  }
  size_t sub_count = 0;
  pthread_mutex_lock(&entry->lock);
  for (size_t i = 0; i < count && status == TB_OK; i++) {
    const tb_program_param *param = &entry->params[i];
    if (args[i] == NULL) {
      status = ocl_fail(TB_ERROR_INVALID_ARGUMENT,
                        "programs.launch: kernel '%s': argument %zu is NULL", entry->name, i);
    } else if (param->kind == TB_PARAM_POINTER) {
      cl_mem sub = NULL;
      status =
          set_pointer(ctx, device, entry, entry->arg_index[i], i, *(void *const *)args[i], &sub);
      if (sub != NULL) subs[sub_count++] = sub;
    } else {
      cl_int err = clSetKernelArg(entry->kernel, entry->arg_index[i], param->size, args[i]);
      status = ocl_check(ctx, device, err, "clSetKernelArg");
    }
  }
  if (status == TB_OK && entry->fault_record >= 0) {
    /* The device's fault record, read at the next synchronizing call (error.c). */
    ocl_device *dev = &ctx->devices[device];
    cl_int err =
        clSetKernelArg(entry->kernel, (cl_uint)entry->fault_record, sizeof(cl_mem), &dev->fault);
    if (err == CL_SUCCESS) {
      err = clSetKernelArg(entry->kernel, (cl_uint)entry->fault_site, sizeof entry->site,
                           &entry->site);
    }
    status = ocl_check(ctx, device, err, "clSetKernelArg (TB_FAULT_PARAM)");
    if (status == TB_OK) atomic_fetch_add(&dev->fault_launches, 1);
  }
  if (status == TB_OK) {
    ocl_command command = {.kind = OCL_COMMAND_KERNEL,
                           .what = entry->name,
                           .kernel = entry->kernel,
                           .dims = dims->dims,
                           .has_local = has_local,
                           .keep = subs,
                           .keep_count = sub_count};
    for (cl_uint d = 0; d < dims->dims; d++) {
      command.global[d] = global[d];
      command.local[d] = local[d];
    }
    status = ocl_submit(ctx, stream, &command);
  }
  pthread_mutex_unlock(&entry->lock);
  for (size_t i = 0; i < sub_count; i++) clReleaseMemObject(subs[i]);
  if (subs != inline_subs) free(subs);
  return status;
}

static tb_status ext_release(tb_context ctx, tb_program handle) {
  (void)ctx;
  program *p = program_of(handle);
  if (p == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "programs.release: program is NULL or invalid");
  }
  /* Queued launches hold their own references to the kernels and the program (OpenCL). */
  program_free(p);
  return TB_OK;
}

static const tb_programs_extension k_programs = {
    .base = {sizeof(tb_programs_extension), TB_EXTENSION_PROGRAMS, NULL},
    .languages = TB_PROGRAM_LANGUAGE_BIT(TB_PROGRAM_OPENCL_C),
    .build = ext_build,
    .get_kernel = ext_get_kernel,
    .launch = ext_launch,
    .release = ext_release,
};

const tb_extension_base *ocl_programs_extension(void) { return &k_programs.base; }
