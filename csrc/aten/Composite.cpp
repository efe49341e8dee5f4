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
//
// The operators above are registered for every vendor.  Those below (register_default_composites)
// only where the vendor publishes no kernel of its own: operators ATen gives CPU, CUDA and MPS
// kernels only, made here of operators every vendor has -- dot, vdot and addmv (mv) on the
// vendor's GEMM, trace, glu, elu, log_sigmoid, smooth_l1_loss, huber_loss,
// binary_cross_entropy, var, std, nan_to_num, flip, index_fill_ and index_copy (scatters), the
// reflection and replication padding modes -- with their backwards -- nonzero, masked_select
// and masked_scatter_ (outputs sized by the data: one count read back), prod over every element
// (the vendor's prod over a dimension of the flattened tensor), unique (a sort), im2col and
// col2im (nn.Unfold, nn.Fold), searchsorted and bucketize, linear and bicubic upsampling, adaptive
// max pooling with equal windows (max_pool2d), linspace, randperm, prelu, xlogy, bernoulli_ with a
// tensor of probabilities and linalg_cross.
//
// index.Tensor_out and _index_put_impl_ where the vendor's kernel declines a call with a
// boolean mask or an index on the CPU (opencl's and npu's kernels take neither): ATen's
// expansion of each mask into the positions it selects, on the device, and the call again.
// Each makes the CPU's checks with the CPU's words (the padding modes run ATen's meta
// function); integer and complex inputs keep the CPU fallback and with it the CPU's errors.
#include <ATen/Dispatch.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/OpMathType.h>
#include <ATen/TensorOperators.h>
#include <ATen/WrapDimUtils.h>
#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/core/Reduction.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/BucketizationUtils.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/native/im2col_shape_check.h>
#include <ATen/ops/_index_put_impl_ops.h>
#include <ATen/ops/_prelu_kernel_backward_ops.h>
#include <ATen/ops/_prelu_kernel_ops.h>
#include <ATen/ops/_unique2_ops.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/adaptive_max_pool2d_backward_ops.h>
#include <ATen/ops/adaptive_max_pool2d_ops.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/addr_native.h>
#include <ATen/ops/all.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/bernoulli_ops.h>
#include <ATen/ops/binary_cross_entropy_backward_ops.h>
#include <ATen/ops/binary_cross_entropy_ops.h>
#include <ATen/ops/bucketize_ops.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/clamp_max.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/col2im_ops.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/convolution_backward_overrideable_ops.h>
#include <ATen/ops/convolution_overrideable_ops.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/div.h>
#include <ATen/ops/dot_ops.h>
#include <ATen/ops/elu_backward_ops.h>
#include <ATen/ops/elu_ops.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/expm1.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/glu_backward_ops.h>
#include <ATen/ops/glu_ops.h>
#include <ATen/ops/huber_loss_backward_ops.h>
#include <ATen/ops/huber_loss_ops.h>
#include <ATen/ops/im2col_ops.h>
#include <ATen/ops/index_add.h>
#include <ATen/ops/index_copy_ops.h>
#include <ATen/ops/index_fill_ops.h>
#include <ATen/ops/index_ops.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/is_nonzero.h>
#include <ATen/ops/isinf.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/linalg_cross_ops.h>
#include <ATen/ops/linspace_ops.h>
#include <ATen/ops/log.h>
#include <ATen/ops/log1p.h>
#include <ATen/ops/log_sigmoid_backward_ops.h>
#include <ATen/ops/log_sigmoid_forward_ops.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/logical_not.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/masked_scatter_ops.h>
#include <ATen/ops/masked_select_ops.h>
#include <ATen/ops/max_pool2d_with_indices.h>
#include <ATen/ops/max_pool2d_with_indices_backward.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/nan_to_num_ops.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/nonzero_ops.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/prod.h>
#include <ATen/ops/randperm_ops.h>
#include <ATen/ops/reflection_pad1d_backward_ops.h>
#include <ATen/ops/reflection_pad1d_ops.h>
#include <ATen/ops/reflection_pad2d_backward_ops.h>
#include <ATen/ops/reflection_pad2d_ops.h>
#include <ATen/ops/reflection_pad3d_backward_ops.h>
#include <ATen/ops/reflection_pad3d_ops.h>
#include <ATen/ops/remainder.h>
#include <ATen/ops/replication_pad1d_backward_ops.h>
#include <ATen/ops/replication_pad1d_ops.h>
#include <ATen/ops/replication_pad2d_backward_ops.h>
#include <ATen/ops/replication_pad2d_ops.h>
#include <ATen/ops/replication_pad3d_backward_ops.h>
#include <ATen/ops/replication_pad3d_ops.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/roll.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/rsub.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/scatter.h>
#include <ATen/ops/scatter_add.h>
#include <ATen/ops/searchsorted_ops.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/smooth_l1_loss_backward_ops.h>
#include <ATen/ops/smooth_l1_loss_ops.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/std_mean_ops.h>
#include <ATen/ops/std_ops.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/upsample_bicubic2d_backward_ops.h>
#include <ATen/ops/upsample_bicubic2d_ops.h>
#include <ATen/ops/upsample_bilinear2d_backward_ops.h>
#include <ATen/ops/upsample_bilinear2d_ops.h>
#include <ATen/ops/upsample_linear1d_backward_ops.h>
#include <ATen/ops/upsample_linear1d_ops.h>
#include <ATen/ops/var_mean_ops.h>
#include <ATen/ops/var_ops.h>
#include <ATen/ops/vdot_ops.h>
#include <ATen/ops/where.h>
#include <ATen/ops/xlogy_ops.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <c10/core/DispatchKeySet.h>
#include <torch/library.h>

#include <bitset>
#include <limits>
#include <optional>

#include "aten/Composite.h"
#include "aten/KernelCall.h"
#include "aten/MetaOverrides.h"
#include "aten/Schemas.h"
#include "runtime/Graph.h"

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

// ---- Composites for operators the vendor publishes no kernel for ----

// Whether a call of a composite below runs here: floating inputs.  Others keep the CPU
// fallback, and with it the CPU's errors ("elu_cpu" not implemented for 'Long') and its
// integer and complex rules.
bool floating(std::initializer_list<const at::Tensor*> tensors) {
  for (const at::Tensor* t : tensors) {
    if (t->defined() && !at::isFloatingType(t->scalar_type())) return false;
  }
  return true;
}

// CUDA's check that the tensors of a call share its device.
void check_devices(std::string_view method,
                   std::initializer_list<std::pair<const at::Tensor*, const char*>> tensors) {
  std::optional<c10::Device> device;
  for (const auto& [tensor, name] : tensors) {
    if (!tensor->defined()) continue;
    if (!device.has_value()) {
      device = tensor->device();
    } else if (tensor->device() != *device) {
      fail_device_mismatch(*device, tensor->device(), name, method);
    }
  }
}

// `result` into an out= argument, as a structured kernel's out variant gives it: resized (with
// ATen's warning for a non-empty out of another shape) and cast where the cast is allowed.
at::Tensor& assign_out(at::Tensor& out, const at::Tensor& result) {
  TORCH_CHECK(at::canCast(result.scalar_type(), out.scalar_type()), "result type ",
              result.scalar_type(), " can't be cast to the desired output type ",
              out.scalar_type());
  check_devices("out=", {{&result, "result"}, {&out, "out"}});
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

// dot, vdot -- CPU, CUDA and MPS have kernels; dot.out and vdot.out are ATen composites that
// call them.  A product of a row and a column on the vendor's GEMM (one launch).
void check_dot(const at::Tensor& self, const at::Tensor& other, std::string_view method) {
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(),
              "D and ", other.dim(), "D tensors");
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), method,
              " : expected both vectors to have same dtype, but found ", self.scalar_type(),
              " and ", other.scalar_type());
  TORCH_CHECK(self.numel() == other.numel(), "inconsistent tensor size, expected tensor [",
              self.numel(), "] and src [", other.numel(),
              "] to have the same number of elements, but got ", self.numel(), " and ",
              other.numel(), " elements respectively");
  check_devices(method, {{&self, "self"}, {&other, "tensor"}});
}

at::Tensor dot_product(const at::Tensor& self, const at::Tensor& other) {
  check_dot(self, other, "dot");
  if (!floating({&self})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::dot>::call(self, other);
  }
  if (self.numel() == 0) return at::zeros({}, self.options());
  return at::mm(self.unsqueeze(0), other.unsqueeze(1)).reshape({});
}

at::Tensor vdot_product(const at::Tensor& self, const at::Tensor& other) {
  check_dot(self, other, "vdot");
  if (!floating({&self})) {  // complex conjugates self: the CPU's rules
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::vdot>::call(self, other);
  }
  return dot_product(self, other);
}

// addmv (mv, matmul of a matrix and a vector) -- CPU, CUDA and MPS have kernels.  The product
// as addmm's of the matrix and the vector as a column, written into `out` viewed as one: a
// launch of the vendor's GEMM, which reads self (broadcast) itself.
void check_addmv(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec) {
  TORCH_CHECK(mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1,
              "vector + matrix @ vector expected, got ", self.dim(), ", ", mat.dim(), ", ",
              vec.dim());
  TORCH_CHECK(mat.size(1) == vec.size(0) && (mat.size(0) == self.numel() || self.numel() == 1),
              "size mismatch, got input (", self.dim() == 0 ? 1 : self.size(0), "), mat (",
              mat.size(0), "x", mat.size(1), "), vec (", vec.size(0), ")");
  TORCH_CHECK(self.scalar_type() == mat.scalar_type() && mat.scalar_type() == vec.scalar_type(),
              "addmv input tensors must have the same dtype, but got ", self.scalar_type(), ", ",
              mat.scalar_type(), ", and ", vec.scalar_type());
  check_devices("addmv", {{&self, "self"}, {&mat, "mat"}, {&vec, "vec"}});
}

at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                      const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  check_addmv(self, mat, vec);
  check_devices("addmv.out", {{&mat, "mat"}, {&out, "out"}});
  TORCH_CHECK(out.scalar_type() == mat.scalar_type(), "Expected out tensor to have dtype ",
              mat.scalar_type(), ", but got ", out.scalar_type(), " instead");
  const int64_t n = mat.size(0);
  if (!out.is_same(self)) at::native::resize_output(out, {n});
  const at::Tensor column_vec = vec.unsqueeze(1);
  if (beta.toComplexDouble() != 0.0 && out.is_alias_of(self)) {
    // addmv_ (self is out): no kernel takes an output that is also its input
    out.copy_(at::addmm(self.expand({n}).unsqueeze(1), mat, column_vec, beta, alpha).squeeze(1));
    return out;
  }
  // With beta 0 self is never read (mv's self is its uninitialised result): a 0-d stand-in.
  const at::Tensor addend =
      beta.toComplexDouble() == 0.0 ? at::empty({}, out.options()) : self.expand({n}).unsqueeze(1);
  at::Tensor column = out.unsqueeze(1);
  at::addmm_out(column, addend, mat, column_vec, beta, alpha);
  return out;
}

at::Tensor addmv(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  check_addmv(self, mat, vec);
  at::Tensor out = at::empty({mat.size(0)}, mat.options());
  return addmv_out(self, mat, vec, beta, alpha, out);
}

at::Tensor& addmv_(at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  check_addmv(self, mat, vec);
  TORCH_CHECK(self.dim() == 1 && self.size(0) == mat.size(0), "addmv_: self of shape ",
              self.sizes(), " cannot hold the result of shape [", mat.size(0), "]");
  return addmv_out(self, mat, vec, beta, alpha, self);
}

// trace -- CPU, CUDA and MPS have kernels: the sum of the diagonal (a view), with sum's
// integer-to-int64 rule, as the CPU's.
at::Tensor trace(const at::Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return at::sum(self.diagonal());
}

// glu -- CPU, CUDA and MPS have kernels: the first half times the sigmoid of the second.
int64_t glu_dim(const at::Tensor& self, int64_t dim) {
  TORCH_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(self.size(d) % 2 == 0, "Halving dimension must be even, but dimension ", d,
              " is size ", self.size(d));
  return d;
}

at::Tensor& glu_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  if (!floating({&self})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::glu_out>::call(self, dim,
                                                                                      out);
  }
  const int64_t d = glu_dim(self, dim);
  const int64_t half = self.size(d) / 2;
  return at::mul_out(out, self.narrow(d, 0, half), at::sigmoid(self.narrow(d, half, half)));
}

at::Tensor glu(const at::Tensor& self, int64_t dim) {
  if (!floating({&self})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::glu>::call(self, dim);
  }
  const int64_t d = glu_dim(self, dim);
  const int64_t half = self.size(d) / 2;
  return at::mul(self.narrow(d, 0, half), at::sigmoid(self.narrow(d, half, half)));
}

// d/da = sigmoid(b) * grad; d/db = a * sigmoid(b) * (1 - sigmoid(b)) * grad (the CPU's).
at::Tensor& glu_backward_out(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim,
                             at::Tensor& grad_input) {
  if (!floating({&self, &grad_output})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed,
                                        at::_ops::glu_backward_grad_input>::call(grad_output, self,
                                                                                 dim, grad_input);
  }
  const int64_t d = glu_dim(self, dim);
  const int64_t half = self.size(d) / 2;
  const at::Tensor a = self.narrow(d, 0, half);
  const at::Tensor gate = at::sigmoid(self.narrow(d, half, half));
  const at::Tensor grad_a = gate * grad_output;
  const at::Tensor grad_b = grad_a * a * (1 - gate);
  return at::cat_out(grad_input, {grad_a, grad_b}, d);
}

at::Tensor glu_backward(const at::Tensor& grad_output, const at::Tensor& self, int64_t dim) {
  at::Tensor grad_input = at::empty({0}, self.options());
  return glu_backward_out(grad_output, self, dim, grad_input);
}

// log_sigmoid -- CPU, CUDA and MPS have kernels (binary_cross_entropy_with_logits, LogSigmoid):
// min(x, 0) - log1p(exp(-|x|)), which neither overflows nor loses the small values, and the
// backward grad * sigmoid(-x).  The buffer is empty, as CUDA's: the backward does not read it.
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_out(const at::Tensor& self,
                                                             at::Tensor& output,
                                                             at::Tensor& buffer) {
  if (!floating({&self})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed,
                                        at::_ops::log_sigmoid_forward_output>::call(self, output,
                                                                                    buffer);
  }
  at::sub_out(output, at::clamp_max(self, 0), at::log1p(at::exp(-at::abs(self))));
  at::native::resize_output(buffer, {0});
  return {output, buffer};
}

std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& self) {
  if (!floating({&self})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::log_sigmoid_forward>::call(
        self);
  }
  return {at::clamp_max(self, 0) - at::log1p(at::exp(-at::abs(self))),
          at::empty({0}, self.options())};
}

at::Tensor& log_sigmoid_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                     const at::Tensor& buffer, at::Tensor& grad_input) {
  if (!floating({&self, &grad_output})) {
    return at::native::call_fallback_fn<
        &cpu_fallback_boxed, at::_ops::log_sigmoid_backward_grad_input>::call(grad_output, self,
                                                                              buffer, grad_input);
  }
  return at::mul_out(grad_input, grad_output, at::sigmoid(-self));
}

at::Tensor log_sigmoid_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                const at::Tensor& buffer) {
  if (!floating({&self, &grad_output})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::log_sigmoid_backward>::call(
        grad_output, self, buffer);
  }
  return grad_output * at::sigmoid(-self);
}

// elu (and selu, celu) -- CPU, CUDA and MPS have kernels: the CPU's
// x <= 0 ? expm1(x * input_scale) * alpha * scale : x * scale, and its backward.
// The two sides of elu: where it is negative, its value there, and its value elsewhere.
std::tuple<at::Tensor, at::Tensor, at::Tensor> elu_sides(const at::Tensor& self,
                                                         const at::Scalar& alpha,
                                                         const at::Scalar& scale,
                                                         const at::Scalar& input_scale) {
  const double negcoef = alpha.toDouble() * scale.toDouble();
  return {self <= 0, at::expm1(self * input_scale) * negcoef, self * scale};
}

at::Tensor& elu_out(const at::Tensor& self, const at::Scalar& alpha, const at::Scalar& scale,
                    const at::Scalar& input_scale, at::Tensor& out) {
  if (!floating({&self})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::elu_out>::call(
        self, alpha, scale, input_scale, out);
  }
  auto [negative_side, negative, positive] = elu_sides(self, alpha, scale, input_scale);
  return at::where_out(out, negative_side, negative, positive);
}

// The functional variants compute into new tensors, whose layout follows the input's (a
// channels-last input gives a channels-last output), as TensorIterator's do.
at::Tensor elu(const at::Tensor& self, const at::Scalar& alpha, const at::Scalar& scale,
               const at::Scalar& input_scale) {
  if (!floating({&self})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::elu>::call(
        self, alpha, scale, input_scale);
  }
  auto [negative_side, negative, positive] = elu_sides(self, alpha, scale, input_scale);
  return at::where(negative_side, negative, positive);
}

at::Tensor& elu_(at::Tensor& self, const at::Scalar& alpha, const at::Scalar& scale,
                 const at::Scalar& input_scale) {
  return elu_out(self, alpha, scale, input_scale, self);
}

void check_elu_backward(const at::Scalar& alpha, bool is_result) {
  TORCH_CHECK(!is_result || alpha.to<double>() >= 0.0,
              "In-place elu backward calculation is triggered with a negative slope which is not "
              "supported. This is caused by calling in-place forward function with a negative "
              "slope, please call out-of-place version instead.");
}

// elu's gradient where x (the input, or the result when is_result) is <= 0.
at::Tensor elu_negative_grad(const at::Tensor& grad_output, const at::Scalar& alpha,
                             const at::Scalar& scale, const at::Scalar& input_scale, bool is_result,
                             const at::Tensor& x) {
  const double negcoef = alpha.toDouble() * scale.toDouble();
  const double negiptcoef = input_scale.toDouble();
  return is_result ? grad_output * (x + negcoef) * negiptcoef
                   : grad_output * at::exp(x * negiptcoef) * (negiptcoef * negcoef);
}

at::Tensor& elu_backward_out(const at::Tensor& grad_output, const at::Scalar& alpha,
                             const at::Scalar& scale, const at::Scalar& input_scale, bool is_result,
                             const at::Tensor& x, at::Tensor& grad_input) {
  check_elu_backward(alpha, is_result);
  if (!floating({&x, &grad_output})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed,
                                        at::_ops::elu_backward_grad_input>::call(grad_output, alpha,
                                                                                 scale, input_scale,
                                                                                 is_result, x,
                                                                                 grad_input);
  }
  return at::where_out(grad_input, x <= 0,
                       elu_negative_grad(grad_output, alpha, scale, input_scale, is_result, x),
                       grad_output * scale);
}

at::Tensor elu_backward(const at::Tensor& grad_output, const at::Scalar& alpha,
                        const at::Scalar& scale, const at::Scalar& input_scale, bool is_result,
                        const at::Tensor& x) {
  check_elu_backward(alpha, is_result);
  if (!floating({&x, &grad_output})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::elu_backward>::call(
        grad_output, alpha, scale, input_scale, is_result, x);
  }
  return at::where(x <= 0, elu_negative_grad(grad_output, alpha, scale, input_scale, is_result, x),
                   grad_output * scale);
}

// smooth_l1_loss and huber_loss -- CPU, CUDA and MPS have kernels: the CPU's elementwise
// formulas, then the reduction; the backwards scale by 1/numel under 'mean', as the CPU's.
at::Tensor reduced(const at::Tensor& loss, int64_t reduction) {
  if (reduction == at::Reduction::Mean) return loss.mean();
  if (reduction == at::Reduction::Sum) return loss.sum();
  return loss;
}

double loss_norm(const at::Tensor& self, int64_t reduction) {
  return reduction == at::Reduction::Mean ? 1.0 / static_cast<double>(self.numel()) : 1.0;
}

at::Tensor smooth_l1_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                          double beta) {
  TORCH_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  if (!floating({&self, &target})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::smooth_l1_loss>::call(
        self, target, reduction, beta);
  }
  check_devices("smooth_l1_loss", {{&self, "self"}, {&target, "target"}});
  const at::Tensor z = at::abs(self - target);
  const at::Tensor loss = beta == 0 ? z : at::where(z < beta, z * z * (0.5 / beta), z - 0.5 * beta);
  return reduced(loss, reduction);
}

at::Tensor& smooth_l1_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                               double beta, at::Tensor& out) {
  if (!floating({&self, &target})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::smooth_l1_loss_out>::call(
        self, target, reduction, beta, out);
  }
  return assign_out(out, smooth_l1_loss(self, target, reduction, beta));
}

at::Tensor& smooth_l1_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                        const at::Tensor& target, int64_t reduction, double beta,
                                        at::Tensor& grad_input) {
  if (!floating({&self, &target, &grad_output})) {
    return at::native::call_fallback_fn<
        &cpu_fallback_boxed, at::_ops::smooth_l1_loss_backward_grad_input>::call(grad_output, self,
                                                                                 target, reduction,
                                                                                 beta, grad_input);
  }
  check_devices("smooth_l1_loss_backward",
                {{&grad_output, "grad_output"}, {&self, "self"}, {&target, "target"}});
  const at::Tensor x = self - target;
  const at::Tensor g = grad_output * loss_norm(self, reduction);
  // x <= -beta: -g; x >= beta: g; between: g * x / beta (beta 0 never reaches the division).
  const at::Tensor inner = beta == 0 ? at::zeros_like(x) : g * x / beta;
  const at::Tensor result = at::where(x <= -beta, -g, at::where(x >= beta, g, inner));
  return assign_out(grad_input, result);  // the broadcast shape, as the CPU's iterator
}

at::Tensor huber_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                      double delta) {
  TORCH_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  if (!floating({&self, &target})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::huber_loss>::call(
        self, target, reduction, delta);
  }
  check_devices("huber_loss", {{&self, "self"}, {&target, "target"}});
  const at::Tensor z = at::abs(self - target);
  const at::Tensor loss = at::where(z < delta, z * z * 0.5, (z - 0.5 * delta) * delta);
  return reduced(loss, reduction).to(self.scalar_type());  // the CPU's: self's dtype
}

at::Tensor& huber_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                           double delta, at::Tensor& out) {
  if (!floating({&self, &target})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::huber_loss_out>::call(
        self, target, reduction, delta, out);
  }
  return assign_out(out, huber_loss(self, target, reduction, delta));
}

at::Tensor& huber_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                    const at::Tensor& target, int64_t reduction, double delta,
                                    at::Tensor& grad_input) {
  if (!floating({&self, &target, &grad_output})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed,
                                        at::_ops::huber_loss_backward_out>::call(grad_output, self,
                                                                                 target, reduction,
                                                                                 delta, grad_input);
  }
  check_devices("huber_loss_backward",
                {{&grad_output, "grad_output"}, {&self, "self"}, {&target, "target"}});
  const at::Tensor x = self - target;
  const at::Tensor g = grad_output * loss_norm(self, reduction);
  const at::Tensor result =
      at::where(x <= -delta, g * -delta, at::where(x >= delta, g * delta, g * x));
  return assign_out(grad_input, result);  // the broadcast shape, as the CPU's iterator
}

// binary_cross_entropy -- CPU, CUDA and MPS have kernels: the CPU's
// (target - 1) * max(log1p(-x), -100) - target * max(log(x), -100), times the weight, reduced;
// the backward grad * (x - target) / max((1 - x) * x, 1e-12).  The CPU raises at the call for
// an input outside [0, 1] (CUDA asserts on the device): the device checks it as the CPU does,
// with one value read back, except while a graph is captured, where no value may be read back.
void check_probabilities(const at::Tensor& self) {
  if (self.numel() == 0 || graph::is_current_stream_capturing()) return;
  TORCH_CHECK(at::eq(at::clamp(self, 0, 1), self).all().item<bool>(),  // NaN fails too
              "all elements of input should be between 0 and 1");
}

at::Tensor binary_cross_entropy(const at::Tensor& self, const at::Tensor& target,
                                const std::optional<at::Tensor>& weight, int64_t reduction) {
  const bool weighted = weight.has_value() && weight->defined();
  if (!floating({&self, &target}) || (weighted && !floating({&*weight}))) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::binary_cross_entropy>::call(
        self, target, weight, reduction);
  }
  check_devices("binary_cross_entropy", {{&self, "self"}, {&target, "target"}});
  check_probabilities(self);
  at::Tensor loss = (target - 1) * at::clamp_min(at::log1p(-self), -100) -
                    target * at::clamp_min(at::log(self), -100);
  if (weighted) loss.mul_(*weight);  // in place, as the CPU's: the loss keeps its dtype
  return reduced(loss, reduction);
}

at::Tensor& binary_cross_entropy_out(const at::Tensor& self, const at::Tensor& target,
                                     const std::optional<at::Tensor>& weight, int64_t reduction,
                                     at::Tensor& out) {
  return assign_out(out, binary_cross_entropy(self, target, weight, reduction));
}

at::Tensor binary_cross_entropy_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                         const at::Tensor& target,
                                         const std::optional<at::Tensor>& weight,
                                         int64_t reduction) {
  const bool weighted = weight.has_value() && weight->defined();
  if (!floating({&self, &target, &grad_output}) || (weighted && !floating({&*weight}))) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed,
                                        at::_ops::binary_cross_entropy_backward>::call(grad_output,
                                                                                       self, target,
                                                                                       weight,
                                                                                       reduction);
  }
  check_devices("binary_cross_entropy_backward",
                {{&grad_output, "grad_output"}, {&self, "self"}, {&target, "target"}});
  at::Tensor grad = grad_output * (self - target) / at::clamp_min((1 - self) * self, 1e-12);
  if (weighted) grad.mul_(*weight);
  if (reduction == at::Reduction::Mean) grad = grad / static_cast<double>(self.numel());
  return grad;
}

at::Tensor& binary_cross_entropy_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                              const at::Tensor& target,
                                              const std::optional<at::Tensor>& weight,
                                              int64_t reduction, at::Tensor& grad_input) {
  return assign_out(grad_input,
                    binary_cross_entropy_backward(grad_output, self, target, weight, reduction));
}

// var, std -- for vendors without var.correction_out / std.correction_out: var_mean's two
// passes above.
at::Tensor var_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                          const std::optional<at::Scalar>& correction, bool keepdim) {
  auto result = variance_and_mean("var", self, dim, correction, keepdim);
  if (result.has_value()) return std::get<0>(*result);
  return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::var_correction>::call(
      self, dim, correction, keepdim);
}

at::Tensor& var_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                    const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out) {
  if (!at::isFloatingType(self.scalar_type())) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::var_correction_out>::call(
        self, dim, correction, keepdim, out);
  }
  return assign_out(out, var_correction(self, dim, correction, keepdim));
}

at::Tensor std_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                          const std::optional<at::Scalar>& correction, bool keepdim) {
  auto result = variance_and_mean("std", self, dim, correction, keepdim);
  if (result.has_value()) return at::sqrt(std::get<0>(*result));
  return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::std_correction>::call(
      self, dim, correction, keepdim);
}

at::Tensor& std_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                    const std::optional<at::Scalar>& correction, bool keepdim, at::Tensor& out) {
  if (!at::isFloatingType(self.scalar_type())) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::std_correction_out>::call(
        self, dim, correction, keepdim, out);
  }
  return assign_out(out, std_correction(self, dim, correction, keepdim));
}

// nan_to_num -- CPU, CUDA and MPS have kernels: NaN, +inf and -inf replaced by masked fills
// (the dtype's largest and lowest finite values by default); other dtypes are copied, as the
// CPU's.
// nan_to_num of a real self: the masked fills, or a copy of an integer self.
at::Tensor replaced(const at::Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                    std::optional<double> neginf) {
  if (!at::isFloatingType(self.scalar_type())) return self.clone();
  double largest = 0, lowest = 0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "nan_to_num", [&] {
    largest = static_cast<double>(std::numeric_limits<scalar_t>::max());
    lowest = static_cast<double>(std::numeric_limits<scalar_t>::lowest());
  });
  const at::Tensor infinite = at::isinf(self);
  const at::Tensor positive = self > 0;
  at::Tensor result = at::masked_fill(self, at::isnan(self), nan.value_or(0.0));
  result.masked_fill_(infinite & positive, posinf.value_or(largest));
  result.masked_fill_(infinite & ~positive, neginf.value_or(lowest));
  return result;
}

at::Tensor& nan_to_num_out(const at::Tensor& self, std::optional<double> nan,
                           std::optional<double> posinf, std::optional<double> neginf,
                           at::Tensor& out) {
  if (at::isComplexType(self.scalar_type())) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::nan_to_num_out>::call(
        self, nan, posinf, neginf, out);
  }
  return assign_out(out, replaced(self, nan, posinf, neginf));
}

at::Tensor nan_to_num(const at::Tensor& self, std::optional<double> nan,
                      std::optional<double> posinf, std::optional<double> neginf) {
  if (at::isComplexType(self.scalar_type())) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::nan_to_num>::call(
        self, nan, posinf, neginf);
  }
  return replaced(self, nan, posinf, neginf);
}

at::Tensor& nan_to_num_(at::Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                        std::optional<double> neginf) {
  return nan_to_num_out(self, nan, posinf, neginf, self);
}

// index_fill_ and index_copy (HF's static KV cache writes with index_copy_) -- CPU, CUDA and
// MPS have kernels: a scatter along the dimension, with the index broadcast over the other
// dimensions and negative positions wrapped as the CPU wraps them.  ATen's meta function makes
// the CPU's checks of shapes and dtypes; a position out of range is the vendor's scatter's
// fault, raised as CUDA raises its device-side assert.
at::Tensor scatter_index(const at::Tensor& index, int64_t dim, int64_t size,
                         at::IntArrayRef shape) {
  const at::Tensor flat = index.reshape({-1});
  const at::Tensor wrapped = at::where(flat < 0, flat + size, flat);
  std::vector<int64_t> along(shape.size(), 1);
  along[static_cast<size_t>(dim)] = -1;
  return wrapped.view(along).expand(shape);
}

at::Tensor& index_fill_scalar(at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const at::Scalar& value) {
  if (self.dim() == 0 || at::isComplexType(self.scalar_type())) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed,
                                        at::_ops::index_fill__int_Scalar>::call(self, dim, index,
                                                                                value);
  }
  TORCH_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  TORCH_CHECK(index.scalar_type() == at::kLong, "index_fill_(): Expected dtype int64 for index.");
  check_devices("index_fill_", {{&self, "self"}, {&index, "index"}});
  if (index.numel() == 0) return self;
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  std::vector<int64_t> shape = self.sizes().vec();
  shape[static_cast<size_t>(d)] = index.numel();
  return self.scatter_(d, scatter_index(index, d, self.size(d), shape), value);
}

at::Tensor& index_fill_tensor(at::Tensor& self, int64_t dim, const at::Tensor& index,
                              const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0,
              "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  // A number on the CPU, or a tensor of self's device (CUDA's device check).
  if (!(value.device().is_cpu() || value.device() == self.device())) {
    fail_device_mismatch(self.device(), value.device(), "value", "index_fill_");
  }
  if (self.dim() == 0 || at::isComplexType(self.scalar_type())) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed,
                                        at::_ops::index_fill__int_Tensor>::call(self, dim, index,
                                                                                value);
  }
  return index_fill_scalar(self, dim, index, value.item());  // the CPU reads it too
}

at::Tensor& index_copy_out(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                           const at::Tensor& source, at::Tensor& out) {
  if (self.dim() == 0 || at::isComplexType(self.scalar_type())) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::index_copy_out>::call(
        self, dim, index, source, out);
  }
  at::_ops::index_copy::call(to_meta(self), dim, to_meta(index), to_meta(source));  // checks
  check_devices("index_copy", {{&self, "self"}, {&index, "index"}, {&source, "source"}});
  if (!out.is_same(self)) {
    at::native::resize_output(out, self.sizes());
    out.copy_(self);
  }
  if (index.numel() == 0) return out;
  const int64_t d = at::maybe_wrap_dim(dim, self.dim());
  const at::Tensor src = source.dim() == 0 ? source.view({1}) : source;
  out.scatter_(d, scatter_index(index, d, self.size(d), src.sizes()), src);
  return out;
}

// Positions along one dimension as an int64 tensor on `device` (host-built, one copy).
at::Tensor positions(const std::vector<int64_t>& values, c10::Device device) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong)).to(device);
}

// flip -- CPU, CUDA and MPS have kernels: per flipped dimension, index_select of the
// positions in reverse.
at::Tensor flip(const at::Tensor& self, at::IntArrayRef dims) {
  const std::bitset<64> flipped = at::dim_list_to_bitset(dims, self.dim());
  at::Tensor result = self;
  for (int64_t d = 0; d < self.dim(); d++) {
    if (!flipped[static_cast<size_t>(d)] || self.size(d) < 2) continue;
    std::vector<int64_t> reversed(static_cast<size_t>(self.size(d)));
    for (size_t i = 0; i < reversed.size(); i++) {
      reversed[i] = static_cast<int64_t>(reversed.size() - 1 - i);
    }
    result = at::index_select(result, d, positions(reversed, self.device()));
  }
  return result.is_same(self) ? self.clone(at::MemoryFormat::Preserve) : result;
}

// reflection_pad{1,2,3}d, replication_pad{1,2,3}d and their backwards -- CPU, CUDA and MPS have
// kernels.  ATen's meta function checks the call and gives the output's shape; each padded
// dimension is then one index_select of the source positions (reflected or clamped; a negative
// padding crops), and the backward one index_add per dimension, in reverse order.
enum class Pad { kReflect, kReplicate };

// Per padded dimension (the last first): the dimension and its source positions.
std::vector<std::pair<int64_t, std::vector<int64_t>>> pad_plan(const at::Tensor& self,
                                                               at::IntArrayRef padding, Pad mode) {
  std::vector<std::pair<int64_t, std::vector<int64_t>>> plan;
  for (size_t j = 0; j * 2 < padding.size(); j++) {
    const int64_t d = self.dim() - 1 - static_cast<int64_t>(j);
    const int64_t size = self.size(d), before = padding[2 * j], after = padding[2 * j + 1];
    if (before == 0 && after == 0) continue;
    std::vector<int64_t> source;
    for (int64_t o = 0; o < size + before + after; o++) {
      int64_t i = o - before;
      if (mode == Pad::kReflect) {
        if (i < 0) i = -i;
        if (i >= size) i = 2 * (size - 1) - i;
      } else {
        i = std::min(std::max(i, int64_t{0}), size - 1);
      }
      source.push_back(i);
    }
    plan.emplace_back(d, std::move(source));
  }
  return plan;
}

template <Pad mode, typename Op>
at::Tensor pad(const at::Tensor& self, c10::SymIntArrayRef sym_padding) {
  const at::Tensor shape = Op::call(to_meta(self), sym_padding);  // the checks and the shape
  at::Tensor result = self;
  for (const auto& [d, source] : pad_plan(self, C10_AS_INTARRAYREF_SLOW(sym_padding), mode)) {
    result = at::index_select(result, d, positions(source, self.device()));
  }
  // The CPU's output keeps a channels-last input's layout.
  const at::MemoryFormat format = self.suggest_memory_format();
  result = result.is_same(self) ? self.clone(format) : result.contiguous(format);
  TORCH_INTERNAL_ASSERT(result.sizes() == shape.sizes());
  return result;
}

template <Pad mode, typename Op>
at::Tensor& pad_out(const at::Tensor& self, c10::SymIntArrayRef padding, at::Tensor& out) {
  return assign_out(out, pad<mode, Op>(self, padding));
}

template <Pad mode, typename Op>
at::Tensor pad_backward(const at::Tensor& grad_output, const at::Tensor& self,
                        c10::SymIntArrayRef sym_padding) {
  Op::call(to_meta(grad_output), to_meta(self), sym_padding);  // the checks
  check_devices("pad_backward", {{&grad_output, "grad_output"}, {&self, "self"}});
  const auto plan = pad_plan(self, C10_AS_INTARRAYREF_SLOW(sym_padding), mode);
  at::Tensor grad = grad_output;
  for (auto step = plan.rbegin(); step != plan.rend(); ++step) {
    std::vector<int64_t> sizes = grad.sizes().vec();
    sizes[static_cast<size_t>(step->first)] = self.size(step->first);
    grad = at::zeros(sizes, grad_output.options())
               .index_add_(step->first, positions(step->second, self.device()), grad);
  }
  const at::MemoryFormat format = self.suggest_memory_format();
  return grad.is_same(grad_output) ? grad_output.clone(format) : grad.contiguous(format);
}

template <Pad mode, typename Op>
at::Tensor& pad_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                             c10::SymIntArrayRef padding, at::Tensor& grad_input) {
  return assign_out(grad_input, pad_backward<mode, Op>(grad_output, self, padding));
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

namespace {
// Whether a transposed convolution is the input's gradient of a forward convolution: every
// output padding below its stride (PyTorch allows one up to the dilation, which adds output
// positions no forward convolution of that input reaches).
bool as_gradient(bool transposed, c10::SymIntArrayRef stride, c10::SymIntArrayRef output_padding,
                 std::initializer_list<const at::Tensor*> tensors) {
  if (!transposed || !floating(tensors) || stride.size() != output_padding.size()) return false;
  for (size_t d = 0; d < stride.size(); d++) {
    if (output_padding[d] >= stride[d]) return false;
  }
  return true;
}
}  // namespace

// Transposed convolution where the vendor's convolution kernels decline it (emu's and opencl's
// do): a transposed convolution is the input's gradient of the forward convolution with the
// same weight, whose output has the transposed one's input's shape, and its backward is that
// forward convolution (the input's gradient) and the forward's weight gradient with the roles
// of input and output swapped.  Each is a call of the vendor's own convolution kernels.
at::Tensor convolution_declined(const at::Tensor& input, const at::Tensor& weight,
                                const std::optional<at::Tensor>& bias, c10::SymIntArrayRef stride,
                                c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation,
                                bool transposed, c10::SymIntArrayRef output_padding,
                                c10::SymInt groups) {
  if (!as_gradient(transposed, stride, output_padding, {&input, &weight})) {
    return at::native::call_fallback_fn_symint<
        &cpu_fallback_boxed, at::_ops::convolution_overrideable>::call(input, weight, bias, stride,
                                                                       padding, dilation,
                                                                       transposed, output_padding,
                                                                       groups);
  }
  const at::Tensor shape = meta_overrides::convolution_overrideable(
      to_meta(input), to_meta(weight), to_meta(bias), stride, padding, dilation, true,
      output_padding, groups);
  // The forward convolution's input: only its shape is read.
  const at::Tensor forward_input =
      at::empty(shape.sizes(), input.options().memory_format(shape.suggest_memory_format()));
  const std::vector<c10::SymInt> no_padding(output_padding.size(), 0);
  at::Tensor output = std::get<0>(at::_ops::convolution_backward_overrideable::call(
      input, forward_input, weight, stride, padding, dilation, false, no_padding, groups,
      {true, false, false}));
  if (bias.has_value() && bias->defined()) {
    std::vector<int64_t> channels(static_cast<size_t>(output.dim()), 1);
    channels[1] = -1;
    output.add_(bias->view(channels));
  }
  return output;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_declined(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    c10::SymIntArrayRef stride, c10::SymIntArrayRef padding, c10::SymIntArrayRef dilation,
    bool transposed, c10::SymIntArrayRef output_padding, c10::SymInt groups,
    std::array<bool, 3> output_mask) {
  if (!as_gradient(transposed, stride, output_padding, {&grad_output, &input, &weight})) {
    return at::native::call_fallback_fn_symint<
        &cpu_fallback_boxed, at::_ops::convolution_backward_overrideable>::call(grad_output, input,
                                                                                weight, stride,
                                                                                padding, dilation,
                                                                                transposed,
                                                                                output_padding,
                                                                                groups,
                                                                                output_mask);
  }
  const std::vector<c10::SymInt> no_padding(output_padding.size(), 0);
  at::Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    grad_input = at::_ops::convolution_overrideable::call(
        grad_output, weight, std::nullopt, stride, padding, dilation, false, no_padding, groups);
  }
  if (output_mask[1]) {
    grad_weight = std::get<1>(at::_ops::convolution_backward_overrideable::call(
        input, grad_output, weight, stride, padding, dilation, false, no_padding, groups,
        {false, true, false}));
  }
  if (output_mask[2]) {
    std::vector<int64_t> dims = {0};
    for (int64_t d = 2; d < grad_output.dim(); d++) dims.push_back(d);
    grad_bias = at::sum(grad_output, dims);
  }
  return {grad_input, grad_weight, grad_bias};
}

namespace {

// ---- Outputs whose size depends on the data: nonzero, masked_select, masked_scatter_ ----

// The flat positions of the nonzero elements of `self`, ascending.  A running count of the
// nonzeros (cumsum) ranks each one; its last value, read back, is the count -- the one host
// synchronisation, as CUDA's nonzero makes.  Each position is then scattered to its rank, and
// each zero's to the count plus its rank among the zeros, so the targets are a permutation
// (a stable partition: no two writes meet) and the first `count` are the answer.
at::Tensor flat_nonzero(const at::Tensor& self) {
  const int64_t numel = self.numel();
  const at::TensorOptions index = self.options().dtype(at::kLong);
  if (numel == 0) return at::empty({0}, index);
  const at::Tensor mask = self.reshape({numel}).ne(0);
  const at::Tensor rank = at::cumsum(mask, 0, at::kLong);
  const int64_t count = rank.select(0, numel - 1).item<int64_t>();
  const at::Tensor position = at::arange(numel, index);
  const at::Tensor target = at::where(mask, rank - 1, position - rank + count);
  return at::empty({numel}, index).scatter_(0, target, position).narrow(0, 0, count);
}

// nonzero -- CPU, CUDA and MPS have kernels; boolean indexing (`x[mask]`), argwhere and
// torch.where(cond) call it.  Coordinates from the flat positions, the last dimension first,
// in the CPU's and CUDA's layout: a [dims, count] tensor transposed.
at::Tensor nonzero_coordinates(const at::Tensor& self) {
  if (self.is_complex()) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::nonzero>::call(self);
  }
  const at::Tensor flat = flat_nonzero(self);
  const int64_t dims = self.dim();
  if (dims == 1) return flat.unsqueeze(0).t();
  if (dims == 0 || flat.numel() == 0) {
    return at::empty_strided({flat.numel(), dims}, {1, flat.numel()}, flat.options());
  }
  std::vector<at::Tensor> coordinates(static_cast<size_t>(dims));
  at::Tensor rest = flat;
  for (int64_t d = dims - 1; d > 0; d--) {
    coordinates[static_cast<size_t>(d)] = at::remainder(rest, self.size(d));
    rest = at::div(rest, self.size(d), "floor");
  }
  coordinates[0] = rest;
  return at::stack(coordinates, 0).t();
}

at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == at::kLong,
              "nonzero: Expected out tensor to have scalar type Long but got scalar type",
              out.scalar_type());
  check_devices("nonzero", {{&self, "self"}, {&out, "out"}});
  return assign_out(out, nonzero_coordinates(self));
}

// masked_select -- CPU, CUDA and MPS have kernels: the broadcast self at the mask's flat
// nonzero positions (one index_select).
at::Tensor masked_select_values(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::ScalarType::Bool,
              "masked_select: expected BoolTensor for mask");
  if (self.is_complex()) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::masked_select>::call(self,
                                                                                            mask);
  }
  check_devices("masked_select", {{&self, "self"}, {&mask, "mask"}});
  const auto [selected, values] = at::expand_outplace(mask, self);  // the CPU's order
  return values->reshape({values->numel()}).index_select(0, flat_nonzero(*selected));
}

at::Tensor& masked_select_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() == out.scalar_type(),
              "masked_select(): self and result must have the same scalar type");
  at::assert_no_internal_overlap(out);  // the CPU's checks
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, mask);
  return assign_out(out, masked_select_values(self, mask));
}

// masked_scatter_ -- CPU, CUDA and MPS have kernels (masked_select's backward and
// vision-language models' `inputs_embeds.masked_scatter(mask, features)` call it): source's
// first elements written at the mask's flat nonzero positions (one scatter).
at::Tensor& masked_scatter_values_(at::Tensor& self, const at::Tensor& mask,
                                   const at::Tensor& source) {
  TORCH_CHECK(mask.scalar_type() == at::ScalarType::Bool,
              "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(),
              "masked_scatter: expected self and source to have same dtypes but got",
              self.scalar_type(), " and ", source.scalar_type());
  if (self.is_complex()) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::masked_scatter_>::call(
        self, mask, source);
  }
  check_devices("masked_scatter_", {{&self, "self"}, {&mask, "mask"}, {&source, "source"}});
  const at::Tensor positions = flat_nonzero(mask.expand(self.sizes()));
  const int64_t count = positions.numel();
  TORCH_CHECK(source.numel() >= count, "masked_scatter: expected source to have at least ", count,
              " elements (the number of ones in mask), got ", source.numel());
  if (count == 0) return self;
  const at::Tensor values = source.reshape({source.numel()}).narrow(0, 0, count);
  if (self.is_contiguous()) {
    self.view({self.numel()}).scatter_(0, positions, values);
  } else {
    at::Tensor dense = self.contiguous();
    dense.view({dense.numel()}).scatter_(0, positions, values);
    self.copy_(dense);
  }
  return self;
}

// prod over every element -- CPU, CUDA and MPS have a kernel of its own; here prod over the one
// dimension of the flattened tensor, the vendor's prod.int_out (the same result type rules).
at::Tensor prod_all(const at::Tensor& self, std::optional<at::ScalarType> dtype) {
  return at::prod(self.reshape({-1}), 0, /*keepdim=*/false, dtype);
}

// _unique2 (torch.unique) -- CPU, CUDA and MPS have kernels.  A stable sort, the first of each
// run of equal values (NaNs each their own, as on the CPU) selected, a running count of the runs
// as every element's group: the inverse scattered back through the sort's order, the counts
// added per group.  Sorted whatever `sorted` asks, as the CPU's and CUDA's are.  Bool and
// complex inputs keep the CPU fallback.
std::tuple<at::Tensor, at::Tensor, at::Tensor> unique2(const at::Tensor& self, bool sorted,
                                                       bool return_inverse, bool return_counts) {
  if (self.is_complex() || self.scalar_type() == at::kBool) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::_unique2>::call(
        self, sorted, return_inverse, return_counts);
  }
  const at::TensorOptions index = self.options().dtype(at::kLong);
  const int64_t n = self.numel();
  if (n == 0) {
    return {at::empty({0}, self.options()),
            return_inverse ? at::empty(self.sizes(), index) : at::empty({0}, index),
            at::empty({0}, index)};
  }
  const auto [values, order] = at::sort(self.reshape({n}), /*stable=*/true, 0, false);
  const at::Tensor first = at::cat({at::ones({1}, values.options().dtype(at::kBool)),
                                    values.narrow(0, 1, n - 1) != values.narrow(0, 0, n - 1)});
  const at::Tensor unique = values.masked_select(first);
  at::Tensor inverse = at::empty({0}, index), counts = at::empty({0}, index);
  if (return_inverse || return_counts) {
    const at::Tensor group = at::cumsum(first, 0, at::kLong) - 1;
    if (return_inverse)
      inverse = at::empty({n}, index).scatter_(0, order, group).view(self.sizes());
    if (return_counts) {
      counts = at::zeros({unique.numel()}, index).scatter_add_(0, group, at::ones_like(group));
    }
  }
  return {unique, inverse, counts};
}

// im2col (nn.Unfold) and col2im (nn.Fold), each the other's backward -- CPU, CUDA and MPS have
// kernels.  ATen's meta function checks the call and gives the shape; the columns are one
// index_select of the zero-padded planes at positions computed on the host (one small copy
// to the device), and col2im adds them back with index_add, then crops the padding.
struct ColumnPlan {
  int64_t padded_h, padded_w;
  std::vector<int64_t> positions;  // per kernel offset, then per output position
};

ColumnPlan column_plan(int64_t height, int64_t width, at::IntArrayRef kernel,
                       at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  ColumnPlan plan{height + 2 * padding[0], width + 2 * padding[1], {}};
  const int64_t out_h = (plan.padded_h - (dilation[0] * (kernel[0] - 1) + 1)) / stride[0] + 1;
  const int64_t out_w = (plan.padded_w - (dilation[1] * (kernel[1] - 1) + 1)) / stride[1] + 1;
  plan.positions.reserve(static_cast<size_t>(kernel[0] * kernel[1] * out_h * out_w));
  for (int64_t i = 0; i < kernel[0]; i++) {
    for (int64_t j = 0; j < kernel[1]; j++) {
      for (int64_t y = 0; y < out_h; y++) {
        for (int64_t x = 0; x < out_w; x++) {
          plan.positions.push_back((y * stride[0] + i * dilation[0]) * plan.padded_w +
                                   x * stride[1] + j * dilation[1]);
        }
      }
    }
  }
  return plan;
}

// The CPU's checks of the four pairs (im2col_out_cpu_template, col2im_out_cpu_template).
void check_pairs(at::IntArrayRef kernel_size, at::IntArrayRef dilation, at::IntArrayRef padding,
                 at::IntArrayRef stride) {
  TORCH_CHECK(kernel_size.size() == 2, "It is expected kernel_size equals to 2, but got size ",
              kernel_size.size());
  TORCH_CHECK(dilation.size() == 2, "It is expected dilation equals to 2, but got size ",
              dilation.size());
  TORCH_CHECK(padding.size() == 2, "It is expected padding equals to 2, but got size ",
              padding.size());
  TORCH_CHECK(stride.size() == 2, "It is expected stride equals to 2, but got size ",
              stride.size());
}

at::Tensor im2col(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef dilation,
                  at::IntArrayRef padding, at::IntArrayRef stride) {
  check_pairs(kernel_size, dilation, padding, stride);
  at::native::im2col_shape_check(self, at::Tensor(), kernel_size[0], kernel_size[1], dilation[0],
                                 dilation[1], padding[0], padding[1], stride[0], stride[1]);
  const at::Tensor shape =
      at::_ops::im2col::call(to_meta(self), kernel_size, dilation, padding, stride);
  if (self.is_complex() || shape.numel() == 0) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::im2col>::call(
        self, kernel_size, dilation, padding, stride);
  }
  const at::Tensor input = self.dim() == 3 ? self.unsqueeze(0) : self;
  const ColumnPlan plan =
      column_plan(input.size(2), input.size(3), kernel_size, dilation, padding, stride);
  const at::Tensor padded =
      at::constant_pad_nd(input, {padding[1], padding[1], padding[0], padding[0]});
  const at::Tensor columns =
      padded.reshape({input.size(0), input.size(1), plan.padded_h * plan.padded_w})
          .index_select(2, positions(plan.positions, self.device()));
  return columns.reshape(shape.sizes());
}

at::Tensor col2im(const at::Tensor& self, c10::SymIntArrayRef sym_output_size,
                  at::IntArrayRef kernel_size, at::IntArrayRef dilation, at::IntArrayRef padding,
                  at::IntArrayRef stride) {
  check_pairs(kernel_size, dilation, padding, stride);
  const std::vector<int64_t> output_size = C10_AS_INTARRAYREF_SLOW(sym_output_size).vec();
  TORCH_CHECK(output_size.size() == 2, "It is expected output_size equals to 2, but got size ",
              output_size.size());
  at::native::col2im_shape_check(self, at::Tensor(), output_size[0], output_size[1], kernel_size[0],
                                 kernel_size[1], dilation[0], dilation[1], padding[0], padding[1],
                                 stride[0], stride[1]);
  const at::Tensor shape = at::_ops::col2im::call(to_meta(self), sym_output_size, kernel_size,
                                                  dilation, padding, stride);
  if (self.is_complex() || self.numel() == 0) {
    return at::native::call_fallback_fn_symint<&cpu_fallback_boxed, at::_ops::col2im>::call(
        self, sym_output_size, kernel_size, dilation, padding, stride);
  }
  const at::Tensor output = shape.dim() == 3 ? shape.unsqueeze(0) : shape;
  const int64_t n = output.size(0), channels = output.size(1);
  const ColumnPlan plan =
      column_plan(output.size(2), output.size(3), kernel_size, dilation, padding, stride);
  const at::Tensor sums =
      at::zeros({n, channels, plan.padded_h * plan.padded_w}, self.options())
          .index_add_(2, positions(plan.positions, self.device()),
                      self.reshape({n, channels, static_cast<int64_t>(plan.positions.size())}));
  const at::Tensor image = sums.view({n, channels, plan.padded_h, plan.padded_w})
                               .narrow(2, padding[0], output.size(2))
                               .narrow(3, padding[1], output.size(3));
  return image.reshape(shape.sizes()).contiguous();
}

// searchsorted and bucketize -- CPU, CUDA and MPS have kernels (binary searches).  ATen's meta
// function checks the call and gives the shape; the result is a count per value of the
// boundaries before it -- !(b >= v) on the left side, !(b > v) on the right, so that a NaN
// value lands past the end as the CPU's search puts it -- over every boundary of its row at
// once (a sorter gathers the sequence first).  That costs values x boundaries comparisons:
// calls of more than 2^24 of them keep the CPU fallback.
bool count_search_fits(const at::Tensor& boundaries, const at::Tensor& values) {
  const int64_t row = boundaries.dim() > 0 ? boundaries.size(-1) : 1;
  return !boundaries.is_complex() && !values.is_complex() &&
         values.numel() * row <= (int64_t{1} << 24);
}

at::Tensor count_search(const at::Tensor& boundaries, const at::Tensor& values, bool out_int32,
                        bool right) {
  const at::ScalarType dtype = out_int32 ? at::kInt : at::kLong;
  at::Tensor seq = boundaries, v = values;
  if (boundaries.dim() == 1) {  // one sequence for every value
    seq = boundaries.view({1, boundaries.numel()});
    v = values.reshape({values.numel(), 1});
  } else {  // a sequence per row of values
    seq = boundaries.unsqueeze(-2);
    v = values.unsqueeze(-1);
  }
  const at::Tensor before = right ? at::logical_not(seq > v) : at::logical_not(seq >= v);
  return before.sum(-1, /*keepdim=*/false, dtype).reshape(values.sizes());
}

at::Tensor searchsorted(const at::Tensor& sorted_sequence, const at::Tensor& self, bool out_int32,
                        bool right, std::optional<c10::string_view> side,
                        const std::optional<at::Tensor>& sorter) {
  const at::Tensor sorting_by = sorter.has_value() ? *sorter : at::Tensor();
  const at::Tensor typed = at::empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong));
  at::native::searchsorted_pre_check(sorted_sequence, self, typed, out_int32, right, side,
                                     sorting_by);  // the CPU's checks, in its words
  const at::Tensor shape = at::_ops::searchsorted_Tensor::call(
      to_meta(sorted_sequence), to_meta(self), out_int32, right, side, to_meta(sorter));
  if (!count_search_fits(sorted_sequence, self)) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::searchsorted_Tensor>::call(
        sorted_sequence, self, out_int32, right, side, sorter);
  }
  const bool sorting = sorter.has_value() && sorter->defined();
  check_devices("searchsorted", {{&sorted_sequence, "sorted_sequence"}, {&self, "self"}});
  if (sorting)
    check_devices("searchsorted", {{&sorted_sequence, "sorted_sequence"}, {&*sorter, "sorter"}});
  const at::Tensor boundaries = sorting ? sorted_sequence.gather(-1, *sorter) : sorted_sequence;
  const bool on_right = right || (side.has_value() && *side == "right");
  return count_search(boundaries, self, out_int32, on_right).view(shape.sizes());
}

// searchsorted of one number: the tensor form with the number as a 0-d tensor of the
// sequence's type on its device.
at::Tensor searchsorted_scalar(const at::Tensor& sorted_sequence, const at::Scalar& self,
                               bool out_int32, bool right, std::optional<c10::string_view> side,
                               const std::optional<at::Tensor>& sorter) {
  return searchsorted(sorted_sequence, at::scalar_tensor(self, sorted_sequence.options()),
                      out_int32, right, side, sorter);
}

at::Tensor bucketize(const at::Tensor& self, const at::Tensor& boundaries, bool out_int32,
                     bool right) {
  TORCH_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(",
              boundaries.dim(), ")");
  const at::Tensor typed = at::empty({0}, self.options().dtype(out_int32 ? at::kInt : at::kLong));
  at::native::searchsorted_pre_check(boundaries, self, typed, out_int32, right, std::nullopt,
                                     at::Tensor());
  const at::Tensor shape =
      at::_ops::bucketize_Tensor::call(to_meta(self), to_meta(boundaries), out_int32, right);
  if (!count_search_fits(boundaries, self)) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::bucketize_Tensor>::call(
        self, boundaries, out_int32, right);
  }
  check_devices("bucketize", {{&self, "self"}, {&boundaries, "boundaries"}});
  return count_search(boundaries, self, out_int32, right).view(shape.sizes());
}

// upsample_linear1d and its backward -- CPU, CUDA and MPS have kernels (interpolate's
// mode="linear": audio, 1-d signals).  The vendor's bilinear kernels over a height of one,
// whose source row is the one row with weight 1 for either align_corners.
at::Tensor& upsample_linear1d_out(const at::Tensor& self, c10::SymIntArrayRef output_size,
                                  bool align_corners, std::optional<double> scales,
                                  at::Tensor& out) {
  const at::Tensor shape =
      at::_ops::upsample_linear1d::call(to_meta(self), output_size, align_corners, scales);
  if (!floating({&self})) {
    return at::native::call_fallback_fn_symint<&cpu_fallback_boxed,
                                               at::_ops::upsample_linear1d_out>::call(self,
                                                                                      output_size,
                                                                                      align_corners,
                                                                                      scales, out);
  }
  const c10::SymInt one = 1;
  const at::Tensor result = at::_ops::upsample_bilinear2d::call(
      self.unsqueeze(2), {one, output_size[0]}, align_corners, std::nullopt, scales);
  return assign_out(out, result.squeeze(2).view(shape.sizes()));
}

at::Tensor& upsample_linear1d_backward_out(const at::Tensor& grad_output,
                                           c10::SymIntArrayRef output_size,
                                           c10::SymIntArrayRef input_size, bool align_corners,
                                           std::optional<double> scales, at::Tensor& grad_input) {
  if (!floating({&grad_output})) {
    return at::native::call_fallback_fn_symint<
        &cpu_fallback_boxed, at::_ops::upsample_linear1d_backward_grad_input>::call(grad_output,
                                                                                    output_size,
                                                                                    input_size,
                                                                                    align_corners,
                                                                                    scales,
                                                                                    grad_input);
  }
  TORCH_CHECK(output_size.size() == 1 && input_size.size() == 3,
              "upsample_linear1d_backward: expected an output_size of 1 and an input_size of 3 "
              "elements, got ",
              output_size.size(), " and ", input_size.size());
  const c10::SymInt one = 1;
  const at::Tensor result = at::_ops::upsample_bilinear2d_backward::call(
      grad_output.unsqueeze(2), {one, output_size[0]},
      {input_size[0], input_size[1], one, input_size[2]}, align_corners, std::nullopt, scales);
  return assign_out(grad_input, result.squeeze(2));
}

// upsample_bicubic2d and its backward -- CPU, CUDA and MPS have kernels (interpolate's
// mode="bicubic": image resizing, ViT position embeddings resampled to another resolution).
// Separable, as the CPU computes it: along the width, then the height, each output position
// the sum of four source positions (clamped to the edge) times Keys' cubic weights (A = -0.75),
// from ATen's source-index rules (UpSample.h), in the input's opmath type; one index_select
// and one product per tap and dimension.  The backward adds the same taps back (index_add).
struct CubicTaps {
  std::array<std::vector<int64_t>, 4> index;
  std::array<at::Tensor, 4> weight;  // [output size], on the device, in the opmath type
};

template <typename T>
std::array<std::vector<T>, 4> cubic_weights(int64_t in, int64_t out, bool align_corners,
                                            std::optional<double> scale,
                                            std::array<std::vector<int64_t>, 4>& index) {
  const T step = align_corners ? (out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0))
                 : (scale.has_value() && *scale > 0) ? static_cast<T>(1.0 / *scale)
                                                     : static_cast<T>(in) / static_cast<T>(out);
  const T a = T(-0.75);
  auto near = [a](T x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };       // |x| <= 1
  auto far = [a](T x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };  // 1 < |x| < 2
  std::array<std::vector<T>, 4> weights;
  for (int64_t o = 0; o < out; o++) {
    const T real =
        align_corners ? step * static_cast<T>(o) : step * (static_cast<T>(o) + T(0.5)) - T(0.5);
    const T floor_real = std::floor(real);
    const T t = real - floor_real;
    const T w[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)};
    for (int k = 0; k < 4; k++) {
      const int64_t i = static_cast<int64_t>(floor_real) - 1 + k;
      index[static_cast<size_t>(k)].push_back(std::min(std::max(i, int64_t{0}), in - 1));
      weights[static_cast<size_t>(k)].push_back(w[k]);
    }
  }
  return weights;
}

CubicTaps cubic_taps(const at::Tensor& like, int64_t in, int64_t out, bool align_corners,
                     std::optional<double> scale) {
  CubicTaps taps;
  const at::ScalarType opmath = at::toOpMathType(like.scalar_type());
  AT_DISPATCH_FLOATING_TYPES(opmath, "upsample_bicubic2d", [&] {
    const auto weights = cubic_weights<scalar_t>(in, out, align_corners, scale, taps.index);
    for (size_t k = 0; k < 4; k++) {
      taps.weight[k] = at::tensor(weights[k], at::TensorOptions().dtype(opmath)).to(like.device());
    }
  });
  return taps;
}

// sum over the taps of source.index_select(dim, tap's positions) * tap's weights along dim
at::Tensor cubic_pass(const at::Tensor& source, int64_t dim, const CubicTaps& taps) {
  std::vector<int64_t> shape(static_cast<size_t>(source.dim()), 1);
  shape[static_cast<size_t>(dim)] = -1;
  at::Tensor sum;
  for (size_t k = 0; k < 4; k++) {
    const at::Tensor term = source.index_select(dim, positions(taps.index[k], source.device())) *
                            taps.weight[k].view(shape);
    sum = k == 0 ? term : sum + term;
  }
  return sum;
}

at::Tensor cubic_pass_backward(const at::Tensor& grad, int64_t dim, int64_t size,
                               const CubicTaps& taps) {
  std::vector<int64_t> shape(static_cast<size_t>(grad.dim()), 1);
  shape[static_cast<size_t>(dim)] = -1;
  std::vector<int64_t> sizes = grad.sizes().vec();
  sizes[static_cast<size_t>(dim)] = size;
  at::Tensor result = at::zeros(sizes, grad.options());
  for (size_t k = 0; k < 4; k++) {
    result.index_add_(dim, positions(taps.index[k], grad.device()),
                      grad * taps.weight[k].view(shape));
  }
  return result;
}

at::Tensor& upsample_bicubic2d_out(const at::Tensor& self, c10::SymIntArrayRef output_size,
                                   bool align_corners, std::optional<double> scales_h,
                                   std::optional<double> scales_w, at::Tensor& out) {
  const at::Tensor shape = at::_ops::upsample_bicubic2d::call(to_meta(self), output_size,
                                                              align_corners, scales_h, scales_w);
  if (!floating({&self}) || self.dim() != 4 || shape.numel() == 0) {
    return at::native::call_fallback_fn_symint<
        &cpu_fallback_boxed, at::_ops::upsample_bicubic2d_out>::call(self, output_size,
                                                                     align_corners, scales_h,
                                                                     scales_w, out);
  }
  const at::ScalarType opmath = at::toOpMathType(self.scalar_type());
  const CubicTaps across = cubic_taps(self, self.size(3), shape.size(3), align_corners, scales_w);
  const CubicTaps down = cubic_taps(self, self.size(2), shape.size(2), align_corners, scales_h);
  const at::Tensor result = cubic_pass(cubic_pass(self.to(opmath), 3, across), 2, down);
  return assign_out(out, result.to(self.scalar_type()));
}

at::Tensor& upsample_bicubic2d_backward_out(const at::Tensor& grad_output,
                                            c10::SymIntArrayRef output_size,
                                            c10::SymIntArrayRef input_size, bool align_corners,
                                            std::optional<double> scales_h,
                                            std::optional<double> scales_w,
                                            at::Tensor& grad_input) {
  if (!floating({&grad_output}) || grad_output.dim() != 4 || input_size.size() != 4 ||
      output_size.size() != 2) {
    return at::native::call_fallback_fn_symint<
        &cpu_fallback_boxed, at::_ops::upsample_bicubic2d_backward_grad_input>::call(grad_output,
                                                                                     output_size,
                                                                                     input_size,
                                                                                     align_corners,
                                                                                     scales_h,
                                                                                     scales_w,
                                                                                     grad_input);
  }
  const std::vector<int64_t> in = C10_AS_INTARRAYREF_SLOW(input_size).vec();
  const std::vector<int64_t> out = C10_AS_INTARRAYREF_SLOW(output_size).vec();
  TORCH_CHECK(grad_output.size(2) == out[0] && grad_output.size(3) == out[1],
              "upsample_bicubic2d_backward: expected grad_output of spatial size ", out, ", got ",
              grad_output.sizes());
  const at::ScalarType opmath = at::toOpMathType(grad_output.scalar_type());
  const CubicTaps across = cubic_taps(grad_output, in[3], out[1], align_corners, scales_w);
  const CubicTaps down = cubic_taps(grad_output, in[2], out[0], align_corners, scales_h);
  const at::Tensor rows = cubic_pass_backward(grad_output.to(opmath), 2, in[2], down);
  const at::Tensor result = cubic_pass_backward(rows, 3, in[3], across);
  return assign_out(grad_input, result.to(grad_output.scalar_type()));
}

// adaptive_max_pool2d and its backward -- CPU, CUDA and MPS have kernels.  Where every output
// cell's window is the same (each input side a multiple of the output's: global max pooling,
// halving), it is max_pool2d with that window as kernel and stride, whose indices are the
// same flat positions in the plane; other sizes keep the CPU fallback.
std::optional<std::array<int64_t, 2>> uniform_window(const at::Tensor& self,
                                                     at::IntArrayRef output_size) {
  if (!floating({&self}) || self.dim() < 3 || output_size.size() != 2) return std::nullopt;
  const int64_t h = self.size(-2), w = self.size(-1);
  if (output_size[0] <= 0 || output_size[1] <= 0 || h % output_size[0] != 0 ||
      w % output_size[1] != 0 || self.numel() == 0) {
    return std::nullopt;
  }
  return std::array<int64_t, 2>{h / output_size[0], w / output_size[1]};
}

std::tuple<at::Tensor&, at::Tensor&> adaptive_max_pool2d_out(const at::Tensor& self,
                                                             at::IntArrayRef output_size,
                                                             at::Tensor& out, at::Tensor& indices) {
  const auto shapes = at::_ops::adaptive_max_pool2d::call(to_meta(self), output_size);
  const auto window = uniform_window(self, output_size);
  if (!window.has_value()) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed,
                                        at::_ops::adaptive_max_pool2d_out>::call(self, output_size,
                                                                                 out, indices);
  }
  const auto [values, positions] =
      at::max_pool2d_with_indices(self, *window, *window, {0, 0}, {1, 1}, false);
  assign_out(out, values.view(std::get<0>(shapes).sizes()));
  assign_out(indices, positions.view(std::get<1>(shapes).sizes()));
  return {out, indices};
}

at::Tensor& adaptive_max_pool2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                             const at::Tensor& indices, at::Tensor& grad_input) {
  const std::vector<int64_t> output_size = {grad_output.size(-2), grad_output.size(-1)};
  const auto window = grad_output.dim() >= 3 ? uniform_window(self, output_size) : std::nullopt;
  if (!window.has_value() || !floating({&grad_output})) {
    return at::native::call_fallback_fn<
        &cpu_fallback_boxed, at::_ops::adaptive_max_pool2d_backward_grad_input>::call(grad_output,
                                                                                      self, indices,
                                                                                      grad_input);
  }
  return assign_out(
      grad_input, at::max_pool2d_with_indices_backward(grad_output, self, *window, *window, {0, 0},
                                                       {1, 1}, false, indices));
}

// ---- Factories: linspace, randperm ----

// linspace -- CPU, CUDA and MPS have kernels (diffusion schedules, positional tables).  The
// CPU's formula, in the output's type: the first half counted up from start, the second down
// from end, so both ends are exact.  Integer outputs keep the CPU fallback (the CPU computes
// them in double).
at::Tensor& linspace_out(const at::Scalar& start, const at::Scalar& end, int64_t steps,
                         at::Tensor& out) {
  TORCH_CHECK(steps >= 0, "number of steps must be non-negative");
  if (!at::isFloatingType(out.scalar_type())) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::linspace_out>::call(
        start, end, steps, out);
  }
  if (out.numel() != steps) out.resize_({steps});  // the CPU resizes without a warning
  if (steps == 0) return out;
  if (steps == 1) return out.fill_(start);
  double step = 0.0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "linspace", [&] {
    step = static_cast<double>((end.to<scalar_t>() - start.to<scalar_t>()) /
                               static_cast<scalar_t>(steps - 1));
  });
  const at::Tensor index = at::arange(steps, out.options());
  const at::Tensor rising = index * step + start;
  const at::Tensor falling = at::rsub(at::rsub(index, steps - 1) * step, end);
  return out.copy_(at::where(index < steps / 2, rising, falling));
}

// randperm -- CPU, CUDA and MPS have kernels.  CUDA's way: a random 63-bit key per element
// from the device's generator, and the permutation that sorts them (a stable sort, so equal
// keys, one pair in 2^63 / n^2, keep an order).  int64 outputs; others keep the CPU fallback,
// with the CPU's range checks.
at::Tensor& randperm_out(int64_t n, std::optional<at::Generator> generator, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  if (out.scalar_type() != at::kLong) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed,
                                        at::_ops::randperm_generator_out>::call(n, generator, out);
  }
  at::native::resize_output(out, {n});
  if (n == 0) return out;
  const at::Tensor keys = at::empty({n}, out.options()).random_(generator);
  return out.copy_(std::get<1>(at::sort(keys, /*stable=*/true, 0, /*descending=*/false)));
}

// ---- Elementwise: prelu, xlogy, bernoulli_ with a tensor p; linalg.cross ----

// _prelu_kernel and its backward -- CPU, CUDA and MPS have kernels (ATen's prelu reshapes the
// weight to broadcast first).  The CPU's expressions; both gradients at the broadcast shape,
// which autograd sums to the weight's.
at::Tensor prelu_kernel(const at::Tensor& self, const at::Tensor& weight) {
  if (!floating({&self, &weight})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::_prelu_kernel>::call(self,
                                                                                            weight);
  }
  check_devices("_prelu_kernel", {{&self, "self"}, {&weight, "weight"}});
  return at::where(self > 0, self, weight * self);
}

std::tuple<at::Tensor, at::Tensor> prelu_kernel_backward(const at::Tensor& grad_output,
                                                         const at::Tensor& self,
                                                         const at::Tensor& weight) {
  if (!floating({&grad_output, &self, &weight})) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed,
                                        at::_ops::_prelu_kernel_backward>::call(grad_output, self,
                                                                                weight);
  }
  check_devices("_prelu_kernel_backward",
                {{&grad_output, "grad_output"}, {&self, "self"}, {&weight, "weight"}});
  const at::Tensor positive = self > 0;
  return {at::where(positive, grad_output, weight * grad_output),
          at::where(positive, 0, self * grad_output)};
}

// xlogy -- CPU, CUDA and MPS have kernels (kl_div, distributions' entropies).  The CPU's
// rules: NaN where y is NaN, else 0 where x is 0 (also for y = 0 or inf), else x * log(y);
// integers computed in the default float type.  A number operand (a CPU 0-d tensor) is moved
// to the device once its type has counted as a number's.
at::Tensor& xlogy_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  if (self.is_complex() || other.is_complex()) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::xlogy_OutTensor>::call(
        self, other, out);
  }
  at::ScalarType dtype = at::result_type(self, other);
  if (at::isIntegralType(dtype, /*includeBool=*/true)) {
    dtype = c10::typeMetaToScalarType(c10::get_default_dtype());
  }
  // The device of the call: a number (a CPU 0-d tensor) takes the other operand's.
  const bool self_number = self.device().is_cpu() && self.dim() == 0;
  const bool other_number = other.device().is_cpu() && other.dim() == 0;
  const c10::Device device = self_number ? other.device() : self.device();
  if (!self_number && !other_number && other.device() != device) {
    fail_device_mismatch(device, other.device(), "other", "xlogy");
  }
  const at::Tensor x = self.to(device, dtype);
  const at::Tensor y = other.to(device, dtype);
  const at::Tensor value = at::where(at::isnan(y), y, at::where(x == 0, 0, x * at::log(y)));
  return assign_out(out, value);
}

// bernoulli_ with a tensor of probabilities -- CPU, CUDA and MPS have kernels (torch.bernoulli(p)
// calls it).  A uniform draw from the device's generator below p.  The CPU raises for a p outside
// [0, 1]: one value is read back (whether all lie inside), except while a graph is captured.
at::Tensor& bernoulli_tensor_(at::Tensor& self, const at::Tensor& p,
                              std::optional<at::Generator> generator) {
  if (!floating({&p}) || self.is_complex()) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::bernoulli__Tensor>::call(
        self, p, generator);
  }
  check_devices("bernoulli_", {{&self, "self"}, {&p, "p"}});
  const at::Tensor probability = p.expand(self.sizes());
  if (p.numel() > 0 && !graph::is_current_stream_capturing()) {
    TORCH_CHECK(at::logical_and(p >= 0, p <= 1).all().item<bool>(),
                "bernoulli_: expected every element of p to be in [0, 1]");
  }
  const at::Tensor uniform =
      at::empty(self.sizes(), p.options().dtype(at::toOpMathType(p.scalar_type())))
          .uniform_(0, 1, generator);
  return self.copy_(uniform < probability);
}

// linalg_cross -- CPU, CUDA and MPS have kernels.  ATen's meta function makes the checks and
// gives the shape; the product is the components rolled by one either way:
// a x b = roll(a, -1) * roll(b, 1) - roll(a, 1) * roll(b, -1) along the dimension of 3.
at::Tensor& linalg_cross_out(const at::Tensor& self, const at::Tensor& other, int64_t dim,
                             at::Tensor& out) {
  if (self.is_complex() || other.is_complex() || self.scalar_type() == at::kBool) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::linalg_cross_out>::call(
        self, other, dim, out);
  }
  const at::Tensor shape = at::_ops::linalg_cross::call(to_meta(self), to_meta(other), dim);
  check_devices("linalg_cross", {{&self, "self"}, {&other, "other"}});
  dim = at::maybe_wrap_dim(dim, shape.dim());
  const at::Tensor a = self.expand(shape.sizes());
  const at::Tensor b = other.expand(shape.sizes());
  const int64_t up = -1;
  const int64_t down = 1;
  return assign_out(out, at::roll(a, up, dim) * at::roll(b, down, dim) -
                             at::roll(a, down, dim) * at::roll(b, up, dim));
}

}  // namespace

namespace {

// The indices as a vendor's index kernels all take them: each boolean (or uint8) mask
// replaced by the long indices of its nonzero elements, one per dimension it covers (ATen's
// expandTensors, with its check of the mask's shape), and indices on another device (a CPU
// index of a device tensor, which PyTorch allows) moved to self's.  Nothing when no index
// needed either, so that a call the vendor declines for another reason is not retried.
std::optional<c10::List<std::optional<at::Tensor>>> device_long_indices(
    const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  c10::List<std::optional<at::Tensor>> result;
  bool changed = false;
  int64_t d = 0;  // the dimension of self the next index applies to
  for (size_t i = 0; i < indices.size(); i++) {
    const std::optional<at::Tensor> index = indices.get(i);
    if (!index.has_value() || !index->defined()) {
      result.push_back(std::nullopt);
      d++;
      continue;
    }
    at::Tensor t = *index;
    if (t.device() != self.device()) {  // a CPU index is allowed; another device's is not
      if (!t.device().is_cpu()) fail_device_mismatch(self.device(), t.device(), "indices", "index");
      t = t.to(self.device());
      changed = true;
    }
    if (t.scalar_type() != at::kBool && t.scalar_type() != at::kByte) {
      result.push_back(t);
      d++;
      continue;
    }
    for (int64_t k = 0; k < t.dim(); k++) {
      TORCH_CHECK_INDEX(d + k < self.dim() && t.size(k) == self.size(d + k),
                        "The shape of the mask ", t.sizes(), " at index ", k,
                        " does not match the shape of the indexed tensor ", self.sizes(),
                        " at index ", d + k);
    }
    const at::Tensor coordinates = at::nonzero(t);
    for (int64_t k = 0; k < t.dim(); k++) result.push_back(coordinates.select(1, k));
    d += t.dim();
    changed = true;
  }
  if (!changed) return std::nullopt;
  return result;
}

}  // namespace

// index.Tensor_out and _index_put_impl_ where the vendor's kernel declines the call: with
// masks or indices on another device (opencl's kernels take neither), the call again with
// device long indices; otherwise the CPU fallback.
at::Tensor& index_declined(const at::Tensor& self,
                           const c10::List<std::optional<at::Tensor>>& indices, at::Tensor& out) {
  if (out.numel() == 0) return out;  // the meta function sized it: nothing to gather
  const auto expanded = device_long_indices(self, indices);
  if (!expanded.has_value()) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::index_Tensor_out>::call(
        self, indices, out);
  }
  return at::_ops::index_Tensor_out::call(self, *expanded, out);
}

at::Tensor& index_put_declined(at::Tensor& self,
                               const c10::List<std::optional<at::Tensor>>& indices,
                               const at::Tensor& values, bool accumulate, bool unsafe) {
  // A number assigned (`x[mask] = 0`) is a CPU 0-d tensor, which PyTorch allows; another
  // device's values are not.
  const bool cpu_number = values.device().is_cpu() && values.dim() == 0;
  if (values.device() != self.device() && !cpu_number) {
    fail_device_mismatch(self.device(), values.device(), "values", "index_put_");
  }
  auto expanded = device_long_indices(self, indices);
  if (expanded.has_value()) {  // a mask with no element set writes nothing
    for (size_t i = 0; i < expanded->size(); i++) {
      const std::optional<at::Tensor> index = expanded->get(i);
      if (index.has_value() && index->defined() && index->numel() == 0) return self;
    }
  }
  if (!expanded.has_value() && values.device() == self.device()) {
    return at::native::call_fallback_fn<&cpu_fallback_boxed, at::_ops::_index_put_impl_>::call(
        self, indices, values, accumulate, unsafe);
  }
  return at::_ops::_index_put_impl_::call(self, expanded.has_value() ? *expanded : indices,
                                          values.to(self.device()), accumulate, unsafe);
}

const std::vector<std::string>& composite_ops() {
  static const std::vector<std::string> ops = {"equal",
                                               "native_group_norm",
                                               "native_group_norm_backward",
                                               "addr.out",
                                               "floor_divide",
                                               "floor_divide.out",
                                               "floor_divide_.Tensor",
                                               "roll",
                                               "var_mean.correction",
                                               "std_mean.correction"};
  return ops;
}

std::vector<std::string> register_default_composites(
    torch::Library& library, const std::function<bool(const std::string&)>& vendor_has) {
  std::vector<std::string> registered;
  // Registers `fn` for `op` unless the vendor publishes `kernel` or `op` has a device kernel
  // already (the generated wrapper of dot.out registers dot too).
  auto add = [&](const char* kernel, const char* op, auto fn) {
    if (vendor_has(kernel) || vendor_has(op)) return;
    std::optional<c10::OperatorHandle> handle = find_operator(op);
    if (!handle.has_value() || handle->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) {
      return;
    }
    library.impl(op, fn);
    registered.emplace_back(op);
  };
  add("dot", "dot", TORCH_FN(dot_product));
  add("vdot", "vdot", TORCH_FN(vdot_product));
  add("addmv.out", "addmv", TORCH_FN(addmv));
  add("addmv.out", "addmv_", TORCH_FN(addmv_));
  add("addmv.out", "addmv.out", TORCH_FN(addmv_out));
  add("trace", "trace", TORCH_FN(trace));
  add("glu.out", "glu", TORCH_FN(glu));
  add("glu.out", "glu.out", TORCH_FN(glu_out));
  add("glu_backward.grad_input", "glu_backward", TORCH_FN(glu_backward));
  add("glu_backward.grad_input", "glu_backward.grad_input", TORCH_FN(glu_backward_out));
  add("log_sigmoid_forward.output", "log_sigmoid_forward", TORCH_FN(log_sigmoid_forward));
  add("log_sigmoid_forward.output", "log_sigmoid_forward.output",
      TORCH_FN(log_sigmoid_forward_out));
  add("log_sigmoid_backward.grad_input", "log_sigmoid_backward", TORCH_FN(log_sigmoid_backward));
  add("log_sigmoid_backward.grad_input", "log_sigmoid_backward.grad_input",
      TORCH_FN(log_sigmoid_backward_out));
  add("elu.out", "elu", TORCH_FN(elu));
  add("elu.out", "elu_", TORCH_FN(elu_));
  add("elu.out", "elu.out", TORCH_FN(elu_out));
  add("elu_backward.grad_input", "elu_backward", TORCH_FN(elu_backward));
  add("elu_backward.grad_input", "elu_backward.grad_input", TORCH_FN(elu_backward_out));
  add("smooth_l1_loss.out", "smooth_l1_loss", TORCH_FN(smooth_l1_loss));
  add("smooth_l1_loss.out", "smooth_l1_loss.out", TORCH_FN(smooth_l1_loss_out));
  add("smooth_l1_loss_backward.grad_input", "smooth_l1_loss_backward.grad_input",
      TORCH_FN(smooth_l1_loss_backward_out));
  add("huber_loss.out", "huber_loss", TORCH_FN(huber_loss));
  add("huber_loss.out", "huber_loss.out", TORCH_FN(huber_loss_out));
  add("huber_loss_backward.out", "huber_loss_backward.out", TORCH_FN(huber_loss_backward_out));
  add("binary_cross_entropy.out", "binary_cross_entropy", TORCH_FN(binary_cross_entropy));
  add("binary_cross_entropy.out", "binary_cross_entropy.out", TORCH_FN(binary_cross_entropy_out));
  add("binary_cross_entropy_backward.grad_input", "binary_cross_entropy_backward",
      TORCH_FN(binary_cross_entropy_backward));
  add("binary_cross_entropy_backward.grad_input", "binary_cross_entropy_backward.grad_input",
      TORCH_FN(binary_cross_entropy_backward_out));
  add("var.correction_out", "var.correction", TORCH_FN(var_correction));
  add("var.correction_out", "var.correction_out", TORCH_FN(var_out));
  add("std.correction_out", "std.correction", TORCH_FN(std_correction));
  add("std.correction_out", "std.correction_out", TORCH_FN(std_out));
  add("nan_to_num.out", "nan_to_num", TORCH_FN(nan_to_num));
  add("nan_to_num.out", "nan_to_num_", TORCH_FN(nan_to_num_));
  add("nan_to_num.out", "nan_to_num.out", TORCH_FN(nan_to_num_out));
  add("flip.out", "flip", TORCH_FN(flip));
  add("index_fill_.int_Scalar", "index_fill_.int_Scalar", TORCH_FN(index_fill_scalar));
  add("index_fill_.int_Tensor", "index_fill_.int_Tensor", TORCH_FN(index_fill_tensor));
  add("index_copy.out", "index_copy.out", TORCH_FN(index_copy_out));
  add("nonzero", "nonzero", TORCH_FN(nonzero_coordinates));
  add("nonzero.out", "nonzero.out", TORCH_FN(nonzero_out));
  add("masked_select", "masked_select", TORCH_FN(masked_select_values));
  add("masked_select.out", "masked_select.out", TORCH_FN(masked_select_out));
  add("masked_scatter_", "masked_scatter_", TORCH_FN(masked_scatter_values_));
  add("prod", "prod", TORCH_FN(prod_all));
  add("_unique2", "_unique2", TORCH_FN(unique2));
  add("im2col", "im2col", TORCH_FN(im2col));
  add("col2im", "col2im", TORCH_FN(col2im));
  add("searchsorted.Tensor", "searchsorted.Tensor", TORCH_FN(searchsorted));
  add("searchsorted.Scalar", "searchsorted.Scalar", TORCH_FN(searchsorted_scalar));
  add("bucketize.Tensor", "bucketize.Tensor", TORCH_FN(bucketize));
  add("upsample_linear1d.out", "upsample_linear1d.out", TORCH_FN(upsample_linear1d_out));
  add("upsample_linear1d_backward.grad_input", "upsample_linear1d_backward.grad_input",
      TORCH_FN(upsample_linear1d_backward_out));
  add("upsample_bicubic2d.out", "upsample_bicubic2d.out", TORCH_FN(upsample_bicubic2d_out));
  add("upsample_bicubic2d_backward.grad_input", "upsample_bicubic2d_backward.grad_input",
      TORCH_FN(upsample_bicubic2d_backward_out));
  add("adaptive_max_pool2d.out", "adaptive_max_pool2d.out", TORCH_FN(adaptive_max_pool2d_out));
  add("adaptive_max_pool2d_backward.grad_input", "adaptive_max_pool2d_backward.grad_input",
      TORCH_FN(adaptive_max_pool2d_backward_out));
  add("linspace.out", "linspace.out", TORCH_FN(linspace_out));
  add("randperm.generator_out", "randperm.generator_out", TORCH_FN(randperm_out));
  add("_prelu_kernel", "_prelu_kernel", TORCH_FN(prelu_kernel));
  add("_prelu_kernel_backward", "_prelu_kernel_backward", TORCH_FN(prelu_kernel_backward));
  add("xlogy.OutTensor", "xlogy.OutTensor", TORCH_FN(xlogy_out));
  add("bernoulli_.Tensor", "bernoulli_.Tensor", TORCH_FN(bernoulli_tensor_));
  add("linalg_cross.out", "linalg_cross.out", TORCH_FN(linalg_cross_out));
#define TB_PAD(name, mode)                                                    \
  add(#name ".out", #name, TORCH_FN((pad<mode, at::_ops::name>)));            \
  add(#name ".out", #name ".out", TORCH_FN((pad_out<mode, at::_ops::name>))); \
  add(#name "_backward.grad_input", #name "_backward",                        \
      TORCH_FN((pad_backward<mode, at::_ops::name##_backward>)));             \
  add(#name "_backward.grad_input", #name "_backward.grad_input",             \
      TORCH_FN((pad_backward_out<mode, at::_ops::name##_backward>)));
  TB_PAD(reflection_pad1d, Pad::kReflect)
  TB_PAD(reflection_pad2d, Pad::kReflect)
  TB_PAD(reflection_pad3d, Pad::kReflect)
  TB_PAD(replication_pad1d, Pad::kReplicate)
  TB_PAD(replication_pad2d, Pad::kReplicate)
  TB_PAD(replication_pad3d, Pad::kReplicate)
#undef TB_PAD
  return registered;
}

}  // namespace torch_backend
