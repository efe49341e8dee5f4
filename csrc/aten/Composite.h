// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Operators composed from other operators on the device (Composite.cpp): some for every
// vendor, the others only where the vendor publishes no kernel of its own.
#pragma once

#include <torch/library.h>

#include <functional>
#include <string>
#include <vector>

namespace torch_backend {

// Registers on `library` (aten, PrivateUse1) the composites of the operators whose kernel the
// vendor does not publish (`vendor_has` answers by kernel name), and returns the operators
// registered ("dot", "addmv.out").
std::vector<std::string> register_default_composites(
    torch::Library& library, const std::function<bool(const std::string&)>& vendor_has);

// The operators Composite.cpp registers for every vendor.
const std::vector<std::string>& composite_ops();

}  // namespace torch_backend
