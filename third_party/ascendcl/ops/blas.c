/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The stand-in's matrix products: aclnnMm, aclnnAddmm (+Inplace) and aclnnBatchMatMul
 * (hicann/ops-nn, matmul/mat_mul_v3 and matmul/batch_mat_mul_v3), through OpenBLAS's cblas on
 * contiguous row-major copies in float32 (FLOAT, FLOAT16 and BFLOAT16 operands, the documented
 * types).  cubeMathType selects precision modes of the Cube unit; the stand-in validates it
 * and computes every mode in the compute type above.
 */
#include <cblas.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "aclnnop/aclnn_addmm.h"
#include "aclnnop/aclnn_batch_matmul.h"
#include "aclnnop/aclnn_mm.h"
#include "dense.h"

/* OpenBLAS runs single-threaded, each product on the stream worker that runs it.  With its own
 * thread pool, fork() while a worker was inside OpenBLAS hung the parent: OpenBLAS's
 * prepare-fork handler stops the pool, and the product in flight then waits forever for threads
 * that are gone (a DataLoader forking its workers while the device computes). */
static pthread_once_t g_blas_once = PTHREAD_ONCE_INIT;
static void blas_single_thread(void) { openblas_set_num_threads(1); }

/* c[b] = alpha * a[b] @ b[b] + beta * c[b] for `batch` row-major [m, k] @ [k, n] float
 * products, k > 0; a_step / b_step: elements between batches (0 broadcasts one matrix). */
static void gemm_batched(int64_t batch, int64_t m, int64_t n, int64_t k, double alpha,
                         const float *a, int64_t a_step, const float *b, int64_t b_step,
                         double beta, float *c) {
  pthread_once(&g_blas_once, blas_single_thread);
  for (int64_t i = 0; i < batch; i++) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, (float)alpha,
                a + i * a_step, (int)k, b + i * b_step, (int)n, (float)beta, c + i * m * n, (int)n);
  }
}

/* The documented operand types (FLOAT, FLOAT16, BFLOAT16). */
#define MATMUL_TYPES (SOP_BIT(ACL_FLOAT) | SOP_BIT(ACL_FLOAT16) | SOP_BIT(ACL_BF16))

/* Executor slots: 0 out, 1 the left operand, 2 the right one, 3 the addend (or absent);
 * i[0..3] batch, m, n, k; f[0] alpha, f[1] beta. */
static void run_matmul(aclOpExecutor *ex) {
  const int64_t batch = ex->i[0], m = ex->i[1], n = ex->i[2], k = ex->i[3];
  const aclTensor *a = &ex->t[1], *b = &ex->t[2];
  if (batch * m * n == 0) return;
  float *pa = dense_load_as(ex, 1, ACL_FLOAT, -1, NULL);
  float *pb = dense_load_as(ex, 2, ACL_FLOAT, -1, NULL);
  float *pc = NULL;
  double beta = 0;
  if (ex->t[3].ndim >= 0 && ex->f[1] != 0) { /* beta == 0 ignores the addend, NaNs included */
    pc = dense_load_as(ex, 3, ACL_FLOAT, ex->t[0].ndim, ex->t[0].dims);
    beta = ex->f[1];
  } else {
    pc = calloc((size_t)(batch * m * n), sizeof *pc);
  }
  if (pa == NULL || pb == NULL || pc == NULL) {
    dense_fail_memory();
  } else {
    if (k > 0) {
      const int64_t a_step = a->ndim == 3 && a->dims[0] > 1 ? m * k : 0;
      const int64_t b_step = b->ndim == 3 && b->dims[0] > 1 ? k * n : 0;
      gemm_batched(batch, m, n, k, ex->f[0], pa, a_step, pb, b_step, beta, pc);
    } else {
      for (int64_t e = 0; e < batch * m * n; e++) pc[e] = (float)(beta * pc[e]);
    }
    dense_store_as(ex, 0, pc, ACL_FLOAT);
  }
  free(pa);
  free(pb);
  free(pc);
}

/* Phase one of every product: out [batch?, m, n] = alpha * a [batch?, m, k] @ b [batch?, k, n]
 * + beta * addend (broadcast; NULL: none).  `rank` is 2 (mm) or 3 (bmm). */
static aclnnStatus matmul_prepare(const char *op, int rank, const char *a_arg, const aclTensor *a,
                                  const char *b_arg, const aclTensor *b, const char *c_arg,
                                  const aclTensor *c, const aclScalar *beta, const aclScalar *alpha,
                                  const char *out_arg, const aclTensor *out, int8_t cubeMathType,
                                  uint64_t *workspaceSize, aclOpExecutor **executor) {
  char s1[160], s2[160];
  SOP_CHECK(sop_check_nonnull(op, a_arg, a));
  SOP_CHECK(sop_check_nonnull(op, b_arg, b));
  if (c_arg != NULL) {
    SOP_CHECK(sop_check_nonnull(op, c_arg, c));
    SOP_CHECK(sop_check_nonnull(op, "beta", beta));
    SOP_CHECK(sop_check_nonnull(op, "alpha", alpha));
  }
  SOP_CHECK(sop_check_nonnull(op, out_arg, out));
  SOP_CHECK(sop_check_tensor(op, a_arg, a, MATMUL_TYPES));
  SOP_CHECK(sop_check_tensor(op, b_arg, b, MATMUL_TYPES));
  if (c_arg != NULL) {
    SOP_CHECK(sop_check_tensor(op, c_arg, c, MATMUL_TYPES));
    SOP_CHECK(sop_check_scalar(op, "beta", beta, SOP_NUMBERS));
    SOP_CHECK(sop_check_scalar(op, "alpha", alpha, SOP_NUMBERS));
  }
  SOP_CHECK(sop_check_tensor(op, out_arg, out, MATMUL_TYPES));
  if (cubeMathType < 0 || cubeMathType > 4) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "cubeMathType %d is not one of 0 (KEEP_DTYPE) .. 4 (USE_FP32_ADD)",
                    (int)cubeMathType);
  }
  if (a->ndim != rank || b->ndim != rank) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s %s and %s %s must have %d dimensions", a_arg,
                    sop_shape_str(a, s1), b_arg, sop_shape_str(b, s2), rank);
  }
  const int r = rank - 2;
  const int64_t m = a->dims[r], k = a->dims[r + 1], n = b->dims[r + 1];
  if (b->dims[r] != k) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s %s and %s %s cannot be multiplied", a_arg,
                    sop_shape_str(a, s1), b_arg, sop_shape_str(b, s2));
  }
  int64_t batch = 1;
  if (rank == 3) {
    batch = a->dims[0] > b->dims[0] ? a->dims[0] : b->dims[0];
    if ((a->dims[0] != batch && a->dims[0] != 1) || (b->dims[0] != batch && b->dims[0] != 1)) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "the batches of %s %s and %s %s differ", a_arg,
                      sop_shape_str(a, s1), b_arg, sop_shape_str(b, s2));
    }
  }
  const int64_t want[3] = {batch, m, n};
  SOP_CHECK(dense_check_shape(op, out_arg, out, rank, want + (3 - rank)));
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "dimensions beyond 2^31 are not supported");
  }
  aclDataType compute = sop_promote(a->dtype, b->dtype);
  if (c_arg != NULL && compute != ACL_DT_UNDEFINED) compute = sop_promote(compute, c->dtype);
  if (compute == ACL_DT_UNDEFINED) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "the operands' types have no common type");
  }
  SOP_CHECK(sop_check_cast(op, compute, out_arg, out));
  if (c_arg != NULL && !sop_broadcasts_to(c, out->ndim, out->dims)) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s %s does not broadcast to %s", c_arg,
                    sop_shape_str(c, s1), sop_shape_str(out, s2));
  }
  aclOpExecutor *ex = sop_executor_new(op, 4, run_matmul);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  sop_capture(ex, 1, a);
  sop_capture(ex, 2, b);
  sop_capture(ex, 3, c_arg != NULL ? c : NULL);
  ex->i[0] = batch;
  ex->i[1] = m;
  ex->i[2] = n;
  ex->i[3] = k;
  ex->f[0] = c_arg != NULL ? sop_load_f(alpha->value, alpha->dtype) : 1.0;
  ex->f[1] = c_arg != NULL ? sop_load_f(beta->value, beta->dtype) : 0.0;
  return sop_finish(ex, 0, workspaceSize, executor);
}

aclnnStatus aclnnMmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2, aclTensor *out,
                                    int8_t cubeMathType, uint64_t *workspaceSize,
                                    aclOpExecutor **executor) {
  return matmul_prepare("aclnnMm", 2, "self", self, "mat2", mat2, NULL, NULL, NULL, NULL, "out",
                        out, cubeMathType, workspaceSize, executor);
}
SOP_PHASE_TWO(Mm)

aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor *self, const aclTensor *mat1,
                                       const aclTensor *mat2, const aclScalar *beta,
                                       const aclScalar *alpha, aclTensor *out, int8_t cubeMathType,
                                       uint64_t *workspaceSize, aclOpExecutor **executor) {
  return matmul_prepare("aclnnAddmm", 2, "mat1", mat1, "mat2", mat2, "self", self, beta, alpha,
                        "out", out, cubeMathType, workspaceSize, executor);
}
SOP_PHASE_TWO(Addmm)

aclnnStatus aclnnInplaceAddmmGetWorkspaceSize(const aclTensor *selfRef, const aclTensor *mat1,
                                              const aclTensor *mat2, const aclScalar *beta,
                                              const aclScalar *alpha, int8_t cubeMathType,
                                              uint64_t *workspaceSize, aclOpExecutor **executor) {
  return matmul_prepare("aclnnInplaceAddmm", 2, "mat1", mat1, "mat2", mat2, "selfRef", selfRef,
                        beta, alpha, "selfRef", selfRef, cubeMathType, workspaceSize, executor);
}
SOP_PHASE_TWO(InplaceAddmm)

aclnnStatus aclnnBatchMatMulGetWorkspaceSize(const aclTensor *self, const aclTensor *mat2,
                                             aclTensor *out, int8_t cubeMathType,
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {
  return matmul_prepare("aclnnBatchMatMul", 3, "self", self, "mat2", mat2, NULL, NULL, NULL, NULL,
                        "out", out, cubeMathType, workspaceSize, executor);
}
SOP_PHASE_TWO(BatchMatMul)
