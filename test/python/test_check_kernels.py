"""``python -m torch_backend.check_kernels``: the OpInfo check of a vendor's kernels, as a vendor
that pip-installed torch_backend runs it (torch_backend/check_kernels.py; test_opinfo.py runs the
same checks over every kernel).  Each case runs the command in a child process on one or two
kernels (``--ops``) to stay quick: the vendor under test, a library that does not exist, a
malformed option, a vendor whose kernel computes wrong numbers, one whose kernel fails every
call (returns an error, or faults the device) and one whose kernel declines every call.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ONCE, REPO, build_test_vendor, run

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


@ONCE
def test_unloadable_vendor(tmp_path):
    """A LIB that cannot be loaded: exit 2, a message naming it and the loader's error."""
    missing = tmp_path / "libtb_vendor_missing.so"
    result = _check_kernels(str(missing), "--ops", "mul.out")
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"check_kernels: cannot load vendor '{missing}':" in result.stderr
    assert "cannot open shared object file" in result.stderr
    assert "kernel " not in result.stdout


@ONCE
def test_bad_usage():
    result = _check_kernels("--dtypes", "float32,complex64")
    assert result.returncode == 2
    assert "unknown or unsupported dtype 'complex64'" in result.stderr


@ONCE
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
        r"^mul\.out +float32 +(\d+) +(\d+) +([1-9]\d*) +0 +FAIL +OpInfo +\S+ sample \d+ \(.*\): "
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


@ONCE
@pytest.mark.parametrize(
    ("variant", "error", "message"),
    [
        (
            "FAILING_MUL",
            "opstest: mul.out(3 arguments) failed with TB_ERROR_INTERNAL: ",
            "opstest: mul.out: the kernel failed (FAILING_MUL)",
        ),
        (
            "FAULTING_MUL",
            "opstest: device.synchronize(0) failed with TB_ERROR_DEVICE_FAULT: ",
            "opstest: mul.out: bad address (FAULTING_MUL)",
        ),
    ],
    ids=["FAILING_MUL", "FAULTING_MUL"],
)
def test_raising_kernel_fails(tmp_path, variant, error, message):
    """A vendor whose mul.out fails every call it accepts: returns TB_ERROR_INTERNAL with a
    message (-DFAILING_MUL), or faults the device, which the next call reports (-DFAULTING_MUL).
    Every sample raises where the CPU computes: exit 1, a FAIL row for mul.out whose first
    failure is the device's error -- not "no samples", as if the kernel were never reached."""
    library = build_test_vendor(variant)
    report_file = tmp_path / "report.json"
    result = _check_kernels(
        str(library), "--ops", "mul.out", "--dtypes", "float32", "--json", str(report_file)
    )
    assert result.returncode == 1, result.stdout + result.stderr
    fail_row = re.search(
        r"^mul\.out +float32 +(\d+) +0 +\1 +0 +FAIL +OpInfo +mul sample 0 \(.*\): "
        r"AcceleratorError: " + re.escape(error),
        result.stdout,
        re.M,
    )
    assert fail_row and int(fail_row[1]) > 0, result.stdout
    assert "[no kernel returned" not in result.stdout
    assert re.search(
        r"^1 kernel checked: 1 row, 0 passed, 1 failed, .*no samples \(0\)", result.stdout, re.M
    )
    assert "FAIL: kernels that differ from the CPU: mul.out" in result.stdout
    report = json.loads(report_file.read_text())
    assert report["result"] == "fail"
    assert report["summary"]["failed_kernels"] == ["mul.out"]
    assert report["summary"]["no_samples"] == []
    failure = report["rows"][0]["first_failure"]
    assert failure["launched"] is True, failure
    assert failure["error"].startswith(error) and message in failure["error"], failure


@ONCE
def test_declining_kernel_has_no_samples():
    """A kernel that declines every call (TB_ERROR_NOT_SUPPORTED: the CPU fallback runs it;
    ops_vendor.c's sub.out) is not reached, which is no failure: "no samples", exit 0."""
    library = build_test_vendor()
    result = _check_kernels(str(library), "--ops", "sub.out", "--dtypes", "float32")
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"no samples \(1\): sub\.out$", result.stdout, re.M), result.stdout
    assert "OK: every sample that launched a kernel matches the CPU" in result.stdout


def test_fused_optimizers_are_checked_on_generated_samples(tmp_path):
    """The fused optimizer kernels, which no OpInfo reaches, are checked on generated inputs over
    their option sets against the CPU's kernels: a row per dtype naming that reference, every
    sample launched and passed, none listed under "no samples"."""
    fused = sorted(k for k in native_kernels() if k.startswith("_fused_") and k.endswith("_"))
    if not fused:
        pytest.skip("the vendor publishes no fused optimizer kernel")
    report_file = tmp_path / "report.json"
    result = _check_kernels("--ops", *fused, "--dtypes", "float32", "--json", str(report_file))
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(report_file.read_text())
    assert report["summary"]["no_samples"] == []
    assert sorted(r["kernel"] for r in report["rows"]) == fused
    for row in report["rows"]:
        assert row["reference"] == "optimizer options", row
        assert row["result"] == "pass" and row["samples"] == row["passed"] > 0, row
        assert re.search(
            rf"^{re.escape(row['kernel'])} +float32 .* pass +optimizer options$",
            result.stdout,
            re.M,
        ), result.stdout


@ONCE  # its own test vendor: the suite's plays no part
def test_wrong_optimizer_kernel_fails(tmp_path):
    """A _fused_sgd_ that only subtracts lr * grad (ops_vendor.c built with -DWRONG_SGD): the
    plain samples pass, those with momentum, maximize or weight decay fail, and the row names
    the options of the first failure."""
    library = build_test_vendor("WRONG_SGD")
    report_file = tmp_path / "report.json"
    result = _check_kernels(
        str(library), "--ops", "_fused_sgd_", "--dtypes", "float32", "--json", str(report_file)
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAIL: kernels that differ from the CPU: _fused_sgd_" in result.stdout
    (row,) = json.loads(report_file.read_text())["rows"]
    assert row["reference"] == "optimizer options" and row["passed"] > 0 and row["failed"] > 0
    assert row["skipped"] > 0  # the grad scaler's samples: declined, run on the CPU fallback
    failure = row["first_failure"]
    forgotten = ("momentum=0.9", "maximize=True", "weight_decay=0.01")
    assert failure["opinfo"] == "generated", failure
    assert any(option in failure["sample"] for option in forgotten), failure
    assert "max abs error" in failure["summary"], failure


@ONCE  # its own test vendor: the suite's plays no part
def test_foreach_kernels_are_checked_on_schema_samples(tmp_path):
    """Foreach kernels (ops_vendor.c built with -DFOREACH), which no OpInfo reaches as
    published, run on arguments made from their schemas: the right _foreach_mul_.Scalar passes;
    _foreach_add_.List, which ignores alpha, passes at alpha's default and fails at 0.5."""
    library = build_test_vendor("FOREACH")
    report_file = tmp_path / "report.json"
    result = _check_kernels(
        str(library), "--ops", "_foreach*", "--dtypes", "float32", "--json", str(report_file)
    )
    assert result.returncode == 1, result.stdout + result.stderr
    rows = {r["kernel"]: r for r in json.loads(report_file.read_text())["rows"]}
    assert set(rows) == {"_foreach_mul_.Scalar", "_foreach_add_.List"}, rows
    assert all(r["reference"] == "schema samples" for r in rows.values()), rows
    mul, add = rows["_foreach_mul_.Scalar"], rows["_foreach_add_.List"]
    assert mul["result"] == "pass" and mul["samples"] == mul["passed"] == 1, mul
    assert (add["passed"], add["failed"]) == (1, 1), add
    assert add["first_failure"]["sample"] == "alpha=0.5", add
    assert "FAIL: kernels that differ from the CPU: _foreach_add_.List" in result.stdout
