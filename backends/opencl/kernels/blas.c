/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Matrix products: mm, addmm, bmm and baddbmm as (strided batched) GEMM on the call's stream,
 * and ocl_gemm for the convolutions' im2col path.  Two engines:
 *
 * - native (kernels/gemm.cl): a register-tiled micro-kernel for devices that are CPUs (PoCL),
 *   where one work-item's tile of vectors becomes SIMD registers.  It reads A with any strides,
 *   B row-major (another layout is packed into the call's workspace first, one launch) and
 *   addmm's `self` broadcast in place, so a product is one launch and C is never pre-filled.
 * - CLBlast (Debian's libclblast-dev), a tuned OpenCL BLAS, for GPUs and accelerators.  It
 *   takes buffers and element offsets: a device pointer's (cl_mem, offset) from the address
 *   table serves both memory modes (in SVM mode the buffer over the SVM bytes).  Each input
 *   must be a row-major or a column-major matrix (a transposed view is passed as the transpose
 *   flag, as cuBLAS users do), and the output row-major.  ATen's addmm ignores `self` when beta
 *   is 0 (NaN included) and mm has no self, and CLBlast reads C even then (NaN * 0), so C is
 *   zeroed first in those cases.
 *
 * TORCH_BACKEND_OPENCL_GEMM picks the engine for the process: `native`, `clblast`, or `auto`
 * (unset): native on CPU devices and wherever CLBlast is not installed, CLBlast elsewhere.
 * Layouts CLBlast does not take (an operand neither row- nor column-major, an output that is
 * not row-major) decline to the CPU fallback.
 *
 * CLBlast is loaded at run time (dlopen of libclblast.so.1 at the first product), not linked:
 * the vendor library stays plain C with libOpenCL as its only dependency (CLBlast is C++), and
 * where CLBlast is not installed the native engine serves every device.
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

/* ---- choosing the engine ---- */

typedef enum gemm_engine { ENGINE_AUTO, ENGINE_NATIVE, ENGINE_CLBLAST } gemm_engine;

/* TORCH_BACKEND_OPENCL_GEMM, read once per process (like the library, a process setting). */
static struct {
  pthread_once_t once;
  gemm_engine engine;
} g_engine = {PTHREAD_ONCE_INIT, ENGINE_AUTO};

static void read_engine(void) {
  const char *named = getenv("TORCH_BACKEND_OPENCL_GEMM");
  if (named == NULL) return;
  if (strcmp(named, "native") == 0) g_engine.engine = ENGINE_NATIVE;
  if (strcmp(named, "clblast") == 0) g_engine.engine = ENGINE_CLBLAST;
}

/* Whether products of `call` (NULL: any) on `device` use the native engine.  A capturing
 * stream's do: CLBlast enqueues its kernels itself, past ocl_submit, where no graph sees them. */
static bool native_on(tb_context ctx, int32_t device, const tb_kernel_call *call) {
  if (call != NULL && ocl_stream_capturing(ocl_stream_of(call->stream))) return true;
  pthread_once(&g_engine.once, read_engine);
  if (g_engine.engine != ENGINE_AUTO) return g_engine.engine == ENGINE_NATIVE;
  if (ctx->devices[device].type & CL_DEVICE_TYPE_CPU) return true;
  pthread_once(&g_clblast.once, load_clblast);
  return g_clblast.sgemm == NULL;
}

/* ---- the native engine (gemm.cl) ---- */

/* gemm.cl's tb_gemm_layout, byte for byte. */
typedef struct ocl_gemm_layout {
  cl_long m, n, k;
  cl_long a_row, a_col, a_batch;
  cl_long b_row, b_batch;
  cl_long c_row, c_col, c_batch;
  cl_long s_row, s_col, s_batch;
} ocl_gemm_layout;

/* A matrix (or a batch of them) in device memory: its place and strides in elements. */
typedef struct gemm_operand {
  ocl_place place;
  int64_t row, col, batch;
} gemm_operand;

static tb_status gemm_kernel(tb_context ctx, int32_t device, tb_dtype dtype, const char *name,
                             int vectors, ocl_kernel **kernel) {
  char defines[96];
  snprintf(defines, sizeof defines, "#define T %s\n#define W %d\n#define TILE_V %d\n",
           ocl_type_name(dtype), dtype == TB_DTYPE_FLOAT64 ? 8 : 16, vectors);
  const char *sources[] = {defines, ocl_source_gemm};
  return ocl_kernel_get(ctx, device, defines, sources, 2, name, kernel);
}

/* A 3-d grid of one-work-item groups: each work-item a tile (or a row of B to pack). */
static tb_status enqueue_3d(tb_context ctx, int32_t device, const tb_kernel_call *call,
                            ocl_kernel *kernel, const size_t global[3], const char *what) {
  const size_t local[3] = {1, 1, 1};
  return ocl_enqueue_grid(ctx, device, call, kernel, 3, global, local, what);
}

/* Copies B (batch x k x n, any strides) row-major into the call's workspace, where the native
 * kernel reads it with unit column stride. */
static tb_status pack(tb_context ctx, const tb_kernel_call *call, int32_t device, tb_dtype dtype,
                      int64_t batch, int64_t k, int64_t n, gemm_operand *b) {
  if (call->workspace == NULL) return ocl_decline(call, "no workspace to pack a matrix into");
  size_t bytes = (size_t)(batch * k * n) * ocl_dtype_size(dtype);
  void *ptr = NULL;
  tb_status status = call->workspace(call, bytes, &ptr);
  ocl_place packed;
  if (status == TB_OK) status = ocl_place_of(ctx, device, ptr, bytes, "the workspace", &packed);
  ocl_kernel *kernel = NULL;
  if (status == TB_OK) status = gemm_kernel(ctx, device, dtype, "tb_gemm_pack", 1, &kernel);
  if (status != TB_OK) return status;
  cl_long sizes[5] = {k, n, b->row, b->col, b->batch};
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &b->place);
  ocl_arg_place(&args, &packed);
  for (int i = 0; i < 5; i++) ocl_arg_value(&args, sizeof sizes[i], &sizes[i]);
  status = ocl_args_done(&args);
  const size_t global[3] = {(size_t)k, (size_t)batch, 1};
  if (status == TB_OK) status = enqueue_3d(ctx, device, call, kernel, global, "GEMM pack");
  pthread_mutex_unlock(&kernel->lock);
  *b = (gemm_operand){packed, n, 1, k * n};
  return status;
}

/* C = alpha A B + beta S, batch times, in one launch (two when B needs packing).  S is read
 * only when beta is not 0 (and may be C itself: each element is read before it is written). */
static tb_status gemm_native(tb_context ctx, const tb_kernel_call *call, int32_t device,
                             tb_dtype dtype, int64_t batch, int64_t m, int64_t n, int64_t k,
                             double alpha, gemm_operand a, gemm_operand b, double beta,
                             const gemm_operand *s, const gemm_operand *c) {
  if (n == 1 || k == 0) b.col = 1; /* a stride that is never used */
  tb_status status = b.col == 1 ? TB_OK : pack(ctx, call, device, dtype, batch, k, n, &b);
  /* Two vectors per tile unless that leaves more columns to the scalar path than one. */
  int width = dtype == TB_DTYPE_FLOAT64 ? 8 : 16;
  int vectors = n >= 2 * width && n % (2 * width) < width ? 2 : 1;
  ocl_kernel *kernel = NULL;
  if (status == TB_OK) status = gemm_kernel(ctx, device, dtype, "tb_gemm", vectors, &kernel);
  if (status != TB_OK) return status;
  const gemm_operand *self = beta != 0 ? s : c;
  ocl_gemm_layout L = {m,       n,      k,      a.row,    a.col,     a.batch,   b.row,
                       b.batch, c->row, c->col, c->batch, self->row, self->col, self->batch};
  int64_t tile_n = (int64_t)vectors * width;
  const size_t global[3] = {(size_t)((n + tile_n - 1) / tile_n), (size_t)((m + 7) / 8),
                            (size_t)batch};
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &a.place);
  ocl_arg_place(&args, &b.place);
  ocl_arg_place(&args, &c->place);
  ocl_arg_place(&args, &self->place);
  ocl_arg_value(&args, sizeof L, &L);
  if (dtype == TB_DTYPE_FLOAT64) {
    ocl_arg_value(&args, sizeof alpha, &alpha);
    ocl_arg_value(&args, sizeof beta, &beta);
  } else {
    cl_float fa = (cl_float)alpha, fb = (cl_float)beta;
    ocl_arg_value(&args, sizeof fa, &fa);
    ocl_arg_value(&args, sizeof fb, &fb);
  }
  status = ocl_args_done(&args);
  if (status == TB_OK) status = enqueue_3d(ctx, device, call, kernel, global, "GEMM");
  pthread_mutex_unlock(&kernel->lock);
  return status;
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

/* mm, addmm, bmm, baddbmm on the native engine: `self` (or NULL, when beta is 0) broadcast to
 * out's shape is read in the kernel. */
static tb_status mm_native(tb_context ctx, const tb_kernel_call *call, int32_t device, bool batched,
                           const tb_tensor *a, const tb_tensor *b, const tb_tensor *self,
                           const tb_tensor *out, double alpha, double beta) {
  int o = batched ? 1 : 0;
  int64_t batch = batched ? out->sizes[0] : 1;
  int64_t m = out->sizes[o], n = out->sizes[o + 1], k = a->sizes[o + 1];
  for (int d = 0; d < out->ndim; d++) {
    if (out->sizes[d] > 1 && out->strides[d] == 0) {
      return ocl_decline(call, "an output whose elements overlap");
    }
  }
  gemm_operand ga = {{0}, a->strides[o], a->strides[o + 1], batched ? a->strides[0] : 0};
  gemm_operand gb = {{0}, b->strides[o], b->strides[o + 1], batched ? b->strides[0] : 0};
  gemm_operand gc = {{0}, out->strides[o], out->strides[o + 1], batched ? out->strides[0] : 0};
  gemm_operand gs = gc;
  tb_status status = ocl_tensor_place(ctx, device, a, "mat1", &ga.place);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, b, "mat2", &gb.place);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, out, "out", &gc.place);
  if (status == TB_OK && self != NULL) {
    tb_tensor view;
    int64_t strides[3];
    if (!expand(self, out, &view, strides)) return ocl_decline(call, "self does not broadcast");
    gs = (gemm_operand){{0}, strides[o], strides[o + 1], batched ? strides[0] : 0};
    status = ocl_tensor_place(ctx, device, &view, "self", &gs.place);
  }
  if (status != TB_OK) return status;
  return gemm_native(ctx, call, device, out->dtype, batch, m, n, k, alpha, ga, gb, beta, &gs, &gc);
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
  int o = batched ? 1 : 0; /* the first matrix dimension */
  int64_t batch = batched ? out->sizes[0] : 1;
  int64_t m = out->sizes[o], n = out->sizes[o + 1], k = a->sizes[o + 1];
  if (batch == 0 || m == 0 || n == 0) return TB_OK;
  if (with_self && args[0].kind != TB_VALUE_TENSOR)
    return ocl_decline(call, "unexpected arguments");
  const tb_tensor *self = with_self && beta != 0 ? args[0].as.tensor : NULL;
  if (native_on(ctx, device, call)) {
    return mm_native(ctx, call, device, batched, a, b, self, out, alpha, self != NULL ? beta : 0);
  }
  pthread_once(&g_clblast.once, load_clblast);
  if (g_clblast.sgemm == NULL) return ocl_decline(call, g_clblast.error);
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
  if (self != NULL) {
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

bool ocl_have_gemm(tb_context ctx, int32_t device) {
  if (native_on(ctx, device, NULL)) return true;
  pthread_once(&g_clblast.once, load_clblast);
  return g_clblast.sgemm != NULL;
}

/* `place` moved `bytes` further into its allocation. */
static ocl_place shifted(const ocl_place *place, size_t bytes) {
  ocl_place moved = *place;
  moved.offset += bytes;
  if (moved.svm != NULL) moved.svm = (char *)moved.svm + bytes;
  return moved;
}

tb_status ocl_gemm(tb_context ctx, const tb_kernel_call *call, int32_t device, tb_dtype dtype,
                   bool trans_a, bool trans_b, size_t m, size_t n, size_t k, double alpha,
                   const ocl_place *a, size_t offset_a, size_t lda, const ocl_place *b,
                   size_t offset_b, size_t ldb, double beta, const ocl_place *c, size_t offset_c,
                   size_t ldc) {
  size_t item = ocl_dtype_size(dtype);
  if (native_on(ctx, device, call)) {
    gemm_operand ga = {shifted(a, offset_a * item), trans_a ? 1 : (int64_t)lda,
                       trans_a ? (int64_t)lda : 1, 0};
    gemm_operand gb = {shifted(b, offset_b * item), trans_b ? 1 : (int64_t)ldb,
                       trans_b ? (int64_t)ldb : 1, 0};
    gemm_operand gc = {shifted(c, offset_c * item), (int64_t)ldc, 1, 0};
    return gemm_native(ctx, call, device, dtype, 1, (int64_t)m, (int64_t)n, (int64_t)k, alpha, ga,
                       gb, beta, &gc, &gc);
  }
  pthread_once(&g_clblast.once, load_clblast);
  if (g_clblast.sgemm == NULL) return ocl_decline(call, g_clblast.error);
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
