/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Fused scaled dot-product attention, forward and backward: the kernels of ATen's
 * `_scaled_dot_product_fused_attention_overrideable` operators, the route PyTorch keeps for a
 * PrivateUse1 device's own attention (vendor.h, "Attention").  One pass per query row keeps
 * the row's scores in a buffer of its own (no L x S matrix in device memory), with the
 * additive bias, the causal mask (top-left: key j <= query i), the softmax's log-sum-exp and
 * dropout; the backward recomputes the probabilities from the log-sum-exp, as FlashAttention
 * does, and regenerates the dropout mask from the same Philox counters.
 *
 * Dropout of element (b, h, i, j) -- row-major in the (B, H, L, S) scores -- keeps it when
 * the first word of Philox-4x32-10 block `offset / 4 + element` is at or above p * 2^32.
 * float32 computes in place.  float16 and bfloat16 compute in float32 too, as FlashAttention
 * does: the inputs are widened into float32 copies, the float32 path runs on them, and the
 * outputs are rounded back once (the log-sum-exp is float32 for every dtype, as ATen's meta
 * function makes it).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "fastmath.h"
#include "kernel.h"

/* The first word of Philox block `counter` under `key`. */
static uint32_t philox_word(uint64_t key, uint64_t counter) {
  uint32_t out[4][EMU_PHILOX_BATCH];
  emu_philox_batch(key, counter, 1, out);
  return out[0][0];
}

typedef struct attention_job {
  const emu_tensor *q, *k, *v, *bias, *out, *lse;                    /* forward */
  const emu_tensor *grad_out, *grad_q, *grad_k, *grad_v, *grad_bias; /* backward */
  int64_t B, H, L, S, E, Ev;
  float scale;
  bool causal;
  double dropout;      /* probability of dropping */
  uint64_t seed, base; /* Philox key and first block */
  uint64_t threshold;  /* keep when word >= threshold */
  _Atomic bool out_of_memory;
} attention_job;

/* Row r of the (b, h) matrix of a 4-D tensor whose last dimension is contiguous. */
static float *row_of(const emu_tensor *t, int64_t b, int64_t h, int64_t r) {
  return (float *)t->data + (b * t->strides[0] + h * t->strides[1] + r * t->strides[2]);
}

/* Element (b, h, r) of the 3-D log-sum-exp. */
static float *at3(const emu_tensor *t, int64_t b, int64_t h, int64_t r) {
  return (float *)t->data + (b * t->strides[0] + h * t->strides[1] + r * t->strides[2]);
}

/* The dropout factor of element (b, h, i, j): 0 or 1 / (1 - p). */
static float dropout_factor(const attention_job *j, int64_t b, int64_t h, int64_t i, int64_t col) {
  if (j->dropout <= 0) return 1.0f;
  uint64_t element = (uint64_t)(((b * j->H + h) * j->L + i) * j->S + col);
  uint32_t word = philox_word(j->seed, j->base + element);
  return word >= j->threshold ? (float)(1.0 / (1.0 - j->dropout)) : 0.0f;
}

/* scores (L x S) of pair (b, h) = scale * Q K^T + bias, -inf where the causal mask hides a
 * key: one BLAS product, then the masks row by row. */
static void pair_scores(const attention_job *j, int64_t b, int64_t h, float *scores) {
  emu_gemm(TB_DTYPE_FLOAT32, false, true, j->L, j->S, j->E, j->scale, row_of(j->q, b, h, 0),
           j->q->strides[2], row_of(j->k, b, h, 0), j->k->strides[2], 0.0, scores, j->S);
  for (int64_t i = 0; i < j->L; i++) {
    float *s = scores + i * j->S;
    if (j->bias != NULL) {
      const emu_tensor *bias = j->bias;
      const float *row = (const float *)bias->data + b * bias->strides[0] + h * bias->strides[1] +
                         i * bias->strides[2];
      for (int64_t col = 0; col < j->S; col++) s[col] += row[col * bias->strides[3]];
    }
    if (j->causal) {
      for (int64_t col = i + 1; col < j->S; col++) s[col] = -INFINITY;
    }
  }
}

/* A row of scores becomes its softmax (vectorised exp), and *lse its log-sum-exp.  A row
 * whose every key is masked gives NaN, as the math path does. */
EMU_HOT_LOOP static void softmax_row(float *s, int64_t n, float *lse) {
  float max = -INFINITY;
  for (int64_t col = 0; col < n; col++) max = s[col] > max ? s[col] : max;
  if (max == -INFINITY) {
    for (int64_t col = 0; col < n; col++) s[col] = NAN;
    *lse = -INFINITY;
    return;
  }
  float lanes[8] = {0};
  for (int64_t col = 0; col < n; col++) {
    s[col] = emu_expf(s[col] - max);
    lanes[col % 8] += s[col];
  }
  double sum = 0;
  for (int k = 0; k < 8; k++) sum += lanes[k];
  *lse = max + (float)log(sum);
  const float inverse = (float)(1.0 / sum);
  for (int64_t col = 0; col < n; col++) s[col] *= inverse;
}

/* The probabilities of a row from its scores and log-sum-exp (masked keys: 0). */
EMU_HOT_LOOP static void probabilities_row(float *s, int64_t n, float lse) {
  for (int64_t col = 0; col < n; col++) s[col] = emu_expf(s[col] - lse);
}

/* One (b, h) pair: P = softmax(scores) with dropout applied, then out = P V. */
static void forward_pairs(void *context, int64_t begin, int64_t end) {
  attention_job *j = context;
  float *p = malloc((size_t)(j->L * j->S) * sizeof *p);
  if (p == NULL) {
    atomic_store(&j->out_of_memory, true);
    return;
  }
  for (int64_t pair = begin; pair < end; pair++) {
    int64_t b = pair / j->H, h = pair % j->H;
    pair_scores(j, b, h, p);
    for (int64_t i = 0; i < j->L; i++) {
      softmax_row(p + i * j->S, j->S, at3(j->lse, b, h, i));
      if (j->dropout > 0) {
        for (int64_t col = 0; col < j->S; col++) {
          p[i * j->S + col] *= dropout_factor(j, b, h, i, col);
        }
      }
    }
    emu_gemm(TB_DTYPE_FLOAT32, false, false, j->L, j->Ev, j->S, 1.0, p, j->S, row_of(j->v, b, h, 0),
             j->v->strides[2], 0.0, row_of(j->out, b, h, 0), j->out->strides[2]);
  }
  free(p);
}

/* One (b, h) pair of the backward: P from the log-sum-exp, dV = (P Z)^T dO, dP = (dO V^T) Z,
 * dS = P (dP - rowsum(P dP)), dQ = scale dS K, dK = scale dS^T Q. */
static void backward_pairs(void *context, int64_t begin, int64_t end) {
  attention_job *j = context;
  const size_t cells = (size_t)(j->L * j->S);
  float *p = malloc(cells * sizeof *p), *z = malloc(cells * sizeof *z);
  float *dp = malloc(cells * sizeof *dp);
  if (p == NULL || z == NULL || dp == NULL) {
    free(p);
    free(z);
    free(dp);
    atomic_store(&j->out_of_memory, true);
    return;
  }
  for (int64_t pair = begin; pair < end; pair++) {
    int64_t b = pair / j->H, h = pair % j->H;
    pair_scores(j, b, h, p);
    for (int64_t i = 0; i < j->L; i++) {
      float *s = p + i * j->S;
      probabilities_row(s, j->S, *at3(j->lse, b, h, i)); /* emu_expf(-inf) is 0 */
      for (int64_t col = 0; col < j->S; col++) {
        float factor = dropout_factor(j, b, h, i, col);
        z[i * j->S + col] = s[col] * factor; /* P Z, for dV */
        dp[i * j->S + col] = factor;         /* Z, until dP is computed */
      }
    }
    emu_gemm(TB_DTYPE_FLOAT32, true, false, j->S, j->Ev, j->L, 1.0, z, j->S,
             row_of(j->grad_out, b, h, 0), j->grad_out->strides[2], 0.0, row_of(j->grad_v, b, h, 0),
             j->grad_v->strides[2]);
    /* z <- dO V^T, then dP = z * Z (Z kept in dp) */
    emu_gemm(TB_DTYPE_FLOAT32, false, true, j->L, j->S, j->Ev, 1.0, row_of(j->grad_out, b, h, 0),
             j->grad_out->strides[2], row_of(j->v, b, h, 0), j->v->strides[2], 0.0, z, j->S);
    for (int64_t i = 0; i < j->L; i++) {
      double d = 0;
      for (int64_t col = 0; col < j->S; col++) {
        size_t cell = (size_t)(i * j->S + col);
        dp[cell] *= z[cell];
        d += (double)p[cell] * dp[cell];
      }
      for (int64_t col = 0; col < j->S; col++) {
        size_t cell = (size_t)(i * j->S + col);
        dp[cell] = p[cell] * (dp[cell] - (float)d); /* dS */
        if (j->grad_bias != NULL) {
          const emu_tensor *g = j->grad_bias;
          ((float *)g->data)[b * g->strides[0] + h * g->strides[1] + i * g->strides[2] +
                             col * g->strides[3]] = dp[cell];
        }
      }
    }
    emu_gemm(TB_DTYPE_FLOAT32, false, false, j->L, j->E, j->S, j->scale, dp, j->S,
             row_of(j->k, b, h, 0), j->k->strides[2], 0.0, row_of(j->grad_q, b, h, 0),
             j->grad_q->strides[2]);
    emu_gemm(TB_DTYPE_FLOAT32, true, false, j->S, j->E, j->L, j->scale, dp, j->S,
             row_of(j->q, b, h, 0), j->q->strides[2], 0.0, row_of(j->grad_k, b, h, 0),
             j->grad_k->strides[2]);
  }
  free(p);
  free(z);
  free(dp);
}

static const emu_tensor *present(const emu_arg *a) {
  return a->kind == TB_VALUE_TENSOR && a->as.tensor->ndim >= 0 ? a->as.tensor : NULL;
}

static void setup(attention_job *j, const emu_arg *q, const emu_arg *k, const emu_arg *v,
                  const emu_arg *scale, double dropout, bool causal) {
  j->q = q->as.tensor;
  j->k = k->as.tensor;
  j->v = v->as.tensor;
  j->B = j->q->sizes[0];
  j->H = j->q->sizes[1];
  j->L = j->q->sizes[2];
  j->E = j->q->sizes[3];
  j->S = j->k->sizes[2];
  j->Ev = j->v->sizes[3];
  j->scale = scale->kind == TB_VALUE_NONE ? (float)(1.0 / sqrt((double)j->E))
                                          : (float)emu_arg_double(scale);
  j->causal = causal;
  j->dropout = dropout;
  j->threshold = (uint64_t)ceil(dropout * 4294967296.0);
}

/* Tensors in float32 for the computation: the tensor itself when it is float32 already, or a
 * contiguous float32 copy in host memory (widened from float16 or bfloat16 when `load`), which
 * finish_wide() rounds back into the original when `store` and frees. */
typedef struct wide {
  const emu_tensor *original;
  emu_tensor copy;
  bool store;
} wide;

/* `*t` in float32 (see wide); false when out of host memory.  `t` NULL: nothing to do. */
static bool widen(wide *w, const emu_tensor **t, bool load, bool store) {
  w->original = NULL;
  if (*t == NULL || (*t)->dtype == TB_DTYPE_FLOAT32) return true;
  w->original = *t;
  w->store = store;
  w->copy = **t;
  w->copy.dtype = TB_DTYPE_FLOAT32;
  int64_t stride = 1;
  for (int32_t d = w->copy.ndim - 1; d >= 0; d--) {
    w->copy.strides[d] = stride;
    stride *= w->copy.sizes[d] > 1 ? w->copy.sizes[d] : 1;
  }
  w->copy.data = malloc((size_t)(w->copy.numel > 0 ? w->copy.numel : 1) * sizeof(float));
  if (w->copy.data == NULL) {
    w->original = NULL;
    return false;
  }
  if (load) emu_copy_tensor(&w->copy, w->original);
  *t = &w->copy;
  return true;
}

static void finish_wide(wide *w, bool store) {
  if (w->original == NULL) return;
  if (store && w->store) emu_copy_tensor(w->original, &w->copy);
  free(w->copy.data);
  w->original = NULL;
}

/* forward: (query, key, value, attn_bias?, dropout_p, is_causal, return_debug_mask, scale?,
 * output, logsumexp, rng or None) */
static void run_forward(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *a = call->args;
  attention_job j = {0};
  atomic_init(&j.out_of_memory, false);
  setup(&j, &a[0], &a[1], &a[2], &a[7], a[4].as.f, a[5].as.b != 0);
  j.bias = present(&a[3]);
  j.out = a[8].as.tensor;
  j.lse = a[9].as.tensor;
  if (j.dropout > 0) {
    const uint64_t *state = a[10].as.rng.device_state;
    j.seed = state != NULL ? state[0] : a[10].as.rng.seed;
    j.base = ((state != NULL ? state[1] : 0) + a[10].as.rng.offset) / 4;
  }
  wide w[6] = {0};
  bool ok = widen(&w[0], &j.q, true, false) && widen(&w[1], &j.k, true, false) &&
            widen(&w[2], &j.v, true, false) && widen(&w[3], &j.bias, true, false) &&
            widen(&w[4], &j.out, false, true) && widen(&w[5], &j.lse, false, true);
  if (ok) emu_parallel_for(j.B * j.H, 1, forward_pairs, &j);
  for (int i = 0; i < 6; i++) finish_wide(&w[i], ok && !atomic_load(&j.out_of_memory));
  if (!ok || atomic_load(&j.out_of_memory)) {
    tbk_task_fail(task, "out of host memory for a score row or a float32 copy");
  }
}

/* backward: (grad_out, query, key, value, attn_bias?, grad_input_mask, out, logsumexp,
 * cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset,
 * scale?, grad_query, grad_key, grad_value, grad_attn_bias?) */
static void run_backward(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *a = call->args;
  attention_job j = {0};
  atomic_init(&j.out_of_memory, false);
  setup(&j, &a[1], &a[2], &a[3], &a[16], a[12].as.f, a[13].as.b != 0);
  j.grad_out = a[0].as.tensor;
  j.bias = present(&a[4]);
  j.lse = a[7].as.tensor;
  j.seed = (uint64_t)a[14].as.i;
  j.base = (uint64_t)a[15].as.i / 4;
  j.grad_q = a[17].as.tensor;
  j.grad_k = a[18].as.tensor;
  j.grad_v = a[19].as.tensor;
  j.grad_bias = present(&a[20]);
  wide w[10] = {0};
  bool ok = widen(&w[0], &j.q, true, false) && widen(&w[1], &j.k, true, false) &&
            widen(&w[2], &j.v, true, false) && widen(&w[3], &j.bias, true, false) &&
            widen(&w[4], &j.grad_out, true, false) && widen(&w[5], &j.lse, true, false) &&
            widen(&w[6], &j.grad_q, false, true) && widen(&w[7], &j.grad_k, false, true) &&
            widen(&w[8], &j.grad_v, false, true) && widen(&w[9], &j.grad_bias, false, true);
  if (ok) emu_parallel_for(j.B * j.H, 1, backward_pairs, &j);
  for (int i = 0; i < 10; i++) finish_wide(&w[i], ok && !atomic_load(&j.out_of_memory));
  if (!ok || atomic_load(&j.out_of_memory)) {
    tbk_task_fail(task, "out of host memory for a score row or a float32 copy");
  }
}

/* The attention dtypes: float32, and float16 and bfloat16 computed in float32. */
static bool attention_dtype(tb_dtype dtype) {
  return dtype == TB_DTYPE_FLOAT32 || dtype == TB_DTYPE_FLOAT16 || dtype == TB_DTYPE_BFLOAT16;
}

/* 4-D of `dtype`, rows contiguous (what BLAS takes) and row strides that fit an int. */
static bool rows_4d(const tb_value *v, tb_dtype dtype) {
  if (v->kind != TB_VALUE_TENSOR) return false;
  const tb_tensor *t = v->as.tensor;
  return t->dtype == dtype && t->ndim == 4 && (t->strides[3] == 1 || t->sizes[3] <= 1) &&
         t->strides[2] >= t->sizes[3] && t->strides[2] <= INT32_MAX;
}

static tb_status kernel_forward(tb_stream stream, const tb_value *args, int32_t count) {
  const char *name = "_scaled_dot_product_fused_attention_overrideable";
  tb_status status = emu_check_args(name, args, count, "TTTtfbbNTT?");
  if (status != TB_OK) return status;
  const tb_dtype dtype = args[0].as.tensor->dtype;
  for (int i = 0; i < 3; i++) {
    if (!attention_dtype(dtype) || !rows_4d(&args[i], dtype)) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED,
                      "emu: %s: float32, float16 or bfloat16 (B, H, L, E) tensors of one dtype "
                      "with contiguous rows only",
                      name);
    }
  }
  if ((args[3].kind == TB_VALUE_TENSOR &&
       (args[3].as.tensor->dtype != dtype || args[3].as.tensor->ndim != 4)) ||
      args[0].as.tensor->sizes[1] != args[1].as.tensor->sizes[1]) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED,
                    "emu: %s: a (B, H, L, S) bias of the inputs' dtype and equal head counts "
                    "only",
                    name);
  }
  if (!rows_4d(&args[8], dtype) || args[9].as.tensor->dtype != TB_DTYPE_FLOAT32) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED,
                    "emu: %s: an output without contiguous rows, or a log-sum-exp not float32",
                    name);
  }
  if (args[4].as.f > 0 && args[10].kind != TB_VALUE_RNG) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: %s: dropout without a random key", name);
  }
  return emu_launch(name, stream, args, count, run_forward, 0, NULL);
}

static tb_status kernel_backward(tb_stream stream, const tb_value *args, int32_t count) {
  const char *name = "_scaled_dot_product_fused_attention_overrideable_backward";
  tb_status status = emu_check_args(name, args, count, "TTTTtBTT??iifbiiNTTTt");
  if (status != TB_OK) return status;
  const tb_dtype dtype = args[1].as.tensor->dtype;
  for (int i = 0; i < 20; i = i == 3 ? 17 : i + 1) { /* the inputs and the three gradients */
    if (!attention_dtype(dtype) || !rows_4d(&args[i], dtype)) {
      return tbk_fail(TB_ERROR_NOT_SUPPORTED,
                      "emu: %s: float32, float16 or bfloat16 (B, H, L, E) tensors of one dtype "
                      "with contiguous rows only",
                      name);
    }
  }
  if (args[7].as.tensor->dtype != TB_DTYPE_FLOAT32 ||
      (args[4].kind == TB_VALUE_TENSOR && args[4].as.tensor->ndim >= 0 &&
       args[4].as.tensor->dtype != dtype) ||
      (args[20].kind == TB_VALUE_TENSOR && args[20].as.tensor->ndim >= 0 &&
       args[20].as.tensor->dtype != dtype)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED,
                    "emu: %s: a float32 log-sum-exp and a bias of the inputs' dtype only", name);
  }
  return emu_launch(name, stream, args, count, run_backward, 0, NULL);
}

#define ATTENTION_DTYPES                                             \
  (TB_DTYPE_BIT(TB_DTYPE_FLOAT32) | TB_DTYPE_BIT(TB_DTYPE_FLOAT16) | \
   TB_DTYPE_BIT(TB_DTYPE_BFLOAT16))
EMU_KERNEL(k_attention_forward, "_scaled_dot_product_fused_attention_overrideable", kernel_forward,
           ATTENTION_DTYPES,
           "_scaled_dot_product_fused_attention_overrideable(Tensor query, Tensor key, Tensor "
           "value, Tensor? attn_bias=None, float dropout_p=0., bool is_causal=False, bool "
           "return_debug_mask=False, *, float? scale=None) -> (Tensor output, Tensor logsumexp, "
           "Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, Tensor philox_seed, "
           "Tensor philox_offset, Tensor debug_attn_mask)");
EMU_KERNEL(k_attention_backward, "_scaled_dot_product_fused_attention_overrideable_backward",
           kernel_backward, ATTENTION_DTYPES,
           "_scaled_dot_product_fused_attention_overrideable_backward(Tensor grad_out, Tensor "
           "query, Tensor key, Tensor value, Tensor attn_bias, bool[4] grad_input_mask, Tensor "
           "out, Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt "
           "max_k, float dropout_p, bool is_causal, Tensor philox_seed, Tensor philox_offset, *, "
           "float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value, Tensor "
           "grad_attn_bias)");

const tb_kernel *const emu_attention_kernels[] = {&k_attention_forward, &k_attention_backward,
                                                  NULL};
