/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The first step of a port, as a test: a vendor that links fake and replaces only device
 * allocation (the device_malloc/device_free pair, which share the block format), counting
 * calls.  Every other slot stays fake's.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <torch_backend/fake.h>

static _Atomic long g_mallocs; /* counters read by the test through the functions below */
static _Atomic long g_frees;

TB_EXPORT long tb_test_counting_mallocs(void) { return atomic_load(&g_mallocs); }
TB_EXPORT long tb_test_counting_frees(void) { return atomic_load(&g_frees); }

tb_status tbv_memory_device_malloc(tb_context ctx, int32_t device, size_t size, void **ptr) {
  tb_device_properties props = {.struct_size = sizeof props};
  tb_status status = tbv_device_get_properties(ctx, device, &props); /* fake validates the index */
  if (status != TB_OK) return status;
  if (ptr == NULL) return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "counting: ptr is NULL");
  atomic_fetch_add(&g_mallocs, 1);
  if (size == 0) {
    *ptr = NULL;
    return TB_OK;
  }
  void *memory =
      size > props.total_memory
          ? NULL
          : aligned_alloc(TB_MEMORY_ALIGNMENT, (size + TB_MEMORY_ALIGNMENT - 1) /
                                                   TB_MEMORY_ALIGNMENT * TB_MEMORY_ALIGNMENT);
  if (memory == NULL) {
    return tb_fake_set_error(TB_ERROR_OUT_OF_MEMORY,
                             "counting: cannot allocate %zu bytes on device %d", size, (int)device);
  }
  *ptr = memory;
  return TB_OK;
}

tb_status tbv_memory_device_free(tb_context ctx, int32_t device, void *ptr) {
  int32_t count = 0;
  tb_status status = tbv_device_count(ctx, &count);
  if (status != TB_OK) return status;
  if (device < 0 || device >= count) {
    return tb_fake_set_error(TB_ERROR_INVALID_DEVICE, "counting: device index %d out of range",
                             (int)device);
  }
  atomic_fetch_add(&g_frees, 1);
  free(ptr);
  return TB_OK;
}
