"""Math-bit views on the device: conjugate and negative views give the materialised result.

``x.conj()`` of a complex tensor and ``torch._neg_view(x)`` are lazy views: a bit on the
tensor instead of new values. Every operator must see the values the bit stands for. Kernels
read the values, the CPU fallback copies them, and views keep the bit. For every OpInfo of
``op_db`` that PyTorch's ``TestMathBits`` checks, this suite runs the first three samples on
the device twice: once with the input as a math-bit view, and once with the same values
materialised (``resolve_conj`` / ``resolve_neg``). The outputs must match. Negative views are
checked in float32, conjugate views in complex64.

OpInfo's own skips for ``TestMathBits`` apply with their reasons (operators whose output is
uninitialised memory, such as ``empty_like``). Failures the project knows of are listed in
``expected_failures.py``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
from conftest import DEV, opinfo_skip
from expected_failures import param, unused

pytest.importorskip("expecttest")  # needed by torch.testing._internal
from torch_backend.check_kernels import load_op_db

SUITE = "math_bits"
SAMPLES = 3
# (bit, dtype, make the view of values x, OpInfo's flag, TestMathBits' test)
BITS: dict[str, tuple[torch.dtype, Callable[[torch.Tensor], torch.Tensor], str, str]] = {
    "neg": (torch.float32, lambda x: torch._neg_view(x.neg()), "test_neg_view", "test_neg_view"),
    "conj": (
        torch.complex64,
        lambda x: x.conj().resolve_conj().conj(),
        "test_conjugated_samples",
        "test_conj_view",
    ),
}


def _id(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _cases() -> list[object]:
    cases = []
    for op in load_op_db():
        for bit, (dtype, _, flag, _) in BITS.items():
            if getattr(op, flag, False) and dtype in op.supported_dtypes("cpu"):
                cases.append(param(DEV, SUITE, f"{_id(op)}-{bit}", op, bit))
    return cases


CASES = _cases()


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for element in value for t in _tensors(element)]
    return []


def _failures(op: Any, bit: str) -> list[str] | str:
    dtype, make_view, _, _ = BITS[bit]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        samples = list(op.sample_inputs(DEV, dtype))[:SAMPLES]
    failures = []
    compared = 0
    for number, sample in enumerate(samples):
        if not isinstance(sample.input, torch.Tensor) or sample.input.dtype != dtype:
            continue
        physical = sample.input.detach().clone()
        view = make_view(physical)
        assert (view.is_neg() if bit == "neg" else view.is_conj()) and torch.equal(
            view.resolve_neg().resolve_conj(), physical
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                expected = op(physical, *sample.args, **sample.kwargs)
            except Exception:
                continue
            try:
                actual = op(view, *sample.args, **sample.kwargs)
            except Exception as error:
                failures.append(f"sample {number}: {type(error).__name__}: {error}".splitlines()[0])
                continue
        compared += 1
        for index, (a, e) in enumerate(zip(_tensors(actual), _tensors(expected), strict=True)):
            try:
                torch.testing.assert_close(
                    a.resolve_neg().resolve_conj().cpu(),
                    e.resolve_neg().resolve_conj().cpu(),
                    equal_nan=True,
                )
            except AssertionError as error:
                failures.append(f"sample {number}, output {index}: {error}".splitlines()[0])
    if not compared and not failures:
        return "no sample runs on the device"
    return failures


@pytest.mark.parametrize(("op", "bit"), CASES)
def test_math_bit_view(op: Any, bit: str) -> None:
    dtype, _, _, test = BITS[bit]
    if reason := opinfo_skip(op, "TestMathBits", test, dtype):
        pytest.skip(reason)
    failures = _failures(op, bit)  # a function of its own: no device tensor in a traceback
    if isinstance(failures, str):
        pytest.skip(failures)
    assert not failures, "\n".join(failures)
    (torch.ones(1, device=DEV) + 1).item()  # the device still computes


def test_expected_failures_name_cases() -> None:
    assert unused(DEV, SUITE, {case.id for case in CASES}) == []
