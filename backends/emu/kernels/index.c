/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Indexing kernels: index_select, gather, scatter / scatter_add, index_add, embedding's
 * backward, cat, advanced indexing (index.Tensor and _index_put_impl_) and isin.
 * Slices are moved with the elementwise engine's strided copy; indices out of range are
 * reported through the stream (like a device-side assert) and the offending slice skipped.
 */
#include <stdlib.h>

#include "kernel.h"

static int64_t load_index(const emu_tensor *index, int64_t i) {
  int64_t offset = 0;
  if (index->ndim > 0) {
    int64_t rest = i;
    for (int d = index->ndim - 1; d >= 0; d--) {
      offset += (rest % index->sizes[d]) * index->strides[d];
      rest /= index->sizes[d];
    }
  }
  return emu_load_int(index->data + offset * (int64_t)emu_itemsize(index->dtype), index->dtype);
}

/* The view of `t` with dimension `dim` narrowed to [start, start + length). */
static emu_tensor narrow(const emu_tensor *t, int dim, int64_t start, int64_t length) {
  emu_tensor view = *t;
  if (t->ndim == 0) return view;
  view.sizes[dim] = length;
  view.numel = length == 0 ? 0 : (t->numel / (t->sizes[dim] ? t->sizes[dim] : 1)) * length;
  if (t->data != NULL)
    view.data = t->data + start * t->strides[dim] * (int64_t)emu_itemsize(t->dtype);
  return view;
}

static bool index_dtype_ok(const tb_tensor *t) {
  return t->dtype == TB_DTYPE_INT64 || t->dtype == TB_DTYPE_INT32;
}

static int normalize_dim(int64_t dim, int32_t ndim) {
  int32_t rank = ndim > 0 ? ndim : 1;
  return (int)(dim < 0 ? dim + rank : dim);
}

/* ---- index_select.out: (self, dim, index, out) ---- */

static void run_index_select(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *self = call->args[0].as.tensor, *index = call->args[2].as.tensor;
  const emu_tensor *out = call->args[3].as.tensor;
  int dim = normalize_dim(call->args[1].as.i, self->ndim);
  int64_t size = self->ndim ? self->sizes[dim] : 1;
  int64_t count = index->numel;
  for (int64_t i = 0; i < count; i++) {
    int64_t k = load_index(index, i);
    if (k < 0 || k >= size) {
      tbk_task_fail(task,
                    "index_select: index %lld is out of bounds for dimension %d with size "
                    "%lld",
                    (long long)k, dim, (long long)size);
      continue;
    }
    emu_tensor to = narrow(out, dim, i, 1), from = narrow(self, dim, k, 1);
    emu_copy_tensor(&to, &from);
  }
}

static tb_status kernel_index_select(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("index_select.out", args, count, "TiTT");
  if (status != TB_OK) return status;
  if (!index_dtype_ok(args[2].as.tensor) || args[0].as.tensor->dtype != args[3].as.tensor->dtype) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: index_select.out: dtypes");
  }
  return emu_launch("index_select.out", stream, args, count, run_index_select, 0, NULL);
}

/* ---- gather.out: (self, dim, index, sparse_grad, out) and scatter_add.out:
 *      (self, dim, index, src, out): elementwise over the index's positions ---- */

/* Offsets of `t` at the multi-index of linear position `i` of `shape`, with dimension `dim`
 * replaced by `k` when k >= 0. */
static int64_t offset_at(const emu_tensor *t, const emu_tensor *shape, int64_t i, int dim,
                         int64_t k) {
  int64_t offset = 0, rest = i;
  for (int d = shape->ndim - 1; d >= 0; d--) {
    int64_t coordinate = rest % shape->sizes[d];
    rest /= shape->sizes[d];
    if (d == dim && k >= 0) coordinate = k;
    if (t->ndim) offset += coordinate * t->strides[d];
  }
  return offset;
}

static void run_gather(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *self = call->args[0].as.tensor, *index = call->args[2].as.tensor;
  const emu_tensor *out = call->args[4].as.tensor;
  int dim = normalize_dim(call->args[1].as.i, self->ndim);
  int64_t size = self->ndim ? self->sizes[dim] : 1;
  size_t item = emu_itemsize(self->dtype);
  for (int64_t i = 0; i < index->numel; i++) {
    int64_t k = emu_load_int(
        index->data + offset_at(index, index, i, dim, -1) * (int64_t)emu_itemsize(index->dtype),
        index->dtype);
    if (k < 0 || k >= size) {
      tbk_task_fail(task, "gather: index %lld is out of bounds for dimension %d with size %lld",
                    (long long)k, dim, (long long)size);
      continue;
    }
    memcpy(out->data + offset_at(out, index, i, dim, -1) * (int64_t)item,
           self->data + offset_at(self, index, i, dim, k) * (int64_t)item, item);
  }
}

static tb_status kernel_gather(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("gather.out", args, count, "TiTbT");
  if (status != TB_OK) return status;
  if (!index_dtype_ok(args[2].as.tensor) || args[0].as.tensor->dtype != args[4].as.tensor->dtype ||
      args[0].as.tensor->ndim != args[2].as.tensor->ndim) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: gather.out: dtypes or ranks");
  }
  return emu_launch("gather.out", stream, args, count, run_gather, 0, NULL);
}

static void run_scatter(tbk_task *task, bool add) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *self = call->args[0].as.tensor, *index = call->args[2].as.tensor;
  const emu_tensor *out = call->args[4].as.tensor;
  char value[16]; /* scatter.value_out: the number in out's dtype, read at every position */
  emu_tensor number = {.data = value, .dtype = out->dtype, .ndim = 0, .numel = 1};
  const emu_tensor *src = call->args[3].kind == TB_VALUE_TENSOR ? call->args[3].as.tensor : &number;
  if (src == &number) {
    if (call->args[3].kind == TB_VALUE_DOUBLE) {
      emu_store_double(value, out->dtype, call->args[3].as.f);
    } else {
      emu_store_int(value, out->dtype, emu_arg_int(&call->args[3]));
    }
  }
  int dim = normalize_dim(call->args[1].as.i, self->ndim);
  if (out->data != self->data) emu_copy_tensor(out, self);
  int64_t size = out->ndim ? out->sizes[dim] : 1;
  size_t item = emu_itemsize(out->dtype);
  bool floating = emu_is_floating(out->dtype);
  for (int64_t i = 0; i < index->numel; i++) {
    int64_t k = emu_load_int(
        index->data + offset_at(index, index, i, dim, -1) * (int64_t)emu_itemsize(index->dtype),
        index->dtype);
    if (k < 0 || k >= size) {
      tbk_task_fail(task, "%s: index %lld is out of bounds for dimension %d with size %lld",
                    add ? "scatter_add" : "scatter", (long long)k, dim, (long long)size);
      continue;
    }
    char *to = out->data + offset_at(out, index, i, dim, k) * (int64_t)item;
    const char *from = src->data + offset_at(src, index, i, dim, -1) * (int64_t)item;
    if (!add) {
      memcpy(to, from, item);
    } else if (floating) {
      emu_store_double(to, out->dtype,
                       emu_load_double(to, out->dtype) + emu_load_double(from, src->dtype));
    } else {
      emu_store_int(to, out->dtype, emu_load_int(to, out->dtype) + emu_load_int(from, src->dtype));
    }
  }
}

static void run_scatter_add(tbk_task *task) { run_scatter(task, true); }
static void run_scatter_src(tbk_task *task) { run_scatter(task, false); }

/* Whether a number converts to dtype d as ATen's checked Scalar conversion does without
 * raising: a float truncated toward zero must be representable in an integer dtype. */
static bool number_fits(tb_dtype d, const tb_value *v) {
  if (v->kind != TB_VALUE_DOUBLE || emu_is_floating(d) || d == TB_DTYPE_BOOL) return true;
  double t = trunc(v->as.f);
  if (!(t >= -9.2e18 && t <= 9.2e18)) return false;
  char element[8];
  emu_store_int(element, d, (int64_t)t);
  return (double)emu_load_int(element, d) == t;
}

/* scatter_add.out / scatter.src_out: (self, dim, index, src, out), scatter.value_out: (self,
 * dim, index, value, out); a duplicate position of scatter takes the last of its sources, in
 * the index's row-major order */
static tb_status enqueue_scatter(const char *name, bool add, tb_stream stream, const tb_value *args,
                                 int32_t count) {
  tb_status status = emu_check_args(name, args, count, "TiTxT");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[0].as.tensor;
  bool value = args[3].kind != TB_VALUE_TENSOR;
  bool ok = value
                ? !add && number_fits(self->dtype, &args[3])
                : self->dtype == args[3].as.tensor->dtype && args[3].as.tensor->ndim == self->ndim;
  if (!ok || !index_dtype_ok(args[2].as.tensor) || self->dtype != args[4].as.tensor->dtype ||
      (add && self->dtype == TB_DTYPE_BOOL) || args[2].as.tensor->ndim != self->ndim) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: dtypes or ranks", name);
  }
  return emu_launch(name, stream, args, count, add ? run_scatter_add : run_scatter_src, 0, NULL);
}
static tb_status kernel_scatter_add(tb_stream stream, const tb_value *args, int32_t count) {
  if (args[3].kind != TB_VALUE_TENSOR) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: scatter_add.out: src");
  }
  return enqueue_scatter("scatter_add.out", true, stream, args, count);
}
static tb_status kernel_scatter_src(tb_stream stream, const tb_value *args, int32_t count) {
  if (args[3].kind != TB_VALUE_TENSOR) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: scatter.src_out: src");
  }
  return enqueue_scatter("scatter.src_out", false, stream, args, count);
}
static tb_status kernel_scatter_value(tb_stream stream, const tb_value *args, int32_t count) {
  if (args[3].kind == TB_VALUE_TENSOR) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: scatter.value_out: value");
  }
  return enqueue_scatter("scatter.value_out", false, stream, args, count);
}

/* ---- index_add.out: (self, dim, index, source, alpha, out) ---- */

static void run_index_add(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *self = call->args[0].as.tensor, *index = call->args[2].as.tensor;
  const emu_tensor *source = call->args[3].as.tensor, *out = call->args[5].as.tensor;
  double alpha = emu_arg_double(&call->args[4]);
  int64_t ialpha = emu_arg_int(&call->args[4]);
  int dim = normalize_dim(call->args[1].as.i, self->ndim);
  if (out->data != self->data) emu_copy_tensor(out, self);
  int64_t size = out->ndim ? out->sizes[dim] : 1;
  size_t item = emu_itemsize(out->dtype);
  bool floating = emu_is_floating(out->dtype);
  for (int64_t i = 0; i < index->numel; i++) {
    int64_t k = load_index(index, i);
    if (k < 0 || k >= size) {
      tbk_task_fail(task,
                    "index_add: index %lld is out of bounds for dimension %d with size "
                    "%lld",
                    (long long)k, dim, (long long)size);
      continue;
    }
    emu_tensor to = narrow(out, dim, k, 1), from = narrow(source, dim, i, 1);
    for (int64_t e = 0; e < to.numel; e++) {
      char *pt = to.data + offset_at(&to, &to, e, -1, -1) * (int64_t)item;
      const char *pf = from.data + offset_at(&from, &to, e, -1, -1) * (int64_t)item;
      if (floating) {
        emu_store_double(
            pt, out->dtype,
            emu_load_double(pt, out->dtype) + alpha * emu_load_double(pf, source->dtype));
      } else {
        emu_store_int(pt, out->dtype,
                      emu_load_int(pt, out->dtype) + ialpha * emu_load_int(pf, source->dtype));
      }
    }
  }
}

static tb_status kernel_index_add(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("index_add.out", args, count, "TiTTnT");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[0].as.tensor;
  if (!index_dtype_ok(args[2].as.tensor) || self->dtype != args[3].as.tensor->dtype ||
      self->dtype != args[5].as.tensor->dtype || self->dtype == TB_DTYPE_BOOL ||
      args[3].as.tensor->ndim != self->ndim) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: index_add.out: dtypes or ranks");
  }
  return emu_launch("index_add.out", stream, args, count, run_index_add, 0, NULL);
}

/* ---- embedding_dense_backward: (grad_output, indices, num_weights, padding_idx,
 *      scale_grad_by_freq, out) ---- */

/* float32 copies of n doubles, a loop the compiler vectorises (emu_store_double per element
 * cost 2-3 ns: 40 us for GPT-2's 256x64 embedding gradient). */
EMU_HOT_LOOP static void store_f32(float *restrict out, const double *restrict in, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = (float)in[i];
}

static void run_embedding_backward(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *grad = call->args[0].as.tensor, *indices = call->args[1].as.tensor;
  const emu_tensor *out = call->args[5].as.tensor;
  int64_t num_weights = call->args[2].as.i, padding_idx = call->args[3].as.i;
  bool scale = call->args[4].as.b;
  int64_t dim = out->sizes[1];
  size_t item = emu_itemsize(out->dtype);
  int64_t n = indices->numel;
  double *acc = calloc((size_t)(num_weights * dim > 0 ? num_weights * dim : 1), sizeof(double));
  int64_t *frequency =
      scale ? calloc((size_t)(num_weights > 0 ? num_weights : 1), sizeof(int64_t)) : NULL;
  void *scratch = NULL;
  const char *g = emu_contiguous(grad, &scratch);
  if (acc == NULL || g == NULL || (scale && frequency == NULL)) {
    tbk_task_fail(task, "embedding_dense_backward: out of host memory");
    free(acc);
    free(frequency);
    free(scratch);
    return;
  }
  if (scale) {
    for (int64_t i = 0; i < n; i++) {
      int64_t k = load_index(indices, i);
      if (k >= 0 && k < num_weights) frequency[k]++;
    }
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t k = load_index(indices, i);
    if (k == padding_idx) continue;
    if (k < 0 || k >= num_weights) {
      tbk_task_fail(task,
                    "embedding_dense_backward: index %lld is out of range for %lld "
                    "embeddings",
                    (long long)k, (long long)num_weights);
      continue;
    }
    double weight = scale ? 1.0 / (double)frequency[k] : 1.0;
    const char *row = g + i * dim * (int64_t)emu_itemsize(grad->dtype);
    double *target = acc + k * dim;
    if (grad->dtype == TB_DTYPE_FLOAT32) {
      const float *f = (const float *)row;
      for (int64_t j = 0; j < dim; j++) target[j] += weight * f[j];
    } else {
      for (int64_t j = 0; j < dim; j++) {
        target[j] +=
            weight * emu_load_double(row + j * (int64_t)emu_itemsize(grad->dtype), grad->dtype);
      }
    }
  }
  const bool dense = out->strides[1] == 1 && out->strides[0] == dim;
  if (dense && out->dtype == TB_DTYPE_FLOAT32) { /* the usual case: one converting pass */
    store_f32((float *)out->data, acc, num_weights * dim);
  } else if (dense && out->dtype == TB_DTYPE_FLOAT64) {
    memcpy(out->data, acc, (size_t)(num_weights * dim) * sizeof(double));
  } else {
    for (int64_t k = 0; k < num_weights; k++) {
      for (int64_t j = 0; j < dim; j++) {
        emu_store_double(out->data + (k * out->strides[0] + j * out->strides[1]) * (int64_t)item,
                         out->dtype, acc[k * dim + j]);
      }
    }
  }
  free(acc);
  free(frequency);
  free(scratch);
}

static tb_status kernel_embedding_backward(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("embedding_dense_backward", args, count, "TTiibT");
  if (status != TB_OK) return status;
  const tb_tensor *grad = args[0].as.tensor, *out = args[5].as.tensor;
  if (!index_dtype_ok(args[1].as.tensor) || !emu_is_floating(grad->dtype) ||
      grad->dtype != out->dtype || out->ndim != 2) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: embedding_dense_backward: dtypes or ranks");
  }
  return emu_launch("embedding_dense_backward", stream, args, count, run_embedding_backward, 0,
                    NULL);
}

/* ---- cat.out: (tensors, dim, out) ---- */

static void run_cat(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *list = &call->args[0];
  const emu_tensor *out = call->args[2].as.tensor;
  int dim = normalize_dim(call->args[1].as.i, out->ndim);
  int64_t start = 0;
  for (int64_t k = 0; k < list->as.tensors.count; k++) {
    const emu_tensor *t = &list->as.tensors.items[k];
    if (t->ndim == 1 && t->sizes[0] == 0 && out->ndim != 1) continue; /* legacy empty input */
    int64_t length = t->ndim ? t->sizes[dim] : 1;
    emu_tensor slice = narrow(out, dim, start, length);
    if (length > 0) emu_copy_tensor(&slice, t);
    start += length;
  }
}

static tb_status kernel_cat(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("cat.out", args, count, "LiT");
  if (status != TB_OK) return status;
  if (args[2].as.tensor->ndim == 0) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: cat.out: scalar output");
  }
  return emu_launch("cat.out", stream, args, count, run_cat, 0, NULL);
}

/* ---- stack.out: (tensors, dim, out), an operator outside torch_backend's compiled list
 *      (ABI 2.0: registered through its boxed wrapper, with stack derived from it) ----
 * The tensors share one shape and out's dtype; out has that shape with their count inserted at
 * dim, and tensor k is copied into out's slice k along dim.  Anything else (dtype mixes, which
 * ATen promotes) is declined. */

static void run_stack(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *list = &call->args[0];
  const emu_tensor *out = call->args[2].as.tensor;
  int dim = normalize_dim(call->args[1].as.i, out->ndim);
  if (out->numel == 0) return;
  for (int64_t k = 0; k < list->as.tensors.count; k++) {
    const emu_tensor *t = &list->as.tensors.items[k];
    emu_tensor slice = *out; /* out[..., k, ...] along dim, without that dimension */
    slice.data = out->data + k * out->strides[dim] * (int64_t)emu_itemsize(out->dtype);
    slice.ndim = out->ndim - 1;
    slice.numel = t->numel;
    for (int d = dim; d < slice.ndim; d++) {
      slice.sizes[d] = out->sizes[d + 1];
      slice.strides[d] = out->strides[d + 1];
    }
    emu_copy_tensor(&slice, t);
  }
}

static tb_status kernel_stack(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("stack.out", args, count, "LiT");
  if (status != TB_OK) return status;
  const tb_tensor_list *list = &args[0].as.tensors;
  const tb_tensor *out = args[2].as.tensor;
  int64_t dim = args[1].as.i < 0 ? args[1].as.i + out->ndim : args[1].as.i;
  bool fits = list->count > 0 && dim >= 0 && dim < out->ndim && out->sizes[dim] == list->count;
  for (int64_t k = 0; fits && k < list->count; k++) {
    const tb_tensor *t = list->items[k];
    fits = t != NULL && t->dtype == out->dtype && t->ndim == out->ndim - 1;
    for (int32_t d = 0; fits && d < t->ndim; d++) {
      fits = t->sizes[d] == out->sizes[d < dim ? d : d + 1];
    }
  }
  if (!fits) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: stack.out: tensors unlike out's slices");
  }
  return emu_launch("stack.out", stream, args, count, run_stack, 0, NULL);
}

/* ---- advanced indexing: index.Tensor_out (self, indices, out) and _index_put_impl_ (self,
 *      indices, values, accumulate, unsafe) ----
 * `indices` lists, for self's leading dimensions, an index tensor (int64 or int32) or None (the
 * whole dimension); a bool (or uint8) mask stands for as many dimensions as it has and is
 * replaced, when the task runs, by the coordinates of its true elements (ATen's expansion).
 * The index tensors broadcast together to shape B.  The indexed result has shape
 * self[:first] + B + self[last + 1:] when the indexed dimensions are adjacent (first..last),
 * else B + the other dimensions of self.  Each of its elements is a (plain position p, B
 * position b) pair: self's element at p's offset plus b's indexed offset.  index copies those
 * elements into out; _index_put_impl_ writes (or, with accumulate, adds) values broadcast to
 * that shape into them, visiting B in order so that duplicates add up (and the last of them
 * wins without accumulate). */

typedef struct index_entry {
  bool indexed;
  const char *data; /* int64 / int32 elements (shadow memory or a mask's expansion) */
  tb_dtype dtype;
  int ndim;
  int64_t sizes[EMU_MAX_DIMS], strides[EMU_MAX_DIMS];
} index_entry;

typedef struct index_plan {
  const emu_tensor *self, *other; /* other: index's out or index_put's values */
  bool put, accumulate;
  int64_t b_sizes[EMU_MAX_DIMS];
  int b_rank;
  int64_t b_count, p_count;
  int64_t *b_self, *b_other; /* per B position: self offset (-1: out of range), other offset */
  int64_t *p_self, *p_other; /* per plain position */
  bool p_dense;              /* p_self[p] = p_self[0] + p and p_other[p] = p_other[0] + p */
} index_plan;

static bool is_mask(tb_dtype d) { return d == TB_DTYPE_BOOL || d == TB_DTYPE_UINT8; }

/* Entry d of self's dimensions, with masks expanded into `expansions` (freed by the caller).
 * Returns false with the task failed when out of host memory. */
static bool expand_indices(tbk_task *task, const emu_arg *list, index_entry *entries,
                           int64_t **expansions, int *expansion_count) {
  memset(entries, 0, sizeof(index_entry) * EMU_MAX_DIMS);
  int d = 0;
  for (int64_t j = 0; j < list->as.tensors.count; j++) {
    const emu_tensor *t = &list->as.tensors.items[j];
    if (t->ndim < 0) {
      d++;
      continue;
    }
    if (!is_mask(t->dtype)) {
      index_entry *e = &entries[d++];
      e->indexed = true;
      e->data = t->data;
      e->dtype = t->dtype;
      e->ndim = t->ndim;
      for (int k = 0; k < t->ndim; k++) {
        e->sizes[k] = t->sizes[k];
        e->strides[k] = t->strides[k];
      }
      continue;
    }
    /* a mask over self dims d .. d + ndim - 1: the coordinates of its nonzero elements */
    int64_t count = 0;
    for (int64_t i = 0; i < t->numel; i++) count += load_index(t, i) != 0;
    int64_t *coordinates = malloc((size_t)(count > 0 ? count : 1) * (size_t)t->ndim * 8);
    if (coordinates == NULL) {
      tbk_task_fail(task, "index: out of host memory");
      return false;
    }
    expansions[(*expansion_count)++] = coordinates;
    int64_t n = 0;
    for (int64_t i = 0; i < t->numel; i++) {
      if (load_index(t, i) == 0) continue;
      int64_t rest = i;
      for (int k = t->ndim - 1; k >= 0; k--) {
        coordinates[k * count + n] = rest % t->sizes[k];
        rest /= t->sizes[k];
      }
      n++;
    }
    for (int k = 0; k < t->ndim; k++) {
      index_entry *e = &entries[d++];
      e->indexed = true;
      e->data = (const char *)(coordinates + k * count);
      e->dtype = TB_DTYPE_INT64;
      e->ndim = 1;
      e->sizes[0] = count;
      e->strides[0] = 1;
    }
  }
  return true;
}

/* Builds the plan for self / other; false (task failed) on a shape error or out of memory. */
static bool plan_index(tbk_task *task, index_plan *plan, const index_entry *entries) {
  const emu_tensor *self = plan->self, *other = plan->other;
  const char *op = plan->put ? "index_put" : "index";
  int first = -1, last = -1, indexed = 0;
  plan->b_rank = 0;
  for (int d = 0; d < self->ndim; d++) {
    const index_entry *e = &entries[d];
    if (!e->indexed) continue;
    if (first < 0) first = d;
    last = d;
    indexed++;
    /* broadcast B with this index's shape, right-aligned */
    int rank = e->ndim > plan->b_rank ? e->ndim : plan->b_rank;
    int64_t sizes[EMU_MAX_DIMS];
    for (int k = 0; k < rank; k++) {
      int kb = k - (rank - plan->b_rank), ke = k - (rank - e->ndim);
      int64_t sb = kb >= 0 ? plan->b_sizes[kb] : 1, se = ke >= 0 ? e->sizes[ke] : 1;
      if (sb != se && sb != 1 && se != 1) {
        tbk_task_fail(task, "%s: shape mismatch: indexing tensors could not be broadcast together",
                      op);
        return false;
      }
      sizes[k] = sb == 1 ? se : sb;
    }
    plan->b_rank = rank;
    memcpy(plan->b_sizes, sizes, sizeof sizes);
  }
  bool adjacent = last - first + 1 == indexed;
  /* the result's dimensions: plain ones map to a self dimension; B's come as a block */
  int rank = self->ndim - indexed + plan->b_rank;
  if (rank > EMU_MAX_DIMS) {
    tbk_task_fail(task, "%s: the result would have more than %d dimensions", op, EMU_MAX_DIMS);
    return false;
  }
  int b_start = adjacent ? first : 0;
  int64_t r_sizes[EMU_MAX_DIMS];
  int r_self[EMU_MAX_DIMS]; /* self dimension of each plain result dimension, -1 for B */
  int r = 0;
  for (int d = 0; d < self->ndim || r < rank; d++) {
    if (r == b_start) {
      for (int k = 0; k < plan->b_rank; k++, r++) {
        r_sizes[r] = plan->b_sizes[k];
        r_self[r] = -1;
      }
    }
    if (d >= self->ndim) break;
    if (entries[d].indexed) continue;
    r_sizes[r] = self->sizes[d];
    r_self[r] = d;
    r++;
  }
  /* other's strides along the result's dimensions: out has the result's shape; values
   * broadcast to it (right-aligned) */
  int64_t o_strides[EMU_MAX_DIMS];
  if (other->ndim > rank || (!plan->put && other->ndim != rank)) {
    tbk_task_fail(task, "%s: shape mismatch: value tensor cannot be broadcast to the result", op);
    return false;
  }
  for (int k = 0; k < rank; k++) {
    int ko = k - (rank - other->ndim);
    int64_t size = ko >= 0 ? other->sizes[ko] : 1;
    if (size != r_sizes[k] && (size != 1 || !plan->put)) {
      tbk_task_fail(task,
                    "%s: shape mismatch: value tensor of size %lld cannot be broadcast to "
                    "indexing result of size %lld in dimension %d",
                    op, (long long)size, (long long)r_sizes[k], k);
      return false;
    }
    o_strides[k] = ko >= 0 && size == r_sizes[k] ? other->strides[ko] : 0;
  }
  /* plain positions */
  plan->p_count = 1;
  for (int k = 0; k < rank; k++) {
    if (r_self[k] >= 0) plan->p_count *= r_sizes[k];
  }
  plan->b_count = 1;
  for (int k = 0; k < plan->b_rank; k++) plan->b_count *= plan->b_sizes[k];
  plan->p_self = malloc((size_t)(plan->p_count + 1) * 8);
  plan->p_other = malloc((size_t)(plan->p_count + 1) * 8);
  plan->b_self = malloc((size_t)(plan->b_count + 1) * 8);
  plan->b_other = malloc((size_t)(plan->b_count + 1) * 8);
  if (!plan->p_self || !plan->p_other || !plan->b_self || !plan->b_other) {
    tbk_task_fail(task, "%s: out of host memory", op);
    return false;
  }
  plan->p_dense = true;
  for (int64_t p = 0; p < plan->p_count; p++) {
    int64_t rest = p, so = 0, oo = 0;
    for (int k = rank - 1; k >= 0; k--) {
      if (r_self[k] < 0) continue;
      int64_t i = rest % r_sizes[k];
      rest /= r_sizes[k];
      so += i * self->strides[r_self[k]];
      oo += i * o_strides[k];
    }
    plan->p_self[p] = so;
    plan->p_other[p] = oo;
    plan->p_dense = plan->p_dense && so == plan->p_self[0] + p && oo == plan->p_other[0] + p;
  }
  /* B positions: the indexed offset into self, checked, and other's offset */
  bool in_range = true;
  for (int64_t b = 0; b < plan->b_count; b++) {
    int64_t coordinate[EMU_MAX_DIMS], rest = b, oo = 0;
    for (int k = plan->b_rank - 1; k >= 0; k--) {
      coordinate[k] = rest % plan->b_sizes[k];
      rest /= plan->b_sizes[k];
      oo += coordinate[k] * o_strides[b_start + k];
    }
    int64_t so = 0;
    for (int d = 0; d < self->ndim; d++) {
      const index_entry *e = &entries[d];
      if (!e->indexed) continue;
      int64_t offset = 0;
      for (int k = 0; k < e->ndim; k++) {
        int64_t c = coordinate[k + plan->b_rank - e->ndim];
        if (e->sizes[k] > 1) offset += c * e->strides[k];
      }
      int64_t v = emu_load_int(e->data + offset * (int64_t)emu_itemsize(e->dtype), e->dtype);
      int64_t size = self->sizes[d];
      if (v < -size || v >= size) {
        if (in_range) {
          tbk_task_fail(task, "%s: index %lld is out of bounds for dimension %d with size %lld", op,
                        (long long)v, d, (long long)size);
        }
        in_range = false;
        so = -1;
        break;
      }
      so += (v < 0 ? v + size : v) * self->strides[d];
    }
    plan->b_self[b] = so;
    plan->b_other[b] = oo;
  }
  return true;
}

static void move_element(const index_plan *plan, char *self, char *other, size_t item) {
  if (!plan->put) {
    memcpy(other, self, item);
  } else if (!plan->accumulate) {
    memcpy(self, other, item);
  } else if (plan->self->dtype == TB_DTYPE_FLOAT32) {
    *(float *)self += *(const float *)other;
  } else if (emu_is_floating(plan->self->dtype)) {
    tb_dtype dt = plan->self->dtype;
    emu_store_double(self, dt, emu_load_double(self, dt) + emu_load_double(other, dt));
  } else {
    tb_dtype dt = plan->self->dtype;
    emu_store_int(self, dt, emu_load_int(self, dt) + emu_load_int(other, dt));
  }
}

/* B positions [b0, b1) x plain positions [p0, p1) */
static void index_block(const index_plan *plan, int64_t b0, int64_t b1, int64_t p0, int64_t p1) {
  const size_t item = emu_itemsize(plan->self->dtype);
  char *self = plan->self->data, *other = plan->other->data;
  for (int64_t b = b0; b < b1; b++) {
    if (plan->b_self[b] < 0) continue;
    char *s = self + plan->b_self[b] * (int64_t)item;
    char *o = other + plan->b_other[b] * (int64_t)item;
    if (plan->p_dense && !(plan->put && plan->accumulate)) {
      char *sp = s + (plan->p_self[0] + p0) * (int64_t)item;
      char *op = o + (plan->p_other[0] + p0) * (int64_t)item;
      memcpy(plan->put ? sp : op, plan->put ? op : sp, (size_t)(p1 - p0) * item);
      continue;
    }
    if (plan->p_dense && plan->self->dtype == TB_DTYPE_FLOAT32) {
      float *sp = (float *)s + plan->p_self[0] + p0;
      const float *op = (const float *)o + plan->p_other[0] + p0;
      for (int64_t p = 0; p < p1 - p0; p++) sp[p] += op[p];
      continue;
    }
    for (int64_t p = p0; p < p1; p++) {
      move_element(plan, s + plan->p_self[p] * (int64_t)item, o + plan->p_other[p] * (int64_t)item,
                   item);
    }
  }
}

static void index_by_b(void *context, int64_t begin, int64_t end) {
  const index_plan *plan = context;
  index_block(plan, begin, end, 0, plan->p_count);
}

static void index_by_p(void *context, int64_t begin, int64_t end) {
  const index_plan *plan = context;
  index_block(plan, 0, plan->b_count, begin, end);
}

static void run_advanced_index(tbk_task *task, bool put) {
  emu_call *call = emu_call_of(task);
  index_plan plan = {.self = call->args[0].as.tensor,
                     .other = call->args[2].as.tensor,
                     .put = put,
                     .accumulate = put && call->args[3].as.b};
  char storage[16];
  emu_tensor value;
  if (put && call->args[2].kind != TB_VALUE_TENSOR) { /* a number: a 0-dim value */
    memset(&value, 0, sizeof value);
    value.dtype = plan.self->dtype;
    value.numel = 1;
    value.data = storage;
    if (call->args[2].kind == TB_VALUE_DOUBLE) {
      emu_store_double(storage, value.dtype, call->args[2].as.f);
    } else {
      emu_store_int(storage, value.dtype, emu_arg_int(&call->args[2]));
    }
    plan.other = &value;
  }
  index_entry entries[EMU_MAX_DIMS];
  int64_t *expansions[EMU_MAX_DIMS];
  int expansion_count = 0;
  if (expand_indices(task, &call->args[1], entries, expansions, &expansion_count) &&
      plan_index(task, &plan, entries) && plan.p_count > 0 && plan.b_count > 0) {
    /* grains of about 4096 elements; index_put splits plain positions only (see above) */
    if (put || plan.p_count >= plan.b_count) {
      emu_parallel_for(plan.p_count, plan.b_count >= 4096 ? 1 : 4096 / plan.b_count, index_by_p,
                       &plan);
    } else {
      emu_parallel_for(plan.b_count, plan.p_count >= 4096 ? 1 : 4096 / plan.p_count, index_by_b,
                       &plan);
    }
  }
  free(plan.p_self);
  free(plan.p_other);
  free(plan.b_self);
  free(plan.b_other);
  for (int k = 0; k < expansion_count; k++) free(expansions[k]);
}
static void run_index(tbk_task *task) { run_advanced_index(task, false); }
static void run_index_put(tbk_task *task) { run_advanced_index(task, true); }

/* What can be checked before the task runs: index dtypes, the dimensions they cover, masks'
 * shapes against self's; without masks also the broadcast of the indices and of `values` to
 * the result (with masks these wait for the mask's contents). */
static tb_status check_indices(const char *name, const tb_tensor *self, const tb_value *list,
                               const tb_value *values) {
  int d = 0, defined = 0;
  bool masks = false, ok = true;
  for (int64_t j = 0; ok && j < list->as.tensors.count; j++) {
    const tb_tensor *t = list->as.tensors.items[j];
    if (t == NULL) { /* an absent index: the whole dimension */
      d++;
    } else if (is_mask(t->dtype)) { /* covers self's dims d .. d + ndim - 1, sizes equal */
      ok = t->ndim > 0 && d + t->ndim <= self->ndim;
      for (int k = 0; ok && k < t->ndim; k++) ok = t->sizes[k] == self->sizes[d + k];
      d += t->ndim;
      masks = true;
      defined++;
    } else {
      ok = t->dtype == TB_DTYPE_INT64 || t->dtype == TB_DTYPE_INT32;
      d++;
      defined++;
    }
    ok = ok && d <= self->ndim;
  }
  if (!ok || defined == 0 || self->ndim == 0) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: indices that need ATen's checks", name);
  }
  if (masks || values == NULL) return TB_OK;
  /* index_put without masks: B, the result's shape, and values against it */
  int64_t b[EMU_MAX_DIMS];
  int b_rank = 0, first = -1, last = -1, indexed = 0;
  d = 0;
  for (int64_t j = 0; j < list->as.tensors.count; j++, d++) {
    const tb_tensor *t = list->as.tensors.items[j];
    if (t == NULL) continue;
    if (first < 0) first = d;
    last = d;
    indexed++;
    int rank = t->ndim > b_rank ? t->ndim : b_rank;
    if (rank > EMU_MAX_DIMS) return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: rank", name);
    int64_t sizes[EMU_MAX_DIMS];
    for (int k = 0; k < rank; k++) {
      int kb = k - (rank - b_rank), kt = k - (rank - t->ndim);
      int64_t sb = kb >= 0 ? b[kb] : 1, st = kt >= 0 ? t->sizes[kt] : 1;
      if (sb != st && sb != 1 && st != 1) {
        return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: indices do not broadcast", name);
      }
      sizes[k] = sb == 1 ? st : sb;
    }
    b_rank = rank;
    memcpy(b, sizes, sizeof sizes);
  }
  int rank = self->ndim - indexed + b_rank, b_start = last - first + 1 == indexed ? first : 0;
  if (rank > EMU_MAX_DIMS) return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: rank", name);
  if (values->kind != TB_VALUE_TENSOR) return TB_OK;
  int64_t r_sizes[EMU_MAX_DIMS];
  int r = 0;
  for (int s = 0; s < self->ndim || r < rank; s++) {
    if (r == b_start) {
      for (int k = 0; k < b_rank; k++) r_sizes[r++] = b[k];
    }
    if (s >= self->ndim) break;
    if (s < list->as.tensors.count && list->as.tensors.items[s] != NULL) continue;
    r_sizes[r++] = self->sizes[s];
  }
  const tb_tensor *v = values->as.tensor;
  bool fits = v->ndim <= rank;
  for (int k = 0; fits && k < v->ndim; k++) {
    int64_t size = v->sizes[k], target = r_sizes[k + rank - v->ndim];
    fits = size == target || size == 1;
  }
  return fits ? TB_OK : tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: values do not broadcast", name);
}

static tb_status kernel_index(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("index.Tensor_out", args, count, "TLT");
  if (status != TB_OK) return status;
  if (args[0].as.tensor->dtype != args[2].as.tensor->dtype) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: index.Tensor_out: dtypes");
  }
  status = check_indices("index.Tensor_out", args[0].as.tensor, &args[1], NULL);
  if (status != TB_OK) return status;
  return emu_launch("index.Tensor_out", stream, args, count, run_index, 0, NULL);
}

static tb_status kernel_index_put(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("_index_put_impl_", args, count, "TLxbb");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[0].as.tensor;
  for (int32_t d = 0; d < self->ndim; d++) {
    if (self->strides[d] == 0 && self->sizes[d] > 1) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: _index_put_impl_: self overlaps itself");
    }
  }
  if (args[2].kind == TB_VALUE_TENSOR) {
    const tb_tensor *values = args[2].as.tensor;
    if (values->dtype != self->dtype || emu_spans_overlap(self, values)) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: _index_put_impl_: values' dtype or memory");
    }
  } else if (args[2].kind == TB_VALUE_DOUBLE && !emu_is_floating(self->dtype)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: _index_put_impl_: float value, integer self");
  }
  status = check_indices("_index_put_impl_", self, &args[1], &args[2]);
  if (status != TB_OK) return status;
  return emu_launch("_index_put_impl_", stream, args, count, run_index_put, 0, NULL);
}

/* ---- isin.Tensor_Tensor_out (elements, test_elements, assume_unique, invert, out), and
 *      isin.Tensor_Scalar_out, with a number as test_elements ----
 * Compared in the tensors' dtype (a number converted to it, as ATen's type promotion does
 * when the categories agree; other mixes are declined).  (isin.Scalar_Tensor_out has no
 * kernel: its meta function gives a [0]-shaped output that its CPU kernel resizes.): the test
 * elements sorted once, each element looked up by binary search.  NaN is in nothing; assume_unique
 * changes nothing. */

typedef struct isin_job {
  const char *elements; /* contiguous, of dtype `dtype` */
  tb_dtype dtype;
  const double *values;   /* sorted test elements without NaN (floating dtypes) */
  const int64_t *ivalues; /* sorted test elements (integers, bool) */
  int64_t n;
  bool invert;
  uint8_t *result; /* contiguous */
} isin_job;

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static int compare_int(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void isin_range(void *context, int64_t begin, int64_t end) {
  const isin_job *job = context;
  const size_t item = emu_itemsize(job->dtype);
  const bool floating = emu_is_floating(job->dtype);
  for (int64_t i = begin; i < end; i++) {
    const char *p = job->elements + i * (int64_t)item;
    int64_t lo = 0, hi = job->n; /* first test element >= the element */
    bool found;
    if (floating) {
      double v = emu_load_double(p, job->dtype);
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (job->values[mid] < v) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      found = lo < job->n && job->values[lo] == v;
    } else {
      int64_t v = emu_load_int(p, job->dtype);
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (job->ivalues[mid] < v) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      found = lo < job->n && job->ivalues[lo] == v;
    }
    job->result[i] = found != job->invert;
  }
}

/* A number argument as a 1-element contiguous tensor of dtype d in `storage`. */
static emu_tensor number_tensor(const emu_arg *a, tb_dtype d, char *storage) {
  emu_tensor t;
  memset(&t, 0, sizeof t);
  t.dtype = d;
  t.numel = 1;
  t.data = storage;
  if (a->kind == TB_VALUE_DOUBLE) {
    emu_store_double(storage, d, a->as.f);
  } else {
    emu_store_int(storage, d, emu_arg_int(a));
  }
  return t;
}

static void run_isin(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *a = call->args;
  const emu_tensor *out = a[4].as.tensor;
  tb_dtype dtype = a[0].kind == TB_VALUE_TENSOR ? a[0].as.tensor->dtype : a[1].as.tensor->dtype;
  char storage[2][16];
  emu_tensor elements =
      a[0].kind == TB_VALUE_TENSOR ? *a[0].as.tensor : number_tensor(&a[0], dtype, storage[0]);
  emu_tensor test =
      a[1].kind == TB_VALUE_TENSOR ? *a[1].as.tensor : number_tensor(&a[1], dtype, storage[1]);
  if (out->numel == 0) return;
  void *element_scratch = NULL, *test_scratch = NULL, *result_scratch = NULL;
  const char *e = emu_contiguous(&elements, &element_scratch);
  const char *t = emu_contiguous(&test, &test_scratch);
  bool floating = emu_is_floating(dtype);
  void *sorted = malloc((size_t)(test.numel > 0 ? test.numel : 1) * 8);
  uint8_t *result = emu_is_contiguous(out)
                        ? (uint8_t *)out->data
                        : (uint8_t *)(result_scratch = malloc((size_t)out->numel));
  if (e == NULL || t == NULL || sorted == NULL || result == NULL) {
    tbk_task_fail(task, "isin: out of host memory");
  } else {
    int64_t n = 0;
    size_t item = emu_itemsize(dtype);
    for (int64_t i = 0; i < test.numel; i++) {
      if (floating) {
        double v = emu_load_double(t + i * (int64_t)item, dtype);
        if (v == v) ((double *)sorted)[n++] = v;
      } else {
        ((int64_t *)sorted)[n++] = emu_load_int(t + i * (int64_t)item, dtype);
      }
    }
    qsort(sorted, (size_t)n, 8, floating ? compare_double : compare_int);
    isin_job job = {e, dtype, sorted, sorted, n, a[3].as.b, result};
    emu_parallel_for(out->numel, 1 << 12, isin_range, &job);
    if (result_scratch != NULL) emu_scatter(out, (const char *)result);
  }
  free(sorted);
  free(element_scratch);
  free(test_scratch);
  free(result_scratch);
}

static tb_status enqueue_isin(const char *name, tb_stream stream, const tb_value *args,
                              int32_t count) {
  tb_status status = emu_check_args(name, args, count, "xxbbT");
  if (status != TB_OK) return status;
  const tb_value *a = &args[0], *b = &args[1];
  const tb_tensor *out = args[4].as.tensor;
  bool ok = out->dtype == TB_DTYPE_BOOL;
  if (a->kind == TB_VALUE_TENSOR && b->kind == TB_VALUE_TENSOR) {
    ok = ok && a->as.tensor->dtype == b->as.tensor->dtype;
  } else if (a->kind == TB_VALUE_TENSOR || b->kind == TB_VALUE_TENSOR) {
    const tb_value *number = a->kind == TB_VALUE_TENSOR ? b : a;
    tb_dtype d = (a->kind == TB_VALUE_TENSOR ? a : b)->as.tensor->dtype;
    /* the number must not promote the tensor: no float with integers, no integer with bool */
    ok = ok && !(number->kind == TB_VALUE_DOUBLE && !emu_is_floating(d)) &&
         !(number->kind == TB_VALUE_INT && d == TB_DTYPE_BOOL);
  } else {
    ok = false;
  }
  int64_t numel = 1;
  if (a->kind == TB_VALUE_TENSOR) {
    for (int32_t d = 0; d < a->as.tensor->ndim; d++) numel *= a->as.tensor->sizes[d];
  }
  int64_t out_numel = 1;
  for (int32_t d = 0; d < out->ndim; d++) out_numel *= out->sizes[d];
  if (!ok || numel != out_numel) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: dtypes need ATen's type promotion", name);
  }
  return emu_launch(name, stream, args, count, run_isin, 0, NULL);
}
static tb_status kernel_isin_tensors(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_isin("isin.Tensor_Tensor_out", s, a, n);
}
static tb_status kernel_isin_scalar(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_isin("isin.Tensor_Scalar_out", s, a, n);
}

EMU_KERNEL(k_index_select, "index_select.out", kernel_index_select, EMU_ALL_TYPES,
           "index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_gather, "gather.out", kernel_gather, EMU_ALL_TYPES,
           "gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) "
           "out) -> Tensor(a!)");
EMU_KERNEL(k_scatter_add, "scatter_add.out", kernel_scatter_add, EMU_FLOATS | EMU_INTS,
           "scatter_add.out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) -> "
           "Tensor(a!)");
EMU_KERNEL(k_index_add, "index_add.out", kernel_index_add, EMU_FLOATS | EMU_INTS,
           "index_add.out(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1, "
           "Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_embedding_backward, "embedding_dense_backward", kernel_embedding_backward, EMU_FLOATS,
           "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
           "SymInt padding_idx, bool scale_grad_by_freq) -> Tensor");
EMU_KERNEL(k_cat, "cat.out", kernel_cat, EMU_ALL_TYPES,
           "cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_stack, "stack.out", kernel_stack, EMU_ALL_TYPES,
           "stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)");

EMU_KERNEL(k_scatter_src, "scatter.src_out", kernel_scatter_src, EMU_ALL_TYPES,
           "scatter.src_out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) -> "
           "Tensor(a!)");
EMU_KERNEL(k_scatter_value, "scatter.value_out", kernel_scatter_value, EMU_ALL_TYPES,
           "scatter.value_out(Tensor self, int dim, Tensor index, Scalar value, *, Tensor(a!) out) "
           "-> Tensor(a!)");
EMU_KERNEL(k_index, "index.Tensor_out", kernel_index, EMU_ALL_TYPES,
           "index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_index_put, "_index_put_impl_", kernel_index_put, EMU_ALL_TYPES,
           "_index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool "
           "accumulate=False, bool unsafe=False) -> Tensor(a!)");
EMU_KERNEL(k_isin_tensors, "isin.Tensor_Tensor_out", kernel_isin_tensors, EMU_ALL_TYPES,
           "isin.Tensor_Tensor_out(Tensor elements, Tensor test_elements, *, bool "
           "assume_unique=False, bool invert=False, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_isin_scalar, "isin.Tensor_Scalar_out", kernel_isin_scalar, EMU_ALL_TYPES,
           "isin.Tensor_Scalar_out(Tensor elements, Scalar test_element, *, bool "
           "assume_unique=False, bool invert=False, Tensor(a!) out) -> Tensor(a!)");

const tb_kernel *const emu_index_kernels[] = {
    &k_index_select,       &k_gather, &k_scatter_add, &k_index_add,
    &k_embedding_backward, &k_cat,    &k_stack,       &k_scatter_src,
    &k_scatter_value,      &k_index,  &k_index_put,   &k_isin_tensors,
    &k_isin_scalar,        NULL};
