/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The elementwise engine: out = EXPR(x0, x1, x2, alpha, beta) over operands of one shape with
 * any strides (0 for broadcast dimensions), and the helpers every kernel uses (entering,
 * placing tensors, enqueueing).
 *
 * Each (expression, dtypes) pair is its own small OpenCL program: map.cl after a few #defines
 * (types, the expression, the store's conversion), built on first use and cached on disk.  The
 * host collapses dimensions that are contiguous across every operand -- a dense tensor becomes
 * one dimension, which the kernel indexes without division -- and passes sizes and strides by
 * value in a struct whose bytes map.cl's tb_layout matches.
 */

#include <stdio.h>
#include <string.h>

#include "kernels.h"

const char *ocl_type_name(tb_dtype dtype) {
  switch (dtype) {
    case TB_DTYPE_BOOL:
    case TB_DTYPE_UINT8:
      return "uchar";
    case TB_DTYPE_INT8:
      return "char";
    case TB_DTYPE_INT16:
      return "short";
    case TB_DTYPE_INT32:
      return "int";
    case TB_DTYPE_INT64:
      return "long";
    case TB_DTYPE_FLOAT32:
      return "float";
    case TB_DTYPE_FLOAT64:
      return "double";
    default:
      return NULL;
  }
}

size_t ocl_dtype_size(tb_dtype dtype) {
  switch (dtype) {
    case TB_DTYPE_BOOL:
    case TB_DTYPE_UINT8:
    case TB_DTYPE_INT8:
      return 1;
    case TB_DTYPE_INT16:
    case TB_DTYPE_FLOAT16:
    case TB_DTYPE_BFLOAT16:
      return 2;
    case TB_DTYPE_INT32:
    case TB_DTYPE_FLOAT32:
      return 4;
    default:
      return 8;
  }
}

bool ocl_is_float(tb_dtype dtype) { return dtype == TB_DTYPE_FLOAT32 || dtype == TB_DTYPE_FLOAT64; }

bool ocl_dense(const tb_tensor *t, int64_t *numel) {
  int64_t expected = 1;
  *numel = 1;
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    *numel *= t->sizes[d];
    if (t->sizes[d] != 1 && t->strides[d] != expected) return false;
    expected *= t->sizes[d];
  }
  return true;
}

bool ocl_number(const tb_value *value, double *f, int64_t *i) {
  double as_double;
  int64_t as_int;
  switch (value->kind) {
    case TB_VALUE_DOUBLE:
      as_double = value->as.f;
      as_int = (int64_t)value->as.f;
      break;
    case TB_VALUE_INT:
      as_double = (double)value->as.i;
      as_int = value->as.i;
      break;
    case TB_VALUE_BOOL:
      as_double = value->as.b ? 1.0 : 0.0;
      as_int = value->as.b ? 1 : 0;
      break;
    default:
      return false;
  }
  if (f != NULL) *f = as_double;
  if (i != NULL) *i = as_int;
  return true;
}

tb_dtype ocl_compute_of(tb_dtype dtype) {
  return dtype == TB_DTYPE_FLOAT32 || dtype == TB_DTYPE_FLOAT64 ? dtype : TB_DTYPE_INT64;
}

tb_status ocl_decline(const tb_kernel_call *call, const char *why) {
  return ocl_fail(TB_ERROR_NOT_SUPPORTED, "%s: %s", call->kernel->name, why);
}

tb_status ocl_kernel_enter(tb_context ctx, const tb_kernel_call *call, int32_t *device) {
  tb_status status = ocl_start(ctx);
  if (status != TB_OK) return status;
  if (call == NULL || call->stream == NULL) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "a kernel call without a stream");
  }
  *device = ocl_stream_of(call->stream)->device;
  return ocl_fault_status(ctx, *device);
}

tb_status ocl_tensor_place(tb_context ctx, int32_t device, const tb_tensor *tensor,
                           const char *what, ocl_place *place) {
  int64_t last = 0;
  for (int32_t d = 0; d < tensor->ndim; d++) {
    if (tensor->sizes[d] == 0) {
      *place = (ocl_place){0};
      return TB_OK;
    }
    last += (tensor->sizes[d] - 1) * tensor->strides[d];
  }
  if (tensor->device != device) {
    return ocl_fail(TB_ERROR_INVALID_ARGUMENT, "%s is on ocl:%d, the call's stream on ocl:%d", what,
                    (int)tensor->device, (int)device);
  }
  size_t bytes = (size_t)(last + 1) * ocl_dtype_size(tensor->dtype);
  return ocl_place_of(ctx, device, tensor->data, bytes, what, place);
}

tb_status ocl_enqueue(tb_context ctx, int32_t device, const tb_kernel_call *call,
                      ocl_kernel *kernel, int64_t numel, const char *what) {
  size_t local = kernel->work_group < 64 ? kernel->work_group : 64;
  size_t global = ((size_t)numel + local - 1) / local * local;
  return ocl_enqueue_grid(ctx, device, call, kernel, 1, &global, &local, what);
}

tb_status ocl_enqueue_grid(tb_context ctx, int32_t device, const tb_kernel_call *call,
                           ocl_kernel *kernel, cl_uint dims, const size_t *global,
                           const size_t *local, const char *what) {
  (void)device;
  ocl_command command = {.kind = OCL_COMMAND_KERNEL,
                         .what = what,
                         .kernel = kernel->kernel,
                         .dims = dims,
                         .has_local = local != NULL};
  for (cl_uint d = 0; d < dims; d++) {
    command.global[d] = global[d];
    if (local != NULL) command.local[d] = local[d];
  }
  return ocl_submit(ctx, ocl_stream_of(call->stream), &command);
}

/* ---- arguments ---- */

ocl_args ocl_args_begin(tb_context ctx, int32_t device, ocl_kernel *kernel) {
  return (ocl_args){ctx, device, kernel->kernel, 0, TB_OK};
}

void ocl_arg_place(ocl_args *args, const ocl_place *place) {
  if (args->status != TB_OK) return;
  args->status = ocl_set_arg_place(args->ctx, args->device, args->kernel, args->next, place);
  args->next += 2;
}

void ocl_arg_value(ocl_args *args, size_t size, const void *value) {
  if (args->status != TB_OK) return;
  cl_int err = clSetKernelArg(args->kernel, args->next++, size, value);
  if (err != CL_SUCCESS) args->status = ocl_check(args->ctx, args->device, err, "clSetKernelArg");
}

void ocl_arg_fault(ocl_args *args, const char *op) {
  ocl_device *dev = &args->ctx->devices[args->device];
  atomic_fetch_add(&dev->fault_launches, 1);
  cl_uint index = ocl_fault_op(args->ctx, args->device, op, false);
  ocl_arg_value(args, sizeof(cl_mem), &dev->fault);
  ocl_arg_value(args, sizeof index, &index);
}

void ocl_arg_acc(ocl_args *args, tb_dtype dtype, double value) {
  if (dtype == TB_DTYPE_FLOAT64) {
    cl_double v = value;
    ocl_arg_value(args, sizeof v, &v);
  } else {
    cl_float v = (cl_float)value;
    ocl_arg_value(args, sizeof v, &v);
  }
}

tb_status ocl_args_done(ocl_args *args) { return args->status; }

bool ocl_broadcast(const tb_tensor *t, const tb_tensor *like, int64_t *strides, tb_tensor *view) {
  if (t->ndim > like->ndim || like->ndim > OCL_MAX_DIMS) return false;
  int32_t lead = like->ndim - t->ndim;
  for (int32_t d = 0; d < like->ndim; d++) {
    int32_t k = d - lead;
    if (k < 0 || t->sizes[k] == 1) {
      strides[d] = 0;
    } else if (t->sizes[k] == like->sizes[d]) {
      strides[d] = t->strides[k];
    } else {
      return false;
    }
  }
  *view = *t;
  view->ndim = like->ndim;
  view->sizes = like->sizes;
  view->strides = strides;
  return true;
}

/* ---- the engine ---- */

/* Sets a number argument of the compute type. */
static cl_int set_number(cl_kernel kernel, cl_uint index, tb_dtype compute, double f, int64_t i) {
  if (compute == TB_DTYPE_FLOAT32) {
    cl_float v = (cl_float)f;
    return clSetKernelArg(kernel, index, sizeof v, &v);
  }
  if (compute == TB_DTYPE_FLOAT64) {
    cl_double v = f;
    return clSetKernelArg(kernel, index, sizeof v, &v);
  }
  cl_long v = (cl_long)i;
  return clSetKernelArg(kernel, index, sizeof v, &v);
}

/* Removes size-1 dimensions and merges dimensions contiguous across every operand. */
static void collapse(ocl_layout *layout, int operands) {
  int n = 0;
  for (int d = 0; d < layout->ndim; d++) {
    if (layout->sizes[d] == 1) continue;
    if (n > 0) {
      bool merge = true;
      for (int k = 0; k < operands && merge; k++) {
        merge = layout->strides[k][n - 1] == layout->strides[k][d] * layout->sizes[d];
      }
      if (merge) {
        layout->sizes[n - 1] *= layout->sizes[d];
        for (int k = 0; k < operands; k++) layout->strides[k][n - 1] = layout->strides[k][d];
        continue;
      }
    }
    layout->sizes[n] = layout->sizes[d];
    for (int k = 0; k < operands; k++) layout->strides[k][n] = layout->strides[k][d];
    n++;
  }
  if (n == 0) { /* a single element */
    layout->sizes[0] = 1;
    for (int k = 0; k < operands; k++) layout->strides[k][0] = 0;
    n = 1;
  }
  layout->ndim = n;
}

/* Stores number @p f / @p i of the compute type at @p at; returns its size. */
static size_t put_number(unsigned char *at, tb_dtype compute, double f, int64_t i) {
  if (compute == TB_DTYPE_FLOAT32) {
    cl_float v = (cl_float)f;
    memcpy(at, &v, sizeof v);
    return sizeof v;
  }
  if (compute == TB_DTYPE_FLOAT64) {
    cl_double v = f;
    memcpy(at, &v, sizeof v);
    return sizeof v;
  }
  cl_long v = (cl_long)i;
  memcpy(at, &v, sizeof v);
  return sizeof v;
}

/* tb_map_dense's arguments (map.cl): the output, each input that is memory, and the bytes of
 * tb_dense_args -- four byte offsets, the count, then the three numbers, alpha and beta in the
 * compute type, the struct padded to 8 bytes as the driver lays it out. */
static tb_status dense_arguments(tb_context ctx, int32_t device, cl_kernel kernel,
                                 const ocl_map_spec *spec, const ocl_operand *in,
                                 const ocl_layout *layout, const ocl_place *places, double alpha,
                                 double beta) {
  unsigned char bytes[4 * sizeof(cl_ulong) + sizeof(cl_long) + 5 * sizeof(cl_double)];
  size_t at = 0;
  for (int k = 0; k < 4; k++) {
    cl_ulong offset = ctx->mode == OCL_MEMORY_SVM ? 0 : places[k].offset;
    memcpy(bytes + at, &offset, sizeof offset);
    at += sizeof offset;
  }
  cl_long numel = layout->numel;
  memcpy(bytes + at, &numel, sizeof numel);
  at += sizeof numel;
  for (int k = 0; k < 3; k++) {
    at += put_number(bytes + at, spec->compute, k < spec->inputs ? in[k].f : 0,
                     k < spec->inputs ? in[k].i : 0);
  }
  at += put_number(bytes + at, spec->compute, alpha, (int64_t)alpha);
  at += put_number(bytes + at, spec->compute, beta, (int64_t)beta);
  at = (at + 7) / 8 * 8;

  cl_uint index = 0;
  cl_int err = CL_SUCCESS;
  for (int k = 0; k < 4 && err == CL_SUCCESS; k++) {
    if (k > 0 && (layout->scalar_mask & (1 << (k - 1)))) continue;
    err = ctx->mode == OCL_MEMORY_SVM
              ? clSetKernelArgSVMPointer(kernel, index, places[k].svm)
              : clSetKernelArg(kernel, index, sizeof(cl_mem), &places[k].mem);
    index++;
  }
  if (err == CL_SUCCESS) err = clSetKernelArg(kernel, index, at, bytes);
  return err == CL_SUCCESS ? TB_OK : ocl_check(ctx, device, err, "clSetKernelArg (tb_map_dense)");
}

tb_status ocl_map(tb_context ctx, const tb_kernel_call *call, const ocl_map_spec *spec,
                  const tb_tensor *out, const ocl_operand *in, double alpha, double beta) {
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  const char *out_type = ocl_type_name(out->dtype);
  /* Floating dtypes compute in their own type, integral ones (bool too) in long. */
  const char *compute_type = spec->compute == TB_DTYPE_FLOAT32   ? "float"
                             : spec->compute == TB_DTYPE_FLOAT64 ? "double"
                                                                 : ocl_type_name(spec->compute);
  if (compute_type != NULL && spec->compute != TB_DTYPE_FLOAT32 &&
      spec->compute != TB_DTYPE_FLOAT64) {
    compute_type = "long";
  }
  if (out_type == NULL || compute_type == NULL) return ocl_decline(call, "a dtype without kernels");
  if (((out->dtype == TB_DTYPE_FLOAT64 || spec->compute == TB_DTYPE_FLOAT64) &&
       !ctx->devices[device].fp64)) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  if (out->ndim > 3 * OCL_MAP_DIMS) return ocl_decline(call, "too many dimensions");
  ocl_layout layout = {0};
  layout.ndim = out->ndim;
  layout.numel = 1;
  for (int32_t d = 0; d < out->ndim; d++) {
    layout.sizes[d] = out->sizes[d];
    layout.strides[0][d] = out->strides[d];
    layout.numel *= out->sizes[d];
  }
  const char *in_types[3] = {out_type, out_type, out_type};
  for (int k = 0; k < 3; k++) {
    const tb_tensor *t = k < spec->inputs ? in[k].tensor : NULL;
    if (t == NULL) {
      layout.scalar_mask |= 1 << k;
      continue;
    }
    if (t->ndim != out->ndim) return ocl_decline(call, "an input not of the output's shape");
    for (int32_t d = 0; d < out->ndim; d++) {
      if (t->sizes[d] != out->sizes[d]) {
        return ocl_decline(call, "an input not of the output's shape");
      }
      layout.strides[k + 1][d] = t->strides[d];
    }
    in_types[k] = ocl_type_name(t->dtype);
    if (in_types[k] == NULL) return ocl_decline(call, "a dtype without kernels");
    if (t->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
      return ocl_decline(call, "float64 on a device without cl_khr_fp64");
    }
  }
  if (layout.numel == 0) return TB_OK;
  collapse(&layout, 4);
  if (layout.ndim > OCL_MAP_DIMS) return ocl_decline(call, "more than 8 dimensions");

  /* Every operand contiguous (or a number): tb_map_dense, without the layout.  Otherwise
   * tb_map_grid over the layout padded to at least three dimensions.  Both take the scalar
   * mask as the constant TB_MASK. */
  bool dense = layout.ndim == 1;
  for (int k = 0; k < 4 && dense; k++) {
    bool number = k > 0 && (layout.scalar_mask & (1 << (k - 1)));
    dense = number || layout.strides[k][0] == 1 || layout.numel == 1;
  }
  if (!dense && layout.ndim < 3) {
    int shift = 3 - layout.ndim;
    for (int d = 2; d >= 0; d--) {
      bool padded = d < shift;
      layout.sizes[d] = padded ? 1 : layout.sizes[d - shift];
      for (int k = 0; k < 4; k++) layout.strides[k][d] = padded ? 0 : layout.strides[k][d - shift];
    }
    layout.ndim = 3;
  }

  /* The program: its defines are its key; the memo finds it without them. */
  uint64_t bits = (uint64_t)out->dtype | (uint64_t)spec->compute << 8 |
                  (uint64_t)layout.scalar_mask << 16 | (uint64_t)(dense ? 0 : layout.ndim) << 20;
  for (int k = 0; k < 3; k++) {
    const tb_tensor *t = k < spec->inputs ? in[k].tensor : NULL;
    bits |= (uint64_t)(t != NULL ? (unsigned)t->dtype & 0xffu : 0xffu) << (24 + 8 * k);
  }
  const ocl_kernel_key key = {spec->expr, bits, device};
  ocl_kernel *kernel = ocl_kernel_recall(ctx, &key);
  if (kernel == NULL) {
    char defines[1024];
    char mask_define[64];
    snprintf(mask_define, sizeof mask_define, "#define TB_MASK %d\n#define TB_GRID_DIMS %d\n",
             layout.scalar_mask, dense ? 3 : (int)layout.ndim);
    snprintf(defines, sizeof defines,
             "#define T_OUT %s\n#define T0 %s\n#define T1 %s\n#define T2 %s\n#define CT %s\n"
             "#define EXPR (%s)\n#define STORE(v) %s\n%s",
             out_type, in_types[0], in_types[1], in_types[2], compute_type, spec->expr,
             out->dtype == TB_DTYPE_BOOL ? "((uchar)((v) != 0))" : "((T_OUT)(v))", mask_define);
    const char *sources[] = {defines, ocl_source_map};
    const char *name = dense ? "tb_map_dense" : "tb_map_grid";
    status = ocl_kernel_get(ctx, device, defines, sources, 2, name, &kernel);
    if (status != TB_OK) return status;
    ocl_kernel_remember(ctx, &key, kernel);
  }

  ocl_place places[4];
  status = ocl_tensor_place(ctx, device, out, "out", &places[0]);
  for (int k = 0; k < 3 && status == TB_OK; k++) {
    const tb_tensor *t = k < spec->inputs ? in[k].tensor : NULL;
    places[k + 1] = places[0]; /* unused inputs point at the output, never read */
    if (t != NULL) status = ocl_tensor_place(ctx, device, t, "an input", &places[k + 1]);
  }
  if (status != TB_OK) return status;

  pthread_mutex_lock(&kernel->lock);
  if (dense) {
    status = dense_arguments(ctx, device, kernel->kernel, spec, in, &layout, places, alpha, beta);
    if (status == TB_OK) {
      status = ocl_enqueue(ctx, device, call, kernel, layout.numel, call->kernel->name);
    }
    pthread_mutex_unlock(&kernel->lock);
    return status;
  }
  for (cl_uint k = 0; k < 4 && status == TB_OK; k++) {
    status = ocl_set_arg_place(ctx, device, kernel->kernel, 2 * k, &places[k]);
  }
  cl_int err =
      status != TB_OK ? CL_SUCCESS : clSetKernelArg(kernel->kernel, 8, sizeof layout, &layout);
  for (int k = 0; k < 3 && err == CL_SUCCESS && status == TB_OK; k++) {
    double f = k < spec->inputs ? in[k].f : 0;
    int64_t i = k < spec->inputs ? in[k].i : 0;
    err = set_number(kernel->kernel, 9 + (cl_uint)k, spec->compute, f, i);
  }
  if (err == CL_SUCCESS && status == TB_OK) {
    err = set_number(kernel->kernel, 12, spec->compute, alpha, (int64_t)alpha);
  }
  if (err == CL_SUCCESS && status == TB_OK) {
    err = set_number(kernel->kernel, 13, spec->compute, beta, (int64_t)beta);
  }
  if (status == TB_OK && err != CL_SUCCESS) status = ocl_check(ctx, device, err, "clSetKernelArg");
  if (status == TB_OK) {
    /* Groups of up to 64 along the two innermost dimensions, the grid rounded up to them; the
     * dimensions past those are the grid's third. */
    int n = layout.ndim;
    size_t inner = (size_t)layout.sizes[n - 1], local[3] = {1, 1, 1};
    size_t most = kernel->work_group < 64 ? kernel->work_group : 64;
    while (local[0] * 2 <= most && local[0] < inner) local[0] *= 2;
    size_t rows = (size_t)layout.sizes[n - 2];
    while (local[0] * local[1] * 2 <= most && local[1] < rows) local[1] *= 2;
    size_t outer = 1;
    for (int d = 0; d < n - 2; d++) outer *= (size_t)layout.sizes[d];
    size_t global[3] = {(inner + local[0] - 1) / local[0] * local[0],
                        (rows + local[1] - 1) / local[1] * local[1], outer};
    status = ocl_enqueue_grid(ctx, device, call, kernel, 3, global, local, call->kernel->name);
  }
  pthread_mutex_unlock(&kernel->lock);
  return status;
}
