/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Kernels that generate or rearrange elements without arithmetic between them: arange,
 * tril / triu, flip, roll.
 */
#include "kernel.h"

/* ---- arange.start_out: (start, end, step, out) ----
 * The output's size and dtype come from ATen's meta function; the kernel fills element i with
 * start + i * step rounded as PyTorch's CPU kernel rounds it.  That kernel computes in the
 * accumulation type (double for float32 and float64, float for float16 and bfloat16, int64
 * for integers), and its vectorised loop (two vectors of W = 32 bytes / element size at a
 * time) computes the first element of each vector as start + step * i and the others as that
 * element, rounded to the output's dtype, plus k * step; elements after the last pair of
 * vectors take the scalar formula.  Products and sums are fused as ATen's compiled kernel
 * fuses them (fma).  (ATen splits outputs longer than 32768 elements across its threads,
 * each part starting its own vectors; emu follows the single-part order, which can differ from
 * it in the last bit of a few elements at those parts' ends.) */

typedef struct arange_job {
  const emu_tensor *out;
  double start, step;      /* floating outputs */
  int64_t istart, istep;   /* integer outputs */
  int64_t lanes, vectored; /* W; elements computed by the vectorised loop */
  bool contiguous;
} arange_job;

static double arange_value(const arange_job *job, tb_dtype dt, int64_t i) {
  const bool vector = i < job->vectored;
  const int64_t base_index = vector ? i - i % job->lanes : i;
  const double k = (double)(i - base_index);
  if (dt == TB_DTYPE_FLOAT64) {
    double base = fma(job->step, (double)base_index, job->start);
    return vector ? fma(k, job->step, base) : base;
  }
  if (dt == TB_DTYPE_FLOAT32) {
    double base = fma(job->step, (double)base_index, job->start);
    return vector ? fma(k, job->step, (double)(float)base) : base;
  }
  /* float16 / bfloat16: in float, the vector's first element rounded to the output's dtype */
  float start = (float)job->start, step = (float)job->step;
  float base = fmaf(step, (float)base_index, start);
  if (!vector) return base;
  char element[2];
  emu_store_double(element, dt, base);
  return fmaf((float)k, step, (float)emu_load_double(element, dt));
}

EMU_HOT_LOOP static void arange_range(void *context, int64_t begin, int64_t end) {
  const arange_job *job = context;
  const emu_tensor *out = job->out;
  const tb_dtype dt = out->dtype;
  const int64_t item = (int64_t)emu_itemsize(dt);
  for (int64_t i = begin; i < end; i++) {
    char *p = out->data;
    if (job->contiguous) {
      p += i * item;
    } else {
      int64_t rest = i;
      for (int d = out->ndim - 1; d >= 0; d--) {
        p += (rest % out->sizes[d]) * out->strides[d] * item;
        rest /= out->sizes[d];
      }
    }
    if (emu_is_floating(dt)) {
      emu_store_double(p, dt, arange_value(job, dt, i));
    } else {
      emu_store_int(p, dt, job->istart + job->istep * i);
    }
  }
}

static void run_arange(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *out = call->args[3].as.tensor;
  arange_job job = {.out = out,
                    .start = emu_arg_double(&call->args[0]),
                    .step = emu_arg_double(&call->args[2]),
                    .istart = emu_arg_int(&call->args[0]),
                    .istep = emu_arg_int(&call->args[2]),
                    .lanes = 32 / (int64_t)emu_itemsize(out->dtype),
                    .contiguous = emu_is_contiguous(out)};
  job.vectored = out->numel - out->numel % (2 * job.lanes);
  emu_parallel_for(out->numel, 1 << 14, arange_range, &job);
}

static tb_status kernel_arange(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("arange.start_out", args, count, "nnnT");
  if (status != TB_OK) return status;
  if (args[3].as.tensor->dtype == TB_DTYPE_BOOL) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: arange.start_out: bool output");
  }
  return emu_launch("arange.start_out", stream, args, count, run_arange, 0, NULL);
}

/* ---- tril.out / triu.out: (self, diagonal, out) ----
 * Over the last two dimensions of any batch: element (r, c) is kept when c - r <= diagonal
 * (tril) or c - r >= diagonal (triu), and zero (all-zero bytes, in every dtype) otherwise.
 * In place (out is self) only the zeros are written. */

typedef struct triangle_job {
  const emu_tensor *self, *out;
  int64_t diagonal;
  bool upper;
  int64_t rows, cols; /* of each matrix */
} triangle_job;

static void copy_elements(char *to, int64_t to_stride, const char *from, int64_t from_stride,
                          int64_t n, size_t item) {
  if (to_stride == (int64_t)item && from_stride == (int64_t)item) {
    memcpy(to, from, (size_t)n * item);
    return;
  }
  for (int64_t i = 0; i < n; i++) memcpy(to + i * to_stride, from + i * from_stride, item);
}

static void zero_elements(char *to, int64_t to_stride, int64_t n, size_t item) {
  if (to_stride == (int64_t)item) {
    memset(to, 0, (size_t)n * item);
    return;
  }
  for (int64_t i = 0; i < n; i++) memset(to + i * to_stride, 0, item);
}

static void triangle_rows(void *context, int64_t begin, int64_t end) {
  const triangle_job *job = context;
  const emu_tensor *self = job->self, *out = job->out;
  const int nd = out->ndim;
  const size_t item = emu_itemsize(out->dtype);
  const int64_t in_col = self->strides[nd - 1] * (int64_t)item;
  const int64_t out_col = out->strides[nd - 1] * (int64_t)item;
  for (int64_t row = begin; row < end; row++) { /* row over batch x rows */
    int64_t r = row % job->rows, rest = row / job->rows;
    const char *from = self->data + r * self->strides[nd - 2] * (int64_t)item;
    char *to = out->data + r * out->strides[nd - 2] * (int64_t)item;
    for (int d = nd - 3; d >= 0; d--) {
      int64_t i = rest % out->sizes[d];
      rest /= out->sizes[d];
      from += i * self->strides[d] * (int64_t)item;
      to += i * out->strides[d] * (int64_t)item;
    }
    /* kept columns: [0, split) for tril, [split, cols) for triu */
    int64_t split = job->upper ? r + job->diagonal : r + job->diagonal + 1;
    split = split < 0 ? 0 : split > job->cols ? job->cols : split;
    int64_t keep_begin = job->upper ? split : 0, keep_end = job->upper ? job->cols : split;
    int64_t zero_begin = job->upper ? 0 : split, zero_end = job->upper ? split : job->cols;
    if (from != to || in_col != out_col) {
      copy_elements(to + keep_begin * out_col, out_col, from + keep_begin * in_col, in_col,
                    keep_end - keep_begin, item);
    }
    zero_elements(to + zero_begin * out_col, out_col, zero_end - zero_begin, item);
  }
}

static void run_triangle(tbk_task *task, bool upper) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *self = call->args[0].as.tensor, *out = call->args[2].as.tensor;
  if (out->numel == 0) return;
  triangle_job job = {
      self, out, call->args[1].as.i, upper, out->sizes[out->ndim - 2], out->sizes[out->ndim - 1]};
  int64_t rows = out->numel / job.cols;
  emu_parallel_for(rows, job.cols >= 4096 ? 1 : 4096 / job.cols, triangle_rows, &job);
}
static void run_tril(tbk_task *task) { run_triangle(task, false); }
static void run_triu(tbk_task *task) { run_triangle(task, true); }

static tb_status enqueue_triangle(const char *name, tbk_task_fn fn, tb_stream stream,
                                  const tb_value *args, int32_t count) {
  tb_status status = emu_check_args(name, args, count, "TiT");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[0].as.tensor, *out = args[2].as.tensor;
  if (self->ndim < 2 || self->dtype != out->dtype || !emu_same_shape(self, out))
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: shapes or dtypes", name);
  return emu_launch(name, stream, args, count, fn, 0, NULL);
}
static tb_status kernel_tril(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_triangle("tril.out", run_tril, s, a, n);
}
static tb_status kernel_triu(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_triangle("triu.out", run_triu, s, a, n);
}

/* ---- flip.out: (self, dims, out) ----
 * A copy from the view of self that walks the flipped dimensions backwards (negative
 * strides, which the elementwise engine takes as they come). */

static void run_flip(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *self = call->args[0].as.tensor, *out = call->args[2].as.tensor;
  if (out->numel == 0) return;
  emu_tensor view = *self;
  const emu_arg *dims = &call->args[1];
  for (int64_t k = 0; k < dims->as.ints.count; k++) {
    int64_t d = dims->as.ints.items[k];
    if (d < 0) d += self->ndim;
    view.data += (self->sizes[d] - 1) * self->strides[d] * (int64_t)emu_itemsize(self->dtype);
    view.strides[d] = -self->strides[d];
  }
  emu_copy_tensor(out, &view);
}

static tb_status kernel_flip(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("flip.out", args, count, "TIT");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[0].as.tensor, *out = args[2].as.tensor;
  bool ok = self->ndim == out->ndim && self->dtype == out->dtype;
  for (int32_t d = 0; ok && d < self->ndim; d++) ok = self->sizes[d] == out->sizes[d];
  uint32_t seen = 0;
  for (int64_t k = 0; ok && k < args[1].as.ints.count; k++) {
    int64_t d = args[1].as.ints.items[k];
    if (d < 0) d += self->ndim;
    ok = d >= 0 && d < self->ndim && !((seen >> d) & 1u);
    if (ok) seen |= 1u << d;
  }
  if (!ok) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: flip.out: shapes, dtypes or dimensions");
  }
  return emu_launch("flip.out", stream, args, count, run_flip, 0, NULL);
}

/* ---- roll.out: (self, shifts, dims, out) ----
 * Rolling one dimension by s moves self's first n - s elements along it to out's last n - s,
 * and self's last s to out's first s: with k rolled dimensions, 2^k block copies between views
 * of self and out.  With no dims, the flattened tensor is rolled (both contiguous, as the
 * enqueue half checks). */

static int64_t roll_dim(const emu_arg *dims, int64_t j, int32_t ndim) {
  if (dims->as.ints.count == 0) return 0;
  int64_t d = dims->as.ints.items[j];
  return d < 0 ? d + ndim : d;
}

static void run_roll(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *self = call->args[0].as.tensor, *out = call->args[3].as.tensor;
  if (out->numel == 0) return;
  const emu_arg *shifts = &call->args[1], *dims = &call->args[2];
  emu_tensor src = *self, dst = *out;
  if (dims->as.ints.count == 0) {
    src.ndim = dst.ndim = 1;
    src.sizes[0] = dst.sizes[0] = self->numel;
    src.strides[0] = dst.strides[0] = 1;
  }
  const int64_t k = shifts->as.ints.count;
  const int64_t item = (int64_t)emu_itemsize(self->dtype);
  for (int64_t mask = 0; mask < ((int64_t)1 << k); mask++) {
    emu_tensor from = src, to = dst;
    for (int64_t j = 0; j < k; j++) {
      const int64_t d = roll_dim(dims, j, src.ndim), n = src.sizes[d];
      const int64_t shift = ((shifts->as.ints.items[j] % n) + n) % n;
      if ((mask >> j) & 1) { /* self's last `shift` to out's first */
        from.data += (n - shift) * from.strides[d] * item;
        from.sizes[d] = to.sizes[d] = shift;
      } else { /* self's first n - shift to out's last */
        to.data += shift * to.strides[d] * item;
        from.sizes[d] = to.sizes[d] = n - shift;
      }
    }
    int64_t numel = 1;
    for (int32_t d = 0; d < src.ndim; d++) numel *= from.sizes[d];
    if (numel == 0) continue;
    from.numel = to.numel = numel;
    emu_copy_tensor(&to, &from);
  }
}

static tb_status kernel_roll(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("roll.out", args, count, "TIIT");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[0].as.tensor, *out = args[3].as.tensor;
  const int64_t k = args[1].as.ints.count, ndims = args[2].as.ints.count;
  bool ok = self->ndim == out->ndim && self->dtype == out->dtype && k >= 1 && k <= 8 &&
            (ndims == k || (ndims == 0 && k == 1));
  for (int32_t d = 0; ok && d < self->ndim; d++) ok = self->sizes[d] == out->sizes[d];
  uint32_t seen = 0;
  for (int64_t j = 0; ok && j < ndims; j++) {
    int64_t d = args[2].as.ints.items[j];
    if (d < 0) d += self->ndim;
    ok = d >= 0 && d < self->ndim && !((seen >> d) & 1u);
    if (ok) seen |= 1u << d;
  }
  if (ok && ndims == 0) { /* the flattened roll: both laid out as one run of elements */
    int64_t expected = 1;
    for (int32_t d = self->ndim - 1; ok && d >= 0; d--) {
      ok = self->sizes[d] == 1 || (self->strides[d] == expected && out->strides[d] == expected);
      expected *= self->sizes[d];
    }
  }
  if (!ok) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED,
                    "emu: roll.out: shapes, dtypes, dimensions (each once, at most 8) or, "
                    "without dims, a non-contiguous tensor");
  }
  return emu_launch("roll.out", stream, args, count, run_roll, 0, NULL);
}

EMU_KERNEL(
    k_arange, "arange.start_out", kernel_arange, EMU_FLOATS | EMU_INTS,
    "arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_tril, "tril.out", kernel_tril, EMU_ALL_TYPES,
           "tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_triu, "triu.out", kernel_triu, EMU_ALL_TYPES,
           "triu.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_flip, "flip.out", kernel_flip, EMU_ALL_TYPES,
           "flip.out(Tensor self, int[] dims, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_roll, "roll.out", kernel_roll, EMU_ALL_TYPES,
           "roll.out(Tensor self, SymInt[1] shifts, int[1] dims=[], *, Tensor(a!) out) -> "
           "Tensor(a!)");

const tb_kernel *const emu_shape_kernels[] = {&k_arange, &k_tril, &k_triu, &k_flip, &k_roll, NULL};
