"""torch_backend.op_coverage(): which operators run on the vendor's kernels, which are made of
other operators, which fall back."""

from __future__ import annotations

import pytest
import torch
from conftest import DEV

import torch_backend


def test_every_known_operator_has_a_state():
    coverage = torch_backend.op_coverage()
    assert {"add.out", "mm.out", "empty.memory_format", "_copy_from"} <= coverage.keys()
    assert set(coverage.values()) <= {"native", "composite", "fallback", "unsupported"}
    # Built on the vendor's memory and copy calls: native on every vendor.
    assert coverage["empty.memory_format"] == coverage["_copy_from"] == "native"


@pytest.mark.parametrize(
    ("op", "call"),
    [
        ("add.out", lambda x: torch.add(x, x)),
        ("mm.out", lambda x: torch.mm(x, x)),
        ("sum.IntList_out", lambda x: x.sum(0)),
        ("dot", lambda x: torch.dot(x[0], x[1])),
        ("isinf", torch.isinf),
        ("flip", lambda x: torch.flip(x, (0,))),
    ],
)
def test_state_agrees_with_what_runs(op, call):
    state = torch_backend.op_coverage([op])[op]
    torch_backend.reset_fallback_counts()
    x = torch.ones(3, 3, device=DEV)
    expected = call(x.cpu())
    torch.testing.assert_close(call(x).cpu(), expected)
    fell_back = "aten::" + op in torch_backend.fallback_counts()
    assert fell_back == (state == "fallback"), torch_backend.fallback_counts()


def test_kernel_counts():
    state = torch_backend.op_coverage(["add.Tensor"])["add.Tensor"]
    torch_backend.reset_kernel_counts()
    x = torch.ones(3, device=DEV)
    x + x
    torch.add(x, x, out=torch.empty_like(x))
    expected = {"add.out": 2} if state == "native" else {}
    assert torch_backend.kernel_counts() == expected
    torch_backend.reset_kernel_counts()
    assert torch_backend.kernel_counts() == {}


def test_named_operators():
    coverage = torch_backend.op_coverage(["aten::lgamma.out", "add.Tensor", "_cudnn_rnn"])
    assert coverage["aten::lgamma.out"] in {"native", "fallback"}
    # The vendor's kernel, or ATen's composite of add.out (whose own state may be "fallback")
    assert coverage["add.Tensor"] in {"native", "composite"}
    # Only CUDA implements it: no CPU kernel to fall back to.
    assert coverage["_cudnn_rnn"] == "unsupported"


def test_unknown_operator_is_named():
    with pytest.raises(RuntimeError, match=r"no operator named 'not_an_op\.out'"):
        torch_backend.op_coverage(["not_an_op.out"])
