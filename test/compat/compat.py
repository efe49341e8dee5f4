"""make test-compat: one vendor binary, and the wheel, under every supported torch release.

    python test/compat/compat.py --vendor build/c/lib/libtb_vendor_emu.so \\
        --runtime python3 build/py \\
        --runtime build/compat-2.15.0/venv/bin/python build/runtime-2.15.0 \\
        --pytest build/compat-2.15.0/venv/bin/python \\
        --unsupported build/compat-2.12.1/venv/bin/python \\
        --pytest-args test/python/test_compile.py ...

Each --runtime names a Python interpreter in which torch_backend is installed -- the full build
of the primary release (editable), or the wheel in a user's venv of another release
(test/compat/user_venv.sh) -- and the CMake tree that built the runtime it loads.  For each one,
with TORCH_BACKEND_VENDOR set to the vendor's path, this runs:

1. a probe in that interpreter: torch's version, the runtime and the vendor torch_backend
   loaded, and the device, inode and SHA-256 of the vendor file the process mapped, from
   /proc/self/maps -- so the table shows that every runtime ran the very same file, not a copy
   or a rebuild;
2. that installation's tb-conformance on the vendor;
3. examples/demo.py (training beside the CPU, losses compared, no fallback);
4. for the interpreters named by --pytest, the Python suites (test/python, or the files
   --pytest-args names), two interpreters at a time, each one's output printed whole when it
   ends; with --opencl-vendor, also --opencl-pytest-args against that vendor on PoCL (the
   torch.compile suites: Inductor's OpenCL C backend follows Inductor's internals).

--unsupported names an interpreter whose torch is outside the supported window, with the wheel
installed (--no-deps): there `import torch` must work, with one warning that names the installed
torch and the supported releases, the device absent and torch_backend.load_error() saying why;
with TORCH_BACKEND_STRICT_LOAD=1 it must fail.

Then it prints a summary table and exits non-zero if anything failed or if the vendor file
changed while the runs were going on.  Interpreters run with PYTHONSAFEPATH=1: the source
tree's torch_backend/ never shadows the installed package.  Needs no torch itself: run it with
Python >= 3.11 (the interpreters under test as well: PYTHONSAFEPATH is 3.11's).
"""

from __future__ import annotations

import argparse
import concurrent.futures
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

runtime = sorted(
    os.path.join(os.path.basename(os.path.dirname(p)), os.path.basename(p))
    for p in mapped
    if os.path.basename(p) == "libtorch_backend.so"
)
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
    opencl: str = "-"
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


def run(
    title: str, args: list[str], env: dict[str, str], stream: bool = True
) -> tuple[int, str, float]:
    """Runs a step, returning status, output and seconds; its output is passed through as it
    comes (``stream``) or printed whole when it ends."""
    shown = " ".join("'...'" if "\n" in arg else arg for arg in args)
    header = f"\n== {title}: {shown}"
    if stream:
        print(header, flush=True)
    start = time.monotonic()
    process = subprocess.Popen(
        args, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        if stream:
            sys.stdout.write(line)
        lines.append(line)
    status = process.wait()
    seconds = time.monotonic() - start
    footer = f"== {title}: exit status {status} after {seconds:.0f} s"
    if stream:
        print(footer, flush=True)
    else:
        print(header, "".join(lines), footer, sep="\n", flush=True)
    return status, "".join(lines), seconds


def last_match(pattern: str, text: str) -> str | None:
    found = re.findall(pattern, text, re.M)
    return found[-1] if found else None


def check_runtime(python: str, build_dir: Path, vendor: Path, identity: tuple[int, str]) -> Result:
    """Probe, tb-conformance and the demo under one runtime."""
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
    result.pytest = "not here (make test-full runs it)"
    return result


def run_pytest(
    python: str, vendor: Path, args: list[str], result: Result, opencl: bool = False
) -> None:
    """The Python suites under one runtime, its output printed whole when it ends; `opencl`:
    against the opencl vendor on PoCL's two CPU devices, into the table's opencl column."""
    env = dict(os.environ, TORCH_BACKEND_VENDOR=str(vendor))
    if opencl:
        env["POCL_DEVICES"] = "pthread pthread"
    title = f"pytest under torch {result.torch}" + (", vendor opencl" if opencl else "")
    status, output, seconds = run(title, [python, "-m", "pytest", "-q", *args], env, False)
    summary = last_match(r"^=* ?(\d+ (?:passed|failed).*?) in [\d.]+s", output) or "no summary"
    cell = f"{'pass' if status == 0 else 'FAIL'}: {summary} ({seconds:.0f} s)"
    if opencl:
        result.opencl = cell
    else:
        result.pytest = cell
    result.ok &= status == 0


# Runs in the interpreter of an unsupported torch: what a user sees on `import torch`.
UNSUPPORTED_PROBE = r"""
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import torch
import torch_backend
info = torch_backend.vendor_info()
module = getattr(torch, info["device_type"] or "", None)
print(json.dumps({
    "torch": torch.__version__,
    "warnings": [str(w.message) for w in caught if "torch_backend" in str(w.message)],
    "load_error": torch_backend.load_error(),
    "device_type": info["device_type"],
    "module": [module.is_available(), module.device_count()] if module else None,
    "accelerator": [torch.accelerator.is_available(), torch.accelerator.device_count()],
}))
"""


def check_unsupported(python: str, supported: list[str]) -> Result:
    """The wheel under a torch outside the window: import works, one warning naming the torch
    and the supported releases, no device, load_error() saying why; strict mode fails."""
    result = Result(cxx="-", runtime="none (not supported)", conformance="-", demo="-")
    env = dict(os.environ)
    env.pop("TORCH_BACKEND_VENDOR", None)
    status, output, _ = run(
        "import torch under an unsupported torch", [python, "-c", UNSUPPORTED_PROBE], env
    )
    if status != 0:
        result.ok, result.loaded = False, "FAIL: import torch failed"
        return result
    seen = json.loads(output.strip().splitlines()[-1])
    result.torch = seen["torch"]
    listed = ", ".join(supported[:-1]) + f" and {supported[-1]}"
    problems = []
    if len(seen["warnings"]) != 1:
        problems.append(f"{len(seen['warnings'])} warnings from torch_backend, not one")
    else:
        warning = seen["warnings"][0]
        for wanted in (f"torch {result.torch}", f"supports torch {listed}", "pip install"):
            if wanted not in warning:
                problems.append(f"the warning does not say '{wanted}'")
        if not seen["load_error"] or not warning.startswith(seen["load_error"]):
            problems.append("load_error() is not the warning's cause")
    if seen["module"] != [False, 0] or seen["accelerator"] != [False, 0]:
        problems.append(f"the device is not absent: {seen}")
    status, output, _ = run(
        "the same with TORCH_BACKEND_STRICT_LOAD=1",
        [python, "-c", "import torch"],
        dict(env, TORCH_BACKEND_STRICT_LOAD="1"),
    )
    if status == 0 or f"does not support torch {result.torch}" not in output:
        problems.append("TORCH_BACKEND_STRICT_LOAD=1 does not fail import torch with the reason")
    result.ok = not problems
    result.loaded = "; ".join(problems) or (
        f"absent, as it should be: one warning, load_error() set ({seen['device_type']}: 0 devices)"
    )
    result.pytest = "pass: import works, strict mode fails" if result.ok else "FAIL"
    return result


def supported_releases() -> list[str]:
    """The releases (major.minor) of torch-releases.txt, oldest first."""
    lines = (REPO / "torch-releases.txt").read_text().splitlines()
    versions = [line.split()[0] for line in lines if line[:1].isdigit()]
    return [".".join(version.split(".")[:2]) for version in versions]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vendor", type=Path, required=True, help="the vendor library")
    parser.add_argument(
        "--runtime",
        nargs=2,
        action="append",
        required=True,
        metavar=("PYTHON", "BUILD_DIR"),
        help="an interpreter with torch_backend installed, and the CMake tree of its runtime",
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
    parser.add_argument(
        "--opencl-vendor",
        type=Path,
        help="the opencl vendor library: --opencl-pytest-args run against it as well, on PoCL",
    )
    parser.add_argument(
        "--opencl-pytest-args",
        nargs="+",
        default=[],
        metavar="ARG",
        help="what runs against --opencl-vendor under each --pytest interpreter",
    )
    parser.add_argument(
        "--unsupported",
        metavar="PYTHON",
        help="an interpreter whose torch is outside the window, with the wheel installed",
    )
    options = parser.parse_args()
    # Every interpreter started from here, and every one its tests start (they run from the
    # source tree), keeps the current directory off sys.path: the source tree's torch_backend/
    # must never shadow the package installed in the environment under test.
    os.environ["PYTHONSAFEPATH"] = "1"
    vendor = options.vendor.resolve()
    if not vendor.is_file():
        parser.error(f"{vendor}: no such file")

    identity = file_identity(vendor)
    runs = [
        (python, check_runtime(python, Path(build_dir).resolve(), vendor, identity))
        for python, build_dir in options.runtime
    ]
    # The suites, two interpreters at a time: each is mostly one busy thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = [
            pool.submit(run_pytest, python, vendor, options.pytest_args, result)
            for python, result in runs
            if python in options.pytest and result.ok
        ]
        if options.opencl_vendor is not None and options.opencl_pytest_args:
            futures += [
                pool.submit(
                    run_pytest,
                    python,
                    options.opencl_vendor.resolve(),
                    options.opencl_pytest_args,
                    result,
                    True,
                )
                for python, result in runs
                if python in options.pytest and result.ok
            ]
        for future in futures:
            future.result()
    results = [result for _, result in runs]
    if options.unsupported:
        results.append(check_unsupported(options.unsupported, supported_releases()))
    unchanged = file_identity(vendor) == identity

    print(f"\ntest-compat: {vendor}")
    print(f"  sha256 {identity[1]}, inode {identity[0]}", end="")
    print(", unchanged by the runs" if unchanged else ", CHANGED during the runs")
    columns = ["torch", "C++", "vendor loaded", "conformance", "demo", "pytest"]
    rows = [[r.torch, r.cxx, r.loaded, r.conformance, r.demo, r.pytest] for r in results]
    if options.opencl_vendor is not None:
        columns.append("opencl (torch.compile)")
        for row, r in zip(rows, results, strict=True):
            row.append(r.opencl)
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
