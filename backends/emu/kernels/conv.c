/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * 2-d convolution: convolution_overrideable and convolution_backward_overrideable, what
 * at::convolution calls for an out-of-tree device (conv1d arrives as a 2-d convolution of
 * height 1), with stride, padding, dilation and groups, bias optional.
 *
 * With several input channels per group the work is matrix products (emu_gemm, blas.c) of each
 * group's weight [Og, K = Cg KH KW] and the im2col columns of its input [K, positions]:
 *  - forward: weight @ columns;
 *  - grad_input: weight^T @ grad_output, the columns' gradient, added back to the input
 *    positions the columns came from (col2im), by tasks that own whole input planes;
 *  - grad_weight: grad_output @ columns^T, summed over the batch, by tiles of the gradient.
 * Planes of MIN_COLS output positions or more make products wide enough item by item: a task
 * per (item, group, tile of output rows) builds its own tile of columns (forward), or per
 * (item, group, block of channels) its columns' gradient (grad_input).  Smaller planes (a
 * resnet's last layers have 16 or 4 positions per item) would make products of a few columns,
 * so their columns are batched: a chunk of items lies side by side, one [Og, K] @ [K, items
 * positions] product for all of them (grad_output gathered the same way; the product moved
 * into the output per item), row blocks of the weight split among the tasks.  grad_weight
 * always goes by chunks of columns, built first, in parallel, and summed in order.
 * Columns come row by row from the input, or from a zero-padded copy of the window of it
 * that the rows read (no bounds checks per row); output rows of NARROW positions or fewer go
 * channel by channel instead.  A 1x1 convolution with stride 1 and no padding reads the input
 * as its own columns.  With one input channel per group (depthwise, as mobilenet's) direct
 * loops per plane replace the products.  Scratch is bounded (CHUNK_BUDGET, TILE_BUDGET,
 * WINDOW_BUDGET), and the result does not depend on how tasks fall on threads: every sum runs
 * in a fixed order (chunks depend on sizes only).
 *
 * float32 and float64 compute in their own type, float16 and bfloat16 in float32 (staged);
 * int64 forwards (ATen's CPU convolution takes int64 on every path, other integer types on
 * some; autograd none) by the direct loops, exact in wrapping arithmetic.  Operands of other
 * layouts (channels_last, expanded gradients) are staged contiguous.  Declined, for the CPU
 * fallback: transposed convolution, other than 2-d, mixed dtypes, other integer types.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "kernel.h"

typedef struct conv_geom {
  int64_t N, C, H, W;                     /* input */
  int64_t O, OH, OW;                      /* output */
  int64_t KH, KW, SH, SW, PH, PW, DH, DW; /* kernel, stride, padding, dilation */
  int64_t G, Cg, Og;                      /* groups; input and output channels per group */
  int64_t K, P, HW;                       /* Cg * KH * KW, OH * OW, H * W */
  bool pointwise; /* 1x1, stride 1, no padding: the input planes are the im2col columns */
} conv_geom;

/* The output columns ow of [*lo, *hi) within [0, count) whose input column ow * stride +
 * offset lies in [0, limit). */
static void valid_range(int64_t offset, int64_t stride, int64_t limit, int64_t count, int64_t *lo,
                        int64_t *hi) {
  int64_t l = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t h = limit - 1 - offset < 0 ? 0 : (limit - 1 - offset) / stride + 1;
  if (h > count) h = count;
  if (l > h) l = h;
  *lo = l;
  *hi = h;
}

#define T float
#define SFX(name) name##_f32
#include "conv_loops.h"
#undef T
#undef SFX
#define T double
#define SFX(name) name##_f64
#include "conv_loops.h"
#undef T
#undef SFX
#define T int64_t
#define SFX(name) name##_i64
#define CONV_DIRECT_ONLY
#include "conv_loops.h"
#undef T
#undef SFX
#undef CONV_DIRECT_ONLY

/* The loop `name` of floating compute dtype `dt`. */
#define TYPED(dt, name) ((dt) == TB_DTYPE_FLOAT64 ? name##_f64 : name##_f32)

/* The forward's dtypes. */
#define CONV_DTYPES (EMU_FLOATS | TB_DTYPE_BIT(TB_DTYPE_INT64))

/* Elements of scratch per chunk of columns (the columns, their gradient, grad_output), and
 * of one task's tile of columns (within a core's cache). */
#define CHUNK_BUDGET ((int64_t)1 << 22)
#define TILE_BUDGET ((int64_t)1 << 18)
/* Elements of grad_input's padded window per task (one plane at least). */
#define WINDOW_BUDGET ((int64_t)1 << 20)
/* Columns per product at least where the chunk has them (narrower products waste BLAS's
 * kernels), rows per block at least. */
#define MIN_COLS 256
#define MIN_ROWS 64
/* Output rows this narrow build their columns channel by channel (im2col_narrow). */
#define NARROW 8
/* Products per phase, where they keep MIN_ROWS rows and MIN_COLS columns. */
#define CONV_TASKS 4
/* Elements copied (im2col, col2im, gathers) below which a phase runs on one thread. */
#define COPY_GRAIN ((int64_t)1 << 15)

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The geometry of a call: input [N, C, H, W], weight [O, C / groups, KH, KW], stride, padding
 * and dilation (two each), groups. */
static conv_geom geometry(const int64_t *input, const int64_t *weight, const int64_t *stride,
                          const int64_t *padding, const int64_t *dilation, int64_t groups) {
  conv_geom g = {.N = input[0], .C = input[1], .H = input[2], .W = input[3]};
  g.O = weight[0];
  g.KH = weight[2];
  g.KW = weight[3];
  g.SH = stride[0];
  g.SW = stride[1];
  g.PH = padding[0];
  g.PW = padding[1];
  g.DH = dilation[0];
  g.DW = dilation[1];
  g.OH = (g.H + 2 * g.PH - g.DH * (g.KH - 1) - 1) / g.SH + 1;
  g.OW = (g.W + 2 * g.PW - g.DW * (g.KW - 1) - 1) / g.SW + 1;
  g.G = groups;
  g.Cg = groups > 0 ? g.C / groups : 0;
  g.Og = groups > 0 ? g.O / groups : 0;
  g.K = g.Cg * g.KH * g.KW;
  g.P = g.OH * g.OW;
  g.HW = g.H * g.W;
  g.pointwise = g.KH == 1 && g.KW == 1 && g.SH == 1 && g.SW == 1 && g.PH == 0 && g.PW == 0;
  return g;
}

/* The same from a captured call whose stride, padding and dilation are args[at], [at + 1],
 * [at + 2] and groups args[at + 5]. */
static conv_geom geometry_of(const emu_arg *args, int at, const emu_tensor *input,
                             const emu_tensor *weight) {
  return geometry(input->sizes, weight->sizes, args[at].as.ints.items, args[at + 1].as.ints.items,
                  args[at + 2].as.ints.items, args[at + 5].as.i);
}

/* ------------------------------------------------------------------------------------------ */
/* The parallel loops                                                                         */

typedef struct conv_job {
  conv_geom g;
  tb_dtype dt; /* compute dtype */
  int64_t item;
  const char *in, *w, *bias, *go; /* contiguous operands in dt (bias may be NULL) */
  char *out;                      /* the output (forward) or grad_input (backward) */
  char *gw, *gb;                  /* grad_weight, grad_bias (backward) */
  bool want_gi, want_gw;          /* backward: the gradients asked for */
  /* Planes of MIN_COLS positions or more: a task per item and rows of its positions.  Its tile
   * is trows output rows (tiles per item), its channel block cb channels (cblocks per item). */
  int64_t trows, tiles, cb, cblocks;
  /* Smaller planes: chunks of items [n0, n0 + nb) whose columns lie side by side, output rows
   * [r0, r1) of each (all of them when nb > 1); column q of a chunk is position r0 OW + q % pw
   * of item n0 + q / pw, pw = (r1 - r0) OW. */
  int64_t n0, nb, r0, r1, pw, qw;
  char *col;  /* the chunk's im2col columns [C taps][qw] (NULL: the input itself) */
  char *gcol; /* backward: their gradient [C taps][qw] */
  char *gout; /* backward: the chunk's grad_output [O][qw] (NULL: read per item, in place) */
  /* a chunk's products: row blocks of mb (mblocks per group) by column tiles of ipt whole items
   * or tw columns of one (tpi per item) */
  int64_t mb, mblocks, ctiles, ipt, tpi, tw;
  /* backward: grad_input's products first (gi_tasks), then grad_weight's tiles of ob output
   * channels by kb rows of K */
  int64_t gi_tasks, ob, oblocks, kb, kblocks;
  atomic_bool failed; /* a task ran out of host memory */
} conv_job;

static void *scratch_or_fail(conv_job *j, int64_t elements) {
  void *p = malloc((size_t)max64(elements, 1) * (size_t)j->item);
  if (p == NULL) atomic_store(&j->failed, true);
  return p;
}

/* The tasks a phase's products are split into where they are large enough, whatever the
 * number of threads: BLAS's sums depend on how a product is cut, so the cut must not. */
static int64_t wanted_tasks(void) { return CONV_TASKS; }

static bool padded(const conv_geom *g) { return g->PH > 0 || g->PW > 0; }

/* Planes this wide take a task per item and rows of positions (their columns built in the
 * task, while they are in its cache); smaller ones are batched, several items side by side. */
static bool wide(const conv_geom *g) { return g->P >= MIN_COLS; }

/* The padded window of the input that output rows [r0, r1) read: hq rows by wq columns. */
static void window(const conv_geom *g, int64_t r0, int64_t r1, int64_t *hq, int64_t *wq) {
  *hq = (r1 - r0 - 1) * g->SH + (g->KH - 1) * g->DH + 1;
  *wq = (g->OW - 1) * g->SW + (g->KW - 1) * g->DW + 1;
}

/* The im2col columns of output rows [r0, r1) of `channels` input planes at `in`, rows of col
 * ldcol apart: channel by channel for narrow rows, else row by row from the input or, with
 * padding, from a padded copy of the window the rows read (`win`, scratch for it). */
static void build_columns(const conv_job *j, const char *in, int64_t channels, int64_t r0,
                          int64_t r1, char *col, int64_t ldcol, char *win) {
  const conv_geom *g = &j->g;
  if (g->pointwise) { /* the planes' rows themselves */
    for (int64_t c = 0; c < channels; c++) {
      memcpy(col + c * ldcol * j->item, in + (c * g->HW + r0 * g->OW) * j->item,
             (size_t)((r1 - r0) * g->OW * j->item));
    }
  } else if (g->OW <= NARROW) {
    TYPED(j->dt, im2col_narrow)(g, in, channels, r0, r1, col, ldcol);
  } else if (!padded(g)) {
    TYPED(j->dt, im2col_window)
    (g, in + r0 * g->SH * g->W * j->item, channels, r1 - r0, g->W, g->HW, col, ldcol);
  } else {
    int64_t hq, wq;
    window(g, r0, r1, &hq, &wq);
    TYPED(j->dt, pad_window)(g, in, channels, r0, hq, wq, win);
    TYPED(j->dt, im2col_window)(g, win, channels, r1 - r0, wq, hq * wq, col, ldcol);
  }
}

/* Scratch for build_columns' window of `channels` planes over output rows [r0, r1) (NULL
 * where it takes none, or out of memory: see j->failed). */
static char *window_scratch(conv_job *j, int64_t channels, int64_t r0, int64_t r1) {
  if (j->g.OW <= NARROW || !padded(&j->g)) return NULL;
  int64_t hq, wq;
  window(&j->g, r0, r1, &hq, &wq);
  return scratch_or_fail(j, channels * hq * wq);
}

/* ---- wide planes ---- */

/* forward: task t is (item, group, tile of rows), its columns built in the task */
static void forward_items(void *context, int64_t begin, int64_t end) {
  conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t item = j->item;
  char *col = g->pointwise ? NULL : scratch_or_fail(j, g->K * j->trows * g->OW);
  char *win = g->pointwise ? NULL : window_scratch(j, g->Cg, 0, j->trows);
  if (atomic_load(&j->failed)) {
    free(col);
    free(win);
    return;
  }
  for (int64_t t = begin; t < end; t++) {
    const int64_t n = t / (g->G * j->tiles), grp = t / j->tiles % g->G;
    const int64_t r0 = t % j->tiles * j->trows, r1 = min64(r0 + j->trows, g->OH);
    const int64_t p0 = r0 * g->OW, cols = (r1 - r0) * g->OW;
    const char *in = j->in + (n * g->C + grp * g->Cg) * g->HW * item;
    char *out = j->out + ((n * g->O + grp * g->Og) * g->P + p0) * item;
    const char *b = in + p0 * item;
    int64_t ldb = g->HW;
    if (!g->pointwise) {
      build_columns(j, in, g->Cg, r0, r1, col, cols, win);
      b = col;
      ldb = cols;
    }
    if (j->bias != NULL) {
      TYPED(j->dt, fill_rows)(out, g->Og, cols, g->P, j->bias + grp * g->Og * item);
    }
    emu_gemm(j->dt, false, false, g->Og, cols, g->K, 1.0, j->w + grp * g->Og * g->K * item, g->K, b,
             ldb, j->bias != NULL ? 1.0 : 0.0, out, g->P);
  }
  free(col);
  free(win);
}

/* grad_input: task t is (item, group, block of the group's input channels): the transposed
 * weight times grad_output, tile of rows by tile, added back to the positions the columns
 * came from (no two tasks write one element). */
static void input_items(void *context, int64_t begin, int64_t end) {
  conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t item = j->item, taps = g->KH * g->KW;
  int64_t hq = 0, wq = 0;
  window(g, 0, g->OH, &hq, &wq);
  const bool through_window = g->OW > NARROW && padded(g);
  char *col = g->pointwise ? NULL : scratch_or_fail(j, j->cb * taps * j->trows * g->OW);
  char *win = through_window ? scratch_or_fail(j, j->cb * hq * wq) : NULL;
  if (atomic_load(&j->failed)) {
    free(col);
    free(win);
    return;
  }
  for (int64_t t = begin; t < end; t++) {
    const int64_t n = t / (g->G * j->cblocks), grp = t / j->cblocks % g->G;
    const int64_t c0 = t % j->cblocks * j->cb, channels = min64(c0 + j->cb, g->Cg) - c0;
    if (channels <= 0) continue;
    char *gi = j->out + (n * g->C + grp * g->Cg + c0) * g->HW * item;
    const char *go = j->go + (n * g->O + grp * g->Og) * g->P * item;
    const char *w = j->w + (grp * g->Og * g->K + c0 * taps) * item; /* op(A): [channels taps, Og] */
    if (g->pointwise) {
      emu_gemm(j->dt, true, false, channels, g->P, g->Og, 1.0, w, g->K, go, g->P, 0.0, gi, g->HW);
      continue;
    }
    memset(gi, 0, (size_t)(channels * g->HW * item));
    if (win != NULL) memset(win, 0, (size_t)(channels * hq * wq * item));
    for (int64_t r0 = 0; r0 < g->OH; r0 += j->trows) {
      const int64_t r1 = min64(r0 + j->trows, g->OH), cols = (r1 - r0) * g->OW;
      emu_gemm(j->dt, true, false, channels * taps, cols, g->Og, 1.0, w, g->K,
               go + r0 * g->OW * item, g->P, 0.0, col, cols);
      if (g->OW <= NARROW) {
        TYPED(j->dt, col2im_narrow)(g, col, channels, r0, r1, gi, cols);
      } else if (win == NULL) {
        TYPED(j->dt, col2im_window)
        (g, col, channels, r1 - r0, g->W, g->HW, gi + r0 * g->SH * g->W * item, cols);
      } else {
        TYPED(j->dt, col2im_window)
        (g, col, channels, r1 - r0, wq, hq * wq, win + r0 * g->SH * wq * item, cols);
      }
    }
    if (win != NULL) TYPED(j->dt, unpad_window)(g, win, channels, 0, hq, wq, gi);
  }
  free(col);
  free(win);
}

/* Tiles of rows for tasks per item: TILE_BUDGET elements of `rows` rows of columns at most
 * (one output row at least), and enough tasks (`units` of them before tiling) for the pool
 * while the tiles keep MIN_COLS columns. */
static void plan_item_rows(conv_job *j, int64_t rows, int64_t units) {
  const conv_geom *g = &j->g;
  int64_t trows = g->OH;
  if (!g->pointwise) trows = min64(trows, TILE_BUDGET / max64(rows * g->OW, 1));
  const int64_t want = ceil_div(wanted_tasks(), max64(units, 1));
  if (want > 1) {
    trows = min64(trows, max64(ceil_div(g->OH, want), ceil_div(MIN_COLS, max64(g->OW, 1))));
  }
  j->trows = max64(trows, 1);
  j->tiles = ceil_div(g->OH, j->trows);
}

/* ---- smaller planes: chunks of items side by side ---- */

/* The chunk of items and rows starting at item n0, row r0: whole items (`items` at most) while
 * `per_column` elements of scratch per column fit the budget, else rows of one item. */
static void plan_chunk(conv_job *j, int64_t per_column, int64_t items) {
  const conv_geom *g = &j->g;
  const int64_t per_item = max64(per_column * g->P, 1);
  if (per_item <= CHUNK_BUDGET || g->OH <= 1) {
    j->nb = min64(min64(g->N - j->n0, items), max64(CHUNK_BUDGET / per_item, 1));
    j->r0 = 0;
    j->r1 = g->OH;
  } else {
    j->nb = 1;
    j->r1 = min64(j->r0 + max64(CHUNK_BUDGET / max64(per_column * g->OW, 1), 1), g->OH);
  }
  j->pw = (j->r1 - j->r0) * g->OW;
  j->qw = j->nb * j->pw;
}

/* Moves to the next chunk; false after the last. */
static bool next_chunk(conv_job *j) {
  if (j->r1 < j->g.OH) {
    j->r0 = j->r1;
  } else {
    j->n0 += j->nb;
    j->r0 = 0;
  }
  return j->n0 < j->g.N;
}

/* Channel blocks of the chunk's im2col and col2im tasks: about 8 tasks per thread. */
static void plan_channels(conv_job *j) {
  j->cblocks = min64(ceil_div(4 * wanted_tasks(), j->nb), max64(j->g.C / 8, 1));
  j->cb = ceil_div(j->g.C, j->cblocks);
  j->cblocks = ceil_div(j->g.C, j->cb);
}

/* The columns [q0, q1) of column tile t of the chunk. */
static void tile_range(const conv_job *j, int64_t t, int64_t *q0, int64_t *q1) {
  if (j->ipt > 1) {
    *q0 = t * j->ipt * j->pw;
    *q1 = min64(*q0 + j->ipt * j->pw, j->qw);
  } else {
    const int64_t first = t / j->tpi * j->pw;
    *q0 = first + t % j->tpi * j->tw;
    *q1 = min64(*q0 + j->tw, first + j->pw);
  }
}

/* The chunk's column tiles, at least MIN_COLS columns each where the chunk has them, and
 * `units` tiles where that leaves tiles of that size: whole items when an item has fewer
 * columns, else parts of one item. */
static void plan_columns(conv_job *j, int64_t units) {
  j->ipt = 1;
  j->tpi = 1;
  j->tw = j->pw;
  if (j->pw < MIN_COLS && j->nb > 1) {
    j->ipt = min64(max64(ceil_div(MIN_COLS, j->pw), ceil_div(j->nb, units)), j->nb);
    j->ctiles = ceil_div(j->nb, j->ipt);
  } else {
    const int64_t per_item = min64(ceil_div(units, j->nb), max64(j->pw / MIN_COLS, 1));
    j->tw = ceil_div(j->pw, per_item);
    j->tpi = ceil_div(j->pw, j->tw);
    j->ctiles = j->nb * j->tpi;
  }
}

/* Row blocks of `rows` (a multiple of `align` each, MIN_ROWS at least) for `units` tasks over
 * `have` tasks already. */
static void plan_rows(int64_t rows, int64_t have, int64_t units, int64_t align, int64_t *mb,
                      int64_t *mblocks) {
  const int64_t blocks = min64(ceil_div(units, max64(have, 1)), max64(rows / MIN_ROWS, 1));
  const int64_t b = ceil_div(ceil_div(rows, max64(blocks, 1)), align) * align;
  *mb = max64(min64(b, rows), 1);
  *mblocks = ceil_div(rows, *mb);
}

/* The grain of a phase of `tasks` tasks copying `elements` elements in all: the whole phase
 * on the calling thread when it is too small to be worth waking the pool. */
static int64_t copy_grain(int64_t tasks, int64_t elements) {
  return elements < COPY_GRAIN ? max64(tasks, 1) : 1;
}

/* Phase 1 of a chunk: task t < nb cblocks builds the columns of item t / cblocks, channel
 * block t % cblocks (when the chunk has a column buffer); then, backward, task t gathers
 * grad_output plane (i, o) of the chunk (when it has a grad_output buffer). */
static void chunk_prepare(void *context, int64_t begin, int64_t end) {
  conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t item = j->item, taps = g->KH * g->KW;
  const int64_t builds = j->col != NULL ? j->nb * j->cblocks : 0;
  char *win = builds > 0 ? window_scratch(j, j->cb, j->r0, j->r1) : NULL;
  if (atomic_load(&j->failed)) {
    free(win);
    return;
  }
  for (int64_t t = begin; t < end; t++) {
    if (t < builds) {
      const int64_t i = t / j->cblocks, c0 = t % j->cblocks * j->cb;
      build_columns(j, j->in + ((j->n0 + i) * g->C + c0) * g->HW * item,
                    min64(c0 + j->cb, g->C) - c0, j->r0, j->r1,
                    j->col + (c0 * taps * j->qw + i * j->pw) * item, j->qw, win);
      continue;
    }
    const int64_t i = (t - builds) / g->O, o = (t - builds) % g->O;
    memcpy(j->gout + (o * j->qw + i * j->pw) * item,
           j->go + (((j->n0 + i) * g->O + o) * g->P + j->r0 * g->OW) * item,
           (size_t)(j->pw * item));
  }
  free(win);
}

/* forward: task t is (group, row block, column tile) of the chunk's products, written into the
 * output directly when the tile lies in one item, else through a scratch tile. */
static void forward_products(void *context, int64_t begin, int64_t end) {
  conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t item = j->item;
  for (int64_t t = begin; t < end; t++) {
    const int64_t grp = t / (j->mblocks * j->ctiles), tile = t % j->ctiles;
    const int64_t o0 = t / j->ctiles % j->mblocks * j->mb, rows = min64(j->mb, g->Og - o0);
    const int64_t o = grp * g->Og + o0;
    int64_t q0, q1;
    tile_range(j, tile, &q0, &q1);
    const char *a = j->w + o * g->K * item;
    const char *b = j->col + (grp * g->K * j->qw + q0) * item;
    const char *bias = j->bias != NULL ? j->bias + o * item : NULL;
    const int64_t first = q0 / j->pw, last = (q1 - 1) / j->pw;
    if (first == last) { /* one item's positions: the output itself */
      char *out =
          j->out + (((j->n0 + first) * g->O + o) * g->P + j->r0 * g->OW + q0 % j->pw) * item;
      if (bias != NULL) TYPED(j->dt, fill_rows)(out, rows, q1 - q0, g->P, bias);
      emu_gemm(j->dt, false, false, rows, q1 - q0, g->K, 1.0, a, g->K, b, j->qw,
               bias != NULL ? 1.0 : 0.0, out, g->P);
      continue;
    }
    char *tmp = scratch_or_fail(j, rows * (q1 - q0));
    if (tmp == NULL) return;
    emu_gemm(j->dt, false, false, rows, q1 - q0, g->K, 1.0, a, g->K, b, j->qw, 0.0, tmp, q1 - q0);
    for (int64_t i = first; i <= last; i++) { /* whole items (nb > 1: pw == P) */
      const int64_t a0 = max64(q0, i * j->pw), a1 = min64(q1, (i + 1) * j->pw);
      TYPED(j->dt, add_rows)
      (j->out + (((j->n0 + i) * g->O + o) * g->P + a0 - i * j->pw) * item, g->P,
       tmp + (a0 - q0) * item, q1 - q0, rows, a1 - a0, bias);
    }
    free(tmp);
  }
}

/* grad_weight's tile (group, output block, K block) of a chunk: grad_output times the columns
 * transposed, summed over the chunk's columns (in one product, or item by item where neither
 * is gathered side by side). */
static void weight_tile(conv_job *j, int64_t u) {
  const conv_geom *g = &j->g;
  const int64_t item = j->item, grp = u / (j->oblocks * j->kblocks);
  const int64_t o0 = u / j->kblocks % j->oblocks * j->ob, o1 = min64(o0 + j->ob, g->Og);
  const int64_t k0 = u % j->kblocks * j->kb, k1 = min64(k0 + j->kb, g->K);
  const int64_t o = grp * g->Og + o0;
  char *gw = j->gw + (o * g->K + k0) * item;
  const bool first = j->n0 == 0 && j->r0 == 0; /* the gradient's first terms: no zeroing pass */
  if (j->gout != NULL) {
    emu_gemm(j->dt, false, true, o1 - o0, k1 - k0, j->qw, 1.0, j->gout + o * j->qw * item, j->qw,
             j->col + (grp * g->K + k0) * j->qw * item, j->qw, first ? 0.0 : 1.0, gw, g->K);
    return;
  }
  for (int64_t i = 0; i < j->nb; i++) {
    const int64_t n = j->n0 + i, p0 = j->r0 * g->OW;
    const char *go = j->go + ((n * g->O + o) * g->P + p0) * item;
    const char *b = j->col != NULL ? j->col + ((grp * g->K + k0) * j->qw + i * j->pw) * item
                                   : j->in + ((n * g->C + grp * g->Cg + k0) * g->HW + p0) * item;
    emu_gemm(j->dt, false, true, o1 - o0, k1 - k0, j->pw, 1.0, go, g->P, b,
             j->col != NULL ? j->qw : g->HW, first && i == 0 ? 0.0 : 1.0, gw, g->K);
  }
}

/* backward: task t < gi_tasks is (group, row block of K, column tile) of grad_input's products
 * (the columns' gradient: the group's weight transposed times grad_output), the others
 * grad_weight's tiles. */
static void backward_products(void *context, int64_t begin, int64_t end) {
  conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t item = j->item;
  for (int64_t t = begin; t < end; t++) {
    if (t >= j->gi_tasks) {
      weight_tile(j, t - j->gi_tasks);
      continue;
    }
    const int64_t grp = t / (j->mblocks * j->ctiles), tile = t % j->ctiles;
    const int64_t k0 = t / j->ctiles % j->mblocks * j->mb, rows = min64(j->mb, g->K - k0);
    int64_t q0, q1;
    tile_range(j, tile, &q0, &q1);
    const char *b;
    int64_t ldb;
    if (j->gout != NULL) {
      b = j->gout + (grp * g->Og * j->qw + q0) * item;
      ldb = j->qw;
    } else { /* nb == 1 */
      b = j->go + ((j->n0 * g->O + grp * g->Og) * g->P + j->r0 * g->OW + q0) * item;
      ldb = g->P;
    }
    emu_gemm(j->dt, true, false, rows, q1 - q0, g->Og, 1.0, j->w + (grp * g->Og * g->K + k0) * item,
             g->K, b, ldb, 0.0, j->gcol + ((grp * g->K + k0) * j->qw + q0) * item, j->qw);
  }
}

/* backward, last phase of a chunk: task t adds the columns' gradient of item t / cblocks,
 * channel block t % cblocks into grad_input (zeroed at the item's first chunk), the way
 * build_columns read them. */
static void input_columns(void *context, int64_t begin, int64_t end) {
  conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t taps = g->KH * g->KW, item = j->item;
  int64_t hq, wq;
  window(g, j->r0, j->r1, &hq, &wq);
  char *win = window_scratch(j, j->cb, j->r0, j->r1);
  if (atomic_load(&j->failed)) {
    free(win);
    return;
  }
  for (int64_t t = begin; t < end; t++) {
    const int64_t i = t / j->cblocks, c0 = t % j->cblocks * j->cb;
    const int64_t channels = min64(c0 + j->cb, g->C) - c0;
    char *gi = j->out + ((j->n0 + i) * g->C + c0) * g->HW * item;
    const char *gcol = j->gcol + (c0 * taps * j->qw + i * j->pw) * item;
    if (g->pointwise) { /* the columns are the planes' rows */
      TYPED(j->dt, add_rows)
      (gi + j->r0 * g->OW * item, g->HW, gcol, j->qw, channels, j->pw, NULL);
      continue;
    }
    if (j->r0 == 0) memset(gi, 0, (size_t)(channels * g->HW * item));
    if (g->OW <= NARROW) {
      TYPED(j->dt, col2im_narrow)(g, gcol, channels, j->r0, j->r1, gi, j->qw);
    } else if (win == NULL) {
      TYPED(j->dt, col2im_window)
      (g, gcol, channels, j->r1 - j->r0, g->W, g->HW, gi + j->r0 * g->SH * g->W * item, j->qw);
    } else {
      memset(win, 0, (size_t)(channels * hq * wq * item));
      TYPED(j->dt, col2im_window)(g, gcol, channels, j->r1 - j->r0, wq, hq * wq, win, j->qw);
      TYPED(j->dt, unpad_window)(g, win, channels, j->r0, hq, wq, gi);
    }
  }
  free(win);
}

/* grad_weight's tiles over the chunk: output blocks, then K blocks, for the pool. */
static int64_t plan_weight_tiles(conv_job *j) {
  const conv_geom *g = &j->g;
  const int64_t want = wanted_tasks();
  plan_rows(g->Og, g->G, want, 8, &j->ob, &j->oblocks);
  plan_rows(g->K, g->G * j->oblocks, want, 8, &j->kb, &j->kblocks);
  return g->G * j->oblocks * j->kblocks;
}

/* ---- the two directions ---- */

/* The forward of a grouped convolution. */
static void grouped_forward(conv_job *j) {
  const conv_geom *g = &j->g;
  const int64_t want = wanted_tasks();
  if (wide(g)) {
    plan_item_rows(j, g->K, g->N * g->G);
    emu_parallel_for(g->N * g->G * j->tiles, 1, forward_items, j);
    return;
  }
  const int64_t per_column = g->C * g->KH * g->KW;
  j->n0 = 0;
  j->r0 = 0;
  plan_chunk(j, per_column, g->N);
  j->col = scratch_or_fail(j, per_column * j->qw);
  if (j->col == NULL) return;
  do {
    plan_chunk(j, per_column, g->N);
    plan_channels(j);
    emu_parallel_for(j->nb * j->cblocks, copy_grain(j->nb * j->cblocks, per_column * j->qw),
                     chunk_prepare, j);
    plan_columns(j, ceil_div(want, g->G));
    plan_rows(g->Og, g->G * j->ctiles, want, 8, &j->mb, &j->mblocks);
    emu_parallel_for(g->G * j->mblocks * j->ctiles, 1, forward_products, j);
  } while (!atomic_load(&j->failed) && next_chunk(j));
  free(j->col);
  j->col = NULL;
}

/* The backward of a grouped convolution: grad_input and / or grad_weight. */
static void grouped_backward(conv_job *j) {
  const conv_geom *g = &j->g;
  const int64_t taps = g->KH * g->KW, rows = g->C * taps, want = wanted_tasks();
  if (g->N == 0 || g->P == 0) { /* nothing flows back */
    if (j->want_gw) memset(j->gw, 0, (size_t)(g->O * g->K * j->item));
    if (j->want_gi) memset(j->out, 0, (size_t)(g->N * g->C * g->HW * j->item));
    return;
  }
  const bool items = wide(g);
  if (items && j->want_gi) {
    /* channel blocks: enough tasks for the pool, a tile of columns of one output row and a
     * window of the item's planes (WINDOW_BUDGET, or one plane) each */
    int64_t hq, wq;
    window(g, 0, g->OH, &hq, &wq);
    j->cb =
        min64(ceil_div(g->Cg, ceil_div(want, g->N * g->G)), TILE_BUDGET / max64(taps * g->OW, 1));
    if (padded(g) && g->OW > NARROW) j->cb = min64(j->cb, WINDOW_BUDGET / max64(hq * wq, 1));
    j->cb = max64(j->cb, 1);
    j->cblocks = ceil_div(g->Cg, j->cb);
    plan_item_rows(j, j->cb * taps, 0);
    emu_parallel_for(g->N * g->G * j->cblocks, 1, input_items, j);
  }
  if (items && !j->want_gw) return;
  /* Chunks of columns (for wide planes: grad_weight's alone, without any for a pointwise
   * convolution, which reads the input), with grad_output gathered side by side when small. */
  const bool gi = !items && j->want_gi, own = !(items && g->pointwise);
  const int64_t per_column = (items ? 0 : g->O) + (own && j->want_gw ? rows : 0) + (gi ? rows : 0);
  j->n0 = 0;
  j->r0 = 0;
  plan_chunk(j, per_column, g->N);
  /* one block for the three (blocks freed together can shrink the heap, to be faulted back in
   * at every call) */
  const int64_t cap = j->qw, gout = !items && j->nb > 1 ? g->O * cap : 0;
  const int64_t col = own && j->want_gw ? rows * cap : 0;
  char *block = scratch_or_fail(j, gout + col + (gi ? rows * cap : 0));
  if (block == NULL) return;
  j->gout = gout > 0 ? block : NULL;
  j->col = col > 0 ? block + gout * j->item : NULL;
  j->gcol = gi ? block + (gout + col) * j->item : NULL;
  do {
    plan_chunk(j, per_column, g->N);
    plan_channels(j);
    const int64_t builds = j->col != NULL ? j->nb * j->cblocks : 0;
    const int64_t gathers = j->gout != NULL ? j->nb * g->O : 0;
    const int64_t copies = (builds > 0 ? rows : 0) * j->qw + (gathers > 0 ? g->O : 0) * j->qw;
    emu_parallel_for(builds + gathers, copy_grain(builds + gathers, copies), chunk_prepare, j);
    j->gi_tasks = 0;
    if (gi) {
      plan_columns(j, ceil_div(want, g->G));
      plan_rows(g->K, g->G * j->ctiles, want, taps, &j->mb, &j->mblocks);
      j->gi_tasks = g->G * j->mblocks * j->ctiles;
    }
    const int64_t gw_tasks = j->want_gw ? plan_weight_tiles(j) : 0;
    emu_parallel_for(j->gi_tasks + gw_tasks, 1, backward_products, j);
    if (gi) {
      emu_parallel_for(j->nb * j->cblocks, copy_grain(j->nb * j->cblocks, rows * j->qw),
                       input_columns, j);
    }
  } while (!atomic_load(&j->failed) && next_chunk(j));
  free(block);
  j->gout = j->col = j->gcol = NULL;
}

/* forward, depthwise or integer: task t is the output plane (n, o) */
static void forward_planes(void *context, int64_t begin, int64_t end) {
  const conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t item = j->item;
  void (*direct)(const conv_geom *, const void *, int64_t, const void *, const void *, void *) =
      j->dt == TB_DTYPE_INT64 ? direct_forward_i64 : TYPED(j->dt, direct_forward);
  for (int64_t t = begin; t < end; t++) {
    const int64_t n = t / g->O, o = t % g->O, grp = o / g->Og;
    direct(g, j->in + (n * g->C + grp * g->Cg) * g->HW * item, g->Cg, j->w + o * g->K * item,
           j->bias != NULL ? j->bias + o * item : NULL, j->out + t * g->P * item);
  }
}

/* grad_input, depthwise: task t is the input plane (n, c), fed by the Og planes of group c */
static void input_planes(void *context, int64_t begin, int64_t end) {
  const conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t item = j->item, taps = g->KH * g->KW;
  for (int64_t t = begin; t < end; t++) {
    const int64_t n = t / g->C, c = t % g->C;
    char *gi = j->out + t * g->HW * item;
    memset(gi, 0, (size_t)(g->HW * item));
    for (int64_t o = c * g->Og; o < (c + 1) * g->Og; o++) {
      TYPED(j->dt, depthwise_input)
      (g, j->go + (n * g->O + o) * g->P * item, j->w + o * taps * item, gi);
    }
  }
}

/* grad_weight, depthwise: task t is output channel o, every tap summed over the batch (per
 * output column first, in dt, then over the columns in double) */
static void weight_planes(void *context, int64_t begin, int64_t end) {
  conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t item = j->item, taps = g->KH * g->KW;
  char *acc = scratch_or_fail(j, taps * g->OW);
  if (acc == NULL) return;
  for (int64_t o = begin; o < end; o++) {
    const int64_t c = o / g->Og;
    memset(acc, 0, (size_t)(taps * g->OW * item));
    for (int64_t n = 0; n < g->N; n++) {
      TYPED(j->dt, depthwise_weight)
      (g, j->go + (n * g->O + o) * g->P * item, j->in + (n * g->C + c) * g->HW * item, acc);
    }
    for (int64_t tap = 0; tap < taps; tap++) {
      emu_store_double(j->gw + (o * taps + tap) * item, j->dt,
                       TYPED(j->dt, sum)(acc + tap * g->OW * item, g->OW));
    }
  }
  free(acc);
}

/* grad_bias: task t is output channel o, grad_output summed over the batch and positions */
static void bias_channels(void *context, int64_t begin, int64_t end) {
  const conv_job *j = context;
  const conv_geom *g = &j->g;
  for (int64_t o = begin; o < end; o++) {
    double sum = 0;
    for (int64_t n = 0; n < g->N; n++) {
      sum += TYPED(j->dt, sum)(j->go + (n * g->O + o) * g->P * j->item, g->P);
    }
    emu_store_double(j->gb + o * j->item, j->dt, sum);
  }
}

/* Planes of `elements` each per chunk of the pool: about 2^14 multiply-adds. */
static int64_t plane_grain(int64_t elements) {
  return max64(1, ((int64_t)1 << 14) / max64(elements, 1));
}

/* grad_weight of a depthwise convolution. */
static void depthwise_weight(conv_job *j) {
  const conv_geom *g = &j->g;
  memset(j->gw, 0, (size_t)(g->O * g->K * j->item));
  emu_parallel_for(g->O, plane_grain(g->N * g->P * g->KH * g->KW), weight_planes, j);
}

/* ------------------------------------------------------------------------------------------ */
/* The kernels                                                                                */

/* float64 and int64 for themselves, float32 for the other floating types. */
static tb_dtype compute_dtype(tb_dtype d) {
  return d == TB_DTYPE_FLOAT64 || d == TB_DTYPE_INT64 ? d : TB_DTYPE_FLOAT32;
}

static bool present(const emu_arg *a) {
  return a->kind == TB_VALUE_TENSOR && a->as.tensor->numel > 0;
}

/* convolution_overrideable: (input, weight, bias?, stride, padding, dilation, transposed,
 * output_padding, groups, out) */
static void run_forward(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *a = call->args;
  const emu_tensor *input = a[0].as.tensor, *weight = a[1].as.tensor, *out = a[9].as.tensor;
  if (out->numel == 0) return;
  conv_job j = {.g = geometry_of(a, 3, input, weight), .dt = compute_dtype(out->dtype)};
  j.item = (int64_t)emu_itemsize(j.dt);
  void *scratch[3] = {NULL, NULL, NULL};
  j.in = emu_contiguous_as(input, j.dt, &scratch[0]);
  j.w = emu_contiguous_as(weight, j.dt, &scratch[1]);
  bool ok = j.in != NULL && j.w != NULL;
  if (present(&a[2])) {
    j.bias = emu_contiguous_as(a[2].as.tensor, j.dt, &scratch[2]);
    ok = ok && j.bias != NULL;
  }
  j.out = emu_output_begin(out, j.dt);
  ok = ok && j.out != NULL;
  const conv_geom *g = &j.g;
  if (ok && (g->Cg == 1 || j.dt == TB_DTYPE_INT64)) {
    emu_parallel_for(g->N * g->O, plane_grain(g->P * g->K), forward_planes, &j);
  } else if (ok) {
    grouped_forward(&j);
  }
  ok = ok && !atomic_load(&j.failed);
  if (!ok) tbk_task_fail(task, "convolution_overrideable: out of host memory");
  emu_output_end(out, j.out, j.dt, ok);
  for (int k = 0; k < 3; k++) free(scratch[k]);
}

/* convolution_backward_overrideable: (grad_output, input, weight, stride, padding, dilation,
 * transposed, output_padding, groups, output_mask, grad_input?, grad_weight?, grad_bias?) */
static void run_backward(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *a = call->args;
  const emu_tensor *grad_out = a[0].as.tensor, *input = a[1].as.tensor, *weight = a[2].as.tensor;
  const emu_tensor *gi = present(&a[10]) ? a[10].as.tensor : NULL;
  const emu_tensor *gw = present(&a[11]) ? a[11].as.tensor : NULL;
  const emu_tensor *gb = present(&a[12]) ? a[12].as.tensor : NULL;
  conv_job j = {.g = geometry_of(a, 3, input, weight), .dt = compute_dtype(input->dtype)};
  j.item = (int64_t)emu_itemsize(j.dt);
  const conv_geom *g = &j.g;
  void *scratch[3] = {NULL, NULL, NULL};
  j.go = emu_contiguous_as(grad_out, j.dt, &scratch[0]);
  bool ok = j.go != NULL;
  if (gi != NULL || gw != NULL) {
    j.w = emu_contiguous_as(weight, j.dt, &scratch[1]);
    j.in = emu_contiguous_as(input, j.dt, &scratch[2]);
    ok = ok && j.w != NULL && j.in != NULL;
  }
  if (ok && gi != NULL) {
    j.out = emu_output_begin(gi, j.dt);
    ok = j.out != NULL;
  }
  if (ok && gw != NULL) {
    j.gw = emu_output_begin(gw, j.dt);
    ok = j.gw != NULL;
  }
  if (ok && g->Cg == 1) { /* depthwise: direct loops */
    if (gi != NULL) {
      emu_parallel_for(g->N * g->C, plane_grain(g->Og * g->P * g->KH * g->KW), input_planes, &j);
    }
    if (gw != NULL) depthwise_weight(&j);
  } else if (ok && (gi != NULL || gw != NULL)) {
    j.want_gi = gi != NULL;
    j.want_gw = gw != NULL;
    grouped_backward(&j);
  }
  const bool stored = ok && !atomic_load(&j.failed);
  if (gi != NULL) emu_output_end(gi, j.out, j.dt, stored);
  if (gw != NULL) emu_output_end(gw, j.gw, j.dt, stored);
  if (ok && gb != NULL) {
    j.gb = emu_output_begin(gb, j.dt);
    ok = j.gb != NULL;
    if (ok) emu_parallel_for(g->O, plane_grain(g->N * g->P), bias_channels, &j);
    emu_output_end(gb, j.gb, j.dt, ok);
  }
  if (!ok || atomic_load(&j.failed)) {
    tbk_task_fail(task, "convolution_backward_overrideable: out of host memory");
  }
  for (int k = 0; k < 3; k++) free(scratch[k]);
}

/* The checks both kernels share: a non-transposed 2-d convolution of one floating dtype whose
 * sizes agree (ATen's meta function has checked the call; anything else is declined). */
static tb_status check_call(const char *name, const tb_value *args, int at, const tb_tensor *input,
                            const tb_tensor *weight, const tb_tensor *output) {
  if (args[at + 3].as.b) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: transposed convolution", name);
  }
  if (input->ndim != 4 || weight->ndim != 4 || output->ndim != 4) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: %d-d convolution (2-d only)", name,
                    (int)weight->ndim - 2);
  }
  for (int k = 0; k < 3; k++) {
    if (args[at + k].as.ints.count != 2) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: stride, padding and dilation of two", name);
    }
  }
  const int64_t *stride = args[at].as.ints.items, *padding = args[at + 1].as.ints.items;
  const int64_t *dilation = args[at + 2].as.ints.items, groups = args[at + 5].as.i;
  for (int k = 0; k < 2; k++) {
    if (stride[k] < 1 || padding[k] < 0 || dilation[k] < 1) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: stride, padding or dilation out of range",
                      name);
    }
  }
  if (groups < 1 || input->sizes[1] % groups != 0 || weight->sizes[0] % groups != 0 ||
      weight->sizes[1] * groups != input->sizes[1]) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: channels do not match the groups", name);
  }
  conv_geom g = geometry(input->sizes, weight->sizes, stride, padding, dilation, groups);
  if (g.OH < 0 || g.OW < 0 || output->sizes[0] != g.N || output->sizes[1] != g.O ||
      output->sizes[2] != g.OH || output->sizes[3] != g.OW) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: output sizes do not match", name);
  }
  /* BLAS takes int sizes and leading dimensions. */
  if (g.K > INT32_MAX || g.P > INT32_MAX || g.HW > INT32_MAX || g.O > INT32_MAX) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: planes beyond 32 bits", name);
  }
  return TB_OK;
}

/* Every tensor argument of one dtype, among `dtypes`. */
static tb_status check_dtypes(const char *name, const tb_value *args, int32_t count,
                              uint64_t dtypes) {
  tb_dtype dtype = args[0].as.tensor->dtype;
  for (int32_t i = 0; i < count; i++) {
    if (args[i].kind != TB_VALUE_TENSOR) continue;
    if (args[i].as.tensor->dtype != dtype || !(dtypes & TB_DTYPE_BIT(dtype))) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: tensors of one dtype (%s) only", name,
                      dtypes & TB_DTYPE_BIT(TB_DTYPE_INT64) ? "floating or int64" : "floating");
    }
  }
  return TB_OK;
}

static bool has_sizes(const tb_tensor *t, int32_t ndim, const int64_t *sizes) {
  if (t->ndim != ndim) return false;
  for (int32_t d = 0; d < ndim; d++) {
    if (t->sizes[d] != sizes[d]) return false;
  }
  return true;
}

static tb_status kernel_forward(tb_stream stream, const tb_value *args, int32_t count) {
  const char *name = "convolution_overrideable";
  tb_status status = emu_check_args(name, args, count, "TTtIIIbIiT");
  if (status == TB_OK) status = check_dtypes(name, args, count, CONV_DTYPES);
  if (status == TB_OK) {
    status = check_call(name, args, 3, args[0].as.tensor, args[1].as.tensor, args[9].as.tensor);
  }
  if (status != TB_OK) return status;
  const int64_t channels = args[1].as.tensor->sizes[0];
  if (args[2].kind == TB_VALUE_TENSOR && !has_sizes(args[2].as.tensor, 1, &channels)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: bias of another size", name);
  }
  return emu_launch(name, stream, args, count, run_forward, 0, NULL);
}

static tb_status kernel_backward(tb_stream stream, const tb_value *args, int32_t count) {
  const char *name = "convolution_backward_overrideable";
  tb_status status = emu_check_args(name, args, count, "TTTIIIbIiBttt");
  if (status == TB_OK) status = check_dtypes(name, args, count, EMU_FLOATS);
  if (status == TB_OK) {
    status = check_call(name, args, 3, args[1].as.tensor, args[2].as.tensor, args[0].as.tensor);
  }
  if (status != TB_OK) return status;
  const tb_tensor *input = args[1].as.tensor, *weight = args[2].as.tensor;
  if ((args[10].kind == TB_VALUE_TENSOR &&
       !has_sizes(args[10].as.tensor, input->ndim, input->sizes)) ||
      (args[11].kind == TB_VALUE_TENSOR &&
       !has_sizes(args[11].as.tensor, weight->ndim, weight->sizes)) ||
      (args[12].kind == TB_VALUE_TENSOR && !has_sizes(args[12].as.tensor, 1, weight->sizes))) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: gradients of other sizes", name);
  }
  return emu_launch(name, stream, args, count, run_backward, 0, NULL);
}

EMU_KERNEL(k_forward, "convolution_overrideable", kernel_forward, CONV_DTYPES,
           "convolution_overrideable(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
           "SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt "
           "groups) -> Tensor");
EMU_KERNEL(
    k_backward, "convolution_backward_overrideable", kernel_backward, EMU_FLOATS,
    "convolution_backward_overrideable(Tensor grad_output, Tensor input, Tensor weight, SymInt[] "
    "stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt "
    "groups, bool[3] output_mask) -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)");

const tb_kernel *const emu_conv_kernels[] = {&k_forward, &k_backward, NULL};
