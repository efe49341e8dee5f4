// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Resolving the vendor's kernels once at load and registering the operators they cover: each
// kernel's stated schema is checked against this torch's (ABI 2.0), kernels with a compiled
// wrapper (codegen/ops.yaml) use it, the others go through the boxed wrapper
// (BoxedKernels.cpp), and the vendor's custom operators are defined (CustomOps.cpp).
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "aten/BoxedKernels.h"
#include "aten/Composite.h"
#include "aten/CustomOps.h"
#include "aten/DeviceOnlyOps.h"
#include "aten/GeneratedKernels.h"
#include "aten/KernelCall.h"
#include "aten/Random.h"
#include "aten/Schemas.h"
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

// Operators csrc composes from other operators (Composite.cpp), by name ("addmv.out").
std::unordered_set<std::string>* g_composites = nullptr;

// Kernels refused at load (name -> reason), kernels published without a schema, and the
// operators registered through the boxed wrapper (operator, kernel).  Written once by resolve().
std::map<std::string, std::string>* g_refused = nullptr;
std::vector<std::string>* g_unchecked = nullptr;
std::vector<std::pair<std::string, std::string>>* g_boxed = nullptr;

// Launch counters of kernels outside the generated table (boxed and custom), by kernel name.
// Entries are only added (at load, under g_once), so their addresses stay valid.
std::mutex g_counter_mutex;
std::deque<std::pair<std::string, std::atomic<uint64_t>>>* g_extra_calls =
    new std::deque<std::pair<std::string, std::atomic<uint64_t>>>();

// Operators implemented in csrc itself on top of vendor calls (aten/Minimal.cpp, Random.cpp,
// Attention.cpp).
const char* const kBuiltIn[] = {"empty.memory_format",
                                "empty_strided",
                                "as_strided",
                                "view",
                                "_reshape_alias",
                                "resize_",
                                "_copy_from",
                                "_copy_from_and_resize",
                                "_local_scalar_dense",
                                "set_.source_Tensor",
                                "set_.source_Storage",
                                "set_.source_Storage_storage_offset",
                                "fill_.Scalar",
                                "zero_",
                                "record_stream",
                                "native_dropout",
                                "view_as_real",
                                "view_as_complex",
                                "unfold",
                                "_scaled_dot_product_fused_attention_overrideable",
                                "_scaled_dot_product_fused_attention_overrideable_backward",
                                "quantize_per_tensor",
                                "dequantize.self"};

// Kernels torch_backend's own operators call (aten/Copy.cpp, aten/Minimal.cpp), never
// registered by name.
bool used_internally(const std::string& name) {
  if (name == "copy_") return true;
  for (const char* builtin : kBuiltIn) {
    if (name == builtin) return true;
  }
  return false;
}

bool has_compiled_wrapper(const std::string& name) {
  for (int i = 0; i < generated::kNumKernels; i++) {
    if (name == generated::kKernelNames[i]) return true;
  }
  return false;
}

// Why `kernel`, published for `op`, must not be called: its stated schema differs from the
// dispatcher's, or does not parse.  nullopt: it may be called (a NULL schema is unchecked).
std::optional<std::string> schema_problem(const tb_kernel* kernel, const c10::OperatorHandle& op) {
  const char* stated = TB_STRUCT_HAS_FIELD(kernel, tb_kernel, schema) ? kernel->schema : nullptr;
  if (stated == nullptr) return std::nullopt;
  std::optional<std::string> difference;
  try {
    difference = schema_difference(parse_vendor_schema(stated), op.schema());
  } catch (const std::exception& e) {  // the parser throws torch::jit::ErrorReport
    return c10::str("its schema does not parse (", first_line(e.what()),
                    ")\n  kernel's schema: ", stated);
  }
  if (!difference) return std::nullopt;
  return c10::str("its schema differs from torch ", torch_version(), "'s: ", *difference,
                  "\n  kernel's schema: ", stated, "\n  torch's schema:  ", op.schema());
}

// Records a refused kernel.  The Python package warns about each when it loads the vendor
// (torch.ops calls do not turn c10 warnings into Python ones).
void refuse(const std::string& kernel, std::string reason) {
  g_refused->emplace(kernel, std::move(reason));
}

void resolve() {
  const tb_vendor_handle& table = Vendor::Get().table();
  g_by_name = new std::unordered_map<std::string, const tb_kernel*>();
  g_refused = new std::map<std::string, std::string>();
  g_unchecked = new std::vector<std::string>();
  g_boxed = new std::vector<std::pair<std::string, std::string>>();
  // First, as the one step that may refuse the whole vendor: nothing else is registered yet.
  register_custom_ops();
  std::vector<BoxedKernelSpec> boxed;
  for (int64_t i = 0; i < table.kernels.count; i++) {
    const tb_kernel* kernel = table.kernels.kernels[i];
    const std::string name = kernel->name;
    std::optional<c10::OperatorHandle> op = find_operator(name);
    if (!op.has_value()) {
      refuse(name, c10::str("torch ", torch_version(), " has no operator named '", name, "'"));
      continue;
    }
    if (std::optional<std::string> problem = schema_problem(kernel, *op)) {
      refuse(name, std::move(*problem));
      continue;
    }
    if (!TB_STRUCT_HAS_FIELD(kernel, tb_kernel, schema) || kernel->schema == nullptr) {
      g_unchecked->push_back(name);
    }
    g_by_name->emplace(name, kernel);
    if (!has_compiled_wrapper(name) && !used_internally(name)) {
      boxed.push_back({kernel, *op, kernel_counter(name)});
    }
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
  BoxedOutcome outcome = register_boxed_kernels(*g_library, boxed);
  for (auto& [kernel, reason] : outcome.refused) {
    g_by_name->erase(kernel);
    refuse(kernel, std::move(reason));
  }
  *g_boxed = std::move(outcome.registered);
  auto vendor_has = [](const std::string& name) { return g_by_name->count(name) > 0; };
  register_host_random(*g_library, vendor_has);
  std::vector<std::string> composed = register_default_composites(*g_library, vendor_has);
  composed.insert(composed.end(), composite_ops().begin(), composite_ops().end());
  g_composites = new std::unordered_set<std::string>(composed.begin(), composed.end());
  std::vector<c10::OperatorName> routed = register_cpu_substitutes(*g_library);
  g_routed_to_fallback = new std::unordered_set<c10::OperatorName>(routed.begin(), routed.end());
}

// The kernel the generated wrapper of `op` ("add.Tensor") calls, if there is one.
const char* generated_kernel_of(const std::string& op) {
  for (int i = 0; i < generated::kNumOps; i++) {
    if (op == generated::kOps[i].op) return generated::kKernelNames[generated::kOps[i].kernel];
  }
  return nullptr;
}

bool is_refused(const std::string& op) {
  if (g_refused->count(op) > 0) return true;
  const char* kernel = generated_kernel_of(op);
  return kernel != nullptr && g_refused->count(kernel) > 0;
}

bool has_cpu_implementation(const c10::OperatorHandle& op) {
  return op.hasKernelForDispatchKey(c10::DispatchKey::CPU) ||
         op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) ||
         cpu_substitute(op) != nullptr;
}

// "native", "composite", "refused", "fallback" or "unsupported" (see op_coverage).
const char* state_of(const c10::OperatorHandle& op) {
  const std::string name = short_name(op.operator_name());
  if (is_refused(name)) return "refused";
  if (g_composites->count(name) > 0) return "composite";
  const bool has_kernel = op.hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1);
  if (has_kernel && g_routed_to_fallback->count(op.operator_name()) == 0) return "native";
  // ATen's composites come before the backend fallback in the dispatch table: the operator
  // runs as the operators it calls, each on the device or not by its own state.
  if (!has_kernel &&
      (op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) ||
       op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional) ||
       op.hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd))) {
    return "composite";
  }
  return has_cpu_implementation(op) ? "fallback" : "unsupported";
}

}  // namespace

void register_vendor_kernels() { std::call_once(g_once, resolve); }

std::atomic<uint64_t>* kernel_counter(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_counter_mutex);
  for (auto& [kernel, calls] : *g_extra_calls) {
    if (kernel == name) return &calls;
  }
  g_extra_calls->emplace_back(std::piecewise_construct, std::forward_as_tuple(name),
                              std::forward_as_tuple(0));
  return &g_extra_calls->back().second;
}

std::vector<std::pair<std::string, std::string>> refused_kernels() {
  register_vendor_kernels();
  return {g_refused->begin(), g_refused->end()};
}

std::vector<std::string> unchecked_kernels() {
  register_vendor_kernels();
  return *g_unchecked;
}

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
  std::lock_guard<std::mutex> lock(g_counter_mutex);
  for (const auto& [name, counter] : *g_extra_calls) {
    uint64_t calls = counter.load(std::memory_order_relaxed);
    if (calls > 0) counts.emplace_back(name, static_cast<int64_t>(calls));
  }
  return counts;
}

void reset_kernel_counts() {
  for (int i = 0; i < generated::kNumKernels; i++) {
    generated::g_kernel_calls[i].store(0, std::memory_order_relaxed);
  }
  std::lock_guard<std::mutex> lock(g_counter_mutex);
  for (auto& entry : *g_extra_calls) entry.second.store(0, std::memory_order_relaxed);
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
      const char* state = generated::g_kernels[entry.kernel] != nullptr ? "native"
                          : is_refused(entry.op)                        ? "refused"
                          : op.has_value()                              ? state_of(*op)
                                                                        : "unsupported";
      coverage.emplace_back(entry.op, state);
      listed.insert(entry.op);
    }
    for (const auto& [op, kernel] : *g_boxed) {
      if (listed.insert(op).second) coverage.emplace_back(op, "native");
    }
    for (const auto& [kernel, reason] : *g_refused) {
      if (listed.insert(kernel).second) coverage.emplace_back(kernel, "refused");
    }
    for (const CustomOpInfo& op : custom_ops()) {
      if (listed.insert(op.name).second) coverage.emplace_back(op.name, "native");
    }
    for (const std::string& name : cpu_substitute_names()) {
      auto op = find_operator(name);
      if (op.has_value() && listed.insert(name).second) coverage.emplace_back(name, state_of(*op));
    }
    for (const std::string& name :
         std::set<std::string>(g_composites->begin(), g_composites->end())) {
      if (listed.insert(name).second) coverage.emplace_back(name, "composite");
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
