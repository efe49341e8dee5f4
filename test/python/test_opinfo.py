"""Native kernels against PyTorch's own test data: every OpInfo sample, device vs CPU.

For every OpInfo in ``op_db`` whose operator reaches one of the vendor's native kernels, every
sample input of every dtype the OpInfo supports on the CPU (among the dtypes below) runs on the
device and on the CPU, and the outputs must match, forward and, for float32 samples of
differentiable operators, backward (gradients of a fixed random projection of the outputs).

Tolerances are those of PyTorch's own device-vs-CPU test (``TestCommon.test_compare_cpu``:
``atol = rtol = 1e-3``, or the OpInfo's ``toleranceOverride`` for it), widened to
``torch.testing``'s defaults for bfloat16; integer and bool outputs must be equal.  Samples
that OpInfo skips for ``test_compare_cpu`` (random operators) are skipped with that reason.
Where the device result misses the CPU's, a float64 CPU reference decides: the sample passes if
the device is at least as close to it as the CPU is (the CPU rounds in reduced precision), or,
for float16 and bfloat16, if the device's largest error is within 4 units of rounding of the
output's largest magnitude (the device composes the operator from several kernels, rounding in
between, where the CPU has one fused kernel).  The summary counts both kinds.  Output dtypes must
equal the CPU's or, where they differ, ATen's meta function's.

The run ends with a summary: OpInfos, samples, passed, skipped (with reasons), and the native
kernels no sample reached.
"""

from __future__ import annotations

import collections
import dataclasses
import gc
import inspect
import warnings
from typing import Any

import pytest
import torch
from conftest import DEV
from torch.utils._pytree import tree_flatten

import torch_backend

# Generated operator -> the vendor kernel it calls ("add.Tensor" -> "add.out").
_KERNEL_OF = dict(zip(*torch.ops.torch_backend._op_kernels(), strict=True))
_NATIVE_KERNELS = {
    _KERNEL_OF[op]
    for op, state in torch_backend.op_coverage().items()
    if state == "native" and op in _KERNEL_OF
}
if not _NATIVE_KERNELS:
    pytest.skip("the vendor publishes no kernels", allow_module_level=True)

pytest.importorskip("expecttest")  # needed by torch.testing._internal
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal import common_utils
    from torch.testing._internal.common_device_type import toleranceOverride
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.opinfo import core as opinfo_core

# OpInfo looks for the running unittest.TestCase on every sample_inputs call by walking
# inspect.stack(), which reads the source of every frame: 0.2 s per call under pytest, and it
# only finds unittest tests.  These tests are not unittest tests: nothing to find.
common_utils.extract_test_fn = opinfo_core.extract_test_fn = lambda: None

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool]
# (atol, rtol) per output dtype: test_compare_cpu's 1e-3, torch.testing's 1.6e-2 rtol for bf16.
TOLERANCES = {
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1e-3, 1.6e-2),
    torch.float32: (1e-3, 1e-3),
    torch.float64: (1e-3, 1e-3),
}


def _to_device(t):
    return t.detach().to(DEV).requires_grad_(t.requires_grad) if isinstance(t, torch.Tensor) else t


def _reset_device() -> None:
    """Clear a device fault (a sample that failed while its kernel ran) before the next one."""
    getattr(torch, DEV).reset_device()


def _select() -> list[Any]:
    """The OpInfos whose first sample launches a vendor kernel on this device, probed in the
    first of DTYPES the OpInfo supports (float32 for most; integer-only and bool-only
    operators such as bitwise_and are probed in their own dtypes)."""
    selected = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for op in op_db:
            supported = op.supported_dtypes("cpu")
            probe = next((dtype for dtype in DTYPES if dtype in supported), None)
            if probe is None:
                continue
            torch_backend.reset_kernel_counts()
            try:
                sample = next(iter(op.sample_inputs("cpu", probe))).transform(_to_device)
                op(sample.input, *sample.args, **sample.kwargs)
                torch.accelerator.synchronize()
            except Exception:
                _reset_device()
                continue  # the test proper judges only OpInfos that reach a kernel
            if torch_backend.kernel_counts():
                selected.append(op)
    torch_backend.reset_kernel_counts()
    return selected


OPINFOS = _select()
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


def _compare_skip_reason(op, dtype) -> tuple[str | None, tuple[float, float] | None]:
    """What OpInfo says about test_compare_cpu for ``dtype``: a skip reason and/or tolerances."""
    reason, tolerance = None, None
    for info in list(op.skips) + list(op.decorators):
        if not hasattr(info, "is_active"):
            continue  # a plain decorator (precisionOverride) applies to every test
        if not info.is_active("TestCommon", "test_compare_cpu", DEV, dtype, {}):
            continue
        for decorator in info.decorators:
            if isinstance(decorator, toleranceOverride):
                if dtype in decorator.d:
                    tolerance = (decorator.d[dtype].atol, decorator.d[dtype].rtol)
            elif inspect.isfunction(decorator):  # unittest.skip(...) or expectedFailure
                why = inspect.getclosurevars(decorator).nonlocals.get("reason")
                reason = f"OpInfo skips test_compare_cpu: {why or decorator.__name__}"
            # objects (skipCUDAIf and the like) test conditions of other devices
    return reason, tolerance


def _to_float64(t):
    if isinstance(t, torch.Tensor) and t.dtype in (torch.float16, torch.bfloat16, torch.float32):
        return t.detach().double()
    return t


def _leaves(value) -> list[Any]:
    return tree_flatten(value)[0]


def _compare(actual, expected, tolerance) -> list[int]:
    """Asserts device outputs match CPU outputs; returns the outputs whose dtypes differ."""
    actual_leaves, expected_leaves = _leaves(actual), _leaves(expected)
    assert len(actual_leaves) == len(expected_leaves), (
        f"{len(actual_leaves)} outputs, the CPU gives {len(expected_leaves)}"
    )
    dtype_differs = []
    for i, (a, e) in enumerate(zip(actual_leaves, expected_leaves, strict=True)):
        if not isinstance(e, torch.Tensor):
            torch.testing.assert_close(a, e, equal_nan=True)
            continue
        if e.dtype.is_floating_point:
            atol, rtol = tolerance or TOLERANCES.get(e.dtype, (1e-3, 1e-3))
        else:
            atol = rtol = 0.0
        if a.dtype != e.dtype:
            dtype_differs.append(i)
        torch.testing.assert_close(
            a,
            e,
            atol=atol,
            rtol=rtol,
            equal_nan=True,
            check_device=False,
            check_dtype=False,
            msg=lambda m, i=i: f"output {i}: {m}",
        )
    return dtype_differs


def _check_meta_dtypes(op, sample, actual, outputs: list[int]) -> None:
    """Outputs whose dtype differs from the CPU's must have the dtype ATen's meta gives."""
    if not outputs:
        return
    meta = sample.transform(lambda t: t.detach().to("meta") if isinstance(t, torch.Tensor) else t)
    meta_leaves = _leaves(op(meta.input, *meta.args, **meta.kwargs))
    actual_leaves = _leaves(actual)
    for i in outputs:
        assert actual_leaves[i].dtype == meta_leaves[i].dtype, (
            f"output {i}: dtype {actual_leaves[i].dtype}, the CPU and ATen's meta function give "
            f"{meta_leaves[i].dtype}"
        )


def _max_error(value: torch.Tensor, reference: torch.Tensor) -> float:
    value, reference = value.detach().cpu().double(), reference.detach().double()
    same = (value == reference) | (value.isnan() & reference.isnan())
    error = (value - reference).abs().masked_fill(same, 0)
    return error.nan_to_num(nan=float("inf")).max().item() if error.numel() else 0.0


# Units of rounding (2^-10, 2^-7) of the reduced-precision dtypes, for the normwise bound.
_EPSILON = {torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7}


def _reference_verdict(op, sample, actual, expected) -> str | None:
    """Judges a device result that missed the CPU's against a float64 CPU reference: "closer"
    when every floating output is at least as close to it as the CPU's own output; for float16
    and bfloat16 outputs, "normwise" when the largest error is within 4 units of rounding of
    the output's largest magnitude (an operator the device composes from several kernels,
    rounding in between, where the CPU has one fused kernel).  None otherwise."""
    reference_sample = sample.transform(_to_float64)
    try:
        reference = op(reference_sample.input, *reference_sample.args, **reference_sample.kwargs)
    except Exception:
        return None
    verdict = "closer"
    triples = zip(_leaves(actual), _leaves(expected), _leaves(reference), strict=False)
    for a, e, r in triples:
        if not (isinstance(e, torch.Tensor) and e.dtype.is_floating_point):
            continue
        error = _max_error(a, r)
        if error <= _max_error(e, r) * 1.01 + 1e-6:
            continue
        scale = r.detach().double().abs().nan_to_num(posinf=0, neginf=0).max().item()
        if e.dtype in _EPSILON and error <= 4 * _EPSILON[e.dtype] * max(scale, 1.0):
            verdict = "normwise"
            continue
        return None
    return verdict


def _grads(outputs, inputs, cotangents):
    outputs = [t for t in _leaves(outputs) if isinstance(t, torch.Tensor) and t.requires_grad]
    return torch.autograd.grad(outputs, inputs, cotangents, allow_unused=True)


def _run_sample(op, sample, index: int, tolerance, backward: bool) -> str:
    """Runs one sample on the device and the CPU; returns "passed" (or the reference
    verdict: "closer", "normwise"), or raises."""
    device_sample = sample.transform(_to_device)
    try:
        expected = op(sample.input, *sample.args, **sample.kwargs)
    except Exception as cpu_error:
        with pytest.raises(Exception) as device_error:
            op(device_sample.input, *device_sample.args, **device_sample.kwargs)
            torch.accelerator.synchronize()
        if "TB_ERROR_DEVICE_FAULT" in str(device_error.value):
            # found while the kernel ran (as CUDA's device-side asserts): an AcceleratorError
            # whatever the CPU raises; the device stays faulted until reset (test_faults.py)
            _reset_device()
            assert isinstance(device_error.value, torch.AcceleratorError)
            return "passed"
        assert type(device_error.value) is type(cpu_error), (
            f"the CPU raises {cpu_error!r}, the device {device_error.value!r}"
        )
        return "passed"
    torch_backend.reset_fallback_counts()
    torch_backend.reset_kernel_counts()
    actual = op(device_sample.input, *device_sample.args, **device_sample.kwargs)
    SUMMARY.kernels_reached |= torch_backend.kernel_counts().keys()
    if fallbacks := torch_backend.fallback_counts():
        SUMMARY.with_fallback += 1
        SUMMARY.fallback_ops.update(fallbacks.keys())
    verdict = "passed"
    try:
        differs = _compare(actual, expected, tolerance)
    except AssertionError:
        verdict = _reference_verdict(op, sample, actual, expected)
        if verdict is None:
            raise
        differs = [
            i
            for i, (a, e) in enumerate(zip(_leaves(actual), _leaves(expected), strict=True))
            if isinstance(e, torch.Tensor) and a.dtype != e.dtype
        ]
    _check_meta_dtypes(op, sample, actual, differs)

    if backward:
        expected_out = sample.output_process_fn_grad(expected)
        actual_out = device_sample.output_process_fn_grad(actual)
        cpu_inputs = [
            t
            for t in _leaves((sample.input, sample.args, sample.kwargs))
            if isinstance(t, torch.Tensor) and t.requires_grad
        ]
        device_inputs = [
            t
            for t in _leaves((device_sample.input, device_sample.args, device_sample.kwargs))
            if isinstance(t, torch.Tensor) and t.requires_grad
        ]
        outputs = [
            t for t in _leaves(expected_out) if isinstance(t, torch.Tensor) and t.requires_grad
        ]
        if cpu_inputs and outputs:
            generator = torch.Generator().manual_seed(index)
            cotangents = [torch.randn(t.shape, generator=generator, dtype=t.dtype) for t in outputs]
            expected_grads = _grads(expected_out, cpu_inputs, cotangents)
            actual_grads = _grads(actual_out, device_inputs, [c.to(DEV) for c in cotangents])
            SUMMARY.kernels_reached |= torch_backend.kernel_counts().keys()
            _compare(actual_grads, expected_grads, tolerance)
            SUMMARY.backward += 1
    return verdict


@pytest.mark.parametrize("op", OPINFOS, ids=lambda op: op.formatted_name)
def test_matches_cpu(op):
    SUMMARY.opinfos += 1
    failures = []
    for dtype in DTYPES:
        if dtype not in op.supported_dtypes("cpu"):
            continue
        reason, tolerance = _compare_skip_reason(op, dtype)
        backward = dtype == torch.float32 and op.supports_autograd
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            samples = list(op.sample_inputs("cpu", dtype, requires_grad=backward))
            for index, sample in enumerate(samples):
                SUMMARY.samples += 1
                if reason:
                    SUMMARY.skipped[reason] += 1
                    continue
                try:
                    verdict = _run_sample(op, sample, index, tolerance, backward)
                except Exception as error:
                    _reset_device()
                    SUMMARY.failed += 1
                    failures.append(f"{dtype} sample {index} ({sample}): {error}")
                    continue
                SUMMARY.passed += 1
                SUMMARY.closer_than_cpu += verdict == "closer"
                SUMMARY.normwise += verdict == "normwise"
    assert not failures, f"{len(failures)} samples differ from the CPU:\n" + "\n".join(failures[:5])


def test_samples_reach_vendor_kernels():
    """The run above judged the vendor's kernels, not only the CPU fallback.  (Kernels no
    OpInfo sample reaches, listed in the summary, are covered by test_kernels.py.)"""
    if SUMMARY.samples == 0:
        pytest.skip("run together with test_matches_cpu")
    assert len(SUMMARY.kernels_reached) >= len(_NATIVE_KERNELS) // 2, SUMMARY.kernels_reached
