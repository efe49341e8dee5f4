// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The device random-number generator: a Philox counter-based generator per device, like
// CUDA's.  Its state is (seed, offset); a consumer reserves a range of the counter with
// philox_inputs() and derives its random stream from (seed, offset), so results depend only on
// the seed and the order of consumers, never on threads or streams.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include <utility>

#include "runtime/TorchRelease.h"

namespace torch_backend {

class PhiloxGenerator final : public c10::GeneratorImpl {
 public:
  explicit PhiloxGenerator(c10::DeviceIndex device, uint64_t seed = c10::default_rng_seed_val);

  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override;
  uint64_t seed() override;  // a fresh non-deterministic seed, set and returned
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  // 16 bytes, CPU uint8: seed then offset, both little-endian uint64.
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  void set_state(const c10::TensorImpl& state) override;

  // Reserves `increment` counter values: returns (seed, offset before the reservation).
  // The caller holds mutex_.
  std::pair<uint64_t, uint64_t> philox_inputs(uint64_t increment);

#if TB_TORCH_AT_LEAST(2, 14)
  // torch.Generator.philox_state (torch 2.14): the same reservation for kernels written outside
  // torch_backend, as three 1-element int64 tensors (seed, offset, intragraph_offset): CPU
  // values outside a graph capture; during one, the device state each replay rewrites (seed,
  // offset) and the reservation's place in the graph, as CUDA's PhiloxCudaState.  The caller
  // holds mutex_ (PyTorch's binding takes it).
  void philox_state(uint64_t increment, at::Tensor& seed, at::Tensor& offset,
                    at::Tensor& intragraph_offset) override;
#endif

  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

 private:
  PhiloxGenerator* clone_impl() const override;

  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The default generator of `device` (-1: current device), seeded with the default seed.
const at::Generator& default_generator(c10::DeviceIndex device);

// A new generator for `device` (-1: current device).
at::Generator new_generator(c10::DeviceIndex device);

}  // namespace torch_backend
