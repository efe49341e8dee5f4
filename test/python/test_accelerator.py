"""torch.accelerator, PyTorch's device-generic API, driven by this device."""

from __future__ import annotations

import pytest
import torch
from conftest import DEV, MODULE
from torch.testing._internal.common_dtype import get_all_dtypes


def test_current_accelerator():
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator() == torch.device(DEV)
    assert torch.accelerator.device_count() == MODULE.device_count()


def test_device_index_and_synchronize():
    assert torch.accelerator.current_device_index() == 0
    x = torch.ones(1 << 16, device=DEV)
    torch.accelerator.synchronize()
    torch.accelerator.synchronize(0)
    del x


def test_streams():
    stream = torch.Stream(device=DEV)
    torch.accelerator.set_stream(stream)
    try:
        assert torch.accelerator.current_stream() == stream
        assert MODULE.current_stream() == stream
    finally:
        torch.accelerator.set_stream(MODULE.default_stream())


def test_memory():
    base = torch.accelerator.memory_allocated()
    x = torch.empty(1 << 20, dtype=torch.uint8, device=DEV)
    assert torch.accelerator.memory_allocated() == base + (1 << 20)
    assert torch.accelerator.max_memory_allocated() >= base + (1 << 20)
    assert torch.accelerator.memory_reserved() >= torch.accelerator.memory_allocated()
    assert torch.accelerator.memory_stats()["allocated_bytes.all.current"] == base + (1 << 20)
    free, total = torch.accelerator.get_memory_info()
    assert 0 <= free <= total
    del x
    torch.accelerator.empty_cache()
    torch.accelerator.reset_peak_memory_stats()
    assert torch.accelerator.max_memory_allocated() == torch.accelerator.memory_allocated()


def test_set_device_index(two_devices):
    torch.accelerator.set_device_index(1)
    try:
        assert MODULE.current_device() == 1
    finally:
        torch.accelerator.set_device_index(0)


def test_device_capability_lists_every_dtype_a_device_tensor_holds():
    # Every dtype but the quantized ones (PyTorch's PrivateUse1 reference test expects all of
    # get_all_dtypes), whatever the vendor's kernels cover: the CPU fallback computes the rest.
    supported = set(torch.accelerator.get_device_capability(f"{DEV}:0")["supported_dtypes"])
    expected = set(get_all_dtypes(include_complex32=True)) | {
        torch.uint16,
        torch.uint32,
        torch.uint64,
        torch.float8_e4m3fn,
        torch.float8_e5m2,
    }
    assert expected <= supported, expected - supported
    assert not {torch.qint8, torch.quint8, torch.qint32} & supported
    # and they do hold and compute
    c = torch.tensor([1 + 2j, 3 - 1j])
    torch.testing.assert_close((c.to(DEV) * 2 + 1j).cpu(), c * 2 + 1j)
    u = torch.tensor([1, 60000], dtype=torch.uint16)
    assert torch.equal(u.to(DEV).cpu(), u) and (u.to(DEV) == 60000).cpu().tolist() == [False, True]
    f8 = torch.tensor([0.5, -2.0]).to(torch.float8_e4m3fn)
    assert torch.equal(f8.to(DEV).float().cpu(), f8.float())


def test_device_capability_properties_and_memory_info():
    props = MODULE.get_device_properties(0)
    assert props.name and props.total_memory > 0
    free, total = torch.accelerator.get_memory_info(0)
    assert total == props.total_memory and 0 <= free <= total
    assert MODULE.mem_get_info(0)[1] == total


@pytest.mark.skipif(
    not hasattr(torch.accelerator, "random"), reason="torch.accelerator.random: torch 2.14"
)
def test_accelerator_random_is_the_devices_generator():
    MODULE.manual_seed(31)
    torch.rand(5, device=DEV)
    assert torch.accelerator.random.initial_seed() == MODULE.initial_seed() == 31
    assert torch.equal(torch.accelerator.random.get_rng_state(), MODULE.get_rng_state())
    assert len(torch.accelerator.random.get_rng_state_all()) == MODULE.device_count()
