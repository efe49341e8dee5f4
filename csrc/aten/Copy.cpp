// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "aten/Copy.h"

#include <ATen/EmptyTensor.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DeviceGuard.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "aten/KernelCall.h"
#include "profiler/Profiler.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Event.h"
#include "runtime/Graph.h"
#include "runtime/HostAllocator.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

bool on_device(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

// Both tensors hold their elements in the same order in one dense block of memory, so the
// copy is numel * itemsize bytes from data_ptr to data_ptr.
bool same_dense_layout(const at::Tensor& a, const at::Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() && a.strides() == b.strides() &&
         a.is_non_overlapping_and_dense();
}

size_t nbytes(const at::Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

// Range of storage elements [first, last) a strided view touches (strides are never negative).
std::pair<int64_t, int64_t> element_span(const at::Tensor& t) {
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); d++) last += (t.size(d) - 1) * t.stride(d);
  return {t.storage_offset(), last + 1};
}

// A pinned CPU tensor from the host caching allocator.
at::Tensor pinned_empty_strided(at::IntArrayRef sizes, at::IntArrayRef strides,
                                at::ScalarType dtype) {
  return at::detail::empty_strided_generic(sizes, strides, host_allocator(),
                                           c10::DispatchKeySet(c10::DispatchKey::CPU), dtype);
}

// Keeps the pinned block behind `host` from being reused until `stream` passes this point.
void protect_until_done(const at::Tensor& host, c10::Stream stream) {
  const c10::DataPtr& data = host.storage().data_ptr();
  host_allocator()->record_event(data.get(), data.get_context(), stream);
}

// Enqueues host -> device bytes from a pinned tensor and protects the block.
void h2d_from_pinned(void* dst, const at::Tensor& pinned, size_t bytes, c10::Stream stream) {
  profiler::Activity activity(profiler::Kind::kMemcpy, "Memcpy HtoD (Pinned -> Device)", stream);
  TB_VENDOR_CALL(memory, copy_h2d_async, vendor_stream(stream), dst, pinned.data_ptr(), bytes);
  activity.finish();
  protect_until_done(pinned, stream);
}

void wait_for_copy_into(c10::Stream stream, const c10::Storage& memory) {
  wait_for_copies_into(stream, {memory});
}

// Reads the bytes a device view spans into a pinned buffer and returns a CPU view of them
// with the device view's sizes and strides.  Waits for the current stream.
at::Tensor read_span(const at::Tensor& src) {
  auto [first, last] = element_span(src);
  int64_t count = last - first;
  at::Tensor buffer = pinned_empty_strided({count}, {1}, src.scalar_type());
  c10::Stream stream = current_stream(src.device().index());
  const char* base = static_cast<const char*>(src.storage().data()) + first * src.element_size();
  profiler::Activity activity(profiler::Kind::kMemcpy, "Memcpy DtoH (Device -> Pinned)", stream);
  TB_VENDOR_CALL(memory, copy_d2h_async, vendor_stream(stream), buffer.data_ptr(), base,
                 static_cast<size_t>(count) * src.element_size());
  activity.finish();
  wait_for_copy_into(stream, buffer.storage());
  return buffer.as_strided(src.sizes(), src.strides(), 0);
}

// The vendor's copy_ kernel (strided, converting dtypes, across devices), when it has one.
bool device_copy_kernel(const at::Tensor& dst, const at::Tensor& src) {
  const tb_kernel* kernel = find_kernel("copy_");
  return kernel != nullptr && KernelCall(kernel).tensor(dst).tensor(src).boolean(false).launch();
}

void copy_device_to_device(const at::Tensor& src, const at::Tensor& dst) {
  if (!same_dense_layout(src, dst)) {
    if (src.device() != dst.device() || !device_copy_kernel(dst, src)) {
      write_from_cpu(dst, read_to_cpu(src));
    }
    return;
  }
  c10::DeviceIndex src_device = src.device().index(), dst_device = dst.device().index();
  c10::Stream dst_stream = current_stream(dst_device);
  profiler::Activity activity(profiler::Kind::kMemcpy, "Memcpy DtoD (Device -> Device)",
                              dst_stream);
  if (src_device == dst_device) {
    TB_VENDOR_CALL(memory, copy_d2d_async, vendor_stream(dst_stream), dst_device, dst.data_ptr(),
                   src_device, src.const_data_ptr(), nbytes(src));
    activity.finish();
    return;
  }
  // Across devices: the copy runs on the destination's stream after the source's current
  // work, and the source's stream waits for the copy before it can reuse the source's memory.
  c10::Stream src_stream = current_stream(src_device);
  PooledEvent src_ready(src_device, false);
  record_event(src_ready.get(), src_stream);
  stream_wait_event(dst_stream, src_ready.get());
  TB_VENDOR_CALL(memory, copy_d2d_async, vendor_stream(dst_stream), dst_device, dst.data_ptr(),
                 src_device, src.const_data_ptr(), nbytes(src));
  activity.finish();
  PooledEvent copied(dst_device, false);
  record_event(copied.get(), dst_stream);
  stream_wait_event(src_stream, copied.get());
}

void copy_device_to_host(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  if (C10_UNLIKELY(graph::capturing_any())) {
    graph::check_capturable(src.device().index(), "a copy from the device to host memory");
  }
  if (!same_dense_layout(src, dst)) {
    // Rearrange on the device into dst's layout and dtype, then one dense copy.
    at::Tensor staged =
        at::empty_strided(dst.sizes(), dst.strides(), src.options().dtype(dst.scalar_type()));
    if (dst.is_non_overlapping_and_dense() && device_copy_kernel(staged, src)) {
      copy_device_to_host(staged, dst, non_blocking);
      return;
    }
    dst.copy_(read_to_cpu(src));
    return;
  }
  c10::Stream stream = current_stream(src.device().index());
  profiler::Activity activity(profiler::Kind::kMemcpy, "Memcpy DtoH (Device -> Host)", stream);
  TB_VENDOR_CALL(memory, copy_d2h_async, vendor_stream(stream), dst.data_ptr(),
                 src.const_data_ptr(), nbytes(src));
  activity.finish();
  // Pageable destinations are always waited for; pinned ones only when asked to block.  A
  // pinned block the copy still writes into carries an event: its tensor may be freed (and the
  // block handed out again) before the copy lands.
  if (non_blocking && is_pinned_pointer(dst.data_ptr())) {
    protect_until_done(dst, stream);
  } else {
    wait_for_copy_into(stream, dst.storage());
  }
}

// A copy with non_blocking=false is complete when it returns, as CUDA's is (its memcpy_and_sync):
// the stream is waited for.  A non_blocking copy from pinned memory is queued as it is; from
// pageable memory it is staged through a pinned block first, so the caller may reuse `src` at
// once.
void copy_host_to_device(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  if (C10_UNLIKELY(graph::capturing_any())) {
    graph::check_capturable(dst.device().index(), "a copy from host memory to the device");
  }
  c10::Stream stream = current_stream(dst.device().index());
  if (!same_dense_layout(src, dst)) {
    write_from_cpu(dst, src);
  } else if (non_blocking && is_pinned_pointer(src.storage().data())) {
    h2d_from_pinned(dst.data_ptr(), src, nbytes(src), stream);
  } else {
    at::Tensor staging =
        pinned_empty_strided({static_cast<int64_t>(nbytes(src))}, {1}, at::ScalarType::Byte);
    std::memcpy(staging.data_ptr(), src.const_data_ptr(), nbytes(src));
    h2d_from_pinned(dst.data_ptr(), staging, nbytes(src), stream);
  }
  if (!non_blocking) synchronize_stream(stream);
}

}  // namespace

void wait_for_copies_into(c10::Stream stream, c10::ArrayRef<c10::Storage> memory) {
  try {
    synchronize_stream(stream);
  } catch (...) {
    static std::mutex mutex;
    static auto* kept = new std::vector<c10::Storage>();  // never destroyed: see Copy.h
    std::lock_guard<std::mutex> lock(mutex);
    kept->insert(kept->end(), memory.begin(), memory.end());
    throw;
  }
}

at::Tensor read_to_cpu(const at::Tensor& src) {
  TORCH_INTERNAL_ASSERT(on_device(src));
  if (C10_UNLIKELY(graph::capturing_any())) {
    graph::check_capturable(src.device().index(), "a copy from the device to host memory");
  }
  if (src.numel() == 0) {
    return at::empty_strided(src.sizes(), src.strides(), src.options().device(at::kCPU));
  }
  return read_span(src);
}

void write_from_cpu(const at::Tensor& dst, const at::Tensor& values) {
  TORCH_INTERNAL_ASSERT(on_device(dst) && values.device().is_cpu());
  if (C10_UNLIKELY(graph::capturing_any())) {
    graph::check_capturable(dst.device().index(), "a copy from host memory to the device");
  }
  if (dst.numel() == 0) return;
  c10::Stream stream = current_stream(dst.device().index());
  if (dst.is_non_overlapping_and_dense()) {
    at::Tensor staging = pinned_empty_strided(dst.sizes(), dst.strides(), dst.scalar_type());
    staging.copy_(values);
    h2d_from_pinned(dst.data_ptr(), staging, nbytes(dst), stream);
    return;
  }
  // Scattered destination: read the span it covers, update it on the host, write it back.
  at::Tensor span = read_span(dst);
  span.copy_(values);
  auto [first, last] = element_span(dst);
  char* base = static_cast<char*>(dst.storage().mutable_data()) + first * dst.element_size();
  h2d_from_pinned(base, span, static_cast<size_t>(last - first) * dst.element_size(), stream);
}

at::Tensor copy_from(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  if (dst.numel() == 0 || src.is_same(dst)) return dst;
  if (src.dtype() == dst.dtype() && src.sizes() == dst.sizes() && src.strides() == dst.strides() &&
      at::get_overlap_status(src, dst) == at::MemOverlapStatus::Full) {
    return dst;  // the very same elements
  }
  if (on_device(src) && on_device(dst)) {
    copy_device_to_device(src.expand_as(dst), dst);
  } else if (on_device(src)) {
    TORCH_CHECK(dst.device().is_cpu(), "torch_backend: cannot copy from ", src.device(), " to ",
                dst.device());
    copy_device_to_host(src.expand_as(dst), dst, non_blocking);
  } else {
    TORCH_CHECK(src.device().is_cpu(), "torch_backend: cannot copy from ", src.device(), " to ",
                dst.device());
    copy_host_to_device(src.expand_as(dst), dst, non_blocking);
  }
  return dst;
}

}  // namespace torch_backend
