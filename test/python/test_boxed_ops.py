"""Any ATen operator (vendor.h, ABI 2.0): kernels for operators torch_backend compiles no
wrapper for (not in codegen/ops.yaml) run through its generic boxed wrapper, with functional and
in-place variants derived from an out kernel, outputs from ATen's meta functions and the CPU
fallback for what the kernel declines.  emu publishes hardtanh, hardtanh_backward, logit, atan2
and stack this way."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from conftest import DEV

import torch_backend

BOXED = ["hardtanh.out", "hardtanh_backward.grad_input", "logit.out", "atan2.out", "stack.out"]

pytestmark = pytest.mark.skipif(
    set(torch_backend.op_coverage(BOXED).values()) != {"native"},
    reason="the vendor publishes no kernels for operators outside codegen/ops.yaml",
)


def test_ops_are_outside_the_compiled_list_and_native():
    compiled = {kernel for _, kernel in zip(*torch.ops.torch_backend._op_kernels(), strict=True)}
    assert not compiled & set(BOXED)
    derived = ["hardtanh", "hardtanh_", "hardtanh_backward", "logit", "logit_", "atan2", "atan2_"]
    derived.append("stack")
    assert set(torch_backend.op_coverage(derived).values()) == {"native"}
    listed = torch_backend.op_coverage()
    assert all(listed[op] == "native" for op in BOXED + derived)


def run_counted(call: Callable[[], torch.Tensor]) -> tuple[torch.Tensor, dict, dict]:
    torch_backend.reset_kernel_counts()
    torch_backend.reset_fallback_counts()
    result = call()
    return result, torch_backend.kernel_counts(), torch_backend.fallback_counts()


def values(*shape: int, low: float = -3.0, high: float = 3.0) -> torch.Tensor:
    return torch.empty(*shape).uniform_(low, high, generator=torch.Generator().manual_seed(7))


def both(tensor: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return tensor, tensor.to(DEV)


CASES = {
    # functional, on a transposed (non-contiguous) input
    "hardtanh": ("hardtanh.out", lambda x, y: F.hardtanh(x.t(), -0.5, 1.5)),
    "relu6 (hardtanh)": ("hardtanh.out", lambda x, y: F.relu6(x)),
    "hardtanh_": ("hardtanh.out", lambda x, y: F.hardtanh(x.clone(), inplace=True)),
    "hardtanh out=": (
        "hardtanh.out",
        lambda x, y: torch.ops.aten.hardtanh.out(x, -1, 1, out=x.new_empty(0)),
    ),
    "hardtanh_backward": (
        "hardtanh_backward.grad_input",
        lambda x, y: torch.ops.aten.hardtanh_backward(y, x, -1.0, 1.0),
    ),
    "logit": ("logit.out", lambda x, y: torch.logit(x.sigmoid())),
    "logit eps": ("logit.out", lambda x, y: torch.logit(x.sigmoid().t(), eps=0.2)),
    "logit_": ("logit.out", lambda x, y: x.sigmoid().logit_(0.1)),
    "logit out=": (
        "logit.out",
        lambda x, y: torch.logit(x.sigmoid(), out=x.new_empty(0)),
    ),
    "atan2": ("atan2.out", lambda x, y: torch.atan2(x, y)),
    "atan2 broadcast": ("atan2.out", lambda x, y: torch.atan2(x[:, :1], y[0])),
    "atan2 transposed": ("atan2.out", lambda x, y: torch.atan2(x.t(), y.t()[2])),
    "atan2 cpu scalar": ("atan2.out", lambda x, y: torch.atan2(x, torch.tensor(0.5))),
    "atan2_ broadcast": ("atan2.out", lambda x, y: x.clone().atan2_(y[1])),
    "atan2 out=": (
        "atan2.out",
        lambda x, y: torch.atan2(x, y, out=x.new_empty(0)),
    ),
    "atan2 strided out=": (
        "atan2.out",
        lambda x, y: torch.atan2(x, y, out=x.new_empty(5, 8)[:, ::2]),
    ),
    "stack": ("stack.out", lambda x, y: torch.stack([x, y, x], dim=1)),
    "stack transposed": ("stack.out", lambda x, y: torch.stack([x.t(), y.t()], dim=-1)),
    "stack out=": (
        "stack.out",
        lambda x, y: torch.stack([x, y], out=x.new_empty(0)),
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_runs_natively_and_matches_cpu(case, dtype):
    kernel, call = CASES[case]
    x, dx = both(values(5, 4).to(dtype))
    y, dy = both(values(5, 4, low=-1.0, high=2.0).to(dtype))
    expected = call(x, y)
    result, kernels, fallback = run_counted(lambda: call(dx, dy))
    assert kernels.get(kernel) == 1, kernels
    assert not fallback, fallback
    torch.testing.assert_close(result.cpu(), expected)


def test_half_precision():
    x, dx = both(values(64).half())
    result, kernels, _ = run_counted(lambda: F.hardtanh(dx, -1.0, 2.0))
    assert kernels == {"hardtanh.out": 1}
    torch.testing.assert_close(result.cpu(), F.hardtanh(x, -1.0, 2.0))


def test_relu6_trains_natively():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU6(), torch.nn.Linear(8, 2))
    device_model = copy.deepcopy(model).to(DEV)
    inputs = values(16, 6) * 4
    model(inputs).square().sum().backward()
    _, kernels, _ = run_counted(lambda: device_model(inputs.to(DEV)).square().sum().backward())
    assert kernels.get("hardtanh.out") == 1 and kernels.get("hardtanh_backward.grad_input") == 1
    for cpu_param, device_param in zip(model.parameters(), device_model.parameters(), strict=True):
        torch.testing.assert_close(device_param.grad.cpu(), cpu_param.grad)


@pytest.mark.parametrize(
    ("call", "fallback"),
    [
        # dtype mixes, which ATen promotes: the kernels decline them
        (lambda x, y: torch.atan2(x, y.double()), "aten::atan2"),
        (lambda x, y: torch.logit((x > 0).to(torch.int64), eps=0.25), "aten::logit"),
        (lambda x, y: torch.stack([x, y.double()]), "aten::stack"),
        # an out= tensor of another dtype than ATen computes: ATen's casting rules decide
        (
            lambda x, y: torch.atan2(
                x, y, out=torch.empty(0, dtype=torch.float64, device=x.device)
            ),
            "aten::atan2.out",
        ),
        # an integer input: outside the kernel's dtypes
        (lambda x, y: F.hardtanh(x.to(torch.int64)), "aten::hardtanh"),
    ],
    ids=["atan2 promotes", "logit of integers", "stack promotes", "out dtype", "int hardtanh"],
)
def test_declined_calls_fall_back_correctly(call, fallback):
    x, dx = both(values(3, 4))
    y, dy = both(values(3, 4))
    expected = call(x, y)
    result, _, fell_back = run_counted(lambda: call(dx, dy))
    assert fallback in fell_back, fell_back
    torch.testing.assert_close(result.cpu(), expected)


def test_atens_errors_survive():
    # An in-place call whose result self cannot hold: ATen's own error, from the fallback.
    x, dx = both(values(3, 1))
    with pytest.raises(RuntimeError) as on_cpu:
        x.clone().atan2_(values(3, 4))
    with pytest.raises(RuntimeError) as on_device:
        dx.clone().atan2_(values(3, 4).to(DEV))
    assert str(on_cpu.value).split("\n")[0] == str(on_device.value).split("\n")[0]
    # Operands that do not broadcast: ATen's meta function raises, naming the shapes.
    with pytest.raises(RuntimeError, match=r"broadcast.*\[3, 4\]"):
        torch.atan2(values(3, 4).to(DEV), values(5).to(DEV))


def test_partially_overlapping_out_is_not_given_to_the_kernel():
    # The kernel never sees an output that overlaps an input other than as the very same tensor:
    # the fallback runs the call on host copies that keep the aliasing, so the result is the
    # CPU's for the same program (ATen cannot tell that these strided views overlap, so the CPU
    # computes in place rather than raising).
    base_cpu = values(4, 4)
    base = base_cpu.to(DEV)
    torch.atan2(base_cpu[:, :2], base_cpu[:, 1:3], out=base_cpu[:, 1:3])
    _, kernels, fallback = run_counted(
        lambda: torch.atan2(base[:, :2], base[:, 1:3], out=base[:, 1:3])
    )
    assert kernels == {} and "aten::atan2.out" in fallback, (kernels, fallback)
    torch.testing.assert_close(base.cpu(), base_cpu)
    # An out= tensor whose elements overlap: ATen's error.
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.atan2(base, base, out=values(1, 4).to(DEV).expand(4, 4))
