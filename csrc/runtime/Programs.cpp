// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "runtime/Programs.h"

#include <c10/util/Exception.h>
#include <c10/util/Half.h>
#include <torch_backend/loader.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "profiler/Profiler.h"
#include "runtime/Device.h"
#include "runtime/Stream.h"
#include "runtime/Vendor.h"

namespace torch_backend::programs {
namespace {

const tb_programs_extension* extension() {
  static const std::pair<const tb_programs_extension*, std::string> found = [] {
    char error[512] = "";
    const tb_programs_extension* ext =
        tb_loader_programs(&Vendor::Get().table(), error, sizeof error);
    return std::make_pair(ext, std::string(error));
  }();
  TORCH_CHECK(found.second.empty(), found.second);
  return found.first;
}

const char* const kLanguageNames[] = {nullptr, "opencl_c", "spirv", "ptx", "host_c"};
constexpr int kKnownLanguages = 5;

std::string language_name(int language) {
  if (language > 0 && language < kKnownLanguages) return kLanguageNames[language];
  return c10::str("vendor_", language);
}

struct Kernel {
  tb_program_kernel handle = nullptr;
  c10::DeviceIndex device = 0;
  std::string name;
  std::vector<tb_program_param> params;
  int64_t max_group = 1;
};

struct Registry {
  std::mutex mutex;
  std::map<std::tuple<int64_t, int, std::string, std::string>, int64_t> built;
  std::vector<std::pair<tb_program, c10::DeviceIndex>> programs;
  std::map<std::pair<int64_t, std::string>, int64_t> named;
  std::vector<std::unique_ptr<Kernel>> kernels;
};

std::atomic<int64_t> g_launches{0};  // launches queued, for the benchmark's count

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: kernels may launch at exit
  return *r;
}

std::string describe(const tb_program_param& p) {
  switch (p.kind) {
    case TB_PARAM_POINTER:
      return "p";
    case TB_PARAM_INT:
      return c10::str("i", p.size);
    case TB_PARAM_UINT:
      return c10::str("u", p.size);
    case TB_PARAM_FLOAT:
      return c10::str("f", p.size);
    default:
      return c10::str("x", p.size);
  }
}

}  // namespace

std::vector<std::string> languages() {
  std::vector<std::string> names;
  const tb_programs_extension* ext = extension();
  if (ext == nullptr) return names;
  for (int language = 1; language < 64; language++) {
    if (ext->languages & TB_PROGRAM_LANGUAGE_BIT(language))
      names.push_back(language_name(language));
  }
  return names;
}

int64_t build(int64_t device, const std::string& language, const std::string& source,
              const std::string& options) {
  const Vendor& vendor = Vendor::Use("programs.build");
  const tb_programs_extension* ext = extension();
  TORCH_CHECK_NOT_IMPLEMENTED(ext != nullptr, vendor.device_type(), ": vendor '",
                              vendor.table().vendor_name,
                              "' builds no device programs (it has no TB_EXTENSION_PROGRAMS, "
                              "vendor.h ABI 2.6), so it runs no kernel compiled at run time");
  int code = 0;
  for (int l = 1; l < 64 && code == 0; l++) {
    if (language_name(l) == language) code = l;
  }
  TORCH_CHECK_NOT_IMPLEMENTED(code != 0 && (ext->languages & TB_PROGRAM_LANGUAGE_BIT(code)),
                              vendor.device_type(), ": vendor '", vendor.table().vendor_name,
                              "' does not build '", language,
                              "' programs (it builds: ", c10::Join(", ", languages()), ")");
  TORCH_CHECK(device >= 0 && device < vendor.device_count(), vendor.device_type(),
              ": programs.build for device ", device, ", but there are ", vendor.device_count(),
              " devices");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto key = std::make_tuple(device, code, options, source);
  auto found = r.built.find(key);
  if (found != r.built.end()) return found->second;
  tb_program program = nullptr;
  tb_status status = ext->build(vendor.context(), static_cast<int32_t>(device),
                                static_cast<tb_program_language>(code), source.data(),
                                source.size(), options.c_str(), &program);
  if (status != TB_OK) {
    vendor.Fail("programs.build", status,
                c10::str("device=", device, ", language=", language, ", options='", options, "', ",
                         source.size(), " bytes of source"));
  }
  int64_t id = static_cast<int64_t>(r.programs.size());
  r.programs.emplace_back(program, static_cast<c10::DeviceIndex>(device));
  r.built.emplace(std::move(key), id);
  return id;
}

int64_t launch_count() { return g_launches.load(std::memory_order_relaxed); }

std::tuple<int64_t, std::string, int64_t> kernel(int64_t program, const std::string& name) {
  const Vendor& vendor = Vendor::Use("programs.get_kernel");
  const tb_programs_extension* ext = extension();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  TORCH_CHECK(ext != nullptr && program >= 0 && program < static_cast<int64_t>(r.programs.size()),
              vendor.device_type(), ": no program ", program);
  int64_t id;
  auto found = r.named.find({program, name});
  if (found != r.named.end()) {
    id = found->second;
  } else {
    auto k = std::make_unique<Kernel>();
    tb_program_kernel_info info{};
    info.struct_size = sizeof info;
    tb_status status = ext->get_kernel(vendor.context(), r.programs[program].first, name.c_str(),
                                       &k->handle, &info);
    if (status != TB_OK) {
      vendor.Fail("programs.get_kernel", status,
                  c10::str("program=", program, ", name='", name, "'"));
    }
    k->device = r.programs[program].second;
    k->name = name;
    k->params.assign(info.params, info.params + info.param_count);
    k->max_group = static_cast<int64_t>(info.max_group_size);
    id = static_cast<int64_t>(r.kernels.size());
    r.kernels.push_back(std::move(k));
    r.named.emplace(std::make_pair(program, name), id);
  }
  const Kernel& k = *r.kernels[id];
  std::string params;
  for (const tb_program_param& p : k.params) {
    if (!params.empty()) params.push_back(',');
    params.append(describe(p));
  }
  return {id, params, k.max_group};
}

namespace {

// The launch's failure: its Python class number and message.
struct LaunchError {
  int kind;
  std::string message;
};

// Writes argument `i`'s value for parameter `p` into `slot` (8 bytes at least).
void convert(const Kernel& k, size_t i, const tb_program_param& p,
             const torch_backend_program_arg& a, unsigned char* slot) {
  auto fail = [&](int kind, const std::string& why) {
    throw LaunchError{kind, c10::str("kernel '", k.name, "': argument ", i, " ", why)};
  };
  switch (p.kind) {
    case TB_PARAM_POINTER: {
      void* ptr = nullptr;
      if (a.tag == 2) {
        ptr = a.value.p;
      } else if (a.tag == 0) {
        ptr = reinterpret_cast<void*>(static_cast<intptr_t>(a.value.i));
      } else {
        fail(4, "is device memory (a tensor), not a float");
      }
      std::memcpy(slot, &ptr, sizeof ptr);
      return;
    }
    case TB_PARAM_INT:
    case TB_PARAM_UINT: {
      if (a.tag != 0)
        fail(4, c10::str("is an integer (", describe(p), "), not a ",
                         a.tag == 1 ? "float" : "tensor"));
      const int64_t v = a.value.i;
      const unsigned bits = p.size * 8;
      bool fits = true;
      if (p.kind == TB_PARAM_INT && bits < 64) {
        fits = v >= -(int64_t{1} << (bits - 1)) && v < (int64_t{1} << (bits - 1));
      } else if (p.kind == TB_PARAM_UINT && bits < 64) {
        fits = v >= 0 && v < (int64_t{1} << bits);
      }
      if (!fits) fail(5, c10::str("is ", v, ", which does not fit its type (", describe(p), ")"));
      std::memcpy(slot, &v, p.size);  // little-endian: the low bytes
      return;
    }
    case TB_PARAM_FLOAT: {
      double v;
      if (a.tag == 1) {
        v = a.value.f;
      } else if (a.tag == 0) {
        v = static_cast<double>(a.value.i);
      } else {
        fail(4, c10::str("is a float (", describe(p), "), not a tensor"));
      }
      if (p.size == 8) {
        std::memcpy(slot, &v, 8);
      } else if (p.size == 4) {
        float f = static_cast<float>(v);
        std::memcpy(slot, &f, 4);
      } else {
        c10::Half h = static_cast<float>(v);
        std::memcpy(slot, &h, 2);
      }
      return;
    }
    default:
      fail(2, c10::str("is passed by value as ", p.size,
                       " bytes (a struct or vector), which "
                       "Python cannot give"));
  }
}

}  // namespace
}  // namespace torch_backend::programs

extern "C" __attribute__((visibility("default"))) int torch_backend_program_launch(
    int64_t kernel, uint32_t dims, const uint64_t* global, const uint64_t* local,
    const torch_backend_program_arg* args, size_t count, char* error, size_t error_size) {
  using namespace torch_backend;
  using namespace torch_backend::programs;
  auto report = [&](int kind, const char* message) {
    if (error != nullptr && error_size > 0) std::snprintf(error, error_size, "%s", message);
    return kind;
  };
  try {
    Registry& r = registry();
    const Kernel* k = nullptr;
    {
      std::lock_guard<std::mutex> lock(r.mutex);
      if (kernel >= 0 && kernel < static_cast<int64_t>(r.kernels.size()))
        k = r.kernels[kernel].get();
    }
    if (k == nullptr) return report(5, c10::str("no kernel ", kernel).c_str());
    if (count != k->params.size()) {
      return report(4, c10::str("kernel '", k->name, "' takes ", k->params.size(),
                                " arguments, it was given ", count)
                           .c_str());
    }
    if (dims < 1 || dims > 3) {
      return report(
          5, c10::str("kernel '", k->name, "': a grid of ", dims, " dimensions (1 to 3)").c_str());
    }
    constexpr size_t kInline = 32;
    unsigned char inline_values[kInline][8];
    const void* inline_pointers[kInline];
    std::vector<std::array<unsigned char, 8>> heap_values;
    std::vector<const void*> heap_pointers;
    unsigned char(*values)[8] = inline_values;
    const void** pointers = inline_pointers;
    if (count > kInline) {
      heap_values.resize(count);
      heap_pointers.resize(count);
      values = reinterpret_cast<unsigned char(*)[8]>(heap_values.data());
      pointers = heap_pointers.data();
    }
    for (size_t i = 0; i < count; i++) {
      convert(*k, i, k->params[i], args[i], values[i]);
      pointers[i] = values[i];
    }
    tb_launch_dims launch{};
    launch.dims = dims;
    for (uint32_t d = 0; d < dims; d++) {
      launch.global[d] = global[d];
      launch.local[d] = local != nullptr ? local[d] : 0;
    }
    const Vendor& vendor = Vendor::Get();
    // In the profiler as a kernel of its own name (the registry keeps kernels, and their
    // names, for the life of the process), as CUDA's profiles show Triton's kernels.
    std::optional<profiler::Activity> activity;
    if (C10_UNLIKELY(profiler::active())) {
      activity.emplace(profiler::Kind::kKernel, k->name.c_str(), current_stream(k->device));
    }
    tb_status status = extension()->launch(vendor.context(), current_vendor_stream(k->device),
                                           k->handle, &launch, pointers, count);
    if (activity.has_value() && status == TB_OK) activity->finish();
    if (status != TB_OK) {
      vendor.Fail("programs.launch", status,
                  c10::str("kernel='", k->name, "', device=", static_cast<int>(k->device)));
    }
    g_launches.fetch_add(1, std::memory_order_relaxed);
    return 0;
  } catch (const LaunchError& e) {
    return report(e.kind, e.message.c_str());
  } catch (const c10::NotImplementedError& e) {
    return report(2, e.what_without_backtrace());
  } catch (const c10::OutOfMemoryError& e) {
    return report(3, e.what_without_backtrace());
  } catch (const c10::Error& e) {
    return report(1, e.what_without_backtrace());
  } catch (const std::exception& e) {
    return report(1, e.what());
  }
}
