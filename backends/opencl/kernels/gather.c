/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Indexing and the kernels around it: index_select, index_add, gather, scatter, scatter_add,
 * index.Tensor and _index_put_impl_ (advanced indexing), embedding_dense_backward and nll_loss
 * (gather.cl; an index out of range faults the device with the index and the size; the
 * accumulating kernels add atomically), and two that are copies or products of the elementwise
 * engine: cat (one strided copy per input into its slice of the output) and
 * native_dropout_backward (grad * mask * scale); isin.
 */
#include <stdio.h>
#include <string.h>

#include "kernels.h"

/* index_select's layout: gather.cl's tb_select, byte for byte. */
typedef struct ocl_select {
  cl_int ndim;
  cl_int dim;
  cl_long numel;
  cl_long sizes[8];
  cl_long out_strides[8];
  cl_long self_strides[8];
  cl_long self_dim_size;
  cl_long index_stride;
} ocl_select;

/* gather.cl's tb_rowmap, tb_gather and tb_index, byte for byte. */
typedef struct ocl_rowmap {
  cl_int ndim;
  cl_long sizes[8];
  cl_long index_strides[8];
  cl_long grad_strides[8];
} ocl_rowmap;

typedef struct ocl_gather {
  cl_int ndim;
  cl_int dim;
  cl_long numel;
  cl_long sizes[8];
  cl_long out_strides[8];
  cl_long index_strides[8];
  cl_long self_strides[8];
  cl_long self_dim_size;
} ocl_gather;

typedef struct ocl_index {
  cl_int ndim;
  cl_int count;
  cl_long numel;
  cl_long sizes[8];
  cl_long out_strides[8];
  cl_long self_strides[8];
  cl_long index_strides[4][8];
  cl_long dim_sizes[4];
  cl_long dim_strides[4];
} ocl_index;

/* The gather.cl kernel `name` for data of `data` and indices of `index`; `add` (put_add) makes
 * it an accumulating one (TB_PUT_ADD). */
static tb_status kernel_for(tb_context ctx, int32_t device, tb_dtype data, tb_dtype index, int add,
                            const char *name, ocl_kernel **kernel) {
  char defines[256], accumulation[32] = "";
  if (add) snprintf(accumulation, sizeof accumulation, "#define TB_PUT_ADD %d\n", add);
  snprintf(defines, sizeof defines, "#define T %s\n#define ACC %s\n#define IDX %s\n%s",
           ocl_type_name(data), data == TB_DTYPE_FLOAT64 ? "double" : "float",
           index == TB_DTYPE_INT32 ? "int" : "long", accumulation);
  const char *sources[] = {defines, ocl_source_gather};
  return ocl_kernel_get(ctx, device, defines, sources, 2, name, kernel);
}

/* The atomic add of `dtype` on `device` (gather.cl's TB_PUT_ADD: 1 float, 2 double, 3 int, 4
 * long), or 0 when it has none: other dtypes, 64-bit ones without cl_khr_int64_base_atomics. */
static int put_add(const ocl_device *dev, tb_dtype dtype) {
  bool wide = dev->int64_atomics;
  return dtype == TB_DTYPE_FLOAT32           ? 1
         : dtype == TB_DTYPE_FLOAT64 && wide ? 2
         : dtype == TB_DTYPE_INT32           ? 3
         : dtype == TB_DTYPE_INT64 && wide   ? 4
                                             : 0;
}

static bool is_index(const tb_tensor *t) {
  return t->dtype == TB_DTYPE_INT64 || t->dtype == TB_DTYPE_INT32;
}

/* index_select.out [self, dim, index, out] */
static tb_status index_select(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 4 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_INT ||
      a[2].kind != TB_VALUE_TENSOR || a[3].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *index = a[2].as.tensor, *out = a[3].as.tensor;
  if (ocl_type_name(self->dtype) == NULL || self->dtype != out->dtype || !is_index(index) ||
      index->ndim > 1 || self->ndim > 8 || self->ndim != out->ndim || self->ndim == 0) {
    return ocl_decline(call, "this layout or dtype");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_select layout = {0};
  layout.ndim = out->ndim;
  layout.dim = (cl_int)(a[1].as.i < 0 ? a[1].as.i + self->ndim : a[1].as.i);
  layout.numel = 1;
  for (int32_t d = 0; d < out->ndim; d++) {
    layout.sizes[d] = out->sizes[d];
    layout.out_strides[d] = out->strides[d];
    layout.self_strides[d] = self->strides[d];
    layout.numel *= out->sizes[d];
  }
  layout.self_dim_size = self->sizes[layout.dim];
  layout.index_stride = index->ndim == 1 ? index->strides[0] : 0;
  if (layout.numel == 0) return TB_OK;
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, self->dtype, index->dtype, 0, "tb_index_select", &kernel);
  ocl_place po, ps, pi;
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, out, "out", &po);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, self, "self", &ps);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, index, "index", &pi);
  if (status != TB_OK) return status;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &po);
  ocl_arg_place(&args, &ps);
  ocl_arg_place(&args, &pi);
  ocl_arg_fault(&args, call->kernel->name);
  ocl_arg_value(&args, sizeof layout, &layout);
  status = ocl_args_done(&args);
  if (status == TB_OK)
    status = ocl_enqueue(ctx, device, call, kernel, layout.numel, "index_select");
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* embedding_dense_backward [grad_output, indices, num_weights, padding_idx,
 * scale_grad_by_freq, out] */
static tb_status embedding_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 6 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[2].kind != TB_VALUE_INT || a[3].kind != TB_VALUE_INT || a[4].kind != TB_VALUE_BOOL ||
      a[5].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *grad = a[0].as.tensor, *indices = a[1].as.tensor, *out = a[5].as.tensor;
  if (a[4].as.b) return ocl_decline(call, "scale_grad_by_freq");
  if (grad->dtype != TB_DTYPE_FLOAT32 || out->dtype != TB_DTYPE_FLOAT32 || !is_index(indices) ||
      out->ndim != 2 || grad->ndim < 1) {
    return ocl_decline(call, "this layout or dtype");
  }
  int64_t dim = out->sizes[1], rows = 1;
  /* grad: [*indices.shape, dim]; the leading dimensions walked with both tensors' strides */
  ocl_rowmap map = {0};
  map.ndim = indices->ndim;
  if (indices->ndim > 8 || grad->ndim != indices->ndim + 1 || out->strides[1] != 1 ||
      out->strides[0] != dim || grad->sizes[grad->ndim - 1] != dim) {
    return ocl_decline(call, "a layout it cannot walk");
  }
  for (int32_t d = 0; d < indices->ndim; d++) {
    if (grad->sizes[d] != indices->sizes[d]) return ocl_decline(call, "a layout it cannot walk");
    rows *= indices->sizes[d];
    map.sizes[d] = indices->sizes[d];
    map.index_strides[d] = indices->strides[d];
    map.grad_strides[d] = grad->strides[d];
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  ocl_operand zero[1] = {{NULL, 0, 0}};
  ocl_map_spec fill = {"x0", TB_DTYPE_FLOAT32, 1};
  status = ocl_map(ctx, call, &fill, out, zero, 1, 1);
  if (status != TB_OK || rows == 0 || dim == 0) return status;
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, TB_DTYPE_FLOAT32, indices->dtype, 0, "tb_embedding_backward",
                      &kernel);
  ocl_place pw, pg, pi;
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, out, "grad_weight", &pw);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, grad, "grad_output", &pg);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, indices, "indices", &pi);
  if (status != TB_OK) return status;
  cl_long values[] = {rows, dim, grad->strides[grad->ndim - 1], out->sizes[0], a[3].as.i};
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &pw);
  ocl_arg_place(&args, &pg);
  ocl_arg_place(&args, &pi);
  ocl_arg_fault(&args, call->kernel->name);
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    ocl_arg_value(&args, sizeof values[i], &values[i]);
  }
  ocl_arg_value(&args, sizeof map, &map);
  status = ocl_args_done(&args);
  if (status == TB_OK) {
    status = ocl_enqueue(ctx, device, call, kernel, dim, "embedding_dense_backward");
  }
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* gather.cl's tb_gather_layout over index's positions along `dim`: `plain` is the operand read
 * or written elementwise with index (NULL: none, a number), `indexed` the one indexed along
 * dim (a 0-dim one has stride 0). */
static ocl_gather gather_layout(const tb_tensor *index, int64_t dim, const tb_tensor *plain,
                                const tb_tensor *indexed) {
  ocl_gather layout = {0};
  layout.ndim = index->ndim;
  layout.dim = (cl_int)dim;
  layout.numel = 1;
  for (int32_t d = 0; d < index->ndim; d++) {
    layout.sizes[d] = index->sizes[d];
    layout.out_strides[d] = plain != NULL ? plain->strides[d] : 0;
    layout.index_strides[d] = index->strides[d];
    layout.self_strides[d] = indexed->ndim > 0 ? indexed->strides[d] : 0;
    layout.numel *= index->sizes[d];
  }
  layout.self_dim_size = indexed->ndim > 0 ? indexed->sizes[dim] : 1;
  return layout;
}

/* gather.out [self, dim, index, sparse_grad, out]: out has index's shape (ATen's meta checked
 * the sizes against self's). */
static tb_status gather(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 5 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_INT ||
      a[2].kind != TB_VALUE_TENSOR || a[4].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *index = a[2].as.tensor, *out = a[4].as.tensor;
  int32_t rank = self->ndim > 0 ? self->ndim : 1;
  int64_t dim = a[1].as.i < 0 ? a[1].as.i + rank : a[1].as.i;
  if (ocl_type_name(self->dtype) == NULL || self->dtype != out->dtype || !is_index(index) ||
      self->ndim > 8 || index->ndim != self->ndim || out->ndim != index->ndim || dim < 0 ||
      dim >= rank) {
    return ocl_decline(call, "this layout or dtype");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  for (int32_t d = 0; d < index->ndim; d++) {
    if (out->sizes[d] != index->sizes[d]) return ocl_decline(call, "an output of another shape");
  }
  ocl_gather layout = gather_layout(index, dim, out, self);
  if (layout.numel == 0) return TB_OK;
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, self->dtype, index->dtype, 0, "tb_gather", &kernel);
  ocl_place po, ps, pi;
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, out, "out", &po);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, self, "self", &ps);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, index, "index", &pi);
  if (status != TB_OK) return status;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &po);
  ocl_arg_place(&args, &ps);
  ocl_arg_place(&args, &pi);
  ocl_arg_fault(&args, call->kernel->name);
  ocl_arg_value(&args, sizeof layout, &layout);
  status = ocl_args_done(&args);
  if (status == TB_OK) status = ocl_enqueue(ctx, device, call, kernel, layout.numel, "gather");
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* out = self, first, for the kernels that update a copy of self (scatter, scatter_add,
 * index_add); nothing when they run in place (scatter_, index_add_). */
static tb_status copy_into_out(tb_context ctx, const tb_kernel_call *call, const tb_tensor *self,
                               const tb_tensor *out) {
  if (self->data == out->data) return TB_OK;
  ocl_operand in[1] = {{self, 0, 0}};
  ocl_map_spec copy = {"x0", out->dtype, 1};
  return ocl_map(ctx, call, &copy, out, in, 1, 1);
}

/* scatter.src_out [self, dim, index, src, out] and scatter.value_out [self, dim, index, value,
 * out]: out = self, then the src elements (or the number) at index's positions along dim.
 * index has self's rank and src at least index's sizes (ATen's meta checked); data of one
 * dtype. */
static tb_status scatter_into(tb_context ctx, const tb_kernel_call *call, bool accumulate) {
  const tb_value *a = call->args;
  if (call->num_args < 5 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_INT ||
      a[2].kind != TB_VALUE_TENSOR || a[4].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *index = a[2].as.tensor, *out = a[4].as.tensor;
  const tb_tensor *src = a[3].kind == TB_VALUE_TENSOR ? a[3].as.tensor : NULL;
  double real = 0;
  int64_t integer = 0;
  cl_int mode = 0;
  if (src == NULL) {
    if (!ocl_number(&a[3], &real, &integer)) return ocl_decline(call, "a value that is no number");
    mode = ocl_is_float(out->dtype) ? 1 : 2;
  }
  int32_t rank = self->ndim > 0 ? self->ndim : 1;
  int64_t dim = a[1].as.i < 0 ? a[1].as.i + rank : a[1].as.i;
  if (ocl_type_name(self->dtype) == NULL || self->dtype != out->dtype || !is_index(index) ||
      (src != NULL && (src->dtype != out->dtype || src->ndim != index->ndim)) || self->ndim > 8 ||
      out->ndim != self->ndim || index->ndim != self->ndim || dim < 0 || dim >= rank) {
    return ocl_decline(call, "this layout or dtype");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  int add = accumulate ? put_add(&ctx->devices[device], self->dtype) : 0;
  if (accumulate && (add == 0 || src == NULL)) {
    return ocl_decline(call, "a dtype without an atomic add on this device");
  }
  ocl_gather layout = gather_layout(index, dim, src, out);
  status = copy_into_out(ctx, call, self, out);
  if (status != TB_OK) return status;
  if (layout.numel == 0) return TB_OK;
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, self->dtype, index->dtype, add, "tb_scatter", &kernel);
  ocl_place po = {0}, ps, pi;
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, out, "out", &po);
  ps = po; /* a number: never read */
  if (status == TB_OK && src != NULL) status = ocl_tensor_place(ctx, device, src, "src", &ps);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, index, "index", &pi);
  if (status != TB_OK) return status;
  cl_long whole = integer;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &po);
  ocl_arg_place(&args, &ps);
  ocl_arg_place(&args, &pi);
  ocl_arg_fault(&args, call->kernel->name);
  ocl_arg_value(&args, sizeof layout, &layout);
  ocl_arg_acc(&args, self->dtype, real);
  ocl_arg_value(&args, sizeof whole, &whole);
  ocl_arg_value(&args, sizeof mode, &mode);
  status = ocl_args_done(&args);
  if (status == TB_OK) {
    status = ocl_enqueue(ctx, device, call, kernel, layout.numel,
                         accumulate ? "scatter_add" : "scatter");
  }
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

static tb_status scatter(tb_context ctx, const tb_kernel_call *call) {
  return scatter_into(ctx, call, false);
}

/* scatter_add.out [self, dim, index, src, out]: scatter's, adding atomically (float32/64,
 * int32/64). */
static tb_status scatter_add(tb_context ctx, const tb_kernel_call *call) {
  return scatter_into(ctx, call, true);
}

/* index_add.out [self, dim, index, source, alpha, out]: out = self, then out's slices at
 * index along dim += alpha * source's slices, adding atomically (float32/64, int32/64); index
 * is 1-d or a number, source has self's shape but index's length along dim (ATen's meta
 * checked). */
static tb_status index_add(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 6 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_INT ||
      a[2].kind != TB_VALUE_TENSOR || a[3].kind != TB_VALUE_TENSOR ||
      a[5].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *index = a[2].as.tensor, *source = a[3].as.tensor;
  const tb_tensor *out = a[5].as.tensor;
  double real = 0;
  int64_t integer = 0;
  if (!ocl_number(&a[4], &real, &integer)) return ocl_decline(call, "an alpha that is no number");
  int32_t rank = self->ndim > 0 ? self->ndim : 1;
  int64_t dim = a[1].as.i < 0 ? a[1].as.i + rank : a[1].as.i;
  if (ocl_type_name(self->dtype) == NULL || self->dtype != out->dtype ||
      source->dtype != out->dtype || !is_index(index) || index->ndim > 1 || self->ndim > 8 ||
      out->ndim != self->ndim || source->ndim != self->ndim || dim < 0 || dim >= rank) {
    return ocl_decline(call, "this layout or dtype");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  int add = put_add(&ctx->devices[device], self->dtype);
  if (add == 0) return ocl_decline(call, "a dtype without an atomic add on this device");
  status = copy_into_out(ctx, call, self, out);
  if (status != TB_OK) return status;
  ocl_select layout = {0};
  layout.ndim = self->ndim > 0 ? self->ndim : 1;
  layout.dim = (cl_int)dim;
  layout.numel = 1;
  for (int32_t d = 0; d < layout.ndim; d++) {
    layout.sizes[d] = self->ndim > 0 ? source->sizes[d] : 1;
    layout.out_strides[d] = self->ndim > 0 ? source->strides[d] : 0;
    layout.self_strides[d] = self->ndim > 0 ? out->strides[d] : 0;
    layout.numel *= layout.sizes[d];
  }
  layout.self_dim_size = self->ndim > 0 ? out->sizes[dim] : 1;
  layout.index_stride = index->ndim == 1 ? index->strides[0] : 0;
  if (layout.numel == 0) return TB_OK;
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, self->dtype, index->dtype, add, "tb_index_add", &kernel);
  ocl_place po, ps, pi;
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, out, "out", &po);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, source, "source", &ps);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, index, "index", &pi);
  if (status != TB_OK) return status;
  cl_long whole = integer;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &po);
  ocl_arg_place(&args, &ps);
  ocl_arg_place(&args, &pi);
  ocl_arg_fault(&args, call->kernel->name);
  ocl_arg_value(&args, sizeof layout, &layout);
  ocl_arg_acc(&args, self->dtype, real);
  ocl_arg_value(&args, sizeof whole, &whole);
  status = ocl_args_done(&args);
  if (status == TB_OK) status = ocl_enqueue(ctx, device, call, kernel, layout.numel, "index_add");
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* Advanced indexing's layout (index.Tensor's and _index_put_impl_'s): `indices` lists, for
 * self's leading dimensions, an integer index tensor or None (the whole dimension).  The index
 * tensors broadcast together to shape B; the result is self[:first] + B + self[last + 1:] when
 * the indexed dimensions are adjacent, else B + self's other dimensions (ATen's rule).  `other`
 * is index's out, of the result's shape, or index_put's values (`put`), which broadcast to it.
 * Fills `layout` and `index`; returns NULL, or why the call is declined: bool masks (which
 * ATen expands with nonzero, a host synchronization) and more than 4 index tensors among
 * them. */
static const char *index_plan(const tb_tensor *self, const tb_tensor_list *list,
                              const tb_tensor *other, bool put, ocl_index *layout,
                              const tb_tensor *index[4]) {
  if (self->ndim > 8 || (int64_t)list->count > self->ndim || other->ndim > 8) {
    return "more than 8 dimensions or more indices than dimensions";
  }
  int32_t index_dim[4] = {0, 0, 0, 0};
  int count = 0, first = -1, last = -1;
  int64_t b_sizes[8];
  int32_t b_rank = 0;
  for (int32_t d = 0; d < (int32_t)list->count; d++) {
    const tb_tensor *t = list->items[d];
    if (t == NULL) continue;
    if (!is_index(t) || count == 4 || t->ndim > 8 || (count > 0 && t->dtype != index[0]->dtype)) {
      return "masks, mixed index dtypes or more than 4 index tensors";
    }
    /* broadcast B with t's shape, right-aligned */
    int32_t rank = t->ndim > b_rank ? t->ndim : b_rank;
    int64_t sizes[8];
    for (int32_t k = 0; k < rank; k++) {
      int32_t kb = k - (rank - b_rank), kt = k - (rank - t->ndim);
      int64_t sb = kb >= 0 ? b_sizes[kb] : 1, st = kt >= 0 ? t->sizes[kt] : 1;
      if (sb != st && sb != 1 && st != 1) return "indices that do not broadcast";
      sizes[k] = sb == 1 ? st : sb;
    }
    b_rank = rank;
    memcpy(b_sizes, sizes, sizeof sizes);
    index[count] = t;
    index_dim[count++] = d;
    if (first < 0) first = d;
    last = d;
  }
  if (count == 0) return "no index tensor";
  bool adjacent = last - first + 1 == count;
  int32_t rank = self->ndim - count + b_rank, b_start = adjacent ? first : 0;
  if (rank > 8 || (put ? other->ndim > rank : other->ndim != rank)) {
    return put ? "values that do not broadcast to the result" : "an output of another rank";
  }
  memset(layout, 0, sizeof *layout);
  layout->ndim = rank;
  layout->count = count;
  layout->numel = 1;
  /* the result's dimensions: B's as a block at b_start, self's plain ones in order around it */
  int32_t plain = 0; /* the next self dimension not indexed */
  for (int32_t r = 0; r < rank; r++) {
    int64_t size = 0;
    if (r >= b_start && r < b_start + b_rank) {
      int32_t j = r - b_start;
      size = b_sizes[j];
      for (int k = 0; k < count; k++) {
        int32_t kt = j - (b_rank - index[k]->ndim);
        layout->index_strides[k][r] =
            kt >= 0 && index[k]->sizes[kt] != 1 ? index[k]->strides[kt] : 0;
      }
    } else {
      bool indexed = true;
      while (indexed) {
        indexed = false;
        for (int k = 0; k < count; k++) indexed |= index_dim[k] == plain;
        if (indexed) plain++;
      }
      size = self->sizes[plain];
      layout->self_strides[r] = self->strides[plain++];
    }
    /* out has the result's shape; values broadcast to it, right-aligned */
    int32_t ko = r - (rank - other->ndim);
    int64_t other_size = ko >= 0 ? other->sizes[ko] : 1;
    if (other_size != size && !(put && other_size == 1)) {
      return put ? "values that do not broadcast to the result" : "an output of another shape";
    }
    layout->sizes[r] = size;
    layout->out_strides[r] = ko >= 0 && other_size == size ? other->strides[ko] : 0;
    layout->numel *= size;
  }
  for (int k = 0; k < count; k++) {
    layout->dim_sizes[k] = self->sizes[index_dim[k]];
    layout->dim_strides[k] = self->strides[index_dim[k]];
  }
  return NULL;
}

/* Launches tb_index (`put` false: out = self[indices]) or tb_index_put (self[indices] = values,
 * or += when `accumulate`) over `layout`. */
static tb_status index_launch(tb_context ctx, const tb_kernel_call *call, const tb_tensor *self,
                              const tb_tensor *other, const ocl_index *layout,
                              const tb_tensor *const index[4], bool put, bool accumulate) {
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  const ocl_device *dev = &ctx->devices[device];
  if (self->dtype == TB_DTYPE_FLOAT64 && !dev->fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  int add = accumulate ? put_add(dev, self->dtype) : 0;
  if (accumulate && add == 0) {
    return ocl_decline(call, "accumulating a dtype without an atomic add on this device");
  }
  if (layout->numel == 0) return TB_OK;
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, self->dtype, index[0]->dtype, add,
                      put ? "tb_index_put" : "tb_index", &kernel);
  ocl_place pw, pr, pi[4]; /* written, read, indices */
  if (status == TB_OK) {
    status = put ? ocl_tensor_place(ctx, device, self, "self", &pw)
                 : ocl_tensor_place(ctx, device, other, "out", &pw);
  }
  if (status == TB_OK) {
    status = put ? ocl_tensor_place(ctx, device, other, "values", &pr)
                 : ocl_tensor_place(ctx, device, self, "self", &pr);
  }
  for (int k = 0; k < 4 && status == TB_OK; k++) {
    status =
        k < layout->count ? ocl_tensor_place(ctx, device, index[k], "an index", &pi[k]) : TB_OK;
    if (k >= layout->count) pi[k] = pi[0]; /* never read */
  }
  if (status != TB_OK) return status;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &pw);
  ocl_arg_place(&args, &pr);
  for (int k = 0; k < 4; k++) ocl_arg_place(&args, &pi[k]);
  ocl_arg_fault(&args, call->kernel->name);
  ocl_arg_value(&args, sizeof *layout, layout);
  status = ocl_args_done(&args);
  if (status == TB_OK) {
    status = ocl_enqueue(ctx, device, call, kernel, layout->numel, put ? "index_put" : "index");
  }
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* index.Tensor_out [self, indices, out] */
static tb_status index_tensor(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 3 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR_LIST ||
      a[2].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *out = a[2].as.tensor;
  if (ocl_type_name(self->dtype) == NULL || self->dtype != out->dtype) {
    return ocl_decline(call, "this dtype");
  }
  ocl_index layout;
  const tb_tensor *index[4] = {NULL, NULL, NULL, NULL};
  const char *why = index_plan(self, &a[1].as.tensors, out, false, &layout, index);
  if (why != NULL) return ocl_decline(call, why);
  return index_launch(ctx, call, self, out, &layout, index, false, false);
}

/* _index_put_impl_ [self, indices, values, accumulate, unsafe]: self[indices] = values (+=
 * with accumulate), values broadcast to the indexing result.  Masks are declined (see
 * index_plan), and accumulating other than float32/64 and int32/64. */
static tb_status index_put(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 5 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR_LIST ||
      a[2].kind != TB_VALUE_TENSOR || a[3].kind != TB_VALUE_BOOL) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *values = a[2].as.tensor;
  if (ocl_type_name(self->dtype) == NULL || self->dtype != values->dtype) {
    return ocl_decline(call, "this dtype, or values of another");
  }
  ocl_index layout;
  const tb_tensor *index[4] = {NULL, NULL, NULL, NULL};
  const char *why = index_plan(self, &a[1].as.tensors, values, true, &layout, index);
  if (why != NULL) return ocl_decline(call, why);
  return index_launch(ctx, call, self, values, &layout, index, true, a[3].as.b != 0);
}

/* The shared checks of nll_loss: self [n, classes] or [classes], target [n] or [], weight
 * [classes] or None. */
typedef struct nll_shape {
  int64_t n, classes, row_stride, col_stride, target_stride, weight_stride;
  cl_int has_weight;
} nll_shape;

static bool nll_shape_of(const tb_tensor *self, const tb_tensor *target, const tb_value *weight,
                         nll_shape *s) {
  if (!ocl_is_float(self->dtype) || !is_index(target) || self->ndim < 1 || self->ndim > 2) {
    return false;
  }
  bool batched = self->ndim == 2;
  s->n = batched ? self->sizes[0] : 1;
  s->classes = self->sizes[self->ndim - 1];
  s->row_stride = batched ? self->strides[0] : 0;
  s->col_stride = self->strides[self->ndim - 1];
  s->target_stride = target->ndim == 1 ? target->strides[0] : 0;
  s->has_weight = weight->kind == TB_VALUE_TENSOR;
  s->weight_stride = 0;
  if (s->has_weight) {
    const tb_tensor *w = weight->as.tensor;
    if (w->dtype != self->dtype || w->ndim != 1) return false;
    s->weight_stride = w->strides[0];
  }
  return true;
}

/* nll_loss_forward.output [self, target, weight, reduction, ignore_index, output,
 * total_weight] */
static tb_status nll_loss_forward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 7 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[3].kind != TB_VALUE_INT || a[4].kind != TB_VALUE_INT || a[5].kind != TB_VALUE_TENSOR ||
      a[6].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *target = a[1].as.tensor;
  const tb_tensor *out = a[5].as.tensor, *total = a[6].as.tensor;
  nll_shape s;
  int64_t reduction = a[3].as.i;
  if (!nll_shape_of(self, target, &a[2], &s) || out->dtype != self->dtype ||
      total->dtype != self->dtype || reduction < 0 || reduction > 2) {
    return ocl_decline(call, "this layout or dtype");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  if (reduction == 0 && s.n == 0) return TB_OK;
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, self->dtype, target->dtype, 0,
                      reduction == 0 ? "tb_nll_loss_none" : "tb_nll_loss_reduce", &kernel);
  ocl_place po, pt, ps = {0}, pg, pw; /* ps: copied into pw before the status is known */
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, out, "output", &po);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, total, "total_weight", &pt);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, self, "self", &ps);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, target, "target", &pg);
  pw = ps; /* unused without a weight */
  if (status == TB_OK && s.has_weight) {
    status = ocl_tensor_place(ctx, device, a[2].as.tensor, "weight", &pw);
  }
  if (status != TB_OK) return status;
  cl_long ignore = a[4].as.i;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &po);
  if (reduction != 0) ocl_arg_place(&args, &pt);
  ocl_arg_place(&args, &ps);
  ocl_arg_place(&args, &pg);
  ocl_arg_place(&args, &pw);
  ocl_arg_fault(&args, call->kernel->name);
  cl_long values[] = {s.n, s.classes, s.row_stride, s.col_stride, s.target_stride, s.weight_stride};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    ocl_arg_value(&args, sizeof values[i], &values[i]);
  }
  if (reduction == 0) {
    cl_long out_stride = out->ndim == 1 ? out->strides[0] : 0;
    ocl_arg_value(&args, sizeof out_stride, &out_stride);
  }
  ocl_arg_value(&args, sizeof s.has_weight, &s.has_weight);
  ocl_arg_value(&args, sizeof ignore, &ignore);
  if (reduction != 0) {
    cl_int mean = reduction == 1;
    ocl_arg_value(&args, sizeof mean, &mean);
  }
  status = ocl_args_done(&args);
  if (status == TB_OK) {
    status = ocl_enqueue(ctx, device, call, kernel, reduction == 0 ? s.n : 64, "nll_loss_forward");
  }
  pthread_mutex_unlock(&kernel->lock);
  if (status == TB_OK && reduction == 0) { /* total_weight is unused then; ATen leaves 0 */
    ocl_operand zero[1] = {{NULL, 0, 0}};
    ocl_map_spec fill = {"x0", total->dtype, 1};
    status = ocl_map(ctx, call, &fill, total, zero, 1, 1);
  }
  return status;
}

/* nll_loss_backward.grad_input [grad_output, self, target, weight, reduction, ignore_index,
 * total_weight, grad_input] */
static tb_status nll_loss_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 8 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[2].kind != TB_VALUE_TENSOR || a[4].kind != TB_VALUE_INT || a[5].kind != TB_VALUE_INT ||
      a[6].kind != TB_VALUE_TENSOR || a[7].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *grad = a[0].as.tensor, *self = a[1].as.tensor, *target = a[2].as.tensor;
  const tb_tensor *total = a[6].as.tensor, *gi = a[7].as.tensor;
  nll_shape s;
  int64_t reduction = a[4].as.i;
  if (!nll_shape_of(gi, target, &a[3], &s) || gi->dtype != self->dtype ||
      grad->dtype != self->dtype || total->dtype != self->dtype || gi->ndim != self->ndim ||
      reduction < 0 || reduction > 2) {
    return ocl_decline(call, "this layout or dtype");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (gi->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_operand zero[1] = {{NULL, 0, 0}};
  ocl_map_spec fill = {"x0", gi->dtype, 1};
  status = ocl_map(ctx, call, &fill, gi, zero, 1, 1);
  if (status != TB_OK || s.n == 0) return status;
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, gi->dtype, target->dtype, 0, "tb_nll_loss_backward", &kernel);
  ocl_place pgi = {0}, pg, pt, pw, ptw; /* pgi: copied into pw before the status is known */
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, gi, "grad_input", &pgi);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, grad, "grad_output", &pg);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, target, "target", &pt);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, total, "total_weight", &ptw);
  pw = pgi;
  if (status == TB_OK && s.has_weight) {
    status = ocl_tensor_place(ctx, device, a[3].as.tensor, "weight", &pw);
  }
  if (status != TB_OK) return status;
  cl_long grad_stride = grad->ndim == 1 ? grad->strides[0] : 0;
  cl_long ignore = a[5].as.i;
  cl_int red = (cl_int)reduction;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &pgi);
  ocl_arg_place(&args, &pg);
  ocl_arg_place(&args, &pt);
  ocl_arg_place(&args, &pw);
  ocl_arg_place(&args, &ptw);
  cl_long values[] = {
      s.n, s.classes, s.row_stride, s.col_stride, s.target_stride, s.weight_stride, grad_stride};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    ocl_arg_value(&args, sizeof values[i], &values[i]);
  }
  ocl_arg_value(&args, sizeof s.has_weight, &s.has_weight);
  ocl_arg_value(&args, sizeof ignore, &ignore);
  ocl_arg_value(&args, sizeof red, &red);
  status = ocl_args_done(&args);
  if (status == TB_OK) status = ocl_enqueue(ctx, device, call, kernel, s.n, "nll_loss_backward");
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* cat.out [tensors, dim, out]: each input copied into its slice of out. */
static tb_status cat(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 3 || a[0].kind != TB_VALUE_TENSOR_LIST || a[1].kind != TB_VALUE_INT ||
      a[2].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *out = a[2].as.tensor;
  int64_t dim = a[1].as.i < 0 ? a[1].as.i + out->ndim : a[1].as.i;
  if (ocl_type_name(out->dtype) == NULL || dim < 0 || dim >= out->ndim) {
    return ocl_decline(call, "this dtype or dimension");
  }
  /* Check every input first: nothing is enqueued for a call that then declines. */
  for (int64_t i = 0; i < a[0].as.tensors.count; i++) {
    const tb_tensor *t = a[0].as.tensors.items[i];
    if (t == NULL || ocl_type_name(t->dtype) == NULL) return ocl_decline(call, "an input's dtype");
    bool legacy_empty = t->ndim == 1 && t->sizes[0] == 0;
    if (!legacy_empty && t->ndim != out->ndim) return ocl_decline(call, "inputs of another rank");
  }
  int64_t at = 0;
  for (int64_t i = 0; i < a[0].as.tensors.count; i++) {
    const tb_tensor *t = a[0].as.tensors.items[i];
    if (t->ndim == 1 && t->sizes[0] == 0 && out->ndim != 1) continue; /* legacy empty input */
    tb_tensor slice = *out;
    slice.data = (char *)out->data + (size_t)(at * out->strides[dim]) * ocl_dtype_size(out->dtype);
    slice.sizes = t->sizes;
    at += t->sizes[dim];
    ocl_operand in[1] = {{t, 0, 0}};
    ocl_map_spec copy = {"x0", ocl_compute_of(t->dtype), 1};
    tb_status status = ocl_map(ctx, call, &copy, &slice, in, 1, 1);
    if (status != TB_OK) return status;
  }
  return TB_OK;
}

/* native_dropout_backward [grad_output, mask, scale, out] */
static tb_status dropout_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 4 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[2].kind != TB_VALUE_DOUBLE || a[3].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *grad = a[0].as.tensor, *out = a[3].as.tensor;
  if (!ocl_is_float(grad->dtype) || out->dtype != grad->dtype)
    return ocl_decline(call, "this dtype");
  ocl_operand in[2] = {{grad, 0, 0}, {a[1].as.tensor, 0, 0}};
  ocl_map_spec spec = {"x0 * x1 * alpha", grad->dtype, 2};
  return ocl_map(ctx, call, &spec, out, in, a[2].as.f, 1);
}

/* gather.cl's tb_isin_layout, byte for byte. */
typedef struct isin_layout {
  cl_int ndim;
  cl_long numel;
  cl_long tests;
  cl_long sizes[8];
  cl_long out_strides[8];
  cl_long elements_strides[8];
} isin_layout;

/* isin.Tensor_Tensor_out [elements, test_elements, assume_unique, invert, out]: elements and
 * out of any strides (size-1 dimensions dropped, up to 8 others), a dense test set of the
 * elements' dtype (ATen promotes them before the kernel: other mixes are declined), a bool
 * out. */
static tb_status isin(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 5 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[3].kind != TB_VALUE_BOOL || a[4].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *elements = a[0].as.tensor, *test = a[1].as.tensor, *out = a[4].as.tensor;
  if (elements->dtype != test->dtype || ocl_type_name(elements->dtype) == NULL ||
      out->dtype != TB_DTYPE_BOOL) {
    return ocl_decline(call, "this dtype combination");
  }
  isin_layout layout = {0};
  layout.numel = 1;
  if (out->ndim != elements->ndim) return ocl_decline(call, "an out not of the elements' shape");
  for (int32_t d = 0; d < out->ndim; d++) {
    if (out->sizes[d] != elements->sizes[d]) {
      return ocl_decline(call, "an out not of the elements' shape");
    }
    layout.numel *= out->sizes[d];
    if (out->sizes[d] == 1) continue;
    if (layout.ndim == 8) return ocl_decline(call, "more than 8 dimensions");
    layout.sizes[layout.ndim] = out->sizes[d];
    layout.out_strides[layout.ndim] = out->strides[d];
    layout.elements_strides[layout.ndim] = elements->strides[d];
    layout.ndim++;
  }
  int64_t tests = 0;
  if (!ocl_dense(test, &tests)) return ocl_decline(call, "a test set that is not dense");
  layout.tests = tests;
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK || layout.numel == 0) return status;
  if (elements->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_kernel *kernel = NULL;
  status = kernel_for(ctx, device, elements->dtype, TB_DTYPE_INT64, 0, "tb_isin", &kernel);
  ocl_place places[3];
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, out, "out", &places[0]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, elements, "elements", &places[1]);
  /* an empty test set: any place serves, the loop reads none of it */
  places[2] = places[1];
  if (status == TB_OK && tests > 0) {
    status = ocl_tensor_place(ctx, device, test, "test_elements", &places[2]);
  }
  if (status != TB_OK) return status;
  cl_int invert = a[3].as.b != 0;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  for (int k = 0; k < 3; k++) ocl_arg_place(&args, &places[k]);
  ocl_arg_value(&args, sizeof layout, &layout);
  ocl_arg_value(&args, sizeof invert, &invert);
  status = ocl_args_done(&args);
  if (status == TB_OK) status = ocl_enqueue(ctx, device, call, kernel, layout.numel, "isin");
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

#define FLOATS (TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64))
#define EVERY                                                                                   \
  (TB_DTYPE_BIT(TB_DTYPE_BOOL) | TB_DTYPE_BIT(TB_DTYPE_UINT8) | TB_DTYPE_BIT(TB_DTYPE_INT8) |   \
   TB_DTYPE_BIT(TB_DTYPE_INT16) | TB_DTYPE_BIT(TB_DTYPE_INT32) | TB_DTYPE_BIT(TB_DTYPE_INT64) | \
   FLOATS)
#define KERNEL(sym, name, fn, dtypes, schema) \
  static const tb_kernel sym = {sizeof(tb_kernel), name, fn, dtypes, 0, schema, NULL};

KERNEL(k_index_select, "index_select.out", index_select, EVERY,
       "index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out) -> Tensor(a!)")
KERNEL(k_embedding_backward, "embedding_dense_backward", embedding_backward,
       TB_DTYPE_BIT(TB_DTYPE_FLOAT32),
       "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt "
       "padding_idx, bool scale_grad_by_freq) -> Tensor")
KERNEL(k_nll_loss_forward, "nll_loss_forward.output", nll_loss_forward, FLOATS,
       "nll_loss_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt "
       "ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))")
KERNEL(k_nll_loss_backward, "nll_loss_backward.grad_input", nll_loss_backward, FLOATS,
       "nll_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Tensor? "
       "weight, int reduction, SymInt ignore_index, Tensor total_weight, *, Tensor(a!) "
       "grad_input) -> Tensor(a!)")
KERNEL(k_cat, "cat.out", cat, 0,
       "cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)")
KERNEL(k_gather, "gather.out", gather, EVERY,
       "gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out) "
       "-> Tensor(a!)")
KERNEL(k_scatter, "scatter.src_out", scatter, EVERY,
       "scatter.src_out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) -> "
       "Tensor(a!)")
KERNEL(k_scatter_value, "scatter.value_out", scatter, EVERY,
       "scatter.value_out(Tensor self, int dim, Tensor index, Scalar value, *, Tensor(a!) out) -> "
       "Tensor(a!)")
KERNEL(k_scatter_add, "scatter_add.out", scatter_add, EVERY,
       "scatter_add.out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) -> "
       "Tensor(a!)")
KERNEL(k_index_add, "index_add.out", index_add, EVERY,
       "index_add.out(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1, "
       "Tensor(a!) out) -> Tensor(a!)")
KERNEL(k_index, "index.Tensor_out", index_tensor, EVERY,
       "index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)")
KERNEL(k_index_put, "_index_put_impl_", index_put, EVERY,
       "_index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False, "
       "bool unsafe=False) -> Tensor(a!)")
KERNEL(k_isin, "isin.Tensor_Tensor_out", isin, EVERY,
       "isin.Tensor_Tensor_out(Tensor elements, Tensor test_elements, *, bool assume_unique=False, "
       "bool invert=False, Tensor(a!) out) -> Tensor(a!)")
KERNEL(k_dropout_backward, "native_dropout_backward", dropout_backward, FLOATS,
       "native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor")

const tb_kernel *const ocl_gather_kernels[] = {&k_index_select,
                                               &k_embedding_backward,
                                               &k_nll_loss_forward,
                                               &k_nll_loss_backward,
                                               &k_cat,
                                               &k_dropout_backward,
                                               &k_gather,
                                               &k_scatter,
                                               &k_scatter_value,
                                               &k_scatter_add,
                                               &k_index_add,
                                               &k_index,
                                               &k_index_put,
                                               &k_isin,
                                               NULL};
