/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * sort (and so argsort, msort) and topk: each row along the dimension has its keys read once into
 * a buffer and its positions ordered by a stable merge sort, rows split over emu's pool; then the
 * first k of each row are stored into the outputs with their strides, each value copied bit for
 * bit from the input.  The order is ATen's: NaN above every number (last ascending, first
 * descending), equal values in row order (what stable=True promises; stable=False allows it).
 * topk returns its k sorted, as the CPU's and CUDA's kernels do with sorted=True; among equal
 * values the first in the row comes first (opencl's order too; CUDA and the CPU leave it open).
 * HF's generate() samples through these two (top-k and top-p filtering).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "kernel.h"

typedef struct sort_plan {
  const emu_tensor *self, *values, *indices;
  int dim; /* -1: a 0-dim tensor, one row of one */
  int64_t n, k, rows;
  bool descending;
  bool integral;      /* keys compared as int64, else as double (every float dtype fits one) */
  atomic_bool failed; /* a range ran out of host memory */
} sort_plan;

typedef union sort_key {
  double f;
  int64_t i;
} sort_key;

/* Whether key a goes strictly before key b. */
static bool before(const sort_plan *p, sort_key a, sort_key b) {
  if (p->integral) return p->descending ? a.i > b.i : a.i < b.i;
  bool a_nan = isnan(a.f), b_nan = isnan(b.f);
  if (p->descending) return (a_nan && !b_nan) || a.f > b.f;
  return (!a_nan && b_nan) || a.f < b.f;
}

/* Sorts positions pos[0..n) by their keys, stably: insertion sort of runs of RUN, then merges of
 * doubling width between pos and tmp.  Returns where the sorted positions ended up. */
enum { RUN = 16 };
static int64_t *merge_sort(const sort_plan *p, const sort_key *keys, int64_t *pos, int64_t *tmp,
                           int64_t n) {
  for (int64_t lo = 0; lo < n; lo += RUN) {
    int64_t hi = lo + RUN < n ? lo + RUN : n;
    for (int64_t i = lo + 1; i < hi; i++) {
      int64_t moving = pos[i], j = i;
      for (; j > lo && before(p, keys[moving], keys[pos[j - 1]]); j--) pos[j] = pos[j - 1];
      pos[j] = moving;
    }
  }
  for (int64_t width = RUN; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n;
      int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t a = lo, b = mid, out = lo;
      /* the right run's element goes first only when strictly before: stable */
      while (a < mid && b < hi)
        tmp[out++] = before(p, keys[pos[b]], keys[pos[a]]) ? pos[b++] : pos[a++];
      while (a < mid) tmp[out++] = pos[a++];
      while (b < hi) tmp[out++] = pos[b++];
    }
    int64_t *swap = pos;
    pos = tmp;
    tmp = swap;
  }
  return pos;
}

/* Byte offsets of row `row`'s first element in a tensor with `t`'s layout (the sort dimension
 * left out of the row number). */
static int64_t row_offset(const sort_plan *p, const emu_tensor *t, int64_t row) {
  int64_t offset = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (d == p->dim) continue;
    offset += (row % t->sizes[d]) * t->strides[d];
    row /= t->sizes[d];
  }
  return offset * (int64_t)emu_itemsize(t->dtype);
}

static void sort_range(void *context, int64_t begin, int64_t end) {
  sort_plan *p = context;
  const emu_tensor *self = p->self, *values = p->values, *indices = p->indices;
  const int64_t n = p->n, item = (int64_t)emu_itemsize(self->dtype);
  sort_key *keys = malloc((size_t)n * sizeof *keys);
  int64_t *pos = malloc((size_t)n * 2 * sizeof *pos);
  if (keys == NULL || pos == NULL) {
    atomic_store(&p->failed, true);
    free(keys);
    free(pos);
    return;
  }
  const int64_t in_step = p->dim >= 0 ? self->strides[p->dim] * item : 0;
  const int64_t value_step = p->dim >= 0 ? values->strides[p->dim] * item : 0;
  const int64_t index_step = p->dim >= 0 ? indices->strides[p->dim] * 8 : 0;
  for (int64_t row = begin; row < end; row++) {
    const char *src = self->data + row_offset(p, self, row);
    for (int64_t j = 0; j < n; j++) {
      const char *at = src + j * in_step;
      if (p->integral) {
        keys[j].i = emu_load_int(at, self->dtype);
      } else if (self->dtype == TB_DTYPE_FLOAT32) {
        keys[j].f = *(const float *)at;
      } else {
        keys[j].f = emu_load_double(at, self->dtype);
      }
      pos[j] = j;
    }
    const int64_t *sorted = merge_sort(p, keys, pos, pos + n, n);
    char *value_row = values->data + row_offset(p, values, row);
    char *index_row = indices->data + row_offset(p, indices, row);
    for (int64_t j = 0; j < p->k; j++) {
      memcpy(value_row + j * value_step, src + sorted[j] * in_step, (size_t)item);
      memcpy(index_row + j * index_step, &sorted[j], sizeof sorted[j]);
    }
  }
  free(keys);
  free(pos);
}

static void run_sort(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  sort_plan *p = call->scratch;
  /* the tensors as captured by this task (the enqueue half's pointers are the caller's) */
  int first_output = call->count - 2;
  p->self = call->args[0].as.tensor;
  p->values = call->args[first_output].as.tensor;
  p->indices = call->args[first_output + 1].as.tensor;
  if (p->rows == 0 || p->k == 0) return;
  atomic_init(&p->failed, false);
  /* a range is at least ~4096 keys of work, so short rows are batched */
  int64_t grain = p->n >= 4096 ? 1 : 4096 / p->n;
  emu_parallel_for(p->rows, grain, sort_range, p);
  if (atomic_load(&p->failed)) tbk_task_fail(task, "sort: out of host memory for a row's keys");
}

/* The shared half of both kernels: checks the outputs' shapes against self's with k along dim,
 * then enqueues the sort. */
static tb_status enqueue_sort(const char *name, tb_stream stream, const tb_value *args,
                              int32_t count, int64_t dim, int64_t k, bool descending) {
  const tb_tensor *self = args[0].as.tensor, *values = args[count - 2].as.tensor,
                  *indices = args[count - 1].as.tensor;
  int32_t rank = self->ndim > 0 ? self->ndim : 1;
  if (dim < -rank || dim >= rank)
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: dimension", name);
  if (dim < 0) dim += rank;
  int64_t n = self->ndim > 0 ? self->sizes[dim] : 1;
  bool shaped = values->dtype == self->dtype && indices->dtype == TB_DTYPE_INT64 &&
                values->ndim == self->ndim && indices->ndim == self->ndim && k >= 0 && k <= n;
  for (int32_t d = 0; shaped && d < self->ndim; d++) {
    int64_t want = d == dim ? k : self->sizes[d];
    shaped = values->sizes[d] == want && indices->sizes[d] == want;
  }
  if (!shaped) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: needs ATen's checks (shapes, dtypes, k)",
                    name);
  }
  int64_t numel = 1;
  for (int32_t d = 0; d < self->ndim; d++) numel *= self->sizes[d];
  sort_plan plan = {.dim = self->ndim > 0 ? (int)dim : -1,
                    .n = n,
                    .k = k,
                    .rows = n > 0 ? numel / n : 0,
                    .descending = descending,
                    .integral = !emu_is_floating(self->dtype)};
  return emu_launch(name, stream, args, count, run_sort, sizeof plan, &plan);
}

/* sort.values_stable [self, stable?, dim, descending, values, indices]: always stable. */
static tb_status kernel_sort(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("sort.values_stable", args, count, "T?ibTT");
  if (status != TB_OK) return status;
  const tb_tensor *self = args[0].as.tensor;
  int64_t dim = args[2].as.i, rank = self->ndim > 0 ? self->ndim : 1;
  int64_t n =
      self->ndim > 0 && dim >= -rank && dim < rank ? self->sizes[dim < 0 ? dim + rank : dim] : 1;
  return enqueue_sort("sort.values_stable", stream, args, count, dim, n, args[3].as.b != 0);
}

/* topk.values [self, k, dim, largest, sorted, values, indices]: the k largest (or smallest),
 * sorted either way. */
static tb_status kernel_topk(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("topk.values", args, count, "TiibbTT");
  if (status != TB_OK) return status;
  return enqueue_sort("topk.values", stream, args, count, args[2].as.i, args[1].as.i,
                      args[3].as.b != 0);
}

EMU_KERNEL(k_sort, "sort.values_stable", kernel_sort, EMU_ALL_TYPES,
           "sort.values_stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False, "
           "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)");
/* not bool, as the CPU's and CUDA's topk */
EMU_KERNEL(k_topk, "topk.values", kernel_topk, EMU_FLOATS | EMU_INTS,
           "topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, "
           "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)");

const tb_kernel *const emu_sort_kernels[] = {&k_sort, &k_topk, NULL};
