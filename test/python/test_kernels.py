"""Operators the OpInfo suite cannot judge against the CPU: random sampling (checked by its
distribution), fused optimizer steps and embedding backward (OpInfo skips or lacks them),
in-place activations, the fused RNN cells (no OpInfo reaches them) and the convolutions OpInfo
does not sample.  Vendor-agnostic: with or without native kernels the results must hold;
``kernel_counts`` shows which kernels the device ran."""

from __future__ import annotations

import copy
import math
import re
import warnings

import pytest
import torch
from conftest import DEV, MODULE, run_python

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


def _philox_first_output(c0: int, c1: int, k0: int, k1: int) -> int:
    """Philox-4x32-10's first 32-bit output for the counter (c0, c1, 0, 0) and key (k0, k1)."""
    mask = 0xFFFFFFFF
    c2 = c3 = 0
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (
            ((p1 >> 32) ^ c1 ^ k0) & mask,
            p1 & mask,
            ((p0 >> 32) ^ c3 ^ k1) & mask,
            p0 & mask,
        )
        k0, k1 = (k0 + 0x9E3779B9) & mask, (k1 + 0xBB67AE85) & mask
    return c0


@pytest.mark.skipif(DEV != "ocl", reason="the opencl vendor's bernoulli_ draws")
def test_opencl_bernoulli_draws_its_counters_across_2_to_the_32():
    """opencl's bernoulli_ draws element i from Philox counter offset + 4 i (vendor.h, "Random
    numbers"), sixteen elements per work-item: lanes whose counters pass 2^32 carry into the
    counter's high word, as the scalar formula does."""
    generator = torch.Generator(device=DEV)
    generator.manual_seed(11)
    start = (1 << 32) - 4 * 7  # the eighth element's counter is 2^32
    generator.set_offset(start)
    draws = torch.empty(40, device=DEV).bernoulli_(0.5, generator=generator).cpu()
    expected = []
    for i in range(40):
        counter = start + 4 * i
        bits = _philox_first_output(counter & 0xFFFFFFFF, counter >> 32, 11, 0)
        expected.append(1.0 if (bits >> 8) / 16777216.0 < 0.5 else 0.0)
    assert draws.tolist() == expected


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
        (torch.optim.Adam, {"lr": 0.01, "maximize": True}),
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
    ("optimizer_class", "options"),
    [
        (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
        (torch.optim.SGD, {"lr": 0.1}),
        (torch.optim.Adam, {"lr": 0.01}),
        (torch.optim.AdamW, {"lr": 0.01, "weight_decay": 0.1}),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "-".join(value),
)
def test_fused_step_keeps_non_finite_parameters_as_cpu(optimizer_class, options):
    """A parameter that is already inf or NaN comes out of a fused step as it does on the CPU
    (no weight decay term that turns inf into NaN when the decay is 0)."""
    results = []
    for device in ("cpu", DEV):
        values = torch.tensor([math.inf, -math.inf, math.nan, 1.0], device=device)
        param = torch.nn.Parameter(values)
        param.grad = torch.tensor([1.0, -2.0, 0.5, 0.25], device=device)
        optimizer = optimizer_class([param], fused=True, **options)
        optimizer.step()
        optimizer.step()
        results.append(param.detach().cpu())
    torch.testing.assert_close(results[1], results[0], equal_nan=True)


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
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
def test_embedding_backward_matches_cpu(options, dtype):
    weight = torch.randn(10, 6, dtype=dtype)
    indices = torch.tensor([[0, 2, 4, 5], [4, 3, 2, 9], [2, 2, 2, 1]])
    grad = torch.randn(3, 4, 6, dtype=dtype)
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
    torch_backend.reset_fallback_counts()
    got = x.to(DEV).masked_fill_(mask.to(DEV), 1).cpu()
    assert torch.equal(got, expected)
    # a native kernel (not one the vendor declines for this dtype) takes the mask in one call
    if "aten::masked_fill_.Scalar" not in torch_backend.fallback_counts() and (
        torch_backend.op_coverage(["masked_fill_.Scalar"])["masked_fill_.Scalar"] == "native"
    ):
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
    "op",
    [
        torch.mul,
        torch.add,
        torch.lt,
        torch.ge,
        torch.eq,
        torch.clamp_min,
        lambda a, b: torch._foreach_mul([b], a.item())[0],
    ],
    ids=["mul", "add", "lt", "ge", "eq", "clamp_min", "foreach_mul"],
)
def test_a_number_before_the_tensor_matches_cpu(op):
    """A CPU scalar first and a device tensor second (ATen's foreach operators pass one): the
    kernel receives the number as its first operand."""
    x = torch.tensor([-1.5, 0.0, 2.0, 3.0, math.nan])
    two = torch.tensor(2.0)
    torch_backend.reset_kernel_counts()
    got = op(two, x.to(DEV)).cpu()
    torch.testing.assert_close(got, op(two, x), equal_nan=True, rtol=0, atol=0)
    # a vendor whose kernel serves the operator serves this call too, not the CPU fallback
    kernels = {torch.lt: "lt.Tensor_out", torch.ge: "ge.Tensor_out", torch.eq: "eq.Tensor_out"}
    kernels |= {torch.add: "add.out", torch.clamp_min: "clamp_min.Tensor_out"}
    name = kernels.get(op, "mul.out")
    if torch_backend.op_coverage([name])[name] == "native":
        assert torch_backend.kernel_counts().get(name, 0) == 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.uint8])
def test_elementwise_numbers_and_offsets_in_every_position_match_cpu(dtype):
    """The elementwise engine's launches bind only the operands that are memory and pass the
    numbers, alpha and beta and each operand's offset in one argument block (opencl's
    tb_map_dense): every position of a number among one to three operands, alpha, a bool
    output, and views that start inside their storage, against the CPU (integers bit for bit,
    floats within rounding: a vendor may fuse a multiply-add the CPU rounds twice)."""
    generator = torch.Generator().manual_seed(3)
    if dtype.is_floating_point:
        base = torch.randn(3, 41, generator=generator, dtype=dtype)
    else:
        base = torch.randint(0, 9, (3, 41), generator=generator, dtype=dtype)
    a, b, c = base[0, 1:], base[1, :-1], base[2, 1:].clone()
    cond = a > b
    cases = [
        lambda a, b, c: a + b,
        lambda a, b, c: torch.add(a, b, alpha=3),
        lambda a, b, c: a * 2,
        lambda a, b, c: 2 - a,
        lambda a, b, c: torch.where(cond.to(a.device), a, 5),
        lambda a, b, c: torch.where(cond.to(a.device), 5, b),
        lambda a, b, c: torch.where(cond.to(a.device), a, b),
        lambda a, b, c: torch.clamp(a, 2, 6),
        lambda a, b, c: a > b,
        lambda a, b, c: a.eq(4),
    ]
    if dtype.is_floating_point:
        cases += [
            lambda a, b, c: torch.addcmul(a, b, c, value=0.5),
            lambda a, b, c: torch.lerp(a, b, 0.25),
            lambda a, b, c: torch.lerp(a, b, c),
        ]
    exact = {} if dtype.is_floating_point else {"rtol": 0, "atol": 0}
    for i, case in enumerate(cases):
        expected = case(a, b, c)
        got = case(a.to(DEV), b.to(DEV), c.to(DEV)).cpu()
        torch.testing.assert_close(got, expected, msg=f"case {i}", **exact)
        offset = case(base.to(DEV)[0, 1:], base.to(DEV)[1, :-1], c.to(DEV)).cpu()
        torch.testing.assert_close(offset, expected, msg=f"case {i}, views", **exact)


@pytest.mark.parametrize("ndim", range(1, 9))
def test_elementwise_over_strided_views_of_every_rank_matches_cpu(ndim):
    """Strided operands of one to eight dimensions that do not collapse (opencl's tb_map_grid
    folds the dimensions past the two innermost into its grid's third): a permuted input
    and a broadcast one into a strided output, and a copy into a permuted view, sizes that are
    not multiples of a work-group's, bit for bit against the CPU."""
    generator = torch.Generator().manual_seed(ndim)
    sizes = [3, 5, 2, 7, 3, 2, 4, 3][:ndim]
    order = list(range(ndim))[::-1] if ndim < 4 else [1, 0, *range(ndim - 1, 1, -1)]
    x = torch.randint(-50, 50, [sizes[d] for d in order], generator=generator).float()
    x = x.permute([order.index(d) for d in range(ndim)])  # of shape `sizes`, permuted strides
    y = torch.randint(-50, 50, [1, *sizes[1:]], generator=generator).float()  # broadcast
    every_other = (slice(None, None, 2),) * ndim
    out = torch.zeros([2 * s for s in sizes], device=DEV)[every_other]  # strided
    got = torch.add(x.to(DEV), y.to(DEV), alpha=3, out=out)
    expected = torch.add(x, y, alpha=3, out=torch.zeros([2 * s for s in sizes])[every_other])
    assert got.stride() == expected.stride()
    torch.testing.assert_close(got.cpu(), expected, rtol=0, atol=0)
    unpermute = [order.index(d) for d in range(ndim)]
    target = torch.zeros([sizes[d] for d in order], device=DEV).permute(unpermute)
    target.copy_(x.exp().to(DEV))
    torch.testing.assert_close(target.cpu(), x.exp(), rtol=1e-6, atol=0)


@pytest.mark.parametrize(
    "dtype",
    [torch.int64, torch.int32, torch.uint8, torch.float32, torch.float64, torch.float16,
     torch.bfloat16],
    ids=str,
)  # fmt: skip
def test_rounded_division_and_remainder_match_cpu(dtype):
    """div with rounding_mode "floor" and "trunc", floor_divide (``//``, beam search's),
    remainder (``%``) and fmod: signs of every mix, a divisor of -1, numbers and 0-d tensors as
    divisors, and for floats the CPU's infinities and NaN of a zero divisor -- bit for bit
    (float16 and bfloat16 included: the CPU rounds a rounded quotient by a tensor step by step
    in the dtype, by a number in float), without the CPU fallback where the device has
    div.out_mode and remainder.Tensor_out.  An integer division by the number 0 raises
    ZeroDivisionError, as on the CPU."""
    generator = torch.Generator().manual_seed(1)
    if dtype.is_floating_point:
        a = torch.randn(300, generator=generator, dtype=dtype) * 10
        b = torch.randn(300, generator=generator, dtype=dtype) * 3
        a[:5] = torch.tensor([5.0, -5.0, 0.0, math.inf, -7.5], dtype=dtype)
        b[:5] = torch.tensor([0.0, 0.0, -2.0, 2.0, 2.5], dtype=dtype)
    else:
        low = 0 if dtype == torch.uint8 else -100
        a = torch.randint(low, 100, (300,), generator=generator, dtype=dtype)
        b = torch.randint(low, 100, (300,), generator=generator, dtype=dtype)
        b[b == 0] = 7
        if dtype != torch.uint8:
            b[:3] = -1
    divisor = 3 if dtype == torch.uint8 else -3
    cases = {
        "floor": lambda x, y: torch.div(x, y, rounding_mode="floor"),
        "trunc": lambda x, y: torch.div(x, y, rounding_mode="trunc"),
        "//": lambda x, y: x // y,
        "%": lambda x, y: x % y,
        "// number": lambda x, y: x // divisor,
        "% number": lambda x, y: x % divisor,
        "//=": lambda x, y: x.clone().floor_divide_(y),
        "// 0-d": lambda x, y: x // y[5],
        "trunc 0-d": lambda x, y: torch.div(x, y[6], rounding_mode="trunc"),
    }
    native = torch_backend.op_coverage(["div.out_mode", "remainder.Tensor_out"])
    torch_backend.reset_fallback_counts()
    for name, case in cases.items():
        got = case(a.to(DEV), b.to(DEV)).cpu()
        torch.testing.assert_close(got, case(a, b), rtol=0, atol=0, equal_nan=True, msg=name)
    if set(native.values()) == {"native"} and dtype.itemsize > 2:  # opencl has no 16-bit floats
        assert torch_backend.fallback_counts() == {}
    got = torch.fmod(a.to(DEV), b.to(DEV)).cpu()
    torch.testing.assert_close(got, torch.fmod(a, b), rtol=0, atol=0, equal_nan=True)
    if not dtype.is_floating_point:
        for case in (
            lambda x: x // 0,
            lambda x: x % 0,
            lambda x: torch.div(x, 0, rounding_mode="trunc"),
        ):
            with pytest.raises(RuntimeError, match="ZeroDivisionError"):
                case(a.to(DEV))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
def test_erfinv_matches_cpu(dtype):
    """erfinv over (-1, 1) -- its steep ends included -- and at +-1 (infinities), beyond
    (NaN), NaN and -0.0, as the CPU gives it (float16 computed in float, as the CPU does), on
    the device's kernel where it has one."""
    grid = torch.linspace(-1, 1, 4001, dtype=torch.float64)[1:-1]
    ends = 1 - torch.logspace(-12, -1, 50, dtype=torch.float64)
    special = torch.tensor([1.0, -1.0, 1.5, -2.0, math.nan, -0.0, 0.0], dtype=torch.float64)
    x = torch.cat([grid, ends, -ends, special]).to(dtype)
    native = torch_backend.op_coverage(["erfinv.out"])["erfinv.out"] == "native"
    torch_backend.reset_fallback_counts()
    got = torch.erfinv(x.to(DEV)).cpu()
    expected = torch.erfinv(x)
    tolerance = {"float32": 2e-6, "float64": 1e-12, "float16": 1e-3}[str(dtype)[6:]]
    torch.testing.assert_close(got, expected, rtol=tolerance, atol=tolerance, equal_nan=True)
    assert torch.equal(got[-2:].signbit(), expected[-2:].signbit())  # -0.0 stays negative
    if native and (dtype != torch.float16 or DEV == "emu"):  # opencl: no 16-bit floats
        assert torch_backend.fallback_counts() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32,
                                   torch.bool], ids=str)  # fmt: skip
def test_prod_and_cumprod_match_cpu(dtype):
    """prod over one dimension (keepdim, a dtype argument, strided input), over everything,
    over nothing (1), and cumprod along each dimension: zeros, signs, integer overflow that
    wraps as the CPU's int64 does."""
    generator = torch.Generator().manual_seed(4)
    if dtype.is_floating_point:
        x = torch.randn(5, 6, 7, generator=generator, dtype=dtype)
        x[1, 2, :] = 0
    elif dtype == torch.bool:
        x = torch.rand(5, 6, 7, generator=generator) > 0.2
    else:
        x = torch.randint(-9, 10, (5, 6, 7), generator=generator, dtype=dtype)
    cases = {
        "prod dim": lambda t: t.prod(1),
        "prod keepdim": lambda t: t.prod(-1, keepdim=True),
        "prod strided": lambda t: t.transpose(0, 2).prod(0),
        "prod all": lambda t: t.prod(),
        "prod empty": lambda t: t[:, :0].prod(1),
        "cumprod 0": lambda t: t.cumprod(0),
        "cumprod 2": lambda t: t.cumprod(2),
        "cumprod strided": lambda t: t.transpose(1, 2).cumprod(1),
        "prod float64": lambda t: t.prod(2, dtype=torch.float64),
    }
    native = torch_backend.op_coverage(["prod.int_out", "cumprod.out"])
    torch_backend.reset_fallback_counts()
    for name, case in cases.items():
        got = case(x.to(DEV)).cpu()
        torch.testing.assert_close(got, case(x), msg=name)
    if set(native.values()) == {"native"}:
        assert torch_backend.fallback_counts() == {}


def test_bool_add_and_mul_are_or_and_and():
    x = torch.tensor([True, True, False, False])
    y = torch.tensor([True, False, True, False])
    for case in (lambda p, q: p + q, lambda p, q: p * q, lambda p, q: torch.add(p, q, alpha=True)):
        assert torch.equal(case(x.to(DEV), y.to(DEV)).cpu(), case(x, y))


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


@pytest.mark.parametrize("memory_format", [torch.contiguous_format, torch.channels_last])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_matches_cpu(memory_format, affine):
    """native_group_norm, ATen's composite for backends without a kernel, cannot view a
    channels-last input, and its backward has CPU and CUDA kernels only: torch_backend's
    kernels (csrc/aten/Composite.cpp) give the CPU's results, gradients and output memory
    format for both layouts, with and without the affine parameters, on the device."""
    torch.manual_seed(0)
    module = torch.nn.GroupNorm(2, 6, affine=affine)
    if affine:
        torch.nn.init.normal_(module.weight)
        torch.nn.init.normal_(module.bias)
    x = torch.randn(2, 6, 5, 3).contiguous(memory_format=memory_format)
    cotangent = torch.randn(2, 6, 5, 3)
    torch_backend.reset_fallback_counts()
    got = _forward_backward(module, x, DEV, cotangent)
    if _native("mul.out", "sum.IntList_out", "sub.out"):
        assert torch_backend.fallback_counts() == {}
    expected = _forward_backward(module, x, "cpu", cotangent)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        y = copy.deepcopy(module).to(DEV)(x.to(DEV))
        assert y.is_contiguous(memory_format=memory_format)
        assert y.stride() == module(x).stride()


def _native(*ops: str) -> bool:
    coverage = torch_backend.op_coverage(list(ops))
    return all(state == "native" for state in coverage.values())


def _forward_backward(module, x, device, cotangent):
    """Output and every gradient (input first, then the parameters') of module(x) on device."""
    module = copy.deepcopy(module).to(device)
    x = x.detach().to(device, copy=True).requires_grad_()
    out = module(x)
    out = out[0] if isinstance(out, tuple) else out
    out.backward(cotangent.to(device))
    grads = [x.grad] + [p.grad for p in module.parameters()]
    return [t.detach().cpu() for t in [out, *grads]]


class _Recurrent(torch.nn.Module):
    def __init__(self, bias: bool):
        super().__init__()
        self.lstm = torch.nn.LSTM(6, 8, num_layers=2, batch_first=True, bias=bias)
        self.gru = torch.nn.GRU(8, 5, bias=bias)

    def forward(self, x):
        y, _ = self.lstm(x)
        y, _ = self.gru(y.transpose(0, 1))
        return y


_CELLS = (
    "_thnn_fused_lstm_cell",
    "_thnn_fused_lstm_cell_backward_impl",
    "_thnn_fused_gru_cell",
    "_thnn_fused_gru_cell_backward",
)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_lstm_and_gru_match_cpu(dtype, bias):
    """nn.LSTM and nn.GRU take the fused cells on the device (the CPU composes unfused ones);
    no OpInfo reaches them."""
    torch.manual_seed(0)
    model = _Recurrent(bias).to(dtype)
    x = torch.randn(3, 5, 6, dtype=dtype)
    cotangent = torch.randn(5, 3, 5, dtype=dtype)
    expected = _forward_backward(model, x, "cpu", cotangent)
    torch_backend.reset_fallback_counts()
    got = _forward_backward(model, x, DEV, cotangent)
    tolerance = 1e-5 if dtype == torch.float32 else 1e-12
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, atol=tolerance, rtol=tolerance)
    if _native(*_CELLS):
        assert not any("thnn" in op for op in torch_backend.fallback_counts())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("grads", ["both", "hy", "cy", "none"])
def test_lstm_cell_backward_optional_gradients(dtype, grads):
    """_thnn_fused_lstm_cell_backward_impl with grad_hy / grad_cy absent (zeros; both absent:
    no outputs), against the CPU equivalent the fallback runs."""
    torch.manual_seed(0)
    gates, cx = torch.randn(4, 12, dtype=dtype), torch.randn(4, 3, dtype=dtype)
    bias = torch.randn(12, dtype=dtype)
    cpu = torch.ops.torch_backend
    _, cy, workspace = cpu.cpu__thnn_fused_lstm_cell(gates, gates * 0.5, cx, bias, bias * 2)
    grad_hy = torch.randn(4, 3, dtype=dtype) if grads in ("both", "hy") else None
    grad_cy = torch.randn(4, 3, dtype=dtype) if grads in ("both", "cy") else None
    expected = cpu.cpu__thnn_fused_lstm_cell_backward_impl(
        grad_hy, grad_cy, cx, cy, workspace, True
    )

    def dev(t):
        return None if t is None else t.to(DEV)

    got = torch.ops.aten._thnn_fused_lstm_cell_backward_impl(
        dev(grad_hy), dev(grad_cy), dev(cx), dev(cy), dev(workspace), True
    )
    tolerance = 1e-5 if dtype == torch.float32 else 2e-3  # the device computes float16 in float
    for g, e in zip(got, expected, strict=True):
        if e is None:
            assert g is None
        else:
            torch.testing.assert_close(g.cpu(), e, atol=tolerance, rtol=tolerance)


def test_convolution_beyond_one_tile_matches_cpu():
    """Convolutions large enough to split into column tiles and batch chunks, small planes
    whose items are batched side by side (and chunked by rows when many channels make one item
    too large), a channels_last input and a non-contiguous weight (OpInfo's samples are small
    and contiguous)."""
    torch.manual_seed(0)
    cases = [  # input, conv
        (torch.randn(9, 64, 32, 32), torch.nn.Conv2d(64, 16, 3, padding=1)),
        (torch.randn(1, 128, 64, 64), torch.nn.Conv2d(128, 8, 3, padding=1, bias=False)),
        (torch.randn(2, 32, 20, 20), torch.nn.Conv2d(32, 64, 3, stride=2, groups=32)),
        (torch.randn(4, 8, 15, 17).to(memory_format=torch.channels_last), torch.nn.Conv2d(8, 8, 1)),
        (torch.randn(6, 256, 4, 4), torch.nn.Conv2d(256, 136, 3, padding=1)),
        (torch.randn(1, 1024, 15, 15), torch.nn.Conv2d(1024, 8, 3, padding=1, bias=False)),
    ]
    with torch.no_grad():
        w = cases[0][1].weight
        cases[0][1].weight = torch.nn.Parameter(w.transpose(2, 3).contiguous().transpose(2, 3))
    torch_backend.reset_fallback_counts()
    for x, conv in cases:
        cotangent = torch.randn_like(conv(x))
        got = _forward_backward(conv, x, DEV, cotangent)
        expected = _forward_backward(conv, x, "cpu", cotangent)
        for g, e in zip(got, expected, strict=True):
            torch.testing.assert_close(g, e, atol=1e-3, rtol=1e-4)
    if _native("convolution_overrideable", "convolution_backward_overrideable"):
        assert not any("convolution" in op for op in torch_backend.fallback_counts())


def test_convolution_does_not_depend_on_the_thread_count():
    """The same convolutions, forward and backward, bit for bit with one worker thread and with
    three (BLAS's sums depend on how a product is cut into tasks: the cut must not depend on the
    threads).  Wide planes, small planes batched side by side, a pointwise one."""
    code = """
        import hashlib, torch, torch_backend
        dev = torch_backend.vendor_info()["device_type"]
        torch.manual_seed(0)
        digest = hashlib.sha256()
        for n, c, o, size, k, stride in [(4, 64, 48, 16, 3, 1), (4, 256, 200, 4, 3, 1),
                                         (4, 128, 256, 8, 3, 2), (3, 96, 40, 5, 1, 1)]:
            x = torch.randn(n, c, size, size, device=dev, requires_grad=True)
            conv = torch.nn.Conv2d(c, o, k, stride, k // 2).to(dev)
            y = conv(x)
            y.backward(torch.randn_like(y))
            for t in (y, x.grad, conv.weight.grad, conv.bias.grad):
                digest.update(t.detach().cpu().numpy().tobytes())
        print(digest.hexdigest())
    """
    digests = []
    for threads in ("1", "3"):
        result = run_python(code, TORCH_BACKEND_EMU_THREADS=threads)
        assert result.returncode == 0, result.stderr
        digests.append(result.stdout.strip())
    assert digests[0] == digests[1]


@pytest.mark.parametrize(
    ("name", "shapes", "dtype"),
    [
        ("conv3d", ((2, 3, 5, 6, 4), (4, 3, 3, 3, 3), (4,)), torch.float32),
        ("conv_transpose2d", ((2, 3, 5, 6), (3, 4, 3, 3), (4,)), torch.float32),
        ("conv_transpose1d", ((2, 3, 7), (3, 4, 3), (4,)), torch.float32),
        ("conv2d", ((2, 4, 6, 5), (6, 2, 3, 2), (6,)), torch.int32),
    ],
)
def test_convolutions_the_kernels_decline_match_cpu(name, shapes, dtype):
    """3-d and non-int64 integer convolutions run on the CPU fallback, right; transposed ones,
    which the kernels decline too, run as their forward and backward convolutions (csrc's
    convolution_declined), themselves on the device or the fallback."""
    torch.manual_seed(0)
    function = getattr(torch.nn.functional, name)
    kwargs = {"groups": 2} if dtype == torch.int32 else {"stride": 2, "padding": 1}
    if dtype.is_floating_point:
        x, w, b = (torch.randn(s, dtype=dtype) for s in shapes)
    else:
        x, w, b = (torch.randint(-50, 50, s, dtype=dtype) for s in shapes)
    expected = function(x, w, b, **kwargs)
    torch_backend.reset_fallback_counts()
    got = function(x.to(DEV), w.to(DEV), b.to(DEV), **kwargs)
    torch.testing.assert_close(got.cpu(), expected)
    kernel = torch_backend.op_coverage(["convolution_overrideable"])["convolution_overrideable"]
    composed = "transpose" in name and kernel == "native"
    assert ("aten::convolution_overrideable" in torch_backend.fallback_counts()) != composed
    if dtype.is_floating_point:
        grad = torch.randn_like(expected)
        cpu_inputs = [t.clone().requires_grad_() for t in (x, w, b)]
        dev_inputs = [t.to(DEV).requires_grad_() for t in (x, w, b)]
        function(*cpu_inputs, **kwargs).backward(grad)
        function(*dev_inputs, **kwargs).backward(grad.to(DEV))
        for d, c in zip(dev_inputs, cpu_inputs, strict=True):
            torch.testing.assert_close(d.grad.cpu(), c.grad)


def _batch_norm_run(device):
    """Three training steps of nn.BatchNorm2d (the last on a channels_last input), then one in
    evaluation: every output, gradient and statistic, on the CPU."""
    torch.manual_seed(0)
    module = torch.nn.BatchNorm2d(4, momentum=0.3).to(device)
    generator = torch.Generator().manual_seed(1)
    results = []
    for step in range(3):
        x = torch.randn(5, 4, 3, 6, generator=generator) * 2 + 1
        if step == 2:
            x = x.contiguous(memory_format=torch.channels_last)
        grad = torch.randn(x.shape, generator=generator)
        x = x.to(device).requires_grad_()
        out = module(x)
        out.backward(grad.to(device))
        results += [out, x.grad, module.weight.grad, module.bias.grad]
        module.zero_grad()
    results += [module.running_mean, module.running_var, module.num_batches_tracked]
    module.eval()
    x = torch.randn(2, 4, 3, 3, generator=generator).to(device)
    results.append(module(x))
    # in evaluation ATen's CPU kernel returns empty save_mean and save_invstd
    saved = torch.ops.aten.native_batch_norm(
        x, module.weight, module.bias, module.running_mean, module.running_var, False, 0.1, 1e-5
    )
    results += saved
    return [t.detach().cpu() for t in results]


def test_batch_norm_running_statistics_match_cpu():
    """nn.BatchNorm2d in training updates running_mean and running_var in place (OpInfo compares
    only outputs), and evaluation normalizes with them."""
    got, expected = _batch_norm_run(DEV), _batch_norm_run("cpu")
    assert [t.shape for t in got] == [t.shape for t in expected]
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize(
    "options",
    [
        {"scale_factor": 2},
        {"scale_factor": 1.7},
        {"scale_factor": (0.5, 2.3)},
        {"scale_factor": 1.7, "recompute_scale_factor": True},
        {"size": (7, 9)},
        {"size": (3, 2)},
    ],
    ids=["x2", "x1.7", "mixed", "recomputed", "up", "down"],
)
def test_upsample_nearest_matches_cpu(mode, options):
    """2-d nearest and nearest-exact: OpInfo's interpolate samples start with 1-d inputs, so its
    suite does not select them.  Source indices must be ATen's, float32 forward and backward,
    bfloat16 and uint8 forward, a channels_last input too."""
    x = torch.randn(2, 3, 5, 4)
    name = "upsample_nearest2d" if mode == "nearest" else "_upsample_nearest_exact2d"
    torch_backend.reset_fallback_counts()
    for source in (x, x.contiguous(memory_format=torch.channels_last)):
        xc = source.clone().requires_grad_()
        xd = source.to(DEV).requires_grad_()
        expected = torch.nn.functional.interpolate(xc, mode=mode, **options)
        got = torch.nn.functional.interpolate(xd, mode=mode, **options)
        torch.testing.assert_close(got.cpu(), expected, rtol=0, atol=0)
        grad = torch.randn(expected.shape)
        expected.backward(grad)
        got.backward(grad.to(DEV))
        torch.testing.assert_close(xd.grad.cpu(), xc.grad)
    for dtype in (torch.bfloat16, torch.uint8):
        xt = (x * 50).to(dtype)
        expected = torch.nn.functional.interpolate(xt, mode=mode, **options)
        got = torch.nn.functional.interpolate(xt.to(DEV), mode=mode, **options).cpu()
        assert got.dtype == dtype
        torch.testing.assert_close(got, expected, rtol=0, atol=0)
    if _native(f"{name}.out", f"{name}_backward.grad_input"):
        # only bfloat16's forward may fall back (opencl declines it: no such type in OpenCL C)
        fallbacks = torch_backend.fallback_counts()
        assert all(op.startswith(f"aten::{name}") and "backward" not in op for op in fallbacks)


def test_upsample_bilinear_uint8_matches_cpu():
    """uint8 bilinear has a fixed-point kernel of its own on the CPU: emu declines it, and the
    result through the fallback must still be the CPU's."""
    x = torch.randint(0, 256, (1, 3, 5, 7), dtype=torch.uint8)
    for align_corners in (False, True):
        expected = torch.nn.functional.interpolate(
            x, size=(9, 4), mode="bilinear", align_corners=align_corners
        )
        got = torch.nn.functional.interpolate(
            x.to(DEV), size=(9, 4), mode="bilinear", align_corners=align_corners
        )
        assert torch.equal(got.cpu(), expected)


def test_hardswish_hardsigmoid_in_place_match_cpu():
    x = torch.randn(6, 5) * 4
    for function in (torch.nn.functional.hardswish, torch.nn.functional.hardsigmoid):
        device_tensor = x.to(DEV)
        result = function(device_tensor, inplace=True)
        assert result.data_ptr() == device_tensor.data_ptr()
        torch.testing.assert_close(device_tensor.cpu(), function(x.clone()), rtol=0, atol=0)
        strided = x.to(DEV).t()
        function(strided, inplace=True)
        torch.testing.assert_close(strided.cpu(), function(x.t()), rtol=0, atol=0)


def _train_cnn_layers(device, steps=5):
    """A convolution-free stack of the CNN layers (batch norm, pooling, upsampling, hard
    activations) trained with SGD: its losses and parameters."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.BatchNorm2d(3),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(3, 2, 1),
        torch.nn.BatchNorm2d(3),
        torch.nn.Hardswish(),
        torch.nn.Upsample(scale_factor=2, mode="bilinear"),
        torch.nn.AvgPool2d(2, ceil_mode=True),
        torch.nn.Hardsigmoid(),
        torch.nn.AdaptiveAvgPool2d((3, 2)),
        torch.nn.Flatten(),
        torch.nn.Linear(18, 5),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    generator = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(steps):
        x = torch.randn(8, 3, 11, 11, generator=generator).to(device)
        target = torch.randint(0, 5, (8,), generator=generator).to(device)
        loss = torch.nn.functional.cross_entropy(model(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu() for p in model.parameters()]


def test_cnn_layers_train_like_cpu():
    torch_backend.reset_fallback_counts()
    losses, parameters = _train_cnn_layers(DEV)
    expected_losses, expected_parameters = _train_cnn_layers("cpu")
    torch.testing.assert_close(losses, expected_losses, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(parameters, expected_parameters, rtol=1e-4, atol=1e-5)


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
        lambda x: torch.gather(x, 1, torch.tensor([[0, 5]], device=x.device)),
        lambda x: torch.embedding(x, torch.tensor([[1, 2], [3, 5]], device=x.device)),
    ],
)
def test_indices_out_of_range_fail_on_the_device(index):
    x = torch.zeros(5, 5, device=DEV)
    try:
        # the device's fault, or ATen's own error through the CPU fallback
        with pytest.raises((IndexError, RuntimeError), match=r"out of bounds|out of range in self"):
            index(x)
            torch.accelerator.synchronize()
    finally:
        MODULE.reset_device()  # a fault found on the device lasts until reset (test_faults.py)
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
    # At the call, as CUDA (csrc/aten/HostChecks.h counts the mask): no device fault, no reset.
    x = torch.zeros(4, 2, device=DEV)
    mask = torch.tensor([True, False, True, False], device=DEV)  # selects 2 rows
    with pytest.raises(RuntimeError, match=re.escape("value tensor of shape [3, 2] cannot be")):
        x.index_put_((mask,), torch.ones(3, 2, device=DEV))
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


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize(
    "bias",
    [
        lambda dt: torch.randn(7, dtype=dt),  # a row vector, as nn.Linear's
        lambda dt: torch.randn(1, dtype=dt),  # one value for every element
        lambda dt: torch.randn((), dtype=dt),
        lambda dt: torch.randn(5, 1, dtype=dt),  # a column, broadcast along the rows
        lambda dt: torch.randn(5, 7, dtype=dt),
        lambda dt: torch.randn(7, 5, dtype=dt).t(),  # transposed storage
        lambda dt: torch.randn(14, dtype=dt)[::2],  # strided
    ],
)
def test_addmm_bias_layouts_match_cpu(dtype, bias):
    """addmm's bias is broadcast into the product by rows (a copy per row when its dtype is the
    computation's); every layout and broadcast gives the CPU's result."""
    generator = torch.Generator().manual_seed(3)
    a = torch.randn(5, 3, generator=generator).to(dtype)
    b = torch.randn(3, 7, generator=generator).to(dtype)
    c = bias(dtype)
    for beta, alpha in ((1.0, 1.0), (0.5, 2.0), (0.0, 1.0)):
        expected = torch.addmm(c.float(), a.float(), b.float(), beta=beta, alpha=alpha)
        actual = torch.addmm(c.to(DEV), a.to(DEV), b.to(DEV), beta=beta, alpha=alpha)
        tolerance = 2e-2 if dtype == torch.bfloat16 else 1e-5
        torch.testing.assert_close(actual.cpu().float(), expected, atol=tolerance, rtol=tolerance)
    batched = torch.randn(4, 5, 7, dtype=dtype)
    expected = torch.baddbmm(batched.float(), a.float().expand(4, 5, 3), b.float().expand(4, 3, 7))
    actual = torch.baddbmm(batched.to(DEV), a.to(DEV).expand(4, 5, 3), b.to(DEV).expand(4, 3, 7))
    torch.testing.assert_close(actual.cpu().float(), expected, atol=1e-1, rtol=2e-2)


def _matrix_products(dtype: torch.dtype, device: str) -> list[torch.Tensor]:
    """mm, addmm, bmm and baddbmm over the layouts and shapes a GEMM kernel's tiling has edges
    for: rows and columns around multiples of 8, 16 and 32, one column, an empty inner
    dimension, transposed and strided operands, views at offsets, broadcast batches, alpha,
    beta (0 with a NaN `self` ignores it) and the in-place forms."""
    generator = torch.Generator().manual_seed(11)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=generator, dtype=dtype).to(device)

    results = []
    for m, k, n in ((1, 3, 1), (7, 5, 10), (8, 64, 16), (9, 17, 33), (33, 1, 48), (16, 0, 50)):
        a, b = randn(m, k), randn(k, n)
        a_t, b_t = randn(k, m).t(), randn(n, k).t()  # column-major operands
        results += [a @ b, a_t @ b, a @ b_t, a_t @ b_t]
        wide = randn(m, 2 * k + 1)[:, 1 : k + 1]  # a view at an offset with a row stride
        results.append(wide @ randn(k, 2 * n)[:, ::2])  # ... and a column stride of 2
        self = randn(n)
        results.append(torch.addmm(self, a, b_t, beta=0.5, alpha=-2.0))
        results.append(torch.addmm(randn(m, 1), a_t, b))
        nan = torch.full((m, n), math.nan, dtype=dtype, device=device)
        results.append(torch.addmm(nan, a, b, beta=0.0))
        out = randn(m, n)
        results.append(out.addmm_(a, b, alpha=0.25))
    for batch, m, k, n in ((3, 5, 4, 6), (32, 16, 16, 16), (2, 9, 8, 40)):
        a, b = randn(batch, m, k), randn(batch, k, n)
        results += [torch.bmm(a, b), torch.bmm(a, randn(batch, n, k).transpose(1, 2))]
        results.append(torch.bmm(randn(m, k).expand(batch, m, k), b))  # batch stride 0
        results.append(torch.baddbmm(randn(n), a, b, beta=2.0, alpha=0.5))
        results.append(randn(batch, m, n).baddbmm_(randn(batch, k, m).transpose(1, 2), b))
    return [r.cpu() for r in results]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_matrix_products_every_layout_match_cpu(dtype):
    expected = _matrix_products(dtype, "cpu")
    actual = _matrix_products(dtype, DEV)
    tolerance = 1e-4 if dtype == torch.float32 else 1e-10
    for i, (got, want) in enumerate(zip(actual, expected, strict=True)):
        torch.testing.assert_close(
            got, want, atol=tolerance, rtol=tolerance, msg=lambda m, i=i: f"product {i}: {m}"
        )


def _row_operations(dtype: torch.dtype, device: str) -> list[torch.Tensor]:
    """softmax, log_softmax, their backwards, the reductions over the last dimension and
    layer_norm with its backward, over the layouts a row kernel's vector path has edges for:
    rows shorter than, equal to and around multiples of 8, row counts that group by 16, 8, 2
    and 1, rows at odd offsets (views), rows with a stride (they take the scalar loops), and
    NaN and infinities in a row."""
    generator = torch.Generator().manual_seed(12)
    results = []
    for rows, n in ((1, 1), (3, 7), (16, 8), (48, 13), (8, 64), (10, 200), (2, 1000)):
        base = torch.randn(rows, n + 1, generator=generator, dtype=dtype) * 4
        base[0, 1] = math.nan if rows > 1 else base[0, 1]
        if rows > 2:
            base[1, 1:] = -math.inf
            base[2, -1] = math.inf
        grad = torch.randn(rows, n, generator=generator, dtype=dtype).to(device)
        full = base.to(device)
        for x in (full[:, 1:], full.t().contiguous().t()[:, 1:]):  # offset 1; then strided
            y, log_y = torch.softmax(x, -1), torch.log_softmax(x, -1)
            results += [y, log_y, x.sum(-1), x.mean(-1), x.amax(-1), x.amin(-1)]
            results.append(torch.ops.aten._softmax_backward_data(grad, y, -1, dtype))
            results.append(torch.ops.aten._log_softmax_backward_data(grad, log_y, -1, dtype))
        # layer_norm takes dense rows: forward with and without the affine parameters, and
        # every gradient
        x = torch.randn(rows, n, generator=generator, dtype=dtype).to(device)
        weight, bias = (torch.randn(n, generator=generator, dtype=dtype).to(device) for _ in "wb")
        out, mean, rstd = torch.ops.aten.native_layer_norm(x, [n], weight, bias, 1e-5)
        results += [out, mean, rstd, torch.ops.aten.native_layer_norm(x, [n], None, None, 1e-5)[0]]
        results += torch.ops.aten.native_layer_norm_backward(
            grad, x, [n], mean, rstd, weight, bias, [True, True, True]
        )
        results.append(
            torch.ops.aten.native_layer_norm_backward(
                grad, x, [n], mean, rstd, None, None, [True, False, False]
            )[0]
        )
    return [r.cpu() for r in results]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_row_operations_every_layout_match_cpu(dtype):
    expected = _row_operations(dtype, "cpu")
    actual = _row_operations(dtype, DEV)
    tolerance = 1e-4 if dtype == torch.float32 else 1e-12  # sums of up to 1000 in any order
    for i, (got, want) in enumerate(zip(actual, expected, strict=True)):
        torch.testing.assert_close(
            got,
            want,
            atol=tolerance,
            rtol=tolerance,
            equal_nan=True,
            msg=lambda m, i=i: f"result {i}: {m}",
        )


@pytest.mark.parametrize(
    ("dtype", "exponents"),
    [
        (torch.float32, (1.0, 2.0, 3.0, -0.5, -1.0, -2.0)),
        (torch.float64, (1.0, 2.0, 3.0, -0.5, -1.0, -2.0)),
        (torch.bfloat16, (1.0, 2.0, 3.0, -1.0, -2.0, 0.75)),
        (torch.float16, (1.0, 2.0, 3.0, -0.5, 0.75)),
    ],
    ids=str,
)
def test_pow_with_a_scalar_exponent_is_the_cpus_bit_for_bit(dtype, exponents):
    """The exponents ATen computes without pow() (x ** 3 in GELU's tanh approximation, x ** -2,
    rsqrt), its per-operation rounding of bfloat16, and its rounding of the exponent to a
    reduced-precision dtype, give the CPU's bits, signed zeros and infinities included: emu's
    promise, and the CPU fallback's; another vendor's own pow rounds its own way."""
    if DEV != "emu" and _native("pow.Tensor_Scalar_out"):
        pytest.skip(f"{DEV}'s own pow kernel is not meant to round as ATen's CPU kernel")
    generator = torch.Generator().manual_seed(5)
    x = (torch.randn(4096, generator=generator) * 3).to(dtype)
    x[:6] = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, -1.0]).to(dtype)
    for exponent in exponents:
        expected = torch.pow(x, exponent)
        actual = torch.pow(x.to(DEV), exponent).cpu()
        torch.testing.assert_close(actual, expected, atol=0, rtol=0, equal_nan=True)
        numbers = ~expected.isnan()  # a NaN's sign means nothing
        assert torch.equal(torch.signbit(actual[numbers]), torch.signbit(expected[numbers]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_hardsigmoid_backward_has_the_cpus_float_slope(dtype):
    """ATen's CPU kernel multiplies by the float 1/6 for every dtype, float64 included: the
    gradient is 3e-8 from an exact 1/6 there, and a device that uses the exact one differs from
    the CPU's float64 (TIMM's mobilenetv3 gradients showed it, examples/timm_suite.py)."""
    x = torch.linspace(-4, 4, 1001, dtype=dtype)
    grad = torch.randn(1001, generator=torch.Generator().manual_seed(3), dtype=dtype)
    expected = torch.ops.aten.hardsigmoid_backward(grad, x)
    actual = torch.ops.aten.hardsigmoid_backward(grad.to(DEV), x.to(DEV)).cpu()
    torch.testing.assert_close(actual, expected, atol=0, rtol=0)


def test_pow_with_a_scalar_base_and_a_tensor_exponent():
    """pow(Scalar, Tensor): capturable Adam's bias corrections (beta ** step) on the device.
    emu rounds the base to float and calls powf, as ATen's CPU does (bit for bit); npu's
    stand-in computes in double from the unrounded base (within 1e-6)."""
    exponent = torch.tensor([0.0, 1.0, 2.5, 10.0, 1000.0, -1.0])
    rtol = 0.0 if DEV == "emu" else 1e-6
    for base in (0.9, 0.999, 2.0):
        expected = torch.pow(base, exponent)
        actual = torch.pow(base, exponent.to(DEV)).cpu()
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=0)


@pytest.mark.parametrize(
    "shifts, dims",
    [((1,), (1,)), ((-3, 2), (2, 3)), ((7,), ()), ((2, -1, 3), (0, 2, -1)), ((0,), (1,))],
    ids=str,
)
def test_roll(shifts, dims):
    """roll (Swin's shifted windows): one dimension, several, negative and oversized shifts, and
    the flattened tensor; on emu without the CPU fallback."""
    x = torch.arange(2 * 3 * 5 * 4, dtype=torch.float32).reshape(2, 3, 5, 4)
    roll = (lambda t: torch.roll(t, shifts, dims)) if dims else (lambda t: torch.roll(t, shifts[0]))
    torch_backend.reset_fallback_counts()
    torch.testing.assert_close(roll(x.to(DEV)).cpu(), roll(x), atol=0, rtol=0)
    if DEV == "emu":
        assert torch_backend.fallback_counts() == {}
    transposed = x.transpose(1, 3)  # a strided view: the flattened roll falls back on emu
    torch.testing.assert_close(roll(transposed.to(DEV)).cpu(), roll(transposed), atol=0, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.uint8])
def test_argmax_argmin_max_min_pick_the_cpus_index(dtype):
    """argmax / argmin and max / min over a dimension (accuracy, greedy decoding): the first of
    tied elements, the first NaN over any number, rows longer than a work-group's share (2000),
    a flattened tensor (dim=None) and a transposed view give the CPU's indices and values --
    samples OpInfo does not draw."""
    generator = torch.Generator().manual_seed(0)
    cases = []
    for shape, dim in [((7, 13), 1), ((7, 13), 0), ((3, 2000, 4), 1), ((2, 3, 4), None)]:
        if dtype.is_floating_point:
            x = torch.randint(-3, 4, shape, generator=generator).to(dtype)  # many ties
            x.view(-1)[[3, -2]] = math.nan
        else:
            x = torch.randint(0, 7, shape, generator=generator, dtype=dtype)
        cases.append((x, dim))
    cases.append((torch.randn(50, 3000, generator=generator).to(dtype).t(), 1))
    for x, dim in cases:
        device_x = x.to(DEV) if x.is_contiguous() else x.t().to(DEV).t()
        for keepdim in (False, True):
            for fn in (torch.argmax, torch.argmin):
                expected = fn(x, dim=dim, keepdim=keepdim)
                assert torch.equal(fn(device_x, dim=dim, keepdim=keepdim).cpu(), expected)
            if dim is None:
                continue
            for fn in (torch.max, torch.min):
                values, indices = fn(x, dim=dim, keepdim=keepdim)
                got_values, got_indices = fn(device_x, dim=dim, keepdim=keepdim)
                assert torch.equal(got_indices.cpu(), indices)
                torch.testing.assert_close(got_values.cpu(), values, equal_nan=True)


@pytest.mark.parametrize(
    ("dtype", "out_dtype"),
    [(torch.float32, None), (torch.float64, None), (torch.int32, None), (torch.bool, None),
     (torch.int64, torch.float32)],
)  # fmt: skip
def test_cumsum_gives_the_cpus_running_sums(dtype, out_dtype):
    """cumsum (position ids from an attention mask, in generate()) along each dimension, over
    rows longer than a work-group's share (3000), an empty dimension and a transposed view,
    with and without a dtype."""
    generator = torch.Generator().manual_seed(0)
    for shape, dim in [((7, 13), 1), ((7, 13), 0), ((3, 3000, 2), 1), ((4, 0, 3), 2), ((), 0)]:
        x = (torch.randn(shape, generator=generator) * 3).to(dtype)
        expected = torch.cumsum(x, dim, dtype=out_dtype)
        got = torch.cumsum(x.to(DEV), dim, dtype=out_dtype).cpu()
        assert got.dtype == expected.dtype
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-3)
    x = torch.randn(40, 3000, generator=generator).to(dtype)
    got = x.to(DEV).t().cumsum(0, dtype=out_dtype).cpu()
    torch.testing.assert_close(got, x.t().cumsum(0, dtype=out_dtype), rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.uint8])
def test_max_and_min_of_a_whole_tensor_are_the_cpus(dtype):
    """x.max() and x.min() (generate()'s stopping checks): rows over the tree (2000 elements),
    a 0-dim tensor, a NaN that wins; an empty tensor raises ATen's error, naming the fix."""
    generator = torch.Generator().manual_seed(0)
    for shape in [(7, 13), (3, 2000), ()]:
        x = (torch.randn(shape, generator=generator) * 5).to(dtype)
        if dtype.is_floating_point and x.numel() > 3:
            x.view(-1)[2] = math.nan
        for reduce in (torch.max, torch.min):
            torch.testing.assert_close(reduce(x.to(DEV)).cpu(), reduce(x), equal_nan=True)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        torch.empty(0, device=DEV, dtype=dtype).max()


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.float32])
def test_isin_gives_the_cpus_membership(dtype):
    """isin (generate()'s stop-token check, each step): inverted, an empty test set, NaN (in no
    set), a transposed view of the elements, the last tokens' slice generate() passes (not
    dense) and an out= with gaps, without the CPU fallback where the kernel is native."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randint(0, 9, (6, 7), generator=generator).to(dtype)
    test = torch.tensor([2, 5, 7]).to(dtype)
    if dtype.is_floating_point:
        x[0, 0] = math.nan
        test = torch.cat([test, torch.tensor([math.nan], dtype=dtype)])
    device_x = x.to(DEV)
    views = [lambda t: t, lambda t: t.t(), lambda t: t[:, -3:], lambda t: t[::2, 1::3]]
    native = torch_backend.op_coverage(["isin.Tensor_Tensor_out"])["isin.Tensor_Tensor_out"]
    for view in views:
        for tests in (test, test[:0]):
            for invert in (False, True):
                torch_backend.reset_fallback_counts()
                got = torch.isin(view(device_x), tests.to(DEV), invert=invert)
                assert torch.equal(got.cpu(), torch.isin(view(x), tests, invert=invert))
                if native == "native":
                    assert torch_backend.fallback_counts() == {}
    out = torch.ones(6, 14, dtype=torch.bool, device=DEV)[:, ::2]
    torch.isin(device_x, test.to(DEV), out=out)
    assert torch.equal(out.cpu(), torch.isin(x, test))


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.int64, torch.uint8, torch.bool]
)
def test_sort_and_topk_give_the_cpus_order(dtype):
    """sort (stable: the CPU's indices exactly), argsort, and topk (generate()'s top-k sampling
    and beam search; its order among equal values is the device's own, so its indices are
    checked by what they pick): ascending and descending, NaN greatest, ties, rows of 1, 37
    and 1025 elements (merge passes over runs that do not pair up), either dimension, a
    transposed input, k of 0, 1 and the whole row; no CPU fallback where the device has the
    kernels."""
    generator = torch.Generator().manual_seed(5)
    native = set(torch_backend.op_coverage(["sort.values_stable", "topk.values"]).values())
    for length in (1, 37, 1025):
        if dtype.is_floating_point:
            x = torch.randn(4, length, generator=generator, dtype=dtype)
            x[1, : length // 2] = 0.5  # ties
            x[2, ::3] = math.nan
        else:
            high = 2 if dtype == torch.bool else 9
            x = torch.randint(0, high, (4, length), generator=generator).to(dtype)
        torch_backend.reset_fallback_counts()
        for view in (lambda t: t, lambda t: t.t()):
            for dim in (0, 1):
                for descending in (False, True):
                    got = torch.sort(view(x.to(DEV)), dim=dim, descending=descending, stable=True)
                    want = torch.sort(view(x), dim=dim, descending=descending, stable=True)
                    torch.testing.assert_close(got.values.cpu(), want.values, equal_nan=True)
                    assert torch.equal(got.indices.cpu(), want.indices)
                size = view(x).shape[dim]
                for k in sorted({0, 1, min(3, size), size}) if dtype != torch.bool else ():
                    for largest in (True, False):
                        got = torch.topk(view(x.to(DEV)), k, dim=dim, largest=largest)
                        want = torch.topk(view(x), k, dim=dim, largest=largest)
                        torch.testing.assert_close(got.values.cpu(), want.values, equal_nan=True)
                        picked = torch.gather(view(x), dim, got.indices.cpu())
                        torch.testing.assert_close(picked, want.values, equal_nan=True)
        got = torch.argsort(x.to(DEV), dim=1, descending=True, stable=True).cpu()
        assert torch.equal(got, torch.argsort(x, dim=1, descending=True, stable=True))
        if native == {"native"}:
            assert torch_backend.fallback_counts() == {}
    if dtype == torch.bool:  # as on the CPU and CUDA
        with pytest.raises(RuntimeError, match=r"[Bb]ool"):
            torch.topk(x.to(DEV), 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
def test_scatter_matches_cpu(dtype):
    """scatter with a src and with a number, in place and not, either dimension, a transposed
    src, int32 indices, src larger than the index (only index's positions read), and the two
    patterns of generate(): top-p's scatter of a permutation and the repetition penalty's
    scatter_ with repeated indices of equal values; no CPU fallback where native."""
    generator = torch.Generator().manual_seed(4)
    x = torch.randint(0, 9, (5, 6), generator=generator).to(dtype)
    src = torch.randint(0, 9, (7, 8), generator=generator).to(dtype)
    permutation = torch.argsort(torch.rand(5, 6, generator=generator), dim=1)
    repeated = torch.randint(0, 6, (5, 4), generator=generator)
    gathered = torch.gather(x, 1, repeated)
    columns = torch.argsort(torch.rand(5, 4, generator=generator), dim=0)[:3]
    cases = [
        lambda t, s, i, r, g: t.scatter(1, i, s[:5, :6]),
        lambda t, s, i, r, g: t.scatter(0, columns.to(t.device), s),
        lambda t, s, i, r, g: t.scatter(1, i.int(), s.t()),
        lambda t, s, i, r, g: t.scatter(1, i[:, :2], 1 if dtype != torch.float32 else 2.5),
        lambda t, s, i, r, g: t.clone().scatter_(1, i, s[:5, :6]),
        lambda t, s, i, r, g: t.t().scatter(0, i.t(), s[:5, :6].t()),
        lambda t, s, i, r, g: t.clone().scatter_(1, r, g),
    ]
    native = torch_backend.op_coverage(["scatter.src_out", "scatter.value_out"])
    torch_backend.reset_fallback_counts()
    for n, case in enumerate(cases):
        want = case(x, src, permutation, repeated, gathered)
        got = case(*(t.to(DEV) for t in (x, src, permutation, repeated, gathered)))
        assert torch.equal(got.cpu(), want), f"case {n}"
    if set(native.values()) == {"native"}:
        assert torch_backend.fallback_counts() == {}


def test_scatter_of_an_index_out_of_range_is_an_error():
    x, src = torch.zeros(2, 3, device=DEV), torch.ones(2, 3, device=DEV)
    index = torch.tensor([[0, 1, 3], [0, 0, 0]], device=DEV)
    try:
        y = x.scatter(1, index, src)
    except RuntimeError as error:  # found at the call (the CPU fallback): nothing computed
        assert "out of bounds" in str(error)
        return
    try:
        with pytest.raises(torch.AcceleratorError, match="index 3 is out of bounds"):
            y.cpu()
        with pytest.raises(torch.AcceleratorError, match="scatter"):
            MODULE.synchronize()
    finally:
        MODULE.reset_device()


SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -3.0, 25.0, -25.0, math.inf, -math.inf, math.nan]
ACTIVATIONS = {
    "sign": torch.sign,
    "log10": torch.log10,
    "exp2": torch.exp2,
    "sinh": torch.sinh,
    "cosh": torch.cosh,
    "asin": torch.asin,
    "acos": torch.acos,
    "atan": torch.atan,
    "asinh": torch.asinh,
    "acosh": torch.acosh,
    "atanh": torch.atanh,
    "mish": torch.nn.functional.mish,
    "leaky_relu": lambda x: torch.nn.functional.leaky_relu(x, 0.2),
    "softplus": lambda x: torch.nn.functional.softplus(x, beta=2.0, threshold=10.0),
    "atan2": lambda x: torch.atan2(x, x.flip(0)),
    "hypot": lambda x: torch.hypot(x, x.flip(0)),
    "fmod": lambda x: torch.fmod(x, x.flip(0)),
    "pow": lambda x: torch.pow(x, x.flip(0)),
    "logical_and": lambda x: torch.logical_and(x, x.flip(0)),
    "logical_xor": lambda x: torch.logical_xor(x, x.flip(0)),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_math_and_activations_match_cpu_on_special_values(name, dtype):
    """The unary and binary math functions and activations (leaky_relu, softplus, mish) over
    signed zeros, domain edges, large values, infinities and NaN, against the CPU (within a few
    ulps: a device's libm may round its last bit otherwise), and leaky_relu's and softplus'
    backwards."""
    x = torch.tensor(SPECIAL, dtype=dtype)
    fn = ACTIVATIONS[name]
    torch.testing.assert_close(fn(x.to(DEV)).cpu(), fn(x), equal_nan=True, atol=1e-6, rtol=1e-5)
    if name in ("leaky_relu", "softplus", "mish"):
        x = torch.linspace(-30, 30, 121, dtype=dtype, requires_grad=True)
        (grad,) = torch.autograd.grad(fn(x).sum(), x)
        on_device = x.detach().to(DEV).requires_grad_()
        (device_grad,) = torch.autograd.grad(fn(on_device).sum(), on_device)
        torch.testing.assert_close(device_grad.cpu(), grad, atol=1e-6, rtol=1e-5)


def _pool_check(pool, x: torch.Tensor, ops: tuple[str, ...], **options) -> None:
    """`pool` of x, and its gradient, equal the CPU's; on a vendor with kernels for `ops`,
    nothing falls back."""
    torch_backend.reset_fallback_counts()
    xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
    expected, got = pool(xc, **options), pool(xd, **options)
    grad = torch.randn(expected.shape, dtype=x.dtype)
    expected.backward(grad)
    got.backward(grad.to(DEV))
    tolerance = {"rtol": 1e-6, "atol": 1e-6} if x.dtype == torch.float32 else {}
    torch.testing.assert_close(got.detach().cpu(), expected.detach(), **tolerance)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, **tolerance)
    if _native(*ops):
        assert torch_backend.fallback_counts() == {}, options


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize(
    "options",
    [
        {"kernel_size": 3, "stride": 1, "padding": 1},
        {"kernel_size": 3, "stride": 1, "padding": 1, "count_include_pad": False},
        {"kernel_size": 2},
        {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True},
        {
            "kernel_size": 3,
            "stride": 2,
            "padding": 1,
            "ceil_mode": True,
            "count_include_pad": False,
        },
        {"kernel_size": (3, 2), "stride": (2, 1), "padding": (1, 0), "ceil_mode": True},
        {"kernel_size": 2, "stride": 1, "divisor_override": 3},
    ],
    ids=["same", "exclude-pad", "k2", "ceil", "ceil-exclude-pad", "rect", "divisor"],
)
def test_average_pooling_matches_cpu(dtype, options):
    """avg_pool2d forward and backward (inception's and nfnet's pools): windows that reach into
    the padding, ceil_mode's last window, count_include_pad, divisor_override, a channels_last
    and an unbatched input."""
    x = torch.randn(2, 3, 9, 8, dtype=dtype)
    ops = ("avg_pool2d.out", "avg_pool2d_backward.grad_input")
    for source in (x, x.contiguous(memory_format=torch.channels_last), x[0]):
        _pool_check(torch.nn.functional.avg_pool2d, source, ops, **options)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("size", [(1, 1), (2, 3), (3, 3), (5, 4), (9, 8), (12, 10), (4, None)])
def test_adaptive_average_pooling_matches_cpu(dtype, size):
    """adaptive_avg_pool2d forward and backward: windows that overlap (9 -> 5), that repeat
    (8 -> 10), the identity, 1x1, a kept dimension (None)."""
    x = torch.randn(2, 3, 9, 8, dtype=dtype)
    ops = ("_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward")
    for source in (x, x.contiguous(memory_format=torch.channels_last), x[0]):
        _pool_check(torch.nn.functional.adaptive_avg_pool2d, source, ops, output_size=size)


def test_relu6_and_hardtanh_match_cpu_on_their_bounds():
    """mobilenetv2's ReLU6 (in place) and hardtanh: NaN and infinities kept, values on the bounds
    clamp and get no gradient, as ATen's kernels."""
    x = torch.tensor([float("nan"), -float("inf"), -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 6.0, 7.0, 1e30])
    torch_backend.reset_fallback_counts()
    for low, high in ((0.0, 6.0), (-1.0, 1.0), (-0.5, 0.5)):
        xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
        expected = torch.nn.functional.hardtanh(xc, low, high)
        got = torch.nn.functional.hardtanh(xd, low, high)
        torch.testing.assert_close(got.detach().cpu(), expected.detach(), equal_nan=True)
        expected.backward(torch.arange(11.0))
        got.backward(torch.arange(11.0, device=DEV))
        torch.testing.assert_close(xd.grad.cpu(), xc.grad)
    in_place = x.to(DEV)
    torch.nn.functional.relu6(in_place, inplace=True)
    torch.testing.assert_close(in_place.cpu(), torch.nn.functional.relu6(x), equal_nan=True)
    if _native("hardtanh.out", "hardtanh_", "hardtanh_backward.grad_input"):
        assert torch_backend.fallback_counts() == {}


def test_roll_matches_cpu():
    """torch.roll (Swin's shifted windows): over one or several dimensions, negative and
    oversized shifts, flattened without dims, a strided view, its gradient; ATen's errors."""
    x = torch.randn(2, 5, 6, 3)
    torch_backend.reset_fallback_counts()
    cases = [((2,), None), ((-3,), None), (1, 1), ((2, -1), (1, 2)), ((3, 3), (1, -2)), (7, 1)]
    for source in (x, x.transpose(1, 2)):
        for shifts, dims in cases:
            args = (shifts,) if dims is None else (shifts, dims)
            assert torch.equal(torch.roll(source.to(DEV), *args).cpu(), torch.roll(source, *args))
    xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
    weights = torch.randn(x.shape)
    (torch.roll(xc, (1, 2), (1, 2)) * weights).sum().backward()
    (torch.roll(xd, (1, 2), (1, 2)) * weights.to(DEV)).sum().backward()
    assert torch.equal(xd.grad.cpu(), xc.grad)
    if _native("cat.out"):
        assert torch_backend.fallback_counts() == {}
    for args, error, message in [
        (((1, 2), (0,)), RuntimeError, "shifts and dimensions must align"),
        (((), ()), RuntimeError, "`shifts` required"),
        ((1, 5), IndexError, "Dimension out of range"),
    ]:
        with pytest.raises(error, match=re.escape(message)):
            torch.roll(x.to(DEV), *args)


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.int64, torch.int32, torch.float16], ids=str
)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_matches_cpu(dtype, accumulate):
    """self[indices] = values (+= with accumulate: the relative position biases' backward in
    BEiT, Swin and LeViT): one index, several adjacent or apart, None between them, broadcast
    values, negative and duplicate indices (duplicates only accumulate: without it which one
    wins is unspecified, as on CUDA)."""
    x = (torch.randn(5, 6, 4) * 10).to(dtype)
    torch_backend.reset_fallback_counts()
    cases = [
        ([torch.tensor([3, 0, 3, -1])], accumulate),
        ([torch.tensor([1, 4]), None, torch.tensor([0, 3])], True),
        ([None, torch.tensor([[0, 5], [-1, 2]])], True),
        ([torch.tensor([0, 4]), torch.tensor([1, 1]), torch.tensor([2, 2])], True),
        ([torch.tensor([2, 2, 2, 2]).int()], accumulate),
    ]
    for indices, used in cases:
        if not used:  # duplicate indices without accumulate
            continue
        shape = x[tuple(slice(None) if i is None else i for i in indices)].shape
        values = (torch.randn(shape) * 5).to(dtype)
        for v in (values, values[..., :1], torch.tensor(3).to(dtype)):
            expected = torch.ops.aten.index_put_(x.clone(), indices, v, accumulate)
            device_indices = [None if i is None else i.to(DEV) for i in indices]
            got = torch.ops.aten.index_put_(x.to(DEV), device_indices, v.to(DEV), accumulate)
            torch.testing.assert_close(got.cpu(), expected)
    if _native("_index_put_impl_") and dtype != torch.float16:  # opencl declines float16
        assert torch_backend.fallback_counts() == {}


def test_layer_norm_of_a_permuted_input_runs_on_the_device():
    """A ViT after a convolutional patch embedding (SigLIP's) normalizes a permuted input: made
    contiguous first, as ATen's own kernels do, instead of going to the CPU."""
    x = torch.randn(2, 768, 16).transpose(1, 2)  # [2, 16, 768] with strides (12288, 1, 16)
    norm = torch.nn.LayerNorm(768)
    torch_backend.reset_fallback_counts()
    xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
    device_norm = copy.deepcopy(norm).to(DEV)
    expected, got = norm(xc), device_norm(xd)
    expected.sum().backward()
    got.sum().backward()
    torch.testing.assert_close(got.detach().cpu(), expected.detach())
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)
    torch.testing.assert_close(device_norm.weight.grad.cpu(), norm.weight.grad)
    if _native("native_layer_norm", "native_layer_norm_backward"):
        assert torch_backend.fallback_counts() == {}


def test_batch_norm_in_evaluation_backpropagates_on_the_device():
    """BatchNorm2d in eval mode (timm's suite, a frozen backbone) normalizes with the running
    statistics; its backward gets the saved ones empty and must still run on the device."""
    norm = torch.nn.BatchNorm2d(4).eval()
    norm.running_mean.uniform_(-1, 1)
    norm.running_var.uniform_(0.5, 2)
    x = torch.randn(2, 4, 5, 5)
    torch_backend.reset_fallback_counts()
    xc, xd = x.clone().requires_grad_(), x.to(DEV).requires_grad_()
    device_norm = copy.deepcopy(norm).to(DEV)
    norm(xc).pow(2).sum().backward()
    device_norm(xd).pow(2).sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)
    torch.testing.assert_close(device_norm.weight.grad.cpu(), norm.weight.grad)
    torch.testing.assert_close(device_norm.bias.grad.cpu(), norm.bias.grad)
    if _native("native_batch_norm_backward"):
        assert torch_backend.fallback_counts() == {}


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.int64, torch.int32, torch.float16], ids=str
)
def test_scatter_add_and_index_add_match_cpu(dtype):
    """The accumulating scatters (GNN message passing, embedding bags, one-hot counts):
    scatter_add and index_add, in place and not, duplicate indices, either dimension, int32
    indices, a transposed source, index_add's alpha.  Floating sums may add in another order
    than the CPU's; no CPU fallback where native (opencl declines float16: no atomic add)."""
    generator = torch.Generator().manual_seed(5)
    x = torch.randint(-9, 9, (5, 6), generator=generator).to(dtype)
    src = torch.randint(-9, 9, (7, 8), generator=generator).to(dtype)
    rows = torch.randint(0, 5, (7, 6), generator=generator)  # duplicates along dim 0
    columns = torch.randint(0, 6, (5, 8), generator=generator).int()  # ... and along dim 1
    picks = torch.tensor([2, 0, 2, 5, 2])  # index_add along dim 1, duplicated
    alpha = 3 if not dtype.is_floating_point else 0.5
    cases = [
        lambda t, s, r, c, p: t.scatter_add(0, r, s[:, :6]),
        lambda t, s, r, c, p: t.scatter_add(1, c, s[:5]),
        lambda t, s, r, c, p: t.clone().scatter_add_(0, r[:3], s[:3, :6]),
        lambda t, s, r, c, p: t.t().scatter_add(1, r.t(), s[:, :6].t()),
        lambda t, s, r, c, p: t.index_add(1, p, s[:5, :5]),
        lambda t, s, r, c, p: t.index_add(0, p[:3].int(), s[:3, :6], alpha=alpha),
        lambda t, s, r, c, p: t.clone().index_add_(-1, p, s[:5, :5].t().t(), alpha=alpha),
        lambda t, s, r, c, p: t.t().index_add(0, p, s[:5, :5].t()),
    ]
    native = _native("scatter_add.out", "index_add.out") and dtype != torch.float16
    torch_backend.reset_fallback_counts()
    for n, case in enumerate(cases):
        want = case(x, src, rows, columns, picks)
        got = case(*(t.to(DEV) for t in (x, src, rows, columns, picks))).cpu()
        torch.testing.assert_close(got, want, msg=f"case {n}")
    if native:
        assert torch_backend.fallback_counts() == {}


def test_index_add_of_an_index_out_of_range_is_an_error():
    x, source = torch.zeros(2, 3, device=DEV), torch.ones(2, 2, device=DEV)
    index = torch.tensor([1, 3], device=DEV)
    try:
        y = x.index_add(1, index, source)
    except (RuntimeError, IndexError) as error:  # found at the call (the CPU fallback)
        assert "out of range" in str(error) or "out of bounds" in str(error)
        return
    try:
        with pytest.raises(torch.AcceleratorError, match="index 3 is out of bounds"):
            y.cpu()
    finally:
        MODULE.reset_device()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize(
    "options",
    [
        {"scale_factor": 2, "align_corners": False},
        {"scale_factor": 2, "align_corners": True},
        {"scale_factor": 1.7, "align_corners": False},
        {"scale_factor": (0.5, 2.3), "align_corners": False},
        {"size": (7, 9), "align_corners": True},
        {"size": (3, 2), "align_corners": False},
        {"size": (5, 4), "align_corners": False},
    ],
    ids=["x2", "x2-corners", "x1.7", "mixed", "up-corners", "down", "same"],
)
def test_upsample_bilinear_matches_cpu(dtype, options):
    """2-d bilinear interpolation forward and backward (a UNet's or an FPN's upsampling):
    ATen's source indices and weights, align_corners either way, a channels_last input."""
    x = torch.randn(2, 3, 5, 4, dtype=dtype)
    ops = ("upsample_bilinear2d.out", "upsample_bilinear2d_backward.grad_input")
    interpolate = torch.nn.functional.interpolate
    for source in (x, x.contiguous(memory_format=torch.channels_last)):
        _pool_check(interpolate, source, ops, mode="bilinear", **options)


@pytest.mark.parametrize("function", [torch.var_mean, torch.std_mean])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_var_mean_and_std_mean_match_cpu(function, dtype):
    """torch.var_mean / std_mean, which ATen gives only CPU and CUDA kernels: on the device
    (csrc's two-pass composite) over every dimension, some, a negative one, kept dimensions,
    corrections 0, 1 and 2; a single element's NaN variance; integers still refused as on the
    CPU, complex still right."""
    x = torch.randn(4, 5, 6, dtype=dtype) * 3 + 1
    torch_backend.reset_fallback_counts()
    for options in [
        {},
        {"dim": 1},
        {"dim": (0, 2)},
        {"dim": -1, "keepdim": True},
        {"dim": 1, "correction": 0},
        {"dim": None, "correction": 2},
    ]:
        for want, got in zip(function(x, **options), function(x.to(DEV), **options), strict=True):
            assert got.shape == want.shape and got.dtype == want.dtype, options
            torch.testing.assert_close(got.cpu(), want, msg=str(options))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degrees of freedom <= 0, as on the CPU
        variance, mean = function(torch.ones(1, dtype=dtype, device=DEV))
    assert variance.cpu().isnan().item() and mean.cpu().item() == 1.0
    if _native("mean.out", "sum.IntList_out", "mul.out", "sub.out", "div.out", "sqrt.out"):
        assert torch_backend.fallback_counts() == {}
    with pytest.raises(RuntimeError, match="only support floating point and complex"):
        function(torch.arange(4, device=DEV))
    z = torch.randn(3, 4, dtype=torch.complex64)
    torch.testing.assert_close(function(z.to(DEV))[0].cpu(), function(z)[0])
