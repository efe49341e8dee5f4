"""Scaled dot-product attention's PrivateUse1 route (csrc/aten/Attention.cpp, vendor.h
"Attention"): PyTorch picks SDPBackend.OVERRIDEABLE for device tensors when the vendor
publishes a fused kernel (emu does), and MATH otherwise; the fused kernel matches the math path
forward and backward, with causal masks, additive and boolean masks, and dropout whose mask the
backward regenerates from the same counters."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import DEV
from torch.nn.attention import SDPBackend, sdpa_kernel

FUSED = DEV in ("emu", "npu")  # the bundled vendors with a fused attention kernel
FUSED_HALF = DEV == "emu"  # ... and with float16 and bfloat16 ones (npu's is float32 only)


def qkv(L: int = 5, S: int = 7, E: int = 8, Ev: int = 4, dtype=torch.float32):
    torch.manual_seed(0)
    q = torch.randn(2, 3, L, E, dtype=dtype, device=DEV, requires_grad=True)
    k = torch.randn(2, 3, S, E, dtype=dtype, device=DEV, requires_grad=True)
    v = torch.randn(2, 3, S, Ev, dtype=dtype, device=DEV, requires_grad=True)
    return q, k, v


def test_the_backend_choice():
    q, k, v = qkv()
    expected = SDPBackend.OVERRIDEABLE if FUSED else SDPBackend.MATH
    assert torch._fused_sdp_choice(q, k, v) == int(expected)
    with sdpa_kernel(SDPBackend.MATH):
        assert torch._fused_sdp_choice(q, k, v) == int(SDPBackend.MATH)
    # What the kernel does not take goes to the math path: float64, grouped-query attention.
    q64, k64, v64 = qkv(dtype=torch.float64)
    assert torch._fused_sdp_choice(q64, k64, v64) == int(SDPBackend.MATH)
    assert torch._fused_sdp_choice(q, k[:, :1], v[:, :1], enable_gqa=True) == int(SDPBackend.MATH)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_precision_takes_the_fused_route_and_rounds_once(dtype):
    """float16 and bfloat16 take OVERRIDEABLE where the kernel publishes them (PyTorch's
    torch_openreg tests expect it), computing in float32 and rounding once: the output and
    the gradients are the float32 math path's on the same inputs, rounded to the dtype."""
    q, k, v = qkv(dtype=dtype)
    expected = SDPBackend.OVERRIDEABLE if FUSED_HALF else SDPBackend.MATH
    assert torch._fused_sdp_choice(q, k, v, is_causal=True) == int(expected)
    grad = torch.randn(2, 3, 5, 4, dtype=dtype, device=DEV)
    fused = _run(q, k, v, grad, is_causal=True)
    if FUSED_HALF:
        name = fused[0].grad_fn.name()
        assert name == "ScaledDotProductFusedAttentionOverrideableBackward0", name
    wide = [t.detach().float().requires_grad_() for t in (q, k, v)]
    with sdpa_kernel(SDPBackend.MATH):
        exact = _run(*wide, grad.float(), is_causal=True)
    ulp = torch.finfo(dtype).eps
    for got, want, what in zip(fused, exact, ("out", "dq", "dk", "dv"), strict=True):
        assert got.dtype == dtype, what
        torch.testing.assert_close(got.float().cpu(), want.cpu(), atol=2 * ulp, rtol=ulp, msg=what)


def _run(q, k, v, grad, **kwargs):
    out = F.scaled_dot_product_attention(q, k, v, **kwargs)
    return (out, *torch.autograd.grad(out, (q, k, v), grad))


@pytest.mark.parametrize(
    "case",
    [
        {},
        {"is_causal": True},
        {"mask": "float"},
        {"mask": "bool"},
        {"scale": 0.3},
        {"is_causal": True, "L": 7, "S": 7, "Ev": 8},
    ],
    ids=["plain", "causal", "float_mask", "bool_mask", "scale", "causal_square"],
)
def test_matches_the_math_path_forward_and_backward(case):
    case = dict(case)
    q, k, v = qkv(case.pop("L", 5), case.pop("S", 7), Ev=case.pop("Ev", 4))
    mask = case.pop("mask", None)
    if mask == "float":
        case["attn_mask"] = torch.randn(q.shape[2], k.shape[2], device=DEV)
    elif mask == "bool":
        case["attn_mask"] = torch.rand(q.shape[2], k.shape[2], device=DEV) > 0.3
    grad = torch.randn(q.shape[0], q.shape[1], q.shape[2], v.shape[3], device=DEV)
    fused = _run(q, k, v, grad, **case)
    if FUSED:
        name = fused[0].grad_fn.name()
        assert name == "ScaledDotProductFusedAttentionOverrideableBackward0", name
    with sdpa_kernel(SDPBackend.MATH):
        math = _run(q, k, v, grad, **case)
    for got, expected, what in zip(fused, math, ("out", "dq", "dk", "dv"), strict=True):
        torch.testing.assert_close(got.cpu(), expected.cpu(), atol=2e-5, rtol=1e-4, msg=what)


def test_a_learned_bias_gets_its_gradient():
    # A bias that requires grad (relative position biases, ALiBi slopes learned): emu's kernel
    # computes its gradient, npu's SDK has none (CANN's dpseOut) and declines, and the math
    # backward takes the call; either way the gradient matches the math path's.
    q, k, v = qkv()
    bias = torch.randn(3, q.shape[2], k.shape[2], device=DEV, requires_grad=True)
    grad = torch.randn(2, 3, q.shape[2], v.shape[3], device=DEV)

    def run():
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, is_causal=False)
        return (out, *torch.autograd.grad(out, (q, k, v, bias), grad))

    fused = run()
    with sdpa_kernel(SDPBackend.MATH):
        math = run()
    for got, expected, what in zip(fused, math, ("out", "dq", "dk", "dv", "dbias"), strict=True):
        torch.testing.assert_close(got.cpu(), expected.cpu(), atol=2e-5, rtol=1e-4, msg=what)


@pytest.mark.skipif(not FUSED, reason="dropout of the fused kernel")
def test_dropout_mask_is_consistent_between_forward_and_backward():
    # With the identity as values, the output is the dropped-out probabilities themselves:
    # it reveals the mask the forward drew.
    torch.manual_seed(0)
    L, S, p = 6, 16, 0.3
    q = torch.randn(1, 2, L, 8, device=DEV, requires_grad=True)
    k = torch.randn(1, 2, S, 8, device=DEV, requires_grad=True)
    v = torch.eye(S, device=DEV).expand(1, 2, S, S).contiguous().requires_grad_()
    grad = torch.randn(1, 2, L, S, device=DEV)
    torch.manual_seed(7)
    out, dq, dk, dv = _run(q, k, v, grad, dropout_p=p)
    probabilities = torch.softmax(q.detach() @ k.detach().transpose(-2, -1) / 8**0.5, -1)
    kept = out.detach() != 0
    factor = (out.detach()[kept] / probabilities[kept]).cpu()
    torch.testing.assert_close(factor, torch.full_like(factor, 1 / (1 - p)), rtol=1e-4, atol=0)
    assert 0.5 < kept.float().mean().item() < 0.9
    # The backward used the same mask: the gradients of attention with that mask fixed.
    mask = kept.float() / (1 - p)
    q2, k2, v2 = (t.detach().clone().requires_grad_() for t in (q, k, v))
    reference = (torch.softmax(q2 @ k2.transpose(-2, -1) / 8**0.5, -1) * mask) @ v2
    expected = torch.autograd.grad(reference, (q2, k2, v2), grad)
    for got, want in zip((dq, dk, dv), expected, strict=True):
        torch.testing.assert_close(got.cpu(), want.cpu(), atol=2e-5, rtol=1e-4)
    # The same seed draws the same mask.
    torch.manual_seed(7)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
    assert torch.equal(again.detach().cpu(), out.detach().cpu())


def test_a_transformer_layer_trains_like_the_math_path():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True).to(DEV)
    x = torch.randn(2, 9, 32, device=DEV)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(9, device=DEV)
    out = layer(x, src_mask=mask, is_causal=True)
    out.square().mean().backward()
    grads = [p.grad.clone() for p in layer.parameters()]
    layer.zero_grad()
    with sdpa_kernel(SDPBackend.MATH):
        math = layer(x, src_mask=mask, is_causal=True)
        math.square().mean().backward()
    torch.testing.assert_close(out.detach().cpu(), math.detach().cpu(), atol=2e-5, rtol=1e-4)
    for got, p in zip(grads, layer.parameters(), strict=True):
        torch.testing.assert_close(got.cpu(), p.grad.cpu(), atol=2e-5, rtol=1e-4)
