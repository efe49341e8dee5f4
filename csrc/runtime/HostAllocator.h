// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The caching pinned host allocator: at::CachingHostAllocatorImpl (the one CUDA and XPU use)
// over the vendor's host_malloc/host_free and our streams and events.  Vendors without
// host_malloc get ordinary aligned host memory, still cached and still stream-safe.
#pragma once

#include <ATen/core/CachingHostAllocator.h>

namespace torch_backend {

// The allocator instance (registered as PrivateUse1's host allocator).
at::HostAllocator* host_allocator();

// True when `ptr` lies inside memory from host_allocator().
bool is_pinned_pointer(const void* ptr);

}  // namespace torch_backend
