"""Device programs built at run time: ``torch.<device>.compile_kernel``.

A vendor whose device builds programs from source (vendor.h, ``TB_EXTENSION_PROGRAMS``, ABI
2.6) runs kernels written as strings, the way ``torch.cuda._compile_kernel`` runs CUDA C++
through NVRTC and ``torch.mps.compile_shader`` runs Metal::

    import torch
    import torch_backend  # noqa: F401

    source = '''
    __kernel void scale(__global const float *x, __global float *y, float a, ulong n) {
      size_t i = get_global_id(0);
      if (i < n) y[i] = a * x[i];
    }
    '''
    scale = torch.ocl.compile_kernel(source, "scale")
    x = torch.arange(10.0, device="ocl")
    y = torch.empty_like(x)
    scale(x, y, 2.0, x.numel(), threads=x.numel())

A kernel launches on the current stream of its device, after the work queued there, with
tensors passed as device memory and Python numbers converted to the types of the kernel's
parameters (the vendor describes them: an ``int`` parameter refuses 2**40, a ``float`` one
takes 3).  A source that does not build raises RuntimeError with the compiler's log.  Programs
are built once per source, options and device in a process, and the vendor caches builds on
disk across processes.  torch.compile's generated kernels (torch_backend.inductor) run through
the same path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from torch_backend import _C
from torch_backend import device_module as _dm

__all__ = ["Kernel", "compile_kernel", "languages"]

_ops = torch.ops.torch_backend


def languages() -> list[str]:
    """The source languages the vendor builds (``"opencl_c"``, ...); empty when it builds
    none."""
    return list(_ops._program_languages())


def _sizes(value: int | Sequence[int], what: str) -> tuple[int, ...]:
    sizes = (value,) if isinstance(value, int) else tuple(value)
    if not 1 <= len(sizes) <= 3 or not all(isinstance(s, int) for s in sizes):
        raise ValueError(f"{what} must be an int or 1 to 3 ints, not {value!r}")
    return sizes


class Kernel:
    """A kernel of a device program: call it with its arguments, in the order of its
    parameters, and ``threads=`` (the number of work items: an int, or 2 or 3 of them for a
    grid) and optionally ``group_size=`` (work items per group; default: the vendor's choice).
    Without ``threads``, one work item runs per element of the first tensor argument."""

    def __init__(
        self, name: str, kernel: int, params: str, max_group_size: int, device: int
    ) -> None:
        self.name = name
        self.device = torch.device(_dm._device_type, device)
        self.params: tuple[str, ...] = tuple(params.split(",")) if params else ()
        self.max_group_size = max_group_size
        self._kernel = kernel
        self._index = device
        self._pointers = tuple(i for i, p in enumerate(self.params) if p == "p")

    def __repr__(self) -> str:
        return f"Kernel({self.name!r}, params={self.params}, device={self.device})"

    def __call__(
        self,
        *args: Any,
        threads: int | Sequence[int] | None = None,
        group_size: int | Sequence[int] | None = None,
    ) -> None:
        if len(args) != len(self.params):
            raise TypeError(
                f"kernel '{self.name}' takes {len(self.params)} arguments "
                f"({', '.join(self.params)}), got {len(args)}"
            )
        # Device memory parameters take tensors of the kernel's device, and only they do (the
        # runtime converts the rest, refusing a tensor for a scalar).
        for i in self._pointers:
            arg = args[i]
            if not isinstance(arg, torch.Tensor):
                raise TypeError(
                    f"kernel '{self.name}': argument {i} is {type(arg).__name__}, the "
                    f"parameter is device memory (pass a tensor on {self.device})"
                )
            if arg.get_device() != self._index:
                raise ValueError(
                    f"kernel '{self.name}': argument {i} is a tensor on {arg.device}, the "
                    f"kernel runs on {self.device}"
                )
        if threads is None:
            first = next((a for a in args if isinstance(a, torch.Tensor)), None)
            if first is None:
                raise ValueError(f"kernel '{self.name}': give threads= (no tensor argument)")
            threads = first.numel()
        grid = (threads,) if type(threads) is int else _sizes(threads, "threads")
        group = (
            None
            if group_size is None
            else (group_size,)
            if type(group_size) is int
            else _sizes(group_size, "group_size")
        )
        if group is not None and len(group) != len(grid):
            raise ValueError(
                f"kernel '{self.name}': threads has {len(grid)} dimensions, group_size {len(group)}"
            )
        _C.launch(self._kernel, grid, group, args)


def compile_kernel(
    source: str,
    name: str,
    *,
    options: str = "",
    language: str | None = None,
    device: torch.types.Device = None,
) -> Kernel:
    """Builds ``source`` (in ``language``: default, the first the vendor builds, ``"opencl_c"``
    for ocl) with compiler ``options`` for ``device`` (default: current) and returns its kernel
    ``name``, a :class:`Kernel`.  Raises NotImplementedError when the vendor builds no
    programs, RuntimeError with the compiler's log when the source does not build, and when
    the program has no kernel ``name``."""
    _dm._lazy_init()
    index = _dm._index(device)
    if language is None:
        known = languages()
        if not known:
            vendor = _dm._device_type
            raise NotImplementedError(
                f"{vendor}: the vendor builds no device programs (it has no "
                "TB_EXTENSION_PROGRAMS, vendor.h ABI 2.6), so compile_kernel cannot run"
            )
        language = known[0]
    program = _ops._program_build(index, language, source, options)
    kernel, params, max_group = _ops._program_kernel(program, name)
    return Kernel(name, kernel, params, max_group, index)
