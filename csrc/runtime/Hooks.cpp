// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// PrivateUse1's hooks: what ATen asks of the device beyond the guard (generators, pinned
// memory, lazy initialisation, pointer queries, storage resize).
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include "runtime/Device.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Generator.h"
#include "runtime/HostAllocator.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

struct Hooks final : at::PrivateUse1HooksInterface {
  void init() const override { Vendor::Use("init"); }

  bool isBuilt() const override { return true; }

  bool isAvailable() const override { return device_count() > 0; }

  const at::Generator& getDefaultGenerator(c10::DeviceIndex device) const override {
    return default_generator(device);
  }

  at::Generator getNewGenerator(c10::DeviceIndex device) const override {
    return new_generator(device);
  }

  at::Device getDeviceFromPtr(void* data) const override {
    std::optional<c10::DeviceIndex> device = device_of_pointer(data);
    TORCH_CHECK(device.has_value(), Vendor::Get().device_type(), ": pointer ", data,
                " was not allocated by this backend's device allocator");
    return make_device(*device);
  }

  bool isPinnedPtr(const void* data) const override { return is_pinned_pointer(data); }

  at::Allocator* getPinnedMemoryAllocator() const override { return host_allocator(); }

  bool hasPrimaryContext(c10::DeviceIndex device) const override {
    return Vendor::IsInUse() && device >= 0 && device < device_count();
  }

  c10::DeviceIndex deviceCount() const override { return device_count(); }

  void setCurrentDevice(c10::DeviceIndex device) const override { set_device(device); }

  c10::DeviceIndex getCurrentDevice() const override { return current_device(); }

  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    return exchange_device(device);
  }

  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override {
    return exchange_device(device);
  }

  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t new_bytes) const override {
    resize_storage_bytes(storage, new_bytes);
  }
};

const bool g_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new Hooks());
  return true;
}();

}  // namespace
}  // namespace torch_backend
