// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Quantized tensors on the device (QuantizedPrivateUse1), as QuantizedCUDA has them: a
// QTensorImpl whose storage is device memory holding the integer representation, whose
// quantizer (scale and zero point, per tensor or per channel) is host metadata.
//
// - Factories, metadata, views and copies are ATen's own device-generic implementations,
//   registered for the device's key; copies move the integer representation through the
//   device's copies (a dense view of the quantized storage) and carry the quantizer along.
// - quantize_per_tensor and dequantize (per-tensor affine, 8- and 32-bit) run the vendor's
//   kernels when it publishes them (vendor.h, "Quantized tensors"; emu does).
// - The rest of the arithmetic -- those two without a kernel, quantize_per_channel (the dense
//   key's CPU fallback, aten/Fallback.cpp), every other operator on quantized device tensors
//   (quantized::add, equal, fill_, ...: a boxed fallback for the quantized key here) -- runs
//   on the CPU's quantizer, its results copied to the device, counted and governed like every
//   other CPU fallback (TORCH_BACKEND_FALLBACK).
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/quantized/AffineQuantizer.h>
#include <ATen/ops/_empty_affine_quantized.h>
#include <ATen/ops/_empty_affine_quantized_native.h>
#include <ATen/ops/_empty_per_channel_affine_quantized_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/clone_native.h>
#include <ATen/ops/dequantize_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/empty_quantized_native.h>
#include <ATen/ops/q_per_channel_axis_native.h>
#include <ATen/ops/q_per_channel_scales_native.h>
#include <ATen/ops/q_per_channel_zero_points_native.h>
#include <ATen/ops/q_scale_native.h>
#include <ATen/ops/q_zero_point_native.h>
#include <ATen/ops/qscheme_native.h>
#include <ATen/ops/quantize_per_channel.h>
#include <ATen/ops/quantize_per_tensor.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/quantized/Quantizer.h>
#include <torch/library.h>

#include "aten/Fallback.h"
#include "aten/KernelCall.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

using at::Tensor;

bool on_device(const Tensor& t) {
  return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1;
}

// The integer representation of `q` in place: a dense tensor of q's underlying type (int8,
// uint8, int32) over q's storage, with q's geometry.  Writes through it change q.
Tensor int_repr_view(const Tensor& q) {
  const c10::DispatchKey key = on_device(q) ? c10::DispatchKey::PrivateUse1 : c10::DispatchKey::CPU;
  Tensor view = at::detail::make_tensor<c10::TensorImpl>(
      c10::Storage(q.storage()), c10::DispatchKeySet(key),
      c10::scalarTypeToTypeMeta(c10::toUnderlying(q.scalar_type())));
  view.unsafeGetTensorImpl()->set_sizes_and_strides(q.sizes(), q.strides(), q.storage_offset());
  return view;
}

void quantized_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);

bool quantized_8_or_32(at::ScalarType t) {
  return t == at::kQInt8 || t == at::kQUInt8 || t == at::kQInt32;
}

// Runs `name`'s boxed CPU fallback on `arguments` and returns its one result.
Tensor through_fallback(const char* name, const char* overload, std::vector<c10::IValue> stack,
                        bool quantized_key) {
  const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  if (quantized_key) {
    quantized_fallback(op, &stack);
  } else {
    cpu_fallback_boxed(op, &stack);
  }
  return stack.back().toTensor();
}

// aten::quantize_per_tensor: the vendor's kernel (vendor.h, "Quantized tensors") for float32
// values and 8- or 32-bit integers, else the CPU's quantizer through the fallback.
Tensor quantize_on_device(const Tensor& self, double scale, int64_t zero_point,
                          at::ScalarType dtype) {
  const tb_kernel* kernel = find_kernel("quantize_per_tensor");
  const at::MemoryFormat format = self.suggest_memory_format();
  if (kernel != nullptr && self.scalar_type() == at::kFloat && quantized_8_or_32(dtype) &&
      scale > 0) {
    Tensor q = at::_empty_affine_quantized(self.sizes(), self.options().dtype(dtype), scale,
                                           zero_point, format);
    KernelCall call(kernel, kernel_counter("quantize_per_tensor"));
    call.tensor(self, "self").real(scale).integer(zero_point).tensor(int_repr_view(q), "out");
    if (call.launch()) return q;
  }
  // The CPU's result comes over contiguous (a quantized tensor's copy to another device keeps
  // no strides): laid out here as the CPU laid it out, by self's suggested memory format.
  Tensor q =
      through_fallback("aten::quantize_per_tensor", "", {self, scale, zero_point, dtype}, false);
  return q.is_contiguous(format) ? q : q.contiguous(format);
}

Tensor quantize_on_device_tensor_qparams(const Tensor& self, const Tensor& scale,
                                         const Tensor& zero_point, at::ScalarType dtype) {
  return quantize_on_device(self, scale.item().toDouble(), zero_point.item().toLong(), dtype);
}

// aten::dequantize.self of a quantized device tensor: the vendor's kernel for per-tensor
// affine ones, else the CPU's through the quantized fallback.
Tensor dequantize_on_device(const Tensor& self) {
  const tb_kernel* kernel = find_kernel("dequantize.self");
  if (kernel != nullptr && self.qscheme() == at::kPerTensorAffine &&
      quantized_8_or_32(self.scalar_type())) {
    Tensor out = at::empty(
        self.sizes(), self.options().dtype(at::kFloat).memory_format(self.suggest_memory_format()));
    KernelCall call(kernel, kernel_counter("dequantize.self"));
    call.tensor(int_repr_view(self), "self").real(self.q_scale()).integer(self.q_zero_point());
    call.tensor(out, "out");
    if (call.launch()) return out;
  }
  return through_fallback("aten::dequantize", "self", {self}, true);
}

Tensor int_repr(const Tensor& self) {
  return int_repr_view(self).clone(self.suggest_memory_format());
}

// aten::_copy_from for quantized tensors (the device's or a device/CPU pair): ATen's copy_
// rules (the quantizer travels with the values; a float source is quantized with the
// destination's quantizer; a quantized source never lands in a float tensor), the integer
// representation through the device's own copies.
Tensor copy_from(const Tensor& self, const Tensor& dst, bool non_blocking) {
  TORCH_CHECK(dst.is_quantized(),
              "Copying from quantized Tensor to non-quantized Tensor is not allowed, please use "
              "dequantize to get a float Tensor from a quantized Tensor");
  Tensor source = self;
  if (!self.is_quantized()) {
    // A float source, quantized with the destination's parameters on the CPU.
    const Tensor values = self.to(at::kCPU, at::kFloat).expand(dst.sizes());
    switch (dst.qscheme()) {
      case at::kPerTensorAffine:
        source = at::quantize_per_tensor(values.contiguous(), dst.q_scale(), dst.q_zero_point(),
                                         dst.scalar_type());
        break;
      case at::kPerChannelAffine:
      case at::kPerChannelAffineFloatQParams:
        source = at::quantize_per_channel(values.contiguous(), dst.q_per_channel_scales().cpu(),
                                          dst.q_per_channel_zero_points().cpu(),
                                          dst.q_per_channel_axis(), dst.scalar_type());
        break;
      default:
        TORCH_CHECK(false, Vendor::Get().device_type(), ": copying a float tensor into a ",
                    dst.qscheme(), " quantized tensor is not supported");
    }
  } else {
    TORCH_CHECK(dst.qscheme() == self.qscheme(), "Quantized Copy only works with same qscheme");
    TORCH_CHECK(dst.scalar_type() == self.scalar_type(), "Quantized Copy only works with the same ",
                "dtype, got ", self.scalar_type(), " into ", dst.scalar_type());
    at::set_quantizer_(dst, self.quantizer());
  }
  int_repr_view(dst).copy_(int_repr_view(source), non_blocking);
  return dst;
}

// The boxed fallback for the quantized key: quantized (and dense) device arguments to the CPU,
// the operator there, tensor results back to the device of the first device argument, written
// arguments copied back.
void quantized_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  static constexpr CpuRoute route{
      [](const Tensor& t) { return t.cpu(); },
      [](const Tensor& target, const Tensor& host) { target.copy_(host); },
      [](const Tensor& t, c10::Device device) { return t.to(device); },
  };
  run_through_cpu(op, stack, route);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("quantize_per_tensor", TORCH_FN(quantize_on_device));
  m.impl("quantize_per_tensor.tensor_qparams", TORCH_FN(quantize_on_device_tensor_qparams));
  m.impl("dequantize.self", TORCH_FN(at::native::dequantize_cpu_or_cuda));
}

TORCH_LIBRARY_IMPL(aten, QuantizedPrivateUse1, m) {
  m.impl("_empty_affine_quantized", TORCH_FN(at::native::empty_affine_quantized));
  m.impl("_empty_per_channel_affine_quantized",
         TORCH_FN(at::native::empty_per_channel_affine_quantized));
  m.impl("empty_quantized", TORCH_FN(at::native::empty_quantized));
  m.impl("empty.memory_format", TORCH_FN(at::native::empty_unknown_quantized));
  m.impl("empty_like", TORCH_FN(at::native::empty_like_quantized));
  m.impl("q_scale", TORCH_FN(at::native::q_scale_quant));
  m.impl("q_zero_point", TORCH_FN(at::native::q_zero_point_quant));
  m.impl("q_per_channel_scales", TORCH_FN(at::native::q_per_channel_scales));
  m.impl("q_per_channel_zero_points", TORCH_FN(at::native::q_per_channel_zero_points));
  m.impl("q_per_channel_axis", TORCH_FN(at::native::q_per_channel_axis));
  m.impl("qscheme", TORCH_FN(at::native::qscheme_quant));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_qtensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(at::native::set_storage_quantized_));
  m.impl("clone", TORCH_FN(at::native::quantized_clone));
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("int_repr", TORCH_FN(int_repr));
  m.impl("dequantize.self", TORCH_FN(dequantize_on_device));
  // Structured operators whose default kernel for the quantized keys (ATen's
  // CompositeExplicitAutogradNonFunctional one, QuantizedCUDA's too) builds a float result:
  // the quantized CPU kernel instead, through the fallback.
  m.impl("cat", torch::CppFunction::makeFromBoxedFunction<&quantized_fallback>());
}

TORCH_LIBRARY_IMPL(_, QuantizedPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&quantized_fallback>());
}

}  // namespace
}  // namespace torch_backend
