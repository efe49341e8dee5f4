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


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32],
)
@pytest.mark.parametrize(
    ("start", "end", "step"),
    [(0, 10, 1), (0.1, 50.3, 0.37), (-3.3, 7.1, 0.0123), (100, -5, -1.7), (0.5, 3000, 0.29)],
)
def test_arange_rounds_every_element_as_the_cpu(dtype, start, end, step):
    """Bit for bit: ATen's CPU kernel rounds the first element of each vector and the others
    differently (OpInfo reaches arange only through other operators)."""
    if not dtype.is_floating_point:
        start, end, step = int(start), int(end), int(step) or 1
    expected = torch.arange(start, end, step, dtype=dtype)
    got = torch.arange(start, end, step, dtype=dtype, device=DEV).cpu()
    assert got.dtype == expected.dtype
    assert torch.equal(got, expected)


def test_arange_out_keeps_a_shape_of_the_right_size():
    out = torch.empty(2, 5, device=DEV)
    torch.arange(0.0, 10.0, out=out)  # ATen keeps [2, 5]: only the element count must match
    assert torch.equal(out.cpu(), torch.arange(0.0, 10.0).view(2, 5))
    with pytest.warns(UserWarning, match="resized"):  # ATen's warning, ATen's resize
        torch.arange(0.0, 10.0, out=(small := torch.empty(3, device=DEV)))
    assert small.shape == (10,)


@pytest.mark.parametrize(
    "index",
    [
        lambda x: x[torch.tensor([0, 7])],  # host indices go to the device, as ATen moves them
        lambda x: x[:, torch.tensor([1, -6], device=x.device)],
        lambda x: x.index_put_(
            (torch.tensor([9], device=x.device),), torch.ones(5, device=x.device)
        ),
    ],
)
def test_indices_out_of_range_fail_on_the_device(index):
    x = torch.zeros(5, 5, device=DEV)
    with pytest.raises((IndexError, RuntimeError), match="out of bounds"):
        index(x)
        torch.accelerator.synchronize()
    assert torch.equal(x.cpu(), torch.zeros(5, 5))  # nothing written, the device usable


def test_index_with_masks_and_host_indices_matches_cpu():
    x = torch.randn(4, 5, 3)
    mask = torch.rand(4, 5) > 0.4
    rows = torch.tensor([3, 0, 3])
    for index in [(mask,), (rows, slice(None), torch.tensor([2, 0, 1])), (slice(None), rows.int())]:
        device_index = tuple(i.to(DEV) if isinstance(i, torch.Tensor) else i for i in index)
        assert torch.equal(x.to(DEV)[device_index].cpu(), x[index])
        assert torch.equal(x.to(DEV)[index].cpu(), x[index])  # host index tensors
    for accumulate in (False, True):
        expected = x.clone().index_put_((rows,), torch.ones(5, 3), accumulate=accumulate)
        got = x.to(DEV).index_put_((rows.to(DEV),), torch.ones(5, 3, device=DEV), accumulate)
        torch.testing.assert_close(got.cpu(), expected, rtol=0, atol=0)
    got = x.to(DEV)
    got[mask.to(DEV)] = -1.0
    expected = x.clone()
    expected[mask] = -1.0
    assert torch.equal(got.cpu(), expected)


def test_index_put_mask_checks_values_against_its_count():
    x = torch.zeros(4, 2, device=DEV)
    mask = torch.tensor([True, False, True, False], device=DEV)  # selects 2 rows
    with pytest.raises((IndexError, RuntimeError), match="shape mismatch"):
        x.index_put_((mask,), torch.ones(3, 2, device=DEV))
        torch.accelerator.synchronize()
    x.index_put_((mask,), torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=DEV))
    assert x.cpu().tolist() == [[1, 2], [0, 0], [3, 4], [0, 0]]


def test_isin_with_a_number_compares_in_the_tensors_dtype():
    for elements, test in [
        (torch.arange(-3, 6), 4),
        (torch.tensor([0.1, 0.2, float("nan")], dtype=torch.float16), 0.1),  # 0.1 in float16
        (torch.tensor([1, 44, -3], dtype=torch.int8), 300),  # 300 converts to int8: 44
        (torch.arange(6), 2.5),  # declined: ATen promotes to float
    ]:
        for invert in (False, True):
            got = torch.isin(elements.to(DEV), test, invert=invert).cpu()
            assert torch.equal(got, torch.isin(elements, test, invert=invert))


def test_declined_calls_stay_right():
    """Calls these kernels decline run on the CPU fallback with ATen's semantics."""
    elements, tests = torch.arange(6), torch.tensor([1.5, 2.0, 5.0])  # promoted to float
    assert torch.equal(
        torch.isin(elements.to(DEV), tests.to(DEV)).cpu(), torch.isin(elements, tests)
    )
    with pytest.raises(RuntimeError, match="numel"):  # ATen rejects; its meta function does not
        torch.empty(0, device=DEV).max()
    with pytest.raises(RuntimeError, match="dtype"):
        torch.dot(torch.ones(3, device=DEV), torch.ones(3, device=DEV, dtype=torch.float64))


def test_causal_mask_construction_runs_on_the_device():
    """A GPT-2 / Hugging Face style attention mask: matches the CPU; with every operator it
    uses native, nothing falls back."""

    def masks(device):
        t, min_value = 8, torch.finfo(torch.float32).min
        causal = torch.tril(torch.ones(16, 16, dtype=torch.bool, device=device))[:t, :t]
        attention = torch.ones(2, t, dtype=torch.long, device=device)
        attention[1, :3] = 0
        position = torch.arange(0, t, dtype=torch.long, device=device).unsqueeze(0)
        mask = torch.triu(torch.full((t, t), min_value, device=device), diagonal=1)
        mask = mask * (torch.arange(t, device=device) > position.reshape(-1, 1))
        mask = mask[None, None].expand(2, 1, -1, -1).clone()
        padding = (mask + attention[:, None, None, :]) == 0
        mask = mask.masked_fill(padding, min_value)
        inverted = 1.0 - attention[:, None, None, :].float()
        inverted = inverted.masked_fill(inverted.bool(), float("-inf"))
        return causal, mask, torch.isneginf(inverted), position

    ops = ["tril.out", "triu.out", "arange.start_out", "isneginf.out", "masked_fill_.Scalar"]
    torch_backend.reset_fallback_counts()
    got = masks(DEV)
    fallbacks = torch_backend.fallback_counts()
    for a, b in zip(got, masks("cpu"), strict=True):
        assert torch.equal(a.cpu(), b)
    if all(state == "native" for state in torch_backend.op_coverage(ops).values()):
        assert not any(op.removeprefix("aten::") in ops for op in fallbacks), fallbacks


@pytest.mark.parametrize("p", [None, 2, 1, 3, float("inf"), 0])
def test_aten_norm_with_dtype_matches_cpu(p):
    """aten::norm with a dtype (C++ callers; torch.norm itself goes to linalg.vector_norm)."""
    x = torch.randn(3, 4, dtype=torch.float16)
    for dim in ([1], []):
        expected = torch.ops.aten.norm.ScalarOpt_dim_dtype(x, p, dim, True, dtype=torch.float32)
        got = torch.ops.aten.norm.ScalarOpt_dim_dtype(x.to(DEV), p, dim, True, dtype=torch.float32)
        assert got.dtype == torch.float32
        torch.testing.assert_close(got.cpu(), expected)
