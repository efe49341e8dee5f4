// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "aten/Autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace torch_backend {
namespace {

using at::Scalar;
using at::ScalarType;
using at::Tensor;
using c10::IntArrayRef;

std::vector<std::pair<std::string, std::string>>* g_policies =
    new std::vector<std::pair<std::string, std::string>>();

// Records "op[.overload]" under `policy` for autocast_policies().
#define TB_AUTOCAST_NAME1(op) #op
#define TB_AUTOCAST_NAME2(op, overload) #op "." #overload
#define TB_AUTOCAST_NAME(...) \
  C10_CONCATENATE(TB_AUTOCAST_NAME, _KERNEL_OVERLOAD_NARG(__VA_ARGS__, policy))(__VA_ARGS__)
#define TB_RECORD(policy, ...) g_policies->emplace_back(TB_AUTOCAST_NAME(__VA_ARGS__), policy);

#define TB_LOWER(...)                                   \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp) \
  TB_RECORD("lower_precision_fp", __VA_ARGS__)
#define TB_FP32(...)                      \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32) \
  TB_RECORD("fp32", __VA_ARGS__)
#define TB_FP32_SET_OPT_DTYPE(...)                      \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype) \
  TB_RECORD("fp32_set_opt_dtype", __VA_ARGS__)
#define TB_PROMOTE(...)                      \
  KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote) \
  TB_RECORD("promote", __VA_ARGS__)
#define TB_DIFFERENT_SIGNATURE(redispatch, name, signature, redispatch_signature, policy) \
  KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE(redispatch, name, signature,        \
                                                      redispatch_signature, policy)       \
  g_policies->emplace_back(name, #policy);

// CUDA's banned list: operators whose float16 result is unsafe (binary_cross_entropy after a
// sigmoid saturates) raise under autocast instead of running, with CUDA's message.
Tensor binary_cross_entropy_banned(const Tensor& /*self*/, const Tensor& /*target*/,
                                   const std::optional<Tensor>& /*weight*/, int64_t /*reduction*/) {
  TORCH_CHECK(
      false,
      "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
      "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
      "layer.\nIn this case, combine the two layers using "
      "torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss. "
      " binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.");
}

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  AT_FORALL_LOWER_PRECISION_FP(TB_LOWER)
  AT_FORALL_FP32(TB_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(TB_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(TB_DIFFERENT_SIGNATURE)
  AT_FORALL_PROMOTE(TB_PROMOTE)
  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"),
         TORCH_FN((&binary_cross_entropy_banned)));
  g_policies->emplace_back("binary_cross_entropy", "banned");
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& autocast_policies() { return *g_policies; }

}  // namespace torch_backend
