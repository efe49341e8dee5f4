"""torch.distributed on the device: the c10d backend ``tbccl``.

Importing :mod:`torch_backend` registers the backend for the vendor's device type, so that::

    torch.distributed.init_process_group()          # no backend named: picks tbccl
    torch.distributed.all_reduce(torch.ones(4, device="emu"))

works the way ``nccl`` does for CUDA, and ``DistributedDataParallel`` and ``torchrun`` work on
the device.  The same process group also serves CPU tensors, through Gloo.

Engines.  A vendor with a collectives library of its own (vendor.h, ABI 2.2,
``TB_EXTENSION_COLLECTIVES``: NCCL's place under CUDA; emu has one) runs the collectives of
contiguous device tensors of the dtypes it takes:

1. at the first collective on a device, rank 0 asks the vendor for a rendezvous id, the group's
   store carries it to the other ranks, and every rank creates its communicator;
2. the group's communication stream waits for the caller's current stream (an event), the
   vendor's collective is enqueued there, and the tensors are recorded on that stream for the
   caching allocator; the call returns a :class:`Work` at once;
3. ``Work.wait()`` returns once the collective's event completed, raising the vendor's error
   (ranks that disagree about a collective, a peer that exited, the timeout) as
   ``DistBackendError``; such a failure faults the device, as an NCCL error aborts its
   communicator.

Everything else (CPU tensors, send/recv, dtypes or reductions the vendor lacks, vendors without
the extension, or ``TORCH_BACKEND_DIST_ENGINE=gloo``) goes over Gloo.  On a device the host may
address (``TB_DEVICE_HOST_ACCESS``, emu), Gloo works on contiguous device tensors in place;
otherwise device tensors are staged through pinned host memory:

1. at the call, each tensor the collective reads is copied to a pinned host buffer on the
   caller's current stream (``non_blocking``), after the work already queued there, and an
   event is recorded behind the copies; the call returns a :class:`Work` at once;
2. the group's engine thread, which runs the group's collectives one at a time in the order they
   were issued (Gloo requires every rank to issue the same collectives in the same order), waits
   for that event, runs Gloo's collective on the host buffers, and copies the results back to
   the device tensors on the device's communication stream;
3. ``Work.wait()`` returns once those copies are complete (raising the collective's error, or a
   timeout), so work the caller queues after it reads the results -- the ordering contract of
   ``nccl``'s work objects, with the host waiting where ``nccl`` would make the stream wait.

Errors name the collective and the group: a peer that died or a collective that does not
complete within the group's timeout raises ``torch.distributed.DistBackendError``; mismatched
shapes or dtypes across ranks are Gloo's errors, surfaced the same way.
"""

from __future__ import annotations

import atexit
import ctypes
import datetime
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.distributed as dist

from torch_backend import device_module as _dm

__all__ = ["BACKEND", "ProcessGroupTB", "Work"]

#: The backend's name in ``init_process_group(backend=...)`` and ``get_backend()``.
BACKEND = "tbccl"

# TORCH_BACKEND_DIST_CHECK=0 skips the comparison of the ranks' tensors before each collective
# (one small Gloo all_gather): faster small collectives, and Gloo's abort on a mismatch.
_CHECK = os.environ.get("TORCH_BACKEND_DIST_CHECK", "1") != "0"


def _engine() -> str:
    """TORCH_BACKEND_DIST_ENGINE, read when a group is created: "gloo" runs every collective
    over Gloo even when the vendor has a collectives library (comparisons, and a way around a
    vendor library that misbehaves); "auto" (the default) uses the vendor's library."""
    engine = os.environ.get("TORCH_BACKEND_DIST_ENGINE", "auto")
    if engine not in ("auto", "gloo"):
        raise ValueError(
            f"TORCH_BACKEND_DIST_ENGINE={engine!r}: expected 'auto' (the vendor's collectives "
            "when it has them) or 'gloo'"
        )
    return engine


# tb_reduce_op (vendor.h) of the reductions the vendor's collectives take, by ReduceOp's
# RedOpType (options hold ReduceOp objects, which do not hash like the enum).
_VENDOR_OPS = {
    dist.ReduceOp.SUM: 0,
    dist.ReduceOp.PRODUCT: 1,
    dist.ReduceOp.MAX: 2,
    dist.ReduceOp.MIN: 3,
    dist.ReduceOp.AVG: 4,
}


def _vendor_op(opts: Any) -> int | None:
    """The tb_reduce_op of ``opts.reduceOp``; None for reductions the vendor lacks."""
    op = opts.reduceOp
    return _VENDOR_OPS.get(getattr(op, "op", op))


# tb_dtype (vendor.h) of each torch dtype, for the vendor's dtype bit set.
_TB_DTYPES = {
    torch.bool: 0,
    torch.uint8: 1,
    torch.int8: 2,
    torch.int16: 3,
    torch.int32: 4,
    torch.int64: 5,
    torch.float16: 6,
    torch.bfloat16: 7,
    torch.float32: 8,
    torch.float64: 9,
}

_c10d = torch._C._distributed_c10d


class Work(dist.Work):
    """The handle of one collective: ``wait()`` blocks until the results are in the output
    tensors (raising the collective's error), ``get_future()`` completes with the outputs."""

    def __init__(
        self, future: torch.futures.Future, what: str, timeout: datetime.timedelta
    ) -> None:
        super().__init__()
        self._future = future
        self._what = what
        self._timeout = timeout
        self._done = threading.Event()
        future.add_done_callback(lambda _: self._done.set())

    def is_completed(self) -> bool:
        return self._future.done()

    def is_success(self) -> bool:
        if not self._future.done():
            return False
        try:
            self._future.value()
        except Exception:
            return False
        return True

    def exception(self) -> Any:
        try:
            self._future.value()
        except Exception as error:
            return error
        return None

    def wait(self, timeout: datetime.timedelta = datetime.timedelta(0)) -> bool:
        limit = timeout if timeout > datetime.timedelta(0) else self._timeout
        if not self._done.wait(limit.total_seconds()):
            raise dist.DistBackendError(
                f"{BACKEND}: {self._what} did not complete within {limit} (a peer that "
                "stopped, or ranks that issued different collectives)"
            )
        self._future.wait()
        return True

    def get_future(self) -> torch.futures.Future:
        return self._future

    def result(self) -> list[torch.Tensor]:
        self.wait()
        return self._future.value()


@atexit.register
def _stop_engines() -> None:
    """At exit, before the interpreter finalizes: each engine finishes the job it runs (a
    polling wait returns at once; a Gloo wait within the group's timeout) and stops.  A daemon
    thread that came back from a C++ call while the interpreter finalizes would abort the
    process ("terminate called without an active exception")."""
    _EXITING.set()
    for engine in list(_ENGINES):
        engine.close(engine._timeout.total_seconds() + 1.0)


def _wait_event(event: torch.Event, timeout: datetime.timedelta) -> bool:
    """Waits for ``event`` up to ``timeout``; False when it has not completed by then.  Polls
    (back to back at first, then in naps of up to 0.1 ms) instead of blocking in the
    event's synchronize, so that the engine thread never sits in a C++ call that outlives the
    timeout (a daemon thread coming back from one while the interpreter exits aborts it)."""
    deadline = time.monotonic() + timeout.total_seconds()
    nap = 0.0
    while not event.query():
        if time.monotonic() > deadline or _EXITING.is_set():
            return False
        time.sleep(nap)
        nap = min(1e-4, nap * 2 if nap else 1e-5)
    return True


class _AllWorks:
    """Several Gloo works as one (the coalesced collectives run Gloo's one by one)."""

    def __init__(self, works: list[Any]) -> None:
        self._works = works

    def wait(self, timeout: datetime.timedelta) -> bool:
        for work in self._works:
            work.wait(timeout)
        return True


# Set at interpreter exit: engines stop polling and finish (see _stop_engines).
_EXITING = threading.Event()
_ENGINES: weakref.WeakSet[_Engine] = weakref.WeakSet()


class _Engine:
    """One thread per process group running its collectives in issue order."""

    def __init__(self, name: str, timeout: datetime.timedelta) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._timeout = timeout
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        _ENGINES.add(self)

    def submit(self, job: Callable[[], Any]) -> torch.futures.Future:
        future: torch.futures.Future = torch.futures.Future()
        self._queue.put((job, future))
        return future

    def close(self, timeout: float | None = None) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put(None)
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            job, future = item
            try:
                result = job()
            except Exception as error:
                future.set_exception(error)
            else:
                future.set_result(result)


def _host_alias(tensor: torch.Tensor) -> torch.Tensor | None:
    """A CPU tensor over the same bytes as the contiguous device tensor ``tensor``, when the host
    may address the device's memory (vendor.h, TB_DEVICE_HOST_ACCESS): Gloo then reads and
    writes the device tensor in place, with no staging copies.  None otherwise."""
    from torch_backend import compile as _compile

    if not _compile.host_access() or not tensor.is_contiguous() or tensor.numel() == 0:
        return None
    if tensor.is_complex() or tensor.dtype not in _DTYPES:
        return None
    size = tensor.numel() * tensor.element_size()
    raw = (ctypes.c_char * size).from_address(tensor.data_ptr())
    return torch.frombuffer(raw, dtype=tensor.dtype, count=tensor.numel()).view(tensor.shape)


def _device_of(tensors: Sequence[torch.Tensor]) -> torch.device | None:
    device = None
    for tensor in tensors:
        if tensor.device.type == "cpu":
            continue
        if tensor.device.type != _dm._device_type:
            raise ValueError(
                f"{BACKEND}: tensors on '{tensor.device}' are not supported (only "
                f"'{_dm._device_type}' and CPU tensors)"
            )
        if device is not None and tensor.device != device:
            raise ValueError(
                f"{BACKEND}: one collective's tensors are on {device} and {tensor.device}: "
                "use one device per collective"
            )
        device = tensor.device
    return device


_DTYPES = [
    getattr(torch, name)
    for name in (
        "float32",
        "float64",
        "float16",
        "bfloat16",
        "int64",
        "int32",
        "int16",
        "int8",
        "uint8",
        "bool",
        "complex64",
        "complex128",
    )
]


def _signature(what: str, tensors: Sequence[torch.Tensor], sizes: bool) -> torch.Tensor:
    """[collective, dtype, elements] of a collective's tensors, as the ranks compare them."""
    dtypes = {tensor.dtype for tensor in tensors}
    dtype = _DTYPES.index(next(iter(dtypes))) if len(dtypes) == 1 else -2
    if len(dtypes) == 1 and next(iter(dtypes)) not in _DTYPES:
        dtype = -3
    count = sum(tensor.numel() for tensor in tensors) if sizes else -1
    return torch.tensor([_COLLECTIVES.index(what), dtype, count], dtype=torch.int64)


def _describe(row: list[int]) -> str:
    what, dtype, count = row
    name = _DTYPES[dtype] if 0 <= dtype < len(_DTYPES) else "mixed or other dtypes"
    sized = f", {count} elements" if count >= 0 else ""
    return f"{_COLLECTIVES[what]} of {name}{sized}"


_COLLECTIVES = [
    "all_reduce",
    "all_reduce_coalesced",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
    "reduce_scatter",
    "all_to_all_single",
    "barrier",
    "send",
    "recv",
    "all_gather_into_tensor_coalesced",
    "reduce_scatter_tensor_coalesced",
    "reduce",
    "gather",
    "scatter",
]


class ProcessGroupTB(dist.ProcessGroup):
    """The ``tbccl`` process group: device and CPU tensors, collectives over Gloo."""

    def __init__(
        self, store: dist.Store, rank: int, size: int, timeout: datetime.timedelta
    ) -> None:
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)
        self._timeout = timeout
        self._engine = _Engine(f"{BACKEND}-rank{rank}", timeout)
        self._streams: dict[int, torch.Stream] = {}
        self._name = ""
        self._store = store
        self._comms: dict[int, int] = {}  # device index -> the vendor communicator's handle
        self._comms_made = 0  # communicators created: the store key of the next one
        self._failed: set[int] = set()  # devices whose communicator failed (engine thread)
        self._vendor_dtypes = 0 if _engine() == "gloo" else torch.ops.torch_backend._coll_dtypes()

    def getBackendName(self) -> str:
        return BACKEND

    @property
    def group_name(self) -> str:
        """The group's name in c10d's registry (functional collectives find the group by it)."""
        return self._name

    def __repr__(self) -> str:
        return f"ProcessGroupTB(rank={self.rank()}, size={self.size()})"

    # --- the staging engine ---------------------------------------------------------------

    def _comm_stream(self, index: int) -> torch.Stream:
        if index not in self._streams:
            self._streams[index] = _dm.Stream(index)
        return self._streams[index]

    def _launch(
        self,
        what: str,
        reads: Sequence[torch.Tensor],
        writes: Sequence[torch.Tensor],
        collective: Callable[[Callable[[torch.Tensor], torch.Tensor]], Any],
        finish: Callable[[Callable[[torch.Tensor], torch.Tensor]], None] | None = None,
        agree: Sequence[torch.Tensor] | None = None,
        sizes: bool = True,
    ) -> Work:
        """Runs ``collective(host)`` on the engine, where ``host(t)`` is the tensor Gloo sees in
        place of ``t`` (``t`` itself on the CPU, a pinned copy of a device tensor), then
        ``finish(host)``, then copies every device tensor of ``writes`` back from its buffer.
        First, unless ``agree`` is None, the ranks compare the dtype (and, with ``sizes``, the
        element count) of ``agree``: a mismatch is an error on every rank, where Gloo would
        abort the process."""
        device = _device_of([*reads, *writes])
        signature = None if agree is None or not _CHECK else _signature(what, agree, sizes)
        buffers: dict[int, torch.Tensor] = {}

        aliased: set[int] = set()

        def host(tensor: torch.Tensor) -> torch.Tensor:
            if tensor.device.type == "cpu":
                return tensor
            buffer = buffers.get(id(tensor))
            if buffer is None:
                buffer = _host_alias(tensor)
                if buffer is None:
                    buffer = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
                else:
                    aliased.add(id(tensor))
                buffers[id(tensor)] = buffer
            return buffer

        for tensor in [*reads, *writes]:
            host(tensor)
        ready = None
        if device is not None:
            index = device.index or 0
            stream = torch.accelerator.current_stream(index)
            with _dm.device(index), _dm.stream(stream):
                for tensor in reads:
                    if tensor.device.type != "cpu" and id(tensor) not in aliased:
                        host(tensor).copy_(tensor, non_blocking=True)
                ready = torch.Event(device=device)
                ready.record(stream)
            comm = self._comm_stream(index)
        outputs = list(writes)

        def job() -> list[torch.Tensor]:
            if ready is not None:
                ready.synchronize()
            if signature is not None:
                self._agree(what, signature)
            try:
                collective(host).wait(self._timeout)
            except Exception as error:
                raise dist.DistBackendError(
                    f"{BACKEND}: {what} failed on rank {self.rank()} of {self.size()}: {error}"
                ) from error
            if finish is not None:
                finish(host)
            if device is not None:
                with _dm.device(index), _dm.stream(comm):
                    for tensor in writes:
                        if tensor.device.type != "cpu" and id(tensor) not in aliased:
                            tensor.copy_(host(tensor), non_blocking=True)
                    done = torch.Event(device=device)
                    done.record(comm)
                done.synchronize()
            return outputs

        return Work(self._engine.submit(job), what, self._timeout)

    # --- the vendor's collectives library ---------------------------------------------------

    def _vendor_takes(self, tensors: Sequence[torch.Tensor], opts: Any = None) -> bool:
        """Whether the vendor's collectives run this collective of ``tensors``."""
        if not self._vendor_dtypes or not tensors:
            return False
        if opts is not None and hasattr(opts, "reduceOp") and _vendor_op(opts) is None:
            return False
        device = tensors[0].device
        for tensor in tensors:
            code = _TB_DTYPES.get(tensor.dtype)
            if (
                tensor.device != device
                or tensor.device.type != _dm._device_type
                or not tensor.is_contiguous()
                or code is None
                or not (self._vendor_dtypes >> code) & 1
            ):
                return False
        return True

    def _comm(self, index: int) -> int:
        """This rank's communicator on device ``index``, created at its first collective: rank 0
        makes the rendezvous id, the group's store carries it to the others."""
        comm = self._comms.get(index)
        if comm is not None and index in self._failed:
            # A failed collective aborted the group's communicators on every rank (each rank saw
            # the failure); the next collective, after the device was reset, gets new ones.
            self._failed.discard(index)
            del self._comms[index]
            torch.ops.torch_backend._coll_destroy(comm)
        elif comm is not None:
            return comm
        key = f"{BACKEND}/comm/{self._comms_made}"
        self._comms_made += 1
        if self.rank() == 0:
            unique = torch.ops.torch_backend._coll_unique_id()
            self._store.set(key, bytes(unique.tolist()))
        else:
            unique = torch.tensor(list(self._store.get(key)), dtype=torch.uint8)
        timeout_ms = int(self._timeout.total_seconds() * 1000)
        comm = torch.ops.torch_backend._coll_init(
            index, self.size(), self.rank(), unique, timeout_ms
        )
        self._comms[index] = comm
        return comm

    def _vendor_launch(
        self,
        what: str,
        tensors: Sequence[torch.Tensor],
        enqueue: Callable[[int], None],
        outputs: Sequence[torch.Tensor],
    ) -> Work:
        """Enqueues ``enqueue(comm)`` on the communication stream of the tensors' device after
        the caller's current stream; the Work completes when the collective has run."""
        device = tensors[0].device
        index = device.index or 0
        try:
            comm = self._comm(index)
        except RuntimeError as error:
            raise dist.DistBackendError(
                f"{BACKEND}: {what} on rank {self.rank()} of {self.size()}: the vendor's "
                f"communicator could not be created: {error}"
            ) from error
        stream = torch.accelerator.current_stream(index)
        side = self._comm_stream(index)
        with _dm.device(index):
            ready = torch.Event(device=device)
            ready.record(stream)
            side.wait_event(ready)
            with _dm.stream(side):
                enqueue(comm)
                for tensor in tensors:
                    tensor.record_stream(side)
                done = torch.Event(device=device)
                done.record(side)
        results = list(outputs)

        def job() -> list[torch.Tensor]:
            try:
                if not _wait_event(done, self._timeout):
                    self._failed.add(index)
                    raise dist.DistBackendError(
                        f"{BACKEND}: {what} did not complete within {self._timeout} on rank "
                        f"{self.rank()} of {self.size()} (a peer that stopped, or ranks that "
                        "issued different collectives)"
                    )
                done.synchronize()  # raises the device's fault, if the collective failed
            except RuntimeError as error:
                self._failed.add(index)
                raise dist.DistBackendError(
                    f"{BACKEND}: {what} failed on rank {self.rank()} of {self.size()}: {error}"
                ) from error
            return results

        return Work(self._engine.submit(job), what, self._timeout)

    def _vendor_reduce(self, what: str, tensors: list[torch.Tensor], opts: Any) -> Work:
        op = _vendor_op(opts)
        if op == _VENDOR_OPS[dist.ReduceOp.AVG]:
            for tensor in tensors:
                if not (tensor.is_floating_point() or tensor.is_complex()):
                    raise ValueError(
                        f"{BACKEND}: ReduceOp.AVG needs floating-point tensors, got {tensor.dtype}"
                    )

        def enqueue(comm: int) -> None:
            for tensor in tensors:
                torch.ops.torch_backend._coll_run(comm, "all_reduce", tensor, tensor, op)

        return self._vendor_launch(what, tensors, enqueue, tensors)

    def _agree(self, what: str, signature: torch.Tensor) -> None:
        gathered = torch.empty(self.size() * signature.numel(), dtype=torch.int64)
        try:
            self._gloo._allgather_base(gathered, signature).wait(self._timeout)
        except Exception as error:
            raise dist.DistBackendError(
                f"{BACKEND}: {what} failed on rank {self.rank()} of {self.size()}: {error}"
            ) from error
        rows = gathered.view(self.size(), -1).tolist()
        if any(row != rows[0] for row in rows):
            described = ", ".join(f"rank {r}: {_describe(row)}" for r, row in enumerate(rows))
            raise dist.DistBackendError(
                f"{BACKEND}: the ranks called {what} with tensors that do not match ({described})"
            )

    # --- collectives ------------------------------------------------------------------------

    def _reduction(
        self, options_type: Any, opts: Any, results: Sequence[torch.Tensor]
    ) -> tuple[Any, Any]:
        """Gloo's options for the caller's ``opts`` (of ``options_type``, None: defaults), and the
        ``finish`` step of the collective: Gloo has no AVG, which becomes SUM followed by a
        division of ``results`` by the group size (floating-point tensors only)."""
        opts = opts if opts is not None else options_type()
        options = options_type()
        options.reduceOp = opts.reduceOp
        if hasattr(opts, "timeout"):
            options.timeout = opts.timeout
        if opts.reduceOp != dist.ReduceOp.AVG:
            return options, None
        options.reduceOp = dist.ReduceOp.SUM
        for tensor in results:
            if not (tensor.is_floating_point() or tensor.is_complex()):
                raise ValueError(
                    f"{BACKEND}: ReduceOp.AVG needs floating-point tensors, got {tensor.dtype}"
                )

        def finish(host: Callable[[torch.Tensor], torch.Tensor]) -> None:
            for tensor in results:
                host(tensor).div_(self.size())

        return options, finish

    def allreduce(self, tensors: list[torch.Tensor], opts: Any = None) -> Work:
        if self._vendor_takes(tensors, opts or dist.AllreduceOptions()):
            return self._vendor_reduce("all_reduce", tensors, opts or dist.AllreduceOptions())
        options, finish = self._reduction(dist.AllreduceOptions, opts, tensors)
        return self._launch(
            "all_reduce",
            tensors,
            tensors,
            lambda host: self._gloo.allreduce([host(t) for t in tensors], options),
            finish,
            agree=tensors,
        )

    def allreduce_coalesced(self, tensors: list[torch.Tensor], opts: Any = None) -> Work:
        if self._vendor_takes(tensors, opts or dist.AllreduceCoalescedOptions()):
            return self._vendor_reduce(
                "all_reduce_coalesced", tensors, opts or dist.AllreduceCoalescedOptions()
            )
        options, finish = self._reduction(dist.AllreduceCoalescedOptions, opts, tensors)
        return self._launch(
            "all_reduce_coalesced",
            tensors,
            tensors,
            lambda host: self._gloo.allreduce_coalesced([host(t) for t in tensors], options),
            finish,
            agree=tensors,
        )

    def broadcast(self, tensors: list[torch.Tensor], opts: Any = None) -> Work:
        opts = opts if opts is not None else dist.BroadcastOptions()
        if self._vendor_takes(tensors):

            def enqueue(comm: int) -> None:
                for t in tensors:
                    torch.ops.torch_backend._coll_run(comm, "broadcast", t, t, opts.rootRank)

            return self._vendor_launch("broadcast", tensors, enqueue, tensors)
        root = self.rank() == opts.rootRank
        return self._launch(
            "broadcast",
            tensors if root else [],
            [] if root else tensors,
            lambda host: self._gloo.broadcast([host(t) for t in tensors], opts),
            agree=tensors,
        )

    def allgather(
        self,
        output_tensors: list[list[torch.Tensor]],
        input_tensors: list[torch.Tensor],
        opts: Any = None,
    ) -> Work:
        opts = opts if opts is not None else dist.AllgatherOptions()
        outputs = [t for group in output_tensors for t in group]
        if self._vendor_takes([*input_tensors, *outputs]) and all(
            len(group) == self.size() and all(o.numel() == t.numel() for o in group)
            for group, t in zip(output_tensors, input_tensors, strict=True)
        ):

            def enqueue(comm: int) -> None:
                for group, t in zip(output_tensors, input_tensors, strict=True):
                    flat = torch.empty(self.size() * t.numel(), dtype=t.dtype, device=t.device)
                    torch.ops.torch_backend._coll_run(comm, "all_gather", t, flat, 0)
                    for r, o in enumerate(group):
                        o.copy_(flat[r * t.numel() : (r + 1) * t.numel()].view_as(o))

            return self._vendor_launch("all_gather", [*input_tensors, *outputs], enqueue, outputs)
        return self._launch(
            "all_gather",
            input_tensors,
            outputs,
            lambda host: self._gloo.allgather(
                [[host(t) for t in group] for group in output_tensors],
                [host(t) for t in input_tensors],
                opts,
            ),
            agree=input_tensors,
        )

    def all_gather_single(
        self, output: torch.Tensor, input: torch.Tensor, opts: Any = None
    ) -> Work:
        opts = opts if opts is not None else dist.AllgatherOptions()
        if self._vendor_takes([input, output]):
            return self._vendor_launch(
                "all_gather_into_tensor",
                [input, output],
                lambda comm: torch.ops.torch_backend._coll_run(
                    comm, "all_gather", input, output, 0
                ),
                [output],
            )
        return self._launch(
            "all_gather_into_tensor",
            [input],
            [output],
            lambda host: self._gloo._allgather_base(host(output), host(input), opts),
            agree=[input, output],
        )

    def reduce_scatter_single(
        self, output: torch.Tensor, input: torch.Tensor, opts: Any = None
    ) -> Work:
        if self._vendor_takes([input, output], opts or dist.ReduceScatterOptions()):
            op = _vendor_op(opts or dist.ReduceScatterOptions())
            self._reduction(dist.ReduceScatterOptions, opts, [output])  # AVG's dtype check
            return self._vendor_launch(
                "reduce_scatter_tensor",
                [input, output],
                lambda comm: torch.ops.torch_backend._coll_run(
                    comm, "reduce_scatter", input, output, op
                ),
                [output],
            )
        options, finish = self._reduction(dist.ReduceScatterOptions, opts, [output])
        return self._launch(
            "reduce_scatter_tensor",
            [input],
            [output],
            lambda host: self._gloo._reduce_scatter_base(host(output), host(input), options),
            finish,
            agree=[input, output],
        )

    def all_gather_single_coalesced(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: Any = None
    ) -> Work:
        """``all_gather_into_tensor`` of several tensors (functional collectives, DeviceMesh
        and compiled graphs call this one)."""
        opts = opts if opts is not None else dist.AllgatherOptions()
        if self._vendor_takes([*inputs, *outputs]):

            def enqueue(comm: int) -> None:
                for output, input in zip(outputs, inputs, strict=True):
                    torch.ops.torch_backend._coll_run(comm, "all_gather", input, output, 0)

            return self._vendor_launch(
                "all_gather_into_tensor_coalesced", [*inputs, *outputs], enqueue, outputs
            )
        return self._launch(
            "all_gather_into_tensor_coalesced",
            inputs,
            outputs,
            lambda host: _AllWorks(
                [
                    self._gloo._allgather_base(host(o), host(i), opts)
                    for o, i in zip(outputs, inputs, strict=True)
                ]
            ),
            agree=[*inputs, *outputs],
        )

    def reduce_scatter_single_coalesced(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: Any = None
    ) -> Work:
        """``reduce_scatter_tensor`` of several tensors (functional collectives)."""
        if self._vendor_takes([*inputs, *outputs], opts or dist.ReduceScatterOptions()):
            op = _vendor_op(opts or dist.ReduceScatterOptions())
            self._reduction(dist.ReduceScatterOptions, opts, outputs)  # AVG's dtype check

            def enqueue(comm: int) -> None:
                for output, input in zip(outputs, inputs, strict=True):
                    torch.ops.torch_backend._coll_run(comm, "reduce_scatter", input, output, op)

            return self._vendor_launch(
                "reduce_scatter_tensor_coalesced", [*inputs, *outputs], enqueue, outputs
            )
        options, finish = self._reduction(dist.ReduceScatterOptions, opts, outputs)
        return self._launch(
            "reduce_scatter_tensor_coalesced",
            inputs,
            outputs,
            lambda host: _AllWorks(
                [
                    self._gloo._reduce_scatter_base(host(o), host(i), options)
                    for o, i in zip(outputs, inputs, strict=True)
                ]
            ),
            finish,
            agree=[*inputs, *outputs],
        )

    def reduce_scatter(
        self,
        output_tensors: list[torch.Tensor],
        input_tensors: list[list[torch.Tensor]],
        opts: Any = None,
    ) -> Work:
        options, finish = self._reduction(dist.ReduceScatterOptions, opts, output_tensors)
        inputs = [t for group in input_tensors for t in group]
        if self._vendor_takes([*inputs, *output_tensors], opts or dist.ReduceScatterOptions()):
            op = _vendor_op(opts or dist.ReduceScatterOptions())

            def enqueue(comm: int) -> None:
                for out, group in zip(output_tensors, input_tensors, strict=True):
                    flat = torch.cat([t.reshape(-1) for t in group])
                    torch.ops.torch_backend._coll_run(comm, "reduce_scatter", flat, out, op)

            return self._vendor_launch(
                "reduce_scatter", [*inputs, *output_tensors], enqueue, output_tensors
            )
        return self._launch(
            "reduce_scatter",
            inputs,
            output_tensors,
            lambda host: self._gloo.reduce_scatter(
                [host(t) for t in output_tensors],
                [[host(t) for t in group] for group in input_tensors],
                options,
            ),
            finish,
            agree=[*inputs, *output_tensors],
        )

    def all_to_all_single(
        self,
        output: torch.Tensor,
        input: torch.Tensor,
        output_split_sizes: list[int] | None,
        input_split_sizes: list[int] | None,
        opts: Any = None,
    ) -> Work:
        opts = opts if opts is not None else dist.AllToAllOptions()
        splits = [*(output_split_sizes or []), *(input_split_sizes or [])]
        if (
            self._vendor_takes([input, output])
            and len(set(splits)) <= 1
            and input.numel() == output.numel()
            and input.numel() % self.size() == 0
        ):
            return self._vendor_launch(
                "all_to_all_single",
                [input, output],
                lambda comm: torch.ops.torch_backend._coll_run(
                    comm, "all_to_all", input, output, 0
                ),
                [output],
            )
        return self._launch(
            "all_to_all_single",
            [input],
            [output],
            lambda host: self._gloo.alltoall_base(
                host(output), host(input), output_split_sizes or [], input_split_sizes or [], opts
            ),
            agree=[input, output],
            sizes=False,
        )

    def reduce(self, tensors: list[torch.Tensor], opts: Any = None) -> Work:
        """``dist.reduce``: the result on the root rank, over Gloo."""
        options, finish = self._reduction(dist.ReduceOptions, opts, tensors)
        if opts is not None:
            options.rootRank, options.rootTensor = opts.rootRank, opts.rootTensor
        root = self.rank() == options.rootRank
        return self._launch(
            "reduce",
            tensors,
            tensors if root else [],
            lambda host: self._gloo.reduce([host(t) for t in tensors], options),
            finish if root else None,
            agree=tensors,
        )

    def gather(
        self,
        output_tensors: list[list[torch.Tensor]],
        input_tensors: list[torch.Tensor],
        opts: Any = None,
    ) -> Work:
        """``dist.gather``: every rank's tensor on the root rank, over Gloo."""
        opts = opts if opts is not None else dist.GatherOptions()
        outputs = [t for group in output_tensors for t in group]
        return self._launch(
            "gather",
            input_tensors,
            outputs,
            lambda host: self._gloo.gather(
                [[host(t) for t in group] for group in output_tensors],
                [host(t) for t in input_tensors],
                opts,
            ),
            agree=input_tensors,
        )

    def scatter(
        self,
        output_tensors: list[torch.Tensor],
        input_tensors: list[list[torch.Tensor]],
        opts: Any = None,
    ) -> Work:
        """``dist.scatter``: the root rank's tensors, one to each rank, over Gloo."""
        opts = opts if opts is not None else dist.ScatterOptions()
        inputs = [t for group in input_tensors for t in group]
        return self._launch(
            "scatter",
            inputs,
            output_tensors,
            lambda host: self._gloo.scatter(
                [host(t) for t in output_tensors],
                [[host(t) for t in group] for group in input_tensors],
                opts,
            ),
            agree=output_tensors,
        )

    def barrier(self, opts: Any = None) -> Work:
        """Waits for every rank, after the collectives issued before it (and, for the devices
        this process used, the work queued on their current streams)."""
        opts = opts if opts is not None else dist.BarrierOptions()
        if _dm.is_initialized():
            _dm.synchronize()
        return self._launch("barrier", [], [], lambda host: self._gloo.barrier(opts))

    def send(self, tensors: list[torch.Tensor], dst: int, tag: int = 0) -> Work:
        return self._launch(
            "send", tensors, [], lambda host: self._gloo.send([host(t) for t in tensors], dst, tag)
        )

    def recv(self, tensors: list[torch.Tensor], src: int, tag: int = 0) -> Work:
        return self._launch(
            "recv", [], tensors, lambda host: self._gloo.recv([host(t) for t in tensors], src, tag)
        )

    def shutdown(self) -> None:
        self._engine.close()
        for comm in self._comms.values():
            torch.ops.torch_backend._coll_destroy(comm)
        self._comms.clear()


def _create(options: Any, backend_options: Any) -> ProcessGroupTB:
    """c10d's extended creator: the group's name is known here, and functional collectives
    (DeviceMesh, FSDP2, compiled collectives) find the group by it."""
    group = ProcessGroupTB(options.store, options.group_rank, options.group_size, options.timeout)
    group._name = options.group_id
    group._set_group_name(options.group_id)
    return group


def _register() -> None:
    """Called once by ``import torch_backend``: the backend for the device type (the default
    of ``init_process_group()`` when the device is the accelerator) and for CPU tensors."""
    if not dist.is_available() or BACKEND in dist.Backend.backend_list:
        return
    dist.Backend.register_backend(
        BACKEND, _create, extended_api=True, devices=[_dm._device_type, "cpu"]
    )
