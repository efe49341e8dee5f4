"""torch_backend: accelerators join PyTorch by implementing one versioned C interface.

Importing this package (or plain ``import torch``, through PyTorch's backend autoload) loads
the vendor named by ``TORCH_BACKEND_VENDOR`` (a bundled name such as ``emu`` or ``fake``, the
name of a vendor installed as a Python package, or the path of a vendor library; unset: the one
installed vendor package, else ``emu``), and makes it a PyTorch device under the vendor's own
name::

    import torch
    x = torch.ones(3, device="emu")
    torch.emu.synchronize()

The device module ``torch.<name>`` mirrors ``torch.cuda``; see :mod:`torch_backend.device_module`.
Set ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` to keep ``import torch`` from loading it.
"""

from __future__ import annotations

import atexit
import os
import sys
import time
import warnings
from importlib import metadata
from typing import TYPE_CHECKING, Any

from torch_backend import _vendors
from torch_backend._paths import (
    bundled_vendors,
    cmake_prefix_path,
    conformance_executable,
    include_dir,
    library_dir,
)
from torch_backend._vendors import installed_vendors

if TYPE_CHECKING:
    import torch


def _package_version() -> str:
    """The installed distribution's version (pyproject.toml's, the one place it is written)."""
    try:
        return metadata.version("torch_backend")
    except metadata.PackageNotFoundError:  # a source tree on sys.path, never installed
        return "0+unknown"


__version__ = _package_version()

__all__ = [
    "__version__",
    "autocast_policies",
    "bundled_vendors",
    "cmake_prefix_path",
    "conformance_executable",
    "custom_ops",
    "fallback_counts",
    "fallback_mode",
    "include_dir",
    "installed_vendors",
    "kernel_counts",
    "library_dir",
    "load_error",
    "op_coverage",
    "refused_kernels",
    "reset_fallback_counts",
    "reset_kernel_counts",
    "set_fallback_mode",
    "set_storage_meta",
    "storage_meta",
    "unchecked_kernels",
    "vendor_info",
]

# The package's tools: modules run as ``python -m MODULE`` and console scripts, by name.  They
# need only the paths above, and must work whatever TORCH_BACKEND_VENDOR says.
_TOOLS = frozenset(
    {
        "torch_backend.cmake_prefix",
        "torch_backend.conformance_cli",
        "torch_backend.vendor_new",
        "tb-conformance",
        "tb-vendor",
    }
)


def _tool_process() -> bool:
    """Whether this process runs one of the package's tools (``_TOOLS``).  Python imports this
    package before running a submodule of it, so the command line tells: ``-m MODULE`` among
    the interpreter's options, or else the name of the script (a console script's)."""
    args = iter(sys.orig_argv[1:])
    for arg in args:
        if arg in ("-W", "-X"):
            next(args, None)  # the option's value
        elif arg.startswith("-m"):
            return (arg[2:] or next(args, "")) in _TOOLS
        elif arg == "-" or not arg.startswith("-") or arg.startswith("-c"):
            break  # a script, stdin or -c: the script's name decides
    return os.path.basename(sys.argv[0]) in _TOOLS


def _autoload() -> None:
    """Entry point of the ``torch.backends`` group: importing the package did the work.

    Defined before ``import torch``: when this package is imported first, torch's own import
    runs the autoload and finds this module still initialising.
    """


_TOOL_PROCESS = _tool_process()
if not _TOOL_PROCESS:  # a tool needs only the paths: no torch, no libtorch_backend, no vendor
    import torch

    from torch_backend import _runtime

    # The runtime built against this torch's release (kernels, guard, allocators), or why none
    # loaded: then the device is absent, and import torch goes on (_register).
    _RUNTIME_ERROR = _runtime.load(torch.__version__, __version__)

    from torch_backend import custom_ops as _custom_ops  # before custom_ops() takes the name
    from torch_backend import device_module as _device_module

    _ops = torch.ops.torch_backend


def _name_device(device_type: str, device_count: int) -> None:
    """Make PrivateUse1 the device ``device_type`` with ``device_count`` devices."""
    current = torch._C._get_privateuse1_backend_name()
    if current != device_type:
        if current != "privateuseone":
            raise RuntimeError(
                f"torch_backend: cannot register the vendor's device type '{device_type}': "
                f"PrivateUse1 is already registered as '{current}' in this process"
            )
        torch.utils.rename_privateuse1_backend(device_type)
    if _RUNTIME_ERROR is None:
        _ops._register_graph_impl()  # torch.accelerator.Graph, keyed by the device's new name
    if not hasattr(torch, device_type):
        _device_module._set_device_type(device_type, device_count)
        torch._register_device_module(device_type, _device_module)
        # torch 2.14 caches torch.get_device_module(): an earlier call (autoload off) would
        # keep answering without the device.
        getattr(torch.get_device_module, "cache_clear", lambda: None)()
        torch.utils.generate_methods_for_privateuse1_backend(
            for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True
        )


_ABSENT_FALLBACK: list[Any] = []  # _absent's fallback library, kept alive


def _absent_device_type() -> str:
    """The device type of the vendor this process would load, read without the runtime (which
    did not load) and without starting the vendor; "" when no single vendor is named or it
    cannot be opened."""
    try:
        _vendors.select_vendor()
        from torch_backend import _C

        return _C.vendor_device_type(os.environ.get(_vendors.VARIABLE, ""))
    except (ImportError, RuntimeError):
        return ""


def _absent(message: str, device_type: str) -> dict[str, Any]:
    """What a process gets when the device cannot be used: with ``TORCH_BACKEND_STRICT_LOAD=1``
    an ImportError (so that CI fails loudly); otherwise one warning naming the cause, the
    device (when its name is known) with 0 devices, and ``message`` from :func:`load_error`
    and the device's first use."""
    if _runtime.strict():
        raise ImportError(f"{message} ({_runtime.STRICT_VARIABLE} is set)")
    where = f"device type '{device_type}' has" if device_type else "there are"
    warnings.warn(
        f"{message.splitlines()[0]} ({where} no devices; its first use raises this error)",
        RuntimeWarning,
        stacklevel=4,
    )
    if device_type:
        _name_device(device_type, 0)
        if _RUNTIME_ERROR is not None:
            # No runtime registered anything for PrivateUse1: its first use raises the reason
            # (from device_module._lazy_init, and from every operator through this fallback).
            _device_module._absent_error = message

            def first_use(op: Any, *args: Any, **kwargs: Any) -> None:
                raise RuntimeError(f"{op}: {message}")

            library = torch.library.Library("_", "IMPL")
            library.fallback(first_use, "PrivateUse1")
            _ABSENT_FALLBACK.append(library)  # a collected Library unregisters its kernels
    return {
        "device_type": device_type or None,
        "vendor": None,
        "version": None,
        "abi_version": None,
        "library": None,
        "device_count": 0,
        "error": message,
    }


def _register() -> dict[str, Any]:
    """Load the vendor and make it PyTorch's PrivateUse1 device under its own name.

    A device that cannot be used does not fail the import, as a machine without a driver does
    not fail ``import torch`` for CUDA (:func:`_absent`): a torch release this package carries
    no runtime for, a runtime that does not load, a vendor that cannot start (a missing library
    or runtime, a failing ``init`` or device count), and installed vendor packages that name no
    single vendor (several of them and no ``TORCH_BACKEND_VENDOR``, or a failing entry point:
    :func:`_vendors.select_vendor`), the last with no device named.
    """
    if _RUNTIME_ERROR is not None:
        return _absent(_RUNTIME_ERROR, _absent_device_type())
    try:
        _vendors.select_vendor()
        (
            device_type,
            vendor_name,
            vendor_version,
            library,
            abi_major,
            abi_minor,
            device_count,
        ) = _ops._load()
    except RuntimeError as error:
        if isinstance(error, _vendors.VendorSelectionError):
            _ops._fail_load(str(error))  # no later use loads the default vendor instead
            device_type, message = "", str(error)
        else:
            device_type, message = _ops._load_error()
        if not message:  # not a load failure (a bad TORCH_BACKEND_FALLBACK, say)
            raise
        return _absent(message, device_type)
    _name_device(device_type, device_count)
    return {
        "device_type": device_type,
        "vendor": vendor_name,
        "version": vendor_version,
        "abi_version": f"{abi_major}.{abi_minor}",
        "library": library,
        "device_count": device_count,
        "error": None,
    }


def _warn_refused_kernels() -> None:
    """One warning per vendor kernel refused at load (vendor.h, "Schemas"), naming the
    operator and printing both schemas."""
    kernels, reasons = _ops._refused_kernels()
    for kernel, reason in zip(kernels, reasons, strict=True):
        warnings.warn(
            f"{_INFO['device_type']}: the vendor's kernel for {kernel} is refused, and the "
            f"operators it serves run on the CPU fallback: {reason}",
            stacklevel=2,
        )


def _let_autograd_threads_finish() -> None:
    """At exit, give PyTorch's autograd device threads the GIL for a moment.

    A backward pass on the device runs on the autograd engine's thread for the device, which
    wakes the caller and then drops the graph task; since torch 2.13 that task holds a Python
    object (the context stashed by ``_engine_run_backward``), whose release needs the GIL.  A
    script that exits right after ``backward()`` keeps the GIL into interpreter finalization,
    where the waiting thread is made to exit from inside a C++ destructor, which aborts the
    process ("terminate called without an active exception") about every other run.  CUDA
    devices have the same race (pytorch/pytorch#190489); until PyTorch fixes it, releasing the
    GIL briefly while the interpreter is still whole lets the thread finish its release.
    """
    if _RUNTIME_ERROR is None and _ops._is_initialized():
        time.sleep(0.02)


def load_error() -> str | None:
    """Why the device is absent from this process, or None when it loaded: this torch has no
    runtime in the package (an unsupported release), the runtime did not load, or the vendor
    could not start.  :func:`import torch` warned once with the same message."""
    return _INFO["error"]


def vendor_info() -> dict[str, Any]:
    """The loaded vendor: ``device_type`` (the name in ``torch.device``), ``vendor`` and
    ``version`` (its own name and version), ``abi_version`` ("major.minor"), ``library`` (the
    loaded file), ``device_count`` and ``error``: None, or the message of the vendor's failure
    to start, in which case ``device_count`` is 0 and the other fields but ``device_type`` (when
    known) are None."""
    return dict(_INFO)


def fallback_counts() -> dict[str, int]:
    """How many times each operator ran through the CPU fallback since the last reset, keyed by
    operator name (``"aten::add.Tensor"``)."""
    names, counts = _ops._fallback_counts()
    return dict(zip(names, counts, strict=True))


def reset_fallback_counts() -> None:
    """Zero the counters of :func:`fallback_counts` (and re-arm ``warn`` mode's warnings)."""
    _ops._reset_fallback_counts()


def kernel_counts() -> dict[str, int]:
    """How many times each vendor kernel was launched since the last reset, keyed by kernel
    name (``"add.out"``): the counterpart of :func:`fallback_counts` for what ran natively.
    Kernels that torch_backend's own copies and fills use are not counted."""
    names, counts = _ops._kernel_counts()
    return dict(zip(names, counts, strict=True))


def reset_kernel_counts() -> None:
    """Zero the counters of :func:`kernel_counts`."""
    _ops._reset_kernel_counts()


def storage_meta(tensor: torch.Tensor) -> dict[str, int]:
    """The per-storage metadata the vendor keeps for ``tensor``'s storage (vendor.h, "Per-storage
    metadata", ABI 2.4), such as a storage format: shared by every view of the storage, written
    by ``torch.save`` and restored by ``torch.load`` (as PyTorch's tensor metadata, each value
    under the key ``"name=value"``).  Empty for a vendor without the extension."""
    names, values = _ops._storage_meta(tensor)
    return dict(zip(names, values, strict=True))


def set_storage_meta(tensor: torch.Tensor, name: str, value: int) -> None:
    """Set metadata value ``name`` of ``tensor``'s storage.  Raises ``ValueError`` for a name or
    value the vendor refuses (its message says what it takes), ``NotImplementedError`` when the
    vendor keeps no per-storage metadata."""
    _ops._set_storage_meta(tensor, name, value)


def fallback_mode() -> str:
    """``"allow"``, ``"warn"`` or ``"error"``: what happens when an operator has no device
    kernel (initially from ``TORCH_BACKEND_FALLBACK``, default ``allow``)."""
    return _ops._fallback_mode()


def set_fallback_mode(mode: str) -> None:
    """Set the fallback mode: ``allow`` runs the operator on the CPU silently, ``warn`` warns
    once per operator, ``error`` raises ``NotImplementedError`` naming the operator."""
    _ops._set_fallback_mode(mode)


def autocast_policies() -> dict[str, list[str]]:
    """The operators autocast handles on this device, by policy (``lower_precision_fp``,
    ``fp32``, ``fp32_set_opt_dtype``, ``fp32_append_dtype``, ``promote``, and ``banned``: raise
    under autocast, as ``binary_cross_entropy`` does on CUDA): CUDA's lists."""
    ops, policies = _ops._autocast_policies()
    table: dict[str, list[str]] = {}
    for op, policy in zip(ops, policies, strict=True):
        table.setdefault(policy, []).append(op)
    return table


def op_coverage(ops: list[str] | None = None) -> dict[str, str]:
    """How each operator runs on this device: ``"native"`` (a device kernel: the vendor's, or
    one torch_backend builds on the vendor's memory and copy calls), ``"composite"`` (made of
    other operators on the device, each with a state of its own: torch_backend's composites
    where the vendor has no kernel -- ``dot`` on the vendor's GEMM, ``elu``, the padding modes
    -- and ATen's own, such as ``isinf``), ``"refused"`` (the vendor published a kernel for it,
    refused at load -- see :func:`refused_kernels` -- so the CPU fallback runs it),
    ``"fallback"`` (the CPU fallback runs it) or ``"unsupported"`` (no kernel anywhere).

    With no argument, every operator torch_backend knows: those ``codegen/ops.yaml`` lists,
    whose native kernels the vendor may publish, the built-in ones, those the vendor's kernels
    serve through the generic boxed wrapper, the operators of refused kernels and the vendor's
    custom operators (``"emu::mymuladd"``).  Otherwise the named operators, with their
    overload (``["add.out", "aten::lgamma.out", "emu::mymuladd"]``)."""
    names, states = _ops._op_coverage(list(ops or []))
    return dict(zip(names, states, strict=True))


def refused_kernels() -> dict[str, str]:
    """The vendor's kernels torch_backend refused when it loaded them, keyed by kernel name
    (``"add.out"``), with the reason: a schema that differs from this torch's (both are
    printed), an operator this torch does not have, or arguments no ``tb_value`` carries.  The
    operators they would serve run on the CPU fallback."""
    kernels, reasons = _ops._refused_kernels()
    return dict(zip(kernels, reasons, strict=True))


def unchecked_kernels() -> list[str]:
    """The vendor's kernels published without a schema (``tb_kernel::schema`` NULL): used
    unchecked, so a torch release that changes their operators would call them wrongly."""
    return list(_ops._unchecked_kernels())


def custom_ops() -> dict[str, dict[str, str | None]]:
    """The vendor's custom operators (``torch.ops.<namespace>.<name>``), keyed by name
    (``"emu::mymuladd"``): each one's ``schema`` and ``backward`` operator (None when it is not
    differentiable)."""
    return _custom_ops.custom_ops()


if not _TOOL_PROCESS:
    _INFO = _register()

    if _INFO["error"] is None:
        _warn_refused_kernels()
        _custom_ops._register_autograd()

        from torch_backend import compile as _compile

        _compile._register()

        from torch_backend import distributed as _distributed

        _distributed._register()

        from torch_backend import multiprocessing as _multiprocessing

        _multiprocessing._register()

    atexit.register(_let_autograd_threads_finish)
