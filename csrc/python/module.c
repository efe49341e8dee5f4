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
#include <stdint.h>
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
/* The runtime load_runtime loaded: written once, under the GIL, before anything uses it. */
static void *g_runtime;

static PyObject *load_runtime(PyObject *self, PyObject *path) {
  (void)self;
  const char *file = PyUnicode_AsUTF8AndSize(path, NULL);
  if (file == NULL) return NULL;
  void *runtime = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (runtime != NULL && g_runtime == NULL) g_runtime = runtime;
  if (runtime == NULL) {
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

/* What the runtime's torch_backend_program_launch takes (runtime/Programs.h). */
typedef struct program_arg {
  int32_t tag; /* 0: integer, 1: float, 2: device pointer */
  union {
    int64_t i;
    double f;
    void *p;
  } value;
} program_arg;
typedef int (*program_launch_fn)(int64_t, uint32_t, const uint64_t *, const uint64_t *,
                                 const program_arg *, size_t, char *, size_t);

/* Reads up to three sizes from the tuple `sizes` into `out`; the count, or -1 with an error. */
static int read_sizes(PyObject *sizes, const char *what, uint64_t out[3]) {
  if (!PyTuple_Check(sizes)) {
    PyErr_Format(PyExc_TypeError, "launch: %s must be a tuple of 1 to 3 sizes", what);
    return -1;
  }
  Py_ssize_t n = PyTuple_Size(sizes);
  if (n < 1 || n > 3) {
    PyErr_Format(PyExc_ValueError, "launch: %s has %zd sizes (1 to 3)", what, n);
    return -1;
  }
  for (Py_ssize_t d = 0; d < n; d++) {
    long long v = PyLong_AsLongLong(PyTuple_GetItem(sizes, d));
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0) {
      PyErr_Format(PyExc_ValueError, "launch: %s[%zd] is %lld", what, d, v);
      return -1;
    }
    out[d] = (uint64_t)v;
  }
  return (int)n;
}

/* The exception class of torch_backend_program_launch's failure `kind`. */
static PyObject *launch_error_class(int kind) {
  const char *torch_name = kind == 1 ? "AcceleratorError" : kind == 3 ? "OutOfMemoryError" : NULL;
  if (torch_name != NULL) {
    PyObject *torch = PyImport_ImportModule("torch");
    PyObject *cls = torch != NULL ? PyObject_GetAttrString(torch, torch_name) : NULL;
    Py_XDECREF(torch);
    if (cls != NULL) return cls; /* a new reference */
    PyErr_Clear();
  }
  PyObject *builtin = kind == 2   ? PyExc_NotImplementedError
                      : kind == 4 ? PyExc_TypeError
                      : kind == 5 ? PyExc_ValueError
                                  : PyExc_RuntimeError;
  Py_INCREF(builtin);
  return builtin;
}

/* launch(kernel: int, grid: tuple, group: tuple | None, args: tuple) -> None: launches a
 * kernel of a device program (torch_backend._C.launch, runtime/Programs.h) on the current
 * stream of its device.  Arguments: ints, floats, and objects with data_ptr() (tensors). */
static PyObject *launch(PyObject *self, PyObject *const *argv, Py_ssize_t argc) {
  (void)self;
  static program_launch_fn fn;
  if (argc != 4) {
    PyErr_SetString(PyExc_TypeError, "launch(kernel, grid, group, args) takes 4 arguments");
    return NULL;
  }
  if (fn == NULL) {
    fn = g_runtime != NULL
             ? (program_launch_fn)(uintptr_t)dlsym(g_runtime, "torch_backend_program_launch")
             : NULL;
    if (fn == NULL) {
      PyErr_SetString(PyExc_RuntimeError, "launch: the runtime is not loaded");
      return NULL;
    }
  }
  long long kernel = PyLong_AsLongLong(argv[0]);
  if (kernel == -1 && PyErr_Occurred()) return NULL;
  uint64_t global[3] = {0, 0, 0}, local[3] = {0, 0, 0};
  int dims = read_sizes(argv[1], "grid", global);
  if (dims < 0) return NULL;
  int has_local = argv[2] != Py_None;
  if (has_local) {
    int local_dims = read_sizes(argv[2], "group", local);
    if (local_dims < 0) return NULL;
    if (local_dims != dims) {
      PyErr_Format(PyExc_ValueError, "launch: a grid of %d dimensions with groups of %d", dims,
                   local_dims);
      return NULL;
    }
  }
  if (!PyTuple_Check(argv[3])) {
    PyErr_SetString(PyExc_TypeError, "launch: args must be a tuple");
    return NULL;
  }
  Py_ssize_t count = PyTuple_Size(argv[3]);
  program_arg inline_args[32];
  program_arg *args = count <= 32 ? inline_args : PyMem_Malloc((size_t)count * sizeof *args);
  if (args == NULL) return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < count; i++) {
    PyObject *value = PyTuple_GetItem(argv[3], i);
    if (PyLong_Check(value)) {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
      if (overflow > 0) v = (long long)PyLong_AsUnsignedLongLong(value);
      if (overflow < 0) {
        PyErr_Format(PyExc_ValueError, "launch: argument %zd does not fit 64 bits", i);
      }
      args[i].tag = 0;
      args[i].value.i = (int64_t)v;
    } else if (PyFloat_Check(value)) {
      args[i].tag = 1;
      args[i].value.f = PyFloat_AsDouble(value);
    } else {
      PyObject *ptr = PyObject_CallMethod(value, "data_ptr", NULL);
      if (ptr == NULL) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "launch: argument %zd is neither a number nor a tensor (no data_ptr())", i);
      } else {
        args[i].tag = 2;
        args[i].value.p = (void *)(uintptr_t)PyLong_AsUnsignedLongLong(ptr);
        Py_DECREF(ptr);
      }
    }
    if (PyErr_Occurred()) {
      if (args != inline_args) PyMem_Free(args);
      return NULL;
    }
  }
  char error[4096] = "";
  int kind = fn((int64_t)kernel, (uint32_t)dims, global, has_local ? local : NULL, args,
                (size_t)count, error, sizeof error);
  if (args != inline_args) PyMem_Free(args);
  if (kind != 0) {
    PyObject *cls = launch_error_class(kind);
    PyErr_SetString(cls, error);
    Py_DECREF(cls);
    return NULL;
  }
  Py_RETURN_NONE;
}

/* set_launch_device(device: int) -> None: the device of the generated C++ kernels the calling
 * thread launches next (runtime/Stream.cpp, torch_backend_set_launch_device). */
static PyObject *set_launch_device(PyObject *self, PyObject *device) {
  (void)self;
  static void (*fn)(int);
  if (fn == NULL) {
    fn = g_runtime != NULL
             ? (void (*)(int))(uintptr_t)dlsym(g_runtime, "torch_backend_set_launch_device")
             : NULL;
    if (fn == NULL) {
      PyErr_SetString(PyExc_RuntimeError, "set_launch_device: the runtime is not loaded");
      return NULL;
    }
  }
  long index = PyLong_AsLong(device);
  if (index == -1 && PyErr_Occurred()) return NULL;
  fn((int)index);
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"set_launch_device", set_launch_device, METH_O,
     "Set the device of the generated kernels this thread launches next."},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "Launch a kernel of a device program on the current stream (torch_backend.programs)."},
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
