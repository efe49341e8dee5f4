/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The fused optimizer steps (one work-item per element of one parameter) and bernoulli_ on
 * the device's own Philox-4x32-10.  The host (kernels/optim.c) prefixes T (the parameters'
 * storage type) and ACC (float or double); tensors are dense.
 */

/* SGD, as ATen's fused kernel: weight decay, momentum (dampening, nesterov), maximize. */
__kernel void tb_sgd(OCL_PTR(T, param), OCL_PTR(T, grad), OCL_PTR(T, buf), long n, ACC lr,
                     ACC weight_decay, ACC momentum, ACC dampening, int nesterov, int maximize,
                     int first_step) {
  long i = get_global_id(0);
  if (i >= n) return;
  ACC p = (ACC)OCL_AT(T, param)[i];
  ACC g = (ACC)OCL_AT(T, grad)[i];
  if (maximize) g = -g;
  if (weight_decay != 0) g += weight_decay * p;
  if (momentum != 0) {
    ACC b = first_step ? g : momentum * (ACC)OCL_AT(T, buf)[i] + ((ACC)1 - dampening) * g;
    OCL_AT(T, buf)[i] = (T)b;
    g = nesterov ? g + momentum * b : b;
  }
  OCL_AT(T, param)[i] = (T)(p - lr * g);
}

/* AdamW, as ATen's fused kernel: the step count read from its device tensor.  Each work-item
 * updates `chunk` consecutive elements (the host picks 1 on GPUs, where neighbouring
 * work-items read neighbouring elements, and a few hundred on CPUs): the bias corrections,
 * two pow() calls that cost more than the rest of an element's update on a CPU driver, are
 * computed once per work-item. */
__kernel void tb_adamw(OCL_PTR(T, param), OCL_PTR(T, grad), OCL_PTR(T, exp_avg),
                       OCL_PTR(T, exp_avg_sq), OCL_PTR(T, max_exp_avg_sq), OCL_PTR(float, step),
                       long n, ACC lr, ACC beta1, ACC beta2, ACC weight_decay, ACC eps,
                       int amsgrad, int maximize, long chunk) {
  long first = get_global_id(0) * chunk;
  if (first >= n) return;
  long end = min(first + chunk, n);
  ACC t = (ACC)OCL_AT(float, step)[0];
  ACC step_size = lr / ((ACC)1 - pow(beta1, t));
  ACC bias2_sqrt = sqrt((ACC)1 - pow(beta2, t));
  ACC decay = (ACC)1 - lr * weight_decay;
  __global T *P = OCL_AT(T, param), *M = OCL_AT(T, exp_avg), *V = OCL_AT(T, exp_avg_sq);
  __global T *H = OCL_AT(T, max_exp_avg_sq);
  __global const T *G = OCL_AT(T, grad);
  for (long i = first; i < end; i++) {
    ACC p = (ACC)P[i] * decay;
    ACC g = maximize ? -(ACC)G[i] : (ACC)G[i];
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

/* Philox-4x32-10 (Salmon et al., Random123). */
uint4 tb_philox(uint4 ctr, uint2 key) {
  for (int r = 0; r < 10; r++) {
    ulong p0 = (ulong)0xD2511F53u * ctr.x;
    ulong p1 = (ulong)0xCD9E8D57u * ctr.z;
    ctr = (uint4)((uint)(p1 >> 32) ^ ctr.y ^ key.x, (uint)p1, (uint)(p0 >> 32) ^ ctr.w ^ key.y,
                  (uint)p0);
    key += (uint2)(0x9E3779B9u, 0xBB67AE85u);
  }
  return ctr;
}

/* self[i] = (u < p) with u uniform in [0, 1) from counter offset + 4 i of key seed */
__kernel void tb_bernoulli(OCL_PTR(T, self), long n, ulong seed, ulong offset, float p) {
  long i = get_global_id(0);
  if (i >= n) return;
  ulong c = offset + 4 * (ulong)i;
  uint4 bits = tb_philox((uint4)((uint)c, (uint)(c >> 32), 0u, 0u),
                         (uint2)((uint)seed, (uint)(seed >> 32)));
  float u = (float)(bits.x >> 8) * (1.0f / 16777216.0f);
  OCL_AT(T, self)[i] = (T)(u < p ? 1 : 0);
}
