// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The few entry points Python needs that PyTorch's own APIs (torch.accelerator, torch.Stream,
// torch.Event, torch.Generator) do not cover, as torch.library operators in the
// `torch_backend` namespace.  Going through the dispatcher instead of pybind11 keeps the
// extension module free of CPython's non-limited API (it is built for abi3).
#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/jit/serialization/pickler_helper.h>
#include <torch/library.h>

#include <charconv>
#include <chrono>
#include <string>

#include "aten/Autocast.h"
#include "aten/CustomOps.h"
#include "aten/Fallback.h"
#include "aten/KernelCall.h"
#include "runtime/Device.h"
#include "runtime/DeviceAllocator.h"
#include "runtime/Generator.h"
#include "runtime/Graph.h"
#include "runtime/Ipc.h"
#include "runtime/Programs.h"
#include "runtime/StorageMeta.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

// Per-storage metadata through torch.save/torch.load (PyTorch's tensor metadata, whose values
// are booleans): each value travels as the key "name=value".
// Only for a storage in device memory: fake and functional tensors report the device while
// their storage is meta (Inductor's repro writer asks for their metadata too).
bool in_device_memory(const at::Tensor& t) {
  return t.has_storage() && t.storage().device_type() == c10::DeviceType::PrivateUse1;
}

void save_storage_meta(const at::Tensor& t, std::unordered_map<std::string, bool>& metadata) {
  if (!in_device_memory(t)) return;
  for (const auto& [name, value] : storage_meta(t.storage())) {
    metadata[name + "=" + std::to_string(value)] = true;
  }
}

void load_storage_meta(const at::Tensor& t, std::unordered_map<std::string, bool>& metadata) {
  if (!in_device_memory(t)) return;
  for (const auto& [key, present] : metadata) {
    const size_t equals = key.find('=');
    if (!present || equals == std::string::npos) continue;
    int64_t value = 0;
    const char* first = key.data() + equals + 1;
    const char* last = key.data() + key.size();
    auto [end, error] = std::from_chars(first, last, value);
    TORCH_CHECK(error == std::errc() && end == last, Vendor::Get().device_type(),
                ": tensor metadata '", key, "' is not a storage metadata value (name=integer)");
    TORCH_CHECK_NOT_IMPLEMENTED(
        has_storage_meta(), Vendor::Get().device_type(),
        ": the tensor being loaded carries per-storage metadata ('", key, "') that vendor '",
        Vendor::Get().table().vendor_name,
        "' cannot keep (it has no TB_EXTENSION_STORAGE_META, vendor.h ABI 2.4); load it with "
        "map_location='cpu' to read its bytes as they were saved");
    set_storage_meta(t.storage(), key.substr(0, equals), value);
  }
}

std::tuple<std::vector<std::string>, std::vector<int64_t>> get_storage_meta(const at::Tensor& t) {
  std::vector<std::string> names;
  std::vector<int64_t> values;
  for (auto& [name, value] : storage_meta(t.storage())) {
    names.push_back(name);
    values.push_back(value);
  }
  return {names, values};
}

void set_storage_meta_value(const at::Tensor& t, std::string name, int64_t value) {
  set_storage_meta(t.storage(), name, value);
}

// Device tensors through torch.multiprocessing (runtime/Ipc.h, torch_backend/multiprocessing.py).
using Shared =
    std::tuple<int64_t, int64_t, std::string, int64_t, int64_t, int64_t, int64_t, int64_t>;

Shared ipc_share(const at::Tensor& t) {
  ipc::SharedStorage s = ipc::share(t.storage());
  return {s.device, s.handle_fd, s.handle,     s.allocation_bytes,
          s.offset, s.bytes,     s.counter_fd, s.slot};
}

// A uint8 tensor over the whole received storage (Python takes its untyped_storage()).
at::Tensor ipc_open(int64_t device, int64_t handle_fd, std::string handle, int64_t allocation_bytes,
                    int64_t offset, int64_t bytes, int64_t counter_fd, int64_t slot,
                    int64_t producer_pid) {
  ipc::SharedStorage shared{device, handle_fd, std::move(handle), allocation_bytes,
                            offset, bytes,     counter_fd,        slot};
  c10::Storage storage = ipc::open(shared, producer_pid);
  auto t = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      caffe2::TypeMeta::Make<uint8_t>());
  t.unsafeGetTensorImpl()->set_sizes_contiguous({bytes});
  return t;
}

using Info =
    std::tuple<std::string, std::string, std::string, std::string, int64_t, int64_t, int64_t>;

// Loads the vendor and validates the environment; returns (device type, vendor name, vendor
// version, library path, ABI major, ABI minor, device count).
Info load() {
  const Vendor& vendor = Vendor::Get();
  (void)fallback_mode();  // rejects a bad TORCH_BACKEND_FALLBACK now, at import
  register_vendor_kernels();
  static const bool serialization = [] {
    torch::jit::TensorBackendMetaRegistry(c10::DeviceType::PrivateUse1, &save_storage_meta,
                                          &load_storage_meta);
    return true;
  }();
  (void)serialization;
  const tb_vendor_handle& t = vendor.table();
  return {t.device_type, t.vendor_name, t.vendor_version,     t.library_path,
          t.abi_major,   t.abi_minor,   vendor.device_count()};
}

// (device type, message) of a failed load; see Vendor::LoadFailure.
std::tuple<std::string, std::string> load_error() {
  auto [device_type, message] = Vendor::LoadFailure();
  return {device_type, message};
}

// See Vendor::FailLoad.
void fail_load(const std::string& message) { Vendor::FailLoad(message); }

void lazy_init() {
  Vendor::Use("init");
  at::globalContext().lazyInitDevice(c10::DeviceType::PrivateUse1);
}

bool is_in_bad_fork() { return Vendor::IsInBadFork(); }

bool is_initialized() { return Vendor::IsInUse(); }

std::tuple<std::string, int64_t, int64_t, int64_t, int64_t, int64_t> device_properties(
    int64_t device) {
  c10::DeviceIndex index = resolve_device(static_cast<c10::DeviceIndex>(device));
  tb_device_properties props{};
  props.struct_size = sizeof props;
  TB_VENDOR_CALL(device, get_properties, index, &props);
  return {props.name,          static_cast<int64_t>(props.total_memory),
          props.compute_units, props.arch_major,
          props.arch_minor,    static_cast<int64_t>(props.capabilities)};
}

// Clears a fault of `device` (vendor.h, "Device faults") through the vendor's reset.
void reset_device(int64_t device) {
  c10::DeviceIndex index = resolve_device(static_cast<c10::DeviceIndex>(device));
  const Vendor& vendor = Vendor::Use("device.reset");
  TORCH_CHECK_NOT_IMPLEMENTED(vendor.table().device.reset != nullptr, vendor.device_type(),
                              ": the vendor cannot reset a device (tb_device_api::reset is "
                              "NULL): a fault lasts until the process ends");
  TB_VENDOR_CALL(device, reset, index);
}

// Enqueues failing work on the current stream of `device`: tests of fault handling.
void inject_fault(int64_t device, const std::string& message) {
  c10::DeviceIndex index = resolve_device(static_cast<c10::DeviceIndex>(device));
  const Vendor& vendor = Vendor::Use("stream.inject_fault");
  TORCH_CHECK_NOT_IMPLEMENTED(vendor.table().stream.inject_fault != nullptr, vendor.device_type(),
                              ": the vendor cannot inject faults (tb_stream_api::inject_fault "
                              "is NULL)");
  TB_VENDOR_CALL(stream, inject_fault, vendor_stream(current_stream(index)), message.c_str());
}

std::tuple<int64_t, int64_t> stream_priorities(int64_t device) {
  auto [least, greatest] = stream_priority_range(static_cast<c10::DeviceIndex>(device));
  return {least, greatest};
}

int64_t stream_priority_of(int64_t stream_id, int64_t device) {
  c10::Stream stream(c10::Stream::UNSAFE,
                     make_device(resolve_device(static_cast<c10::DeviceIndex>(device))), stream_id);
  return stream_priority(stream);
}

void set_per_process_memory_fraction(double fraction, int64_t device) {
  set_memory_fraction(resolve_device(static_cast<c10::DeviceIndex>(device)), fraction);
}

double get_per_process_memory_fraction(int64_t device) {
  return memory_fraction(resolve_device(static_cast<c10::DeviceIndex>(device)));
}

std::vector<int64_t> get_memory_snapshot(int64_t device) {
  return memory_snapshot(resolve_device(static_cast<c10::DeviceIndex>(device)));
}

// Seconds per allocate + free of `nbytes` through the caching allocator of the current device
// ("device") or c10's CPU allocator ("cpu"), over `iterations` back-to-back pairs: the
// allocator's own cost, without Python or the dispatcher (make bench's allocator row).
double time_allocator(const std::string& side, int64_t nbytes, int64_t iterations) {
  TORCH_CHECK(side == "device" || side == "cpu",
              "torch_backend: _time_allocator: side must be 'device' or 'cpu', not '", side, "'");
  TORCH_CHECK(nbytes > 0 && iterations > 0,
              "torch_backend: _time_allocator: nbytes and iterations must be positive");
  c10::Allocator* allocator = side == "cpu" ? c10::GetCPUAllocator() : device_allocator();
  if (side == "device") {
    Vendor::Use("_time_allocator");
    allocator->allocate(static_cast<size_t>(nbytes));  // the first one may reserve a segment
  }
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iterations; i++) {
    c10::DataPtr block = allocator->allocate(static_cast<size_t>(nbytes));
    // Keeps the pair from being optimised away: the pointer escapes.
    asm volatile("" : : "r"(block.get()) : "memory");
  }
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / static_cast<double>(iterations);
}

at::Generator get_default_generator(int64_t device) {
  return default_generator(static_cast<c10::DeviceIndex>(device));
}

std::tuple<std::vector<std::string>, std::vector<int64_t>> get_fallback_counts() {
  std::vector<std::string> names;
  std::vector<int64_t> counts;
  for (auto& [name, count] : fallback_counts()) {
    names.push_back(name);
    counts.push_back(count);
  }
  return {names, counts};
}

std::string get_fallback_mode() { return fallback_mode_name(fallback_mode()); }

void set_mode(const std::string& mode) { set_fallback_mode(parse_fallback_mode(mode, "mode")); }

std::tuple<std::vector<std::string>, std::vector<std::string>> get_op_coverage(
    std::vector<std::string> names) {
  std::vector<std::string> ops, states;
  for (auto& [op, state] : op_coverage(names)) {
    ops.push_back(op);
    states.push_back(state);
  }
  return {ops, states};
}

std::tuple<std::vector<std::string>, std::vector<int64_t>> get_kernel_counts() {
  std::vector<std::string> names;
  std::vector<int64_t> counts;
  for (auto& [name, count] : kernel_counts()) {
    names.push_back(name);
    counts.push_back(count);
  }
  return {names, counts};
}

std::tuple<std::vector<std::string>, std::vector<std::string>> get_op_kernels() {
  std::vector<std::string> ops, kernels;
  for (auto& [op, kernel] : op_kernels()) {
    ops.push_back(op);
    kernels.push_back(kernel);
  }
  return {ops, kernels};
}

std::tuple<std::vector<std::string>, std::vector<std::string>> get_refused_kernels() {
  std::vector<std::string> kernels, reasons;
  for (auto& [kernel, reason] : refused_kernels()) {
    kernels.push_back(kernel);
    reasons.push_back(reason);
  }
  return {kernels, reasons};
}

std::tuple<std::vector<std::string>, std::vector<std::string>, std::vector<std::string>>
get_custom_ops() {
  register_vendor_kernels();
  std::vector<std::string> names, schemas, backwards;
  for (const CustomOpInfo& op : custom_ops()) {
    names.push_back(op.name);
    schemas.push_back(op.schema);
    backwards.push_back(op.backward);
  }
  return {names, schemas, backwards};
}

std::tuple<std::vector<std::string>, std::vector<std::string>> get_autocast_policies() {
  std::vector<std::string> ops, policies;
  for (const auto& [op, policy] : autocast_policies()) {
    ops.push_back(op);
    policies.push_back(policy);
  }
  return {ops, policies};
}

void register_graph_impl() { graph::register_graph_impl(); }

std::tuple<int64_t, int64_t> graph_pool_handle() {
  c10::MempoolId_t id = graph::new_pool_handle();
  return {static_cast<int64_t>(id.first), static_cast<int64_t>(id.second)};
}

int64_t get_graph_pool_reserved(int64_t device, int64_t first, int64_t second) {
  return static_cast<int64_t>(graph_pool_reserved(
      resolve_device(static_cast<c10::DeviceIndex>(device)),
      {static_cast<c10::CaptureId_t>(first), static_cast<c10::CaptureId_t>(second)}));
}

TORCH_LIBRARY(torch_backend, m) {
  m.def("_load() -> (str, str, str, str, int, int, int)", &load);
  m.def("_load_error() -> (str, str)", &load_error);
  m.def("_fail_load(str message) -> ()", &fail_load);
  m.def("_lazy_init() -> ()", &lazy_init);
  m.def("_is_in_bad_fork() -> bool", &is_in_bad_fork);
  m.def("_is_initialized() -> bool", &is_initialized);
  m.def("_device_properties(int device) -> (str, int, int, int, int, int)", &device_properties);
  m.def("_reset_device(int device) -> ()", &reset_device);
  m.def("_has_host_funcs() -> bool", &has_host_funcs);
  m.def("_inject_fault(int device, str message) -> ()", &inject_fault);
  m.def("_stream_priority_range(int device) -> (int, int)", &stream_priorities);
  m.def("_stream_priority(int stream_id, int device) -> int", &stream_priority_of);
  m.def("_set_memory_fraction(float fraction, int device) -> ()", &set_per_process_memory_fraction);
  m.def("_memory_fraction(int device) -> float", &get_per_process_memory_fraction);
  m.def("_memory_snapshot(int device) -> int[]", &get_memory_snapshot);
  m.def("_default_generator(int device) -> Generator?", &get_default_generator);
  m.def("_time_allocator(str side, int nbytes, int iterations) -> float", &time_allocator);
  m.def("_fallback_counts() -> (str[], int[])", &get_fallback_counts);
  m.def("_reset_fallback_counts() -> ()", &reset_fallback_counts);
  m.def("_fallback_mode() -> str", &get_fallback_mode);
  m.def("_set_fallback_mode(str mode) -> ()", &set_mode);
  m.def("_autocast_policies() -> (str[], str[])", &get_autocast_policies);
  m.def("_op_coverage(str[] ops) -> (str[], str[])", &get_op_coverage);
  m.def("_op_kernels() -> (str[], str[])", &get_op_kernels);
  m.def("_kernel_counts() -> (str[], int[])", &get_kernel_counts);
  m.def("_reset_kernel_counts() -> ()", &reset_kernel_counts);
  m.def("_refused_kernels() -> (str[], str[])", &get_refused_kernels);
  m.def("_unchecked_kernels() -> str[]", &unchecked_kernels);
  m.def("_custom_ops() -> (str[], str[], str[])", &get_custom_ops);
  m.def("_register_graph_impl() -> ()", &register_graph_impl);
  m.def("_graph_pool_handle() -> (int, int)", &graph_pool_handle);
  m.def("_is_current_stream_capturing() -> bool", &graph::is_current_stream_capturing);
  m.def("_storage_meta(Tensor t) -> (str[], int[])", &get_storage_meta);
  m.def("_set_storage_meta(Tensor t, str name, int value) -> ()", &set_storage_meta_value);
  m.def("_ipc_supported() -> bool", &ipc::supported);
  m.def("_ipc_share(Tensor t) -> (int, int, str, int, int, int, int, int)", &ipc_share);
  m.def(
      "_ipc_open(int device, int handle_fd, str handle, int allocation_bytes, int offset, "
      "int bytes, int counter_fd, int slot, int producer_pid) -> Tensor",
      &ipc_open);
  m.def("_ipc_release(int counter_fd, int slot) -> ()", &ipc::release);
  m.def("_ipc_collect() -> int", &ipc::collect);
  m.def("_program_languages() -> str[]", &programs::languages);
  m.def("_program_build(int device, str language, str source, str options) -> int",
        &programs::build);
  m.def("_program_kernel(int program, str name) -> (int, str, int)", &programs::kernel);
  m.def("_program_launch_count() -> int", &programs::launch_count);
  m.def("_graph_pool_reserved(int device, int first, int second) -> int", &get_graph_pool_reserved);
}

}  // namespace
}  // namespace torch_backend
