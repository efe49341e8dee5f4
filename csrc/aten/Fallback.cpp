// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "aten/Fallback.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "aten/DeviceOnlyOps.h"
#include "aten/KernelCall.h"
#include "runtime/Device.h"
#include "runtime/Generator.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

std::mutex g_mutex;  // guards the counters and the set of operators already warned about
std::map<std::string, int64_t>* g_counts = new std::map<std::string, int64_t>();
std::set<std::string>* g_warned = new std::set<std::string>();

FallbackMode mode_from_environment() {
  const char* value = std::getenv("TORCH_BACKEND_FALLBACK");
  if (value == nullptr || *value == '\0') return FallbackMode::kAllow;
  return parse_fallback_mode(value, "TORCH_BACKEND_FALLBACK");
}

std::atomic<FallbackMode>& mode() {
  static std::atomic<FallbackMode> value{mode_from_environment()};
  return value;
}

std::string operator_name(const c10::OperatorHandle& op) {
  const c10::OperatorName& name = op.operator_name();
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

// The device the operator runs for: its first device tensor argument's, else the current one.
c10::DeviceIndex device_of_arguments(const c10::OperatorHandle& op,
                                     const torch::jit::Stack& stack) {
  size_t arguments = op.schema().arguments().size();
  for (size_t i = stack.size() - arguments; i < stack.size(); i++) {
    const c10::IValue& value = stack[i];
    if (value.isTensor() && value.toTensor().device().type() == c10::DeviceType::PrivateUse1) {
      return value.toTensor().device().index();
    }
    if (value.isTensorList()) {
      for (const at::Tensor& t : value.toTensorList().vec()) {
        if (t.device().type() == c10::DeviceType::PrivateUse1) return t.device().index();
      }
    }
  }
  return current_device();
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Random operators run on the CPU with a CPU generator seeded from the device generator's
// (seed, offset), so torch.<device>.manual_seed and generator states govern them and results
// are reproducible.
void replace_generators(const c10::OperatorHandle& op, torch::jit::Stack& stack) {
  const auto& arguments = op.schema().arguments();
  size_t first = stack.size() - arguments.size();
  for (size_t i = 0; i < arguments.size(); i++) {
    if (arguments[i].type()->kind() != c10::TypeKind::OptionalType ||
        arguments[i].type()->castRaw<c10::OptionalType>()->getElementType()->kind() !=
            c10::TypeKind::GeneratorType) {
      continue;
    }
    c10::IValue& value = stack[first + i];
    at::Generator device_generator;
    if (value.isNone()) {
      device_generator = default_generator(device_of_arguments(op, stack));
    } else if (value.toGenerator().device().type() == c10::DeviceType::PrivateUse1) {
      device_generator = value.toGenerator();
    } else {
      continue;  // a CPU generator already
    }
    uint64_t seed = 0, offset = 0;
    {
      std::lock_guard<std::mutex> lock(device_generator.mutex());
      std::tie(seed, offset) =
          device_generator.get<PhiloxGenerator>()->philox_inputs(/*increment=*/4);
    }
    value = at::make_generator<at::CPUGeneratorImpl>(splitmix64(seed ^ splitmix64(offset)));
  }
}

// Autograd formulas pass an undefined tensor for an absent optional gradient (the LSTM cell's
// grad_hy when only the cell state is used); the CPU copy step needs None there.
void undefined_to_none(const c10::OperatorHandle& op, torch::jit::Stack& stack) {
  const auto& arguments = op.schema().arguments();
  size_t first = stack.size() - arguments.size();
  for (size_t i = 0; i < arguments.size(); i++) {
    c10::IValue& value = stack[first + i];
    if (value.isTensor() && !value.toTensor().defined() &&
        arguments[i].type()->kind() == c10::TypeKind::OptionalType) {
      value = c10::IValue();
    }
  }
}

// Kernels that update batch norm's running statistics in place although their schemas do not
// mark those arguments as written (`Tensor? running_mean`, not `Tensor(a!)?`).  cpu_fallback
// copies back only marked arguments, so for these the statistics are staged on the host here
// and copied back after the call; otherwise nn.BatchNorm's running statistics would silently
// never move.
bool writes_running_stats(const c10::OperatorHandle& op) {
  const std::string& name = op.operator_name().name;
  return name == "aten::native_batch_norm" || name == "aten::batch_norm_update_stats" ||
         name == "aten::batch_norm_gather_stats" ||
         name == "aten::batch_norm_gather_stats_with_counts";
}

using Staged = std::vector<std::pair<at::Tensor, at::Tensor>>;  // (device tensor, host copy)

Staged stage_running_stats(const c10::OperatorHandle& op, torch::jit::Stack& stack) {
  Staged staged;
  if (!writes_running_stats(op)) return staged;
  const auto& arguments = op.schema().arguments();
  size_t first = stack.size() - arguments.size();
  for (size_t i = 0; i < arguments.size(); i++) {
    c10::IValue& value = stack[first + i];
    if ((arguments[i].name() == "running_mean" || arguments[i].name() == "running_var") &&
        value.isTensor() && value.toTensor().defined() && !value.toTensor().is_cpu()) {
      at::Tensor device = value.toTensor();
      at::Tensor host = device.cpu();
      value = host;
      staged.emplace_back(std::move(device), std::move(host));
    }
  }
  return staged;
}

void fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  std::string name = operator_name(op);
  FallbackMode current = mode().load(std::memory_order_relaxed);
  if (current == FallbackMode::kError) {
    c10::DeviceIndex device = device_of_arguments(op, *stack);
    TORCH_CHECK_NOT_IMPLEMENTED(false, Vendor::Get().device_type(), ": operator ", name,
                                " has no kernel for device ", make_device(device),
                                " and TORCH_BACKEND_FALLBACK=error forbids running it on the CPU");
  }
  bool warn = false;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    (*g_counts)[name]++;
    if (current == FallbackMode::kWarn) warn = g_warned->insert(name).second;
  }
  if (warn) {
    TORCH_WARN(Vendor::Get().device_type(), ": operator ", name,
               " has no device kernel and runs on the CPU (copies in and out; "
               "TORCH_BACKEND_FALLBACK=warn)");
  }
  undefined_to_none(op, *stack);
  replace_generators(op, *stack);
  // Operators ATen selects only for devices have no CPU kernel: run their CPU equivalent.
  const c10::OperatorHandle* equivalent = cpu_substitute(op);
  Staged staged = stage_running_stats(op, *stack);
  at::native::cpu_fallback(equivalent != nullptr ? *equivalent : op, stack);
  for (auto& [device, host] : staged) device.copy_(host);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

}  // namespace

void cpu_fallback_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  fallback(op, stack);
}

std::vector<std::pair<std::string, int64_t>> fallback_counts() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return {g_counts->begin(), g_counts->end()};
}

void reset_fallback_counts() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_counts->clear();
  g_warned->clear();
}

FallbackMode fallback_mode() { return mode().load(); }

void set_fallback_mode(FallbackMode value) { mode().store(value); }

const char* fallback_mode_name(FallbackMode value) {
  switch (value) {
    case FallbackMode::kAllow:
      return "allow";
    case FallbackMode::kWarn:
      return "warn";
    case FallbackMode::kError:
      return "error";
  }
  return "allow";
}

FallbackMode parse_fallback_mode(const std::string& name, const char* source) {
  if (name == "allow") return FallbackMode::kAllow;
  if (name == "warn") return FallbackMode::kWarn;
  if (name == "error") return FallbackMode::kError;
  TORCH_CHECK_VALUE(false, "torch_backend: ", source, "='", name,
                    "' is not a fallback mode; use allow, warn or error");
}

}  // namespace torch_backend
