// Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
//
// The torch release csrc is compiled against, for what a release adds to the interfaces csrc
// implements.  A runtime is built per release (lib/torch-<release>/), so these are compile-time
// choices; docs/decisions.md, "Three torch releases", tabulates what each release gets.
#pragma once

#include <torch/version.h>

// Whether the torch built against is release MAJOR.MINOR or newer.
#define TB_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||     \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))
