"""Several devices: placement, cross-device copies, per-device streams, generators and stats."""

from __future__ import annotations

import pytest
import torch
from conftest import DEV, MODULE

pytestmark = pytest.mark.usefixtures("two_devices")


def test_placement():
    a = torch.ones(3, device=f"{DEV}:0")
    b = torch.ones(3, device=f"{DEV}:1")
    assert a.device.index == 0 and b.device.index == 1
    assert (b + b).device.index == 1


def test_cross_device_copies():
    x = torch.randn(1 << 16)
    a = x.to(f"{DEV}:0")
    b = a.to(f"{DEV}:1")
    assert b.device.index == 1
    c = torch.empty_like(b).copy_(b).to(f"{DEV}:0")
    torch.testing.assert_close(c.cpu(), x)
    strided = torch.empty(256, 256, device=f"{DEV}:1").t()
    strided.copy_(a.view(256, 256))
    torch.testing.assert_close(strided.cpu(), x.view(256, 256))


def test_copy_on_non_default_streams():
    x = torch.randn(1 << 18)
    s0, s1 = MODULE.Stream(device=0), MODULE.Stream(device=1)
    with MODULE.stream(s0):
        a = x.to(f"{DEV}:0") * 2
        with MODULE.stream(s1):
            # As on CUDA: the copy waits for both devices' current streams (s0 and s1).
            b = a.to(f"{DEV}:1")
    s1.synchronize()
    torch.testing.assert_close(b.cpu(), x * 2)
    a.record_stream(s1)


def test_cross_device_wait_stream():
    x = torch.randn(1 << 18)
    s0, s1 = MODULE.Stream(device=0), MODULE.Stream(device=1)
    with MODULE.stream(s0):
        a = x.to(f"{DEV}:0") * 2
    s1.wait_stream(s0)  # without it the copy below could read `a` before s0 wrote it
    with MODULE.stream(s1):
        b = a.to(f"{DEV}:1")
    s1.synchronize()
    torch.testing.assert_close(b.cpu(), x * 2)
    a.record_stream(s1)


def test_operations_need_tensors_on_one_device():
    with pytest.raises(RuntimeError):
        torch.ones(2, device=f"{DEV}:0") + torch.ones(2, device=f"{DEV}:1")


def test_per_device_synchronize_and_properties():
    for index in range(MODULE.device_count()):
        MODULE.synchronize(index)
        assert MODULE.get_device_properties(index).name
