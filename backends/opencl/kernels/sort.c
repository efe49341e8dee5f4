/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * sort (and so argsort, msort) and topk on sort.cl's merge sort: every row along the dimension
 * sorted at once in the call's workspace (two copies of the values and their positions), in
 * 2 + ceil(log2(row length)) launches, then the first k of each row stored into the outputs
 * with their strides.  topk returns its k sorted, as ATen's CPU and CUDA kernels do with
 * sorted=True; among equal values the first in the row comes first (CUDA and the CPU leave
 * that order open for topk).
 */
#include <stdio.h>

#include "kernels.h"

/* sort.cl's tb_sort_layout, byte for byte. */
typedef struct sort_layout {
  cl_int kept_ndim;
  cl_int descending;
  cl_long rows;
  cl_long n;
  cl_long k;
  cl_long kept_sizes[8];
  cl_long kept_strides[3][8];
  cl_long stride[3];
} sort_layout;

static size_t align8(size_t bytes) { return (bytes + 7) / 8 * 8; }

/* Sets the arguments (places, then values) of `kernel` and runs it over `work` work-items. */
static tb_status run(tb_context ctx, const tb_kernel_call *call, int32_t device, ocl_kernel *kernel,
                     const ocl_place *places, int count, const void *value, size_t value_size,
                     int64_t work, const char *what) {
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  for (int k = 0; k < count; k++) ocl_arg_place(&args, &places[k]);
  ocl_arg_value(&args, value_size, value);
  tb_status status = ocl_args_done(&args);
  if (status == TB_OK) status = ocl_enqueue(ctx, device, call, kernel, work, what);
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* The first k of each row of `self` along `dim`, sorted (descending or not), into `values` and
 * `indices`, which have self's shape with k along dim. */
static tb_status sort_rows(tb_context ctx, const tb_kernel_call *call, const tb_tensor *self,
                           int64_t dim, bool descending, int64_t k, const tb_tensor *values,
                           const tb_tensor *indices) {
  const char *type = ocl_type_name(self->dtype);
  if (type == NULL || values->dtype != self->dtype || indices->dtype != TB_DTYPE_INT64) {
    return ocl_decline(call, "this dtype combination");
  }
  int32_t ndim = self->ndim > 0 ? self->ndim : 1;
  if (dim < 0) dim += ndim;
  if (dim < 0 || dim >= ndim) return ocl_decline(call, "a dimension out of range");
  if (values->ndim != self->ndim || indices->ndim != self->ndim) {
    return ocl_decline(call, "outputs not of self's rank");
  }
  sort_layout layout = {0};
  layout.descending = descending;
  layout.rows = 1;
  layout.n = self->ndim > 0 ? self->sizes[dim] : 1;
  layout.k = k;
  if (k < 0 || k > layout.n) return ocl_decline(call, "k out of range");
  for (int32_t d = 0; d < self->ndim; d++) {
    int64_t want = d == dim ? k : self->sizes[d];
    if (values->sizes[d] != want || indices->sizes[d] != want) {
      return ocl_decline(call, "outputs not of the expected shape");
    }
    if (d == dim) {
      layout.stride[0] = values->strides[d];
      layout.stride[1] = indices->strides[d];
      layout.stride[2] = self->strides[d];
      continue;
    }
    if (self->sizes[d] == 1) continue;
    if (layout.kept_ndim == 8) return ocl_decline(call, "more than 8 other dimensions");
    int n = layout.kept_ndim++;
    layout.kept_sizes[n] = self->sizes[d];
    layout.kept_strides[0][n] = values->strides[d];
    layout.kept_strides[1][n] = indices->strides[d];
    layout.kept_strides[2][n] = self->strides[d];
    layout.rows *= self->sizes[d];
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK || layout.rows == 0 || k == 0) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  if (call->workspace == NULL) return ocl_decline(call, "no workspace to sort in");

  /* The workspace: values and positions, twice (the merge passes read one and write the other). */
  size_t count = (size_t)(layout.rows * layout.n);
  size_t value_bytes = align8(count * ocl_dtype_size(self->dtype)), index_bytes = count * 8;
  size_t offsets[4] = {0, value_bytes, value_bytes + index_bytes, 2 * value_bytes + index_bytes};
  void *workspace = NULL;
  status = call->workspace(call, 2 * (value_bytes + index_bytes), &workspace);
  ocl_place work[4];
  for (int b = 0; b < 4 && status == TB_OK; b++) {
    status = ocl_place_of(ctx, device, (char *)workspace + offsets[b],
                          b % 2 ? index_bytes : value_bytes, "the workspace", &work[b]);
  }
  ocl_place outputs[3];
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, values, "values", &outputs[0]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, indices, "indices", &outputs[1]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, self, "self", &outputs[2]);
  char defines[96];
  snprintf(defines, sizeof defines, "#define T %s\n%s", type,
           ocl_is_float(self->dtype) ? "#define FLOATING\n" : "");
  const char *sources[] = {defines, ocl_source_sort};
  ocl_kernel *load = NULL, *merge = NULL, *store = NULL;
  if (status == TB_OK)
    status = ocl_kernel_get(ctx, device, defines, sources, 2, "tb_sort_load", &load);
  if (status == TB_OK) {
    status = ocl_kernel_get(ctx, device, defines, sources, 2, "tb_sort_merge", &merge);
  }
  if (status == TB_OK) {
    status = ocl_kernel_get(ctx, device, defines, sources, 2, "tb_sort_store", &store);
  }
  if (status != TB_OK) return status;

  ocl_place load_places[3] = {work[0], work[1], outputs[2]};
  status = run(ctx, call, device, load, load_places, 3, &layout, sizeof layout, (int64_t)count,
               "sort (load)");
  int from = 0; /* the copy holding the sorted runs: work[2 * from], work[2 * from + 1] */
  for (cl_long width = 1; width < layout.n && status == TB_OK; width *= 2) {
    int to = 1 - from;
    pthread_mutex_lock(&merge->lock);
    ocl_args args = ocl_args_begin(ctx, device, merge);
    ocl_arg_place(&args, &work[2 * from]);
    ocl_arg_place(&args, &work[2 * from + 1]);
    ocl_arg_place(&args, &work[2 * to]);
    ocl_arg_place(&args, &work[2 * to + 1]);
    ocl_arg_value(&args, sizeof layout.rows, &layout.rows);
    ocl_arg_value(&args, sizeof layout.n, &layout.n);
    ocl_arg_value(&args, sizeof width, &width);
    ocl_arg_value(&args, sizeof layout.descending, &layout.descending);
    status = ocl_args_done(&args);
    if (status == TB_OK) status = ocl_enqueue(ctx, device, call, merge, (int64_t)count, "sort");
    pthread_mutex_unlock(&merge->lock);
    from = to;
  }
  if (status != TB_OK) return status;
  ocl_place store_places[4] = {outputs[0], outputs[1], work[2 * from], work[2 * from + 1]};
  return run(ctx, call, device, store, store_places, 4, &layout, sizeof layout,
             layout.rows * layout.k, "sort (store)");
}

/* sort.values_stable [self, stable?, dim, descending, values, indices]: always stable (a
 * stable order is one of the orders stable=False allows). */
static tb_status sort(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 6 || a[0].kind != TB_VALUE_TENSOR || a[2].kind != TB_VALUE_INT ||
      a[3].kind != TB_VALUE_BOOL || a[4].kind != TB_VALUE_TENSOR || a[5].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor;
  int64_t dim = a[2].as.i, n = 1;
  int32_t ndim = self->ndim > 0 ? self->ndim : 1;
  if (self->ndim > 0 && dim >= -ndim && dim < ndim) n = self->sizes[dim < 0 ? dim + ndim : dim];
  return sort_rows(ctx, call, self, dim, a[3].as.b != 0, n, a[4].as.tensor, a[5].as.tensor);
}

/* topk.values [self, k, dim, largest, sorted, values, indices]: the k largest (or smallest),
 * sorted either way. */
static tb_status topk(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 7 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_INT ||
      a[2].kind != TB_VALUE_INT || a[3].kind != TB_VALUE_BOOL || a[5].kind != TB_VALUE_TENSOR ||
      a[6].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  return sort_rows(ctx, call, a[0].as.tensor, a[2].as.i, a[3].as.b != 0, a[1].as.i, a[5].as.tensor,
                   a[6].as.tensor);
}

#define SORTABLE                                                                                \
  (TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64) |                            \
   TB_DTYPE_BIT(TB_DTYPE_INT64) | TB_DTYPE_BIT(TB_DTYPE_INT32) | TB_DTYPE_BIT(TB_DTYPE_INT16) | \
   TB_DTYPE_BIT(TB_DTYPE_INT8) | TB_DTYPE_BIT(TB_DTYPE_UINT8) | TB_DTYPE_BIT(TB_DTYPE_BOOL))
#define KERNEL(sym, name, fn, dtypes, schema) \
  static const tb_kernel sym = {sizeof(tb_kernel), name, fn, dtypes, 0, schema, NULL};
KERNEL(k_sort, "sort.values_stable", sort, SORTABLE,
       "sort.values_stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False, "
       "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)")
/* not bool, as the CPU's and CUDA's topk */
KERNEL(k_topk, "topk.values", topk, SORTABLE & ~TB_DTYPE_BIT(TB_DTYPE_BOOL),
       "topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, "
       "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)")

const tb_kernel *const ocl_sort_kernels[] = {&k_sort, &k_topk, NULL};
