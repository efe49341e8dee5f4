"""A vendor built against the ABI 1.1 header (test/abi/legacy_vendor.c), loaded into PyTorch
through the loader's 1.x adapter: its kernels run natively -- one of them with a Tensor[]
argument -- and agree with the CPU.  Run by CTest with TB_TEST_LEGACY_VENDOR naming the
library (test/abi/CMakeLists.txt)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def test_legacy_vendor_runs_its_kernels_natively():
    code = textwrap.dedent(
        """
        import torch, torch_backend
        info = torch_backend.vendor_info()
        assert info["device_type"] == "legacy" and info["abi_version"] == "1.1", info
        assert torch_backend.op_coverage(["add.out", "cat.out", "mul.out"]) == {
            "add.out": "native", "cat.out": "native", "mul.out": "fallback"}
        a = torch.randn(3, 4)
        b = torch.randn(2, 4)
        x, y = a.to("legacy"), b.to("legacy")
        torch_backend.reset_kernel_counts()
        torch_backend.reset_fallback_counts()
        assert torch.equal(torch.add(x, x, alpha=3).cpu(), torch.add(a, a, alpha=3))
        assert torch.equal(torch.cat([x, y, x]).cpu(), torch.cat([a, b, a]))
        assert torch_backend.kernel_counts() == {"add.out": 1, "cat.out": 1}, (
            torch_backend.kernel_counts())
        assert not torch_backend.fallback_counts(), torch_backend.fallback_counts()
        # What the 1.x kernels decline runs on the CPU fallback.
        assert torch.equal(torch.cat([x, y], dim=0).t().contiguous().cpu(),
                           torch.cat([a, b]).t().contiguous())
        assert torch.equal(torch.cat([x.t(), x.t()], dim=1).cpu(), torch.cat([a.t(), a.t()], 1))
        print("legacy ok", torch.legacy.get_device_name(0))
        """
    )
    environment = dict(os.environ, TORCH_BACKEND_VENDOR=os.environ["TB_TEST_LEGACY_VENDOR"])
    result = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "legacy ok Fake Device 0" in result.stdout
