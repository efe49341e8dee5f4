/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The stand-in's indexing operators: aclnnIndexSelect, aclnnGather, aclnnIndex, aclnnCat and
 * aclnnEmbeddingDenseBackward (hicann/ops-nn, hicann/ops-math).  Element moves copy bytes
 * between contiguous copies (no dtype conversion: these operators keep self's type); an index
 * out of range is found while the operator runs and faults the device, as on the hardware.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_cat.h"
#include "aclnnop/aclnn_embedding_dense_backward.h"
#include "aclnnop/aclnn_gather.h"
#include "aclnnop/aclnn_index.h"
#include "aclnnop/aclnn_index_select.h"
#include "dense.h"

#define INDEX_MAX_DIMS SOP_OP_MAX_DIMS

/* Where an index was out of range: which index element, its value and the bound. */
typedef struct index_error {
  int64_t position, value, bound;
} index_error;

/* Wraps a negative index once (as the operators accept -size..size-1); false when out of range. */
static bool index_wrap(int64_t *value, int64_t bound) {
  if (*value < 0) *value += bound;
  return *value >= 0 && *value < bound;
}

/* out[p] = self[p with coordinate `dim` replaced by index[p]] for every position p of index's
 * shape (`rank` dims, each at most self's); self has `self_shape`. */
static bool gather_bytes(const char *self, const int64_t *self_shape, char *out,
                         const int64_t *index, const int64_t *index_shape, int rank, int dim,
                         size_t item, index_error *error) {
  int64_t self_stride[INDEX_MAX_DIMS], numel = 1, stride = 1;
  for (int d = rank - 1; d >= 0; d--) {
    self_stride[d] = stride;
    stride *= self_shape[d];
    numel *= index_shape[d];
  }
  int64_t coord[INDEX_MAX_DIMS] = {0};
  for (int64_t e = 0; e < numel; e++) {
    int64_t at = index[e];
    if (!index_wrap(&at, self_shape[dim])) {
      *error = (index_error){e, index[e], self_shape[dim]};
      return false;
    }
    int64_t offset = 0;
    for (int d = 0; d < rank; d++) offset += (d == dim ? at : coord[d]) * self_stride[d];
    memcpy(out + (size_t)e * item, self + (size_t)offset * item, item);
    for (int d = rank - 1; d >= 0; d--) {
      if (++coord[d] < index_shape[d]) break;
      coord[d] = 0;
    }
  }
  return true;
}

/* out [outer, sum(widths)] = the inputs [outer, widths[i]] side by side (widths in bytes:
 * the concatenated dimension times everything after it). */
static void cat_bytes(const char *const *inputs, const int64_t *widths, int64_t count,
                      int64_t outer, char *out) {
  int64_t total = 0;
  for (int64_t i = 0; i < count; i++) total += widths[i];
  for (int64_t o = 0; o < outer; o++) {
    char *row = out + o * total;
    for (int64_t i = 0; i < count; i++) {
      memcpy(row, inputs[i] + o * widths[i], (size_t)widths[i]);
      row += widths[i];
    }
  }
}

/* Advanced indexing, self[indices] (aclnnIndex): self (contiguous, `rank` dims) indexed on
 * the dims d with indexed[d] by index[d], each of the common (broadcast) shape `bshape`
 * (`brank` dims, contiguous, `bnumel` elements).  The result's dims: those of bshape where the
 * first indexed dim was when the indexed dims are adjacent, else first; then the other dims of
 * self in order. */
typedef struct advanced_index {
  int rank, brank;
  int64_t shape[INDEX_MAX_DIMS];
  bool indexed[INDEX_MAX_DIMS];
  const int64_t *index[INDEX_MAX_DIMS];
  int64_t bshape[INDEX_MAX_DIMS];
} advanced_index;

/* The result's shape (at most INDEX_MAX_DIMS dims, else -1) into out_shape; returns its rank. */
static int advanced_index_shape(const advanced_index *a, int64_t *out_shape) {
  int first = -1, last = -1, count = 0;
  for (int d = 0; d < a->rank; d++) {
    if (!a->indexed[d]) continue;
    if (first < 0) first = d;
    last = d;
    count++;
  }
  const bool adjacent = last - first + 1 == count;
  const int at = adjacent ? first : 0; /* where the broadcast dims go */
  int n = 0;
  for (int d = 0; d <= a->rank; d++) {
    if (d == at) {
      for (int b = 0; b < a->brank; b++) {
        if (n == INDEX_MAX_DIMS) return -1;
        out_shape[n++] = a->bshape[b];
      }
    }
    if (d < a->rank && !a->indexed[d]) {
      if (n == INDEX_MAX_DIMS) return -1;
      out_shape[n++] = a->shape[d];
    }
  }
  return n;
}

static bool advanced_index_bytes(const advanced_index *a, const char *self, char *out, size_t item,
                                 index_error *error) {
  int first = -1, last = -1, count = 0;
  int64_t stride[INDEX_MAX_DIMS], s = 1, bnumel = 1;
  for (int d = a->rank - 1; d >= 0; d--) {
    stride[d] = s;
    s *= a->shape[d];
  }
  for (int d = 0; d < a->rank; d++) {
    if (!a->indexed[d]) continue;
    if (first < 0) first = d;
    last = d;
    count++;
  }
  for (int b = 0; b < a->brank; b++) bnumel *= a->bshape[b];
  /* The offset into self of each broadcast position: checked once, before anything moves. */
  int64_t rest_numel = 1, rest_shape[INDEX_MAX_DIMS], rest_stride[INDEX_MAX_DIMS];
  int rest_rank = 0, rest_before = 0; /* kept dims, and how many come before the index dims */
  const bool adjacent = last - first + 1 == count;
  for (int d = 0; d < a->rank; d++) {
    if (a->indexed[d]) continue;
    rest_shape[rest_rank] = a->shape[d];
    rest_stride[rest_rank] = stride[d];
    rest_numel *= a->shape[d];
    if (adjacent && d < first) rest_before++;
    rest_rank++;
  }
  for (int64_t p = 0; p < bnumel; p++) {
    for (int d = 0; d < a->rank; d++) {
      if (!a->indexed[d]) continue;
      int64_t v = a->index[d][p];
      if (!index_wrap(&v, a->shape[d])) {
        *error = (index_error){p, a->index[d][p], a->shape[d]};
        return false;
      }
    }
  }
  /* Output order: rest dims [0, rest_before), the broadcast dims, rest dims [rest_before, ..). */
  int64_t inner_numel = 1;
  for (int r = rest_before; r < rest_rank; r++) inner_numel *= rest_shape[r];
  const int64_t outer_numel = inner_numel > 0 ? rest_numel / inner_numel : 0;
  int64_t e = 0;
  int64_t ocoord[INDEX_MAX_DIMS] = {0};
  for (int64_t o = 0; o < outer_numel; o++) {
    int64_t obase = 0;
    for (int r = 0; r < rest_before; r++) obase += ocoord[r] * rest_stride[r];
    for (int64_t p = 0; p < bnumel; p++) {
      int64_t pbase = obase;
      for (int d = 0; d < a->rank; d++) {
        if (!a->indexed[d]) continue;
        int64_t v = a->index[d][p];
        index_wrap(&v, a->shape[d]);
        pbase += v * stride[d];
      }
      int64_t icoord[INDEX_MAX_DIMS] = {0};
      for (int64_t i = 0; i < inner_numel; i++) {
        int64_t offset = pbase;
        for (int r = rest_before; r < rest_rank; r++) offset += icoord[r] * rest_stride[r];
        memcpy(out + (size_t)(e++) * item, self + (size_t)offset * item, item);
        for (int r = rest_rank - 1; r >= rest_before; r--) {
          if (++icoord[r] < rest_shape[r]) break;
          icoord[r] = 0;
        }
      }
    }
    for (int r = rest_before - 1; r >= 0; r--) {
      if (++ocoord[r] < rest_shape[r]) break;
      ocoord[r] = 0;
    }
  }
  return true;
}

/* out [num_weights, width] = sum of the rows of grad [count, width] by their index; rows whose
 * index is padding (>= 0) add nothing; with scale, each row is divided by its index's count. */
static bool embedding_backward_double(const double *grad, const int64_t *index, int64_t count,
                                      int64_t width, int64_t num_weights, int64_t padding,
                                      bool scale, double *out, int64_t *counts,
                                      index_error *error) {
  memset(out, 0, (size_t)(num_weights * width) * sizeof *out);
  for (int64_t k = 0; k < count; k++) {
    if (index[k] < 0 || index[k] >= num_weights) {
      *error = (index_error){k, index[k], num_weights};
      return false;
    }
  }
  if (scale) {
    memset(counts, 0, (size_t)num_weights * sizeof *counts);
    for (int64_t k = 0; k < count; k++) counts[index[k]]++;
  }
  for (int64_t k = 0; k < count; k++) {
    const int64_t at = index[k];
    if (at == padding) continue;
    const double divisor = scale ? (double)counts[at] : 1.0;
    const double *g = grad + k * width;
    double *o = out + at * width;
    for (int64_t j = 0; j < width; j++) o[j] += g[j] / divisor;
  }
  return true;
}

/* ---- the operators ---- */

#define INDEX_TYPES (SOP_BIT(ACL_INT32) | SOP_BIT(ACL_INT64))

/* The fault of an index out of range (the message torch users know from ATen). */
static void fail_index(const index_error *e, int64_t dim) {
  standin_task_fail("index %lld is out of bounds for dimension %lld with size %lld",
                    (long long)e->value, (long long)dim, (long long)e->bound);
}

/* aclnnIndexSelect.  Slots: 0 out, 1 self, 2 index; i[0..2] outer, size, inner; i[3] dim.
 * Reads only the selected slices of self (an embedding table need not be copied whole). */
static void run_index_select(aclOpExecutor *ex) {
  const aclTensor *self = &ex->t[1];
  const int64_t outer = ex->i[0], size = ex->i[1], inner = ex->i[2], dim = ex->i[3];
  const int64_t count = sop_numel(&ex->t[2]);
  const size_t item = sop_size(self->dtype);
  int64_t *index = dense_load_i(ex, 2);
  char *out = dense_alloc(outer * count * inner, item);
  if (index == NULL || out == NULL) {
    dense_fail_memory();
    goto done;
  }
  for (int64_t k = 0; k < count; k++) {
    int64_t at = index[k];
    if (!index_wrap(&at, size)) {
      fail_index(&(index_error){k, index[k], size}, dim);
      goto done;
    }
    index[k] = at;
  }
  if (outer * count * inner > 0 && dense_is_contiguous(self)) {
    /* each selected slice is `inner` contiguous elements: one copy per slice, straight into
     * out when it is contiguous too */
    const aclTensor *o_t = &ex->t[0];
    char *dst = o_t->dtype == self->dtype && dense_is_contiguous(o_t) ? sop_host(ex, 0) : out;
    const char *src = sop_host(ex, 1);
    const size_t bytes = (size_t)inner * item;
    for (int64_t o = 0; o < outer; o++) {
      for (int64_t k = 0; k < count; k++) {
        memcpy(dst + (size_t)(o * count + k) * bytes, src + (size_t)(o * size + index[k]) * bytes,
               bytes);
      }
    }
    if (dst == out) dense_store_as(ex, 0, out, self->dtype);
  } else if (outer * count * inner > 0) {
    aclTensor slice = *self; /* self with dimension `dim` narrowed to one index */
    slice.dims[dim] = 1;
    const aclTensor *slices[1] = {&slice};
    for (int64_t k = 0; k < count; k++) {
      void *base = (char *)sop_host(ex, 1) + index[k] * self->strides[dim] * (int64_t)item;
      sop_iter it;
      sop_iter_init(&it, slice.ndim, slice.dims, 1, slices, &base);
      for (int64_t e = 0; e < outer * inner; e++, sop_iter_next(&it)) {
        const int64_t o = e / inner, i = e % inner;
        memcpy(out + (size_t)((o * count + k) * inner + i) * item, it.ptr[0], item);
      }
    }
    dense_store_as(ex, 0, out, self->dtype);
  }
done:
  free(index);
  free(out);
}

aclnnStatus aclnnIndexSelectGetWorkspaceSize(const aclTensor *self, int64_t dim,
                                             const aclTensor *index, aclTensor *out,
                                             uint64_t *workspaceSize, aclOpExecutor **executor) {
  static const char op[] = "aclnnIndexSelect";
  SOP_CHECK(sop_check_nonnull(op, "self", self));
  SOP_CHECK(sop_check_nonnull(op, "index", index));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  SOP_CHECK(sop_check_tensor(op, "self", self, SOP_ALL));
  SOP_CHECK(sop_check_tensor(op, "index", index, INDEX_TYPES));
  SOP_CHECK(sop_check_tensor(op, "out", out, SOP_ALL));
  if (self->ndim < 1 || index->ndim > 1) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "self needs a dimension and index at most one (they have %d and %d)",
                    (int)self->ndim, (int)index->ndim);
  }
  if (out->dtype != self->dtype) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "out (%s) and self (%s) differ in type",
                    sop_dtype_name(out->dtype), sop_dtype_name(self->dtype));
  }
  int64_t d = 0;
  SOP_CHECK(dense_wrap_dim(op, "dim", dim, self->ndim, &d));
  int64_t want[INDEX_MAX_DIMS], outer = 1, inner = 1;
  for (int32_t k = 0; k < self->ndim; k++) {
    want[k] = k == d ? sop_numel(index) : self->dims[k];
    if (k < d) outer *= self->dims[k];
    if (k > d) inner *= self->dims[k];
  }
  SOP_CHECK(dense_check_shape(op, "out", out, self->ndim, want));
  aclOpExecutor *ex = sop_executor_new(op, 3, run_index_select);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  sop_capture(ex, 1, self);
  sop_capture(ex, 2, index);
  ex->i[0] = outer;
  ex->i[1] = self->dims[d];
  ex->i[2] = inner;
  ex->i[3] = d;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(IndexSelect)

/* aclnnGather.  Slots: 0 out, 1 self, 2 index; i[0] dim. */
static void run_gather(aclOpExecutor *ex) {
  const aclTensor *self = &ex->t[1], *index_t = &ex->t[2];
  const aclDataType dtype = self->dtype;
  int64_t *index = dense_load_i(ex, 2);
  char *in = dense_load_as(ex, 1, dtype, -1, NULL);
  char *out = dense_alloc(sop_numel(index_t), sop_size(dtype));
  index_error error;
  if (index == NULL || in == NULL || out == NULL) {
    dense_fail_memory();
  } else if (!gather_bytes(in, self->dims, out, index, index_t->dims, self->ndim, (int)ex->i[0],
                           sop_size(dtype), &error)) {
    fail_index(&error, ex->i[0]);
  } else {
    dense_store_as(ex, 0, out, dtype);
  }
  free(index);
  free(in);
  free(out);
}

aclnnStatus aclnnGatherGetWorkspaceSize(const aclTensor *self, const int64_t dim,
                                        const aclTensor *index, aclTensor *out,
                                        uint64_t *workspaceSize, aclOpExecutor **executor) {
  static const char op[] = "aclnnGather";
  char a[160], b[160];
  SOP_CHECK(sop_check_nonnull(op, "self", self));
  SOP_CHECK(sop_check_nonnull(op, "index", index));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  SOP_CHECK(sop_check_tensor(op, "self", self, SOP_ALL));
  SOP_CHECK(sop_check_tensor(op, "index", index, INDEX_TYPES));
  SOP_CHECK(sop_check_tensor(op, "out", out, SOP_ALL));
  int64_t d = 0;
  SOP_CHECK(dense_wrap_dim(op, "dim", dim, self->ndim, &d));
  bool fits = self->ndim >= 1 && index->ndim == self->ndim;
  for (int32_t k = 0; fits && k < self->ndim; k++) {
    fits = k == d || index->dims[k] <= self->dims[k];
  }
  if (!fits) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "index %s does not fit self %s (same rank, at least 1, no larger outside dim "
                    "%lld)",
                    sop_shape_str(index, a), sop_shape_str(self, b), (long long)d);
  }
  SOP_CHECK(sop_check_same_shape(op, "out", out, "index", index));
  if (out->dtype != self->dtype) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "out (%s) and self (%s) differ in type",
                    sop_dtype_name(out->dtype), sop_dtype_name(self->dtype));
  }
  aclOpExecutor *ex = sop_executor_new(op, 3, run_gather);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  sop_capture(ex, 1, self);
  sop_capture(ex, 2, index);
  ex->i[0] = d;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(Gather)

/* aclnnCat.  Slots: 0 out, 1.. the inputs that take part (1-d empty tensors do not, as in
 * torch.cat); i[0] dim. */
static void run_cat(aclOpExecutor *ex) {
  const aclTensor *out = &ex->t[0];
  const aclDataType dtype = out->dtype;
  const int64_t dim = ex->i[0], count = ex->count - 1;
  int64_t outer = 1, inner = (int64_t)sop_size(dtype);
  for (int32_t d = 0; d < out->ndim; d++) {
    if (d < dim) outer *= out->dims[d];
    if (d > dim) inner *= out->dims[d];
  }
  char **inputs = calloc((size_t)(count > 0 ? count : 1), sizeof *inputs);
  int64_t *widths = calloc((size_t)(count > 0 ? count : 1), sizeof *widths);
  char *result = dense_alloc(sop_numel(out), sop_size(dtype));
  bool ok = inputs != NULL && widths != NULL && result != NULL;
  for (int64_t i = 0; ok && i < count; i++) {
    inputs[i] = dense_load_as(ex, (int32_t)(i + 1), dtype, -1, NULL);
    widths[i] = ex->t[i + 1].dims[dim] * inner;
    ok = inputs[i] != NULL;
  }
  if (!ok) {
    dense_fail_memory();
  } else {
    cat_bytes((const char *const *)inputs, widths, count, outer, result);
    dense_store_as(ex, 0, result, dtype);
  }
  for (int64_t i = 0; inputs != NULL && i < count; i++) free(inputs[i]);
  free(inputs);
  free(widths);
  free(result);
}

aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList *tensors, int64_t dim, aclTensor *out,
                                     uint64_t *workspaceSize, aclOpExecutor **executor) {
  static const char op[] = "aclnnCat";
  char a[160], b[160];
  SOP_CHECK(sop_check_nonnull(op, "tensors", tensors));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  SOP_CHECK(sop_check_tensor(op, "out", out, SOP_ALL));
  if (tensors->size == 0) return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "tensors is empty");
  if (out->ndim < 1) return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "out has no dimensions");
  int64_t d = 0;
  SOP_CHECK(dense_wrap_dim(op, "dim", dim, out->ndim, &d));
  int64_t total = 0, taking = 0;
  for (uint64_t i = 0; i < tensors->size; i++) {
    const aclTensor *t = tensors->items[i];
    SOP_CHECK(sop_check_nonnull(op, "tensors[i]", t));
    SOP_CHECK(sop_check_tensor(op, "tensors[i]", t, SOP_ALL));
    SOP_CHECK(sop_check_cast(op, t->dtype, "out", out));
    if (t->ndim == 1 && t->dims[0] == 0) continue; /* legacy: skipped */
    bool fits = t->ndim == out->ndim;
    for (int32_t k = 0; fits && k < out->ndim; k++) fits = k == d || t->dims[k] == out->dims[k];
    if (!fits) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                      "tensors[%llu] %s does not match out %s outside dimension %lld",
                      (unsigned long long)i, sop_shape_str(t, a), sop_shape_str(out, b),
                      (long long)d);
    }
    total += t->dims[d];
    taking++;
  }
  if (total != out->dims[d]) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "the tensors' sizes along dimension %lld add up to %lld, out's is %lld",
                    (long long)d, (long long)total, (long long)out->dims[d]);
  }
  aclOpExecutor *ex = sop_executor_new(op, (int32_t)(taking + 1), run_cat);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  int32_t slot = 1;
  for (uint64_t i = 0; i < tensors->size; i++) {
    const aclTensor *t = tensors->items[i];
    if (!(t->ndim == 1 && t->dims[0] == 0)) sop_capture(ex, slot++, t);
  }
  ex->i[0] = d;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(Cat)

/* The broadcast shape of tensors t[0..n) (right-aligned, size 1 stretches); false when they do
 * not broadcast or the result has more than INDEX_MAX_DIMS dimensions. */
static bool broadcast_shape(const aclTensor *const *t, int32_t n, int32_t *rank, int64_t *dims) {
  *rank = 0;
  for (int32_t i = 0; i < n; i++) {
    if (t[i]->ndim > *rank) *rank = t[i]->ndim;
  }
  if (*rank > INDEX_MAX_DIMS) return false;
  for (int32_t d = 0; d < *rank; d++) dims[d] = 1;
  for (int32_t i = 0; i < n; i++) {
    for (int32_t d = 0; d < t[i]->ndim; d++) {
      int64_t *to = &dims[*rank - t[i]->ndim + d];
      const int64_t size = t[i]->dims[d];
      if (size == 1) continue;
      if (*to != 1 && *to != size) return false;
      *to = size;
    }
  }
  return true;
}

/* aclnnIndex.  Slots: 0 out, 1 self, 2.. the index tensors of the indexed dims in order; i[0]
 * the mask of indexed dims (bit d). */
static void run_index(aclOpExecutor *ex) {
  const aclTensor *self = &ex->t[1];
  const aclDataType dtype = self->dtype;
  advanced_index a = {.rank = self->ndim};
  const aclTensor *index_t[INDEX_MAX_DIMS];
  const int32_t n = ex->count - 2;
  for (int32_t i = 0; i < n; i++) index_t[i] = &ex->t[i + 2];
  broadcast_shape(index_t, n, &a.brank, a.bshape); /* checked in phase one */
  int64_t *loaded[INDEX_MAX_DIMS] = {NULL};
  bool ok = true;
  for (int32_t d = 0, i = 0; d < self->ndim; d++) {
    a.shape[d] = self->dims[d];
    a.indexed[d] = (ex->i[0] >> d) & 1;
    if (!a.indexed[d]) continue;
    loaded[i] = dense_load_as(ex, i + 2, ACL_INT64, a.brank, a.bshape);
    a.index[d] = loaded[i];
    ok = ok && loaded[i] != NULL;
    i++;
  }
  char *in = ok ? dense_load_as(ex, 1, dtype, -1, NULL) : NULL;
  char *out = ok ? dense_alloc(sop_numel(&ex->t[0]), sop_size(dtype)) : NULL;
  index_error error;
  int64_t dim = 0;
  if (!ok || in == NULL || out == NULL) {
    dense_fail_memory();
  } else if (!advanced_index_bytes(&a, in, out, sop_size(dtype), &error)) {
    for (int32_t d = 0; d < self->ndim; d++) {
      if (a.indexed[d] && a.shape[d] == error.bound && a.index[d][error.position] == error.value) {
        dim = d;
        break;
      }
    }
    fail_index(&error, dim);
  } else {
    dense_store_as(ex, 0, out, dtype);
  }
  for (int32_t i = 0; i < n; i++) free(loaded[i]);
  free(in);
  free(out);
}

aclnnStatus aclnnIndexGetWorkspaceSize(const aclTensor *self, const aclTensorList *indices,
                                       aclTensor *out, uint64_t *workspaceSize,
                                       aclOpExecutor **executor) {
  static const char op[] = "aclnnIndex";
  char a_str[160];
  SOP_CHECK(sop_check_nonnull(op, "self", self));
  SOP_CHECK(sop_check_nonnull(op, "indices", indices));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  SOP_CHECK(sop_check_tensor(op, "self", self, SOP_ALL));
  SOP_CHECK(sop_check_tensor(op, "out", out, SOP_ALL));
  if (out->dtype != self->dtype) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "out (%s) and self (%s) differ in type",
                    sop_dtype_name(out->dtype), sop_dtype_name(self->dtype));
  }
  if (indices->size > (uint64_t)self->ndim || self->ndim == 0) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%llu indices for self %s",
                    (unsigned long long)indices->size, sop_shape_str(self, a_str));
  }
  advanced_index a = {.rank = self->ndim};
  const aclTensor *defined[INDEX_MAX_DIMS];
  int32_t n = 0;
  int64_t bits = 0;
  for (int32_t d = 0; d < self->ndim; d++) {
    a.shape[d] = self->dims[d];
    const aclTensor *t = (uint64_t)d < indices->size ? indices->items[d] : NULL;
    SOP_CHECK((uint64_t)d < indices->size ? sop_check_nonnull(op, "indices[i]", t) : ACLNN_SUCCESS);
    if (t == NULL || sop_numel(t) == 0) continue; /* an empty tensor: the dimension whole */
    if (t->dtype == ACL_BOOL) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                      "BOOL indices are not supported by the stand-in (give their positions)");
    }
    SOP_CHECK(sop_check_tensor(op, "indices[i]", t, INDEX_TYPES));
    a.indexed[d] = true;
    bits |= (int64_t)1 << d;
    defined[n++] = t;
  }
  if (n == 0) return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "no index tensor has elements");
  if (!broadcast_shape(defined, n, &a.brank, a.bshape)) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "the index tensors do not broadcast together");
  }
  int64_t want[INDEX_MAX_DIMS];
  int rank = advanced_index_shape(&a, want);
  if (rank < 0) return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "the result has over 8 dimensions");
  SOP_CHECK(dense_check_shape(op, "out", out, rank, want));
  aclOpExecutor *ex = sop_executor_new(op, n + 2, run_index);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  sop_capture(ex, 1, self);
  for (int32_t i = 0; i < n; i++) sop_capture(ex, i + 2, defined[i]);
  ex->i[0] = bits;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(Index)

/* aclnnEmbeddingDenseBackward.  Slots: 0 out, 1 grad, 2 indices; i[0] numWeights, i[1]
 * paddingIdx (as int64: negative pads nothing), i[2] scaleGradByFreq. */
static void run_embedding_backward(aclOpExecutor *ex) {
  const aclTensor *grad = &ex->t[1];
  const int64_t width = grad->dims[grad->ndim - 1], count = sop_numel(&ex->t[2]);
  const int64_t num_weights = ex->i[0];
  double *g = dense_load(ex, 1);
  int64_t *index = dense_load_i(ex, 2);
  double *out = dense_alloc(num_weights * width, sizeof *out);
  int64_t *counts = ex->i[2] ? dense_alloc(num_weights, sizeof *counts) : NULL;
  index_error error;
  if (g == NULL || index == NULL || out == NULL || (ex->i[2] && counts == NULL)) {
    dense_fail_memory();
  } else if (!embedding_backward_double(g, index, count, width, num_weights, ex->i[1],
                                        ex->i[2] != 0, out, counts, &error)) {
    fail_index(&error, 0);
  } else {
    dense_store(ex, 0, out);
  }
  free(g);
  free(index);
  free(out);
  free(counts);
}

aclnnStatus aclnnEmbeddingDenseBackwardGetWorkspaceSize(
    const aclTensor *grad, const aclTensor *indices, uint64_t numWeights, uint64_t paddingIdx,
    bool scaleGradByFreq, const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor) {
  static const char op[] = "aclnnEmbeddingDenseBackward";
  char a[160], b[160];
  const uint64_t grad_types = SOP_BIT(ACL_FLOAT) | SOP_BIT(ACL_FLOAT16) | SOP_BIT(ACL_BF16);
  SOP_CHECK(sop_check_nonnull(op, "grad", grad));
  SOP_CHECK(sop_check_nonnull(op, "indices", indices));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  SOP_CHECK(sop_check_tensor(op, "grad", grad, grad_types));
  SOP_CHECK(sop_check_tensor(op, "indices", indices, SOP_ALL));
  SOP_CHECK(sop_check_tensor(op, "out", out, grad_types));
  if (grad->ndim < 2 || indices->ndim < 1 ||
      sop_numel(grad) != sop_numel(indices) * grad->dims[grad->ndim - 1]) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "grad %s must be indices %s with one more (last) dimension",
                    sop_shape_str(grad, a), sop_shape_str(indices, b));
  }
  if (numWeights > (uint64_t)INT64_MAX) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "numWeights %llu is too large",
                    (unsigned long long)numWeights);
  }
  const int64_t want[2] = {(int64_t)numWeights, grad->dims[grad->ndim - 1]};
  SOP_CHECK(dense_check_shape(op, "out", out, 2, want));
  if (out->dtype != grad->dtype) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "out (%s) and grad (%s) differ in type",
                    sop_dtype_name(out->dtype), sop_dtype_name(grad->dtype));
  }
  aclOpExecutor *ex = sop_executor_new(op, 3, run_embedding_backward);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  sop_capture(ex, 1, grad);
  sop_capture(ex, 2, indices);
  ex->i[0] = (int64_t)numWeights;
  ex->i[1] = (int64_t)paddingIdx;
  ex->i[2] = scaleGradByFreq;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(EmbeddingDenseBackward)
