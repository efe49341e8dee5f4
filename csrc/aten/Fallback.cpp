// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "aten/Fallback.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/_copy_from.h>
#include <c10/core/CPUAllocator.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "aten/Copy.h"
#include "aten/DeviceOnlyOps.h"
#include "aten/KernelCall.h"
#include "runtime/Device.h"
#include "runtime/Generator.h"
#include "runtime/Graph.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

std::mutex g_mutex;  // guards the counters and the set of operators already warned about
std::map<std::string, int64_t>* g_counts = new std::map<std::string, int64_t>();
std::set<std::string>* g_warned = new std::set<std::string>();

// note_declined's last note on this thread: the kernel's name and why it declined.
struct Declined {
  std::string kernel;
  std::string why;
  bool kept_back = false;  // torch_backend kept the call from the kernel (note_kept_back)
};
thread_local Declined t_declined;

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

}  // namespace

at::Generator cpu_generator_from(at::Generator device_generator) {
  uint64_t seed = 0, offset = 0;
  {
    std::lock_guard<std::mutex> lock(device_generator.mutex());
    std::tie(seed, offset) =
        device_generator.get<PhiloxGenerator>()->philox_inputs(/*increment=*/4);
  }
  return at::make_generator<at::CPUGeneratorImpl>(splitmix64(seed ^ splitmix64(offset)));
}

namespace {

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
    value = cpu_generator_from(device_generator);
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
// mark those arguments as written (`Tensor? running_mean`, not `Tensor(a!)?`): the fallback
// copies them back like written arguments; otherwise nn.BatchNorm's running statistics would
// silently never move.
bool writes_running_stats(const c10::OperatorHandle& op) {
  const std::string& name = op.operator_name().name;
  return name == "aten::native_batch_norm" || name == "aten::batch_norm_update_stats" ||
         name == "aten::batch_norm_gather_stats" ||
         name == "aten::batch_norm_gather_stats_with_counts";
}

bool on_device(const at::Tensor& t) {
  return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1;
}

// The device tensors of an operator's arguments, staged on the host with their aliasing kept:
// each device storage the arguments use gets one host storage of the same size, holding the
// bytes the arguments cover, and each argument a host tensor with its sizes, strides and
// storage offset over it.  So the CPU kernel sees what a CPU program would: `x[1:]` and
// `x[:-1]` overlap (and the CPU raises where it raises), an in-place operation on a view
// updates its base, and a view the CPU kernel returns can be mapped back onto the device
// storage (device_view) -- results that alias arguments alias them on the device too.
class HostStage {
 public:
  // A host tensor with `t`'s geometry over the host copy of its storage; host tensors are
  // returned as they are.
  at::Tensor stage(const at::Tensor& t) {
    if (!on_device(t)) return t;
    // A tensor passed twice (cat(tensors=[out, x], out=out)) is one host tensor, so the CPU
    // kernel's identity checks (overlap of out= with an input) see what the caller passed.
    for (const auto& [impl, host] : staged_) {
      if (impl == t.unsafeGetTensorImpl()) return host;
    }
    Entry& entry = entry_for(t.storage());
    at::Tensor host = at::detail::make_tensor<c10::TensorImpl>(
        c10::Storage(entry.host), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
    host.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
    if (t.is_conj()) host._set_conj(true);
    if (t.is_neg()) host._set_neg(true);
    staged_.emplace_back(t.unsafeGetTensorImpl(), host);
    if (t.numel() > 0) {
      size_t first = static_cast<size_t>(t.storage_offset());
      size_t last = first + 1;
      for (int64_t d = 0; d < t.dim(); d++) {
        last += static_cast<size_t>((t.size(d) - 1) * t.stride(d));
      }
      const size_t item = t.element_size();
      entry.spans.emplace_back(first * item, last * item);
    }
    return host;
  }

  // Copies the bytes staged tensors cover from the device, one copy per run of overlapping or
  // adjacent spans, and waits for them.
  void fetch() {
    std::vector<c10::Stream> streams;
    std::vector<c10::Storage> targets;
    for (Entry& entry : entries_) {
      std::sort(entry.spans.begin(), entry.spans.end());
      const c10::DeviceIndex device = entry.device.device().index();
      c10::Stream stream = current_stream(device);
      const auto* source = static_cast<const char*>(entry.device.data());
      auto* target = static_cast<char*>(entry.host.mutable_data());
      for (size_t i = 0; i < entry.spans.size();) {
        auto [begin, end] = entry.spans[i];
        for (i++; i < entry.spans.size() && entry.spans[i].first <= end; i++) {
          end = std::max(end, entry.spans[i].second);
        }
        TB_VENDOR_CALL(memory, copy_d2h_async, vendor_stream(stream), target + begin,
                       source + begin, end - begin);
      }
      if (std::find(streams.begin(), streams.end(), stream) == streams.end()) {
        streams.push_back(stream);
      }
      targets.push_back(entry.host);
    }
    for (const c10::Stream& stream : streams) wait_for_copies_into(stream, targets);
  }

  // `host` (a result of the CPU kernel) as a device tensor over the device storage its host
  // storage stands for, or an undefined tensor when it uses no staged storage (or the kernel
  // resized one, so that the device storage no longer matches it).
  at::Tensor device_view(const at::Tensor& host) const {
    if (!host.defined() || !host.has_storage()) return at::Tensor();
    for (const Entry& entry : entries_) {
      if (!host.storage().is_alias_of(entry.host)) continue;
      if (entry.host.nbytes() != entry.device.nbytes()) return at::Tensor();
      at::Tensor view = at::detail::make_tensor<c10::TensorImpl>(
          c10::Storage(entry.device), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
          host.dtype());
      view.unsafeGetTensorImpl()->set_sizes_and_strides(host.sizes(), host.strides(),
                                                        host.storage_offset());
      if (host.is_conj()) view._set_conj(true);
      if (host.is_neg()) view._set_neg(true);
      return view;
    }
    return at::Tensor();
  }

 private:
  struct Entry {
    c10::Storage device;
    c10::Storage host;
    std::vector<std::pair<size_t, size_t>> spans;  // byte ranges to fetch
  };

  Entry& entry_for(const c10::Storage& storage) {
    for (Entry& entry : entries_) {
      if (entry.device.is_alias_of(storage)) return entry;
    }
    // Pageable host memory, never touched beyond the fetched spans: a small view of a large
    // storage costs the view's bytes, not the storage's.
    c10::Storage host(c10::Storage::use_byte_size_t(), storage.nbytes(), c10::GetCPUAllocator(),
                      /*resizable=*/true);
    entries_.push_back(Entry{storage, std::move(host), {}});
    return entries_.back();
  }

  std::vector<Entry> entries_;  // a call touches few storages: searched linearly
  std::vector<std::pair<const c10::TensorImpl*, at::Tensor>> staged_;  // device impl, host
};

// Operators that take host tensors beside device ones on CUDA: indices (x[cpu_mask]), and the
// lengths, repeats and quantizer parameters they move to the host themselves.
bool takes_host_operands(const c10::OperatorHandle& op) {
  static const std::set<std::string> names = {"aten::index",
                                              "aten::index_put",
                                              "aten::index_put_",
                                              "aten::_index_put_impl_",
                                              "aten::_unsafe_index",
                                              "aten::_unsafe_index_put",
                                              "aten::ctc_loss",
                                              "aten::_ctc_loss",
                                              "aten::_ctc_loss_backward",
                                              "aten::repeat_interleave",
                                              "aten::quantize_per_channel"};
  return names.count(op.operator_name().name) != 0;
}

// Raises CUDA's error when device tensors among the arguments are on different devices, when
// the operator writes a host tensor beside them, or reads one that is more than a number
// (takes_host_operands aside), and returns the device of the first one.  The _foreach_ operators
// pair their lists' tensors by position, as CUDA's per-tensor path does: the tensors at one
// position must share a device.
std::optional<c10::Device> check_devices(const c10::OperatorHandle& op, const c10::IValue* values,
                                         const std::string& name) {
  const auto& arguments = op.schema().arguments();
  const bool foreach = op.operator_name().name.rfind("aten::_foreach_", 0) == 0;
  std::optional<c10::Device> first;
  std::vector<std::optional<c10::Device>> by_position;
  auto check = [&](std::optional<c10::Device>& expected, const at::Tensor& t, size_t argument) {
    if (!on_device(t)) return;
    if (!expected.has_value()) {
      expected = t.device();
    } else if (t.device() != *expected) {
      fail_device_mismatch(*expected, t.device(), arguments[argument].name().c_str(), name);
    }
  };
  for (size_t i = 0; i < arguments.size(); i++) {
    const c10::IValue& value = values[i];
    if (value.isTensor()) {
      if (!foreach) check(first, value.toTensor(), i);
    } else if (value.isTensorList() || value.isOptionalTensorList()) {
      size_t position = 0;
      for (const c10::IValue& element : value.toListRef()) {
        if (element.isTensor()) {
          if (foreach) {
            if (by_position.size() <= position) by_position.resize(position + 1);
            check(by_position[position], element.toTensor(), i);
          } else {
            check(first, element.toTensor(), i);
          }
        }
        position++;
      }
    }
  }
  if (!first.has_value()) {
    for (const std::optional<c10::Device>& device : by_position) {
      if (device.has_value()) return device;
    }
  }
  // A host tensor beside device tensors: CUDA refuses one the operator writes (an out=
  // argument, an in-place self: the fallback would write host memory), and one it reads unless
  // it is 0-dim (a number) or the operator takes host index tensors on CUDA.
  if (!first.has_value()) return first;
  const bool reads_host = foreach || takes_host_operands(op);
  for (size_t i = 0; i < arguments.size(); i++) {
    const bool written =
        arguments[i].alias_info() != nullptr && arguments[i].alias_info()->isWrite();
    auto refuse_host = [&](const at::Tensor& t) {
      if (t.defined() && t.device().is_cpu() && (written || (t.dim() > 0 && !reads_host))) {
        fail_device_mismatch(*first, t.device(), arguments[i].name().c_str(), name);
      }
    };
    if (values[i].isTensor()) {
      refuse_host(values[i].toTensor());
    } else if (values[i].isTensorList()) {
      for (const c10::IValue& element : values[i].toListRef()) refuse_host(element.toTensor());
    }
  }
  return first;
}

bool has_complex_half(const c10::IValue& value) {
  if (value.isTensor()) {
    return value.toTensor().defined() && value.toTensor().scalar_type() == at::kComplexHalf;
  }
  if (value.isTensorList()) {
    for (const at::Tensor& t : value.toTensorVector()) {
      if (t.defined() && t.scalar_type() == at::kComplexHalf) return true;
    }
  }
  return false;
}

// Runs the CPU kernel on the stack's arguments (from `first`).  ATen's CPU has no ComplexHalf
// kernel for most operators CUDA runs in ComplexHalf (sum, mean, cumsum...), which CUDA
// computes in complex<float>: where the CPU refuses a ComplexHalf argument as not
// implemented, the call runs again as CUDA computes it -- the ComplexHalf tensors as complex64,
// written ones rounded back, complex64 results rounded to ComplexHalf.
void redispatch_on_cpu(const c10::OperatorHandle& kernel, torch::jit::Stack* stack, size_t first) {
  const c10::DispatchKeySet cpu(c10::DispatchKey::CPU);
  const auto begin = stack->begin() + static_cast<std::ptrdiff_t>(first);
  if (std::none_of(begin, stack->end(), has_complex_half)) {
    kernel.redispatchBoxed(cpu, stack);
    return;
  }
  const std::vector<c10::IValue> arguments(begin, stack->end());  // the retry's
  try {
    kernel.redispatchBoxed(cpu, stack);
    return;
  } catch (const c10::NotImplementedError&) {
    // Retried below, widened.
  }
  std::vector<std::pair<at::Tensor, at::Tensor>> widened;  // (ComplexHalf tensor, complex64)
  auto widen = [&](const at::Tensor& t) -> at::Tensor {
    if (!t.defined() || t.scalar_type() != at::kComplexHalf) return t;
    at::Tensor wide = t.to(at::kComplexFloat);
    widened.emplace_back(t, wide);
    return wide;
  };
  stack->resize(first);
  for (const c10::IValue& value : arguments) {
    if (value.isTensor()) {
      stack->emplace_back(widen(value.toTensor()));
    } else if (value.isTensorList()) {
      c10::List<at::Tensor> list;
      for (const at::Tensor& t : value.toTensorVector()) list.push_back(widen(t));
      stack->emplace_back(list);
    } else {
      stack->push_back(value);
    }
  }
  kernel.redispatchBoxed(cpu, stack);
  for (auto& [half, wide] : widened) {
    if (!half.sizes().equals(wide.sizes())) half.resize_(wide.sizes());
    half.copy_(wide);
  }
  for (size_t i = first; i < stack->size(); i++) {
    c10::IValue& value = (*stack)[i];
    if (value.isTensor() && value.toTensor().defined() &&
        value.toTensor().scalar_type() == at::kComplexFloat) {
      value = value.toTensor().to(at::kComplexHalf);
    }
  }
}

bool is_written(const c10::Argument& argument) {
  return argument.alias_info() != nullptr && argument.alias_info()->isWrite();
}

// Runs `op` (or its CPU equivalent `kernel`) on the CPU: ATen's cpu_fallback, but with the
// arguments' aliasing kept (HostStage), outputs on the device of the operator's device tensors
// (never on a CPU number's), views returned as views of the device storage, and the devices of
// the arguments checked first.
void run_on_cpu(const c10::OperatorHandle& op, const c10::OperatorHandle& kernel,
                torch::jit::Stack* stack, const std::string& name) {
  const auto& arguments = op.schema().arguments();
  const auto& returns = op.schema().returns();
  const size_t first = stack->size() - arguments.size();
  std::optional<c10::Device> target = check_devices(op, stack->data() + first, name);
  // An out= tensor whose elements overlap (an expanded tensor): ATen's TensorIterator
  // refuses it on CPU and CUDA, and the CPU kernels that do not (avg_pool3d's) write past the
  // end of its storage -- here the staged host copy.
  for (size_t i = 0; i < arguments.size(); i++) {
    const c10::IValue& value = (*stack)[first + i];
    if (!arguments[i].is_out() || !value.isTensor()) continue;
    const at::Tensor& out = value.toTensor();
    if (out.defined() && on_device(out)) at::assert_no_internal_overlap(out);
  }
  const bool stats = writes_running_stats(op);
  const std::vector<c10::IValue> originals(stack->begin() + static_cast<std::ptrdiff_t>(first),
                                           stack->end());

  // Stage every device tensor; remember the written ones, to copy back.
  HostStage stage;
  std::vector<std::pair<at::Tensor, at::Tensor>> written;  // (device tensor, host tensor)
  bool writes = false;
  for (size_t i = 0; i < arguments.size(); i++) {
    c10::IValue& value = (*stack)[first + i];
    const bool write =
        is_written(arguments[i]) ||
        (stats && (arguments[i].name() == "running_mean" || arguments[i].name() == "running_var"));
    writes |= write;
    if (value.isTensor()) {
      const at::Tensor device = value.toTensor();
      at::Tensor host = stage.stage(device);
      if (write && on_device(device)) written.emplace_back(device, host);
      value = host;
    } else if (value.isTensorList()) {
      c10::List<at::Tensor> hosts;
      for (const at::Tensor& device : value.toTensorVector()) {
        at::Tensor host = stage.stage(device);
        if (write && on_device(device)) written.emplace_back(device, host);
        hosts.push_back(std::move(host));
      }
      value = hosts;
    } else if (value.isOptionalTensorList()) {
      c10::List<std::optional<at::Tensor>> hosts;
      for (const c10::IValue& element : value.toListRef()) {
        if (element.isNone()) {
          hosts.push_back(std::nullopt);
          continue;
        }
        const at::Tensor device = element.toTensor();
        at::Tensor host = stage.stage(device);
        if (write && on_device(device)) written.emplace_back(device, host);
        hosts.push_back(std::move(host));
      }
      value = hosts;
    } else if (value.isDevice()) {
      target = value.toDevice();  // a factory's device, or _to_copy's destination
      value = c10::Device(c10::DeviceType::CPU);
    }
  }
  // A pure view operator reads no elements: only the storages' sizes matter.
  bool view_only = !writes && !returns.empty();
  for (const c10::Argument& ret : returns) view_only &= ret.alias_info() != nullptr;
  if (!view_only) stage.fetch();

  redispatch_on_cpu(kernel, stack, first);

  // Written arguments go back to the device (asynchronously: the copies are queued on the
  // current stream, from host memory staged for them).
  for (auto& [device, host] : written) {
    if (!host.defined()) continue;
    if (device.sizes() != host.sizes()) device.resize_(host.sizes());
    // A kernel that restrided its output (ATen's padding and pooling kernels give an out=
    // tensor its input's memory format) restrides the caller's tensor too, as on the CPU.
    if (device.strides() != host.strides() && device.is_non_overlapping_and_dense() &&
        host.is_non_overlapping_and_dense()) {
      device.as_strided_(host.sizes(), host.strides(), device.storage_offset());
    }
    at::_copy_from(host, device, /*non_blocking=*/true);
  }

  // Results: a written argument's own tensor for a mutable alias, a view of the device storage
  // where the CPU kernel returned one of a staged storage, else a copy on the target device.
  const size_t results = stack->size() - returns.size();
  auto to_device = [&](const at::Tensor& host, bool is_view) -> at::Tensor {
    if (!host.defined() || !host.device().is_cpu()) return host;
    at::Tensor view = stage.device_view(host);
    if (view.defined()) return view;
    // Without the bytes fetched, only a view of a staged storage has meaningful contents.
    TORCH_INTERNAL_ASSERT(!view_only, "torch_backend: view operator ", name,
                          " returned a tensor that is not a view of its arguments");
    if (is_view) {
      TORCH_WARN_ONCE(Vendor::Get().device_type(), ": view operator ", name,
                      " ran through the CPU fallback and returned a copy, not a view");
    }
    if (!target.has_value() || target->is_cpu()) return host;
    return host.to(*target, /*non_blocking=*/true);
  };
  for (size_t r = 0; r < returns.size(); r++) {
    c10::IValue& value = (*stack)[results + r];
    const c10::AliasInfo* alias = returns[r].alias_info();
    if (alias != nullptr && alias->isWrite()) {
      bool found = false;
      for (size_t i = 0; i < arguments.size() && !found; i++) {
        const c10::AliasInfo* argument_alias = arguments[i].alias_info();
        if (argument_alias != nullptr && *argument_alias == *alias) {
          value = originals[i];  // the caller's own tensor (or list)
          found = true;
        }
      }
      TORCH_CHECK(found, "torch_backend: operator ", name, " returns `", returns[r],
                  "`, which aliases none of its arguments");
      continue;
    }
    const bool is_view = alias != nullptr;
    if (value.isTensor()) {
      value = to_device(value.toTensor(), is_view);
    } else if (value.isTensorList()) {
      c10::List<at::Tensor> devices;
      for (const at::Tensor& host : value.toTensorVector()) {
        devices.push_back(to_device(host, is_view));
      }
      value = devices;
    }
  }
}
// The operator's name without its overload and in-place underscore: "hardtanh" for
// "hardtanh_", "avg_pool2d" for "avg_pool2d.out".
std::string base_name(const std::string& name) {
  std::string base = name.substr(0, name.find('.'));
  const size_t colons = base.rfind("::");
  if (colons != std::string::npos) base = base.substr(colons + 2);
  if (!base.empty() && base.back() == '_') base.pop_back();
  return base;
}

// Why the device's kernel did not run `name`: the note of a decline of a kernel of the same
// operator on this thread (consumed), else that the vendor has none.
std::string why_not_on_device(const std::string& name) {
  Declined declined = std::move(t_declined);
  t_declined = Declined{};
  if (!declined.kernel.empty() && base_name(declined.kernel) == base_name(name)) {
    if (declined.kept_back) {
      return c10::str("torch_backend did not hand the call to the vendor's kernel: ", declined.why);
    }
    return c10::str("the vendor's kernel ", declined.kernel, " declined the call: ", declined.why);
  }
  return "the vendor has no kernel for it";
}

// TORCH_BACKEND_FALLBACK's verdict on running `op` on the CPU, a capture's refusal, the count
// and the warning; returns the operator's name.
std::string admit(const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  std::string name = operator_name(op);
  const std::string why = why_not_on_device(name);
  FallbackMode current = mode().load(std::memory_order_relaxed);
  if (current == FallbackMode::kError) {
    c10::DeviceIndex device = device_of_arguments(op, stack);
    TORCH_CHECK_NOT_IMPLEMENTED(false, Vendor::Get().device_type(), ": operator ", name,
                                " cannot run on device ", make_device(device), " (", why,
                                ") and TORCH_BACKEND_FALLBACK=error forbids running it on the "
                                "CPU");
  }
  if (C10_UNLIKELY(graph::capturing_any())) {
    graph::check_capturable(device_of_arguments(op, stack),
                            c10::str("operator ", name,
                                     ", which has no device kernel and would "
                                     "run on the CPU fallback (a host "
                                     "round trip),"));
  }
  bool warn = false;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    (*g_counts)[name]++;
    if (current == FallbackMode::kWarn) warn = g_warned->insert(name).second;
  }
  if (warn) {
    TORCH_WARN(Vendor::Get().device_type(), ": operator ", name, " runs on the CPU: ", why,
               " (copies in and out; TORCH_BACKEND_FALLBACK=warn)");
  }
  return name;
}

void fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const std::string name = admit(op, *stack);
  undefined_to_none(op, *stack);
  replace_generators(op, *stack);
  // Operators ATen selects only for devices have no CPU kernel: run their CPU equivalent.
  const c10::OperatorHandle* equivalent = cpu_substitute(op);
  run_on_cpu(op, equivalent != nullptr ? *equivalent : op, stack, name);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback>());
}

}  // namespace

void cpu_fallback_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  fallback(op, stack);
}

void note_declined(const char* kernel, std::string why) {
  // A vendor's message that starts with the kernel's name (opencl's do) says it once.
  const std::string prefix = std::string(kernel) + ": ";
  if (why.compare(0, prefix.size(), prefix) == 0) why.erase(0, prefix.size());
  t_declined = Declined{kernel, std::move(why)};
}

void note_kept_back(std::string_view op, std::string why) {
  t_declined = Declined{std::string(op), std::move(why), true};
}

void admit_cpu_fallback(const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  admit(op, stack);
}

void run_through_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack,
                     const CpuRoute& route) {
  const std::string name = admit(op, *stack);
  const auto& arguments = op.schema().arguments();
  const size_t first = stack->size() - arguments.size();
  std::optional<c10::Device> device = check_devices(op, stack->data() + first, name);
  std::vector<std::pair<at::Tensor, at::Tensor>> written;  // (device tensor, its CPU copy)
  auto to_cpu = [&](const at::Tensor& t, bool write) -> at::Tensor {
    if (!on_device(t)) return t;
    if (!device.has_value()) device = t.device();
    at::Tensor host = route.to_cpu(t);
    if (write) written.emplace_back(t, host);
    return host;
  };
  const std::vector<c10::IValue> originals(stack->begin() + static_cast<std::ptrdiff_t>(first),
                                           stack->end());
  for (size_t i = 0; i < arguments.size(); i++) {
    c10::IValue& value = (*stack)[first + i];
    const bool write = is_written(arguments[i]);
    if (value.isTensor()) {
      value = to_cpu(value.toTensor(), write);
    } else if (value.isTensorList()) {
      c10::List<at::Tensor> hosts;
      for (const at::Tensor& t : value.toTensorVector()) hosts.push_back(to_cpu(t, write));
      value = hosts;
    } else if (value.isDevice() && value.toDevice().type() == c10::DeviceType::PrivateUse1) {
      device = value.toDevice();  // a factory's device
      value = c10::Device(c10::kCPU);
    }
  }
  op.callBoxed(stack);
  for (auto& [target, host] : written) route.write_back(target, host);
  const auto& returns = op.schema().returns();
  const size_t results = stack->size() - returns.size();
  for (size_t r = 0; r < returns.size(); r++) {
    c10::IValue& value = (*stack)[results + r];
    const c10::AliasInfo* alias = returns[r].alias_info();
    if (alias != nullptr && alias->isWrite()) {
      for (size_t i = 0; i < arguments.size(); i++) {
        const c10::AliasInfo* argument = arguments[i].alias_info();
        if (argument != nullptr && *argument == *alias) value = originals[i];
      }
      continue;
    }
    if (!device.has_value()) continue;
    auto back = [&](const at::Tensor& t) {
      return t.defined() && t.device().is_cpu() ? route.to_device(t, *device) : t;
    };
    if (value.isTensor()) {
      value = back(value.toTensor());
    } else if (value.isTensorList()) {
      c10::List<at::Tensor> devices;
      for (const at::Tensor& t : value.toTensorVector()) devices.push_back(back(t));
      value = devices;
    }
  }
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
