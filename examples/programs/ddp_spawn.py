"""DistributedDataParallel over torch.multiprocessing.spawn (the DDP tutorial's launcher), with
a checkpoint and a resumed run, as pytorch/examples' ddp tutorial series does:

1. two ranks train for a few steps, each on its own shard, then rank 0 saves a checkpoint;
2. a second spawn loads it on every rank (map_location to each rank's device) and trains on.

The ranks' parameters must be identical after each phase, and the resumed run must end where
one uninterrupted run of the same steps ends.
"""

from __future__ import annotations

import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

WORLD = 2


def batches(first: int, count: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    out = []
    for step in range(first, first + count):
        generator = torch.Generator().manual_seed(step)
        x = torch.randn(2 * WORLD * 4, 16, generator=generator)
        out.append((x, x[:, :4].sum(1, keepdim=True)))
    return out


def worker(rank: int, rendezvous: str, checkpoint: str, phase: str, results: str) -> None:
    # The tutorial's MASTER_ADDR/MASTER_PORT needs a port no other process takes between choosing
    # it and rank 0 listening on it; a file the ranks share has no such window.
    dist.init_process_group(init_method=f"file://{rendezvous}", rank=rank, world_size=WORLD)
    device_type = torch.accelerator.current_accelerator().type
    device = torch.device(device_type, rank % torch.accelerator.device_count())
    torch.accelerator.set_device_index(device.index)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    model = DistributedDataParallel(model.to(device))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    first = 0
    if phase == "resume":
        state = torch.load(checkpoint, map_location=device)
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        first = state["step"]
    steps = {"first": 4, "resume": 4, "whole": 8}[phase]
    for x, y in batches(first, steps):
        shard = slice(rank * len(x) // WORLD, (rank + 1) * len(x) // WORLD)
        optimizer.zero_grad()
        F.mse_loss(model(x[shard].to(device)), y[shard].to(device)).backward()
        optimizer.step()
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(WORLD)]
    dist.all_gather(gathered, flat)
    assert all(torch.equal(g, gathered[0]) for g in gathered), "the ranks' parameters differ"
    if rank == 0:
        if phase == "first":
            torch.save(
                {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                 "step": steps},
                checkpoint,
            )  # fmt: skip
        torch.save(flat.cpu(), f"{results}.{phase}")
    dist.destroy_process_group()


def main(directory: str) -> None:
    checkpoint, results = f"{directory}/checkpoint.pt", f"{directory}/params"
    for phase in ("first", "resume", "whole"):
        rendezvous = f"{directory}/rendezvous.{phase}"
        mp.spawn(worker, args=(rendezvous, checkpoint, phase, results), nprocs=WORLD)
    resumed, whole = torch.load(f"{results}.resume"), torch.load(f"{results}.whole")
    difference = (resumed - whole).abs().max().item()
    assert difference == 0.0, f"the resumed run ends {difference} away from the whole run"
    device = torch.accelerator.current_accelerator()
    print(f"ddp over mp.spawn with a resumed checkpoint: ok on {device}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(tmp)
    sys.exit(0)
