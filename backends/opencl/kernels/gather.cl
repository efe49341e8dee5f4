/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Kernels that read or write through integer indices: index_select, index_add, gather,
 * scatter, scatter_add, advanced indexing (index.Tensor and index_put_), embedding's backward
 * and nll_loss.  An index out of range writes the device's fault record (the prelude's
 * tb_report_fault) and the work-item stops: the device is then faulted, and the next
 * synchronize reports the index and the size.  The host (kernels/gather.c) prefixes T (the
 * data's storage type), ACC (float or double), IDX (the index type: int or long) and, for the
 * accumulating kernels, TB_PUT_ADD.
 */

/* The accumulating kernels' add (index_put_'s, scatter_add's, index_add's), *p += v,
 * atomically (TB_PUT_ADD: 1 float, 2 double, 3 int, 4 long): a compare-and-swap loop for the
 * floating types (OpenCL C has no floating atomic add), the integers' atomic add.  Duplicate
 * indices add in the order the work-items get there. */
#if defined(TB_PUT_ADD) && (TB_PUT_ADD == 2 || TB_PUT_ADD == 4)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#if defined(TB_PUT_ADD) && TB_PUT_ADD == 1
void tb_put_add(__global T *p, T v) {
  volatile __global uint *u = (volatile __global uint *)p;
  uint old = *u, seen;
  do {
    seen = old;
    old = atomic_cmpxchg(u, seen, as_uint(as_float(seen) + v));
  } while (old != seen);
}
#elif defined(TB_PUT_ADD) && TB_PUT_ADD == 2
void tb_put_add(__global T *p, T v) {
  volatile __global ulong *u = (volatile __global ulong *)p;
  ulong old = *u, seen;
  do {
    seen = old;
    old = atom_cmpxchg(u, seen, as_ulong(as_double(seen) + v));
  } while (old != seen);
}
#elif defined(TB_PUT_ADD) && TB_PUT_ADD == 3
void tb_put_add(__global T *p, T v) { atomic_add((volatile __global int *)p, v); }
#elif defined(TB_PUT_ADD) && TB_PUT_ADD == 4
void tb_put_add(__global T *p, T v) { atom_add((volatile __global long *)p, v); }
#endif

typedef struct tb_select {
  int ndim;
  int dim;
  long numel;
  long sizes[8]; /* the output's */
  long out_strides[8];
  long self_strides[8];
  long self_dim_size;
  long index_stride;
} tb_select;

/* out = self.index_select(dim, index): one work-item per output element */
__kernel void tb_index_select(OCL_PTR(T, out), OCL_PTR(T, self), OCL_PTR(IDX, index),
                              __global uint *fault, uint fault_op, tb_select L) {
  long i = get_global_id(0);
  if (i >= L.numel) return;
  long rest = i, o = 0, s = 0;
  for (int d = L.ndim - 1; d >= 0; d--) {
    long c = rest % L.sizes[d];
    rest /= L.sizes[d];
    o += c * L.out_strides[d];
    if (d == L.dim) {
      long k = (long)OCL_AT(IDX, index)[c * L.index_stride];
      if (k < 0) k += L.self_dim_size;
      if (k < 0 || k >= L.self_dim_size) {
        tb_report_fault(fault, fault_op, TB_FAULT_INDEX,
                        (long)OCL_AT(IDX, index)[c * L.index_stride], L.self_dim_size);
        return;
      }
      c = k;
    }
    s += c * L.self_strides[d];
  }
  OCL_AT(T, out)[o] = OCL_AT(T, self)[s];
}

/* index_add (with TB_PUT_ADD): out[..., index[j], ...] += alpha * source[..., j, ...] along
 * dim, one work-item per element of source.  The layout is tb_index_select's read the other
 * way: sizes and out_strides are source's, self_strides and self_dim_size out's.  An index
 * out of range faults (ATen's CPU kernel raises; negative indices do not wrap). */
#ifdef TB_PUT_ADD
__kernel void tb_index_add(OCL_PTR(T, out), OCL_PTR(T, source), OCL_PTR(IDX, index),
                           __global uint *fault, uint fault_op, tb_select L, ACC real,
                           long integer) {
  long i = get_global_id(0);
  if (i >= L.numel) return;
  long rest = i, o = 0, s = 0;
  for (int d = L.ndim - 1; d >= 0; d--) {
    long c = rest % L.sizes[d];
    rest /= L.sizes[d];
    s += c * L.out_strides[d];
    if (d == L.dim) {
      long k = (long)OCL_AT(IDX, index)[c * L.index_stride];
      if (k < 0 || k >= L.self_dim_size) {
        tb_report_fault(fault, fault_op, TB_FAULT_INDEX, k, L.self_dim_size);
        return;
      }
      c = k;
    }
    o += c * L.self_strides[d];
  }
#if TB_PUT_ADD <= 2
  T v = (T)((ACC)OCL_AT(T, source)[s] * real);
#else
  T v = OCL_AT(T, source)[s] * (T)integer;
#endif
  tb_put_add(&OCL_AT(T, out)[o], v);
}
#endif

/* The leading dimensions of embedding's grad_output and its indices (the same sizes), each
 * with its own strides: row r's offsets in both. */
typedef struct tb_rowmap {
  int ndim;
  long sizes[8];
  long index_strides[8];
  long grad_strides[8];
} tb_rowmap;

/* grad_weight[indices[r], c] += grad[r, c] for every row r not padding_idx, in row order:
 * one work-item per column c, so that the sums are deterministic (the same bits every run,
 * added in the CPU's order) -- float atomics would add in whatever order rows arrive.
 * grad_weight (contiguous, zeroed by the host) has `dim` columns. */
__kernel void tb_embedding_backward(OCL_PTR(float, grad_weight), OCL_PTR(float, grad),
                                    OCL_PTR(IDX, indices), __global uint *fault, uint fault_op,
                                    long rows, long dim, long grad_col_stride, long num_weights,
                                    long padding_idx, tb_rowmap M) {
  long c = get_global_id(0);
  if (c >= dim) return;
  for (long r = 0; r < rows; r++) {
    long rest = r, io = 0, go = 0;
    for (int d = M.ndim - 1; d >= 0; d--) {
      long x = rest % M.sizes[d];
      rest /= M.sizes[d];
      io += x * M.index_strides[d];
      go += x * M.grad_strides[d];
    }
    long k = (long)OCL_AT(IDX, indices)[io];
    if (k == padding_idx) continue;
    if (k < 0 || k >= num_weights) {
      tb_report_fault(fault, fault_op, TB_FAULT_INDEX, k, num_weights);
      return;
    }
    OCL_AT(float, grad_weight)[k * dim + c] += OCL_AT(float, grad)[go + c * grad_col_stride];
  }
}

/* gather: out[p] = self[p with dimension dim replaced by index[p]], out and index of one
 * shape. */
typedef struct tb_gather_layout {
  int ndim;
  int dim;
  long numel;
  long sizes[8]; /* index's and out's */
  long out_strides[8];
  long index_strides[8];
  long self_strides[8];
  long self_dim_size;
} tb_gather_layout;

/* Position i of index's shape in L: the offsets of the operand read or written elementwise
 * with the index (out_strides) in *plain and of the operand indexed along `dim` without that
 * dimension (self_strides) in *indexed, and the index there -- or -1 once an index out of
 * range is reported. */
static long gather_position(const tb_gather_layout *L, long i, __global const IDX *index,
                            __global uint *fault, uint fault_op, long *plain, long *indexed) {
  long rest = i, x = 0;
  *plain = *indexed = 0;
  for (int d = L->ndim - 1; d >= 0; d--) {
    long c = rest % L->sizes[d];
    rest /= L->sizes[d];
    *plain += c * L->out_strides[d];
    x += c * L->index_strides[d];
    if (d != L->dim) *indexed += c * L->self_strides[d];
  }
  long k = (long)index[x];
  if (k < 0 || k >= L->self_dim_size) {
    tb_report_fault(fault, fault_op, TB_FAULT_INDEX, k, L->self_dim_size);
    return -1;
  }
  return k;
}

__kernel void tb_gather(OCL_PTR(T, out), OCL_PTR(T, self), OCL_PTR(IDX, index),
                        __global uint *fault, uint fault_op, tb_gather_layout L) {
  long i = get_global_id(0), o, s;
  if (i >= L.numel) return;
  long k = gather_position(&L, i, OCL_AT(IDX, index), fault, fault_op, &o, &s);
  if (k >= 0) OCL_AT(T, out)[o] = OCL_AT(T, self)[s + k * L.self_strides[L.dim]];
}

/* scatter (scatter.src_out, scatter.value_out): out[..., index[i], ...] = src[i] (or the number)
 * over index's positions, along `dim`; out holds self already (the host copies it).  The
 * layout is tb_gather's read the other way: out_strides are src's, self_strides and
 * self_dim_size out's.  `mode` 0 reads src, 1 writes `real`, 2 writes `integer`.  Positions
 * an index repeats get one of their values (CUDA's rule too). */
__kernel void tb_scatter(OCL_PTR(T, out), OCL_PTR(T, src), OCL_PTR(IDX, index),
                         __global uint *fault, uint fault_op, tb_gather_layout L, ACC real,
                         long integer, int mode) {
  long i = get_global_id(0), s, o;
  if (i >= L.numel) return;
  long k = gather_position(&L, i, OCL_AT(IDX, index), fault, fault_op, &s, &o);
  if (k < 0) return;
  T v = mode == 0 ? OCL_AT(T, src)[s] : mode == 1 ? (T)real : (T)integer;
#ifdef TB_PUT_ADD
  tb_put_add(&OCL_AT(T, out)[o + k * L.self_strides[L.dim]], v); /* scatter_add */
#else
  OCL_AT(T, out)[o + k * L.self_strides[L.dim]] = v;
#endif
}

/* Advanced indexing (index.Tensor): each output dimension is a plain dimension of self
 * (self_strides) or one of the index tensors' broadcast shape (index_strides[k], 0 where
 * index k broadcasts); index k picks along self's dimension of size dim_sizes[k], stride
 * dim_strides[k].  Negative indices count from the end. */
typedef struct tb_index_layout {
  int ndim;
  int count; /* index tensors, 1 to 4 */
  long numel;
  long sizes[8];
  long out_strides[8];
  long self_strides[8];
  long index_strides[4][8];
  long dim_sizes[4];
  long dim_strides[4];
} tb_index_layout;

/* The offset in self of advanced indexing's element i, and in *o its offset in out (index) or
 * values (index_put); -1 after reporting an index out of range. */
long tb_index_at(long i, const tb_index_layout *L, __global const IDX *i0, __global const IDX *i1,
                 __global const IDX *i2, __global const IDX *i3, __global uint *fault,
                 uint fault_op, long *o) {
  long rest = i, s = 0, x[4] = {0, 0, 0, 0};
  *o = 0;
  for (int d = L->ndim - 1; d >= 0; d--) {
    long c = rest % L->sizes[d];
    rest /= L->sizes[d];
    *o += c * L->out_strides[d];
    s += c * L->self_strides[d];
    for (int k = 0; k < 4; k++) x[k] += c * L->index_strides[k][d];
  }
  for (int k = 0; k < L->count; k++) {
    long v = k == 0   ? (long)i0[x[0]]
             : k == 1 ? (long)i1[x[1]]
             : k == 2 ? (long)i2[x[2]]
                      : (long)i3[x[3]];
    long w = v < 0 ? v + L->dim_sizes[k] : v;
    if (w < 0 || w >= L->dim_sizes[k]) {
      tb_report_fault(fault, fault_op, TB_FAULT_INDEX, v, L->dim_sizes[k]);
      return -1;
    }
    s += w * L->dim_strides[k];
  }
  return s;
}

__kernel void tb_index(OCL_PTR(T, out), OCL_PTR(T, self), OCL_PTR(IDX, i0), OCL_PTR(IDX, i1),
                       OCL_PTR(IDX, i2), OCL_PTR(IDX, i3), __global uint *fault, uint fault_op,
                       tb_index_layout L) {
  long i = get_global_id(0);
  if (i >= L.numel) return;
  long o = 0;
  long s = tb_index_at(i, &L, OCL_AT(IDX, i0), OCL_AT(IDX, i1), OCL_AT(IDX, i2), OCL_AT(IDX, i3),
                       fault, fault_op, &o);
  if (s >= 0) OCL_AT(T, out)[o] = OCL_AT(T, self)[s];
}

/* self[indices] = values (or += with TB_PUT_ADD), values broadcast to the indexing result
 * (out_strides are values' strides, 0 where it broadcasts): one work-item per element of the
 * result.  Without accumulation a duplicate index keeps one of its values. */
__kernel void tb_index_put(OCL_PTR(T, self), OCL_PTR(T, values), OCL_PTR(IDX, i0),
                           OCL_PTR(IDX, i1), OCL_PTR(IDX, i2), OCL_PTR(IDX, i3),
                           __global uint *fault, uint fault_op, tb_index_layout L) {
  long i = get_global_id(0);
  if (i >= L.numel) return;
  long o = 0;
  long s = tb_index_at(i, &L, OCL_AT(IDX, i0), OCL_AT(IDX, i1), OCL_AT(IDX, i2), OCL_AT(IDX, i3),
                       fault, fault_op, &o);
  if (s < 0) return;
#ifdef TB_PUT_ADD
  tb_put_add(&OCL_AT(T, self)[s], OCL_AT(T, values)[o]);
#else
  OCL_AT(T, self)[s] = OCL_AT(T, values)[o];
#endif
}

/* nll_loss, reduction none: out[n] = -w[t] * x[n, t] (0 for ignore_index) */
__kernel void tb_nll_loss_none(OCL_PTR(T, out), OCL_PTR(T, self), OCL_PTR(IDX, target),
                               OCL_PTR(T, weight), __global uint *fault, uint fault_op, long n,
                               long classes, long row_stride, long col_stride, long target_stride,
                               long weight_stride, long out_stride, int has_weight,
                               long ignore_index) {
  long i = get_global_id(0);
  if (i >= n) return;
  long t = (long)OCL_AT(IDX, target)[i * target_stride];
  if (t == ignore_index) {
    OCL_AT(T, out)[i * out_stride] = (T)0;
    return;
  }
  if (t < 0 || t >= classes) {
    tb_report_fault(fault, fault_op, TB_FAULT_INDEX, t, classes);
    return;
  }
  ACC w = has_weight ? (ACC)OCL_AT(T, weight)[t * weight_stride] : (ACC)1;
  OCL_AT(T, out)[i * out_stride] = (T)(-w * (ACC)OCL_AT(T, self)[i * row_stride + t * col_stride]);
}

/* nll_loss, reduction mean (mean != 0) or sum, in one work-group of 64: out = -sum w[t] x[n, t]
 * (divided by the weights' sum for mean), total_weight = the weights' sum */
__kernel void tb_nll_loss_reduce(OCL_PTR(T, out), OCL_PTR(T, total_weight), OCL_PTR(T, self),
                                 OCL_PTR(IDX, target), OCL_PTR(T, weight), __global uint *fault,
                                 uint fault_op, long n, long classes, long row_stride,
                                 long col_stride, long target_stride, long weight_stride,
                                 int has_weight, long ignore_index, int mean) {
  __local ACC loss[64];
  __local ACC weights[64];
  int lid = get_local_id(0);
  ACC l = 0, ws = 0;
  for (long i = lid; i < n; i += 64) {
    long t = (long)OCL_AT(IDX, target)[i * target_stride];
    if (t == ignore_index) continue;
    if (t < 0 || t >= classes) {
      tb_report_fault(fault, fault_op, TB_FAULT_INDEX, t, classes);
      continue;
    }
    ACC w = has_weight ? (ACC)OCL_AT(T, weight)[t * weight_stride] : (ACC)1;
    l -= w * (ACC)OCL_AT(T, self)[i * row_stride + t * col_stride];
    ws += w;
  }
  loss[lid] = l;
  weights[lid] = ws;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 32; s > 0; s >>= 1) {
    if (lid < s) {
      loss[lid] += loss[lid + s];
      weights[lid] += weights[lid + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    OCL_AT(T, out)[0] = (T)(mean ? loss[0] / weights[0] : loss[0]);
    OCL_AT(T, total_weight)[0] = (T)weights[0];
  }
}

/* nll_loss's backward: grad_input (zeroed by the host) [n, t] = -w[t] * g, g the output's
 * gradient (per row for reduction none, else one value, divided by total_weight for mean) */
__kernel void tb_nll_loss_backward(OCL_PTR(T, grad_input), OCL_PTR(T, grad_output),
                                   OCL_PTR(IDX, target), OCL_PTR(T, weight),
                                   OCL_PTR(T, total_weight), long n, long classes, long row_stride,
                                   long col_stride, long target_stride, long weight_stride,
                                   long grad_stride, int has_weight, long ignore_index,
                                   int reduction) {
  long i = get_global_id(0);
  if (i >= n) return;
  long t = (long)OCL_AT(IDX, target)[i * target_stride];
  if (t == ignore_index || t < 0 || t >= classes) return; /* the forward reported the index */
  ACC w = has_weight ? (ACC)OCL_AT(T, weight)[t * weight_stride] : (ACC)1;
  ACC g = (ACC)OCL_AT(T, grad_output)[reduction == 0 ? i * grad_stride : 0];
  if (reduction == 1) g /= (ACC)OCL_AT(T, total_weight)[0];
  OCL_AT(T, grad_input)[i * row_stride + t * col_stride] = (T)(-w * g);
}

/* isin: out = (elements equals some test[j]) != invert, elementwise over out and elements of
 * any strides (generate()'s stop check reads a slice of the tokens), a dense test set (a loop
 * over it per element: the sets isin sees in practice -- generate()'s stop tokens -- are a
 * handful).  Floating NaN is in no set, as ATen's ==. */
typedef struct tb_isin_layout {
  int ndim;
  long numel;
  long tests;
  long sizes[8];
  long out_strides[8];
  long elements_strides[8];
} tb_isin_layout;

__kernel void tb_isin(OCL_PTR(uchar, out), OCL_PTR(T, elements), OCL_PTR(T, test), tb_isin_layout L,
                      int invert) {
  long i = get_global_id(0);
  if (i >= L.numel) return;
  long rest = i, o = 0, e = 0;
  for (int d = L.ndim - 1; d >= 0; d--) {
    long c = rest % L.sizes[d];
    rest /= L.sizes[d];
    o += c * L.out_strides[d];
    e += c * L.elements_strides[d];
  }
  T x = OCL_AT(T, elements)[e];
  __global const T *set = OCL_AT(T, test);
  int found = 0;
  for (long j = 0; j < L.tests && !found; j++) found = set[j] == x;
  OCL_AT(uchar, out)[o] = (uchar)(found != invert);
}
