"""The caching allocators: statistics, pools and rounding, block splitting and merging, reuse,
empty_cache, peaks, stream safety, the summary and snapshot, pinned host memory, out-of-memory
under a small device or a memory fraction, and devices kept apart."""

from __future__ import annotations

import json
import random
import threading

import pytest
import torch
from conftest import DEV, MODULE, run_python

import torch_backend

# Each bundled vendor's device-capacity variable, set to 64 MiB.
SMALL_DEVICE = {
    "TORCH_BACKEND_FAKE_MEMORY": "64M",
    "TORCH_BACKEND_EMU_MEMORY": "64M",
    "TB_ASCEND_STANDIN_MEMORY": "64M",  # npu over the AscendCL stand-in
    "TORCH_BACKEND_OPENCL_MEMORY_LIMIT": "64M",
}


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


def test_memory_of_each_device_is_separate(two_devices):
    base0, base1 = MODULE.memory_allocated(0), MODULE.memory_allocated(1)
    x = torch.empty(1 << 20, dtype=torch.uint8, device=f"{DEV}:1")
    assert MODULE.memory_allocated(1) - base1 == 1 << 20
    assert MODULE.memory_allocated(0) == base0
    del x


# ---------------------------------------------------------------------------------------------
# The caching allocator's structure, checked in fresh processes where exact addresses and
# figures are predictable.

KiB, MiB = 1 << 10, 1 << 20


def run_figures(code: str, **env: str) -> dict[str, int]:
    """Runs `code` in a fresh process (with `m` the device module, `empty(n)` a uint8 tensor
    of n bytes and `stat(key)` a memory_stats entry); returns what it reports with
    `out(name, value)`."""
    result = run_python(
        f"""
        import torch, torch_backend
        m = torch.{DEV}
        def empty(n, device="{DEV}"):
            return torch.empty(n, dtype=torch.uint8, device=device)
        def stat(key, device=None):
            return m.memory_stats(device)[key]
        def out(name, value):
            print("OUT", name, int(value))
        """
        + code,
        **env,
    )
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in result.stdout.splitlines() if line.startswith("OUT ")]
    return {name: int(value) for _, name, value in lines}


def test_pools_and_segment_sizes_follow_cuda():
    figures = run_figures(
        """
        a = empty(1000)                      # small pool: 512-byte blocks, 2 MiB segments
        out("a_alloc", stat("allocated_bytes.small_pool.current"))
        out("a_requested", stat("requested_bytes.small_pool.current"))
        out("small_reserved", stat("reserved_bytes.small_pool.current"))
        b = empty(1 << 20)                   # 1 MiB: still the small pool
        out("b_small_segments", stat("segment.small_pool.current"))
        c = empty((1 << 20) + 1)             # large pool: a 20 MiB segment below 10 MiB
        out("c_alloc", stat("allocated_bytes.large_pool.current"))
        out("c_reserved", stat("reserved_bytes.large_pool.current"))
        d = empty((24 << 20) + 1)            # from 10 MiB on: the request rounded to 2 MiB
        out("d_reserved", stat("reserved_bytes.large_pool.current"))
        out("segments", stat("segment.all.current"))
        out("device_allocs", stat("num_device_alloc"))
        """
    )
    assert figures["a_alloc"] == 1024
    assert figures["a_requested"] == 1000
    assert figures["small_reserved"] == 2 * MiB
    assert figures["b_small_segments"] == 1  # 1 MiB + 1 KiB fit the first small segment
    assert figures["c_alloc"] == MiB + 512
    assert figures["c_reserved"] == 20 * MiB
    assert figures["d_reserved"] == 20 * MiB + 26 * MiB
    assert figures["segments"] == figures["device_allocs"] == 3


def test_blocks_split_and_merge():
    figures = run_figures(
        """
        a = empty(256 << 10)
        b = empty(256 << 10)                 # the next block of the same segment
        out("b_after_a", b.data_ptr() - a.data_ptr())
        out("split_after_two", stat("inactive_split.small_pool.current"))
        out("split_bytes_after_two", stat("inactive_split_bytes.small_pool.current"))
        hole = a.data_ptr()
        del a                                # a hole before b: a second inactive split block
        out("split_after_hole", stat("inactive_split.small_pool.current"))
        c = empty(128 << 10)                 # best fit: the two halves of the hole
        d = empty(128 << 10)
        out("c_offset", c.data_ptr() - hole)
        out("d_offset", d.data_ptr() - hole)
        out("split_after_halves", stat("inactive_split.small_pool.current"))
        out("segments_in_use", stat("segment.all.current"))
        del b
        m.empty_cache()                      # c and d keep their segment
        out("segments_kept", stat("segment.all.current"))
        del c, d                             # everything merges back into one free block
        out("split_after_free", stat("inactive_split.small_pool.current"))
        out("split_bytes_after_free", stat("inactive_split_bytes.small_pool.current"))
        (segment,) = m.memory_snapshot()
        out("blocks", len(segment["blocks"]))
        out("block_size", segment["blocks"][0]["size"])
        out("inactive", segment["blocks"][0]["state"] == "inactive")
        out("reserved_before", stat("reserved_bytes.all.current"))
        m.empty_cache()                      # a whole free segment goes back to the vendor
        out("reserved_after", stat("reserved_bytes.all.current"))
        out("segments_after", stat("segment.all.current"))
        out("device_frees", stat("num_device_free"))
        """
    )
    assert figures["b_after_a"] == 256 * KiB
    assert figures["split_after_two"] == 1
    assert figures["split_bytes_after_two"] == 2 * MiB - 512 * KiB
    assert figures["split_after_hole"] == 2
    assert (figures["c_offset"], figures["d_offset"]) == (0, 128 * KiB)
    assert figures["split_after_halves"] == 1
    assert figures["segments_in_use"] == figures["segments_kept"] == 1
    assert figures["split_after_free"] == figures["split_bytes_after_free"] == 0
    assert figures["blocks"] == 1 and figures["block_size"] == 2 * MiB and figures["inactive"]
    assert figures["reserved_before"] == 2 * MiB
    assert figures["reserved_after"] == figures["segments_after"] == 0
    assert figures["device_frees"] == 1


def test_large_blocks_split_only_above_one_mebibyte():
    figures = run_figures(
        """
        a = empty(5 << 20)                   # a 20 MiB segment: 5 MiB used, 15 MiB free
        b = empty((14 << 20) + (512 << 10))  # 14.5 MiB: takes the whole 15 MiB block
        out("allocated", stat("allocated_bytes.large_pool.current"))
        out("segments", stat("segment.large_pool.current"))
        out("split", stat("inactive_split.large_pool.current"))
        """
    )
    assert figures["allocated"] == 20 * MiB
    assert figures["segments"] == 1
    assert figures["split"] == 0


def test_out_of_memory_frees_the_cache_retries_and_reports():
    result = run_python(
        f"""
        import torch, torch_backend
        m = torch.{DEV}
        def empty(n):
            return torch.empty(n, dtype=torch.uint8, device="{DEV}")
        assert m.mem_get_info()[1] == 64 << 20
        keep = [empty(16 << 20) for _ in range(2)]
        cached = empty(16 << 20)
        del cached                    # a whole free 16 MiB segment, cached
        r = empty(24 << 20)           # fits only once the cached segment is given back
        s = m.memory_stats()
        print("after retry:", s["num_alloc_retries"], s["num_ooms"], m.memory_reserved() >> 20)
        try:
            empty(16 << 20)           # 8 MiB left on the device
        except torch.OutOfMemoryError as e:
            print("OOM:", e)
        s = m.memory_stats()
        print("after OOM:", s["num_alloc_retries"], s["num_ooms"])
        x = empty(5 << 20)            # no room for 20 MiB: a segment of its own size instead
        s = m.memory_stats()
        print("fitted:", s["num_alloc_retries"], m.memory_reserved() >> 20)
        del keep, r, x
        y = empty(48 << 20)           # the process goes on
        print("after", m.memory_allocated() >> 20)
        """,
        **SMALL_DEVICE,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "after retry: 1 0 56" in out
    assert (
        f"OOM: {DEV}: out of memory on device 0: tried to allocate 16.00 MiB "
        "(a segment of 16.00 MiB). The vendor reports: "
    ) in out
    assert "Device 0 has a total capacity of 64.00 MiB of which 8.00 MiB is free." in out
    assert (
        "This process has 56.00 MiB reserved by the caching allocator: 56.00 MiB allocated by "
        "tensors and 0 B reserved but unallocated."
    ) in out
    assert "(allocation retries so far: 2)" in out
    assert f"torch.{DEV}.memory_summary()" in out
    assert "after OOM: 2 1" in out
    assert "fitted: 2 62" in out
    assert "after 48" in out


def test_memory_fraction_limits_the_process():
    result = run_python(
        f"""
        import torch, torch_backend
        m = torch.{DEV}
        def empty(n):
            return torch.empty(n, dtype=torch.uint8, device="{DEV}")
        m.set_per_process_memory_fraction(0.5)
        print("fraction", m.get_per_process_memory_fraction())
        a = empty(16 << 20)
        try:
            empty(20 << 20)
        except torch.OutOfMemoryError as e:
            print("OOM:", e)
        for bad in (1.5, -0.1):
            try:
                m.set_per_process_memory_fraction(bad)
            except RuntimeError as e:
                print("bad:", e)
        m.set_per_process_memory_fraction(1.0)
        b = empty(20 << 20)
        print("lifted", m.memory_allocated() >> 20)
        """,
        **SMALL_DEVICE,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "fraction 0.5" in out
    assert f"OOM: {DEV}: out of memory on device 0: tried to allocate 20.00 MiB" in out
    assert (
        "The limit set by set_per_process_memory_fraction(0.5) is 32.00 MiB on this device, of "
        "which 16.00 MiB is reserved."
    ) in out
    assert f"bad: {DEV}: the memory fraction must be within [0, 1], got 1.5" in out
    assert "got -0.1" in out
    assert "lifted 36" in out


def test_memory_fraction_needs_a_float():
    with pytest.raises(TypeError, match="must be `float`"):
        MODULE.set_per_process_memory_fraction(1)
    assert MODULE.get_per_process_memory_fraction() == 1.0


def test_devices_are_independent(two_devices):
    result = run_python(
        f"""
        import torch, torch_backend
        m = torch.{DEV}
        def empty(n, device):
            return torch.empty(n, dtype=torch.uint8, device=f"{DEV}:{{device}}")
        cached = empty(32 << 20, 0)
        del cached                     # device 0 caches 32 MiB
        keep = empty(40 << 20, 1)
        try:
            empty(40 << 20, 1)         # device 1 runs out: only its own cache is released
        except torch.OutOfMemoryError as e:
            print("OOM:", str(e).split(":")[1].strip())
        print("device 0:", m.memory_reserved(0) >> 20, m.memory_stats(0)["num_alloc_retries"])
        print("device 1:", m.memory_reserved(1) >> 20, m.memory_stats(1)["num_ooms"])
        m.reset_peak_memory_stats(1)
        print("peaks:", m.max_memory_reserved(0) >> 20, m.max_memory_reserved(1) >> 20)
        """,
        **SMALL_DEVICE,
    )
    assert result.returncode == 0, result.stderr
    assert "OOM: out of memory on device 1" in result.stdout
    assert "device 0: 32 0" in result.stdout
    assert "device 1: 40 1" in result.stdout
    assert "peaks: 32 40" in result.stdout


def test_two_devices_allocate_concurrently(two_devices):
    errors: list[BaseException] = []
    before = [MODULE.memory_allocated(i) for i in range(2)]

    def work(device: int) -> None:
        try:
            rng = random.Random(device)
            live = []
            for _ in range(2000):
                if live and rng.random() < 0.5:
                    live.pop(rng.randrange(len(live)))
                else:
                    live.append(torch.empty(rng.randrange(1, 1 << 16), device=f"{DEV}:{device}"))
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(d,)) for d in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert [MODULE.memory_allocated(i) for i in range(2)] == before
    for i in range(2):
        check_snapshot_matches_stats(i)


# ---------------------------------------------------------------------------------------------
# Invariants under a random workload, in this process (other tests' cached blocks included).


def check_snapshot_matches_stats(device: int) -> None:
    """The snapshot's segments are cut into contiguous blocks, free neighbours are merged,
    and the statistics agree with what the snapshot shows."""
    stats = MODULE.memory_stats(device)
    segments = MODULE.memory_snapshot(device)
    totals = {"reserved": 0, "allocated": 0, "active": 0, "split": 0, "split_bytes": 0}
    for segment in segments:
        address = segment["address"]
        previous = None
        for block in segment["blocks"]:
            assert block["address"] == address, "blocks must tile their segment"
            address += block["size"]
            assert block["size"] % 512 == 0
            if previous == "inactive":
                assert block["state"] != "inactive", "free neighbours must have merged"
            previous = block["state"]
            if block["state"] == "inactive" and len(segment["blocks"]) > 1:
                totals["split"] += 1
                totals["split_bytes"] += block["size"]
        assert address == segment["address"] + segment["total_size"]
        totals["reserved"] += segment["total_size"]
        totals["allocated"] += segment["allocated_size"]
        totals["active"] += segment["active_size"]
    assert stats["reserved_bytes.all.current"] == totals["reserved"]
    assert stats["allocated_bytes.all.current"] == totals["allocated"]
    assert stats["active_bytes.all.current"] == totals["active"]
    assert stats["inactive_split.all.current"] == totals["split"]
    assert stats["inactive_split_bytes.all.current"] == totals["split_bytes"]
    assert stats["segment.all.current"] == len(segments)
    for key in ("reserved_bytes", "allocated_bytes", "segment", "inactive_split"):
        pools = stats[f"{key}.small_pool.current"] + stats[f"{key}.large_pool.current"]
        assert stats[f"{key}.all.current"] == pools


def test_random_workload_keeps_the_invariants():
    rng = random.Random(0)
    streams = [MODULE.current_stream(), MODULE.Stream()]
    live: list[torch.Tensor] = []
    for step in range(3000):
        if live and rng.random() < 0.45:
            live.pop(rng.randrange(len(live)))
        else:
            size = rng.choice([rng.randrange(1, 4096), rng.randrange(1, 1 << 20), 3 << 20])
            with MODULE.stream(rng.choice(streams)):
                live.append(torch.empty(size, dtype=torch.uint8, device=DEV))
        if step % 500 == 0:
            check_snapshot_matches_stats(0)
    check_snapshot_matches_stats(0)
    live.clear()
    check_snapshot_matches_stats(0)
    MODULE.empty_cache()
    check_snapshot_matches_stats(0)
    for segment in MODULE.memory_snapshot(0):
        # What empty_cache keeps holds a live block: whole free segments went back.
        assert any(block["state"] != "inactive" for block in segment["blocks"])


def block_states() -> dict[int, str]:
    return {
        block["address"]: block["state"]
        for segment in MODULE.memory_snapshot()
        for block in segment["blocks"]
    }


def test_record_stream_defers_reuse_until_the_stream_is_done():
    side = MODULE.Stream()
    x = torch.ones(1 << 20, device=DEV)
    pointer = x.data_ptr()
    side.wait_stream(MODULE.current_stream())
    with MODULE.stream(side):
        y = x
        for _ in range(20):
            y = y * 1.0001  # keeps the side stream busy reading x (on asynchronous vendors)
    x.record_stream(side)
    del x
    # While the side stream may still read it, the block waits for the side stream's event
    # (once the stream is idle, the next allocation that looks at the event frees it).
    assert block_states()[pointer] == "active_pending_free" or side.query()
    z = torch.empty(1 << 20, device=DEV)
    # Reusing x's block is allowed only once the side stream has finished with it.
    assert z.data_ptr() != pointer or side.query()
    MODULE.synchronize()
    del y, z
    w = torch.empty(1 << 20, device=DEV)  # every event has completed: nothing waits any more
    assert "active_pending_free" not in block_states().values()
    del w


# ---------------------------------------------------------------------------------------------
# Statistics keys, summary and snapshot.

CUDA_STAT_ARRAYS = [
    "allocation",
    "segment",
    "active",
    "inactive_split",
    "allocated_bytes",
    "reserved_bytes",
    "active_bytes",
    "inactive_split_bytes",
    "requested_bytes",
]
CUDA_COUNTERS = [
    "num_alloc_retries",
    "num_ooms",
    "num_sync_all_streams",
    "num_device_alloc",
    "num_device_free",
    "max_split_size",
]


def test_stats_have_the_keys_torch_cuda_reports():
    stats = MODULE.memory_stats()
    for array in CUDA_STAT_ARRAYS:
        for pool in ("all", "small_pool", "large_pool"):
            for field in ("current", "peak", "allocated", "freed"):
                assert f"{array}.{pool}.{field}" in stats
    for counter in CUDA_COUNTERS:
        assert counter in stats
    assert stats["max_split_size"] == -1  # no limit: any block may be split, as CUDA's default
    assert stats == torch.accelerator.memory_stats()


def test_summary_is_a_table_of_the_stats():
    x = torch.empty(3 << 20, dtype=torch.uint8, device=DEV)
    stats = MODULE.memory_stats()
    summary = MODULE.memory_summary()
    lines = summary.splitlines()
    assert f"PyTorch {DEV} memory summary, device ID 0" in summary
    assert f"{DEV} OOMs: {stats['num_ooms']}" in summary
    assert all(line.startswith("|") and line.endswith("|") for line in lines)
    assert len({len(line) for line in lines}) == 1
    (allocations,) = [line for line in lines if line.startswith("| Allocations ")]
    assert allocations.split("|")[2].split() == [str(stats["allocation.all.current"])]
    assert "from large pool" in summary and "from small pool" in summary
    for name in ("Allocated memory", "Device reserved memory", "Non-releasable memory"):
        assert name in summary
    short = MODULE.memory_summary(abbreviated=True)
    assert "from large pool" not in short and "Allocated memory" in short
    del x


def test_snapshot_shows_each_block():
    x = torch.empty(3000, dtype=torch.uint8, device=DEV)
    (segment,) = [
        s
        for s in MODULE.memory_snapshot()
        if s["address"] <= x.data_ptr() < s["address"] + s["total_size"]
    ]
    assert segment["segment_type"] == "small" and segment["total_size"] == 2 * MiB
    (block,) = [b for b in segment["blocks"] if b["address"] == x.data_ptr()]
    assert block == {
        "address": x.data_ptr(),
        "size": 3072,
        "requested_size": 3000,
        "state": "active_allocated",
    }
    del x


def test_allocator_timer_leaves_nothing_allocated_and_rejects_bad_arguments():
    """make bench's allocator row: a C++ loop of allocate + free on either side."""
    timer = torch.ops.torch_backend._time_allocator
    before = MODULE.memory_allocated()
    assert timer("device", 256, 100) > 0
    assert timer("cpu", 256, 100) > 0
    assert MODULE.memory_allocated() == before
    with pytest.raises(RuntimeError, match="side must be 'device' or 'cpu', not 'gpu'"):
        timer("gpu", 256, 100)
    with pytest.raises(RuntimeError, match="nbytes and iterations must be positive"):
        timer("device", 0, 100)
    with pytest.raises(RuntimeError, match="nbytes and iterations must be positive"):
        timer("cpu", 256, -1)


# ---------------------------------------------------------------------------------------------
# A block used on several streams whose free cannot be tracked by events.

# Runs under the faulty shim over this process's vendor; prints one JSON line.  x is used on
# an idle stream and then on a busy one (record_stream, in that order); its free records an
# event on each, and the shim fails the calls TB_TEST_CALLS names from the second such call on:
# the busy stream's event.  y, computed from x on the busy stream, must come out right whatever
# the default stream does with the memory next.
RECORD_FAILURE = r"""
import ctypes, json, os
import torch, torch_backend
DEV = torch_backend.vendor_info()["device_type"]
M = getattr(torch, DEV)
lib = ctypes.CDLL(torch_backend.vendor_info()["library"])
lib.tb_faulty_configure.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_long, ctypes.c_char_p]
lib.tb_faulty_fired.restype = ctypes.c_long
N = 1 << 20
idle, busy = M.Stream(), M.Stream()
x = torch.full((N,), 1.0, device=DEV)
busy.wait_stream(M.current_stream())
with M.stream(busy):
    a = torch.full((384, 384), 1.0 / 384, device=DEV)
    for _ in range(6):
        a = a @ a
    y = x * 2 + a[0, 0] * 0
x.record_stream(idle)
x.record_stream(busy)
pointer = x.data_ptr()
lib.tb_faulty_configure(os.environ["TB_TEST_CALLS"].encode(), 1, -1, b"TB_ERROR_INTERNAL")
del x
fired = lib.tb_faulty_fired()
lib.tb_faulty_configure(b"", 0, 0, b"TB_ERROR_INTERNAL")
z = torch.zeros(N, device=DEV)  # on the default stream: takes x's block if it is free
M.current_stream().wait_stream(busy)
wrong = int((y.cpu() != 2).sum())
print(json.dumps({"wrong": wrong, "reused": z.data_ptr() == pointer, "fired": fired}))
"""


def run_record_failure(calls: str) -> tuple[dict, str]:
    wrapped = torch_backend.vendor_info()["library"]
    result = run_python(
        RECORD_FAILURE,
        TB_TEST_CALLS=calls,
        TORCH_BACKEND_VENDOR="faulty",
        TORCH_BACKEND_FAULTY_VENDOR=wrapped,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.splitlines()[-1]), result.stderr


def test_a_free_whose_event_fails_waits_for_the_stream():
    seen, _ = run_record_failure("event.record")
    assert seen["fired"] >= 1, seen  # the busy stream's event failed
    assert seen["wrong"] == 0, seen


def test_a_free_that_cannot_wait_keeps_the_block_out_of_the_cache():
    seen, stderr = run_record_failure("event.record,stream.synchronize")
    assert seen["fired"] >= 2, seen  # the event, then the wait for the stream
    assert seen["wrong"] == 0 and not seen["reused"], seen
    assert "cannot be made safe to reuse and is kept out of the cache" in stderr, stderr
