/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Random kernels on Philox-4x32-10, keyed by the (seed, offset) torch_backend reserves from
 * the device generator.  Element i (row-major) takes 64 bits: half of counter block
 * offset / 4 + i / 2, so a result depends only on the seed, the offset and the shape, not on
 * threads or strides (and the reservation of 4 * numel values is never exceeded).
 */
#include "kernel.h"

/* A uniform double in [0, 1) from 53 of the bits (hi, lo). */
static double uniform01(uint32_t hi, uint32_t lo) {
  uint64_t bits = ((uint64_t)hi << 21) ^ (uint64_t)lo;
  return (double)(bits & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
}

enum { BERNOULLI, UNIFORM, NORMAL, EXPONENTIAL, INTEGERS };

typedef struct random_state {
  int kind;
  double a, b;    /* bernoulli: p; uniform: from, to; normal: mean, std; exponential: lambda,
                     half the output dtype's epsilon */
  int64_t from;   /* integers: from + (64 random bits mod range) */
  uint64_t range; /* integers: to - from, >= 1 */
} random_state;

typedef struct random_job {
  const emu_tensor *self;
  const random_state *state;
  uint64_t seed, block;
} random_job;

/* Philox blocks for `n` consecutive counters from `counter`, lane-parallel so the rounds
 * vectorise: out[k] holds the four words of block counter + k. */
EMU_HOT_LOOP void emu_philox_batch(uint64_t key, uint64_t counter, int n,
                                   uint32_t out[4][EMU_PHILOX_BATCH]) {
  uint32_t c0[EMU_PHILOX_BATCH], c1[EMU_PHILOX_BATCH], c2[EMU_PHILOX_BATCH], c3[EMU_PHILOX_BATCH];
  for (int k = 0; k < n; k++) {
    uint64_t c = counter + (uint64_t)k;
    c0[k] = (uint32_t)c;
    c1[k] = (uint32_t)(c >> 32);
    c2[k] = 0;
    c3[k] = 0;
  }
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  for (int round = 0; round < 10; round++) {
    for (int k = 0; k < n; k++) {
      uint64_t p0 = (uint64_t)0xD2511F53u * c0[k];
      uint64_t p1 = (uint64_t)0xCD9E8D57u * c2[k];
      uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1[k] ^ k0;
      uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3[k] ^ k1;
      c1[k] = (uint32_t)p1;
      c3[k] = (uint32_t)p0;
      c0[k] = n0;
      c2[k] = n2;
    }
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  for (int k = 0; k < n; k++) {
    out[0][k] = c0[k];
    out[1][k] = c1[k];
    out[2][k] = c2[k];
    out[3][k] = c3[k];
  }
}

/* Bernoulli into a contiguous float32 tensor: the common case (dropout), without the
 * per-element dtype switch; the same bits per element as the general path.  out[2k] and
 * out[2k + 1] are the even and odd elements of block k. */
EMU_HOT_LOOP static void bernoulli_pairs_f32(float *restrict out, const uint32_t *restrict even,
                                             const uint32_t *restrict odd, int blocks,
                                             uint64_t threshold) {
  for (int k = 0; k < blocks; k++) {
    out[2 * k] = even[k] < threshold ? 1.0f : 0.0f;
    out[2 * k + 1] = odd[k] < threshold ? 1.0f : 0.0f;
  }
}

/* The same into a contiguous bool or uint8 tensor: dropout's mask. */
EMU_HOT_LOOP static void bernoulli_pairs_u8(uint8_t *restrict out, const uint32_t *restrict even,
                                            const uint32_t *restrict odd, int blocks,
                                            uint64_t threshold) {
  for (int k = 0; k < blocks; k++) {
    out[2 * k] = even[k] < threshold;
    out[2 * k + 1] = odd[k] < threshold;
  }
}

static void random_range(void *context, int64_t begin, int64_t end) {
  const random_job *job = context;
  const emu_tensor *t = job->self;
  const random_state *s = job->state;
  size_t item = emu_itemsize(t->dtype);
  bool contiguous = emu_is_contiguous(t);
  const bool bytes = t->dtype == TB_DTYPE_BOOL || t->dtype == TB_DTYPE_UINT8;
  if (contiguous && (t->dtype == TB_DTYPE_FLOAT32 || bytes) && s->kind == BERNOULLI) {
    uint32_t bits[4][EMU_PHILOX_BATCH];
    float *data = (float *)t->data;
    uint8_t *mask = (uint8_t *)t->data;
    /* bits * 2^-32 < p  <=>  bits < ceil(p * 2^32), exactly: the general path's test */
    const uint64_t threshold = (uint64_t)ceil(s->a * 4294967296.0);
    int64_t i = begin;
    if (i & 1) { /* an odd first element: the second half of its block */
      emu_philox_batch(job->seed, job->block + (uint64_t)i / 2, 1, bits);
      if (bytes) {
        mask[i] = bits[2][0] < threshold;
      } else {
        data[i] = bits[2][0] < threshold ? 1.0f : 0.0f;
      }
      i++;
    }
    while (i + 1 < end) { /* whole blocks, EMU_PHILOX_BATCH at a time */
      int64_t blocks = (end - i) / 2 < EMU_PHILOX_BATCH ? (end - i) / 2 : EMU_PHILOX_BATCH;
      emu_philox_batch(job->seed, job->block + (uint64_t)i / 2, (int)blocks, bits);
      if (bytes) {
        bernoulli_pairs_u8(mask + i, bits[0], bits[2], (int)blocks, threshold);
      } else {
        bernoulli_pairs_f32(data + i, bits[0], bits[2], (int)blocks, threshold);
      }
      i += 2 * blocks;
    }
    if (i < end) { /* an even last element: the first half of its block */
      emu_philox_batch(job->seed, job->block + (uint64_t)i / 2, 1, bits);
      if (bytes) {
        mask[i] = bits[0][0] < threshold;
      } else {
        data[i] = bits[0][0] < threshold ? 1.0f : 0.0f;
      }
    }
    return;
  }
  uint32_t r[4][EMU_PHILOX_BATCH];
  for (int64_t i = begin; i < end; i++) {
    if (i == begin || (i & 1) == 0) emu_philox_batch(job->seed, job->block + (uint64_t)i / 2, 1, r);
    uint32_t hi = r[2 * (i & 1)][0], lo = r[2 * (i & 1) + 1][0];
    double value;
    if (s->kind == INTEGERS) { /* exact for every range, in 64 bits */
      uint64_t bits = ((uint64_t)hi << 32) | lo;
      int64_t integer = (int64_t)((uint64_t)s->from + bits % s->range);
      int64_t offset = i;
      if (!contiguous) {
        offset = 0;
        for (int64_t d = t->ndim - 1, rest = i; d >= 0; d--) {
          offset += (rest % t->sizes[d]) * t->strides[d];
          rest /= t->sizes[d];
        }
      }
      emu_store_int(t->data + offset * (int64_t)item, t->dtype, integer);
      continue;
    }
    if (s->kind == BERNOULLI) {
      value = (double)hi * (1.0 / 4294967296.0) < s->a ? 1.0 : 0.0;
    } else if (s->kind == UNIFORM) {
      value = s->a + (s->b - s->a) * uniform01(hi, lo);
    } else if (s->kind == EXPONENTIAL) {
      /* -log(v) / lambda for v in (0, 1]; never 0 (multinomial divides by it): v within half an
       * epsilon of 1 takes that half epsilon as its log, as CUDA's transformation does */
      double v = 1.0 - uniform01(hi, lo);
      value = -(v >= 1.0 - s->b ? -s->b : log(v)) / s->a;
    } else {
      double u1 = ((double)hi + 1.0) * (1.0 / 4294967296.0); /* (0, 1] */
      double u2 = (double)lo * (1.0 / 4294967296.0);
      value = s->a + s->b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    }
    int64_t offset = i;
    if (!contiguous) {
      offset = 0;
      int64_t rest = i;
      for (int d = t->ndim - 1; d >= 0; d--) {
        offset += (rest % t->sizes[d]) * t->strides[d];
        rest /= t->sizes[d];
      }
    }
    char *p = t->data + offset * (int64_t)item;
    if (emu_is_floating(t->dtype) || s->kind == BERNOULLI) {
      emu_store_double(p, t->dtype, value);
    } else {
      emu_store_int(p, t->dtype, (int64_t)floor(value));
    }
  }
}

static void run_random(tbk_task *task) {
  emu_call *call = emu_call_of(task);
  const emu_arg *rng = &call->args[call->count - 1];
  /* In a captured graph the key and base counter are read now, at each replay (vendor.h,
   * tb_rng_key::device_state). */
  const uint64_t *state = rng->as.rng.device_state;
  uint64_t seed = state != NULL ? state[0] : rng->as.rng.seed;
  uint64_t offset = (state != NULL ? state[1] : 0) + rng->as.rng.offset;
  random_job job = {call->args[0].as.tensor, call->scratch, seed, offset / 4};
  emu_parallel_for(job.self->numel, 1 << 14, random_range, &job);
}

/* bernoulli_.float: (self, p, generator) */
static tb_status kernel_bernoulli(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("bernoulli_.float", args, count, "Tfr");
  if (status != TB_OK) return status;
  random_state state = {.kind = BERNOULLI,
                        .a = args[1].kind == TB_VALUE_DOUBLE ? args[1].as.f : (double)args[1].as.i};
  if (!(state.a >= 0 && state.a <= 1)) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: bernoulli_: p must be in [0, 1], got %g",
                    state.a);
  }
  return emu_launch("bernoulli_.float", stream, args, count, run_random, sizeof state, &state);
}

/* uniform_: (self, from, to, generator) */
static tb_status kernel_uniform(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("uniform_", args, count, "Tffr");
  if (status != TB_OK) return status;
  if (!emu_is_floating(args[0].as.tensor->dtype)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: uniform_: floating tensors only");
  }
  random_state state = {.kind = UNIFORM,
                        .a = args[1].kind == TB_VALUE_DOUBLE ? args[1].as.f : (double)args[1].as.i,
                        .b = args[2].kind == TB_VALUE_DOUBLE ? args[2].as.f : (double)args[2].as.i};
  return emu_launch("uniform_", stream, args, count, run_random, sizeof state, &state);
}

/* normal_: (self, mean, std, generator) */
static tb_status kernel_normal(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("normal_", args, count, "Tffr");
  if (status != TB_OK) return status;
  if (!emu_is_floating(args[0].as.tensor->dtype)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: normal_: floating tensors only");
  }
  random_state state = {.kind = NORMAL,
                        .a = args[1].kind == TB_VALUE_DOUBLE ? args[1].as.f : (double)args[1].as.i,
                        .b = args[2].kind == TB_VALUE_DOUBLE ? args[2].as.f : (double)args[2].as.i};
  if (state.b < 0) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: normal_: std must be >= 0, got %g", state.b);
  }
  return emu_launch("normal_", stream, args, count, run_random, sizeof state, &state);
}

/* exponential_: (self, lambd, generator); csrc's host checks refused lambd <= 0 and NaN, and an
 * infinite lambd gives zeros, as on the CPU */
static tb_status kernel_exponential(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("exponential_", args, count, "Tfr");
  if (status != TB_OK) return status;
  tb_dtype dtype = args[0].as.tensor->dtype;
  if (!emu_is_floating(dtype)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: exponential_: floating tensors only");
  }
  double lambd = args[1].kind == TB_VALUE_DOUBLE ? args[1].as.f : (double)args[1].as.i;
  if (!(lambd > 0)) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT, "emu: exponential_: lambda must be > 0, got %g",
                    lambd);
  }
  const double epsilon = dtype == TB_DTYPE_FLOAT64   ? 2.220446049250313e-16
                         : dtype == TB_DTYPE_FLOAT32 ? 1.1920928955078125e-07
                         : dtype == TB_DTYPE_FLOAT16 ? 0.0009765625
                                                     : 0.0078125; /* bfloat16 */
  random_state state = {.kind = EXPONENTIAL, .a = lambd, .b = epsilon / 2};
  return emu_launch("exponential_", stream, args, count, run_random, sizeof state, &state);
}

/* random_.from: (self, from, to, generator): integers in [from, to).  `to` None (the dtype's
 * whole range above `from`) is left to the CPU fallback.  torch.randint and Inductor's random
 * seeds come here: through the fallback they would copy the tensor to the host, which waits
 * for the stream. */
static tb_status kernel_random_from(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = emu_check_args("random_.from", args, count, "Ti?r");
  if (status != TB_OK) return status;
  if (args[2].kind != TB_VALUE_INT) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: random_.from: to=None is not supported");
  }
  int64_t from = args[1].as.i, to = args[2].as.i;
  if (from >= to) {
    return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                    "emu: random_.from: from %lld must be less than to %lld", (long long)from,
                    (long long)to);
  }
  if (args[0].as.tensor->dtype == TB_DTYPE_BOOL) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: random_.from: bool tensors");
  }
  random_state state = {.kind = INTEGERS, .from = from, .range = (uint64_t)to - (uint64_t)from};
  return emu_launch("random_.from", stream, args, count, run_random, sizeof state, &state);
}

EMU_KERNEL(k_random_from, "random_.from", kernel_random_from, EMU_ALL_TYPES,
           "random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> "
           "Tensor(a!)");
EMU_KERNEL(
    k_bernoulli, "bernoulli_.float", kernel_bernoulli, EMU_ALL_TYPES,
    "bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)");
EMU_KERNEL(k_uniform, "uniform_", kernel_uniform, EMU_FLOATS,
           "uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? generator=None) -> "
           "Tensor(a!)");
EMU_KERNEL(k_normal, "normal_", kernel_normal, EMU_FLOATS,
           "normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? generator=None) -> "
           "Tensor(a!)");

EMU_KERNEL(
    k_exponential, "exponential_", kernel_exponential, EMU_FLOATS,
    "exponential_(Tensor(a!) self, float lambd=1., *, Generator? generator=None) -> Tensor(a!)");

const tb_kernel *const emu_random_kernels[] = {&k_bernoulli,   &k_uniform,     &k_normal,
                                               &k_exponential, &k_random_from, NULL};
