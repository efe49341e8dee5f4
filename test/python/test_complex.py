"""Complex tensors on the device behave as on the CPU: their real and imaginary views are views
(writing through them changes the tensor), complex Python numbers mix with real and complex
tensors, and operators whose CPU kernels handle complex dtypes run (no kernel of the vendor's
is needed: the CPU fallback computes them)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import DEV


def pair(*shape: int, dtype: torch.dtype = torch.complex64) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(sum(shape))
    cpu = torch.randn(*shape, dtype=dtype, generator=generator)
    return cpu, cpu.to(DEV)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_real_and_imag_are_views(dtype):
    cpu, dev = pair(6, dtype=dtype)
    for t in (cpu, dev):
        t.real.mul_(2)
        t.imag.add_(1)
        torch.view_as_real(t)[0, 0] = 7.0
    torch.testing.assert_close(dev.cpu(), cpu)
    assert torch.view_as_real(dev).untyped_storage().data_ptr() == dev.untyped_storage().data_ptr()


def test_view_as_complex_is_a_view():
    cpu = torch.arange(8.0)
    dev = cpu.to(DEV)
    for t in (cpu, dev):
        torch.view_as_complex(t.view(4, 2)).mul_(1j)
    torch.testing.assert_close(dev.cpu(), cpu)
    # ATen's own checks, as on the CPU
    with pytest.raises(RuntimeError, match="Tensor must have a last dimension of size 2"):
        torch.view_as_complex(dev.view(2, 4))


def test_unfold_is_a_view():
    cpu = torch.arange(10.0)
    dev = cpu.to(DEV)
    for t in (cpu, dev):
        t.unfold(0, 4, 3).mul_(-1)
    torch.testing.assert_close(dev.cpu(), cpu)


@pytest.mark.parametrize(
    "expression",
    [
        lambda t: t * 2j,
        lambda t: t + (1 - 2j),
        lambda t: t.real + 1j,
        lambda t: 2.0 - t,
        lambda t: (1 + 1j) / t,
        lambda t: torch.where(t.real > 0, t, 1j),
        lambda t: torch.addmm(t, t, t, beta=0.5, alpha=1j),
        lambda t: t @ t.mH,
        lambda t: t.conj().sum() * 1j,
    ],
    ids=["t*2j", "t+(1-2j)", "real+1j", "2.0-t", "(1+1j)/t", "where", "addmm", "matmul", "conj"],
)
def test_complex_numbers_and_tensors(expression):
    cpu, dev = pair(3, 3)
    result = expression(dev)
    assert result.device.type == DEV
    torch.testing.assert_close(result.cpu(), expression(cpu))


def test_complex_convolution():
    x, dx = pair(1, 2, 5, 5)
    w, dw = pair(3, 2, 3, 3)
    torch.testing.assert_close(F.conv2d(dx, dw).cpu(), F.conv2d(x, w), atol=1e-4, rtol=1e-4)


def test_operators_implemented_by_a_composite_over_a_cpu_stub():
    # ATen's composites for these call a CPU-only DispatchStub directly: the fallback runs them.
    cpu, dev = pair(5)
    for t in (cpu, dev):
        t.conj_physical_()
    torch.testing.assert_close(dev.cpu(), cpu)
    window = torch.kaiser_window(7, periodic=False, beta=5.0, device=DEV)
    assert window.device.type == DEV
    torch.testing.assert_close(window.cpu(), torch.kaiser_window(7, periodic=False, beta=5.0))


REDUCTIONS = {
    "sum": lambda t: t.sum(),
    "sum_dim": lambda t: t.sum(1, keepdim=True),
    "mean": lambda t: t.mean(0),
    "cumsum": lambda t: t.cumsum(1),
    "sum_out": lambda t: torch.sum(t, 0, out=torch.empty(5, dtype=t.dtype, device=t.device)),
}


@pytest.mark.parametrize("name", REDUCTIONS)
def test_complex_half_reductions_compute_as_cuda_does(name):
    # The CPU has no ComplexHalf kernel for these; CUDA computes them in complex<float> and
    # rounds: the CPU fallback does the same.
    fn = REDUCTIONS[name]
    cpu, _ = pair(4, 5)
    half = cpu.to(torch.complex32)
    result = fn(half.to(DEV))
    assert result.dtype == torch.complex32 and result.device.type == DEV
    expected = fn(half.to(torch.complex64)).to(torch.complex32)
    torch.testing.assert_close(result.cpu().to(torch.complex64), expected.to(torch.complex64))


def test_lazy_clone_is_an_independent_copy():
    cpu = torch.arange(12.0).view(3, 4).t()
    dev = cpu.to(DEV)
    clone = torch._lazy_clone(dev)
    assert clone.device == dev.device and clone.stride() == dev.stride()
    dev.add_(100)
    torch.testing.assert_close(clone.cpu(), cpu)
    clone.mul_(2)
    torch.testing.assert_close(dev.cpu(), cpu + 100)
