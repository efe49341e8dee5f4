"""Device tensors through :mod:`torch.multiprocessing`, shared rather than copied.

Importing :mod:`torch_backend` registers reducers with multiprocessing's ``ForkingPickler``
(what ``torch.multiprocessing`` Queues, Pipes and Pools pickle with, and the arguments of a
``Process`` started with spawn or forkserver), so that::

    queue.put(torch.ones(4, device="emu"))   # producer
    t = queue.get()                          # consumer: the same device memory

works the way it does for CUDA tensors (PyTorch 2.13 and 2.14 have no PrivateUse1 hook for it
yet: RFC pytorch#192099).  A vendor opts in with the ``TB_EXTENSION_IPC`` extension (vendor.h,
ABI 2.5); the rules are CUDA's (``torch/multiprocessing/reductions.py``, "CUDA IPC" in
PyTorch's multiprocessing notes):

- the producer keeps the storage alive until every consumer has freed what it received, even
  after its own tensors are gone; :func:`ipc_collect` (``torch.<device>.ipc_collect()``) lets
  go of those that were released, as ``torch.cuda.ipc_collect()`` does -- each new send does
  it too;
- work the producer queued on the tensor before sending is complete before ``get()`` returns;
- a tensor received from another process cannot be sent on (send a ``clone()``);
- a consumer killed while it holds a shared tensor never releases it: the producer keeps that
  memory until it exits.  A ``Pool`` terminates its workers when its ``with`` block ends, and a
  worker drops a task's arguments only after returning its result: ``close()`` and ``join()``
  the pool first;
- a process forked after using the device cannot use it: use the ``spawn`` or ``forkserver``
  start method.

Device storages sent on their own are refused, as CUDA's are: send a tensor.  Tensors of other
devices keep PyTorch's reducers.
"""

from __future__ import annotations

import gc
import multiprocessing.context
import multiprocessing.reduction
import multiprocessing.util
import os
import threading
from collections.abc import Callable
from typing import Any

import torch
from torch.multiprocessing import reductions as _torch_reductions

_ops = torch.ops.torch_backend

# (producer pid, device, handle, storage offset) -> the storage this process rebuilt for it,
# so that views of one storage sent separately share a storage here too.
_received: dict[tuple[int, int, str, int], _torch_reductions.StorageWeakRef] = {}
_received_lock = threading.Lock()


def ipc_collect() -> int:
    """Release the device memory this process holds for consumers that have freed it; returns
    how many storages are still held for consumers (``torch.cuda.ipc_collect``'s role)."""
    return int(_ops._ipc_collect())


def _share(storage: torch.UntypedStorage) -> tuple[Any, ...]:
    """The picklable description of a device storage, for one consumer."""
    as_bytes = torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage)
    device, handle_fd, handle, allocation, offset, nbytes, counter_fd, slot = _ops._ipc_share(
        as_bytes
    )
    try:
        handle_dup = _for_child(handle_fd) if handle_fd >= 0 else None
    except BaseException:
        os.close(counter_fd)
        raise
    counter_dup = _for_child(counter_fd)
    return (os.getpid(), device, handle_dup, handle, allocation, offset, nbytes, counter_dup, slot)


def _for_child(fd: int) -> Any:
    """multiprocessing's picklable wrapper of `fd`, which this takes ownership of.

    Pickled for a Queue, a Pipe or a Pool's task, ``DupFd`` hands a duplicate to
    multiprocessing's resource sharer, and `fd` closes at once.  Pickled as the arguments of a
    ``Process`` being started with spawn or forkserver, ``DupFd`` only records the number, for
    the child to inherit when it starts, after pickling ends: `fd` then stays open as long as
    that process's ``Popen`` object (as the files of CPU tensors shared by descriptor stay open
    with their storage)."""
    popen = multiprocessing.context.get_spawning_popen()
    try:
        wrapped = multiprocessing.reduction.DupFd(fd)
    except BaseException:
        os.close(fd)
        raise
    if popen is None:
        os.close(fd)
    else:
        multiprocessing.util.Finalize(popen, os.close, (fd,))
    return wrapped


def _drop_process_arguments() -> None:
    """Run by multiprocessing's exit function in a process that received device tensors, after
    its target returned: drops the ``Process``'s target and arguments (as ``threading.Thread``
    does after ``run``), so that the device storages among them are freed -- and given back to
    their producer -- while the runtime is still up.  Otherwise the process object, which
    multiprocessing keeps as the current process, holds them until the interpreter's teardown,
    which need not free them, and the producer keeps their memory until it exits."""
    process = multiprocessing.current_process()
    if hasattr(process, "_args"):
        process._target, process._args, process._kwargs = None, (), {}
        gc.collect()


class _ExitHook:
    """Registers :func:`_drop_process_arguments` with multiprocessing's exit function once per
    process, at the first device tensor it receives -- and again in a child being started, whose
    bootstrap clears the finalizers registered while its arguments were unpickled (and, under
    forkserver, those its parent registered), then runs the after-fork hooks."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid: int | None = None
        self.forks_hooked = False

    def ensure(self) -> None:
        if self.pid == os.getpid():  # registered: what every later receive finds
            return
        with self.lock:
            if not self.forks_hooked:
                multiprocessing.util.register_after_fork(self, _ExitHook.after_fork)
                self.forks_hooked = True
            if self.pid != os.getpid():
                # Priority 100: before the finalizers of lower priority (a Pool's, a Queue's).
                multiprocessing.util.Finalize(None, _drop_process_arguments, exitpriority=100)
                self.pid = os.getpid()

    def after_fork(self) -> None:
        self.lock = threading.Lock()  # a child has only the thread that forked
        self.pid = None
        self.ensure()


_exit_hook = _ExitHook()


def _open(shared: tuple[Any, ...]) -> torch.UntypedStorage:
    pid, device, handle_dup, handle, allocation, offset, nbytes, counter_dup, slot = shared
    _exit_hook.ensure()
    handle_fd = handle_dup.detach() if handle_dup is not None else -1
    counter_fd = counter_dup.detach()
    try:
        key = (pid, device, handle, offset)
        with _received_lock:
            ref = _received.get(key)
            if ref is not None and not ref.expired():
                storage = torch.UntypedStorage._new_with_weak_ptr(ref.cdata)
                if storage.nbytes() == nbytes:
                    _ops._ipc_release(counter_fd, slot)
                    return storage
            storage = _ops._ipc_open(
                device, handle_fd, handle, allocation, offset, nbytes, counter_fd, slot, pid
            ).untyped_storage()
            for stale in [k for k, r in _received.items() if r.expired()]:
                del _received[stale]
            _received[key] = _torch_reductions.StorageWeakRef(storage)
            return storage
    finally:
        if handle_fd >= 0:
            os.close(handle_fd)
        os.close(counter_fd)


def _rebuild_tensor(
    cls: type,
    size: torch.Size,
    stride: tuple[int, ...],
    offset: int,
    dtype: torch.dtype,
    requires_grad: bool,
    device: int,
    shared: tuple[Any, ...] | None,
) -> torch.Tensor:
    if shared is None:
        storage = torch.UntypedStorage(0, device=torch.device(_device_type(), device))
    else:
        storage = _open(shared)
    t = torch.empty(0, dtype=dtype, device=storage.device).set_(storage, offset, size, stride)
    if cls is torch.nn.Parameter:
        return torch.nn.Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


def _device_type() -> str:
    return torch._C._get_privateuse1_backend_name()


def _reduce_tensor(tensor: torch.Tensor) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
            "does not support crossing process boundaries.  If you just want to transfer the "
            "data, call detach() on the tensor before serializing (e.g., putting it on the queue)."
        )
    if tensor.layout != torch.strided or tensor.is_quantized or tensor.is_nested:
        raise RuntimeError(
            f"{_device_type()}: only strided, non-quantized device tensors can be sent to "
            f"another process (this one is {tensor.layout}"
            f"{', quantized' if tensor.is_quantized else ''}); send tensor.cpu() instead"
        )
    torch.utils.hooks.warn_if_has_hooks(tensor)
    storage = tensor.untyped_storage()
    shared = _share(storage) if storage.nbytes() > 0 else None
    return (
        _rebuild_tensor,
        (
            type(tensor),
            tensor.size(),
            tensor.stride(),
            tensor.storage_offset(),
            tensor.dtype,
            tensor.requires_grad,
            tensor.device.index,
            shared,
        ),
    )


def _wrap(original: Callable[..., Any], ours: Callable[..., Any]) -> Callable[..., Any]:
    """A reducer that takes device objects and leaves the rest to PyTorch's ``original``."""

    def reduce(obj: Any) -> Any:
        device = obj.device if isinstance(obj, torch.Tensor) else getattr(obj, "device", None)
        if device is not None and device.type == _device_type():
            return ours(obj)
        return original(obj)

    reduce.__name__ = f"torch_backend_{getattr(original, '__name__', 'reduce')}"
    return reduce


def _refuse_storage(storage: Any) -> Any:
    raise RuntimeError(
        f"Cannot pickle {_device_type()} storage; try pickling a {_device_type()} tensor instead"
    )


def _register() -> None:
    """Put the device's reducers in front of PyTorch's (called once, at import)."""
    pickler = multiprocessing.reduction.ForkingPickler
    tensor_types = [torch.Tensor, torch.nn.Parameter, *torch._tensor_classes]
    for cls in tensor_types:
        original = pickler._extra_reducers.get(cls, _torch_reductions.reduce_tensor)
        pickler.register(cls, _wrap(original, _reduce_tensor))
    original = pickler._extra_reducers.get(torch.UntypedStorage, _torch_reductions.reduce_storage)
    pickler.register(torch.UntypedStorage, _wrap(original, _refuse_storage))
