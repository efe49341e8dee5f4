// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "runtime/StorageMeta.h"

#include <c10/util/Exception.h>
#include <c10/util/Logging.h>

#include <cctype>

#include "runtime/DeviceAllocator.h"
#include "runtime/Vendor.h"

namespace torch_backend {
namespace {

const tb_storage_meta_extension* extension() {
  static const std::pair<const tb_storage_meta_extension*, std::string> found = [] {
    char error[512] = "";
    const tb_storage_meta_extension* ext =
        tb_loader_storage_meta(&Vendor::Get().table(), error, sizeof error);
    return std::make_pair(ext, std::string(error));
  }();
  TORCH_CHECK(found.second.empty(), found.second);
  return found.first;
}

// A C identifier of at most 31 characters, as vendor.h promises the vendor.
bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 31) return false;
  if (std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

void check_device_storage(const c10::Storage& storage, const char* what) {
  TORCH_CHECK(storage.device_type() == c10::DeviceType::PrivateUse1, "torch_backend.", what,
              ": expected a tensor of device type '", Vendor::Get().device_type(), "', got one on ",
              storage.device());
}

}  // namespace

bool has_storage_meta() { return extension() != nullptr; }

void set_storage_meta(const c10::Storage& storage, const std::string& name, int64_t value) {
  check_device_storage(storage, "set_storage_meta");
  const Vendor& vendor = Vendor::Use("storage_meta.set");
  const tb_storage_meta_extension* ext = extension();
  TORCH_CHECK_NOT_IMPLEMENTED(
      ext != nullptr, vendor.device_type(), ": per-storage metadata is not supported: vendor '",
      vendor.table().vendor_name,
      "' has no storage metadata extension (TB_EXTENSION_STORAGE_META, vendor.h ABI 2.4), so "
      "it cannot keep '",
      name, "=", value, "'");
  TORCH_CHECK_VALUE(valid_name(name), vendor.device_type(),
                    ": a storage metadata name is a C identifier of at most 31 characters, got '",
                    name, "'");
  if (ext->names != nullptr) {
    bool known = false;
    std::string names;
    for (const char* const* n = ext->names; *n != nullptr; n++) {
      known |= name == *n;
      names += std::string(names.empty() ? "" : ", ") + *n;
    }
    TORCH_CHECK_VALUE(known, vendor.device_type(), ": vendor '", vendor.table().vendor_name,
                      "' keeps no storage metadata named '", name, "' (it takes: ", names, ")");
  }
  TORCH_CHECK(storage.nbytes() > 0, vendor.device_type(),
              ": a storage of 0 bytes has no memory to give metadata ('", name, "=", value, "')");
  TORCH_CHECK(mark_storage_meta(storage.data_ptr()), vendor.device_type(),
              ": only storages of the device's caching allocator can have metadata; this one's "
              "memory came from elsewhere (from_blob, DLPack)");
  void* data = storage.data_ptr().get();
  const int32_t device = storage.device().index();
  tb_status status =
      ext->set(vendor.context(), device, data, storage.nbytes(), name.c_str(), value);
  // A refused name or value is the caller's mistake: a ValueError with the vendor's reason.
  TORCH_CHECK_VALUE(status != TB_ERROR_INVALID_ARGUMENT, vendor.device_type(),
                    ": storage metadata '", name, "=", value, "' refused: ", vendor.last_error());
  if (status != TB_OK) {
    vendor.Fail("storage_meta.set", status,
                detail::FormatArguments(device, data, storage.nbytes(), name, value));
  }
}

std::vector<std::pair<std::string, int64_t>> storage_meta(const c10::Storage& storage) {
  check_device_storage(storage, "storage_meta");
  const Vendor& vendor = Vendor::Use("storage_meta.get");
  const tb_storage_meta_extension* ext = extension();
  std::vector<std::pair<std::string, int64_t>> result;
  if (ext == nullptr || storage.nbytes() == 0) return result;
  const void* data = storage.data_ptr().get();
  const int32_t device = storage.device().index();
  std::vector<const char*> names(8);
  std::vector<int64_t> values(8);
  for (;;) {
    int32_t count = 0;
    tb_status status = ext->get(vendor.context(), device, data, names.data(), values.data(),
                                static_cast<int32_t>(names.size()), &count);
    if (status != TB_OK) {
      vendor.Fail("storage_meta.get", status, detail::FormatArguments(device, data));
    }
    TORCH_CHECK(count >= 0, vendor.device_type(), ": storage_meta.get reported ", count, " values");
    if (static_cast<size_t>(count) <= names.size()) {
      for (int32_t i = 0; i < count; i++) {
        TORCH_CHECK(names[i] != nullptr, vendor.device_type(),
                    ": storage_meta.get returned a NULL name");
        result.emplace_back(names[i], values[i]);
      }
      return result;
    }
    names.resize(static_cast<size_t>(count));
    values.resize(static_cast<size_t>(count));
  }
}

void release_storage_meta(c10::DeviceIndex device, void* data) noexcept {
  try {
    const Vendor& vendor = Vendor::Get();
    const tb_storage_meta_extension* ext = extension();
    if (ext == nullptr || Vendor::IsFinalized()) return;
    tb_status status = ext->release(vendor.context(), device, data);
    if (status != TB_OK) {
      LOG(WARNING) << vendor.device_type() << ": storage_meta.release(" << int{device} << ", "
                   << data << ") failed: " << vendor.last_error();
    }
  } catch (const std::exception& e) {
    LOG(WARNING) << "torch_backend: releasing a storage's metadata failed: " << e.what();
  }
}

}  // namespace torch_backend
