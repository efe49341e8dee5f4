/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's vendor table and entry point: the memory slots and the device count and properties are
 * emu's own (emu_<group>_<slot> of device.c and memory.c), the stream and event slots and device
 * synchronisation are tb_vendor_kit's (tbk_<group>_<slot>), wired here from the slot list.
 */
#include <torch_backend/vendor_slots.h>

#include "emu.h"

#ifndef TORCH_BACKEND_VERSION
#define TORCH_BACKEND_VERSION "0.0.0"
#endif

#define DECLARE(gt, gf, slot, required, since, ret, params, names) ret emu_##gf##_##slot params;
TB_MEMORY_SLOTS(DECLARE)
#undef DECLARE
tb_status emu_device_count(tb_context ctx, int32_t *count);
tb_status emu_device_get_properties(tb_context ctx, int32_t device,
                                    tb_device_properties *properties);

#define SLOT(gt, gf, slot, required, since, ret, params, names) .slot = emu_##gf##_##slot,
#define KIT_SLOT(gt, gf, slot, required, since, ret, params, names) .slot = tbk_##gf##_##slot,
static const tb_device_api k_device = {.struct_size = sizeof(tb_device_api),
                                       .count = emu_device_count,
                                       .get_properties = emu_device_get_properties,
                                       .synchronize = tbk_device_synchronize,
                                       .reset = tbk_device_reset};
static const tb_memory_api k_memory = {.struct_size = sizeof(tb_memory_api), TB_MEMORY_SLOTS(SLOT)};
static const tb_stream_api k_stream = {.struct_size = sizeof(tb_stream_api),
                                       TB_STREAM_SLOTS(KIT_SLOT)};
static const tb_event_api k_event = {.struct_size = sizeof(tb_event_api), TB_EVENT_SLOTS(KIT_SLOT)};
#undef SLOT
#undef KIT_SLOT

/* Graphs (ABI 2.3) are the kit's: emu's work is kit tasks, captured as they are.  In emu's
 * extension chain after the collectives (registry.c, collectives.c), before the per-storage
 * metadata (storage_meta.c). */
const tb_graphs_extension emu_graphs = {
    .base = {.struct_size = sizeof(tb_graphs_extension),
             .type = TB_EXTENSION_GRAPHS,
             .next = &emu_storage_meta.base},
    .capture_begin = tbk_graph_capture_begin,
    .capture_end = tbk_graph_capture_end,
    .graph_launch = tbk_graph_launch,
    .graph_destroy = tbk_graph_destroy,
};

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
      .last_error = tbk_last_error,
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
