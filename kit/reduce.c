/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The kit's reductions and rows (vendor_kit_kernels.h, "Kit: reductions and slices"): ATen's dim
 * lists and keepdim, an outer tbk_iter over the output, and the walked dimensions beside it.
 * No global mutable state.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <torch_backend/vendor_kit_kernels.h>

#include "iter_internal.h"

/* "[1, -1]" into buf. */
static void format_ints(char *buf, size_t size, const int64_t *v, int64_t count) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int64_t i = 0; i < count && used < size; i++) {
    used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, i ? ", " : "", v[i]);
  }
  if (used < size) snprintf(buf + used, size - used, "]");
}

tb_status tbk_reduce_dims(int32_t ndim, const int64_t *dims, int64_t count, uint64_t *mask,
                          char *msg, size_t msg_size) {
  if (msg != NULL && msg_size > 0) msg[0] = '\0';
  if (mask == NULL || ndim < 0 || count < 0 || (count > 0 && dims == NULL)) {
    return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT, "NULL mask, or a bad dim list");
  }
  if (ndim > TB_SHAPE_MAX_DIMS) {
    return tbk_msg_fail(msg, msg_size, TB_ERROR_NOT_SUPPORTED,
                        "%" PRId32 " dimensions (at most %d)", ndim, TB_SHAPE_MAX_DIMS);
  }
  *mask = 0;
  if (count == 0) { /* None or []: every dimension */
    *mask = ndim == 0 ? 0 : (((uint64_t)1 << (ndim - 1)) << 1) - 1;
    return TB_OK;
  }
  const int64_t range = ndim == 0 ? 1 : ndim; /* a 0-dim tensor takes 0 and -1 */
  for (int64_t i = 0; i < count; i++) {
    int64_t d = dims[i] < 0 ? dims[i] + range : dims[i];
    if (d < 0 || d >= range) {
      return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT,
                          "dim %" PRId64 " is out of range for a tensor of %" PRId32
                          " dimensions (expected [%" PRId64 ", %" PRId64 "])",
                          dims[i], ndim, -range, range - 1);
    }
    if (ndim == 0) continue;
    if (*mask >> d & 1u) {
      char list[TB_SHAPE_MAX_DIMS * 24];
      format_ints(list, sizeof list, dims, count);
      return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT,
                          "dim %" PRId64 " appears more than once in %s", d, list);
    }
    *mask |= (uint64_t)1 << d;
  }
  return TB_OK;
}

/* Appends a walked dimension (size, each operand's byte stride), merging it into the previous
 * one where every operand steps through both as through one. */
static tb_status walk(tbk_reduce *r, int operands, int64_t size, const int64_t *strides, char *msg,
                      size_t msg_size) {
  if (size == 1) return TB_OK;
  bool merge = r->ndim > 0;
  for (int k = 0; k < operands && merge; k++) {
    merge = strides[k] == r->strides[k][r->ndim - 1] * r->sizes[r->ndim - 1];
  }
  if (merge) {
    r->sizes[r->ndim - 1] *= size;
    return TB_OK;
  }
  if (r->ndim == TBK_ITER_MAX_DIMS) {
    return tbk_msg_fail(msg, msg_size, TB_ERROR_NOT_SUPPORTED,
                        "more than %d reduced dimensions that do not merge", TBK_ITER_MAX_DIMS);
  }
  r->sizes[r->ndim] = size;
  for (int k = 0; k < operands; k++) r->strides[k][r->ndim] = strides[k];
  r->ndim++;
  return TB_OK;
}

tb_status tbk_reduce_init(tbk_reduce *r, const tb_tensor *out, const tb_tensor *in,
                          const int64_t *dims, int64_t count, bool keepdim, char *msg,
                          size_t msg_size) {
  if (msg != NULL && msg_size > 0) msg[0] = '\0';
  if (r == NULL) return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT, "NULL reduction");
  tb_status status = tbk_check_tensor(out, "the output", msg, msg_size);
  if (status == TB_OK) status = tbk_check_tensor(in, "the input", msg, msg_size);
  uint64_t mask = 0;
  if (status == TB_OK)
    status = in->ndim > TB_SHAPE_MAX_DIMS
                 ? tbk_msg_fail(msg, msg_size, TB_ERROR_NOT_SUPPORTED,
                                "the input has %" PRId32 " dimensions", in->ndim)
                 : tbk_reduce_dims(in->ndim, dims, count, &mask, msg, msg_size);
  if (status != TB_OK) return status;

  /* The expected output sizes, and views of both with the input's rank: reduced dimensions
   * of size 1 in each, the output's stride 0 along them. */
  int64_t want[TB_SHAPE_MAX_DIMS], sizes[TB_SHAPE_MAX_DIMS], in_strides[TB_SHAPE_MAX_DIMS],
      out_strides[TB_SHAPE_MAX_DIMS];
  int32_t want_ndim = 0;
  bool match = true;
  for (int32_t d = 0; d < in->ndim; d++) {
    bool reduced = mask >> d & 1u;
    sizes[d] = reduced ? 1 : in->sizes[d];
    in_strides[d] = in->strides[d];
    if (reduced && !keepdim) {
      out_strides[d] = 0;
      continue;
    }
    want[want_ndim] = sizes[d];
    match = match && want_ndim < out->ndim && out->sizes[want_ndim] == sizes[d];
    out_strides[d] = match ? out->strides[want_ndim] : 0;
    want_ndim++;
  }
  if (!match || out->ndim != want_ndim) {
    char have[TB_SHAPE_MAX_DIMS * 24], wanted[TB_SHAPE_MAX_DIMS * 24], from[TB_SHAPE_MAX_DIMS * 24],
        over[TB_SHAPE_MAX_DIMS * 24];
    int64_t reduced[TB_SHAPE_MAX_DIMS], n = 0;
    for (int32_t d = 0; d < in->ndim; d++) {
      if (mask >> d & 1u) reduced[n++] = d;
    }
    const tb_tensor expected = {sizeof(tb_tensor), NULL, in->dtype, 0, want_ndim, want, want};
    tbk_format_sizes(have, sizeof have, out);
    tbk_format_sizes(wanted, sizeof wanted, &expected);
    tbk_format_sizes(from, sizeof from, in);
    format_ints(over, sizeof over, reduced, n);
    return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT,
                        "the output's sizes %s are not %s, the input's %s reduced over dims %s%s",
                        have, wanted, from, over, keepdim ? " with keepdim" : "");
  }
  const tb_tensor out_view = {sizeof(tb_tensor), out->data, out->dtype, out->device,
                              in->ndim,          sizes,     out_strides};
  const tb_tensor in_view = {sizeof(tb_tensor), in->data, in->dtype, in->device,
                             in->ndim,          sizes,    in_strides};
  const tb_tensor *inputs[1] = {&in_view};
  memset(r, 0, sizeof *r);
  status = tbk_iter_init(&r->outer, &out_view, inputs, 1, msg, msg_size);
  if (status != TB_OK) return status;

  r->numel = 1;
  const int64_t element = (int64_t)tbk_dtype_size(in->dtype);
  for (int32_t d = in->ndim - 1; d >= 0 && status == TB_OK; d--) {
    if (!(mask >> d & 1u)) continue;
    const int64_t strides[2] = {0, in->strides[d] * element};
    r->numel *= in->sizes[d];
    status = walk(r, 2, in->sizes[d], strides, msg, msg_size);
  }
  if (r->numel == 0 || r->ndim == 0) { /* no elements, or only size-1 dimensions: one run */
    r->ndim = 1;
    r->sizes[0] = r->numel;
    r->strides[1][0] = 0;
  }
  return status;
}

tb_status tbk_slices_init(tbk_reduce *r, const tb_tensor *const *tensors, int count, int64_t dim,
                          char *msg, size_t msg_size) {
  if (msg != NULL && msg_size > 0) msg[0] = '\0';
  if (r == NULL || tensors == NULL || count < 1 || count > TBK_ITER_MAX_OPERANDS) {
    return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT,
                        "NULL rows or tensors, or %d tensors (expected 1 to %d)", count,
                        TBK_ITER_MAX_OPERANDS);
  }
  const tb_tensor *out = tensors[0];
  tb_status status = tbk_check_tensor(out, "the output", msg, msg_size);
  if (status != TB_OK) return status;
  if (out->ndim > TB_SHAPE_MAX_DIMS) {
    return tbk_msg_fail(msg, msg_size, TB_ERROR_NOT_SUPPORTED, "%" PRId32 " dimensions", out->ndim);
  }
  uint64_t mask = 0;
  status = tbk_reduce_dims(out->ndim, &dim, 1, &mask, msg, msg_size);
  if (status != TB_OK) return status;
  const int32_t d = out->ndim == 0 ? -1 : (int32_t)(dim < 0 ? dim + out->ndim : dim);
  int64_t sizes[TB_SHAPE_MAX_DIMS];
  tb_tensor views[TBK_ITER_MAX_OPERANDS];
  const tb_tensor *inputs[TBK_ITER_MAX_OPERANDS];
  for (int32_t i = 0; i < out->ndim; i++) sizes[i] = i == d ? 1 : out->sizes[i];
  memset(r, 0, sizeof *r);
  r->ndim = 1;
  r->sizes[0] = r->numel = d >= 0 ? out->sizes[d] : 1;
  for (int k = 0; k < count; k++) {
    const tb_tensor *t = tensors[k];
    char name[32];
    snprintf(name, sizeof name, "tensor %d", k);
    status = tbk_check_tensor(t, name, msg, msg_size);
    if (status != TB_OK) return status;
    bool same = t->ndim == out->ndim;
    for (int32_t i = 0; same && i < t->ndim; i++) same = t->sizes[i] == out->sizes[i];
    if (!same) {
      char have[TB_SHAPE_MAX_DIMS * 24], want[TB_SHAPE_MAX_DIMS * 24];
      tbk_format_sizes(have, sizeof have, t);
      tbk_format_sizes(want, sizeof want, out);
      return tbk_msg_fail(msg, msg_size, TB_ERROR_INVALID_ARGUMENT,
                          "%s has sizes %s, not the output's %s", name, have, want);
    }
    views[k] = *t;
    views[k].sizes = sizes;
    inputs[k] = &views[k];
    r->strides[k][0] = d >= 0 ? t->strides[d] * (int64_t)tbk_dtype_size(t->dtype) : 0;
  }
  return tbk_iter_init(&r->outer, &views[0], inputs + 1, count - 1, msg, msg_size);
}

tb_dtype tbk_reduce_dtype(tbk_reduce_op op, tb_dtype self, const tb_value *dtype_arg) {
  if (dtype_arg != NULL && dtype_arg->kind == TB_VALUE_DTYPE) return dtype_arg->as.dtype;
  bool integral = self == TB_DTYPE_BOOL || (TBK_DTYPES_INTEGRAL & TB_DTYPE_BIT(self)) != 0;
  if (integral && (op == TBK_REDUCE_SUM || op == TBK_REDUCE_PROD)) return TB_DTYPE_INT64;
  return self;
}

double tbk_reduce_identity(tbk_reduce_op op) {
  switch (op) {
    case TBK_REDUCE_SUM:
      return 0;
    case TBK_REDUCE_PROD:
      return 1;
    case TBK_REDUCE_AMAX:
      return -INFINITY;
    case TBK_REDUCE_AMIN:
      return INFINITY;
    default: /* mean */
      return NAN;
  }
}

static bool is_integral(tb_dtype dtype) {
  return dtype == TB_DTYPE_BOOL || (TBK_DTYPES_INTEGRAL & TB_DTYPE_BIT(dtype)) != 0;
}

/* An integral element, exactly (int64 beyond 2^53 included). */
static int64_t load_integer(tb_dtype dtype, const char *p) {
  switch (dtype) {
    case TB_DTYPE_INT64:
      return *(const int64_t *)p;
    case TB_DTYPE_INT32:
      return *(const int32_t *)p;
    case TB_DTYPE_INT16:
      return *(const int16_t *)p;
    case TB_DTYPE_INT8:
      return *(const int8_t *)p;
    default: /* uint8, bool */
      return *(const uint8_t *)p;
  }
}

typedef struct reduce_job {
  const tbk_reduce *r;
  tbk_reduce_op op;
  bool exact; /* integers into an integral output: int64 arithmetic */
} reduce_job;

/* Folds element x into acc. */
static double fold(tbk_reduce_op op, double acc, double x) {
  switch (op) {
    case TBK_REDUCE_PROD:
      return acc * x;
    case TBK_REDUCE_AMAX:
      return isnan(acc) || acc >= x ? acc : x; /* x NaN: acc >= x is false, so x */
    case TBK_REDUCE_AMIN:
      return isnan(acc) || acc <= x ? acc : x;
    default:
      return acc + x;
  }
}

/* One output element: the walked elements from base, odometer over the walked dimensions. */
static void reduce_one(const reduce_job *job, char *out, const char *base) {
  const tbk_reduce *r = job->r;
  const tb_dtype dtype = r->outer.dtypes[1];
  int64_t index[TBK_ITER_MAX_DIMS] = {0};
  double acc = job->op == TBK_REDUCE_MEAN ? 0 : tbk_reduce_identity(job->op);
  uint64_t exact = job->op == TBK_REDUCE_PROD ? 1 : 0; /* unsigned: wraps as ATen's int64 */
  const char *p = base;
  for (int64_t left = r->numel; left > 0;) {
    const int64_t step = r->strides[1][0];
    for (int64_t i = 0; i < r->sizes[0]; i++) {
      const char *x = p + i * step;
      if (job->exact) {
        uint64_t v = (uint64_t)load_integer(dtype, x);
        exact = job->op == TBK_REDUCE_PROD ? exact * v : exact + v;
      } else {
        acc =
            fold(job->op, acc, dtype == TB_DTYPE_FLOAT32 ? *(const float *)x : tbk_load(dtype, x));
      }
    }
    left -= r->sizes[0];
    for (int d = 1; d < r->ndim; d++) { /* carry */
      p += r->strides[1][d];
      if (++index[d] < r->sizes[d]) break;
      p -= r->sizes[d] * r->strides[1][d];
      index[d] = 0;
    }
  }
  if (job->exact) {
    int64_t value;
    memcpy(&value, &exact, sizeof value);
    if (r->outer.dtypes[0] == TB_DTYPE_INT64) {
      *(int64_t *)out = value;
      return;
    }
    acc = (double)value;
  } else if (job->op == TBK_REDUCE_MEAN) {
    acc /= (double)r->numel; /* 0/0: NaN */
  }
  tbk_store(r->outer.dtypes[0], out, acc);
}

static void reduce_loop(char **data, const int64_t *strides, int64_t n, void *user) {
  for (int64_t i = 0; i < n; i++)
    reduce_one(user, data[0] + i * strides[0], data[1] + i * strides[1]);
}

tb_status tbk_reduce_run(const tbk_reduce *r, tbk_reduce_op op) {
  if (r == NULL || r->outer.num_operands != 2 || (unsigned)op > TBK_REDUCE_AMIN) {
    return TB_ERROR_INVALID_ARGUMENT;
  }
  reduce_job job = {r, op, false};
  job.exact = (op == TBK_REDUCE_SUM || op == TBK_REDUCE_PROD) && is_integral(r->outer.dtypes[1]) &&
              is_integral(r->outer.dtypes[0]) && r->outer.dtypes[0] != TB_DTYPE_BOOL;
  tbk_iter_run(&r->outer, reduce_loop, &job);
  return TB_OK;
}

typedef struct slices_job {
  const tbk_reduce *r;
  tbk_loop_fn fn;
  void *user;
} slices_job;

static void slices_loop(char **data, const int64_t *strides, int64_t n, void *user) {
  const slices_job *job = user;
  const int operands = job->r->outer.num_operands;
  char *row[TBK_ITER_MAX_OPERANDS];
  int64_t steps[TBK_ITER_MAX_OPERANDS];
  for (int k = 0; k < operands; k++) steps[k] = job->r->strides[k][0];
  for (int64_t i = 0; i < n; i++) {
    for (int k = 0; k < operands; k++) row[k] = data[k] + i * strides[k];
    job->fn(row, steps, job->r->sizes[0], job->user);
  }
}

tb_status tbk_slices_run(const tbk_reduce *r, tbk_loop_fn fn, void *user) {
  if (r == NULL || fn == NULL || r->ndim != 1) return TB_ERROR_INVALID_ARGUMENT;
  slices_job job = {r, fn, user};
  tbk_iter_run(&r->outer, slices_loop, &job);
  return TB_OK;
}
