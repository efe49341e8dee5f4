"""make test-compat: one vendor binary loaded into runtimes built against two torch releases.

    python test/compat/compat.py --vendor build/c/lib/libtb_vendor_emu.so \\
        --runtime python3 build/py \\
        --runtime build/compat-2.14.1/venv/bin/python build/compat-2.14.1/build \\
        --pytest build/compat-2.14.1/venv/bin/python

Each --runtime names a Python interpreter in which torch_backend is installed (built against
that environment's torch) and that build's CMake tree.  For each one, with
TORCH_BACKEND_VENDOR set to the vendor's path, this runs:

1. a probe in that interpreter: torch's version, the vendor torch_backend loaded, and the
   device, inode and SHA-256 of the file the process mapped, from /proc/self/maps -- so the
   table shows that every runtime ran the very same file, not a copy or a rebuild;
2. that build's tb-conformance on the vendor;
3. examples/demo.py (training beside the CPU, losses compared, no fallback);
4. for the interpreters named by --pytest, the Python suites (test/python, or the files
   --pytest-args names).

Then it prints a summary table and exits non-zero if anything failed or if the vendor file
changed while the runs were going on.  Needs no torch itself: run it with any Python >= 3.10.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Runs inside each runtime's interpreter; prints one JSON object.
PROBE = r"""
import hashlib, json, os
import torch, torch_backend

info = torch_backend.vendor_info()
wanted = os.path.realpath(info["library"])
mapped = {}
with open("/proc/self/maps") as maps:
    for line in maps:
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5].startswith("/"):
            mapped.setdefault(os.path.realpath(fields[5].strip()), (fields[3], int(fields[4])))

def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()

runtime = sorted(p for p in mapped if os.path.basename(p) == "libtorch_backend.so")
vendor = mapped.get(wanted)
print(json.dumps({
    "torch": torch.__version__,
    "vendor": info,
    "mapped": wanted if vendor else None,
    "inode": vendor[1] if vendor else None,
    "sha256": sha256(wanted) if vendor else None,
    "runtime": runtime,
    "conformance": str(torch_backend.conformance_executable()),
}))
"""


@dataclass
class Result:
    """One runtime's outcome, one cell of the table per field."""

    torch: str = "?"
    cxx: str = "?"
    runtime: str = "?"
    loaded: str = "not loaded"
    conformance: str = "not run"
    demo: str = "not run"
    pytest: str = "not run"
    ok: bool = True


def file_identity(path: Path) -> tuple[int, str]:
    return path.stat().st_ino, hashlib.sha256(path.read_bytes()).hexdigest()


def cxx_standard(build_dir: Path) -> str:
    """The C++ standard that build compiled csrc with (cmake/Torch.cmake records it)."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return f"? (no {cache})"
    match = re.search(r"^TORCH_BACKEND_TORCH_CXX_STANDARD:\w+=(\d+)$", cache.read_text(), re.M)
    return f"C++{match.group(1)}" if match else "? (not recorded)"


def run(title: str, args: list[str], env: dict[str, str]) -> tuple[int, str, float]:
    """Runs a step with its output passed through (and kept), returning status, output and
    seconds."""
    shown = " ".join("'...'" if "\n" in arg else arg for arg in args)
    print(f"\n== {title}: {shown}", flush=True)
    start = time.monotonic()
    process = subprocess.Popen(
        args, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        sys.stdout.write(line)
        lines.append(line)
    status = process.wait()
    seconds = time.monotonic() - start
    print(f"== {title}: exit status {status} after {seconds:.0f} s", flush=True)
    return status, "".join(lines), seconds


def last_match(pattern: str, text: str) -> str | None:
    found = re.findall(pattern, text, re.M)
    return found[-1] if found else None


def check_runtime(
    python: str,
    build_dir: Path,
    vendor: Path,
    identity: tuple[int, str],
    pytest: list[str] | None,
) -> Result:
    result = Result(cxx=cxx_standard(build_dir))
    env = dict(os.environ, TORCH_BACKEND_VENDOR=str(vendor))
    status, output, _ = run("probe", [python, "-c", PROBE], env)
    if status != 0:
        result.ok = False
        return result
    probe = json.loads(output.strip().splitlines()[-1])
    result.torch = probe["torch"]
    result.runtime = ", ".join(probe["runtime"]) or "libtorch_backend.so not mapped"
    inode, digest = identity
    if probe["mapped"] == str(vendor) and (probe["inode"], probe["sha256"]) == (inode, digest):
        result.loaded = f"same file (inode {inode})"
    else:
        result.ok = False
        result.loaded = (
            f"DIFFERENT: {probe['mapped']} inode {probe['inode']} sha256 {probe['sha256']}"
        )

    status, output, seconds = run("tb-conformance", [probe["conformance"], str(vendor)], env)
    summary = last_match(r"^result: (.*)$", output) or "no result line"
    result.conformance = f"{'pass' if status == 0 else 'FAIL'}: {summary} ({seconds:.0f} s)"
    result.ok &= status == 0

    status, output, seconds = run("demo", [python, "examples/demo.py"], env)
    result.demo = f"{'pass' if status == 0 else 'FAIL'} ({seconds:.0f} s)"
    result.ok &= status == 0

    if pytest is not None:
        status, output, seconds = run("pytest", [python, "-m", "pytest", "-q", *pytest], env)
        summary = last_match(r"^=* ?(\d+ (?:passed|failed).*?) in [\d.]+s", output) or "no summary"
        result.pytest = f"{'pass' if status == 0 else 'FAIL'}: {summary} ({seconds:.0f} s)"
        result.ok &= status == 0
    else:
        result.pytest = "not here (make test-full runs it)"
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vendor", type=Path, required=True, help="the vendor library")
    parser.add_argument(
        "--runtime",
        nargs=2,
        action="append",
        required=True,
        metavar=("PYTHON", "BUILD_DIR"),
        help="an interpreter with torch_backend installed, and that build's CMake tree",
    )
    parser.add_argument(
        "--pytest",
        action="append",
        default=[],
        metavar="PYTHON",
        help="run the Python suites on the runtime of this interpreter as well",
    )
    parser.add_argument(
        "--pytest-args",
        nargs="+",
        default=["test/python"],
        metavar="ARG",
        help="what --pytest runs (default: test/python, every suite)",
    )
    options = parser.parse_args()
    vendor = options.vendor.resolve()
    if not vendor.is_file():
        parser.error(f"{vendor}: no such file")

    identity = file_identity(vendor)
    results = [
        check_runtime(
            python,
            Path(build_dir).resolve(),
            vendor,
            identity,
            options.pytest_args if python in options.pytest else None,
        )
        for python, build_dir in options.runtime
    ]
    unchanged = file_identity(vendor) == identity

    print(f"\ntest-compat: {vendor}")
    print(f"  sha256 {identity[1]}, inode {identity[0]}", end="")
    print(", unchanged by the runs" if unchanged else ", CHANGED during the runs")
    columns = ["torch", "C++", "vendor loaded", "conformance", "demo", "pytest"]
    rows = [[r.torch, r.cxx, r.loaded, r.conformance, r.demo, r.pytest] for r in results]
    widths = [max(len(str(c)) for c in column) for column in zip(columns, *rows, strict=True)]
    for row in [columns, ["-" * w for w in widths], *rows]:
        print("  " + "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    for r in results:
        print(f"  runtime of torch {r.torch}: {r.runtime}")
    ok = unchanged and all(r.ok for r in results)
    print("OK: one vendor binary, every runtime" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
