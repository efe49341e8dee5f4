"""The device guard: current device per thread, device context managers, torch.accelerator's
device index, and restoration on exceptions."""

from __future__ import annotations

import threading

import pytest
import torch
from conftest import DEV, MODULE


def test_device_context_restores(two_devices):
    assert MODULE.current_device() == 0
    with MODULE.device(1):
        assert MODULE.current_device() == 1
        assert torch.empty(1, device=DEV).device.index == 1
        with MODULE.device(f"{DEV}:0"):
            assert MODULE.current_device() == 0
        assert MODULE.current_device() == 1
    assert MODULE.current_device() == 0


def test_guard_restores_after_exception(two_devices):
    with pytest.raises(ValueError), MODULE.device(1):
        raise ValueError("boom")
    assert MODULE.current_device() == 0


def test_set_device(two_devices):
    try:
        MODULE.set_device(1)
        assert MODULE.current_device() == 1
        assert torch.accelerator.current_device_index() == 1
        assert torch.ones(1, device=DEV).device == torch.device(DEV, 1)
    finally:
        MODULE.set_device(0)


def test_accelerator_device_index(two_devices):
    with torch.accelerator.device_index(1):
        assert MODULE.current_device() == 1
    assert MODULE.current_device() == 0


def test_current_device_is_per_thread(two_devices):
    seen = []

    def worker():
        seen.append(MODULE.current_device())
        MODULE.set_device(1)
        seen.append(MODULE.current_device())

    MODULE.set_device(0)
    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [0, 1]
    assert MODULE.current_device() == 0


def test_device_of_tensor(two_devices):
    x = torch.ones(1, device=f"{DEV}:1")
    with MODULE.device_of(x):
        assert MODULE.current_device() == 1
    assert MODULE.current_device() == 0


def test_invalid_device_index_is_an_error():
    count = MODULE.device_count()
    with pytest.raises(torch.AcceleratorError, match=rf"{DEV}: invalid device index {count}"):
        MODULE.set_device(count)
    with pytest.raises(torch.AcceleratorError, match="invalid device index"):
        torch.ones(1, device=f"{DEV}:{count}")
    assert MODULE.current_device() == 0
