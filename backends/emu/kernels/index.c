/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Indexing kernels: index_select, gather, scatter_add, index_add, embedding's backward, cat.
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

static void run_index_select(emu_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *self = call->args[0].as.tensor, *index = call->args[2].as.tensor;
  const emu_tensor *out = call->args[3].as.tensor;
  int dim = normalize_dim(call->args[1].as.i, self->ndim);
  int64_t size = self->ndim ? self->sizes[dim] : 1;
  int64_t count = index->numel;
  for (int64_t i = 0; i < count; i++) {
    int64_t k = load_index(index, i);
    if (k < 0 || k >= size) {
      emu_task_fail(task,
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
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: index_select.out: dtypes");
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

static void run_gather(emu_task *task) {
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
      emu_task_fail(task, "gather: index %lld is out of bounds for dimension %d with size %lld",
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
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: gather.out: dtypes or ranks");
  }
  return emu_launch("gather.out", stream, args, count, run_gather, 0, NULL);
}

static void run_scatter_add(emu_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *self = call->args[0].as.tensor, *index = call->args[2].as.tensor;
  const emu_tensor *src = call->args[3].as.tensor, *out = call->args[4].as.tensor;
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
      emu_task_fail(task,
                    "scatter_add: index %lld is out of bounds for dimension %d with size "
                    "%lld",
                    (long long)k, dim, (long long)size);
      continue;
    }
    char *to = out->data + offset_at(out, index, i, dim, k) * (int64_t)item;
    const char *from = src->data + offset_at(src, index, i, dim, -1) * (int64_t)item;
    if (floating) {
      emu_store_double(to, out->dtype,
                       emu_load_double(to, out->dtype) + emu_load_double(from, src->dtype));
    } else {
      emu_store_int(to, out->dtype, emu_load_int(to, out->dtype) + emu_load_int(from, src->dtype));
    }
  }
}

static tb_status kernel_scatter_add(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("scatter_add.out", args, count, "TiTTT");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[0].as.tensor;
  if (!index_dtype_ok(args[2].as.tensor) || self->dtype != args[3].as.tensor->dtype ||
      self->dtype != args[4].as.tensor->dtype || self->dtype == TB_DTYPE_BOOL ||
      args[2].as.tensor->ndim != self->ndim) {
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: scatter_add.out: dtypes or ranks");
  }
  return emu_launch("scatter_add.out", stream, args, count, run_scatter_add, 0, NULL);
}

/* ---- index_add.out: (self, dim, index, source, alpha, out) ---- */

static void run_index_add(emu_task *task) {
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
      emu_task_fail(task,
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
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: index_add.out: dtypes or ranks");
  }
  return emu_launch("index_add.out", stream, args, count, run_index_add, 0, NULL);
}

/* ---- embedding_dense_backward: (grad_output, indices, num_weights, padding_idx,
 *      scale_grad_by_freq, out) ---- */

static void run_embedding_backward(emu_task *task) {
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
    emu_task_fail(task, "embedding_dense_backward: out of host memory");
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
      emu_task_fail(task,
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
  for (int64_t k = 0; k < num_weights; k++) {
    for (int64_t j = 0; j < dim; j++) {
      emu_store_double(out->data + (k * out->strides[0] + j * out->strides[1]) * (int64_t)item,
                       out->dtype, acc[k * dim + j]);
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
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: embedding_dense_backward: dtypes or ranks");
  }
  return emu_launch("embedding_dense_backward", stream, args, count, run_embedding_backward, 0,
                    NULL);
}

/* ---- cat.out: (tensors, dim, out) ---- */

static void run_cat(emu_task *task) {
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
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: cat.out: scalar output");
  }
  return emu_launch("cat.out", stream, args, count, run_cat, 0, NULL);
}

EMU_KERNEL(k_index_select, "index_select.out", kernel_index_select, EMU_ALL_TYPES);
EMU_KERNEL(k_gather, "gather.out", kernel_gather, EMU_ALL_TYPES);
EMU_KERNEL(k_scatter_add, "scatter_add.out", kernel_scatter_add, EMU_FLOATS | EMU_INTS);
EMU_KERNEL(k_index_add, "index_add.out", kernel_index_add, EMU_FLOATS | EMU_INTS);
EMU_KERNEL(k_embedding_backward, "embedding_dense_backward", kernel_embedding_backward, EMU_FLOATS);
EMU_KERNEL(k_cat, "cat.out", kernel_cat, EMU_ALL_TYPES);

const tb_kernel *const emu_index_kernels[] = {
    &k_index_select, &k_gather, &k_scatter_add, &k_index_add, &k_embedding_backward, &k_cat, NULL};
