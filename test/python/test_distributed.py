"""torch.distributed on the device (torch_backend.distributed): the tbccl process group that
init_process_group() picks for the device, its collectives on device and CPU tensors, async work
ordered after the caller's stream, clear errors for ranks that disagree or die, functional
collectives, DeviceMesh and FSDP2, and DDP under torchrun matching one process on the full
batch.  Every test runs two ranks as two processes, through each engine the vendor has: its own
collectives library (vendor.h, TB_EXTENSION_COLLECTIVES) when it has one, and Gloo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
import torch
from conftest import DEV, REPO

# "vendor": the vendor's collectives library; "gloo": TORCH_BACKEND_DIST_ENGINE=gloo.
ENGINES = (["vendor"] if torch.ops.torch_backend._coll_dtypes() else []) + ["gloo"]

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


def world(body: str, timeout_s: float = 30.0, engine: str = "gloo") -> list[dict]:
    """Runs ``body`` on ranks 0 and 1 (after PRELUDE) with ``engine`` and returns each rank's
    ``out``."""
    code = textwrap.dedent(PRELUDE) + textwrap.dedent(body) + "\nreport()\n"
    env = dict(os.environ, TORCH_BACKEND_DIST_ENGINE="gloo" if engine == "gloo" else "auto")
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "store")
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", code, str(rank), store, str(timeout_s)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
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


@pytest.mark.parametrize("engine", ENGINES)
def test_default_backend_and_collectives_on_device_tensors(engine):
    results = world(
        """
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
    # Several chunks of any staging buffer; bfloat16; the list forms; uneven splits (Gloo's).
    n = 3_000_000
    big = torch.arange(n, dtype=torch.float32, device=d) % 1000 + rank
    dist.all_reduce(big)
    out["big"] = bool(torch.equal(big.cpu(), (torch.arange(n, dtype=torch.float32) % 1000) * 2 + 1))
    half = torch.tensor([1.5, -2.0], dtype=torch.bfloat16, device=d) * (rank + 1)
    dist.all_reduce(half)
    out["bfloat16"] = value(half.float())
    outs = torch.empty(2, device=d)
    dist.reduce_scatter(outs, [torch.full((2,), 1.0 + rank, device=d),
                               torch.full((2,), 10.0 * (rank + 1), device=d)])
    out["reduce_scatter"] = value(outs)
    uneven = torch.empty(3 if rank == 0 else 5, device=d)
    dist.all_to_all_single(uneven, torch.arange(4.0, device=d) + 10 * rank,
                           output_split_sizes=[[1, 2], [3, 2]][rank],
                           input_split_sizes=[[1, 3], [2, 2]][rank])
    out["uneven"] = value(uneven)
    out["communicators"] = len(pg._comms)
    if rank == 0:
        dist.send(torch.tensor([7.0, 8.0], device=d), dst=1)
    else:
        got = torch.zeros(2, device=d)
        dist.recv(got, src=0)
        out["recv"] = value(got)
    cpu = torch.tensor([rank + 1.0])
    dist.all_reduce(cpu)  # CPU tensors: the same group, through Gloo
    out["cpu"] = cpu.tolist()
    r = torch.full((2,), rank + 1.0, device=d)
    dist.reduce(r, dst=1)
    out["reduce"] = value(r)
    gathered = [torch.empty(2, device=d) for _ in range(2)] if rank == 0 else None
    dist.gather(torch.full((2,), 5.0 + rank, device=d), gathered, dst=0)
    out["gather"] = [value(t) for t in gathered] if rank == 0 else None
    piece = torch.empty(2, device=d)
    dist.scatter(piece, [torch.full((2,), 7.0 + i, device=d) for i in range(2)] if rank == 1
                 else None, src=1)
    out["scatter"] = value(piece)
    dist.barrier()
    dist.destroy_process_group()
    """,
        engine=engine,
    )
    for rank, out in enumerate(results):
        assert out["backend"] == "tbccl"
        assert (out["communicators"] > 0) == (engine == "vendor")
        assert out["big"]
        assert out["bfloat16"] == [4.5, -6.0]
        assert out["reduce_scatter"] == ([3.0, 3.0] if rank == 0 else [30.0, 30.0])
        assert out["uneven"] == ([0.0, 10.0, 11.0] if rank == 0 else [1.0, 2.0, 3.0, 12.0, 13.0])
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
        assert out["scatter"] == [7.0 + rank, 7.0 + rank]
    assert results[1]["reduce"] == [3.0, 3.0]
    assert results[0]["gather"] == [[5.0, 5.0], [6.0, 6.0]]
    assert results[1]["recv"] == [7.0, 8.0]


@pytest.mark.parametrize("engine", ENGINES)
def test_async_work_is_ordered_after_the_callers_stream(engine):
    """The collective reads what the stream computed before the call (a product still queued
    when all_reduce returns), and wait() leaves the result in place for later work."""
    results = world(
        """
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
    """,
        engine=engine,
    )
    total = results[0]["local"] + results[1]["local"]
    for out in results:
        for i, value in enumerate(out["after"]):
            assert abs(value - 2 * (i + 1) * total) <= 1e-3 * abs(total) + 1e-2
        assert out["future"] == [2.0, 2.0, 2.0]


def test_ranks_that_disagree_get_an_error_naming_both():
    """Over Gloo, tbccl compares the ranks' tensors first (Gloo alone aborts the process): the
    error names both ranks' tensors and the group goes on working."""
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


@pytest.mark.skipif("vendor" not in ENGINES, reason="the vendor has no collectives library")
def test_vendor_collectives_report_ranks_that_disagree_and_recover_after_reset():
    """The vendor's library compares the ranks' collectives itself: a mismatch faults the
    device with a message naming both, wait() raises it, and once the device is reset the group
    makes new communicators and works again (NCCL: abort, then a new communicator)."""
    results = world(
        """
    module = getattr(torch, DEV)
    t = torch.ones(4, device=d)
    dist.all_reduce(t)
    try:
        dist.all_reduce(torch.ones(4 + rank, device=d))
        out["error"] = None
    except dist.DistBackendError as error:
        out["error"] = str(error)
    module.reset_device(index)
    t = torch.ones(2, device=d)
    dist.all_reduce(t)
    out["after"] = t.cpu().tolist()
    """,
        engine="vendor",
    )
    for rank, out in enumerate(results):
        error = out["error"]
        assert error is not None and f"tbccl: all_reduce failed on rank {rank} of 2" in error
        assert "the ranks issued different collectives" in error, error
        assert "of 4 float32" in error and "of 5 float32" in error, error
        assert out["after"] == [2.0, 2.0]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_dead_peer_is_an_error_within_the_timeout(engine):
    results = world(
        """
    import time
    dist.all_reduce(torch.ones(4, device=d))  # the communicators exist
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
        engine=engine,
    )
    error = results[0]["error"]
    assert error is not None and "tbccl: all_reduce failed on rank 0 of 2" in error
    if engine == "vendor":
        assert "rank 1 (process" in error and "exited" in error, error
    assert results[0]["seconds"] < 30.0


@pytest.mark.parametrize("engine", ENGINES)
def test_a_peer_that_does_not_come_is_an_error_after_the_timeout(engine):
    """The group's timeout bounds a collective whose peer is alive but late: the waiting rank
    gets an error naming the collective once it passes, not a hang."""
    results = world(
        """
    import time
    dist.all_reduce(torch.ones(4, device=d))  # the communicators exist
    start = time.monotonic()
    if rank == 1:
        time.sleep(7.0)
    try:
        dist.all_reduce(torch.ones(4, device=d))
        out["error"] = None
    except dist.DistBackendError as error:
        out["error"] = str(error)
    out["seconds"] = time.monotonic() - start
    """,
        timeout_s=3.0,
        engine=engine,
    )
    error, seconds = results[0]["error"], results[0]["seconds"]
    assert error is not None and "all_reduce" in error, error
    reasons = ("waited more than 3000 ms", "did not complete within", "timed out")
    assert any(reason in error for reason in reasons), error
    assert 2.5 <= seconds < 7.0, seconds


@pytest.mark.parametrize("engine", ENGINES)
def test_functional_collectives_device_mesh_and_fsdp2(engine):
    """What DeviceMesh, FSDP2 and compiled collectives build on: functional collectives on the
    group, a DeviceMesh of the device type, and fully_shard training that matches one process
    on the full batch."""
    results = world(
        """
    import torch.distributed._functional_collectives as fc
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    out["all_reduce"] = fc.all_reduce(torch.full((3,), rank + 1.0, device=d), "sum",
                                      dist.group.WORLD).cpu().tolist()
    out["all_gather"] = fc.all_gather_single(torch.full((2,), float(rank), device=d), 0,
                                             dist.group.WORLD).cpu().tolist()
    out["reduce_scatter"] = fc.reduce_scatter_tensor(
        torch.arange(4.0, device=d) * (rank + 1), "sum", 0, dist.group.WORLD).cpu().tolist()
    mesh = init_device_mesh(DEV, (2,))
    out["mesh"] = mesh.device_type

    def doubled_sum(x):
        return fc.all_reduce(x * 2, "sum", dist.group.WORLD) + 1

    if COMPILE:  # the collective inside a compiled graph (Inductor)
        compiled = torch.compile(doubled_sum, fullgraph=True)
        out["compiled"] = compiled(torch.full((4,), rank + 1.0, device=d)).cpu().tolist()

    def make():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                   torch.nn.Linear(32, 32), torch.nn.ReLU(),
                                   torch.nn.Linear(32, 4))
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(16, 16, generator=g), torch.randint(0, 4, (16,), generator=g))
            for _ in range(4)]
    model = make().to(d)
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for x, y in data:
        shard = slice(8 * rank, 8 * (rank + 1))
        loss = torch.nn.functional.cross_entropy(model(x[shard].to(d)), y[shard].to(d))
        opt.zero_grad()
        loss.backward()
        opt.step()
    full = [p.full_tensor().cpu() for p in model.parameters()]
    ref = make()
    ref_opt = torch.optim.Adam(ref.parameters(), lr=1e-2)
    for x, y in data:
        loss = torch.nn.functional.cross_entropy(ref(x), y)
        ref_opt.zero_grad()
        loss.backward()
        ref_opt.step()
    out["fsdp_diff"] = max((a - b).abs().max().item()
                           for a, b in zip(full, ref.parameters(), strict=True))
    """.replace("COMPILE", str(engine == ENGINES[0])),  # once per vendor: compiling is slow
        engine=engine,
    )
    for out in results:
        assert out["all_reduce"] == [3.0, 3.0, 3.0]
        assert out["all_gather"] == [0.0, 0.0, 1.0, 1.0]
        assert out["mesh"] == DEV
        if engine == ENGINES[0]:
            assert out["compiled"] == [7.0, 7.0, 7.0, 7.0]
        assert out["fsdp_diff"] < 1e-5, out["fsdp_diff"]
    assert results[0]["reduce_scatter"] == [0.0, 3.0]
    assert results[1]["reduce_scatter"] == [6.0, 9.0]


def torchrun(example: str, steps: int, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Runs examples/<example> on two ranks under torchrun (whose logs, in a directory it would
    otherwise leave in /tmp, go under tmp_path)."""
    script = str(REPO / "examples" / example)
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    launcher += ["--log-dir", str(tmp_path / "torchrun"), "--nproc-per-node", "2"]
    return subprocess.run(
        [*launcher, script, "--steps", str(steps)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_ddp_under_torchrun_matches_one_process(tmp_path):
    result = torchrun("ddp.py", 6, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"rank 0 on {DEV}:0" in result.stdout and "backend 'tbccl'" in result.stdout
    assert ": match" in result.stdout, result.stdout


def test_fsdp2_under_torchrun_matches_one_process(tmp_path):
    result = torchrun("fsdp.py", 4, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"rank 0 on {DEV}:0" in result.stdout and "FSDP2 on 2 ranks" in result.stdout
    assert ": match" in result.stdout, result.stdout
