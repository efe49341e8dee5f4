// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Devices of the loaded vendor: count, index validation and the thread's current device.  The
// vendor keeps no current device (vendor.h passes indices explicitly); this file is where
// PyTorch's notion of one lives, one per thread, as in c10/cuda.
#pragma once

#include <c10/core/Device.h>

namespace torch_backend {

// Number of devices; 0 when the vendor cannot be loaded (never throws).
c10::DeviceIndex device_count() noexcept;

// Throws c10::IndexError naming the device type when `index` is not a valid device.
void check_device_index(c10::DeviceIndex index);

// The calling thread's current device index (initially 0).
c10::DeviceIndex current_device();

// Sets the calling thread's current device after validating it.
void set_device(c10::DeviceIndex index);

// Sets the current device and returns the previous one.
c10::DeviceIndex exchange_device(c10::DeviceIndex index);

// `index` itself, or the current device when it is -1.
c10::DeviceIndex resolve_device(c10::DeviceIndex index);

// c10::Device(PrivateUse1, index).
inline c10::Device make_device(c10::DeviceIndex index) {
  return c10::Device(c10::DeviceType::PrivateUse1, index);
}

}  // namespace torch_backend
