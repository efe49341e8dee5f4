"""Operators the OpInfo suite cannot judge against the CPU: random sampling (checked by its
distribution), fused optimizer steps and embedding backward (OpInfo skips or lacks them), and
in-place activations.  Vendor-agnostic: with or without native kernels the results must hold;
``kernel_counts`` shows which kernels the device ran."""

from __future__ import annotations

import copy
import math

import pytest
import torch
from conftest import DEV

import torch_backend

N = 1 << 18


def test_uniform_distribution():
    x = torch.empty(N, device=DEV).uniform_(-2.0, 3.0).cpu()
    assert x.min() >= -2.0 and x.max() < 3.0
    # mean 0.5, variance 25/12: five standard errors
    assert abs(x.mean().item() - 0.5) < 5 * math.sqrt(25 / 12 / N)
    assert abs(x.var().item() - 25 / 12) < 0.02
    assert torch.histc(x, bins=10, min=-2, max=3).min() > 0.09 * N


def test_normal_distribution():
    x = torch.empty(N, device=DEV).normal_(1.5, 2.0).cpu()
    assert abs(x.mean().item() - 1.5) < 5 * 2.0 / math.sqrt(N)
    assert abs(x.std().item() - 2.0) < 0.02
    inside = ((x - 1.5).abs() < 2.0).float().mean().item()
    assert abs(inside - 0.6827) < 0.005  # one standard deviation


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_bernoulli_and_dropout(p):
    draws = torch.empty(N, device=DEV).bernoulli_(p).cpu()
    assert set(draws.unique().tolist()) <= {0.0, 1.0}
    assert abs(draws.mean().item() - p) < 5 * math.sqrt(p * (1 - p) / N)
    x = torch.randn(N, device=DEV)
    y = torch.nn.functional.dropout(x, p=p, training=True)
    kept = y != 0
    assert abs(kept.float().mean().item() - (1 - p)) < 5 * math.sqrt(p * (1 - p) / N)
    torch.testing.assert_close(y[kept], x[kept] / (1 - p))


def test_random_streams_do_not_repeat():
    torch.manual_seed(7)
    a = torch.empty(1000, device=DEV).uniform_()
    b = torch.empty(1000, device=DEV).uniform_()
    assert not torch.equal(a, b)
    torch.manual_seed(7)
    assert torch.equal(torch.empty(1000, device=DEV).uniform_(), a)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_random_reduced_precision(dtype):
    x = torch.empty(N, device=DEV, dtype=dtype).normal_()
    assert x.dtype == dtype
    assert abs(x.float().mean().item()) < 0.02
    assert abs(x.float().std().item() - 1.0) < 0.02


def _train(optimizer_class, device, steps=3, **options):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    model = copy.deepcopy(model).to(device)
    optimizer = optimizer_class(model.parameters(), **options)
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        x = torch.randn(32, 8, generator=generator).to(device)
        loss = model(x).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return [p.detach().cpu() for p in model.parameters()]


@pytest.mark.parametrize(
    ("optimizer_class", "options"),
    [
        (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
        (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True, "maximize": True}),
        (torch.optim.Adam, {"lr": 0.01, "weight_decay": 0.01}),
        (torch.optim.Adam, {"lr": 0.01, "amsgrad": True}),
        (torch.optim.AdamW, {"lr": 0.01, "weight_decay": 0.1}),
        (torch.optim.AdamW, {"lr": 0.01, "amsgrad": True, "maximize": True}),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "-".join(value),
)
@pytest.mark.parametrize("implementation", ["fused", "foreach", "for-loop"])
def test_optimizer_steps_match_cpu(optimizer_class, options, implementation):
    flags = {"fused": {"fused": True}, "foreach": {"foreach": True}, "for-loop": {"foreach": False}}
    options = {**options, **flags[implementation]}
    expected = _train(optimizer_class, "cpu", **options)
    torch_backend.reset_kernel_counts()
    actual = _train(optimizer_class, DEV, **options)
    for a, e in zip(actual, expected, strict=True):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-5)
    fused = f"_fused_{optimizer_class.__name__.lower()}_"
    if implementation == "fused" and torch_backend.op_coverage([fused])[fused] == "native":
        assert torch_backend.kernel_counts().get(fused) == 3  # one launch per step


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"padding_idx": 2},
        {"scale_grad_by_freq": True},
        {"padding_idx": 0, "scale_grad_by_freq": True},
    ],
    ids=["plain", "padding_idx", "scale_grad_by_freq", "both"],
)
def test_embedding_backward_matches_cpu(options):
    weight = torch.randn(10, 6)
    indices = torch.tensor([[0, 2, 4, 5], [4, 3, 2, 9], [2, 2, 2, 1]])
    grad = torch.randn(3, 4, 6)
    results = []
    for device in ("cpu", DEV):
        w = weight.to(device, copy=True).requires_grad_()
        out = torch.nn.functional.embedding(indices.to(device), w, **options)
        out.backward(grad.to(device))
        results.append((out.detach().cpu(), w.grad.cpu()))
    torch.testing.assert_close(results[1], results[0])


def test_in_place_activations_match_cpu():
    x = torch.randn(5, 7)
    for name in ("relu_", "sigmoid_", "tanh_", "exp_", "neg_"):
        device_tensor = x.to(DEV)
        result = getattr(device_tensor, name)()
        assert result.data_ptr() == device_tensor.data_ptr()
        torch.testing.assert_close(device_tensor.cpu(), getattr(x.clone(), name)())
    strided = x.to(DEV).t()
    strided.relu_()
    torch.testing.assert_close(strided.cpu(), x.t().relu())


@pytest.mark.parametrize("op", [torch.clamp_min, torch.clamp_max])
@pytest.mark.parametrize(
    ("dtype", "bound"),
    [
        (torch.float32, 0.25),
        (torch.float32, math.nan),
        (torch.bfloat16, -0.5),
        (torch.int32, 3),
        (torch.int64, 2.5),
    ],  # a float bound on integers promotes: the kernel declines it
)
def test_clamp_min_max_scalar_bound(op, dtype, bound):
    """clamp_min/clamp_max with a Scalar bound (OpInfo only samples tensor bounds): NaN in the
    input or the bound propagates, integers compare as integers."""
    base = torch.tensor([-3.0, -0.5, 0.0, 0.25, 1.0, 7.0, math.nan, -math.inf, math.inf])
    x = base.nan_to_num(0.0, 100.0, -100.0).to(dtype) if not dtype.is_floating_point else base
    x = x.to(dtype)
    expected = op(x, bound)
    got = op(x.to(DEV), bound).cpu()
    assert got.dtype == expected.dtype
    torch.testing.assert_close(got, expected, equal_nan=True, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool])
def test_masked_fill_broadcasts_the_mask(dtype):
    x = torch.arange(24).reshape(2, 3, 4).to(dtype)
    mask = torch.tensor([True, False, False, True])  # broadcast over the first two dims
    expected = x.clone().masked_fill_(mask, 1)
    torch_backend.reset_kernel_counts()
    got = x.to(DEV).masked_fill_(mask.to(DEV), 1).cpu()
    assert torch.equal(got, expected)
    if torch_backend.op_coverage(["masked_fill_.Scalar"])["masked_fill_.Scalar"] == "native":
        assert torch_backend.kernel_counts().get("masked_fill_.Scalar") == 1
    t = x.t() if x.dim() == 2 else x.transpose(0, 2)  # a strided self
    assert torch.equal(t.to(DEV).masked_fill(mask.to(DEV)[:2], 0).cpu(), t.masked_fill(mask[:2], 0))


def test_masked_fill_rejects_what_aten_rejects():
    x = torch.zeros(4, device=DEV)
    with pytest.raises(RuntimeError, match=r"[Mm]ask"):  # ATen's own message, via the fallback
        x.masked_fill_(torch.ones(4, dtype=torch.uint8, device=DEV), 1.0)
    with pytest.raises(RuntimeError):
        x.masked_fill_(torch.ones(3, dtype=torch.bool, device=DEV), 1.0)
    ints = torch.zeros(3, dtype=torch.int64, device=DEV)
    ints.masked_fill_(torch.ones(3, dtype=torch.bool, device=DEV), 2.0)  # declined: converts
    assert ints.cpu().tolist() == [2, 2, 2]


def test_equal_runs_on_the_device():
    x = torch.tensor([1.0, float("nan"), 3.0])
    cases = [
        (x[::2], torch.tensor([1.0, 3.0])),  # a strided view
        (x, x),  # NaN is not equal to itself
        (torch.ones(2), torch.ones(2, dtype=torch.int32)),  # compared by value, as on the CPU
        (torch.ones(2), torch.ones(3)),
        (torch.ones(0), torch.ones(0)),
    ]
    for a, b in cases:
        assert torch.equal(a.to(DEV), b.to(DEV)) == torch.equal(a, b), (a, b)
    with pytest.raises(RuntimeError, match="Cannot compare two tensors on different devices"):
        torch.equal(torch.ones(2, device=DEV), torch.ones(2))
