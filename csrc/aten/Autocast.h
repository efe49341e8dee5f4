// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Autocast for the device: the same policy lists CUDA uses (ATen's AT_FORALL_* lists), so
// torch.autocast("<device>") behaves as users of torch.autocast("cuda") expect.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace torch_backend {

// (operator, policy) pairs registered for AutocastPrivateUse1, policy one of
// "lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype", "promote".
const std::vector<std::pair<std::string, std::string>>& autocast_policies();

}  // namespace torch_backend
