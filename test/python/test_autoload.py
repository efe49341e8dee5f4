"""PyTorch's backend autoload: plain `import torch` loads torch_backend, unless disabled."""

from __future__ import annotations

from conftest import DEV, run_python


def test_import_torch_loads_the_device():
    result = run_python(
        f"""
        import sys, torch
        print("torch_backend" in sys.modules, torch.ones(2, device="{DEV}").device)
        """,
        TORCH_DEVICE_BACKEND_AUTOLOAD="1",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", f"{DEV}:0"]


def test_autoload_can_be_disabled():
    result = run_python(
        f"""
        import sys, torch
        print("torch_backend" in sys.modules, hasattr(torch, "{DEV}"))
        # torch 2.14 caches the answer: the CPU's module here (CUDA's in torch's CUDA builds)
        before = torch.get_device_module().__name__
        import torch_backend
        after = torch.get_device_module().__name__
        print(hasattr(torch, "{DEV}"), before != after, after)
        """,
        TORCH_DEVICE_BACKEND_AUTOLOAD="0",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "False",
        "False",
        "True",
        "True",
        "torch_backend.device_module",
    ]
