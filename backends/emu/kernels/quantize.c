/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Per-tensor affine quantization (vendor.h, "Quantized tensors"): the kernels behind
 * torch.quantize_per_tensor and dequantize on the device, in PyTorch's reference arithmetic
 * (quantize_val / dequantize_val of ATen's AffineQuantizerBase):
 *   - quantize: q = clamp(nearbyint(x * inv) + zero_point), inv = 1 / (float)scale, the
 *     product rounded to float, ties to even;
 *   - dequantize: x = (float)(q - zero_point) * (float)scale.
 * Any strides; float32 values only.
 */
#include <math.h>
#include <stdint.h>

#include "kernel.h"

typedef struct quant_job {
  const emu_tensor *x, *q; /* float values, integer representation */
  float inv_scale, scale;
  int64_t zero_point;
  bool dense; /* both contiguous: element e at offset e */
} quant_job;

/* Offset in elements of element `e` (row-major) of `t`. */
static int64_t offset_of(const quant_job *j, const emu_tensor *t, int64_t e) {
  if (j->dense) return e;
  int64_t offset = 0;
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    int64_t size = t->sizes[d] > 0 ? t->sizes[d] : 1;
    offset += (e % size) * t->strides[d];
    e /= size;
  }
  return offset;
}

/* nearbyintf of v, |v| <= 2^22, in the default rounding mode (to nearest, ties to even):
 * adding and subtracting 1.5 * 2^23 leaves v rounded to an integer, with no library call. */
static inline float round_even(float v) { return (v + 12582912.0f) - 12582912.0f; }

/* The stored integer of an 8-bit quantize: round(x * inv) + zero_point, clamped to [lo, hi],
 * NaN giving hi (as PyTorch's CPU gives). */
static inline float quantize8(float x, float inv, float zp, float lo, float hi) {
  float s = x * inv;
  if (!(s == s)) return hi;
  s = s < -4194304.0f ? -4194304.0f : s > 4194304.0f ? 4194304.0f : s; /* 2^22 */
  float r = round_even(s) + zp;
  return r < lo ? lo : r > hi ? hi : r;
}

static void quantize_range(void *context, int64_t begin, int64_t end) {
  const quant_job *j = context;
  const float *x = (const float *)j->x->data;
  const float inv = j->inv_scale, zp = (float)j->zero_point;
  const bool dense = j->dense;
  switch (j->q->dtype) {
    case TB_DTYPE_INT8: {
      int8_t *q = (int8_t *)j->q->data;
      if (dense) {
        for (int64_t e = begin; e < end; e++) {
          q[e] = (int8_t)quantize8(x[e], inv, zp, -128.0f, 127.0f);
        }
      } else {
        for (int64_t e = begin; e < end; e++) {
          q[offset_of(j, j->q, e)] =
              (int8_t)quantize8(x[offset_of(j, j->x, e)], inv, zp, -128.0f, 127.0f);
        }
      }
      break;
    }
    case TB_DTYPE_UINT8: {
      uint8_t *q = (uint8_t *)j->q->data;
      if (dense) {
        for (int64_t e = begin; e < end; e++) {
          q[e] = (uint8_t)quantize8(x[e], inv, zp, 0.0f, 255.0f);
        }
      } else {
        for (int64_t e = begin; e < end; e++) {
          q[offset_of(j, j->q, e)] =
              (uint8_t)quantize8(x[offset_of(j, j->x, e)], inv, zp, 0.0f, 255.0f);
        }
      }
      break;
    }
    default: { /* TB_DTYPE_INT32: round(x * inv) + zero_point in 64 bits, clamped; NaN gives
                * the bottom of the range, as PyTorch's CPU gives */
      int32_t *q = (int32_t *)j->q->data;
      for (int64_t e = begin; e < end; e++) {
        double r = (double)nearbyintf(x[offset_of(j, j->x, e)] * inv) + (double)j->zero_point;
        double c = !(r >= -2147483648.0) ? -2147483648.0 : r > 2147483647.0 ? 2147483647.0 : r;
        q[offset_of(j, j->q, e)] = (int32_t)c;
      }
      break;
    }
  }
}

static void dequantize_range(void *context, int64_t begin, int64_t end) {
  const quant_job *j = context;
  float *x = (float *)j->x->data;
  const float scale = j->scale;
  const int32_t zp = (int32_t)j->zero_point;
  if (j->dense && j->q->dtype == TB_DTYPE_INT8) {
    const int8_t *q = (const int8_t *)j->q->data;
    for (int64_t e = begin; e < end; e++) x[e] = (float)((int32_t)q[e] - zp) * scale;
    return;
  }
  if (j->dense && j->q->dtype == TB_DTYPE_UINT8) {
    const uint8_t *q = (const uint8_t *)j->q->data;
    for (int64_t e = begin; e < end; e++) x[e] = (float)((int32_t)q[e] - zp) * scale;
    return;
  }
  for (int64_t e = begin; e < end; e++) {
    int64_t o = offset_of(j, j->q, e);
    int64_t q = j->q->dtype == TB_DTYPE_INT8    ? ((const int8_t *)j->q->data)[o]
                : j->q->dtype == TB_DTYPE_UINT8 ? ((const uint8_t *)j->q->data)[o]
                                                : ((const int32_t *)j->q->data)[o];
    x[offset_of(j, j->x, e)] = (float)(int32_t)(q - zp) * scale;
  }
}

static void job_of(quant_job *j, const emu_arg *a, const emu_tensor *x, const emu_tensor *q) {
  j->x = x;
  j->q = q;
  j->scale = (float)a[1].as.f;
  j->inv_scale = 1.0f / j->scale;
  j->zero_point = a[2].as.i;
  j->dense = emu_is_contiguous(x) && emu_is_contiguous(q);
}

/* quantize_per_tensor: (self, scale, zero_point, out) */
static void run_quantize(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  quant_job j;
  job_of(&j, a, a[0].as.tensor, a[3].as.tensor);
  emu_parallel_for(j.x->numel, 1 << 14, quantize_range, &j);
}

/* dequantize.self: (self, scale, zero_point, out) */
static void run_dequantize(tbk_task *task) {
  const emu_arg *a = emu_call_of(task)->args;
  quant_job j;
  job_of(&j, a, a[3].as.tensor, a[0].as.tensor);
  emu_parallel_for(j.x->numel, 1 << 14, dequantize_range, &j);
}

static bool integer_repr(const tb_value *v) {
  tb_dtype d = v->as.tensor->dtype;
  return d == TB_DTYPE_INT8 || d == TB_DTYPE_UINT8 || d == TB_DTYPE_INT32;
}

static tb_status check(const char *name, const tb_value *args, int32_t count, int values,
                       int ints) {
  tb_status status = emu_check_args(name, args, count, "TfiT");
  if (status != TB_OK) return status;
  const tb_tensor *v = args[values].as.tensor, *q = args[ints].as.tensor;
  if (v->dtype != TB_DTYPE_FLOAT32 || !integer_repr(&args[ints]) || v->ndim != q->ndim) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED,
                    "emu: %s: float32 values and an int8, uint8 or int32 representation of one "
                    "shape only",
                    name);
  }
  for (int32_t d = 0; d < v->ndim; d++) {
    if (v->sizes[d] != q->sizes[d]) {
      return tbk_fail(TB_ERROR_INVALID_ARGUMENT,
                      "emu: %s: values and representation differ in "
                      "dimension %d",
                      name, (int)d);
    }
  }
  if (!(args[1].as.f > 0) || !isfinite(1.0f / (float)args[1].as.f)) {
    return tbk_fail(TB_ERROR_NOT_SUPPORTED, "emu: %s: scale %g has no finite float inverse", name,
                    args[1].as.f);
  }
  return TB_OK;
}

static tb_status kernel_quantize(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = check("quantize_per_tensor", args, count, 0, 3);
  if (status != TB_OK) return status;
  return emu_launch("quantize_per_tensor", stream, args, count, run_quantize, 0, NULL);
}

static tb_status kernel_dequantize(tb_stream stream, const tb_value *args, int32_t count) {
  tb_status status = check("dequantize.self", args, count, 3, 0);
  if (status != TB_OK) return status;
  return emu_launch("dequantize.self", stream, args, count, run_dequantize, 0, NULL);
}

EMU_KERNEL(k_quantize, "quantize_per_tensor", kernel_quantize, TB_DTYPE_BIT(TB_DTYPE_FLOAT32),
           "quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) -> "
           "Tensor");
EMU_KERNEL(k_dequantize, "dequantize.self", kernel_dequantize,
           TB_DTYPE_BIT(TB_DTYPE_INT8) | TB_DTYPE_BIT(TB_DTYPE_UINT8) |
               TB_DTYPE_BIT(TB_DTYPE_INT32),
           "dequantize.self(Tensor self) -> Tensor");

const tb_kernel *const emu_quantize_kernels[] = {&k_quantize, &k_dequantize, NULL};
