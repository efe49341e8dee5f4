"""Tensors on two devices of the type are never computed together: every path -- the generated
wrappers, the boxed wrapper, custom operators, composite overrides and the CPU fallback --
raises CUDA's "Expected all tensors to be on the same device" error naming the argument, before
any work is queued; a CPU 0-dim tensor (a Python number) is a number on every path."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from conftest import DEV

import torch_backend

pytestmark = pytest.mark.usefixtures("two_devices")


def mismatch(first: int, second: int, argument: str | None = None) -> str:
    """CUDA's message.  TensorIterator operators (the pointwise ones) raise it from ATen's own
    meta function, without naming the argument, as they do on CUDA."""
    message = re.escape(
        "Expected all tensors to be on the same device, but found at least two devices, "
        f"{DEV}:{first} and {DEV}:{second}!"
    )
    if argument is None:
        return message
    return message + re.escape(f" (when checking argument for argument {argument} in method ")


def rand(*shape: int, device: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape).to(dtype).to(f"{DEV}:{device}")


def index(*values: int, device: int = 0) -> torch.Tensor:
    return torch.tensor(values).to(f"{DEV}:{device}")


# (name, call, argument the error names): the first device tensor is on device 0, the named
# argument on device 1.
CASES: list[tuple[str, Callable[[], object], str | None]] = [
    ("mm", lambda: torch.mm(rand(4, 4), rand(4, 4, device=1)), "mat2"),
    ("matmul", lambda: rand(4, 4) @ rand(4, 4, device=1), "mat2"),
    ("bmm", lambda: torch.bmm(rand(2, 3, 4), rand(2, 4, 5, device=1)), "mat2"),
    ("addmm", lambda: torch.addmm(rand(4), rand(3, 4), rand(4, 4, device=1)), "mat2"),
    ("linear", lambda: F.linear(rand(3, 4, device=1), rand(5, 4), rand(5)), "mat1"),
    ("index_select", lambda: rand(4, 3).index_select(0, index(0, 2, device=1)), "index"),
    ("gather", lambda: rand(4, 3).gather(1, index(0, 1, 2, 0, device=1).view(4, 1)), "index"),
    ("embedding", lambda: F.embedding(index(0, 1, device=1), rand(4, 3)), "index"),
    ("cat", lambda: torch.cat([rand(2, 3), rand(2, 3, device=1)]), "tensors"),
    ("stack", lambda: torch.stack([rand(2, 3), rand(2, 3, device=1)]), "tensors"),
    ("masked_fill", lambda: rand(5).masked_fill(rand(5, device=1) > 0, 2.0), "mask"),
    ("index_put_", lambda: rand(5).index_put_((index(0, 1),), rand(2, device=1)), "values"),
    ("where", lambda: torch.where(rand(5) > 0, rand(5), rand(5, device=1)), None),
    ("atan2 (boxed on emu)", lambda: torch.atan2(rand(5), rand(5, device=1)), None),
    ("add", lambda: rand(5) + rand(5, device=1), None),
]


@pytest.mark.parametrize(("call", "argument"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_operators_refuse_a_tensor_on_the_other_device(call, argument):
    with pytest.raises(RuntimeError, match=mismatch(0, 1, argument)):
        call()


def test_out_on_the_other_device():
    # ATen's own check of out= arguments (structured operators, as on CUDA), or the fallback's.
    message = f"Expected out tensor to have device {DEV}:0|{mismatch(0, 1, 'out')}"
    with pytest.raises(RuntimeError, match=message):
        torch.mm(rand(2, 2), rand(2, 2), out=rand(2, 2, device=1))


def test_nothing_is_queued_before_the_error():
    # The error comes before any work: the other device's tensor is never read, and its
    # stream never has work of this call.
    a, b = rand(64, 64), rand(64, 64, device=1)
    torch_backend.reset_kernel_counts()
    with pytest.raises(RuntimeError, match="same device"):
        torch.mm(a, b)
    assert torch_backend.kernel_counts() == {}


def test_the_cpu_fallback_checks_devices():
    candidates = {
        "aten::take": (lambda: torch.take(rand(5), index(0, 1, device=1)), "index"),
        "aten::bucketize.Tensor": (
            lambda: torch.bucketize(rand(5), torch.arange(3.0).to(f"{DEV}:1")),
            "boundaries",
        ),
    }
    coverage = torch_backend.op_coverage(list(candidates))
    fallback = [op for op in candidates if coverage[op] == "fallback"]
    if not fallback:
        pytest.skip(f"the vendor implements {list(candidates)}")
    for op in fallback:
        call, argument = candidates[op]
        torch_backend.reset_fallback_counts()
        with pytest.raises(RuntimeError, match=mismatch(0, 1, argument) + re.escape(op)):
            call()
        assert torch_backend.fallback_counts() == {op: 1}


def test_custom_operators_check_devices():
    ops = torch_backend.custom_ops()
    if f"{DEV}::mymuladd" not in ops:
        pytest.skip("the vendor declares no two-tensor custom operator")
    op = getattr(torch.ops, DEV).mymuladd
    with pytest.raises(RuntimeError, match=mismatch(0, 1, "b")):
        op(rand(5), rand(5, device=1), 1.0)


def test_composite_overrides_check_devices():
    with pytest.raises(RuntimeError, match="different devices"):
        torch.equal(rand(5), rand(5, device=1))
    with pytest.raises(RuntimeError, match="same device"):
        F.group_norm(rand(2, 4, 3), 2, rand(4, device=1))


@pytest.mark.parametrize("device", [0, 1])
def test_cpu_numbers_are_numbers_on_every_path(device):
    # CPU 0-dim tensors beside device tensors, on the generated, boxed and fallback paths, land
    # on the device tensors' device and match the CPU.
    x_cpu = torch.linspace(0.5, 2.0, 6)
    x = x_cpu.to(f"{DEV}:{device}")
    two = torch.tensor(2.0)
    for f in (
        lambda t, s: t + s,
        lambda t, s: torch.where(t > 1, t, s),
        lambda t, s: torch.atan2(t, s),
        lambda t, s: torch.nextafter(t, s),
        lambda t, s: torch.hypot(s, t),
        lambda t, s: torch.mul(t, s, out=torch.empty_like(t)),
    ):
        result = f(x, two)
        assert result.device == x.device
        torch.testing.assert_close(result.cpu(), f(x_cpu, two))
