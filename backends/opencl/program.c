/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The opencl vendor's programs: OpenCL C sources compiled per device on first use, kept for
 * the context's life, and cached on disk as program binaries.
 *
 * Every source is compiled after the prelude below (the fault record kernels write, and the
 * OCL_PTR convention for device memory parameters), with the options the device allows
 * (-DTB_FP64 where it has cl_khr_fp64).  A binary is cached under a key made of everything
 * that decides it -- platform, device name, device and driver versions, options, prelude and
 * source -- so that a new driver or an edited kernel compiles afresh; a cached binary the
 * driver refuses is deleted and the source compiled.  Files are written to a temporary name
 * and renamed, so that processes sharing the cache never read half a file.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opencl.h"

/* What every program starts with.  Device memory parameters come in pairs (OCL_PTR): the
 * pointer (an SVM pointer, or the buffer) and a byte offset into it (0 in SVM mode, the
 * offset of the view in buffer mode); OCL_AT gives the typed pointer. */
static const char k_prelude[] =
    "#ifdef TB_FP64\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#endif\n"
    "#define TB_FAULT_INJECTED 0u\n"
    "#define TB_FAULT_INDEX 1u\n"
    "#define OCL_PTR(type, name) __global type *name##_base, ulong name##_offset\n"
    "#define OCL_AT(type, name) ((__global type *)((__global char *)name##_base + "
    "name##_offset))\n"
    /* erf of a float: PoCL's is a scalar call per element (190 us over 16k floats, where
     * exp takes 15).  The Maclaurin series below 1, 1 - erfc above with Numerical Recipes'
     * Chebyshev fit of erfc (relative error < 1.2e-7): within 1.1e-7 of erf everywhere, and
     * vectorized.  tb_erf takes either type; doubles keep the driver's erf. */
    "inline float tb_erf_float(float x) {\n"
    "  float z = fabs(x), z2 = z * z;\n"
    "  float series = fma(z, 1.283791671e-01f + z2 * (-3.761263890e-01f + z2 * (1.128379167e-01f"
    " + z2 * (-2.686617065e-02f + z2 * (5.223977625e-03f + z2 * (-8.548327023e-04f + z2 * "
    "(1.205533298e-04f + z2 * (-1.492565036e-05f + z2 * (1.646211437e-06f + z2 * "
    "(-1.636584469e-07f + z2 * 1.480719282e-08f))))))))), z);\n"
    "  float t = 1.0f / (1.0f + 0.5f * z);\n"
    "  float erfc = t * exp(-z2 - 1.26551223f + t * (1.00002368f + t * (0.37409196f + t * "
    "(0.09678418f + t * (-0.18628806f + t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f"
    " + t * (-0.82215223f + t * 0.17087277f)))))))));\n"
    "  return copysign(z < 1.0f ? series : 1.0f - erfc, x);\n"
    "}\n"
    "#define tb_erf(x) (sizeof(x) == sizeof(float) ? tb_erf_float((float)(x)) : erf(x))\n"
    /* erfinv: a rational first guess (Matlab's erfinv, as ATen's calc_erfinv) refined by two
     * Newton steps, on erf in the middle and on erfc in the tails (1 - |y| is exact there);
     * floats in double where the device has it (within an ulp), else in float. */
    "#define TB_ERFINV(NAME, T, ERF) inline T NAME(T y) { T ay = fabs(y), x, z; "
    "const T k = (T)1.1283791670955126; "
    "if (!(ay <= (T)1)) return (T)NAN; if (ay == (T)1) return copysign((T)INFINITY, y); "
    "if (ay <= (T)0.7) { z = y * y; x = y * ((((T)-0.140543331 * z + (T)0.914624893) * z - "
    "(T)1.645349621) * z + (T)0.886226899) / (((((T)0.012229801 * z - (T)0.329097515) * z + "
    "(T)1.442710462) * z - (T)2.118377725) * z + (T)1); "
    "x -= (ERF(x) - y) / (k * exp(-x * x)); x -= (ERF(x) - y) / (k * exp(-x * x)); return x; } "
    "T q = (T)1 - ay; z = sqrt(-log(q / (T)2)); "
    "x = ((((T)1.641345311 * z + (T)3.429567803) * z - (T)1.624906493) * z - (T)1.970840454) / "
    "(((T)1.6370678 * z + (T)3.5438892) * z + (T)1); "
    "x += (erfc(x) - q) / (k * exp(-x * x)); x += (erfc(x) - q) / (k * exp(-x * x)); "
    "return copysign(x, y); }\n"
    "#ifdef TB_FP64\n"
    "TB_ERFINV(tb_erfinv_double, double, erf)\n"
    "inline float tb_erfinv_float(float y) { return (float)tb_erfinv_double((double)y); }\n"
    "#define tb_erfinv(x) (sizeof(x) == sizeof(float) ? tb_erfinv_float((float)(x)) : "
    "tb_erfinv_double(x))\n"
    "#else\n"
    "TB_ERFINV(tb_erfinv_float, float, tb_erf_float)\n"
    "#define tb_erfinv(x) tb_erfinv_float(x)\n"
    "#endif\n"
    "void tb_report_fault(__global uint *fault, uint op, uint site, long a, long b) {\n"
    "  if (atomic_cmpxchg((volatile __global uint *)fault, 0u, site + 1u) == 0u) {\n"
    "    __global long *values = (__global long *)(fault + 2);\n"
    "    fault[1] = op;\n"
    "    values[0] = a;\n"
    "    values[1] = b;\n"
    "  }\n"
    "}\n";

/* What a program built through TB_EXTENSION_PROGRAMS (device_programs.c: torch.compile's, a
 * user's) starts with: doubles enabled where the device has them, and of the vendor's names
 * only the two vendor.h documents for OpenCL C (TB_FAULT_PARAM, TB_FAULT_INDEX): a kernel that
 * declares TB_FAULT_PARAM writes the device's fault record as the vendor's own kernels do
 * (OCL_FAULT_INDEX; its site is the kernel's name, which the launch binds). */
static const char k_user_prelude[] =
    "#ifdef TB_FP64\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "#endif\n"
    "#define TB_FAULT_PARAM __global uint *tb_fault_record, uint tb_fault_site\n"
    "#define TB_FAULT_INDEX(index, size)                                                  \\\n"
    "  do {                                                                               \\\n"
    "    if (atomic_cmpxchg((volatile __global uint *)tb_fault_record, 0u, 2u) == 0u) {   \\\n"
    "      tb_fault_record[1] = tb_fault_site;                                            \\\n"
    "      ((__global long *)(tb_fault_record + 2))[0] = (long)(index);                   \\\n"
    "      ((__global long *)(tb_fault_record + 2))[1] = (long)(size);                    \\\n"
    "    }                                                                                \\\n"
    "  } while (0)\n";
_Static_assert(OCL_FAULT_INDEX + 1 == 2, "k_user_prelude writes OCL_FAULT_INDEX's code, 2");

typedef struct ocl_kernel_entry {
  const char *name;
  ocl_kernel kernel;
  struct ocl_kernel_entry *next;
} ocl_kernel_entry;

struct ocl_program {
  char *key;
  const char *body; /* the last source, a kernel file's static text: with key, the identity */
  uint64_t hash;
  int32_t device;
  cl_program program;
  ocl_kernel_entry *kernels;
  struct ocl_program *next;
};

const char *ocl_cache_dir(tb_context ctx) { return ctx->cache_dir; }

/* ---- the disk cache ---- */

static uint64_t fnv1a(uint64_t hash, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
    hash = (hash ^ *p) * 0x100000001b3ull;
  }
  return (hash ^ 0xff) * 0x100000001b3ull; /* separates consecutive strings */
}

static void cache_path(tb_context ctx, const ocl_device *dev, const char *options,
                       const char *prelude, const char *const *sources, size_t count, char *path,
                       size_t size) {
  const char *parts[] = {ctx->platform_name,  dev->name, dev->version,
                         dev->driver_version, options,   prelude};
  const size_t fixed = sizeof parts / sizeof parts[0];
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  for (size_t i = 0; i < fixed + count; i++) {
    const char *part = i < fixed ? parts[i] : sources[i - fixed];
    a = fnv1a(a, part);
    b = fnv1a(b ^ (uint64_t)(i + 1), part);
  }
  snprintf(path, size, "%s/%016llx%016llx.bin", ctx->cache_dir, (unsigned long long)a,
           (unsigned long long)b);
}

static void make_dirs(const char *dir) {
  char path[1024];
  snprintf(path, sizeof path, "%s", dir);
  for (char *p = path + 1; *p != '\0'; p++) {
    if (*p != '/') continue;
    *p = '\0';
    (void)mkdir(path, 0755);
    *p = '/';
  }
  (void)mkdir(path, 0755);
}

/* The cached binary at `path`, or NULL. */
static unsigned char *load_binary(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (file == NULL) return NULL;
  unsigned char *data = NULL;
  long length = -1;
  if (fseek(file, 0, SEEK_END) == 0) length = ftell(file);
  if (length > 0 && fseek(file, 0, SEEK_SET) == 0 && (data = malloc((size_t)length)) != NULL &&
      fread(data, 1, (size_t)length, file) != (size_t)length) {
    free(data);
    data = NULL;
  }
  fclose(file);
  *size = length > 0 ? (size_t)length : 0;
  return data;
}

static void store_binary(tb_context ctx, cl_program program, const char *path) {
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
      size == 0) {
    return;
  }
  unsigned char *data = malloc(size);
  if (data == NULL) return;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof data, &data, NULL) == CL_SUCCESS) {
    make_dirs(ctx->cache_dir);
    char temporary[1100];
    int length = snprintf(temporary, sizeof temporary, "%s.%ld.tmp", path, (long)getpid());
    /* A name too long for the buffer is not cached (a truncated name could be another's). */
    FILE *file = length > 0 && (size_t)length < sizeof temporary ? fopen(temporary, "wb") : NULL;
    if (file != NULL) {
      bool written = fwrite(data, 1, size, file) == size;
      written = fclose(file) == 0 && written;
      if (!written || rename(temporary, path) != 0) remove(temporary);
    }
  }
  free(data);
}

/* ---- building ---- */

/* The build log of `program` for `dev`, into `log`. */
static void build_log(cl_program program, const ocl_device *dev, char *log, size_t size) {
  log[0] = '\0';
  size_t length = 0;
  clGetProgramBuildInfo(program, dev->id, CL_PROGRAM_BUILD_LOG, size - 1, log, &length);
  log[size - 1] = '\0';
}

tb_status ocl_program_build(tb_context ctx, int32_t device, const char *const *sources,
                            size_t count, const char *extra, bool user, cl_program *out) {
  const ocl_device *dev = &ctx->devices[device];
  const char *prelude = user ? k_user_prelude : k_prelude;
  char options[1024];
  int written = snprintf(options, sizeof options, "%s%s%s",
                         dev->fp64 ? "-cl-std=CL1.2 -DTB_FP64" : "-cl-std=CL1.2",
                         extra != NULL && extra[0] != '\0' ? " " : "", extra != NULL ? extra : "");
  if (written < 0 || (size_t)written >= sizeof options) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "build options longer than %zu bytes",
                    sizeof options - 40);
  }
  char path[1200] = "";
  cl_int err = CL_SUCCESS;
  if (ctx->cache_dir[0] != '\0') {
    cache_path(ctx, dev, options, prelude, sources, count, path, sizeof path);
    size_t size = 0;
    unsigned char *binary = load_binary(path, &size);
    if (binary != NULL) {
      const unsigned char *binaries[] = {binary};
      cl_int binary_status = CL_SUCCESS;
      cl_program program = clCreateProgramWithBinary(ctx->context, 1, &dev->id, &size, binaries,
                                                     &binary_status, &err);
      free(binary);
      if (err == CL_SUCCESS && binary_status == CL_SUCCESS &&
          clBuildProgram(program, 1, &dev->id, options, NULL, NULL) == CL_SUCCESS) {
        *out = program;
        return TB_OK;
      }
      if (err == CL_SUCCESS) clReleaseProgram(program);
      remove(path); /* stale or foreign: compile afresh */
    }
  }
  const char *all[8] = {prelude};
  if (count > 7) return ocl_fail(TB_ERROR_INTERNAL, "a program of more than 7 sources");
  for (size_t k = 0; k < count; k++) all[k + 1] = sources[k];
  cl_program program = clCreateProgramWithSource(ctx->context, (cl_uint)count + 1, all, NULL, &err);
  if (err != CL_SUCCESS) return ocl_check(ctx, device, err, "clCreateProgramWithSource");
  err = clBuildProgram(program, 1, &dev->id, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[3072];
    build_log(program, dev, log, sizeof log);
    clReleaseProgram(program);
    /* A user's source that does not compile is the caller's error; the vendor's own is a bug. */
    tb_status status = err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS
                           ? (user ? TB_ERROR_INVALID_ARGUMENT : TB_ERROR_INTERNAL)
                           : TB_ERROR_UNAVAILABLE;
    return ocl_fail(status, "clBuildProgram failed on ocl:%d (%s) with %s (%d): %s", (int)device,
                    dev->name, ocl_error_name(err), (int)err, log);
  }
  if (path[0] != '\0') store_binary(ctx, program, path);
  *out = program;
  return TB_OK;
}

static uint64_t key_hash(const char *key, int32_t device) {
  return fnv1a(0xcbf29ce484222325ull ^ (uint64_t)(uint32_t)device, key);
}

tb_status ocl_kernel_get(tb_context ctx, int32_t device, const char *key,
                         const char *const *sources, size_t count, const char *name,
                         ocl_kernel **out) {
  uint64_t hash = key_hash(key, device);
  size_t bucket = hash % OCL_PROGRAM_BUCKETS;
  pthread_mutex_lock(&ctx->programs_lock);
  struct ocl_program *program = ctx->programs[bucket];
  const char *body = count > 0 ? sources[count - 1] : NULL;
  while (program != NULL && (program->hash != hash || program->device != device ||
                             program->body != body || strcmp(program->key, key) != 0)) {
    program = program->next;
  }
  tb_status status = TB_OK;
  if (program == NULL) {
    program = calloc(1, sizeof *program);
    size_t key_size = strlen(key) + 1;
    char *key_copy = malloc(key_size);
    if (program == NULL || key_copy == NULL) {
      free(program);
      free(key_copy);
      pthread_mutex_unlock(&ctx->programs_lock);
      return ocl_fail(TB_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    memcpy(key_copy, key, key_size);
    /* Built under the lock: two threads never compile the same program twice. */
    status = ocl_program_build(ctx, device, sources, count, NULL, false, &program->program);
    if (status != TB_OK) {
      free(program);
      free(key_copy);
      pthread_mutex_unlock(&ctx->programs_lock);
      return status;
    }
    program->key = key_copy;
    program->body = body;
    program->hash = hash;
    program->device = device;
    program->next = ctx->programs[bucket];
    ctx->programs[bucket] = program;
  }
  ocl_kernel_entry *entry = program->kernels;
  while (entry != NULL && strcmp(entry->name, name) != 0) entry = entry->next;
  if (entry == NULL) {
    entry = calloc(1, sizeof *entry);
    cl_int err = CL_SUCCESS;
    if (entry == NULL) {
      status = ocl_fail(TB_ERROR_OUT_OF_MEMORY, "out of host memory");
    } else {
      entry->kernel.kernel = clCreateKernel(program->program, name, &err);
      if (err != CL_SUCCESS) {
        status = ocl_fail(TB_ERROR_INTERNAL, "clCreateKernel of '%s' failed on ocl:%d with %s (%d)",
                          name, (int)device, ocl_error_name(err), (int)err);
        free(entry);
        entry = NULL;
      } else {
        entry->name = name;
        entry->kernel.work_group = 1;
        clGetKernelWorkGroupInfo(entry->kernel.kernel, ctx->devices[device].id,
                                 CL_KERNEL_WORK_GROUP_SIZE, sizeof entry->kernel.work_group,
                                 &entry->kernel.work_group, NULL);
        if (entry->kernel.work_group == 0) entry->kernel.work_group = 1;
        pthread_mutex_init(&entry->kernel.lock, NULL);
        entry->next = program->kernels;
        program->kernels = entry;
      }
    }
  }
  pthread_mutex_unlock(&ctx->programs_lock);
  if (status == TB_OK) *out = &entry->kernel;
  return status;
}

static size_t memo_slot(const ocl_kernel_key *key) {
  uint64_t h = (uint64_t)(uintptr_t)key->site * 0x9e3779b97f4a7c15ull;
  h ^= (key->bits + (uint64_t)(uint32_t)key->device) * 0xc2b2ae3d27d4eb4full;
  return (size_t)((h ^ (h >> 29)) % OCL_KERNEL_MEMO);
}

ocl_kernel *ocl_kernel_recall(tb_context ctx, const ocl_kernel_key *key) {
  size_t slot = memo_slot(key);
  pthread_mutex_lock(&ctx->memo_lock);
  const ocl_kernel_key *held = &ctx->memo[slot].key;
  ocl_kernel *kernel =
      held->site == key->site && held->bits == key->bits && held->device == key->device
          ? ctx->memo[slot].kernel
          : NULL;
  pthread_mutex_unlock(&ctx->memo_lock);
  return kernel;
}

void ocl_kernel_remember(tb_context ctx, const ocl_kernel_key *key, ocl_kernel *kernel) {
  size_t slot = memo_slot(key);
  pthread_mutex_lock(&ctx->memo_lock);
  ctx->memo[slot].key = *key;
  ctx->memo[slot].kernel = kernel;
  pthread_mutex_unlock(&ctx->memo_lock);
}

tb_status ocl_set_arg_place(tb_context ctx, int32_t device, cl_kernel kernel, cl_uint index,
                            const ocl_place *place) {
  cl_int err;
  cl_ulong offset = 0;
  if (ctx->mode == OCL_MEMORY_SVM) {
    err = clSetKernelArgSVMPointer(kernel, index, place->svm);
  } else {
    err = clSetKernelArg(kernel, index, sizeof(cl_mem), &place->mem);
    offset = place->offset;
  }
  if (err == CL_SUCCESS) err = clSetKernelArg(kernel, index + 1, sizeof offset, &offset);
  return ocl_check(ctx, device, err, "clSetKernelArg");
}

void ocl_programs_release(tb_context ctx) {
  pthread_mutex_lock(&ctx->memo_lock);
  memset(ctx->memo, 0, sizeof ctx->memo);
  pthread_mutex_unlock(&ctx->memo_lock);
  for (size_t bucket = 0; bucket < OCL_PROGRAM_BUCKETS; bucket++) {
    struct ocl_program *program = ctx->programs[bucket];
    while (program != NULL) {
      struct ocl_program *next = program->next;
      ocl_kernel_entry *entry = program->kernels;
      while (entry != NULL) {
        ocl_kernel_entry *following = entry->next;
        clReleaseKernel(entry->kernel.kernel);
        pthread_mutex_destroy(&entry->kernel.lock);
        free(entry);
        entry = following;
      }
      clReleaseProgram(program->program);
      free(program->key);
      free(program);
      program = next;
    }
    ctx->programs[bucket] = NULL;
  }
}
