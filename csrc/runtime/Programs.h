// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Device programs built at run time (vendor.h, "Device programs built at run time", ABI 2.6,
// TB_EXTENSION_PROGRAMS): the kernels torch.compile generates for a device that builds
// programs (torch_backend/inductor/) and torch.<device>.compile_kernel.
//
// A program is built once per (device, language, options, source) in a process and kept for the
// process's life, as CUDA keeps the modules Inductor loads (the vendor's finalize reclaims
// them); the vendor caches builds across processes.  Kernels are handed to Python as small
// integers.  Launching is the hot path of a compiled graph: torch_backend._C.launch (module.c)
// calls torch_backend_program_launch below directly, without the dispatcher.
#pragma once

#include <torch_backend/vendor.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace torch_backend::programs {

// The names of the languages the vendor builds ("opencl_c", "spirv", "ptx", "host_c",
// "vendor_<n>"), in the enum's order; empty when the vendor has no TB_EXTENSION_PROGRAMS.
// Throws for an extension the loader refuses.
std::vector<std::string> languages();

// The program of `source` in `language` (a name languages() gives) built with `options` for
// `device`: built on first use, then the same id.  Throws NotImplementedError for a vendor
// without the extension or the language, and the vendor's message (with the compiler's log)
// when the build fails.
int64_t build(int64_t device, const std::string& language, const std::string& source,
              const std::string& options);

// How many kernels of device programs this process has launched.
int64_t launch_count();

// Kernel `name` of `program`: its id, its parameters ("p" for device memory, "i4", "u8", "f4",
// "x16", ... kind and bytes, joined by ",") and the most work items of one group.
std::tuple<int64_t, std::string, int64_t> kernel(int64_t program, const std::string& name);

}  // namespace torch_backend::programs

extern "C" {

// One argument of torch_backend_program_launch, as Python gave it.
typedef struct torch_backend_program_arg {
  int32_t tag;  // 0: an integer in `i`; 1: a float in `f`; 2: a device pointer in `p`
  union {
    int64_t i;
    double f;
    void* p;
  } value;
} torch_backend_program_arg;

// Launches kernel `kernel` (an id from programs::kernel) on the calling thread's current
// stream of its device over `dims` global sizes (`local`: group sizes, or NULL), converting
// each argument to its parameter's type.  Returns 0, or a Python exception class number with
// the message in `error`: 1 RuntimeError (torch.AcceleratorError for the vendor's failures),
// 2 NotImplementedError, 3 torch.OutOfMemoryError, 4 TypeError (an argument of the wrong kind),
// 5 ValueError (a value that does not fit, sizes).
int torch_backend_program_launch(int64_t kernel, uint32_t dims, const uint64_t* global,
                                 const uint64_t* local, const torch_backend_program_arg* args,
                                 size_t count, char* error, size_t error_size);
}
