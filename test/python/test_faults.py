"""Device faults: asynchronous work that fails leaves the device faulted, and every later
synchronize, copy to the host and new work raises that failure -- naming the vendor, the device,
the work and its message -- until ``torch.<device>.reset_device()``; nothing ever returns the
garbage the failed work left behind.  Vendor-agnostic: the fault is injected through the vendor's
``stream.inject_fault`` (vendor.h, "Device faults")."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
import torch
from conftest import DEV, MODULE

import torch_backend

MESSAGE = "injected by test_faults 9731"


@contextlib.contextmanager
def faulted(device: int = 0) -> Iterator[None]:
    """The device faulted inside the block, and healthy again (reset) after it."""
    torch.ops.torch_backend._inject_fault(device, MESSAGE)
    try:
        yield
    finally:
        MODULE.reset_device(device)


def raises_fault() -> pytest.RaisesExc:
    return pytest.raises(torch.AcceleratorError, match=rf"(?s)TB_ERROR_DEVICE_FAULT.*{MESSAGE}")


def test_the_fault_is_sticky():
    x = torch.arange(6.0, device=DEV)
    with faulted():
        for _ in range(3):  # every report, not only the first
            with raises_fault():
                MODULE.synchronize()
        with raises_fault():
            MODULE.current_stream().synchronize()
        with raises_fault():
            MODULE.Stream().synchronize()  # another stream of the device
        with raises_fault():
            x.cpu()
        with raises_fault():
            x.sum().item()
        with raises_fault():
            torch.ones(3, device=DEV)  # new work is refused
        event = MODULE.Event()
        event.record()  # recording keeps working (the caching allocator relies on it)
        with raises_fault():
            event.synchronize()
        with raises_fault():
            event.query()
        with raises_fault():
            MODULE.synchronize()  # still
    torch.testing.assert_close(x.cpu(), torch.arange(6.0))  # x predates the fault


def test_the_error_names_vendor_device_and_work():
    with faulted(), pytest.raises(torch.AcceleratorError) as error:
        MODULE.synchronize()
    text = str(error.value)
    assert isinstance(error.value, RuntimeError)
    assert text.startswith(f"{DEV}: ")
    assert "device 0 is faulted" in text and "(in inject_fault)" in text
    assert f"torch.{DEV}.reset_device()" in text


def test_memory_can_be_released_on_a_faulted_device():
    baseline = MODULE.memory_allocated()
    with faulted():
        tensors = [torch.empty(1000, device=DEV) for _ in range(3)]
        # a block used on a second stream: its free records an event there
        side = MODULE.Stream()
        tensors[0].record_stream(side)
        del tensors
        assert MODULE.memory_allocated() == baseline
    MODULE.synchronize()


def test_reset_lets_the_process_go_on():
    with faulted():
        with raises_fault():
            MODULE.synchronize()
    MODULE.synchronize()
    y = torch.ones(4, device=DEV) * 3
    assert y.sum().item() == 12.0
    MODULE.reset_device()  # on a healthy device: nothing to do


def test_other_devices_are_not_affected(two_devices):
    with faulted(0):
        x = torch.arange(4.0, device=f"{DEV}:1") + 1
        torch.testing.assert_close(x.cpu(), torch.arange(4.0) + 1)
        MODULE.synchronize(1)
        with raises_fault():
            MODULE.synchronize(0)


def test_pinned_memory_of_a_faulted_device_does_not_fail_another_devices_copies(two_devices):
    """A pinned block that device 0's copy used is freed with an event on device 0; once
    device 0 faults, that event cannot be queried.  Pinned allocations for device 1 (which
    query the cache's events) must keep working, and the block stays out of the cache."""
    n = 1 << 16
    source = torch.arange(float(n), device=f"{DEV}:0")
    staging = torch.empty(n).pin_memory()
    staging.copy_(source, non_blocking=True)  # the block's event: device 0's stream
    del staging
    with faulted(0):
        pinned = torch.empty(n).pin_memory()  # queries the cache's events
        pinned.copy_(torch.full((n,), 3.0, device=f"{DEV}:1"), non_blocking=True)
        MODULE.synchronize(1)
        torch.testing.assert_close(pinned, torch.full((n,), 3.0))
        with raises_fault():
            MODULE.synchronize(0)
    MODULE.synchronize(0)


def test_an_out_of_range_index_never_returns_garbage():
    """The issue's scenario: an index out of range found while the kernel runs (on a vendor
    with a native index_select) or at the call (through the CPU fallback)."""
    x = torch.arange(8.0, device=DEV).view(4, 2)
    idx = torch.tensor([0, 7], device=DEV)
    try:
        y = torch.index_select(x, 0, idx)
    except (IndexError, RuntimeError) as error:  # found at the call: nothing was computed
        assert "out of" in str(error)
        return
    try:
        with pytest.raises(torch.AcceleratorError, match="index 7 is out of bounds"):
            y.cpu()
        with pytest.raises(torch.AcceleratorError, match="index_select"):
            MODULE.synchronize()
    finally:
        MODULE.reset_device()
    assert torch_backend.op_coverage(["index_select.out"])["index_select.out"] == "native"
