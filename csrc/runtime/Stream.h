// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Streams, shaped like c10/cuda's CUDAStream: per device, a default stream and pools of
// vendor streams per priority class, created lazily and handed out round-robin; a current
// stream per device and thread.
//
// c10::StreamId layout: 0 is the device's default stream; any other id is
// 1 + priority_class * kStreamsPerPool + index.  Class 0 is the lowest priority (the default);
// higher classes map to the vendor's higher priorities (lower numbers, as in CUDA).
#pragma once

#include <c10/core/Stream.h>
#include <torch_backend/vendor.h>

#include <utility>

namespace torch_backend {

constexpr int kStreamsPerPool = 8;
constexpr int kMaxPriorityClasses = 4;

// The device's default stream.
c10::Stream default_stream(c10::DeviceIndex device);

// The calling thread's current stream on `device` (-1: the current device).
c10::Stream current_stream(c10::DeviceIndex device = -1);

// Makes `stream` the calling thread's current stream on its device.
void set_current_stream(c10::Stream stream);

// A stream from the pool of `device` for a torch-style priority (lower is higher priority;
// clamped to what the vendor supports).
c10::Stream stream_from_pool(c10::DeviceIndex device, int priority);

// A stream from the lowest-priority pool or from the highest-priority pool.
c10::Stream stream_from_pool(c10::DeviceIndex device, bool high_priority);

// The vendor handle behind `stream`, created on first use.
tb_stream vendor_stream(c10::Stream stream);

// The vendor handle of the calling thread's current stream on `device`, which the caller
// knows to be valid (it comes from a tensor): the kernel-launch fast path.
tb_stream current_vendor_stream(c10::DeviceIndex device);

// The calling thread's current stream id on `device`, which the caller knows to be valid: the
// caching allocator's fast path.
c10::StreamId current_stream_id(c10::DeviceIndex device);

// The torch-style priority of `stream` (the vendor's number: 0 = default, negative = higher).
int stream_priority(c10::Stream stream);

// {least, greatest} priorities `device` supports, CUDA convention (greatest <= least).
std::pair<int, int> stream_priority_range(c10::DeviceIndex device);

// Enqueues fn(user_data) on the calling thread's current stream of `device`
// (tb_stream_api::launch_host_func; throws for a vendor without it).
void launch_host_func(c10::DeviceIndex device, tb_host_func fn, void* user_data);

// Whether the vendor runs host functions in stream order itself (tb_stream_api::launch_host_func).
bool has_host_funcs();

// Blocks until `stream` is idle / reports whether it is.
void synchronize_stream(c10::Stream stream);
bool query_stream(c10::Stream stream);

}  // namespace torch_backend
