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

/* The offsets of row `row` for each operand. */
#define ROW_BASE(L, row, base0, base1, base2)           \
  do {                                                  \
    long rest_ = (row);                                 \
    for (int d_ = (L).kept_ndim - 1; d_ >= 0; d_--) {   \
      long c_ = rest_ % (L).kept_sizes[d_];             \
      rest_ /= (L).kept_sizes[d_];                      \
      base0 += c_ * (L).kept_strides[0][d_];            \
      base1 += c_ * (L).kept_strides[1][d_];            \
      base2 += c_ * (L).kept_strides[2][d_];            \
    }                                                   \
  } while (0)

/* The offsets of element `e` of a row, for each operand. */
#define ROW_ELEMENT(L, e, off0, off1, off2)             \
  do {                                                  \
    long rest_ = (e);                                   \
    for (int d_ = (L).row_ndim - 1; d_ >= 0; d_--) {    \
      long c_ = rest_ % (L).row_sizes[d_];              \
      rest_ /= (L).row_sizes[d_];                       \
      off0 += c_ * (L).row_strides[0][d_];              \
      off1 += c_ * (L).row_strides[1][d_];              \
      off2 += c_ * (L).row_strides[2][d_];              \
    }                                                   \
  } while (0)

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

#define ADD(a, b) ((a) + (b))
#define MAXF(a, b) (((a) > (b) || isnan(a)) ? (a) : (b))

/* out[row] = FINAL(COMBINE over the row of in0) */
__kernel void tb_reduce(OCL_PTR(T_OUT, out), OCL_PTR(T0, in0), tb_rows L, ACC scale) {
  __local ACC partial[WG];
  long row = get_group_id(0);
  int lid = get_local_id(0);
  long b0 = 0, b1 = 0, b2 = 0;
  ROW_BASE(L, row, b0, b1, b2);
  ACC acc = INIT;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = 0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    ACC x = (ACC)OCL_AT(T0, in0)[o1];
    acc = COMBINE(acc, x);
  }
  partial[lid] = acc;
  GROUP_COMBINE(partial, lid, COMBINE);
  if (lid == 0) OCL_AT(T_OUT, out)[b0] = (T_OUT)(FINAL(partial[0]));
}

#ifdef SOFTMAX
/* out = softmax (or log_softmax) of in0 along the row */
__kernel void tb_softmax(OCL_PTR(T_OUT, out), OCL_PTR(T0, in0), tb_rows L) {
  __local ACC partial[WG];
  long row = get_group_id(0);
  int lid = get_local_id(0);
  long b0 = 0, b1 = 0, b2 = 0;
  ROW_BASE(L, row, b0, b1, b2);
  ACC high = -INFINITY;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = 0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    high = MAXF(high, (ACC)OCL_AT(T0, in0)[o1]);
  }
  partial[lid] = high;
  GROUP_COMBINE(partial, lid, MAXF);
  high = partial[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  ACC sum = 0;
  for (long e = lid; e < L.row_length; e += WG) {
    long o0 = 0, o1 = b1, o2 = 0;
    ROW_ELEMENT(L, e, o0, o1, o2);
    sum += exp((ACC)OCL_AT(T0, in0)[o1] - high);
  }
  partial[lid] = sum;
  GROUP_COMBINE(partial, lid, ADD);
  sum = partial[0];
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
  __local ACC partial[WG];
  long row = get_group_id(0);
  int lid = get_local_id(0);
  long b0 = 0, b1 = 0, b2 = 0;
  ROW_BASE(L, row, b0, b1, b2);
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
  partial[lid] = sum;
  GROUP_COMBINE(partial, lid, ADD);
  sum = partial[0];
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
