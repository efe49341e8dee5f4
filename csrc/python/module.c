/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * torch_backend._C: the extension module that loads the runtime.
 *
 * The runtime (libtorch_backend.so: device guard, hooks, allocators, ATen kernels and the
 * torch_backend operators Python calls through torch.ops.torch_backend, all registered by its
 * static initialisers) is compiled against one torch release's C++ ABI.  A package may carry
 * one per release, each in a directory of its own beside the loader: `torch-2.13/`,
 * `torch-2.15/`, ... (docs/decisions.md, "Three torch releases").  This module is built
 * against Python's limited API (abi3) and links the loader only -- nothing of torch -- so that
 * it imports under any torch; torch_backend/_runtime.py decides which runtime fits the running
 * torch and calls load_runtime() for it.
 *
 * The directory is the loader's own (tb_loader_bundled_dir): the one this module's RUNPATH
 * names, or the one LD_LIBRARY_PATH puts first (make test-sanitize runs instrumented builds
 * that way), so that the runtime, the loader and the bundled vendors always come from one build.
 */
#define Py_LIMITED_API 0x030A0000
#include <Python.h>

#include <dlfcn.h>
#include <string.h>

#include <torch_backend/loader.h>

/* library_dir() -> str: the directory holding the loader, the bundled vendors and the
 * runtimes' torch-X.Y directories. */
static PyObject *library_dir(PyObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  char dir[4096];
  if (tb_loader_bundled_dir(dir, sizeof dir) != TB_OK) {
    PyErr_SetString(PyExc_OSError, "torch_backend: cannot tell where libtb_loader.so lies");
    return NULL;
  }
  return PyUnicode_FromString(dir);
}

/* load_runtime(path: str) -> None: dlopen()s a runtime, resolving every symbol now (RTLD_NOW),
 * so that a runtime built against another torch fails here, with the dynamic linker's message,
 * rather than at its first call.  Raises ImportError carrying that message.  A loaded runtime
 * is never unloaded (its registrations live as long as the process). */
static PyObject *load_runtime(PyObject *self, PyObject *path) {
  (void)self;
  const char *file = PyUnicode_AsUTF8AndSize(path, NULL);
  if (file == NULL) return NULL;
  if (dlopen(file, RTLD_NOW | RTLD_LOCAL) == NULL) {
    const char *reason = dlerror();
    PyErr_SetString(PyExc_ImportError, reason != NULL ? reason : "dlopen failed");
    return NULL;
  }
  Py_RETURN_NONE;
}

/* vendor_device_type(name_or_path: str) -> str: the device type the vendor declares, read
 * through the loader without starting the vendor (no init); "" when it cannot be opened.  An
 * empty name is the default vendor.  Names the device of a process whose runtime did not load. */
static PyObject *vendor_device_type(PyObject *self, PyObject *name) {
  (void)self;
  const char *vendor = PyUnicode_AsUTF8AndSize(name, NULL);
  if (vendor == NULL) return NULL;
  if (*vendor == '\0') vendor = TB_LOADER_DEFAULT_VENDOR;
  tb_vendor_handle *handle = NULL;
  char device_type[sizeof handle->device_type] = "";
  if (tb_loader_open(vendor, &handle, NULL, 0) == TB_OK) {
    memcpy(device_type, handle->device_type, sizeof device_type);
    device_type[sizeof device_type - 1] = '\0';
    tb_loader_close(handle);
  }
  return PyUnicode_FromString(device_type);
}

static PyMethodDef methods[] = {
    {"library_dir", library_dir, METH_NOARGS, "The directory holding the loader and runtimes."},
    {"load_runtime", load_runtime, METH_O, "Load the runtime library at the given path."},
    {"vendor_device_type", vendor_device_type, METH_O,
     "The device type a vendor declares (\"\" when it cannot be opened)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "_C",
    .m_doc = "Loads torch_backend's runtime for the running torch (torch_backend._runtime).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&module); }
