"""Benchmark: the device against its natural references, measured side by side in one run.

    make bench                       # prints the table, writes build/bench.json
    python benchmarks/bench.py --json out.json --quick

Figures (each the median of several timed trials after a warm-up):

- per-operator latency on small tensors, device vs PyTorch CPU: the steady-state cost of one
  call in a loop of calls, the device's asynchronous queue drained at the end of the loop;
- elementwise throughput on 16M floats (``add`` with ``out=``), device vs CPU vs a plain
  ``memcpy`` of the same bytes (ctypes.memmove), in GB/s of bytes read and written;
- ``mm`` at 1024x1024, device vs CPU, in GFLOP/s;
- one training step of each demo model (examples/models.py), device vs CPU;
- training steps compiled by ``torch.compile`` against eager, on the device (the encoder block;
  GPT-2 too where Inductor generates OpenCL C), with the kernels launched per step;
- on the opencl vendor, one small operator against a C loop of the same kernel straight through
  clEnqueueNDRangeKernel (benchmarks/ocl_floor.c);
- one training step of two model-zoo models (examples/zoo.py): torchvision's resnet18 and a
  Hugging Face GPT-2, device vs CPU;
- the caching allocator: allocate and free a small tensor, device vs CPU; and its
  fragmentation after a mixed workload (transformer-like training steps of varying sequence
  length beside tensors of random sizes and lifetimes, from five fixed seeds): peak reserved
  bytes over peak allocated bytes, 1 being no memory held beyond what tensors needed at the
  peak;
- all_reduce bus bandwidth of the device's process group (tbccl) against Gloo on CPU tensors,
  two ranks on this machine, 1 MiB and 64 MiB (benchmarks/allreduce.py).

Ratios are device over reference, so below 1 is faster for times and above 1 is faster for
rates.  The targets are the project's aims, not assertions: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

import torch_backend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import models
import zoo

DEVICE = torch_backend.vendor_info()["device_type"]
MODULE = getattr(torch, DEVICE)


def sync(device: str) -> None:
    if device != "cpu":
        MODULE.synchronize()


# Idle time before each timed trial of the rows whose calls run parallel regions (matrix
# products, 16M-element loops, training steps).  PyTorch CPU's OpenMP threads busy-wait after a
# parallel region (libgomp's spin count), and emu's workers for TORCH_BACKEND_EMU_SPIN_US; on a
# machine with few cores the side timed next would share its cores with the other side's
# spinning threads.  Measured on 2 cores: mm 1024 on emu right after a CPU trial ran at 175-179
# GFLOP/s, after a 10 ms pause at 186-196, alone at 196-204.  The latency rows take no pause:
# their CPU side runs no parallel region, and a trial of a few milliseconds that starts on
# cores idle for 10 ms measures their wake-up instead (emu's add rose from 1.7-2.5 to 2.5-3.7
# us, the CPU's from 1.4 to 1.5-2.4).
SETTLE_S = 0.01


def timed(fn: Callable[[], object], device: str, calls: int) -> float:
    """Seconds per call of `calls` back-to-back calls, the device drained at the end."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    sync(device)
    return (time.perf_counter() - start) / calls


def side_by_side(
    device_fn: Callable[[], object],
    reference_fn: Callable[[], object],
    calls: int,
    trials: int,
    reference: str = "cpu",
    settle: float = SETTLE_S,
) -> tuple[float, float]:
    """Median seconds per call of the device's and the reference's function, measured in
    alternating trials (so that both see the same machine: this one is a VM whose speed
    drifts) after a warm-up of each, each trial after `settle` seconds of idle time."""
    for fn, device in ((device_fn, DEVICE), (reference_fn, reference)):
        timed(fn, device, max(3, calls // 10))
    samples: dict[str, list[float]] = {"device": [], "reference": []}
    for trial in range(trials):
        order = [("device", device_fn, DEVICE), ("reference", reference_fn, reference)]
        for side, fn, device in order if trial % 2 == 0 else order[::-1]:
            time.sleep(settle)
            samples[side].append(timed(fn, device, calls))
    return statistics.median(samples["device"]), statistics.median(samples["reference"])


def small_ops(device: str) -> dict[str, Callable[[], object]]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(32, 32, generator=generator).to(device)
    y = torch.randn(32, 32, generator=generator).to(device)
    weight, bias = torch.ones(32, device=device), torch.zeros(32, device=device)
    index = torch.randint(0, 32, (16,), generator=generator).to(device)
    mask = x > 0
    return {
        "add": lambda: x + y,
        "mul (scalar)": lambda: x * 2.0,
        "relu": lambda: torch.relu(x),
        "exp": lambda: torch.exp(x),
        "sum(dim=1)": lambda: x.sum(1),
        "softmax": lambda: torch.softmax(x, -1),
        "layer_norm": lambda: torch.nn.functional.layer_norm(x, (32,), weight, bias),
        "mm 32x32": lambda: x @ y,
        "index_select": lambda: x.index_select(0, index),
        "where": lambda: torch.where(mask, x, y),
        "cat": lambda: torch.cat([x, y]),
        "clone": lambda: x.clone(),
    }


def bench_small_ops(quick: bool) -> list[dict]:
    rows = []
    device_ops, cpu_ops = small_ops(DEVICE), small_ops("cpu")
    calls, trials = (300, 5) if quick else (2000, 15)
    for name in device_ops:
        d, c = side_by_side(device_ops[name], cpu_ops[name], calls, trials, settle=0.0)
        rows.append(row("latency", f"{name} [32x32]", d * 1e6, c * 1e6, "us", "<= 1.3x"))
    return rows


RELU_SOURCE = """
__kernel void relu(__global const float *x, __global float *y, uint n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = fmax(x[i], 0.0f);
}
"""


def _ocl_floor() -> Callable[[int, int, bool], float]:
    """benchmarks/ocl_floor.c, compiled with the machine's C compiler into build/ (once per
    edit of the source), as a function (n, calls, with_events) -> microseconds per launch."""
    import subprocess

    source = Path(__file__).resolve().parent / "ocl_floor.c"
    library = Path(__file__).resolve().parents[1] / "build" / "ocl_floor.so"
    if not library.exists() or library.stat().st_mtime < source.stat().st_mtime:
        library.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                os.environ.get("CC", "cc"),
                "-O2",
                "-std=c11",
                "-shared",
                "-fPIC",
                str(source),
                "-lOpenCL",
                "-o",
                str(library),
            ],
            check=True,
        )
    floor = ctypes.CDLL(str(library)).tb_ocl_floor_us
    floor.restype = ctypes.c_double
    floor.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint, ctypes.c_int, ctypes.c_int]

    def run(n: int, calls: int, with_events: bool) -> float:
        us = floor(RELU_SOURCE.encode(), b"relu", n, calls, int(with_events))
        if us < 0:
            raise RuntimeError(f"ocl_floor.c failed with OpenCL error {us:.0f}")
        return us

    return run


def bench_launch_floor(quick: bool) -> list[dict]:
    """What one small operator costs through torch_backend on the opencl vendor against the
    SDK's floor: the same relu kernel launched by a C loop straight through clSetKernelArg and
    clEnqueueNDRangeKernel (benchmarks/ocl_floor.c), in the same run.  Rows: eager torch.relu,
    the kernel launched from Python through torch.ocl.compile_kernel, what asking OpenCL for an
    event per launch (which the vendor no longer does) costs the raw loop, PyTorch's own CPU
    relu (what the framework costs before any device is involved), and a relu replayed in a
    captured graph (what is left when the host's per-operator work is gone)."""
    if DEVICE != "ocl":
        return []
    floor = _ocl_floor()
    n, calls, trials = 1024, (1000 if quick else 5000), (3 if quick else 9)
    x = torch.randn(32, 32, device=DEVICE)
    y = torch.empty_like(x)
    relu = MODULE.compile_kernel(RELU_SOURCE, "relu")

    def median(fn: Callable[[], float]) -> float:
        return statistics.median(fn() for _ in range(trials))

    raw = median(lambda: floor(n, calls, False))
    raw_events = median(lambda: floor(n, calls, True))
    eager = median(lambda: timed(lambda: torch.relu(x), DEVICE, calls) * 1e6)
    x_cpu = x.cpu()
    cpu = median(lambda: timed(lambda: torch.relu(x_cpu), "cpu", calls) * 1e6)
    launched = median(lambda: timed(lambda: relu(x, y, n, threads=n), DEVICE, calls) * 1e6)
    # 50 relu captured in a graph: what a replayed launch costs
    chain = 50
    sync(DEVICE)
    graph = torch.accelerator.Graph()
    with MODULE.graph(graph):
        z = x
        for _ in range(chain):
            z = torch.relu(z)
    replays = max(1, calls // chain)
    replayed = median(lambda: timed(graph.replay, DEVICE, replays) * 1e6 / chain)
    floor_name = "raw enqueue"
    return [
        row(
            "launch floor",
            "relu [32x32] replayed in a graph (50 per replay) vs raw loop",
            replayed,
            raw,
            "us",
            "",
            floor_name,
        ),
        row(
            "launch floor",
            "eager relu [32x32] vs raw clEnqueueNDRangeKernel loop",
            eager,
            raw,
            "us",
            "<= 1.5x",
            floor_name,
        ),
        row(
            "launch floor",
            "compile_kernel relu from Python vs raw loop",
            launched,
            raw,
            "us",
            "",
            floor_name,
        ),
        row(
            "launch floor",
            "raw loop with an event per launch vs without",
            raw_events,
            raw,
            "us",
            "",
            floor_name,
        ),
        row(
            "launch floor",
            "PyTorch CPU relu [32x32] (the framework's own cost) vs raw loop",
            cpu,
            raw,
            "us",
            "",
            floor_name,
        ),
    ]


def bench_elementwise(quick: bool) -> list[dict]:
    n = 1 << 24
    trials = 3 if quick else 9
    a, b = torch.randn(n), torch.randn(n)
    x, y = a.to(DEVICE), b.to(DEVICE)
    out_device, out_cpu = torch.empty_like(x), torch.empty_like(a)
    d, c = side_by_side(
        lambda: torch.add(x, y, out=out_device), lambda: torch.add(a, b, out=out_cpu), 10, trials
    )
    src, dst = torch.randn(n), torch.empty(n)
    _, memcpy = side_by_side(
        lambda: torch.add(x, y, out=out_device),
        lambda: ctypes.memmove(dst.data_ptr(), src.data_ptr(), 4 * n),
        10,
        trials,
    )
    add_bytes, copy_bytes = 3 * 4 * n, 2 * 4 * n  # read two, write one / read one, write one
    return [
        row(
            "throughput",
            "add 16M float32",
            add_bytes / d / 1e9,
            add_bytes / c / 1e9,
            "GB/s",
            ">= 0.9x",
        ),
        row(
            "throughput",
            "add 16M float32 vs memcpy",
            add_bytes / d / 1e9,
            copy_bytes / memcpy / 1e9,
            "GB/s",
            "",
            "memcpy",
        ),
    ]


def bench_mm(quick: bool) -> list[dict]:
    n = 1024
    a, b = torch.randn(n, n), torch.randn(n, n)
    x, y = a.to(DEVICE), b.to(DEVICE)
    out_device, out_cpu = torch.empty(n, n, device=DEVICE), torch.empty(n, n)
    d, c = side_by_side(
        lambda: torch.mm(x, y, out=out_device),
        lambda: torch.mm(a, b, out=out_cpu),
        10,
        3 if quick else 9,
    )
    flops = 2 * n**3
    return [
        row("throughput", "mm 1024 float32", flops / d / 1e9, flops / c / 1e9, "GFLOP/s", ">= 1.0x")
    ]


def training_step(model: str, device: str) -> Callable[[], None]:
    """One training step of a demo model on `device`, cycling through four fixed batches."""
    network = models.build(model, device)
    if model == "mlp":
        optimizer = torch.optim.SGD(network.parameters(), lr=0.05, momentum=0.9, fused=True)
    else:
        optimizer = torch.optim.AdamW(network.parameters(), lr=3e-3, fused=True)
    data = [(x.to(device), y.to(device)) for x, y in models.batches(model, 4)]
    step = 0

    def run() -> None:
        nonlocal step
        x, y = data[step % len(data)]
        step += 1
        models.train_step(network, optimizer, x, y)

    return run


def bench_training(quick: bool) -> list[dict]:
    rows = []
    names = {"mlp": "MLP, SGD fused", "encoder": "encoder block, AdamW fused, dropout 0.1"}
    for model, name in names.items():
        d, c = side_by_side(
            training_step(model, DEVICE),
            training_step(model, "cpu"),
            10 if quick else 30,
            3 if quick else 9,
        )
        rows.append(row("training step", name, d * 1e3, c * 1e3, "ms", "<= 1.0x"))
    return rows


def _launches() -> int:
    """Kernels launched on the device so far: the vendor's ATen kernels, calls that went
    through the CPU fallback, and kernels of device programs (torch.compile's generated
    ones, on a vendor that builds programs)."""
    return (
        sum(torch_backend.kernel_counts().values())
        + sum(torch_backend.fallback_counts().values())
        + torch.ops.torch_backend._program_launch_count()
    )


def _launches_per_step(step: Callable[[], object], steps: int = 3) -> float:
    sync(DEVICE)
    before = _launches()
    for _ in range(steps):
        step()
    sync(DEVICE)
    return (_launches() - before) / steps


def _compiled_encoder_step(device: str = DEVICE, mode: str | None = None) -> Callable[[], None]:
    network = models.build("encoder", device)
    compiled_network = torch.compile(network, mode=mode)
    optimizer = torch.optim.AdamW(network.parameters(), lr=3e-3, fused=True)
    data = [(x.to(device), y.to(device)) for x, y in models.batches("encoder", 4)]
    steps = [0]

    def compiled() -> None:
        x, y = data[steps[0] % len(data)]
        steps[0] += 1
        models.train_step(compiled_network, optimizer, x, y)

    return compiled


def _graphed(step: Callable[[], object], device: str) -> Callable[[], None]:
    """`step` (on static tensors) captured whole into a graph after a warm-up on a side stream
    (PyTorch's CUDA Graphs notes, whole-network capture); returns the replay."""
    side = torch.Stream(device=device)
    side.wait_stream(torch.accelerator.current_stream())
    with side:
        for _ in range(3):
            step()
    torch.accelerator.current_stream().wait_stream(side)
    sync(device)
    graph = torch.accelerator.Graph()
    with getattr(torch, device).graph(graph):
        step()

    def replay() -> None:
        graph.replay()
        assert step  # the graph reads the tensors `step` holds: they live as long as it

    return replay


def _graphed_encoder_step(device: str = DEVICE) -> Callable[[], None]:
    """The compiled encoder step captured whole; each call copies the next batch into the
    captured inputs and replays."""
    network = models.build("encoder", device)
    compiled_network = torch.compile(network)
    optimizer = torch.optim.AdamW(network.parameters(), lr=3e-3, fused=True)
    data = [(x.to(device), y.to(device)) for x, y in models.batches("encoder", 4)]
    x, y = data[0][0].clone(), data[0][1].clone()
    replay = _graphed(lambda: models.train_step(compiled_network, optimizer, x, y), device)
    steps = [0]

    def graphed() -> None:
        batch = data[steps[0] % len(data)]
        steps[0] += 1
        x.copy_(batch[0])
        y.copy_(batch[1])
        replay()

    return graphed


def _compiled_zoo_step(
    name: str, device: str = DEVICE, mode: str | None = None
) -> Callable[[], None]:
    case = zoo.CASES[name]
    network, batch = zoo.build(case, device)
    compiled_network = torch.compile(network, mode=mode)
    optimizer = zoo.optimizer(case, network)
    return lambda: zoo.train_step(case, compiled_network, batch, optimizer)


def bench_compile(quick: bool) -> list[dict]:
    """Training steps with the model compiled by torch.compile's default backend (Inductor)
    against the same steps in eager mode, both on the device: the encoder block (dropout 0.1,
    AdamW fused) and, where the device runs it, GPT-2 (HF).  With the kernels launched per
    step, eager against compiled: what fusion saves.  Inductor generates C++ kernels on a
    device with host access (emu: aim not slower than eager), OpenCL C on one that builds
    OpenCL C programs (ocl: aim at least 2x faster), nothing on the others.

    Beside each device row, the same step on PyTorch's CPU, compiled by Inductor's C++ backend
    against eager, in the same run: what the hardware under the device gives a compiler.  On
    PoCL the device is these same CPU cores, and that ratio bounds what fusion can save.

    On a vendor with graphs, first the compiled step captured whole and replayed (the
    encoder's with a copy of its next batch into the captured inputs): what
    ``mode="reduce-overhead"`` gives CUDA, which takes the host's work out of the step."""
    from torch_backend import compile as tb_compile
    from torch_backend.reduce_overhead import has_graphs

    generated = tb_compile.opencl_programs()
    aim = "<= 0.5x" if generated else "<= 1.0x"
    cases = [
        (
            "encoder block",
            lambda device: training_step("encoder", device),
            _compiled_encoder_step,
        )
    ]
    if generated:  # GPT-2's eager step on emu is the zoo row's; compiled it is the same graph
        cases.append(
            (
                "GPT-2 (HF) 2x16 tokens",
                lambda device: zoo_step("gpt2", device),
                lambda device: _compiled_zoo_step("gpt2", device),
            )
        )
    graphed_cases = []
    if has_graphs():  # mode="reduce-overhead", and the whole step captured (docs/graphs.rst)
        graphed_cases.append(
            (
                "encoder block, torch.compile(mode='reduce-overhead')",
                cases[0][1],
                lambda device: _compiled_encoder_step(device, "reduce-overhead"),
            )
        )
        graphed_cases.append(
            ("encoder block, torch.compile + whole-step graph", cases[0][1], _graphed_encoder_step)
        )
        if generated:
            graphed_cases.append(
                (
                    "GPT-2 (HF) 2x16 tokens, torch.compile(mode='reduce-overhead')",
                    cases[1][1],
                    lambda device: _compiled_zoo_step("gpt2", device, "reduce-overhead"),
                )
            )
            graphed_cases.append(
                (
                    "GPT-2 (HF) 2x16 tokens, torch.compile + whole-step graph",
                    cases[1][1],
                    lambda device: _graphed(_compiled_zoo_step("gpt2", device), device),
                )
            )
    rows = []
    for label, eager_on, graphed_on in graphed_cases:
        eager, graphed = eager_on(DEVICE), graphed_on(DEVICE)
        for _ in range(3):  # compile, record
            graphed()
        eager()
        d, e = side_by_side(graphed, eager, 10 if quick else 30, 3 if quick else 9, DEVICE)
        rows.append(
            row(
                "training step",
                f"{label} vs eager",
                d * 1e3,
                e * 1e3,
                "ms",
                aim,
                f"eager {DEVICE}",
            )
        )
    for label, eager_on, compiled_on in cases:
        for device, aim_here in ((DEVICE, aim), ("cpu", "")):
            eager, compiled = eager_on(device), compiled_on(device)
            for _ in range(3):  # compile (forward and backward) before timing
                compiled()
            eager()
            d, e = side_by_side(compiled, eager, 10 if quick else 30, 3 if quick else 9, device)
            on_cpu = device == "cpu"
            rows.append(
                row(
                    "training step",
                    f"{label}, torch.compile vs eager"
                    + (", both on PyTorch CPU (reference ratio)" if on_cpu else ""),
                    d * 1e3,
                    e * 1e3,
                    "ms",
                    aim_here,
                    f"eager {device}",
                )
            )
            if not on_cpu:
                rows.append(
                    row(
                        "launches per step",
                        f"{label}, torch.compile vs eager",
                        _launches_per_step(compiled),
                        _launches_per_step(eager),
                        "launches",
                        "",
                        f"eager {DEVICE}",
                    )
                )
    return rows


def bench_allreduce(quick: bool) -> list[dict]:
    """all_reduce bus bandwidth of the device's process group against Gloo's on CPU tensors,
    two ranks (benchmarks/allreduce.py)."""
    import allreduce

    figures = allreduce.measure(quick)
    rows = []
    for label, f in figures.items():
        rows.append(
            row(
                "all_reduce",
                f"{label}, 2 ranks, tbccl vs Gloo",
                f["device"],
                f["cpu"],
                "GB/s",
                ">= 0.9x",
                "gloo cpu",
            )
        )
        rows.append(
            row(
                "all_reduce",
                f"{label}, 2 ranks, tbccl over Gloo (no vendor library)",
                f["device_gloo"],
                f["cpu"],
                "GB/s",
                ">= 0.9x",
                "gloo cpu",
            )
        )
    return rows


def zoo_step(name: str, device: str) -> Callable[[], None]:
    """One training step of a model-zoo model on `device` (its fixed batch)."""
    case = zoo.CASES[name]
    network, batch = zoo.build(case, device)
    optimizer = zoo.optimizer(case, network)
    return lambda: zoo.train_step(case, network, batch, optimizer)


def bench_zoo(quick: bool) -> list[dict]:
    rows = []
    for name, label in (
        ("resnet18", "resnet18 (torchvision), 4x3x64x64"),
        ("gpt2", "GPT-2 (HF), 2x16 tokens"),
    ):
        d, c = side_by_side(
            zoo_step(name, DEVICE), zoo_step(name, "cpu"), 3 if quick else 10, 3 if quick else 7
        )
        rows.append(row("training step", label, d * 1e3, c * 1e3, "ms", "<= 1.2x"))
    return rows


def _captured(fn: Callable[[], object]) -> Callable[[], None]:
    """``fn`` captured into a graph on a side stream (after one eager warm-up call): returns
    its replay."""
    fn()
    graph = torch.accelerator.Graph()
    with MODULE.graph(graph):
        fn()
    return graph.replay


def _gpt2_decode() -> Callable[[], object]:
    """One GPT-2 (HF, examples/zoo.py's config) decode step: a token against an 8-token
    cache, the cache's tensors kept static as a graph needs them."""
    transformers = zoo.import_transformers()
    model, _ = zoo.build(zoo.CASES["gpt2"], DEVICE)
    model.eval()
    with torch.no_grad():
        past = model(torch.randint(0, 256, (1, 8), device=DEVICE), use_cache=True).past_key_values
    prompt = [(layer.keys.clone(), layer.values.clone()) for layer in past.layers]
    token = torch.zeros(1, 1, dtype=torch.long, device=DEVICE)

    def step() -> object:
        with torch.no_grad():
            cache = transformers.DynamicCache(prompt)
            return model(token, past_key_values=cache, use_cache=True).logits

    return step


def bench_graphs(quick: bool) -> list[dict]:
    """Graph replay against eager launches of the same work on the device (one enqueue instead
    of one per operator): the host cost a graph saves."""
    try:
        torch.accelerator.Graph()
    except NotImplementedError:
        return []  # a vendor without TB_EXTENSION_GRAPHS
    x = torch.randn(32, 32, device=DEVICE)

    def chain() -> object:
        y = x
        for _ in range(50):
            y = y * 1.0001 + 0.001  # 100 small operators
        return y

    calls, trials = (20, 3) if quick else (100, 7)
    d, e = side_by_side(_captured(chain), chain, calls, trials, reference=DEVICE)
    rows = [
        row("graphs", "100-op chain [32x32]: replay vs eager", d * 1e6, e * 1e6, "us",
            "<= 0.33x", f"{DEVICE} eager"),
    ]  # fmt: skip
    decode = _gpt2_decode()
    d, e = side_by_side(_captured(decode), decode, calls // 2, trials, reference=DEVICE)
    rows.append(
        row("graphs", "GPT-2 decode step: replay vs eager", d * 1e6, e * 1e6, "us", "<= 1x",
            f"{DEVICE} eager")
    )  # fmt: skip
    return rows


def bench_attention(quick: bool) -> list[dict]:
    """scaled_dot_product_attention forward and backward: the vendor's fused kernel (the
    OVERRIDEABLE route) against the math path on the same device."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = (torch.randn(4, 8, 128, 64, device=DEVICE, requires_grad=True) for _ in range(3))
    if torch._fused_sdp_choice(q, k, v) != int(SDPBackend.OVERRIDEABLE):
        return []  # no fused kernel: the math path is all there is
    grad = torch.randn(4, 8, 128, 64, device=DEVICE)

    def step() -> None:
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        torch.autograd.grad(out, (q, k, v), grad)

    def math_step() -> None:
        with sdpa_kernel(SDPBackend.MATH):
            step()

    calls, trials = (3, 3) if quick else (10, 7)
    d, m = side_by_side(step, math_step, calls, trials, reference=DEVICE)
    return [
        row("attention", "SDPA causal fwd+bwd [4x8x128x64]: fused vs math", d * 1e3, m * 1e3,
            "ms", "<= 1x", f"{DEVICE} math")
    ]  # fmt: skip


def bench_quantize(quick: bool) -> list[dict]:
    """quantize_per_tensor + dequantize of 4M floats (qint8): the device against PyTorch CPU
    (FBGEMM's AVX2 loops).  The device runs the vendor's kernels where it publishes them
    (vendor.h, "Quantized tensors"; emu's are scalar C, hence the 4x aim), else the CPU's
    quantizer through the fallback, copies included."""
    import warnings

    warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
    x = torch.randn(4 << 20)
    d = x.to(DEVICE)

    def step(t: torch.Tensor) -> None:
        torch.quantize_per_tensor(t, 0.05, 3, torch.qint8).dequantize()

    calls, trials = (3, 3) if quick else (10, 7)
    dev, cpu = side_by_side(lambda: step(d), lambda: step(x), calls, trials)
    torch_backend.reset_kernel_counts()
    step(d)
    route = "kernels" if "quantize_per_tensor" in torch_backend.kernel_counts() else "fallback"
    return [
        row("quantize", f"quantize+dequantize 4M qint8 ({route})", dev * 1e3, cpu * 1e3, "ms",
            "<= 4x")
    ]  # fmt: skip


def _ipc_consumer(requests: Any, replies: Any) -> None:
    """bench_ipc's consumer process: takes tensors until None, lands each on the device (a
    shared device tensor is there already) and answers with one element."""
    while True:
        t = requests.get()
        if t is None:
            return
        replies.put(float(t.to(DEVICE)[-1].cpu()))
        del t


def bench_ipc(quick: bool) -> list[dict]:
    """A 64 MiB device tensor sent to another process through a torch.multiprocessing Queue,
    which reads it on the device and answers: shared (the vendor's IPC extension; the consumer
    maps the producer's memory) against what a user does without it, .cpu() there and .to()
    back (the copies, and PyTorch's own CPU sharing between them)."""
    import torch.multiprocessing as mp

    if not torch.ops.torch_backend._ipc_supported():
        return []
    ctx = mp.get_context("spawn")
    requests, replies = ctx.Queue(), ctx.Queue()
    consumer = ctx.Process(target=_ipc_consumer, args=(requests, replies))
    consumer.start()
    x = torch.arange(16 << 20, dtype=torch.float32, device=DEVICE)

    def shared() -> None:
        requests.put(x)
        replies.get()
        torch_backend.multiprocessing.ipc_collect()

    def copied() -> None:
        requests.put(x.cpu())
        replies.get()

    try:
        calls, trials = (3, 3) if quick else (10, 5)
        d, c = side_by_side(shared, copied, calls, trials, reference=DEVICE)
    finally:
        requests.put(None)
        consumer.join(60)
    return [
        row("ipc", "64 MiB device tensor to another process: shared vs .cpu()/.to() copies",
            d * 1e3, c * 1e3, "ms", "<= 0.2x", f"{DEVICE} copies")
    ]  # fmt: skip


def bench_allocator(quick: bool) -> list[dict]:
    calls, trials = (2000, 3) if quick else (20000, 9)
    # Both sides name their device, so that both pay Python's parsing of the device argument
    # (0.3 us here: torch.empty(256) takes 0.84 us, torch.empty(256, device="cpu") 1.18 us).
    d, c = side_by_side(
        lambda: torch.empty(256, device=DEVICE),
        lambda: torch.empty(256, device="cpu"),
        calls,
        trials,
        settle=0.0,
    )
    rows = [row("allocator", "empty(256) + free, from Python", d * 1e6, c * 1e6, "us", "<= 1.3x")]
    # The allocator alone: a C++ loop of allocate + free, the caching allocator against c10's
    # CPU allocator, best of the trials (Python and the dispatcher cost the same on both sides
    # and dominate the row above).
    timer = torch.ops.torch_backend._time_allocator
    device = min(timer("device", 256, calls) for _ in range(trials))
    cpu = min(timer("cpu", 256, calls) for _ in range(trials))
    rows.append(
        row(
            "allocator",
            "cached alloc + free of 256 bytes (C++)",
            device * 1e6,
            cpu * 1e6,
            "us",
            "<= 1 us",
            reference_name="c10 cpu",
        )
    )
    return rows


def mixed_workload(seed: int, steps: int) -> None:
    """Allocates and frees like training a 4-layer transformer (batch 8, width 512, 8 heads,
    feed-forward 2048) on sequences of varying length -- activations kept for the backward
    pass, temporaries freed at once, gradients at the end -- beside tensors of random
    (log-normal) sizes and lifetimes.  Only the allocation pattern matters: no kernels run."""
    rng = random.Random(seed)

    def empty(nbytes: int) -> torch.Tensor:
        return torch.empty(nbytes, dtype=torch.uint8, device=DEVICE)

    batch, width, heads, hidden, layers = 8, 512, 8, 2048, 4
    weights = [width * 3 * width, width * width, width * hidden, hidden * width]
    params = [empty(4 * n) for n in weights for _ in range(layers)]
    grads: list[torch.Tensor] = []
    others: list[torch.Tensor] = []
    for _ in range(steps):
        seq = rng.choice([64, 96, 128, 192, 256])
        tokens = batch * seq
        saved = []
        for _ in range(layers):
            x, qkv = empty(4 * tokens * width), empty(4 * tokens * 3 * width)
            scores = empty(4 * batch * heads * seq * seq)
            probs = empty(4 * batch * heads * seq * seq)
            del scores
            attention = empty(4 * tokens * width)
            del qkv
            up, activation = empty(4 * tokens * hidden), empty(4 * tokens * hidden)
            saved.append([x, probs, attention, up, activation, empty(4 * tokens * width)])
            # As many random tensors die as are born, on average: a stationary population.
            for _ in range(rng.randrange(4)):
                others.append(empty(int(min(16 << 20, rng.lognormvariate(11, 2.5))) + 1))
            for _ in range(min(len(others), rng.randrange(4))):
                others.pop(rng.randrange(len(others)))
        for layer in reversed(saved):
            grad_up, grad_activation = empty(4 * tokens * hidden), empty(4 * tokens * hidden)
            grad_probs = empty(4 * batch * heads * seq * seq)
            del grad_up, grad_activation, grad_probs
            layer.clear()
        grads = grads or [empty(p.numel()) for p in params]
    del params, grads, others


def bench_fragmentation(quick: bool) -> list[dict]:
    """Peak reserved over peak allocated bytes, summed over the workload from five seeds (the
    figure varies with the seed: one seed would flatter or blame the allocator by chance)."""
    reserved = allocated = 0
    for seed in range(2 if quick else 5):
        MODULE.synchronize()
        MODULE.empty_cache()
        MODULE.reset_peak_memory_stats()
        mixed_workload(seed, steps=6 if quick else 20)
        reserved += MODULE.max_memory_reserved()
        allocated += MODULE.max_memory_allocated()
    MODULE.empty_cache()
    return [
        row(
            "allocator",
            "fragmentation: peak reserved / peak allocated (mixed workload)",
            reserved / (1 << 20),
            allocated / (1 << 20),
            "MiB",
            "<= 1.3x",
            reference_name="allocated",
        )
    ]


def row(
    group: str,
    name: str,
    device: float,
    reference: float,
    unit: str,
    target: str,
    reference_name: str = "cpu",
) -> dict:
    return {
        "group": group,
        "name": name,
        "device": device,
        "reference": reference,
        "reference_name": reference_name,
        "unit": unit,
        "ratio": device / reference,
        "target": target,
    }


def markdown_table(rows: list[dict]) -> str:
    """The rows as a Markdown table (what the closing notes quote)."""
    header = ["benchmark", DEVICE, "reference", "unit", f"{DEVICE} / reference", "aim", "met"]
    cells = [
        [
            f"{r['group']}: {r['name']}",
            f"{r['device']:.2f}",
            f"{r['reference_name']} {r['reference']:.2f}",
            r["unit"],
            f"{r['ratio']:.2f}x",
            r["target"],
            met(r),
        ]
        for r in rows
    ]
    widths = [max(len(line[i]) for line in [header, *cells]) for i in range(len(header))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for line in cells:
        lines.append(
            "| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |"
        )
    return "\n".join(lines)


def met(r: dict) -> str:
    """ "yes"/"no" against the row's aim: a ratio ("<= 1.3x") or, with a unit ("<= 1 us"), the
    device's own figure in that unit; "" without an aim."""
    if not r["target"]:
        return ""
    relation, bound, *unit = r["target"].split()
    if unit:
        if unit[0] != r["unit"]:
            raise ValueError(f"{r['name']}: aim {r['target']!r} is not in the row's unit")
        value, limit = r["device"], float(bound)
    else:
        value, limit = r["ratio"], float(bound.rstrip("x"))
    ok = value <= limit if relation == "<=" else value >= limit
    return "yes" if ok else "no"


def machine() -> dict:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "vendor": torch_backend.vendor_info(),
        "python": platform.python_version(),
    }


BENCHES: dict[str, Callable[[bool], list[dict]]] = {
    "latency": bench_small_ops,
    "launch_floor": bench_launch_floor,
    "elementwise": bench_elementwise,
    "mm": bench_mm,
    "training": bench_training,
    "compile": bench_compile,
    "zoo": bench_zoo,
    "allocator": bench_allocator,
    "fragmentation": bench_fragmentation,
    "allreduce": bench_allreduce,
    "graphs": bench_graphs,
    "attention": bench_attention,
    "quantize": bench_quantize,
    "ipc": bench_ipc,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures here as JSON")
    parser.add_argument("--quick", action="store_true", help="fewer calls and trials")
    parser.add_argument("--plot", type=Path, help="also draw the rows against their aims (PNG)")
    parser.add_argument(
        "--only",
        help=f"a comma-separated subset of the benchmarks: {', '.join(BENCHES)} (default: all)",
    )
    arguments = parser.parse_args()
    names = arguments.only.split(",") if arguments.only else list(BENCHES)
    unknown = [name for name in names if name not in BENCHES]
    if unknown:
        parser.error(f"unknown benchmarks {unknown}: choose from {', '.join(BENCHES)}")

    info = machine()
    print(
        f"device '{DEVICE}' ({info['vendor']['vendor']}) vs PyTorch {info['torch']} CPU "
        f"({info['torch_threads']} threads) on {info['cpu']}, {info['cores']} cores"
    )
    rows = []
    for name in names:
        rows += BENCHES[name](arguments.quick)

    print(markdown_table(rows))
    if arguments.json:
        arguments.json.parent.mkdir(parents=True, exist_ok=True)
        recorded = [dict(r, met=met(r)) for r in rows]
        arguments.json.write_text(json.dumps({"machine": info, "rows": recorded}, indent=2) + "\n")
        print(f"wrote {arguments.json}")
    if arguments.plot:
        import plot

        plot.write(rows, info, arguments.plot)
        print(f"wrote {arguments.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
