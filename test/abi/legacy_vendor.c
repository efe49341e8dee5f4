/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * A vendor built against an ABI 1.x header, to prove that torch_backend 2.x loads it unchanged
 * (through the loader's 1.x adapter).  CMake compiles this file twice: against the verbatim
 * ABI 1.1 header (test/abi/v1_1) and against the verbatim 1.2 one (test/abi/v1_2).  Its
 * devices, memory, streams and events are the ABI 1.2 fake's (test/abi/v1_2/fake.c, verbatim
 * too, 1.x signatures); what it adds are kernels in the 1.x calling convention:
 *
 *   add.out                 float32, contiguous: out = self + alpha * other
 *   cat.out                 float32, contiguous, along dim 0: a Tensor[] argument
 *   tb_test.list_probe      (Tensor?[] list, Tensor out): writes, per element of the list, its
 *                           ndim (-1 for an absent one) into out (int64) -- how a test checks
 *                           what the adapter made of a 2.0 list with NULL elements
 *
 * fake's device pointers are host pointers, so the kernels compute on the calling thread.
 */
#include <string.h>
#include <torch_backend/fake.h> /* the 1.2 fake's slots; vendor.h is the one CMake chose */

#if TB_ABI_VERSION_MAJOR != 1
#error "legacy_vendor.c is built against an ABI 1.x header"
#endif

static int contiguous(const tb_tensor *t) {
  int64_t expected = 1;
  for (int32_t d = t->ndim - 1; d >= 0; d--) {
    if (t->sizes[d] != 1 && t->strides[d] != expected) return 0;
    expected *= t->sizes[d];
  }
  return 1;
}

static int64_t numel(const tb_tensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++) n *= t->sizes[d];
  return n;
}

static tb_status add_out(tb_stream stream, const tb_value *args, int32_t num_args) {
  (void)stream;
  if (num_args != 4 || args[0].kind != TB_VALUE_TENSOR || args[1].kind != TB_VALUE_TENSOR ||
      args[3].kind != TB_VALUE_TENSOR) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "legacy: add.out: unexpected arguments");
  }
  const tb_tensor *self = args[0].as.tensor, *other = args[1].as.tensor, *out = args[3].as.tensor;
  if (!contiguous(self) || !contiguous(other) || !contiguous(out)) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "legacy: add.out: contiguous only");
  }
  const float alpha = (float)(args[2].kind == TB_VALUE_DOUBLE ? args[2].as.f : args[2].as.i);
  const float *a = self->data, *b = other->data;
  float *c = out->data;
  for (int64_t i = 0, n = numel(out); i < n; i++) c[i] = a[i] + alpha * b[i];
  return TB_OK;
}

/* cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out): 1.x passes the list as an array of
 * tb_tensor structs. */
static tb_status cat_out(tb_stream stream, const tb_value *args, int32_t num_args) {
  (void)stream;
  if (num_args != 3 || args[0].kind != TB_VALUE_TENSOR_LIST || args[1].kind != TB_VALUE_INT ||
      args[2].kind != TB_VALUE_TENSOR) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "legacy: cat.out: unexpected arguments");
  }
  const tb_tensor *out = args[2].as.tensor;
  if (args[1].as.i != 0 || !contiguous(out)) {
    return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "legacy: cat.out: dim 0, contiguous only");
  }
  const tb_tensor_list *list = &args[0].as.tensors;
  int64_t total = 0;
  for (int64_t k = 0; k < list->count; k++) {
    const tb_tensor *t = &list->items[k];
    if (t->dtype != TB_DTYPE_FLOAT32 || !contiguous(t)) {
      return tb_fake_set_error(TB_ERROR_NOT_SUPPORTED, "legacy: cat.out: float32, contiguous");
    }
    total += numel(t);
  }
  if (total != numel(out)) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT,
                             "legacy: cat.out: %lld elements in, %lld out", (long long)total,
                             (long long)numel(out));
  }
  char *dst = out->data;
  for (int64_t k = 0; k < list->count; k++) {
    size_t bytes = (size_t)numel(&list->items[k]) * sizeof(float);
    if (bytes != 0) memcpy(dst, list->items[k].data, bytes);
    dst += bytes;
  }
  return TB_OK;
}

static tb_status list_probe(tb_stream stream, const tb_value *args, int32_t num_args) {
  (void)stream;
  if (num_args != 2 || args[0].kind != TB_VALUE_TENSOR_LIST || args[1].kind != TB_VALUE_TENSOR ||
      args[1].as.tensor->dtype != TB_DTYPE_INT64 ||
      numel(args[1].as.tensor) != args[0].as.tensors.count) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "legacy: list_probe: bad arguments");
  }
  int64_t *out = args[1].as.tensor->data;
  for (int64_t k = 0; k < args[0].as.tensors.count; k++) {
    const tb_tensor *t = &args[0].as.tensors.items[k];
    out[k] = t->struct_size == sizeof(tb_tensor) ? t->ndim : -100; /* -100: malformed */
  }
  return TB_OK;
}

static const tb_kernel k_add = {sizeof(tb_kernel), "add.out", add_out,
                                TB_DTYPE_BIT(TB_DTYPE_FLOAT32), 0};
static const tb_kernel k_cat = {sizeof(tb_kernel), "cat.out", cat_out,
                                TB_DTYPE_BIT(TB_DTYPE_FLOAT32), 0};
static const tb_kernel k_probe = {sizeof(tb_kernel), "tb_test.list_probe", list_probe, 0, 0};
static const tb_kernel *const k_kernels[] = {&k_add, &k_cat, &k_probe};
static const tb_kernel_api k_kernel_api = {sizeof(tb_kernel_api), 3, k_kernels};

static const tb_device_api k_device = {
    .struct_size = sizeof(tb_device_api),
    .count = tbv_device_count,
    .get_properties = tbv_device_get_properties,
    .synchronize = tbv_device_synchronize,
#if TB_ABI_VERSION_MINOR >= 2
    .reset = tbv_device_reset,
#endif
};

static const tb_memory_api k_memory = {
    .struct_size = sizeof(tb_memory_api),
    .device_malloc = tbv_memory_device_malloc,
    .device_free = tbv_memory_device_free,
    .host_malloc = tbv_memory_host_malloc,
    .host_free = tbv_memory_host_free,
    .copy_h2d = tbv_memory_copy_h2d,
    .copy_d2h = tbv_memory_copy_d2h,
    .copy_d2d = tbv_memory_copy_d2d,
    .copy_h2d_async = tbv_memory_copy_h2d_async,
    .copy_d2h_async = tbv_memory_copy_d2h_async,
    .copy_d2d_async = tbv_memory_copy_d2d_async,
    .memset_async = tbv_memory_memset_async,
    .get_info = tbv_memory_get_info,
};

static const tb_stream_api k_stream = {
    .struct_size = sizeof(tb_stream_api),
    .create = tbv_stream_create,
    .destroy = tbv_stream_destroy,
    .query = tbv_stream_query,
    .synchronize = tbv_stream_synchronize,
    .wait_event = tbv_stream_wait_event,
    .priority_range = tbv_stream_priority_range,
#if TB_ABI_VERSION_MINOR >= 2
    .inject_fault = tbv_stream_inject_fault,
#endif
};

static const tb_event_api k_event = {
    .struct_size = sizeof(tb_event_api),
    .create = tbv_event_create,
    .destroy = tbv_event_destroy,
    .record = tbv_event_record,
    .query = tbv_event_query,
    .synchronize = tbv_event_synchronize,
    .elapsed_time = tbv_event_elapsed_time,
};

static const tb_vendor k_vendor = {
    .struct_size = sizeof(tb_vendor),
    .abi_major = TB_ABI_VERSION_MAJOR,
    .abi_minor = TB_ABI_VERSION_MINOR,
    .device_type = "legacy",
    .vendor_name = "ABI 1.x test vendor",
    .vendor_version = LEGACY_VERSION,
    .last_error = tbv_last_error,
    .device = &k_device,
    .memory = &k_memory,
    .stream = &k_stream,
    .event = &k_event,
    .kernels = &k_kernel_api,
};

/* As every 1.x vendor did: serve major 1, refuse the rest. */
TB_EXPORT const tb_vendor *tb_vendor_get(uint32_t abi_major, const char **error) {
  if (abi_major != TB_ABI_VERSION_MAJOR) {
    if (error != NULL) *error = "the legacy vendor implements ABI major 1 only";
    return NULL;
  }
  return &k_vendor;
}
