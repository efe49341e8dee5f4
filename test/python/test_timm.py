"""Whole model libraries (examples/timm_suite.py): a fast subset of the TIMM models PyTorch's
dynamo benchmarks run -- a vision transformer with attention biases (levit_128, whose gradients
were once reported wrong), a depthwise/squeeze-excite CNN and a small ViT -- forward and
backward on the device: float64 equal to the CPU's (a kernel defect shows), float32 within the
CPU's own error from it.  ``make timm`` runs the whole list and prints the table."""

from __future__ import annotations

import sys

import pytest
import torch
import torch.nn.functional as F
from conftest import DEV, REPO

sys.path.insert(0, str(REPO / "examples"))
import timm_suite

# The vendors whose kernels cover these models: nothing may run through the CPU fallback there
# (npu leaves convolution, batch norm and hardswish to it).
NATIVE = {"emu", "ocl"}

pytestmark = pytest.mark.skipif(
    DEV not in ("emu", "npu", "ocl"), reason=f"{DEV} runs models through the CPU fallback alone"
)


@pytest.mark.parametrize("name", timm_suite.FAST)
def test_forward_and_backward_match_the_cpu(name):
    result = timm_suite.check(name, DEV)
    assert result.passed, "\n".join(result.failures[:10])
    if DEV in NATIVE:
        assert result.fallbacks == {}, f"ran through the CPU fallback: {result.fallbacks}"


def test_the_comparison_sees_a_wrong_gradient(monkeypatch):
    # A defect of the kind the suite exists for: the device's gradient of one operator
    # (hardswish) 10% off, its forward right.  Both the float64 and the float32 checks must
    # report it.
    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.ops.aten.hardswish.default(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            right = torch.ops.aten.hardswish_backward.default(grad, x)
            return right * 1.1 if x.device.type == DEV else right

    monkeypatch.setattr(F, "hardswish", lambda x, inplace=False: Wrong.apply(x))
    result = timm_suite.check("mobilenetv3_large_100", DEV)
    assert any(f.startswith("float64:") for f in result.failures), result.failures[:3]
    assert any(f.startswith("float32:") for f in result.failures), result.failures[:3]
