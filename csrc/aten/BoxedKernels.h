// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Any ATen operator (vendor.h, ABI 2.0, "Any ATen operator"): vendor kernels for operators that
// have no compiled wrapper (codegen/ops.yaml) are registered at load through one generic boxed
// wrapper built from the dispatcher's schema.  The helpers that turn boxed arguments into
// tb_values serve the custom operators (CustomOps.cpp) too.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>
#include <torch_backend/vendor.h>

#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "aten/KernelCall.h"

namespace torch_backend {

// Why no tb_value carries `argument` ("argument 'layout' has type Layout?, which no tb_value
// kind carries"), or nullopt when one does.
std::optional<std::string> unsupported_argument(const c10::Argument& argument);

// Packs boxed `values`, one per entry of `arguments`, into `call` in schema order.
void pack_arguments(KernelCall& call, c10::ArrayRef<c10::Argument> arguments,
                    const c10::IValue* values);

// A copy of a boxed value with every tensor in it on the meta device.
c10::IValue to_meta(const c10::IValue& value);

// The device of the first device tensor among boxed values, else the current device.
c10::Device device_of_values(const c10::IValue* values, size_t count);

// A vendor kernel to register through the boxed wrapper.
struct BoxedKernelSpec {
  const tb_kernel* kernel;
  c10::OperatorHandle op;        // the operator named tb_kernel::name
  std::atomic<uint64_t>* calls;  // kernel_counts()
};

struct BoxedOutcome {
  std::vector<std::pair<std::string, std::string>> refused;     // kernel name, reason
  std::vector<std::pair<std::string, std::string>> registered;  // operator, kernel name
};

// Registers each kernel for its own operator and then, for out variants, for the functional
// and in-place variants whose schemas match (unless they already have a PrivateUse1 kernel).
// A kernel whose schema no tb_value can carry, or whose outputs the wrapper cannot provide, is
// refused with the reason.
BoxedOutcome register_boxed_kernels(torch::Library& library,
                                    const std::vector<BoxedKernelSpec>& kernels);

}  // namespace torch_backend
