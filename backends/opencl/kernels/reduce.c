/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Reductions (sum, prod, mean, amax, amin, max, min, argmax, argmin, max and min over a
 * dimension, all, any, vector norms over any dimensions; mse_loss and its backward), cumsum and
 * cumprod, and softmax /
 * log_softmax with their backwards, on the row kernels of reduce.cl: one work-group per output
 * row, its work-items striding over the row and combining in local memory.
 *
 * These operators are not elementwise: their tensors arrive as the user passed them (vendor.h,
 * "Elementwise operators" does not cover them), so the host maps the dimensions itself --
 * the kept ones enumerate rows, the reduced (or softmax) ones the elements of a row -- with
 * each operand's own strides.  Sums accumulate in the output's type (float for float32, as
 * ATen's CPU kernels do), integers in long.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels.h"

#define ROW_DIMS 8

bool ocl_map_rows(const tb_tensor *in, const tb_tensor *in2, const tb_tensor *out, uint64_t mask,
                  bool same_shape, bool keepdim, ocl_rows *rows) {
  memset(rows, 0, sizeof *rows);
  rows->rows = 1;
  rows->row_length = 1;
  int32_t od = 0;
  for (int32_t d = 0; d < in->ndim; d++) {
    bool reduced = (mask >> d) & 1;
    int64_t size = in->sizes[d];
    int64_t out_stride = 0;
    if (same_shape || keepdim || !reduced) {
      if (od >= out->ndim) return false;
      out_stride = out->strides[od];
      od++;
    }
    if (size == 1) continue;
    if (reduced) {
      if (rows->row_ndim == ROW_DIMS) return false;
      int n = rows->row_ndim++;
      rows->row_sizes[n] = size;
      rows->row_strides[0][n] = same_shape ? out_stride : 0;
      rows->row_strides[1][n] = in->strides[d];
      rows->row_strides[2][n] = in2 != NULL ? in2->strides[d] : 0;
      rows->row_length *= size;
    } else {
      if (rows->kept_ndim == ROW_DIMS) return false;
      int n = rows->kept_ndim++;
      rows->kept_sizes[n] = size;
      rows->kept_strides[0][n] = out_stride;
      rows->kept_strides[1][n] = in->strides[d];
      rows->kept_strides[2][n] = in2 != NULL ? in2->strides[d] : 0;
      rows->rows *= size;
    }
  }
  return od == out->ndim;
}

static const char *acc_type(tb_dtype dtype) {
  return dtype == TB_DTYPE_FLOAT32 ? "float" : dtype == TB_DTYPE_FLOAT64 ? "double" : "long";
}

int ocl_row_group(tb_context ctx, int32_t device, int64_t row_length, bool in_order) {
  /* A CPU driver runs a group's work-items as loops split at each barrier: for rows up to a
   * thousand elements one work-item per row, which reads its row in order, is faster (PoCL:
   * softmax over 128 x 128 floats in 1/6 of the time).  Longer rows keep the tree, for its
   * rounding. */
  if (in_order && (ctx->devices[device].type & CL_DEVICE_TYPE_CPU) && row_length <= 1024) {
    return 1;
  }
  return row_length >= 64 ? 64 : row_length >= 8 ? 8 : 1;
}

tb_status ocl_run_rows(tb_context ctx, int32_t device, tb_stream stream, cl_kernel kernel,
                       int64_t rows, int wg, const char *what) {
  size_t local = (size_t)wg, global = (size_t)rows * local;
  if (wg == 1) {
    /* A work-group of up to 16 rows, a divisor of their count (so that every work-item has a
     * row); the driver vectorizes across them: softmax over 512-row batches ran 6x faster on
     * PoCL than with one row per group. */
    local = 16;
    while (rows % (int64_t)local != 0) local /= 2;
  }
  (void)device;
  const ocl_command command = {.kind = OCL_COMMAND_KERNEL,
                               .what = what,
                               .kernel = kernel,
                               .dims = 1,
                               .global = {global},
                               .local = {local},
                               .has_local = true};
  return ocl_submit(ctx, ocl_stream_of(stream), &command);
}

/* Compiles (once) and runs kernel `name` of reduce.cl over `rows`. */
static tb_status launch(tb_context ctx, const tb_kernel_call *call, int32_t device,
                        const char *name, const char *defines, const tb_tensor *out,
                        const tb_tensor *in0, const tb_tensor *in1, const ocl_rows *rows,
                        const tb_value *scale, tb_dtype acc) {
  if (rows->rows == 0) return TB_OK;
  int wg = ocl_row_group(ctx, device, rows->row_length, true);
  char source[1024];
  snprintf(source, sizeof source,
           "#define T_OUT %s\n#define T0 %s\n#define T1 %s\n#define ACC %s\n#define WG %d\n%s",
           ocl_type_name(out->dtype), ocl_type_name(in0->dtype),
           ocl_type_name(in1 != NULL ? in1->dtype : in0->dtype), acc_type(acc), wg, defines);
  const char *sources[] = {source, ocl_source_reduce};
  ocl_kernel *kernel = NULL;
  tb_status status = ocl_kernel_get(ctx, device, source, sources, 2, name, &kernel);
  if (status != TB_OK) return status;
  ocl_place places[3];
  status = ocl_tensor_place(ctx, device, out, "out", &places[0]);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, in0, "self", &places[1]);
  if (status == TB_OK && in1 != NULL)
    status = ocl_tensor_place(ctx, device, in1, "output", &places[2]);
  if (status != TB_OK) return status;
  if (rows->row_length == 0 && strncmp(name, "tb_reduce", 9) != 0) return TB_OK; /* empty rows */
  pthread_mutex_lock(&kernel->lock);
  cl_uint arg = 0;
  for (int k = 0; k < (in1 != NULL ? 3 : 2) && status == TB_OK; k++, arg += 2) {
    status = ocl_set_arg_place(ctx, device, kernel->kernel, arg, &places[k]);
  }
  cl_int err =
      status == TB_OK ? clSetKernelArg(kernel->kernel, arg++, sizeof *rows, rows) : CL_SUCCESS;
  if (err == CL_SUCCESS && status == TB_OK && scale != NULL) {
    double f = scale->as.f;
    if (acc == TB_DTYPE_FLOAT32) {
      cl_float v = (cl_float)f;
      err = clSetKernelArg(kernel->kernel, arg, sizeof v, &v);
    } else if (acc == TB_DTYPE_FLOAT64) {
      cl_double v = f;
      err = clSetKernelArg(kernel->kernel, arg, sizeof v, &v);
    } else {
      cl_long v = 1;
      err = clSetKernelArg(kernel->kernel, arg, sizeof v, &v);
    }
  }
  if (status == TB_OK && err != CL_SUCCESS) status = ocl_check(ctx, device, err, "clSetKernelArg");
  if (status == TB_OK) {
    status = ocl_run_rows(ctx, device, call->stream, kernel->kernel, rows->rows, wg, name);
  }
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

/* The reduced-dimension mask of `dims` (NONE or empty: all) over `ndim` dimensions. */
static bool dim_mask(const tb_value *dims, int32_t ndim, uint64_t *mask) {
  if (ndim > 63) return false;
  uint64_t all = ndim == 0 ? 0 : ((uint64_t)1 << ndim) - 1;
  if (dims->kind == TB_VALUE_NONE) {
    *mask = all;
    return true;
  }
  if (dims->kind != TB_VALUE_INT_LIST) return false;
  if (dims->as.ints.count == 0) {
    *mask = all;
    return true;
  }
  *mask = 0;
  for (int64_t i = 0; i < dims->as.ints.count; i++) {
    int64_t d = dims->as.ints.items[i];
    if (d < 0) d += ndim;
    if (d < 0 || d >= (ndim == 0 ? 1 : ndim)) return false;
    if (ndim > 0) *mask |= (uint64_t)1 << d;
  }
  return true;
}

typedef enum reduce_kind { R_SUM, R_MEAN, R_AMAX, R_AMIN, R_PROD } reduce_kind;

/* A reduction of `self` over the dimensions in `mask` into `out`. */
static tb_status reduce_dims(tb_context ctx, const tb_kernel_call *call, reduce_kind kind,
                             const tb_tensor *self, const tb_tensor *out, uint64_t mask,
                             bool keepdim) {
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (ocl_type_name(self->dtype) == NULL || ocl_type_name(out->dtype) == NULL) {
    return ocl_decline(call, "a dtype without kernels");
  }
  bool fp64 = ctx->devices[device].fp64;
  if (!fp64 && (self->dtype == TB_DTYPE_FLOAT64 || out->dtype == TB_DTYPE_FLOAT64)) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  bool floating = out->dtype == TB_DTYPE_FLOAT32 || out->dtype == TB_DTYPE_FLOAT64;
  if ((kind == R_MEAN && !floating) ||
      ((kind == R_AMAX || kind == R_AMIN) && self->dtype != out->dtype)) {
    return ocl_decline(call, "this dtype combination");
  }
  ocl_rows rows;
  if (!ocl_map_rows(self, NULL, out, mask, false, keepdim, &rows)) {
    return ocl_decline(call, "a layout of more than 8 kept or reduced dimensions");
  }
  if (rows.row_length == 0 && (kind == R_AMAX || kind == R_AMIN)) {
    return ocl_decline(call, "an empty reduction");
  }
  tb_dtype acc = floating ? out->dtype : TB_DTYPE_INT64;
  const char *defines;
  switch (kind) {
    case R_SUM:
      defines = "#define INIT 0\n#define COMBINE(a, b) ((a) + (b))\n#define FINAL(a) (a)\n";
      break;
    case R_PROD: /* integers in long, which wraps as the CPU's int64 does */
      defines = "#define INIT 1\n#define COMBINE(a, b) ((a) * (b))\n#define FINAL(a) (a)\n";
      break;
    case R_MEAN:
      defines =
          "#define INIT 0\n#define COMBINE(a, b) ((a) + (b))\n#define FINAL(a) ((a) * scale)\n";
      break;
    case R_AMAX:
      defines =
          floating
              ? "#define INIT (-INFINITY)\n#define COMBINE(a, b) MAXF(a, b)\n#define FINAL(a) (a)\n"
              : "#define INIT LONG_MIN\n#define COMBINE(a, b) ((a) > (b) ? (a) : (b))\n#define "
                "FINAL(a) (a)\n";
      break;
    default:
      defines = floating ? "#define INIT INFINITY\n#define COMBINE(a, b) (((a) < (b) || isnan(a)) "
                           "? (a) : (b))\n#define FINAL(a) (a)\n"
                         : "#define INIT LONG_MAX\n#define COMBINE(a, b) ((a) < (b) ? (a) : "
                           "(b))\n#define FINAL(a) (a)\n";
      break;
  }
  tb_value scale = {TB_VALUE_DOUBLE,
                    {.f = rows.row_length > 0 ? 1.0 / (double)rows.row_length : NAN}};
  char vector_defines[256];
  if (floating && self->dtype == acc) { /* rows that may be read in vectors (reduce.cl) */
    snprintf(vector_defines, sizeof vector_defines, "%s#define VEC_IN0\n", defines);
    defines = vector_defines;
  }
  return launch(ctx, call, device, "tb_reduce", defines, out, self, NULL, &rows, &scale, acc);
}

/* cumsum.out / cumprod.out (kernel data 0 / 1) [self, dim, dtype, out]: any dtype in, a numeric
 * out; floating sums and products in double where the device has it (as ATen's CPU kernel
 * accumulates float), integers in long. */
static tb_status scan(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *args = call->args;
  int32_t n = call->num_args;
  if (n < 4 || args[0].kind != TB_VALUE_TENSOR || args[1].kind != TB_VALUE_INT ||
      args[n - 1].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = args[0].as.tensor, *out = args[n - 1].as.tensor;
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (ocl_type_name(self->dtype) == NULL || ocl_type_name(out->dtype) == NULL ||
      out->dtype == TB_DTYPE_BOOL) {
    return ocl_decline(call, "this dtype combination");
  }
  bool fp64 = ctx->devices[device].fp64;
  if (!fp64 && (self->dtype == TB_DTYPE_FLOAT64 || out->dtype == TB_DTYPE_FLOAT64)) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  int32_t ndim = self->ndim;
  int64_t dim = args[1].as.i < 0 ? args[1].as.i + (ndim > 0 ? ndim : 1) : args[1].as.i;
  if (dim < 0 || dim >= (ndim > 0 ? ndim : 1)) return ocl_decline(call, "a dimension out of range");
  if (out->ndim != ndim) return ocl_decline(call, "operands of different shapes");
  ocl_rows rows;
  if (!ocl_map_rows(self, NULL, out, ndim > 0 ? (uint64_t)1 << dim : 0, true, true, &rows)) {
    return ocl_decline(call, "a layout of more than 8 dimensions");
  }
  tb_dtype acc = !ocl_is_float(out->dtype) ? TB_DTYPE_INT64 : fp64 ? TB_DTYPE_FLOAT64 : out->dtype;
  const char *defines =
      call->kernel->data != NULL
          ? "#define SCAN\n#define SCAN_INIT 1\n#define SCAN_COMBINE(a, b) ((a) * (b))\n"
          : "#define SCAN\n";
  return launch(ctx, call, device, "tb_cumsum", defines, out, self, NULL, &rows, NULL, acc);
}

/* argmax.out / argmin.out [self, dim (int? ), keepdim, out] (kernel data 1 / 0);
 * max.dim_max / min.dim_min [self, dim, keepdim, max (values), max_values (indices)] (data 3
 * / 2).  Floating and integer self; an empty row is declined (ATen's checks refuse it). */
static tb_status argreduce(tb_context ctx, const tb_kernel_call *call) {
  intptr_t data = (intptr_t)call->kernel->data;
  bool max = data & 1, with_values = data & 2;
  const tb_value *args = call->args;
  int32_t n = call->num_args;
  int32_t outputs = with_values ? 2 : 1;
  if (n < 3 + outputs || args[0].kind != TB_VALUE_TENSOR || args[2].kind != TB_VALUE_BOOL ||
      args[3].kind != TB_VALUE_TENSOR || (with_values && args[4].kind != TB_VALUE_TENSOR)) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = args[0].as.tensor;
  const tb_tensor *values = with_values ? args[3].as.tensor : NULL;
  const tb_tensor *indices = args[with_values ? 4 : 3].as.tensor;
  bool keepdim = args[2].as.b != 0;
  int64_t one_dim[1];
  tb_value dims = args[1]; /* an int dim as a list of one, dim=None: the flattened tensor */
  if (args[1].kind == TB_VALUE_INT) {
    one_dim[0] = args[1].as.i;
    dims.kind = TB_VALUE_INT_LIST;
    dims.as.ints.items = one_dim;
    dims.as.ints.count = 1;
  } else if (args[1].kind != TB_VALUE_NONE) {
    return ocl_decline(call, "unexpected arguments");
  }
  uint64_t mask = 0;
  if (!dim_mask(&dims, self->ndim, &mask)) return ocl_decline(call, "a dimension out of range");
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (ocl_type_name(self->dtype) == NULL || self->dtype == TB_DTYPE_BOOL ||
      indices->dtype != TB_DTYPE_INT64 || (values != NULL && values->dtype != self->dtype)) {
    return ocl_decline(call, "this dtype combination");
  }
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_rows rows, value_rows;
  if (!ocl_map_rows(self, NULL, indices, mask, false, keepdim, &rows) ||
      (values != NULL && !ocl_map_rows(self, NULL, values, mask, false, keepdim, &value_rows))) {
    return ocl_decline(call, "a layout of more than 8 kept or reduced dimensions");
  }
  if (rows.row_length == 0) return ocl_decline(call, "an empty reduction");
  if (values != NULL) { /* the values' kept strides, as operand 2's */
    memcpy(rows.kept_strides[2], value_rows.kept_strides[0], sizeof rows.kept_strides[2]);
  }
  bool floating = ocl_is_float(self->dtype);
  char defines[160];
  snprintf(defines, sizeof defines, "#define ARG_CMP(a, b) ((a) %s (b))\n#define IS_NAN(x) %s\n%s",
           max ? ">" : "<", floating ? "isnan(x)" : "0", values != NULL ? "#define VALUES\n" : "");
  tb_value scale = {TB_VALUE_DOUBLE, {.f = 0}};
  return launch(ctx, call, device, "tb_argreduce", defines, indices, self, values, &rows, &scale,
                floating ? self->dtype : TB_DTYPE_INT64);
}

/* prod.int_out [self, dim, keepdim, dtype, out]: one dimension */
static tb_status prod(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 5 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_INT ||
      a[2].kind != TB_VALUE_BOOL || a[4].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  int64_t one_dim[1] = {a[1].as.i};
  tb_value dims = {TB_VALUE_INT_LIST, {.i = 0}};
  dims.as.ints.items = one_dim;
  dims.as.ints.count = 1;
  uint64_t mask = 0;
  if (!dim_mask(&dims, a[0].as.tensor->ndim, &mask)) {
    return ocl_decline(call, "a dimension out of range");
  }
  return reduce_dims(ctx, call, R_PROD, a[0].as.tensor, a[4].as.tensor, mask, a[2].as.b != 0);
}

/* sum.IntList_out / mean.out [self, dim, keepdim, dtype, out]; amax.out / amin.out [self, dim,
 * keepdim, out] */
static tb_status reduce(tb_context ctx, const tb_kernel_call *call) {
  reduce_kind kind = (reduce_kind)(intptr_t)call->kernel->data;
  const tb_value *args = call->args;
  int32_t n = call->num_args;
  if (n < 4 || args[0].kind != TB_VALUE_TENSOR || args[n - 1].kind != TB_VALUE_TENSOR ||
      args[2].kind != TB_VALUE_BOOL) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = args[0].as.tensor, *out = args[n - 1].as.tensor;
  uint64_t mask = 0;
  if (!dim_mask(&args[1], self->ndim, &mask)) return ocl_decline(call, "dimensions it cannot map");
  return reduce_dims(ctx, call, kind, self, out, mask, args[2].as.b != 0);
}

/* max.unary_out / min.unary_out [self, out] (torch.max(x), x.min()): amax / amin over every
 * dimension (an empty self is declined: ATen's CPU kernel raises its error). */
static tb_status reduce_all(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *args = call->args;
  const tb_value every = {TB_VALUE_NONE, {.i = 0}};
  uint64_t mask = 0;
  if (call->num_args < 2 || args[0].kind != TB_VALUE_TENSOR || args[1].kind != TB_VALUE_TENSOR ||
      !dim_mask(&every, args[0].as.tensor->ndim, &mask)) {
    return ocl_decline(call, "unexpected arguments");
  }
  return reduce_dims(ctx, call, (reduce_kind)(intptr_t)call->kernel->data, args[0].as.tensor,
                     args[1].as.tensor, mask, false);
}

/* aminmax.out [self, dim?, keepdim, min, max]: amin and amax, one launch each (multinomial
 * checks its probabilities with it).  An empty reduction is declined: ATen raises. */
static tb_status aminmax(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 5 || a[0].kind != TB_VALUE_TENSOR || a[2].kind != TB_VALUE_BOOL ||
      a[3].kind != TB_VALUE_TENSOR || a[4].kind != TB_VALUE_TENSOR ||
      (a[1].kind != TB_VALUE_INT && a[1].kind != TB_VALUE_NONE)) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor;
  int64_t one_dim[1] = {a[1].as.i};
  tb_value dims = a[1]; /* an int dim as a list of one; None: every dimension */
  if (a[1].kind == TB_VALUE_INT) {
    dims.kind = TB_VALUE_INT_LIST;
    dims.as.ints.items = one_dim;
    dims.as.ints.count = 1;
  }
  uint64_t mask = 0;
  if (!dim_mask(&dims, self->ndim, &mask)) return ocl_decline(call, "dimensions it cannot map");
  bool keepdim = a[2].as.b != 0;
  tb_status status = reduce_dims(ctx, call, R_AMIN, self, a[3].as.tensor, mask, keepdim);
  if (status != TB_OK) return status;
  return reduce_dims(ctx, call, R_AMAX, self, a[4].as.tensor, mask, keepdim);
}

/* all / any [self, dim (int, int[]? or absent), keepdim, out]: any dtype in, bool (uint8 for
 * uint8 input) out; all.all_out / any.all_out [self, out] reduce everything. */
static tb_status logical(tb_context ctx, const tb_kernel_call *call) {
  bool all = (intptr_t)call->kernel->data & 1, whole = (intptr_t)call->kernel->data & 2;
  const tb_value *args = call->args;
  int32_t n = call->num_args;
  if (n < (whole ? 2 : 4) || args[0].kind != TB_VALUE_TENSOR ||
      args[n - 1].kind != TB_VALUE_TENSOR || (!whole && args[2].kind != TB_VALUE_BOOL)) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = args[0].as.tensor, *out = args[n - 1].as.tensor;
  uint64_t mask = 0;
  tb_value dims = {TB_VALUE_NONE, {0}};
  int64_t one_dim[1];
  if (!whole && args[1].kind == TB_VALUE_INT) {
    one_dim[0] = args[1].as.i;
    dims.kind = TB_VALUE_INT_LIST;
    dims.as.ints.items = one_dim;
    dims.as.ints.count = 1;
  } else if (!whole) {
    dims = args[1];
  }
  if (!dim_mask(&dims, self->ndim, &mask)) return ocl_decline(call, "dimensions it cannot map");
  if (ocl_type_name(self->dtype) == NULL ||
      (out->dtype != TB_DTYPE_BOOL && out->dtype != TB_DTYPE_UINT8)) {
    return ocl_decline(call, "this dtype combination");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_rows rows;
  if (!ocl_map_rows(self, NULL, out, mask, false, !whole && args[2].as.b != 0, &rows)) {
    return ocl_decline(call, "a layout of more than 8 kept or reduced dimensions");
  }
  const char *defines = all ? "#define INIT 1\n#define COMBINE(a, b) ((a) && (b))\n"
                              "#define FINAL(a) (a)\n#define PRE(v) ((v) != 0)\n"
                            : "#define INIT 0\n#define COMBINE(a, b) ((a) || (b))\n"
                              "#define FINAL(a) (a)\n#define PRE(v) ((v) != 0)\n";
  tb_value scale = {TB_VALUE_DOUBLE, {.f = 1}};
  return launch(ctx, call, device, "tb_reduce", defines, out, self, NULL, &rows, &scale,
                TB_DTYPE_INT64);
}

/* linalg_vector_norm.out [self, ord, dim?, keepdim, dtype?, out] and norm.out [self, p?, dim,
 * keepdim, out]: floating types, ord 0, 1, 2, inf, -inf or any other p, accumulated in the
 * output's type as ATen's CPU kernel does. */
static tb_status vector_norm(tb_context ctx, const tb_kernel_call *call) {
  bool linalg = call->kernel->data != NULL;
  const tb_value *args = call->args;
  int32_t n = call->num_args;
  if (n < 5 || args[0].kind != TB_VALUE_TENSOR || args[n - 1].kind != TB_VALUE_TENSOR ||
      args[3].kind != TB_VALUE_BOOL || (linalg && args[4].kind != TB_VALUE_NONE)) {
    return ocl_decline(call, "unexpected arguments (or a dtype argument)");
  }
  const tb_tensor *self = args[0].as.tensor, *out = args[n - 1].as.tensor;
  double p = 2;
  if (args[1].kind != TB_VALUE_NONE && !ocl_number(&args[1], &p, NULL)) {
    return ocl_decline(call, "an order that is not a number");
  }
  uint64_t mask = 0;
  if (!dim_mask(&args[2], self->ndim, &mask)) return ocl_decline(call, "dimensions it cannot map");
  if ((self->dtype != TB_DTYPE_FLOAT32 && self->dtype != TB_DTYPE_FLOAT64) ||
      out->dtype != self->dtype) {
    return ocl_decline(call, "this dtype combination");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  ocl_rows rows;
  if (!ocl_map_rows(self, NULL, out, mask, false, args[3].as.b != 0, &rows)) {
    return ocl_decline(call, "a layout of more than 8 kept or reduced dimensions");
  }
  const char *defines;
  if (isinf(p)) {
    if (rows.row_length == 0) return ocl_decline(call, "an infinity norm of no elements");
    defines = p > 0 ? "#define INIT 0\n#define COMBINE(a, b) MAXF(a, b)\n#define FINAL(a) (a)\n"
                      "#define PRE(v) fabs((ACC)(v))\n"
                    : "#define INIT INFINITY\n#define COMBINE(a, b) (((a) < (b) || isnan(a)) ? "
                      "(a) : (b))\n#define FINAL(a) (a)\n#define PRE(v) fabs((ACC)(v))\n";
  } else if (p == 0) {
    defines = "#define PRE(v) (ACC)((v) != 0)\n";
  } else if (p == 1) {
    defines = "#define PRE(v) fabs((ACC)(v))\n";
  } else if (p == 2) {
    defines =
        "#define INIT 0\n#define COMBINE(a, b) ((a) + (b))\n#define FINAL(a) sqrt(a)\n"
        "#define PRE(v) ((ACC)(v) * (ACC)(v))\n";
  } else {
    defines =
        "#define INIT 0\n#define COMBINE(a, b) ((a) + (b))\n"
        "#define FINAL(a) pow(a, (ACC)1 / scale)\n#define PRE(v) pow(fabs((ACC)(v)), scale)\n";
  }
  tb_value scale = {TB_VALUE_DOUBLE, {.f = p}};
  return launch(ctx, call, device, "tb_reduce", defines, out, self, NULL, &rows, &scale,
                out->dtype);
}

/* mse_loss.out [self, target, reduction, out]: the inputs as the user passed them (of one
 * shape); reduction 0 (none) elementwise, 1 (mean) and 2 (sum) a reduction over everything. */
static tb_status mse_loss(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 4 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[2].kind != TB_VALUE_INT || a[3].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *target = a[1].as.tensor, *out = a[3].as.tensor;
  int64_t reduction = a[2].as.i;
  bool same = self->ndim == target->ndim;
  for (int32_t d = 0; same && d < self->ndim; d++) same = self->sizes[d] == target->sizes[d];
  if (!same || (self->dtype != TB_DTYPE_FLOAT32 && self->dtype != TB_DTYPE_FLOAT64) ||
      target->dtype != self->dtype || out->dtype != self->dtype || reduction < 0 || reduction > 2) {
    return ocl_decline(call, "inputs of two shapes or dtypes");
  }
  if (reduction == 0) {
    ocl_operand in[2] = {{self, 0, 0}, {target, 0, 0}};
    ocl_map_spec spec = {"(x0 - x1) * (x0 - x1)", self->dtype, 2};
    bool shaped = out->ndim == self->ndim;
    for (int32_t d = 0; shaped && d < self->ndim; d++) shaped = out->sizes[d] == self->sizes[d];
    if (!shaped) return ocl_decline(call, "an output not of the inputs' shape");
    return ocl_map(ctx, call, &spec, out, in, 1, 1);
  }
  if (out->ndim != 0) return ocl_decline(call, "a reduced output that is not 0-dim");
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  uint64_t mask =
      self->ndim == 0 ? 0 : (self->ndim >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << self->ndim) - 1);
  ocl_rows rows;
  if (!ocl_map_rows(self, target, out, mask, false, false, &rows)) {
    return ocl_decline(call, "a layout of more than 8 dimensions");
  }
  const char *defines =
      reduction == 1
          ? "#define INIT 0\n#define COMBINE(a, b) ((a) + (b))\n#define FINAL(a) ((a) * scale)\n"
            "#define PRE2(a, b) (((a) - (b)) * ((a) - (b)))\n"
          : "#define INIT 0\n#define COMBINE(a, b) ((a) + (b))\n#define FINAL(a) (a)\n"
            "#define PRE2(a, b) (((a) - (b)) * ((a) - (b)))\n";
  tb_value scale = {TB_VALUE_DOUBLE,
                    {.f = rows.row_length > 0 ? 1.0 / (double)rows.row_length : NAN}};
  return launch(ctx, call, device, "tb_reduce2", defines, out, self, target, &rows, &scale,
                out->dtype);
}

/* mse_loss_backward.grad_input [grad_output, self, target, reduction, grad_input]:
 * norm * (self - target) * grad_output, norm 2 / numel for mean, else 2; grad_output 0-dim
 * for a reduction, broadcast here. */
static tb_status mse_loss_backward(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 5 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_TENSOR ||
      a[2].kind != TB_VALUE_TENSOR || a[3].kind != TB_VALUE_INT || a[4].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *grad = a[0].as.tensor, *self = a[1].as.tensor, *target = a[2].as.tensor;
  const tb_tensor *out = a[4].as.tensor;
  int64_t strides[3][OCL_MAX_DIMS];
  tb_tensor views[3];
  if (grad->dtype != out->dtype || self->dtype != out->dtype || target->dtype != out->dtype ||
      !ocl_broadcast(grad, out, strides[0], &views[0]) ||
      !ocl_broadcast(self, out, strides[1], &views[1]) ||
      !ocl_broadcast(target, out, strides[2], &views[2])) {
    return ocl_decline(call, "operands that do not broadcast to grad_input");
  }
  int64_t numel = 1;
  for (int32_t d = 0; d < self->ndim; d++) numel *= self->sizes[d];
  double norm = a[3].as.i == 1 ? 2.0 / (double)numel : 2.0;
  ocl_operand in[3] = {{&views[0], 0, 0}, {&views[1], 0, 0}, {&views[2], 0, 0}};
  ocl_map_spec spec = {"alpha * (x1 - x2) * x0", out->dtype, 3};
  return ocl_map(ctx, call, &spec, out, in, norm, 1);
}

typedef enum softmax_kind {
  S_SOFTMAX,
  S_LOG_SOFTMAX,
  S_SOFTMAX_BACKWARD,
  S_LOG_SOFTMAX_BACKWARD
} softmax_kind;

/* _softmax.out / _log_softmax.out [self, dim, half_to_float, out];
 * _softmax_backward_data.out / _log_softmax_backward_data.out [grad_output, output, dim,
 * input_dtype, grad_input] */
static tb_status softmax(tb_context ctx, const tb_kernel_call *call) {
  softmax_kind kind = (softmax_kind)(intptr_t)call->kernel->data;
  bool backward = kind == S_SOFTMAX_BACKWARD || kind == S_LOG_SOFTMAX_BACKWARD;
  const tb_value *args = call->args;
  int32_t n = call->num_args;
  int dim_arg = backward ? 2 : 1;
  if (n < 4 || args[0].kind != TB_VALUE_TENSOR || args[dim_arg].kind != TB_VALUE_INT ||
      args[n - 1].kind != TB_VALUE_TENSOR || (backward && args[1].kind != TB_VALUE_TENSOR)) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *in0 = args[0].as.tensor, *out = args[n - 1].as.tensor;
  const tb_tensor *in1 = backward ? args[1].as.tensor : NULL;
  if (in0->dtype != out->dtype || (in1 != NULL && in1->dtype != out->dtype) ||
      (out->dtype != TB_DTYPE_FLOAT32 && out->dtype != TB_DTYPE_FLOAT64)) {
    return ocl_decline(call, "this dtype combination");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (out->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  int64_t dim = args[dim_arg].as.i;
  int32_t ndim = in0->ndim;
  if (dim < 0) dim += ndim > 0 ? ndim : 1;
  if (dim < 0 || dim >= (ndim > 0 ? ndim : 1)) return ocl_decline(call, "a dimension out of range");
  uint64_t mask = ndim > 0 ? (uint64_t)1 << dim : 0;
  if (out->ndim != ndim || (in1 != NULL && in1->ndim != ndim)) {
    return ocl_decline(call, "operands of different shapes");
  }
  ocl_rows rows;
  if (!ocl_map_rows(in0, in1, out, mask, true, true, &rows)) {
    return ocl_decline(call, "a layout of more than 8 dimensions");
  }
  bool log = kind == S_LOG_SOFTMAX || kind == S_LOG_SOFTMAX_BACKWARD;
  const char *defines = log ? "#define SOFTMAX\n#define LOG\n" : "#define SOFTMAX\n";
  return launch(ctx, call, device, backward ? "tb_softmax_backward" : "tb_softmax", defines, out,
                in0, in1, &rows, NULL, out->dtype);
}

#define FLOATS (TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT64))
#define SUMMABLE                                                                               \
  (FLOATS | TB_DTYPE_BIT(TB_DTYPE_BOOL) | TB_DTYPE_BIT(TB_DTYPE_UINT8) |                       \
   TB_DTYPE_BIT(TB_DTYPE_INT8) | TB_DTYPE_BIT(TB_DTYPE_INT16) | TB_DTYPE_BIT(TB_DTYPE_INT32) | \
   TB_DTYPE_BIT(TB_DTYPE_INT64))
#define KERNEL(sym, name, fn, dtypes, schema, data)                                   \
  static const tb_kernel sym = {sizeof(tb_kernel),       name, fn, dtypes, 0, schema, \
                                (void *)(intptr_t)(data)};

KERNEL(k_sum, "sum.IntList_out", reduce, SUMMABLE,
       "sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
       "Tensor(a!) out) -> Tensor(a!)",
       R_SUM)
KERNEL(k_mean, "mean.out", reduce, FLOATS,
       "mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
       "Tensor(a!) out) -> Tensor(a!)",
       R_MEAN)
KERNEL(k_amax, "amax.out", reduce, SUMMABLE & ~TB_DTYPE_BIT(TB_DTYPE_BOOL),
       "amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       R_AMAX)
KERNEL(k_amin, "amin.out", reduce, SUMMABLE & ~TB_DTYPE_BIT(TB_DTYPE_BOOL),
       "amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       R_AMIN)
KERNEL(k_max, "max.unary_out", reduce_all, SUMMABLE & ~TB_DTYPE_BIT(TB_DTYPE_BOOL),
       "max.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", R_AMAX)
KERNEL(k_min, "min.unary_out", reduce_all, SUMMABLE & ~TB_DTYPE_BIT(TB_DTYPE_BOOL),
       "min.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", R_AMIN)
KERNEL(k_aminmax, "aminmax.out", aminmax, SUMMABLE & ~TB_DTYPE_BIT(TB_DTYPE_BOOL),
       "aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, Tensor(b!) "
       "max) -> (Tensor(a!) min, Tensor(b!) max)",
       0)
KERNEL(k_softmax, "_softmax.out", softmax, FLOATS,
       "_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)",
       S_SOFTMAX)
KERNEL(k_log_softmax, "_log_softmax.out", softmax, FLOATS,
       "_log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       S_LOG_SOFTMAX)
KERNEL(k_softmax_backward, "_softmax_backward_data.out", softmax, FLOATS,
       "_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType "
       "input_dtype, *, Tensor(a!) grad_input) -> Tensor(a!)",
       S_SOFTMAX_BACKWARD)
KERNEL(k_log_softmax_backward, "_log_softmax_backward_data.out", softmax, FLOATS,
       "_log_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType "
       "input_dtype, *, Tensor(a!) out) -> Tensor(a!)",
       S_LOG_SOFTMAX_BACKWARD)

#define ORDERED (SUMMABLE & ~TB_DTYPE_BIT(TB_DTYPE_BOOL))
KERNEL(k_argmax, "argmax.out", argreduce, ORDERED,
       "argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       1)
KERNEL(k_argmin, "argmin.out", argreduce, ORDERED,
       "argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       0)
KERNEL(k_max_dim, "max.dim_max", argreduce, ORDERED,
       "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) "
       "max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
       3)
KERNEL(k_min_dim, "min.dim_min", argreduce, ORDERED,
       "min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min, Tensor(b!) "
       "min_indices) -> (Tensor(a!) values, Tensor(b!) indices)",
       2)

KERNEL(k_cumsum, "cumsum.out", scan, SUMMABLE,
       "cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
       0)
KERNEL(k_cumprod, "cumprod.out", scan, SUMMABLE,
       "cumprod.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> "
       "Tensor(a!)",
       1)
KERNEL(k_prod, "prod.int_out", prod, SUMMABLE,
       "prod.int_out(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None, "
       "Tensor(a!) out) -> Tensor(a!)",
       0)
#define ALL_DTYPES (SUMMABLE)
#define LOGICAL_SCHEMA(name, rest) name "(Tensor self" rest ", *, Tensor(a!) out) -> Tensor(a!)"
KERNEL(k_all_all, "all.all_out", logical, ALL_DTYPES, LOGICAL_SCHEMA("all.all_out", ""), 3)
KERNEL(k_all, "all.out", logical, ALL_DTYPES,
       LOGICAL_SCHEMA("all.out", ", int dim, bool keepdim=False"), 1)
KERNEL(k_all_dims, "all.dims_out", logical, ALL_DTYPES,
       LOGICAL_SCHEMA("all.dims_out", ", int[]? dim=None, bool keepdim=False"), 1)
KERNEL(k_any_all, "any.all_out", logical, ALL_DTYPES, LOGICAL_SCHEMA("any.all_out", ""), 2)
KERNEL(k_any, "any.out", logical, ALL_DTYPES,
       LOGICAL_SCHEMA("any.out", ", int dim, bool keepdim=False"), 0)
KERNEL(k_any_dims, "any.dims_out", logical, ALL_DTYPES,
       LOGICAL_SCHEMA("any.dims_out", ", int[]? dim=None, bool keepdim=False"), 0)
KERNEL(k_linalg_vector_norm, "linalg_vector_norm.out", vector_norm, FLOATS,
       "linalg_vector_norm.out(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, "
       "*, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
       1)
KERNEL(k_norm, "norm.out", vector_norm, FLOATS,
       "norm.out(Tensor self, Scalar? p, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       0)
KERNEL(k_mse_loss, "mse_loss.out", mse_loss, FLOATS,
       "mse_loss.out(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)",
       0)
KERNEL(k_mse_loss_backward, "mse_loss_backward.grad_input", mse_loss_backward, FLOATS,
       "mse_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, int "
       "reduction, *, Tensor(a!) grad_input) -> Tensor(a!)",
       0)

const tb_kernel *const ocl_reduce_kernels[] = {&k_cumprod,
                                               &k_prod,
                                               &k_all_all,
                                               &k_all,
                                               &k_all_dims,
                                               &k_any_all,
                                               &k_any,
                                               &k_any_dims,
                                               &k_linalg_vector_norm,
                                               &k_norm,
                                               &k_mse_loss,
                                               &k_mse_loss_backward,
                                               &k_sum,
                                               &k_mean,
                                               &k_amax,
                                               &k_amin,
                                               &k_aminmax,
                                               &k_max,
                                               &k_min,
                                               &k_argmax,
                                               &k_cumsum,
                                               &k_argmin,
                                               &k_max_dim,
                                               &k_min_dim,
                                               &k_softmax,
                                               &k_log_softmax,
                                               &k_softmax_backward,
                                               &k_log_softmax_backward,
                                               NULL};
