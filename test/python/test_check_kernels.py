"""``python -m torch_backend.check_kernels``: the OpInfo check of a vendor's kernels, as a vendor
that pip-installed torch_backend runs it (torch_backend/check_kernels.py; test_opinfo.py runs the
same checks over every kernel).  Each case runs the command in a child process on one or two
kernels (``--ops``) to stay quick: the vendor under test, a library that does not exist, a
malformed option, and a vendor whose kernel computes wrong numbers.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, build_test_vendor, run

from torch_backend.check_kernels import native_kernels

# Kernels emu, npu and opencl publish, each reached by one OpInfo with a few samples.
_QUICK_KERNELS = ["cos.out", "floor.out", "sin.out", "tan.out"]
_OPS_VENDOR = REPO / "test" / "python" / "vendors" / "ops_vendor.c"


def _check_kernels(*args: str) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "torch_backend.check_kernels", *args], timeout=300)


def _row(kernel: str) -> re.Pattern[str]:
    """A table row of ``kernel``: name, dtype, samples, passed, failed, skipped, result."""
    return re.compile(rf"^{re.escape(kernel)} +(\w+) +(\d+) +(\d+) +(\d+) +(\d+) +(pass|FAIL|skip)")


def test_current_vendor_passes(tmp_path):
    """On the vendor the suite runs (TORCH_BACKEND_VENDOR), two of its kernels: a row per
    kernel and dtype, every one passed, exit 0; a vendor without kernels has nothing to check."""
    kernels = native_kernels()
    chosen = [k for k in _QUICK_KERNELS if k in kernels][:2] or sorted(kernels)[:2]
    report_file = tmp_path / "report.json"
    result = _check_kernels(*(["--ops", *chosen] if chosen else []), "--json", str(report_file))
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(report_file.read_text())
    assert report["result"] == "pass"
    if not kernels:
        assert "the vendor publishes no kernels: nothing to check" in result.stdout
        assert report["rows"] == []
        return
    assert re.search(
        r"^kernel +dtype +samples +passed +failed +skipped +result", result.stdout, re.M
    )
    for kernel in chosen:
        rows = [r for r in report["rows"] if r["kernel"] == kernel]
        assert rows or kernel in report["summary"]["no_samples"], report
        for row in rows:
            assert row["result"] == "pass" and row["samples"] == row["passed"] > 0, row
            line = _row(kernel)
            assert any(line.match(text) for text in result.stdout.splitlines()), result.stdout
    if set(chosen) <= set(_QUICK_KERNELS):
        assert report["rows"], result.stdout  # each of these has an OpInfo that launches it
    assert re.search(r"^\d+ kernels? checked: \d+ rows?, \d+ passed, 0 failed", result.stdout, re.M)
    assert "OK: every sample that launched a kernel matches the CPU" in result.stdout


def test_unloadable_vendor(tmp_path):
    """A LIB that cannot be loaded: exit 2, a message naming it and the loader's error."""
    missing = tmp_path / "libtb_vendor_missing.so"
    result = _check_kernels(str(missing), "--ops", "mul.out")
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"check_kernels: cannot load vendor '{missing}':" in result.stderr
    assert "cannot open shared object file" in result.stderr
    assert "kernel " not in result.stdout


def test_bad_usage():
    result = _check_kernels("--dtypes", "float32,complex64")
    assert result.returncode == 2
    assert "unknown or unsupported dtype 'complex64'" in result.stderr


def test_wrong_kernel_fails(tmp_path):
    """A vendor whose mul.out adds 1 to every product (ops_vendor.c built with -DWRONG_MUL):
    exit 1, and the FAIL row names mul.out and the first mismatching sample's errors."""
    if "WRONG_MUL" not in _OPS_VENDOR.read_text():
        pytest.skip("test/python/vendors/ops_vendor.c has no WRONG_MUL variant to build")
    library = build_test_vendor("WRONG_MUL")
    report_file = tmp_path / "report.json"
    result = _check_kernels(
        str(library), "--ops", "mul.out", "--dtypes", "float32", "--json", str(report_file)
    )
    assert result.returncode == 1, result.stdout + result.stderr
    fail_row = re.search(
        r"^mul\.out +float32 +(\d+) +(\d+) +([1-9]\d*) +0 +FAIL +\S+ sample \d+ \(.*\): "
        r"(output|gradient) \d+: .*max abs error",
        result.stdout,
        re.M,
    )
    assert fail_row, result.stdout
    assert "FAIL: kernels that differ from the CPU: mul.out" in result.stdout
    report = json.loads(report_file.read_text())
    assert report["result"] == "fail"
    assert report["summary"]["failed_kernels"] == ["mul.out"]
    assert Path(report["vendor"]["library"]).resolve() == library.resolve()
