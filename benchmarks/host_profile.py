"""Where the host time of a small operator goes: a perf profile of each latency row of
bench.py, split by what the code does.

    python benchmarks/host_profile.py            # every small operator, device and CPU
    python benchmarks/host_profile.py add relu   # some of them

Each operator runs back to back for a fixed time under ``perf record`` (Debian's linux-perf;
``make profile`` installs it).  Every sample of the calling thread is put in one category by
its function and library:

==================  =========================================================================
python              the interpreter and the Python binding of the operator
dispatch            c10's dispatcher, autograd and ADInplaceOrView layers, operator entry
meta / shape        ATen's meta functions, TensorIterator, size inference, TensorImpl updates
output allocation   empty/empty_strided and the caching allocator
argument packing    torch_backend's KernelCall (tensor descriptors, values, workspace)
kernel lookup       hash-map and string work (should be none: kernels resolve at load)
stream enqueue      the vendor's launch: task allocation and the queue push
worker wake-up      waking a sleeping stream worker (futex, condition variables)
kernel              the vendor kernel's own code, when it runs on the calling thread
heap                malloc/free
system              the operating system (system calls, page faults, scheduling)
other               everything else (named in the table's last column)
==================  =========================================================================

The vendor's worker threads are reported apart: how much of the run they were busy, and in
what.  The table prints microseconds per call (without perf) beside the split, so a row reads
"of 2.9 us, 31% is the dispatcher".
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (category, pattern on "library symbol"), first match wins; searched in this order.
CATEGORIES: list[tuple[str, re.Pattern[str]]] = [
    ("system", re.compile(r"kernel\.kallsyms|\[vdso\]")),
    (
        "kernel",
        re.compile(
            r"libtb_vendor_\S* emu_(?!stream|launch|task|call|check)|libopenblas|at::vec::|"
            r"Vectorized|cpu_kernel|vectorized_loop|basic_loop|_kernel_impl|function_ref"
        ),
    ),
    (
        "kernel lookup",
        re.compile(r"find_kernel|_Hashtable|_Hash_bytes|unordered_map|basic_string.*compare"),
    ),
    ("argument packing", re.compile(r"torch_backend::KernelCall|tb_value|tb_tensor")),
    (
        "output allocation",
        re.compile(r"Allocator|allocate|empty_strided|at::detail::empty|empty_generic|emu_arena"),
    ),
    (
        "stream enqueue",
        re.compile(r"emu_stream_enqueue|queue_push|emu_launch|emu_task_new|emu_call|vendor_stream"),
    ),
    ("worker wake-up", re.compile(r"pthread_cond|futex|__lll_lock|pthread_mutex")),
    (
        "meta / shape",
        re.compile(
            r"at::meta|TensorIterator|infer_size|TensorImpl::|compute_strides|compute_shape|"
            r"structured_|resize_|MetaOverrides|SymInt|TensorGeometry|is_contiguous|"
            r"computeStride|restride|set_sizes"
        ),
    ),
    (
        "dispatch",
        re.compile(
            r"c10::Dispatcher|c10::impl::|OperatorHandle|KernelFunction|at::_ops::|"
            r"DispatchKey|VariableType|ADInplaceOrView|autograd::|c10::detail::|"
            r"boxed|ThreadLocalState|RecordFunction|at::native::"
        ),
    ),
    ("python", re.compile(r"libpython|python3|_Py|Py[A-Z]|THPVariable|PythonArgParser|pybind")),
    ("heap", re.compile(r"malloc|free|_int_|cfree|operator new|operator delete")),
    ("kernel", re.compile(r"libtb_vendor_")),
]


def categorize(library: str, symbol: str) -> str:
    text = f"{library} {symbol}"
    for name, pattern in CATEGORIES:
        if pattern.search(text):
            return name
    return "other"


def run_op(name: str, device: str, seconds: float) -> None:
    """The profiled process: warms up, says READY (perf attaches then), runs `name` back to
    back for `seconds`, then prints the time per call."""
    sys.path.insert(0, str(HERE))
    import bench

    op = bench.small_ops(device)[name]
    for _ in range(2000):
        op()
    bench.sync(device)
    print("READY", flush=True)
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(200):
            op()
        calls += 200
    bench.sync(device)
    print(f"US_PER_CALL {(time.perf_counter() - start) / calls * 1e6:.3f}", flush=True)


def profile(name: str, device: str, seconds: float) -> dict:
    """Runs `name` under perf; returns {"us": per call, "host": {category: share},
    "host_other": top uncategorised symbols, "workers": busy share, "worker": {category: share}}."""
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        command = [sys.executable, __file__, "--run", name, "--device", device]
        child = subprocess.Popen(
            [*command, "--seconds", str(seconds + 0.5)], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None
        if child.stdout.readline().strip() != "READY":
            raise RuntimeError(f"the profiled process for {name} on {device} failed")
        perf = ["perf", "record", "-q", "-F", "4999", "-p", str(child.pid), "-o", data]
        record = subprocess.run(
            [*perf, "--", "sleep", str(seconds)],
            capture_output=True,
            text=True,
            check=False,
        )
        rest = child.communicate()[0]
        if record.returncode != 0:
            raise RuntimeError(f"perf record failed:\n{record.stderr}")
        us = float(re.search(r"US_PER_CALL ([0-9.]+)", rest).group(1))
        script = subprocess.run(
            ["perf", "script", "-i", data, "-F", "pid,tid,ip,sym,dso"],
            capture_output=True,
            text=True,
            check=False,
        )
    demangled = script.stdout
    host: collections.Counter[str] = collections.Counter()
    worker: collections.Counter[str] = collections.Counter()
    unknown: collections.Counter[str] = collections.Counter()
    total = collections.Counter()
    for line in demangled.splitlines():
        match = re.match(r"\s*(\d+)/(\d+)\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", line)
        if not match:
            continue
        pid, tid, symbol, library = match.groups()
        category = categorize(os.path.basename(library), symbol)
        main = pid == tid
        total["main" if main else "other"] += 1
        if main:
            host[category] += 1
            if category == "other":
                unknown[symbol[:60]] += 1
        else:
            worker[category] += 1
    host_total = max(1, sum(host.values()))
    worker_total = max(1, sum(worker.values()))
    return {
        "us": us,
        "host": {k: v / host_total for k, v in host.items()},
        "host_other": [s for s, _ in unknown.most_common(2)],
        "workers": total["other"] / max(1, total["main"]),
        "worker": {k: v / worker_total for k, v in worker.items()},
    }


COLUMNS = [
    "system",
    "python",
    "dispatch",
    "meta / shape",
    "output allocation",
    "argument packing",
    "kernel lookup",
    "stream enqueue",
    "worker wake-up",
    "kernel",
    "heap",
    "other",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ops", nargs="*", help="operators of bench.py's latency rows")
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--device", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run_op(args.run, args.device, args.seconds)
        return 0
    if shutil.which("perf") is None:
        print("host_profile.py needs perf: apt-get install linux-perf (make profile does)")
        return 1
    sys.path.insert(0, str(HERE))
    import bench

    names = args.ops or list(bench.small_ops("cpu"))
    short = {"output allocation": "alloc", "argument packing": "packing"}
    header = ["operator", "side", "us/call"] + [short.get(c, c) for c in COLUMNS]
    print(
        f"host time of one call on 32x32 tensors, split by perf samples of the calling thread "
        f"({bench.DEVICE} vs cpu); workers: samples on other threads per calling-thread sample"
    )
    print("| " + " | ".join([*header, "workers", "largest 'other'"]) + " |")
    print("|" + "|".join("---" for _ in range(len(header) + 2)) + "|")
    for name in names:
        for device in (bench.DEVICE, "cpu"):
            p = profile(name, device, args.seconds)
            cells = [name, device, f"{p['us']:.2f}"]
            cells += [f"{100 * p['host'].get(c, 0):.0f}%" for c in COLUMNS]
            cells += [f"{p['workers']:.2f}", ", ".join(p["host_other"])]
            print("| " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
