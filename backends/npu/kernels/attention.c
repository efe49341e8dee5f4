/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's fused attention (vendor.h, "Attention"): ATen's
 * _scaled_dot_product_fused_attention_overrideable and its backward onto
 * aclnnFlashAttentionScore / aclnnFlashAttentionScoreGrad, inputLayout "BNSD" -- the ABI's
 * (B, H, L, E) is CANN's [B, N, S, D], strides passed as they are.  The translations:
 *
 * - Scale.  CANN computes scale * (pse + Q K^T); the ABI's bias is added after the scale,
 *   scale * Q K^T + bias.  The bias therefore goes in as realShift = bias / scale (aclnnDivs
 *   into scratch; a bias with scale 0 declines).  -inf (a boolean mask's false) stays -inf.
 * - Causal.  is_causal hides key j from query i when j > i (top-left).  attenMask is CANN's
 *   mask, 1 = hidden: a BOOL [L, S] upper triangle built per call (fill, aclnnTril, then
 *   aclnnLogicalNot), sparseMode 0 with preTokens = nextTokens = 2^31 - 1 (the band covering
 *   everything), which CANN recommends for masks under 2048.  (sparseMode 2, leftUpCausal, with
 *   its compressed 2048 x 2048 mask would need a mask kept per device.)
 * - logsumexp.  CANN returns softmaxMax and softmaxSum ([B, N, L, 8] float32, the row's value
 *   repeated 8 times) in scratch; the ABI's logsumexp (B, H, L) = max + log(sum) of their first
 *   column (aclnnLog, aclnnAdd).  The backward gets only logsumexp back and gives CANN's grad
 *   max = logsumexp and sum = 1: the probabilities it recomputes, exp(score - max) / sum, are
 *   then exp(score - logsumexp), the softmax itself.
 * - Dropout.  CANN takes a bit mask (dropMask, 1 keeps) and keepProb = 1 - dropout_p, and
 *   torch_npu draws that mask with aclnnDropoutGenMask from a seed and an offset, then draws it
 *   again in the backward from the same pair: which is the ABI's contract too -- the forward's
 *   `rng` key and first counter come back to the backward as philox_seed / philox_offset, and
 *   the counters a kernel may use are only reserved (vendor.h), not prescribed bit for bit.  So
 *   both kernels call aclnnDropoutGenMask(shape (B, H, L, S), dropout_p, key, counter).  The
 *   mask is npu's own: it differs from emu's for the same seed, as every vendor's dropout does.
 *   Declining dropout was not an option: the runtime's backend choice does not look at
 *   dropout_p, and a forward that declines a call with dropout raises (vendor.h).  A call under
 *   graph capture (tb_rng_key::device_state) declines; the runtime refuses to capture one today.
 *
 * - Ev > E.  CANN requires key's head size to be at least value's (kD >= vD); a call with a
 *   wider value gets query and key zero-padded to Ev columns in scratch (the products Q K^T are
 *   unchanged, the scale is the caller's or 1 / sqrt(E)), and the backward's dQ and dK are the
 *   first E columns of the padded gradients.  Declining instead would raise for every such call
 *   with dropout (see above).
 *
 * Declined (the forward then runs the runtime's math computation, the backward raises): other
 * dtypes than float32 (the kernels publish float32 only, so the runtime routes the others to the
 * math path before calling), empty dimensions, more than 256 heads or head sizes above 768
 * (CANN's ranges), key/value head counts that do not divide query's, and in the backward a
 * requested grad_attn_bias: CANN documents dpseOut as "not used yet", so no pse gradient comes
 * back (the runtime computes that call's gradients on the math path instead).
 */
#include <aclnnop/aclnn_add.h>
#include <aclnnop/aclnn_copy.h>
#include <aclnnop/aclnn_div.h>
#include <aclnnop/aclnn_dropout_gen_mask.h>
#include <aclnnop/aclnn_fill_scalar.h>
#include <aclnnop/aclnn_flash_attention_score.h>
#include <aclnnop/aclnn_flash_attention_score_grad.h>
#include <aclnnop/aclnn_log.h>
#include <aclnnop/aclnn_logical_not.h>
#include <aclnnop/aclnn_tril.h>
#include <math.h>

#include "structured.h"

/* preTokens / nextTokens that keep every key (torch_npu's defaults). */
#define NPU_ALL_TOKENS 2147483647

/* The shapes of a call: query (B, H, L, E), key (B, Hkv, S, E), value (B, Hkv, S, Ev). */
typedef struct attention_shape {
  int64_t B, H, Hkv, L, S, E, Ev;
} attention_shape;

/* float32, 4-D. */
static bool float32_4d(const tb_tensor *t) {
  return t != NULL && t->dtype == TB_DTYPE_FLOAT32 && t->ndim == 4;
}

/* Declines what CANN cannot take; fills *s from query, key, value (arguments q, q + 1, q + 2)
 * and the bias (argument `bias`). */
static tb_status check_call(npu_call *c, int32_t q, int32_t bias, attention_shape *s) {
  const tb_tensor *tq = npu_tensor_arg(c, q), *tk = npu_tensor_arg(c, q + 1);
  const tb_tensor *tv = npu_tensor_arg(c, q + 2), *tb = npu_tensor_arg(c, bias);
  if (!float32_4d(tq) || !float32_4d(tk) || !float32_4d(tv)) {
    return npu_decline(c, "float32 (B, H, L, E) query, key and value only");
  }
  *s = (attention_shape){tq->sizes[0], tq->sizes[1], tk->sizes[1], tq->sizes[2],
                         tk->sizes[2], tq->sizes[3], tv->sizes[3]};
  if (tk->sizes[0] != s->B || tv->sizes[0] != s->B || tk->sizes[3] != s->E ||
      tv->sizes[1] != s->Hkv || tv->sizes[2] != s->S) {
    return npu_decline(c, "query, key and value disagree in shape");
  }
  if (s->B < 1 || s->H < 1 || s->L < 1 || s->S < 1 || s->E < 1 || s->Ev < 1) {
    return npu_decline(c, "an empty dimension");
  }
  if (s->Hkv < 1 || s->H % s->Hkv != 0 || s->H > 256 || s->E > 768 || s->Ev > 768) {
    return npu_decline(c, "heads or head size outside CANN's ranges (N <= 256, D <= 768)");
  }
  if (tb != NULL && (tb->dtype != TB_DTYPE_FLOAT32 || tb->ndim != 4)) {
    return npu_decline(c, "a bias other than a float32 (B, H, L, S) one");
  }
  return TB_OK;
}

/* The softmax scale: argument k, or 1 / sqrt(E) for None. */
static double scale_of(const npu_call *c, int32_t k, const attention_shape *s) {
  return c->args[k].kind == TB_VALUE_NONE ? 1.0 / sqrt((double)s->E) : npu_arg_double(c, k);
}

/* Scratch device memory of `bytes` in the call's workspace; NULL with the failure recorded
 * (NPU_ACLNN then reports it). */
static void *scratch(npu_call *c, size_t bytes) {
  void *data = NULL;
  tb_status status = c->call->workspace(c->call, bytes, &data);
  if (status != TB_OK) {
    if (c->failed == TB_OK) {
      c->failed = npu_fail(c->ctx, status, "npu: %s: no scratch memory of %zu bytes on npu:%d",
                           c->call->kernel->name, bytes, (int)c->device);
    }
    return NULL;
  }
  return data;
}

/* A scratch float32 tensor of `like`'s first three sizes and `width` columns, contiguous:
 * *whole, and *head, the view of its first like->sizes[3] columns. */
static void widened(npu_call *c, const tb_tensor *like, int64_t width, aclTensor **whole,
                    aclTensor **head) {
  const int64_t *n = like->sizes;
  const int64_t sizes[4] = {n[0], n[1], n[2], width};
  const int64_t strides[4] = {n[1] * n[2] * width, n[2] * width, width, 1};
  float *data = scratch(c, (size_t)(n[0] * n[1] * n[2] * width) * sizeof(float));
  tb_tensor view = {sizeof(tb_tensor), data, TB_DTYPE_FLOAT32, c->device, 4, n, strides};
  *whole = data != NULL ? npu_dense_tensor(c, 4, sizes, ACL_FLOAT, data) : NULL;
  *head = data != NULL ? npu_tensor_of(c, &view) : NULL;
}

/* Query and key (arguments q, q + 1) as CANN gets them: themselves, or, when value is wider
 * (Ev > E), zero-padded copies of Ev columns. */
static tb_status query_key(npu_call *c, int32_t q, const attention_shape *s, aclTensor **query,
                           aclTensor **key) {
  if (s->Ev <= s->E) {
    *query = npu_tensor(c, q);
    *key = npu_tensor(c, q + 1);
    return TB_OK;
  }
  aclTensor *whole[2], *head[2];
  tb_status status = TB_OK;
  for (int32_t k = 0; k < 2 && status == TB_OK; k++) {
    widened(c, npu_tensor_arg(c, q + k), s->Ev, &whole[k], &head[k]);
    status = NPU_ACLNN(c, InplaceFillScalar, whole[k], npu_scalar_f(c, 0, ACL_FLOAT));
    if (status == TB_OK) status = NPU_ACLNN(c, InplaceCopy, head[k], npu_tensor(c, q + k));
  }
  *query = whole[0];
  *key = whole[1];
  return status;
}

/* realShift = bias / scale (argument `bias`; NULL when there is none), into scratch. */
static tb_status pse_of(npu_call *c, int32_t bias, double scale, const attention_shape *s,
                        aclTensor **pse) {
  *pse = NULL;
  if (npu_tensor_arg(c, bias) == NULL) return TB_OK;
  const int64_t dims[4] = {s->B, s->H, s->L, s->S};
  *pse = npu_scratch_tensor(c, TB_DTYPE_FLOAT32, 4, dims);
  return NPU_ACLNN(c, Divs, npu_tensor(c, bias), npu_scalar_f(c, scale, ACL_DOUBLE), *pse);
}

/* The causal attenMask, BOOL [L, S], 1 where j > i: not(tril(ones)); NULL without is_causal. */
static tb_status causal_mask(npu_call *c, bool causal, const attention_shape *s, aclTensor **mask) {
  *mask = NULL;
  if (!causal) return TB_OK;
  const int64_t dims[2] = {s->L, s->S};
  aclTensor *ones = npu_scratch_tensor(c, TB_DTYPE_BOOL, 2, dims);
  aclTensor *lower = npu_scratch_tensor(c, TB_DTYPE_BOOL, 2, dims);
  tb_status status = NPU_ACLNN(c, InplaceFillScalar, ones, npu_scalar_f(c, 1, ACL_BOOL));
  if (status == TB_OK) status = NPU_ACLNN(c, Tril, ones, 0, lower);
  if (status == TB_OK) status = NPU_ACLNN(c, LogicalNot, lower, ones);
  *mask = ones;
  return status;
}

/* The dropout bit mask of the (B, H, L, S) scores drawn from (seed, offset); NULL without
 * dropout. */
static tb_status drop_mask(npu_call *c, double p, int64_t seed, int64_t offset,
                           const attention_shape *s, aclTensor **mask) {
  *mask = NULL;
  if (p <= 0) return TB_OK;
  const int64_t dims[4] = {s->B, s->H, s->L, s->S};
  const int64_t bytes = (s->B * s->H * s->L * s->S + 127) / 128 * 16; /* align(n, 128) / 8 */
  *mask = npu_scratch_tensor(c, TB_DTYPE_UINT8, 1, &bytes);
  return NPU_ACLNN(c, DropoutGenMask, npu_int_array_of(c, dims, 4), p, seed, offset, *mask);
}

/* softmaxMax and softmaxSum, [B, N, L, 8] float32, one scratch block; *first is its address. */
static void softmax_stats(npu_call *c, const attention_shape *s, aclTensor **max, aclTensor **sum,
                          float **first) {
  const int64_t dims[4] = {s->B, s->H, s->L, 8}, n = s->B * s->H * s->L * 8;
  float *data = scratch(c, 2 * (size_t)n * sizeof(float));
  *first = data;
  *max = data != NULL ? npu_dense_tensor(c, 4, dims, ACL_FLOAT, data) : NULL;
  *sum = data != NULL ? npu_dense_tensor(c, 4, dims, ACL_FLOAT, data + n) : NULL;
}

/* Column 0 of a [B, N, L, 8] statistic at `data`, as (B, H, L). */
static aclTensor *first_column(npu_call *c, const attention_shape *s, float *data) {
  const int64_t sizes[3] = {s->B, s->H, s->L}, strides[3] = {s->H * s->L * 8, s->L * 8, 8};
  tb_tensor view = {sizeof(tb_tensor), data, TB_DTYPE_FLOAT32, c->device, 3, sizes, strides};
  return npu_tensor_of(c, &view);
}

/* forward: [query, key, value, attn_bias, dropout_p, is_causal, return_debug_mask, scale,
 * output, logsumexp, rng] */
static tb_status attention_forward(npu_call *c) {
  attention_shape s;
  tb_status status = check_call(c, 0, 3, &s);
  if (status != TB_OK) return status;
  const double p = npu_arg_double(c, 4), scale = scale_of(c, 7, &s);
  if (!float32_4d(npu_tensor_arg(c, 8)) || npu_tensor_arg(c, 9) == NULL ||
      npu_tensor_arg(c, 9)->dtype != TB_DTYPE_FLOAT32) {
    return npu_decline(c, "float32 output and logsumexp only");
  }
  if (npu_tensor_arg(c, 3) != NULL && scale == 0) return npu_decline(c, "a bias with scale 0");
  if (!(p >= 0 && p < 1)) return npu_decline(c, "dropout_p outside [0, 1)");
  tb_rng_key rng = {0, 0, NULL};
  if (p > 0) {
    if (c->args[10].kind != TB_VALUE_RNG) return npu_decline(c, "dropout without a random key");
    rng = c->args[10].as.rng;
    if (rng.device_state != NULL) return npu_decline(c, "dropout under graph capture");
  }
  aclTensor *query, *key, *pse, *mask, *drop, *max, *sum;
  float *stats;
  status = query_key(c, 0, &s, &query, &key);
  if (status == TB_OK) status = pse_of(c, 3, scale, &s, &pse);
  if (status == TB_OK) status = causal_mask(c, c->args[5].as.b != 0, &s, &mask);
  if (status == TB_OK) {
    status = drop_mask(c, p, (int64_t)rng.seed, (int64_t)rng.offset, &s, &drop);
  }
  if (status != TB_OK) return status;
  softmax_stats(c, &s, &max, &sum, &stats);
  char layout[] = "BNSD";
  status = NPU_ACLNN(c, FlashAttentionScore, query, key, npu_tensor(c, 2), pse, drop, NULL, mask,
                     NULL, scale, 1.0 - p, NPU_ALL_TOKENS, NPU_ALL_TOKENS, s.H, layout, 0, 0, max,
                     sum, NULL, npu_tensor(c, 8));
  if (status != TB_OK) return status;
  /* logsumexp = max + log(sum) */
  aclTensor *lse = npu_tensor(c, 9);
  status = NPU_ACLNN(c, Log, first_column(c, &s, stats + s.B * s.H * s.L * 8), lse);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, Add, first_column(c, &s, stats), lse, npu_scalar_f(c, 1, ACL_FLOAT), lse);
}

/* backward: [grad_out, query, key, value, attn_bias, grad_input_mask, out, logsumexp,
 * cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset, scale,
 * grad_query, grad_key, grad_value, grad_attn_bias] */
static tb_status attention_backward(npu_call *c) {
  attention_shape s;
  tb_status status = check_call(c, 1, 4, &s);
  if (status != TB_OK) return status;
  if (npu_tensor_arg(c, 20) != NULL) {
    return npu_decline(c,
                       "grad_attn_bias: CANN documents aclnnFlashAttentionScoreGrad's dpseOut "
                       "as not used yet");
  }
  for (int32_t k = 17; k <= 19; k++) {
    if (!float32_4d(npu_tensor_arg(c, k))) return npu_decline(c, "float32 gradients only");
  }
  const tb_tensor *lse = npu_tensor_arg(c, 7);
  if (!float32_4d(npu_tensor_arg(c, 0)) || !float32_4d(npu_tensor_arg(c, 6)) || lse == NULL ||
      lse->dtype != TB_DTYPE_FLOAT32 || lse->ndim != 3) {
    return npu_decline(c, "float32 grad_out, out and logsumexp only");
  }
  const double p = npu_arg_double(c, 12), scale = scale_of(c, 16, &s);
  if (npu_tensor_arg(c, 4) != NULL && scale == 0) return npu_decline(c, "a bias with scale 0");
  if (!(p >= 0 && p < 1)) return npu_decline(c, "dropout_p outside [0, 1)");
  aclTensor *query, *key, *pse, *mask, *drop, *max, *sum;
  float *stats;
  status = query_key(c, 1, &s, &query, &key);
  if (status == TB_OK) status = pse_of(c, 4, scale, &s, &pse);
  if (status == TB_OK) status = causal_mask(c, c->args[13].as.b != 0, &s, &mask);
  if (status == TB_OK) {
    status = drop_mask(c, p, npu_arg_int(c, 14), npu_arg_int(c, 15), &s, &drop);
  }
  if (status != TB_OK) return status;
  /* softmaxMax = logsumexp (broadcast over the 8 columns), softmaxSum = 1 */
  softmax_stats(c, &s, &max, &sum, &stats);
  const int64_t sizes[4] = {s.B, s.H, s.L, 1};
  const int64_t strides[4] = {lse->strides[0], lse->strides[1], lse->strides[2], 1};
  tb_tensor column = {sizeof(tb_tensor), lse->data, TB_DTYPE_FLOAT32, c->device, 4, sizes, strides};
  status = NPU_ACLNN(c, InplaceCopy, max, npu_tensor_of(c, &column));
  if (status == TB_OK) status = NPU_ACLNN(c, InplaceFillScalar, sum, npu_scalar_f(c, 1, ACL_FLOAT));
  if (status != TB_OK) return status;
  /* dQ and dK: the gradients themselves, or padded ones whose first E columns they are */
  const bool padded = s.Ev > s.E;
  aclTensor *dq = npu_tensor(c, 17), *dk = npu_tensor(c, 18), *dq_head = NULL, *dk_head = NULL;
  if (padded) {
    widened(c, npu_tensor_arg(c, 1), s.Ev, &dq, &dq_head);
    widened(c, npu_tensor_arg(c, 2), s.Ev, &dk, &dk_head);
  }
  char layout[] = "BNSD";
  status =
      NPU_ACLNN(c, FlashAttentionScoreGrad, query, key, npu_tensor(c, 3), npu_tensor(c, 0), pse,
                drop, NULL, mask, max, sum, NULL, npu_tensor(c, 6), NULL, scale, 1.0 - p,
                NPU_ALL_TOKENS, NPU_ALL_TOKENS, s.H, layout, 0, 0, dq, dk, npu_tensor(c, 19), NULL);
  if (status != TB_OK || !padded) return status;
  status = NPU_ACLNN(c, InplaceCopy, npu_tensor(c, 17), dq_head);
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, InplaceCopy, npu_tensor(c, 18), dk_head);
}

NPU_KERNEL(k_attention_forward, "_scaled_dot_product_fused_attention_overrideable",
           attention_forward, NPU_BIT(TB_DTYPE_FLOAT32),
           "_scaled_dot_product_fused_attention_overrideable(Tensor query, Tensor key, Tensor "
           "value, Tensor? attn_bias=None, float dropout_p=0., bool is_causal=False, bool "
           "return_debug_mask=False, *, float? scale=None) -> (Tensor output, Tensor logsumexp, "
           "Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, Tensor philox_seed, "
           "Tensor philox_offset, Tensor debug_attn_mask)");
NPU_KERNEL(k_attention_backward, "_scaled_dot_product_fused_attention_overrideable_backward",
           attention_backward, NPU_BIT(TB_DTYPE_FLOAT32),
           "_scaled_dot_product_fused_attention_overrideable_backward(Tensor grad_out, Tensor "
           "query, Tensor key, Tensor value, Tensor attn_bias, bool[4] grad_input_mask, Tensor "
           "out, Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt "
           "max_k, float dropout_p, bool is_causal, Tensor philox_seed, Tensor philox_offset, *, "
           "float? scale=None) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value, Tensor "
           "grad_attn_bias)");

const tb_kernel *const npu_attention_kernels[] = {&k_attention_forward, &k_attention_backward,
                                                  NULL};
