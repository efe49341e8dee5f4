// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Output metadata for the few generated operators whose Meta kernel describes other outputs
// than ATen's CPU kernel returns.  The wrappers take output shapes from the Meta kernel; the
// CPU is what the fallback and users compare against, so where the two disagree an ops.yaml
// entry names one of these functions (`meta:`) and its wrapper calls it instead of the Meta
// kernel, with meta copies of the operator's arguments.
#pragma once

#include <ATen/ExpandUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/convolution_backward_overrideable_ops.h>
#include <ATen/ops/convolution_overrideable_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/native_batch_norm_backward_ops.h>
#include <c10/core/DispatchKeySet.h>

#include <array>
#include <optional>
#include <tuple>

namespace torch_backend::meta_overrides {

// native_batch_norm: the Meta kernel, a Python decomposition, gives CUDA's outputs (save_mean and
// save_invstd are the running statistics in evaluation mode, float for reduced-precision
// inputs) and fails where the CPU kernel does not (one value per channel in training).  ATen's
// CPU kernel (batch_norm_cpu): the output like the input in its suggested memory format;
// save_mean and save_invstd [C], empty in evaluation, float when a float16 or bfloat16 input
// comes with float parameters (the first one given decides), else of the input's dtype.
inline std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var, bool training, double /*momentum*/,
    double /*eps*/) {
  at::ScalarType dtype = input.scalar_type();
  if (at::isReducedFloatingType(dtype)) {
    for (const auto* parameter : {&weight, &bias, &running_mean, &running_var}) {
      if (parameter->has_value() && (*parameter)->defined()) {
        if ((*parameter)->scalar_type() == at::kFloat) dtype = at::kFloat;
        break;
      }
    }
  }
  const int64_t channels = input.size(1);
  const at::TensorOptions options = input.options().dtype(dtype);
  return {at::empty_like(input, input.suggest_memory_format()),
          at::empty({training ? channels : 0}, options),
          at::empty({training ? channels : 0}, options)};
}

// native_batch_norm_backward: the Meta kernel gives every output; ATen's CPU kernel leaves the
// ones output_mask does not ask for undefined.
inline std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& running_mean, const std::optional<at::Tensor>& running_var,
    const std::optional<at::Tensor>& save_mean, const std::optional<at::Tensor>& save_invstd,
    bool train, double eps, std::array<bool, 3> output_mask) {
  auto outputs = at::_ops::native_batch_norm_backward::redispatch(
      c10::DispatchKeySet(c10::DispatchKey::Meta), grad_out, input, weight, running_mean,
      running_var, save_mean, save_invstd, train, eps, output_mask);
  if (!output_mask[0]) std::get<0>(outputs) = at::Tensor();
  if (!output_mask[1]) std::get<1>(outputs) = at::Tensor();
  if (!output_mask[2]) std::get<2>(outputs) = at::Tensor();
  return outputs;
}

// mse_loss_backward: the Meta kernel's gradient is like the input (channels_last for a
// channels_last input); ATen's CPU and CUDA kernels (Loss.cpp) make it contiguous.
inline at::Tensor mse_loss_backward(const at::Tensor& grad_output, const at::Tensor& input,
                                    const at::Tensor& /*target*/, int64_t /*reduction*/) {
  return at::empty(at::infer_size(grad_output.sizes(), input.sizes()), input.options());
}

// The memory format ATen's CPU and CUDA convolutions compute in (thnn_conv_use_channels_last,
// mkldnn_conv_use_channels_last, cudnn_conv_suggest_memory_format): channels_last (3-d for
// 5-d tensors) when the input or the weight suggests it, else contiguous.
inline at::MemoryFormat convolution_memory_format(const at::Tensor& input,
                                                  const at::Tensor& weight) {
  const at::MemoryFormat channels_last = input.dim() == 4   ? at::MemoryFormat::ChannelsLast
                                         : input.dim() == 5 ? at::MemoryFormat::ChannelsLast3d
                                                            : at::MemoryFormat::Contiguous;
  if (channels_last != at::MemoryFormat::Contiguous &&
      (input.suggest_memory_format() == channels_last ||
       weight.suggest_memory_format() == channels_last)) {
    return channels_last;
  }
  return at::MemoryFormat::Contiguous;
}

// convolution_overrideable: the Meta kernel's output is contiguous; the CPU's and CUDA's is in
// convolution_memory_format, so a channels_last network stays channels_last.
inline at::Tensor convolution_overrideable(const at::Tensor& input, const at::Tensor& weight,
                                           const std::optional<at::Tensor>& bias,
                                           c10::SymIntArrayRef stride, c10::SymIntArrayRef padding,
                                           c10::SymIntArrayRef dilation, bool transposed,
                                           c10::SymIntArrayRef output_padding, c10::SymInt groups) {
  at::Tensor out = at::_ops::convolution_overrideable::redispatch(
      c10::DispatchKeySet(c10::DispatchKey::Meta), input, weight, bias, stride, padding, dilation,
      transposed, output_padding, std::move(groups));
  return out.contiguous(convolution_memory_format(input, weight));
}

// convolution_backward_overrideable: the input's and the weight's gradients in the forward's
// memory format, as ATen's CPU and CUDA backward kernels give them.
inline std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_overrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation,
    bool transposed, c10::SymIntArrayRef output_padding, c10::SymInt groups,
    std::array<bool, 3> output_mask) {
  auto [grad_input, grad_weight, grad_bias] =
      at::_ops::convolution_backward_overrideable::redispatch(
          c10::DispatchKeySet(c10::DispatchKey::Meta), grad_output, input, weight, stride, padding,
          dilation, transposed, output_padding, std::move(groups), output_mask);
  const at::MemoryFormat format = convolution_memory_format(input, weight);
  if (grad_input.defined()) grad_input = grad_input.contiguous(format);
  if (grad_weight.defined()) grad_weight = grad_weight.contiguous(format);
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace torch_backend::meta_overrides
