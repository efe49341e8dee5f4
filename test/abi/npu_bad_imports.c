/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * A library that imports the stand-in's internal standin_launch, which no AscendCL
 * application may: check_npu_imports.cmake must refuse it (abi.npu_imports_refused).
 */
#include <acl/acl.h>

#include "standin.h"

static void nothing(void *arg) { (void)arg; }

__attribute__((visibility("default"))) int tb_test_npu_bad_imports(void) {
  return standin_launch(NULL, "bad", nothing, NULL, NULL) + (int)aclrtSynchronizeDevice();
}
