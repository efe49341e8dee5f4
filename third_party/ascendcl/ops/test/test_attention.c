/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * C tests of the stand-in's fused attention (attention.c: aclnnFlashAttentionScore and its
 * grad) and of aclnnDropoutGenMask (random.c), through AscendCL's public API only: results on
 * a small case with realShift, a causal attenMask, grouped-query heads and a dropout mask,
 * against a reference computed here in double from the documented formula (the backward's
 * from the chain rule, not from the operator's own recomputation), and the error paths of
 * phase one.  Exit status 0 when every check passes.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_dropout_gen_mask.h"
#include "aclnnop/aclnn_flash_attention_score.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "test_util.h"

int tu_failures;
aclrtStream tu_stream;

/* The case: query [B, N, Sq, D], key [B, Nkv, Skv, D], value [B, Nkv, Skv, Dv]. */
enum { B = 1, N = 2, NKV = 1, SQ = 3, SKV = 4, D = 3, DV = 2 };
#define SCALE 0.7
#define KEEP 0.5
#define SCORES (B * N * SQ * SKV)

static double q[B * N * SQ * D], k[B * NKV * SKV * D], v[B * NKV * SKV * DV];
static double pse[SCORES], dy[B * N * SQ * DV];
static double causal[SQ * SKV]; /* 1 hides */
static unsigned char drop[16];  /* align(24, 128) / 8 bytes */

static double drop_factor(int64_t e) { return (drop[e / 8] >> (e % 8)) & 1 ? 1.0 / KEEP : 0.0; }

/* The reference forward and backward in double. */
static void reference(double *out, double *max, double *sum, double *dq, double *dk, double *dv) {
  memset(dq, 0, sizeof(double) * B * N * SQ * D);
  memset(dk, 0, sizeof(double) * B * NKV * SKV * D);
  memset(dv, 0, sizeof(double) * B * NKV * SKV * DV);
  for (int n = 0; n < N; n++) {
    const int g = n / (N / NKV);
    double p[SQ][SKV], s[SQ][SKV];
    for (int i = 0; i < SQ; i++) {
      double m = -INFINITY, z = 0;
      for (int j = 0; j < SKV; j++) {
        double dot = 0;
        for (int c = 0; c < D; c++) dot += q[(n * SQ + i) * D + c] * k[(g * SKV + j) * D + c];
        s[i][j] =
            causal[i * SKV + j] != 0 ? -INFINITY : SCALE * (pse[(n * SQ + i) * SKV + j] + dot);
        m = fmax(m, s[i][j]);
      }
      for (int j = 0; j < SKV; j++) z += exp(s[i][j] - m);
      for (int j = 0; j < SKV; j++) p[i][j] = exp(s[i][j] - m) / z;
      max[n * SQ + i] = m;
      sum[n * SQ + i] = z;
      for (int c = 0; c < DV; c++) {
        double o = 0;
        for (int j = 0; j < SKV; j++) {
          o += p[i][j] * drop_factor((n * SQ + i) * SKV + j) * v[(g * SKV + j) * DV + c];
        }
        out[(n * SQ + i) * DV + c] = o;
      }
    }
    /* out = (P o Z) V: dV = (P o Z)^T dy; dP = (dy V^T) o Z; dS = P o (dP - rowsum(P o dP)) */
    for (int i = 0; i < SQ; i++) {
      double dp[SKV], rowsum = 0;
      for (int j = 0; j < SKV; j++) {
        const double z = drop_factor((n * SQ + i) * SKV + j);
        double g_dot = 0;
        for (int c = 0; c < DV; c++) {
          dv[(g * SKV + j) * DV + c] += p[i][j] * z * dy[(n * SQ + i) * DV + c];
          g_dot += dy[(n * SQ + i) * DV + c] * v[(g * SKV + j) * DV + c];
        }
        dp[j] = g_dot * z;
        rowsum += p[i][j] * dp[j];
      }
      for (int j = 0; j < SKV; j++) {
        const double ds = p[i][j] * (dp[j] - rowsum) * SCALE;
        for (int c = 0; c < D; c++) {
          dq[(n * SQ + i) * D + c] += ds * k[(g * SKV + j) * D + c];
          dk[(g * SKV + j) * D + c] += ds * q[(n * SQ + i) * D + c];
        }
      }
    }
  }
}

static void expect(const tu_tensor *x, const double *want, int64_t n, int64_t every,
                   const char *what) {
  double *got = malloc((size_t)x->storage * sizeof *got);
  tu_read(x, got);
  for (int64_t e = 0; e < n; e++) {
    if (!(fabs(got[e * every] - want[e]) <= 1e-5 * (1 + fabs(want[e])))) {
      tu_failures++;
      fprintf(stderr, "%s: element %lld is %.9g, expected %.9g\n", what, (long long)e,
              got[e * every], want[e]);
      break;
    }
  }
  free(got);
}

static void test_attention(void) {
  srand(3);
  double *all[] = {q, k, v, pse, dy};
  const int sizes[] = {B * N * SQ * D, B * NKV * SKV * D, B * NKV * SKV * DV, SCORES,
                       B * N * SQ * DV};
  for (int a = 0; a < 5; a++) {
    for (int e = 0; e < sizes[a]; e++) all[a][e] = (rand() % 2001 - 1000) / 1000.0;
  }
  for (int i = 0; i < SQ; i++) {
    for (int j = 0; j < SKV; j++) causal[i * SKV + j] = j > i;
  }
  /* the drop mask from aclnnDropoutGenMask, read back for the reference */
  const int64_t shape[4] = {B, N, SQ, SKV}, bytes = 16;
  tu_tensor tdrop = tu_make(ACL_UINT8, 1, &bytes, NULL);
  aclIntArray *dims = aclCreateIntArray(shape, 4);
  TU_RUN(DropoutGenMask, dims, 1 - KEEP, 11, 4, tdrop.t);
  double bits[16];
  tu_read(&tdrop, bits);
  int kept = 0;
  for (int e = 0; e < 16; e++) {
    drop[e] = (unsigned char)bits[e];
    for (int b = 0; b < 8; b++) kept += (drop[e] >> b) & 1;
    if (e * 8 >= SCORES) CHECK(drop[e] == 0); /* past the elements: 0 */
  }
  CHECK(kept > 0 && kept < SCORES);

  tu_tensor tq = tu_make(ACL_FLOAT, 4, (int64_t[]){B, N, SQ, D}, q);
  tu_tensor tk = tu_make(ACL_FLOAT, 4, (int64_t[]){B, NKV, SKV, D}, k);
  tu_tensor tv = tu_make(ACL_FLOAT, 4, (int64_t[]){B, NKV, SKV, DV}, v);
  tu_tensor tpse = tu_make(ACL_FLOAT, 4, (int64_t[]){B, N, SQ, SKV}, pse);
  tu_tensor tmask = tu_make(ACL_BOOL, 2, (int64_t[]){SQ, SKV}, causal);
  tu_tensor tmax = tu_make(ACL_FLOAT, 4, (int64_t[]){B, N, SQ, 8}, NULL);
  tu_tensor tsum = tu_make(ACL_FLOAT, 4, (int64_t[]){B, N, SQ, 8}, NULL);
  tu_tensor tout = tu_make(ACL_FLOAT, 4, (int64_t[]){B, N, SQ, DV}, NULL);
  char layout[] = "BNSD";
  TU_RUN(FlashAttentionScore, tq.t, tk.t, tv.t, tpse.t, tdrop.t, NULL, tmask.t, NULL, SCALE, KEEP,
         2147483647, 2147483647, N, layout, 0, 0, tmax.t, tsum.t, NULL, tout.t);
  double out[B * N * SQ * DV], max[B * N * SQ], sum[B * N * SQ];
  double dq[B * N * SQ * D], dk[B * NKV * SKV * D], dv[B * NKV * SKV * DV];
  reference(out, max, sum, dq, dk, dv);
  expect(&tout, out, B * N * SQ * DV, 1, "attentionOut");
  expect(&tmax, max, B * N * SQ, 8, "softmaxMax");
  expect(&tsum, sum, B * N * SQ, 8, "softmaxSum");

  tu_tensor tdy = tu_make(ACL_FLOAT, 4, (int64_t[]){B, N, SQ, DV}, dy);
  tu_tensor tdq = tu_make(ACL_FLOAT, 4, (int64_t[]){B, N, SQ, D}, NULL);
  tu_tensor tdk = tu_make(ACL_FLOAT, 4, (int64_t[]){B, NKV, SKV, D}, NULL);
  tu_tensor tdv = tu_make(ACL_FLOAT, 4, (int64_t[]){B, NKV, SKV, DV}, NULL);
  TU_RUN(FlashAttentionScoreGrad, tq.t, tk.t, tv.t, tdy.t, tpse.t, tdrop.t, NULL, tmask.t, tmax.t,
         tsum.t, NULL, tout.t, NULL, SCALE, KEEP, 2147483647, 2147483647, N, layout, 0, 0, tdq.t,
         tdk.t, tdv.t, NULL);
  expect(&tdq, dq, B * N * SQ * D, 1, "dq");
  expect(&tdk, dk, B * NKV * SKV * D, 1, "dk");
  expect(&tdv, dv, B * NKV * SKV * DV, 1, "dv");

  /* sparseMode 2 (leftUpCausal) hides the same keys from the compressed mask's pattern */
  tu_tensor big = tu_make(ACL_BOOL, 2, (int64_t[]){2048, 2048}, NULL);
  tu_tensor tout2 = tu_make(ACL_FLOAT, 4, (int64_t[]){B, N, SQ, DV}, NULL);
  TU_RUN(FlashAttentionScore, tq.t, tk.t, tv.t, tpse.t, tdrop.t, NULL, big.t, NULL, SCALE, KEEP, 0,
         0, N, layout, 0, 2, tmax.t, tsum.t, NULL, tout2.t);
  expect(&tout2, out, B * N * SQ * DV, 1, "attentionOut, sparseMode 2");

  /* phase one's refusals */
  char bsh[] = "BSH", nope[] = "XYZ";
  TU_EXPECT(FlashAttentionScore, ACLNN_ERR_PARAM_NULLPTR, "query", NULL, tk.t, tv.t, NULL, NULL,
            NULL, NULL, NULL, SCALE, 1.0, 0, 0, N, layout, 0, 0, tmax.t, tsum.t, NULL, tout.t);
  TU_EXPECT(FlashAttentionScore, ACLNN_ERR_PARAM_INVALID, "implements \"BNSD\" only", tq.t, tk.t,
            tv.t, NULL, NULL, NULL, NULL, NULL, SCALE, 1.0, 0, 0, N, bsh, 0, 0, tmax.t, tsum.t,
            NULL, tout.t);
  TU_EXPECT(FlashAttentionScore, ACLNN_ERR_PARAM_INVALID, "is not one of BSH", tq.t, tk.t, tv.t,
            NULL, NULL, NULL, NULL, NULL, SCALE, 1.0, 0, 0, N, nope, 0, 0, tmax.t, tsum.t, NULL,
            tout.t);
  TU_EXPECT(FlashAttentionScore, ACLNN_ERR_PARAM_INVALID, "needs dropMaskOptional", tq.t, tk.t,
            tv.t, NULL, NULL, NULL, NULL, NULL, SCALE, 0.9, 0, 0, N, layout, 0, 0, tmax.t, tsum.t,
            NULL, tout.t);
  TU_EXPECT(FlashAttentionScore, ACLNN_ERR_PARAM_INVALID, "sparseMode 4", tq.t, tk.t, tv.t, NULL,
            NULL, NULL, tmask.t, NULL, SCALE, 1.0, 0, 0, N, layout, 0, 4, tmax.t, tsum.t, NULL,
            tout.t);
  TU_EXPECT(FlashAttentionScore, ACLNN_ERR_PARAM_INVALID, "headNum", tq.t, tk.t, tv.t, NULL, NULL,
            NULL, NULL, NULL, SCALE, 1.0, 0, 0, 3, layout, 0, 0, tmax.t, tsum.t, NULL, tout.t);
  TU_EXPECT(FlashAttentionScore, ACLNN_ERR_PARAM_INVALID, "softmaxMaxOut", tq.t, tk.t, tv.t, NULL,
            NULL, NULL, NULL, NULL, SCALE, 1.0, 0, 0, N, layout, 0, 0, tout.t, tsum.t, NULL,
            tout.t);
  tu_tensor wide = tu_make(ACL_FLOAT, 4, (int64_t[]){B, NKV, SKV, D + 1}, NULL);
  TU_EXPECT(FlashAttentionScore, ACLNN_ERR_PARAM_INVALID, "value's D", tq.t, tk.t, wide.t, NULL,
            NULL, NULL, NULL, NULL, SCALE, 1.0, 0, 0, N, layout, 0, 0, tmax.t, tsum.t, NULL,
            tout.t);
  tu_tensor short_mask = tu_make(ACL_UINT8, 1, (int64_t[]){3}, NULL);
  TU_EXPECT(DropoutGenMask, ACLNN_ERR_PARAM_INVALID, "align(24, 128) / 8 = 16", dims, 0.5, 1, 0,
            short_mask.t);
  tu_free(&short_mask);
  aclDestroyIntArray(dims);
  tu_free(&wide);
  tu_tensor *owned[] = {&tdrop, &tq,  &tk,  &tv,  &tpse, &tmask, &tmax, &tsum,
                        &tout,  &tdy, &tdq, &tdk, &tdv,  &big,   &tout2};
  for (size_t e = 0; e < sizeof owned / sizeof owned[0]; e++) tu_free(owned[e]);
}

int main(void) {
  if (tu_setup() != 0) return 1;
  test_attention();
  return tu_teardown();
}
