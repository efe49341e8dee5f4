// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The vendor's custom operators (vendor.h, ABI 2.0, TB_EXTENSION_CUSTOM_OPS): each is defined in
// the dispatcher from its schema, with a PrivateUse1 kernel (outputs from the shape function,
// then the vendor's kernel) and a Meta kernel (the shape function alone), which also serves
// fake tensors.  Their autograd formulas are registered by the Python package
// (torch_backend/custom_ops.py), from the backward operators listed here.
#pragma once

#include <string>
#include <vector>

namespace torch_backend {

struct CustomOpInfo {
  std::string name;      // "emu::mymuladd" ("ns::name.overload" for an overload)
  std::string schema;    // as the vendor states it
  std::string backward;  // the backward operator's name, "" when not differentiable
};

// Validates and registers every custom operator of the loaded vendor.  Called once, at load.
// Throws c10::Error naming the vendor and the operator when a declaration is invalid (see
// vendor.h, "Custom operators"); nothing is registered then.
void register_custom_ops();

// The operators register_custom_ops() defined.
const std::vector<CustomOpInfo>& custom_ops();

}  // namespace torch_backend
