/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Matrix products through OpenBLAS (cblas_sgemm / cblas_dgemm): mm, bmm, addmm, baddbmm, and
 * emu_gemm, the one BLAS call every emu kernel goes through (conv.c's too).  Operands stored
 * row-major or transposed (column-major) go to BLAS as they are, with the transpose flag; other
 * layouts, and float16 / bfloat16 (computed in float32), are staged in scratch buffers.
 */
#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

typedef struct matrix {
  char *data;
  tb_dtype dtype;
  int64_t rows, cols, rs, cs; /* strides in elements */
} matrix;

static matrix matrix_of(const emu_tensor *t, int64_t batch) {
  int b = t->ndim == 3;
  matrix m = {t->data, t->dtype, t->sizes[b], t->sizes[b + 1], t->strides[b], t->strides[b + 1]};
  if (b && m.data != NULL) m.data += batch * t->strides[0] * (int64_t)emu_itemsize(t->dtype);
  return m;
}

static int64_t max1(int64_t v) { return v > 1 ? v : 1; }

/* A BLAS operand: the matrix as it is when its layout and dtype allow, else a row-major copy
 * in `compute` (stored in *scratch, to be freed). */
static const void *operand(const matrix *m, tb_dtype compute, CBLAS_TRANSPOSE *trans, int64_t *ld,
                           void **scratch) {
  *scratch = NULL;
  if (m->dtype == compute) {
    if ((m->cs == 1 || m->cols <= 1) && m->rs >= max1(m->cols)) {
      *trans = CblasNoTrans;
      *ld = m->rs;
      return m->data;
    }
    if ((m->rs == 1 || m->rows <= 1) && m->cs >= max1(m->rows)) {
      *trans = CblasTrans;
      *ld = m->cs;
      return m->data;
    }
  }
  size_t item = emu_itemsize(compute);
  char *copy = malloc((size_t)max1(m->rows * m->cols) * item);
  if (copy == NULL) return NULL;
  size_t in_item = emu_itemsize(m->dtype);
  for (int64_t r = 0; r < m->rows; r++) {
    for (int64_t c = 0; c < m->cols; c++) {
      const char *p = m->data + (r * m->rs + c * m->cs) * (int64_t)in_item;
      emu_store_double(copy + (r * m->cols + c) * (int64_t)item, compute,
                       emu_load_double(p, m->dtype));
    }
  }
  *trans = CblasNoTrans;
  *ld = max1(m->cols);
  *scratch = copy;
  return copy;
}

static pthread_once_t g_blas_once = PTHREAD_ONCE_INIT;
/* OpenBLAS runs single-threaded: emu splits large products across its own pool, which never
 * waits for threads that are not scheduled (OpenBLAS's own threads would). */
static void blas_single_thread(void) { openblas_set_num_threads(1); }

void emu_gemm(tb_dtype dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
              double alpha, const void *a, int64_t lda, const void *b, int64_t ldb, double beta,
              void *c, int64_t ldc) {
  const size_t item = emu_itemsize(dtype);
  if (m <= 0 || n <= 0) return;
  if (k <= 0) { /* c = beta * c, without reading c when beta is 0 (BLAS's rule) */
    for (int64_t r = 0; r < m; r++) {
      for (int64_t j = 0; j < n; j++) {
        char *p = (char *)c + (r * ldc + j) * (int64_t)item;
        emu_store_double(p, dtype, beta == 0.0 ? 0.0 : emu_load_double(p, dtype) * beta);
      }
    }
    return;
  }
  pthread_once(&g_blas_once, blas_single_thread);
  const CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;
  if (dtype == TB_DTYPE_FLOAT64) {
    cblas_dgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb,
                beta, c, (int)ldc);
  } else {
    cblas_sgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, (float)alpha, a, (int)lda, b,
                (int)ldb, (float)beta, c, (int)ldc);
  }
}

typedef struct gemm_state {
  int op; /* 0 mm, 1 bmm, 2 addmm, 3 baddbmm */
} gemm_state;

/* One batch's product, prepared for tiles of rows. */
typedef struct gemm_batch {
  matrix c;               /* the output matrix */
  const emu_tensor *bias; /* NULL without bias (or beta == 0) */
  int64_t bias_offset, bias_rs, bias_cs;
  const void *pa, *pb; /* BLAS operands */
  CBLAS_TRANSPOSE ta, tb;
  int64_t lda, ldb, M, N, K;
  char *cdata; /* where BLAS writes: the output itself or a scratch */
  int64_t ldc;
  bool direct;
} gemm_batch;

typedef struct gemm_job {
  gemm_batch *batches;
  int64_t rows_per_tile, tiles_per_batch;
  tb_dtype compute, out_dtype;
  double alpha, beta;
} gemm_job;

/* Rows [r0, r0 + rows) of the bias, broadcast into the BLAS output `c` (leading dimension
 * g->ldc), when the bias has the compute dtype: a row copy or a fill per row, with no
 * conversion per element (addmm's bias is a row vector, broadcast over the rows). */
static void copy_bias(const gemm_batch *g, char *c, int64_t r0, int64_t rows, size_t item) {
  const int64_t N = g->N;
  const char *bias = g->bias->data;
  for (int64_t r = 0; r < rows; r++) {
    const char *src = bias + (g->bias_offset + (r0 + r) * g->bias_rs) * (int64_t)item;
    char *dst = c + r * g->ldc * (int64_t)item;
    if (g->bias_cs == 1) {
      memcpy(dst, src, (size_t)N * item);
    } else if (item == sizeof(float)) {
      float *out = (float *)dst;
      const float *in = (const float *)src;
      for (int64_t k = 0; k < N; k++) out[k] = in[k * g->bias_cs];
    } else {
      double *out = (double *)dst;
      const double *in = (const double *)src;
      for (int64_t k = 0; k < N; k++) out[k] = in[k * g->bias_cs];
    }
  }
}

/* Rows [r0, r1) of one batch: bias, product, conversion into the output. */
static void gemm_tile(const gemm_job *job, const gemm_batch *g, int64_t r0, int64_t r1) {
  const size_t item = emu_itemsize(job->compute), out_item = emu_itemsize(job->out_dtype);
  const int64_t N = g->N, rows = r1 - r0;
  char *c = g->cdata + r0 * g->ldc * (int64_t)item;
  double beta = 0.0;
  if (g->bias != NULL && g->bias->dtype == job->compute) {
    copy_bias(g, c, r0, rows, item);
    beta = job->beta;
  } else if (g->bias != NULL) {
    size_t bias_item = emu_itemsize(g->bias->dtype);
    for (int64_t r = 0; r < rows; r++) {
      for (int64_t k = 0; k < N; k++) {
        const char *p = g->bias->data + (g->bias_offset + (r0 + r) * g->bias_rs + k * g->bias_cs) *
                                            (int64_t)bias_item;
        emu_store_double(c + (r * g->ldc + k) * (int64_t)item, job->compute,
                         emu_load_double(p, g->bias->dtype));
      }
    }
    beta = job->beta;
  }
  /* Row r of op(A) starts at element r (transposed storage) or r * lda (row-major); without
   * K there are no operands. */
  int64_t a_offset = g->ta == CblasNoTrans ? r0 * g->lda : r0;
  const char *a = g->K > 0 ? (const char *)g->pa + a_offset * (int64_t)item : NULL;
  emu_gemm(job->compute, g->ta == CblasTrans, g->tb == CblasTrans, rows, N, g->K, job->alpha, a,
           g->lda, g->pb, g->ldb, beta, c, g->ldc);
  if (!g->direct) {
    for (int64_t r = r0; r < r1; r++) {
      for (int64_t k = 0; k < N; k++) {
        emu_store_double(
            g->c.data + (r * g->c.rs + k * g->c.cs) * (int64_t)out_item, job->out_dtype,
            emu_load_double(g->cdata + (r * g->ldc + k) * (int64_t)item, job->compute));
      }
    }
  }
}

/* Tiles [begin, end): consecutive tiles of one batch make one BLAS call. */
static void gemm_tiles(void *context, int64_t begin, int64_t end) {
  const gemm_job *job = context;
  for (int64_t t = begin; t < end;) {
    int64_t batch = t / job->tiles_per_batch;
    int64_t last = (batch + 1) * job->tiles_per_batch; /* first tile of the next batch */
    if (last > end) last = end;
    const gemm_batch *g = &job->batches[batch];
    int64_t r0 = (t % job->tiles_per_batch) * job->rows_per_tile;
    int64_t r1 = (last - batch * job->tiles_per_batch) * job->rows_per_tile;
    if (r1 > g->M) r1 = g->M;
    if (r0 < r1 && g->N > 0) gemm_tile(job, g, r0, r1);
    t = last;
  }
}

/* out[b] = beta * bias[b] + alpha * a[b] @ b_[b] for every batch b. */
static void run_gemm(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const int op = ((const gemm_state *)call->scratch)->op;
  const bool with_bias = op >= 2;
  const emu_tensor *bias = with_bias ? call->args[0].as.tensor : NULL;
  const emu_tensor *ta = call->args[with_bias ? 1 : 0].as.tensor;
  const emu_tensor *tb = call->args[with_bias ? 2 : 1].as.tensor;
  const emu_tensor *out = call->args[call->count - 1].as.tensor;
  gemm_job job = {.compute = out->dtype == TB_DTYPE_FLOAT64 ? TB_DTYPE_FLOAT64 : TB_DTYPE_FLOAT32,
                  .out_dtype = out->dtype,
                  .alpha = with_bias ? emu_arg_double(&call->args[4]) : 1.0,
                  .beta = with_bias ? emu_arg_double(&call->args[3]) : 0.0};
  const size_t item = emu_itemsize(job.compute);
  const int64_t batches = out->ndim == 3 ? out->sizes[0] : 1;
  if (out->numel == 0) return;
  job.batches = calloc((size_t)batches, sizeof(gemm_batch));
  void **scratch = calloc((size_t)batches * 3, sizeof(void *));
  bool ok = job.batches != NULL && scratch != NULL;
  for (int64_t b = 0; ok && b < batches; b++) {
    gemm_batch *g = &job.batches[b];
    matrix a = matrix_of(ta, b), bm = matrix_of(tb, b);
    g->c = matrix_of(out, b);
    g->M = g->c.rows;
    g->N = g->c.cols;
    g->K = a.cols;
    g->direct = out->dtype == job.compute && (g->c.cs == 1 || g->N == 1) && g->c.rs >= max1(g->N);
    g->cdata = g->direct ? g->c.data : malloc((size_t)max1(g->M * g->N) * item);
    g->ldc = g->direct ? g->c.rs : max1(g->N);
    scratch[3 * b] = g->direct ? NULL : g->cdata;
    if (with_bias && job.beta != 0.0) {
      int bb = bias->ndim == 3;
      g->bias = bias;
      g->bias_offset = bb && bias->sizes[0] != 1 ? b * bias->strides[0] : 0;
      if (bias->ndim - bb == 2) {
        g->bias_rs = bias->sizes[bb] == 1 ? 0 : bias->strides[bb];
        g->bias_cs = bias->sizes[bb + 1] == 1 ? 0 : bias->strides[bb + 1];
      } else if (bias->ndim - bb == 1) {
        g->bias_cs = bias->sizes[bb] == 1 ? 0 : bias->strides[bb];
      }
    }
    if (g->K > 0 && g->M > 0 && g->N > 0) {
      g->pa = operand(&a, job.compute, &g->ta, &g->lda, &scratch[3 * b + 1]);
      g->pb = operand(&bm, job.compute, &g->tb, &g->ldb, &scratch[3 * b + 2]);
      ok = g->pa != NULL && g->pb != NULL;
    }
    ok = ok && g->cdata != NULL;
  }
  if (!ok) {
    tbk_task_fail(task, "matmul: out of host memory");
  } else {
    /* Tiles of 32 rows (BLAS kernels want tall blocks), dealt out in one run per thread (each
     * BLAS call packs the whole right operand: fewer, larger calls) of at least 2^21
     * multiply-adds; a run within one batch is one BLAS call. */
    const int64_t M = job.batches[0].M, N = job.batches[0].N, K = job.batches[0].K;
    job.rows_per_tile = M < 32 ? max1(M) : 32;
    job.tiles_per_batch = (max1(M) + job.rows_per_tile - 1) / job.rows_per_tile;
    const int64_t tiles = batches * job.tiles_per_batch;
    const int64_t per_thread = (tiles + emu_parallel_threads() - 1) / emu_parallel_threads();
    const int64_t min_tiles = max1((1 << 21) / max1(job.rows_per_tile * N * max1(K)));
    emu_parallel_for(tiles, per_thread > min_tiles ? per_thread : min_tiles, gemm_tiles, &job);
  }
  for (int64_t i = 0; scratch != NULL && i < batches * 3; i++) free(scratch[i]);
  free(scratch);
  free(job.batches);
}

static tb_status enqueue_gemm(const char *name, const char *kinds, int op, tb_stream stream,
                              const tb_value *args, int32_t count) {
  tb_status status = emu_check_args(name, args, count, kinds);
  if (status != TB_OK) return status;
  const tb_tensor *out = args[count - 1].as.tensor;
  int rank = op == 1 || op == 3 ? 3 : 2;
  for (int32_t i = 0; i < count; i++) {
    if (args[i].kind != TB_VALUE_TENSOR) continue;
    const tb_tensor *t = args[i].as.tensor;
    if (!emu_is_floating(t->dtype) || t->dtype != out->dtype) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: floating operands of one dtype only", name);
    }
    bool is_bias = op >= 2 && i == 0;
    if (!is_bias && t->ndim != rank) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: operand %d has rank %d", name, (int)i,
                      (int)t->ndim);
    }
  }
  if (op >= 2 && args[0].as.tensor->ndim > rank) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: bias of rank %d", name,
                    (int)args[0].as.tensor->ndim);
  }
  for (int32_t i = 0; i < count; i++) {
    if (args[i].kind != TB_VALUE_TENSOR) continue;
    for (int32_t d = 0; d < args[i].as.tensor->ndim; d++) {
      if (args[i].as.tensor->sizes[d] > INT32_MAX || args[i].as.tensor->strides[d] > INT32_MAX) {
        return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: dimensions beyond 32 bits", name);
      }
    }
  }
  gemm_state state = {op};
  return emu_launch(name, stream, args, count, run_gemm, sizeof state, &state);
}

/* mm.out / bmm.out: (self, mat2, out) */
static tb_status kernel_mm(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_gemm("mm.out", "TTT", 0, s, a, n);
}
static tb_status kernel_bmm(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_gemm("bmm.out", "TTT", 1, s, a, n);
}
/* addmm.out / baddbmm.out: (self, mat1, mat2, beta, alpha, out) */
static tb_status kernel_addmm(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_gemm("addmm.out", "TTTnnT", 2, s, a, n);
}
static tb_status kernel_baddbmm(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_gemm("baddbmm.out", "TTTnnT", 3, s, a, n);
}

EMU_KERNEL(k_mm, "mm.out", kernel_mm, EMU_FLOATS,
           "mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_bmm, "bmm.out", kernel_bmm, EMU_FLOATS,
           "bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_addmm, "addmm.out", kernel_addmm, EMU_FLOATS,
           "addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, "
           "Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_baddbmm, "baddbmm.out", kernel_baddbmm, EMU_FLOATS,
           "baddbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar "
           "alpha=1, Tensor(a!) out) -> Tensor(a!)");

const tb_kernel *const emu_blas_kernels[] = {&k_mm, &k_bmm, &k_addmm, &k_baddbmm, NULL};
