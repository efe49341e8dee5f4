"""all_reduce bus bandwidth: the device's process group (tbccl) against Gloo on CPU tensors,
two ranks on this machine, measured side by side in alternating trials.

    python benchmarks/allreduce.py          # starts its two ranks, prints one JSON line

For two ranks an all_reduce's bus bandwidth is its payload over its time (NCCL's busbw,
2(n-1)/n times the algorithm bandwidth).  Three groups run side by side: tbccl on device
tensors with the vendor's collectives library when it has one ("device"), tbccl on device
tensors over Gloo (``TORCH_BACKEND_DIST_ENGINE=gloo``, "device_gloo"), and the reference,
``dist.new_group(backend="gloo")`` on CPU tensors of the same size ("cpu").
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

SIZES = {"1 MiB": 1 << 20, "64 MiB": 64 << 20}


def rank_main(rank: int, store: str, quick: bool) -> None:
    import torch
    import torch.distributed as dist

    import torch_backend

    dist.init_process_group(init_method="file://" + store, rank=rank, world_size=2)
    gloo = dist.new_group(backend="gloo")
    os.environ["TORCH_BACKEND_DIST_ENGINE"] = "gloo"
    staged = dist.new_group(backend="tbccl")
    del os.environ["TORCH_BACKEND_DIST_ENGINE"]
    device_type = torch_backend.vendor_info()["device_type"]
    index = rank % torch.accelerator.device_count()
    torch.accelerator.set_device_index(index)
    device = torch.device(device_type, index)
    results = {}
    for label, size in SIZES.items():
        calls = (3 if quick else 10) if size > (8 << 20) else (10 if quick else 50)
        trials = 3 if quick else 7
        on_device = torch.ones(size // 4, device=device)
        on_cpu = torch.ones(size // 4)

        def device_run(t: torch.Tensor = on_device) -> None:
            dist.all_reduce(t)

        def staged_run(t: torch.Tensor = on_device) -> None:
            dist.all_reduce(t, group=staged)

        def cpu_run(t: torch.Tensor = on_cpu) -> None:
            dist.all_reduce(t, group=gloo)

        def timed(fn: Callable[[], None], n: int) -> float:
            dist.barrier(group=gloo)
            start = time.perf_counter()
            for _ in range(n):
                fn()
            torch.accelerator.synchronize(index)
            return (time.perf_counter() - start) / n

        runs = {"device": device_run, "device_gloo": staged_run, "cpu": cpu_run}
        for fn in runs.values():
            timed(fn, 2)
        samples: dict[str, list[float]] = {side: [] for side in runs}
        for trial in range(trials):
            order = list(runs.items())
            for side, fn in order if trial % 2 == 0 else order[::-1]:
                samples[side].append(timed(fn, calls))
        results[label] = {
            side: size / statistics.median(times) / 1e9 for side, times in samples.items()
        }
    if rank == 0:
        print("RESULT " + json.dumps(results), flush=True)
    dist.destroy_process_group()


def measure(quick: bool = False) -> dict[str, dict[str, float]]:
    """Starts the two ranks; returns {size label: {"device": GB/s, "cpu": GB/s}}."""
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        args = [sys.executable, __file__, "--rank"]
        extra = ["--quick"] if quick else []
        procs = [
            subprocess.Popen(
                [*args, str(r), store, *extra],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for r in (0, 1)
        ]
        outputs = [p.communicate(timeout=600) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        if proc.returncode != 0:
            raise RuntimeError(f"allreduce rank failed:\n{out}\n{err}")
    line = next(x for x in outputs[0][0].splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--rank":
        rank_main(int(sys.argv[2]), sys.argv[3], "--quick" in sys.argv)
    else:
        print(json.dumps(measure("--quick" in sys.argv)))
