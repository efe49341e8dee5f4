// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The caching device allocator: what c10::GetAllocator(PrivateUse1) returns, and what
// torch.accelerator.memory_* reads.  Shaped after c10/cuda's CUDACachingAllocator, simplified:
//   - requests are rounded to size classes (512 B steps up to 1 MiB, then four classes per
//     power of two) and freed blocks are cached per (stream, size class) for reuse;
//   - a block used on other streams (record_stream) returns to the cache only after events
//     recorded on those streams have completed;
//   - on vendor out-of-memory, cached blocks are released and the allocation retried once,
//     then torch.OutOfMemoryError carries the vendor's message and the allocator's stats.
#pragma once

#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Storage.h>

#include <optional>

namespace torch_backend {

// The allocator instance (registered for PrivateUse1 at load).
c10::DeviceAllocator* device_allocator();

// Marks the block behind `data_ptr` as used on `stream` (tensor.record_stream).
void record_stream(const c10::DataPtr& data_ptr, c10::Stream stream);

// The device whose allocation contains `ptr`, if any.
std::optional<c10::DeviceIndex> device_of_pointer(const void* ptr);

// Grows or shrinks a device storage to `new_bytes`, keeping min(old, new) bytes (copied on
// the current stream).
void resize_storage_bytes(const c10::Storage& storage, size_t new_bytes);

}  // namespace torch_backend
