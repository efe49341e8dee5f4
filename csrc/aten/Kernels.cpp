// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Resolving the vendor's kernels once at load and registering the operators they cover.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "aten/DeviceOnlyOps.h"
#include "aten/GeneratedKernels.h"
#include "aten/KernelCall.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

// Kernel name -> kernel, built once at load; read-only afterwards.
std::unordered_map<std::string, const tb_kernel*>* g_by_name = nullptr;
std::once_flag g_once;

// Lives for the rest of the process: the dispatcher refers to what it registered.
torch::Library* g_library = nullptr;

// Device-only operators whose PrivateUse1 kernel is the CPU fallback (DeviceOnlyOps.cpp).
std::unordered_set<c10::OperatorName>* g_routed_to_fallback = nullptr;

// Operators implemented in csrc itself on top of vendor calls (aten/Minimal.cpp, Random.cpp).
const char* const kBuiltIn[] = {"empty.memory_format", "empty_strided",
                                "as_strided",          "view",
                                "_reshape_alias",      "resize_",
                                "_copy_from",          "_copy_from_and_resize",
                                "_local_scalar_dense", "set_.source_Tensor",
                                "set_.source_Storage", "set_.source_Storage_storage_offset",
                                "fill_.Scalar",        "zero_",
                                "record_stream",       "native_dropout"};

void resolve() {
  const tb_vendor_handle& table = Vendor::Get().table();
  g_by_name = new std::unordered_map<std::string, const tb_kernel*>();
  for (int64_t i = 0; i < table.kernels.count; i++) {
    const tb_kernel* kernel = table.kernels.kernels[i];
    g_by_name->emplace(kernel->name, kernel);
  }
  for (int i = 0; i < generated::kNumKernels; i++) {
    auto it = g_by_name->find(generated::kKernelNames[i]);
    generated::g_kernels[i] = it == g_by_name->end() ? nullptr : it->second;
  }
  g_library = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1,
                                 __FILE__, __LINE__);
  for (int i = 0; i < generated::kNumOps; i++) {
    const generated::OpEntry& entry = generated::kOps[i];
    if (generated::g_kernels[entry.kernel] != nullptr) entry.register_fn(*g_library);
  }
  std::vector<c10::OperatorName> routed = register_cpu_substitutes(*g_library);
  g_routed_to_fallback = new std::unordered_set<c10::OperatorName>(routed.begin(), routed.end());
}

// "aten::add.out", "add.out" and "add" (the default overload) name the same operator.
std::optional<c10::OperatorHandle> find_operator(const std::string& name) {
  std::string qualified = name.find("::") == std::string::npos ? "aten::" + name : name;
  size_t dot = qualified.find('.', qualified.find("::"));
  std::string base = qualified.substr(0, dot);
  std::string overload = dot == std::string::npos ? "" : qualified.substr(dot + 1);
  return c10::Dispatcher::singleton().findOp(c10::OperatorName(base, overload));
}

bool has_cpu_implementation(const c10::OperatorHandle& op) {
  return op.hasKernelForDispatchKey(c10::DispatchKey::CPU) ||
         op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) ||
         cpu_substitute(op) != nullptr;
}

// "native", "fallback" or "unsupported" (see op_coverage).
const char* state_of(const c10::OperatorHandle& op) {
  if (op.hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1) &&
      g_routed_to_fallback->count(op.operator_name()) == 0) {
    return "native";
  }
  return has_cpu_implementation(op) ? "fallback" : "unsupported";
}

}  // namespace

void register_vendor_kernels() { std::call_once(g_once, resolve); }

const tb_kernel* find_kernel(std::string_view name) {
  if (g_by_name == nullptr) return nullptr;
  auto it = g_by_name->find(std::string(name));
  return it == g_by_name->end() ? nullptr : it->second;
}

std::vector<std::pair<std::string, int64_t>> kernel_counts() {
  std::vector<std::pair<std::string, int64_t>> counts;
  for (int i = 0; i < generated::kNumKernels; i++) {
    uint64_t calls = generated::g_kernel_calls[i].load(std::memory_order_relaxed);
    if (calls > 0) counts.emplace_back(generated::kKernelNames[i], static_cast<int64_t>(calls));
  }
  return counts;
}

void reset_kernel_counts() {
  for (int i = 0; i < generated::kNumKernels; i++) {
    generated::g_kernel_calls[i].store(0, std::memory_order_relaxed);
  }
}

std::vector<std::pair<std::string, std::string>> op_kernels() {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (int i = 0; i < generated::kNumOps; i++) {
    pairs.emplace_back(generated::kOps[i].op, generated::kKernelNames[generated::kOps[i].kernel]);
  }
  return pairs;
}

std::vector<std::pair<std::string, std::string>> op_coverage(const std::vector<std::string>& ops) {
  register_vendor_kernels();
  std::vector<std::pair<std::string, std::string>> coverage;
  if (ops.empty()) {
    for (const char* name : kBuiltIn) coverage.emplace_back(name, "native");
    std::set<std::string> listed;
    for (int i = 0; i < generated::kNumOps; i++) {
      const generated::OpEntry& entry = generated::kOps[i];
      auto op = find_operator(entry.op);
      const char* state = generated::g_kernels[entry.kernel] != nullptr   ? "native"
                          : op.has_value() && has_cpu_implementation(*op) ? "fallback"
                                                                          : "unsupported";
      coverage.emplace_back(entry.op, state);
      listed.insert(entry.op);
    }
    for (const std::string& name : cpu_substitute_names()) {
      auto op = find_operator(name);
      if (op.has_value() && listed.insert(name).second) coverage.emplace_back(name, state_of(*op));
    }
    return coverage;
  }
  for (const std::string& name : ops) {
    auto op = find_operator(name);
    TORCH_CHECK(op.has_value(), "torch_backend.op_coverage: no operator named '", name,
                "' (expected an ATen name with its overload, such as 'add.out')");
    coverage.emplace_back(name, state_of(*op));
  }
  return coverage;
}

}  // namespace torch_backend
