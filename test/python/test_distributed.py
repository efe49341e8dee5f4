"""torch.distributed on the device (torch_backend.distributed): the tbccl process group that
init_process_group() picks for the device, its collectives on device and CPU tensors, async work
ordered after the caller's stream, clear errors for ranks that disagree or die, and DDP under
torchrun matching one process on the full batch.  Every test runs two ranks as two processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap

from conftest import DEV, REPO

PRELUDE = """
import datetime, json, os, sys
import torch, torch_backend
import torch.distributed as dist
rank = int(sys.argv[1])
dist.init_process_group(init_method="file://" + sys.argv[2], rank=rank, world_size=2,
                        timeout=datetime.timedelta(seconds=float(sys.argv[3])))
DEV = torch_backend.vendor_info()["device_type"]
index = rank % torch.accelerator.device_count()
torch.accelerator.set_device_index(index)
d = torch.device(DEV, index)
out = {}
def report():
    print("RESULT " + json.dumps(out), flush=True)
"""


def world(body: str, timeout_s: float = 30.0) -> list[dict]:
    """Runs ``body`` on ranks 0 and 1 (after PRELUDE) and returns each rank's ``out``."""
    code = textwrap.dedent(PRELUDE) + textwrap.dedent(body) + "\nreport()\n"
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", code, str(rank), store, str(timeout_s)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for rank in (0, 1)
        ]
        results = []
        for rank, proc in enumerate(procs):
            stdout, stderr = proc.communicate(timeout=300)
            assert proc.returncode == 0, f"rank {rank} failed:\n{stdout}\n{stderr}"
            lines = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
            assert lines, f"rank {rank} reported nothing:\n{stdout}\n{stderr}"
            results.append(json.loads(lines[-1][len("RESULT ") :]))
    return results


def test_default_backend_and_collectives_on_device_tensors():
    results = world("""
    pg = dist.group.WORLD
    out["backend"] = pg.getBackendName()
    def value(t): return t.cpu().tolist()
    for name, op in [("sum", dist.ReduceOp.SUM), ("avg", dist.ReduceOp.AVG),
                     ("max", dist.ReduceOp.MAX), ("min", dist.ReduceOp.MIN),
                     ("product", dist.ReduceOp.PRODUCT)]:
        t = torch.tensor([rank + 1.0, 2.0 * rank - 1.0], device=d)
        dist.all_reduce(t, op=op)
        out[name] = value(t)
        assert t.device == d
    t = torch.full((3,), float(rank), device=d)
    dist.broadcast(t, src=1)
    out["broadcast"] = value(t)
    parts = [torch.empty(2, device=d) for _ in range(2)]
    dist.all_gather(parts, torch.full((2,), rank + 0.5, device=d))
    out["all_gather"] = [value(p) for p in parts]
    flat = torch.empty(4, dtype=torch.int64, device=d)
    dist.all_gather_into_tensor(flat, torch.tensor([rank, 10 + rank], device=d))
    out["all_gather_into_tensor"] = value(flat)
    part = torch.empty(2, device=d)
    dist.reduce_scatter_tensor(part, torch.arange(4.0, device=d) * (rank + 1))
    out["reduce_scatter_tensor"] = value(part)
    moved = torch.empty(4, device=d)
    dist.all_to_all_single(moved, torch.arange(4.0, device=d) + 10 * rank)
    out["all_to_all_single"] = value(moved)
    if rank == 0:
        dist.send(torch.tensor([7.0, 8.0], device=d), dst=1)
    else:
        got = torch.zeros(2, device=d)
        dist.recv(got, src=0)
        out["recv"] = value(got)
    cpu = torch.tensor([rank + 1.0])
    dist.all_reduce(cpu)  # CPU tensors: the same group, through Gloo
    out["cpu"] = cpu.tolist()
    dist.barrier()
    dist.destroy_process_group()
    """)
    for rank, out in enumerate(results):
        assert out["backend"] == "tbccl"
        assert out["sum"] == [3.0, 0.0]
        assert out["avg"] == [1.5, 0.0]
        assert out["max"] == [2.0, 1.0]
        assert out["min"] == [1.0, -1.0]
        assert out["product"] == [2.0, -1.0]
        assert out["broadcast"] == [1.0, 1.0, 1.0]
        assert out["all_gather"] == [[0.5, 0.5], [1.5, 1.5]]
        assert out["all_gather_into_tensor"] == [0, 10, 1, 11]
        assert out["reduce_scatter_tensor"] == ([0.0, 3.0] if rank == 0 else [6.0, 9.0])
        assert out["all_to_all_single"] == (
            [0.0, 1.0, 10.0, 11.0] if rank == 0 else [2.0, 3.0, 12.0, 13.0]
        )
        assert out["cpu"] == [3.0]
    assert results[1]["recv"] == [7.0, 8.0]


def test_async_work_is_ordered_after_the_callers_stream():
    """The collective reads what the stream computed before the call (a product still queued
    when all_reduce returns), and wait() leaves the result in place for later work."""
    results = world("""
    torch.manual_seed(rank)
    a = torch.randn(256, 256, device=d)
    expected_local = (a.cpu() @ a.cpu()).sum().item()
    works, tensors = [], []
    for i in range(4):
        t = (a @ a).sum().reshape(1) * (i + 1)   # queued on the current stream
        works.append(dist.all_reduce(t, async_op=True))
        tensors.append(t)
    for w in works:
        assert w.wait()
        assert w.is_completed()
    after = [(t * 2).cpu().item() for t in tensors]
    out["local"] = expected_local
    out["after"] = after
    fut = dist.all_reduce(torch.ones(3, device=d), async_op=True).get_future()
    out["future"] = fut.wait()[0].cpu().tolist()
    """)
    total = results[0]["local"] + results[1]["local"]
    for out in results:
        for i, value in enumerate(out["after"]):
            assert abs(value - 2 * (i + 1) * total) <= 1e-3 * abs(total) + 1e-2
        assert out["future"] == [2.0, 2.0, 2.0]


def test_ranks_that_disagree_get_an_error_naming_both():
    results = world("""
    for name, t in [("size", torch.ones(4 + rank, device=d)),
                    ("dtype", torch.ones(4, device=d, dtype=[torch.float32, torch.float64][rank]))]:
        try:
            dist.all_reduce(t)
            out[name] = "no error"
        except dist.DistBackendError as error:
            out[name] = str(error)
    t = torch.ones(2, device=d)
    dist.all_reduce(t)  # the group still works
    out["after"] = t.cpu().tolist()
    """)
    for out in results:
        assert "the ranks called all_reduce with tensors that do not match" in out["size"]
        assert "4 elements" in out["size"] and "5 elements" in out["size"]
        assert "torch.float32" in out["dtype"] and "torch.float64" in out["dtype"]
        assert out["after"] == [2.0, 2.0]


def test_a_dead_peer_is_an_error_within_the_timeout():
    results = world(
        """
    import time
    if rank == 1:
        report()
        os._exit(0)
    start = time.monotonic()
    try:
        dist.all_reduce(torch.ones(4, device=d))
        out["error"] = None
    except dist.DistBackendError as error:
        out["error"] = str(error)
    out["seconds"] = time.monotonic() - start
    """,
        timeout_s=10.0,
    )
    error = results[0]["error"]
    assert error is not None and "tbccl: all_reduce failed on rank 0 of 2" in error
    assert results[0]["seconds"] < 30.0


def test_ddp_under_torchrun_matches_one_process():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "2",
            str(REPO / "examples" / "ddp.py"),
            "--steps",
            "6",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"rank 0 on {DEV}:0" in result.stdout and "backend 'tbccl'" in result.stdout
    assert ": match" in result.stdout, result.stdout
