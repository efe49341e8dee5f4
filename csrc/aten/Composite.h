// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Operators composed from other operators on the device (Composite.cpp): some for every
// vendor, the others only where the vendor publishes no kernel of its own.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace torch_backend {

// Registers on `library` (aten, PrivateUse1) the composites of the operators whose kernel the
// vendor does not publish (`vendor_has` answers by kernel name), and returns the operators
// registered ("dot", "addmv.out").
std::vector<std::string> register_default_composites(
    torch::Library& library, const std::function<bool(const std::string&)>& vendor_has);

// The operators Composite.cpp registers for every vendor.
const std::vector<std::string>& composite_ops();

// What a call of convolution_overrideable / convolution_backward_overrideable that the vendor's
// kernel declines runs (codegen/ops.yaml's `declined:`): a transposed convolution as the
// vendor's own forward and backward convolutions, anything else on the CPU fallback.
at::Tensor convolution_declined(const at::Tensor& input, const at::Tensor& weight,
                                const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                                c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation,
                                bool transposed, c10::SymIntArrayRef output_padding,
                                c10::SymInt groups);
std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_declined(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation,
    bool transposed, c10::SymIntArrayRef output_padding, c10::SymInt groups,
    std::array<bool, 3> output_mask);

at::Tensor& index_declined(const at::Tensor& self,
                           const c10::List<std::optional<at::Tensor>>& indices, at::Tensor& out);
at::Tensor& index_put_declined(at::Tensor& self,
                               const c10::List<std::optional<at::Tensor>>& indices,
                               const at::Tensor& values, bool accumulate, bool unsafe);

}  // namespace torch_backend
