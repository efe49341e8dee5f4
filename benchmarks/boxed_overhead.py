"""The call overhead of the generic boxed wrapper against the compiled (generated) wrappers.

    python benchmarks/boxed_overhead.py [--elements 16] [--calls 4000] [--trials 7]

Operators outside codegen/ops.yaml reach their vendor kernels through one boxed wrapper built
from the dispatcher's schema (csrc/aten/BoxedKernels.cpp); custom operators through a similar
one that runs the vendor's shape function (csrc/aten/CustomOps.cpp).  This script times pairs
of calls that do the same kind of work on emu's elementwise engine, one through each path, on
tiny tensors so that the wrapper, not the arithmetic, is what is measured:

- hardtanh (boxed) against clamp (generated, a structured operator), functional, out= and
  in-place: both are a clamp to [-1, 1] of one operand;
- atan2 (boxed) against maximum (generated): one binary elementwise call each;
- emu::mymuladd (custom) against addcmul (generated): a * b + c, one ternary call each; once
  as users call them, with the autograd formula torch.library.register_autograd registers in
  Python in front of the custom operator, and once dispatched below autograd, which leaves the
  C++ wrappers alone.

Each figure is the median, over interleaved trials, of the time per call of a loop of calls
with the device drained at its end.  It is a measurement, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F

import torch_backend

DEVICE = torch_backend.vendor_info()["device_type"]
MODULE = getattr(torch, DEVICE)


def per_call(fn: Callable[[], object], calls: int) -> float:
    MODULE.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    MODULE.synchronize()
    return (time.perf_counter() - start) / calls


def below_autograd(op: torch._ops.OpOverload, *args: object) -> object:
    """`op` dispatched past the autograd keys: without the Python autograd formula that
    torch.library.register_autograd puts in front of a custom operator."""
    with torch._C._AutoDispatchBelowAutograd():
        return op(*args)


def pair(
    boxed: Callable[[], object], generated: Callable[[], object], calls: int, trials: int
) -> tuple[float, float]:
    for fn in (boxed, generated):  # warm-up: meta caches, pools, allocator
        per_call(fn, calls // 10 + 1)
    samples: dict[str, list[float]] = {"boxed": [], "generated": []}
    for _ in range(trials):
        samples["boxed"].append(per_call(boxed, calls))
        samples["generated"].append(per_call(generated, calls))
    return statistics.median(samples["boxed"]), statistics.median(samples["generated"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=16)
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--trials", type=int, default=7)
    args = parser.parse_args()
    needed = ["hardtanh.out", "atan2.out", "clamp.out", "maximum.out", "addcmul.out"]
    coverage = torch_backend.op_coverage(needed)
    if set(coverage.values()) != {"native"} or "emu::mymuladd" not in torch_backend.custom_ops():
        print(f"the vendor lacks some of the kernels compared: {coverage}")
        return 1
    x = torch.randn(args.elements, device=DEVICE)
    y = torch.randn(args.elements, device=DEVICE)
    c = torch.randn(args.elements, device=DEVICE)
    out = torch.empty_like(x)
    inplace = x.clone()
    rows = [
        ("hardtanh vs clamp", lambda: F.hardtanh(x), lambda: torch.clamp(x, -1.0, 1.0)),
        (
            "hardtanh.out vs clamp.out",
            lambda: torch.ops.aten.hardtanh.out(x, -1.0, 1.0, out=out),
            lambda: torch.clamp(x, -1.0, 1.0, out=out),
        ),
        (
            "hardtanh_ vs clamp_",
            lambda: F.hardtanh(inplace, inplace=True),
            lambda: inplace.clamp_(-1.0, 1.0),
        ),
        ("atan2 vs maximum", lambda: torch.atan2(x, y), lambda: torch.maximum(x, y)),
        (
            "emu::mymuladd vs addcmul",
            lambda: torch.ops.emu.mymuladd(x, y, 0.5),
            lambda: torch.addcmul(c, x, y),
        ),
        (
            "  the same below autograd",
            lambda: below_autograd(torch.ops.emu.mymuladd.default, x, y, 0.5),
            lambda: below_autograd(torch.ops.aten.addcmul.default, c, x, y),
        ),
    ]
    torch_backend.reset_fallback_counts()
    print(f"{DEVICE}: {args.elements} float32 elements, {args.calls} calls x {args.trials} trials")
    print(f"{'pair':<28} {'boxed us':>9} {'generated us':>13} {'ratio':>6}")
    for name, boxed, generated in rows:
        b, g = pair(boxed, generated, args.calls, args.trials)
        print(f"{name:<28} {b * 1e6:9.2f} {g * 1e6:13.2f} {b / g:6.2f}")
    fell_back = torch_backend.fallback_counts()
    if fell_back:
        print(f"(calls that fell back to the CPU, which the figures include: {fell_back})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
