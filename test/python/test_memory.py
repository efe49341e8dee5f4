"""The caching allocators: statistics, block reuse, empty_cache, peaks, stream safety, pinned
host memory, and out-of-memory under a small device."""

from __future__ import annotations

import torch
from conftest import DEV, MODULE, run_python

# Each bundled vendor's device-capacity variable, set to 64 MiB.
SMALL_DEVICE = {"TORCH_BACKEND_FAKE_MEMORY": "64M", "TORCH_BACKEND_EMU_MEMORY": "64M"}


def test_allocated_and_reserved_track_tensors():
    base_allocated = MODULE.memory_allocated()
    x = torch.empty(1 << 20, dtype=torch.uint8, device=DEV)
    assert MODULE.memory_allocated() - base_allocated == 1 << 20
    assert MODULE.memory_reserved() >= MODULE.memory_allocated()
    stats = MODULE.memory_stats()
    assert stats["allocated_bytes.all.current"] == MODULE.memory_allocated()
    assert stats["allocation.all.current"] >= 1
    assert stats["active_bytes.all.current"] >= 1 << 20
    del x
    assert MODULE.memory_allocated() == base_allocated


def test_freed_blocks_are_reused():
    MODULE.empty_cache()
    x = torch.empty(3 << 20, dtype=torch.uint8, device=DEV)
    pointer = x.data_ptr()
    reserved = MODULE.memory_reserved()
    del x
    assert MODULE.memory_reserved() == reserved  # kept in the cache
    y = torch.empty(3 << 20, dtype=torch.uint8, device=DEV)
    assert y.data_ptr() == pointer
    assert MODULE.memory_reserved() == reserved
    del y
    MODULE.empty_cache()
    assert MODULE.memory_reserved() < reserved


def test_size_classes_round_requests():
    MODULE.empty_cache()
    x = torch.empty(1000, dtype=torch.uint8, device=DEV)
    stats = MODULE.memory_stats()
    assert stats["allocated_bytes.all.current"] % 512 == 0
    assert stats["requested_bytes.all.current"] >= 1000
    del x


def test_peaks_and_reset():
    MODULE.reset_peak_memory_stats()
    base = MODULE.memory_allocated()
    x = torch.empty(4 << 20, dtype=torch.uint8, device=DEV)
    del x
    assert MODULE.max_memory_allocated() >= base + (4 << 20)
    MODULE.reset_peak_memory_stats()
    assert MODULE.max_memory_allocated() == MODULE.memory_allocated()
    assert MODULE.max_memory_reserved() >= MODULE.memory_reserved()
    MODULE.reset_accumulated_memory_stats()
    assert MODULE.memory_stats()["allocation.all.allocated"] == 0


def test_record_stream_delays_reuse():
    side = MODULE.Stream()
    x = torch.empty(2 << 20, dtype=torch.uint8, device=DEV)
    pointer = x.data_ptr()
    side.wait_stream(MODULE.current_stream())
    with MODULE.stream(side):
        y = x.float()  # work on the side stream reads x
    x.record_stream(side)
    del x
    side.synchronize()
    z = torch.empty(2 << 20, dtype=torch.uint8, device=DEV)  # events have completed: reusable
    assert z.data_ptr() == pointer
    del y, z


def test_per_stream_pools():
    MODULE.empty_cache()
    side = MODULE.Stream()
    with MODULE.stream(side):
        x = torch.empty(1 << 20, dtype=torch.uint8, device=DEV)
    pointer = x.data_ptr()
    del x
    y = torch.empty(1 << 20, dtype=torch.uint8, device=DEV)  # other stream: not that block
    assert y.data_ptr() != pointer
    del y


def test_pinned_memory():
    x = torch.randn(1000)
    pinned = x.pin_memory()
    assert pinned.is_pinned() and not x.is_pinned()
    on_device = pinned.to(DEV, non_blocking=True)
    back = torch.empty(1000).pin_memory()
    back.copy_(on_device, non_blocking=True)
    MODULE.synchronize()
    assert torch.equal(back, x)
    assert torch.empty(10, pin_memory=True).is_pinned()
    del on_device


def test_non_blocking_copy_from_pageable_memory_is_safe():
    x = torch.ones(1 << 16)
    on_device = x.to(DEV, non_blocking=True)
    x.fill_(5)  # the copy must already own its bytes
    assert torch.equal(on_device.cpu(), torch.ones(1 << 16))


def test_out_of_memory_is_an_exception_with_context():
    result = run_python(
        f"""
        import torch, torch_backend
        m = torch.{DEV}
        assert m.mem_get_info()[1] == 64 << 20
        keep = [torch.empty(16 << 20, dtype=torch.uint8, device="{DEV}") for _ in range(3)]
        cached = torch.empty(8 << 20, dtype=torch.uint8, device="{DEV}")
        del cached  # 8 MiB cached, to be freed and retried
        try:
            torch.empty(24 << 20, dtype=torch.uint8, device="{DEV}")
        except torch.OutOfMemoryError as e:
            print("OOM:", e)
        stats = m.memory_stats()
        print("retries", stats["num_alloc_retries"], "ooms", stats["num_ooms"])
        del keep
        x = torch.empty(48 << 20, dtype=torch.uint8, device="{DEV}")  # usable again
        print("after", m.memory_allocated())
        """,
        **SMALL_DEVICE,
    )
    assert result.returncode == 0, result.stderr
    assert f"OOM: {DEV}: out of memory on device 0: tried to allocate 24.00 MiB" in result.stdout
    assert "The vendor reports:" in result.stdout
    assert "48.00 MiB allocated by tensors" in result.stdout
    assert "retries 1 ooms 1" in result.stdout
    assert f"after {48 << 20}" in result.stdout


def test_memory_of_each_device_is_separate(two_devices):
    base0, base1 = MODULE.memory_allocated(0), MODULE.memory_allocated(1)
    x = torch.empty(1 << 20, dtype=torch.uint8, device=f"{DEV}:1")
    assert MODULE.memory_allocated(1) - base1 == 1 << 20
    assert MODULE.memory_allocated(0) == base0
    del x
