// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "runtime/Vendor.h"

#include <c10/core/Device.h>
#include <pthread.h>
#include <torch/version.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <type_traits>

namespace torch_backend {

// The slot list (vendor_slots.h) matches vendor.h's structs, checked in C++ as the header checks
// it in C: every line's member has the line's type.
#define TB_SLOT_CXX_CHECK_(gt, gf, name, required, since, ret, params, names) \
  static_assert(std::is_same_v<decltype(gt::name), ret(*) params>,            \
                "vendor_slots.h: " #gt "::" #name " does not have the type its line says");
TB_VENDOR_SLOTS(TB_SLOT_CXX_CHECK_)
#undef TB_SLOT_CXX_CHECK_

namespace {

// Load state.  Guarded by the mutex until the vendor is loaded; the pointer is then published
// once and never changes.
std::mutex g_mutex;
tb_vendor_get_fn g_linked_entry = nullptr;
std::string g_load_error;          // non-empty after a failed load
std::string g_failed_device_type;  // the device type of a vendor that failed to load, or ""

// The device type a vendor named `name` (TORCH_BACKEND_VENDOR) would have, judged from its
// name alone: a bundled vendor's name is its device type, a library libtb_vendor_NAME.so is
// taken to be NAME's; "" when the name says nothing (or is no identifier).
std::string device_type_from_name(const std::string& name) {
  std::string type = name;
  const size_t slash = name.find_last_of('/');
  if (slash != std::string::npos) {
    const std::string file = name.substr(slash + 1);
    const std::string prefix = "libtb_vendor_", suffix = ".so";
    if (file.size() <= prefix.size() + suffix.size() || file.rfind(prefix, 0) != 0 ||
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
      return "";
    }
    type = file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
  }
  bool valid = !type.empty() && !std::isdigit(static_cast<unsigned char>(type[0]));
  for (char c : type) valid &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  return valid ? type : "";
}
std::atomic<const Vendor*> g_vendor{nullptr};

// Fork state: set by Use() / the atfork child handler; plain flags, read on every call.
std::atomic<bool> g_in_use{false};
std::atomic<bool> g_in_bad_fork{false};
// Set by the atexit handler once the vendor's context is finalized.
std::atomic<bool> g_finalized{false};

void OnForkChild() {
  if (g_in_use.load(std::memory_order_relaxed)) g_in_bad_fork.store(true);
}

}  // namespace

// The first calls into a vendor: init (its context), then the device count, which must fit
// c10::DeviceIndex (int8_t): a larger count would silently wrap in every device index torch
// computes.
Vendor::Vendor(tb_vendor_handle* handle) : handle_(handle) {
  tb_host_api host{};
  host.struct_size = sizeof host;
  host.abi_major = TB_ABI_VERSION_MAJOR;
  host.abi_minor = TB_ABI_VERSION_MINOR;
  host.torch_version = TORCH_VERSION;
  char error[2048] = "";
  tb_status status = tb_loader_init(handle_, &host, error, sizeof error);
  TORCH_CHECK(status == TB_OK, "torch_backend: cannot initialise the vendor library '",
              handle_->library_path, "': ", error);
  status = handle_->device.count(handle_->context, &device_count_);
  if (status != TB_OK) {
    Fail("device.count", status, "");
  }
  constexpr int32_t kMaxDevices = std::numeric_limits<c10::DeviceIndex>::max();
  TORCH_CHECK(device_count_ >= 0 && device_count_ <= kMaxDevices, handle_->device_type,
              ": the vendor '", handle_->vendor_name, "' (", handle_->library_path, ") reports ",
              device_count_, " devices, but PyTorch addresses at most ", kMaxDevices,
              " devices of one type (c10::DeviceIndex is ", sizeof(c10::DeviceIndex) * 8,
              "-bit): a device count must lie in [0, ", kMaxDevices, "]");
}

const Vendor& Vendor::Get() {
  const Vendor* vendor = g_vendor.load(std::memory_order_acquire);
  if (C10_LIKELY(vendor != nullptr)) return *vendor;

  std::lock_guard<std::mutex> lock(g_mutex);
  vendor = g_vendor.load(std::memory_order_acquire);
  if (vendor != nullptr) return *vendor;
  TORCH_CHECK(g_load_error.empty(), g_load_error);

  const char* requested = std::getenv(kVendorEnv);
  std::string name = requested != nullptr && *requested != '\0' ? requested : kDefaultVendor;
  char error[4096] = "";
  tb_vendor_handle* handle = nullptr;
  tb_status status = g_linked_entry != nullptr
                         ? tb_loader_open_entry(g_linked_entry, &handle, error, sizeof error)
                         : tb_loader_open(name.c_str(), &handle, error, sizeof error);
  if (status != TB_OK) {
    g_load_error = c10::str("torch_backend: cannot load the vendor '",
                            g_linked_entry != nullptr ? "(linked in)" : name, "' (",
                            g_linked_entry != nullptr ? "UseLinkedIn" : kVendorEnv, "): ", error);
    g_failed_device_type = g_linked_entry != nullptr ? "" : device_type_from_name(name);
    TORCH_CHECK(false, g_load_error);
  }
  try {
    vendor = new Vendor(handle);
  } catch (const c10::Error& e) {
    g_load_error = e.what_without_backtrace();
    g_failed_device_type = handle->device_type;
    tb_loader_close(handle);
    throw;
  }
  static std::once_flag fork_handler;
  std::call_once(fork_handler, [] { pthread_atfork(nullptr, nullptr, OnForkChild); });
  g_vendor.store(vendor, std::memory_order_release);
  // Registered after init, so it runs before the destructors of libraries loaded earlier
  // (libtorch's); tb_loader_finalize skips it in a forked child.
  std::atexit(&Vendor::Finalize);
  return *vendor;
}

void Vendor::Finalize() {
  const Vendor* vendor = g_vendor.load(std::memory_order_acquire);
  if (vendor == nullptr || g_finalized.exchange(true)) return;
  tb_loader_finalize(vendor->handle_);
}

bool Vendor::IsFinalized() { return g_finalized.load(); }

const char* Vendor::last_error() const { return handle_->last_error(handle_->context); }

void Vendor::Missing(const char* call) const {
  TORCH_CHECK_NOT_IMPLEMENTED(false, handle_->device_type, ": the vendor does not provide ", call,
                              " (an optional slot of the vendor ABI it leaves NULL)");
}

const Vendor& Vendor::Use(const char* call) {
  const Vendor& vendor = Get();
  if (C10_UNLIKELY(g_in_bad_fork.load(std::memory_order_relaxed))) {
    // CUDA's words, with the device's name: what users search for.
    TORCH_CHECK(false, "Cannot re-initialize ", vendor.device_type(),
                " in forked subprocess. To use ", vendor.device_type(),
                " with multiprocessing, you must use the 'spawn' start method (", call,
                " in a child process forked after the parent used the device: its streams, "
                "threads and device state do not survive fork(); e.g. "
                "torch.multiprocessing.set_start_method('spawn'))");
  }
  TORCH_CHECK(!g_finalized.load(std::memory_order_relaxed), vendor.device_type(), ": ", call,
              " after the vendor's context was finalized at process exit");
  if (C10_UNLIKELY(!g_in_use.load(std::memory_order_relaxed))) g_in_use.store(true);
  return vendor;
}

bool Vendor::IsInUse() { return g_in_use.load(); }

bool Vendor::IsInBadFork() { return g_in_bad_fork.load(); }

void Vendor::UseLinkedIn(tb_vendor_get_fn entry) {
  std::lock_guard<std::mutex> lock(g_mutex);
  TORCH_CHECK(g_vendor.load() == nullptr && g_load_error.empty(),
              "torch_backend: Vendor::UseLinkedIn must be called before the vendor is loaded");
  TORCH_CHECK(entry != nullptr, "torch_backend: Vendor::UseLinkedIn needs an entry point");
  g_linked_entry = entry;
}

void Vendor::FailLoad(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  TORCH_CHECK(g_vendor.load() == nullptr,
              "torch_backend: Vendor::FailLoad must be called before the vendor is loaded");
  g_load_error = message;
  g_failed_device_type = "";
}

bool Vendor::IsLoaded() { return g_vendor.load(std::memory_order_acquire) != nullptr; }

std::pair<std::string, std::string> Vendor::LoadFailure() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return {g_failed_device_type, g_load_error};
}

void Vendor::Fail(const char* call, tb_status status, const std::string& arguments) const {
  const char* message = last_error();
  std::string text = c10::str(handle_->device_type, ": ", call, "(", arguments, ") failed with ",
                              tb_status_name(status), ": ",
                              message != nullptr && *message ? message : "(no message)");
  // Every class is a RuntimeError subclass in Python: users and libraries catch RuntimeError
  // for device errors, as with CUDA's torch.AcceleratorError.
  switch (status) {
    case TB_ERROR_OUT_OF_MEMORY:
      C10_THROW_ERROR(OutOfMemoryError, text);
    case TB_ERROR_NOT_SUPPORTED:
      C10_THROW_ERROR(NotImplementedError, text);
    case TB_ERROR_DEVICE_FAULT:
      throw c10::AcceleratorError(
          {__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, static_cast<int32_t>(status),
          c10::str(text, ". The device refuses work until torch.", handle_->device_type,
                   ".reset_device() clears the fault (results computed since are lost)"));
    default:
      throw c10::AcceleratorError({__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
                                  static_cast<int32_t>(status), text);
  }
}

}  // namespace torch_backend
