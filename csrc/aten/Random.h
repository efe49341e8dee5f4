// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// random_ for vendors without a kernel of their own (Random.cpp): drawn on the host from the
// device generator's stream and copied to the device without waiting for the stream.
#pragma once

#include <torch/library.h>

#include <functional>
#include <string>

namespace torch_backend {

// Registers random_.from, random_.to and random_ on `library` (aten, PrivateUse1) for those
// the vendor has no kernel for (`vendor_has` answers by kernel name), and multinomial where
// the vendor draws exponential_ (Random.cpp).
void register_host_random(torch::Library& library,
                          const std::function<bool(const std::string&)>& vendor_has);

}  // namespace torch_backend
