// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Operators whose device behaviour ATen defines per backend outside any kernel a vendor
// writes, given here for PrivateUse1 the way c10 and ATen give them for CUDA.
//
// _has_compatible_shallow_copy_type -- keeping parameters' identity across Module.to(device).
//   nn.Module._apply moves a parameter in place (`param.data = moved`) only when
//   torch._has_compatible_shallow_copy_type(param, moved) holds; otherwise it replaces the
//   Parameter with a new one.  That unties shared parameters (GPT-2's lm_head and wte, BERT's
//   MLM decoder bias) so the model trains with the wrong gradients, leaves optimizers created
//   before the move holding the old tensors, and drops hooks on the parameters.  c10's
//   TensorImpl::has_compatible_shallow_copy_type lets tensors of its built-in dense backends
//   (CPU, CUDA, HIP, XPU, MPS, HPU, MTIA) take each other's data, but not PrivateUse1's (torch
//   2.13 and 2.14): a limitation worth fixing upstream.  The kernel below adds PrivateUse1 to
//   that list.  The dispatcher routes a call here only when one of the two tensors is a
//   PrivateUse1 tensor, so CPU and CUDA modules see no change.
//
// equal -- CUDA's composite: same sizes and `eq(...).all()`, so it runs on the vendor's
//   comparison and reduction kernels instead of copying both tensors to the CPU.
//
// native_group_norm -- CPU, CUDA, MPS and XPU have kernels of their own; every other backend
//   gets ATen's CompositeExplicitAutograd math_group_norm, which views the input as
//   (1, N * group, -1) and so raises "view size is not compatible with input tensor's size and
//   stride" for a channels-last input (torch 2.13 and 2.14), and takes the statistics with
//   var_mean, which no vendor has a kernel for.  The kernel below reshapes (a copy for a
//   channels-last input), takes the mean and the mean squared deviation in two passes in the
//   opmath type, applies the affine parameters as math_group_norm does, and gives the output
//   the input's memory format, as the CPU's kernel does.
//
// native_group_norm_backward -- CPU, CUDA and MPS have kernels of their own, every other backend
//   the CPU fallback (a diffusion UNet's or any GroupNorm CNN's training step: one per norm).
//   The kernel below is the CPU's formulas (GroupNormKernel.cpp: per-channel sums of dY * X and
//   dY, then per-group coefficients) in ATen operators, in the input's opmath type, so that
//   every vendor with elementwise and sum kernels runs it on the device.
//
// addr.out -- CPU and CUDA have kernels that refuse an out= tensor on another device; every
//   other backend gets ATen's CompositeExplicitAutograd math_addr_out, which computes on the
//   device and copies into whatever `out` is, a CPU tensor included.  The kernel below makes
//   CUDA's device checks first, then runs the same composite.
//
// floor_divide -- CPU, CUDA and MPS run div's floor kernel (div_floor_stub) under their own
//   registration, which leaves every other backend on the CPU fallback (HF generate()'s beam
//   search calls it per token).  The kernels below are that: div with rounding_mode="floor",
//   so floor_divide runs wherever the vendor has div.out_mode.
//
// roll -- CPU, CUDA and MPS have kernels of their own (the CPU's is narrow + cat), which leaves
//   every other backend on the CPU fallback (Swin's shifted windows roll twice per block).  The
//   kernel below is the CPU's algorithm: per rolled dimension, the two slices either side of
//   the shift concatenated in swapped order; without dims, over the flattened tensor.  It
//   runs wherever the vendor has cat.out.
//
// var_mean, std_mean -- CPU and CUDA have kernels of their own (a Welford pass), every other
//   backend the CPU fallback, on every vendor (torch.var_mean, std_mean; statistics in user
//   models).  The kernels below take the mean, then the sum of squared deviations (two passes,
//   in the opmath type) over (n - correction), on the vendor's mean and sum kernels.  Integer
//   and complex inputs keep the CPU fallback, and with it the CPU's errors and complex rules.
//
// _assert_async -- CUDA checks the value in a kernel and faults the device; the CPU checks it
//   at the call.  A vendor has no kernel that raises a message, so the device checks it as the
//   CPU does: one scalar read back (what the CPU fallback did, without counting as one).
//   torch 2.13's multinomial checks its probabilities with it.
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/addr_native.h>
#include <ATen/ops/all.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/div.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/is_nonzero.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/std_mean_ops.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/var_mean_ops.h>
#include <c10/core/DispatchKeySet.h>
#include <torch/library.h>

#include "aten/KernelCall.h"

namespace torch_backend {
namespace {

bool is_dense(c10::DispatchKeySet keys) {
  constexpr auto dense_backends = c10::DispatchKeySet(
      {c10::BackendComponent::CPUBit, c10::BackendComponent::CUDABit, c10::BackendComponent::HIPBit,
       c10::BackendComponent::XPUBit, c10::BackendComponent::MPSBit, c10::BackendComponent::HPUBit,
       c10::BackendComponent::MTIABit, c10::BackendComponent::PrivateUse1Bit});
  return keys.has_any(c10::DispatchKeySet(c10::DispatchKey::Dense)) && keys.has_any(dense_backends);
}

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set()) ||
         (is_dense(self.key_set()) && is_dense(from.key_set()));
}

bool equal(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device() == other.device(),
              "Cannot compare two tensors on different devices. Got: ", self.device(), " and ",
              other.device());
  if (!self.is_same_size(other)) return false;
  if (self.numel() == 0) return true;
  return at::eq(self, other).all().item<bool>();
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, int64_t N, int64_t C, int64_t HxW, int64_t group,
    double eps) {
  TORCH_CHECK(group > 0 && C % group == 0, "native_group_norm: the channels (", C,
              ") are not divisible into ", group, " groups");
  TORCH_CHECK(input.numel() == N * C * HxW, "native_group_norm: expected an input of ", N, " x ", C,
              " x ", HxW, " elements, got ", input.sizes());
  // The statistics in the opmath type, two passes (the mean, then the squared deviations'):
  // math_group_norm's var_mean has no kernel on any vendor.
  const at::ScalarType acc = at::toOpMathType(input.scalar_type());
  const at::Tensor x = input.to(acc).reshape({N, group, (C / group) * HxW});
  const at::Tensor mean = at::mean(x, {2}, true);
  const at::Tensor centered = x - mean;
  const at::Tensor rstd = at::rsqrt(at::mean(centered * centered, {2}, true) + eps);
  at::Tensor output = (centered * rstd).reshape(input.sizes()).to(input.scalar_type());
  std::vector<int64_t> affine(static_cast<size_t>(input.dim()), 1);
  affine[1] = C;
  const bool has_weight = weight.has_value() && weight->defined();
  const bool has_bias = bias.has_value() && bias->defined();
  if (has_weight && has_bias) {
    output = bias->view(affine).addcmul(output, weight->view(affine), 1);
  } else if (has_weight) {
    output = output.mul(weight->view(affine));
  } else if (has_bias) {
    output = output.add(bias->view(affine));
  }
  return {output.contiguous(input.suggest_memory_format()),
          mean.reshape({N, group}).to(input.scalar_type()),
          rstd.reshape({N, group}).to(input.scalar_type())};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_group_norm_backward(
    const at::Tensor& grad_out, const at::Tensor& input, const at::Tensor& mean,
    const at::Tensor& rstd, const std::optional<at::Tensor>& weight, int64_t N, int64_t C,
    int64_t HxW, int64_t group, std::array<bool, 3> output_mask) {
  TORCH_CHECK(group > 0 && C % group == 0, "native_group_norm_backward: the channels (", C,
              ") are not divisible into ", group, " groups");
  TORCH_CHECK(input.numel() == N * C * HxW && grad_out.sizes() == input.sizes(),
              "native_group_norm_backward: expected input and grad_out of ", N, " x ", C, " x ",
              HxW, " elements, got ", input.sizes(), " and ", grad_out.sizes());
  TORCH_CHECK(mean.numel() == N * group && rstd.numel() == N * group,
              "native_group_norm_backward: expected mean and rstd of ", N * group,
              " elements, got ", mean.numel(), " and ", rstd.numel());
  const bool has_weight = weight.has_value() && weight->defined();
  TORCH_CHECK(!has_weight || weight->numel() == C,
              "native_group_norm_backward: expected a weight of ", C, " elements, got ",
              has_weight ? weight->numel() : 0);
  const at::ScalarType acc = at::toOpMathType(input.scalar_type());
  const int64_t D = C / group;
  // [N, group, D, HxW]: X, dY; [N, group, 1]: mean, rstd; [1, group, D]: gamma
  const at::Tensor x = input.to(acc).reshape({N, group, D, HxW});
  const at::Tensor dy = grad_out.to(acc).reshape({N, group, D, HxW});
  const at::Tensor mu = mean.to(acc).reshape({N, group, 1});
  const at::Tensor rs = rstd.to(acc).reshape({N, group, 1});
  const at::Tensor gamma = has_weight ? weight->to(acc).reshape({1, group, D}) : at::Tensor();
  const at::Tensor ds = at::sum(dy * x, {3});  // per channel: sum of dY * X, [N, group, D]
  const at::Tensor db = at::sum(dy, {3});      // ... and of dY
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    const at::Tensor ds_g = at::sum(has_weight ? ds * gamma : ds, {2}, true);  // [N, group, 1]
    const at::Tensor db_g = at::sum(has_weight ? db * gamma : db, {2}, true);
    const double s = 1.0 / static_cast<double>(D * HxW);
    const at::Tensor c2 = (db_g * mu - ds_g) * rs * rs * rs * s;
    const at::Tensor c3 = -c2 * mu - db_g * rs * s;
    const at::Tensor c1 = has_weight ? rs * gamma : rs.expand({N, group, D});
    grad_input = (c1.unsqueeze(3) * dy + c2.unsqueeze(3) * x + c3.unsqueeze(3))
                     .reshape(input.sizes())
                     .to(input.scalar_type())
                     .contiguous(input.suggest_memory_format());
  }
  const at::ScalarType param = has_weight ? weight->scalar_type() : input.scalar_type();
  if (output_mask[1] && has_weight) {
    grad_weight = at::sum((ds - db * mu) * rs, {0}).reshape({C}).to(param);
  }
  if (output_mask[2]) grad_bias = at::sum(db, {0}).reshape({C}).to(param);
  return {grad_input, grad_weight, grad_bias};
}

at::Tensor& addr_out(const at::Tensor& self, const at::Tensor& vec1, const at::Tensor& vec2,
                     const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  const c10::Device device = device_of_arguments({&vec1, &vec2, &self, &out});
  const std::pair<const at::Tensor*, const char*> operands[] = {
      {&vec1, "vec1"}, {&vec2, "vec2"}, {&out, "out"}};
  for (const auto& [tensor, name] : operands) {
    if (tensor->device() != device)
      fail_device_mismatch(device, tensor->device(), name, "addr.out");
  }
  // self broadcasts like an operand of TensorIterator: a CPU number (0-d) is allowed.
  if (self.device() != device && !(self.device().is_cpu() && self.dim() == 0)) {
    fail_device_mismatch(device, self.device(), "self", "addr.out");
  }
  return at::native::math_addr_out(self, vec1, vec2, beta, alpha, out);
}

at::Tensor floor_divide(const at::Tensor& self, const at::Tensor& other) {
  return at::div(self, other, "floor");
}

at::Tensor& floor_divide_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return at::div_out(out, self, other, "floor");
}

at::Tensor& floor_divide_(at::Tensor& self, const at::Tensor& other) {
  return self.div_(other, "floor");
}

// One dimension rolled by `shift` (ATen's roll for one dimension, TensorTransformations.cpp).
at::Tensor roll_one(const at::Tensor& self, int64_t shift, int64_t dim) {
  dim = at::maybe_wrap_dim(dim, self.dim());
  const int64_t size = self.size(dim);
  if (size == 0) return self.clone(at::MemoryFormat::Preserve);
  int64_t start = (size - shift) % size;
  if (start < 0) start += size;
  return at::cat({self.narrow(dim, start, size - start), self.narrow(dim, 0, start)}, dim);
}

at::Tensor roll(const at::Tensor& self, c10::SymIntArrayRef sym_shifts, at::IntArrayRef dims) {
  const std::vector<int64_t> shifts = C10_AS_INTARRAYREF_SLOW(sym_shifts).vec();
  TORCH_CHECK(!shifts.empty(), "`shifts` required");
  if (self.numel() == 0) return self.clone(at::MemoryFormat::Preserve);
  if (dims.empty() && shifts.size() == 1) {
    return roll_one(self.contiguous().view(self.numel()), shifts[0], 0).view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(),
              "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:", dims.size());
  at::Tensor result = self;
  for (size_t i = 0; i < dims.size(); i++) result = roll_one(result, shifts[i], dims[i]);
  return result;
}

// var_mean's (variance, mean) of a floating self, or nothing for the CPU fallback to run.
std::optional<std::tuple<at::Tensor, at::Tensor>> variance_and_mean(
    const char* name, const at::Tensor& self, at::OptionalIntArrayRef dim,
    const std::optional<at::Scalar>& correction, bool keepdim) {
  if (!at::isFloatingType(self.scalar_type())) return std::nullopt;
  const double dof = correction.has_value() ? correction->toDouble() : 1.0;
  int64_t count = 1;  // the elements each result reduces
  if (!dim.has_value() || dim->empty()) {
    count = self.numel();
  } else {
    for (int64_t d : *dim) count *= self.size(at::maybe_wrap_dim(d, self.dim()));
  }
  if (static_cast<double>(count) - dof <= 0 && self.numel() > 0) {  // the CPU's warning
    TORCH_WARN_ONCE(name, "(): degrees of freedom is <= 0. Correction should be strictly less ",
                    "than the reduction factor (input numel divided by output numel).");
  }
  const at::ScalarType acc = at::toOpMathType(self.scalar_type());
  const at::Tensor x = self.to(acc);
  const at::Tensor mean = at::mean(x, dim, /*keepdim=*/true);
  const at::Tensor centered = x - mean;
  const at::Tensor variance =
      at::sum(centered * centered, dim, keepdim) / std::max(static_cast<double>(count) - dof, 0.0);
  return std::make_tuple(variance.to(self.scalar_type()),
                         mean.view(variance.sizes()).to(self.scalar_type()));
}

std::tuple<at::Tensor, at::Tensor> var_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<at::Scalar>& correction,
                                            bool keepdim) {
  auto result = variance_and_mean("var_mean", self, dim, correction, keepdim);
  if (result.has_value()) return *result;
  return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::var_mean_correction>::call(
      self, dim, correction, keepdim);
}

std::tuple<at::Tensor, at::Tensor> std_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<at::Scalar>& correction,
                                            bool keepdim) {
  auto result = variance_and_mean("std_mean", self, dim, correction, keepdim);
  if (result.has_value()) return {at::sqrt(std::get<0>(*result)), std::get<1>(*result)};
  return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::std_mean_correction>::call(
      self, dim, correction, keepdim);
}

void assert_async(const at::Tensor& self) {
  TORCH_CHECK(at::is_nonzero(self), "Expected Tensor with single nonzero value, but got zero");
}

void assert_async_msg(const at::Tensor& self, std::string_view message) {
  TORCH_CHECK(at::is_nonzero(self), message);
}

// The autograd key as well as the backend key: _has_compatible_shallow_copy_type is a
// CompositeImplicitAutograd operator, reached through the autograd key outside inference mode.
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", TORCH_FN(has_compatible_shallow_copy_type));
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", TORCH_FN(has_compatible_shallow_copy_type));
  m.impl("equal", TORCH_FN(equal));
  m.impl("native_group_norm", TORCH_FN(native_group_norm));
  m.impl("native_group_norm_backward", TORCH_FN(native_group_norm_backward));
  m.impl("addr.out", TORCH_FN(addr_out));
  m.impl("floor_divide", TORCH_FN(floor_divide));
  m.impl("floor_divide.out", TORCH_FN(floor_divide_out));
  m.impl("floor_divide_.Tensor", TORCH_FN(floor_divide_));
  m.impl("roll", TORCH_FN(roll));
  m.impl("var_mean.correction", TORCH_FN(var_mean));
  m.impl("std_mean.correction", TORCH_FN(std_mean));
  m.impl("_assert_async", TORCH_FN(assert_async));
  m.impl("_assert_async.msg", TORCH_FN(assert_async_msg));
}

}  // namespace
}  // namespace torch_backend
