"""Quantized tensors on the device (csrc/aten/Quantized.cpp): QuantizedPrivateUse1 as
QuantizedCUDA has it -- the integer representation in device memory, the quantizer as host
metadata -- per-tensor and per-channel affine, quantize/dequantize matching the CPU bit for
bit, views and copies carrying the quantizer, the quantized operators through the CPU
fallback, and save/load."""

from __future__ import annotations

import io
import warnings

import pytest
import torch
from conftest import DEV, MODULE

import torch_backend

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions.*deprecated")

QDTYPES = [torch.qint8, torch.quint8, torch.qint32]
# The bundled vendor that publishes quantize_per_tensor and dequantize.self kernels.
KERNELS = DEV == "emu"


def data(*shape: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g) * 8
    # Values on rounding boundaries, where round-half-even and the fused multiply-add matter.
    flat = x.view(-1)
    flat[: flat.numel() // 4] = (torch.arange(flat.numel() // 4) - flat.numel() // 8) * 0.05
    return x


def assert_same(q: torch.Tensor, expected: torch.Tensor, x: torch.Tensor | None = None) -> None:
    """q (on the device) holds expected's integers, and dequantizes as the CPU dequantizes them.
    With the float values `x` of a per-tensor quantize, an integer may differ by one where
    x / scale is exactly halfway between two integers: PyTorch's CPU kernels disagree there
    between releases (2.13's FBGEMM loop adds the zero point before rounding, 2.14 and ATen's
    reference after), and a vendor kernel follows the reference."""
    assert q.device.type == DEV and q.is_quantized
    assert q.dtype == expected.dtype and q.qscheme() == expected.qscheme()
    assert q.shape == expected.shape
    got = q.int_repr().cpu()
    diff = got.long() - expected.int_repr().long()
    if x is None:
        assert not diff.any()
    else:
        scaled = x.double() / q.q_scale()
        tie = (scaled - scaled.floor() - 0.5).abs() < 1e-4
        assert (diff.abs() <= 1).all() and not (diff.ne(0) & ~tie).any()
    if q.qscheme() == torch.per_tensor_affine:
        own = torch._make_per_tensor_quantized_tensor(got, q.q_scale(), q.q_zero_point())
    else:
        own = torch._make_per_channel_quantized_tensor(
            got,
            q.q_per_channel_scales().cpu(),
            q.q_per_channel_zero_points().cpu(),
            q.q_per_channel_axis(),
        )
    assert torch.equal(q.dequantize().cpu(), own.dequantize())


@pytest.mark.parametrize("dtype", QDTYPES, ids=str)
@pytest.mark.parametrize("scale,zero_point", [(0.1, 10), (0.05, 0), (2.5, 3)])
def test_quantize_per_tensor_matches_the_cpu(dtype, scale, zero_point):
    x = data(6, 33)
    q = torch.quantize_per_tensor(x.to(DEV), scale, zero_point, dtype)
    expected = torch.quantize_per_tensor(x, scale, zero_point, dtype)
    assert_same(q, expected, x)
    assert q.q_scale() == scale and q.q_zero_point() == zero_point
    assert q.qscheme() == torch.per_tensor_affine
    assert q.int_repr().device.type == DEV and q.dequantize().device.type == DEV
    # The overload with scale and zero point as tensors, on the device.
    q2 = torch.quantize_per_tensor(
        x.to(DEV), torch.tensor(scale, device=DEV), torch.tensor(zero_point, device=DEV), dtype
    )
    assert_same(q2, expected, x)


@pytest.mark.parametrize("dtype", QDTYPES, ids=str)
def test_special_values_match_the_cpu(dtype):
    special = [float("nan"), float("inf"), -float("inf"), 1e30, -1e30, 0.0, -0.0, 2.5, 3.5, -2.5]
    x = torch.tensor(special * 5)
    zero_point = 3 if dtype == torch.quint8 else 0
    expected = torch.quantize_per_tensor(x, 1.0, zero_point, dtype)
    q = torch.quantize_per_tensor(x.to(DEV), 1.0, zero_point, dtype)
    assert_same(q, expected, x)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", [torch.qint8, torch.quint8], ids=str)
def test_quantize_per_channel_matches_the_cpu(axis, dtype):
    x = data(4, 5, 3)
    channels = x.shape[axis]
    scales = torch.linspace(0.02, 0.3, channels, dtype=torch.float64)
    zero_points = torch.arange(channels, dtype=torch.int64) + 2
    q = torch.quantize_per_channel(x.to(DEV), scales, zero_points, axis, dtype)
    expected = torch.quantize_per_channel(x, scales, zero_points, axis, dtype)
    assert_same(q, expected)
    assert q.q_per_channel_axis() == axis
    assert torch.equal(q.q_per_channel_scales().cpu(), scales)
    assert torch.equal(q.q_per_channel_zero_points().cpu(), zero_points)


def test_the_integer_representation_lives_in_device_memory():
    before = MODULE.memory_allocated()
    q = torch.quantize_per_tensor(torch.randn(1024, 64).to(DEV), 0.1, 0, torch.qint8)
    MODULE.synchronize()
    # One byte per element (at least) in device memory beside the float tensor's 4.
    assert MODULE.memory_allocated() - before >= 1024 * 64
    assert q.untyped_storage().device.type == DEV
    assert q.untyped_storage().nbytes() == 1024 * 64


def test_factories():
    e = torch._empty_affine_quantized(
        [2, 3], scale=0.5, zero_point=2, dtype=torch.qint8, device=DEV
    )
    assert e.device.type == DEV and e.dtype == torch.qint8
    assert (e.q_scale(), e.q_zero_point()) == (0.5, 2)
    like = torch.empty_like(e)
    assert like.device == e.device and like.q_scale() == 0.5 and like.shape == e.shape
    c = torch._empty_per_channel_affine_quantized(
        [3, 2],
        scales=torch.ones(3, dtype=torch.float64),
        zero_points=torch.zeros(3, dtype=torch.long),
        axis=0,
        dtype=torch.quint8,
        device=DEV,
    )
    assert c.device.type == DEV and c.qscheme() == torch.per_channel_affine
    # Assembled from an integer device tensor.
    ints = torch.randint(-100, 100, (4, 5), dtype=torch.int8)
    m = torch._make_per_tensor_quantized_tensor(ints.to(DEV), 0.25, -3)
    assert_same(m, torch._make_per_tensor_quantized_tensor(ints, 0.25, -3))


def test_views_and_copies_carry_the_quantizer():
    x = data(4, 6)
    q = torch.quantize_per_tensor(x.to(DEV), 0.1, 5, torch.qint8)
    assert_same(q, torch.quantize_per_tensor(x, 0.1, 5, torch.qint8), x)
    expected = q.cpu()  # the views and copies below move these integers exactly
    for view in (
        lambda t: t[1],
        lambda t: t[:, 2:5],
        lambda t: t.t(),
        lambda t: t.reshape(6, 4),
        lambda t: t.view(24),
        lambda t: t.unsqueeze(0),
        lambda t: t.permute(1, 0),
    ):
        assert_same(view(q), view(expected))
        assert view(q).untyped_storage().data_ptr() == q.untyped_storage().data_ptr()
    assert_same(q.t().contiguous(), expected.t().contiguous())
    assert_same(q.clone(), expected)
    assert_same(q.cpu().to(DEV), expected)
    assert_same(expected.to(DEV), expected)
    # copy_ between quantized tensors: the source's quantizer travels with the values.
    target = torch._empty_affine_quantized(
        [4, 6], scale=1.0, zero_point=0, dtype=torch.qint8, device=DEV
    )
    target.copy_(q)
    assert_same(target, expected)
    assert target.q_scale() == 0.1
    # A float source is quantized with the destination's parameters.
    y = data(4, 6, seed=1)
    target.copy_(y.to(DEV))
    ref = torch.quantize_per_tensor(y, 0.1, 5, torch.qint8)
    assert_same(target, ref)


def test_copy_errors_name_what_was_wrong():
    q = torch.quantize_per_tensor(torch.randn(3).to(DEV), 0.1, 0, torch.qint8)
    with pytest.raises(RuntimeError, match="Copying from quantized Tensor to non-quantized"):
        torch.empty(3, device=DEV).copy_(q)
    other = torch.quantize_per_tensor(torch.randn(3).to(DEV), 0.1, 0, torch.quint8)
    with pytest.raises(RuntimeError, match="same dtype, got QUInt8 into QInt8"):
        q.copy_(other)
    per_channel = torch.quantize_per_channel(
        torch.randn(3).to(DEV),
        torch.ones(3, dtype=torch.float64),
        torch.zeros(3, dtype=torch.long),
        0,
        torch.qint8,
    )
    with pytest.raises(RuntimeError, match="same qscheme"):
        q.copy_(per_channel)


def test_quantized_operators_run_through_the_fallback():
    x, y = data(3, 8), data(3, 8, seed=2)
    qx = torch.quantize_per_tensor(x, 0.1, 3, torch.quint8)
    qy = torch.quantize_per_tensor(y, 0.2, 1, torch.quint8)
    dx, dy = qx.to(DEV), qy.to(DEV)
    torch_backend.reset_fallback_counts()
    assert_same(torch.ops.quantized.add(dx, dy, 0.25, 4), torch.ops.quantized.add(qx, qy, 0.25, 4))
    assert_same(torch.cat([dx, dx], 1), torch.cat([qx, qx], 1))
    assert_same(torch.relu(dx), torch.relu(qx))
    assert torch.equal(dx, dx.clone()) and not torch.equal(dx, dy.to(DEV))
    counts = torch_backend.fallback_counts()
    assert counts.get("quantized::add") == 1 and counts.get("aten::cat") == 1
    # In place: the device tensor's own values change.
    dx.fill_(0.5)
    qx.fill_(0.5)
    assert_same(dx, qx)


def test_vendor_kernels_or_the_cpu_quantizer():
    x = data(2, 3, 8, 5)
    for layout in (x, x.transpose(1, 3), x.contiguous(memory_format=torch.channels_last)):
        torch_backend.reset_kernel_counts()
        torch_backend.reset_fallback_counts()
        q = torch.quantize_per_tensor(layout.to(DEV), 0.07, 3, torch.qint8)
        expected = torch.quantize_per_tensor(layout, 0.07, 3, torch.qint8)
        assert_same(q, expected, layout)
        assert q.stride() == expected.stride()
        ran = torch_backend.kernel_counts()
        fell = torch_backend.fallback_counts()
        if KERNELS:
            assert ran == {"quantize_per_tensor": 1, "dequantize.self": 1} and fell == {}
        else:
            assert fell == {"aten::quantize_per_tensor": 1, "aten::dequantize.self": 1}


def test_fallback_error_mode_refuses_the_cpu_quantizer():
    mode = torch_backend.fallback_mode()
    x = torch.randn(3).to(DEV)
    torch_backend.set_fallback_mode("error")
    try:
        with pytest.raises(
            NotImplementedError, match="aten::quantize_per_channel cannot run on device"
        ):
            torch.quantize_per_channel(
                x,
                torch.ones(3, dtype=torch.float64),
                torch.zeros(3, dtype=torch.long),
                0,
                torch.qint8,
            )
        if not KERNELS:
            with pytest.raises(
                NotImplementedError, match="aten::quantize_per_tensor cannot run on"
            ):
                torch.quantize_per_tensor(x, 0.1, 0, torch.qint8)
    finally:
        torch_backend.set_fallback_mode(mode)


def test_save_and_load():
    x = data(5, 7)
    tensors = {
        "per_tensor": torch.quantize_per_tensor(x.to(DEV), 0.1, 5, torch.qint8),
        "per_channel": torch.quantize_per_channel(
            x.to(DEV),
            torch.linspace(0.05, 0.2, 5, dtype=torch.float64),
            torch.arange(5),
            0,
            torch.quint8,
        ),
    }
    buffer = io.BytesIO()
    torch.save(tensors, buffer)
    buffer.seek(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = torch.load(buffer)
    for name, q in tensors.items():
        assert loaded[name].device == q.device
        assert_same(loaded[name], q.cpu())
    buffer.seek(0)
    on_cpu = torch.load(buffer, map_location="cpu")
    assert_same(tensors["per_tensor"], on_cpu["per_tensor"])
