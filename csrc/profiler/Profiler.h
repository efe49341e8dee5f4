// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The device timeline of torch.profiler.  While a profile that asks for the device's activity
// (ProfilerActivity.PrivateUse1) runs, the runtime times every kernel, copy, memset, collective
// and graph replay it enqueues with a pair of the vendor's timing events around the enqueue,
// and notes the CPU operator (Kineto correlation id) that launched it.  When the profile ends,
// each pair becomes a device activity on its stream's row, with device-side start and end
// times, linked to its operator (key_averages' device time, the trace's flow arrows); a
// launch activity on the CPU thread starts each arrow.  See docs/graphs.rst.
//
// Timed events rather than a new trace slot of the ABI: every vendor already has them (the
// conformance suite checks their timestamps), so every vendor gets a device timeline with no
// new code, and none of it costs anything while no profile runs (one relaxed atomic load per
// launch).  The price: two event records per launch while profiling, and a graph replay is one
// activity, not one per captured kernel.
#pragma once

#include <c10/core/Stream.h>

#include <atomic>
#include <cstdint>

namespace torch_backend {
struct Event;

namespace profiler {

extern std::atomic<bool> g_active;

// Whether a profile is recording the device's activity.
inline bool active() { return g_active.load(std::memory_order_relaxed); }

enum class Kind : uint8_t { kKernel, kMemcpy, kMemset, kCollective, kGraph };

// Times the work enqueued on `stream` between its construction and finish(): construct it
// before the vendor call that enqueues, call finish() once the call succeeded.  Records
// nothing when no profile runs, or when the stream captures a graph (a capture records no
// events).  `name` must outlive the profile (a static string or a kernel's name).
class Activity {
 public:
  Activity(Kind kind, const char* name, c10::Stream stream);
  ~Activity();
  Activity(const Activity&) = delete;
  Activity& operator=(const Activity&) = delete;

  void finish();

 private:
  Kind kind_;
  const char* name_;
  c10::Stream stream_;
  Event* start_ = nullptr;  // nullptr: not recording
  int64_t launch_ns_ = 0;
};

}  // namespace profiler
}  // namespace torch_backend
