"""Moving modules to the device keeps them the same modules, as with CUDA: parameters move in
place (shared ones stay shared), optimizers and hooks created before the move keep working,
and tied-weight models train exactly as on the CPU."""

from __future__ import annotations

import copy

import pytest
import torch
from conftest import DEV
from torch import nn


class TiedLM(nn.Module):
    """A language model whose output projection is its embedding (GPT-2's lm_head / wte),
    with a bias shared between two heads (BERT's MLM decoder.bias / predictions.bias)."""

    def __init__(self, vocab: int = 11, width: int = 6) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.mix = nn.Linear(width, width)
        self.head = nn.Linear(width, vocab)
        self.head.weight = self.embed.weight
        self.other_head = nn.Linear(width, vocab)
        self.other_head.bias = self.head.bias

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.mix(self.embed(ids)))
        return self.head(h) + self.other_head(h)


def tokens() -> torch.Tensor:
    return torch.tensor([[1, 4, 2, 9], [3, 3, 10, 0]])


def test_shallow_copy_rule():
    cpu, dev = torch.ones(2), torch.ones(2, device=DEV)
    assert torch._has_compatible_shallow_copy_type(cpu, dev)
    assert torch._has_compatible_shallow_copy_type(dev, cpu)
    assert torch._has_compatible_shallow_copy_type(dev, dev)
    with torch.inference_mode():  # reaches the backend key instead of the autograd key
        assert torch._has_compatible_shallow_copy_type(cpu, dev)
    # Unchanged where no device tensor is involved, and for layouts c10 keeps apart.
    assert torch._has_compatible_shallow_copy_type(cpu, cpu.double())
    assert not torch._has_compatible_shallow_copy_type(cpu, torch.ones(2, device="meta"))
    assert not torch._has_compatible_shallow_copy_type(cpu.to_sparse(), dev)


def test_tied_parameters_stay_tied():
    model = TiedLM()
    before = {name: p for name, p in model.named_parameters()}
    moved = model.to(DEV)
    assert moved is model
    assert model.head.weight is model.embed.weight
    assert model.other_head.bias is model.head.bias
    for name, p in model.named_parameters():
        assert p is before[name], name
        assert p.device.type == DEV
    # named_parameters deduplicates shared parameters, as on the CPU
    assert len(list(model.parameters())) == len(list(TiedLM().parameters()))


def test_tied_model_trains_like_cpu():
    torch.manual_seed(0)
    cpu = TiedLM()
    dev = copy.deepcopy(cpu).to(DEV)
    opt_cpu = torch.optim.SGD(cpu.parameters(), lr=0.5)
    opt_dev = torch.optim.SGD(dev.parameters(), lr=0.5)
    for _ in range(3):
        for model, opt, ids in ((cpu, opt_cpu, tokens()), (dev, opt_dev, tokens().to(DEV))):
            opt.zero_grad()
            model(ids).logsumexp(-1).mean().backward()
            opt.step()
    for (name, a), b in zip(cpu.named_parameters(), dev.parameters(), strict=True):
        torch.testing.assert_close(b.grad.cpu(), a.grad, msg=f"gradient of {name}")
        torch.testing.assert_close(b.detach().cpu(), a.detach(), msg=f"parameter {name}")
    assert dev.head.weight is dev.embed.weight


def test_optimizer_created_before_the_move_trains_the_moved_parameters():
    torch.manual_seed(0)
    model = TiedLM()
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    model.to(DEV)
    start = [p.detach().clone() for p in model.parameters()]
    model(tokens().to(DEV)).sum().backward()
    opt.step()
    for p, s in zip(model.parameters(), start, strict=True):
        assert p.device.type == DEV
        assert not torch.equal(p.detach(), s), "the optimizer did not update the device tensor"
    for group in opt.param_groups:
        for p in group["params"]:
            assert opt.state[p]["exp_avg"].device.type == DEV


def test_hooks_survive_the_move():
    model = TiedLM()
    seen = []
    model.mix.weight.register_hook(lambda g: seen.append(g.device.type))
    model.mix.weight.register_post_accumulate_grad_hook(lambda p: seen.append("accumulated"))
    model.to(DEV)
    model(tokens().to(DEV)).sum().backward()
    assert seen == [DEV, "accumulated"]


def test_gradients_move_with_their_parameters():
    model = nn.Linear(3, 2)
    model(torch.ones(1, 3)).sum().backward()
    grad = model.weight.grad.clone()
    weight = model.weight
    model.to(DEV)
    assert model.weight is weight
    assert model.weight.grad.device.type == DEV
    torch.testing.assert_close(model.weight.grad.cpu(), grad)
    model.cpu()
    assert model.weight is weight and model.weight.grad.device.type == "cpu"


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_to_device_and_dtype_keeps_identity(dtype):
    model = TiedLM()
    weight = model.embed.weight
    model.to(DEV, dtype)
    assert model.embed.weight is weight and model.head.weight is weight
    assert weight.device.type == DEV and weight.dtype == dtype


def test_half_on_the_device_keeps_identity():
    model = TiedLM().to(DEV)
    weight = model.embed.weight
    model.half()
    assert model.head.weight is weight and weight.dtype == torch.float16
    model.float()
    assert model.head.weight is weight and weight.dtype == torch.float32


def test_load_state_dict_into_a_device_model():
    source = TiedLM()
    model = TiedLM().to(DEV)
    weight = model.embed.weight
    model.load_state_dict(source.state_dict())
    assert model.embed.weight is weight and model.head.weight is weight
    torch.testing.assert_close(weight.detach().cpu(), source.embed.weight.detach())


def test_data_assignment_between_host_and_device():
    p = nn.Parameter(torch.zeros(3))
    p.data = torch.arange(3.0, device=DEV)
    assert p.device.type == DEV and p.requires_grad
    torch.testing.assert_close(p.detach().cpu(), torch.arange(3.0))
    (p * 2).sum().backward()
    assert p.grad.device.type == DEV
    p.data = torch.ones(2)
    assert p.device.type == "cpu" and p.shape == (2,)


def test_buffers_move_too():
    model = nn.BatchNorm1d(3)
    model.to(DEV)
    assert model.running_mean.device.type == DEV
    assert model.num_batches_tracked.device.type == DEV
