/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Reductions over a set of dimensions: sum, mean, amax, amin, argmax, argmin, var, std, any,
 * all.
 * Floating inputs accumulate in double and integers in int64, so results are at least as
 * accurate as PyTorch's CPU kernels; the output (shape and dtype from ATen's meta function)
 * receives the converted result.
 *
 * The input is viewed as [kept dims..., reduced dims...].  Outputs are split across the pool;
 * each output walks its reduction space with the innermost reduced dimension as the tight
 * loop.  When the innermost input dimension is kept and contiguous (column reductions, such as
 * a bias gradient's sum over the batch), whole rows are accumulated at once instead.
 */
#include <stdlib.h>

#include "kernel.h"

enum reduce_op { SUM, MEAN, AMAX, AMIN, ARGMAX, ARGMIN, VAR, STD, ANY, ALL };

typedef struct reduce_state {
  int op;
  double correction; /* var/std */
  uint32_t reduced;  /* bit d: input dimension d is reduced */
} reduce_state;

typedef struct reduce_plan {
  const emu_tensor *in, *out;
  const reduce_state *state;
  int kept_count, reduced_count;
  int64_t kept_sizes[EMU_MAX_DIMS], kept_in_strides[EMU_MAX_DIMS], kept_out_strides[EMU_MAX_DIMS];
  int64_t reduced_sizes[EMU_MAX_DIMS], reduced_strides[EMU_MAX_DIMS]; /* innermost last */
  int64_t reduction_size;
  size_t item;
} reduce_plan;

/* Walks one output's reduction space; calls the accumulation for each element pointer. */
typedef struct accumulator {
  double sum, best;
  int64_t isum, ibest; /* integer inputs: exact sums and extremes */
  int64_t best_index;
  int64_t count;
  bool nan;
} accumulator;

static inline bool is_nan(double v) { return v != v; }

/* Accumulates the contiguous-or-strided run of `n` elements starting at `p`, whose
 * flattened reduction indices start at `index`. */
static void accumulate_run(const reduce_plan *plan, accumulator *acc, const char *p, int64_t n,
                           int64_t stride, int64_t index) {
  const tb_dtype dt = plan->in->dtype;
  const int op = plan->state->op;
  if (op == SUM || op == MEAN) {
    if (emu_is_floating(dt)) {
      if (dt == TB_DTYPE_FLOAT32 && stride == 4) {
        const float *f = (const float *)p;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int64_t i = 0;
        for (; i + 4 <= n; i += 4) {
          s0 += f[i];
          s1 += f[i + 1];
          s2 += f[i + 2];
          s3 += f[i + 3];
        }
        for (; i < n; i++) s0 += f[i];
        acc->sum += (s0 + s1) + (s2 + s3);
      } else {
        for (int64_t i = 0; i < n; i++) acc->sum += emu_load_double(p + i * stride, dt);
      }
    } else {
      for (int64_t i = 0; i < n; i++) acc->isum += emu_load_int(p + i * stride, dt);
    }
    return;
  }
  if (op == ANY || op == ALL) { /* count the elements that are true (ANY) or false (ALL) */
    const bool want = op == ANY;
    if (emu_is_floating(dt)) {
      for (int64_t i = 0; i < n; i++)
        acc->isum += (emu_load_double(p + i * stride, dt) != 0) == want;
    } else {
      for (int64_t i = 0; i < n; i++) acc->isum += (emu_load_int(p + i * stride, dt) != 0) == want;
    }
    return;
  }
  if (op == VAR || op == STD) {
    for (int64_t i = 0; i < n; i++) acc->sum += emu_load_double(p + i * stride, dt); /* mean */
    return;
  }
  if (!emu_is_floating(dt)) { /* exact int64 comparisons: doubles lose bits above 2^53 */
    for (int64_t i = 0; i < n; i++) {
      int64_t v = emu_load_int(p + i * stride, dt);
      bool better =
          acc->count == 0 || ((op == AMAX || op == ARGMAX) ? v > acc->ibest : v < acc->ibest);
      if (better) {
        acc->ibest = v;
        acc->best_index = index + i;
      }
      acc->count++;
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    double v = emu_load_double(p + i * stride, dt);
    bool better;
    if (acc->nan) {
      better = false;
    } else if (is_nan(v)) {
      better = true;
      acc->nan = true;
    } else if (acc->count == 0) {
      better = true;
    } else if (op == AMAX || op == ARGMAX) {
      better = v > acc->best;
    } else {
      better = v < acc->best;
    }
    if (better) {
      acc->best = v;
      acc->best_index = index + i;
    }
    acc->count++;
  }
}

/* Calls `visit` for every innermost run of one output's reduction space. */
static void walk(const reduce_plan *plan, const char *base, accumulator *acc,
                 void (*visit)(const reduce_plan *, accumulator *, const char *, int64_t, int64_t,
                               int64_t)) {
  int r = plan->reduced_count;
  if (r == 0) {
    visit(plan, acc, base, 1, (int64_t)plan->item, 0);
    return;
  }
  int64_t inner = plan->reduced_sizes[r - 1];
  int64_t inner_stride = plan->reduced_strides[r - 1] * (int64_t)plan->item;
  int64_t index[EMU_MAX_DIMS] = {0};
  int64_t flat = 0;
  for (;;) {
    const char *p = base;
    for (int d = 0; d < r - 1; d++) p += index[d] * plan->reduced_strides[d] * (int64_t)plan->item;
    visit(plan, acc, p, inner, inner_stride, flat);
    flat += inner;
    int d = r - 2;
    for (; d >= 0; d--) {
      if (++index[d] < plan->reduced_sizes[d]) break;
      index[d] = 0;
    }
    if (d < 0) break;
  }
}

/* Second pass of var/std: sum of squared deviations from the mean. */
static void squares_run(const reduce_plan *plan, accumulator *acc, const char *p, int64_t n,
                        int64_t stride, int64_t index) {
  (void)index;
  for (int64_t i = 0; i < n; i++) {
    double d = emu_load_double(p + i * stride, plan->in->dtype) - acc->best;
    acc->isum++;
    acc->sum += d * d;
  }
}

static void store_result(const reduce_plan *plan, char *out, accumulator *acc) {
  const int op = plan->state->op;
  const tb_dtype od = plan->out->dtype;
  const int64_t n = plan->reduction_size;
  switch (op) {
    case SUM:
      if (emu_is_floating(plan->in->dtype)) {
        emu_store_double(out, od, acc->sum);
      } else {
        emu_store_int(out, od, acc->isum);
      }
      break;
    case MEAN:
      emu_store_double(
          out, od, (emu_is_floating(plan->in->dtype) ? acc->sum : (double)acc->isum) / (double)n);
      break;
    case AMAX:
    case AMIN:
      if (emu_is_floating(plan->in->dtype)) {
        emu_store_double(out, od, acc->best);
      } else {
        emu_store_int(out, od, acc->ibest);
      }
      break;
    case ARGMAX:
    case ARGMIN:
      emu_store_int(out, od, acc->best_index);
      break;
    case ANY:
      emu_store_int(out, od, acc->isum != 0);
      break;
    case ALL:
      emu_store_int(out, od, acc->isum == 0);
      break;
    default: {
      double denominator = (double)n - plan->state->correction;
      double var = acc->sum / (denominator > 0 ? denominator : 0.0);
      emu_store_double(out, od, op == STD ? sqrt(var) : var);
    }
  }
}

static void reduce_outputs(void *context, int64_t begin, int64_t end) {
  const reduce_plan *plan = context;
  for (int64_t o = begin; o < end; o++) {
    const char *in = plan->in->data;
    char *out = plan->out->data;
    int64_t rest = o;
    for (int d = plan->kept_count - 1; d >= 0; d--) {
      int64_t i = rest % plan->kept_sizes[d];
      rest /= plan->kept_sizes[d];
      in += i * plan->kept_in_strides[d] * (int64_t)plan->item;
      out += i * plan->kept_out_strides[d] * (int64_t)emu_itemsize(plan->out->dtype);
    }
    accumulator acc = {0};
    walk(plan, in, &acc, accumulate_run);
    if (plan->state->op == VAR || plan->state->op == STD) {
      acc.best = acc.sum / (double)plan->reduction_size;
      acc.sum = 0;
      walk(plan, in, &acc, squares_run);
    }
    store_result(plan, out, &acc);
  }
}

/* Column reduction (sum/mean with the innermost dimension kept, contiguous, and the output
 * contiguous along it): accumulate whole rows of the inner dimension. */
typedef struct column_job {
  const reduce_plan *plan;
  int64_t inner; /* length of the kept innermost dimension */
} column_job;

static void reduce_columns(void *context, int64_t begin, int64_t end) {
  const column_job *job = context;
  const reduce_plan *plan = job->plan;
  const int64_t inner = job->inner;
  double *acc = malloc((size_t)inner * sizeof(double));
  int64_t *iacc = malloc((size_t)inner * sizeof(int64_t));
  if (acc == NULL || iacc == NULL) {
    free(acc);
    free(iacc);
    reduce_outputs((void *)plan, begin * inner, end * inner);
    return;
  }
  const bool floating = emu_is_floating(plan->in->dtype);
  const tb_dtype dt = plan->in->dtype;
  for (int64_t o = begin; o < end; o++) { /* o indexes the outer kept dims */
    const char *in = plan->in->data;
    char *out = plan->out->data;
    int64_t rest = o;
    for (int d = plan->kept_count - 2; d >= 0; d--) {
      int64_t i = rest % plan->kept_sizes[d];
      rest /= plan->kept_sizes[d];
      in += i * plan->kept_in_strides[d] * (int64_t)plan->item;
      out += i * plan->kept_out_strides[d] * (int64_t)emu_itemsize(plan->out->dtype);
    }
    memset(acc, 0, (size_t)inner * sizeof(double));
    memset(iacc, 0, (size_t)inner * sizeof(int64_t));
    int r = plan->reduced_count;
    int64_t index[EMU_MAX_DIMS] = {0};
    for (;;) {
      const char *row = in;
      for (int d = 0; d < r; d++) row += index[d] * plan->reduced_strides[d] * (int64_t)plan->item;
      if (dt == TB_DTYPE_FLOAT32) {
        const float *f = (const float *)row;
        for (int64_t j = 0; j < inner; j++) acc[j] += f[j];
      } else if (floating) {
        for (int64_t j = 0; j < inner; j++)
          acc[j] += emu_load_double(row + j * (int64_t)plan->item, dt);
      } else {
        for (int64_t j = 0; j < inner; j++)
          iacc[j] += emu_load_int(row + j * (int64_t)plan->item, dt);
      }
      int d = r - 1;
      for (; d >= 0; d--) {
        if (++index[d] < plan->reduced_sizes[d]) break;
        index[d] = 0;
      }
      if (d < 0) break;
    }
    size_t out_item = emu_itemsize(plan->out->dtype);
    int64_t out_stride = plan->kept_out_strides[plan->kept_count - 1] * (int64_t)out_item;
    for (int64_t j = 0; j < inner; j++) {
      accumulator a = {.sum = acc[j], .isum = iacc[j]};
      store_result(plan, out + j * out_stride, &a);
    }
  }
  free(acc);
  free(iacc);
}

static void run_reduce(emu_task *task) {
  emu_call *call = emu_call_of(task);
  const reduce_state *state = call->scratch;
  const emu_tensor *in = call->args[0].as.tensor;
  const emu_tensor *out = call->args[call->count - 1].as.tensor;
  reduce_plan plan = {.in = in, .out = out, .state = state, .item = emu_itemsize(in->dtype)};
  /* Output strides per input dimension: keepdim outputs have the input's rank; others drop
   * the reduced dimensions. */
  bool keepdim = out->ndim == in->ndim && in->ndim > 0;
  int out_dim = 0;
  plan.reduction_size = 1;
  for (int d = 0; d < in->ndim; d++) {
    bool reduced = (state->reduced >> d) & 1u;
    if (reduced) {
      plan.reduced_sizes[plan.reduced_count] = in->sizes[d];
      plan.reduced_strides[plan.reduced_count] = in->strides[d];
      plan.reduced_count++;
      plan.reduction_size *= in->sizes[d];
      if (keepdim) out_dim++;
    } else {
      plan.kept_sizes[plan.kept_count] = in->sizes[d];
      plan.kept_in_strides[plan.kept_count] = in->strides[d];
      plan.kept_out_strides[plan.kept_count] = out->ndim > 0 ? out->strides[out_dim] : 0;
      plan.kept_count++;
      out_dim++;
    }
  }
  int64_t outputs = 1;
  for (int k = 0; k < plan.kept_count; k++) outputs *= plan.kept_sizes[k];
  if (outputs == 0) return;
  if (plan.reduction_size == 0) {
    /* Empty reductions: sum 0, any false, all true, mean / var nan (ATen's meta rejects
     * empty amax/argmax). */
    accumulator zero = {0};
    for (int64_t o = 0; o < outputs; o++) {
      char *p = out->data;
      int64_t rest = o;
      for (int d = plan.kept_count - 1; d >= 0; d--) {
        p += (rest % plan.kept_sizes[d]) * plan.kept_out_strides[d] *
             (int64_t)emu_itemsize(out->dtype);
        rest /= plan.kept_sizes[d];
      }
      if (state->op == SUM || state->op == ANY || state->op == ALL) {
        store_result(&plan, p, &zero); /* 0, false, true */
      } else {
        emu_store_double(p, out->dtype, NAN);
      }
    }
    return;
  }
  bool columns = (state->op == SUM || state->op == MEAN) && plan.kept_count > 0 && in->ndim > 0 &&
                 !((state->reduced >> (in->ndim - 1)) & 1u) && in->strides[in->ndim - 1] == 1 &&
                 plan.reduced_count > 0 && plan.kept_sizes[plan.kept_count - 1] >= 8;
  if (columns) {
    column_job job = {&plan, plan.kept_sizes[plan.kept_count - 1]};
    emu_parallel_for(outputs / job.inner, 1, reduce_columns, &job);
    return;
  }
  int64_t grain = plan.reduction_size >= 4096 ? 1 : 4096 / plan.reduction_size;
  emu_parallel_for(outputs, grain, reduce_outputs, &plan);
}

/* Builds the reduced-dimension mask from a dim argument (NONE or empty list: all). */
static tb_status dims_mask(const char *name, const tb_value *dims, int32_t ndim, uint32_t *mask) {
  *mask = 0;
  if (dims->kind == TB_VALUE_NONE ||
      (dims->kind == TB_VALUE_INT_LIST && dims->as.ints.count == 0)) {
    *mask = ndim > 0 ? (uint32_t)((1u << ndim) - 1) : 0;
    return TB_OK;
  }
  int64_t count = dims->kind == TB_VALUE_INT ? 1 : dims->as.ints.count;
  for (int64_t k = 0; k < count; k++) {
    int64_t d = dims->kind == TB_VALUE_INT ? dims->as.i : dims->as.ints.items[k];
    if (d < 0) d += ndim > 0 ? ndim : 1;
    if (d < 0 || d >= (ndim > 0 ? ndim : 1)) {
      return emu_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: dimension %lld out of range", name,
                      (long long)d);
    }
    if (ndim > 0) *mask |= 1u << d;
  }
  return TB_OK;
}

static tb_status enqueue_reduce(const char *name, const char *kinds, int op, int dim_arg,
                                int correction_arg, uint64_t dtypes, tb_stream stream,
                                const tb_value *args, int32_t count) {
  tb_status status = emu_check_args(name, args, count, kinds);
  if (status != TB_OK) return status;
  const tb_tensor *in = args[0].as.tensor;
  if (!(dtypes & TB_DTYPE_BIT(in->dtype))) {
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: dtype %d", name, (int)in->dtype);
  }
  reduce_state state = {.op = op, .correction = 1.0};
  const tb_value all = {.kind = TB_VALUE_NONE};
  status = dims_mask(name, dim_arg >= 0 ? &args[dim_arg] : &all, in->ndim, &state.reduced);
  if (status != TB_OK) return status;
  if (correction_arg >= 0 && args[correction_arg].kind != TB_VALUE_NONE) {
    const tb_value *c = &args[correction_arg];
    state.correction = c->kind == TB_VALUE_DOUBLE ? c->as.f : (double)c->as.i;
  }
  return emu_launch(name, stream, args, count, run_reduce, sizeof state, &state);
}

#define NUMERIC (EMU_FLOATS | EMU_INTS | TB_DTYPE_BIT(TB_DTYPE_BOOL))

/* sum.IntList_out / mean.out: (self, dim?, keepdim, dtype?, out) */
static tb_status kernel_sum(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("sum.IntList_out", "TJbdT", SUM, 1, -1, NUMERIC, s, a, n);
}
static tb_status kernel_mean(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("mean.out", "TJbdT", MEAN, 1, -1, EMU_FLOATS, s, a, n);
}
/* amax.out / amin.out: (self, dim[], keepdim, out) */
static tb_status kernel_amax(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("amax.out", "TIbT", AMAX, 1, -1, EMU_FLOATS | EMU_INTS, s, a, n);
}
static tb_status kernel_amin(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("amin.out", "TIbT", AMIN, 1, -1, EMU_FLOATS | EMU_INTS, s, a, n);
}
/* argmax.out / argmin.out: (self, dim?, keepdim, out) */
static tb_status kernel_argmax(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("argmax.out", "T?bT", ARGMAX, 1, -1, EMU_FLOATS | EMU_INTS, s, a, n);
}
static tb_status kernel_argmin(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("argmin.out", "T?bT", ARGMIN, 1, -1, EMU_FLOATS | EMU_INTS, s, a, n);
}
/* var.correction_out / std.correction_out: (self, dim?, correction?, keepdim, out) */
static tb_status kernel_var(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("var.correction_out", "TJNbT", VAR, 1, 2, EMU_FLOATS, s, a, n);
}
static tb_status kernel_std(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("std.correction_out", "TJNbT", STD, 1, 2, EMU_FLOATS, s, a, n);
}

/* any / all: .all_out (self, out), .out (self, dim, keepdim, out), .dims_out (self, dim?,
 * keepdim, out); the output is bool (uint8 for uint8 input, as ATen decides) */
#define LOGICAL_REDUCTION(ID, OP, NAME)                                            \
  static tb_status kernel_##ID##_all(tb_stream s, const tb_value *a, int32_t n) {  \
    return enqueue_reduce(NAME ".all_out", "TT", OP, -1, -1, NUMERIC, s, a, n);    \
  }                                                                                \
  static tb_status kernel_##ID##_dim(tb_stream s, const tb_value *a, int32_t n) {  \
    return enqueue_reduce(NAME ".out", "TibT", OP, 1, -1, NUMERIC, s, a, n);       \
  }                                                                                \
  static tb_status kernel_##ID##_dims(tb_stream s, const tb_value *a, int32_t n) { \
    return enqueue_reduce(NAME ".dims_out", "TJbT", OP, 1, -1, NUMERIC, s, a, n);  \
  }                                                                                \
  EMU_KERNEL(k_##ID##_all, NAME ".all_out", kernel_##ID##_all, NUMERIC);           \
  EMU_KERNEL(k_##ID##_dim, NAME ".out", kernel_##ID##_dim, NUMERIC);               \
  EMU_KERNEL(k_##ID##_dims, NAME ".dims_out", kernel_##ID##_dims, NUMERIC);
LOGICAL_REDUCTION(any, ANY, "any")
LOGICAL_REDUCTION(all, ALL, "all")

EMU_KERNEL(k_sum, "sum.IntList_out", kernel_sum, NUMERIC);
EMU_KERNEL(k_mean, "mean.out", kernel_mean, EMU_FLOATS);
EMU_KERNEL(k_amax, "amax.out", kernel_amax, EMU_FLOATS | EMU_INTS);
EMU_KERNEL(k_amin, "amin.out", kernel_amin, EMU_FLOATS | EMU_INTS);
EMU_KERNEL(k_argmax, "argmax.out", kernel_argmax, EMU_FLOATS | EMU_INTS);
EMU_KERNEL(k_argmin, "argmin.out", kernel_argmin, EMU_FLOATS | EMU_INTS);
EMU_KERNEL(k_var, "var.correction_out", kernel_var, EMU_FLOATS);
EMU_KERNEL(k_std, "std.correction_out", kernel_std, EMU_FLOATS);

const tb_kernel *const emu_reduce_kernels[] = {
    &k_sum,     &k_mean,    &k_amax,     &k_amin,    &k_argmax,  &k_argmin,   &k_var, &k_std,
    &k_any_all, &k_any_dim, &k_any_dims, &k_all_all, &k_all_dim, &k_all_dims, NULL};
