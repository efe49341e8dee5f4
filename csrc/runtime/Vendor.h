// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The vendor of this process, as csrc sees it: the validated C table from the loader, loaded
// and initialised once, plus the one way csrc calls into it.  PrivateUse1 is a single slot, so
// a process has exactly one vendor.  No vendor name appears anywhere in csrc: everything below
// goes through the table.
//
// Every call reaches the vendor through one path: the functions of namespace `slot` (generated
// from vendor_slots.h's list, one per slot), which TB_VENDOR_CALL and TB_VENDOR_QUERY wrap.
// Each goes through Vendor::Use: the vendor is loaded and its init called on first use (once,
// never in a child forked after the parent used the device), the context is passed, an
// optional slot the vendor lacks raises NotImplementedError, and calls after finalize (process
// exit) are refused.
#pragma once

#include <c10/util/Exception.h>
#include <c10/util/StringUtil.h>
#include <torch_backend/loader.h>
#include <torch_backend/vendor_slots.h>

#include <string>
#include <type_traits>
#include <utility>

namespace torch_backend {

// Environment variable naming the vendor: a bundled name ("emu", "fake") or a library path.
constexpr const char* kVendorEnv = "TORCH_BACKEND_VENDOR";
// The vendor used when kVendorEnv is unset (the loader's default, which _C also reads).
constexpr const char* kDefaultVendor = TB_LOADER_DEFAULT_VENDOR;

class Vendor {
 public:
  // The process's vendor, loaded and initialised on first use from TORCH_BACKEND_VENDOR
  // (default kDefaultVendor) or from the entry point given to UseLinkedIn: the loader opens
  // it, tb_vendor::init creates its context (the first call into the vendor), device.count
  // is read and checked (it must fit c10::DeviceIndex), and finalize is registered to run at
  // exit.  Throws c10::Error with the loader's or init's message when any of this fails; later
  // calls then throw the same error again.
  static const Vendor& Get();

  // Makes Get() use a vendor linked into the program instead of loading one.  Must be called
  // before the first Get(); throws otherwise.
  static void UseLinkedIn(tb_vendor_get_fn entry);

  // Get() for a call that uses the device: also refuses use in a child process forked after
  // the parent used the vendor (the vendor's threads and device state did not survive the
  // fork) and use after finalize, naming the vendor and `call`, and marks the vendor as in use
  // for later forks.
  static const Vendor& Use(const char* call);

  // True once Get() has loaded a vendor successfully.
  static bool IsLoaded();

  // After Get() failed: its message, and the device type the failed vendor has or would have
  // had (the library's own when it opened, else the name it was asked for: a bundled name, or
  // NAME of a path ending in libtb_vendor_NAME.so), "" when there is none.  Empty strings
  // while no load has failed.
  static std::pair<std::string, std::string> LoadFailure();
  // Records a load that failed before the loader ran (the Python package found no single
  // vendor to load: several installed vendor packages, a broken entry point): every later
  // Get() raises `message`, as after a library that failed to load, and loads nothing.
  static void FailLoad(const std::string& message);

  // True once Use() has been called in this process (the vendor holds device state).
  static bool IsInUse();

  // True in a child forked after the parent used the vendor.
  static bool IsInBadFork();

  // True once the vendor's context was finalized (at process exit).
  static bool IsFinalized();

  const tb_vendor_handle& table() const { return *handle_; }
  // The vendor's context (tb_vendor::init's), passed to every call.
  tb_context context() const { return handle_->context; }
  const char* device_type() const { return handle_->device_type; }
  const char* library_path() const { return handle_->library_path; }
  int32_t device_count() const { return device_count_; }
  // The vendor's message for the calling thread's last failed call.
  const char* last_error() const;

  // Throws NotImplementedError: the vendor leaves optional slot `call` NULL.
  [[noreturn]] void Missing(const char* call) const;

  // Throws the c10 error matching `status` for the failed `call` (such as
  // "memory.device_malloc"), with the vendor's last-error message:
  //   <device type>: <call>(<arguments>) failed with <STATUS>: <vendor message>
  [[noreturn]] void Fail(const char* call, tb_status status, const std::string& arguments) const;

  Vendor(const Vendor&) = delete;
  Vendor& operator=(const Vendor&) = delete;

 private:
  explicit Vendor(tb_vendor_handle* handle);
  ~Vendor() = default;     // never unloaded: torch may call into it until exit
  static void Finalize();  // the atexit handler

  tb_vendor_handle* handle_;
  int32_t device_count_ = 0;
};

namespace detail {

// Small integers (c10::DeviceIndex is int8_t) print as numbers, not characters, and character
// pointers (device addresses passed as char*) as addresses: printing one as a string would read
// device memory.
template <typename T>
auto Printable(const T& value) {
  if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> ||
                std::is_same_v<T, char>) {
    return static_cast<int>(value);
  } else if constexpr (std::is_pointer_v<T> &&
                       std::is_same_v<std::remove_cv_t<std::remove_pointer_t<T>>, char>) {
    return static_cast<const void*>(value);
  } else {
    return value;
  }
}

// GCC (12 at least) at -O2 and above can report -Wrestrict inside libstdc++'s
// basic_string::_M_replace when it inlines `std::string&& + std::string&&` under C++20, the
// standard torch asks of extensions: a false positive (GCC bugs 105329, 105651).  Silenced for
// this function alone; -Wrestrict stays an error everywhere else.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
template <typename... Args>
std::string FormatArguments(const Args&... args) {
  std::string out;
  ((out += (out.empty() ? std::string() : std::string(", ")) + c10::str(Printable(args))), ...);
  return out;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace detail

// One function per slot of vendor_slots.h: `slot::<group>_<name>(arguments after the context)`
// calls it on the process's vendor with its context and returns the status.  An optional slot
// the vendor leaves NULL raises NotImplementedError.
namespace slot {
#define TB_RUNTIME_SLOT_(gt, gf, name, required, since, ret, params, names)                  \
  inline ret gf##_##name(TB_SLOT_AFTER_CTX params) {                                         \
    const ::torch_backend::Vendor& tb_vendor_ = ::torch_backend::Vendor::Use(#gf "." #name); \
    const auto tb_fn_ = tb_vendor_.table().gf.name;                                          \
    if (!(required) && C10_UNLIKELY(tb_fn_ == nullptr)) tb_vendor_.Missing(#gf "." #name);   \
    return tb_fn_(tb_vendor_.context(), TB_SLOT_AFTER_CTX names);                            \
  }
TB_VENDOR_SLOTS(TB_RUNTIME_SLOT_)
#undef TB_RUNTIME_SLOT_
}  // namespace slot

// Calls slot `group.fn(args...)` on the process's vendor (slot::group_fn) and throws a c10
// error naming the vendor, the call, its arguments and the vendor's message if it does not
// return TB_OK.  Refuses in a child forked after the parent used the device (Vendor::Use).
//   TB_VENDOR_CALL(memory, device_malloc, device, size, &ptr);
#define TB_VENDOR_CALL(group, fn, ...)                                                            \
  do {                                                                                            \
    tb_status tb_status_ = ::torch_backend::slot::group##_##fn(__VA_ARGS__);                      \
    if (C10_UNLIKELY(tb_status_ != TB_OK)) {                                                      \
      ::torch_backend::Vendor::Get().Fail(#group "." #fn, tb_status_,                             \
                                          ::torch_backend::detail::FormatArguments(__VA_ARGS__)); \
    }                                                                                             \
  } while (0)

// Like TB_VENDOR_CALL for queries: evaluates to true for TB_OK, false for TB_ERROR_NOT_READY,
// and throws for any other status.
#define TB_VENDOR_QUERY(group, fn, ...)                                                         \
  ([&]() -> bool {                                                                              \
    tb_status tb_status_ = ::torch_backend::slot::group##_##fn(__VA_ARGS__);                    \
    if (tb_status_ == TB_OK) return true;                                                       \
    if (tb_status_ == TB_ERROR_NOT_READY) return false;                                         \
    ::torch_backend::Vendor::Get().Fail(#group "." #fn, tb_status_,                             \
                                        ::torch_backend::detail::FormatArguments(__VA_ARGS__)); \
  }())

}  // namespace torch_backend
