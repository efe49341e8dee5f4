/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The "acme" vendor: fake's defaults with its own identity and device description, the way a
 * port begins.  Replacing the rest happens one slot at a time.
 */
#include <stdio.h>
#include <string.h>
#include <torch_backend/fake.h>

const char *tbv_device_type(void) { return "acme"; }
const char *tbv_vendor_name(void) { return "ACME Accelerators"; }
const char *tbv_vendor_version(void) { return "0.1.0"; }

tb_status tbv_device_get_properties(int32_t device, tb_device_properties *properties) {
  int32_t count = 0;
  tb_status status = tbv_device_count(&count);
  if (status != TB_OK) return status;
  if (device < 0 || device >= count) {
    return tb_fake_set_error(TB_ERROR_INVALID_DEVICE, "acme: device index %d out of range [0, %d)",
                             (int)device, (int)count);
  }
  if (properties == NULL || properties->struct_size < TB_STRUCT_SIZE(tb_device_properties, name)) {
    return tb_fake_set_error(TB_ERROR_INVALID_ARGUMENT, "acme: properties struct too small");
  }
  snprintf(properties->name, sizeof properties->name, "ACME Rocket %d", (int)device);
  if (TB_STRUCT_HAS_FIELD(properties, tb_device_properties, total_memory)) {
    size_t free_bytes = 0, total_bytes = 0;
    status = tbv_memory_get_info(device, &free_bytes, &total_bytes);
    if (status != TB_OK) return status;
    properties->total_memory = total_bytes;
  }
  if (TB_STRUCT_HAS_FIELD(properties, tb_device_properties, compute_units)) {
    properties->compute_units = 128;
  }
  return TB_OK;
}
