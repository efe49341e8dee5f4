"""Copies keep CUDA's promises: a copy with ``non_blocking=False`` is complete when it returns,
in both directions, whatever the streams are doing; a ``non_blocking`` copy into or out of
pinned memory keeps its pinned block from being handed out again until the copy has run, even
when the tensor is dropped at once."""

from __future__ import annotations

import torch
from conftest import DEV, MODULE

N = 1 << 20


def busy(stream: torch.Stream | None = None) -> torch.Tensor:
    """Queues about a hundred milliseconds of work on `stream` (default: the current one) and
    returns its result, so that work queued after it runs late."""
    with MODULE.stream(stream or MODULE.current_stream()):
        a = torch.full((384, 384), 1.0 / 384, device=DEV)
        for _ in range(6):
            a = a @ a
    return a


def test_a_blocking_host_to_device_copy_is_complete_when_it_returns():
    # The default stream is busy; the copy queues behind that work, and returns only when it
    # has landed: another stream then reads the data without any synchronization.
    side = MODULE.Stream()
    for pinned in (False, True):
        for trial in range(3):
            source = torch.full((N,), float(trial + 1))
            if pinned:
                source = source.pin_memory()
            slow = busy()
            x = source.to(DEV)
            with MODULE.stream(side):
                got = (x * 1).cpu()
            assert torch.equal(got, source), (pinned, trial)
            x.record_stream(side)
            del slow


def test_a_blocking_copy_into_an_existing_tensor_is_complete():
    side = MODULE.Stream()
    x = torch.zeros(N, device=DEV)
    slow = busy()
    x.copy_(torch.full((N,), 5.0))
    with MODULE.stream(side):
        total = x.sum().item()
    x.record_stream(side)
    assert total == 5.0 * N
    del slow


def test_a_pinned_destination_of_a_queued_copy_is_not_reused():
    # dst's block would be handed to `reused` while the copy into it is still queued behind
    # the busy stream, and the copy would then overwrite `reused`'s values.
    source = torch.full((N,), 1.0, device=DEV)
    for _ in range(3):
        slow = busy()
        dst = torch.empty(N).pin_memory()
        dst.copy_(source, non_blocking=True)
        del dst
        reused = torch.empty(N).pin_memory()
        reused.fill_(2.0)
        MODULE.synchronize()
        assert int((reused != 2.0).sum()) == 0
        del slow


def test_a_dropped_non_blocking_result_does_not_corrupt_the_next_one():
    # x.to("cpu", non_blocking=True) lands in pinned memory; dropping the result at once must
    # not free its block under the queued copy.
    source = torch.full((N,), 3.0, device=DEV)
    for _ in range(3):
        slow = busy()
        source.to("cpu", non_blocking=True)  # dropped
        reused = torch.empty(N).pin_memory()
        reused.fill_(4.0)
        MODULE.synchronize()
        assert int((reused != 4.0).sum()) == 0
        del slow


def test_non_blocking_copies_are_ordered_on_the_stream():
    # The asynchronous paths stay asynchronous and in order: a round trip through pinned
    # memory sees every value once the stream is synchronized.
    values = torch.arange(N, dtype=torch.float32)
    pinned = values.pin_memory()
    x = pinned.to(DEV, non_blocking=True)
    back = torch.empty(N).pin_memory()
    back.copy_(x * 2, non_blocking=True)
    MODULE.current_stream().synchronize()
    assert torch.equal(back, values * 2)
