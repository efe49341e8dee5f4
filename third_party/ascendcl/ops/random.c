/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * aclnnInplaceBernoulli (ops-math random/bernoulli docs): selfRef's elements become 1 with
 * probability prob, else 0.  aclnnInplaceUniform and aclnnInplaceUniformTensor (ops-math
 * random/dsa_random_uniform docs): selfRef's elements are drawn uniformly from [from, to).
 *
 * The stand-in draws from Philox-4x32-10 with key `seed`: element i of selfRef (row-major)
 * takes 32-bit output number offset + i of the stream (word (offset + i) % 4 of counter block
 * (offset + i) / 4), so a run reproduces from (seed, offset) whatever the layout, and a call
 * uses numel outputs from offset on.  Every operator turns output w into u = w / 2^32 in [0, 1)
 * the same way: Bernoulli's element is u < prob, Uniform's from + (to - from) * u, so that
 * uniform numbers of [0, 1) compared with prob (aclnnLtScalar) give Bernoulli's draws exactly.
 *
 * aclnnDropoutGenMask (ops-math random/dropout_gen_mask docs): a bit mask of `shape`'s elements,
 * bit e (of the row-major elements) 1 -- kept -- unless output number offset + e, as u, is below
 * prob; the mask aclnnFlashAttentionScore and its grad take as dropMaskOptional.
 *
 * aclnnInplaceUniformTensor takes the key and the base counter as one-element device tensors,
 * read when the operator runs: the form a captured operator (stream capture, acl_mdl.h) needs
 * to draw new numbers at every run of its model.  (CANN documents such "Tensor" forms for the
 * operators graph mode uses -- aclnnInplaceUniformTensor, aclnnInplaceNormalTensor,
 * aclnnDropoutGenMaskV2Tensor --, none for Bernoulli: a captured Bernoulli is a uniform draw
 * and a comparison.)
 */
#include <math.h>
#include <string.h>

#include "aclnnop/aclnn_bernoulli.h"
#include "aclnnop/aclnn_dropout_gen_mask.h"
#include "aclnnop/aclnn_uniform.h"
#include "internal.h"

static void philox(uint64_t key, uint64_t block, uint32_t out[4]) {
  uint32_t c0 = (uint32_t)block, c1 = (uint32_t)(block >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  for (int round = 0; round < 10; round++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1;
    c3 = (uint32_t)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/* Element e's u in [0, 1): output number offset + e of the stream of key `seed`. */
typedef struct draws {
  uint64_t seed, offset;
  uint32_t words[4];
} draws;

static double next_u(draws *d, int64_t e) {
  uint64_t j = d->offset + (uint64_t)e;
  if (e == 0 || j % 4 == 0) philox(d->seed, j / 4, d->words);
  return (double)d->words[j % 4] * (1.0 / 4294967296.0);
}

/* f[0]: prob; i[0]: seed; i[1]: offset */
static void bernoulli_run(aclOpExecutor *ex) {
  const aclTensor *t[1] = {&ex->t[0]};
  void *base[1] = {sop_host(ex, 0)};
  sop_iter it;
  int64_t n = sop_iter_init(&it, t[0]->ndim, t[0]->dims, 1, t, base);
  draws d = {(uint64_t)ex->i[0], (uint64_t)ex->i[1], {0, 0, 0, 0}};
  for (int64_t e = 0; e < n; e++, sop_iter_next(&it)) {
    double u = next_u(&d, e);
    sop_store_i(it.ptr[0], t[0]->dtype, u < ex->f[0] ? 1 : 0);
  }
}

aclnnStatus aclnnInplaceBernoulliGetWorkspaceSize(const aclTensor *selfRef, const aclScalar *prob,
                                                  int64_t seed, int64_t offset,
                                                  uint64_t *workspaceSize,
                                                  aclOpExecutor **executor) {
  static const char op[] = "aclnnInplaceBernoulli";
  SOP_CHECK(sop_check_tensor(op, "selfRef", selfRef, SOP_ALL));
  SOP_CHECK(sop_check_scalar(op, "prob", prob, SOP_FLOATS));
  double p = sop_load_f(prob->value, prob->dtype);
  if (!(p >= 0 && p <= 1)) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "prob is %g; it must lie in [0, 1]", p);
  }
  aclOpExecutor *ex = sop_executor_new(op, 1, bernoulli_run);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, selfRef);
  ex->f[0] = p;
  ex->i[0] = seed;
  ex->i[1] = offset;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(InplaceBernoulli)

/* ---- uniform ---- */

/* The dtypes of selfRef the uniform operators fill (BOOL is deprecated: aclnnInplaceBernoulli). */
#define UNIFORM_TYPES (SOP_FLOATS | SOP_INTS)

/* f[0]: from; f[1]: to; i[0]: seed; i[1]: offset; i[2]: 1 when tensors 1 and 2 hold the seed
 * and the base counter (aclnnInplaceUniformTensor), read now. */
static void uniform_run(aclOpExecutor *ex) {
  const aclTensor *t[1] = {&ex->t[0]};
  void *base[1] = {sop_host(ex, 0)};
  draws d = {(uint64_t)ex->i[0], (uint64_t)ex->i[1], {0, 0, 0, 0}};
  if (ex->i[2]) {
    uint64_t seed = 0, counter = 0;
    memcpy(&seed, sop_host(ex, 1), sizeof seed);
    memcpy(&counter, sop_host(ex, 2), sizeof counter);
    d.seed = seed;
    d.offset += counter;
  }
  sop_iter it;
  int64_t n = sop_iter_init(&it, t[0]->ndim, t[0]->dims, 1, t, base);
  const double from = ex->f[0], span = ex->f[1] - ex->f[0];
  const bool floating = sop_is_float(t[0]->dtype);
  for (int64_t e = 0; e < n; e++, sop_iter_next(&it)) {
    double v = from + span * next_u(&d, e);
    if (floating) {
      sop_store_f(it.ptr[0], t[0]->dtype, v);
    } else {
      sop_store_i(it.ptr[0], t[0]->dtype, (int64_t)floor(v));
    }
  }
}

static aclnnStatus uniform_prepare(const char *op, const aclTensor *selfRef, double from, double to,
                                   uint64_t seed, const aclTensor *seedTensor,
                                   const aclTensor *offsetTensor, uint64_t offset,
                                   uint64_t *workspaceSize, aclOpExecutor **executor) {
  const bool tensors = seedTensor != NULL || offsetTensor != NULL;
  SOP_CHECK(sop_check_tensor(op, "selfRef", selfRef, UNIFORM_TYPES));
  if (!(from <= to)) { /* NaN too */
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "from (%g) must not exceed to (%g)", from, to);
  }
  if (tensors) {
    const aclTensor *args[2] = {seedTensor, offsetTensor};
    const char *names[2] = {"seedTensor", "offsetTensor"};
    for (int k = 0; k < 2; k++) {
      SOP_CHECK(sop_check_tensor(op, names[k], args[k], SOP_BIT(ACL_UINT64)));
      if (sop_numel(args[k]) != 1) {
        return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s has %lld elements; it must have one",
                        names[k], (long long)sop_numel(args[k]));
      }
    }
  }
  aclOpExecutor *ex = sop_executor_new(op, tensors ? 3 : 1, uniform_run);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, selfRef);
  if (tensors) {
    sop_capture(ex, 1, seedTensor);
    sop_capture(ex, 2, offsetTensor);
  }
  ex->f[0] = from;
  ex->f[1] = to;
  ex->i[0] = (int64_t)seed;
  ex->i[1] = (int64_t)offset;
  ex->i[2] = tensors;
  return sop_finish(ex, 0, workspaceSize, executor);
}

aclnnStatus aclnnInplaceUniformGetWorkspaceSize(const aclTensor *selfRef, double from, double to,
                                                uint64_t seed, uint64_t offset,
                                                uint64_t *workspaceSize, aclOpExecutor **executor) {
  return uniform_prepare("aclnnInplaceUniform", selfRef, from, to, seed, NULL, NULL, offset,
                         workspaceSize, executor);
}
SOP_PHASE_TWO(InplaceUniform)

aclnnStatus aclnnInplaceUniformTensorGetWorkspaceSize(const aclTensor *selfRef, double from,
                                                      double to, const aclTensor *seedTensor,
                                                      const aclTensor *offsetTensor,
                                                      uint64_t offset, uint64_t *workspaceSize,
                                                      aclOpExecutor **executor) {
  static const char op[] = "aclnnInplaceUniformTensor";
  SOP_CHECK(sop_check_nonnull(op, "seedTensor", seedTensor));
  SOP_CHECK(sop_check_nonnull(op, "offsetTensor", offsetTensor));
  return uniform_prepare(op, selfRef, from, to, 0, seedTensor, offsetTensor, offset, workspaceSize,
                         executor);
}
SOP_PHASE_TWO(InplaceUniformTensor)

/* ---- dropout mask ---- */

/* f[0]: prob; i[0]: seed; i[1]: offset; i[2]: the elements masked; slot 0 the mask, dense */
static void dropout_mask_run(aclOpExecutor *ex) {
  unsigned char *mask = sop_host(ex, 0);
  const int64_t bytes = sop_numel(&ex->t[0]), n = ex->i[2];
  if (bytes == 0) return;
  memset(mask, 0, (size_t)bytes);
  draws d = {(uint64_t)ex->i[0], (uint64_t)ex->i[1], {0, 0, 0, 0}};
  for (int64_t e = 0; e < n; e++) {
    if (next_u(&d, e) >= ex->f[0]) mask[e / 8] |= (unsigned char)(1u << (e % 8));
  }
}

aclnnStatus aclnnDropoutGenMaskGetWorkspaceSize(const aclIntArray *shape, double prob, int64_t seed,
                                                int64_t offset, aclTensor *out,
                                                uint64_t *workspaceSize, aclOpExecutor **executor) {
  static const char op[] = "aclnnDropoutGenMask";
  SOP_CHECK(sop_check_nonnull(op, "shape", shape));
  SOP_CHECK(sop_check_nonnull(op, "out", out));
  SOP_CHECK(sop_check_tensor(op, "out", out, SOP_BIT(ACL_UINT8)));
  if (!(prob >= 0 && prob <= 1)) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "prob is %g; it must lie in [0, 1]", prob);
  }
  int64_t n = 1;
  for (uint64_t k = 0; k < shape->size; k++) {
    if (shape->values[k] < 0 || (shape->values[k] > 0 && n > INT64_MAX / 2 / shape->values[k])) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "shape's dimension %llu (%lld) is invalid",
                      (unsigned long long)k, (long long)shape->values[k]);
    }
    n *= shape->values[k];
  }
  const int64_t bytes = (n + 127) / 128 * 16; /* align(n, 128) / 8 */
  if (out->ndim != 1 || out->dims[0] != bytes || (bytes > 1 && out->strides[0] != 1)) {
    char s[160];
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op,
                    "out %s must be the contiguous 1-D UINT8 tensor of align(%lld, 128) / 8 = "
                    "%lld elements",
                    sop_shape_str(out, s), (long long)n, (long long)bytes);
  }
  aclOpExecutor *ex = sop_executor_new(op, 1, dropout_mask_run);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, out);
  ex->f[0] = prob;
  ex->i[0] = seed;
  ex->i[1] = offset;
  ex->i[2] = n;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(DropoutGenMask)
