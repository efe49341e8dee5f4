"""DistributedDataParallel on the device, launched by torchrun:

    torchrun --standalone --nproc-per-node 2 examples/ddp.py

Each rank trains the demo's MLP on its shard of every batch on its own device
(``<device>:<local rank>``), DDP averaging the gradients over the ``tbccl`` process group that
``init_process_group()`` picks for the device.  Rank 0 then trains the same model in one
process, on the CPU, on the full batches, and compares the parameters: data parallelism must
not change the numbers beyond float rounding.  Exits 1 when they differ by more than the
tolerance.
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import torch_backend

TOLERANCE = 1e-5
SHARD = 16  # samples per rank per step


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)
    )


def make_batches(steps: int, batch: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(1)
    return [
        (
            torch.randn(batch, 32, generator=generator),
            torch.randint(0, 10, (batch,), generator=generator),
        )
        for _ in range(steps)
    ]


def optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()

    dist.init_process_group()  # no backend named: the device's (tbccl), Gloo for CPU tensors
    rank, world = dist.get_rank(), dist.get_world_size()
    device_type = torch_backend.vendor_info()["device_type"]
    local = int(os.environ.get("LOCAL_RANK", rank)) % torch.accelerator.device_count()
    torch.accelerator.set_device_index(local)
    device = torch.device(device_type, local)

    model = DistributedDataParallel(make_model().to(device))
    opt = optimizer(model)
    batches = make_batches(args.steps, SHARD * world)
    if rank == 0:
        print(
            f"DDP on {world} ranks, backend '{dist.group.WORLD.getBackendName()}', "
            f"rank 0 on {device}, {SHARD} samples per rank per step"
        )
        print(f"{'step':>5} {'loss (mean of ranks)':>22}")
    start = time.perf_counter()
    for step, (x, y) in enumerate(batches, 1):
        shard = slice(rank * SHARD, (rank + 1) * SHARD)
        loss = F.cross_entropy(model(x[shard].to(device)), y[shard].to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        mean = loss.detach()
        dist.all_reduce(mean, op=dist.ReduceOp.AVG)
        if rank == 0 and (step % 5 == 0 or step == 1):
            print(f"{step:>5} {mean.item():>22.7f}")
    elapsed = (time.perf_counter() - start) / args.steps

    status = 0
    if rank == 0:
        reference = make_model()
        ref_opt = optimizer(reference)
        for x, y in batches:
            loss = F.cross_entropy(reference(x), y)
            ref_opt.zero_grad()
            loss.backward()
            ref_opt.step()
        diff = max(
            (p.detach().cpu() - q.detach()).abs().max().item()
            for p, q in zip(model.module.parameters(), reference.parameters(), strict=True)
        )
        same = diff <= TOLERANCE
        print(
            f"parameters after {args.steps} steps vs one process on the full batch (CPU): "
            f"max |difference| {diff:.2e}, tolerance {TOLERANCE:.0e}: "
            f"{'match' if same else 'DIFFER'}"
        )
        print(f"{elapsed * 1e3:.2f} ms per DDP step")
        status = 0 if same else 1
    dist.destroy_process_group()
    return status


if __name__ == "__main__":
    raise SystemExit(main())
