// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The boxed CPU fallback: every operator without a device kernel runs on the CPU (inputs
// copied over, outputs and mutated arguments copied back), counted per operator.
// TORCH_BACKEND_FALLBACK=allow|warn|error chooses whether that happens silently, with one
// warning per operator, or not at all.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace c10 {
class IValue;
class OperatorHandle;
}  // namespace c10

namespace torch_backend {

enum class FallbackMode { kAllow, kWarn, kError };

// Operators that fell back since the last reset ("aten::add.Tensor"), with their counts,
// sorted by name.
std::vector<std::pair<std::string, int64_t>> fallback_counts();
void reset_fallback_counts();

// What every path that runs an operator on the CPU does first (the boxed fallback, and the
// quantized tensors' one, aten/Quantized.cpp): raises when TORCH_BACKEND_FALLBACK=error or a
// graph capture forbids it, counts the operator, warns once under =warn.
void admit_cpu_fallback(const c10::OperatorHandle& op, const std::vector<c10::IValue>& stack);

// How a boxed fallback for a dispatch key of its own (quantized tensors, aten/Quantized.cpp;
// sparse ones, aten/Sparse.cpp) moves tensors: a device tensor to its CPU twin, a CPU result
// into a written device argument, and a CPU result to the device.
struct CpuRoute {
  at::Tensor (*to_cpu)(const at::Tensor& device);
  void (*write_back)(const at::Tensor& device, const at::Tensor& host);
  at::Tensor (*to_device)(const at::Tensor& host, c10::Device device);
};

// Runs `op` on the CPU for such a key: admitted as every CPU fallback is, the devices checked
// by CUDA's rules, device arguments moved by `route` (a factory's device becomes the CPU),
// written arguments moved back, results moved to the device of the first device argument
// (a mutable alias returns the caller's own tensor).
void run_through_cpu(const c10::OperatorHandle& op, std::vector<c10::IValue>* stack,
                     const CpuRoute& route);

// Why the vendor's kernel `kernel` ("avg_pool2d.out") just declined a call on this thread: its
// message (TB_ERROR_NOT_SUPPORTED's, or the dtype or argument it cannot take).  The fallback
// that runs the operator next names it in its warning and its error, so that a vendor or a
// user sees why the device's kernel did not run; a later decline replaces it, and the next
// fallback on the thread consumes it.
void note_declined(const char* kernel, std::string why);

// Why torch_backend kept a call of `op` ("addmm.out") from the vendor's kernel (an output that
// shares memory with an input): noted and consumed as note_declined's notes are.
void note_kept_back(std::string_view op, std::string why);

FallbackMode fallback_mode();
// A CPU generator seeded from the next draw of `device_generator` (a device generator): what
// random operators that run on the CPU draw from, so that the device's seed governs them.
at::Generator cpu_generator_from(at::Generator device_generator);

void set_fallback_mode(FallbackMode mode);
// "allow" / "warn" / "error" and back; parse throws on anything else.
const char* fallback_mode_name(FallbackMode mode);
FallbackMode parse_fallback_mode(const std::string& name, const char* source);

}  // namespace torch_backend
