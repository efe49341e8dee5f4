/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The opencl vendor's kernel half: what every kernel file shares.  A kernel validates its
 * arguments on the host, finds (or builds) the OpenCL kernel it needs through the program
 * cache, sets its arguments and enqueues it on the call's stream (vendor.h, "Kernels").
 *
 * - map.c: the elementwise engine, out = EXPR(x0, x1, x2) over strided operands, one OpenCL
 *   program per expression and dtypes (map.cl);
 * - elementwise.c: the ATen elementwise operators as expressions for that engine;
 * - copy.c: copy_ and fill_.Scalar, which torch_backend itself calls;
 * - blas.c: matrix products through CLBlast;
 * - reduce.c: reductions and softmax on the row kernels of reduce.cl;
 * - gather.c: index_select, embedding's backward, nll_loss, cat, dropout's backward;
 * - optim.c: the fused SGD, Adam and AdamW steps and the _foreach_ operators (eight tensors a
 *   launch), the random kernels on Philox;
 * - norm.c: layer_norm forward and backward;
 * - shape.c: arange, tril and triu;
 * - window.c: convolution and max pooling (window.cl);
 * - rnn.c: the fused LSTM and GRU cells (rnn.cl);
 * - registry.c: the kernel table.
 */
#ifndef TB_OPENCL_KERNELS_KERNELS_H_
#define TB_OPENCL_KERNELS_KERNELS_H_

#include "opencl.h"

/* The OpenCL C sources, embedded by the build (embed.cmake). */
extern const char ocl_source_map[];
extern const char ocl_source_reduce[];
extern const char ocl_source_gather[];
extern const char ocl_source_optim[];
extern const char ocl_source_window[];
extern const char ocl_source_rnn[];
extern const char ocl_source_gemm[];
extern const char ocl_source_sort[];

/** The OpenCL C type of @p dtype's elements ("float", "uchar" for bool), NULL when the vendor
 *  has no kernels for it (float16, bfloat16). */
const char *ocl_type_name(tb_dtype dtype);

/** Bytes per element of @p dtype. */
size_t ocl_dtype_size(tb_dtype dtype);

/** Whether @p dtype is float32 or float64 (the floating dtypes with kernels). */
bool ocl_is_float(tb_dtype dtype);

/** Whether @p t is dense (its elements one run of stride 1); @p numel receives its count. */
bool ocl_dense(const tb_tensor *t, int64_t *numel);

/** The number a TB_VALUE_DOUBLE, TB_VALUE_INT or TB_VALUE_BOOL stands for, as a double and as
 *  an integer (either pointer may be NULL); false for any other kind. */
bool ocl_number(const tb_value *value, double *f, int64_t *i);

/** The compute dtype a value of @p dtype survives in: floating types their own, integral ones
 *  (bool too) int64. */
tb_dtype ocl_compute_of(tb_dtype dtype);

/** Sets the calling thread's last error and returns TB_ERROR_NOT_SUPPORTED: the call goes to
 *  the CPU fallback (the message says why, for TORCH_BACKEND_FALLBACK=warn). */
tb_status ocl_decline(const tb_kernel_call *call, const char *why);

/** Checks what every kernel checks first: the device exists and is not faulted. */
tb_status ocl_kernel_enter(tb_context ctx, const tb_kernel_call *call, int32_t *device);

/** The address of @p tensor's bytes on @p device (the span its sizes and strides reach). */
tb_status ocl_tensor_place(tb_context ctx, int32_t device, const tb_tensor *tensor,
                           const char *what, ocl_place *place);

/** Enqueues @p kernel (its arguments set, its lock held by the caller) over @p numel
 *  work-items on the call's stream. */
tb_status ocl_enqueue(tb_context ctx, int32_t device, const tb_kernel_call *call,
                      ocl_kernel *kernel, int64_t numel, const char *what);

/** Enqueues @p kernel over the @p dims -dimensional grid @p global in work-groups of @p local
 *  (each dividing its extent) on the call's stream. */
tb_status ocl_enqueue_grid(tb_context ctx, int32_t device, const tb_kernel_call *call,
                           ocl_kernel *kernel, cl_uint dims, const size_t *global,
                           const size_t *local, const char *what);

/** Setting a kernel's arguments in order: the first failure is kept and later calls do
 *  nothing; ocl_args_done returns it.  The caller holds the kernel's lock. */
typedef struct ocl_args {
  tb_context ctx;
  int32_t device;
  cl_kernel kernel;
  cl_uint next;
  tb_status status;
} ocl_args;
ocl_args ocl_args_begin(tb_context ctx, int32_t device, ocl_kernel *kernel);
/** A device-memory pair (OCL_PTR): the pointer and its offset. */
void ocl_arg_place(ocl_args *args, const ocl_place *place);
/** A value of @p size bytes. */
void ocl_arg_value(ocl_args *args, size_t size, const void *value);
/** The device's fault record and the index of operator @p op (a static string) in it:
 *  `__global uint *fault, uint fault_op`; counts a fault-capable launch. */
void ocl_arg_fault(ocl_args *args, const char *op);
/** A value of the accumulator type of @p dtype's kernels: double for float64, else float. */
void ocl_arg_acc(ocl_args *args, tb_dtype dtype, double value);
tb_status ocl_args_done(ocl_args *args);

/** One input of the elementwise engine: a tensor, or a number standing for one (a CPU scalar
 *  operand, vendor.h "Elementwise operators"), or nothing. */
typedef struct ocl_operand {
  const tb_tensor *tensor; /* NULL: the number below, or an unused input */
  double f;                /* the number, as a double ... */
  int64_t i;               /* ... and as an integer (integral compute types use this) */
} ocl_operand;

/** What the elementwise engine computes: `out = EXPR` with x0..x2 the inputs and alpha, beta
 *  two numbers, all converted to the compute dtype. */
typedef struct ocl_map_spec {
  const char *expr; /* static storage: the kernel memo keys by its address */
  tb_dtype compute;
  int inputs; /* 0..3 */
} ocl_map_spec;

/** map.cl's tb_layout, byte for byte: the elementwise engine's and tb_tri's layout (dimensions,
 *  the output's strides in strides[0] and input k's in strides[k + 1], in elements). */
#define OCL_MAP_DIMS 8
typedef struct ocl_layout {
  cl_int ndim;
  cl_int scalar_mask;
  cl_long numel;
  cl_long sizes[OCL_MAP_DIMS];
  cl_long strides[4][OCL_MAP_DIMS];
} ocl_layout;

/** The most dimensions ocl_broadcast handles (ocl_map collapses them to at most 8). */
#define OCL_MAX_DIMS 24

/** @p t as a view of @p like's shape (sizes shared with @p like, broadcast dimensions of stride
 *  0, the strides written to @p strides, OCL_MAX_DIMS of them); false when @p t does not
 *  broadcast to that shape (right-aligned, as PyTorch's rules). */
bool ocl_broadcast(const tb_tensor *t, const tb_tensor *like, int64_t *strides, tb_tensor *view);

/** Runs the engine: @p out (any strides), @p in (@p spec->inputs of them, each a tensor of
 *  @p out's sizes or a number), @p alpha and @p beta.  Declines layouts of more than 8
 *  dimensions after collapsing and dtypes without an OpenCL type. */
tb_status ocl_map(tb_context ctx, const tb_kernel_call *call, const ocl_map_spec *spec,
                  const tb_tensor *out, const ocl_operand *in, double alpha, double beta);

/** reduce.cl's row layout (reduce.c): kept dimensions enumerate rows, the others the
 *  elements of a row, each with strides per operand (0: out, 1 and 2: inputs). */
typedef struct ocl_rows {
  cl_int kept_ndim;
  cl_int row_ndim;
  cl_long rows;
  cl_long row_length;
  cl_long kept_sizes[8];
  cl_long kept_strides[3][8];
  cl_long row_sizes[8];
  cl_long row_strides[3][8];
} ocl_rows;

/** Work-items per row of a row kernel (reduce.cl, a power of two): a tree of up to 64, or
 *  on CPU devices one per row of up to 1024 elements where @p in_order sums are accurate
 *  enough for the caller. */
int ocl_row_group(tb_context ctx, int32_t device, int64_t row_length, bool in_order);

/** Queues a row kernel of reduce.cl over @p rows rows with @p wg work-items per row (from
 *  ocl_row_group).  One work-item per row runs neighbouring rows in one work-group, so that
 *  a CPU driver runs them in vector lanes; more make one work-group per row.  Holds no lock:
 *  the caller holds the kernel's. */
tb_status ocl_run_rows(tb_context ctx, int32_t device, tb_stream stream, cl_kernel kernel,
                       int64_t rows, int wg, const char *what);

/** Maps @p in's dimensions (reduced or in a row: the bits of @p mask) to rows; @p out has
 *  @p in's shape (@p same_shape) or is the reduction's result (with or without @p keepdim);
 *  @p in2 (or NULL) has @p in's shape.  False when more than 8 dimensions of either kind. */
bool ocl_map_rows(const tb_tensor *in, const tb_tensor *in2, const tb_tensor *out, uint64_t mask,
                  bool same_shape, bool keepdim, ocl_rows *rows);

/* The kernel lists, NULL-terminated. */
extern const tb_kernel *const ocl_elementwise_kernels[];
extern const tb_kernel *const ocl_copy_kernels[];
extern const tb_kernel *const ocl_blas_kernels[];
extern const tb_kernel *const ocl_reduce_kernels[];
extern const tb_kernel *const ocl_gather_kernels[];
extern const tb_kernel *const ocl_optim_kernels[];
extern const tb_kernel *const ocl_norm_kernels[];
extern const tb_kernel *const ocl_shape_kernels[];
extern const tb_kernel *const ocl_window_kernels[];
extern const tb_kernel *const ocl_rnn_kernels[];
extern const tb_kernel *const ocl_sort_kernels[];

/** Whether products run on @p device: the native engine serves it, or CLBlast loaded (blas.c;
 *  loads it on the first call). */
bool ocl_have_gemm(tb_context ctx, int32_t device);

/** C (m x n, row-major, leading dimension ldc) = alpha op(A) op(B) + beta C on the call's
 *  stream (the native engine or CLBlast, blas.c), op transposing where asked; each matrix a
 *  place plus an offset in elements.  The caller initializes C even when beta is 0 (CLBlast
 *  reads it).  Declines (TB_ERROR_NOT_SUPPORTED, with the reason) where neither engine serves
 *  the device. */
tb_status ocl_gemm(tb_context ctx, const tb_kernel_call *call, int32_t device, tb_dtype dtype,
                   bool trans_a, bool trans_b, size_t m, size_t n, size_t k, double alpha,
                   const ocl_place *a, size_t offset_a, size_t lda, const ocl_place *b,
                   size_t offset_b, size_t ldb, double beta, const ocl_place *c, size_t offset_c,
                   size_t ldc);

/** The kernel table (registry.c). */
const tb_kernel_api *ocl_kernel_api(void);

#endif /* TB_OPENCL_KERNELS_KERNELS_H_ */
