/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Factories and layout kernels: arange (the elementwise engine with the element's index in
 * its expression) and tril / triu (map.cl's tb_tri).  torch_backend sizes their outputs (the
 * operators' Meta kernels) before the call.
 */
#include <stdio.h>

#include "kernels.h"

/* arange.start_out [start, end, step, out]: out[i] = start + step * i, rounded bit for bit as
 * ATen's CPU kernel rounds it (emu's shape.c tells how): in double (where the device has
 * fp64), its vectorised loop -- W = 32 bytes of elements, pairs of vectors -- computing each
 * vector's first element as fma(step, i, start) and the others as that element, rounded to
 * the output's type, plus k * step; the elements after the last pair of vectors the scalar
 * formula.  Integral outputs are exact in long. */
#define W "(long)(32 / sizeof(T_OUT))"
static const char k_arange_vectorised[] = "(i < L.numel - L.numel % (2 * " W ")) ? fma((CT)(i % " W
                                          "), x1, (CT)(T_OUT)fma(x1, "
                                          "(CT)(i - i % " W "), x0)) : fma(x1, (CT)i, x0)";
#undef W
static tb_status arange(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 4 || a[3].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *out = a[3].as.tensor;
  if (out->ndim != 1) return ocl_decline(call, "an output that is not one-dimensional");
  ocl_operand in[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
  if (!ocl_number(&a[0], &in[0].f, &in[0].i) || !ocl_number(&a[2], &in[1].f, &in[1].i)) {
    return ocl_decline(call, "a start or step that is not a number");
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  tb_dtype compute = ocl_compute_of(out->dtype);
  const char *expr = compute == TB_DTYPE_INT64 ? "x0 + x1 * (CT)i" : "fma(x1, (CT)i, x0)";
  if (compute != TB_DTYPE_INT64 && ctx->devices[device].fp64) {
    compute = TB_DTYPE_FLOAT64;
    expr = k_arange_vectorised;
  }
  ocl_map_spec spec = {expr, compute, 2};
  return ocl_map(ctx, call, &spec, out, in, 1, 1);
}

/* tril.out / triu.out [self, diagonal, out] */
static tb_status tri(tb_context ctx, const tb_kernel_call *call) {
  const tb_value *a = call->args;
  if (call->num_args < 3 || a[0].kind != TB_VALUE_TENSOR || a[1].kind != TB_VALUE_INT ||
      a[2].kind != TB_VALUE_TENSOR) {
    return ocl_decline(call, "unexpected arguments");
  }
  const tb_tensor *self = a[0].as.tensor, *out = a[2].as.tensor;
  const char *type = ocl_type_name(self->dtype);
  if (type == NULL || self->dtype != out->dtype) return ocl_decline(call, "this dtype");
  if (self->ndim < 2 || self->ndim > 8 || out->ndim != self->ndim) {
    return ocl_decline(call, "a rank other than 2 to 8");
  }
  ocl_layout layout = {0};
  layout.ndim = self->ndim;
  layout.numel = 1;
  for (int32_t d = 0; d < self->ndim; d++) {
    if (out->sizes[d] != self->sizes[d]) return ocl_decline(call, "an output of another shape");
    layout.sizes[d] = self->sizes[d];
    layout.strides[0][d] = out->strides[d];
    layout.strides[1][d] = self->strides[d];
    layout.numel *= self->sizes[d];
  }
  int32_t device = -1;
  tb_status status = ocl_kernel_enter(ctx, call, &device);
  if (status != TB_OK) return status;
  if (self->dtype == TB_DTYPE_FLOAT64 && !ctx->devices[device].fp64) {
    return ocl_decline(call, "float64 on a device without cl_khr_fp64");
  }
  if (layout.numel == 0) return TB_OK;
  /* map.cl's type defines (without TB_MASK the program holds tb_tri alone) */
  char defines[512];
  const char *compute = ocl_compute_of(self->dtype) == TB_DTYPE_INT64 ? "long" : type;
  snprintf(defines, sizeof defines,
           "#define T_OUT %s\n#define T0 %s\n#define T1 %s\n#define T2 %s\n#define CT %s\n"
           "#define EXPR (x0)\n#define STORE(v) ((T_OUT)(v))\n",
           type, type, type, type, compute);
  const char *sources[] = {defines, ocl_source_map};
  ocl_kernel *kernel = NULL;
  status = ocl_kernel_get(ctx, device, defines, sources, 2, "tb_tri", &kernel);
  ocl_place po, ps;
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, out, "out", &po);
  if (status == TB_OK) status = ocl_tensor_place(ctx, device, self, "self", &ps);
  if (status != TB_OK) return status;
  cl_long diagonal = a[1].as.i;
  cl_int upper = call->kernel->data != NULL;
  pthread_mutex_lock(&kernel->lock);
  ocl_args args = ocl_args_begin(ctx, device, kernel);
  ocl_arg_place(&args, &po);
  ocl_arg_place(&args, &ps);
  ocl_arg_value(&args, sizeof layout, &layout);
  ocl_arg_value(&args, sizeof diagonal, &diagonal);
  ocl_arg_value(&args, sizeof upper, &upper);
  status = ocl_args_done(&args);
  if (status == TB_OK) status = ocl_enqueue(ctx, device, call, kernel, layout.numel, "tril/triu");
  pthread_mutex_unlock(&kernel->lock);
  return status;
}

#define NUMBERS                                                                                   \
  (TB_DTYPE_BIT(TB_DTYPE_UINT8) | TB_DTYPE_BIT(TB_DTYPE_INT8) | TB_DTYPE_BIT(TB_DTYPE_INT16) |    \
   TB_DTYPE_BIT(TB_DTYPE_INT32) | TB_DTYPE_BIT(TB_DTYPE_INT64) | TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | \
   TB_DTYPE_BIT(TB_DTYPE_FLOAT64))
#define EVERY (NUMBERS | TB_DTYPE_BIT(TB_DTYPE_BOOL))

static const tb_kernel k_arange = {
    sizeof(tb_kernel),
    "arange.start_out",
    arange,
    NUMBERS,
    0,
    "arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)",
    NULL};
static const tb_kernel k_tril = {
    sizeof(tb_kernel),
    "tril.out",
    tri,
    EVERY,
    0,
    "tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)",
    NULL};
static const tb_kernel k_triu = {
    sizeof(tb_kernel),
    "triu.out",
    tri,
    EVERY,
    0,
    "triu.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)",
    (void *)&k_tril};

const tb_kernel *const ocl_shape_kernels[] = {&k_arange, &k_tril, &k_triu, NULL};
