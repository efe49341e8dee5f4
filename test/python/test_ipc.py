"""Device tensors through torch.multiprocessing (torch_backend/multiprocessing.py,
csrc/runtime/Ipc.cpp, vendor.h "Device memory shared between processes"): a consumer process
receives the producer's device memory itself, not a copy; the producer keeps it until both are
done; the producer's queued work is complete before the consumer reads; a received tensor
cannot be sent on; a vendor without TB_EXTENSION_IPC refuses with its name."""

from __future__ import annotations

import contextlib
import gc
import multiprocessing.forkserver
import multiprocessing.reduction
import multiprocessing.resource_tracker
import os
import pickle

import ipc_peer
import pytest
import torch
import torch.multiprocessing as mp
from conftest import DEV, MODULE

import torch_backend
from torch_backend.multiprocessing import ipc_collect

SUPPORTED = bool(torch.ops.torch_backend._ipc_supported())
needs_ipc = pytest.mark.skipif(not SUPPORTED, reason=f"vendor of {DEV} has no TB_EXTENSION_IPC")
CTX = mp.get_context("spawn")


def dumps(obj: object) -> bytes:
    return bytes(multiprocessing.reduction.ForkingPickler.dumps(obj))


class Peer:
    def __init__(self) -> None:
        self.requests, self.replies = CTX.Queue(), CTX.Queue()
        self.process = CTX.Process(target=ipc_peer.serve, args=(self.requests, self.replies))
        self.process.start()

    def ask(self, command: str, key: str = "", payload: object = None) -> object:
        self.requests.put((command, key, payload))
        reply = self.replies.get(timeout=120)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def close(self) -> None:
        self.requests.put(("exit", "", None))
        self.process.join(60)
        assert self.process.exitcode == 0


@pytest.fixture(autouse=True)
def collect():
    """What a test sent is kept until the consumer lets go and this process collects: before
    conftest's leak check."""
    yield
    ipc_collect()


@pytest.fixture(scope="module")
def peer():
    p = Peer()
    yield p
    p.close()


@needs_ipc
def test_a_tensor_is_shared_not_copied(peer):
    x = torch.arange(1000, dtype=torch.float32, device=DEV)
    [seen], consumer_allocated = peer.ask("hold", "x", x)
    assert seen["device"] == str(x.device) and seen["dtype"] == torch.float32
    assert torch.equal(seen["values"], torch.arange(1000, dtype=torch.float32))
    assert consumer_allocated == 0  # the consumer's allocator gave it nothing: no copy
    peer.ask("add", "x", 1.0)  # written there, seen here
    assert torch.equal(x.cpu(), torch.arange(1, 1001, dtype=torch.float32))
    x.mul_(2)
    MODULE.synchronize()
    [seen], _ = peer.ask("hold", "x2", x)
    assert torch.equal(seen["values"], 2 * torch.arange(1, 1001, dtype=torch.float32))
    peer.ask("drop", "x")
    peer.ask("drop", "x2")


@needs_ipc
def test_views_keep_their_place_and_share_one_storage(peer):
    base = torch.randn(10, 10, device=DEV)
    views = (base[2:5, ::2], base.t(), base[7])
    seen, _ = peer.ask("hold", "views", views)
    for view, there in zip(views, seen, strict=True):
        assert there["shape"] == tuple(view.shape)
        assert there["stride"] == view.stride()
        assert there["offset"] == view.storage_offset()
        assert torch.equal(there["values"], view.cpu())
    assert len({there["storage"] for there in seen}) == 1  # one storage there as here
    peer.ask("drop", "views")


@needs_ipc
def test_memory_is_freed_when_both_are_done(peer):
    ipc_collect()
    baseline = MODULE.memory_allocated()
    x = torch.full((1 << 18,), 7.0, device=DEV)
    peer.ask("hold", "big", x)
    del x
    gc.collect()
    # The producer's tensor is gone; the consumer still uses the memory: it stays.
    assert ipc_collect() == 1
    assert MODULE.memory_allocated() >= baseline + 4 * (1 << 18)
    peer.ask("add", "big", 1.0)  # still the memory it was given
    peer.ask("drop", "big")
    assert ipc_collect() == 0
    assert MODULE.memory_allocated() == baseline


@needs_ipc
@pytest.mark.skipif(MODULE.device_count() < 2, reason="needs two devices")
def test_a_tensor_of_the_second_device_stays_there(peer):
    x = torch.arange(6, dtype=torch.float32, device=f"{DEV}:1")
    [seen], _ = peer.ask("hold", "d1", x)
    assert seen["device"] == f"{DEV}:1"
    assert torch.equal(seen["values"], torch.arange(6, dtype=torch.float32))
    peer.ask("add", "d1", 1.0)
    assert torch.equal(x.cpu(), torch.arange(1, 7, dtype=torch.float32))
    peer.ask("drop", "d1")


@needs_ipc
def test_queued_work_is_complete_before_the_consumer_reads(peer):
    a = torch.randn(384, 384, device=DEV)
    y = a
    for _ in range(6):  # queued, not yet run, when the tensor is sent
        y = torch.tanh(y @ a)
    y.fill_(3.0)
    [seen], _ = peer.ask("hold", "y", y)
    assert torch.equal(seen["values"], torch.full((384, 384), 3.0))
    peer.ask("drop", "y")


@needs_ipc
def test_parameters_and_flags_cross(peer):
    p = torch.nn.Parameter(torch.ones(3, device=DEV))
    i = torch.arange(4, device=DEV)
    empty = torch.empty(0, device=DEV)
    seen, _ = peer.ask("hold", "p", (p, i, empty))
    assert seen[0]["type"] == "Parameter" and seen[0]["requires_grad"]
    assert seen[1]["dtype"] == torch.int64 and torch.equal(seen[1]["values"], torch.arange(4))
    assert seen[2]["shape"] == (0,)
    peer.ask("drop", "p")


@needs_ipc
def test_a_received_tensor_cannot_be_sent_on(peer):
    peer.ask("hold", "r", torch.ones(4, device=DEV))
    with pytest.raises(RuntimeError, match="received from another process cannot be sent on"):
        peer.ask("send_on", "r")
    peer.ask("drop", "r")


@needs_ipc
def test_a_pool_takes_device_tensors():
    x = torch.arange(10, dtype=torch.float32, device=DEV)
    with CTX.Pool(1) as pool:
        assert pool.apply(ipc_peer.total, (x,)) == 45.0
        # A worker drops a task's arguments only after sending its result: terminating the
        # pool (what leaving `with` does) could kill it still holding x, and a consumer killed
        # holding shared memory leaks it in the producer, as on CUDA.  Let it finish.
        pool.close()
        pool.join()
    assert ipc_collect() == 0


# Shared memory a process creates on its first export and keeps for its life: the IPC
# reference-count blocks (csrc/runtime/Ipc.cpp) and the AscendCL stand-in's shareable device
# memory.  Not leaks; a test that runs first would otherwise count them as such.
PROCESS_LIFETIME = ("/memfd:torch_backend-ipc-refs", "/memfd:ascendcl-standin-device-")


def open_descriptors() -> int:
    """The process's open descriptors, less those it keeps for its life (PROCESS_LIFETIME)."""
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # the descriptor listdir itself used
            continue
        count += not target.startswith(PROCESS_LIFETIME)
    return count


@needs_ipc
@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_process_arguments_share_the_tensor(method):
    # pytorch/examples' mnist_hogwild: a model whose parameters are passed to mp.Process workers
    # that update them in place (share_memory() is a no-op for device tensors, as for CUDA's).
    # Pickled as a starting process's arguments, a descriptor is only numbered for the child to
    # inherit: it must stay open until the child starts, then close with its Popen object.
    model = torch.nn.Linear(4, 2).to(DEV)
    assert model.share_memory() is model
    assert model.weight.is_shared() and model.weight.data.share_memory_() is not None
    before = model.weight.detach().cpu()
    context = mp.get_context(method)
    if method == "forkserver":  # its server, and the resource tracker, hold descriptors for good
        multiprocessing.forkserver.ensure_running()
    multiprocessing.resource_tracker.ensure_running()
    descriptors = open_descriptors()
    workers = [
        context.Process(target=ipc_peer.add_in_place, args=(model, row, row + 1.0, 3))
        for row in range(2)  # a row each: hogwild's unsynchronized updates, without a race here
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [worker.exitcode for worker in workers] == [0, 0]
    for row in range(2):
        for _ in range(3):
            before[row] += row + 1.0
    assert torch.equal(model.weight.detach().cpu(), before)
    del workers, worker
    gc.collect()
    assert ipc_collect() == 0
    assert open_descriptors() == descriptors


@needs_ipc
@pytest.mark.parametrize("route", ["SimpleQueue", "Pipe"])
def test_a_simple_queue_and_a_pipe_share_the_tensor(route):
    x = torch.zeros(4, device=DEV)
    if route == "Pipe":
        ours, theirs = CTX.Pipe()
        worker = CTX.Process(target=ipc_peer.add_what_arrives, args=(theirs, theirs))
        send, receive = ours.send, ours.recv
    else:
        to_worker, from_worker = CTX.SimpleQueue(), CTX.SimpleQueue()
        worker = CTX.Process(target=ipc_peer.add_what_arrives, args=(to_worker, from_worker))
        send, receive = to_worker.put, from_worker.get
    worker.start()
    send(x)
    assert receive() == "done"
    worker.join(60)
    assert worker.exitcode == 0
    assert torch.equal(x.cpu(), torch.ones(4))
    assert ipc_collect() == 0


@contextlib.contextmanager
def shared(t: torch.Tensor):
    """What a producer sends for `t`'s storage (the runtime's own op), its descriptors closed
    afterwards as the reducer closes them once pickled."""
    message = list(torch.ops.torch_backend._ipc_share(t.view(torch.uint8)))
    try:
        yield message
    finally:
        if message[1] >= 0:
            os.close(message[1])
        os.close(message[6])


def open_shared(message: list) -> torch.Tensor:
    """What a consumer does with a message (producer pid 0: this process)."""
    return torch.ops.torch_backend._ipc_open(*message, 0)


@needs_ipc
def test_an_import_in_the_same_process_aliases_the_memory():
    # The handle round trip without a second process: what a consumer does, done here.
    x = torch.arange(8, dtype=torch.float32, device=DEV)
    with shared(x) as message:
        alias = open_shared(message)
        alias.view(torch.float32).add_(1)
        assert torch.equal(x.cpu(), torch.arange(1, 9, dtype=torch.float32))
        with pytest.raises(RuntimeError, match="cannot be sent on again"):
            dumps(alias)
        del alias
        gc.collect()
    del x
    assert ipc_collect() == 0


@needs_ipc
def test_a_damaged_handle_is_refused_with_the_vendors_reason():
    # A consumer that cannot open what it was sent gives the producer's slot back: nothing
    # stays held for it.  Message fields: device, fd, handle, allocation, offset, bytes, ...
    x = torch.ones(8, device=DEV)
    damaged = [
        (2, "00" * 64, rf"{DEV}: ipc.import_memory\(.*\) failed with"),  # the handle
        (4, None, "does not fit"),  # the offset: past the allocation
    ]
    for field, value, expected in damaged:
        with shared(x) as message:
            message[field] = value if value is not None else message[3]
            with pytest.raises(RuntimeError, match=expected):
                open_shared(message)
    del x
    # A slot is also held until the producer's work queued before sending is done (a host
    # function on its stream marks it ready), and the offset check fails before the consumer
    # waits for that: the stream's worker may not have run it yet.
    MODULE.synchronize()
    assert ipc_collect() == 0


def test_what_cannot_be_sent_is_refused_here():
    leaf = torch.ones(3, device=DEV, requires_grad=True)
    with pytest.raises(RuntimeError, match="Cowardly refusing"):
        dumps(leaf * 2)
    with pytest.raises(RuntimeError, match=f"Cannot pickle {DEV} storage"):
        dumps(leaf.untyped_storage())
    # CPU tensors keep PyTorch's own reducers (shared memory, rebuilt by torch's functions).
    cpu = pickle.loads(dumps(torch.ones(2)))
    assert torch.equal(cpu, torch.ones(2))
    if not SUPPORTED:
        with pytest.raises(NotImplementedError, match=f"{DEV}: vendor .* TB_EXTENSION_IPC"):
            dumps(torch.ones(3, device=DEV))
    assert torch_backend.multiprocessing is not None
