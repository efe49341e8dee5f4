// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Random operators that take no generator argument but draw from the device's default
// generator.  Through the CPU fallback they would draw from the CPU generator instead and
// ignore torch.<device>.manual_seed; here they are composed from operators that take an
// explicit generator (which the fallback maps onto the device generator).
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include <tuple>

namespace torch_backend {
namespace {

std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p,
                                                  std::optional<bool> train) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  at::TensorOptions mask_options = input.options().dtype(at::kBool);
  if (input.numel() == 0 || !train.value_or(true) || p == 0) {
    return {input.clone(), at::ones_like(input, mask_options)};
  }
  if (p == 1) return {at::zeros_like(input), at::zeros_like(input, mask_options)};
  at::Tensor mask = at::empty_like(input, mask_options);
  mask.bernoulli_(1 - p, std::nullopt);
  return {input.mul(mask).mul(1.0 / (1.0 - p)), mask};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("native_dropout", TORCH_FN(native_dropout)); }

}  // namespace
}  // namespace torch_backend
