// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The minimal operator set PyTorch needs from a device (see PyTorch's guide to new
// accelerators): allocation, views, storage plumbing, copies, scalars, fills.  Everything is
// built on the caching allocator and the vendor's memory calls on the current stream; no
// vendor kernels are needed.  Every other operator goes to the CPU fallback (Fallback.cpp).
#include <ATen/EmptyTensor.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_conj.h>
#include <ATen/ops/_neg_view.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cstring>

#include "aten/Copy.h"
#include "aten/KernelCall.h"
#include "profiler/Profiler.h"
#include "runtime/Device.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

c10::DeviceIndex target_device(std::optional<c10::Device> device) {
  c10::DeviceIndex index = device.has_value() ? device->index() : -1;
  return resolve_device(index);
}

at::Tensor empty_memory_format(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory,
                               std::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided,
              "torch_backend: only strided tensors are supported, not ", *layout);
  TORCH_CHECK(!pin_memory.value_or(false),
              "torch_backend: pin_memory applies to CPU tensors, not device tensors");
  c10::DeviceGuard guard(make_device(target_device(device)));
  return at::detail::empty_generic(
      size, device_allocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      dtype.value_or(at::get_default_dtype_as_scalartype()), memory_format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride,
                         std::optional<at::ScalarType> dtype, std::optional<at::Layout> layout,
                         std::optional<c10::Device> device, std::optional<bool> pin_memory) {
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided,
              "torch_backend: only strided tensors are supported, not ", *layout);
  TORCH_CHECK(!pin_memory.value_or(false),
              "torch_backend: pin_memory applies to CPU tensors, not device tensors");
  c10::DeviceGuard guard(make_device(target_device(device)));
  return at::detail::empty_strided_generic(size, stride, device_allocator(),
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           dtype.value_or(at::get_default_dtype_as_scalartype()));
}

at::Tensor as_strided(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride,
                      std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

at::Tensor view(const at::Tensor& self, at::IntArrayRef size) {
  return at::native::view(self, size);
}

at::Tensor reshape_alias(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride) {
  return at::native::_reshape_alias(self, size, stride);
}

// The view operators ATen registers per backend (the rest are composites over as_strided):
// ATen's own device-independent implementations, so that they are views on the device too.
at::Tensor view_as_real(const at::Tensor& self) { return at::native::view_as_real(self); }

at::Tensor view_as_complex(const at::Tensor& self) { return at::native::view_as_complex(self); }

at::Tensor unfold(const at::Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  return at::native::unfold(self, dimension, size, step);
}

// Points `self` at `storage` with the given geometry, growing the storage if it is too small.
at::Tensor& set_storage(at::Tensor& self, c10::Storage storage, int64_t offset,
                        at::IntArrayRef size, at::IntArrayRef stride) {
  at::native::checkSetStorage(self, storage, offset, size, stride);
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_storage_offset(offset);
  if (stride.data() != nullptr) {
    impl->set_sizes_and_strides(size, stride);
  } else {
    impl->set_sizes_contiguous(size);
  }
  size_t needed =
      at::detail::computeStorageNbytes(impl->sizes(), impl->strides(), self.element_size(), offset);
  if (impl->numel() > 0 && needed > impl->storage().nbytes()) {
    resize_storage_bytes(impl->storage(), needed);
  }
  return self;
}

at::Tensor& set_source_storage_offset(at::Tensor& self, c10::Storage source, int64_t offset,
                                      at::IntArrayRef size, at::IntArrayRef stride) {
  return set_storage(self, std::move(source), offset, size, stride);
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  int64_t count = static_cast<int64_t>(source.nbytes()) / self.element_size();
  return set_storage(self, std::move(source), 0, {count}, {});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  if (self.is_same(source)) return self;
  return set_storage(self, source.storage(), source.storage_offset(), source.sizes(),
                     source.strides());
}

const at::Tensor& resize(const at::Tensor& self, at::IntArrayRef size,
                         std::optional<at::MemoryFormat> memory_format) {
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  if (impl->sizes() == size && !memory_format.has_value()) return self;
  impl->set_sizes_contiguous(size);
  if (memory_format.has_value()) impl->empty_tensor_restride(*memory_format);
  size_t needed = at::detail::computeStorageNbytes(impl->sizes(), impl->strides(),
                                                   self.element_size(), impl->storage_offset());
  if (impl->numel() > 0 && needed > impl->storage().nbytes()) {
    resize_storage_bytes(impl->storage(), needed);
  }
  return self;
}

// The stored values of `t`: a view with its conjugate and negative bits cleared.
at::Tensor stored_values(const at::Tensor& t) {
  at::Tensor plain = t.is_conj() ? at::_conj(t) : t;
  return plain.is_neg() ? at::_neg_view(plain) : plain;
}

// `t`'s values with the bits `like` carries applied physically (conj and neg are their own
// inverses): what must be stored under a view with those bits to show `t`.  CPU tensors only.
at::Tensor apply_bits(at::Tensor t, const at::Tensor& like) {
  if (like.is_conj()) t = t.conj_physical();
  if (like.is_neg()) t = t.neg();
  return t;
}

// Copies with conjugate / negative views on either side (registered as a fallthrough for the
// Conjugate and Negative keys: their generic fallback would materialise the view by cloning,
// which copies, which lands here again).  The bits are resolved on the CPU side of the copy;
// device-to-device copies of conjugate views go through the CPU.
at::Tensor copy_from_kernel(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  // The checks the CPU's copy_ makes (its TensorIterator's), with its words.
  if (!self.is_same(dst)) {
    at::assert_no_internal_overlap(dst);
    at::assert_no_partial_overlap(dst, self);
  }
  if (self.is_conj() == dst.is_conj() && self.is_neg() == dst.is_neg()) {
    return copy_from(self, dst, non_blocking);
  }
  if (self.device().is_cpu()) {  // host to device: store the source's values as dst's bits need
    at::Tensor values = apply_bits(self.resolve_conj().resolve_neg(), dst);
    copy_from(values, stored_values(dst), false);
  } else if (dst.device().is_cpu()) {  // device to host: copy what is stored, fix it up on the host
    at::Tensor plain = stored_values(dst);
    copy_from(stored_values(self), plain, false);
    if (self.is_conj() != dst.is_conj()) plain.conj_physical_();
    if (self.is_neg() != dst.is_neg()) plain.neg_();
  } else {
    at::Tensor host = at::empty(self.sizes(), self.options().device(at::kCPU));
    copy_from_kernel(self, host, false);
    copy_from_kernel(host, dst, false);
  }
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return copy_from_kernel(self, dst, false);
}

at::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "torch_backend: a tensor with ", self.numel(),
              " elements cannot be converted to a scalar");
  return read_to_cpu(self).item();
}

// Fills with one value: a vendor memset when every byte of the value is the same, else the
// vendor's fill_ kernel, else a staged copy.
at::Tensor& fill(at::Tensor& self, const at::Scalar& value) {
  if (self.numel() == 0) return self;
  if (const tb_kernel* kernel = find_kernel("fill_.Scalar");
      kernel != nullptr && !self.is_non_overlapping_and_dense() &&
      KernelCall(kernel).tensor(self).scalar(value).launch()) {
    return self;
  }
  at::Tensor element = at::empty({}, self.options().device(at::kCPU)).fill_(value);
  const auto* bytes = static_cast<const unsigned char*>(element.data_ptr());
  bool uniform = true;
  for (int64_t i = 1; i < self.element_size(); i++) uniform &= bytes[i] == bytes[0];
  if (uniform && self.is_non_overlapping_and_dense()) {
    c10::Stream stream = current_stream(self.device().index());
    profiler::Activity activity(profiler::Kind::kMemset, "Memset (Device)", stream);
    TB_VENDOR_CALL(memory, memset_async, vendor_stream(stream), self.data_ptr(),
                   static_cast<int>(bytes[0]),
                   static_cast<size_t>(self.numel()) * self.element_size());
    activity.finish();
    return self;
  }
  if (const tb_kernel* kernel = find_kernel("fill_.Scalar");
      kernel != nullptr && KernelCall(kernel).tensor(self).scalar(value).launch()) {
    return self;
  }
  write_from_cpu(self, element);
  return self;
}

at::Tensor& zero(at::Tensor& self) { return fill(self, 0); }

void record_stream_kernel(at::Tensor& self, c10::Stream stream) {
  record_stream(self.storage().data_ptr(), stream);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("as_strided", TORCH_FN(as_strided));
  m.impl("view", TORCH_FN(view));
  m.impl("_reshape_alias", TORCH_FN(reshape_alias));
  m.impl("view_as_real", TORCH_FN(view_as_real));
  m.impl("view_as_complex", TORCH_FN(view_as_complex));
  m.impl("unfold", TORCH_FN(unfold));
  m.impl("resize_", TORCH_FN(resize));
  m.impl("_copy_from", TORCH_FN(copy_from_kernel));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
  m.impl("set_.source_Tensor", TORCH_FN(set_source_tensor));
  m.impl("set_.source_Storage", TORCH_FN(set_source_storage));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(set_source_storage_offset));
  m.impl("fill_.Scalar", TORCH_FN(fill));
  m.impl("zero_", TORCH_FN(zero));
  m.impl("record_stream", TORCH_FN(record_stream_kernel));
}

// Copies handle conjugate and negative views themselves (copy_from_kernel).
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

}  // namespace
}  // namespace torch_backend
