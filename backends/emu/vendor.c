/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's vendor table and entry point: every slot is the function emu_<group>_<slot> of
 * device.c, memory.c or stream.c, declared and wired here from the slot list.
 */
#include <torch_backend/vendor_slots.h>

#include "emu.h"

#ifndef TORCH_BACKEND_VERSION
#define TORCH_BACKEND_VERSION "0.0.0"
#endif

#define DECLARE(gt, gf, slot, required, since, ret, params, names) ret emu_##gf##_##slot params;
TB_VENDOR_SLOTS(DECLARE)
#undef DECLARE

#define SLOT(gt, gf, slot, required, since, ret, params, names) .slot = emu_##gf##_##slot,
static const tb_device_api k_device = {.struct_size = sizeof(tb_device_api), TB_DEVICE_SLOTS(SLOT)};
static const tb_memory_api k_memory = {.struct_size = sizeof(tb_memory_api), TB_MEMORY_SLOTS(SLOT)};
static const tb_stream_api k_stream = {.struct_size = sizeof(tb_stream_api), TB_STREAM_SLOTS(SLOT)};
static const tb_event_api k_event = {.struct_size = sizeof(tb_event_api), TB_EVENT_SLOTS(SLOT)};
#undef SLOT

static tb_vendor g_vendor;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build(void) {
  g_vendor = (tb_vendor){
      .struct_size = sizeof(tb_vendor),
      .abi_major = TB_ABI_VERSION_MAJOR,
      .abi_minor = TB_ABI_VERSION_MINOR,
      .device_type = "emu",
      .vendor_name = "torch_backend emulated accelerator",
      .vendor_version = TORCH_BACKEND_VERSION,
      .init = emu_init,
      .finalize = emu_finalize,
      .last_error = emu_last_error,
      .device = &k_device,
      .memory = &k_memory,
      .stream = &k_stream,
      .event = &k_event,
      .kernels = emu_kernel_api(),
      .extensions = emu_extensions(),
  };
}

TB_EXPORT const tb_vendor *tb_vendor_get(uint32_t abi_major, const char **error) {
  if (abi_major != TB_ABI_VERSION_MAJOR) {
    if (error != NULL) *error = "emu implements ABI major 2 only";
    return NULL;
  }
  pthread_once(&g_once, build);
  return &g_vendor;
}
