// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Scaled dot-product attention's PrivateUse1 route (vendor.h, "Attention").  PyTorch asks the
// device's _fused_sdp_choice_stub which backend scaled_dot_product_attention takes; for the
// device it is OVERRIDEABLE -- ATen's _scaled_dot_product_fused_attention_overrideable and
// its backward, whose autograd formula ATen owns -- when the vendor publishes a kernel under
// that name for the inputs' dtype and the user has not disabled it (sdpa_kernel), else MATH,
// ATen's composite over the device's own kernels.  The operators are implemented here: outputs
// allocated, dropout's Philox counters reserved from the device generator and returned as
// philox_seed/philox_offset for the backward to regenerate the mask, and a math version of
// each for a kernel that declines a call (a backward with dropout excepted: its mask is the
// vendor's).
#include <ATen/Context.h>
#include <ATen/SDPBackend.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

#include "aten/KernelCall.h"
#include "runtime/Generator.h"
#include "runtime/Graph.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

using at::Tensor;

constexpr const char* kForward = "_scaled_dot_product_fused_attention_overrideable";
constexpr const char* kBackward = "_scaled_dot_product_fused_attention_overrideable_backward";

const tb_kernel* kernel_for(const char* name, const Tensor& query) {
  const tb_kernel* kernel = find_kernel(name);
  if (kernel == nullptr) return nullptr;
  auto dtype = tb_dtype_of(query.scalar_type());
  if (!dtype.has_value() || (kernel->dtypes != 0 && (kernel->dtypes & TB_DTYPE_BIT(*dtype)) == 0)) {
    return nullptr;
  }
  return kernel;
}

// An output of `shape` laid out like `query` (torch/_meta_registrations.py's
// alloc_with_matching_layout, which torch.compile's fake tensors follow): query's own layout
// when the shapes agree, else its dimension order, densely.
Tensor alloc_matching_layout(const Tensor& query, at::IntArrayRef shape) {
  if (query.sizes() == shape) return at::empty_like(query);
  std::array<int64_t, 4> order = {0, 1, 2, 3};
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return query.stride(a) > query.stride(b); });
  std::array<int64_t, 4> strides{};
  int64_t stride = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[static_cast<size_t>(*it)] = stride;
    stride *= shape[static_cast<size_t>(*it)];
  }
  return at::empty_strided(shape, strides, query.options());
}

// `t` with contiguous rows (its last dimension), as attention kernels multiply rows.
Tensor rows_contiguous(const Tensor& t) { return t.stride(-1) == 1 ? t : t.contiguous(); }

double softmax_scale(const Tensor& query, std::optional<double> scale) {
  return scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
}

int64_t fused_sdp_choice(const Tensor& query, const Tensor& key, const Tensor& value,
                         const std::optional<Tensor>& attn_mask, double /*dropout_p*/,
                         bool /*is_causal*/, std::optional<double> /*scale*/, bool enable_gqa) {
  const bool fits = query.dim() == 4 && key.dim() == 4 && value.dim() == 4 &&
                    key.scalar_type() == query.scalar_type() &&
                    value.scalar_type() == query.scalar_type() && !enable_gqa &&
                    key.size(1) == query.size(1) && value.size(1) == query.size(1) &&
                    (!attn_mask.has_value() || attn_mask->scalar_type() == query.scalar_type() ||
                     attn_mask->scalar_type() == at::kBool);
  if (fits && at::globalContext().userEnabledOverrideableSDP() &&
      kernel_for(kForward, query) != nullptr && kernel_for(kBackward, query) != nullptr) {
    return static_cast<int64_t>(at::SDPBackend::overrideable);
  }
  return static_cast<int64_t>(at::SDPBackend::math);
}

// attn_bias as the kernel receives it: query's dtype, broadcast to (B, H, L, S).
std::optional<Tensor> full_bias(const std::optional<Tensor>& bias, const Tensor& query,
                                const Tensor& key) {
  if (!bias.has_value() || !bias->defined()) return std::nullopt;
  Tensor b = *bias;
  if (b.scalar_type() == at::kBool) {
    b = at::zeros(b.sizes(), query.options()).masked_fill(b.logical_not(), -INFINITY);
  }
  return b.to(query.scalar_type())
      .expand({query.size(0), query.size(1), query.size(2), key.size(2)});
}

// The Philox counters dropout of a (B, H, L, S) score tensor uses: one block of four per
// element.
uint64_t dropout_increment(const Tensor& query, const Tensor& key) {
  return 4 * static_cast<uint64_t>(query.size(0) * query.size(1) * query.size(2) * key.size(2));
}

using ForwardResult =
    std::tuple<Tensor, Tensor, Tensor, Tensor, c10::SymInt, c10::SymInt, Tensor, Tensor, Tensor>;

ForwardResult forward(const Tensor& query, const Tensor& key, const Tensor& value,
                      const std::optional<Tensor>& attn_bias, double dropout_p, bool is_causal,
                      bool return_debug_mask, std::optional<double> scale) {
  const char* device_type = Vendor::Get().device_type();
  TORCH_CHECK(query.dim() == 4 && key.dim() == 4 && value.dim() == 4, device_type, ": ", kForward,
              " takes (B, H, L, E) query, key and value, got ", query.sizes(), ", ", key.sizes(),
              " and ", value.sizes());
  TORCH_CHECK(dropout_p >= 0 && dropout_p < 1, device_type, ": ", kForward,
              ": dropout_p must be in [0, 1), got ", dropout_p);
  const int64_t B = query.size(0), H = query.size(1), L = query.size(2), S = key.size(2);
  Tensor output = alloc_matching_layout(query, {B, H, L, value.size(3)});
  Tensor logsumexp = at::empty({B, H, L}, query.options().dtype(at::kFloat));
  std::optional<Tensor> bias = full_bias(attn_bias, query, key);
  uint64_t seed = 0, offset = 0;
  const uint64_t* device_state = nullptr;
  if (dropout_p > 0) {
    at::Generator generator = default_generator(query.device().index());
    std::lock_guard<std::mutex> lock(generator.mutex());
    auto* philox = generator.get<PhiloxGenerator>();
    device_state = graph::capture_philox(query.device().index(), philox,
                                         dropout_increment(query, key), seed, offset);
    TORCH_CHECK(device_state == nullptr, device_type, ": ", kForward,
                " with dropout cannot be captured into a graph yet (its backward would need the "
                "graph's generator state)");
    std::tie(seed, offset) = philox->philox_inputs(dropout_increment(query, key));
  }
  Tensor philox_seed = at::scalar_tensor(static_cast<int64_t>(seed), at::kLong);
  Tensor philox_offset = at::scalar_tensor(static_cast<int64_t>(offset), at::kLong);

  bool launched = false;
  if (const tb_kernel* kernel = kernel_for(kForward, query)) {
    KernelCall call(kernel);
    call.tensor(rows_contiguous(query)).tensor(rows_contiguous(key)).tensor(rows_contiguous(value));
    call.tensor(bias).real(dropout_p);
    call.boolean(is_causal).boolean(return_debug_mask).real(scale);
    call.tensor(output).tensor(logsumexp);
    if (dropout_p > 0) {
      call.rng_key(seed, offset);
    } else {
      call.none();
    }
    launched = call.launch();
  }
  if (!launched) {  // the math version: the same results from the device's own kernels
    Tensor scores = at::matmul(query, key.transpose(-2, -1)).mul(softmax_scale(query, scale));
    if (is_causal) {
      Tensor hidden = at::ones({L, S}, query.options().dtype(at::kBool)).triu(1);
      scores = scores.masked_fill(hidden, -INFINITY);
    }
    if (bias.has_value()) scores = scores.add(*bias);
    logsumexp.copy_(at::logsumexp(scores.to(at::kFloat), {-1}));
    TORCH_CHECK_NOT_IMPLEMENTED(dropout_p == 0, device_type, ": ", kForward,
                                ": the vendor's kernel declined a call with dropout");
    output.copy_(at::matmul(at::softmax(scores, -1), value));
  }
  // As the meta function: no cumulative sequence lengths (dense batches), no debug mask.
  return {output,         logsumexp,   Tensor(),      Tensor(), c10::SymInt(L),
          c10::SymInt(S), philox_seed, philox_offset, Tensor()};
}

std::tuple<Tensor, Tensor, Tensor, Tensor> backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value,
    const Tensor& attn_bias, std::array<bool, 4> grad_input_mask, const Tensor& out,
    const Tensor& logsumexp, const Tensor& /*cum_seq_q*/, const Tensor& /*cum_seq_k*/,
    c10::SymInt max_q, c10::SymInt max_k, double dropout_p, bool is_causal,
    const Tensor& philox_seed, const Tensor& philox_offset, std::optional<double> scale) {
  const char* device_type = Vendor::Get().device_type();
  const tb_kernel* kernel = kernel_for(kBackward, query);
  TORCH_CHECK_NOT_IMPLEMENTED(kernel != nullptr, device_type, ": ", kBackward,
                              ": the vendor publishes no kernel for ", query.scalar_type());
  Tensor grad_query = at::empty_like(query);
  Tensor grad_key = at::empty_like(key);
  Tensor grad_value = at::empty_like(value);
  std::optional<Tensor> bias = full_bias(attn_bias, query, key);
  const bool wants_bias = grad_input_mask[3] && bias.has_value();
  std::optional<Tensor> grad_bias;
  if (wants_bias) grad_bias = at::empty(bias->sizes(), query.options());
  KernelCall call(kernel);
  call.tensor(grad_out.contiguous()).tensor(rows_contiguous(query)).tensor(rows_contiguous(key));
  call.tensor(rows_contiguous(value)).tensor(bias);
  call.bools(grad_input_mask);
  call.tensor(out).tensor(logsumexp).none().none();
  call.integer(max_q.expect_int()).integer(max_k.expect_int()).real(dropout_p).boolean(is_causal);
  call.integer(philox_seed.item<int64_t>()).integer(philox_offset.item<int64_t>());
  call.real(scale);
  call.tensor(grad_query).tensor(grad_key).tensor(grad_value).tensor(grad_bias);
  if (!call.launch()) {
    // The math version, as for a forward that declines: the same gradients from the device's
    // own kernels (a dropout mask is the vendor's to regenerate: that cannot be replaced).
    TORCH_CHECK_NOT_IMPLEMENTED(
        dropout_p == 0, device_type, ": ", kBackward,
        ": the vendor's kernel declined a call with dropout: ", Vendor::Get().last_error());
    const double s = softmax_scale(query, scale);
    Tensor scores = at::matmul(query, key.transpose(-2, -1)).mul(s);
    if (is_causal) {
      Tensor hidden =
          at::ones({query.size(2), key.size(2)}, query.options().dtype(at::kBool)).triu(1);
      scores = scores.masked_fill(hidden, -INFINITY);
    }
    if (bias.has_value()) scores = scores.add(*bias);
    Tensor probs = at::softmax(scores, -1);
    grad_value.copy_(at::matmul(probs.transpose(-2, -1), grad_out));
    Tensor grad_probs = at::matmul(grad_out, value.transpose(-2, -1));
    Tensor grad_scores = probs.mul(grad_probs.sub(grad_probs.mul(probs).sum(-1, true)));
    grad_query.copy_(at::matmul(grad_scores, key).mul(s));
    grad_key.copy_(at::matmul(grad_scores.transpose(-2, -1), query).mul(s));
    if (wants_bias) grad_bias->copy_(grad_scores);
  }
  Tensor bias_grad;
  if (wants_bias) {  // laid out as the meta function says: like attn_bias
    bias_grad = at::empty_like(attn_bias);
    bias_grad.copy_(grad_bias->sum_to_size(attn_bias.sizes()));
  }
  return {grad_query, grad_key, grad_value, bias_grad};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_sdp_choice", TORCH_FN(fused_sdp_choice));
  m.impl(kForward, TORCH_FN(forward));
  m.impl(kBackward, TORCH_FN(backward));
}

}  // namespace
}  // namespace torch_backend

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &torch_backend::fused_sdp_choice);
}  // namespace at::native
