"""torch.compile on the device: dynamo's device interface and Inductor's code generation.

Importing :mod:`torch_backend` calls :func:`_register`, which makes the vendor's device known to
the two halves of ``torch.compile`` the way PyTorch's own accelerators are:

- **Dynamo** gets a ``DeviceInterface`` (``torch._dynamo.device_interface``): device count and
  availability, the current device, streams, events and synchronize, so that graphs holding
  device tensors, ``torch.<device>.Stream``/``Event`` objects and ``with torch.<device>.stream``
  blocks trace without breaks.
- **Inductor** gets a backend for the device type, chosen by what the vendor reports
  (``tb_device_properties::capabilities``, vendor.h):

  - ``TB_DEVICE_HOST_ACCESS`` (emu): device pointers are host addresses, so Inductor's C++
    code generation (its CPU backend) writes fused kernels that run on the host directly on
    device tensors, in stream order.  When the vendor runs host functions in stream order
    (``tb_stream_api::launch_host_func``), each generated kernel's source is rewritten so that
    calling it queues it on the current stream, like a vendor kernel; otherwise the wrapper waits
    for the current stream before each generated kernel.  Either way the kernel sees the results
    of the work queued before it, and the work queued after it sees its results.  Matrix
    products, convolutions and the operators Inductor does not generate stay calls of the
    vendor's kernels on its streams.
  - anything else (fake, npu, a real accelerator without host access): the compiled graph is a
    graph of the vendor's own ATen kernels -- Inductor lowers every operator to its fallback
    (``fallback_by_default``), keeps its graph passes, buffer planning and Python wrapper, and
    generates no kernel.  Such a device never receives code it cannot run.

The Inductor side is registered lazily, the first time Inductor looks for the device's backend,
so ``import torch`` does not pay for importing Inductor.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib.abc
import importlib.util
import os
import re
import sys
from typing import Any

import torch

from torch_backend import device_module as _dm

__all__ = ["get_raw_stream", "host_access", "host_barrier", "host_funcs"]

_ops = torch.ops.torch_backend


@functools.cache
def opencl_programs() -> bool:
    """True when Inductor generates OpenCL C for the device: no host access, and the vendor
    builds OpenCL C programs (vendor.h ABI 2.6, ``TB_EXTENSION_PROGRAMS``)."""
    if host_access() or _dm.device_count() == 0:
        return False
    from torch_backend import programs

    return "opencl_c" in programs.languages()


@functools.cache
def host_access() -> bool:
    """True when the host may address the device's memory directly (vendor.h,
    ``TB_DEVICE_HOST_ACCESS``), so Inductor generates C++ kernels for it; False when compiled
    graphs run the vendor's own kernels only.  Decided by device 0 (every device of a vendor
    is the same kind); False when the vendor has no device."""
    if _dm.device_count() == 0:
        return False
    return _dm.get_device_properties(0).host_access


def host_barrier(device: int) -> None:
    """Wait until the current stream of ``device`` has run everything queued on it: called by
    Inductor's wrapper before each generated kernel, which then runs on the host."""
    torch.accelerator.current_stream(device).synchronize()


def get_raw_stream(device: int) -> int:
    """The id of the current stream of ``device`` (Inductor's ``get_raw_stream``)."""
    return torch.accelerator.current_stream(device).stream_id


# ----------------------------------------------------------------------------------------------
# Dynamo


def _exchange_device(device: int) -> int:
    previous = _dm.current_device()
    if device >= 0 and device != previous:
        _dm.set_device(device)
    return previous


def _make_interface() -> type:
    from torch._dynamo.device_interface import DeviceInterface

    class _Worker:
        """Device queries that work in Inductor's compile workers (which must not use the device)
        from values read in the parent."""

        _current: int | None = None
        _properties: list[Any] | None = None

        @staticmethod
        def set_device(device: int) -> None:
            _Worker._current = device

        @staticmethod
        def current_device() -> int:
            return _Worker._current if _Worker._current is not None else _dm.current_device()

        @staticmethod
        def get_device_properties(device: torch.types.Device = None) -> Any:
            if _Worker._properties is None:
                _Worker._properties = [
                    _dm.get_device_properties(i) for i in range(_dm.device_count())
                ]
            index = _Worker.current_device() if device is None else _dm._index(device)
            return _Worker._properties[index]

    class Interface(DeviceInterface):
        device = _dm.device  # type: ignore[assignment]
        Event = torch.Event  # type: ignore[assignment]
        Stream = _dm.Stream  # type: ignore[assignment]
        Worker = _Worker  # type: ignore[assignment]

        current_device = staticmethod(_dm.current_device)
        set_device = staticmethod(_dm.set_device)  # type: ignore[assignment]
        device_count = staticmethod(_dm.device_count)
        stream = staticmethod(_dm.stream)  # type: ignore[assignment]
        current_stream = staticmethod(_dm.current_stream)  # type: ignore[assignment]
        set_stream = staticmethod(_dm.set_stream)  # type: ignore[assignment]
        synchronize = staticmethod(_dm.synchronize)  # type: ignore[assignment]
        get_device_properties = staticmethod(_dm.get_device_properties)  # type: ignore[assignment]
        get_raw_stream = staticmethod(get_raw_stream)  # type: ignore[assignment]
        exchange_device = staticmethod(_exchange_device)  # type: ignore[assignment]
        maybe_exchange_device = staticmethod(_exchange_device)  # type: ignore[assignment]
        memory_allocated = staticmethod(_dm.memory_allocated)  # type: ignore[assignment]
        is_bf16_supported = staticmethod(_dm.is_bf16_supported)  # type: ignore[assignment]

        @staticmethod
        def is_available() -> bool:
            return _dm.is_available()

        @staticmethod
        def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
            stream = torch.Stream(
                stream_id=stream_id, device_index=device_index, device_type=device_type
            )
            torch.accelerator.set_stream(stream)

        @staticmethod
        def get_compute_capability(device: torch.types.Device = None) -> int:
            major, minor = _dm.get_device_capability(device)
            return major * 10 + minor

    Interface.__name__ = Interface.__qualname__ = f"{_dm._device_type.capitalize()}Interface"
    return Interface


# ----------------------------------------------------------------------------------------------
# Inductor


def _make_op_overrides() -> Any:
    from torch._inductor.codegen.common import DeviceOpOverrides

    module = f"torch.{_dm._device_type}"

    class OpOverrides(DeviceOpOverrides):
        """What Inductor's Python wrapper writes for device guards, streams and synchronize."""

        def import_get_raw_stream_as(self, name: str) -> str:
            return f"from torch_backend.compile import get_raw_stream as {name}"

        def set_device(self, device_idx: int) -> str:
            return f"{module}.set_device({device_idx})"

        def synchronize(self) -> str:
            return f"{module}.synchronize()"

        def device_guard(self, device_idx: int) -> str:
            return f"{module}.device({device_idx})"

        def current_stream(self) -> str:
            return f"{module}.current_stream()"

        def cpp_kernel_type(self) -> str:
            return "void*"

    return OpOverrides()


def _make_wrapper() -> type:
    """Inductor's Python wrapper for the device.  Inductor's own wrapper refuses non-Triton
    kernels on any device but the CPU and MPS, and declares stream variables only inside the
    device guard it writes for GPUs; this one calls generated C++ kernels on device tensors after
    a wait for the current stream, and declares each stream where its block begins."""
    from torch._inductor.codegen.wrapper import (
        PythonWrapperCodegen,
        SubgraphPythonWrapperCodegen,
    )
    from torch._inductor.virtualized import V

    device_type = _dm._device_type

    class DeviceWrapper:
        def define_kernel(self, kernel_name: str, kernel_body: str, *args: Any, **kw: Any) -> Any:
            if host_funcs() and "async_compile.cpp_pybinding(" in kernel_body:
                enqueued = _enqueue_kernel_source(kernel_body)
                if enqueued is not None:
                    kernel_body = enqueued
                    self._tb_enqueued = getattr(self, "_tb_enqueued", set())  # type: ignore[attr-defined]
                    self._tb_enqueued.add(kernel_name)  # type: ignore[attr-defined]
            return super().define_kernel(kernel_name, kernel_body, *args, **kw)  # type: ignore[misc]

        def _generate_kernel_call_helper(
            self,
            kernel_name: str,
            call_args: Any,
            *,
            device: Any = None,
            triton: bool = True,
            **kwargs: Any,
        ) -> None:
            device = device or V.graph.get_current_device_or_throw()
            if triton or device.type != device_type:
                super()._generate_kernel_call_helper(  # type: ignore[misc]
                    kernel_name, call_args, device=device, triton=triton, **kwargs
                )
                return
            call = self.wrap_kernel_call(kernel_name, call_args)  # type: ignore[attr-defined]
            enqueued = kernel_name in getattr(self, "_tb_enqueued", ())
            if enqueued:
                # the graph's device, not the current one: the kernel queues itself there
                if not self.imports.contains(_LAUNCH_DEVICE_IMPORT):  # type: ignore[attr-defined]
                    self.imports.writeline(_LAUNCH_DEVICE_IMPORT)  # type: ignore[attr-defined]
                self.writeline(f"tb_set_launch_device({device.index or 0})")  # type: ignore[attr-defined]
            if enqueued and _device_args_only(call_args, device_type):
                self.writeline(call)  # type: ignore[attr-defined]  # queued on the stream
                return
            if not self.imports.contains(_BARRIER_IMPORT):  # type: ignore[attr-defined]
                self.imports.writeline(_BARRIER_IMPORT)  # type: ignore[attr-defined]
            self.writeline(f"tb_host_barrier({device.index or 0})")  # type: ignore[attr-defined]
            self.writeline(call)  # type: ignore[attr-defined]
            if enqueued:  # it reads CPU tensors: wait for it before the caller reuses them
                self.writeline(f"tb_host_barrier({device.index or 0})")  # type: ignore[attr-defined]

        # ---- OpenCL C kernels (torch_backend.inductor_opencl) ----

        def _tb_define_opencl(self, name: str, source: str, origins: str) -> None:
            """Adds a generated kernel to the graph's program, which the module builds when it
            loads (write_async_compile_wait)."""
            kernels = getattr(self, "_tb_ocl_kernels", None)
            if kernels is None:
                kernels = self._tb_ocl_kernels = []  # type: ignore[attr-defined]
                device = V.graph.get_current_device_or_throw()
                self.header.writeline("from torch_backend._C import launch as tb_launch")  # type: ignore[attr-defined]
                self.header.writeline(f"tb_ocl_device = {device.index or 0}")  # type: ignore[attr-defined]
                self.header.writeline("tb_ocl_kernels = {}")  # type: ignore[attr-defined]
            kernels.append(name)
            self.header.writeline(f"# {name}: {origins}".replace("\n", " "))  # type: ignore[attr-defined]
            self.header.writeline(f"tb_ocl_kernels[{name!r}] = r'''")  # type: ignore[attr-defined]
            for line in source.rstrip().split("\n"):
                self.header.writeline(line)  # type: ignore[attr-defined]
            self.header.writeline("'''")  # type: ignore[attr-defined]

        def _tb_launch(self, name: str, grid: str, args: str, group: int = 0) -> None:
            g = "None" if not group or grid.count(",") > 1 else f"({group},)"
            self.writeline(f"tb_launch({name}, {grid}, {g}, {args})")  # type: ignore[attr-defined]

        def _tb_expr(self, expr: Any) -> str:
            return self.codegen_python_sizevar(expr)  # type: ignore[attr-defined]

        def write_async_compile_wait(self) -> None:
            if opencl_programs():
                self.prefix.writeline(  # type: ignore[attr-defined]
                    "from torch_backend.inductor_opencl import build_from_globals"
                )
                self.prefix.writeline("build_from_globals(globals())")  # type: ignore[attr-defined]
            super().write_async_compile_wait()  # type: ignore[misc]

        def make_allocation(self, name: str, device: Any, *args: Any, **kwargs: Any) -> str:
            # Inductor allocates by device type and lets a GPU's device guard pick the index;
            # the device is no GPU and gets no guard in the wrapper, so its buffers name their
            # index -- else a graph on device 1 would return tensors of the current device.
            # Under compile_on_one_rank (torch 2.14) the wrapper follows the current device on
            # purpose, so that one compiled wrapper serves every rank.
            line = super().make_allocation(name, device, *args, **kwargs)  # type: ignore[misc]
            one_rank = getattr(torch.compiler.config, "compile_on_one_rank", False)
            if device.type == device_type and device.index is not None and not one_rank:
                line = line.replace(f"device='{device_type}'", f"device='{device}'")
            return line

        def codegen_cuda_stream_enter(self, stream_idx: int) -> Any:
            from torch._inductor.stream_utils import get_stream_name

            name = get_stream_name(stream_idx)
            if stream_idx == 0:  # entered outside any other stream block: the caller's stream
                self.writeline(f"{name} = torch.{device_type}.current_stream()")  # type: ignore[attr-defined]
            else:
                index = V.graph.scheduler.stream_idx_to_user_obj_idx[stream_idx]
                line = _EXTERNAL_OBJECT_IMPORT
                if not self.imports.contains(line):  # type: ignore[attr-defined]
                    self.imports.writeline(line)  # type: ignore[attr-defined]
                self.writeline(f"{name} = get_external_object_by_index({index})")  # type: ignore[attr-defined]
            return super().codegen_cuda_stream_enter(stream_idx)  # type: ignore[misc]

    class Wrapper(DeviceWrapper, PythonWrapperCodegen):
        @staticmethod
        def create(
            is_subgraph: bool,
            subgraph_name: str | None,
            parent_wrapper: Any,
            partition_signatures: Any = None,
        ) -> Any:
            if is_subgraph:
                return SubgraphWrapper(subgraph_name, parent_wrapper, partition_signatures)
            return Wrapper()

    class SubgraphWrapper(DeviceWrapper, SubgraphPythonWrapperCodegen):
        pass

    return Wrapper


def _device_args_only(call_args: Any, device_type: str) -> bool:
    """Whether every tensor argument of a generated kernel's call lives on the device (a CPU
    tensor could change or be freed before a kernel queued on the stream reads it)."""
    from torch._inductor.virtualized import V

    for arg in call_args:
        if not isinstance(arg, str):
            continue
        buffer = V.graph.try_get_buffer(arg) if hasattr(V.graph, "try_get_buffer") else None
        if buffer is None:
            buffer = V.graph.graph_inputs.get(arg)
        if buffer is None:
            continue
        get_device = getattr(buffer, "get_device", None)
        device = get_device() if get_device is not None else None
        if device is not None and device.type != device_type:
            return False
    return True


@functools.cache
def host_funcs() -> bool:
    """True when the vendor runs host functions in stream order (vendor.h,
    ``tb_stream_api::launch_host_func``): generated kernels are then queued on the stream
    instead of run by the host after a wait for it."""
    if not host_access() or not _ops._has_host_funcs():
        return False
    address = _launcher_address()
    if address == 0:
        return False
    os.environ[_LAUNCHER_ENV] = hex(address)
    return True


_LAUNCHER_ENV = "TORCH_BACKEND_LAUNCH_HOST_FUNC"


def _launcher_address() -> int:
    """The address of torch_backend_launch_host_func in the libtorch_backend.so this process
    loaded (found in /proc/self/maps: the extension loads it privately, so it is not in the
    global symbol scope), or 0."""
    try:
        with open("/proc/self/maps") as maps:
            paths = [line.split(maxsplit=5)[-1].strip() for line in maps if line.count(" ") >= 5]
    except OSError:
        return 0
    for path in paths:
        if path.endswith("/libtorch_backend.so"):
            try:
                symbol = ctypes.CDLL(path).torch_backend_launch_host_func
            except (OSError, AttributeError):
                return 0
            return ctypes.cast(symbol, ctypes.c_void_p).value or 0
    return 0


# The status numbers of vendor.h the generated kernels return (TB_OK, TB_ERROR_INTERNAL).
_TB_OK, _TB_ERROR_INTERNAL = 0, 6

_KERNEL_SIGNATURE = re.compile(r'extern "C"\s+void\s+kernel\(([^)]*)\)')


def _enqueue_kernel_source(kernel_body: str) -> str | None:
    """Rewrites the source of an Inductor C++ kernel so that calling it queues it on the current
    stream: ``kernel`` (the function Inductor's Python binding calls, same parameters) packs
    its arguments and hands ``tb_kernel_run`` to torch_backend_launch_host_func (csrc), which
    the stream's vendor thread then calls in stream order; the original body becomes
    ``tb_kernel_body``.  The packed arguments are freed after the run, unless the launcher
    marked them kept: a graph captured the call and frees them with itself (its replays run the
    call again).  The kernel finds that function through an environment variable set in
    this process (as Inductor's own kernels find ``_torchinductor_pyobject_tensor_data_ptr``),
    so the source names no address or path and Inductor may cache it.  None when the source is
    not in the expected shape."""
    match = _KERNEL_SIGNATURE.search(kernel_body)
    if match is None:
        return None
    params = [p.strip() for p in match.group(1).split(",") if p.strip()]
    names = []
    for param in params:
        name = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", param)
        if name is None:
            return None
        names.append(name.group(1))
    end = kernel_body.rfind("''')")
    if end < 0:
        return None
    fields = "\n".join(f"    {param};" for param in params)
    values = ", ".join(["0", *names])
    launcher = f"""
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
namespace {{
struct tb_kernel_args {{
    int tb_kept;  /* set by the launcher when a graph captures the call: replays run it again */
{fields}
}};
int tb_kernel_run(void* data, char* message, size_t size) {{
    auto* a = static_cast<tb_kernel_args*>(data);
    int status = {_TB_OK};
    try {{
        tb_kernel_body({", ".join(f"a->{n}" for n in names)});
    }} catch (const std::exception& e) {{
        std::snprintf(message, size, "generated kernel: %s", e.what());
        status = {_TB_ERROR_INTERNAL};
    }}
    if (!a->tb_kept) delete a;
    return status;
}}
void tb_kernel_free(void* data) {{ delete static_cast<tb_kernel_args*>(data); }}
using tb_launch_fn = int (*)(int (*)(void*, char*, size_t), void (*)(void*), void*, int*, char*,
                             size_t);
tb_launch_fn tb_launcher() {{
    static tb_launch_fn launch = [] {{
        const char* address = std::getenv("{_LAUNCHER_ENV}");
        return address == nullptr ? nullptr
            : reinterpret_cast<tb_launch_fn>(std::strtoull(address, nullptr, 0));
    }}();
    return launch;
}}
}}  // namespace
extern "C" void kernel({", ".join(params)}) {{
    tb_launch_fn launch = tb_launcher();
    if (launch == nullptr) {{
        throw std::runtime_error("torch_backend: {_LAUNCHER_ENV} is not set");
    }}
    auto* a = new tb_kernel_args{{{values}}};
    char error[512] = "";
    if (launch(&tb_kernel_run, &tb_kernel_free, a, &a->tb_kept, error, sizeof error) != 0) {{
        if (!a->tb_kept) delete a;
        throw std::runtime_error(error);
    }}
}}
"""
    body = kernel_body[: match.start()] + f"static void tb_kernel_body({match.group(1)})"
    body += kernel_body[match.end() : end] + launcher + kernel_body[end:]
    return body


_BARRIER_IMPORT = "from torch_backend.compile import host_barrier as tb_host_barrier"
_LAUNCH_DEVICE_IMPORT = "from torch_backend._C import set_launch_device as tb_set_launch_device"
_EXTERNAL_OBJECT_IMPORT = (
    "from torch._dynamo.graph_bytecode_inputs import get_external_object_by_index"
)


def _make_no_kernel_scheduling() -> type:
    """The scheduling of a device without host access: Inductor's fallback lowering leaves it
    nothing to generate, and anything it would be asked for is refused by name."""
    from torch._inductor.codegen.cpp import CppScheduling

    device_type = _dm._device_type

    class NoKernelScheduling(CppScheduling):
        def codegen_node(self, node: Any) -> None:
            raise RuntimeError(
                f"torch_backend: Inductor asked for a generated kernel on '{device_type}' "
                f"({[n.get_name() for n in node.get_nodes()]}), but the host cannot address "
                f"this device's memory (the vendor does not report TB_DEVICE_HOST_ACCESS): "
                "compiled graphs on it run the vendor's own kernels only; please report the "
                "model, or use torch.compile(backend='aot_eager')"
            )

    return NoKernelScheduling


def _register_inductor() -> None:
    """Registers the device's Inductor backend (once; Inductor calls this lazily)."""
    from torch._inductor.codegen import common
    from torch._inductor.codegen.cpp import CppScheduling

    from torch_backend import _inductor_config

    device_type = _dm._device_type
    if common.get_scheduling_for_device(device_type) is not None:
        return
    if host_access():
        scheduling = CppScheduling
    elif opencl_programs():
        from torch_backend.inductor_opencl import OpenCLScheduling, fallback_unsupported

        scheduling = OpenCLScheduling
        fallback_unsupported(device_type)
    else:
        scheduling = _make_no_kernel_scheduling()
    for key, value in _config_record().items():
        setattr(_inductor_config, key, value)
    common.register_backend_for_device(
        device_type,
        scheduling,
        _make_wrapper(),
        None,  # cpp_wrapper=True: Inductor refuses the device by name
        device_custom_config=_inductor_config,  # type: ignore[arg-type]
    )
    common.register_device_op_overrides(device_type, _make_op_overrides())


@functools.cache
def _config_record() -> dict[str, str]:
    """What ``_inductor_config`` records: how generated kernels run, and the release and the
    code generation here and in inductor_opencl.py (a change to either never reuses a cached
    graph)."""
    digest = hashlib.sha256()
    for path in (__file__, os.path.join(os.path.dirname(__file__), "inductor_opencl.py")):
        with open(path, "rb") as code:
            digest.update(code.read())
    source = digest.hexdigest()[:16]
    return {
        "kernels": ("queued" if host_funcs() else "barrier")
        if host_access()
        else ("opencl" if opencl_programs() else "none"),
        "version": f"{sys.modules['torch_backend'].__version__}+{source}",
    }


def _check_config_record() -> None:
    """torch 2.15 lets ``torch.compile(options={"<device>.<key>": value})`` patch a device's
    ``device_custom_config``; ours records how kernels run, for Inductor's cache key, and is no
    switch: a patched value would file a graph under another mode's key."""
    from torch_backend import _inductor_config

    for key, value in _config_record().items():
        if getattr(_inductor_config, key) != value:
            raise ValueError(
                f"torch_backend: the compile option '{_dm._device_type}.{key}' is torch_backend's "
                f"record of how generated kernels run (here {value!r}), not a setting: remove it "
                "from torch.compile's options"
            )


def _inductor_hook(name: str) -> Any:
    """``torch.<device>.Scheduling`` / ``PythonWrapperCodegen`` / ``CppWrapperCodegen``: what
    Inductor's ``init_backend_registration`` asks a PrivateUse1 device for.  There is no C++
    wrapper for the device: ``cpp_wrapper=True`` gets Inductor's CPU one, which calls the
    generated kernels without the stream barrier, so it is refused (``None`` is not accepted
    there, hence the stand-in class that raises)."""
    _register_inductor()
    from torch._inductor.codegen import common

    codegen = common.device_codegens[_dm._device_type]
    if name == "Scheduling":
        return codegen.scheduling
    if name == "PythonWrapperCodegen":
        return codegen.wrapper_codegen
    return _NoCppWrapper


class _NoCppWrapper:
    """Inductor's ``cpp_wrapper`` mode is not supported on the device."""

    @staticmethod
    def create(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"torch_backend: Inductor's cpp_wrapper mode is not supported on "
            f"'{_dm._device_type}': compile with the default (Python) wrapper"
        )


def _graph_on_device(gm: Any, example_inputs: Any) -> bool:
    """True when the FX graph (or its example inputs) holds a tensor of the vendor's device."""
    device_type = _dm._device_type
    for value in example_inputs or ():
        if isinstance(value, torch.Tensor) and value.device.type == device_type:
            return True
    for node in getattr(getattr(gm, "graph", None), "nodes", ()):
        for value in torch.utils._pytree.tree_leaves(node.meta.get("val")):
            if isinstance(value, torch.Tensor) and value.device.type == device_type:
                return True
    return False


# Inductor options for graphs on the device.  Without host access: lower every operator to the
# vendor's kernel.  With it: C++ kernels as for the CPU.  Inductor takes any device type it does
# not know for a GPU in two places, fixed per graph: the backend it names for dtype propagation
# (get_current_backend() answers config.cuda_backend, "triton", for every other device: "cpp"
# here, which is what generates the graph's kernels), and a fusion step validated for GPUs only
# (it mis-reads the C++ loop groups).  The generated kernels run on the stream's worker thread,
# one thread each, as a GPU stream's kernels do not borrow the host's cores: an OpenMP team
# started from that thread spins between kernels on the cores the host needs to enqueue the next
# ones (on two cores it made the compiled encoder step 1.4x slower than eager instead of faster).
# Random numbers come from the vendor's own kernels (fallback_random): the C++ code generator
# draws each element with a scalar Philox in that one thread, which made the compiled encoder
# step's three dropouts cost more than all of eager's work (1.23-1.36x eager; 0.80-0.96x with
# the vendor's bernoulli), and the vendor's kernels give the masks eager gives for a seed.
_FALLBACK_PATCHES: dict[str, Any] = {"fallback_by_default": True}
# OpenCL C kernels (inductor_opencl): Inductor's defaults for GPUs, but no layout optimisation,
# which converts convolutions' inputs to channels_last for a GPU's cuDNN and predicts their
# outputs by the meta kernel's rule (channels_last only after a channels_last input off CUDA)
# while the vendor's convolution follows eager's (input or weight): the two disagree.
_OPENCL_PATCHES: dict[str, Any] = {"layout_optimization": False}
_HOST_PATCHES: dict[str, Any] = {
    "cuda_backend": "cpp",
    "loop_reindexing_after_fusion": False,
    "cpp.threads": 1,
    "fallback_random": True,
}


def _device_patches() -> dict[str, Any]:
    """The config patches of the device's graphs (those not in force already)."""
    from torch._inductor import config

    def current(key: str) -> Any:
        value: Any = config
        for part in key.split("."):
            value = getattr(value, part)
        return value

    if opencl_programs():
        patches = _OPENCL_PATCHES
    else:
        patches = _HOST_PATCHES if host_access() else _FALLBACK_PATCHES
    return {key: value for key, value in patches.items() if current(key) != value}


def _patch_compile_fx() -> None:
    """Makes Inductor compile graphs on the device with the device's options.

    Inductor has one global configuration; the device's options are chosen per graph here, at
    ``torch._inductor.compile_fx.compile_fx``, which every way into Inductor imports when it is
    called (``torch.compile``'s default backend, ``backend="inductor"``, dynamo's registry), by
    adding them to that graph's config patches (which Inductor also applies to the backward
    graph it compiles later).  CPU graphs in the same process are compiled as before.
    """
    from torch._inductor import compile_fx as module

    _register_inductor()  # before Inductor's own registration, which would drop the config
    original = module.compile_fx
    if getattr(original, "_torch_backend", False):
        return

    @functools.wraps(original)
    def compile_fx(model_: Any, example_inputs_: Any, *args: Any, **kwargs: Any) -> Any:
        _register_inductor()
        _check_config_record()
        if _graph_on_device(model_, example_inputs_):
            from torch_backend import reduce_overhead

            patches = _device_patches()
            patches.update(reduce_overhead.policy_patches(kwargs.get("config_patches")))
            if patches:
                kwargs["config_patches"] = {**patches, **(kwargs.get("config_patches") or {})}
        return original(model_, example_inputs_, *args, **kwargs)

    compile_fx._torch_backend = True  # type: ignore[attr-defined]
    module.compile_fx = compile_fx


def _register_dynamo() -> None:
    from torch._dynamo.device_interface import register_interface_for_device

    interface = _make_interface()
    register_interface_for_device(_dm._device_type, interface)
    for index in range(_dm.device_count()):
        register_interface_for_device(f"{_dm._device_type}:{index}", interface)


def _register_trace_rules() -> None:
    """Dynamo traces ``torch.<device>.stream(s)`` blocks the way it traces ``torch.cuda.stream``:
    as a stream context in the graph (its handler covers every registered device interface's
    ``stream``), once the function is on its list of in-graph torch functions."""
    from torch._dynamo import trace_rules
    from torch._dynamo.variables import TorchInGraphFunctionVariable

    for name in _IN_GRAPH:
        trace_rules.torch_non_c_binding_in_graph_functions[f"torch.{_dm._device_type}.{name}"] = (
            TorchInGraphFunctionVariable
        )
    trace_rules.get_torch_obj_rule_map.cache_clear()


_IN_GRAPH = ("stream",)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs a callback right after each named module is first imported (once)."""

    def __init__(self, callbacks: dict[str, Any]) -> None:
        self.callbacks = dict(callbacks)

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        callback = self.callbacks.pop(fullname, None)
        if callback is None:
            return None
        if not self.callbacks:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            execute(module)
            callback()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _register() -> None:
    """Called once by ``import torch_backend``.  Importing dynamo costs about a second, so its
    device interface and trace rules are registered when dynamo's modules are first imported
    (or now, if they already are), and Inductor's backend and per-graph options when Inductor
    is."""
    pending = {}
    for module, callback in (
        ("torch._dynamo.device_interface", _register_dynamo),
        ("torch._dynamo.trace_rules", _register_trace_rules),
        ("torch._inductor.compile_fx", _patch_compile_fx),
    ):
        if module in sys.modules:
            callback()
        else:
            pending[module] = callback
    if pending:
        sys.meta_path.insert(0, _AfterImport(pending))
