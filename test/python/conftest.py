"""Shared fixtures for the Python suites.

The suites are vendor-agnostic: they run against whichever vendor TORCH_BACKEND_VENDOR names
(``make test`` runs them once per bundled vendor, each in its own process) and read the device
type from ``torch_backend.vendor_info()``.
"""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

# Two devices unless the caller chose otherwise: the multi-device suites need them.
os.environ.setdefault("TORCH_BACKEND_FAKE_DEVICE_COUNT", "2")

import pytest
import torch

import torch_backend

REPO = Path(__file__).resolve().parents[2]
DEV: str = torch_backend.vendor_info()["device_type"]
MODULE = getattr(torch, DEV)

# For tests that do not use the suite's vendor (they run tools or child processes with an
# environment of their own): run them once per `make test` -- in emu's pass under the primary
# torch release (the first of torch-releases.txt), not once per vendor and again under
# test-compat's.
_FIRST_RELEASE = next(
    line.split()[0]
    for line in (REPO / "torch-releases.txt").read_text().splitlines()
    if line.split("#", 1)[0].strip()
)
ONCE = pytest.mark.skipif(
    DEV != "emu" or torch.__version__.split("+")[0] != _FIRST_RELEASE,
    reason="independent of the suite's vendor and torch release: runs once, in the emu pass "
    f"under torch {_FIRST_RELEASE}",
)


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    """Run a command, capturing text output; never raises on a non-zero exit."""
    return subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run Python code in a fresh interpreter with extra environment variables (a value of ""
    removes the variable)."""
    environment = dict(os.environ)
    for name, value in env.items():
        if value == "":
            environment.pop(name, None)
        else:
            environment[name] = value
    return run([sys.executable, "-c", textwrap.dedent(code)], env=environment, timeout=300)


# Unary operators no bundled vendor implements, with the name the fallback counts them under.
_FALLBACK_CANDIDATES = [
    ("erfinv", "aten::erfinv.out"),
    ("erfc", "aten::erfc.out"),
    ("sinc", "aten::sinc.out"),
    ("i0", "aten::i0.out"),
]


def fallback_ops(count: int) -> list[tuple[str, str]]:
    """``count`` unary operators (torch function name, operator name) that run through the CPU
    fallback on this vendor, as :func:`torch_backend.op_coverage` reports; skips the test when
    the vendor implements too many of them."""
    coverage = torch_backend.op_coverage([op for _, op in _FALLBACK_CANDIDATES])
    found = [(fn, op) for fn, op in _FALLBACK_CANDIDATES if coverage[op] == "fallback"]
    if len(found) < count:
        pytest.skip(f"needs {count} operators that fall back, the vendor implements {coverage}")
    return found[:count]


def opinfo_skip(
    op: object, test_class: str, test: str, dtype: torch.dtype | None = None
) -> str | None:
    """Why OpInfo (or ModuleInfo) skips ``<test_class>.<test>``, or expects it to fail, on this
    device type, if it does: its DecorateInfo entries for every device or for ours by name,
    whose decorators are unittest's own skip or expectedFailure (not the device-specific ones,
    such as skipCUDAIf)."""
    for info in getattr(op, "decorators", ()):
        if not hasattr(info, "is_active"):
            continue
        if info.cls_name not in (None, test_class) or info.test_name not in (None, test):
            continue
        if info.device_type not in (None, DEV):
            continue
        if dtype is not None and info.dtypes is not None and dtype not in info.dtypes:
            continue
        names = [getattr(d, "__qualname__", type(d).__name__) for d in info.decorators]
        if any(n == "expectedFailure" or n.startswith("skip.<locals>") for n in names):
            return f"OpInfo marks {test_class}.{test} ({', '.join(names)})"
    return None


def synchronize_all() -> None:
    for i in range(MODULE.device_count()):
        MODULE.synchronize(i)


@pytest.fixture(autouse=True)
def no_leaks():
    """Every test must give back the device memory it allocated."""
    synchronize_all()
    gc.collect()
    before = [MODULE.memory_allocated(i) for i in range(MODULE.device_count())]
    yield
    # PyTorch's autograd engine runs a device's backward on its own worker thread, which drops
    # the graph (and the saved tensors it holds) just after waking the caller: wait for that
    # release for up to a second before calling what remains a leak.
    for _ in range(50):
        gc.collect()
        synchronize_all()
        after = [MODULE.memory_allocated(i) for i in range(MODULE.device_count())]
        if after == before:
            break
        time.sleep(0.02)
    assert after == before, f"device memory leaked: allocated bytes went from {before} to {after}"
    # What survived the collection is frozen out of the next ones (as at collection finish):
    # modules a test imports (Inductor's are hundreds of thousands of objects) would otherwise
    # be walked by every later test's gc.collect(), which made the suites after test_compile
    # half again as slow.  A test's own garbage was collected above; only a cycle still alive
    # now and dropped in a later test is never collected (what it holds stays allocated, so that
    # test's check sees no change).
    gc.freeze()


_TEST_VENDORS: dict[str | None, Path] = {}


def build_test_vendor(variant: str | None = None) -> Path:
    """``test/python/vendors/ops_vendor.c``, compiled (with ``-D<variant>``) the way a vendor
    builds against the installed package: its headers and fake's archive.  Built once per
    session and variant, into a temporary directory."""
    if variant not in _TEST_VENDORS:
        out_dir = Path(tempfile.mkdtemp(prefix="tb_test_vendor_"))
        # Removed at exit; the library stays mapped until then (unlinking a loaded file is safe).
        atexit.register(shutil.rmtree, out_dir, ignore_errors=True)
        library = out_dir / f"libtb_vendor_ops_{(variant or 'default').lower()}.so"
        command = [
            os.environ.get("CC", "cc"),
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-shared",
            "-fPIC",
            *([f"-D{variant}"] if variant else []),
            f"-I{torch_backend.include_dir()}",
            str(REPO / "test" / "python" / "vendors" / "ops_vendor.c"),
            "-o",
            str(library),
            f"-L{torch_backend.library_dir()}",
            "-Wl,--undefined=tb_vendor_get",
            "-ltb_fake",
            "-lpthread",
        ]
        compiled = run(command)
        assert compiled.returncode == 0, " ".join(command) + "\n" + compiled.stderr
        _TEST_VENDORS[variant] = library
    return _TEST_VENDORS[variant]


@pytest.fixture
def two_devices():
    if MODULE.device_count() < 2:
        pytest.skip(f"needs two devices, the vendor has {MODULE.device_count()}")


def pytest_collection_finish(session) -> None:
    """What is alive once the suites are collected -- torch, the test modules, OpInfo's tables
    -- is no test's garbage: frozen out of the collector, so that no_leaks' two gc.collect()
    per test walk only what tests create (about 0.07 s each otherwise, minutes per run)."""
    gc.collect()
    gc.freeze()


def pytest_terminal_summary(terminalreporter) -> None:
    """Prints the OpInfo conformance summary (test_opinfo.py), the fault matrix
    (test_fault_matrix.py), the operator sweeps' figures (test_sweeps.py) and the kernels
    torch.compile generated per model (test_compile.py) when those suites ran."""
    module = sys.modules.get("test_opinfo")
    summary = getattr(module, "SUMMARY", None)
    if summary is not None and summary.samples:
        terminalreporter.section("OpInfo conformance")
        for line in summary.lines():
            terminalreporter.write_line(line)
    matrix = getattr(sys.modules.get("test_fault_matrix"), "MATRIX", None)
    if matrix:
        terminalreporter.section("Fault matrix")
        for line in matrix:
            terminalreporter.write_line(line)
    reports = getattr(sys.modules.get("test_sweeps"), "REPORTS", None)
    if reports:
        terminalreporter.section("Operator sweeps")
        for report in reports.values():
            terminalreporter.write_line(report.line())
    generated = getattr(sys.modules.get("test_compile"), "GENERATED", None)
    if generated:
        terminalreporter.section("Kernels torch.compile generated")
        for line in generated:
            terminalreporter.write_line(line)
