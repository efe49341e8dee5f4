// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Moving tensor data between host and device with the vendor's copy calls, on the current
// stream.  Dense, layout-matching copies are single vendor copies; anything else (dtype
// conversion, differing strides) is staged through the host, where ATen's CPU copy does the
// conversion.  Host buffers handed to asynchronous copies come from the pinned caching
// allocator and are event-protected, so no call here waits for a host-to-device copy.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_backend {

// ATen's _copy_from (src -> dst, at least one on the device); returns dst.
at::Tensor copy_from(const at::Tensor& src, const at::Tensor& dst, bool non_blocking);

// The values of device tensor `src` as a CPU tensor (waits for the current stream).
at::Tensor read_to_cpu(const at::Tensor& src);

// Writes `values` (a CPU tensor broadcastable to dst, any dtype) into device tensor `dst`,
// whatever its strides.  Does not wait for the copy to complete.
void write_from_cpu(const at::Tensor& dst, const at::Tensor& values);

}  // namespace torch_backend
