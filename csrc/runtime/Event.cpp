// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "runtime/Event.h"

#include <mutex>
#include <vector>

#include "runtime/Device.h"
#include "runtime/Graph.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

// Free events of one device, by kind (timing or not), with their own lock: devices never
// contend.  Event objects are never freed.
struct alignas(64) EventPool {
  std::mutex mutex;
  std::vector<Event*> free[2];
};

// The pool of `device`, which the caller has validated.
EventPool& pool(c10::DeviceIndex device) {
  static EventPool* pools = [] {
    c10::DeviceIndex count = device_count();
    return new EventPool[count > 0 ? count : 1];
  }();
  return pools[device];
}

}  // namespace

Event* acquire_event(c10::DeviceIndex device, bool timing) {
  check_device_index(device);
  {
    EventPool& events = pool(device);
    std::lock_guard<std::mutex> lock(events.mutex);
    std::vector<Event*>& free = events.free[timing ? 1 : 0];
    if (!free.empty()) {
      Event* event = free.back();
      free.pop_back();
      return event;
    }
  }
  tb_event handle = nullptr;
  TB_VENDOR_CALL(event, create, device, timing ? TB_EVENT_FLAG_TIMING : 0u, &handle);
  return new Event{handle, device, timing};
}

void release_event(Event* event) noexcept {
  if (event == nullptr) return;
  try {
    EventPool& events = pool(event->device);
    std::lock_guard<std::mutex> lock(events.mutex);
    events.free[event->timing ? 1 : 0].push_back(event);
  } catch (...) {
    // Out of memory growing the pool: dropping the event leaks one vendor handle, nothing more.
  }
}

void record_event(Event* event, c10::Stream stream) {
  TORCH_CHECK(stream.device_index() == event->device, "torch_backend: cannot record an event of ",
              make_device(event->device), " on a stream of ", stream.device());
  TB_VENDOR_CALL(event, record, event->handle, vendor_stream(stream));
  if (C10_UNLIKELY(graph::capturing_any())) graph::note_event_record(event, stream);
}

void stream_wait_event(c10::Stream stream, const Event* event) {
  TB_VENDOR_CALL(stream, wait_event, vendor_stream(stream), event->handle);
  if (C10_UNLIKELY(graph::capturing_any())) graph::note_stream_wait(stream, event);
}

bool query_event(const Event* event) { return TB_VENDOR_QUERY(event, query, event->handle); }

void synchronize_event(const Event* event) { TB_VENDOR_CALL(event, synchronize, event->handle); }

double elapsed_ms(const Event* start, const Event* end) {
  const Vendor& vendor = Vendor::Get();
  TORCH_CHECK_NOT_IMPLEMENTED(vendor.table().event.elapsed_time != nullptr, vendor.device_type(),
                              ": the vendor does not support event timing");
  TORCH_CHECK(start->timing && end->timing, vendor.device_type(),
              ": elapsed time needs both events created with enable_timing=True");
  float ms = 0;
  TB_VENDOR_CALL(event, elapsed_time, start->handle, end->handle, &ms);
  return ms;
}

}  // namespace torch_backend
