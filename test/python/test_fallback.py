"""The CPU fallback: per-operator counts and the allow / warn / error modes."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
import torch
from conftest import DEV, fallback_ops, run_python

import torch_backend


@pytest.fixture
def restore_mode():
    mode = torch_backend.fallback_mode()
    yield
    torch_backend.set_fallback_mode(mode)


def test_counts_per_operator():
    (fn, op), (other_fn, other_op) = fallback_ops(2)
    torch_backend.reset_fallback_counts()
    x = torch.full((4,), 0.5, device=DEV)
    getattr(torch, fn)(x)
    getattr(torch, fn)(x)
    getattr(torch, other_fn)(x)
    assert torch_backend.fallback_counts() == {op: 2, other_op: 1}
    torch_backend.reset_fallback_counts()
    assert torch_backend.fallback_counts() == {}


def test_fallback_matches_cpu():
    ((fn, _),) = fallback_ops(1)
    x = torch.linspace(0.1, 0.9, 7)
    result = getattr(torch, fn)(x.to(DEV))
    assert result.device.type == DEV
    torch.testing.assert_close(result.cpu(), getattr(torch, fn)(x))


def test_minimal_ops_never_fall_back():
    torch_backend.reset_fallback_counts()
    x = torch.empty(3, 4, device=DEV)
    x.fill_(1)
    x.zero_()
    y = x.t().contiguous().view(12)
    y.cpu()
    assert x[0, 0].item() == 0.0
    assert torch_backend.fallback_counts() == {}


def test_warn_mode_warns_once_per_operator(restore_mode):
    ((fn, op),) = fallback_ops(1)
    torch_backend.set_fallback_mode("warn")
    torch_backend.reset_fallback_counts()
    x = torch.ones(4, device=DEV)
    with pytest.warns(
        UserWarning, match=rf"{re.escape(op)} runs on the CPU: the vendor has no kernel for it"
    ):
        getattr(torch, fn)(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(torch, fn)(x)  # second time: no warning


def test_error_mode_names_operator_and_device(restore_mode):
    ((fn, op),) = fallback_ops(1)
    torch_backend.set_fallback_mode("error")
    x = torch.ones(4, device=DEV)
    refused = f"{op} cannot run on device {DEV}:0 (the vendor has no kernel for it)"
    with pytest.raises(NotImplementedError, match=re.escape(refused)):
        getattr(torch, fn)(x)
    torch_backend.set_fallback_mode("allow")
    assert getattr(torch, fn)(x).device.type == DEV


def test_bad_mode_is_rejected(restore_mode):
    with pytest.raises(ValueError, match="is not a fallback mode"):
        torch_backend.set_fallback_mode("sometimes")


def test_environment_variable():
    ((fn, op),) = fallback_ops(1)
    result = run_python(
        f"""
        import torch, torch_backend
        print(torch_backend.fallback_mode())
        try:
            torch.{fn}(torch.ones(2, device="{DEV}"))
        except NotImplementedError as e:
            print("refused:", e)
        """,
        TORCH_BACKEND_FALLBACK="error",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("error")
    assert "refused:" in result.stdout and op in result.stdout
    bad = run_python("import torch_backend", TORCH_BACKEND_FALLBACK="maybe")
    assert bad.returncode != 0
    assert "TORCH_BACKEND_FALLBACK='maybe' is not a fallback mode" in bad.stderr


_PRODUCTS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")


@pytest.mark.skipif(DEV != "ocl", reason="the opencl vendor's GEMM engines")
@pytest.mark.parametrize("engine", ["native", "clblast"])
def test_opencl_gemm_engines_match_cpu(engine):
    """TORCH_BACKEND_OPENCL_GEMM picks the engine (native on CPU devices by default, CLBlast on
    GPUs): each computes every layout of test_kernels' sweep, float32 and float64, as the CPU
    does; the native engine takes every layout, without the CPU fallback."""
    result = run_python(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import torch, torch_backend
        from test_kernels import _matrix_products
        for dtype, tolerance in ((torch.float32, 1e-4), (torch.float64, 1e-10)):
            pairs = zip(_matrix_products(dtype, "ocl"), _matrix_products(dtype, "cpu"), strict=True)
            for i, (got, want) in enumerate(pairs):
                torch.testing.assert_close(got, want, atol=tolerance, rtol=tolerance,
                                           msg=lambda m, i=i: f"product {{i}}: {{m}}")
        print(sorted(torch_backend.fallback_counts()))
        """,
        TORCH_BACKEND_OPENCL_GEMM=engine,
    )
    assert result.returncode == 0, result.stderr
    if engine == "native":  # CLBlast declines some layouts (vendor.h allows it)
        assert not [op for op in _PRODUCTS if op in result.stdout], result.stdout


@pytest.mark.skipif(DEV != "ocl", reason="the opencl vendor's CLBlast")
@pytest.mark.parametrize("engine", ["", "clblast"])
def test_opencl_without_clblast(tmp_path, engine):
    """Where CLBlast is not installed the native engine serves every device; with CLBlast asked
    for by name the products decline to the CPU fallback (their results right).  Convolutions
    take their direct kernels then instead of im2col and GEMM."""
    result = run_python(
        """
        import torch, torch.nn.functional as F, torch_backend
        a, b = torch.randn(8, 5), torch.randn(5, 3)
        torch.testing.assert_close((a.to("ocl") @ b.to("ocl")).cpu(), a @ b)
        x, w = torch.randn(2, 3, 6, 6, requires_grad=True), torch.randn(4, 3, 3, 3)
        y = F.conv2d(x.detach().to("ocl"), w.to("ocl"), padding=1)
        torch.testing.assert_close(y.cpu(), F.conv2d(x, w, padding=1), rtol=1e-4, atol=1e-5)
        print(sorted(torch_backend.fallback_counts()))
        """,
        TORCH_BACKEND_OPENCL_CLBLAST=str(tmp_path / "libclblast.so.1"),
        TORCH_BACKEND_OPENCL_GEMM=engine,
    )
    assert result.returncode == 0, result.stderr
    assert ("aten::mm" in result.stdout) == (engine == "clblast"), result.stdout
    assert "convolution" not in result.stdout


def test_a_declined_call_says_why_in_the_warning_and_the_error(restore_mode):
    """When the vendor's kernel declines a call (mm.out takes no int16 on emu, opencl or npu),
    the fallback names the kernel and its reason; the next fallback of another operator does
    not inherit it."""
    if torch_backend.op_coverage(["mm.out"])["mm.out"] != "native":
        pytest.skip(f"{DEV} has no mm.out kernel")
    a = torch.ones(3, 3, dtype=torch.int16, device=DEV)
    reason = (
        "aten::mm runs on the CPU: the vendor's kernel mm.out declined the call: its first "
        "tensor's dtype Short is not among the kernel's dtypes"
    )
    torch_backend.set_fallback_mode("warn")
    torch_backend.reset_fallback_counts()
    with pytest.warns(UserWarning, match=re.escape(reason)):
        assert torch.equal(torch.mm(a, a).cpu(), torch.full((3, 3), 3, dtype=torch.int16))
    ((fn, op),) = fallback_ops(1)
    with pytest.warns(UserWarning, match=rf"{re.escape(op)} runs on the CPU: the vendor has no"):
        getattr(torch, fn)(torch.ones(4, device=DEV))
    torch_backend.set_fallback_mode("error")
    refused = (
        f"aten::mm cannot run on device {DEV}:0 (the vendor's kernel mm.out declined the call: "
        "its first tensor's dtype Short"
    )
    with pytest.raises(NotImplementedError, match=re.escape(refused)):
        torch.mm(a, a)


def test_a_call_kept_from_the_kernel_says_why(restore_mode):
    """A call whose output shares memory with an input (addmm into its own addend) runs on the
    CPU fallback, whose copies keep the aliasing; the warning says torch_backend kept it from
    the vendor's kernel, and why -- not that the vendor has no kernel -- and the result is the
    CPU's."""
    if torch_backend.op_coverage(["addmm.out"])["addmm.out"] != "native":
        pytest.skip(f"{DEV} has no addmm.out kernel")
    generator = torch.Generator().manual_seed(0)
    s, m, v = (torch.randn(shape, generator=generator) for shape in [(4, 1), (4, 6), (6, 1)])
    expected = torch.addmm(s, m, v)
    on_device = s.to(DEV)
    torch_backend.set_fallback_mode("warn")
    reason = (
        "aten::addmm.out runs on the CPU: torch_backend did not hand the call to the vendor's "
        "kernel: an output shares memory with an input or another output"
    )
    with pytest.warns(UserWarning, match=re.escape(reason)):
        torch.addmm(on_device, m.to(DEV), v.to(DEV), out=on_device)
    torch.testing.assert_close(on_device.cpu(), expected)
