"""Bad calls raise at the call as on the CPU, and the device lives on.

This suite uses PyTorch's OpInfo database (``op_db``) in two ways.

``test_error_inputs``
    For every OpInfo with ``error_inputs``, each error input runs on the device. The device must
    raise the exception class the OpInfo declares, with a message matching its ``error_regex``,
    as PyTorch's ``TestCommon.test_errors`` requires. The exception is an input whose CPU
    twin (the OpInfo's error input made on the CPU) the CPU accepts: some of OpInfo's error
    inputs are no error on any device, and there the device must accept it too.

``test_out``
    Every OpInfo that supports ``out=`` runs its first float32 sample three more times:
    - with ``out=`` tensors on the CPU: the call must raise ``RuntimeError``, as CUDA's does;
    - with int64 ``out=`` tensors for floating results: the device must refuse exactly where
      the CPU refuses, with the same class;
    - with ``out=`` tensors whose elements overlap (``expand`` of one element): the call must
      raise ATen's overlap error, as CUDA's TensorIterator does. This is not compared with the
      CPU, because some CPU kernels write past such a tensor's storage.

After every call, the device must still compute: ``torch.ones(1) + 1`` must be 2. So no
host-checkable mistake leaves the device faulted.

OpInfo's own skips and expected failures for ``TestCommon.test_errors`` and
``TestCommon.test_out`` apply with their reasons. ``torch.lu``'s ``out=``, for example, is
copied in Python, on every device. Failures the project knows of are listed in
``expected_failures.py``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest
import torch
from conftest import DEV, opinfo_skip
from expected_failures import param, unused

pytest.importorskip("expecttest")  # needed by torch.testing._internal
from torch_backend.check_kernels import load_op_db

OP_DB = load_op_db()
# Factories whose out= variant resizes and fill_s: fill_ writes one value through any strides,
# and ATen takes an overlapping out for them on every device.
FILLS = {"ones", "zeros", "full"}


def _id(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _alive() -> None:
    """The device still computes after a bad call."""
    result = (torch.ones(1, device=DEV) + 1).item()
    assert result == 2, f"the device computes 1 + 1 = {result} after a bad call"


class Outcome(NamedTuple):
    """What a call raised: the exception's class (None if nothing) and its message.  Kept
    instead of the exception, whose traceback holds the call's device tensors."""

    kind: type | None
    message: str

    def __str__(self) -> str:
        if self.kind is None:
            return "no exception"
        return f"{self.kind.__name__}: {self.message.splitlines()[0][:300] if self.message else ''}"


def _outcome(call: Callable[[], Any]) -> Outcome:
    """What ``call`` raises (after a synchronize)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
            torch.accelerator.synchronize()
    except Exception as error:
        return Outcome(type(error), str(error))
    return Outcome(None, "")


ERROR_CASES = [
    param(DEV, "error_inputs", _id(op), op) for op in OP_DB if op.error_inputs_func is not None
]


def _error_input_failures(op: Any) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        error_inputs = list(op.error_inputs(DEV))
        # The same inputs made on the CPU, where the OpInfo makes as many (some make more on
        # an accelerator: cross-device cases).  Some of OpInfo's error inputs are no error on
        # any device (the CPU accepts them); there the device must accept them too.
        on_cpu = list(op.error_inputs("cpu"))
    if len(on_cpu) != len(error_inputs):
        on_cpu = [None] * len(error_inputs)
    failures = []
    for number, (error_input, cpu) in enumerate(zip(error_inputs, on_cpu, strict=True)):
        s = error_input.sample_input
        found = _outcome(lambda s=s: op(s.input, *s.args, **s.kwargs))
        _alive()
        expected = None
        if cpu is not None:
            c = cpu.sample_input
            expected = _outcome(lambda c=c: op(c.input, *c.args, **c.kwargs))
        declared = error_input.error_type
        if expected is not None and expected.kind is None:
            if found.kind is not None:
                failures.append(
                    f"error input {number}: the CPU accepts it; the device raises {found}"
                )
        elif found.kind is None or not issubclass(found.kind, declared):
            failures.append(
                f"error input {number}: expected {declared.__name__} (the CPU raises "
                f"{expected or 'it'}); the device {found}"
            )
        elif not re.search(error_input.error_regex, found.message):
            failures.append(
                f"error input {number}: the device's message ({found}) does not match "
                f"{error_input.error_regex!r}"
            )
    return failures


@pytest.mark.parametrize("op", ERROR_CASES)
def test_error_inputs(op: Any) -> None:
    if reason := opinfo_skip(op, "TestCommon", "test_errors"):
        pytest.skip(reason)
    # Judged in a function of its own: a failure's traceback then holds no device tensor.
    failures = _error_input_failures(op)
    assert not failures, "\n".join(failures)


def _out_cases() -> list[object]:
    cases = []
    for op in OP_DB:
        if op.supports_out and torch.float32 in op.supported_dtypes("cpu"):
            cases.append(param(DEV, "out", _id(op), op))
    return cases


OUT_CASES = _out_cases()


def _first_sample(op: Any, device: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        return next(iter(op.sample_inputs(device, torch.float32)), None)


def _out_failures(op: Any) -> list[str] | str:
    """The out= rules the device breaks, or why the operator cannot be checked."""
    sample = _first_sample(op, DEV)
    cpu_sample = _first_sample(op, "cpu")
    if sample is None:
        return "no float32 sample"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = op(sample.input, *sample.args, **sample.kwargs)
        except Exception as error:
            return f"the first sample does not run on the device: {type(error).__name__}"
    results = result if isinstance(result, (tuple, list)) else (result,)
    if not results or not all(isinstance(r, torch.Tensor) for r in results):
        return "the operator returns no tensors"

    def call(s: Any, outs: list[torch.Tensor]) -> Callable[[], Any]:
        out = tuple(outs) if isinstance(result, (tuple, list)) else outs[0]
        return lambda: op(s.input, *s.args, **s.kwargs, out=out)

    failures = []
    # out= on the CPU beside device inputs: CUDA's kernels refuse it.
    found = _outcome(call(sample, [torch.empty_like(r, device="cpu") for r in results]))
    _alive()
    if found.kind is not RuntimeError:
        failures.append(f"out= on the CPU: {found}, not RuntimeError")

    if all(r.is_floating_point() for r in results):
        make = lambda r, device: torch.empty_like(r, device=device, dtype=torch.int64)  # noqa: E731
        expected = _outcome(call(cpu_sample, [make(r, "cpu") for r in results]))
        found = _outcome(call(sample, [make(r, DEV) for r in results]))
        _alive()
        if found.kind is not expected.kind:
            failures.append(f"int64 out=: the CPU raises {expected}; the device {found}")
    # out= whose elements overlap: refused, as CUDA's TensorIterator refuses it.  Not compared
    # with the CPU: some CPU kernels accept such an out and write past its storage's end
    # (avg_pool3d's), corrupting the process's heap.
    if all(r.numel() > 1 for r in results) and op.name not in FILLS:
        outs = [torch.empty(1, dtype=r.dtype, device=DEV).expand(r.shape) for r in results]
        found = _outcome(call(sample, outs))
        _alive()
        if not (found.kind is RuntimeError and "single memory location" in found.message):
            failures.append(f"overlapping out=: {found}, not ATen's overlap error")
    return failures


@pytest.mark.parametrize("op", OUT_CASES)
def test_out(op: Any) -> None:
    if reason := opinfo_skip(op, "TestCommon", "test_out", torch.float32):
        pytest.skip(reason)
    failures = _out_failures(op)
    if isinstance(failures, str):
        pytest.skip(failures)
    assert not failures, "\n".join(failures)


def test_expected_failures_name_cases() -> None:
    """Every entry of expected_failures.py for these suites names a case they have."""
    assert unused(DEV, "error_inputs", {case.id for case in ERROR_CASES}) == []
    assert unused(DEV, "out", {case.id for case in OUT_CASES}) == []
