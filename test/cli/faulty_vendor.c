/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Vendors that break the contract in ways a test runner must survive, selected at compile
 * time: FAULT_CRASH_ON_OOM dereferences NULL instead of reporting out-of-memory;
 * FAULT_HANG_ON_SYNC never returns from stream synchronize.  Everything else is fake's.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdlib.h>
#include <torch_backend/fake.h>
#include <unistd.h>

#if defined(FAULT_CRASH_ON_OOM)
/* Replaces the allocation pair (fake's free expects fake's block header). */
tb_status tbv_memory_device_malloc(tb_context ctx, int32_t device, size_t size, void **ptr) {
  tb_device_properties props = {.struct_size = sizeof props};
  tb_status status = tbv_device_get_properties(ctx, device, &props);
  if (status != TB_OK) return status;
  if (ptr == NULL) return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "faulty: ptr is NULL");
  if (size > props.total_memory) {
    volatile int *null = NULL;
    *null = 1; /* the bug under test: a crash where a status was due */
  }
  *ptr = size == 0 ? NULL : aligned_alloc(TB_MEMORY_ALIGNMENT, (size + 63) / 64 * 64);
  return TB_OK;
}

tb_status tbv_memory_device_free(tb_context ctx, int32_t device, void *ptr) {
  (void)ctx;
  (void)device;
  free(ptr);
  return TB_OK;
}
#elif defined(FAULT_HANG_ON_SYNC)
tb_status tbv_stream_synchronize(tb_context ctx, tb_stream stream) {
  (void)ctx;
  (void)stream;
  for (;;) pause(); /* the bug under test: a wait that never ends */
}
#else
#error "define FAULT_CRASH_ON_OOM or FAULT_HANG_ON_SYNC"
#endif
