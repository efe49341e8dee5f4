// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Graphs: torch.accelerator.Graph for the device, over the vendor's TB_EXTENSION_GRAPHS
// (vendor.h, ABI 2.3), shaped like c10/cuda's CUDAGraph.  A capture routes the allocations of
// its stream to the graph's private pool (DeviceAllocator.h), records the generators its random
// kernels draw from so that each replay draws new numbers, and refuses, before the vendor sees
// them, the operations a graph cannot hold: a CPU fallback, a blocking copy, a synchronize.
//
// The checks below cost one atomic load while no capture is under way anywhere.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/Allocator.h>
#include <c10/core/Stream.h>

#include <atomic>
#include <optional>
#include <string>

namespace torch_backend {

class PhiloxGenerator;
struct Event;

namespace graph {

extern std::atomic<int> g_active_captures;

// Whether any capture is under way in the process.
inline bool capturing_any() { return g_active_captures.load(std::memory_order_acquire) != 0; }

// The graph pool an allocation of `bytes` on `device` by stream `stream` comes from: the pool
// of the capture `stream` runs, or nullopt (the general pools).  Throws, invalidating the
// capture, for an allocation on another stream of a device under a 'global' capture: its
// memory would come from outside the graph's pool.
std::optional<c10::MempoolId_t> allocation_pool(c10::DeviceIndex device, c10::StreamId stream,
                                                size_t bytes);

// Throws, invalidating the capture, when `what` (an operation that cannot be captured: "a CPU
// fallback of aten::nonzero", "a blocking copy") would run on a capturing stream, or, as the
// capture mode says, anywhere on its device ('global') or on the capturing thread
// ('thread_local').  `device` -1: the current device.
void check_capturable(c10::DeviceIndex device, const std::string& what);

// Throws, invalidating the capture, when `what` would wait for `stream` while it captures.
void check_not_capturing(c10::Stream stream, const std::string& what);

// Throws, invalidating every capture of it, when `what` would wait for all of `device`.
void check_device_not_capturing(c10::DeviceIndex device, const std::string& what);

// For a random kernel about to be enqueued on the current stream of `device` with
// `increment` counter values of `generator` (whose mutex the caller holds): while that stream
// captures, registers the generator with the graph, sets `seed` and `offset` to the key and
// the counter relative to the graph's start, and returns the device address of the generator
// state the kernel reads at each replay (tb_rng_key::device_state), and in `state` (when given)
// the int64 tensor {seed, offset} that holds it.  nullptr otherwise: the caller draws from the
// generator as usual.
const uint64_t* capture_philox(c10::DeviceIndex device, PhiloxGenerator* generator,
                               uint64_t increment, uint64_t& seed, uint64_t& offset,
                               at::Tensor* state = nullptr);

// Records that the capturing current stream of `device` enqueued operator `name` (for
// debug_dump); does nothing while that stream does not capture.
void note_captured_op(c10::DeviceIndex device, const char* name);

// Multi-stream capture, as CUDA's (the vendor keeps the same rule, vendor.h ABI 2.6): an event
// recorded on a capturing stream belongs to its capture, and a stream that waits for it joins
// the capture -- its allocations come from the graph's pool and the checks above treat it as
// capturing -- until the capture ends.  Called after the vendor accepted the record or wait,
// only while a capture is under way (capturing_any()).
void note_event_record(const Event* event, c10::Stream stream);
void note_stream_wait(c10::Stream stream, const Event* event);

// For a host function about to be enqueued on the current stream of `device` (a generated
// kernel on a device with host access): while that stream captures, the capture takes
// `payload`, which each replay passes to the function again, and `release`s it once the graph
// is gone and its replays have run; returns true.  false otherwise: the function owns it.
bool keep_payload(c10::DeviceIndex device, void* payload, void (*release)(void*));

// Whether `stream` captures a graph.
bool is_capturing(c10::Stream stream);

// Whether the calling thread's current stream of the current device captures a graph.
bool is_current_stream_capturing();

// A fresh graph pool id for users to share among graphs (torch.cuda.graph_pool_handle): {0, n},
// where the pools graphs make for themselves are {n, 0}.
c10::MempoolId_t new_pool_handle();

// Registers the device's graph implementation with PyTorch's GraphImplRegistry under the
// device's name (call once the PrivateUse1 backend has its name).
void register_graph_impl();

}  // namespace graph
}  // namespace torch_backend
