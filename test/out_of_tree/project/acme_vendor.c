/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The "acme" vendor, the porting guide's example (docs/porting.rst includes this file): fake's
 * defaults with its own identity, context, device description and one kernel, the way a port
 * begins.  Replacing the rest happens one slot at a time, with tb-conformance run after each
 * step.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <torch_backend/fake.h>

/* porting guide: identity */
const char *tbv_device_type(void) { return "acme"; }
const char *tbv_vendor_name(void) { return "ACME Accelerators"; }
const char *tbv_vendor_version(void) { return "0.1.0"; }

/* porting guide: context */
/*
 * The vendor's own state, created by init, passed to every call as `ctx`, released by
 * finalize (instead of process globals).  fake's slots ignore it; acme's use it.  init must be
 * cheap and fork-safe: torch_backend calls it when it loads the vendor.
 */
#define ACME_MAGIC 0x61636d65u /* "acme" */

struct tb_context_impl {
  uint32_t magic;
  char model[64]; /* the device model name: ACME_MODEL, default "ACME Rocket" */
};

tb_status tbv_init(const tb_host_api *host, tb_context *ctx) {
  if (host->abi_major != TB_ABI_VERSION_MAJOR) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "acme: built for ABI %d, host speaks %u",
                             TB_ABI_VERSION_MAJOR, (unsigned)host->abi_major);
  }
  struct tb_context_impl *acme = calloc(1, sizeof *acme);
  if (acme == NULL) return tb_fake_set_error(TB_ERROR_OUT_OF_MEMORY, "acme: out of memory");
  const char *model = getenv("ACME_MODEL");
  acme->magic = ACME_MAGIC;
  snprintf(acme->model, sizeof acme->model, "%s", model != NULL ? model : "ACME Rocket");
  *ctx = acme;
  return TB_OK;
}

void tbv_finalize(tb_context ctx) { free(ctx); }

static tb_status check_context(tb_context ctx, const char *call) {
  if (ctx == NULL || ctx->magic != ACME_MAGIC) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "acme: %s: %p is not acme's context", call,
                             (void *)ctx);
  }
  return TB_OK;
}

tb_status tbv_device_get_properties(tb_context ctx, int32_t device,
                                    tb_device_properties *properties) {
  tb_status status = check_context(ctx, "get_properties");
  if (status != TB_OK) return status;
  int32_t count = 0;
  status = tbv_device_count(ctx, &count);
  if (status != TB_OK) return status;
  if (device < 0 || device >= count) {
    return tb_fake_set_error(TB_ERROR_INVALID_DEVICE, "acme: device index %d out of range [0, %d)",
                             (int)device, (int)count);
  }
  if (properties == NULL || properties->struct_size < TB_STRUCT_SIZE(tb_device_properties, name)) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "acme: properties struct too small");
  }
  snprintf(properties->name, sizeof properties->name, "%s %d", ctx->model, (int)device);
  if (TB_STRUCT_HAS_FIELD(properties, tb_device_properties, total_memory)) {
    size_t free_bytes = 0, total_bytes = 0;
    status = tbv_memory_get_info(ctx, device, &free_bytes, &total_bytes);
    if (status != TB_OK) return status;
    properties->total_memory = total_bytes;
  }
  if (TB_STRUCT_HAS_FIELD(properties, tb_device_properties, compute_units)) {
    properties->compute_units = 128;
  }
  return TB_OK;
}

/* porting guide: kernel */
/*
 * A first kernel: add.out in float32 over contiguous operands.  Arguments follow the ATen
 * schema "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)"; the kernel
 * table's dtype is out's.  Anything else (a number for other, another dtype, a broadcast
 * operand, a transposed view) is declined with TB_ERROR_NOT_SUPPORTED and runs on the CPU
 * fallback.  `alpha * other` goes through scratch memory from the workspace, the way a
 * library kernel that needs a temporary gets one: from torch_backend's caching allocator,
 * released when the kernel returns.  fake's streams are synchronous, so the kernel computes at
 * once; a vendor with asynchronous streams would enqueue the work on `call->stream` instead.
 */
static bool is_contiguous(const tb_tensor *t) {
  int64_t expected = 1;
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    if (t->sizes[d] != 1 && t->strides[d] != expected) return false;
    expected *= t->sizes[d];
  }
  return true;
}

static int64_t numel(const tb_tensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++) n *= t->sizes[d];
  return n;
}

static tb_status add_out(tb_context ctx, const tb_kernel_call *call) {
  tb_status status = check_context(ctx, "add.out");
  if (status != TB_OK) return status;
  const tb_value *args = call->args;
  if (call->num_args != 4 || args[0].kind != TB_VALUE_TENSOR || args[3].kind != TB_VALUE_TENSOR) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "acme: add.out: unexpected arguments");
  }
  /* `x + 1.5` passes other as a number (a CPU scalar), and the operands' dtypes may differ
   * (float32 + int64 gives float32): declined, like every case the kernel does not compute. */
  if (args[1].kind != TB_VALUE_TENSOR) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "acme: add.out: a tensor operand only");
  }
  const tb_tensor *self = args[0].as.tensor, *other = args[1].as.tensor, *out = args[3].as.tensor;
  double alpha = args[2].kind == TB_VALUE_DOUBLE ? args[2].as.f
                 : args[2].kind == TB_VALUE_BOOL ? args[2].as.b
                                                 : (double)args[2].as.i;
  if (self->dtype != TB_DTYPE_FLOAT32 || other->dtype != TB_DTYPE_FLOAT32 || !is_contiguous(self) ||
      !is_contiguous(other) || !is_contiguous(out) || numel(self) != numel(out) ||
      numel(other) != numel(out)) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED,
                             "acme: add.out: contiguous float32 operands of out's shape only");
  }
  const int64_t n = numel(out);
  float *scaled = NULL;
  status = call->workspace(call, (size_t)n * sizeof(float), (void **)&scaled);
  if (status != TB_OK) {
    return tb_fake_set_error(status, "acme: add.out: no workspace for %lld floats", (long long)n);
  }
  const float *a = self->data, *b = other->data;
  float *c = out->data;
  const float scale = (float)alpha;
  for (int64_t i = 0; i < n; i++) scaled[i] = scale * b[i];
  for (int64_t i = 0; i < n; i++) c[i] = a[i] + scaled[i];
  return TB_OK;
}

static const tb_kernel k_add_out = {
    .struct_size = sizeof(tb_kernel),
    .name = "add.out",
    .fn = add_out,
    .dtypes = TB_DTYPE_BIT(TB_DTYPE_FLOAT32), /* other dtypes go to the CPU fallback */
    .flags = 0,
    /* ABI 2.0: the schema the kernel follows, from `python -m torch_backend.schemas`; a torch
     * whose add.out differs refuses the kernel instead of calling it wrongly */
    .schema = "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
};
static const tb_kernel *const acme_kernels[] = {&k_add_out};
static const tb_kernel_api acme_kernel_api = {
    .struct_size = sizeof(tb_kernel_api),
    .count = sizeof acme_kernels / sizeof acme_kernels[0],
    .kernels = acme_kernels,
};

const tb_kernel_api *tbv_kernels(void) { return &acme_kernel_api; }
