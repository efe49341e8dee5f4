/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Row kernels: one work-group of WG work-items per output row -- the elements of the input
 * that one output element (a reduction) or one output row (softmax) depends on.  The host
 * (kernels/reduce.c) compiles this file once per operation, dtypes and WG, prefixing:
 *
 *   T_OUT, T0, T1   storage types of the output and the inputs
 *   ACC             the accumulator type (float, double or long)
 *   WG              work-items per group, a power of two
 *   INIT, COMBINE(a, b), FINAL(a)   the reduction (tb_reduce; FINAL may use `scale`)
 *   PRE(v)          an element's contribution, from its stored value (default: v itself)
 *   PRE2(a, b)      tb_reduce2's contribution of the two inputs' elements (in the ACC type)
 *   LOG             defined for log_softmax (tb_softmax, tb_softmax_backward)
 *
 * The layout (reduce.c's ocl_rows, the same bytes): the kept dimensions enumerate the rows,
 * the row dimensions the elements of a row, each with strides per operand (0: the output,
 * 1 and 2: the inputs), in elements.
 */
typedef struct tb_rows {
  int kept_ndim;
  int row_ndim;
  long rows;
  long row_length;
  long kept_sizes[8];
  long kept_strides[3][8];
  long row_sizes[8];
  long row_strides[3][8];
} tb_rows;

#ifndef INIT
#define INIT 0
#define COMBINE(a, b) ((a) + (b))
#define FINAL(a) (a)
#endif
#ifndef PRE
#define PRE(v) (v)
#endif

/* Adds to off0..off2 the offsets of element `index` of an ndim-dimensional index space with
 * `sizes` and per-operand `strides`.  One dimension, the common case, takes no division
 * (integer division does not vectorize). */
#define ROW_OFFSETS(ndim, sizes, strides, index, off0, off1, off2) \
  do {                                                            \
    long rest_ = (index);                                         \
    if ((ndim) == 1) {                                            \
      off0 += rest_ * (strides)[0][0];                            \
      off1 += rest_ * (strides)[1][0];                            \
      off2 += rest_ * (strides)[2][0];                            \
      break;                                                      \
    }                                                             \
    for (int d_ = (ndim) - 1; d_ >= 0; d_--) {                    \
      long c_ = rest_ % (sizes)[d_];                              \
      rest_ /= (sizes)[d_];                                       \
      off0 += c_ * (strides)[0][d_];                              \
      off1 += c_ * (strides)[1][d_];                              \
      off2 += c_ * (strides)[2][d_];                              \
    }                                                             \
  } while (0)

/* The offsets of row `row` for each operand. */
#define ROW_BASE(L, row, base0, base1, base2) \
  ROW_OFFSETS((L).kept_ndim, (L).kept_sizes, (L).kept_strides, row, base0, base1, base2)

/* The offsets of element `e` of a row, for each operand. */
#define ROW_ELEMENT(L, e, off0, off1, off2) \
  ROW_OFFSETS((L).row_ndim, (L).row_sizes, (L).row_strides, e, off0, off1, off2)

#if WG == 1
/* One work-item per row (CPU drivers, see ocl_row_group): the launch groups neighbouring rows
 * (ocl_rows_per_group) so that the driver runs their work-items side by side in vector lanes,
 * and nothing is combined across work-items: no local memory, no barriers. */
#define ROW_START(row, lid)  \
  long row = get_global_id(0); \
  const int lid = 0
#define GROUP_SCRATCH(partial) /* none */
#define GROUP_COMBINE(partial, lid, combine) \
  do {                                       \
  } while (0)
#define GROUP_REDUCE(partial, lid, value, combine) \
  do {                                             \
  } while (0)
#else
/* One work-group per row: its WG work-items stride through the row and combine their partial
 * values in local memory. */
#define ROW_START(row, lid)   \
  long row = get_group_id(0); \
  const int lid = get_local_id(0)
#define GROUP_SCRATCH(partial) __local ACC partial[WG]
/* Combines the group's partial values in `partial` (every work-item's in partial[lid]); the
 * result is in partial[0] for all. */
#define GROUP_COMBINE(partial, lid, combine)            \
  do {                                                  \
    barrier(CLK_LOCAL_MEM_FENCE);                       \
    for (int s_ = WG / 2; s_ > 0; s_ >>= 1) {           \
      if ((lid) < s_) partial[lid] = combine(partial[lid], partial[(lid) + s_]); \
      barrier(CLK_LOCAL_MEM_FENCE);                     \
    }                                                   \
  } while (0)
/* Replaces each work-item's `value` with the group's combination of them. */
#define GROUP_REDUCE(partial, lid, value, combine) \
  do {                                             \
    partial[lid] = (value);                        \
    GROUP_COMBINE(partial, lid, combine);          \
    (value) = partial[0];                          \
    barrier(CLK_LOCAL_MEM_FENCE);                  \
  } while (0)
#endif

#define ADD(a, b) ((a) + (b))
#define MAXF(a, b) (((a) > (b) || isnan(a)) ? (a) : (b))

#if WG == 1
/* Rows contiguous in their operands are read in vectors of 8 where the operands are of the ACC
 * type: a CPU driver runs vector arithmetic and built-ins (exp) in vector lanes, where it runs
 * a work-item's loop over its row one element at a time. */
#define CAT8_(t) t##8
#define CAT8(t) CAT8_(t)
#define ACC8 CAT8(ACC)
#define CONTIGUOUS_ROWS(L, operands) \
  ((L).row_ndim == 1 && (L).row_strides[0][0] == 1 && (L).row_strides[1][0] == 1 && \
   ((operands) < 3 || (L).row_strides[2][0] == 1))
/* NaN-propagating max of vectors, as MAXF: a NaN in either wins. */
#define VMAX(a, b) select((a), (b), isgreater((b), (a)) | isnan(b))

/* The sum of a vector's lanes, in pairs. */
static ACC vsum_lanes(ACC8 v) {
  return ((v.s0 + v.s1) + (v.s2 + v.s3)) + ((v.s4 + v.s5) + (v.s6 + v.s7));
}

#endif

/* out[row] = FINAL(COMBINE over the row of in0) */
__kernel void tb_reduce(OCL_PTR(T_OUT, out), OCL_PTR(T0, in0), tb_rows L, ACC scale) {
  GROUP_SCRATCH(partial);
  ROW_START(row, lid);
  long b0 = 0, b1 = 0, b2 = 0;
  ROW_BASE(L, row, b0, b1, b2);
  ACC acc = INIT;
#if WG == 1 && defined(VEC_IN0)
  if (L.row_ndim == 1 && L.row_strides[1][0] == 1) {
    __global const T0 *x = OCL_AT(T0, in0) + b1;
    long n8 = L.row_length & ~7L, e = 0;
    ACC8 acc8 = (ACC8)(INIT);
    for (; e < n8; e += 8) acc8 = COMBINE(acc8, PRE(vload8(0, x + e)));
    acc = COMBINE(acc, acc8.s0), acc = COMBINE(acc, acc8.s1), acc = COMBINE(acc, acc8.s2);
    acc = COMBINE(acc, acc8.s3), acc = COMBINE(acc, acc8.s4), acc = COMBINE(acc, acc8.s5);
    acc = COMBINE(acc, acc8.s6), acc = COMBINE(acc, acc8.s7);
    for (; e < L.row_length; e++) acc = COMBINE(acc, PRE(x[e]));
    OCL_AT(T_OUT, out)[b0] = (T_OUT)(FINAL(acc));
    return;
  }
#endif
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = 0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    ACC x = (ACC)(PRE(OCL_AT(T0, in0)[o1]));
    acc = COMBINE(acc, x);
  }
  GROUP_REDUCE(partial, lid, acc, COMBINE);
  if (lid == 0) OCL_AT(T_OUT, out)[b0] = (T_OUT)(FINAL(acc));
}

#ifdef SCAN
#ifndef SCAN_INIT /* cumsum; cumprod defines its own */
#define SCAN_INIT 0
#define SCAN_COMBINE(a, b) ((a) + (b))
#endif
/* cumsum (cumprod): out[row, e] = the sum (product) of the row's elements 0..e, in ACC.
 * Work-item lid scans run lid of the row (WG runs of equal length, in order), starting from the
 * combination of the runs before it (their totals, shared in local memory). */
__kernel void tb_cumsum(OCL_PTR(T_OUT, out), OCL_PTR(T0, in0), tb_rows L) {
  ROW_START(row, lid);
  long b0 = 0, b1 = 0, b2 = 0;
  ROW_BASE(L, row, b0, b1, b2);
  long run = (L.row_length + WG - 1) / WG;
  long first = min(lid * run, L.row_length), end = min(first + run, L.row_length);
  ACC prefix = SCAN_INIT;
#if WG > 1
  __local ACC totals[WG];
  ACC total = SCAN_INIT;
  for (long e = first; e < end; e++) {
    long o0 = 0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    total = SCAN_COMBINE(total, (ACC)OCL_AT(T0, in0)[o1]);
  }
  totals[lid] = total;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = 0; k < lid; k++) prefix = SCAN_COMBINE(prefix, totals[k]);
#endif
  for (long e = first; e < end; e++) {
    long o0 = b0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    prefix = SCAN_COMBINE(prefix, (ACC)OCL_AT(T0, in0)[o1]);
    OCL_AT(T_OUT, out)[o0] = (T_OUT)prefix;
  }
}
#endif

#ifdef ARG_CMP
/* argmax / argmin (ARG_CMP(a, b): a beats b) as ATen: out[row] = the index in its row (row-major
 * over the reduced dimensions) of the first best element, a NaN beating every number (the first
 * NaN); with VALUES, values[row] = that element (max.dim / min.dim), at the kept dimensions'
 * strides of operand 2.  IS_NAN is isnan for floating ACC, 0 for integers. */
static bool tb_arg_beats(ACC v, long i, ACC best, long at) {
  if (i < 0) return false;
  if (at < 0) return true;
  if (IS_NAN(v)) return !IS_NAN(best) || i < at;
  if (IS_NAN(best)) return false;
  return ARG_CMP(v, best) || (v == best && i < at);
}

#ifdef VALUES
__kernel void tb_argreduce(OCL_PTR(long, out), OCL_PTR(T0, in0), OCL_PTR(T1, values), tb_rows L,
                           ACC scale) {
#else
__kernel void tb_argreduce(OCL_PTR(long, out), OCL_PTR(T0, in0), tb_rows L, ACC scale) {
#endif
  ROW_START(row, lid);
  long b0 = 0, b1 = 0, b2 = 0;
  ROW_BASE(L, row, b0, b1, b2);
  ACC best = 0;
  long at = -1;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = 0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    ACC v = (ACC)OCL_AT(T0, in0)[o1];
    if (tb_arg_beats(v, e, best, at)) {
      best = v;
      at = e;
    }
  }
#if WG > 1
  __local ACC bests[WG];
  __local long ats[WG];
  bests[lid] = best;
  ats[lid] = at;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = WG / 2; s > 0; s >>= 1) {
    if (lid < s && tb_arg_beats(bests[lid + s], ats[lid + s], bests[lid], ats[lid])) {
      bests[lid] = bests[lid + s];
      ats[lid] = ats[lid + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  best = bests[0];
  at = ats[0];
#endif
  (void)scale;
  if (lid != 0) return;
  OCL_AT(long, out)[b0] = at;
#ifdef VALUES
  OCL_AT(T1, values)[b2] = (T1)best;
#endif
}
#endif

#ifdef PRE2
/* out[row] = FINAL(COMBINE over the row of PRE2(in0, in1)): in1 has in0's shape */
__kernel void tb_reduce2(OCL_PTR(T_OUT, out), OCL_PTR(T0, in0), OCL_PTR(T1, in1), tb_rows L,
                         ACC scale) {
  GROUP_SCRATCH(partial);
  ROW_START(row, lid);
  long b0 = 0, b1 = 0, b2 = 0;
  ROW_BASE(L, row, b0, b1, b2);
  ACC acc = INIT;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = 0, o1 = b1, o2 = b2;
    ROW_ELEMENT(L, e, o0, o1, o2);
    acc = COMBINE(acc, PRE2((ACC)OCL_AT(T0, in0)[o1], (ACC)OCL_AT(T1, in1)[o2]));
  }
  GROUP_REDUCE(partial, lid, acc, COMBINE);
  if (lid == 0) OCL_AT(T_OUT, out)[b0] = (T_OUT)(FINAL(acc));
}
#endif

#ifdef SOFTMAX
#if WG == 1
/* A row of softmax's operands (all of the ACC type) that is contiguous in each of them, read
 * in vectors of 8 (PoCL: softmax over 512 x 64 floats in a fifth of the time). */
static ACC vmax_lanes(ACC8 v) {
  ACC high = v.s0;
  high = MAXF(high, v.s1), high = MAXF(high, v.s2), high = MAXF(high, v.s3);
  high = MAXF(high, v.s4), high = MAXF(high, v.s5), high = MAXF(high, v.s6);
  return MAXF(high, v.s7);
}


static void softmax_row(__global T_OUT *y, __global const T0 *x, long n) {
  long n8 = n & ~7L;
  ACC8 high8 = (ACC8)(-INFINITY);
  for (long e = 0; e < n8; e += 8) high8 = VMAX(high8, vload8(0, x + e));
  ACC high = vmax_lanes(high8);
  for (long e = n8; e < n; e++) high = MAXF(high, (ACC)x[e]);
  ACC8 sum8 = (ACC8)(0);
  for (long e = 0; e < n8; e += 8) sum8 += exp(vload8(0, x + e) - high);
  ACC sum = vsum_lanes(sum8);
  for (long e = n8; e < n; e++) sum += exp((ACC)x[e] - high);
#ifdef LOG
  ACC shift = high + log(sum);
  for (long e = 0; e < n8; e += 8) vstore8(vload8(0, x + e) - shift, 0, y + e);
  for (long e = n8; e < n; e++) y[e] = (T_OUT)((ACC)x[e] - shift);
#else
  for (long e = 0; e < n8; e += 8) vstore8(exp(vload8(0, x + e) - high) / sum, 0, y + e);
  for (long e = n8; e < n; e++) y[e] = (T_OUT)(exp((ACC)x[e] - high) / sum);
#endif
}

/* softmax's backward over such a row: g the output's gradient, y the forward's output */
static void softmax_backward_row(__global T_OUT *gi, __global const T0 *g, __global const T1 *y,
                                 long n) {
  long n8 = n & ~7L;
  ACC8 sum8 = (ACC8)(0);
#ifdef LOG
  for (long e = 0; e < n8; e += 8) sum8 += vload8(0, g + e);
  ACC sum = vsum_lanes(sum8);
  for (long e = n8; e < n; e++) sum += (ACC)g[e];
  for (long e = 0; e < n8; e += 8)
    vstore8(vload8(0, g + e) - exp(vload8(0, y + e)) * sum, 0, gi + e);
  for (long e = n8; e < n; e++) gi[e] = (T_OUT)((ACC)g[e] - exp((ACC)y[e]) * sum);
#else
  for (long e = 0; e < n8; e += 8) sum8 += vload8(0, g + e) * vload8(0, y + e);
  ACC sum = vsum_lanes(sum8);
  for (long e = n8; e < n; e++) sum += (ACC)g[e] * (ACC)y[e];
  for (long e = 0; e < n8; e += 8)
    vstore8(vload8(0, y + e) * (vload8(0, g + e) - sum), 0, gi + e);
  for (long e = n8; e < n; e++) gi[e] = (T_OUT)((ACC)y[e] * ((ACC)g[e] - sum));
#endif
}
#endif

/* out = softmax (or log_softmax) of in0 along the row */
__kernel void tb_softmax(OCL_PTR(T_OUT, out), OCL_PTR(T0, in0), tb_rows L) {
  GROUP_SCRATCH(partial);
  ROW_START(row, lid);
  long b0 = 0, b1 = 0, b2 = 0;
  ROW_BASE(L, row, b0, b1, b2);
#if WG == 1
  if (CONTIGUOUS_ROWS(L, 2)) {
    softmax_row(OCL_AT(T_OUT, out) + b0, OCL_AT(T0, in0) + b1, L.row_length);
    return;
  }
#endif
  ACC high = -INFINITY;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = 0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    high = MAXF(high, (ACC)OCL_AT(T0, in0)[o1]);
  }
  GROUP_REDUCE(partial, lid, high, MAXF);
  ACC sum = 0;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = 0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    sum += exp((ACC)OCL_AT(T0, in0)[o1] - high);
  }
  GROUP_REDUCE(partial, lid, sum, ADD);
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = b0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    ACC x = (ACC)OCL_AT(T0, in0)[o1] - high;
#ifdef LOG
    OCL_AT(T_OUT, out)[o0] = (T_OUT)(x - log(sum));
#else
    OCL_AT(T_OUT, out)[o0] = (T_OUT)(exp(x) / sum);
#endif
  }
}

/* out = the input's gradient from grad (in0) and the forward's output (in1) */
__kernel void tb_softmax_backward(OCL_PTR(T_OUT, out), OCL_PTR(T0, in0), OCL_PTR(T1, in1),
                                  tb_rows L) {
  GROUP_SCRATCH(partial);
  ROW_START(row, lid);
  long b0 = 0, b1 = 0, b2 = 0;
  ROW_BASE(L, row, b0, b1, b2);
#if WG == 1
  if (CONTIGUOUS_ROWS(L, 3)) {
    softmax_backward_row(OCL_AT(T_OUT, out) + b0, OCL_AT(T0, in0) + b1, OCL_AT(T1, in1) + b2,
                         L.row_length);
    return;
  }
#endif
  ACC sum = 0;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = 0, o1 = b1, o2 = b2;
    ROW_ELEMENT(L, e, o0, o1, o2);
#ifdef LOG
    sum += (ACC)OCL_AT(T0, in0)[o1];
#else
    sum += (ACC)OCL_AT(T0, in0)[o1] * (ACC)OCL_AT(T1, in1)[o2];
#endif
  }
  GROUP_REDUCE(partial, lid, sum, ADD);
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = b0, o1 = b1, o2 = b2;
    ROW_ELEMENT(L, e, o0, o1, o2);
    ACC g = (ACC)OCL_AT(T0, in0)[o1], y = (ACC)OCL_AT(T1, in1)[o2];
#ifdef LOG
    OCL_AT(T_OUT, out)[o0] = (T_OUT)(g - exp(y) * sum);
#else
    OCL_AT(T_OUT, out)[o0] = (T_OUT)(y * (g - sum));
#endif
  }
}
#endif

#ifdef NORM
/* Sums `value` over the work-group into `total` (every work-item gets it). */
#define GROUP_SUM(partial, lid, value, total)    \
  do {                                           \
    (total) = (value);                           \
    GROUP_REDUCE(partial, lid, total, ADD);      \
  } while (0)

/* layer_norm over rows of n contiguous elements: out, and each row's mean and rstd */
__kernel void tb_layer_norm(OCL_PTR(T0, out), OCL_PTR(T0, in), OCL_PTR(T0, weight),
                            OCL_PTR(T0, bias), OCL_PTR(T0, mean), OCL_PTR(T0, rstd), long n,
                            int has_weight, int has_bias, ACC eps) {
  GROUP_SCRATCH(partial);
  ROW_START(row, lid);
  __global T0 *x = OCL_AT(T0, in) + row * n;
  __global T0 *y = OCL_AT(T0, out) + row * n;
#if WG == 1
  { /* one work-item per row: its row in vectors of 8 (T0 is ACC here) */
    long n8 = n & ~7L;
    ACC8 s8 = (ACC8)(0);
    for (long e = 0; e < n8; e += 8) s8 += vload8(0, x + e);
    ACC sum = vsum_lanes(s8);
    for (long e = n8; e < n; e++) sum += (ACC)x[e];
    ACC mu = sum / (ACC)n;
    s8 = (ACC8)(0);
    for (long e = 0; e < n8; e += 8) {
      ACC8 d = vload8(0, x + e) - mu;
      s8 += d * d;
    }
    ACC squares = vsum_lanes(s8);
    for (long e = n8; e < n; e++) squares += ((ACC)x[e] - mu) * ((ACC)x[e] - mu);
    ACC r = rsqrt(squares / (ACC)n + eps);
    OCL_AT(T0, mean)[row] = (T0)mu;
    OCL_AT(T0, rstd)[row] = (T0)r;
    __global const T0 *w = OCL_AT(T0, weight), *b = OCL_AT(T0, bias);
    for (long e = 0; e < n8; e += 8) {
      ACC8 v = (vload8(0, x + e) - mu) * r;
      if (has_weight) v *= vload8(0, w + e);
      if (has_bias) v += vload8(0, b + e);
      vstore8(v, 0, y + e);
    }
    for (long e = n8; e < n; e++) {
      ACC v = ((ACC)x[e] - mu) * r;
      if (has_weight) v *= (ACC)w[e];
      if (has_bias) v += (ACC)b[e];
      y[e] = (T0)v;
    }
    return;
  }
#endif
  ACC s = 0, total = 0;
  for (long e = lid; e < n; e += WG) s += (ACC)x[e];
  GROUP_SUM(partial, lid, s, total);
  ACC mu = total / (ACC)n;
  s = 0;
  for (long e = lid; e < n; e += WG) s += ((ACC)x[e] - mu) * ((ACC)x[e] - mu);
  GROUP_SUM(partial, lid, s, total);
  ACC r = rsqrt(total / (ACC)n + eps);
  if (lid == 0) {
    OCL_AT(T0, mean)[row] = (T0)mu;
    OCL_AT(T0, rstd)[row] = (T0)r;
  }
  for (long e = lid; e < n; e += WG) {
    ACC v = ((ACC)x[e] - mu) * r;
    if (has_weight) v *= (ACC)OCL_AT(T0, weight)[e];
    if (has_bias) v += (ACC)OCL_AT(T0, bias)[e];
    y[e] = (T0)v;
  }
}

/* layer_norm's input gradient, per row */
__kernel void tb_layer_norm_backward_input(OCL_PTR(T0, grad_input), OCL_PTR(T0, grad),
                                           OCL_PTR(T0, in), OCL_PTR(T0, mean),
                                           OCL_PTR(T0, rstd), OCL_PTR(T0, weight), long n,
                                           int has_weight) {
  GROUP_SCRATCH(partial);
  ROW_START(row, lid);
  __global T0 *x = OCL_AT(T0, in) + row * n;
  __global T0 *g = OCL_AT(T0, grad) + row * n;
  __global T0 *gi = OCL_AT(T0, grad_input) + row * n;
  ACC mu = (ACC)OCL_AT(T0, mean)[row], r = (ACC)OCL_AT(T0, rstd)[row];
#if WG == 1
  { /* one work-item per row: its row in vectors of 8 (T0 is ACC here) */
    __global const T0 *w = OCL_AT(T0, weight);
    long n8 = n & ~7L;
    ACC8 a8 = (ACC8)(0), b8 = (ACC8)(0);
    for (long e = 0; e < n8; e += 8) {
      ACC8 gw = vload8(0, g + e);
      if (has_weight) gw *= vload8(0, w + e);
      a8 += gw;
      b8 += gw * (vload8(0, x + e) - mu) * r;
    }
    ACC sa = vsum_lanes(a8), sb = vsum_lanes(b8);
    for (long e = n8; e < n; e++) {
      ACC gw = (ACC)g[e] * (has_weight ? (ACC)w[e] : (ACC)1);
      sa += gw;
      sb += gw * ((ACC)x[e] - mu) * r;
    }
    ACC ma = sa / (ACC)n, mb = sb / (ACC)n;
    for (long e = 0; e < n8; e += 8) {
      ACC8 gw = vload8(0, g + e);
      if (has_weight) gw *= vload8(0, w + e);
      ACC8 xhat = (vload8(0, x + e) - mu) * r;
      vstore8(r * (gw - ma - xhat * mb), 0, gi + e);
    }
    for (long e = n8; e < n; e++) {
      ACC gw = (ACC)g[e] * (has_weight ? (ACC)w[e] : (ACC)1);
      ACC xhat = ((ACC)x[e] - mu) * r;
      gi[e] = (T0)(r * (gw - ma - xhat * mb));
    }
    return;
  }
#endif
  ACC a = 0, b = 0, ta = 0, tb = 0;
  for (long e = lid; e < n; e += WG) {
    ACC gw = (ACC)g[e] * (has_weight ? (ACC)OCL_AT(T0, weight)[e] : (ACC)1);
    a += gw;
    b += gw * ((ACC)x[e] - mu) * r;
  }
  GROUP_SUM(partial, lid, a, ta);
  GROUP_SUM(partial, lid, b, tb);
  for (long e = lid; e < n; e += WG) {
    ACC gw = (ACC)g[e] * (has_weight ? (ACC)OCL_AT(T0, weight)[e] : (ACC)1);
    ACC xhat = ((ACC)x[e] - mu) * r;
    gi[e] = (T0)(r * (gw - ta / (ACC)n - xhat * tb / (ACC)n));
  }
}

/* layer_norm's weight and bias gradients: one work-item per column */
__kernel void tb_layer_norm_backward_params(OCL_PTR(T0, grad_weight), OCL_PTR(T0, grad_bias),
                                            OCL_PTR(T0, grad), OCL_PTR(T0, in),
                                            OCL_PTR(T0, mean), OCL_PTR(T0, rstd), long rows,
                                            long n, int want_weight, int want_bias) {
  long e = get_global_id(0);
  if (e >= n) return;
  ACC sw = 0, sb = 0;
  for (long row = 0; row < rows; row++) {
    ACC g = (ACC)OCL_AT(T0, grad)[row * n + e];
    ACC xhat = ((ACC)OCL_AT(T0, in)[row * n + e] - (ACC)OCL_AT(T0, mean)[row]) *
               (ACC)OCL_AT(T0, rstd)[row];
    sw += g * xhat;
    sb += g;
  }
  if (want_weight) OCL_AT(T0, grad_weight)[e] = (T0)sw;
  if (want_bias) OCL_AT(T0, grad_bias)[e] = (T0)sb;
}
/* batch_norm: one work-group per channel (the one kept dimension); training computes the
 * channel's statistics (and updates the running ones), evaluation uses the running ones */
__kernel void tb_batch_norm(OCL_PTR(T0, out), OCL_PTR(T0, in), OCL_PTR(T0, weight),
                            OCL_PTR(T0, bias), OCL_PTR(T0, running_mean), OCL_PTR(T0, running_var),
                            OCL_PTR(T0, save_mean), OCL_PTR(T0, save_invstd), tb_rows L,
                            int has_weight, int has_bias, int has_running, int training,
                            int save, ACC momentum, ACC eps) {
  GROUP_SCRATCH(partial);
  ROW_START(c, lid);
  long b0 = 0, b1 = 0, b2 = 0;
  ROW_BASE(L, c, b0, b1, b2);
  /* The batch's statistics, computed in evaluation too: barriers stay out of branches. */
  ACC s = 0, total = 0;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = 0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    s += (ACC)OCL_AT(T0, in)[o1];
  }
  GROUP_SUM(partial, lid, s, total);
  ACC mu = total / (ACC)L.row_length;
  s = 0;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = 0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    ACC d = (ACC)OCL_AT(T0, in)[o1] - mu;
    s += d * d;
  }
  GROUP_SUM(partial, lid, s, total);
  ACC var = total / (ACC)L.row_length;
  ACC invstd = rsqrt(var + eps);
  if (training && lid == 0) {
    if (save) {
      OCL_AT(T0, save_mean)[c] = (T0)mu;
      OCL_AT(T0, save_invstd)[c] = (T0)invstd;
    }
    if (has_running) {
      ACC unbiased = L.row_length > 1 ? var * (ACC)L.row_length / (ACC)(L.row_length - 1) : var;
      OCL_AT(T0, running_mean)[c] =
          (T0)(((ACC)1 - momentum) * (ACC)OCL_AT(T0, running_mean)[c] + momentum * mu);
      OCL_AT(T0, running_var)[c] =
          (T0)(((ACC)1 - momentum) * (ACC)OCL_AT(T0, running_var)[c] + momentum * unbiased);
    }
  }
  if (!training) {
    mu = (ACC)OCL_AT(T0, running_mean)[c];
    invstd = rsqrt((ACC)OCL_AT(T0, running_var)[c] + eps);
  }
  ACC w = has_weight ? (ACC)OCL_AT(T0, weight)[c] : (ACC)1;
  ACC b = has_bias ? (ACC)OCL_AT(T0, bias)[c] : (ACC)0;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = b0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    OCL_AT(T0, out)[o0] = (T0)(((ACC)OCL_AT(T0, in)[o1] - mu) * invstd * w + b);
  }
}

/* batch_norm's backward: one work-group per channel.  mean and invstd are the batch's
 * (save_mean, save_invstd) in training, else the running mean and variance (invstd computed
 * here); as ATen's CPU kernel: with dotp = sum(dy * (x - mean)),
 * grad_input = (dy - (x - mean) * dotp * invstd^2 / N - sum(dy) / N) * invstd * w in training,
 * dy * invstd * w in evaluation; grad_weight = dotp * invstd, grad_bias = sum(dy).  Operand
 * strides: 0 grad_input, 1 input, 2 grad_out. */
__kernel void tb_batch_norm_backward(OCL_PTR(T0, grad_input), OCL_PTR(T0, grad_weight),
                                     OCL_PTR(T0, grad_bias), OCL_PTR(T0, grad_out),
                                     OCL_PTR(T0, in), OCL_PTR(T0, weight), OCL_PTR(T0, mean),
                                     OCL_PTR(T0, invstd_or_var), tb_rows L, int has_weight,
                                     int training, int want_input, int want_weight,
                                     int want_bias, ACC eps) {
  GROUP_SCRATCH(partial);
  ROW_START(c, lid);
  long b0 = 0, b1 = 0, b2 = 0;
  ROW_BASE(L, c, b0, b1, b2);
  ACC mu = (ACC)OCL_AT(T0, mean)[c];
  ACC invstd = training ? (ACC)OCL_AT(T0, invstd_or_var)[c]
                        : rsqrt((ACC)OCL_AT(T0, invstd_or_var)[c] + eps);
  ACC s = 0, d = 0, sum = 0, dotp = 0;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = 0, o1 = b1, o2 = b2;
    ROW_ELEMENT(L, e, o0, o1, o2);
    ACC dy = (ACC)OCL_AT(T0, grad_out)[o2];
    s += dy;
    d += dy * ((ACC)OCL_AT(T0, in)[o1] - mu);
  }
  GROUP_SUM(partial, lid, s, sum);
  GROUP_SUM(partial, lid, d, dotp);
  if (lid == 0) {
    if (want_weight) OCL_AT(T0, grad_weight)[c] = (T0)(dotp * invstd);
    if (want_bias) OCL_AT(T0, grad_bias)[c] = (T0)sum;
  }
  if (!want_input) return;
  ACC w = has_weight ? (ACC)OCL_AT(T0, weight)[c] : (ACC)1;
  ACC n = (ACC)L.row_length;
  ACC k = dotp * invstd * invstd / n, grad_mean = sum / n;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = b0, o1 = b1, o2 = b2;
    ROW_ELEMENT(L, e, o0, o1, o2);
    ACC dy = (ACC)OCL_AT(T0, grad_out)[o2];
    ACC r = training ? (dy - ((ACC)OCL_AT(T0, in)[o1] - mu) * k - grad_mean) * invstd * w
                     : dy * invstd * w;
    OCL_AT(T0, grad_input)[o0] = (T0)r;
  }
}
#endif
