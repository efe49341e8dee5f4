// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// c10's device guard for PrivateUse1: what DeviceGuard, torch.Stream, torch.Event and
// torch.accelerator go through.  Every method maps onto runtime/ (devices, streams, events).
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "runtime/Device.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Event.h"
#include "runtime/Graph.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

using c10::Device;
using c10::DeviceIndex;
using c10::Stream;

Event* as_event(void* event) { return static_cast<Event*>(event); }

struct GuardImpl final : c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType static_type = c10::DeviceType::PrivateUse1;

  c10::DeviceType type() const override { return static_type; }

  // torch.accelerator.get_device_capability: every element type a device tensor holds and
  // computes with -- all of PyTorch's but the quantized ones (vendor kernels cover some, the
  // CPU fallback the rest; tb_device_properties::dtypes only says which are native).
  c10::DeviceCapability getDeviceCapability(Device device) const override {
    (void)resolve_device(device.index());  // an invalid index raises
    c10::DeviceCapability capability;      // every type
#define TB_NOT_QUANTIZED_(_, name)                                    \
  if (c10::isQIntType(c10::ScalarType::name)) {                       \
    capability.capability_data.supported_scalar_types.has_##name = 0; \
  }
    AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS(TB_NOT_QUANTIZED_)
#undef TB_NOT_QUANTIZED_
    return capability;
  }

  Device exchangeDevice(Device device) const override {
    return make_device(exchange_device(resolve_device(device.index())));
  }

  Device getDevice() const override { return make_device(current_device()); }

  void setDevice(Device device) const override {
    if (device.index() >= 0) set_device(device.index());
  }

  void uncheckedSetDevice(Device device) const noexcept override {
    try {
      if (device.index() >= 0) set_device(device.index());
    } catch (...) {
      // Restoring a device that was valid before cannot fail; nothing to report here.
    }
  }

  Stream getStream(Device device) const override { return current_stream(device.index()); }

  Stream getDefaultStream(Device device) const override { return default_stream(device.index()); }

  Stream getStreamFromGlobalPool(Device device, bool high_priority) const override {
    return stream_from_pool(device.index(), high_priority);
  }

  Stream getNewStream(Device device, int priority) const override {
    return stream_from_pool(device.index(), priority);
  }

  Stream exchangeStream(Stream stream) const override {
    Stream previous = current_stream(stream.device_index());
    set_current_stream(stream);
    return previous;
  }

  void destroyEvent(void* event, const DeviceIndex /*device_index*/) const noexcept override {
    release_event(as_event(event));
  }

  void record(void** event, const Stream& stream, const DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(),
                "torch_backend: event of device ", static_cast<int>(device_index),
                " cannot be recorded on a stream of device ",
                static_cast<int>(stream.device_index()));
    if (*event == nullptr) {
      *event = acquire_event(stream.device_index(), flag == c10::EventFlag::BACKEND_DEFAULT);
    }
    record_event(as_event(*event), stream);
  }

  void block(void* event, const Stream& stream) const override {
    if (event != nullptr) stream_wait_event(stream, as_event(event));
  }

  bool queryEvent(void* event) const override {
    return event == nullptr || query_event(as_event(event));
  }

  DeviceIndex deviceCount() const noexcept override { return device_count(); }

  bool queryStream(const Stream& stream) const override { return query_stream(stream); }

  void synchronizeStream(const Stream& stream) const override { synchronize_stream(stream); }

  void synchronizeEvent(void* event) const override {
    if (event != nullptr) synchronize_event(as_event(event));
  }

  void synchronizeDevice(const DeviceIndex device_index) const override {
    DeviceIndex device = resolve_device(device_index);
    if (C10_UNLIKELY(graph::capturing_any())) {
      graph::check_device_not_capturing(
          device, c10::str("synchronizing device ", static_cast<int>(device)));
    }
    TB_VENDOR_CALL(device, synchronize, device);
  }

  void recordDataPtrOnStream(const c10::DataPtr& data_ptr, const Stream& stream) const override {
    record_stream(data_ptr, stream);
  }

  double elapsedTime(void* start, void* end, const DeviceIndex /*device_index*/) const override {
    TORCH_CHECK(start != nullptr && end != nullptr,
                "torch_backend: both events must be recorded before measuring elapsed time");
    return elapsed_ms(as_event(start), as_event(end));
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

}  // namespace
}  // namespace torch_backend
