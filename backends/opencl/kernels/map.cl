/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The elementwise engine's kernel: out = EXPR(x0, x1, x2, alpha, beta) over strided operands.
 * The host (kernels/map.c) compiles it once per operation and dtype combination, prefixing
 * these definitions:
 *
 *   T_OUT, T0, T1, T2   storage types of the output and the inputs ("float", "uchar", ...)
 *   CT                  the compute type the inputs are converted to
 *   EXPR                the result as an expression of x0, x1, x2, alpha, beta (type CT) and
 *                       i, the output element's index in row-major order (arange uses it)
 *   STORE(v)            v converted to T_OUT (a cast, or `v != 0` for bool outputs)
 *   TB_MASK             the layout's scalar_mask, as a constant
 *   TB_GRID_DIMS        tb_map_grid's number of dimensions (3 to 8)
 *
 * The layout (map.c's ocl_layout, the same bytes): dimensions collapsed on the host, the
 * output's strides in strides[0] and input k's in strides[k + 1], in elements; an input whose
 * bit is set in scalar_mask is the kernel argument s<k> instead of memory.  One work-item per
 * output element: tb_map_dense when every operand is contiguous, else tb_map_grid.  tb_tri
 * (tril, triu) shares the layout.
 */
typedef struct tb_layout {
  int ndim;
  int scalar_mask;
  long numel;
  long sizes[8];
  long strides[4][8];
} tb_layout;

/* Floating division with ATen's rounding (c10/util/generic_math.h): floor division (div with
 * rounding_mode="floor", floor_divide) and Python's remainder.  EXPR names them for its
 * compute type as TB_TYPED(tb_div_floor_, CT). */
#define TB_FLOATING_DIVISION(T)                                       \
  inline T tb_div_floor_##T(T a, T b) {                               \
    if (b == (T)0) return a / b;                                      \
    T mod = fmod(a, b);                                               \
    T div = (a - mod) / b;                                            \
    if (mod != (T)0 && (b < (T)0) != (mod < (T)0)) div -= (T)1;       \
    if (div == (T)0) return copysign((T)0, a / b);                    \
    T floored = floor(div);                                           \
    return div - floored > (T)0.5 ? floored + (T)1 : floored;         \
  }                                                                   \
  inline T tb_remainder_##T(T a, T b) {                               \
    T mod = fmod(a, b);                                               \
    return mod != (T)0 && (b < (T)0) != (mod < (T)0) ? mod + b : mod; \
  }
TB_FLOATING_DIVISION(float)
#ifdef TB_FP64
TB_FLOATING_DIVISION(double)
#endif
#define TB_PASTE(a, b) a##b
#define TB_TYPED(name, type) TB_PASTE(name, type)

#ifdef TB_MASK
/* The engine where, after collapsing, every operand is contiguous: TB_MASK is scalar_mask as a
 * constant, so the kernel is one load per input and one store, which a CPU driver vectorizes
 * across work-items (the layout's loop and run-time mask cost PoCL 4x on an exp).  It is the
 * eager path of most small operators, so it takes as few arguments as it can -- drivers copy
 * each argument of each launch (PoCL: an aligned allocation apiece): the output, the inputs
 * that are memory (a number's bit in TB_MASK drops its parameter), and tb_dense_args with the
 * byte offsets, the element count and the numbers. */
typedef struct tb_dense_args {
  ulong offset[4]; /* bytes, output first */
  long numel;
  CT s[3];
  CT alpha;
  CT beta;
} tb_dense_args;

#define TB_DENSE_AT(type, base, k) ((__global type *)((__global char *)base + A.offset[k]))
__kernel void tb_map_dense(__global T_OUT *out
#if !(TB_MASK & 1)
                           ,
                           __global const T0 *in0
#endif
#if !(TB_MASK & 2)
                           ,
                           __global const T1 *in1
#endif
#if !(TB_MASK & 4)
                           ,
                           __global const T2 *in2
#endif
                           ,
                           tb_dense_args A) {
  long i = get_global_id(0);
  if (i >= A.numel) return;
  const struct { long numel; } L = {A.numel}; /* what an EXPR may read of the layout (arange) */
  const CT alpha = A.alpha, beta = A.beta;
#if TB_MASK & 1
  CT x0 = A.s[0];
#else
  CT x0 = (CT)TB_DENSE_AT(const T0, in0, 1)[i];
#endif
#if TB_MASK & 2
  CT x1 = A.s[1];
#else
  CT x1 = (CT)TB_DENSE_AT(const T1, in1, 2)[i];
#endif
#if TB_MASK & 4
  CT x2 = A.s[2];
#else
  CT x2 = (CT)TB_DENSE_AT(const T2, in2, 3)[i];
#endif
  TB_DENSE_AT(T_OUT, out, 0)[i] = STORE(EXPR);
}

/* tb_map_dense's counterpart for strided operands, over a layout of TB_GRID_DIMS (3 to 8)
 * dimensions (the host pads a shorter one to three): the innermost dimension is the grid's
 * first, the next its second, and the outer ones are folded into its third.  Offsets need a
 * division only per outer dimension past the first, the same for all the work-items of a
 * group (a group spans the two innermost dimensions) -- integer division does not
 * vectorize, and a division per dimension per element cost PoCL 5x on a 4-D transpose. */
#ifndef TB_GRID_DIMS
#define TB_GRID_DIMS 3
#endif
#define TB_ROW (TB_GRID_DIMS - 2)
#define TB_COL (TB_GRID_DIMS - 1)
__kernel void tb_map_grid(OCL_PTR(T_OUT, out), OCL_PTR(T0, in0), OCL_PTR(T1, in1), OCL_PTR(T2, in2),
                          tb_layout L, CT s0, CT s1, CT s2, CT alpha, CT beta) {
  long c = get_global_id(0), r = get_global_id(1), p = get_global_id(2);
  if (c >= L.sizes[TB_COL] || r >= L.sizes[TB_ROW]) return;
  long i = (p * L.sizes[TB_ROW] + r) * L.sizes[TB_COL] + c;
  long off0 = r * L.strides[0][TB_ROW] + c * L.strides[0][TB_COL];
  long off1 = r * L.strides[1][TB_ROW] + c * L.strides[1][TB_COL];
  long off2 = r * L.strides[2][TB_ROW] + c * L.strides[2][TB_COL];
  long off3 = r * L.strides[3][TB_ROW] + c * L.strides[3][TB_COL];
  for (int d = TB_GRID_DIMS - 3; d > 0; d--) {
    long k = p % L.sizes[d];
    p /= L.sizes[d];
    off0 += k * L.strides[0][d];
    off1 += k * L.strides[1][d];
    off2 += k * L.strides[2][d];
    off3 += k * L.strides[3][d];
  }
  off0 += p * L.strides[0][0];
  off1 += p * L.strides[1][0];
  off2 += p * L.strides[2][0];
  off3 += p * L.strides[3][0];
  CT x0 = (TB_MASK & 1) ? s0 : (CT)OCL_AT(T0, in0)[off1];
  CT x1 = (TB_MASK & 2) ? s1 : (CT)OCL_AT(T1, in1)[off2];
  CT x2 = (TB_MASK & 4) ? s2 : (CT)OCL_AT(T2, in2)[off3];
  OCL_AT(T_OUT, out)[off0] = STORE(EXPR);
}
#endif

/* tril (UPPER 0) / triu (UPPER 1): out[..., r, c] = in0[..., r, c] where c - r <= diagonal
 * (tril) or >= diagonal (triu), else 0.  The layout is not collapsed: its last two dimensions
 * are the matrix's rows and columns (kernels/shape.c). */
__kernel void tb_tri(OCL_PTR(T_OUT, out), OCL_PTR(T0, in0), tb_layout L, long diagonal, int upper) {
  long i = get_global_id(0);
  if (i >= L.numel) return;
  long off0 = 0, off1 = 0, rest = i, r = 0, c = 0;
  for (int d = L.ndim - 1; d >= 0; d--) {
    long k = rest % L.sizes[d];
    rest /= L.sizes[d];
    if (d == L.ndim - 1) c = k;
    if (d == L.ndim - 2) r = k;
    off0 += k * L.strides[0][d];
    off1 += k * L.strides[1][d];
  }
  bool keep = upper ? c - r >= diagonal : c - r <= diagonal;
  OCL_AT(T_OUT, out)[off0] = keep ? OCL_AT(T0, in0)[off1] : (T_OUT)0;
}
