/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Sorting along a dimension (sort, argsort, topk): a stable merge sort of every row at once in
 * the call's workspace.  tb_sort_load copies each row out of self with its positions; each
 * tb_sort_merge pass merges neighbouring sorted runs of `width` elements into runs of twice
 * that, one work-item per element, which finds its place by a binary search in the other run
 * (a merge path: log2(n) passes, no local memory, no atomics -- the same result on any
 * device); tb_sort_store writes the first k of each row where the outputs want them.  The host
 * (kernels/sort.c) prefixes T, the values' storage type, and FLOATING for floating types.
 *
 * Order: ascending, or descending where `descending` (the layout's, the merge's argument) is
 * 1; NaN is greater than every number (last ascending, first descending), as ATen's sort and
 * topk.  Equal values keep their order in the row (stable), so an equal value from the left
 * run goes first.
 */
typedef struct tb_sort_layout {
  int kept_ndim;
  int descending;
  long rows;
  long n;                  /* the row length */
  long k;                  /* the outputs per row */
  long kept_sizes[8];      /* the other dimensions, which enumerate the rows */
  long kept_strides[3][8]; /* of values, indices and self */
  long stride[3];          /* along the sorted dimension: values, indices, self */
} tb_sort_layout;

#ifdef FLOATING
#define TB_LESS(a, b) (isnan(b) ? !isnan(a) : (a) < (b))
#else
#define TB_LESS(a, b) ((a) < (b))
#endif
/* a goes strictly before b in the sort's order */
#define TB_BEFORE(a, b, descending) ((descending) ? TB_LESS(b, a) : TB_LESS(a, b))

/* The offsets of row `row` in values, indices and self. */
static void row_base(const tb_sort_layout *L, long row, long *base) {
  base[0] = base[1] = base[2] = 0;
  for (int d = L->kept_ndim - 1; d >= 0; d--) {
    long c = row % L->kept_sizes[d];
    row /= L->kept_sizes[d];
    for (int k = 0; k < 3; k++) base[k] += c * L->kept_strides[k][d];
  }
}

__kernel void tb_sort_load(OCL_PTR(T, work_values), OCL_PTR(long, work_indices), OCL_PTR(T, self),
                           tb_sort_layout L) {
  long gid = get_global_id(0);
  if (gid >= L.rows * L.n) return;
  long row = gid / L.n, i = gid % L.n, base[3];
  row_base(&L, row, base);
  OCL_AT(T, work_values)[gid] = OCL_AT(T, self)[base[2] + i * L.stride[2]];
  OCL_AT(long, work_indices)[gid] = i;
}

__kernel void tb_sort_merge(OCL_PTR(T, in_values), OCL_PTR(long, in_indices),
                            OCL_PTR(T, out_values), OCL_PTR(long, out_indices), long rows, long n,
                            long width, int descending) {
  long gid = get_global_id(0);
  if (gid >= rows * n) return;
  long row = gid / n, i = gid % n;
  __global const T *v = OCL_AT(T, in_values) + row * n;
  long left = i / (2 * width) * (2 * width); /* the pair of runs this element merges in */
  long middle = min(left + width, n), right = min(left + 2 * width, n);
  T x = v[i];
  long place;
  if (i < middle) { /* left run: after the right run's elements strictly before it */
    long lo = middle, hi = right;
    while (lo < hi) {
      long mid = lo + (hi - lo) / 2;
      if (TB_BEFORE(v[mid], x, descending))
        lo = mid + 1;
      else
        hi = mid;
    }
    place = i + (lo - middle);
  } else { /* right run: after the left run's elements not after it (equal ones included) */
    long lo = left, hi = middle;
    while (lo < hi) {
      long mid = lo + (hi - lo) / 2;
      if (!TB_BEFORE(x, v[mid], descending))
        lo = mid + 1;
      else
        hi = mid;
    }
    place = (i - middle) + lo;
  }
  OCL_AT(T, out_values)[row * n + place] = x;
  OCL_AT(long, out_indices)[row * n + place] = OCL_AT(long, in_indices)[gid];
}

__kernel void tb_sort_store(OCL_PTR(T, values), OCL_PTR(long, indices), OCL_PTR(T, work_values),
                            OCL_PTR(long, work_indices), tb_sort_layout L) {
  long gid = get_global_id(0);
  if (gid >= L.rows * L.k) return;
  long row = gid / L.k, i = gid % L.k, base[3];
  row_base(&L, row, base);
  OCL_AT(T, values)[base[0] + i * L.stride[0]] = OCL_AT(T, work_values)[row * L.n + i];
  OCL_AT(long, indices)[base[1] + i * L.stride[1]] = OCL_AT(long, work_indices)[row * L.n + i];
}
