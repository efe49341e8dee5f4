// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// Random operators that take no generator argument but draw from the device's default
// generator.  Through the CPU fallback they would draw from the CPU generator instead and
// ignore torch.<device>.manual_seed; here they are composed from operators that take an
// explicit generator (which the fallback maps onto the device generator).
//
// random_ (integers, and what randint and torch.compile's seeds call): drawn on the host from
// the device generator's stream, into pinned memory, and copied to the device asynchronously.
// Through the CPU fallback it would first copy `self` to the host -- a wait for everything
// queued on the stream, in the middle of every compiled graph with dropout -- for values it
// overwrites.
//
// multinomial -- CPU, CUDA and MPS register it under their own key, so every other backend ran
//   it on the CPU fallback (generate()'s sampling: a copy of the probabilities to the host per
//   token).  Where the vendor draws exponential_ on the device, it is ATen's own algorithm
//   (at::native::multinomial: without replacement, or one sample, argmax / topk of p / q with
//   q ~ Exp(1), the same code CUDA runs) over the device's kernels; with replacement and more
//   than one sample, ATen's kernel is a CPU / CUDA DispatchStub, and the call runs on the CPU
//   fallback as before.
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/multinomial_native.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/zeros_like.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "aten/Fallback.h"
#include "aten/KernelCall.h"
#include "aten/Random.h"
#include "runtime/Generator.h"
#include "runtime/Graph.h"

namespace torch_backend {
namespace {

std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor& input, double p,
                                                  std::optional<bool> train) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  at::TensorOptions mask_options = input.options().dtype(at::kBool);
  if (input.numel() == 0 || !train.value_or(true) || p == 0) {
    return {input.clone(), at::ones_like(input, mask_options)};
  }
  if (p == 1) return {at::zeros_like(input), at::zeros_like(input, mask_options)};
  at::Tensor mask = at::empty_like(input, mask_options);
  mask.bernoulli_(1 - p, std::nullopt);
  return {input.mul(mask).mul(1.0 / (1.0 - p)), mask};
}

// random_ in every form, as the CPU computes it from the device generator's next draw.
template <typename Fill>
at::Tensor& random_on_host(at::Tensor& self, const std::optional<at::Generator>& generator,
                           Fill fill) {
  at::Generator device_generator = generator.has_value() && generator->defined()
                                       ? *generator
                                       : default_generator(self.device().index());
  TORCH_CHECK(device_generator.device().type() == c10::DeviceType::PrivateUse1,
              "random_: expected a generator of ", self.device(), ", got one of ",
              device_generator.device());
  // A captured graph would replay the values drawn at capture: refuse, as a host draw cannot
  // be replayed with new numbers.
  TORCH_CHECK(!graph::is_current_stream_capturing(), self.device(),
              ": random_ (integers: randint, randperm's keys, torch.compile's seeds) draws on "
              "the host and cannot be captured into a graph; draw before the capture and pass "
              "the tensor in");
  at::Tensor host = at::empty(self.sizes(), self.options().device(at::kCPU).pinned_memory(true));
  fill(host, cpu_generator_from(device_generator));
  self.copy_(host, /*non_blocking=*/true);
  return self;
}

at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                        std::optional<at::Generator> generator) {
  return random_on_host(self, generator, [&](at::Tensor& host, const at::Generator& cpu) {
    host.random_(from, to, cpu);
  });
}

at::Tensor& random_to(at::Tensor& self, int64_t to, std::optional<at::Generator> generator) {
  return random_on_host(self, generator,
                        [&](at::Tensor& host, const at::Generator& cpu) { host.random_(to, cpu); });
}

at::Tensor& random_plain(at::Tensor& self, std::optional<at::Generator> generator) {
  return random_on_host(self, generator,
                        [&](at::Tensor& host, const at::Generator& cpu) { host.random_(cpu); });
}

at::Tensor multinomial(const at::Tensor& self, int64_t num_samples, bool replacement,
                       std::optional<at::Generator> generator) {
  if (replacement && num_samples > 1) {
    static const c10::OperatorHandle op =
        c10::Dispatcher::singleton().findSchemaOrThrow("aten::multinomial", "");
    torch::jit::Stack stack{self, num_samples, replacement, generator};
    cpu_fallback_boxed(op, &stack);
    return stack.at(0).toTensor();
  }
  return at::native::multinomial(self, num_samples, replacement, generator);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("native_dropout", TORCH_FN(native_dropout)); }

}  // namespace

void register_host_random(torch::Library& library,
                          const std::function<bool(const std::string&)>& vendor_has) {
  if (!vendor_has("random_.from")) library.impl("random_.from", TORCH_FN(random_from));
  if (!vendor_has("random_.to")) library.impl("random_.to", TORCH_FN(random_to));
  if (!vendor_has("random_")) library.impl("random_", TORCH_FN(random_plain));
  if (vendor_has("exponential_")) library.impl("multinomial", TORCH_FN(multinomial));
}
}  // namespace torch_backend
