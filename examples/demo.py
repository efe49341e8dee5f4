"""The main job: train two models on the device, step by step beside the same models on the CPU.

    make demo                                    # the default vendor (emu)
    TORCH_BACKEND_VENDOR=fake python examples/demo.py --allow-fallback

From one seed, each run builds the model on the device and on the CPU, feeds both the same
batches and prints every step's loss side by side:

1. the MLP with SGD (momentum, fused step);
2. the transformer encoder block with AdamW (fused step), dropout off so that the two runs see
   the same function;
3. the encoder block with dropout 0.1 and AdamW (foreach step): the device draws its own masks
   from its Philox generator, so its losses are checked for reproducibility (a second run from
   the same seed must repeat them exactly) and are shown beside the CPU's for the trend.

It fails (exit status 1) if a loss of runs 1 and 2 differs from the CPU's beyond tolerance, if
run 3 does not reproduce, or if any operator ran through the CPU fallback (unless
--allow-fallback).  It ends with the fallback count, the kernels that ran and the device's
memory statistics.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

import torch_backend

sys.path.insert(0, str(Path(__file__).resolve().parent))
import models

STEPS = 10
RTOL, ATOL = 1e-4, 1e-5


def run(model: str, device: str, optimizer: str, **options: float) -> list[float]:
    """Losses of STEPS training steps of `model` on `device`."""
    network = build_model(model, device, options)
    make = {
        "sgd-fused": lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, fused=True),
        "adamw-fused": lambda p: torch.optim.AdamW(p, lr=3e-3, fused=True),
        "adamw-foreach": lambda p: torch.optim.AdamW(p, lr=3e-3, foreach=True),
    }[optimizer]
    opt = make(network.parameters())
    losses = []
    for x, target in models.batches(model, STEPS):
        losses.append(models.train_step(network, opt, x.to(device), target.to(device)))
    return [loss.item() for loss in losses]


def build_model(model: str, device: str, options: dict) -> torch.nn.Module:
    torch.manual_seed(0)  # also seeds the device generator (dropout masks)
    return models.build(model, device, seed=0, **options)


def table(title: str, device: str, device_losses: list[float], cpu_losses: list[float]) -> float:
    print(f"\n{title}")
    print(f"  {'step':>4}  {device + ' loss':>14}  {'cpu loss':>14}  {'|difference|':>12}")
    worst = 0.0
    for step, (d, c) in enumerate(zip(device_losses, cpu_losses, strict=True), 1):
        difference = abs(d - c)
        worst = max(worst, difference / (ATOL + RTOL * abs(c)))
        print(f"  {step:>4}  {d:>14.7f}  {c:>14.7f}  {difference:>12.2e}")
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--allow-fallback",
        action="store_true",
        help="do not fail when operators run through the CPU fallback (vendors without kernels)",
    )
    arguments = parser.parse_args()

    info = torch_backend.vendor_info()
    device = info["device_type"]
    module = getattr(torch, device)
    print(
        f"vendor '{info['vendor']}' {info['version']} (ABI {info['abi_version']}): "
        f"{info['device_count']} x {module.get_device_name(0)} as torch.device('{device}')"
    )
    torch_backend.reset_fallback_counts()
    torch_backend.reset_kernel_counts()
    failures = []

    mlp = run("mlp", device, "sgd-fused")
    if table("1. MLP, SGD momentum (fused)", device, mlp, run("mlp", "cpu", "sgd-fused")) > 1:
        failures.append("MLP losses differ from the CPU's")

    encoder = run("encoder", device, "adamw-fused", dropout=0.0)
    reference = run("encoder", "cpu", "adamw-fused", dropout=0.0)
    if table("2. encoder block, AdamW (fused), no dropout", device, encoder, reference) > 1:
        failures.append("encoder losses differ from the CPU's")

    dropout = run("encoder", device, "adamw-foreach", dropout=0.1)
    again = run("encoder", device, "adamw-foreach", dropout=0.1)
    table(
        "3. encoder block, AdamW (foreach), dropout 0.1: the device's own masks (CPU for trend)",
        device,
        dropout,
        run("encoder", "cpu", "adamw-foreach", dropout=0.1),
    )
    reproducible = dropout == again
    print(f"  a second run from the same seed repeats every loss: {reproducible}")
    if not reproducible:
        failures.append("the dropout run is not reproducible")

    fallbacks = torch_backend.fallback_counts()
    print(f"\noperators that ran through the CPU fallback: {sum(fallbacks.values())}")
    for name, count in sorted(fallbacks.items()):
        print(f"  {name:40s} {count}")
    if fallbacks and not arguments.allow_fallback:
        failures.append(f"{len(fallbacks)} operators fell back to the CPU")
    kernels = torch_backend.kernel_counts()
    print(f"vendor kernels that ran: {len(kernels)} kernels, {sum(kernels.values())} launches")
    if kernels:
        print("  " + ", ".join(f"{name} {count}" for name, count in sorted(kernels.items())))

    stats = module.memory_stats()
    mib = 1 << 20
    print(
        f"device memory: {stats['allocated_bytes.all.current'] / mib:.2f} MiB allocated now, "
        f"peak {stats['allocated_bytes.all.peak'] / mib:.2f} MiB, "
        f"{stats['reserved_bytes.all.current'] / mib:.2f} MiB reserved in "
        f"{stats['segment.all.current']} segment(s); {stats['allocation.all.allocated']} "
        f"allocations served by {stats['num_device_alloc']} vendor allocations"
    )

    if failures:
        print("\nFAILED: " + "; ".join(failures))
        return 1
    fell_back = "nothing fell back" if not fallbacks else "fallbacks allowed"
    print(f"\nOK: losses match the CPU, the dropout run reproduces, {fell_back}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
