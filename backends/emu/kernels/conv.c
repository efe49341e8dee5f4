/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * 2-d convolution: convolution_overrideable and convolution_backward_overrideable, what
 * at::convolution calls for an out-of-tree device (conv1d arrives as a 2-d convolution of
 * height 1), with stride, padding, dilation and groups, bias optional.
 *
 * With several input channels per group the work is matrix products (emu_gemm, blas.c):
 *  - forward: each group's weight [Og, K = Cg KH KW] times the im2col columns of its input,
 *    one tile of output positions per task, each task building its own tile;
 *  - grad_input: the transposed weight times grad_output's columns, added back to the input
 *    positions they came from (col2im); one task per block of input channels, so that no two
 *    tasks write one element;
 *  - grad_weight: grad_output [Og, P] @ columns^T summed over the batch: the columns of a
 *    bounded chunk of the batch first (in parallel), then tiles of the weight's gradient.
 * A 1x1 convolution with stride 1 and no padding reads the input as its own columns.  With one
 * input channel per group (depthwise, as mobilenet's) direct loops per plane replace them.
 * Scratch is bounded: a tile per task, a chunk of columns for grad_weight.
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

/* Elements of one task's column tile, and of grad_weight's chunk of columns. */
#define TILE_BUDGET ((int64_t)1 << 18)
#define CHUNK_BUDGET ((int64_t)1 << 22)
/* Output positions per tile at least (narrower products waste BLAS's kernels). */
#define MIN_TILE 64

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
  int64_t tile, tiles;            /* output positions per tile, tiles per plane */
  int64_t block, blocks;          /* grad_input: input channels per task, tasks per group */
  /* grad_weight: the chunk of columns (items [n0, n0 + nb), positions [p0, p0 + pw)) and the
   * tiles of the gradient (ob output channels by kb rows of K) */
  char *col;
  int64_t n0, nb, p0, pw, ob, oblocks, kb, kblocks;
  atomic_bool failed; /* a task ran out of host memory */
} conv_job;

static void *scratch_or_fail(conv_job *j, int64_t elements) {
  void *p = malloc((size_t)max64(elements, 1) * (size_t)j->item);
  if (p == NULL) atomic_store(&j->failed, true);
  return p;
}

/* Tiles of output positions per plane: within the tile budget for `rows` rows of columns and,
 * when the tiles are tasks (`units` tasks before tiling; 0: they are not), enough tasks to give
 * every thread two. */
static void plan_tiles(conv_job *j, int64_t rows, int64_t units) {
  const int64_t P = j->g.P;
  int64_t tile = P;
  if (!j->g.pointwise && rows * tile > TILE_BUDGET) {
    tile = max64(TILE_BUDGET / max64(rows, 1), MIN_TILE);
  }
  int64_t want = units > 0 ? ceil_div(2 * emu_parallel_threads(), units) : 1;
  if (want > 1) tile = min64(tile, max64(ceil_div(P, want), MIN_TILE));
  j->tile = max64(min64(tile, P), 1);
  j->tiles = ceil_div(P, j->tile);
}

/* forward, grouped: task t is (n, group, tile) */
static void forward_tiles(void *context, int64_t begin, int64_t end) {
  conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t item = j->item;
  char *col = g->pointwise ? NULL : scratch_or_fail(j, g->K * j->tile);
  if (!g->pointwise && col == NULL) return;
  for (int64_t t = begin; t < end; t++) {
    const int64_t n = t / (g->G * j->tiles), grp = t / j->tiles % g->G;
    const int64_t p0 = t % j->tiles * j->tile, p1 = min64(p0 + j->tile, g->P);
    char *out = j->out + ((n * g->O + grp * g->Og) * g->P + p0) * item;
    TYPED(j->dt, fill_rows)
    (out, g->Og, p1 - p0, g->P, j->bias != NULL ? j->bias + grp * g->Og * item : NULL);
    const char *in = j->in + (n * g->C + grp * g->Cg) * g->HW * item;
    const char *columns = in + p0 * item;
    int64_t ld = g->HW;
    if (!g->pointwise) {
      TYPED(j->dt, im2col)(g, in, g->Cg, p0, p1, col, p1 - p0);
      columns = col;
      ld = p1 - p0;
    }
    emu_gemm(j->dt, false, false, g->Og, p1 - p0, g->K, 1.0, j->w + grp * g->Og * g->K * item,
             max64(g->K, 1), columns, ld, 1.0, out, g->P);
  }
  free(col);
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

/* grad_input, grouped: task t is (n, group, block of input channels) */
static void input_blocks(void *context, int64_t begin, int64_t end) {
  conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t item = j->item, taps = g->KH * g->KW;
  char *col = g->pointwise ? NULL : scratch_or_fail(j, j->block * taps * j->tile);
  if (!g->pointwise && col == NULL) return;
  for (int64_t t = begin; t < end; t++) {
    const int64_t n = t / (g->G * j->blocks), grp = t / j->blocks % g->G;
    const int64_t c0 = t % j->blocks * j->block, channels = min64(c0 + j->block, g->Cg) - c0;
    if (channels <= 0) continue;
    char *gi = j->out + (n * g->C + grp * g->Cg + c0) * g->HW * item;
    const char *go = j->go + (n * g->O + grp * g->Og) * g->P * item;
    /* op(A) = the group's weight columns of these channels, transposed: [channels taps, Og] */
    const char *w = j->w + (grp * g->Og * g->K + c0 * taps) * item;
    if (g->pointwise) {
      emu_gemm(j->dt, true, false, channels, g->P, g->Og, 1.0, w, max64(g->K, 1), go,
               max64(g->P, 1), 0.0, gi, max64(g->HW, 1));
      continue;
    }
    memset(gi, 0, (size_t)(channels * g->HW * item));
    for (int64_t p0 = 0; p0 < g->P; p0 += j->tile) {
      const int64_t p1 = min64(p0 + j->tile, g->P);
      emu_gemm(j->dt, true, false, channels * taps, p1 - p0, g->Og, 1.0, w, max64(g->K, 1),
               go + p0 * item, g->P, 0.0, col, p1 - p0);
      TYPED(j->dt, col2im)(g, col, channels, p0, p1, gi, p1 - p0);
    }
  }
  free(col);
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

/* grad_weight, grouped, phase 1: task t is one input channel row block (item i of the chunk,
 * group, channel) of the chunk's columns */
static void weight_columns(void *context, int64_t begin, int64_t end) {
  const conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t item = j->item, taps = g->KH * g->KW;
  for (int64_t t = begin; t < end; t++) {
    const int64_t i = t / (g->G * g->Cg), grp = t / g->Cg % g->G, c = t % g->Cg;
    TYPED(j->dt, im2col)
    (g, j->in + ((j->n0 + i) * g->C + grp * g->Cg + c) * g->HW * item, 1, j->p0, j->p0 + j->pw,
     j->col + ((i * g->G + grp) * g->K + c * taps) * j->pw * item, j->pw);
  }
}

/* grad_weight, grouped, phase 2: task t is the tile (group, output block, K block) of the
 * gradient, accumulating the chunk's products */
static void weight_tiles(void *context, int64_t begin, int64_t end) {
  const conv_job *j = context;
  const conv_geom *g = &j->g;
  const int64_t item = j->item;
  for (int64_t t = begin; t < end; t++) {
    const int64_t grp = t / (j->oblocks * j->kblocks);
    const int64_t o0 = t / j->kblocks % j->oblocks * j->ob, o1 = min64(o0 + j->ob, g->Og);
    const int64_t k0 = t % j->kblocks * j->kb, k1 = min64(k0 + j->kb, g->K);
    if (o1 <= o0 || k1 <= k0) continue;
    char *gw = j->gw + ((grp * g->Og + o0) * g->K + k0) * item;
    for (int64_t i = 0; i < j->nb; i++) {
      const int64_t n = j->n0 + i;
      const char *go = j->go + ((n * g->O + grp * g->Og + o0) * g->P + j->p0) * item;
      const char *columns;
      int64_t ld;
      if (g->pointwise) {
        columns = j->in + ((n * g->C + grp * g->Cg + k0) * g->HW + j->p0) * item;
        ld = g->HW;
      } else {
        columns = j->col + ((i * g->G + grp) * g->K + k0) * j->pw * item;
        ld = j->pw;
      }
      emu_gemm(j->dt, false, true, o1 - o0, k1 - k0, j->pw, 1.0, go, g->P, columns, ld, 1.0, gw,
               g->K);
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

static void grad_weight(conv_job *j) {
  conv_geom *g = &j->g;
  const int64_t taps = g->KH * g->KW, threads = emu_parallel_threads();
  memset(j->gw, 0, (size_t)(g->O * g->K * j->item));
  if (g->Cg == 1) {
    emu_parallel_for(g->O, plane_grain(g->N * g->P * taps), weight_planes, j);
    return;
  }
  /* A chunk: whole items while their columns fit the budget, else positions of one item. */
  int64_t nb = g->N, pw = g->P;
  if (!g->pointwise) {
    const int64_t per_item = g->G * g->K * g->P;
    if (per_item <= CHUNK_BUDGET) {
      nb = min64(g->N, max64(CHUNK_BUDGET / max64(per_item, 1), 1));
    } else {
      nb = 1;
      pw = min64(g->P, max64(CHUNK_BUDGET / (g->G * g->K), MIN_TILE));
    }
    j->col = scratch_or_fail(j, nb * g->G * g->K * pw);
    if (j->col == NULL) return;
  }
  /* Gradient tiles: output blocks of 64 channels, K split until every thread has two. */
  j->ob = min64(g->Og, 64);
  j->oblocks = ceil_div(g->Og, j->ob);
  j->kblocks = min64(ceil_div(2 * threads, g->G * j->oblocks), ceil_div(g->K, 32));
  j->kblocks = max64(j->kblocks, 1);
  j->kb = ceil_div(g->K, j->kblocks);
  j->kblocks = ceil_div(g->K, j->kb);
  for (j->n0 = 0; j->n0 < g->N; j->n0 += nb) {
    j->nb = min64(nb, g->N - j->n0);
    for (j->p0 = 0; j->p0 < g->P; j->p0 += pw) {
      j->pw = min64(pw, g->P - j->p0);
      if (!g->pointwise) {
        emu_parallel_for(j->nb * g->G * g->Cg, plane_grain(taps * j->pw), weight_columns, j);
      }
      emu_parallel_for(g->G * j->oblocks * j->kblocks, 1, weight_tiles, j);
    }
  }
  free(j->col);
  j->col = NULL;
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
static void run_forward(emu_task *task) {
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
    plan_tiles(&j, g->K, g->N * g->G);
    emu_parallel_for(g->N * g->G * j.tiles, 1, forward_tiles, &j);
  }
  ok = ok && !atomic_load(&j.failed);
  if (!ok) emu_task_fail(task, "convolution_overrideable: out of host memory");
  emu_output_end(out, j.out, j.dt, ok);
  for (int k = 0; k < 3; k++) free(scratch[k]);
}

/* convolution_backward_overrideable: (grad_output, input, weight, stride, padding, dilation,
 * transposed, output_padding, groups, output_mask, grad_input?, grad_weight?, grad_bias?) */
static void run_backward(emu_task *task) {
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
    if (ok && g->Cg == 1) {
      emu_parallel_for(g->N * g->C, plane_grain(g->Og * g->P * g->KH * g->KW), input_planes, &j);
    } else if (ok) {
      /* channel blocks: enough tasks for two per thread */
      j.blocks = min64(ceil_div(2 * emu_parallel_threads(), g->N * g->G), g->Cg);
      j.block = ceil_div(g->Cg, max64(j.blocks, 1));
      j.blocks = ceil_div(g->Cg, j.block);
      plan_tiles(&j, j.block * g->KH * g->KW, 0);
      emu_parallel_for(g->N * g->G * j.blocks, 1, input_blocks, &j);
    }
    emu_output_end(gi, j.out, j.dt, ok && !atomic_load(&j.failed));
  }
  if (ok && gw != NULL) {
    j.gw = emu_output_begin(gw, j.dt);
    ok = j.gw != NULL;
    if (ok) grad_weight(&j);
    emu_output_end(gw, j.gw, j.dt, ok && !atomic_load(&j.failed));
  }
  if (ok && gb != NULL) {
    j.gb = emu_output_begin(gb, j.dt);
    ok = j.gb != NULL;
    if (ok) emu_parallel_for(g->O, plane_grain(g->N * g->P), bias_channels, &j);
    emu_output_end(gb, j.gb, j.dt, ok);
  }
  if (!ok || atomic_load(&j.failed)) {
    emu_task_fail(task, "convolution_backward_overrideable: out of host memory");
  }
  for (int k = 0; k < 3; k++) free(scratch[k]);
}

/* The checks both kernels share: a non-transposed 2-d convolution of one floating dtype whose
 * sizes agree (ATen's meta function has checked the call; anything else is declined). */
static tb_status check_call(const char *name, const tb_value *args, int at, const tb_tensor *input,
                            const tb_tensor *weight, const tb_tensor *output) {
  if (args[at + 3].as.b) {
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: transposed convolution", name);
  }
  if (input->ndim != 4 || weight->ndim != 4 || output->ndim != 4) {
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: %d-d convolution (2-d only)", name,
                    (int)weight->ndim - 2);
  }
  for (int k = 0; k < 3; k++) {
    if (args[at + k].as.ints.count != 2) {
      return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: stride, padding and dilation of two", name);
    }
  }
  const int64_t *stride = args[at].as.ints.items, *padding = args[at + 1].as.ints.items;
  const int64_t *dilation = args[at + 2].as.ints.items, groups = args[at + 5].as.i;
  for (int k = 0; k < 2; k++) {
    if (stride[k] < 1 || padding[k] < 0 || dilation[k] < 1) {
      return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: stride, padding or dilation out of range",
                      name);
    }
  }
  if (groups < 1 || input->sizes[1] % groups != 0 || weight->sizes[0] % groups != 0 ||
      weight->sizes[1] * groups != input->sizes[1]) {
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: channels do not match the groups", name);
  }
  conv_geom g = geometry(input->sizes, weight->sizes, stride, padding, dilation, groups);
  if (g.OH < 0 || g.OW < 0 || output->sizes[0] != g.N || output->sizes[1] != g.O ||
      output->sizes[2] != g.OH || output->sizes[3] != g.OW) {
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: output sizes do not match", name);
  }
  /* BLAS takes int sizes and leading dimensions. */
  if (g.K > INT32_MAX || g.P > INT32_MAX || g.HW > INT32_MAX || g.O > INT32_MAX) {
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: planes beyond 32 bits", name);
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
      return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: tensors of one dtype (%s) only", name,
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
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: bias of another size", name);
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
    return emu_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: gradients of other sizes", name);
  }
  return emu_launch(name, stream, args, count, run_backward, 0, NULL);
}

EMU_KERNEL(k_forward, "convolution_overrideable", kernel_forward, CONV_DTYPES);
EMU_KERNEL(k_backward, "convolution_backward_overrideable", kernel_backward, EMU_FLOATS);

const tb_kernel *const emu_conv_kernels[] = {&k_forward, &k_backward, NULL};
