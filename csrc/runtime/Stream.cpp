// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "runtime/Stream.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/Device.h"
#include "runtime/Graph.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

constexpr int kSlots = 1 + kMaxPriorityClasses * kStreamsPerPool;

// One device's streams.  Slots are created on first use under `mutex` and published through
// atomics, so the common path (an existing stream) takes no lock.
struct DeviceStreams {
  int least = 0;    // vendor priority of class 0
  int classes = 1;  // number of priority classes in use
  std::array<std::atomic<tb_stream>, kSlots> slots{};
  std::array<std::atomic<uint32_t>, kMaxPriorityClasses> next{};
  std::mutex mutex;
};

// Per-device state, created once for all devices the vendor reports; never freed (vendor
// streams live until the process exits, like CUDA's pools).
std::vector<std::unique_ptr<DeviceStreams>>& all_devices() {
  static std::vector<std::unique_ptr<DeviceStreams>>* devices = [] {
    auto* v = new std::vector<std::unique_ptr<DeviceStreams>>();
    const Vendor& vendor = Vendor::Get();
    for (int d = 0; d < vendor.device_count(); d++) {
      auto state = std::make_unique<DeviceStreams>();
      if (vendor.table().stream.priority_range != nullptr) {
        int32_t least = 0, greatest = 0;
        TB_VENDOR_CALL(stream, priority_range, d, &least, &greatest);
        state->least = least;
        state->classes = std::clamp(least - greatest + 1, 1, kMaxPriorityClasses);
      }
      v->push_back(std::move(state));
    }
    return v;
  }();
  return *devices;
}

DeviceStreams& device_streams(c10::DeviceIndex device) {
  check_device_index(device);
  // Handing out a pool stream is using the device, as creating a CUDA stream initialises CUDA:
  // refused in a child forked after the parent used it.
  Vendor::Use("stream pool");
  return *all_devices()[device];
}

// The calling thread's current stream id per device (default stream until set).
// A plain array (every c10::DeviceIndex fits) needs no per-thread constructor, so reading it
// is one TLS lookup: the allocator and kernel launches read it on every call.
thread_local std::array<c10::StreamId, std::numeric_limits<c10::DeviceIndex>::max() + 1>
    t_current{};

c10::StreamId& current_id(c10::DeviceIndex device) {
  return t_current[static_cast<size_t>(device)];
}

int class_of(c10::StreamId id) {
  return id == 0 ? 0 : static_cast<int>((id - 1) / kStreamsPerPool);
}

c10::Stream make_stream(c10::DeviceIndex device, c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE, make_device(device), id);
}

void check_stream(c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1,
              "torch_backend: expected a stream of device type '",
              c10::DeviceTypeName(c10::DeviceType::PrivateUse1, true), "', got ", stream);
  TORCH_CHECK(stream.id() >= 0 && stream.id() < kSlots, "torch_backend: ", stream,
              " is not a stream of this backend (unknown stream id ", stream.id(), ")");
}

}  // namespace

c10::Stream default_stream(c10::DeviceIndex device) {
  device = resolve_device(device);
  return make_stream(device, 0);
}

c10::Stream current_stream(c10::DeviceIndex device) {
  device = resolve_device(device);
  return make_stream(device, current_id(device));
}

void set_current_stream(c10::Stream stream) {
  check_stream(stream);
  check_device_index(stream.device_index());
  current_id(stream.device_index()) = stream.id();
}

c10::Stream stream_from_pool(c10::DeviceIndex device, int priority) {
  device = resolve_device(device);
  DeviceStreams& state = device_streams(device);
  // Clamp into [least - classes + 1, least]; class 0 is `least`.
  int greatest = state.least - (state.classes - 1);
  int clamped = std::clamp(priority, greatest, state.least);
  int cls = state.least - clamped;
  uint32_t index = state.next[cls].fetch_add(1, std::memory_order_relaxed) % kStreamsPerPool;
  return make_stream(device, 1 + cls * kStreamsPerPool + static_cast<c10::StreamId>(index));
}

c10::Stream stream_from_pool(c10::DeviceIndex device, bool high_priority) {
  device = resolve_device(device);
  const DeviceStreams& state = device_streams(device);
  return stream_from_pool(device, high_priority ? state.least - (state.classes - 1) : state.least);
}

tb_stream vendor_stream(c10::Stream stream) {
  check_stream(stream);
  DeviceStreams& state = device_streams(stream.device_index());
  std::atomic<tb_stream>& slot = state.slots[stream.id()];
  tb_stream handle = slot.load(std::memory_order_acquire);
  if (C10_LIKELY(handle != nullptr)) return handle;
  std::lock_guard<std::mutex> lock(state.mutex);
  handle = slot.load(std::memory_order_acquire);
  if (handle == nullptr) {
    int priority = state.least - class_of(stream.id());
    TB_VENDOR_CALL(stream, create, stream.device_index(), priority, &handle);
    slot.store(handle, std::memory_order_release);
  }
  return handle;
}

tb_stream current_vendor_stream(c10::DeviceIndex device) {
  c10::StreamId id = current_id(device);
  tb_stream handle = all_devices()[device]->slots[id].load(std::memory_order_acquire);
  if (C10_LIKELY(handle != nullptr)) return handle;
  return vendor_stream(make_stream(device, id));
}

c10::StreamId current_stream_id(c10::DeviceIndex device) { return current_id(device); }

int stream_priority(c10::Stream stream) {
  check_stream(stream);
  return device_streams(stream.device_index()).least - class_of(stream.id());
}

std::pair<int, int> stream_priority_range(c10::DeviceIndex device) {
  const DeviceStreams& state = device_streams(resolve_device(device));
  return {state.least, state.least - (state.classes - 1)};
}

void synchronize_stream(c10::Stream stream) {
  if (C10_UNLIKELY(graph::capturing_any())) {
    graph::check_not_capturing(stream, c10::str("synchronizing ", stream));
  }
  TB_VENDOR_CALL(stream, synchronize, vendor_stream(stream));
}

bool query_stream(c10::Stream stream) {
  if (C10_UNLIKELY(graph::capturing_any())) {
    graph::check_not_capturing(stream, c10::str("querying ", stream));
  }
  return TB_VENDOR_QUERY(stream, query, vendor_stream(stream));
}

void launch_host_func(c10::DeviceIndex device, tb_host_func fn, void* user_data) {
  c10::Stream stream = current_stream(device);
  const Vendor& vendor = Vendor::Use("stream.launch_host_func");
  TORCH_CHECK_NOT_IMPLEMENTED(vendor.table().stream.launch_host_func != nullptr,
                              vendor.device_type(),
                              ": the vendor cannot run host functions in stream order "
                              "(tb_stream_api::launch_host_func is NULL)");
  TB_VENDOR_CALL(stream, launch_host_func, vendor_stream(stream), fn, user_data);
}

bool has_host_funcs() { return Vendor::Get().table().stream.launch_host_func != nullptr; }

}  // namespace torch_backend

namespace {
// The device the calling thread's generated kernels belong to, as the compiled graph's wrapper
// last set it (torch_backend_set_launch_device); -1: the current device.
thread_local int t_launch_device = -1;
}  // namespace

// Called by a compiled graph's wrapper before the first generated kernel of each device: the
// kernels' device is the graph's, which need not be the current one (a graph on device 1
// called while device 0 is current).
extern "C" __attribute__((visibility("default"))) void torch_backend_set_launch_device(int device) {
  t_launch_device = device;
}

// The entry point of the C++ kernels torch.compile generates for a device with host access
// (torch_backend/compile.py): they find it through an environment variable and enqueue
// themselves on the current stream of their graph's device (torch_backend_set_launch_device).
// `fn` frees `user_data` when it has run unless `*kept` is set: this sets it, before the
// enqueue, while the stream captures a graph, whose replays call `fn` again; the graph then
// frees it with `release`.  Returns 0, or -1 with a message in `error`: then `fn` was not
// called and never will be (and `user_data` is the graph's if `*kept` is set).
extern "C" __attribute__((visibility("default"))) int torch_backend_launch_host_func(
    tb_host_func fn, void (*release)(void*), void* user_data, int* kept, char* error,
    size_t error_size) {
  try {
    const c10::DeviceIndex device = t_launch_device >= 0
                                        ? static_cast<c10::DeviceIndex>(t_launch_device)
                                        : torch_backend::current_device();
    if (torch_backend::graph::keep_payload(device, user_data, release)) *kept = 1;
    torch_backend::launch_host_func(device, fn, user_data);
    return 0;
  } catch (const std::exception& e) {
    if (error != nullptr && error_size > 0) std::snprintf(error, error_size, "%s", e.what());
    return -1;
  }
}
