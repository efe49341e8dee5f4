/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The fused optimizer steps (up to eight parameters a launch) and the random kernels on the
 * device's own Philox-4x32-10.  The host (kernels/optim.c) prefixes T (the parameters'
 * storage type) and ACC (float or double); tensors are dense.
 */

/* The fused steps take up to eight parameters a launch, as CUDA's multi_tensor_apply does (the
 * host groups a list's parameters by size, kernels/optim.c): work-item (c, k) updates elements
 * [c chunk, (c + 1) chunk) of parameter k, whose element count is numels.sk; a slot the host
 * leaves unused has 0.  TB_MEMBER(k, X) names parameter k's tensors X##k; TB_TAKE(k) binds the
 * work-item's tensors to them.  Tensors a step does not read (SGD's buffer without momentum,
 * AdamW's max_exp_avg_sq without amsgrad) are passed as the parameter. */
#define TB_SGD_MEMBER(k) OCL_PTR(T, param##k), OCL_PTR(T, grad##k), OCL_PTR(T, buf##k)
#define TB_SGD_TAKE(k)       \
  case k:                    \
    P = OCL_AT(T, param##k); \
    G = OCL_AT(T, grad##k);  \
    B = OCL_AT(T, buf##k);   \
    n = numels.s##k;         \
    break

/* SGD, as ATen's fused kernel: weight decay, momentum (dampening, nesterov), maximize. */
__kernel void tb_sgd(TB_SGD_MEMBER(0), TB_SGD_MEMBER(1), TB_SGD_MEMBER(2), TB_SGD_MEMBER(3),
                     TB_SGD_MEMBER(4), TB_SGD_MEMBER(5), TB_SGD_MEMBER(6), TB_SGD_MEMBER(7),
                     long8 numels, ACC lr, ACC weight_decay, ACC momentum, ACC dampening,
                     int nesterov, int maximize, int first_step, long chunk) {
  __global T *P, *G, *B;
  long n;
  switch (get_global_id(1)) {
    TB_SGD_TAKE(0);
    TB_SGD_TAKE(1);
    TB_SGD_TAKE(2);
    TB_SGD_TAKE(3);
    TB_SGD_TAKE(4);
    TB_SGD_TAKE(5);
    TB_SGD_TAKE(6);
    default: /* and 7 */
      TB_SGD_TAKE(7);
  }
  long first = get_global_id(0) * chunk;
  if (first >= n) return;
  long end = min(first + chunk, n);
  for (long i = first; i < end; i++) {
    ACC p = (ACC)P[i];
    ACC g = (ACC)G[i];
    if (maximize) g = -g;
    if (weight_decay != 0) g += weight_decay * p;
    if (momentum != 0) {
      ACC b = first_step ? g : momentum * (ACC)B[i] + ((ACC)1 - dampening) * g;
      B[i] = (T)b;
      g = nesterov ? g + momentum * b : b;
    }
    P[i] = (T)(p - lr * g);
  }
}

#define TB_ADAMW_MEMBER(k)                                                                      \
  OCL_PTR(T, param##k), OCL_PTR(T, grad##k), OCL_PTR(T, exp_avg##k), OCL_PTR(T, exp_avg_sq##k), \
      OCL_PTR(T, max_exp_avg_sq##k), OCL_PTR(float, step##k)
#define TB_ADAMW_TAKE(k)              \
  case k:                             \
    P = OCL_AT(T, param##k);          \
    G = OCL_AT(T, grad##k);           \
    M = OCL_AT(T, exp_avg##k);        \
    V = OCL_AT(T, exp_avg_sq##k);     \
    H = OCL_AT(T, max_exp_avg_sq##k); \
    S = OCL_AT(float, step##k);       \
    n = numels.s##k;                  \
    break

/* Adam and AdamW, as ATen's fused kernel (`decoupled`: AdamW, the parameter decays; otherwise
 * Adam, the decay is added to the gradient): the step count read from the parameter's device
 * tensor.  The bias corrections, two pow() calls that cost more than the rest of an element's
 * update on a CPU driver, are computed once per work-item. */
__kernel void tb_adamw(TB_ADAMW_MEMBER(0), TB_ADAMW_MEMBER(1), TB_ADAMW_MEMBER(2),
                       TB_ADAMW_MEMBER(3), TB_ADAMW_MEMBER(4), TB_ADAMW_MEMBER(5),
                       TB_ADAMW_MEMBER(6), TB_ADAMW_MEMBER(7), long8 numels, ACC lr, ACC beta1,
                       ACC beta2, ACC weight_decay, ACC eps, int amsgrad, int maximize,
                       int decoupled, long chunk) {
  __global T *P, *G, *M, *V, *H;
  __global float *S;
  long n;
  switch (get_global_id(1)) {
    TB_ADAMW_TAKE(0);
    TB_ADAMW_TAKE(1);
    TB_ADAMW_TAKE(2);
    TB_ADAMW_TAKE(3);
    TB_ADAMW_TAKE(4);
    TB_ADAMW_TAKE(5);
    TB_ADAMW_TAKE(6);
    default: /* and 7 */
      TB_ADAMW_TAKE(7);
  }
  long first = get_global_id(0) * chunk;
  if (first >= n) return;
  long end = min(first + chunk, n);
  ACC t = (ACC)S[0];
  ACC step_size = lr / ((ACC)1 - pow(beta1, t));
  ACC bias2_sqrt = sqrt((ACC)1 - pow(beta2, t));
  ACC decay = decoupled ? (ACC)1 - lr * weight_decay : (ACC)1;
  ACC l2 = decoupled ? (ACC)0 : weight_decay;
  for (long i = first; i < end; i++) {
    ACC p = (ACC)P[i];
    ACC g = maximize ? -(ACC)G[i] : (ACC)G[i];
    if (l2 != 0) g += l2 * p;
    p *= decay;
    ACC m = (ACC)M[i];
    m = m + ((ACC)1 - beta1) * (g - m); /* lerp, as ATen */
    ACC v = beta2 * (ACC)V[i] + ((ACC)1 - beta2) * g * g;
    ACC denom;
    if (amsgrad) {
      ACC high = fmax((ACC)H[i], v);
      H[i] = (T)high;
      denom = sqrt(high) / bias2_sqrt + eps;
    } else {
      denom = sqrt(v) / bias2_sqrt + eps;
    }
    M[i] = (T)m;
    V[i] = (T)v;
    P[i] = (T)(p - step_size * m / denom);
  }
}

/* Philox-4x32-10 (Salmon et al., Random123): the first 32-bit outputs of the counters
 * (c0, c1, 0, 0) under the key (k0, k1), sixteen counters at a time in explicit vectors.  A
 * CPU driver then computes sixteen draws per instruction, where its own vectorizer gives up
 * on the scalar rounds (PoCL: 7 ns per draw as scalars, under 2 as vectors). */
inline uint16 tb_philox16(uint16 c0, uint16 c1, uint k0, uint k1) {
  uint16 c2 = (uint16)(0u), c3 = (uint16)(0u);
#pragma unroll
  for (int r = 0; r < 10; r++) {
    ulong16 p0 = convert_ulong16(c0) * (ulong)0xD2511F53u;
    ulong16 p1 = convert_ulong16(c2) * (ulong)0xCD9E8D57u;
    uint16 n0 = convert_uint16(p1 >> 32) ^ c1 ^ k0, n2 = convert_uint16(p0 >> 32) ^ c3 ^ k1;
    c1 = convert_uint16(p1);
    c3 = convert_uint16(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c0;
}

/* All four 32-bit outputs of Philox-4x32-10 at counter (c, 0) under key k, as scalar code
 * (emu's emu_philox_batch, so that both vendors draw the same integers for a seed). */
inline uint4 tb_philox4(ulong c, ulong k) {
  uint c0 = (uint)c, c1 = (uint)(c >> 32), c2 = 0u, c3 = 0u;
  uint k0 = (uint)k, k1 = (uint)(k >> 32);
  for (int r = 0; r < 10; r++) {
    ulong p0 = (ulong)c0 * (ulong)0xD2511F53u, p1 = (ulong)c2 * (ulong)0xCD9E8D57u;
    uint n0 = (uint)(p1 >> 32) ^ c1 ^ k0, n2 = (uint)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint)p1;
    c3 = (uint)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return (uint4)(c0, c1, c2, c3);
}

/* random_.from: self[i] = from + (64 random bits mod range), element i taking half of the
 * block at counter offset / 4 + i / 2 (emu's layout).  torch.randint, and torch.compile's
 * seeds for its random kernels, which a capture replays with new numbers. */
__kernel void tb_random_from(OCL_PTR(T, self), long n, ulong seed, ulong offset, long from,
                             ulong range, OCL_PTR(ulong, state), int captured) {
  long i = get_global_id(0);
  if (i >= n) return;
  if (captured) { /* in a graph: the key and base counter of this replay (tb_rng_key) */
    seed = OCL_AT(ulong, state)[0];
    offset += OCL_AT(ulong, state)[1];
  }
  uint4 r = tb_philox4(offset / 4 + (ulong)i / 2, seed);
  uint hi = (i & 1) ? r.z : r.x, lo = (i & 1) ? r.w : r.y;
  ulong bits = ((ulong)hi << 32) | (ulong)lo;
  OCL_AT(T, self)[i] = (T)(long)((ulong)from + bits % range);
}

/* uniform_, normal_ and exponential_ of a floating self (`kind` 0, 1, 2): element i takes half
 * of the Philox block at counter offset / 4 + i / 2 (emu's layout, as tb_random_from), 64 bits
 * (hi, lo).  uniform_: a + (b - a) u, u in [0, 1) from the top 24 bits of hi in float (as
 * CUDA's float uniform) or 53 bits of (hi, lo) in double (emu's); normal_: a + b sqrt(-2 log
 * u1) cos(2 pi u2), u1 = (hi + 1) 2^-32 in (0, 1] and u2 = lo 2^-32 (Box-Muller, emu's); in
 * float the draws are emu's to float rounding, in double to the last bits of log and cos.
 * exponential_: -log(u) / a with u in (0, 1] (24 or 53 bits), and -epsilon / 2 for the log of u
 * within epsilon / 2 of 1, so that no draw is 0 (ATen's transformation::exponential:
 * multinomial divides by these draws). */
__kernel void tb_real_random(OCL_PTR(T, self), long n, ulong seed, ulong offset, ACC a, ACC b,
                             int kind, OCL_PTR(ulong, state), int captured) {
  long i = get_global_id(0);
  if (i >= n) return;
  if (captured) { /* in a graph: the key and base counter of this replay (tb_rng_key) */
    seed = OCL_AT(ulong, state)[0];
    offset += OCL_AT(ulong, state)[1];
  }
  uint4 r = tb_philox4(offset / 4 + (ulong)i / 2, seed);
  uint hi = (i & 1) ? r.z : r.x, lo = (i & 1) ? r.w : r.y;
  bool wide = sizeof(ACC) == 8;
  ulong bits = (((ulong)hi << 21) ^ (ulong)lo) & (((ulong)1 << 53) - 1);
  ACC value;
  if (kind == 1) {
    ACC u1 = ((ACC)hi + (ACC)1) * (ACC)0x1p-32f;
    ACC u2 = (ACC)lo * (ACC)0x1p-32f;
    value = a + b * sqrt((ACC)-2 * log(u1)) * cos((ACC)6.283185307179586 * u2);
  } else if (kind == 2) {
    ACC u = wide ? ((ACC)bits + (ACC)1) * (ACC)0x1p-53f : ((ACC)(hi >> 8) + (ACC)1) * (ACC)0x1p-24f;
    ACC half_epsilon = wide ? (ACC)0x1p-53f : (ACC)0x1p-24f;
    value = (u >= (ACC)1 - half_epsilon ? -half_epsilon : log(u)) / -a;
  } else if (wide) {
    value = a + (b - a) * ((ACC)bits * (ACC)0x1p-53f);
  } else {
    value = a + (b - a) * ((ACC)(hi >> 8) * (ACC)0x1p-24f);
  }
  OCL_AT(T, self)[i] = (T)value;
}

/* self[i] = (u < p) with u uniform in [0, 1) from counter offset + 4 i of key seed; each
 * work-item draws sixteen consecutive elements. */
__kernel void tb_bernoulli(OCL_PTR(T, self), long n, ulong seed, ulong offset, float p,
                           OCL_PTR(ulong, state), int captured) {
  long first = get_global_id(0) * 16;
  if (first >= n) return;
  if (captured) { /* in a graph: the key and base counter of this replay (tb_rng_key) */
    seed = OCL_AT(ulong, state)[0];
    offset += OCL_AT(ulong, state)[1];
  }
  const uint16 lane = (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  ulong c = offset + 4 * (ulong)first; /* the lanes' counters: c + 4 l, carrying into c1 */
  uint16 low = (uint16)((uint)c) + 4u * lane;
  /* a vector comparison is -1 where true: subtracting it carries */
  uint16 high = (uint16)((uint)(c >> 32)) - as_uint16(low < (uint16)((uint)c));
  uint16 bits = tb_philox16(low, high, (uint)seed, (uint)(seed >> 32));
  float16 u = convert_float16(bits >> 8) * (1.0f / 16777216.0f);
  float draws[16];
  vstore16(select((float16)(0.0f), (float16)(1.0f), u < p), 0, draws);
  __global T *out = OCL_AT(T, self) + first;
  for (int l = 0; l < 16 && first + l < n; l++) out[l] = (T)draws[l];
}

/* The _foreach_ operators over up to eight tensors a launch (the host groups a list's tensors by
 * size): work-item (c, k) updates elements [c chunk, (c + 1) chunk) of tensor k, a run a CPU
 * driver vectorizes (the host picks a few hundred there, else 1, so that a GPU's neighbouring
 * work-items read neighbouring elements).  Tensor k is s (written) with operands o and p; an
 * operator with fewer operands passes s in their place.  op (the host's foreach_op): 0
 * _foreach_add_.List, s += alpha o; 1 _foreach_add_.Scalar, s += alpha; 2 _foreach_mul_.Scalar,
 * s *= alpha; 3 _foreach_lerp_.Scalar, s towards o by alpha (ATen's two-sided form); 4
 * _foreach_addcmul_.Scalar, s += alpha o p. */
#define TB_EACH(k) OCL_PTR(T, s##k), OCL_PTR(T, o##k), OCL_PTR(T, p##k)
#define TB_PICK(k)       \
  case k:                \
    s = OCL_AT(T, s##k); \
    o = OCL_AT(T, o##k); \
    p = OCL_AT(T, p##k); \
    n = numels.s##k;     \
    break
__kernel void tb_foreach(TB_EACH(0), TB_EACH(1), TB_EACH(2), TB_EACH(3), TB_EACH(4), TB_EACH(5),
                         TB_EACH(6), TB_EACH(7), long8 numels, ACC alpha, int op, long chunk) {
  __global T *s, *o, *p;
  long n;
  switch (get_global_id(1)) {
    TB_PICK(0);
    TB_PICK(1);
    TB_PICK(2);
    TB_PICK(3);
    TB_PICK(4);
    TB_PICK(5);
    TB_PICK(6);
    default: /* and 7 */
      TB_PICK(7);
  }
  long first = get_global_id(0) * chunk;
  if (first >= n) return;
  long end = min(first + chunk, n);
  if (op == 0) {
    for (long i = first; i < end; i++) s[i] = (T)((ACC)s[i] + alpha * (ACC)o[i]);
  } else if (op == 1) {
    for (long i = first; i < end; i++) s[i] = (T)((ACC)s[i] + alpha);
  } else if (op == 2) {
    for (long i = first; i < end; i++) s[i] = (T)((ACC)s[i] * alpha);
  } else if (op == 3) {
    bool near = fabs(alpha) < (ACC)0.5;
    for (long i = first; i < end; i++) {
      ACC a = (ACC)s[i], b = (ACC)o[i];
      s[i] = (T)(near ? a + alpha * (b - a) : b - (b - a) * ((ACC)1 - alpha));
    }
  } else {
    for (long i = first; i < end; i++) s[i] = (T)((ACC)s[i] + alpha * (ACC)o[i] * (ACC)p[i]);
  }
}
