/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * A complete vendor (fake's slots) under its own device type, installed outside the bundled
 * directory so that the loader has to find it through TORCH_BACKEND_VENDOR_PATH.
 */
#include <torch_backend/fake.h>

const char *tbv_device_type(void) { return "extra"; }
