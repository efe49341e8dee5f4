// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "runtime/Device.h"

#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

// The current device is per thread, like CUDA's; a new thread starts on device 0.
thread_local c10::DeviceIndex t_current_device = 0;

}  // namespace

c10::DeviceIndex device_count() noexcept {
  try {
    return static_cast<c10::DeviceIndex>(Vendor::Get().device_count());
  } catch (...) {
    return 0;
  }
}

void check_device_index(c10::DeviceIndex index) {
  const Vendor& vendor = Vendor::Get();
  // A RuntimeError subclass, as CUDA's "invalid device ordinal" is.
  if (C10_UNLIKELY(index < 0 || index >= vendor.device_count())) {
    throw c10::AcceleratorError(
        {__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
        static_cast<int32_t>(TB_ERROR_INVALID_DEVICE),
        c10::str(vendor.device_type(), ": invalid device index ", static_cast<int>(index),
                 ": out of range, the vendor has ", vendor.device_count(), " device",
                 vendor.device_count() == 1 ? "" : "s",
                 vendor.device_count() > 0 ? c10::str(" (0 to ", vendor.device_count() - 1, ")")
                                           : std::string()));
  }
}

c10::DeviceIndex current_device() { return t_current_device; }

void set_device(c10::DeviceIndex index) {
  check_device_index(index);
  t_current_device = index;
}

c10::DeviceIndex exchange_device(c10::DeviceIndex index) {
  c10::DeviceIndex previous = t_current_device;
  if (index != previous) set_device(index);
  return previous;
}

c10::DeviceIndex resolve_device(c10::DeviceIndex index) {
  if (index == -1) return t_current_device;
  check_device_index(index);
  return index;
}

}  // namespace torch_backend
