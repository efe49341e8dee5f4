/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * aclnnInplaceBernoulli (ops-math random/bernoulli docs): selfRef's elements become 1 with
 * probability prob, else 0.  The stand-in draws from Philox-4x32-10 with key `seed`: element i
 * of selfRef (row-major) takes 32-bit output number offset + i of the stream (word
 * (offset + i) % 4 of counter block (offset + i) / 4), so a run reproduces from (seed,
 * offset) whatever the layout, and a call uses numel outputs from offset on.
 */
#include "aclnnop/aclnn_bernoulli.h"
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

/* f[0]: prob; i[0]: seed; i[1]: offset */
static void bernoulli_run(aclOpExecutor *ex) {
  const aclTensor *t[1] = {&ex->t[0]};
  void *base[1] = {sop_host(ex, 0)};
  sop_iter it;
  int64_t n = sop_iter_init(&it, t[0]->ndim, t[0]->dims, 1, t, base);
  uint64_t seed = (uint64_t)ex->i[0], offset = (uint64_t)ex->i[1];
  uint32_t words[4];
  for (int64_t e = 0; e < n; e++, sop_iter_next(&it)) {
    uint64_t j = offset + (uint64_t)e;
    if (e == 0 || j % 4 == 0) philox(seed, j / 4, words);
    double u = (double)words[j % 4] * (1.0 / 4294967296.0);
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
