"""Stress: many threads allocating, copying and computing on several streams, ordered only by
events and record_stream behind a slow producer, get exactly the CPU's results; and a long
training run keeps device memory and the process's resident memory flat."""

from __future__ import annotations

import sys
import threading

import torch
from conftest import DEV, MODULE, REPO

sys.path.insert(0, str(REPO / "examples"))
import models

THREADS = 8
ROUNDS = 12


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def worker(index: int, errors: list[str]) -> None:
    """Producer on one stream (a slow matmul), consumer on another that waits on an event; the
    producer's output is freed while the consumer may still read it (record_stream)."""
    try:
        generator = torch.Generator().manual_seed(index)
        producer, consumer = MODULE.Stream(), MODULE.Stream()
        for round_ in range(ROUNDS):
            # small integers: every product and sum is exact in float32, on any device
            a = torch.randint(-3, 4, (384, 384), generator=generator).float()
            b = torch.randint(-3, 4, (384, 8), generator=generator).float()
            expected = (a @ a @ b).sum(0) + round_
            with MODULE.stream(producer):
                a_dev = a.to(DEV, non_blocking=True)
                slow = a_dev @ a_dev  # the slow producer
                ready = MODULE.Event()
                ready.record(producer)
            with MODULE.stream(consumer):
                consumer.wait_event(ready)
                b_dev = b.to(DEV)
                result = (slow @ b_dev).sum(0) + round_
                slow.record_stream(consumer)
            del slow, a_dev  # freed while the consumer may still be reading
            MODULE.current_stream().wait_stream(consumer)  # as with CUDA's streams
            got = result.cpu()
            if not torch.equal(got, expected):
                errors.append(f"thread {index} round {round_}: {got} != {expected}")
    except Exception as error:  # reported by the test
        errors.append(f"thread {index}: {type(error).__name__}: {error}")


def test_threads_streams_and_events():
    baseline = MODULE.memory_allocated()
    errors: list[str] = []
    threads = [threading.Thread(target=worker, args=(i, errors)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, "\n".join(errors[:10])
    MODULE.synchronize()
    assert MODULE.memory_allocated() == baseline


def test_long_training_keeps_memory_flat():
    network = models.build("encoder", DEV, dropout=0.1)
    optimizer = torch.optim.AdamW(network.parameters(), lr=1e-3)
    batches = [(x.to(DEV), y.to(DEV)) for x, y in models.batches("encoder", 4)]
    device_memory, resident = [], []
    for step in range(500):
        x, y = batches[step % len(batches)]
        loss = models.train_step(network, optimizer, x, y)
        if step % 50 == 49:
            loss.item()
            device_memory.append(MODULE.memory_allocated())
            resident.append(resident_bytes())
    assert torch.isfinite(loss).item()
    # after the first measurement (caches and optimizer state warm), nothing grows
    assert len(set(device_memory[1:])) == 1, device_memory
    assert resident[-1] - resident[1] < 8 << 20, [r >> 20 for r in resident]
