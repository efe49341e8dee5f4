"""Native kernels against PyTorch's own test data: every OpInfo sample, device vs CPU.

For every OpInfo in ``op_db`` whose operator reaches one of the vendor's native kernels, every
sample input of every dtype the OpInfo supports on the CPU (float32, float16, bfloat16, int64,
int32, bool) runs on the device and on the CPU, and the outputs must match, forward and, for
float32 samples of differentiable operators, backward.  The selection, the comparison and its
tolerances, the float64 reference that judges near misses and the samples OpInfo skips are
:mod:`torch_backend.check_kernels`'s (documented there): this suite and
``python -m torch_backend.check_kernels``, which vendors run outside the source tree, share
them.

The run ends with a summary: OpInfos, samples, passed (closer to float64 than the CPU, within
the reduced-precision normwise bound), skipped (with reasons), and the native kernels no sample
reached.
"""

from __future__ import annotations

import collections
import dataclasses
import gc

import pytest
from conftest import DEV

from torch_backend.check_kernels import (
    SampleResult,
    check_opinfo,
    load_op_db,
    native_kernels,
    probe,
)

_NATIVE_KERNELS = native_kernels()
if not _NATIVE_KERNELS:
    pytest.skip("the vendor publishes no kernels", allow_module_level=True)

pytest.importorskip("expecttest")  # needed by torch.testing._internal
OPINFOS = [op for op, _ in probe(load_op_db())]
# op_db is a few hundred thousand long-lived objects: keep the leak check's gc.collect() (after
# every test) from walking them all again.
gc.freeze()


@dataclasses.dataclass
class Summary:
    opinfos: int = 0
    samples: int = 0
    passed: int = 0
    closer_than_cpu: int = 0
    normwise: int = 0
    backward: int = 0
    with_fallback: int = 0
    failed: int = 0
    skipped: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    kernels_reached: set[str] = dataclasses.field(default_factory=set)
    fallback_ops: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    def add(self, result: SampleResult) -> None:
        self.samples += 1
        if result.skip_reason is not None:
            self.skipped[result.skip_reason] += 1
            return
        self.kernels_reached |= result.kernels
        if result.fallback_ops:
            self.with_fallback += 1
            self.fallback_ops.update(result.fallback_ops)
        self.backward += result.backward
        self.passed += result.passed
        self.failed += not result.passed
        self.closer_than_cpu += result.verdict == "closer"
        self.normwise += result.verdict == "normwise"

    def lines(self) -> list[str]:
        out = [
            f"OpInfo conformance on '{DEV}': {self.opinfos} OpInfos, {self.samples} samples, "
            f"{self.passed} passed ({self.closer_than_cpu} closer to float64 than the CPU, "
            f"{self.normwise} within the reduced-precision normwise bound), "
            f"{self.failed} failed, {sum(self.skipped.values())} skipped; {self.backward} "
            f"with backward; {self.with_fallback} used the CPU fallback for part of the call",
        ]
        out += [f"  skipped {count}: {reason}" for reason, count in sorted(self.skipped.items())]
        common = ", ".join(f"{op} ({n})" for op, n in self.fallback_ops.most_common(8))
        out.append(f"  operators most often on the CPU fallback (samples): {common or 'none'}")
        unreached = sorted(_NATIVE_KERNELS - self.kernels_reached)
        out.append(
            f"  vendor kernels reached: {len(self.kernels_reached)} of {len(_NATIVE_KERNELS)}; "
            f"not reached by any OpInfo sample: {', '.join(unreached) or 'none'}"
        )
        return out


SUMMARY = Summary()


@pytest.mark.parametrize("op", OPINFOS, ids=lambda op: op.formatted_name)
def test_matches_cpu(op):
    SUMMARY.opinfos += 1
    failures = []
    for result in check_opinfo(op):
        SUMMARY.add(result)
        if result.error is not None:
            failures.append(
                f"{result.dtype} sample {result.index} ({result.sample}): {result.error}"
            )
    assert not failures, f"{len(failures)} samples differ from the CPU:\n" + "\n".join(failures[:5])


def test_samples_reach_vendor_kernels():
    """The run above judged the vendor's kernels, not only the CPU fallback.  (Kernels no
    OpInfo sample reaches, listed in the summary, are covered by test_kernels.py.)"""
    if SUMMARY.samples == 0:
        pytest.skip("run together with test_matches_cpu")
    assert len(SUMMARY.kernels_reached) >= len(_NATIVE_KERNELS) // 2, SUMMARY.kernels_reached
