// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
#include "runtime/Generator.h"

#include <ATen/EmptyTensor.h>
#include <ATen/core/DistributionsHelper.h>
#include <ATen/core/Tensor.h>
#include <c10/util/irange.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "runtime/Device.h"
#include "runtime/Graph.h"

namespace torch_backend {

PhiloxGenerator::PhiloxGenerator(c10::DeviceIndex device, uint64_t seed)
    : c10::GeneratorImpl(make_device(device), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

void PhiloxGenerator::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

uint64_t PhiloxGenerator::current_seed() const { return seed_; }

uint64_t PhiloxGenerator::seed() {
  uint64_t random = c10::detail::getNonDeterministicRandom(/*is_cuda=*/true);
  set_current_seed(random);
  return random;
}

void PhiloxGenerator::set_offset(uint64_t offset) {
  TORCH_CHECK(offset % 4 == 0, "torch_backend: the generator offset must be a multiple of 4");
  offset_ = offset;
}

uint64_t PhiloxGenerator::get_offset() const { return offset_; }

c10::intrusive_ptr<c10::TensorImpl> PhiloxGenerator::get_state() const {
  at::Tensor state = at::detail::empty_cpu({16}, at::ScalarType::Byte, std::nullopt, std::nullopt,
                                           std::nullopt, std::nullopt);
  auto* bytes = static_cast<uint8_t*>(state.data_ptr());
  std::memcpy(bytes, &seed_, sizeof seed_);
  std::memcpy(bytes + 8, &offset_, sizeof offset_);
  return state.getIntrusivePtr();
}

void PhiloxGenerator::set_state(const c10::TensorImpl& state) {
  at::detail::check_rng_state(state);
  TORCH_CHECK(state.numel() == 16,
              "torch_backend: a generator state has 16 bytes (seed, offset), "
              "got ",
              state.numel());
  const auto* bytes = static_cast<const uint8_t*>(state.data());
  uint64_t seed = 0, offset = 0;
  std::memcpy(&seed, bytes, sizeof seed);
  std::memcpy(&offset, bytes + 8, sizeof offset);
  seed_ = seed;
  set_offset(offset);
}

std::pair<uint64_t, uint64_t> PhiloxGenerator::philox_inputs(uint64_t increment) {
  uint64_t offset = offset_;
  offset_ += (increment + 3) / 4 * 4;
  return {seed_, offset};
}

#if TB_TORCH_AT_LEAST(2, 14)
namespace {
// A 1-element CPU int64 tensor holding `value`'s bits.
at::Tensor cpu_int64(uint64_t value) {
  at::Tensor tensor = at::detail::empty_cpu({1}, at::ScalarType::Long, std::nullopt, std::nullopt,
                                            std::nullopt, std::nullopt);
  std::memcpy(tensor.data_ptr(), &value, sizeof value);
  return tensor;
}
}  // namespace

void PhiloxGenerator::philox_state(uint64_t increment, at::Tensor& seed, at::Tensor& offset,
                                   at::Tensor& intragraph_offset) {
  uint64_t key = 0, position = 0;
  at::Tensor state;
  if (graph::capture_philox(device_.index(), this, increment, key, position, &state) != nullptr) {
    seed = state.narrow(0, 0, 1);
    offset = state.narrow(0, 1, 1);
    intragraph_offset = cpu_int64(position);
    return;
  }
  std::tie(key, position) = philox_inputs(increment);
  seed = cpu_int64(key);
  offset = cpu_int64(position);
  intragraph_offset = cpu_int64(0);
}
#endif

PhiloxGenerator* PhiloxGenerator::clone_impl() const {
  auto* copy = new PhiloxGenerator(device_.index(), seed_);
  copy->offset_ = offset_;
  return copy;
}

const at::Generator& default_generator(c10::DeviceIndex device) {
  static std::once_flag once;
  static std::vector<at::Generator>* generators = nullptr;
  std::call_once(once, [] {
    generators = new std::vector<at::Generator>();
    for (c10::DeviceIndex d = 0; d < device_count(); d++) {
      generators->push_back(at::make_generator<PhiloxGenerator>(d));
    }
  });
  device = resolve_device(device);
  return (*generators)[device];
}

at::Generator new_generator(c10::DeviceIndex device) {
  return at::make_generator<PhiloxGenerator>(resolve_device(device));
}

}  // namespace torch_backend
