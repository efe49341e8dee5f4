"""pytorch/examples' mnist_hogwild pattern: a model shared with worker processes started by
torch.multiprocessing.Process (spawn), each training it in place, lock-free.  The parent sees
every worker's updates in its own copy of the parameters: the device memory is shared, not
copied."""

from __future__ import annotations

import torch
import torch.multiprocessing as mp
import torch.nn.functional as F


def train(model: torch.nn.Module, rank: int, steps: int) -> None:
    torch.manual_seed(rank)
    device = next(model.parameters()).device
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        x = torch.randn(32, 8, device=device)
        optimizer.zero_grad()
        F.mse_loss(model(x), x.sum(1, keepdim=True)).backward()
        optimizer.step()
    torch.accelerator.synchronize()


def loss_of(model: torch.nn.Module) -> float:
    torch.manual_seed(1234)
    x = torch.randn(256, 8, device=next(model.parameters()).device)
    return F.mse_loss(model(x), x.sum(1, keepdim=True)).item()


if __name__ == "__main__":
    mp.set_start_method("spawn")
    device = torch.accelerator.current_accelerator()
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1).to(device)
    model.share_memory()  # a no-op for device tensors, as on CUDA
    before = loss_of(model)
    weight = model.weight.detach().clone()
    workers = [mp.Process(target=train, args=(model, rank, 40)) for rank in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
        assert worker.exitcode == 0, worker.exitcode
    assert not torch.equal(model.weight.detach(), weight), "the workers' updates are not visible"
    after = loss_of(model)
    assert after < 0.2 * before, (before, after)
    print(f"hogwild: ok on {device} (loss {before:.3f} -> {after:.3f})")
