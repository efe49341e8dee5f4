// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Operators ATen selects only for tensors that are not on the CPU and gives no CPU kernel, so
// the CPU fallback has nothing to run for them:
//
//  - `convolution_overrideable` and its backward: what `at::convolution` calls for an
//    out-of-tree device (its only kernel is a CompositeExplicitAutograd one that raises);
//  - the fused RNN cells `_thnn_fused_lstm_cell` / `_thnn_fused_gru_cell` and their backwards,
//    which LSTM and GRU choose for PrivateUse1 tensors as for CUDA ones;
//  - CUDA's `mm`/`bmm`/`addmm`/`baddbmm` with an `out_dtype`, the SyncBatchNorm statistics
//    (`batch_norm_stats`, `batch_norm_gather_stats*`, `batch_norm_elemt`,
//    `batch_norm_backward_reduce/elemt`), `_fused_dropout` / `_masked_scale`, and the depthwise
//    convolutions, which users and torch.nn reach by name.
//
// For each, a CPU equivalent: an operator `torch_backend::cpu_<name>` with the original's
// schema whose CPU kernel computes what the CUDA kernel does, from ATen's own CPU operators.  The
// CPU fallback (Fallback.cpp) runs that operator on the CPU copies of the arguments.  Where ATen
// has no Meta kernel either, the same composite is registered for Meta, so the generated wrappers
// (and fake tensors) get output shapes from it. The registry sweep in
// test/python/test_device_only_ops.py fails when a torch release adds a device-only operator that
// is neither here nor explained there.
#include "aten/DeviceOnlyOps.h"

#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <array>
#include <memory>
#include <optional>
#include <unordered_map>

#include "aten/KernelCall.h"

namespace torch_backend {
namespace {

using at::Tensor;
using c10::SymInt;
using c10::SymIntArrayRef;
using OptionalTensor = std::optional<Tensor>;

bool present(const OptionalTensor& t) { return t.has_value() && t->defined(); }

// ---------------------------------------------------------------------------------------------
// Convolution: the overrideable pair is convolution / convolution_backward by another name.

Tensor convolution_equivalent(const Tensor& input, const Tensor& weight, const OptionalTensor& bias,
                              SymIntArrayRef stride, SymIntArrayRef padding,
                              SymIntArrayRef dilation, bool transposed,
                              SymIntArrayRef output_padding, SymInt groups) {
  return at::convolution_symint(input, weight, bias, stride, padding, dilation, transposed,
                                output_padding, std::move(groups));
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward_equivalent(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, SymIntArrayRef stride,
    SymIntArrayRef padding, SymIntArrayRef dilation, bool transposed, SymIntArrayRef output_padding,
    SymInt groups, std::array<bool, 3> output_mask) {
  // convolution_backward wants the bias's length to produce its gradient: the output channels.
  std::array<SymInt, 1> bias_sizes{transposed ? weight.sym_size(1) * groups : weight.sym_size(0)};
  return at::convolution_backward_symint(
      grad_output, input, weight,
      output_mask[2] ? at::OptionalSymIntArrayRef(bias_sizes) : std::nullopt, stride, padding,
      dilation, transposed, output_padding, std::move(groups), output_mask);
}

// _conv_depthwise2d / conv_depthwise3d: a grouped convolution with one group per channel.
Tensor conv_depthwise_equivalent(const Tensor& self, const Tensor& weight,
                                 SymIntArrayRef kernel_size, const OptionalTensor& bias,
                                 SymIntArrayRef stride, SymIntArrayRef padding,
                                 SymIntArrayRef dilation) {
  TORCH_CHECK(weight.dim() == static_cast<int64_t>(kernel_size.size()) + 2,
              "depthwise convolution: expected a weight of ", kernel_size.size() + 2,
              " dimensions, got ", weight.sizes());
  std::vector<SymInt> no_padding(kernel_size.size(), 0);
  return at::convolution_symint(self, weight, bias, stride, padding, dilation, false, no_padding,
                                self.sym_size(1));
}

Tensor& conv_depthwise2d_out_equivalent(const Tensor& self, const Tensor& weight,
                                        SymIntArrayRef kernel_size, const OptionalTensor& bias,
                                        SymIntArrayRef stride, SymIntArrayRef padding,
                                        SymIntArrayRef dilation, Tensor& out) {
  Tensor result =
      conv_depthwise_equivalent(self, weight, kernel_size, bias, stride, padding, dilation);
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

// ---------------------------------------------------------------------------------------------
// Fused RNN cells, as CUDA's kernels compute them (aten/src/ATen/native/cuda/RNN.cu), including
// the workspace layout their backwards read: LSTM [i, f, g, o] after activation; GRU [r, z, n,
// hx, hn + b_hn].

std::tuple<Tensor, Tensor, Tensor> lstm_cell_equivalent(const Tensor& input_gates,
                                                        const Tensor& hidden_gates,
                                                        const Tensor& cx,
                                                        const OptionalTensor& input_bias,
                                                        const OptionalTensor& hidden_bias) {
  TORCH_CHECK(present(input_bias) == present(hidden_bias),
              "_thnn_fused_lstm_cell: input_bias and hidden_bias must both be given or both be "
              "omitted");
  Tensor gates = input_gates + hidden_gates;
  if (present(input_bias)) gates = gates + *input_bias + *hidden_bias;
  std::vector<Tensor> chunk = gates.chunk(4, 1);
  Tensor i = chunk[0].sigmoid(), f = chunk[1].sigmoid(), g = chunk[2].tanh();
  Tensor o = chunk[3].sigmoid();
  Tensor cy = f * cx + i * g;
  Tensor hy = o * cy.tanh();
  return {hy, cy, at::cat({i, f, g, o}, 1)};
}

std::tuple<Tensor, Tensor, Tensor> lstm_cell_backward_equivalent(const OptionalTensor& grad_hy,
                                                                 const OptionalTensor& grad_cy,
                                                                 const Tensor& cx, const Tensor& cy,
                                                                 const Tensor& workspace,
                                                                 bool has_bias) {
  if (!present(grad_hy) && !present(grad_cy)) return {};
  std::vector<Tensor> chunk = workspace.chunk(4, 1);
  const Tensor &i = chunk[0], &f = chunk[1], &g = chunk[2], &o = chunk[3];
  Tensor tanh_cy = cy.tanh();
  Tensor grad_c = present(grad_cy) ? *grad_cy : at::zeros_like(cx);
  Tensor grad_o;
  if (present(grad_hy)) {
    grad_c = grad_c + *grad_hy * o * (1 - tanh_cy * tanh_cy);
    grad_o = *grad_hy * tanh_cy * (1 - o) * o;
  } else {
    grad_o = at::zeros_like(o);
  }
  Tensor grad_gates = at::cat(
      {grad_c * g * (1 - i) * i, grad_c * cx * (1 - f) * f, grad_c * i * (1 - g * g), grad_o}, 1);
  Tensor grad_bias = has_bias ? grad_gates.sum(0) : Tensor();
  return {grad_gates, grad_c * f, grad_bias};
}

std::tuple<Tensor, Tensor> gru_cell_equivalent(const Tensor& input_gates,
                                               const Tensor& hidden_gates, const Tensor& hx,
                                               const OptionalTensor& input_bias,
                                               const OptionalTensor& hidden_bias) {
  TORCH_CHECK(present(input_bias) == present(hidden_bias),
              "_thnn_fused_gru_cell: input_bias and hidden_bias must both be given or both be "
              "omitted");
  Tensor in = present(input_bias) ? input_gates + *input_bias : input_gates;
  Tensor hid = present(hidden_bias) ? hidden_gates + *hidden_bias : hidden_gates;
  std::vector<Tensor> ic = in.chunk(3, 1), hc = hid.chunk(3, 1);
  Tensor r = (ic[0] + hc[0]).sigmoid();
  Tensor z = (ic[1] + hc[1]).sigmoid();
  Tensor n = (ic[2] + r * hc[2]).tanh();
  Tensor hy = n + z * (hx - n);
  return {hy, at::cat({r, z, n, hx, hc[2]}, 1)};
}

std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor> gru_cell_backward_equivalent(
    const Tensor& grad_hy, const Tensor& workspace, bool has_bias) {
  std::vector<Tensor> w = workspace.chunk(5, 1);
  const Tensor &r = w[0], &z = w[1], &n = w[2], &hx = w[3], &hn = w[4];
  Tensor grad_z = grad_hy * (hx - n) * (1 - z) * z;
  Tensor grad_n = grad_hy * (1 - z) * (1 - n * n);
  Tensor grad_r = grad_n * hn * (1 - r) * r;
  Tensor grad_input_gates = at::cat({grad_r, grad_z, grad_n}, 1);
  Tensor grad_hidden_gates = at::cat({grad_r, grad_z, grad_n * r}, 1);
  Tensor grad_input_bias, grad_hidden_bias;
  if (has_bias) {
    grad_input_bias = grad_input_gates.sum(0);
    grad_hidden_bias = grad_hidden_gates.sum(0);
  }
  return {grad_input_gates, grad_hidden_gates, grad_hy * z, grad_input_bias, grad_hidden_bias};
}

// ---------------------------------------------------------------------------------------------
// Matrix products with an output dtype (CUDA's Blas.cpp): float16/bfloat16 inputs may produce
// float32, accumulated without rounding to the input dtype in between.

void check_out_dtype(const char* op, const Tensor& a, const Tensor& b, at::ScalarType out_dtype) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), op, ": input dtypes must be the same, got ",
              a.scalar_type(), " and ", b.scalar_type());
  TORCH_CHECK(out_dtype == a.scalar_type() ||
                  (out_dtype == at::kFloat &&
                   (a.scalar_type() == at::kHalf || a.scalar_type() == at::kBFloat16)),
              op, ": out_dtype must be the same as the input dtype or float32 for float16 and ",
              "bfloat16 inputs, got ", out_dtype, " for ", a.scalar_type(), " inputs");
}

Tensor& into(Tensor& out, const Tensor& result, at::ScalarType out_dtype, const char* op) {
  TORCH_CHECK(out.scalar_type() == out_dtype, op, ": out_dtype (", out_dtype,
              ") must be the dtype of the out tensor (", out.scalar_type(), ")");
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

Tensor mm_dtype_equivalent(const Tensor& self, const Tensor& mat2, at::ScalarType out_dtype) {
  check_out_dtype("mm", self, mat2, out_dtype);
  return at::mm(self.to(out_dtype), mat2.to(out_dtype));
}

Tensor& mm_dtype_out_equivalent(const Tensor& self, const Tensor& mat2, at::ScalarType out_dtype,
                                Tensor& out) {
  return into(out, mm_dtype_equivalent(self, mat2, out_dtype), out_dtype, "mm");
}

Tensor bmm_dtype_equivalent(const Tensor& self, const Tensor& mat2, at::ScalarType out_dtype) {
  check_out_dtype("bmm", self, mat2, out_dtype);
  return at::bmm(self.to(out_dtype), mat2.to(out_dtype));
}

Tensor& bmm_dtype_out_equivalent(const Tensor& self, const Tensor& mat2, at::ScalarType out_dtype,
                                 Tensor& out) {
  return into(out, bmm_dtype_equivalent(self, mat2, out_dtype), out_dtype, "bmm");
}

Tensor addmm_dtype_equivalent(const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                              at::ScalarType out_dtype, const at::Scalar& beta,
                              const at::Scalar& alpha) {
  check_out_dtype("addmm", mat1, mat2, out_dtype);
  return at::addmm(self.to(out_dtype), mat1.to(out_dtype), mat2.to(out_dtype), beta, alpha);
}

Tensor& addmm_dtype_out_equivalent(const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                                   at::ScalarType out_dtype, const at::Scalar& beta,
                                   const at::Scalar& alpha, Tensor& out) {
  return into(out, addmm_dtype_equivalent(self, mat1, mat2, out_dtype, beta, alpha), out_dtype,
              "addmm");
}

Tensor baddbmm_dtype_equivalent(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
                                at::ScalarType out_dtype, const at::Scalar& beta,
                                const at::Scalar& alpha) {
  check_out_dtype("baddbmm", batch1, batch2, out_dtype);
  return at::baddbmm(self.to(out_dtype), batch1.to(out_dtype), batch2.to(out_dtype), beta, alpha);
}

Tensor& baddbmm_dtype_out_equivalent(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
                                     at::ScalarType out_dtype, const at::Scalar& beta,
                                     const at::Scalar& alpha, Tensor& out) {
  return into(out, baddbmm_dtype_equivalent(self, batch1, batch2, out_dtype, beta, alpha),
              out_dtype, "baddbmm");
}

// ---------------------------------------------------------------------------------------------
// SyncBatchNorm's pieces (CUDA's Normalization.cuh): per-channel statistics over every
// dimension but 1, kept in float for float16/bfloat16 inputs.

std::vector<int64_t> all_but_channels(const Tensor& t) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); d++) {
    if (d != 1) dims.push_back(d);
  }
  return dims;
}

// Shape broadcasting a per-channel vector against `t`.
std::vector<int64_t> channel_shape(const Tensor& t) {
  std::vector<int64_t> shape(static_cast<size_t>(t.dim()), 1);
  shape[1] = t.size(1);
  return shape;
}

at::ScalarType accumulate_type(const Tensor& t) {
  return at::isReducedFloatingType(t.scalar_type()) ? at::kFloat : t.scalar_type();
}

std::tuple<Tensor, Tensor> batch_norm_stats_equivalent(const Tensor& input, double eps) {
  TORCH_CHECK(input.dim() >= 2, "batch_norm_stats: expected an input with a channel dimension, ",
              "got ", input.sizes());
  auto [var, mean] = at::var_mean(input.to(accumulate_type(input)), all_but_channels(input),
                                  /*correction=*/0, /*keepdim=*/false);
  return {mean, (var + eps).rsqrt()};
}

Tensor batch_norm_elemt_equivalent(const Tensor& input, const OptionalTensor& weight,
                                   const OptionalTensor& bias, const Tensor& mean,
                                   const Tensor& invstd, double /*eps*/) {
  std::vector<int64_t> shape = channel_shape(input);
  Tensor out = (input.to(accumulate_type(input)) - mean.view(shape)) * invstd.view(shape);
  if (present(weight)) out = out * weight->view(shape);
  if (present(bias)) out = out + bias->view(shape);
  return out.to(input.scalar_type());
}

Tensor& batch_norm_elemt_out_equivalent(const Tensor& input, const OptionalTensor& weight,
                                        const OptionalTensor& bias, const Tensor& mean,
                                        const Tensor& invstd, double eps, Tensor& out) {
  Tensor result = batch_norm_elemt_equivalent(input, weight, bias, mean, invstd, eps);
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

// Combines per-process (mean, invstd, count) rows into the global statistics and updates the
// running statistics (with the unbiased variance), as batch_norm_reduce_statistics does.
std::tuple<Tensor, Tensor> batch_norm_gather_stats_with_counts_equivalent(
    const Tensor& /*input*/, const Tensor& mean, const Tensor& invstd,
    const OptionalTensor& running_mean, const OptionalTensor& running_var, double momentum,
    double eps, const Tensor& counts) {
  Tensor n = counts.to(mean.scalar_type()).view({-1, 1});
  Tensor total = n.sum(0);
  Tensor global_mean = (mean * n).sum(0) / total;
  Tensor variance = invstd.pow(-2) - eps;
  Tensor sum_squares = (n * (variance + (mean - global_mean).pow(2))).sum(0);
  Tensor global_invstd = (sum_squares / total + eps).rsqrt();
  if (present(running_mean)) {
    running_mean->copy_(*running_mean * (1 - momentum) + global_mean * momentum);
  }
  if (present(running_var)) {
    Tensor unbiased = sum_squares / (total - 1);
    running_var->copy_(*running_var * (1 - momentum) + unbiased * momentum);
  }
  return {global_mean, global_invstd};
}

std::tuple<Tensor, Tensor> batch_norm_gather_stats_equivalent(
    const Tensor& input, const Tensor& mean, const Tensor& invstd,
    const OptionalTensor& running_mean, const OptionalTensor& running_var, double momentum,
    double eps, int64_t count) {
  Tensor counts = at::full({mean.size(0)}, count, mean.options());
  return batch_norm_gather_stats_with_counts_equivalent(input, mean, invstd, running_mean,
                                                        running_var, momentum, eps, counts);
}

std::tuple<Tensor, Tensor, Tensor, Tensor> batch_norm_backward_reduce_equivalent(
    const Tensor& grad_out, const Tensor& input, const Tensor& mean, const Tensor& invstd,
    const OptionalTensor& weight, bool input_g, bool weight_g, bool bias_g) {
  std::vector<int64_t> dims = all_but_channels(input), shape = channel_shape(input);
  at::ScalarType acc = accumulate_type(input);
  Tensor grad = grad_out.to(acc);
  Tensor sum_dy = grad.sum(dims);
  Tensor sum_dy_xmu = (grad * (input.to(acc) - mean.view(shape))).sum(dims);
  at::ScalarType parameter = present(weight) ? weight->scalar_type() : input.scalar_type();
  Tensor grad_weight = weight_g ? (sum_dy_xmu * invstd).to(parameter) : Tensor();
  Tensor grad_bias = bias_g ? sum_dy.to(parameter) : Tensor();
  if (!input_g) sum_dy = sum_dy_xmu = Tensor();
  return {sum_dy, sum_dy_xmu, grad_weight, grad_bias};
}

Tensor batch_norm_backward_elemt_equivalent(const Tensor& grad_out, const Tensor& input,
                                            const Tensor& mean, const Tensor& invstd,
                                            const OptionalTensor& weight, const Tensor& sum_dy,
                                            const Tensor& sum_dy_xmu, const Tensor& count) {
  std::vector<int64_t> shape = channel_shape(input);
  at::ScalarType acc = accumulate_type(input);
  Tensor norm = 1.0 / count.to(acc).sum();
  Tensor grad_mean = (sum_dy * norm).view(shape);
  Tensor projection = (sum_dy_xmu * norm * invstd * invstd).view(shape);
  Tensor scale = present(weight) ? invstd * *weight : invstd;
  Tensor grad = (grad_out.to(acc) - grad_mean - (input.to(acc) - mean.view(shape)) * projection) *
                scale.view(shape);
  return grad.to(input.scalar_type());
}

// ---------------------------------------------------------------------------------------------
// CUDA's older dropout pair: `p` is the probability of keeping an element; the mask is uint8.

std::tuple<Tensor, Tensor> fused_dropout_equivalent(const Tensor& self, double p,
                                                    std::optional<at::Generator> generator) {
  TORCH_CHECK(p >= 0 && p <= 1, "_fused_dropout: the keep probability must be in [0, 1], got ", p);
  Tensor mask = at::empty_like(self, self.options().dtype(at::kByte)).bernoulli_(p, generator);
  return {self * mask * (1.0 / p), mask};
}

Tensor masked_scale_equivalent(const Tensor& self, const Tensor& mask, double scale) {
  TORCH_CHECK(mask.scalar_type() == at::kByte, "_masked_scale: mask should be torch.uint8, got ",
              mask.scalar_type());
  return self * mask * scale;
}

// ---------------------------------------------------------------------------------------------
// The table.

struct Substitute {
  const char* op;  // the aten operator, with overload
  torch::CppFunction (*cpu)();
};

template <auto F>
torch::CppFunction function() {
  return torch::CppFunction::makeFromUnboxedFunction(TORCH_FN(F));
}

const std::vector<Substitute>& substitutes() {
  static const auto* table = new std::vector<Substitute>{
      {"convolution_overrideable", function<convolution_equivalent>},
      {"convolution_backward_overrideable", function<convolution_backward_equivalent>},
      {"_conv_depthwise2d", function<conv_depthwise_equivalent>},
      {"_conv_depthwise2d.out", function<conv_depthwise2d_out_equivalent>},
      {"conv_depthwise3d", function<conv_depthwise_equivalent>},
      {"_thnn_fused_lstm_cell", function<lstm_cell_equivalent>},
      {"_thnn_fused_lstm_cell_backward_impl", function<lstm_cell_backward_equivalent>},
      {"_thnn_fused_gru_cell", function<gru_cell_equivalent>},
      {"_thnn_fused_gru_cell_backward", function<gru_cell_backward_equivalent>},
      {"mm.dtype", function<mm_dtype_equivalent>},
      {"mm.dtype_out", function<mm_dtype_out_equivalent>},
      {"bmm.dtype", function<bmm_dtype_equivalent>},
      {"bmm.dtype_out", function<bmm_dtype_out_equivalent>},
      {"addmm.dtype", function<addmm_dtype_equivalent>},
      {"addmm.dtype_out", function<addmm_dtype_out_equivalent>},
      {"baddbmm.dtype", function<baddbmm_dtype_equivalent>},
      {"baddbmm.dtype_out", function<baddbmm_dtype_out_equivalent>},
      {"batch_norm_stats", function<batch_norm_stats_equivalent>},
      {"batch_norm_elemt", function<batch_norm_elemt_equivalent>},
      {"batch_norm_elemt.out", function<batch_norm_elemt_out_equivalent>},
      {"batch_norm_gather_stats", function<batch_norm_gather_stats_equivalent>},
      {"batch_norm_gather_stats_with_counts",
       function<batch_norm_gather_stats_with_counts_equivalent>},
      {"batch_norm_backward_reduce", function<batch_norm_backward_reduce_equivalent>},
      {"batch_norm_backward_elemt", function<batch_norm_backward_elemt_equivalent>},
      {"_fused_dropout", function<fused_dropout_equivalent>},
      {"_masked_scale", function<masked_scale_equivalent>},
  };
  return *table;
}

// aten operator -> its registered CPU equivalent; written once at load, read-only afterwards.
std::unordered_map<c10::OperatorName, c10::OperatorHandle>* g_equivalents = nullptr;

c10::OperatorName aten_name(const std::string& op) {
  size_t dot = op.find('.');
  return c10::OperatorName("aten::" + op.substr(0, dot),
                           dot == std::string::npos ? "" : op.substr(dot + 1));
}

// The equivalent's schema: the aten schema renamed to torch_backend::cpu_<name>.
c10::FunctionSchema equivalent_schema(const c10::FunctionSchema& original) {
  return original.cloneWithName("torch_backend::cpu_" + original.name().substr(6),
                                original.overload_name());
}

}  // namespace

// Operators whose CompositeExplicitAutograd kernel -- what a device tensor runs when no
// PrivateUse1 kernel is registered -- calls CPU-only code directly instead of other operators:
// a DispatchStub with the tensor's device type (conj_physical_, kaiser_window: "DispatchStub:
// missing kernel"), a CPU kernel (_batch_norm_no_update), a host loop over the data (range.out_),
// or a check for the CPU (mode.values).  On CPU tensors the same composite works, so the CPU
// fallback runs them.  Found by running every such composite of torch 2.13 on a PrivateUse1
// tensor; test_complex.py and the operator sweeps (test_sweeps.py) hold them to it.
// Also the functional composites that allocate their result on their first argument's device
// and call their out variant (logical_and: `logical_and_out(empty(self.options()), ...)`): with
// a CPU number first, the result would land on the CPU (found by test_sweeps.py's CPU-number
// sweep); the fallback puts it on the device of the device tensors.
constexpr const char* kCpuOnlyComposites[] = {"conj_physical_",
                                              "kaiser_window",
                                              "kaiser_window.periodic",
                                              "kaiser_window.beta",
                                              "_batch_norm_no_update",
                                              "range.out_",
                                              "mode.values",
                                              "logical_and",
                                              "logical_or",
                                              "logical_xor",
                                              "complex",
                                              "polar"};

std::vector<c10::OperatorName> register_cpu_substitutes(torch::Library& library) {
  std::vector<c10::OperatorName> routed;
  c10::Dispatcher& dispatcher = c10::Dispatcher::singleton();
  for (const char* name : kCpuOnlyComposites) {
    std::optional<c10::OperatorHandle> op = dispatcher.findOp(aten_name(name));
    if (!op.has_value() || op->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) continue;
    library.impl(name, torch::CppFunction::makeFromBoxedFunction<&cpu_fallback_boxed>());
    routed.push_back(op->operator_name());
  }
  auto* fragment = new torch::Library(torch::Library::FRAGMENT, "torch_backend", std::nullopt,
                                      __FILE__, __LINE__);
  auto* equivalents = new std::unordered_map<c10::OperatorName, c10::OperatorHandle>();
  for (const Substitute& entry : substitutes()) {
    c10::OperatorName name = aten_name(entry.op);
    std::optional<c10::OperatorHandle> op = dispatcher.findOp(name);
    if (!op.has_value()) continue;  // not in this torch release
    c10::FunctionSchema schema = equivalent_schema(op->schema());
    c10::OperatorName cpu_name = schema.operator_name();
    fragment->def(std::move(schema));
    std::string qualified = cpu_name.name.substr(std::string("torch_backend::").size());
    if (!cpu_name.overload_name.empty()) qualified += "." + cpu_name.overload_name;
    fragment->impl(qualified.c_str(), torch::dispatch(c10::DispatchKey::CPU, entry.cpu()));
    equivalents->emplace(name, dispatcher.findOp(cpu_name).value());
    if (!op->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) {
      library.impl(entry.op, torch::CppFunction::makeFromBoxedFunction<&cpu_fallback_boxed>());
      routed.push_back(name);
    }
  }
  g_equivalents = equivalents;
  return routed;
}

const c10::OperatorHandle* cpu_substitute(const c10::OperatorHandle& op) {
  if (g_equivalents == nullptr) return nullptr;
  auto it = g_equivalents->find(op.operator_name());
  return it == g_equivalents->end() ? nullptr : &it->second;
}

std::vector<std::string> cpu_substitute_names() {
  std::vector<std::string> names;
  for (const Substitute& entry : substitutes()) names.emplace_back(entry.op);
  return names;
}

// Meta kernels ATen lacks for device-only operators: the composites above compute the same
// output metadata on meta tensors.  _thnn_fused_lstm_cell has one, a Python meta function that
// fails when the biases are None (it reads their .device); this one, registered after it (and
// silently: c10 expects Meta kernels to be overridden), replaces it.
TORCH_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("_thnn_fused_lstm_cell", TORCH_FN(lstm_cell_equivalent));
  m.impl("convolution_overrideable", TORCH_FN(convolution_equivalent));
  m.impl("convolution_backward_overrideable", TORCH_FN(convolution_backward_equivalent));
  m.impl("_thnn_fused_gru_cell", TORCH_FN(gru_cell_equivalent));
  m.impl("_thnn_fused_gru_cell_backward", TORCH_FN(gru_cell_backward_equivalent));
}

}  // namespace torch_backend
