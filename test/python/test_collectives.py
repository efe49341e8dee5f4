"""The vendor's collectives library (vendor.h, ABI 2.2, TB_EXTENSION_COLLECTIVES) as
torch_backend exposes it to its process group: communicators behind checked handles and
collectives on the current stream, here with one rank (the two-rank behaviour is
test_distributed.py's), and every argument error named."""

from __future__ import annotations

import pytest
import torch
from conftest import DEV

ops = torch.ops.torch_backend
HAS_LIBRARY = bool(ops._coll_dtypes())
needs_library = pytest.mark.skipif(not HAS_LIBRARY, reason="the vendor has no collectives")


def test_a_vendor_without_a_library_says_so():
    if HAS_LIBRARY:
        pytest.skip("the vendor has a collectives library")
    with pytest.raises(NotImplementedError, match="has no collectives library"):
        ops._coll_unique_id()


@pytest.fixture
def comm():
    handle = ops._coll_init(0, 1, 0, ops._coll_unique_id(), 5000)
    yield handle
    ops._coll_destroy(handle)


@needs_library
def test_one_rank_collectives_are_identities_on_the_current_stream(comm):
    d = torch.device(DEV, 0)
    x = torch.arange(10.0, device=d)
    out = torch.empty_like(x)
    side = torch.Stream(device=d)
    # The side stream waits for x's values on the default stream.  (Inside the stream context,
    # current_stream(0) is the side stream itself: waiting for it there waited for nothing, and
    # on a loaded machine the collectives read x before arange had written it.)
    side.wait_stream(torch.accelerator.current_stream(0))
    with torch.accelerator.device_index(0), getattr(torch, DEV).stream(side):
        ops._coll_run(comm, "all_reduce", x, out, 0)
        gathered = torch.empty(10, device=d)
        ops._coll_run(comm, "all_gather", x, gathered, 0)
        scattered = torch.empty(10, device=d)
        ops._coll_run(comm, "reduce_scatter", x, scattered, 4)  # avg over one rank
        moved = torch.empty(10, device=d)
        ops._coll_run(comm, "all_to_all", x, moved, 0)
        copied = torch.empty(10, device=d)
        ops._coll_run(comm, "broadcast", x, copied, 0)
    side.synchronize()
    for t in (out, gathered, scattered, moved, copied):
        assert torch.equal(t.cpu(), torch.arange(10.0))


@needs_library
@pytest.mark.parametrize(
    "call, message",
    [
        (lambda c, x: ops._coll_run(c + 1000, "all_reduce", x, x, 0), "is not a live communicator"),
        (lambda c, x: ops._coll_run(c, "all_reduce", x.cpu(), x, 0), "tensors must be contiguous"),
        (lambda c, x: ops._coll_run(c, "all_reduce", x[::2], x[::2], 0), "non-contiguous"),
        (
            lambda c, x: ops._coll_run(c, "all_reduce", x, x.double(), 0),
            "send is Float, recv Double",
        ),
        (lambda c, x: ops._coll_run(c, "all_gather", x, x[:3], 0), "expected 8 and 8"),
        (lambda c, x: ops._coll_run(c, "all_reduce", x, x, 77), "unknown reduction 77"),
        (lambda c, x: ops._coll_run(c, "broadcast", x, x, 3), "root 3 is not a rank of 1"),
        (lambda c, x: ops._coll_run(c, "all_reduce", x.int(), x.int(), 4), "AVG of int32"),
        (lambda c, x: ops._coll_run(c, "gossip", x, x, 0), "unknown collective 'gossip'"),
        (
            lambda c, x: ops._coll_run(c, "all_reduce", x.cfloat(), x.cfloat(), 0),
            "do not take ComplexFloat",
        ),
    ],
)
def test_bad_arguments_are_named(comm, call, message):
    x = torch.ones(8, device=torch.device(DEV, 0))
    with pytest.raises((RuntimeError, NotImplementedError), match=message):
        call(comm, x)
    torch.accelerator.synchronize(0)  # nothing was enqueued: the device is not faulted


@needs_library
def test_init_and_destroy_errors_name_the_call():
    with pytest.raises(RuntimeError, match="the id must be 128 contiguous uint8 CPU bytes"):
        ops._coll_init(0, 1, 0, torch.zeros(5, dtype=torch.uint8), 1000)
    with pytest.raises(
        RuntimeError, match=r"collectives.comm_init\(device 0, rank 0 of 1\) failed"
    ):
        ops._coll_init(0, 1, 0, torch.zeros(128, dtype=torch.uint8), 1000)
    with pytest.raises(RuntimeError, match="rank 2 of 2"):
        ops._coll_init(0, 2, 2, ops._coll_unique_id(), 1000)
    handle = ops._coll_init(0, 1, 0, ops._coll_unique_id(), 1000)
    ops._coll_destroy(handle)
    with pytest.raises(RuntimeError, match="is not a live communicator"):
        ops._coll_destroy(handle)


@needs_library
def test_a_rank_that_never_joins_times_out_with_a_message():
    with pytest.raises(RuntimeError, match="waited more than 300 ms for the other ranks"):
        ops._coll_init(0, 2, 0, ops._coll_unique_id(), 300)
