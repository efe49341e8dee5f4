/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Reductions over a set of dimensions: sum, prod, mean, amax, amin, argmax, argmin, var, std,
 * any, all, max / min (over everything, or over one dimension with the index), vector norms;
 * and beside them the other reductions along vectors: cumsum, cumprod and dot.
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

/* MAX_DIM / MIN_DIM: the extreme and its index (max.dim_max); NORM: a vector norm. */
enum reduce_op {
  SUM,
  PROD,
  MEAN,
  AMAX,
  AMIN,
  ARGMAX,
  ARGMIN,
  VAR,
  STD,
  ANY,
  ALL,
  MAX_DIM,
  MIN_DIM,
  NORM
};

static inline bool is_max(int op) { return op == AMAX || op == ARGMAX || op == MAX_DIM; }

typedef struct reduce_state {
  int op;
  double correction; /* var/std */
  double ord;        /* NORM */
  uint32_t reduced;  /* bit d: input dimension d is reduced */
  int outputs;       /* 2 for MAX_DIM / MIN_DIM (values, indices), else 1 */
} reduce_state;

typedef struct reduce_plan {
  const emu_tensor *in, *out, *indices; /* indices: the second output of MAX_DIM / MIN_DIM */
  const reduce_state *state;
  int kept_count, reduced_count;
  int64_t kept_sizes[EMU_MAX_DIMS], kept_in_strides[EMU_MAX_DIMS], kept_out_strides[EMU_MAX_DIMS];
  int64_t kept_index_strides[EMU_MAX_DIMS];
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

/* Vector norms: sum |x|^ord (sum of squares for 2, of magnitudes for 1, count of nonzeros for
 * 0) or the largest / smallest magnitude for +-inf, NaN propagating as on PyTorch's CPU. */
static void norm_run(double ord, accumulator *acc, const char *p, int64_t n, int64_t stride,
                     tb_dtype dt) {
  if (ord == 2 && dt == TB_DTYPE_FLOAT32 && stride == 4) {
    const float *f = (const float *)p;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      s0 += (double)f[i] * f[i];
      s1 += (double)f[i + 1] * f[i + 1];
      s2 += (double)f[i + 2] * f[i + 2];
      s3 += (double)f[i + 3] * f[i + 3];
    }
    for (; i < n; i++) s0 += (double)f[i] * f[i];
    acc->sum += (s0 + s1) + (s2 + s3);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    double v = fabs(emu_load_double(p + i * stride, dt));
    if (ord == 2) {
      acc->sum += v * v;
    } else if (ord == 1) {
      acc->sum += v;
    } else if (ord == 0) {
      acc->sum += v != 0;
    } else if (isinf(ord)) {
      if (acc->nan) continue;
      if (is_nan(v)) {
        acc->nan = true;
        acc->best = v;
      } else if (acc->count == 0 || (ord > 0 ? v > acc->best : v < acc->best)) {
        acc->best = v;
      }
      acc->count++;
    } else {
      acc->sum += pow(v, ord);
    }
  }
}

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
  if (op == PROD) { /* integers wrap in int64, as the CPU's do */
    if (emu_is_floating(dt)) {
      for (int64_t i = 0; i < n; i++) acc->sum *= emu_load_double(p + i * stride, dt);
    } else {
      for (int64_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)emu_load_int(p + i * stride, dt);
        acc->isum = (int64_t)((uint64_t)acc->isum * v);
      }
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
  if (op == NORM) {
    norm_run(plan->state->ord, acc, p, n, stride, dt);
    return;
  }
  if (!emu_is_floating(dt)) { /* exact int64 comparisons: doubles lose bits above 2^53 */
    for (int64_t i = 0; i < n; i++) {
      int64_t v = emu_load_int(p + i * stride, dt);
      bool better = acc->count == 0 || (is_max(op) ? v > acc->ibest : v < acc->ibest);
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
    } else if (is_max(op)) {
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

static void store_result(const reduce_plan *plan, char *out, char *index_out, accumulator *acc) {
  const int op = plan->state->op;
  const tb_dtype od = plan->out->dtype;
  const int64_t n = plan->reduction_size;
  switch (op) {
    case SUM:
    case PROD:
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
    case MAX_DIM:
    case MIN_DIM:
      if (emu_is_floating(plan->in->dtype)) {
        emu_store_double(out, od, acc->best);
      } else {
        emu_store_int(out, od, acc->ibest);
      }
      emu_store_int(index_out, plan->indices->dtype, acc->best_index);
      break;
    case NORM: {
      double ord = plan->state->ord;
      emu_store_double(out, od,
                       isinf(ord) ? acc->best
                       : ord == 2 ? sqrt(acc->sum)
                       : ord == 1 ? acc->sum
                       : ord == 0 ? acc->sum
                                  : pow(acc->sum, 1.0 / ord));
      break;
    }
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
    char *index_out = plan->indices ? plan->indices->data : NULL;
    int64_t rest = o;
    for (int d = plan->kept_count - 1; d >= 0; d--) {
      int64_t i = rest % plan->kept_sizes[d];
      rest /= plan->kept_sizes[d];
      in += i * plan->kept_in_strides[d] * (int64_t)plan->item;
      out += i * plan->kept_out_strides[d] * (int64_t)emu_itemsize(plan->out->dtype);
      if (index_out) {
        index_out += i * plan->kept_index_strides[d] * (int64_t)emu_itemsize(plan->indices->dtype);
      }
    }
    accumulator acc = {0};
    if (plan->state->op == PROD) acc.sum = 1, acc.isum = 1;
    walk(plan, in, &acc, accumulate_run);
    if (plan->state->op == VAR || plan->state->op == STD) {
      acc.best = acc.sum / (double)plan->reduction_size;
      acc.sum = 0;
      walk(plan, in, &acc, squares_run);
    }
    store_result(plan, out, index_out, &acc);
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
      store_result(plan, out + j * out_stride, NULL, &a);
    }
  }
  free(acc);
  free(iacc);
}

static void run_reduce(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const reduce_state *state = call->scratch;
  const emu_tensor *in = call->args[0].as.tensor;
  const emu_tensor *out = call->args[call->count - state->outputs].as.tensor;
  const emu_tensor *indices = state->outputs == 2 ? call->args[call->count - 1].as.tensor : NULL;
  reduce_plan plan = {
      .in = in, .out = out, .indices = indices, .state = state, .item = emu_itemsize(in->dtype)};
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
      plan.kept_index_strides[plan.kept_count] =
          indices && indices->ndim > 0 ? indices->strides[out_dim] : 0;
      plan.kept_count++;
      out_dim++;
    }
  }
  int64_t outputs = 1;
  for (int k = 0; k < plan.kept_count; k++) outputs *= plan.kept_sizes[k];
  if (outputs == 0) return;
  if (plan.reduction_size == 0) {
    /* Empty reductions: sum 0, prod 1, any false, all true, norms 0, mean / var nan (ATen's
     * meta rejects empty amax/argmax/max, and the infinity norms of nothing). */
    accumulator zero = {0};
    if (state->op == PROD) zero.sum = 1, zero.isum = 1;
    for (int64_t o = 0; o < outputs; o++) {
      char *p = out->data;
      int64_t rest = o;
      for (int d = plan.kept_count - 1; d >= 0; d--) {
        p += (rest % plan.kept_sizes[d]) * plan.kept_out_strides[d] *
             (int64_t)emu_itemsize(out->dtype);
        rest /= plan.kept_sizes[d];
      }
      if (state->op == SUM || state->op == PROD || state->op == ANY || state->op == ALL ||
          state->op == NORM) {
        store_result(&plan, p, NULL, &zero); /* 0, 1, false, true, 0 */
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
      return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: dimension %lld out of range", name,
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
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: dtype %d", name, (int)in->dtype);
  }
  reduce_state state = {.op = op, .correction = 1.0, .outputs = 1};
  const tb_value all = {.kind = TB_VALUE_NONE};
  status = dims_mask(name, dim_arg >= 0 ? &args[dim_arg] : &all, in->ndim, &state.reduced);
  if (status != TB_OK) return status;
  if (correction_arg >= 0 && args[correction_arg].kind != TB_VALUE_NONE) {
    const tb_value *c = &args[correction_arg];
    state.correction = c->kind == TB_VALUE_DOUBLE ? c->as.f : (double)c->as.i;
  }
  if (op == MAX_DIM || op == MIN_DIM) state.outputs = 2;
  if (op == NORM) {
    const tb_tensor *out = args[count - 1].as.tensor;
    bool wider = out->dtype == in->dtype || out->dtype == TB_DTYPE_FLOAT64 ||
                 (out->dtype == TB_DTYPE_FLOAT32 && emu_itemsize(in->dtype) == 2);
    if (!wider) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: result dtype %d narrower than input's",
                      name, (int)out->dtype);
    }
    state.ord = args[1].kind == TB_VALUE_DOUBLE ? args[1].as.f
                : args[1].kind == TB_VALUE_INT  ? (double)args[1].as.i
                : args[1].kind == TB_VALUE_BOOL ? (double)args[1].as.b
                                                : 2.0; /* norm.out's p=None */
    /* Over single elements ATen returns |x| (x != 0 for ord 0), not (|x|^p)^(1/p). */
    int64_t size = 1;
    for (int32_t d = 0; d < in->ndim; d++) {
      if ((state.reduced >> d) & 1u) size *= in->sizes[d];
    }
    if (size == 1) state.ord = state.ord == 0 ? 0 : 1;
  }
  return emu_launch(name, stream, args, count, run_reduce, sizeof state, &state);
}

#define NUMERIC (EMU_FLOATS | EMU_INTS | TB_DTYPE_BIT(TB_DTYPE_BOOL))

/* max.unary_out / min.unary_out: (self, out), over every element; an empty self is declined
 * (ATen raises, its meta function does not) */
static bool is_empty(const tb_value *a, int32_t n) {
  if (n < 1 || a[0].kind != TB_VALUE_TENSOR) return false;
  for (int32_t d = 0; d < a[0].as.tensor->ndim; d++) {
    if (a[0].as.tensor->sizes[d] == 0) return true;
  }
  return false;
}
static tb_status kernel_max(tb_stream s, const tb_value *a, int32_t n) {
  if (is_empty(a, n)) return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: max.unary_out: empty");
  return enqueue_reduce("max.unary_out", "TT", AMAX, -1, -1, NUMERIC, s, a, n);
}
static tb_status kernel_min(tb_stream s, const tb_value *a, int32_t n) {
  if (is_empty(a, n)) return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: min.unary_out: empty");
  return enqueue_reduce("min.unary_out", "TT", AMIN, -1, -1, NUMERIC, s, a, n);
}
/* max.dim_max / min.dim_min: (self, dim, keepdim, values, indices); ties and NaN as the CPU:
 * the first extreme, the first NaN */
static tb_status kernel_max_dim(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("max.dim_max", "TibTT", MAX_DIM, 1, -1, NUMERIC, s, a, n);
}
static tb_status kernel_min_dim(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("min.dim_min", "TibTT", MIN_DIM, 1, -1, NUMERIC, s, a, n);
}
/* linalg_vector_norm.out: (self, ord, dim?, keepdim, dtype?, out) */
static tb_status kernel_vector_norm(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("linalg_vector_norm.out", "TnJbdT", NORM, 2, -1, EMU_FLOATS, s, a, n);
}
/* norm.out / norm.dtype_out: (self, p?, dim[], keepdim, [dtype,] out), which ATen computes as
 * linalg_vector_norm with p 2 by default */
static tb_status kernel_norm(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("norm.out", "TNIbT", NORM, 2, -1, EMU_FLOATS, s, a, n);
}
static tb_status kernel_norm_dtype(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("norm.dtype_out", "TNIbdT", NORM, 2, -1, EMU_FLOATS, s, a, n);
}

/* sum.IntList_out / mean.out: (self, dim?, keepdim, dtype?, out) */
static tb_status kernel_sum(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("sum.IntList_out", "TJbdT", SUM, 1, -1, NUMERIC, s, a, n);
}
/* prod.int_out: (self, dim, keepdim, dtype?, out) */
static tb_status kernel_prod(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_reduce("prod.int_out", "TibdT", PROD, 1, -1, NUMERIC, s, a, n);
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
/* aminmax.out: (self, dim?, keepdim, min, max): amin into min, then amax into max, two
 * launches (multinomial checks its probabilities with it) */
static tb_status kernel_aminmax(tb_stream s, const tb_value *a, int32_t n) {
  tb_status status = emu_check_args("aminmax.out", a, n, "T?bTT");
  if (status != TB_OK) return status;
  const tb_value min_args[4] = {a[0], a[1], a[2], a[3]}, max_args[4] = {a[0], a[1], a[2], a[4]};
  const uint64_t dtypes = EMU_FLOATS | EMU_INTS;
  status = enqueue_reduce("aminmax.out", "T?bT", AMIN, 1, -1, dtypes, s, min_args, 4);
  return status != TB_OK
             ? status
             : enqueue_reduce("aminmax.out", "T?bT", AMAX, 1, -1, dtypes, s, max_args, 4);
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
#define LOGICAL_REDUCTION(ID, OP, NAME, ALL_SCHEMA, DIM_SCHEMA, DIMS_SCHEMA)         \
  static tb_status kernel_##ID##_all(tb_stream s, const tb_value *a, int32_t n) {    \
    return enqueue_reduce(NAME ".all_out", "TT", OP, -1, -1, NUMERIC, s, a, n);      \
  }                                                                                  \
  static tb_status kernel_##ID##_dim(tb_stream s, const tb_value *a, int32_t n) {    \
    return enqueue_reduce(NAME ".out", "TibT", OP, 1, -1, NUMERIC, s, a, n);         \
  }                                                                                  \
  static tb_status kernel_##ID##_dims(tb_stream s, const tb_value *a, int32_t n) {   \
    return enqueue_reduce(NAME ".dims_out", "TJbT", OP, 1, -1, NUMERIC, s, a, n);    \
  }                                                                                  \
  EMU_KERNEL(k_##ID##_all, NAME ".all_out", kernel_##ID##_all, NUMERIC, ALL_SCHEMA); \
  EMU_KERNEL(k_##ID##_dim, NAME ".out", kernel_##ID##_dim, NUMERIC, DIM_SCHEMA);     \
  EMU_KERNEL(k_##ID##_dims, NAME ".dims_out", kernel_##ID##_dims, NUMERIC, DIMS_SCHEMA);
LOGICAL_REDUCTION(
    any, ANY, "any", "any.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "any.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
    "any.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> "
    "Tensor(a!)")
LOGICAL_REDUCTION(
    all, ALL, "all", "all.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "all.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
    "all.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> "
    "Tensor(a!)")

/* ---- cumsum.out, cumprod.out: (self, dim, dtype?, out) ----
 * As ATen: the input converted to the output's dtype, then summed (multiplied) along the
 * dimension in the CPU's accumulation type (double for float32 and float64, float for float16
 * and bfloat16, int64 for integers, which wrap), every partial result stored. */

typedef struct scan_plan {
  const emu_tensor *in, *out;
  int dim; /* -1: a 0-dim tensor */
  int64_t length;
  bool product;
} scan_plan;

/* `v` rounded to dtype `d`, as a conversion to it would. */
static double round_to(tb_dtype d, double v) {
  char element[8];
  emu_store_double(element, d, v);
  return emu_load_double(element, d);
}

static void scan_lines(void *context, int64_t begin, int64_t end) {
  const scan_plan *plan = context;
  const emu_tensor *in = plan->in, *out = plan->out;
  const tb_dtype id = in->dtype, od = out->dtype;
  const int64_t is = emu_itemsize(id), os = emu_itemsize(od), n = plan->length;
  const int64_t in_step = plan->dim >= 0 ? in->strides[plan->dim] * is : 0;
  const int64_t out_step = plan->dim >= 0 ? out->strides[plan->dim] * os : 0;
  for (int64_t line = begin; line < end; line++) {
    const char *src = in->data;
    char *dst = out->data;
    int64_t rest = line;
    for (int d = in->ndim - 1; d >= 0; d--) {
      if (d == plan->dim) continue;
      int64_t i = rest % in->sizes[d];
      rest /= in->sizes[d];
      src += i * in->strides[d] * is;
      dst += i * out->strides[d] * os;
    }
    const bool product = plan->product;
    if (id == TB_DTYPE_FLOAT32 && od == TB_DTYPE_FLOAT32 && !product) {
      double acc = 0;
      for (int64_t k = 0; k < n; k++) {
        acc += *(const float *)(src + k * in_step);
        *(float *)(dst + k * out_step) = (float)acc;
      }
    } else if (od == TB_DTYPE_FLOAT32 || od == TB_DTYPE_FLOAT64) {
      double acc = product ? 1 : 0;
      for (int64_t k = 0; k < n; k++) {
        double v = emu_load_double(src + k * in_step, id);
        v = id == od ? v : round_to(od, v);
        acc = product ? acc * v : acc + v;
        emu_store_double(dst + k * out_step, od, acc);
      }
    } else if (emu_is_floating(od)) {
      float acc = product ? 1 : 0;
      for (int64_t k = 0; k < n; k++) {
        float v = (float)round_to(od, emu_load_double(src + k * in_step, id));
        acc = product ? acc * v : acc + v;
        emu_store_double(dst + k * out_step, od, acc);
      }
    } else { /* integers: int64 results wrap like the output's narrower ones */
      uint64_t acc = product ? 1 : 0;
      for (int64_t k = 0; k < n; k++) {
        uint64_t v = (uint64_t)emu_load_int(src + k * in_step, id);
        acc = product ? acc * v : acc + v;
        emu_store_int(dst + k * out_step, od, (int64_t)acc);
      }
    }
  }
}

static void run_scan(tbk_task *task, bool product) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *in = call->args[0].as.tensor, *out = call->args[3].as.tensor;
  if (out->numel == 0) return;
  scan_plan plan = {.in = in, .out = out, .dim = -1, .length = 1, .product = product};
  if (in->ndim > 0) {
    int64_t dim = call->args[1].as.i;
    plan.dim = (int)(dim < 0 ? dim + in->ndim : dim);
    plan.length = in->sizes[plan.dim];
  }
  int64_t lines = in->numel / plan.length;
  emu_parallel_for(lines, plan.length >= 4096 ? 1 : 4096 / plan.length, scan_lines, &plan);
}

static void run_cumsum(tbk_task *task) { run_scan(task, false); }
static void run_cumprod(tbk_task *task) { run_scan(task, true); }

static tb_status enqueue_scan(const char *name, tbk_task_fn run, tb_stream stream,
                              const tb_value *args, int32_t count) {
  tb_status status = emu_check_args(name, args, count, "TidT");
  if (status != TB_OK) return status;
  const tb_tensor *in = args[0].as.tensor, *out = args[3].as.tensor;
  int32_t rank = in->ndim > 0 ? in->ndim : 1;
  bool shaped = out->ndim == in->ndim;
  for (int32_t d = 0; shaped && d < in->ndim; d++) shaped = out->sizes[d] == in->sizes[d];
  if (!shaped || out->dtype == TB_DTYPE_BOOL || args[1].as.i < -rank || args[1].as.i >= rank) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: shapes, dimension or bool output", name);
  }
  return emu_launch(name, stream, args, count, run, 0, NULL);
}
static tb_status kernel_cumsum(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_scan("cumsum.out", run_cumsum, stream, args, count);
}
static tb_status kernel_cumprod(tb_stream stream, const tb_value *args, int32_t count) {
  return enqueue_scan("cumprod.out", run_cumprod, stream, args, count);
}

/* ---- dot.out / vdot.out (real vectors): (self, other, out) ----
 * Sums in double (floating) or int64 (integers, which wrap like the output), in fixed blocks
 * split over the pool and added in order, so the result does not depend on the threads. */

enum { DOT_BLOCK = 1 << 15 };

typedef struct dot_job {
  const emu_tensor *a, *b;
  double *sums;
  int64_t *isums;
} dot_job;

static void dot_blocks(void *context, int64_t begin, int64_t end) {
  const dot_job *job = context;
  const emu_tensor *a = job->a, *b = job->b;
  const tb_dtype dt = a->dtype;
  const int64_t item = emu_itemsize(dt), sa = a->strides[0] * item, sb = b->strides[0] * item;
  for (int64_t block = begin; block < end; block++) {
    int64_t first = block * DOT_BLOCK;
    int64_t n = a->numel - first < DOT_BLOCK ? a->numel - first : DOT_BLOCK;
    const char *pa = a->data + first * sa, *pb = b->data + first * sb;
    if (dt == TB_DTYPE_FLOAT32 && sa == 4 && sb == 4) {
      const float *x = (const float *)pa, *y = (const float *)pb;
      double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      int64_t i = 0;
      for (; i + 4 <= n; i += 4) {
        s0 += (double)x[i] * y[i];
        s1 += (double)x[i + 1] * y[i + 1];
        s2 += (double)x[i + 2] * y[i + 2];
        s3 += (double)x[i + 3] * y[i + 3];
      }
      for (; i < n; i++) s0 += (double)x[i] * y[i];
      job->sums[block] = (s0 + s1) + (s2 + s3);
    } else if (emu_is_floating(dt)) {
      double sum = 0;
      for (int64_t i = 0; i < n; i++) {
        sum += emu_load_double(pa + i * sa, dt) * emu_load_double(pb + i * sb, dt);
      }
      job->sums[block] = sum;
    } else {
      int64_t sum = 0;
      for (int64_t i = 0; i < n; i++) {
        sum += emu_load_int(pa + i * sa, dt) * emu_load_int(pb + i * sb, dt);
      }
      job->isums[block] = sum;
    }
  }
}

static void run_dot(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_tensor *a = call->args[0].as.tensor, *b = call->args[1].as.tensor;
  const emu_tensor *out = call->args[2].as.tensor;
  int64_t blocks = (a->numel + DOT_BLOCK - 1) / DOT_BLOCK;
  double single;
  int64_t isingle;
  dot_job job = {a, b, &single, &isingle};
  if (blocks > 1) {
    job.sums = malloc((size_t)blocks * sizeof(double));
    job.isums = malloc((size_t)blocks * sizeof(int64_t));
    if (job.sums == NULL || job.isums == NULL) {
      free(job.sums);
      free(job.isums);
      tbk_task_fail(task, "dot: out of host memory");
      return;
    }
  }
  double sum = 0;
  int64_t isum = 0;
  if (blocks > 0) {
    emu_parallel_for(blocks, 1, dot_blocks, &job);
    for (int64_t k = 0; k < blocks; k++) {
      if (emu_is_floating(a->dtype)) {
        sum += job.sums[k];
      } else {
        isum += job.isums[k];
      }
    }
  }
  if (emu_is_floating(a->dtype)) {
    emu_store_double(out->data, out->dtype, sum);
  } else {
    emu_store_int(out->data, out->dtype, isum);
  }
  if (blocks > 1) {
    free(job.sums);
    free(job.isums);
  }
}

static tb_status enqueue_dot(const char *name, tb_stream stream, const tb_value *args,
                             int32_t count) {
  tb_status status = emu_check_args(name, args, count, "TTT");
  if (status != TB_OK) return status;
  const tb_tensor *a = args[0].as.tensor, *b = args[1].as.tensor, *out = args[2].as.tensor;
  if (a->ndim != 1 || b->ndim != 1 || a->sizes[0] != b->sizes[0] || a->dtype != b->dtype ||
      out->dtype != a->dtype || out->ndim != 0 || a->dtype == TB_DTYPE_BOOL) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: needs ATen's checks", name);
  }
  return emu_launch(name, stream, args, count, run_dot, 0, NULL);
}
static tb_status kernel_dot(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_dot("dot.out", s, a, n);
}
static tb_status kernel_vdot(tb_stream s, const tb_value *a, int32_t n) {
  return enqueue_dot("vdot.out", s, a, n); /* real vectors: vdot is dot */
}

EMU_KERNEL(
    k_cumsum, "cumsum.out", kernel_cumsum, NUMERIC,
    "cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(
    k_cumprod, "cumprod.out", kernel_cumprod, NUMERIC,
    "cumprod.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_prod, "prod.int_out", kernel_prod, NUMERIC,
           "prod.int_out(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None, "
           "Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_dot, "dot.out", kernel_dot, EMU_FLOATS | EMU_INTS,
           "dot.out(Tensor self, Tensor tensor, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_vdot, "vdot.out", kernel_vdot, EMU_FLOATS | EMU_INTS,
           "vdot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_sum, "sum.IntList_out", kernel_sum, NUMERIC,
           "sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
           "dtype=None, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_mean, "mean.out", kernel_mean, EMU_FLOATS,
           "mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
           "Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(
    k_amax, "amax.out", kernel_amax, EMU_FLOATS | EMU_INTS,
    "amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(
    k_amin, "amin.out", kernel_amin, EMU_FLOATS | EMU_INTS,
    "amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_aminmax, "aminmax.out", kernel_aminmax, EMU_FLOATS | EMU_INTS,
           "aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, "
           "Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!) max)");
EMU_KERNEL(
    k_argmax, "argmax.out", kernel_argmax, EMU_FLOATS | EMU_INTS,
    "argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(
    k_argmin, "argmin.out", kernel_argmin, EMU_FLOATS | EMU_INTS,
    "argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_var, "var.correction_out", kernel_var, EMU_FLOATS,
           "var.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
           "keepdim=False, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_std, "std.correction_out", kernel_std, EMU_FLOATS,
           "std.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
           "keepdim=False, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_max, "max.unary_out", kernel_max, NUMERIC,
           "max.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_min, "min.unary_out", kernel_min, NUMERIC,
           "min.unary_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_max_dim, "max.dim_max", kernel_max_dim, NUMERIC,
           "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) "
           "max_values) -> (Tensor(a!) values, Tensor(b!) indices)");
EMU_KERNEL(k_min_dim, "min.dim_min", kernel_min_dim, NUMERIC,
           "min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min, Tensor(b!) "
           "min_indices) -> (Tensor(a!) values, Tensor(b!) indices)");
EMU_KERNEL(k_vector_norm, "linalg_vector_norm.out", kernel_vector_norm, EMU_FLOATS,
           "linalg_vector_norm.out(Tensor self, Scalar ord=2, int[1]? dim=None, bool "
           "keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)");
EMU_KERNEL(k_norm, "norm.out", kernel_norm, EMU_FLOATS,
           "norm.out(Tensor self, Scalar? p, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> "
           "Tensor(a!)");
EMU_KERNEL(k_norm_dtype, "norm.dtype_out", kernel_norm_dtype, EMU_FLOATS,
           "norm.dtype_out(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype, "
           "Tensor(a!) out) -> Tensor(a!)");

const tb_kernel *const emu_reduce_kernels[] = {
    &k_sum,    &k_mean,    &k_amax,    &k_amin,     &k_argmax,      &k_argmin,  &k_var,
    &k_std,    &k_any_all, &k_any_dim, &k_any_dims, &k_all_all,     &k_all_dim, &k_all_dims,
    &k_max,    &k_min,     &k_max_dim, &k_min_dim,  &k_vector_norm, &k_norm,    &k_norm_dtype,
    &k_cumsum, &k_dot,     &k_vdot,    &k_aminmax,  &k_cumprod,     &k_prod,    NULL};
