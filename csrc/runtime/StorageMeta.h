// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Per-storage metadata (vendor.h, "Per-storage metadata", ABI 2.4, TB_EXTENSION_STORAGE_META):
// named integer values the vendor keeps for a storage (a storage format), set from Python or
// by torch.load, listed for torch.save, released when the storage's block is freed.
#pragma once

#include <c10/core/Storage.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace torch_backend {

// Whether the vendor has the extension (raises for one it has that is unusable).
bool has_storage_meta();

// Sets value `name` of `storage` (a device storage of the caching allocator).  Raises
// NotImplementedError when the vendor has no extension, and the vendor's error for a name or
// value it refuses.
void set_storage_meta(const c10::Storage& storage, const std::string& name, int64_t value);

// The values of `storage`, in the vendor's order; empty without the extension.
std::vector<std::pair<std::string, int64_t>> storage_meta(const c10::Storage& storage);

// The block at `data` of `device`, which was given values, was freed (DeviceAllocator.cpp).
// Never throws: a failure is logged.
void release_storage_meta(c10::DeviceIndex device, void* data) noexcept;

}  // namespace torch_backend
