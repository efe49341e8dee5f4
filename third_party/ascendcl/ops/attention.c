/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The stand-in's fused attention: aclnnFlashAttentionScore and aclnnFlashAttentionScoreGrad
 * (ops-transformer, attention/flash_attention_score and flash_attention_score_grad docs), the
 * training forward and backward of FlashAttention:
 *
 *   score = scale * (pse + Q K^T), hidden where the mask says so (-inf)
 *   P = Dropout(Softmax(score), keepProb),  out = P V
 *
 * The forward keeps, per query row, the maximum score and the sum of exp(score - maximum)
 * (softmaxMax / softmaxSum, [B, N, Sq, 8], the value repeated 8 times as CANN lays it out); the
 * backward recomputes the probabilities from them, exp(score - max) / sum, instead of storing
 * the [Sq, Skv] matrix, and computes dV = P^T dY, dP = dY V^T (dropped where the mask drops),
 * dS = P (dP - rowsum(P dP)), dQ = scale dS K, dK = scale dS^T Q.
 *
 * What the stand-in implements of the documented interface: inputLayout "BNSD" (the others
 * are refused with a message saying so), sparseMode 0 to 3, grouped-query attention (N a
 * multiple of Nkv), Dv <= D.  One (b, n) pair at a time on contiguous float32 copies, the
 * products through OpenBLAS (as blas.c), the softmax in double.  A row whose every key is
 * hidden gives NaN probabilities (softmaxMax -inf, softmaxSum 0), the IEEE result; CANN's
 * innerPrecise 2 would zero such rows instead, and the stand-in accepts innerPrecise 0 to 2 and
 * computes every one the same way.  dpseOut, which CANN documents as not used yet, is not
 * written.
 */
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aclnnop/aclnn_flash_attention_score.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "dense.h"

/* OpenBLAS single-threaded, each product on the stream worker that runs it (see blas.c for why:
 * its own thread pool hangs a fork() taken while a worker is inside it). */
static pthread_once_t g_blas_once = PTHREAD_ONCE_INIT;
static void blas_single_thread(void) { openblas_set_num_threads(1); }

/* The documented dtypes of query, key, value, pse and the outputs. */
#define FA_TYPES (SOP_BIT(ACL_FLOAT) | SOP_BIT(ACL_FLOAT16) | SOP_BIT(ACL_BF16))
/* The largest score matrix (Sq * Skv) one pair may have: the run keeps a few of them. */
#define FA_MAX_SCORES ((int64_t)1 << 30)

/* Executor slots, shared by both operators: the inputs, then each one's outputs. */
enum {
  FA_Q,
  FA_K,
  FA_V,
  FA_PSE,
  FA_DROP,
  FA_MASK,
  FA_MAX,
  FA_SUM,
  FA_OUT, /* forward: attentionOut; backward: dy */
  FA_DQ,
  FA_DK,
  FA_DV,
  FA_SLOTS
};

typedef struct fa_params {
  int64_t B, N, Nkv, Sq, Skv, D, Dv;
  double scale, keep;
  int64_t pre, next, mode;
  bool has_mask; /* without attenMaskOptional every key is visible, whatever sparseMode says */
  bool backward;
} fa_params;

/* ---- the computation (run functions) ---- */

/* The loaded operands of one run. */
typedef struct fa_data {
  const fa_params *p;
  float *q, *k, *v, *pse, *max, *sum, *out; /* out: attentionOut, or dy */
  float *dq, *dk, *dv;
  unsigned char *mask;       /* broadcast to [B, N, Sq, Skv], or NULL */
  const unsigned char *drop; /* the bit mask, or NULL */
} fa_data;

/* Whether query i of pair (b, n) does not see key j. */
static bool hidden(const fa_data *d, int64_t b, int64_t n, int64_t i, int64_t j) {
  const fa_params *p = d->p;
  if (!p->has_mask) return false;
  switch (p->mode) {
    case 0:
      return d->mask[((b * p->N + n) * p->Sq + i) * p->Skv + j] != 0 || j - i > p->next ||
             i - j > p->pre;
    case 1:
      return d->mask[((b * p->N + n) * p->Sq + i) * p->Skv + j] != 0;
    case 2:
      return j > i;
    default: /* 3 */
      return j > i + p->Skv - p->Sq;
  }
}

/* The dropout factor of element (b, n, i, j): 1 / keepProb where the mask's bit is 1, else 0. */
static float kept(const fa_data *d, int64_t b, int64_t n, int64_t i, int64_t j) {
  const fa_params *p = d->p;
  if (d->drop == NULL) return 1.0f;
  int64_t e = ((b * p->N + n) * p->Sq + i) * p->Skv + j;
  return (d->drop[e / 8] >> (e % 8)) & 1 ? (float)(1.0 / p->keep) : 0.0f;
}

/* s [Sq, Skv] = scale * (pse + Q K^T) of pair (b, n), -inf where hidden. */
static void scores(const fa_data *d, int64_t b, int64_t n, float *s) {
  const fa_params *p = d->p;
  const int64_t g = n / (p->N / p->Nkv);
  const float *q = d->q + (b * p->N + n) * p->Sq * p->D;
  const float *k = d->k + (b * p->Nkv + g) * p->Skv * p->D;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)p->Sq, (int)p->Skv, (int)p->D, 1.0f, q,
              (int)p->D, k, (int)p->D, 0.0f, s, (int)p->Skv);
  const float *pse = d->pse != NULL ? d->pse + (b * p->N + n) * p->Sq * p->Skv : NULL;
  for (int64_t i = 0; i < p->Sq; i++) {
    for (int64_t j = 0; j < p->Skv; j++) {
      const int64_t at = i * p->Skv + j;
      double x = s[at] + (pse != NULL ? (double)pse[at] : 0.0);
      s[at] = hidden(d, b, n, i, j) ? -INFINITY : (float)(p->scale * x);
    }
  }
}

/* Forward of pair (b, n): P in s (dropout applied), softmaxMax / softmaxSum, out = P V. */
static void forward_pair(const fa_data *d, int64_t b, int64_t n, float *s) {
  const fa_params *p = d->p;
  scores(d, b, n, s);
  const int64_t row0 = (b * p->N + n) * p->Sq;
  for (int64_t i = 0; i < p->Sq; i++) {
    float *r = s + i * p->Skv;
    double max = -INFINITY, sum = 0;
    for (int64_t j = 0; j < p->Skv; j++) max = r[j] > max || isnan(r[j]) ? r[j] : max;
    if (max == -INFINITY) { /* no visible key */
      for (int64_t j = 0; j < p->Skv; j++) r[j] = NAN;
    } else {
      for (int64_t j = 0; j < p->Skv; j++) sum += exp(r[j] - max);
      for (int64_t j = 0; j < p->Skv; j++) {
        r[j] = (float)(exp(r[j] - max) / sum) * kept(d, b, n, i, j);
      }
    }
    for (int c = 0; c < 8; c++) {
      d->max[(row0 + i) * 8 + c] = (float)max;
      d->sum[(row0 + i) * 8 + c] = (float)sum;
    }
  }
  const int64_t g = n / (p->N / p->Nkv);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)p->Sq, (int)p->Dv, (int)p->Skv, 1.0f,
              s, (int)p->Skv, d->v + (b * p->Nkv + g) * p->Skv * p->Dv, (int)p->Dv, 0.0f,
              d->out + row0 * p->Dv, (int)p->Dv);
}

/* Backward of pair (b, n), with three [Sq, Skv] buffers; dK and dV accumulate (the pairs of
 * one key/value head under grouped-query attention). */
static void backward_pair(const fa_data *d, int64_t b, int64_t n, float *s, float *pz, float *dp) {
  const fa_params *p = d->p;
  const int64_t g = n / (p->N / p->Nkv), row0 = (b * p->N + n) * p->Sq, kv0 = (b * p->Nkv + g);
  const int Sq = (int)p->Sq, Skv = (int)p->Skv, D = (int)p->D, Dv = (int)p->Dv;
  const float *dy = d->out + row0 * p->Dv, *v = d->v + kv0 * p->Skv * p->Dv;
  scores(d, b, n, s);
  for (int64_t i = 0; i < p->Sq; i++) { /* s <- P, pz <- P Z */
    const double max = d->max[(row0 + i) * 8], sum = d->sum[(row0 + i) * 8];
    for (int64_t j = 0; j < p->Skv; j++) {
      const int64_t at = i * p->Skv + j;
      s[at] = (float)(exp(s[at] - max) / sum);
      pz[at] = s[at] * kept(d, b, n, i, j);
    }
  }
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Skv, Dv, Sq, 1.0f, pz, Skv, dy, Dv, 1.0f,
              d->dv + kv0 * p->Skv * p->Dv, Dv);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Sq, Skv, Dv, 1.0f, dy, Dv, v, Dv, 0.0f, dp,
              Skv);
  for (int64_t i = 0; i < p->Sq; i++) { /* dp <- dS = P (dP Z - rowsum(P dP Z)) */
    double rowsum = 0;
    for (int64_t j = 0; j < p->Skv; j++) {
      const int64_t at = i * p->Skv + j;
      dp[at] *= kept(d, b, n, i, j);
      rowsum += (double)s[at] * dp[at];
    }
    for (int64_t j = 0; j < p->Skv; j++) {
      const int64_t at = i * p->Skv + j;
      dp[at] = (float)(s[at] * (dp[at] - rowsum));
    }
  }
  const float scale = (float)p->scale;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Sq, D, Skv, scale, dp, Skv,
              d->k + kv0 * p->Skv * p->D, D, 0.0f, d->dq + row0 * p->D, D);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Skv, D, Sq, scale, dp, Skv,
              d->q + row0 * p->D, D, 1.0f, d->dk + kv0 * p->Skv * p->D, D);
}

static void run_attention(aclOpExecutor *ex) {
  const fa_params *p = ex->state;
  pthread_once(&g_blas_once, blas_single_thread);
  const int64_t dims[4] = {p->B, p->N, p->Sq, p->Skv};
  const bool backward = p->backward;
  fa_data d = {p, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  d.q = dense_load_as(ex, FA_Q, ACL_FLOAT, -1, NULL);
  d.k = dense_load_as(ex, FA_K, ACL_FLOAT, -1, NULL);
  d.v = dense_load_as(ex, FA_V, ACL_FLOAT, -1, NULL);
  bool ok = d.q != NULL && d.k != NULL && d.v != NULL;
  if (ex->t[FA_PSE].ndim >= 0) ok = ok && (d.pse = dense_load_as(ex, FA_PSE, ACL_FLOAT, 4, dims));
  if (ex->t[FA_MASK].ndim >= 0 && p->mode <= 1) {
    ok = ok && (d.mask = dense_load_as(ex, FA_MASK, ACL_UINT8, 4, dims));
  }
  if (ex->t[FA_DROP].ndim >= 0) d.drop = sop_host(ex, FA_DROP); /* contiguous (phase one) */
  const int64_t rows = p->B * p->N * p->Sq, cells = p->Sq * p->Skv;
  if (backward) {
    d.max = dense_load_as(ex, FA_MAX, ACL_FLOAT, -1, NULL);
    d.sum = dense_load_as(ex, FA_SUM, ACL_FLOAT, -1, NULL);
    d.out = dense_load_as(ex, FA_OUT, ACL_FLOAT, -1, NULL);
    d.dq = dense_alloc(rows * p->D, sizeof(float));
    d.dk = calloc((size_t)(p->B * p->Nkv * p->Skv * p->D) + 1, sizeof(float));
    d.dv = calloc((size_t)(p->B * p->Nkv * p->Skv * p->Dv) + 1, sizeof(float));
    ok = ok && d.max != NULL && d.sum != NULL && d.out != NULL && d.dq && d.dk && d.dv;
  } else {
    d.max = dense_alloc(rows * 8, sizeof(float));
    d.sum = dense_alloc(rows * 8, sizeof(float));
    d.out = dense_alloc(rows * p->Dv, sizeof(float));
    ok = ok && d.max != NULL && d.sum != NULL && d.out != NULL;
  }
  float *s = dense_alloc(cells, sizeof(float));
  float *pz = backward ? dense_alloc(cells, sizeof(float)) : NULL;
  float *dp = backward ? dense_alloc(cells, sizeof(float)) : NULL;
  ok = ok && s != NULL && (!backward || (pz != NULL && dp != NULL));
  if (!ok) {
    dense_fail_memory();
  } else {
    for (int64_t b = 0; b < p->B; b++) {
      for (int64_t n = 0; n < p->N; n++) {
        if (backward) {
          backward_pair(&d, b, n, s, pz, dp);
        } else {
          forward_pair(&d, b, n, s);
        }
      }
    }
    if (backward) {
      dense_store_as(ex, FA_DQ, d.dq, ACL_FLOAT);
      dense_store_as(ex, FA_DK, d.dk, ACL_FLOAT);
      dense_store_as(ex, FA_DV, d.dv, ACL_FLOAT);
    } else {
      dense_store_as(ex, FA_MAX, d.max, ACL_FLOAT);
      dense_store_as(ex, FA_SUM, d.sum, ACL_FLOAT);
      dense_store_as(ex, FA_OUT, d.out, ACL_FLOAT);
    }
  }
  free(d.q);
  free(d.k);
  free(d.v);
  free(d.pse);
  free(d.mask);
  free(d.max);
  free(d.sum);
  free(d.out);
  free(d.dq);
  free(d.dk);
  free(d.dv);
  free(s);
  free(pz);
  free(dp);
}

/* ---- phase one ---- */

/* ACLNN_ERR_PARAM_INVALID unless t (named arg) is 4-D of (a, b, c, d). */
static aclnnStatus check_dims(const char *op, const char *arg, const aclTensor *t, int64_t a,
                              int64_t b, int64_t c, int64_t d) {
  const int64_t want[4] = {a, b, c, d};
  return dense_check_shape(op, arg, t, 4, want);
}

/* The arguments both operators share, validated into *p. */
typedef struct fa_args {
  const aclTensor *q, *k, *v, *pse, *drop, *padding, *mask;
  const aclIntArray *prefix;
  double scale, keep;
  int64_t pre, next, heads;
  const char *layout;
  int64_t precise, mode;
} fa_args;

static aclnnStatus check_common(const char *op, const fa_args *a, fa_params *p) {
  char s1[160], s2[160], s3[160];
  SOP_CHECK(sop_check_nonnull(op, "query", a->q));
  SOP_CHECK(sop_check_nonnull(op, "key", a->k));
  SOP_CHECK(sop_check_nonnull(op, "value", a->v));
  SOP_CHECK(sop_check_nonnull(op, "inputLayout", a->layout));
  SOP_CHECK(sop_check_tensor(op, "query", a->q, FA_TYPES));
  SOP_CHECK(sop_check_tensor(op, "key", a->k, FA_TYPES));
  SOP_CHECK(sop_check_tensor(op, "value", a->v, FA_TYPES));
  if (a->k->dtype != a->q->dtype || a->v->dtype != a->q->dtype) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "query, key and value must have one dtype");
  }
  if (strcmp(a->layout, "BNSD") != 0) {
    const bool documented = strcmp(a->layout, "BSH") == 0 || strcmp(a->layout, "SBH") == 0 ||
                            strcmp(a->layout, "BSND") == 0;
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    documented ? "inputLayout \"%s\": the stand-in implements \"BNSD\" only"
                               : "inputLayout \"%s\" is not one of BSH, SBH, BSND, BNSD",
                    a->layout);
  }
  if (a->q->ndim != 4 || a->k->ndim != 4 || a->v->ndim != 4) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "BNSD takes 4-D query, key and value");
  }
  p->B = a->q->dims[0];
  p->N = a->q->dims[1];
  p->Sq = a->q->dims[2];
  p->D = a->q->dims[3];
  p->Nkv = a->k->dims[1];
  p->Skv = a->k->dims[2];
  p->Dv = a->v->dims[3];
  if (a->k->dims[0] != p->B || a->k->dims[3] != p->D ||
      !(a->v->dims[0] == p->B && a->v->dims[1] == p->Nkv && a->v->dims[2] == p->Skv)) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "key %s and value %s do not fit query %s (B and D of key, B, N and S of "
                    "value must match)",
                    sop_shape_str(a->k, s1), sop_shape_str(a->v, s2), sop_shape_str(a->q, s3));
  }
  if (p->Dv > p->D) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "value's D (%lld) exceeds key's (%lld)",
                    (long long)p->Dv, (long long)p->D);
  }
  if (p->Nkv < 1 || p->N % p->Nkv != 0 || p->N > 256) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "query's N (%lld) must be a multiple of key's (%lld), at most 256",
                    (long long)p->N, (long long)p->Nkv);
  }
  if (a->heads != p->N) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "headNum (%lld) is not query's N (%lld)",
                    (long long)a->heads, (long long)p->N);
  }
  if (p->B < 1 || p->Sq < 1 || p->Skv < 1 || p->D < 1 || p->D > 768 || p->Dv < 1) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "B, S (at least 1) and D (1 to 768) out of range: query %s, value %s",
                    sop_shape_str(a->q, s1), sop_shape_str(a->v, s2));
  }
  if (p->Sq * p->Skv > FA_MAX_SCORES || p->D > INT32_MAX) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "Sq * Skv beyond 2^30 is not supported");
  }
  if (a->pse != NULL) {
    SOP_CHECK(sop_check_tensor(op, "realShiftOptional", a->pse, FA_TYPES));
    const int64_t *d = a->pse->dims;
    const bool fits = a->pse->ndim == 4 && (d[0] == p->B || d[0] == 1) && d[1] == p->N &&
                      (d[2] == p->Sq || d[2] == 1) && d[3] == p->Skv;
    if (!fits || a->pse->dtype != a->q->dtype) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                      "realShiftOptional %s must be query's dtype and [B, N, Sq, Skv], "
                      "[1, N, Sq, Skv] or [B, N, 1, Skv]",
                      sop_shape_str(a->pse, s1));
    }
  }
  if (!(a->keep > 0 && a->keep <= 1)) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "keepProb is %g; it must lie in (0, 1]", a->keep);
  }
  if (a->keep < 1) {
    if (a->drop == NULL) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                      "keepProb %g needs dropMaskOptional (the stand-in draws no mask itself)",
                      a->keep);
    }
    SOP_CHECK(sop_check_tensor(op, "dropMaskOptional", a->drop, SOP_BIT(ACL_UINT8)));
    const int64_t bits = p->B * p->N * p->Sq * p->Skv;
    if (a->drop->ndim != 1 || a->drop->dims[0] * 8 < bits ||
        (a->drop->dims[0] > 1 && a->drop->strides[0] != 1)) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                      "dropMaskOptional %s must be a contiguous 1-D UINT8 tensor of at least "
                      "%lld bits",
                      sop_shape_str(a->drop, s1), (long long)bits);
    }
  }
  if (a->padding != NULL || a->prefix != NULL) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "paddingMaskOptional (reserved) and prefixOptional (sparseMode 5 and 6) are "
                    "not supported by the stand-in");
  }
  if (a->mode < 0 || a->mode > 3) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "sparseMode %lld: the stand-in implements 0 (default), 1 (allMask), 2 "
                    "(leftUpCausal) and 3 (rightDownCausal)",
                    (long long)a->mode);
  }
  if (a->mask != NULL) {
    SOP_CHECK(
        sop_check_tensor(op, "attenMaskOptional", a->mask, SOP_BIT(ACL_BOOL) | SOP_BIT(ACL_UINT8)));
    const int64_t *d = a->mask->dims;
    if (a->mode >= 2) {
      if (a->mask->ndim != 2 || d[0] != 2048 || d[1] != 2048) {
        return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                        "sparseMode %lld takes the compressed [2048, 2048] attenMaskOptional, not "
                        "%s",
                        (long long)a->mode, sop_shape_str(a->mask, s1));
      }
    } else {
      const bool two = a->mask->ndim == 2 && d[0] == p->Sq && d[1] == p->Skv;
      const bool four = a->mask->ndim == 4 && (d[0] == p->B || d[0] == 1) &&
                        (d[1] == p->N || d[1] == 1) && d[2] == p->Sq && d[3] == p->Skv &&
                        !(d[0] == 1 && d[1] == p->N && p->N > 1);
      if (!two && !four) {
        return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                        "attenMaskOptional %s must be [Sq, Skv], [1, 1, Sq, Skv], [B, 1, Sq, "
                        "Skv] or [B, N, Sq, Skv]",
                        sop_shape_str(a->mask, s1));
      }
    }
  }
  if (a->precise < 0 || a->precise > 2) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "innerPrecise %lld is not 0, 1 or 2",
                    (long long)a->precise);
  }
  p->scale = a->scale;
  p->keep = a->keep;
  p->pre = a->pre;
  p->next = a->next;
  p->mode = a->mode;
  p->has_mask = a->mask != NULL;
  return ACLNN_SUCCESS;
}

/* ACLNN_ERR_PARAM_INVALID unless t is a FLOAT [B, N, Sq, 8] tensor. */
static aclnnStatus check_stats(const char *op, const char *arg, const aclTensor *t,
                               const fa_params *p) {
  SOP_CHECK(sop_check_nonnull(op, arg, t));
  SOP_CHECK(sop_check_tensor(op, arg, t, SOP_BIT(ACL_FLOAT)));
  return check_dims(op, arg, t, p->B, p->N, p->Sq, 8);
}

/* ACLNN_ERR_PARAM_INVALID unless t is of query's dtype and (a, b, c, d). */
static aclnnStatus check_result(const char *op, const char *arg, const aclTensor *t,
                                const aclTensor *q, int64_t a, int64_t b, int64_t c, int64_t d) {
  SOP_CHECK(sop_check_nonnull(op, arg, t));
  SOP_CHECK(sop_check_tensor(op, arg, t, FA_TYPES));
  if (t->dtype != q->dtype) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s (%s) is not of query's dtype (%s)", arg,
                    sop_dtype_name(t->dtype), sop_dtype_name(q->dtype));
  }
  return check_dims(op, arg, t, a, b, c, d);
}

/* The executor of both operators: the shared slots from *a, the parameters in its state. */
static aclOpExecutor *fa_executor(const char *op, const fa_args *a, const fa_params *p) {
  aclOpExecutor *ex = sop_executor_new(op, FA_SLOTS, run_attention);
  fa_params *state = malloc(sizeof *state);
  if (ex == NULL || state == NULL) {
    free(state);
    if (ex != NULL) sop_executor_release(ex);
    return NULL;
  }
  *state = *p;
  ex->state = state;
  ex->state_free = free;
  for (int32_t k = 0; k < FA_SLOTS; k++) sop_capture(ex, k, NULL);
  sop_capture(ex, FA_Q, a->q);
  sop_capture(ex, FA_K, a->k);
  sop_capture(ex, FA_V, a->v);
  sop_capture(ex, FA_PSE, a->pse);
  sop_capture(ex, FA_DROP, a->keep < 1 ? a->drop : NULL);
  sop_capture(ex, FA_MASK, a->mask);
  return ex;
}

aclnnStatus aclnnFlashAttentionScoreGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value,
    const aclTensor *realShiftOptional, const aclTensor *dropMaskOptional,
    const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, double scaleValue, double keepProb, int64_t preTokens,
    int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise,
    int64_t sparseMode, const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut,
    const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  static const char op[] = "aclnnFlashAttentionScore";
  const fa_args a = {query,
                     key,
                     value,
                     realShiftOptional,
                     dropMaskOptional,
                     paddingMaskOptional,
                     attenMaskOptional,
                     prefixOptional,
                     scaleValue,
                     keepProb,
                     preTokens,
                     nextTokens,
                     headNum,
                     inputLayout,
                     innerPrecise,
                     sparseMode};
  fa_params p = {0};
  SOP_CHECK(check_common(op, &a, &p));
  SOP_CHECK(check_stats(op, "softmaxMaxOut", softmaxMaxOut, &p));
  SOP_CHECK(check_stats(op, "softmaxSumOut", softmaxSumOut, &p));
  SOP_CHECK(check_result(op, "attentionOutOut", attentionOutOut, query, p.B, p.N, p.Sq, p.Dv));
  (void)softmaxOutOut; /* reserved */
  aclOpExecutor *ex = fa_executor(op, &a, &p);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, FA_MAX, softmaxMaxOut);
  sop_capture(ex, FA_SUM, softmaxSumOut);
  sop_capture(ex, FA_OUT, attentionOutOut);
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(FlashAttentionScore)

aclnnStatus aclnnFlashAttentionScoreGradGetWorkspaceSize(
    const aclTensor *query, const aclTensor *keyIn, const aclTensor *value, const aclTensor *dy,
    const aclTensor *pseShiftOptional, const aclTensor *dropMaskOptional,
    const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclTensor *softmaxMaxOptional, const aclTensor *softmaxSumOptional,
    const aclTensor *softmaxInOptional, const aclTensor *attentionInOptional,
    const aclIntArray *prefixOptional, double scaleValue, double keepProb, int64_t preTokens,
    int64_t nextTokens, int64_t headNum, char *inputLayout, int64_t innerPrecise,
    int64_t sparseMode, const aclTensor *dqOut, const aclTensor *dkOut, const aclTensor *dvOut,
    const aclTensor *dpseOut, uint64_t *workspaceSize, aclOpExecutor **executor) {
  static const char op[] = "aclnnFlashAttentionScoreGrad";
  const fa_args a = {query,
                     keyIn,
                     value,
                     pseShiftOptional,
                     dropMaskOptional,
                     paddingMaskOptional,
                     attenMaskOptional,
                     prefixOptional,
                     scaleValue,
                     keepProb,
                     preTokens,
                     nextTokens,
                     headNum,
                     inputLayout,
                     innerPrecise,
                     sparseMode};
  fa_params p = {0};
  p.backward = true;
  SOP_CHECK(check_common(op, &a, &p));
  SOP_CHECK(check_result(op, "dy", dy, query, p.B, p.N, p.Sq, p.Dv));
  /* the stand-in recomputes the probabilities from the statistics: both are required */
  SOP_CHECK(check_stats(op, "softmaxMaxOptional", softmaxMaxOptional, &p));
  SOP_CHECK(check_stats(op, "softmaxSumOptional", softmaxSumOptional, &p));
  if (attentionInOptional != NULL) {
    SOP_CHECK(
        check_result(op, "attentionInOptional", attentionInOptional, query, p.B, p.N, p.Sq, p.Dv));
  }
  SOP_CHECK(check_result(op, "dqOut", dqOut, query, p.B, p.N, p.Sq, p.D));
  SOP_CHECK(check_result(op, "dkOut", dkOut, query, p.B, p.Nkv, p.Skv, p.D));
  SOP_CHECK(check_result(op, "dvOut", dvOut, query, p.B, p.Nkv, p.Skv, p.Dv));
  (void)softmaxInOptional; /* reserved */
  (void)dpseOut;           /* documented as not used yet */
  aclOpExecutor *ex = fa_executor(op, &a, &p);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, FA_MAX, softmaxMaxOptional);
  sop_capture(ex, FA_SUM, softmaxSumOptional);
  sop_capture(ex, FA_OUT, dy);
  sop_capture(ex, FA_DQ, dqOut);
  sop_capture(ex, FA_DK, dkOut);
  sop_capture(ex, FA_DV, dvOut);
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(FlashAttentionScoreGrad)
