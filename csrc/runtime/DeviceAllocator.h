// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The caching device allocator: what c10::GetAllocator(PrivateUse1) returns, and what
// torch.accelerator.memory_* and torch.<device>.memory_* read.  It follows c10/cuda's
// CUDACachingAllocator over the vendor's device_malloc / device_free / get_info:
//   - requests are rounded to 512 bytes; requests up to 1 MiB come from the small pool, whose
//     segments are 2 MiB; larger ones from the large pool, whose segments are 20 MiB below
//     10 MiB and the request rounded to 2 MiB above;
//   - a free block larger than the request is split, and a freed block merges with its free
//     neighbours in the segment; free blocks are looked up by (stream, size), best fit;
//   - a block freed on its allocation stream is reusable there at once; one used on other
//     streams (record_stream) returns to its pool once events recorded on them complete;
//   - on vendor out-of-memory, whole free segments go back to the vendor and the allocation is
//     retried, then torch.OutOfMemoryError names the request and the device's figures;
//   - state, locks and statistics are per device (c10's DeviceStats, as torch.cuda reports).
#pragma once

#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Storage.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace torch_backend {

// The allocator instance (registered for PrivateUse1 at load).
c10::DeviceAllocator* device_allocator();

// Marks the block behind `data_ptr` as used on `stream` (tensor.record_stream).
void record_stream(const c10::DataPtr& data_ptr, c10::Stream stream);

// Per-storage values (StorageMeta.h): marks the block `data_ptr` starts so that its free calls
// release_storage_meta.  False when `data_ptr` is not the start of one of this allocator's
// blocks (memory from elsewhere: from_blob, DLPack).
bool mark_storage_meta(const c10::DataPtr& data_ptr);

// The device whose allocation contains `ptr`, if any.
std::optional<c10::DeviceIndex> device_of_pointer(const void* ptr);

// The segment (one vendor allocation: its address and size) holding `ptr` on `device`, if
// this allocator holds one.
std::optional<std::pair<void*, size_t>> segment_of(c10::DeviceIndex device, const void* ptr);

// Grows or shrinks a device storage to `new_bytes`, keeping min(old, new) bytes (copied on
// the current stream).
void resize_storage_bytes(const c10::Storage& storage, size_t new_bytes);

// The blocks of every segment the allocator holds on `device`, in address order, 8 values
// each: segment address, segment bytes, stream id, large pool (0/1), block address, block
// bytes, requested bytes, state (0 free, 1 allocated, 2 awaiting events of other streams).
std::vector<int64_t> memory_snapshot(c10::DeviceIndex device);

// Limits the bytes the allocator may reserve on `device` to `fraction` (0..1) of the device's
// total memory, as torch.cuda.set_per_process_memory_fraction; 1 lifts the limit.
void set_memory_fraction(c10::DeviceIndex device, double fraction);

// The fraction set by set_memory_fraction (1 when none was).
double memory_fraction(c10::DeviceIndex device);

// Graph pools (CUDA's private pools): a graph retains its pool on `device` when its capture
// begins (the pool is created on first use, graphs passing the same id share it) and releases
// it when reset; allocations a capture makes on its stream come from it (Graph.h,
// graph::allocation_pool).  A pool no graph retains gives its free memory back.
void retain_graph_pool(c10::DeviceIndex device, c10::MempoolId_t id);
void release_graph_pool(c10::DeviceIndex device, c10::MempoolId_t id);
// Bytes of device memory graph pool `id` of `device` holds (0 when there is no such pool).
size_t graph_pool_reserved(c10::DeviceIndex device, c10::MempoolId_t id);

}  // namespace torch_backend
