/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * torch_backend._C: an empty extension module, built against Python's limited API (abi3).
 * Importing it loads libtorch_backend.so, whose static initialisers register the device guard,
 * hooks, allocators, ATen kernels and the torch_backend operators that Python then calls
 * through torch.ops.torch_backend.
 */
#define Py_LIMITED_API 0x030A0000
#include <Python.h>

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "_C",
    .m_doc = "torch_backend's native library (loaded on import).",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&module); }
