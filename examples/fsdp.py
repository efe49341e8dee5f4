"""FSDP2 (``fully_shard``) on the device, launched by torchrun:

    torchrun --standalone --nproc-per-node 2 examples/fsdp.py

Each rank holds half of every parameter of the demo's transformer encoder block (each linear
layer and the embedding are sharded units, the block the root), trains on its half of every
batch on its own device, and FSDP2 gathers the parameters for each layer's forward and backward
and reduce-scatters the gradients over the ``tbccl`` process group -- through the vendor's
collectives library when it has one.  Rank 0 then trains the same block in one process, on
the CPU, on the full batches, and compares the parameters (gathered with ``full_tensor()``):
sharding must not change the numbers beyond float rounding.  Exits 1 when they differ by more
than the tolerance.  (SGD with momentum, as examples/ddp.py: Adam's normalised step turns the
rounding-level differences of near-zero gradients, summed in another order, into steps of the
full learning rate, and the comparison would measure that instead.)
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from models import batches, build
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

import torch_backend

TOLERANCE = 1e-5


def optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    dist.init_process_group()  # no backend named: the device's (tbccl)
    rank, world = dist.get_rank(), dist.get_world_size()
    device_type = torch_backend.vendor_info()["device_type"]
    local = int(os.environ.get("LOCAL_RANK", rank)) % torch.accelerator.device_count()
    torch.accelerator.set_device_index(local)
    device = torch.device(device_type, local)
    mesh = init_device_mesh(device_type, (world,))

    model = build("encoder", device_type, dropout=0.0).to(device)
    for layer in model.children():
        if isinstance(layer, (nn.Linear, nn.Embedding)):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    opt = optimizer(model)
    data = batches("encoder", args.steps)
    shard = data[0][0].shape[0] // world
    if rank == 0:
        print(
            f"FSDP2 on {world} ranks, backend '{dist.group.WORLD.getBackendName()}', "
            f"rank 0 on {device}, encoder block, {shard} samples per rank per step"
        )
        print(f"{'step':>5} {'loss (mean of ranks)':>22}")
    start = time.perf_counter()
    for step, (x, y) in enumerate(data, 1):
        part = slice(rank * shard, (rank + 1) * shard)
        loss = F.cross_entropy(model(x[part].to(device)), y[part].to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        mean = loss.detach()
        dist.all_reduce(mean, op=dist.ReduceOp.AVG)
        if rank == 0 and (step % 5 == 0 or step == 1):
            print(f"{step:>5} {mean.item():>22.7f}")
    elapsed = (time.perf_counter() - start) / args.steps
    full = [p.full_tensor().cpu() for p in model.parameters()]  # a collective: every rank

    status = 0
    if rank == 0:
        reference = build("encoder", "cpu", dropout=0.0)
        ref_opt = optimizer(reference)
        for x, y in data:
            loss = F.cross_entropy(reference(x), y)
            ref_opt.zero_grad()
            loss.backward()
            ref_opt.step()
        diff = max(
            (p - q.detach()).abs().max().item()
            for p, q in zip(full, reference.parameters(), strict=True)
        )
        same = diff <= TOLERANCE
        print(
            f"parameters after {args.steps} steps vs one process on the full batch (CPU): "
            f"max |difference| {diff:.2e}, tolerance {TOLERANCE:.0e}: "
            f"{'match' if same else 'DIFFER'}"
        )
        print(f"{elapsed * 1e3:.2f} ms per FSDP2 step")
        status = 0 if same else 1
    dist.destroy_process_group()
    return status


if __name__ == "__main__":
    raise SystemExit(main())
