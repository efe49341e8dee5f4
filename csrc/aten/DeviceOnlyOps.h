// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Operators ATen selects only for tensors that are not on the CPU, and for which it has no CPU
// kernel: what the CPU fallback runs in their place (DeviceOnlyOps.cpp).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <string>
#include <vector>

namespace torch_backend {

// Defines the CPU equivalents (`torch_backend::cpu_<operator>`) and, for every device-only
// operator the vendor has no kernel for, registers the CPU fallback as its PrivateUse1 kernel
// in `library` (an IMPL library for aten and PrivateUse1): the operators whose only kernel is
// a CompositeExplicitAutograd one that raises (`convolution_overrideable`) would otherwise
// never reach the fallback.  Also routes to the fallback the operators whose composite calls
// CPU-only code directly (`conj_physical_`, `kaiser_window`).  Called once, after the vendor's
// kernels are registered.  Returns the operators it routed to the fallback.
std::vector<c10::OperatorName> register_cpu_substitutes(torch::Library& library);

// The CPU equivalent of `op` when `op` is a device-only operator, else nullptr.  The
// equivalent has the same arguments and returns (with mutated arguments marked as such), so
// the CPU fallback can run it on the CPU copies of `op`'s arguments.
const c10::OperatorHandle* cpu_substitute(const c10::OperatorHandle& op);

// The device-only operators with a CPU equivalent ("convolution_overrideable",
// "mm.dtype_out", ...), for torch_backend.op_coverage() and the registry sweep test.
std::vector<std::string> cpu_substitute_names();

}  // namespace torch_backend
