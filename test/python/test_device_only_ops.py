"""Operators ATen selects only for non-CPU tensors (the overrideable convolutions, the fused RNN
cells, CUDA's out_dtype matrix products, SyncBatchNorm's pieces, ...) run on the device,
natively or through their CPU equivalents, and give the CPU's results; and a sweep over the
operator registry fails when a torch release adds such an operator that nobody looked at."""

from __future__ import annotations

import pathlib
import re

import pytest
import torch
import torch.nn.functional as F
import torchgen
import yaml
from conftest import DEV, run_python
from torch import nn

import torch_backend

# ------------------------------------------------------------------------------------------
# The sweep.

# Dispatch keys under which an operator runs for CPU tensors.
_CPU_CAPABLE = {
    "CPU",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "CompositeImplicitAutograd",
}

# Device-only operators torch_backend leaves alone, and why.  Anything else must run on the
# device (op_coverage "native" or "fallback").
_NOT_REACHABLE = [
    (
        r"_?(cudnn|miopen)_|_use_(cudnn|miopen)_|_cudnn_rnn|_cudnn_init_dropout_state",
        "cuDNN / MIOpen operators: ATen selects them only for CUDA / ROCm tensors with that "
        "library enabled; on the device the same modules take ATen's generic path",
    ),
    (
        r"_cslt_|_sparse_semi_structured_|_to_sparse_semi_structured",
        "cuSPARSELt / 2:4 semi-structured sparsity: CUDA-only packed layouts",
    ),
    (
        r"_mixed_dtypes_linear|_convert_weight_to_int4pack|_weight_int4pack_mm|_scaled_grouped_mm"
        r"|_scaled_addmm",
        "CUTLASS kernels on CUDA-specific packed weights or scale layouts (the CPU has *_for_cpu "
        "variants with their own layout; torch 2.15's _scaled_addmm takes cuBLASLt's scaling "
        "recipes and swizzles, and has no CPU kernel)",
    ),
    (
        r"_flash_attention_|_efficient_attention_|_cudnn_attention_|_triton_"
        r"|_scaled_dot_product_(flash|efficient|cudnn)_attention|_fill_mem_eff_dropout_mask_",
        "scaled_dot_product_attention selects these only for CUDA tensors; on the device it "
        "runs its math path",
    ),
    (
        r"_scaled_dot_product_fused_attention_overrideable",
        "selected only when the device's _fused_sdp_choice answers 'overrideable', which the "
        "CPU's choice (what the fallback runs) never does",
    ),
    (
        r"_fused_rms_norm_backward",
        "rms_norm uses the fused kernels only for CUDA and XPU tensors",
    ),
]
# torch 2.14 gave the stateless Philox operators CPU kernels: from then on they are not
# device-only and run on the device through the CPU fallback like any other operator, so the
# explanation belongs to earlier releases only (test_explained_operators_exist finds it stale).
if torch.torch_version.TorchVersion(torch.__version__) < (2, 14):
    _NOT_REACHABLE.append(
        (
            r"_philox_",
            "CUDA's stateless Philox key operators: no CPU kernel exists to reproduce their "
            "streams; a vendor may publish them natively",
        )
    )


def device_only_operators() -> list[str]:
    """Operators of this torch whose native_functions.yaml entry has a CUDA kernel and no kernel
    that serves CPU tensors, plus the ``*_overrideable`` ones (composite kernels that raise)."""
    packaged = pathlib.Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"
    names = []
    for entry in yaml.safe_load((packaged / "native_functions.yaml").read_text()):
        keys = {k.strip() for key in entry.get("dispatch", {}) for k in key.split(",")}
        name = entry["func"].split("(")[0]
        if "overrideable" in name or ("CUDA" in keys and not keys & _CPU_CAPABLE):
            names.append(name)
    return names


def test_device_only_operators_are_handled_or_explained():
    operators = device_only_operators()
    assert len(operators) > 50, "the sweep found too few operators: did the yaml format change?"
    coverage = torch_backend.op_coverage(operators)
    unhandled = [
        op
        for op in operators
        if coverage[op] == "unsupported"
        and not any(re.match(pattern, op) for pattern, _ in _NOT_REACHABLE)
    ]
    assert not unhandled, (
        "device-only operators with no device kernel and no CPU equivalent (add one in "
        f"csrc/aten/DeviceOnlyOps.cpp, or explain in _NOT_REACHABLE): {unhandled}"
    )


def test_explained_operators_exist():
    """Each explanation matches an operator of this torch release, so stale ones show up."""
    operators = device_only_operators()
    for pattern, reason in _NOT_REACHABLE:
        assert any(re.match(pattern, op) for op in operators), (pattern, reason)


def test_equivalents_are_reported_as_fallback_or_native():
    coverage = torch_backend.op_coverage()
    for op in ("convolution_overrideable", "_thnn_fused_lstm_cell", "mm.dtype", "_fused_dropout"):
        assert coverage[op] in ("native", "fallback"), (op, coverage[op])
    assert torch_backend.op_coverage(["batch_norm_stats"])["batch_norm_stats"] == "fallback"


# ------------------------------------------------------------------------------------------
# Convolutions.


def _compare(fn, *inputs: torch.Tensor, atol: float = 1e-5, rtol: float = 1.3e-6) -> None:
    """fn on the device and on the CPU, forward and the gradients of every input."""
    cpu = [t.detach().clone().requires_grad_(t.is_floating_point()) for t in inputs]
    dev = [t.detach().to(DEV).requires_grad_(t.is_floating_point()) for t in inputs]
    expected, actual = fn(*cpu), fn(*dev)
    assert actual.device.type == DEV
    torch.testing.assert_close(actual.cpu(), expected, atol=atol, rtol=rtol)
    projection = torch.randn(expected.shape)
    (expected * projection).sum().backward()
    (actual * projection.to(DEV)).sum().backward()
    for c, d in zip(cpu, dev, strict=True):
        if c.grad is not None:
            torch.testing.assert_close(d.grad.cpu(), c.grad, atol=atol, rtol=rtol)


@pytest.mark.parametrize(
    "case",
    [
        dict(stride=1, padding=1),
        dict(stride=2, padding=0, dilation=2),
        dict(stride=1, padding="same", groups=2),
    ],
    ids=str,
)
def test_conv2d(case):
    torch.manual_seed(0)
    groups = case.get("groups", 1)
    _compare(
        lambda x, w, b: F.conv2d(x, w, b, **case),
        torch.randn(2, 4, 9, 9),
        torch.randn(6, 4 // groups, 3, 3),
        torch.randn(6),
    )


def test_conv1d_conv3d_and_transposed():
    torch.manual_seed(0)
    _compare(lambda x, w: F.conv1d(x, w, padding=2), torch.randn(2, 3, 11), torch.randn(4, 3, 5))
    _compare(lambda x, w: F.conv3d(x, w), torch.randn(1, 2, 5, 5, 5), torch.randn(3, 2, 2, 2, 2))
    _compare(
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, output_padding=1),
        torch.randn(2, 3, 5, 5),
        torch.randn(3, 4, 3, 3),
        torch.randn(4),
    )


def test_depthwise_convolutions_by_name():
    torch.manual_seed(0)
    x, w, b = torch.randn(2, 3, 8, 8), torch.randn(6, 1, 3, 3), torch.randn(6)
    expected = F.conv2d(x, w, b, stride=2, padding=1, groups=3)
    actual = torch.ops.aten._conv_depthwise2d(
        x.to(DEV), w.to(DEV), [3, 3], b.to(DEV), [2, 2], [1, 1], [1, 1]
    )
    torch.testing.assert_close(actual.cpu(), expected, atol=1e-5, rtol=1e-5)
    x3, w3 = torch.randn(1, 2, 4, 4, 4), torch.randn(2, 1, 2, 2, 2)
    actual3 = torch.ops.aten.conv_depthwise3d(
        x3.to(DEV), w3.to(DEV), [2, 2, 2], None, [1, 1, 1], [0, 0, 0], [1, 1, 1]
    )
    torch.testing.assert_close(actual3.cpu(), F.conv3d(x3, w3, groups=2), atol=1e-5, rtol=1e-5)


def test_overrideable_convolutions_have_meta_kernels():
    x, w = torch.empty(2, 4, 9, 9, device="meta"), torch.empty(6, 2, 3, 3, device="meta")
    out = torch.ops.aten.convolution_overrideable(x, w, None, [2, 2], [1, 1], [1, 1], False, [0], 2)
    assert out.shape == (2, 6, 5, 5)
    grads = torch.ops.aten.convolution_backward_overrideable(
        out, x, w, [2, 2], [1, 1], [1, 1], False, [0], 2, [True, True, True]
    )
    assert [g.shape for g in grads] == [x.shape, w.shape, (6,)]


# ------------------------------------------------------------------------------------------
# Recurrent networks: LSTM and GRU use the fused cells on the device, unfused ones on the CPU.


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_recurrent_layers(kind, bias):
    torch.manual_seed(0)
    cpu = getattr(nn, kind)(5, 7, num_layers=2, bias=bias, batch_first=True)
    dev = getattr(nn, kind)(5, 7, num_layers=2, bias=bias, batch_first=True).to(DEV)
    dev.load_state_dict(cpu.state_dict())
    x = torch.randn(3, 4, 5)
    xd = x.to(DEV).requires_grad_()
    x.requires_grad_()
    out, _ = cpu(x)
    out_dev, _ = dev(xd)
    torch.testing.assert_close(out_dev.cpu(), out, atol=1e-5, rtol=1e-5)
    projection = torch.randn(out.shape)
    (out * projection).sum().backward()
    (out_dev * projection.to(DEV)).sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), x.grad, atol=1e-5, rtol=1e-5)
    for (name, a), b in zip(cpu.named_parameters(), dev.parameters(), strict=True):
        torch.testing.assert_close(b.grad.cpu(), a.grad, atol=1e-5, rtol=1e-5, msg=name)


def test_cells_with_only_one_state_gradient():
    """LSTMCell with a loss on the cell state only: grad_hy is undefined in the backward."""
    torch.manual_seed(0)
    cpu = nn.LSTMCell(4, 3)
    dev = nn.LSTMCell(4, 3).to(DEV)
    dev.load_state_dict(cpu.state_dict())
    x = torch.randn(2, 4)
    _, c = cpu(x)
    _, c_dev = dev(x.to(DEV))
    c.sum().backward()
    c_dev.sum().backward()
    for a, b in zip(cpu.parameters(), dev.parameters(), strict=True):
        torch.testing.assert_close(b.grad.cpu(), a.grad, atol=1e-6, rtol=1e-5)


def test_fused_cells_by_name_match_their_definition():
    torch.manual_seed(0)
    gates_i, gates_h, cx = torch.randn(2, 12), torch.randn(2, 12), torch.randn(2, 3)
    hy, cy, workspace = torch.ops.aten._thnn_fused_lstm_cell(
        gates_i.to(DEV), gates_h.to(DEV), cx.to(DEV)
    )
    i, f, g, o = (gates_i + gates_h).chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    expected_cy = f * cx + i * g
    torch.testing.assert_close(cy.cpu(), expected_cy)
    torch.testing.assert_close(hy.cpu(), o * expected_cy.tanh())
    torch.testing.assert_close(workspace.cpu(), torch.cat([i, f, g, o], 1))
    none = torch.ops.aten._thnn_fused_lstm_cell_backward_impl(
        None, None, cx.to(DEV), cy, workspace, True
    )
    assert all(t is None for t in none)
    hx = torch.randn(2, 3)
    hy, workspace = torch.ops.aten._thnn_fused_gru_cell(
        gates_i[:, :9].to(DEV), gates_h[:, :9].to(DEV), hx.to(DEV)
    )
    assert workspace.shape == (2, 15)
    grads = torch.ops.aten._thnn_fused_gru_cell_backward(
        torch.ones(2, 3, device=DEV), workspace, False
    )
    assert [None if t is None else tuple(t.shape) for t in grads] == [
        (2, 9),
        (2, 9),
        (2, 3),
        None,
        None,
    ]


def test_fused_cell_bias_mismatch_is_an_error():
    g, c = torch.randn(2, 8, device=DEV), torch.randn(2, 2, device=DEV)
    with pytest.raises(RuntimeError, match="input_bias and hidden_bias"):
        torch.ops.aten._thnn_fused_lstm_cell(g, g, c, torch.zeros(8, device=DEV), None)
        torch.accelerator.synchronize()


# ------------------------------------------------------------------------------------------
# CUDA's matrix products with an output dtype.


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_matrix_products_with_out_dtype(dtype):
    torch.manual_seed(0)
    a, b = torch.randn(4, 5).to(dtype), torch.randn(5, 3).to(dtype)
    bias = torch.randn(4, 3)
    expected = a.float() @ b.float()
    actual = torch.mm(a.to(DEV), b.to(DEV), out_dtype=torch.float32)
    assert actual.dtype == torch.float32
    torch.testing.assert_close(actual.cpu(), expected)
    actual = torch.addmm(bias.to(DEV), a.to(DEV), b.to(DEV), out_dtype=torch.float32, beta=0.5)
    torch.testing.assert_close(actual.cpu(), 0.5 * bias + expected)
    batch = torch.bmm(a[None].to(DEV), b[None].to(DEV), out_dtype=torch.float32)
    torch.testing.assert_close(batch.cpu(), expected[None])
    out = torch.empty(4, 3, device=DEV)
    torch.mm(a.to(DEV), b.to(DEV), out_dtype=torch.float32, out=out)
    torch.testing.assert_close(out.cpu(), expected)


def test_matrix_product_with_a_wrong_out_dtype_is_an_error():
    a = torch.randn(2, 2, device=DEV)
    with pytest.raises(RuntimeError, match="out_dtype must be the same as the input dtype"):
        torch.mm(a, a, out_dtype=torch.float16)


# ------------------------------------------------------------------------------------------
# SyncBatchNorm's operators: with one process they must reproduce batch norm itself.


def test_sync_batch_norm_operators_reproduce_batch_norm():
    torch.manual_seed(0)
    x, w, b = torch.randn(4, 3, 5, 5), torch.rand(3) + 0.5, torch.randn(3)
    eps, momentum = 1e-5, 0.1
    xd = x.to(DEV)
    mean, invstd = torch.batch_norm_stats(xd, eps)
    torch.testing.assert_close(mean.cpu(), x.mean((0, 2, 3)))
    torch.testing.assert_close(invstd.cpu(), (x.var((0, 2, 3), unbiased=False) + eps).rsqrt())
    running_mean, running_var = torch.zeros(3, device=DEV), torch.ones(3, device=DEV)
    counts = torch.tensor([x.numel() // 3], dtype=torch.float, device=DEV)
    mean, invstd = torch.batch_norm_gather_stats_with_counts(
        xd, mean[None], invstd[None], running_mean, running_var, momentum, eps, counts
    )
    ref_mean, ref_var = torch.zeros(3), torch.ones(3)
    ref = F.batch_norm(x, ref_mean, ref_var, w, b, training=True, momentum=momentum, eps=eps)
    torch.testing.assert_close(running_mean.cpu(), ref_mean)
    torch.testing.assert_close(running_var.cpu(), ref_var)
    out = torch.batch_norm_elemt(xd, w.to(DEV), b.to(DEV), mean, invstd, eps)
    torch.testing.assert_close(out.cpu(), ref, atol=1e-5, rtol=1e-5)

    grad = torch.randn_like(x)
    xr, wr, br = (t.clone().requires_grad_() for t in (x, w, b))
    F.batch_norm(xr, None, None, wr, br, training=True, eps=eps).backward(grad)
    sum_dy, sum_dy_xmu, grad_w, grad_b = torch.batch_norm_backward_reduce(
        grad.to(DEV), xd, mean, invstd, w.to(DEV), True, True, True
    )
    torch.testing.assert_close(grad_w.cpu(), wr.grad, atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(grad_b.cpu(), br.grad, atol=1e-4, rtol=1e-5)
    count = torch.tensor([x.numel() // 3], dtype=torch.int32, device=DEV)
    grad_x = torch.batch_norm_backward_elemt(
        grad.to(DEV), xd, mean, invstd, w.to(DEV), sum_dy, sum_dy_xmu, count
    )
    torch.testing.assert_close(grad_x.cpu(), xr.grad, atol=1e-5, rtol=1e-5)


def test_gather_stats_combines_processes():
    torch.manual_seed(0)
    parts = [torch.randn(2, 3, 4) + i for i in range(3)]
    stats = [torch.batch_norm_stats(p.to(DEV), 1e-5) for p in parts]
    mean, invstd = torch.batch_norm_gather_stats(
        parts[0].to(DEV),
        torch.stack([m for m, _ in stats]),
        torch.stack([s for _, s in stats]),
        None,
        None,
        0.1,
        1e-5,
        8,
    )
    whole = torch.cat(parts)
    torch.testing.assert_close(mean.cpu(), whole.mean((0, 2)))
    torch.testing.assert_close(invstd.cpu(), (whole.var((0, 2), unbiased=False) + 1e-5).rsqrt())


# ------------------------------------------------------------------------------------------
# CUDA's older dropout pair.


def test_fused_dropout_and_masked_scale():
    torch.manual_seed(0)
    x = torch.randn(4000, device=DEV)
    out, mask = torch._fused_dropout(x, 0.75)
    assert mask.dtype == torch.uint8 and mask.device.type == DEV
    kept = mask.cpu().bool()
    assert 0.7 < kept.float().mean().item() < 0.8
    torch.testing.assert_close(out.cpu(), torch.where(kept, x.cpu() / 0.75, 0.0))
    torch.testing.assert_close(torch._masked_scale(x, mask, 2.0).cpu(), x.cpu() * kept * 2.0)
    with pytest.raises(RuntimeError, match=r"mask should be torch\.uint8"):
        torch._masked_scale(x, mask.bool(), 2.0)


# ------------------------------------------------------------------------------------------
# The fallback's accounting applies to them like to any other operator.


def test_equivalents_count_and_obey_the_fallback_mode():
    result = run_python(
        f"""
        import torch, torch_backend
        x = torch.randn(1, 2, 4, 4, 4, device="{DEV}")
        w = torch.randn(3, 2, 2, 2, 2, device="{DEV}")
        torch_backend.reset_fallback_counts()
        torch.nn.functional.conv3d(x, w)
        print(torch_backend.fallback_counts())
        torch_backend.set_fallback_mode("error")
        try:
            torch.nn.functional.conv3d(x, w)
        except NotImplementedError as e:
            print("refused:", e)
        """
    )
    assert result.returncode == 0, result.stderr
    assert "'aten::convolution_overrideable': 1" in result.stdout
    assert "refused:" in result.stdout and "convolution_overrideable" in result.stdout
