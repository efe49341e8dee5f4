/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's device slots: properties (aclrtGetSocName, aclrtGetMemInfo), device-wide
 * synchronisation (aclrtSynchronizeDevice; refused while a stream of the device captures a
 * graph, graph.c) and reset.
 *
 * Reset.  The ABI's reset clears a fault and keeps allocations, streams and events valid;
 * aclrtResetDevice drops one reference of the device and releases all of that once the last
 * one goes (aclrtResetDevice.md).  The adapter therefore calls aclrtSetDevice first and
 * aclrtResetDevice after it, a balanced pair that never brings the count to zero (the calling
 * thread holds one reference from npu_activate), after waiting for the device's work; the
 * stand-in clears its fault on every aclrtResetDevice (standin.h).  Then the adapter forgets its
 * own record (error.c).  (On CANN, recovering a device from an AI Core exception may need more
 * than that -- aclrtResetDeviceForce, or a new process; the record is cleared all the same, and
 * the next call that meets the runtime's failure records it again.)
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <string.h>

#include "npu_runtime.h"

/* Free and total bytes of the current device: HBM, or DDR on devices without HBM. */
static tb_status mem_info(npu_context *ctx, int32_t device, size_t *free_bytes, size_t *total) {
  tb_status status =
      npu_check(ctx, device, aclrtGetMemInfo(ACL_HBM_MEM, free_bytes, total), "aclrtGetMemInfo");
  if (status == TB_OK && *total == 0) {
    /* aclrtGetMemInfo.md: memory the hardware lacks reports 0 bytes. */
    status =
        npu_check(ctx, device, aclrtGetMemInfo(ACL_DDR_MEM, free_bytes, total), "aclrtGetMemInfo");
  }
  return status;
}

tb_status npu_memory_get_info(tb_context ctx, int32_t device, size_t *free_bytes,
                              size_t *total_bytes) {
  tb_status status = npu_activate(ctx, device, "get_info");
  if (status != TB_OK) return status;
  if (free_bytes == NULL || total_bytes == NULL) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT, "npu: get_info: NULL output pointer");
  }
  size_t free_now = 0, total = 0;
  status = mem_info(ctx, device, &free_now, &total);
  if (status != TB_OK) return status;
  *free_bytes = free_now;
  *total_bytes = total;
  return TB_OK;
}

tb_status npu_device_get_properties(tb_context ctx, int32_t device,
                                    tb_device_properties *properties) {
  tb_status status = npu_activate(ctx, device, "get_properties");
  if (status != TB_OK) return status;
  if (properties == NULL || properties->struct_size < sizeof(size_t)) {
    return npu_fail(ctx, TB_ERROR_INVALID_ARGUMENT,
                    "npu: get_properties: properties is NULL or its struct_size is 0");
  }
  tb_device_properties mine;
  memset(&mine, 0, sizeof mine);
  const char *soc = aclrtGetSocName();
  if (soc == NULL || *soc == '\0') {
    npu_drop_acl_messages();
    soc = "Ascend NPU (aclrtGetSocName gave no name)";
  }
  snprintf(mine.name, sizeof mine.name, "%s", soc);
  size_t free_bytes = 0, total = 0;
  status = mem_info(ctx, device, &free_bytes, &total);
  if (status != TB_OK) return status;
  if (total == 0) {
    return npu_fail(ctx, TB_ERROR_INTERNAL,
                    "npu: get_properties: aclrtGetMemInfo reports no HBM and no DDR memory on "
                    "npu:%d",
                    (int)device);
  }
  mine.total_memory = total;
  /* compute_units and the architecture stay 0 (unknown): the adapter uses no device-capability
   * query (aclGetDeviceCapability is outside the AscendCL subset it is written against). */
  mine.dtypes = ((uint64_t)1 << TB_DTYPE_COUNT) - 1; /* memory is bytes: every element type */
  size_t size = properties->struct_size < sizeof mine ? properties->struct_size : sizeof mine;
  memcpy((char *)properties + sizeof(size_t), (const char *)&mine + sizeof(size_t),
         size - sizeof(size_t));
  return TB_OK;
}

tb_status npu_device_synchronize(tb_context ctx, int32_t device) {
  tb_status status = npu_check_device(ctx, device, "device synchronize");
  if (status == TB_OK) status = npu_capture_check_device(ctx, device, "device synchronize");
  if (status == TB_OK) status = npu_fault_check(device, "device synchronize");
  if (status == TB_OK) status = npu_activate(ctx, device, "device synchronize");
  if (status != TB_OK) return status;
  status = npu_check(ctx, device, aclrtSynchronizeDevice(), "aclrtSynchronizeDevice");
  if (status == TB_OK) {
    npu_streams_sweep(ctx, false);
    npu_graphs_sweep(ctx);
  }
  return status;
}

tb_status npu_device_reset(tb_context ctx, int32_t device) {
  tb_status status = npu_activate(ctx, device, "device reset");
  if (status != TB_OK) return status;
  /* Wait until no work of the device runs; its failure is the fault being cleared. */
  aclError err = aclrtSynchronizeDevice();
  if (err != ACL_SUCCESS) npu_drop_acl_messages();
  status = npu_check(ctx, device, aclrtSetDevice(device), "aclrtSetDevice");
  if (status != TB_OK) return status;
  status = npu_check(ctx, device, aclrtResetDevice(device), "aclrtResetDevice");
  if (status != TB_OK) return status;
  npu_fault_clear(device);
  return TB_OK;
}
