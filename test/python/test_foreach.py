"""The _foreach_ operators that torch.optim's default path calls on device parameters: a
vendor's multi-tensor kernel (opencl: eight tensors a launch, codegen/ops.yaml) gives what the
CPU gives, and a list its kernel declines (a view, mixed dtypes, integers) runs ATen's
per-tensor path on the device -- never the CPU fallback -- as CUDA's does."""

from __future__ import annotations

import pytest
import torch
from conftest import DEV, MODULE

import torch_backend

# A list the size of a small model's parameters: more than one launch's eight tensors, sizes
# from empty to several work-item runs, out of order.
SIZES = [(64, 3), (0,), (1,), (70001,), (5, 7), (257,), (3,), (2, 2, 2), (1000,), (1,), (4096,)]
SIZES = SIZES + SIZES[::-1]


def published(op: str) -> bool:
    return torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{op}", "PrivateUse1")


def tensors(dtype: torch.dtype = torch.float32, seed: int = 0) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(size, generator=generator, dtype=dtype) for size in SIZES]


def on_device(ts: list[torch.Tensor]) -> list[torch.Tensor]:
    return [t.to(DEV) for t in ts]


def foreach_fallbacks() -> dict[str, int]:
    """The _foreach_ operators the CPU fallback ran (a vendor without add's kernel still runs
    the per-tensor path's add there)."""
    return {k: n for k, n in torch_backend.fallback_counts().items() if "_foreach_" in k}


CALLS = {
    "_foreach_add_.List": lambda s, o, p: torch._foreach_add_(s, o, alpha=-0.37),
    "_foreach_add_.Scalar": lambda s, o, p: torch._foreach_add_(s, 2.5),
    "_foreach_mul_.Scalar": lambda s, o, p: torch._foreach_mul_(s, 0.9),
    "_foreach_lerp_.Scalar": lambda s, o, p: torch._foreach_lerp_(s, o, 0.1),
    "_foreach_lerp_.Scalar far": lambda s, o, p: torch._foreach_lerp_(s, o, 0.75),
    "_foreach_addcmul_.Scalar": lambda s, o, p: torch._foreach_addcmul_(s, o, p, value=-0.3),
}


@pytest.mark.parametrize("op", list(CALLS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_lists_of_many_sizes_give_what_the_cpu_gives(op, dtype):
    self, other, third = tensors(dtype, 0), tensors(dtype, 1), tensors(dtype, 2)
    device_self, device_other, device_third = on_device(self), on_device(other), on_device(third)
    torch_backend.reset_fallback_counts()
    CALLS[op](device_self, device_other, device_third)
    CALLS[op](self, other, third)
    assert foreach_fallbacks() == {}
    for got, expected in zip(device_self, self, strict=True):
        torch.testing.assert_close(got.cpu(), expected)
    for device_list, cpu_list in ((device_other, other), (device_third, third)):
        assert all(torch.equal(d.cpu(), c) for d, c in zip(device_list, cpu_list, strict=True))


def test_one_call_updates_the_whole_list():
    """The profiler shows the call as one device activity of the operator's name (the vendor's
    launches of eight tensors each inside it), and no per-tensor ``add``."""
    if not published("_foreach_add_.List"):
        pytest.skip(f"{DEV}'s vendor publishes no _foreach_add_.List")
    from torch.profiler import ProfilerActivity, profile

    self, other = on_device(tensors()), on_device(tensors(seed=1))
    torch._foreach_add_(self, other)  # built and warm
    MODULE.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        torch._foreach_add_(self, other, alpha=2)
        MODULE.synchronize()
    device = [
        e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1
    ]
    assert device.count("_foreach_add_.List") == 1, device
    assert "add.out" not in device and "add_.Tensor" not in device, device


def test_declined_lists_run_per_tensor_on_the_device():
    """A view that is not dense, a list of two dtypes, integer tensors: each gives the CPU's
    result through ATen's per-tensor path, with nothing run on the CPU fallback."""
    base = torch.randn(6, 8)
    cases = [
        ([base[:, ::2].clone(), base.t()], [torch.ones(6, 4), torch.ones(8, 6)]),
        ([torch.randn(5), torch.randn(5, dtype=torch.float64)], [torch.ones(5), torch.ones(5)]),
        (
            [torch.arange(5), torch.arange(7)],
            [torch.ones(5, dtype=torch.long), torch.ones(7, dtype=torch.long)],
        ),
    ]
    torch_backend.reset_fallback_counts()
    for self, other in cases:
        device_self = [t.to(DEV) for t in self]
        if self[0].dim() == 2:  # the second a transposed view, as on the CPU
            device_self[1] = base.to(DEV).t()
            self[1] = base.t()
        torch._foreach_add_(device_self, [t.to(DEV) for t in other], alpha=3)
        torch._foreach_add_(self, other, alpha=3)
        for got, expected in zip(device_self, self, strict=True):
            assert got.dtype == expected.dtype
            torch.testing.assert_close(got.cpu(), expected)
    assert foreach_fallbacks() == {}


def test_a_list_over_two_devices_updates_each_on_its_own(two_devices):
    """Tensors on two devices in one list (a model split across devices): the kernel declines,
    and ATen's per-tensor path updates each on its device, as on CUDA."""
    self = [torch.ones(5, device=f"{DEV}:0"), torch.ones(7, device=f"{DEV}:1")]
    other = [torch.full((5,), 2.0, device=f"{DEV}:0"), torch.full((7,), 3.0, device=f"{DEV}:1")]
    torch._foreach_add_(self, other, alpha=0.5)
    assert [t.device.index for t in self] == [0, 1]
    assert torch.equal(self[0].cpu(), torch.full((5,), 2.0))
    assert torch.equal(self[1].cpu(), torch.full((7,), 2.5))


def test_lists_of_different_lengths_raise_atens_error():
    a = on_device([torch.ones(3), torch.ones(3)])
    with pytest.raises(RuntimeError, match="Tensor lists must have the same number of tensors"):
        torch._foreach_add_(a, a[:1])
    with pytest.raises(RuntimeError, match="Tensor list must have at least one tensor"):
        torch._foreach_add_([], [])
    assert torch.equal(a[0].cpu(), torch.ones(3))


OPTIMIZERS = {
    "SGD": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01),
    "Adam": lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.01),
    "AdamW": lambda p: torch.optim.AdamW(p, lr=0.01),
}


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_default_optimizers_step_as_on_the_cpu(name):
    """torch.optim's default (foreach) path -- SGD with momentum and weight decay, Adam,
    AdamW -- on a model with more than eight parameters steps to the CPU's parameters."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(*(torch.nn.Linear(8, 8) for _ in range(6)))
    device_model = torch.nn.Sequential(*(torch.nn.Linear(8, 8) for _ in range(6))).to(DEV)
    device_model.load_state_dict(model.state_dict())
    optimizers = [OPTIMIZERS[name](m.parameters()) for m in (model, device_model)]
    x = torch.randn(4, 8)
    for _ in range(3):
        for m, opt, data in zip((model, device_model), optimizers, (x, x.to(DEV)), strict=True):
            opt.zero_grad()
            m(data).square().sum().backward()
            opt.step()
    for expected, got in zip(model.parameters(), device_model.parameters(), strict=True):
        torch.testing.assert_close(got.cpu(), expected, atol=1e-5, rtol=1e-4)


FUSED = {
    "SGD": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01, fused=True),
    "SGD-nesterov": lambda p: torch.optim.SGD(
        p, lr=0.1, momentum=0.9, nesterov=True, maximize=True, fused=True
    ),
    "SGD-plain": lambda p: torch.optim.SGD(p, lr=0.1, fused=True),  # no momentum buffers
    "Adam-amsgrad": lambda p: torch.optim.Adam(p, lr=0.01, amsgrad=True, fused=True),
    "AdamW": lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1, maximize=True, fused=True),
}


@pytest.mark.parametrize("name", list(FUSED))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_steps_over_many_parameters_give_what_the_cpu_gives(name, dtype):
    """fused=True over more parameters than one launch takes (opencl: eight), of sizes from
    empty to several work-item runs, out of order: three steps give the CPU's parameters, and
    a vendor with the fused kernel runs none of it on the CPU fallback."""
    params = {d: [torch.nn.Parameter(t.to(d)) for t in tensors(dtype)] for d in ("cpu", DEV)}
    optimizers = {d: FUSED[name](params[d]) for d in params}
    torch_backend.reset_fallback_counts()
    for step in range(3):
        for d in params:
            for p, g in zip(params[d], tensors(dtype, seed=step + 1), strict=True):
                p.grad = g.to(d)
            optimizers[d].step()
    for got, expected in zip(params[DEV], params["cpu"], strict=True):
        torch.testing.assert_close(got.detach().cpu(), expected.detach(), atol=1e-6, rtol=1e-5)
    op = f"_fused_{name.split('-')[0].lower()}_"
    if torch_backend.op_coverage([op])[op] == "native":
        assert op not in torch_backend.fallback_counts()
