"""torch.accelerator, PyTorch's device-generic API, driven by this device."""

from __future__ import annotations

import torch
from conftest import DEV, MODULE


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


def test_device_capability_properties_and_memory_info():
    capability = torch.accelerator.get_device_capability(f"{DEV}:0")
    # what the vendor reports (tb_device_properties::dtypes): the bundled vendors hold every type
    assert {torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.bool} <= set(
        capability["supported_dtypes"]
    )
    props = MODULE.get_device_properties(0)
    assert props.name and props.total_memory > 0
    free, total = torch.accelerator.get_memory_info(0)
    assert total == props.total_memory and 0 <= free <= total
    assert MODULE.mem_get_info(0)[1] == total
