/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * C tests of the stand-in's structured aclnn operators (blas.c, softmax.c, reduce.c, index.c,
 * norm.c, loss.c, optim.c) through AscendCL's public API only: each operator's results on small
 * inputs (against values computed here, in double), non-contiguous operands, the error paths of
 * phase one (null arguments, types, shapes, dimension arguments) and the faults a running
 * operator raises for an index or a target out of range.  Exit status 0 when every check passes.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_addmm.h"
#include "aclnnop/aclnn_all.h"
#include "aclnnop/aclnn_apply_adam_w_v2.h"
#include "aclnnop/aclnn_batch_matmul.h"
#include "aclnnop/aclnn_cat.h"
#include "aclnnop/aclnn_embedding_dense_backward.h"
#include "aclnnop/aclnn_gather.h"
#include "aclnnop/aclnn_index.h"
#include "aclnnop/aclnn_index_select.h"
#include "aclnnop/aclnn_layer_norm.h"
#include "aclnnop/aclnn_layer_norm_backward.h"
#include "aclnnop/aclnn_linalg_vector_norm.h"
#include "aclnnop/aclnn_logsoftmax.h"
#include "aclnnop/aclnn_logsoftmax_backward.h"
#include "aclnnop/aclnn_mean.h"
#include "aclnnop/aclnn_mm.h"
#include "aclnnop/aclnn_mse_loss.h"
#include "aclnnop/aclnn_mse_loss_backward.h"
#include "aclnnop/aclnn_nll_loss.h"
#include "aclnnop/aclnn_nll_loss_backward.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "aclnnop/aclnn_softmax.h"
#include "aclnnop/aclnn_softmax_backward.h"
#include "test_util.h"

int tu_failures;
aclrtStream tu_stream;

#define NULLPTR ACLNN_ERR_PARAM_NULLPTR
#define INVALID ACLNN_ERR_PARAM_INVALID

/* Reads `x` and compares its first n elements with `want`. */
static void expect_values(const tu_tensor *x, const double *want, int64_t n, double tol,
                          const char *what) {
  double *got = malloc((size_t)x->storage * sizeof *got);
  tu_read(x, got);
  for (int64_t k = 0; k < n; k++) {
    if (!(fabs(got[k] - want[k]) <= tol) && !(isnan(got[k]) && isnan(want[k]))) {
      tu_failures++;
      fprintf(stderr, "%s: element %lld is %.9g, expected %.9g\n", what, (long long)k, got[k],
              want[k]);
      break;
    }
  }
  free(got);
}

static aclIntArray *ints(int n, const int64_t *v) { return aclCreateIntArray(v, (uint64_t)n); }

/* ---- matrix products ---- */

static void test_matmul(void) {
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
  tu_tensor x = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, a);
  tu_tensor y = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 2}, b);
  tu_tensor o = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 2}, NULL);
  TU_RUN(Mm, x.t, y.t, o.t, 0);
  double mm[4] = {58, 64, 139, 154};
  expect_values(&o, mm, 4, 1e-4, "aclnnMm");
  /* a transposed view of y's storage as the left operand: y^T [2, 3] @ x^T [3, 2] */
  tu_tensor yt = tu_view(&y, 2, (int64_t[]){2, 3}, (int64_t[]){1, 2}, 0);
  tu_tensor xt = tu_view(&x, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0);
  TU_RUN(Mm, yt.t, xt.t, o.t, 1);
  double mmt[4] = {58, 139, 64, 154};
  expect_values(&o, mmt, 4, 1e-4, "aclnnMm (transposed views)");
  /* addmm: 0.5 * bias[2] + 2 * x @ y; beta 0 ignores a NaN bias */
  tu_tensor bias = tu_make(ACL_FLOAT, 1, (int64_t[]){2}, (double[]){10, 20});
  aclScalar *half = tu_scalar_f(ACL_FLOAT, 0.5), *two = tu_scalar_f(ACL_FLOAT, 2);
  aclScalar *zero = tu_scalar_f(ACL_FLOAT, 0);
  TU_RUN(Addmm, bias.t, x.t, y.t, half, two, o.t, 0);
  double addmm[4] = {121, 138, 283, 318};
  expect_values(&o, addmm, 4, 1e-3, "aclnnAddmm");
  tu_tensor nan_bias = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 2}, (double[]){NAN, NAN, NAN, NAN});
  TU_RUN(Addmm, nan_bias.t, x.t, y.t, zero, two, o.t, 0);
  double twice[4] = {116, 128, 278, 308};
  expect_values(&o, twice, 4, 1e-3, "aclnnAddmm (beta 0)");
  tu_tensor acc = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 2}, (double[]){1, 1, 1, 1});
  TU_RUN(InplaceAddmm, acc.t, x.t, y.t, two, half, 0);
  double inplace[4] = {31, 34, 71.5, 79};
  expect_values(&acc, inplace, 4, 1e-3, "aclnnInplaceAddmm");
  /* batches: [2, 2, 3] @ [1, 3, 2] (the right operand broadcasts) */
  double a2[12];
  for (int k = 0; k < 12; k++) a2[k] = k < 6 ? a[k] : -a[k - 6];
  tu_tensor bx = tu_make(ACL_FLOAT, 3, (int64_t[]){2, 2, 3}, a2);
  tu_tensor by = tu_make(ACL_FLOAT, 3, (int64_t[]){1, 3, 2}, b);
  tu_tensor bo = tu_make(ACL_FLOAT, 3, (int64_t[]){2, 2, 2}, NULL);
  TU_RUN(BatchMatMul, bx.t, by.t, bo.t, 0);
  double bmm[8] = {58, 64, 139, 154, -58, -64, -139, -154};
  expect_values(&bo, bmm, 8, 1e-4, "aclnnBatchMatMul");
  /* float16 operands, computed in float32 */
  tu_tensor hx = tu_make(ACL_FLOAT16, 2, (int64_t[]){2, 3}, a);
  tu_tensor hy = tu_make(ACL_FLOAT16, 2, (int64_t[]){3, 2}, b);
  tu_tensor ho = tu_make(ACL_FLOAT16, 2, (int64_t[]){2, 2}, NULL);
  TU_RUN(Mm, hx.t, hy.t, ho.t, 0);
  expect_values(&ho, mm, 4, 0, "aclnnMm (float16)");

  /* error paths */
  TU_EXPECT(Mm, NULLPTR, "mat2", x.t, NULL, o.t, 0);
  TU_EXPECT(Mm, INVALID, "cubeMathType 5", x.t, y.t, o.t, 5);
  TU_EXPECT(Mm, INVALID, "cannot be multiplied", x.t, x.t, o.t, 0);
  TU_EXPECT(Mm, INVALID, "must have 2 dimensions", bx.t, y.t, o.t, 0);
  TU_EXPECT(Mm, INVALID, "out has shape [2, 2, 2], expected [2, 2]", x.t, y.t, bo.t, 0);
  tu_tensor dx = tu_make(ACL_DOUBLE, 2, (int64_t[]){2, 3}, a);
  TU_EXPECT(Mm, INVALID, "self", dx.t, y.t, o.t, 0);
  TU_EXPECT(Addmm, NULLPTR, "beta", bias.t, x.t, y.t, NULL, two, o.t, 0);
  TU_EXPECT(Addmm, INVALID, "does not broadcast", x.t, x.t, y.t, half, two, o.t, 0);
  tu_tensor bad_batch = tu_make(ACL_FLOAT, 3, (int64_t[]){3, 3, 2}, NULL);
  TU_EXPECT(BatchMatMul, INVALID, "batches", bx.t, bad_batch.t, bo.t, 0);
  tu_tensor *all[] = {&x,  &y,  &o,  &yt, &xt, &bias, &nan_bias, &acc,
                      &bx, &by, &bo, &hx, &hy, &ho,   &dx,       &bad_batch};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
  aclDestroyScalar(half);
  aclDestroyScalar(two);
  aclDestroyScalar(zero);
}

/* ---- softmax family ---- */

static void test_softmax(void) {
  double v[6] = {1, 2, 3, -1, 0, 1000}, sm[6], lsm[6];
  for (int r = 0; r < 2; r++) { /* along the last dimension of [2, 3] */
    double max = fmax(fmax(v[r * 3], v[r * 3 + 1]), v[r * 3 + 2]), sum = 0;
    for (int j = 0; j < 3; j++) sum += exp(v[r * 3 + j] - max);
    for (int j = 0; j < 3; j++) {
      sm[r * 3 + j] = exp(v[r * 3 + j] - max) / sum;
      lsm[r * 3 + j] = v[r * 3 + j] - max - log(sum);
    }
  }
  tu_tensor x = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, v);
  tu_tensor o = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, NULL);
  TU_RUN(Softmax, x.t, -1, o.t);
  expect_values(&o, sm, 6, 1e-6, "aclnnSoftmax");
  TU_RUN(LogSoftmax, x.t, 1, o.t);
  expect_values(&o, lsm, 6, 1e-4, "aclnnLogSoftmax");
  /* along dimension 0 of the transposed view [3, 2] */
  tu_tensor xt = tu_view(&x, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0);
  tu_tensor ot = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 2}, NULL);
  TU_RUN(Softmax, xt.t, 0, ot.t);
  double smt[6] = {sm[0], sm[3], sm[1], sm[4], sm[2], sm[5]};
  expect_values(&ot, smt, 6, 1e-6, "aclnnSoftmax (dim 0 of a view)");
  /* backwards: gradients of sum(g * softmax) and sum(g * log_softmax) */
  double g[6] = {0.5, -1, 2, 1, 1, 1}, want[6], lwant[6];
  for (int r = 0; r < 2; r++) {
    double dot = 0, sum = 0;
    for (int j = 0; j < 3; j++) {
      dot += g[r * 3 + j] * sm[r * 3 + j];
      sum += g[r * 3 + j];
    }
    for (int j = 0; j < 3; j++) {
      want[r * 3 + j] = sm[r * 3 + j] * (g[r * 3 + j] - dot);
      lwant[r * 3 + j] = g[r * 3 + j] - sm[r * 3 + j] * sum;
    }
  }
  tu_tensor gt = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, g);
  tu_tensor y = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, sm);
  tu_tensor ly = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, lsm);
  TU_RUN(SoftmaxBackward, gt.t, y.t, 1, o.t);
  expect_values(&o, want, 6, 1e-6, "aclnnSoftmaxBackward");
  TU_RUN(LogSoftmaxBackward, gt.t, ly.t, -1, o.t);
  expect_values(&o, lwant, 6, 1e-5, "aclnnLogSoftmaxBackward");

  TU_EXPECT(Softmax, NULLPTR, "self", NULL, 0, o.t);
  TU_EXPECT(Softmax, INVALID, "dim 2 is out of range", x.t, 2, o.t);
  TU_EXPECT(Softmax, INVALID, "out", x.t, 0, ot.t);
  tu_tensor ix = tu_make(ACL_INT32, 2, (int64_t[]){2, 3}, v);
  TU_EXPECT(LogSoftmax, INVALID, "self", ix.t, 0, o.t);
  tu_tensor hg = tu_make(ACL_FLOAT16, 2, (int64_t[]){2, 3}, NULL);
  TU_EXPECT(SoftmaxBackward, INVALID, "differ in type", hg.t, y.t, 1, o.t);
  TU_EXPECT(LogSoftmaxBackward, NULLPTR, "gradOutput", NULL, y.t, 1, o.t);
  tu_tensor *all[] = {&x, &o, &xt, &ot, &gt, &y, &ly, &ix, &hg};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
}

/* ---- reductions ---- */

static void test_reductions(void) {
  double v[6] = {1, -2, 3, 0, 5, -6};
  tu_tensor x = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, v);
  tu_tensor rows = tu_make(ACL_FLOAT, 1, (int64_t[]){2}, NULL);
  tu_tensor cols_keep = tu_make(ACL_FLOAT, 2, (int64_t[]){1, 3}, NULL);
  tu_tensor scalar = tu_make(ACL_FLOAT, 0, NULL, NULL);
  aclIntArray *d1 = ints(1, (int64_t[]){1}), *d0 = ints(1, (int64_t[]){-2});
  aclIntArray *both = ints(2, (int64_t[]){0, 1}), *none = ints(0, NULL);
  aclIntArray *twice = ints(2, (int64_t[]){1, -1}), *far = ints(1, (int64_t[]){2});
  TU_RUN(ReduceSum, x.t, d1, false, ACL_FLOAT, rows.t);
  expect_values(&rows, (double[]){2, -1}, 2, 0, "aclnnReduceSum (dim 1)");
  TU_RUN(ReduceSum, x.t, d0, true, ACL_FLOAT, cols_keep.t);
  expect_values(&cols_keep, (double[]){1, 3, -3}, 3, 0, "aclnnReduceSum (keepDims)");
  TU_RUN(ReduceSum, x.t, none, false, ACL_FLOAT, scalar.t);
  expect_values(&scalar, (double[]){1}, 1, 0, "aclnnReduceSum (every dim)");
  /* integers sum exactly in int64 */
  tu_tensor big = tu_make(ACL_INT64, 1, (int64_t[]){2}, NULL);
  int64_t huge[2] = {(int64_t)1 << 60, 3};
  CHECK(aclrtMemcpy(big.dev, 16, huge, 16, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
  tu_tensor isum = tu_make(ACL_INT64, 0, NULL, NULL);
  TU_RUN(ReduceSum, big.t, none, false, ACL_INT64, isum.t);
  int64_t got = 0;
  CHECK(aclrtSynchronizeStream(tu_stream) == ACL_SUCCESS);
  CHECK(aclrtMemcpy(&got, 8, isum.dev, 8, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS);
  CHECK(got == ((int64_t)1 << 60) + 3);
  TU_RUN(Mean, x.t, d1, false, ACL_FLOAT, rows.t);
  expect_values(&rows, (double[]){2.0 / 3, -1.0 / 3}, 2, 1e-6, "aclnnMean");
  TU_RUN(Mean, x.t, both, false, ACL_FLOAT, scalar.t);
  expect_values(&scalar, (double[]){1.0 / 6}, 1, 1e-6, "aclnnMean (both dims)");
  /* all: over dim 1, and over everything with [] */
  tu_tensor b = tu_make(ACL_BOOL, 1, (int64_t[]){2}, NULL);
  tu_tensor b0 = tu_make(ACL_UINT8, 0, NULL, NULL);
  TU_RUN(All, x.t, d1, false, b.t);
  expect_values(&b, (double[]){1, 0}, 2, 0, "aclnnAll");
  TU_RUN(All, x.t, none, false, b0.t);
  expect_values(&b0, (double[]){0}, 1, 0, "aclnnAll (every dim)");
  /* vector norms: 2, 1, inf, 0 and 3 over dim 1 */
  double orders[5] = {2, 1, INFINITY, 0, 3};
  for (int k = 0; k < 5; k++) {
    const double p = orders[k];
    double want[2];
    for (int r = 0; r < 2; r++) {
      double acc = 0;
      for (int j = 0; j < 3; j++) {
        double a = fabs(v[r * 3 + j]);
        acc = isinf(p) ? fmax(acc, a) : p == 0 ? acc + (a != 0) : acc + pow(a, p);
      }
      want[r] = isinf(p) || p == 0 || p == 1 ? acc : pow(acc, 1 / p);
    }
    aclScalar *ord = tu_scalar_f(ACL_DOUBLE, p);
    TU_RUN(LinalgVectorNorm, x.t, ord, d1, false, ACL_FLOAT, rows.t);
    expect_values(&rows, want, 2, 1e-5, "aclnnLinalgVectorNorm");
    aclDestroyScalar(ord);
  }

  TU_EXPECT(ReduceSum, NULLPTR, "dims", x.t, NULL, false, ACL_FLOAT, rows.t);
  TU_EXPECT(ReduceSum, INVALID, "names dimension 1 twice", x.t, twice, false, ACL_FLOAT, rows.t);
  TU_EXPECT(ReduceSum, INVALID, "dims 2 is out of range", x.t, far, false, ACL_FLOAT, rows.t);
  TU_EXPECT(ReduceSum, INVALID, "dtype ACL_DOUBLE differs", x.t, d1, false, ACL_DOUBLE, rows.t);
  TU_EXPECT(ReduceSum, INVALID, "out has shape [2], expected [2, 1]", x.t, d1, true, ACL_FLOAT,
            rows.t);
  TU_EXPECT(Mean, INVALID, "self", big.t, none, false, ACL_INT64, isum.t);
  TU_EXPECT(All, INVALID, "out", x.t, d1, false, rows.t);
  aclScalar *two = tu_scalar_f(ACL_FLOAT, 2);
  TU_EXPECT(LinalgVectorNorm, NULLPTR, "ord", x.t, NULL, d1, false, ACL_FLOAT, rows.t);
  TU_EXPECT(LinalgVectorNorm, INVALID, "out has shape", x.t, two, d0, false, ACL_FLOAT, rows.t);
  aclDestroyScalar(two);
  aclIntArray *arrays[] = {d1, d0, both, none, twice, far};
  for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) aclDestroyIntArray(arrays[k]);
  tu_tensor *all[] = {&x, &rows, &cols_keep, &scalar, &big, &isum, &b, &b0};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
}

/* ---- indexing ---- */

static void test_indexing(void) {
  double v[12];
  for (int k = 0; k < 12; k++) v[k] = k;
  tu_tensor x = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 4}, v); /* [[0..3], [4..7], [8..11]] */
  tu_tensor idx = tu_make(ACL_INT64, 1, (int64_t[]){3}, (double[]){2, -3, 2});
  tu_tensor o34 = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 4}, NULL);
  TU_RUN(IndexSelect, x.t, 0, idx.t, o34.t);
  double rows[12] = {8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11};
  expect_values(&o34, rows, 12, 0, "aclnnIndexSelect (dim 0)");
  tu_tensor o33 = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 3}, NULL);
  tu_tensor idx32 = tu_make(ACL_INT32, 1, (int64_t[]){3}, (double[]){3, 0, 1});
  TU_RUN(IndexSelect, x.t, -1, idx32.t, o33.t);
  double cols[9] = {3, 0, 1, 7, 4, 5, 11, 8, 9};
  expect_values(&o33, cols, 9, 0, "aclnnIndexSelect (dim -1, INT32)");
  /* a strided self (x transposed) and, the other way round, a strided out (transposed) */
  tu_tensor xt = tu_view(&x, 2, (int64_t[]){4, 3}, (int64_t[]){1, 4}, 0);
  TU_RUN(IndexSelect, xt.t, 0, idx32.t, o33.t);
  double cols_t[9] = {3, 7, 11, 0, 4, 8, 1, 5, 9};
  expect_values(&o33, cols_t, 9, 0, "aclnnIndexSelect (strided self)");
  tu_tensor o33b = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 3}, NULL);
  tu_tensor o33t = tu_view(&o33b, 2, (int64_t[]){3, 3}, (int64_t[]){1, 3}, 0);
  TU_RUN(IndexSelect, x.t, -1, idx32.t, o33t.t);
  expect_values(&o33b, cols_t, 9, 0, "aclnnIndexSelect (strided out)");
  tu_free(&xt);
  tu_free(&o33t);
  tu_free(&o33b);
  /* gather along dim 1 of x with a [3, 2] index */
  tu_tensor gi = tu_make(ACL_INT64, 2, (int64_t[]){3, 2}, (double[]){0, 3, 1, 1, -1, 2});
  tu_tensor go = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 2}, NULL);
  TU_RUN(Gather, x.t, 1, gi.t, go.t);
  expect_values(&go, (double[]){0, 3, 5, 5, 11, 10}, 6, 0, "aclnnGather");
  /* cat along dim 1 of x and a transposed [3, 2] view, with a skipped 1-d empty tensor */
  tu_tensor y = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, (double[]){100, 101, 102, 103, 104, 105});
  tu_tensor yt = tu_view(&y, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0);
  tu_tensor empty = tu_make(ACL_FLOAT, 1, (int64_t[]){0}, NULL);
  tu_tensor co = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 6}, NULL);
  const aclTensor *parts[3] = {x.t, empty.t, yt.t};
  aclTensorList *list = aclCreateTensorList(parts, 3);
  TU_RUN(Cat, list, 1, co.t);
  double cat[18] = {0, 1, 2, 3, 100, 103, 4, 5, 6, 7, 101, 104, 8, 9, 10, 11, 102, 105};
  expect_values(&co, cat, 18, 0, "aclnnCat");
  /* advanced indexing: x[[2, 0], [1, 3]] and x[:, [3, 1]] (an empty tensor leaves dim 0) */
  tu_tensor i0 = tu_make(ACL_INT64, 1, (int64_t[]){2}, (double[]){2, 0});
  tu_tensor i1 = tu_make(ACL_INT64, 1, (int64_t[]){2}, (double[]){1, -1});
  tu_tensor none = tu_make(ACL_INT64, 1, (int64_t[]){0}, NULL);
  tu_tensor io = tu_make(ACL_FLOAT, 1, (int64_t[]){2}, NULL);
  const aclTensor *pair[2] = {i0.t, i1.t};
  aclTensorList *both = aclCreateTensorList(pair, 2);
  TU_RUN(Index, x.t, both, io.t);
  expect_values(&io, (double[]){9, 3}, 2, 0, "aclnnIndex (two dims)");
  tu_tensor io2 = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 2}, NULL);
  tu_tensor i1b = tu_view(&i1, 1, (int64_t[]){2}, (int64_t[]){1}, 0); /* a tensor is in one list */
  const aclTensor *second[2] = {none.t, i1b.t};
  aclTensorList *cols_only = aclCreateTensorList(second, 2);
  TU_RUN(Index, x.t, cols_only, io2.t);
  expect_values(&io2, (double[]){1, 3, 5, 7, 9, 11}, 6, 0, "aclnnIndex (dim 1 only)");
  /* embedding backward: rows of grad [2, 2, 3] summed by their index, padding 1 dropped */
  double grad[12];
  for (int k = 0; k < 12; k++) grad[k] = k + 1;
  tu_tensor gr = tu_make(ACL_FLOAT, 3, (int64_t[]){2, 2, 3}, grad);
  tu_tensor ids = tu_make(ACL_INT64, 2, (int64_t[]){2, 2}, (double[]){3, 1, 3, 0});
  tu_tensor eo = tu_make(ACL_FLOAT, 2, (int64_t[]){4, 3}, NULL);
  TU_RUN(EmbeddingDenseBackward, gr.t, ids.t, 4, 1, false, eo.t);
  double emb[12] = {10, 11, 12, 0, 0, 0, 0, 0, 0, 8, 10, 12};
  expect_values(&eo, emb, 12, 0, "aclnnEmbeddingDenseBackward");
  TU_RUN(EmbeddingDenseBackward, gr.t, ids.t, 4, (uint64_t)-1, true, eo.t);
  double scaled[12] = {10, 11, 12, 4, 5, 6, 0, 0, 0, 4, 5, 6};
  expect_values(&eo, scaled, 12, 1e-6, "aclnnEmbeddingDenseBackward (scaled, no padding)");

  TU_EXPECT(IndexSelect, NULLPTR, "index", x.t, 0, NULL, o34.t);
  TU_EXPECT(IndexSelect, INVALID, "index", x.t, 0, x.t, o34.t);
  TU_EXPECT(IndexSelect, INVALID, "dim 2 is out of range", x.t, 2, idx.t, o34.t);
  TU_EXPECT(IndexSelect, INVALID, "out has shape [3, 3], expected [3, 4]", x.t, 0, idx.t, o33.t);
  TU_EXPECT(Gather, INVALID, "does not fit", x.t, 1, idx.t, go.t);
  TU_EXPECT(Gather, INVALID, "out", x.t, 1, gi.t, o33.t);
  TU_EXPECT(Cat, NULLPTR, "tensors", NULL, 0, co.t);
  TU_EXPECT(Cat, INVALID, "does not match out", list, 0, co.t);
  tu_tensor co5 = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 5}, NULL);
  TU_EXPECT(Cat, INVALID, "add up to 6, out's is 5", list, 1, co5.t);
  TU_EXPECT(Index, INVALID, "out has shape [2], expected [3, 2]", x.t, cols_only, io.t);
  tu_tensor mask = tu_make(ACL_BOOL, 1, (int64_t[]){3}, (double[]){1, 0, 1});
  const aclTensor *masks[1] = {mask.t};
  aclTensorList *mask_list = aclCreateTensorList(masks, 1);
  TU_EXPECT(Index, INVALID, "BOOL indices", x.t, mask_list, io.t);
  TU_EXPECT(EmbeddingDenseBackward, INVALID, "one more (last) dimension", gr.t, idx.t, 4, 0, false,
            eo.t);
  TU_EXPECT(EmbeddingDenseBackward, INVALID, "out has shape [4, 3], expected [5, 3]", gr.t, ids.t,
            5, 0, false, eo.t);
  aclDestroyTensorList(list); /* the lists own their tensors */
  aclDestroyTensorList(both);
  aclDestroyTensorList(cols_only);
  aclDestroyTensorList(mask_list);
  tu_tensor *owned[] = {&x, &empty, &yt, &i0, &i1, &none, &i1b, &mask};
  for (size_t k = 0; k < sizeof owned / sizeof owned[0]; k++) owned[k]->t = NULL;
  tu_tensor *all[] = {&x,   &idx, &o34, &o33,  &idx32, &gi, &go,  &y,  &yt,  &empty, &co,
                      &co5, &i0,  &i1,  &none, &i1b,   &io, &io2, &gr, &ids, &eo,    &mask};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
}

/* ---- layer normalisation ---- */

static void test_layer_norm(void) {
  double v[6] = {1, 2, 4, -3, 0, 3}, w[3] = {1, 2, -1}, b[3] = {0, 1, 0.5};
  double y[6], mean[2], rstd[2];
  for (int r = 0; r < 2; r++) {
    double m = (v[r * 3] + v[r * 3 + 1] + v[r * 3 + 2]) / 3, var = 0;
    for (int j = 0; j < 3; j++) var += (v[r * 3 + j] - m) * (v[r * 3 + j] - m) / 3;
    mean[r] = m;
    rstd[r] = 1 / sqrt(var + 1e-5);
    for (int j = 0; j < 3; j++) y[r * 3 + j] = (v[r * 3 + j] - m) * rstd[r] * w[j] + b[j];
  }
  tu_tensor x = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, v);
  tu_tensor wt = tu_make(ACL_FLOAT, 1, (int64_t[]){3}, w);
  tu_tensor bt = tu_make(ACL_FLOAT, 1, (int64_t[]){3}, b);
  tu_tensor o = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, NULL);
  tu_tensor mo = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 1}, NULL);
  tu_tensor ro = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 1}, NULL);
  aclIntArray *shape = ints(1, (int64_t[]){3});
  TU_RUN(LayerNorm, x.t, shape, wt.t, bt.t, 1e-5, o.t, mo.t, ro.t);
  expect_values(&o, y, 6, 1e-5, "aclnnLayerNorm");
  expect_values(&mo, mean, 2, 1e-6, "aclnnLayerNorm (mean)");
  expect_values(&ro, rstd, 2, 1e-4, "aclnnLayerNorm (rstd)");
  TU_RUN(LayerNorm, x.t, shape, NULL, NULL, 1e-5, o.t, NULL, NULL);
  double plain[6];
  for (int k = 0; k < 6; k++) plain[k] = (y[k] - b[k % 3]) / w[k % 3];
  expect_values(&o, plain, 6, 1e-5, "aclnnLayerNorm (no weight, no bias)");
  /* the backward against central differences of sum(g * layer_norm(x)) */
  double g[6] = {0.3, -1, 2, 0.5, 0.25, -0.75}, dx[6], dw[3] = {0}, db[3] = {0};
  for (int r = 0; r < 2; r++) {
    for (int j = 0; j < 3; j++) {
      double xhat = (v[r * 3 + j] - mean[r]) * rstd[r];
      dw[j] += g[r * 3 + j] * xhat;
      db[j] += g[r * 3 + j];
    }
  }
  for (int e = 0; e < 6; e++) {
    double f[2];
    for (int s = 0; s < 2; s++) {
      double xs[6];
      memcpy(xs, v, sizeof xs);
      xs[e] += s ? -1e-6 : 1e-6;
      f[s] = 0;
      for (int r = 0; r < 2; r++) {
        double m = (xs[r * 3] + xs[r * 3 + 1] + xs[r * 3 + 2]) / 3, var = 0;
        for (int j = 0; j < 3; j++) var += (xs[r * 3 + j] - m) * (xs[r * 3 + j] - m) / 3;
        for (int j = 0; j < 3; j++)
          f[s] += g[r * 3 + j] * (xs[r * 3 + j] - m) / sqrt(var + 1e-5) * w[j];
      }
    }
    dx[e] = (f[0] - f[1]) / 2e-6;
  }
  tu_tensor gt = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, g);
  tu_tensor mt = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 1}, mean);
  tu_tensor rt = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 1}, rstd);
  tu_tensor dxo = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, NULL);
  tu_tensor dwo = tu_make(ACL_FLOAT, 1, (int64_t[]){3}, NULL);
  tu_tensor dbo = tu_make(ACL_FLOAT, 1, (int64_t[]){3}, NULL);
  aclBoolArray *mask = aclCreateBoolArray((bool[]){true, true, true}, 3);
  TU_RUN(LayerNormBackward, gt.t, x.t, shape, mt.t, rt.t, wt.t, bt.t, mask, dxo.t, dwo.t, dbo.t);
  expect_values(&dxo, dx, 6, 1e-3, "aclnnLayerNormBackward (input)");
  expect_values(&dwo, dw, 3, 1e-5, "aclnnLayerNormBackward (weight)");
  expect_values(&dbo, db, 3, 1e-6, "aclnnLayerNormBackward (bias)");
  aclBoolArray *only_input = aclCreateBoolArray((bool[]){true, false, false}, 3);
  TU_RUN(LayerNormBackward, gt.t, x.t, shape, mt.t, rt.t, wt.t, NULL, only_input, dxo.t, NULL,
         NULL);
  expect_values(&dxo, dx, 6, 1e-3, "aclnnLayerNormBackward (input only)");

  aclIntArray *wrong = ints(1, (int64_t[]){2}), *empty = ints(0, NULL);
  TU_EXPECT(LayerNorm, NULLPTR, "normalizedShape", x.t, NULL, NULL, NULL, 1e-5, o.t, NULL, NULL);
  TU_EXPECT(LayerNorm, INVALID, "does not end in normalizedShape", x.t, wrong, NULL, NULL, 1e-5,
            o.t, NULL, NULL);
  TU_EXPECT(LayerNorm, INVALID, "normalizedShape has 0 dimensions", x.t, empty, NULL, NULL, 1e-5,
            o.t, NULL, NULL);
  TU_EXPECT(LayerNorm, INVALID, "weightOptional has shape [2, 1], expected [3]", x.t, shape, mo.t,
            NULL, 1e-5, o.t, NULL, NULL);
  TU_EXPECT(LayerNorm, INVALID, "meanOutOptional has shape [3], expected [2, 1]", x.t, shape, NULL,
            NULL, 1e-5, o.t, wt.t, NULL);
  TU_EXPECT(LayerNormBackward, NULLPTR, "gradWeightOut", gt.t, x.t, shape, mt.t, rt.t, wt.t, NULL,
            mask, dxo.t, NULL, dbo.t);
  aclBoolArray *two = aclCreateBoolArray((bool[]){true, true}, 2);
  TU_EXPECT(LayerNormBackward, INVALID, "outputMask has 2 entries", gt.t, x.t, shape, mt.t, rt.t,
            wt.t, NULL, two, dxo.t, dwo.t, dbo.t);
  aclDestroyIntArray(shape);
  aclDestroyIntArray(wrong);
  aclDestroyIntArray(empty);
  aclDestroyBoolArray(mask);
  aclDestroyBoolArray(only_input);
  aclDestroyBoolArray(two);
  tu_tensor *all[] = {&x, &wt, &bt, &o, &mo, &ro, &gt, &mt, &rt, &dxo, &dwo, &dbo};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
}

/* ---- losses ---- */

static void test_losses(void) {
  double lp[6] = {-1, -2, -3, -0.5, -1.5, -2.5}, w[3] = {1, 2, 0.5};
  tu_tensor x = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, lp);
  tu_tensor t = tu_make(ACL_INT64, 1, (int64_t[]){2}, (double[]){1, 2});
  tu_tensor ti = tu_make(ACL_INT64, 1, (int64_t[]){2}, (double[]){1, -100});
  tu_tensor wt = tu_make(ACL_FLOAT, 1, (int64_t[]){3}, w);
  tu_tensor o2 = tu_make(ACL_FLOAT, 1, (int64_t[]){2}, NULL);
  tu_tensor o0 = tu_make(ACL_FLOAT, 0, NULL, NULL);
  tu_tensor tw = tu_make(ACL_FLOAT, 0, NULL, NULL);
  TU_RUN(NLLLoss, x.t, t.t, wt.t, 0, -100, o2.t, tw.t);
  expect_values(&o2, (double[]){4, 1.25}, 2, 1e-6, "aclnnNLLLoss (none)");
  TU_RUN(NLLLoss, x.t, t.t, wt.t, 1, -100, o0.t, tw.t);
  expect_values(&o0, (double[]){5.25 / 2.5}, 1, 1e-6, "aclnnNLLLoss (mean)");
  expect_values(&tw, (double[]){2.5}, 1, 1e-6, "aclnnNLLLoss (total weight)");
  TU_RUN(NLLLoss, x.t, ti.t, wt.t, 2, -100, o0.t, tw.t);
  expect_values(&o0, (double[]){4}, 1, 1e-6, "aclnnNLLLoss (sum, ignored target)");
  expect_values(&tw, (double[]){2}, 1, 1e-6, "aclnnNLLLoss (sum: total weight)");
  /* backward of the mean: -w[t] * g / total at each target */
  tu_tensor g0 = tu_make(ACL_FLOAT, 0, NULL, (double[]){2});
  tu_tensor tot = tu_make(ACL_FLOAT, 0, NULL, (double[]){2.5});
  tu_tensor dx = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, NULL);
  TU_RUN(NLLLossBackward, g0.t, x.t, t.t, wt.t, 1, -100, tot.t, dx.t);
  expect_values(&dx, (double[]){0, -1.6, 0, 0, 0, -0.4}, 6, 1e-6, "aclnnNLLLossBackward");
  tu_tensor g2 = tu_make(ACL_FLOAT, 1, (int64_t[]){2}, (double[]){1, 3});
  TU_RUN(NLLLossBackward, g2.t, x.t, ti.t, wt.t, 0, -100, tot.t, dx.t);
  expect_values(&dx, (double[]){0, -2, 0, 0, 0, 0}, 6, 1e-6, "aclnnNLLLossBackward (none)");
  /* mse: [2, 3] against a broadcast [3] target */
  tu_tensor y = tu_make(ACL_FLOAT, 1, (int64_t[]){3}, (double[]){-1, -1, -1});
  tu_tensor mo = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, NULL);
  TU_RUN(MseLoss, x.t, y.t, 0, mo.t);
  double sq[6], sum = 0;
  for (int k = 0; k < 6; k++) sum += sq[k] = (lp[k] + 1) * (lp[k] + 1);
  expect_values(&mo, sq, 6, 1e-6, "aclnnMseLoss (none)");
  TU_RUN(MseLoss, x.t, y.t, 1, o0.t);
  expect_values(&o0, (double[]){sum / 6}, 1, 1e-6, "aclnnMseLoss (mean)");
  TU_RUN(MseLoss, x.t, y.t, 2, o0.t);
  expect_values(&o0, (double[]){sum}, 1, 1e-5, "aclnnMseLoss (sum)");
  tu_tensor yy = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, (double[]){-1, -1, -1, -1, -1, -1});
  TU_RUN(MseLossBackward, g0.t, x.t, yy.t, 1, mo.t);
  double dmse[6];
  for (int k = 0; k < 6; k++) dmse[k] = 2 * 2 * (lp[k] + 1) / 6;
  expect_values(&mo, dmse, 6, 1e-6, "aclnnMseLossBackward (mean)");

  TU_EXPECT(NLLLoss, NULLPTR, "weight", x.t, t.t, NULL, 1, -100, o0.t, tw.t);
  TU_EXPECT(NLLLoss, INVALID, "reduction 3", x.t, t.t, wt.t, 3, -100, o0.t, tw.t);
  TU_EXPECT(NLLLoss, INVALID, "target", x.t, wt.t, wt.t, 1, -100, o0.t, tw.t);
  TU_EXPECT(NLLLoss, INVALID, "out has shape [], expected [2]", x.t, t.t, wt.t, 0, -100, o0.t,
            tw.t);
  TU_EXPECT(NLLLoss, INVALID, "out [2] must hold one element", x.t, t.t, wt.t, 1, -100, o2.t, tw.t);
  TU_EXPECT(NLLLossBackward, INVALID, "out", g0.t, x.t, t.t, wt.t, 1, -100, tot.t, o2.t);
  tu_tensor bad = tu_make(ACL_FLOAT, 1, (int64_t[]){4}, NULL);
  TU_EXPECT(MseLoss, INVALID, "do not broadcast", x.t, bad.t, 1, o0.t);
  TU_EXPECT(MseLoss, INVALID, "out has shape [2], expected []", x.t, y.t, 1, o2.t);
  TU_EXPECT(MseLossBackward, NULLPTR, "gradOutput", NULL, x.t, y.t, 1, mo.t);
  tu_tensor *all[] = {&x, &t, &ti, &wt, &o2, &o0, &tw, &g0, &tot, &dx, &g2, &y, &mo, &yy, &bad};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
}

/* ---- AdamW ---- */

static void test_adamw(void) {
  double p[4] = {1, -2, 0.5, 3}, m[4] = {0.1, 0, -0.2, 0}, v[4] = {0.01, 0.02, 0, 0.5};
  double g[4] = {0.3, -0.1, 2, 0}, mx[4] = {0.5, 0, 0, 0};
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, wd = 0.1, eps = 1e-8, step = 3;
  double wp[4], wm[4], wv[4], wmx[4];
  for (int k = 0; k < 4; k++) { /* maximize and amsgrad */
    double gk = -g[k];
    wm[k] = b1 * m[k] + (1 - b1) * gk;
    wv[k] = b2 * v[k] + (1 - b2) * gk * gk;
    wmx[k] = fmax(mx[k], wv[k]);
    double mhat = wm[k] / (1 - pow(b1, step)), vhat = wmx[k] / (1 - pow(b2, step));
    wp[k] = p[k] - lr * wd * p[k] - lr * mhat / (sqrt(vhat) + eps);
  }
  tu_tensor pt = tu_make(ACL_FLOAT, 1, (int64_t[]){4}, p);
  tu_tensor mt = tu_make(ACL_FLOAT, 1, (int64_t[]){4}, m);
  tu_tensor vt = tu_make(ACL_FLOAT, 1, (int64_t[]){4}, v);
  tu_tensor xt = tu_make(ACL_FLOAT, 1, (int64_t[]){4}, mx);
  tu_tensor gt = tu_make(ACL_FLOAT, 1, (int64_t[]){4}, g);
  tu_tensor st = tu_make(ACL_INT64, 1, (int64_t[]){1}, (double[]){step});
  TU_RUN(ApplyAdamWV2, pt.t, mt.t, vt.t, xt.t, gt.t, st.t, (float)lr, (float)b1, (float)b2,
         (float)wd, (float)eps, true, true);
  expect_values(&pt, wp, 4, 1e-6, "aclnnApplyAdamWV2 (var)");
  expect_values(&mt, wm, 4, 1e-7, "aclnnApplyAdamWV2 (m)");
  expect_values(&vt, wv, 4, 1e-7, "aclnnApplyAdamWV2 (v)");
  expect_values(&xt, wmx, 4, 1e-7, "aclnnApplyAdamWV2 (max)");

  TU_EXPECT(ApplyAdamWV2, NULLPTR, "maxGradNormOptionalRef", pt.t, mt.t, vt.t, NULL, gt.t, st.t,
            0.1f, 0.9f, 0.99f, 0, 1e-8f, true, false);
  tu_tensor short_m = tu_make(ACL_FLOAT, 1, (int64_t[]){3}, NULL);
  TU_EXPECT(ApplyAdamWV2, INVALID, "mRef", pt.t, short_m.t, vt.t, NULL, gt.t, st.t, 0.1f, 0.9f,
            0.99f, 0, 1e-8f, false, false);
  tu_tensor steps = tu_make(ACL_INT64, 1, (int64_t[]){2}, NULL);
  TU_EXPECT(ApplyAdamWV2, INVALID, "step has 2 elements", pt.t, mt.t, vt.t, NULL, gt.t, steps.t,
            0.1f, 0.9f, 0.99f, 0, 1e-8f, false, false);
  tu_tensor *all[] = {&pt, &mt, &vt, &xt, &gt, &st, &short_m, &steps};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
}

/* ---- faults: indices and targets out of range, found while the operator runs ---- */

/* Synchronizing reports the fault with `message`; then the device is reset (a second
 * aclrtSetDevice in main keeps the context, and the stream, across the reset). */
static void expect_fault(const char *message) {
  CHECK(aclrtSynchronizeStream(tu_stream) == ACL_ERROR_RT_AICORE_EXCEPTION);
  CHECK_MSG(message);
  CHECK(aclrtResetDevice(0) == ACL_SUCCESS);
  CHECK(aclrtSetDevice(0) == ACL_SUCCESS);
  CHECK(aclrtSynchronizeStream(tu_stream) == ACL_SUCCESS);
}

static void test_faults(void) {
  tu_tensor x = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 4}, NULL);
  tu_tensor big = tu_make(ACL_INT64, 1, (int64_t[]){2}, (double[]){0, 7});
  tu_tensor o = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 4}, NULL);
  TU_RUN(IndexSelect, x.t, 0, big.t, o.t);
  expect_fault("aclnnIndexSelect: index 7 is out of bounds for dimension 0 with size 3");
  tu_tensor gi = tu_make(ACL_INT64, 2, (int64_t[]){1, 2}, (double[]){1, -5});
  tu_tensor go = tu_make(ACL_FLOAT, 2, (int64_t[]){1, 2}, NULL);
  TU_RUN(Gather, x.t, 1, gi.t, go.t);
  expect_fault("aclnnGather: index -5 is out of bounds for dimension 1 with size 4");
  const aclTensor *items[1] = {big.t};
  aclTensorList *list = aclCreateTensorList(items, 1);
  TU_RUN(Index, x.t, list, o.t);
  expect_fault("aclnnIndex: index 7 is out of bounds for dimension 0 with size 3");
  aclDestroyTensorList(list); /* destroys big.t */
  big.t = NULL;
  tu_tensor ids = tu_make(ACL_INT64, 1, (int64_t[]){2}, (double[]){1, 3});
  tu_tensor grad = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 4}, NULL);
  tu_tensor eo = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 4}, NULL);
  TU_RUN(EmbeddingDenseBackward, grad.t, ids.t, 3, (uint64_t)-1, false, eo.t);
  expect_fault("aclnnEmbeddingDenseBackward: index 3 is out of bounds");
  tu_tensor lp = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, NULL);
  tu_tensor w = tu_make(ACL_FLOAT, 1, (int64_t[]){3}, (double[]){1, 1, 1});
  tu_tensor out = tu_make(ACL_FLOAT, 0, NULL, NULL), tw = tu_make(ACL_FLOAT, 0, NULL, NULL);
  TU_RUN(NLLLoss, lp.t, ids.t, w.t, 1, -100, out.t, tw.t);
  expect_fault("aclnnNLLLoss: target 3 at position 1 is out of bounds for 3 classes");
  tu_tensor *all[] = {&x, &big, &o, &gi, &go, &ids, &grad, &eo, &lp, &w, &out, &tw};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
}

int main(void) {
  if (tu_setup() != 0) return 1;
  if (aclrtSetDevice(0) != ACL_SUCCESS) return 1; /* a second reference: see expect_fault */
  test_matmul();
  test_softmax();
  test_reductions();
  test_indexing();
  test_layer_norm();
  test_losses();
  test_adamw();
  test_faults();
  aclrtResetDevice(0);
  return tu_teardown();
}
