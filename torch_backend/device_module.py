"""The device module, registered as ``torch.<device type>`` (for example ``torch.fake``).

It mirrors ``torch.cuda`` for what a device runtime offers: devices, streams, events, random
number generation, memory statistics and autocast support.  Everything is built on PyTorch's
device-generic machinery (``torch.accelerator``, ``torch.Stream``, ``torch.Event``,
``torch.Generator``) over torch_backend's C++ runtime, so that the same calls also work through
those generic APIs.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import torch

# torch.cuda.make_graphed_callables' counterpart, re-exported as torch.<device>'s.
from torch_backend.graphed_callables import make_graphed_callables  # noqa: F401

_ops = torch.ops.torch_backend
_device_type = "privateuseone"  # the vendor's device type, set at registration
_device_count = 0  # fixed for the life of the process, set at registration
# Why the device is absent when torch_backend's runtime did not load (torch_backend._absent):
# then no C++ operator of torch_backend exists, and the first use raises this instead.
_absent_error: str | None = None

DeviceLike = torch.device | str | int | None


def _set_device_type(name: str, count: int) -> None:
    global _device_type, _device_count
    _device_type = name
    _device_count = count


def _index(device: DeviceLike, optional: bool = True) -> int:
    """The device index of ``device`` (an index, "name:i", torch.device); None: current."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if device.type != _device_type:
        raise ValueError(f"expected a '{_device_type}' device, got '{device}'")
    if device.index is None:
        return current_device()
    return device.index


# ----------------------------------------------------------------------------------------------
# Initialisation


def _lazy_init() -> None:
    """Initialise the vendor for use in this process (PyTorch calls this before the first
    device tensor).  Raises in a child process forked after the parent used the device."""
    if _absent_error is not None:
        raise RuntimeError(_absent_error)
    _ops._lazy_init()


def init() -> None:
    """Initialise the device explicitly (as ``torch.cuda.init``)."""
    _lazy_init()


def is_initialized() -> bool:
    """True once the device has been used in this process."""
    return _absent_error is None and _ops._is_initialized()


def _is_in_bad_fork() -> bool:
    """True in a child forked after the parent used the device (it cannot be used there)."""
    return _absent_error is None and _ops._is_in_bad_fork()


# ----------------------------------------------------------------------------------------------
# Devices


def is_available() -> bool:
    """True when the vendor reports at least one device."""
    return device_count() > 0


def device_count() -> int:
    """Number of devices the vendor exposes."""
    return _device_count


def current_device() -> int:
    """Index of the calling thread's current device."""
    return torch.accelerator.current_device_index()


def set_device(device: DeviceLike) -> None:
    """Make ``device`` the calling thread's current device."""
    torch.accelerator.set_device_index(_index(device))


class device:
    """Context manager that makes ``device`` current inside the ``with`` block."""

    def __init__(self, device: DeviceLike) -> None:
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self) -> None:
        self.prev_idx = current_device()
        if self.idx >= 0 and self.idx != self.prev_idx:
            set_device(self.idx)

    def __exit__(self, *exc: object) -> None:
        if self.idx >= 0 and self.idx != self.prev_idx:
            set_device(self.prev_idx)


class device_of(device):
    """Context manager that makes the device of tensor ``obj`` current (no-op for CPU)."""

    def __init__(self, obj: torch.Tensor) -> None:
        super().__init__(obj.get_device() if obj.device.type == _device_type else None)


def synchronize(device: DeviceLike = None) -> None:
    """Wait for all work on every stream of ``device`` (default: current) to finish.

    Raises ``torch.AcceleratorError`` when work on the device failed: the device is then
    *faulted*, and every later synchronize, copy to the host (``.cpu()``, ``.item()``) and new
    work raises the same failure until :func:`reset_device` (as CUDA's sticky errors)."""
    torch.accelerator.synchronize(_index(device))


def reset_device(device: DeviceLike = None) -> None:
    """Clear a fault of ``device`` (default: current) so that a long-lived process can go on.

    Waits for the device's work to stop, then lets it accept work and copies again.  Tensors
    stay allocated and usable, but the contents of any tensor written by the failed work or by
    work that ran after it are unspecified: recompute them.  Does nothing on a healthy device.
    Raises ``NotImplementedError`` when the vendor cannot reset (its faults last until exit)."""
    _ops._reset_device(_index(device))


@dataclasses.dataclass(frozen=True)
class DeviceProperties:
    """What the vendor reports about a device."""

    name: str
    total_memory: int
    multi_processor_count: int
    major: int
    minor: int
    #: The host may read and write the device's memory through its device pointers
    #: (vendor.h, ``TB_DEVICE_HOST_ACCESS``): torch.compile then generates C++ kernels for it.
    host_access: bool = False


_HOST_ACCESS = 1  # tb_device_properties::capabilities bit TB_DEVICE_HOST_ACCESS


def get_device_properties(device: DeviceLike = None) -> DeviceProperties:
    """Name, total memory, compute units, architecture version and capabilities of
    ``device``."""
    name, total, units, major, minor, caps = _ops._device_properties(_index(device))
    return DeviceProperties(name, total, units, major, minor, bool(caps & _HOST_ACCESS))


def get_device_name(device: DeviceLike = None) -> str:
    """The vendor's name for ``device``."""
    return get_device_properties(device).name


def get_device_capability(device: DeviceLike = None) -> tuple[int, int]:
    """The vendor's architecture version of ``device`` as (major, minor)."""
    props = get_device_properties(device)
    return props.major, props.minor


# ----------------------------------------------------------------------------------------------
# Streams and events


class Stream(torch.Stream):
    """A queue of device work (``torch.Stream`` on this device).

    ``priority`` follows CUDA: 0 is the default, lower (negative) numbers are higher priority,
    clamped to what the vendor supports (see :func:`stream_priority_range`).
    """

    def __new__(cls, device: DeviceLike = None, priority: int = 0, **kwargs: Any) -> Stream:
        if kwargs:  # (stream_id=, device_index=, device_type=): wrap an existing stream
            return super().__new__(cls, **kwargs)
        with globals()["device"](device):
            return super().__new__(
                cls, device=torch.device(_device_type, current_device()), priority=priority
            )

    @property
    def priority(self) -> int:
        """The stream's priority (vendor numbers, CUDA convention)."""
        return int(_ops._stream_priority(self.stream_id, self.device_index))

    def __repr__(self) -> str:
        return (
            f"<torch.{_device_type}.Stream device={_device_type}:{self.device_index} "
            f"id={self.stream_id} priority={self.priority}>"
        )


def _wrap(stream: torch.Stream) -> Stream:
    return Stream(
        stream_id=stream.stream_id,
        device_index=stream.device_index,
        device_type=stream.device_type,
    )


class _EventType(type):
    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, torch.Event) and instance.device.type == _device_type


class Event(metaclass=_EventType):
    """A marker in a stream; ``enable_timing=True`` allows :meth:`torch.Event.elapsed_time`.

    Creates a ``torch.Event`` of this device (``isinstance(e, Event)`` holds for any
    ``torch.Event`` of this device).  It is not a subclass: ``torch.Event.elapsed_time`` accepts
    only ``torch.Event`` itself as its argument.
    """

    def __new__(  # type: ignore[misc]
        cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False
    ) -> torch.Event:
        return torch.Event(
            device=torch.device(_device_type),
            enable_timing=enable_timing,
            blocking=blocking,
            interprocess=interprocess,
        )


def stream_priority_range(device: DeviceLike = None) -> tuple[int, int]:
    """(least, greatest) stream priority of ``device``; greatest <= least, as in CUDA."""
    least, greatest = _ops._stream_priority_range(_index(device))
    return int(least), int(greatest)


def current_stream(device: DeviceLike = None) -> Stream:
    """The calling thread's current stream on ``device``."""
    if torch.compiler.is_compiling():  # dynamo traces torch.accelerator's, as a plain torch.Stream
        return torch.accelerator.current_stream(torch.device(_device_type, _index(device)))
    return _wrap(torch.accelerator.current_stream(_index(device)))


def default_stream(device: DeviceLike = None) -> Stream:
    """The default stream of ``device``."""
    index = _index(device)
    current = torch.accelerator.current_stream(index)
    return Stream(stream_id=0, device_index=index, device_type=current.device_type)


def set_stream(stream: torch.Stream) -> None:
    """Make ``stream`` the current stream of its device (and its device the current one)."""
    torch.accelerator.set_stream(stream)


@contextlib.contextmanager
def stream(stream: torch.Stream | None) -> Iterator[None]:
    """Context manager that makes ``stream`` current (None: no-op), restoring the previous
    stream and device afterwards."""
    if stream is None:
        yield
        return
    previous_device = current_device()
    previous_stream = torch.accelerator.current_stream(stream.device_index)
    torch.accelerator.set_stream(stream)
    try:
        yield
    finally:
        torch.accelerator.set_stream(previous_stream)
        set_device(previous_device)


# ----------------------------------------------------------------------------------------------
# Graphs (vendor.h ABI 2.3, TB_EXTENSION_GRAPHS): torch.accelerator.Graph, and torch.cuda's
# names for it


def graph_pool_handle() -> tuple[int, int]:
    """A memory pool id that several graphs can share (``pool=`` of :class:`graph`), as
    ``torch.cuda.graph_pool_handle``."""
    return tuple(_ops._graph_pool_handle())


def is_current_stream_capturing() -> bool:
    """Whether the current stream of the current device is capturing a graph."""
    return bool(_ops._is_current_stream_capturing())


def _capture_stream(device: int) -> torch.Stream:
    """The side stream :class:`graph` captures on by default, one per device (as torch.cuda's):
    a capture never shares a stream with other work."""
    found = _capture_streams.get(device)
    if found is None:
        found = _capture_streams[device] = torch.Stream(device=torch.device(_device_type, device))
    return found


_capture_streams: dict[int, torch.Stream] = {}


class graph:
    """Context manager that captures the work of its body into ``graph``, as
    ``torch.cuda.graph``: it synchronizes the device, empties the caching allocator's cache,
    and captures on ``stream`` (default: a side stream of the current device), then makes the
    previous stream current again.  ``pool`` shares a memory pool with other graphs
    (:func:`graph_pool_handle`, or another graph's ``pool()``); ``capture_error_mode`` is
    ``"global"`` (default), ``"thread_local"`` or ``"relaxed"``."""

    def __init__(
        self,
        graph: torch.accelerator.Graph,
        pool: tuple[int, int] | None = None,
        stream: torch.Stream | None = None,
        capture_error_mode: str = "global",
    ) -> None:
        self.graph = graph
        self.graph.graph_pool = pool
        self.graph.capture_error_mode = capture_error_mode
        self.stream = stream if stream is not None else _capture_stream(current_device())
        self._stream_context: contextlib.AbstractContextManager[None] | None = None

    def __enter__(self) -> None:
        synchronize()
        empty_cache()
        self._stream_context = globals()["stream"](self.stream)
        self._stream_context.__enter__()
        try:
            self.graph.capture_begin()
        except BaseException:
            self._stream_context.__exit__(None, None, None)
            raise

    def __exit__(self, *exc_info: object) -> None:
        try:
            self.graph.capture_end()
        finally:
            assert self._stream_context is not None
            self._stream_context.__exit__(None, None, None)


# The graph class under torch.cuda's name too, so that a program ported by renaming
# ``torch.cuda.X`` to ``torch.<device>.X`` keeps working (torch_npu has ``NPUGraph``).
Graph = torch.accelerator.Graph
CUDAGraph = torch.accelerator.Graph


# ----------------------------------------------------------------------------------------------
# Random numbers


def _generator(device: DeviceLike) -> torch.Generator:
    return _ops._default_generator(_index(device))


def get_rng_state(device: DeviceLike = None) -> torch.Tensor:
    """The default generator's state of ``device`` (16 bytes: seed and offset)."""
    return _generator(device).get_state()


def get_rng_state_all() -> list[torch.Tensor]:
    """The states of every device's default generator."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state: torch.Tensor, device: DeviceLike = None) -> None:
    """Restore ``device``'s default generator from :func:`get_rng_state`'s result."""
    _generator(device).set_state(new_state)


def set_rng_state_all(new_states: Sequence[torch.Tensor]) -> None:
    """Restore every device's default generator."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed: int) -> None:
    """Seed the current device's default generator."""
    _generator(None).manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seed every device's default generator."""
    for i in range(device_count()):
        _generator(i).manual_seed(int(seed))


def seed() -> None:
    """Seed the current device's default generator with a random number."""
    _generator(None).seed()


def seed_all() -> None:
    """Seed every device's default generator with one random number."""
    value = _generator(0).seed()
    for i in range(1, device_count()):
        _generator(i).manual_seed(value)


def initial_seed() -> int:
    """The current device's default generator's seed."""
    return _generator(None).initial_seed()


# ----------------------------------------------------------------------------------------------
# Memory


def memory_stats(device: DeviceLike = None) -> OrderedDict[str, Any]:
    """The caching allocator's statistics for ``device`` (same keys as torch.cuda)."""
    return torch.accelerator.memory_stats(_index(device))


def memory_allocated(device: DeviceLike = None) -> int:
    """Bytes held by tensors on ``device``."""
    return torch.accelerator.memory_allocated(_index(device))


def max_memory_allocated(device: DeviceLike = None) -> int:
    """Peak of :func:`memory_allocated` since the start or the last reset."""
    return torch.accelerator.max_memory_allocated(_index(device))


def memory_reserved(device: DeviceLike = None) -> int:
    """Bytes the caching allocator holds on ``device`` (in use or cached)."""
    return torch.accelerator.memory_reserved(_index(device))


def max_memory_reserved(device: DeviceLike = None) -> int:
    """Peak of :func:`memory_reserved` since the start or the last reset."""
    return torch.accelerator.max_memory_reserved(_index(device))


def reset_peak_memory_stats(device: DeviceLike = None) -> None:
    """Restart the peaks of :func:`memory_stats` from the current values."""
    torch.accelerator.reset_peak_memory_stats(_index(device))


def reset_accumulated_memory_stats(device: DeviceLike = None) -> None:
    """Zero the cumulative counters of :func:`memory_stats`."""
    torch.accelerator.reset_accumulated_memory_stats(_index(device))


def empty_cache() -> None:
    """Return every cached, unused block to the vendor."""
    torch.accelerator.empty_cache()


def ipc_collect() -> int:
    """Free the device memory this process kept for other processes it sent tensors to, where
    they have released them (as ``torch.cuda.ipc_collect``; :mod:`torch_backend.multiprocessing`).
    Returns how many storages are still kept for consumers."""
    from torch_backend.multiprocessing import ipc_collect as collect

    return collect()


def mem_get_info(device: DeviceLike = None) -> tuple[int, int]:
    """(free, total) bytes of ``device`` as the vendor reports them."""
    return torch.accelerator.get_memory_info(_index(device))


def set_per_process_memory_fraction(fraction: float, device: DeviceLike = None) -> None:
    """Limit what the caching allocator may reserve on ``device`` to ``fraction`` (0 to 1) of
    its total memory (as ``torch.cuda.set_per_process_memory_fraction``); beyond it, allocation
    raises ``torch.OutOfMemoryError``.  1 lifts the limit."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    _ops._set_memory_fraction(fraction, _index(device))


def get_per_process_memory_fraction(device: DeviceLike = None) -> float:
    """The fraction set by :func:`set_per_process_memory_fraction` (1.0 when none was)."""
    return float(_ops._memory_fraction(_index(device)))


_BLOCK_STATES = ("inactive", "active_allocated", "active_pending_free")


def memory_snapshot(device: DeviceLike = None) -> list[dict[str, Any]]:
    """The caching allocator's segments on ``device`` and the blocks they are cut into, in
    address order, shaped like ``torch.cuda.memory_snapshot()``'s segments (without stack
    frames).  A block's ``state`` is ``active_allocated`` (held by a tensor),
    ``active_pending_free`` (freed, waiting for streams it was used on) or ``inactive``
    (free, cached)."""
    index = _index(device)
    rows = _ops._memory_snapshot(index)
    segments: list[dict[str, Any]] = []
    for i in range(0, len(rows), 8):
        base, total, stream, large, address, size, requested, state = rows[i : i + 8]
        if not segments or segments[-1]["address"] != base:
            segments.append(
                {
                    "device": index,
                    "address": base,
                    "total_size": total,
                    "allocated_size": 0,
                    "active_size": 0,
                    "requested_size": 0,
                    "stream": stream,
                    "segment_type": "large" if large else "small",
                    "blocks": [],
                }
            )
        segment = segments[-1]
        segment["blocks"].append(
            {
                "address": address,
                "size": size,
                "requested_size": requested,
                "state": _BLOCK_STATES[state],
            }
        )
        if state == 1:
            segment["allocated_size"] += size
            segment["requested_size"] += requested
        if state != 0:
            segment["active_size"] += size
    return segments


_FIELDS = ("current", "peak", "allocated", "freed")  # of each statistic, as memory_stats keys


def _format_size(size: int, reference: int) -> str:
    """``size`` in the unit ``reference`` reads best in (torch.cuda.memory_summary's rule)."""
    units = ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"]
    unit = 0
    while unit + 1 < len(units) and reference >= 768 * 1024:
        size //= 1024
        reference //= 1024
        unit += 1
    return f"{size:6d} {units[unit]}"


def _format_count(count: int, reference: int) -> str:
    units = [" ", "K", "M"]
    unit = 0
    while unit + 1 < len(units) and reference >= 750 * 1000:
        count //= 1000
        reference //= 1000
        unit += 1
    return f"{count:7d} {units[unit]} "


def memory_summary(device: DeviceLike = None, abbreviated: bool = False) -> str:
    """A readable table of :func:`memory_stats` for ``device``, laid out like
    ``torch.cuda.memory_summary``: current, peak, total allocated and total freed of each
    statistic, for both pools and (unless ``abbreviated``) each pool apart."""
    index = _index(device)
    stats = memory_stats(index)
    metrics = [
        ("allocated_bytes", "Allocated memory", _format_size),
        ("active_bytes", "Active memory", _format_size),
        ("requested_bytes", "Requested memory", _format_size),
        ("reserved_bytes", "Device reserved memory", _format_size),
        ("inactive_split_bytes", "Non-releasable memory", _format_size),
        ("allocation", "Allocations", _format_count),
        ("active", "Active allocs", _format_count),
        ("segment", "Device reserved segments", _format_count),
        ("inactive_split", "Non-releasable allocs", _format_count),
    ]
    width = 79
    title = f"PyTorch {_device_type} memory summary, device ID {index}"
    counters = (
        f"{_device_type} OOMs: {stats.get('num_ooms', 0):<10d} | "
        f"device_malloc retries: {stats.get('num_alloc_retries', 0):<10d}"
    )
    lines = ["=" * width, title.center(width), "-" * width, counters.center(width), "=" * width]
    lines.append("          Metric          | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ")
    for key, name, formatter in metrics:
        lines.append("-" * width)
        pools = [("all", name)]
        if not abbreviated:
            pools += [
                ("large_pool", "      from large pool"),
                ("small_pool", "      from small pool"),
            ]
        reference: list[int] = []
        for pool, label in pools:
            values = [stats.get(f"{key}.{pool}.{field}", 0) for field in _FIELDS]
            reference = reference or values
            cells = " | ".join(
                formatter(value, ref) for value, ref in zip(values, reference, strict=True)
            )
            lines.append(f" {label:<24} | {cells} ")
    lines.append("=" * width)
    return "|" + "|\n|".join(line.ljust(width) for line in lines) + "|\n"


# ----------------------------------------------------------------------------------------------
# Autocast


def get_amp_supported_dtype() -> list[torch.dtype]:
    """Lower-precision types ``torch.autocast`` may use on this device."""
    return [torch.float16, torch.bfloat16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """bfloat16 tensors are supported on every torch_backend device."""
    return True


# What Inductor asks the PrivateUse1 device's module for (torch.utils.backend_registration's
# _get_custom_mod_func), answered lazily so that import torch does not import Inductor.
_INDUCTOR_HOOKS = ("Scheduling", "PythonWrapperCodegen", "CppWrapperCodegen")


def _inductor_backend_init() -> None:
    """Registers the device's Inductor backend: what Inductor's ``init_backend_registration``
    calls from torch 2.15 on, instead of reading ``Scheduling``, ``PythonWrapperCodegen`` and
    ``CppWrapperCodegen`` (what 2.13 and 2.14 read, answered by ``__getattr__`` below), whose
    registration would drop the device's cache-key config (``_inductor_config``)."""
    from torch_backend import compile as _compile

    _compile._register_inductor()


def __getattr__(name: str) -> Any:
    if name == "default_generators":
        return tuple(_ops._default_generator(i) for i in range(device_count()))
    if name in _INDUCTOR_HOOKS:
        from torch_backend import compile as _compile

        return _compile._inductor_hook(name)
    raise AttributeError(f"module 'torch.{_device_type}' has no attribute '{name}'")


def compile_kernel(source: str, name: str, **options: Any) -> Any:
    """Builds a kernel from source for the device and returns it as a callable
    (:func:`torch_backend.programs.compile_kernel`; ``torch.mps.compile_shader``'s
    counterpart, for vendors that build programs)."""
    from torch_backend import programs

    return programs.compile_kernel(source, name, **options)
