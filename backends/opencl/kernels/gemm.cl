/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The native GEMM for CPU devices (kernels/blas.c chooses it): for each batch z,
 *
 *   C[z] (m x n) = alpha * A[z] (m x k) B[z] (k x n) + beta * S[z]
 *
 * with S (addmm's `self`, broadcast) read only when beta is not 0.  One work-item computes a
 * tile of TILE_M rows by TILE_V vectors of W columns, its accumulators in registers: per step
 * of k it loads TILE_V vectors of B's row and TILE_M numbers of A, and makes TILE_M * TILE_V
 * vector FMAs.  That is the shape of a CPU BLAS micro-kernel; a driver that compiles OpenCL for
 * the CPU (PoCL) turns each vector into one SIMD register.  CLBlast's kernels are shaped for
 * GPUs (work-groups sharing local memory), which a CPU driver runs as loops over work-items:
 * on PoCL the products of a small transformer took 5-10x longer through them.
 *
 * The host prefixes:
 *   T        float or double;  W  the vector width (16 floats, 8 doubles: one 512-bit vector)
 *   TILE_V   vectors per tile (1, or 2 when n >= 2 W)
 * B must be row-major (unit column stride): the host copies a B of another layout into its
 * workspace first.  A, C, S: any strides (C's stores are vectors where its columns are
 * contiguous).  Rows past m are computed
 * from row m - 1 and not stored; the columns of a tile past its last whole vector take the
 * scalar path.
 */
#define TILE_M 8
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define VEC CAT(T, W)
#define VLOAD CAT(vload, W)
#define VSTORE CAT(vstore, W)

/* blas.c's ocl_gemm_layout, byte for byte: extents and strides in elements. */
typedef struct tb_gemm_layout {
  long m, n, k;
  long a_row, a_col, a_batch;
  long b_row, b_batch;
  long c_row, c_col, c_batch;
  long s_row, s_col, s_batch;
} tb_gemm_layout;

__kernel void tb_gemm(OCL_PTR(T, a), OCL_PTR(T, b), OCL_PTR(T, c), OCL_PTR(T, s),
                      tb_gemm_layout L, T alpha, T beta) {
  long j0 = (long)get_global_id(0) * (TILE_V * W);
  long i0 = (long)get_global_id(1) * TILE_M;
  long z = get_global_id(2);
  if (j0 >= L.n || i0 >= L.m) return;
  __global const T *A = OCL_AT(T, a) + z * L.a_batch;
  __global const T *B = OCL_AT(T, b) + z * L.b_batch;
  __global T *C = OCL_AT(T, c) + z * L.c_batch;
  __global const T *S = OCL_AT(T, s) + z * L.s_batch;

  if (j0 + TILE_V * W <= L.n) {
    /* Row offsets of A, rows past m reading row m - 1. */
    long row[TILE_M];
#pragma unroll
    for (int r = 0; r < TILE_M; r++) row[r] = min(i0 + r, L.m - 1) * L.a_row;
    VEC acc[TILE_M][TILE_V];
#pragma unroll
    for (int r = 0; r < TILE_M; r++) {
#pragma unroll
      for (int v = 0; v < TILE_V; v++) acc[r][v] = (VEC)(0);
    }
    for (long kk = 0; kk < L.k; kk++) {
      __global const T *Bk = B + kk * L.b_row + j0;
      VEC bv[TILE_V];
#pragma unroll
      for (int v = 0; v < TILE_V; v++) bv[v] = VLOAD(0, Bk + v * W);
      long ak = kk * L.a_col;
#pragma unroll
      for (int r = 0; r < TILE_M; r++) {
        VEC av = (VEC)(A[row[r] + ak]);
#pragma unroll
        for (int v = 0; v < TILE_V; v++) acc[r][v] = fma(av, bv[v], acc[r][v]);
      }
    }
#pragma unroll
    for (int r = 0; r < TILE_M; r++) {
      long i = i0 + r;
      if (i >= L.m) break;
#pragma unroll
      for (int v = 0; v < TILE_V; v++) {
        long j = j0 + v * W;
        VEC out = alpha * acc[r][v];
        if (beta != (T)0 && L.s_col == 1) {
          out += beta * VLOAD(0, S + i * L.s_row + j);
        } else if (beta != (T)0) {
          T self[W];
          for (int l = 0; l < W; l++) self[l] = S[i * L.s_row + (j + l) * L.s_col];
          out += beta * VLOAD(0, self);
        }
        if (L.c_col == 1) {
          VSTORE(out, 0, C + i * L.c_row + j);
        } else {
          T column[W];
          VSTORE(out, 0, column);
          for (int l = 0; l < W; l++) C[i * L.c_row + (j + l) * L.c_col] = column[l];
        }
      }
    }
    return;
  }

  /* The last column tile, where n ends inside it: one element at a time. */
  for (long i = i0; i < min(i0 + TILE_M, L.m); i++) {
    for (long j = j0; j < min(j0 + TILE_V * W, L.n); j++) {
      T sum = 0;
      for (long kk = 0; kk < L.k; kk++) sum = fma(A[i * L.a_row + kk * L.a_col], B[kk * L.b_row + j], sum);
      T out = alpha * sum;
      if (beta != (T)0) out += beta * S[i * L.s_row + j * L.s_col];
      C[i * L.c_row + j * L.c_col] = out;
    }
  }
}

/* B (batches of k x n, strides row, col and batch) copied row-major to `out`: one work-item
 * per row of a batch (dimensions 0 and 1 of the grid), a loop along the row. */
__kernel void tb_gemm_pack(OCL_PTR(T, in), OCL_PTR(T, out), long k, long n, long row, long col,
                           long batch) {
  long kk = get_global_id(0), z = get_global_id(1);
  if (kk >= k) return;
  __global const T *src = OCL_AT(T, in) + z * batch + kk * row;
  __global T *dst = OCL_AT(T, out) + (z * k + kk) * n;
  for (long j = 0; j < n; j++) dst[j] = src[j * col];
}
