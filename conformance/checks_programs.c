/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks of a vendor's device programs built at run time (vendor.h, ABI 2.6,
 * TB_EXTENSION_PROGRAMS, @ref tb_programs), with OpenCL C sources (the one language the suite
 * writes; a vendor that declares none it knows is skipped, saying which it declares):
 *
 * - a source with an error fails to build with TB_ERROR_INVALID_ARGUMENT and the compiler's
 *   log (the message names the line's undeclared identifier);
 * - get_kernel refuses a name the program lacks, and describes each parameter of a kernel:
 *   pointers, and scalars of 4 and 8 bytes, signed, unsigned and floating;
 * - a launch over an odd number of work items, in groups the vendor chooses and in groups of
 *   32 (which the last one overhangs), reads and writes device memory 4 KiB and 12 KiB inside
 *   an allocation and takes its scalars by value: every element is compared on the host;
 * - a launch queues in stream order: after a copy on the stream, before a copy back;
 * - launch refuses a wrong argument count, 0 or 4 dimensions and a pointer that is no device
 *   memory, each with a message; release frees the program;
 * - (ABI 2.7) a kernel that declares TB_FAULT_PARAM and reports an index out of range with
 *   TB_FAULT_INDEX faults the device: the next synchronize fails naming the kernel and the
 *   index, device.reset clears it, and get_kernel describes none of TB_FAULT_PARAM's
 *   parameters.
 * Skipped when the vendor has no such extension.  Everything runs on device 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

#define FIND_PROGRAMS()                                                                           \
  do {                                                                                            \
    char error_[512];                                                                             \
    programs = tb_loader_programs(ctx->vendor, error_, sizeof error_);                            \
    if (programs == NULL) {                                                                       \
      if (error_[0] != '\0') return tbc_fail(ctx, "%s", error_);                                  \
      return tbc_skip(ctx, "the vendor has no device programs (TB_EXTENSION_PROGRAMS, ABI 2.6)"); \
    }                                                                                             \
    if (!(programs->languages & TB_PROGRAM_LANGUAGE_BIT(TB_PROGRAM_OPENCL_C))) {                  \
      return tbc_skip(ctx,                                                                        \
                      "the vendor builds no language the suite writes (languages 0x%llx; the "    \
                      "suite writes OpenCL C)",                                                   \
                      (unsigned long long)programs->languages);                                   \
    }                                                                                             \
    int32_t devices_ = tbc_device_count(ctx);                                                     \
    if (devices_ < 0) return TB_CHECK_FAIL;                                                       \
    if (devices_ == 0) return tbc_skip(ctx, "no devices");                                        \
  } while (0)

/* y[i] = a * x[i] + b + (float)k, for i < n; x and y are device memory. */
static const char k_axpb[] =
    "__kernel void axpb(__global const float *x, __global float *y, float a, double b, int k,\n"
    "                   ulong n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) y[i] = a * x[i] + (float)b + (float)k;\n"
    "}\n"
    "__kernel void twice(__global float *y, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) y[i] = 2.0f * y[i];\n"
    "}\n";

/* Doubles with cl_khr_fp64 only; the vendor's prelude enables it where the device has it.  The
 * suite builds the double-free variant when the device lacks it. */
static const char k_axpb_float[] =
    "__kernel void axpb(__global const float *x, __global float *y, float a, float b, int k,\n"
    "                   ulong n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) y[i] = a * x[i] + b + (float)k;\n"
    "}\n"
    "__kernel void twice(__global float *y, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) y[i] = 2.0f * y[i];\n"
    "}\n";

/* Builds the axpb program, the double variant when the device has float64. */
static tb_status build_axpb(tb_check_context *ctx, const tb_programs_extension *programs,
                            tb_program *program, bool *fp64) {
  const tb_vendor_handle *v = ctx->vendor;
  tb_device_properties properties;
  memset(&properties, 0, sizeof properties);
  properties.struct_size = sizeof properties;
  tb_status status = v->device.get_properties(v->context, 0, &properties);
  if (status != TB_OK) return status;
  *fp64 = (properties.dtypes & TB_DTYPE_BIT(TB_DTYPE_FLOAT64)) != 0;
  const char *source = *fp64 ? k_axpb : k_axpb_float;
  return programs->build(v->context, 0, TB_PROGRAM_OPENCL_C, source, strlen(source), "", program);
}

static tb_check_outcome check_build_error(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_programs_extension *programs = NULL;
  tb_program program = NULL;
  static const char broken[] =
      "__kernel void broken(__global float *y) { y[0] = tb_undeclared_name; }\n";
  FIND_PROGRAMS();
  EXPECT_STATUS(
      programs->build(v->context, 0, TB_PROGRAM_OPENCL_C, broken, strlen(broken), NULL, &program),
      TB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(program == NULL, "build of a broken source set the program");
  const char *message = v->last_error(v->context);
  EXPECT_TRUE(strstr(message, "tb_undeclared_name") != NULL,
              "a build error's message does not carry the compiler's log (it names no "
              "'tb_undeclared_name'): %s",
              message);
  /* A language the vendor does not declare. */
  EXPECT_STATUS(programs->build(v->context, 0, TB_PROGRAM_VENDOR + 77, broken, strlen(broken), NULL,
                                &program),
                TB_ERROR_INVALID_ARGUMENT);
  outcome = TB_CHECK_PASS;
done:
  if (program != NULL) programs->release(v->context, program);
  return outcome;
}

static tb_check_outcome check_kernels(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_programs_extension *programs = NULL;
  tb_program program = NULL;
  tb_program_kernel kernel = NULL, again = NULL;
  tb_program_kernel_info info, second;
  bool fp64 = false;
  FIND_PROGRAMS();
  EXPECT_OK(build_axpb(ctx, programs, &program, &fp64));
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  EXPECT_STATUS(programs->get_kernel(v->context, program, "no_such_kernel", &kernel, &info),
                TB_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(strstr(v->last_error(v->context), "no_such_kernel") != NULL,
              "get_kernel of a missing kernel does not name it: %s", v->last_error(v->context));
  EXPECT_OK(programs->get_kernel(v->context, program, "axpb", &kernel, &info));
  EXPECT_TRUE(info.param_count == 6, "axpb takes 6 parameters, get_kernel says %u",
              (unsigned)info.param_count);
  const tb_program_param expected[] = {{TB_PARAM_POINTER, sizeof(void *)},
                                       {TB_PARAM_POINTER, sizeof(void *)},
                                       {TB_PARAM_FLOAT, 4},
                                       {TB_PARAM_FLOAT, fp64 ? 8u : 4u},
                                       {TB_PARAM_INT, 4},
                                       {TB_PARAM_UINT, 8}};
  for (uint32_t i = 0; i < 6; i++) {
    EXPECT_TRUE(info.params[i].kind == expected[i].kind && info.params[i].size == expected[i].size,
                "axpb's parameter %u is kind %d of %u bytes, expected kind %d of %u bytes",
                (unsigned)i, (int)info.params[i].kind, (unsigned)info.params[i].size,
                (int)expected[i].kind, (unsigned)expected[i].size);
  }
  EXPECT_TRUE(info.max_group_size >= 1, "get_kernel says groups of at most 0 work items");
  /* Asking again gives the same kernel. */
  memset(&second, 0, sizeof second);
  second.struct_size = sizeof second;
  EXPECT_OK(programs->get_kernel(v->context, program, "axpb", &again, &second));
  EXPECT_TRUE(again == kernel && second.param_count == 6,
              "a second get_kernel of axpb gave another kernel or description");
  outcome = TB_CHECK_PASS;
done:
  if (program != NULL) EXPECT_OK(programs->release(v->context, program));
  return outcome;
}

/* Launches axpb and twice on a stream over N items at an offset inside an allocation. */
static tb_check_outcome check_launch(tb_check_context *ctx) {
  /* N odd, so the last group overhangs; x and y 4096 bytes apart and into the allocation, an
   * alignment every device's buffers allow (vendor.h: a vendor may refuse pointers inside an
   * allocation at smaller multiples). */
  enum { N = 1001, OFFSET = 1024, STRIDE = 1024 };
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_programs_extension *programs = NULL;
  tb_program program = NULL;
  tb_program_kernel axpb = NULL, twice = NULL;
  tb_program_kernel_info info;
  tb_stream stream = NULL;
  void *memory = NULL;
  float *host_x = NULL, *host_y = NULL;
  bool fp64 = false;
  FIND_PROGRAMS();
  host_x = malloc(N * sizeof *host_x);
  host_y = malloc(N * sizeof *host_y);
  EXPECT_TRUE(host_x != NULL && host_y != NULL, "out of host memory");
  for (int i = 0; i < N; i++) host_x[i] = (float)(i % 97) - 48.0f;
  EXPECT_OK(build_axpb(ctx, programs, &program, &fp64));
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  EXPECT_OK(programs->get_kernel(v->context, program, "axpb", &axpb, &info));
  EXPECT_OK(programs->get_kernel(v->context, program, "twice", &twice, &info));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  /* x at OFFSET floats into the allocation, y after it: neither at an allocation's start. */
  size_t bytes = (OFFSET + 2 * STRIDE + N) * sizeof(float);
  EXPECT_OK(v->memory.device_malloc(v->context, 0, bytes, &memory));
  float *x = (float *)memory + OFFSET, *y = x + 2 * STRIDE;
  for (int round = 0; round < 2; round++) {
    EXPECT_OK(v->memory.copy_h2d_async(v->context, stream, x, host_x, N * sizeof(float)));
    float a = 1.5f;
    double b = -0.25;
    float b_float = -0.25f;
    int32_t k = 3 + round;
    uint64_t n = N;
    uint32_t n32 = N;
    const void *args[] = {&x, &y, &a, fp64 ? (const void *)&b : (const void *)&b_float, &k, &n};
    tb_launch_dims dims = {1, {N, 1, 1}, {round == 0 ? 0u : 32u, 0, 0}};
    EXPECT_OK(programs->launch(v->context, stream, axpb, &dims, args, 6));
    const void *twice_args[] = {&y, &n32};
    EXPECT_OK(programs->launch(v->context, stream, twice, &dims, twice_args, 2));
    EXPECT_OK(v->memory.copy_d2h_async(v->context, stream, host_y, y, N * sizeof(float)));
    EXPECT_OK(v->stream.synchronize(v->context, stream));
    for (int i = 0; i < N; i++) {
      float want = 2.0f * (1.5f * host_x[i] - 0.25f + (float)k);
      EXPECT_TRUE(host_y[i] == want, "launch %d (groups of %s): y[%d] is %g, expected %g", round,
                  round == 0 ? "the vendor's choice" : "32", i, (double)host_y[i], (double)want);
    }
  }
  outcome = TB_CHECK_PASS;
done:
  if (stream != NULL) v->stream.synchronize(v->context, stream);
  if (memory != NULL) v->memory.device_free(v->context, 0, memory);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (program != NULL) programs->release(v->context, program);
  free(host_x);
  free(host_y);
  return outcome;
}

static tb_check_outcome check_refusals(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_programs_extension *programs = NULL;
  tb_program program = NULL;
  tb_program_kernel twice = NULL;
  tb_program_kernel_info info;
  tb_stream stream = NULL;
  void *memory = NULL;
  bool fp64 = false;
  FIND_PROGRAMS();
  EXPECT_OK(build_axpb(ctx, programs, &program, &fp64));
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  EXPECT_OK(programs->get_kernel(v->context, program, "twice", &twice, &info));
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, 256, &memory));
  uint32_t n = 16;
  const void *args[] = {&memory, &n};
  tb_launch_dims dims = {1, {16, 1, 1}, {0, 0, 0}};
  EXPECT_STATUS(programs->launch(v->context, stream, twice, &dims, args, 1),
                TB_ERROR_INVALID_ARGUMENT);
  tb_launch_dims none = {0, {16, 1, 1}, {0, 0, 0}}, four = {4, {16, 1, 1}, {0, 0, 0}};
  EXPECT_STATUS(programs->launch(v->context, stream, twice, &none, args, 2),
                TB_ERROR_INVALID_ARGUMENT);
  EXPECT_STATUS(programs->launch(v->context, stream, twice, &four, args, 2),
                TB_ERROR_INVALID_ARGUMENT);
  /* A host address is no device memory (a vendor whose device pointers are host addresses
   * may take it; then the check does not apply). */
  float host[16];
  void *host_ptr = host;
  const void *host_args[] = {&host_ptr, &n};
  tb_device_properties properties;
  memset(&properties, 0, sizeof properties);
  properties.struct_size = sizeof properties;
  EXPECT_OK(v->device.get_properties(v->context, 0, &properties));
  if (!(properties.capabilities & TB_DEVICE_HOST_ACCESS)) {
    EXPECT_STATUS(programs->launch(v->context, stream, twice, &dims, host_args, 2),
                  TB_ERROR_INVALID_ARGUMENT);
  }
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_OK(programs->release(v->context, program));
  program = NULL;
  outcome = TB_CHECK_PASS;
done:
  if (stream != NULL) v->stream.synchronize(v->context, stream);
  if (memory != NULL) v->memory.device_free(v->context, 0, memory);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (program != NULL) programs->release(v->context, program);
  return outcome;
}

/* A gather whose index may lie out of range, reported through TB_FAULT_PARAM (ABI 2.7). */
static const char k_gather_fault[] =
    "#ifndef TB_FAULT_PARAM\n"
    "#error the vendor defines no TB_FAULT_PARAM\n"
    "#endif\n"
    "__kernel void gather_fault(__global const float *x, __global float *y, long n, long index,\n"
    "                           TB_FAULT_PARAM) {\n"
    "  if (index < 0 || index >= n) {\n"
    "    TB_FAULT_INDEX(index, n);\n"
    "    return;\n"
    "  }\n"
    "  y[get_global_id(0)] = x[index];\n"
    "}\n";

/* An index out of range in a program kernel faults the device, naming the kernel. */
static tb_check_outcome check_faults(tb_check_context *ctx) {
  tb_check_outcome outcome = TB_CHECK_FAIL;
  const tb_vendor_handle *v = ctx->vendor;
  const tb_programs_extension *programs = NULL;
  tb_program program = NULL;
  tb_program_kernel kernel = NULL;
  tb_program_kernel_info info;
  tb_stream stream = NULL;
  void *memory = NULL;
  FIND_PROGRAMS();
  if (v->abi_major == 2 && v->abi_minor < 7) {
    return tbc_skip(ctx, "the vendor was built against ABI 2.%u (faults from programs: 2.7)",
                    (unsigned)v->abi_minor);
  }
  if (v->device.reset == NULL) return tbc_skip(ctx, "the vendor has no device.reset");
  EXPECT_OK(programs->build(v->context, 0, TB_PROGRAM_OPENCL_C, k_gather_fault,
                            strlen(k_gather_fault), "", &program));
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  EXPECT_OK(programs->get_kernel(v->context, program, "gather_fault", &kernel, &info));
  EXPECT_TRUE(info.param_count == 4,
              "get_kernel described %u parameters of gather_fault; expected 4 (TB_FAULT_PARAM's "
              "are the vendor's, not described)",
              (unsigned)info.param_count);
  EXPECT_OK(v->stream.create(v->context, 0, 0, &stream));
  EXPECT_OK(v->memory.device_malloc(v->context, 0, 64 * sizeof(float), &memory));
  float host[64];
  for (int i = 0; i < 64; i++) host[i] = (float)i;
  EXPECT_OK(v->memory.copy_h2d(v->context, 0, memory, host, sizeof host));
  float *x = memory, *y = (float *)memory + 32;
  int64_t n = 32, index = 5;
  const void *args[] = {&x, &y, &n, &index};
  tb_launch_dims dims = {1, {1, 1, 1}, {0, 0, 0}};
  EXPECT_OK(programs->launch(v->context, stream, kernel, &dims, args, 4));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  float got = -1.0f;
  EXPECT_OK(v->memory.copy_d2h(v->context, 0, &got, y, sizeof got));
  EXPECT_TRUE(got == 5.0f, "gather_fault with index 5 wrote %g, expected 5", (double)got);
  index = 4099;
  EXPECT_OK(programs->launch(v->context, stream, kernel, &dims, args, 4));
  EXPECT_STATUS(v->stream.synchronize(v->context, stream), TB_ERROR_DEVICE_FAULT);
  const char *message = v->last_error(v->context);
  EXPECT_TRUE(
      message != NULL && strstr(message, "gather_fault") != NULL && strstr(message, "4099") != NULL,
      "the fault's message names neither the kernel (gather_fault) nor the index "
      "(4099): '%s'",
      message != NULL ? message : "(null)");
  EXPECT_STATUS(v->device.synchronize(v->context, 0), TB_ERROR_DEVICE_FAULT); /* sticky */
  EXPECT_OK(v->device.reset(v->context, 0));
  index = 7;
  EXPECT_OK(programs->launch(v->context, stream, kernel, &dims, args, 4));
  EXPECT_OK(v->memory.copy_d2h_async(v->context, stream, &got, y, sizeof got));
  EXPECT_OK(v->stream.synchronize(v->context, stream));
  EXPECT_TRUE(got == 7.0f, "after reset, gather_fault with index 7 wrote %g", (double)got);
  outcome = TB_CHECK_PASS;
done:
  if (stream != NULL) v->stream.synchronize(v->context, stream);
  v->device.reset(v->context, 0);
  if (memory != NULL) v->memory.device_free(v->context, 0, memory);
  if (stream != NULL) v->stream.destroy(v->context, stream);
  if (program != NULL) programs->release(v->context, program);
  return outcome;
}

const tb_check tbc_program_checks[] = {
    {"programs", "build_error",
     "a source that does not compile, and a language the vendor does not declare, fail to "
     "build with TB_ERROR_INVALID_ARGUMENT; the message carries the compiler's log",
     check_build_error},
    {"programs", "kernels",
     "get_kernel refuses a missing name, naming it, and describes pointer, float, double, int "
     "and ulong parameters; asking twice gives the same kernel",
     check_kernels},
    {"programs", "launch",
     "two kernels launched in stream order between copies, over an odd number of work items in "
     "groups the vendor chooses and in groups of 32, read and write memory inside an "
     "allocation and take scalars by value",
     check_launch},
    {"programs", "refusals",
     "launch refuses a wrong argument count, 0 or 4 dimensions and a host address, each with a "
     "message; release frees the program",
     check_refusals},
    {"programs", "faults",
     "a kernel declaring TB_FAULT_PARAM (ABI 2.7) that reports an index out of range with "
     "TB_FAULT_INDEX faults the device, naming the kernel and the index, until reset; the "
     "vendor's parameters are not described",
     check_faults},
};
const size_t tbc_program_check_count = sizeof tbc_program_checks / sizeof tbc_program_checks[0];
