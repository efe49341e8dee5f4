// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Moving tensor data between host and device with the vendor's copy calls, on the current
// stream.  Dense, layout-matching copies are single vendor copies; anything else (dtype
// conversion, differing strides) is staged through the host, where ATen's CPU copy does the
// conversion.  As on CUDA, a copy_ with non_blocking=false is complete when it returns (the
// stream is waited for); a non_blocking one is queued, and the pinned host block it reads or
// writes carries an event, so that it is not handed out again before the copy has run.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Storage.h>
#include <c10/core/Stream.h>
#include <c10/util/ArrayRef.h>

namespace torch_backend {

// ATen's _copy_from (src -> dst, at least one on the device); returns dst.
at::Tensor copy_from(const at::Tensor& src, const at::Tensor& dst, bool non_blocking);

// The values of device tensor `src` as a CPU tensor (waits for the current stream).
at::Tensor read_to_cpu(const at::Tensor& src);

// Waits for `stream`, whose queued copies write into `memory`: host memory that its owners may
// free as soon as this returns or throws.  A failed wait has no effect (vendor.h), so copies
// may still be pending when the error propagates; the memory is then kept until the process
// exits rather than freed (or handed out again by the host cache) under the vendor's feet.
void wait_for_copies_into(c10::Stream stream, c10::ArrayRef<c10::Storage> memory);

// Writes `values` (a CPU tensor broadcastable to dst, any dtype) into device tensor `dst`,
// whatever its strides.  Does not wait for the copy to complete.
void write_from_cpu(const at::Tensor& dst, const at::Tensor& values);

}  // namespace torch_backend
