// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The interface of the generated operator wrappers (build/.../RegisterKernels.cpp, written by
// codegen/gen_kernels.py from codegen/ops.yaml at build time).
#pragma once

#include <torch/library.h>

#include <torch_backend/vendor.h>
#include <atomic>
#include <cstdint>

namespace torch_backend::generated {

// Kernel names the wrappers call, e.g. "add.out"; g_kernels[i] is the vendor's kernel for
// kKernelNames[i] (nullptr when absent), filled once at load.
extern const char* const kKernelNames[];
extern const int kNumKernels;
extern const tb_kernel* g_kernels[];
// Successful launches of kernel i (torch_backend.kernel_counts()).
extern std::atomic<uint64_t> g_kernel_calls[];

// One registered operator: its name, the kernel it calls, and how to register it.
struct OpEntry {
  const char* op;
  int kernel;
  void (*register_fn)(torch::Library& library);
};
extern const OpEntry kOps[];
extern const int kNumOps;

}  // namespace torch_backend::generated
