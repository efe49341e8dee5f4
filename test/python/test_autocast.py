"""Autocast on the device: CUDA's policy lists, get_amp_supported_dtype, bfloat16 support."""

from __future__ import annotations

import pytest
import torch
from conftest import DEV, MODULE

import torch_backend


def test_supported_dtypes():
    assert MODULE.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]
    assert MODULE.is_bf16_supported()
    assert torch.get_autocast_dtype(DEV) == torch.float16


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_lower_precision_and_fp32_ops(dtype):
    a = torch.randn(8, 8, device=DEV)
    with torch.autocast(DEV, dtype=dtype):
        assert torch.is_autocast_enabled(DEV)
        product = a @ a
        linear = torch.nn.functional.linear(a, a)
        softmax = torch.softmax(product, dim=-1)  # fp32 policy
        added = a + a  # not in any list: unchanged
    assert product.dtype == dtype and linear.dtype == dtype
    assert softmax.dtype == torch.float32
    assert added.dtype == torch.float32
    torch.testing.assert_close(product.float().cpu(), (a @ a).cpu(), atol=0.5, rtol=0.05)


def test_autocast_disabled_outside():
    a = torch.randn(4, 4, device=DEV)
    assert (a @ a).dtype == torch.float32
    assert not torch.is_autocast_enabled(DEV)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_banned_ops_raise_as_on_cuda(dtype):
    probabilities = torch.rand(4, 3, device=DEV)
    target = torch.rand(4, 3, device=DEV)
    with torch.autocast(DEV, dtype=dtype):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            torch.nn.functional.binary_cross_entropy(probabilities, target)
        with pytest.raises(RuntimeError, match="BCEWithLogitsLoss"):
            torch.nn.BCELoss()(probabilities, target)
        # The safe form runs, in float32 as CUDA's fp32 list says.
        loss = torch.nn.functional.binary_cross_entropy_with_logits(probabilities, target)
    assert loss.dtype == torch.float32
    # Outside autocast the banned operator is an ordinary one.
    expected = torch.nn.functional.binary_cross_entropy(probabilities.cpu(), target.cpu())
    got = torch.nn.functional.binary_cross_entropy(probabilities, target)
    torch.testing.assert_close(got.cpu(), expected)


def test_policy_lists_are_documented():
    policies = torch_backend.autocast_policies()
    assert "mm" in policies["lower_precision_fp"]
    assert "linear" in policies["lower_precision_fp"]
    assert "layer_norm" in policies["fp32"]
    assert "softmax.int" in policies["fp32_set_opt_dtype"]
    assert "norm.Scalar" in policies["fp32_append_dtype"]
    assert all("cat" not in ops for ops in policies.values())
    assert policies["banned"] == ["binary_cross_entropy"]
