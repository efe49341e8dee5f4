"""CUDA Graphs, as PyTorch's CUDA Graphs notes write them, on whatever device is loaded.

    python graphs.py whole|partial|amp|pools

Each mode checks its outcome against eager execution of the same steps.
"""

from __future__ import annotations

import copy
import sys

import torch
import torch.nn.functional as F

device = torch.accelerator.current_accelerator()
dm = torch.get_device_module(device)


def mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    layers = [torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)]
    return torch.nn.Sequential(*layers).to(device)


def whole() -> None:
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    static_input = torch.randn(16, 32, device=device)
    static_target = torch.randn(16, 8, device=device)
    side = dm.Stream()
    side.wait_stream(dm.current_stream())
    with dm.stream(side):  # warm-up on a side stream, as the notes ask
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            F.mse_loss(model(static_input), static_target).backward()
            optimizer.step()
    dm.current_stream().wait_stream(side)
    reference = copy.deepcopy(model)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.05, momentum=0.9)
    reference_optimizer.load_state_dict(copy.deepcopy(optimizer.state_dict()))
    graph = dm.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with dm.graph(graph):
        static_loss = F.mse_loss(model(static_input), static_target)
        static_loss.backward()
        optimizer.step()
    for _ in range(5):
        data, target = torch.randn(16, 32, device=device), torch.randn(16, 8, device=device)
        static_input.copy_(data)
        static_target.copy_(target)
        graph.replay()
        reference_optimizer.zero_grad(set_to_none=True)
        expected = F.mse_loss(reference(data), target)
        expected.backward()
        reference_optimizer.step()
        assert static_loss.item() == expected.item(), (static_loss.item(), expected.item())


def partial() -> None:
    torch.manual_seed(0)
    module1 = torch.nn.Linear(32, 64).to(device)
    module2 = torch.nn.Linear(64, 8).to(device)
    reference1, reference2 = copy.deepcopy(module1), copy.deepcopy(module2)
    x = torch.randn(16, 32, device=device)
    h = torch.randn(16, 64, device=device, requires_grad=True)
    module1, module2 = dm.make_graphed_callables((module1, module2), ((x,), (h,)))
    optimizer = torch.optim.SGD([*module1.parameters(), *module2.parameters()], lr=0.1)
    reference_optimizer = torch.optim.SGD(
        [*reference1.parameters(), *reference2.parameters()], lr=0.1
    )
    for _ in range(5):
        data, target = torch.randn(16, 32, device=device), torch.randn(16, 8, device=device)
        optimizer.zero_grad(set_to_none=True)
        loss = F.mse_loss(module2(torch.relu(module1(data))), target)
        loss.backward()
        optimizer.step()
        reference_optimizer.zero_grad(set_to_none=True)
        expected = F.mse_loss(reference2(torch.relu(reference1(data))), target)
        expected.backward()
        reference_optimizer.step()
        assert loss.item() == expected.item(), (loss.item(), expected.item())


def amp() -> None:
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler(device.type)
    torch.manual_seed(1)
    static_input = torch.randn(16, 32, device=device)
    static_target = static_input[:, :8].sin()  # learnable: the loss must fall

    def step() -> torch.Tensor:
        with torch.autocast(device.type, dtype=torch.bfloat16, cache_enabled=False):
            loss = F.mse_loss(model(static_input).float(), static_target)
        scaler.scale(loss).backward()
        return loss

    side = dm.Stream()
    side.wait_stream(dm.current_stream())
    with dm.stream(side):
        optimizer.zero_grad(set_to_none=False)
        step()
    dm.current_stream().wait_stream(side)
    optimizer.zero_grad(set_to_none=False)
    graph = dm.CUDAGraph()
    with dm.graph(graph):
        static_loss = step()
    losses = []
    for _ in range(30):
        optimizer.zero_grad(set_to_none=False)
        graph.replay()
        scaler.step(optimizer)  # reads the found-inf flag on the host: outside the graph
        scaler.update()
        losses.append(static_loss.item())
    assert losses[-1] < 0.5 * losses[0], losses


def pools() -> None:
    x = torch.randn(1024, device=device)
    first, second = dm.CUDAGraph(), dm.CUDAGraph()
    with dm.graph(first):
        y = (x * 2).relu()
    with dm.graph(second, pool=first.pool()):  # the notes' shared-pool recipe
        z = y.sum() + x.mean()
    for _ in range(3):
        x.copy_(torch.randn(1024, device=device))
        first.replay()
        second.replay()
        expected = (x * 2).relu().sum() + x.mean()
        torch.testing.assert_close(z, expected)


if __name__ == "__main__":
    {"whole": whole, "partial": partial, "amp": amp, "pools": pools}[sys.argv[1]]()
    print(f"graphs {sys.argv[1]}: ok on {device}")
