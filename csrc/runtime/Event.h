// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Vendor events, pooled per device and kind (timing or not): creating a vendor event can be
// costly, and the caching allocators record one on every cross-stream free, so events are
// recycled rather than destroyed.  An Event stays valid until the process exits.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <torch_backend/vendor.h>

namespace torch_backend {

struct Event {
  tb_event handle;
  c10::DeviceIndex device;
  bool timing;
};

// An event of `device` from the pool (created through the vendor when the pool is empty).
Event* acquire_event(c10::DeviceIndex device, bool timing);

// Returns `event` to its pool.  It may still be pending: re-recording is safe (waits already
// enqueued keep the record they saw).  Never throws.
void release_event(Event* event) noexcept;

// Records `event` on `stream`, which must belong to the event's device.
void record_event(Event* event, c10::Stream stream);

// Makes `stream` wait for `event`.
void stream_wait_event(c10::Stream stream, const Event* event);

// True when the event's recorded work has finished.
bool query_event(const Event* event);

// Blocks until the event's recorded work has finished.
void synchronize_event(const Event* event);

// Milliseconds between two recorded, completed timing events.
double elapsed_ms(const Event* start, const Event* end);

// RAII holder for a pooled event, for internal uses (allocators, cross-device copies).
class PooledEvent {
 public:
  PooledEvent(c10::DeviceIndex device, bool timing) : event_(acquire_event(device, timing)) {}
  PooledEvent(PooledEvent&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  PooledEvent& operator=(PooledEvent&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }
  PooledEvent(const PooledEvent&) = delete;
  PooledEvent& operator=(const PooledEvent&) = delete;
  ~PooledEvent() {
    if (event_ != nullptr) release_event(event_);
  }
  Event* get() const { return event_; }

 private:
  Event* event_;
};

}  // namespace torch_backend
