// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The checks ATen's CPU and CUDA kernels make on the host, before any work, that no Meta
// kernel makes: argument values (a random operator's range, an enum string), the lengths and
// dtypes of an optimizer's tensor lists, a loss's weight dtype, a boolean mask's match with the
// values it writes.  A generated wrapper whose ops.yaml entry names one of these functions
// (`check:`) calls it with the operator's non-out arguments before the vendor's kernel, for
// every vendor: a bad call raises at the call, as on CUDA, instead of reaching a kernel that
// either computes something else or finds the problem while it runs and faults the device for
// every later call.  A device fault stays reserved for what only the device can see (an index
// out of range in the data).
//
// Each function takes the wrapper's arguments by its dispatcher types; the trailing ones a check
// does not read are a parameter pack.  Messages are the CPU's where the CPU's says what is wrong,
// else name the operator, the argument and the values found.
#pragma once

#include <ATen/MemoryOverlap.h>
#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/sum.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

namespace torch_backend::host_checks {

// uniform_(self, from, to, generator): ATen's uniform_impl_ checks, for a floating self.
template <typename... Rest>
void uniform_(const at::Tensor& self, double from, double to, const Rest&...) {
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  if (at::isFloatingType(self.scalar_type())) {
    const double limit = self.scalar_type() == at::kDouble ? std::numeric_limits<double>::max()
                         : self.scalar_type() == at::kFloat
                             ? static_cast<double>(std::numeric_limits<float>::max())
                         : self.scalar_type() == at::kHalf ? 65504.0
                                                           : 3.3895313892515355e38;
    TORCH_CHECK(to - from <= limit, "uniform_ expects to-from <= std::numeric_limits<",
                self.scalar_type(), ">::max(), but found to=", to, " and from=", from,
                " which result in to-from to exceed the limit");
  }
}

// normal_(self, mean, std, generator).
template <typename... Rest>
void normal_(const at::Tensor& /*self*/, double /*mean*/, double std, const Rest&...) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
}

// exponential_(self, lambd, generator): ATen's exponential_impl_ check.
template <typename... Rest>
void exponential_(const at::Tensor& /*self*/, double lambd, const Rest&...) {
  TORCH_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
}

// bernoulli_.float(self, p, generator).
template <typename... Rest>
void bernoulli_(const at::Tensor& /*self*/, double p, const Rest&...) {
  TORCH_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
}

// gelu.out and gelu_backward.grad_input: `approximate` is "none" or "tanh".
template <typename String>
void check_approximate(const String& approximate) {
  const std::string_view text(approximate.data(), approximate.size());
  TORCH_CHECK(text == "none" || text == "tanh",
              "approximate argument must be either none or tanh.");
}
template <typename String>
void gelu(const at::Tensor& /*self*/, const String& approximate) {
  check_approximate(approximate);
}
template <typename String>
void gelu_backward(const at::Tensor& /*grad_output*/, const at::Tensor& /*self*/,
                   const String& approximate) {
  check_approximate(approximate);
}

// nll_loss's forward and backward (1d and 2d): a weight of the input's dtype (the CPU's
// kernels read it as the input's scalar type).
inline void check_weight(const at::Tensor& self, const std::optional<at::Tensor>& weight) {
  if (weight.has_value() && weight->defined()) {
    TORCH_CHECK(weight->scalar_type() == self.scalar_type(), "expected scalar type ",
                self.scalar_type(), " but found ", weight->scalar_type());
  }
}
template <typename... Rest>
void nll_loss_forward(const at::Tensor& self, const at::Tensor& /*target*/,
                      const std::optional<at::Tensor>& weight, const Rest&...) {
  check_weight(self, weight);
}
template <typename... Rest>
void nll_loss_backward(const at::Tensor& /*grad_output*/, const at::Tensor& self,
                       const at::Tensor& /*target*/, const std::optional<at::Tensor>& weight,
                       const Rest&...) {
  check_weight(self, weight);
}

// mean.out(self, dim, keepdim, *, dtype, out): without `dtype` the mean is computed in self's
// dtype, which must cast to out's (ATen's mean_out; the meta function takes out's dtype).
template <typename Dims>
void mean_out(const at::Tensor& self, const Dims& /*dim*/, bool /*keepdim*/,
              const std::optional<at::ScalarType>& dtype, const at::Tensor& out) {
  if (!dtype.has_value()) {
    TORCH_CHECK(c10::canCast(self.scalar_type(), out.scalar_type()), "result type ",
                self.scalar_type(), " can't be cast to the desired output type ",
                out.scalar_type());
  }
}

// index_select.out(self, dim, index, out): ATen's CPU and CUDA kernels refuse an out whose
// elements overlap, or that overlaps self or index, before resizing it.
inline void index_select_out(const at::Tensor& self, int64_t /*dim*/, const at::Tensor& index,
                             const at::Tensor& out) {
  at::assert_no_internal_overlap(out);
  at::assert_no_overlap(out, self);
  at::assert_no_overlap(out, index);
}

// The fused optimizers: one entry per parameter in every list (the optional ones empty or
// full), each the parameter's size, dtype and device (the CPU's and CUDA's kernels index the
// lists by the parameters' and read every tensor as the parameter's dtype).
inline void check_list(const char* op, const char* name, at::TensorList params, at::TensorList list,
                       bool steps = false) {
  TORCH_CHECK(list.size() == params.size(), op, ": ", name, " has ", list.size(),
              " tensors, expected ", params.size(), " (one per parameter)");
  for (size_t i = 0; i < list.size(); i++) {
    const at::Tensor& p = params[i];
    const at::Tensor& t = list[i];
    TORCH_CHECK(t.device() == p.device(), op, ": ", name, "[", i, "] is on ", t.device(),
                ", parameter ", i, " on ", p.device());
    if (steps) continue;  // state steps: a count per parameter, of any shape the optimizer keeps
    TORCH_CHECK(t.sizes() == p.sizes(), op, ": ", name, "[", i, "] has sizes ", t.sizes(),
                ", parameter ", i, " has ", p.sizes());
    TORCH_CHECK(t.scalar_type() == p.scalar_type(), "expected scalar type ", p.scalar_type(),
                " but found ", t.scalar_type());
  }
}
inline void check_optional_list(const char* op, const char* name, at::TensorList params,
                                at::TensorList list, bool used, const char* because) {
  if (used) {
    check_list(op, name, params, list);
  } else {
    TORCH_CHECK(list.empty(), op, ": ", name, " has ", list.size(), " tensors, expected none (",
                because, ")");
  }
}
template <typename... Rest>
void fused_sgd(at::TensorList params, at::TensorList grads, at::TensorList momentum_buffer_list,
               double /*weight_decay*/, double momentum, const Rest&...) {
  check_list("_fused_sgd_", "grads", params, grads);
  check_optional_list("_fused_sgd_", "momentum_buffer_list", params, momentum_buffer_list,
                      momentum != 0.0, "momentum is 0");
}
inline void check_adam(const char* op, at::TensorList params, at::TensorList grads,
                       at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                       at::TensorList max_exp_avg_sqs, at::TensorList state_steps, bool amsgrad) {
  check_list(op, "grads", params, grads);
  check_list(op, "exp_avgs", params, exp_avgs);
  check_list(op, "exp_avg_sqs", params, exp_avg_sqs);
  check_optional_list(op, "max_exp_avg_sqs", params, max_exp_avg_sqs, amsgrad, "amsgrad is False");
  check_list(op, "state_steps", params, state_steps, /*steps=*/true);
}
template <typename... Rest>
void fused_adam(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                at::TensorList state_steps, double /*lr*/, double /*beta1*/, double /*beta2*/,
                double /*weight_decay*/, double /*eps*/, bool amsgrad, const Rest&...) {
  check_adam("_fused_adam_", params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
             amsgrad);
}
template <typename... Rest>
void fused_adamw(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
                 at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                 at::TensorList state_steps, double /*lr*/, double /*beta1*/, double /*beta2*/,
                 double /*weight_decay*/, double /*eps*/, bool amsgrad, const Rest&...) {
  check_adam("_fused_adamw_", params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
             amsgrad);
}

// _index_put_impl_(self, indices, values, accumulate, unsafe) with a boolean (or uint8) mask
// among the indices: the indexing result has one dimension per mask holding its true elements,
// a count only the data gives.  CUDA's kernel learns it on the host (its nonzero synchronises)
// and raises a shape mismatch at the call; so does this check, by counting the true elements
// (one reduction and one synchronisation, only when values could mismatch: more than one
// element, or more dimensions than one).  A uint8 mask draws ATen's deprecation warning, which the
// vendor's kernel, reading masks itself, would not give.
inline void index_put(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices,
                      const at::Tensor& values, bool /*accumulate*/, bool /*unsafe*/) {
  bool masks = false;
  for (const std::optional<at::Tensor>& index : indices) {
    if (!index.has_value() || !index->defined()) continue;
    if (index->scalar_type() == at::kByte) {  // ATen's expandTensors warns, for index_put too
      TORCH_WARN("indexing with dtype torch.uint8 is now deprecated, please use a dtype ",
                 "torch.bool instead.");
    }
    masks = masks || index->scalar_type() == at::kBool || index->scalar_type() == at::kByte;
  }
  if (!masks || (values.numel() == 1 && values.dim() <= 1)) return;
  // The indices with each mask expanded to its count (ATen's expandTensors), as sizes.
  std::vector<std::vector<int64_t>> shapes;
  std::vector<int64_t> plain;  // self's dimensions not indexed, in order
  int64_t d = 0, first = -1, last = -1, indexed = 0;
  for (const std::optional<at::Tensor>& index : indices) {
    if (!index.has_value() || !index->defined()) {
      if (d < self.dim()) plain.push_back(d);
      d++;
      continue;
    }
    const at::Tensor& t = *index;
    const bool mask = t.scalar_type() == at::kBool || t.scalar_type() == at::kByte;
    const int64_t span = mask ? t.dim() : 1;
    for (int64_t k = 0; mask && k < t.dim(); k++) {
      TORCH_CHECK_INDEX(d + k < self.dim() && t.size(k) == self.size(d + k),
                        "The shape of the mask ", t.sizes(), " at index ", k,
                        " does not match the shape of the indexed tensor ", self.sizes(),
                        " at index ", d + k);
    }
    const int64_t count = mask ? at::sum(t.ne(0)).item<int64_t>() : 0;
    for (int64_t k = 0; k < span; k++) {
      shapes.push_back(mask ? std::vector<int64_t>{count} : t.sizes().vec());
      if (first < 0) first = d;
      last = d;
      indexed++;
      d++;
    }
  }
  for (; d < self.dim(); d++) plain.push_back(d);
  // The indices broadcast together (right-aligned); the result: B in the indexed dimensions'
  // place when they are adjacent, else first.
  std::vector<int64_t> b;
  for (const std::vector<int64_t>& shape : shapes) {
    const size_t rank = std::max(b.size(), shape.size());
    std::vector<int64_t> merged(rank);
    for (size_t k = 0; k < rank; k++) {
      const int64_t kb = static_cast<int64_t>(k) - static_cast<int64_t>(rank - b.size());
      const int64_t ks = static_cast<int64_t>(k) - static_cast<int64_t>(rank - shape.size());
      const int64_t sb = kb >= 0 ? b[kb] : 1, ss = ks >= 0 ? shape[ks] : 1;
      TORCH_CHECK_INDEX(sb == ss || sb == 1 || ss == 1,
                        "shape mismatch: indexing tensors could not be broadcast together");
      merged[k] = sb == 1 ? ss : sb;
    }
    b = merged;
  }
  std::vector<int64_t> result;
  const bool adjacent = last - first + 1 == indexed;
  size_t p = 0;
  if (!adjacent) result = b;
  for (int64_t dim = 0; dim < self.dim(); dim++) {
    if (adjacent && dim == first) result.insert(result.end(), b.begin(), b.end());
    if (p < plain.size() && plain[p] == dim) {
      result.push_back(self.size(dim));
      p++;
    }
  }
  bool fits = values.dim() <= static_cast<int64_t>(result.size());
  for (int64_t k = 0; fits && k < values.dim(); k++) {
    const int64_t size = values.size(k);
    const int64_t target = result[result.size() - values.dim() + k];
    fits = size == target || size == 1;
  }
  TORCH_CHECK(fits, "shape mismatch: value tensor of shape ", values.sizes(),
              " cannot be broadcast to indexing result of shape ", at::IntArrayRef(result));
}

}  // namespace torch_backend::host_checks
