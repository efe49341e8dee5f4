"""The CPU fallback: per-operator counts and the allow / warn / error modes."""

from __future__ import annotations

import pytest
import torch
from conftest import DEV, run_python

import torch_backend


@pytest.fixture
def restore_mode():
    mode = torch_backend.fallback_mode()
    yield
    torch_backend.set_fallback_mode(mode)


def test_counts_per_operator():
    torch_backend.reset_fallback_counts()
    x = torch.ones(4, device=DEV)
    torch.cos(x)
    torch.cos(x)
    counts = torch_backend.fallback_counts()
    if "aten::cos.out" not in counts:
        pytest.skip(f"the vendor has a native kernel for cos: {counts}")
    assert counts["aten::cos.out"] == 2
    torch_backend.reset_fallback_counts()
    assert torch_backend.fallback_counts() == {}


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
    torch_backend.set_fallback_mode("warn")
    torch_backend.reset_fallback_counts()
    x = torch.ones(4, device=DEV)
    with pytest.warns(
        UserWarning, match=r"aten::sin\.out has no device kernel and runs on the CPU"
    ):
        torch.sin(x)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.sin(x)  # second time: no warning


def test_error_mode_names_operator_and_device(restore_mode):
    torch_backend.set_fallback_mode("error")
    x = torch.ones(4, device=DEV)
    with pytest.raises(
        NotImplementedError, match=rf"aten::tan\.out has no kernel for device {DEV}:0"
    ):
        torch.tan(x)
    torch_backend.set_fallback_mode("allow")
    assert torch.tan(x).device.type == DEV


def test_bad_mode_is_rejected(restore_mode):
    with pytest.raises(ValueError, match="is not a fallback mode"):
        torch_backend.set_fallback_mode("sometimes")


def test_environment_variable():
    result = run_python(
        f"""
        import torch, torch_backend
        print(torch_backend.fallback_mode())
        try:
            torch.erf(torch.ones(2, device="{DEV}"))
        except NotImplementedError as e:
            print("refused:", e)
        """,
        TORCH_BACKEND_FALLBACK="error",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("error")
    assert "refused:" in result.stdout and "aten::erf.out" in result.stdout
    bad = run_python("import torch_backend", TORCH_BACKEND_FALLBACK="maybe")
    assert bad.returncode != 0
    assert "TORCH_BACKEND_FALLBACK='maybe' is not a fallback mode" in bad.stderr
