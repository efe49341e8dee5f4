/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Matrix products through CLBlast (Debian's libclblast-dev), a tuned OpenCL BLAS: mm, addmm,
 * bmm and baddbmm as (strided batched) GEMM on the call's stream.
 *
 * CLBlast takes buffers and element offsets: a device pointer's (cl_mem, offset) from the
 * address table serves both memory modes (in SVM mode the buffer over the SVM bytes).  Each
 * input must be a row-major or a column-major matrix (a transposed view is passed as the
 * transpose flag, as cuBLAS users do), and the output row-major; other layouts are declined to
 * the CPU fallback.  The output is written with beta: ATen's addmm ignores `self` when beta is
 * 0 (NaN included) and mm has no self, and CLBlast reads C even then (NaN * 0), so C is zeroed
 * first in those cases.
 *
 * CLBlast is loaded at run time (dlopen of libclblast.so.1 at the first product), not linked:
 * the vendor library stays plain C with libOpenCL as its only dependency (CLBlast is C++), and
 * where CLBlast is not installed the products decline to the CPU fallback with a message
 * naming it instead of the vendor failing to load.
 */
#include <clblast_c.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"

typedef CLBlastStatusCode (*sgemm_fn)(CLBlastLayout, CLBlastTranspose, CLBlastTranspose, size_t,
                                      size_t, size_t, float, cl_mem, size_t, size_t, cl_mem, size_t,
                                      size_t, float, cl_mem, size_t, size_t, cl_command_queue *,
                                      cl_event *);
typedef CLBlastStatusCode (*dgemm_fn)(CLBlastLayout, CLBlastTranspose, CLBlastTranspose, size_t,
                                      size_t, size_t, double, cl_mem, size_t, size_t, cl_mem,
                                      size_t, size_t, double, cl_mem, size_t, size_t,
                                      cl_command_queue *, cl_event *);
typedef CLBlastStatusCode (*sgemm_batched_fn)(CLBlastLayout, CLBlastTranspose, CLBlastTranspose,
                                              size_t, size_t, size_t, float, cl_mem, size_t, size_t,
                                              size_t, cl_mem, size_t, size_t, size_t, float, cl_mem,
                                              size_t, size_t, size_t, size_t, cl_command_queue *,
                                              cl_event *);
typedef CLBlastStatusCode (*dgemm_batched_fn)(CLBlastLayout, CLBlastTranspose, CLBlastTranspose,
                                              size_t, size_t, size_t, double, cl_mem, size_t,
                                              size_t, size_t, cl_mem, size_t, size_t, size_t,
                                              double, cl_mem, size_t, size_t, size_t, size_t,
                                              cl_command_queue *, cl_event *);

/* The CLBlast entry points, resolved once per process (the library is one per process). */
static struct {
  pthread_once_t once;
  sgemm_fn sgemm;
  dgemm_fn dgemm;
  sgemm_batched_fn sgemm_batched;
  dgemm_batched_fn dgemm_batched;
  char error[512];
} g_clblast = {PTHREAD_ONCE_INIT, NULL, NULL, NULL, NULL, ""};

/* A function pointer from dlsym (POSIX guarantees the conversion works). */
static void *symbol(void *library, const char *name) {
  void *address = dlsym(library, name);
  if (address == NULL) {
    snprintf(g_clblast.error, sizeof g_clblast.error, "libclblast lacks %s", name);
  }
  return address;
}

/* TORCH_BACKEND_OPENCL_CLBLAST names the library (a CLBlast built and tuned elsewhere);
 * otherwise libclblast.so.1, then libclblast.so. */
static void load_clblast(void) {
  const char *named = getenv("TORCH_BACKEND_OPENCL_CLBLAST");
  void *library = NULL;
  if (named != NULL && named[0] != '\0') {
    library = dlopen(named, RTLD_NOW | RTLD_LOCAL);
  } else {
    library = dlopen("libclblast.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) library = dlopen("libclblast.so", RTLD_NOW | RTLD_LOCAL);
  }
  if (library == NULL) {
    const char *why = dlerror();
    snprintf(g_clblast.error, sizeof g_clblast.error,
             "CLBlast is not installed (%s; on Debian: apt-get install libclblast1)",
             why != NULL ? why : "libclblast.so.1 not found");
    return;
  }
  void *s = symbol(library, "CLBlastSgemm"), *d = symbol(library, "CLBlastDgemm");
  void *sb = symbol(library, "CLBlastSgemmStridedBatched");
  void *db = symbol(library, "CLBlastDgemmStridedBatched");
  if (s == NULL || d == NULL || sb == NULL || db == NULL) return; /* the library stays open */
  /* Object pointers to function pointers through memcpy: ISO C has no direct conversion. */
  memcpy(&g_clblast.sgemm, &s, sizeof s);
  memcpy(&g_clblast.dgemm, &d, sizeof d);
  memcpy(&g_clblast.sgemm_batched, &sb, sizeof sb);
  memcpy(&g_clblast.dgemm_batched, &db, sizeof db);
}

/* A matrix operand: its transpose flag and leading dimension for row-major GEMM. */
typedef struct matrix {
  CLBlastTranspose transpose;
  size_t ld;
} matrix;

/* Describes the rows x cols matrix with strides (row_stride, col_stride); false when it is
 * neither row- nor column-major. */
static bool describe(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride,
                     matrix *m) {
  if (cols == 1) col_stride = 1; /* the stride of a dimension of size 1 is never used */
  if (rows == 1) row_stride = cols;
  if (col_stride == 1 && row_stride >= (cols > 1 ? cols : 1)) {
    *m = (matrix){CLBlastTransposeNo, (size_t)(row_stride > 0 ? row_stride : 1)};
    return true;
  }
  if (rows == 1 && col_stride >= 1) { /* a row vector read with a column stride */
    *m = (matrix){CLBlastTransposeYes, (size_t)col_stride};
    return cols == 1 || col_stride == 1;
  }
  if (row_stride == 1 && col_stride >= (rows > 1 ? rows : 1)) {
    *m = (matrix){CLBlastTransposeYes, (size_t)col_stride};
    return true;
  }
  return false;
}

typedef enum gemm_kind { GEMM_MM, GEMM_ADDMM, GEMM_BMM, GEMM_BADDBMM } gemm_kind;

/* `self` of addmm/baddbmm broadcast to `out`'s shape, as a view (strides 0 where it
 * broadcasts). */
static bool expand(const tb_tensor *self, const tb_tensor *out, tb_tensor *view, int64_t *strides) {
  if (self->ndim > out->ndim) return false;
  int32_t shift = out->ndim - self->ndim;
  for (int32_t d = 0; d < out->ndim; d++) {
    int64_t size = d < shift ? 1 : self->sizes[d - shift];
    int64_t stride = d < shift ? 0 : self->strides[d - shift];
    if (size != out->sizes[d] && size != 1) return false;
    strides[d] = size == out->sizes[d] ? stride : 0;
  }
  *view = *self;
  view->ndim = out->ndim;
  view->sizes = out->sizes;
  view->strides = strides;
  return true;
}

static tb_status gemm(tb_context ctx, const tb_kernel_call *call) {
  gemm_kind kind = (gemm_kind)(intptr_t)call->kernel->data;
  bool batched = kind == GEMM_BMM || kind == GEMM_BADDBMM;
  bool with_self = kind == GEMM_ADDMM || kind == GEMM_BADDBMM;
  const tb_value *args = call->args;
  int32_t first = with_self ? 1 : 0;
  if (call->num_args < (with_self ? 6 : 3) || args[first].kind != TB_VALUE_TENSOR ||
      args[first + 1].kind != TB_VALUE_TENSOR || args[call->num_args - 1].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *a = args[first].as.tensor, *b = args[first + 1].as.tensor;
  const tb_tensor *out = args[call->num_args - 1].as.tensor;
  double alpha = 1, beta = 0;
  if (with_self && (!ocl_number(&args[3], &beta, NULL) || !ocl_number(&args[4], &alpha, NULL))) {
    return ocl_decline(call, "non-numeric alpha or beta");
  }
  int rank = batched ? 3 : 2;
  if (a->ndim != rank || b->ndim != rank || out->ndim != rank) {
    return ocl_decline(call, "operands of another rank");
  }
  if (a->dtype != out->dtype || b->dtype != out->dtype ||
      (out->dtype != TB_DTYPE_FLOAT32 && out->dtype != TB_DTYPE_FLOAT64)) {
    return ocl_decline(call, "a dtype CLBlast's GEMM does not take");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (out->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  pthread_once(&g_clblast.once, load_clblast);
  if (g_clblast.sgemm == NULL) return ocl_decline(call, g_clblast.error);
  int o = batched ? 1 : 0; /* the first matrix dimension */
  int64_t batch = batched ? out->sizes[0] : 1;
  int64_t m = out->sizes[o], n = out->sizes[o + 1], k = a->sizes[o + 1];
  if (batch == 0 || m == 0 || n == 0) return TB_OK;
  if (k == 0) return ocl_decline(call, "an empty inner dimension");
  matrix ma, mb, mc;
  if (!describe(m, k, a->strides[o], a->strides[o + 1], &ma) ||
      !describe(k, n, b->strides[o], b->strides[o + 1], &mb) ||
      !describe(m, n, out->strides[o], out->strides[o + 1], &mc) ||
      mc.transpose != CLBlastTransposeNo) {
    return ocl_decline(call, "a matrix that is neither row- nor column-major");
  }
  size_t batch_a = batched ? (size_t)a->strides[0] : 0,
         batch_b = batched ? (size_t)b->strides[0] : 0;
  size_t batch_c = batched ? (size_t)out->strides[0] : 0;
  if (batched && batch > 1 && out->strides[0] < m * (int64_t)mc.ld) {
    return ocl_decline(call, "batches of the output that overlap");
  }

  /* C's starting value: self broadcast (addmm, beta != 0), or zeros. */
  if (with_self && beta != 0) {
    const tb_tensor *self = args[0].as.tensor;
    if (args[0].kind != TB_VALUE_TENSOR) return ocl_decline(call, "unexpected arguments");
    if (self->data != out->data || self->ndim != out->ndim) {
      tb_tensor view;
      int64_t strides[3];
      if (!expand(self, out, &view, strides)) return ocl_decline(call, "self does not broadcast");
      ocl_operand in[1] = {{&view, 0, 0}};
      ocl_map_spec copy = {"x0", out->dtype, 1};
      status = ocl_map(ctx, call, &copy, out, in, 1, 1);
      if (status != TB_OK) return status;
    }
  } else {
    ocl_operand in[1] = {{NULL, 0, 0}};
    ocl_map_spec zero = {"x0", out->dtype, 1};
    status = ocl_map(ctx, call, &zero, out, in, 1, 1);
    if (status != TB_OK) return status;
    beta = 0;
  }

  ocl_place pa, pb, pc;
  status = ocl_tensor_place(ctx, device, a, "mat1", &pa);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, b, "mat2", &pb);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, out, "out", &pc);
  if (status != TB_OK) return status;
  size_t item = ocl_dtype_size(out->dtype);
  ocl_stream *stream = ocl_stream_of(call->stream);
  CLBlastStatusCode code;
  ocl_stream_begin(stream);
  size_t oa = pa.offset / item, ob = pb.offset / item, oc = pc.offset / item;
  if (batch == 1 && out->dtype == TB_DTYPE_FLOAT32) {
    code = g_clblast.sgemm(CLBlastLayoutRowMajor, ma.transpose, mb.transpose, (size_t)m, (size_t)n,
                           (size_t)k, (float)alpha, pa.mem, oa, ma.ld, pb.mem, ob, mb.ld,
                           (float)beta, pc.mem, oc, mc.ld, &stream->queue, NULL);
  } else if (batch == 1) {
    code = g_clblast.dgemm(CLBlastLayoutRowMajor, ma.transpose, mb.transpose, (size_t)m, (size_t)n,
                           (size_t)k, alpha, pa.mem, oa, ma.ld, pb.mem, ob, mb.ld, beta, pc.mem, oc,
                           mc.ld, &stream->queue, NULL);
  } else if (out->dtype == TB_DTYPE_FLOAT32) {
    code = g_clblast.sgemm_batched(CLBlastLayoutRowMajor, ma.transpose, mb.transpose, (size_t)m,
                                   (size_t)n, (size_t)k, (float)alpha, pa.mem, oa, ma.ld, batch_a,
                                   pb.mem, ob, mb.ld, batch_b, (float)beta, pc.mem, oc, mc.ld,
                                   batch_c, (size_t)batch, &stream->queue, NULL);
  } else {
    code = g_clblast.dgemm_batched(CLBlastLayoutRowMajor, ma.transpose, mb.transpose, (size_t)m,
                                   (size_t)n, (size_t)k, alpha, pa.mem, oa, ma.ld, batch_a, pb.mem,
                                   ob, mb.ld, batch_b, beta, pc.mem, oc, mc.ld, batch_c,
                                   (size_t)batch, &stream->queue, NULL);
  }
  ocl_stream_end(stream, code == CLBlastSuccess);
  if (code == CLBlastSuccess) return TB_OK;
  if (code > -1000) return ocl_check(ctx, device, (cl_int)code, "CLBlast GEMM");
  return ocl_fail(TB_ERROR_INTERNAL, "CLBlast GEMM failed on ocl:%d (%s) with CLBlast status %d",
                  (int)device, ctx->devices[device].name, (int)code);
}

bool ocl_have_gemm(void) {
  pthread_once(&g_clblast.once, load_clblast);
  return g_clblast.sgemm != NULL;
}

tb_status ocl_gemm(tb_context ctx, const tb_kernel_call *call, int32_t device, tb_dtype dtype,
                   bool trans_a, bool trans_b, size_t m, size_t n, size_t k, double alpha,
                   const ocl_place *a, size_t offset_a, size_t lda, const ocl_place *b,
                   size_t offset_b, size_t ldb, double beta, const ocl_place *c, size_t offset_c,
                   size_t ldc) {
  if (!ocl_have_gemm()) return ocl_decline(call, g_clblast.error);
  size_t item = ocl_dtype_size(dtype);
  CLBlastTranspose ta = trans_a ? CLBlastTransposeYes : CLBlastTransposeNo;
  CLBlastTranspose tb = trans_b ? CLBlastTransposeYes : CLBlastTransposeNo;
  size_t oa = a->offset / item + offset_a, ob = b->offset / item + offset_b;
  size_t oc = c->offset / item + offset_c;
  ocl_stream *stream = ocl_stream_of(call->stream);
  CLBlastStatusCode code;
  ocl_stream_begin(stream);
  if (dtype == TB_DTYPE_FLOAT32) {
    code = g_clblast.sgemm(CLBlastLayoutRowMajor, ta, tb, m, n, k, (float)alpha, a->mem, oa, lda,
                           b->mem, ob, ldb, (float)beta, c->mem, oc, ldc, &stream->queue, NULL);
  } else {
    code = g_clblast.dgemm(CLBlastLayoutRowMajor, ta, tb, m, n, k, alpha, a->mem, oa, lda, b->mem,
                           ob, ldb, beta, c->mem, oc, ldc, &stream->queue, NULL);
  }
  ocl_stream_end(stream, code == CLBlastSuccess);
  if (code == CLBlastSuccess) return TB_OK;
  if (code > -1000) return ocl_check(ctx, device, (cl_int)code, "CLBlast GEMM");
  return ocl_fail(TB_ERROR_INTERNAL, "CLBlast GEMM failed on ocl:%d (%s) with CLBlast status %d",
                  (int)device, ctx->devices[device].name, (int)code);
}

#define FLOATS (TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64))
static const tb_kernel k_mm = {sizeof(tb_kernel),
                               "mm.out",
                               gemm,
                               FLOATS,
                               0,
                               "mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
                               (void *)(intptr_t)GEMM_MM};
static const tb_kernel k_bmm = {
    sizeof(tb_kernel),
    "bmm.out",
    gemm,
    FLOATS,
    0,
    "bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
    (void *)(intptr_t)GEMM_BMM};
static const tb_kernel k_addmm = {
    sizeof(tb_kernel),
    "addmm.out",
    gemm,
    FLOATS,
    0,
    "addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, "
    "Tensor(a!) out) -> Tensor(a!)",
    (void *)(intptr_t)GEMM_ADDMM};
static const tb_kernel k_baddbmm = {
    sizeof(tb_kernel),
    "baddbmm.out",
    gemm,
    FLOATS,
    0,
    "baddbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, "
    "Tensor(a!) out) -> Tensor(a!)",
    (void *)(intptr_t)GEMM_BADDBMM};

const tb_kernel *const ocl_blas_kernels[] = {&k_mm, &k_bmm, &k_addmm, &k_baddbmm, NULL};
