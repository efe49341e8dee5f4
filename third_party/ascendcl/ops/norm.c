/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The stand-in's layer normalisation: aclnnLayerNorm and aclnnLayerNormBackward (hicann/ops-nn,
 * norm/layer_norm_v4 and norm/layer_norm_grad_v3).  input [A..., R...] is viewed as [rows, n]
 * with n the product of normalizedShape; mean and rstd are one value per row.  Computed in
 * double on contiguous copies.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "aclnnop/aclnn_layer_norm.h"
#include "aclnnop/aclnn_layer_norm_backward.h"
#include "dense.h"

/* y = (x - mean) * rstd * w + b per row; w/b NULL mean 1/0; mean/rstd out (per row). */
static void layer_norm_forward(const double *x, const double *w, const double *b, double eps,
                               int64_t rows, int64_t n, double *y, double *mean, double *rstd) {
  for (int64_t r = 0; r < rows; r++) {
    const double *xr = x + r * n;
    double m = 0;
    for (int64_t j = 0; j < n; j++) m += xr[j];
    m /= (double)n;
    double var = 0;
    for (int64_t j = 0; j < n; j++) var += (xr[j] - m) * (xr[j] - m);
    var /= (double)n;
    const double rs = 1.0 / sqrt(var + eps);
    for (int64_t j = 0; j < n; j++) {
      double v = (xr[j] - m) * rs;
      if (w) v *= w[j];
      if (b) v += b[j];
      y[r * n + j] = v;
    }
    mean[r] = m;
    rstd[r] = rs;
  }
}

/* The gradients (each NULL when not wanted): with xhat = (x - mean) * rstd and
 * gw = dy * w, dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)); dw = sum over rows of
 * dy * xhat; db = sum over rows of dy. */
static void layer_norm_backward(const double *dy, const double *x, const double *mean,
                                const double *rstd, const double *w, int64_t rows, int64_t n,
                                double *dx, double *dw, double *db) {
  for (int64_t j = 0; dw && j < n; j++) dw[j] = 0;
  for (int64_t j = 0; db && j < n; j++) db[j] = 0;
  for (int64_t r = 0; r < rows; r++) {
    const double *dyr = dy + r * n, *xr = x + r * n;
    double sum_gw = 0, sum_gw_xhat = 0;
    for (int64_t j = 0; j < n; j++) {
      const double xhat = (xr[j] - mean[r]) * rstd[r];
      const double gw = w ? dyr[j] * w[j] : dyr[j];
      sum_gw += gw;
      sum_gw_xhat += gw * xhat;
      if (dw) dw[j] += dyr[j] * xhat;
      if (db) db[j] += dyr[j];
    }
    if (!dx) continue;
    const double mean_gw = sum_gw / (double)n, mean_gw_xhat = sum_gw_xhat / (double)n;
    for (int64_t j = 0; j < n; j++) {
      const double xhat = (xr[j] - mean[r]) * rstd[r];
      const double gw = w ? dyr[j] * w[j] : dyr[j];
      dx[r * n + j] = rstd[r] * (gw - mean_gw - xhat * mean_gw_xhat);
    }
  }
}

#define NORM_TYPES (SOP_BIT(ACL_FLOAT) | SOP_BIT(ACL_FLOAT16) | SOP_BIT(ACL_BF16))

/* Checks normalizedShape against input [A..., R...] and returns rows = prod(A), n = prod(R). */
static aclnnStatus norm_split(const char *op, const aclTensor *input, const aclIntArray *shape,
                              int64_t *rows, int64_t *n) {
  char a[160];
  if (shape->size < 1 || shape->size > (uint64_t)input->ndim) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "normalizedShape has %llu dimensions; input %s needs 1 to %d",
                    (unsigned long long)shape->size, sop_shape_str(input, a), (int)input->ndim);
  }
  const int32_t lead = input->ndim - (int32_t)shape->size;
  *rows = 1;
  *n = 1;
  for (int32_t d = 0; d < input->ndim; d++) {
    if (d < lead) {
      *rows *= input->dims[d];
    } else if (input->dims[d] != shape->values[d - lead]) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                      "input %s does not end in normalizedShape (dimension %d: %lld)",
                      sop_shape_str(input, a), (int)d, (long long)shape->values[d - lead]);
    } else {
      *n *= input->dims[d];
    }
  }
  return ACLNN_SUCCESS;
}

/* An optional parameter of normalizedShape's shape (weight, bias). */
static aclnnStatus check_param(const char *op, const char *arg, const aclTensor *t,
                               const aclIntArray *shape) {
  if (t == NULL) return ACLNN_SUCCESS;
  SOP_CHECK(sop_check_tensor(op, arg, t, NORM_TYPES));
  return dense_check_shape(op, arg, t, (int32_t)shape->size, shape->values);
}

/* A statistic per row (mean, rstd): [A..., 1, ..., 1] with input's rank. */
static aclnnStatus check_stat(const char *op, const char *arg, const aclTensor *t,
                              const aclTensor *input, const aclIntArray *shape) {
  if (t == NULL) return ACLNN_SUCCESS;
  SOP_CHECK(sop_check_tensor(op, arg, t, NORM_TYPES));
  int64_t want[SOP_OP_MAX_DIMS];
  const int32_t lead = input->ndim - (int32_t)shape->size;
  for (int32_t d = 0; d < input->ndim; d++) want[d] = d < lead ? input->dims[d] : 1;
  return dense_check_shape(op, arg, t, input->ndim, want);
}

/* aclnnLayerNorm.  Slots: 0 out, 1 mean, 2 rstd, 3 input, 4 weight, 5 bias (absent ones
 * ndim -1); i[0] rows, i[1] n; f[0] eps. */
static void run_layer_norm(aclOpExecutor *ex) {
  const int64_t rows = ex->i[0], n = ex->i[1];
  if (rows * n == 0) return;
  double *x = dense_load(ex, 3);
  double *w = ex->t[4].ndim >= 0 ? dense_load(ex, 4) : NULL;
  double *b = ex->t[5].ndim >= 0 ? dense_load(ex, 5) : NULL;
  double *y = dense_alloc(rows * n, sizeof *y);
  double *mean = dense_alloc(rows, sizeof *mean), *rstd = dense_alloc(rows, sizeof *rstd);
  if (x == NULL || (ex->t[4].ndim >= 0 && w == NULL) || (ex->t[5].ndim >= 0 && b == NULL) ||
      y == NULL || mean == NULL || rstd == NULL) {
    dense_fail_memory();
  } else {
    layer_norm_forward(x, w, b, ex->f[0], rows, n, y, mean, rstd);
    dense_store(ex, 0, y);
    if (ex->t[1].ndim >= 0) dense_store(ex, 1, mean);
    if (ex->t[2].ndim >= 0) dense_store(ex, 2, rstd);
  }
  free(x);
  free(w);
  free(b);
  free(y);
  free(mean);
  free(rstd);
}

aclnnStatus aclnnLayerNormGetWorkspaceSize(
    const aclTensor *input, const aclIntArray *normalizedShape, const aclTensor *weightOptional,
    const aclTensor *biasOptional, double eps, aclTensor *out, aclTensor *meanOutOptional,
    aclTensor *rstdOutOptional, uint64_t *workspaceSize, aclOpExecutor **executor) {
  static const char op[] = "aclnnLayerNorm";
  SOP_CHECK(sop_check_nonnull(op, "input", input));
  SOP_CHECK(sop_check_nonnull(op, "normalizedShape", normalizedShape));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  SOP_CHECK(sop_check_tensor(op, "input", input, NORM_TYPES));
  SOP_CHECK(sop_check_tensor(op, "out", out, NORM_TYPES));
  int64_t rows, n;
  SOP_CHECK(norm_split(op, input, normalizedShape, &rows, &n));
  SOP_CHECK(check_param(op, "weightOptional", weightOptional, normalizedShape));
  SOP_CHECK(check_param(op, "biasOptional", biasOptional, normalizedShape));
  SOP_CHECK(sop_check_same_shape(op, "out", out, "input", input));
  SOP_CHECK(check_stat(op, "meanOutOptional", meanOutOptional, input, normalizedShape));
  SOP_CHECK(check_stat(op, "rstdOutOptional", rstdOutOptional, input, normalizedShape));
  const aclTensor *same_type[] = {out, meanOutOptional, rstdOutOptional};
  for (int k = 0; k < 3; k++) {
    if (same_type[k] != NULL && same_type[k]->dtype != input->dtype) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                      "the outputs must have input's type %s (one is %s)",
                      sop_dtype_name(input->dtype), sop_dtype_name(same_type[k]->dtype));
    }
  }
  aclOpExecutor *ex = sop_executor_new(op, 6, run_layer_norm);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  sop_capture(ex, 1, meanOutOptional);
  sop_capture(ex, 2, rstdOutOptional);
  sop_capture(ex, 3, input);
  sop_capture(ex, 4, weightOptional);
  sop_capture(ex, 5, biasOptional);
  ex->i[0] = rows;
  ex->i[1] = n;
  ex->f[0] = eps;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(LayerNorm)

/* aclnnLayerNormBackward.  Slots: 0 gradInput, 1 gradWeight, 2 gradBias (absent when not
 * asked for), 3 gradOut, 4 input, 5 mean, 6 rstd, 7 weight; i[0] rows, i[1] n. */
static void run_layer_norm_backward(aclOpExecutor *ex) {
  const int64_t rows = ex->i[0], n = ex->i[1];
  const bool want_dx = ex->t[0].ndim >= 0, want_dw = ex->t[1].ndim >= 0;
  const bool want_db = ex->t[2].ndim >= 0;
  double *dy = dense_load(ex, 3), *x = dense_load(ex, 4);
  double *mean = dense_load(ex, 5), *rstd = dense_load(ex, 6);
  double *w = ex->t[7].ndim >= 0 ? dense_load(ex, 7) : NULL;
  double *dx = want_dx ? dense_alloc(rows * n, sizeof *dx) : NULL;
  double *dw = want_dw ? dense_alloc(n, sizeof *dw) : NULL;
  double *db = want_db ? dense_alloc(n, sizeof *db) : NULL;
  if (dy == NULL || x == NULL || mean == NULL || rstd == NULL ||
      (ex->t[7].ndim >= 0 && w == NULL) || (want_dx && dx == NULL) || (want_dw && dw == NULL) ||
      (want_db && db == NULL)) {
    dense_fail_memory();
  } else {
    layer_norm_backward(dy, x, mean, rstd, w, rows, n, dx, dw, db);
    if (want_dx) dense_store(ex, 0, dx);
    if (want_dw) dense_store(ex, 1, dw);
    if (want_db) dense_store(ex, 2, db);
  }
  free(dy);
  free(x);
  free(mean);
  free(rstd);
  free(w);
  free(dx);
  free(dw);
  free(db);
}

aclnnStatus aclnnLayerNormBackwardGetWorkspaceSize(
    const aclTensor *gradOut, const aclTensor *input, const aclIntArray *normalizedShape,
    const aclTensor *mean, const aclTensor *rstd, const aclTensor *weightOptional,
    const aclTensor *biasOptional, const aclBoolArray *outputMask, aclTensor *gradInputOut,
    aclTensor *gradWeightOut, aclTensor *gradBiasOut, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  static const char op[] = "aclnnLayerNormBackward";
  SOP_CHECK(sop_check_nonnull(op, "gradOut", gradOut));
  SOP_CHECK(sop_check_nonnull(op, "input", input));
  SOP_CHECK(sop_check_nonnull(op, "normalizedShape", normalizedShape));
  SOP_CHECK(sop_check_nonnull(op, "mean", mean));
  SOP_CHECK(sop_check_nonnull(op, "rstd", rstd));
  SOP_CHECK(sop_check_nonnull(op, "outputMask", outputMask));
  if (outputMask->size != 3) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "outputMask has %llu entries, not 3",
                    (unsigned long long)outputMask->size);
  }
  aclTensor *outs[3] = {gradInputOut, gradWeightOut, gradBiasOut};
  static const char *const out_args[3] = {"gradInputOut", "gradWeightOut", "gradBiasOut"};
  for (int k = 0; k < 3; k++) {
    if (outputMask->values[k]) SOP_CHECK(sop_check_nonnull(op, out_args[k], outs[k]));
  }
  SOP_CHECK(sop_check_tensor(op, "gradOut", gradOut, NORM_TYPES));
  SOP_CHECK(sop_check_tensor(op, "input", input, NORM_TYPES));
  int64_t rows, n;
  SOP_CHECK(norm_split(op, input, normalizedShape, &rows, &n));
  SOP_CHECK(sop_check_same_shape(op, "gradOut", gradOut, "input", input));
  SOP_CHECK(check_stat(op, "mean", mean, input, normalizedShape));
  SOP_CHECK(check_stat(op, "rstd", rstd, input, normalizedShape));
  SOP_CHECK(check_param(op, "weightOptional", weightOptional, normalizedShape));
  SOP_CHECK(check_param(op, "biasOptional", biasOptional, normalizedShape));
  if (outputMask->values[0]) {
    SOP_CHECK(sop_check_tensor(op, "gradInputOut", gradInputOut, NORM_TYPES));
    SOP_CHECK(sop_check_same_shape(op, "gradInputOut", gradInputOut, "input", input));
  }
  for (int k = 1; k < 3; k++) {
    if (outputMask->values[k]) SOP_CHECK(check_param(op, out_args[k], outs[k], normalizedShape));
  }
  aclOpExecutor *ex = sop_executor_new(op, 8, run_layer_norm_backward);
  if (ex == NULL) return ACLNN_ERR_INNER;
  for (int k = 0; k < 3; k++) sop_capture(ex, k, outputMask->values[k] ? outs[k] : NULL);
  sop_capture(ex, 3, gradOut);
  sop_capture(ex, 4, input);
  sop_capture(ex, 5, mean);
  sop_capture(ex, 6, rstd);
  sop_capture(ex, 7, weightOptional);
  ex->i[0] = rows;
  ex->i[1] = n;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(LayerNormBackward)
