/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The stand-in's reductions: aclnnReduceSum, aclnnMean, aclnnAll and aclnnLinalgVectorNorm
 * (hicann/ops-math).  Each reduces a contiguous copy of its input over a set of axes into an
 * accumulator per kept element, in double (int64 for integer sums, which must stay exact).
 * An empty list of axes reduces every axis (aclnnAll documents it; the others do the same
 * here, as torch does).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_all.h"
#include "aclnnop/aclnn_linalg_vector_norm.h"
#include "aclnnop/aclnn_mean.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "dense.h"

#define REDUCE_MAX_DIMS 8

typedef enum reduce_kind {
  REDUCE_SUM,
  REDUCE_MEAN,
  REDUCE_ALL,
  REDUCE_NORM, /* sum |x|^p, then ^(1/p); p inf: max |x|, -inf: min |x|, 0: non-zero count */
} reduce_kind;

/* The position in the reduced output of each element of an input of `shape` (rank `rank`,
 * reducing the axes set in `mask`), in input order: calls visit(element, output index). */
typedef struct reduce_walk {
  int rank;
  int64_t shape[REDUCE_MAX_DIMS];
  int64_t out_stride[REDUCE_MAX_DIMS]; /* 0 on reduced axes */
  int64_t numel, out_numel;
} reduce_walk;

static void reduce_walk_init(reduce_walk *w, const int64_t *shape, int rank, const bool *mask) {
  w->rank = rank;
  w->numel = 1;
  w->out_numel = 1;
  for (int d = rank - 1; d >= 0; d--) {
    w->shape[d] = shape[d];
    w->numel *= shape[d];
    w->out_stride[d] = mask[d] ? 0 : w->out_numel;
    if (!mask[d]) w->out_numel *= shape[d];
  }
}

/* Advances the odometer `index` of w's input by one element; returns the output index of the
 * new position (valid while elements remain). */
static int64_t reduce_walk_next(const reduce_walk *w, int64_t *index, int64_t out) {
  for (int d = w->rank - 1; d >= 0; d--) {
    if (++index[d] < w->shape[d]) return out + w->out_stride[d];
    out -= (w->shape[d] - 1) * w->out_stride[d];
    index[d] = 0;
  }
  return out;
}

/* acc[r] += the elements of row r of x[rows][cols] (float when `single`, else double) when
 * `by_row`; else acc[c] += column c's.  Each sum adds its elements in order. */
static void sum_rows(const void *x, bool single, double *acc, int64_t rows, int64_t cols,
                     bool by_row) {
  const double *xd = x;
  const float *xf = x;
  for (int64_t r = 0; r < rows; r++) {
    const int64_t at = r * cols;
    if (by_row) {
      double sum = acc[r];
      if (single) {
        for (int64_t c = 0; c < cols; c++) sum += (double)xf[at + c];
      } else {
        for (int64_t c = 0; c < cols; c++) sum += xd[at + c];
      }
      acc[r] = sum;
    } else if (single) {
      for (int64_t c = 0; c < cols; c++) acc[c] += (double)xf[at + c];
    } else {
      for (int64_t c = 0; c < cols; c++) acc[c] += xd[at + c];
    }
  }
}

/* acc[o] = the reduction of every element e of `data` (float when `single`, else double) whose
 * output index is o; acc has w->out_numel elements.  `p` is the norm's order. */
static void reduce_double(const reduce_walk *w, const void *data, bool single, double *acc,
                          reduce_kind kind, double p) {
  const double *xd = data;
  const float *xf = data;
  double init = kind == REDUCE_ALL                           ? 1.0
                : (kind == REDUCE_NORM && isinf(p) && p < 0) ? INFINITY
                                                             : 0;
  for (int64_t o = 0; o < w->out_numel; o++) acc[o] = init;
  /* The output index of element e: e / inner_block when the reduced axes are the trailing
   * ones, e % out_numel when they are the leading ones, else the odometer's. */
  bool suffix = true, prefix = true, seen_reduced = false, seen_kept = false;
  for (int d = 0; d < w->rank; d++) {
    if (w->shape[d] == 1) continue; /* a size-1 axis moves no index */
    const bool reduced = w->out_stride[d] == 0;
    if (!reduced && seen_reduced) suffix = false;
    if (reduced && seen_kept) prefix = false;
    seen_reduced = seen_reduced || reduced;
    seen_kept = seen_kept || !reduced;
  }
  const int64_t block = w->out_numel > 0 ? w->numel / w->out_numel : 0;
  if ((kind == REDUCE_SUM || kind == REDUCE_MEAN) && (suffix || prefix)) {
    sum_rows(data, single, acc, suffix ? w->out_numel : block, suffix ? block : w->out_numel,
             suffix);
  } else {
    int64_t index[REDUCE_MAX_DIMS] = {0};
    int64_t o = 0;
    for (int64_t e = 0; e < w->numel; e++) {
      if (suffix) {
        o = e / block;
      } else if (prefix) {
        o = e % w->out_numel;
      }
      const double v = single ? (double)xf[e] : xd[e];
      switch (kind) {
        case REDUCE_SUM:
        case REDUCE_MEAN:
          acc[o] += v;
          break;
        case REDUCE_ALL:
          if (v == 0) acc[o] = 0;
          break;
        case REDUCE_NORM: {
          const double a = fabs(v);
          if (isinf(p)) {
            if (p > 0 ? (a > acc[o] || isnan(a)) : (a < acc[o] || isnan(a))) acc[o] = a;
          } else if (p == 0) {
            acc[o] += v != 0;
          } else if (p == 1) {
            acc[o] += a;
          } else if (p == 2) {
            acc[o] += a * a;
          } else {
            acc[o] += pow(a, p);
          }
          break;
        }
      }
      if (!suffix && !prefix) o = reduce_walk_next(w, index, o);
    }
  }
  const int64_t reduced = w->out_numel > 0 ? w->numel / w->out_numel : 0;
  for (int64_t i = 0; i < w->out_numel; i++) {
    if (kind == REDUCE_MEAN) {
      acc[i] /= (double)reduced; /* 0 / 0 = nan for an empty reduction, as torch.mean */
    } else if (kind == REDUCE_NORM && !isinf(p) && p != 0 && p != 1) {
      acc[i] = p == 2 ? sqrt(acc[i]) : pow(acc[i], 1.0 / p);
    }
  }
}

/* Integer sums: exact in int64 (wrapping like the integer types do). */
static void reduce_int64_sum(const reduce_walk *w, const int64_t *x, int64_t *acc) {
  memset(acc, 0, (size_t)w->out_numel * sizeof *acc);
  int64_t index[REDUCE_MAX_DIMS] = {0};
  int64_t o = 0;
  for (int64_t e = 0; e < w->numel; e++) {
    acc[o] = (int64_t)((uint64_t)acc[o] + (uint64_t)x[e]);
    o = reduce_walk_next(w, index, o);
  }
}

/* Executor: slot 0 out, 1 self; i[0] kind, i[1] the integer-sum path, i[2] the mask of reduced
 * axes (bit d), f[0] the norm's order. */
static void run_reduce(aclOpExecutor *ex) {
  const aclTensor *self = &ex->t[1];
  bool mask[REDUCE_MAX_DIMS];
  for (int d = 0; d < self->ndim; d++) mask[d] = (ex->i[2] >> d) & 1;
  reduce_walk w;
  reduce_walk_init(&w, self->dims, self->ndim, mask);
  if (w.out_numel == 0) return;
  const bool integer = ex->i[1] != 0;
  /* a contiguous float32 input is read where it is; others are converted first */
  const bool direct = !integer && self->dtype == ACL_FLOAT && dense_is_contiguous(self);
  void *x = direct ? NULL : dense_load_as(ex, 1, integer ? ACL_INT64 : ACL_DOUBLE, -1, NULL);
  void *acc = dense_alloc(w.out_numel, 8);
  if ((!direct && x == NULL) || acc == NULL) {
    dense_fail_memory();
  } else if (integer) {
    reduce_int64_sum(&w, x, acc);
    dense_store_as(ex, 0, acc, ACL_INT64);
  } else {
    reduce_double(&w, direct ? sop_host(ex, 1) : x, direct, acc, (reduce_kind)ex->i[0], ex->f[0]);
    dense_store(ex, 0, acc);
  }
  free(x);
  free(acc);
}

/* Phase one of every reduction: self's `dims` (empty: all) reduced into out, whose shape must
 * be the reduced one (keepDims: size 1 kept). */
static aclnnStatus reduce_prepare(const char *op, reduce_kind kind, const aclTensor *self,
                                  uint64_t self_types, const char *dims_arg,
                                  const aclIntArray *dims, bool keep, const aclTensor *out,
                                  uint64_t out_types, bool integer, double p,
                                  uint64_t *workspaceSize, aclOpExecutor **executor) {
  SOP_CHECK(sop_check_tensor(op, "self", self, self_types));
  SOP_CHECK(sop_check_tensor(op, "out", out, out_types));
  bool mask[REDUCE_MAX_DIMS];
  SOP_CHECK(dense_dim_mask(op, dims_arg, dims, self->ndim, true, mask));
  int64_t want[REDUCE_MAX_DIMS];
  int32_t rank = 0;
  int64_t bits = 0;
  for (int32_t d = 0; d < self->ndim; d++) {
    if (mask[d]) bits |= (int64_t)1 << d;
    if (!mask[d] || keep) want[rank++] = mask[d] ? 1 : self->dims[d];
  }
  SOP_CHECK(dense_check_shape(op, "out", out, rank, want));
  aclOpExecutor *ex = sop_executor_new(op, 2, run_reduce);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  sop_capture(ex, 1, self);
  ex->i[0] = kind;
  ex->i[1] = integer;
  ex->i[2] = bits;
  ex->f[0] = p;
  return sop_finish(ex, 0, workspaceSize, executor);
}

/* The dtype argument of ReduceSum / Mean / LinalgVectorNorm: out's type. */
static aclnnStatus check_dtype_is_out(const char *op, aclDataType dtype, const aclTensor *out) {
  if (dtype == out->dtype) return ACLNN_SUCCESS;
  return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "dtype %s differs from out's type %s",
                  sop_dtype_name(dtype), sop_dtype_name(out->dtype));
}

#define REDUCE_FLOATS \
  (SOP_BIT(ACL_FLOAT) | SOP_BIT(ACL_FLOAT16) | SOP_BIT(ACL_BF16) | SOP_BIT(ACL_DOUBLE))

aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor *self, const aclIntArray *dims,
                                           bool keepDims, aclDataType dtype, aclTensor *out,
                                           uint64_t *workspaceSize, aclOpExecutor **executor) {
  static const char op[] = "aclnnReduceSum";
  SOP_CHECK(sop_check_nonnull(op, "self", self));
  SOP_CHECK(sop_check_nonnull(op, "dims", dims));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  SOP_CHECK(check_dtype_is_out(op, dtype, out));
  return reduce_prepare(op, REDUCE_SUM, self, SOP_ALL, "dims", dims, keepDims, out, SOP_ALL,
                        !sop_is_float(out->dtype), 0, workspaceSize, executor);
}
SOP_PHASE_TWO(ReduceSum)

aclnnStatus aclnnMeanGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim, bool keepDim,
                                      aclDataType dtype, aclTensor *out, uint64_t *workspaceSize,
                                      aclOpExecutor **executor) {
  static const char op[] = "aclnnMean";
  SOP_CHECK(sop_check_nonnull(op, "self", self));
  SOP_CHECK(sop_check_nonnull(op, "dim", dim));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  SOP_CHECK(check_dtype_is_out(op, dtype, out));
  return reduce_prepare(op, REDUCE_MEAN, self, REDUCE_FLOATS, "dim", dim, keepDim, out,
                        REDUCE_FLOATS, false, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(Mean)

aclnnStatus aclnnAllGetWorkspaceSize(const aclTensor *self, const aclIntArray *dim, bool keepdim,
                                     aclTensor *out, uint64_t *workspaceSize,
                                     aclOpExecutor **executor) {
  static const char op[] = "aclnnAll";
  SOP_CHECK(sop_check_nonnull(op, "self", self));
  SOP_CHECK(sop_check_nonnull(op, "dim", dim));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  return reduce_prepare(op, REDUCE_ALL, self, SOP_ALL, "dim", dim, keepdim, out,
                        SOP_BIT(ACL_BOOL) | SOP_BIT(ACL_UINT8), false, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(All)

aclnnStatus aclnnLinalgVectorNormGetWorkspaceSize(const aclTensor *self, const aclScalar *ord,
                                                  const aclIntArray *dims, bool keepDims,
                                                  const aclDataType dtype, aclTensor *out,
                                                  uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
  static const char op[] = "aclnnLinalgVectorNorm";
  SOP_CHECK(sop_check_nonnull(op, "self", self));
  SOP_CHECK(sop_check_nonnull(op, "ord", ord));
  SOP_CHECK(sop_check_nonnull(op, "dims", dims));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  SOP_CHECK(sop_check_scalar(op, "ord", ord, SOP_NUMBERS));
  SOP_CHECK(check_dtype_is_out(op, dtype, out));
  return reduce_prepare(op, REDUCE_NORM, self, REDUCE_FLOATS, "dims", dims, keepDims, out,
                        REDUCE_FLOATS, false, sop_load_f(ord->value, ord->dtype), workspaceSize,
                        executor);
}
SOP_PHASE_TWO(LinalgVectorNorm)
