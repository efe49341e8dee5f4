"""Check a vendor's kernels against PyTorch's own test data: OpInfo samples, device vs CPU.

A vendor author who installed torch_backend checks the numbers of the library's kernels with::

    python -m torch_backend.check_kernels path/to/libtb_vendor_mine.so
    python -m torch_backend.check_kernels emu --ops 'mul*' 'add.out' --dtypes float32,bfloat16
    python -m torch_backend.check_kernels --json results.json   # the vendor already selected

``LIB`` is a vendor as ``TORCH_BACKEND_VENDOR`` names one: the path of a
``libtb_vendor_NAME.so`` or the name of a bundled vendor (``python -c "import torch_backend;
print(torch_backend.bundled_vendors())"``).  Given, the check runs in a child process with
``TORCH_BACKEND_VENDOR=LIB`` (the vendor is chosen when torch_backend is imported); left out,
it runs in this process, against the vendor torch_backend loaded.  Options follow ``LIB``:

``--ops PATTERN ...``
    check only the kernels whose name (``mul.out``), or whose operator's name without the
    overload (``mul``), matches one of the shell-style patterns (``'add*'``); the OpInfos run
    are those whose first sample launches one of them (or fails in one).  Default: every
    kernel.
``--dtypes float32,...``
    the sample dtypes, comma-separated, among float32, float16, bfloat16, float64, int64,
    int32, int16, int8, uint8 and bool.  Default: float32, float16, bfloat16, int64, int32, bool.
``--json FILE``
    also write the vendor, every row, the kernels without samples and the summary as JSON.

What runs is what ``test/python/test_opinfo.py`` runs (it imports this module): every OpInfo of
``torch.testing._internal.common_methods_invocations.op_db`` whose first sample (in the first
of the default dtypes the OpInfo supports on the CPU) launches one of the vendor's kernels
(:func:`torch_backend.kernel_counts`), or fails in one, runs every sample of every chosen dtype
it supports on the device and on the CPU, and the outputs must match, forward and, for float32
samples of differentiable operators, backward (gradients of a fixed random projection of the
outputs).  A kernel fails when its call returns an error status other than
``TB_ERROR_NOT_SUPPORTED`` (which declines the call: the CPU fallback runs it) or faults the
device (``TB_ERROR_DEVICE_FAULT``, reported by the call or by a later one, such as a
synchronize): the device raises ``torch.AcceleratorError`` naming the kernel, or the fault.
A sample in which a kernel fails, where the CPU computes it, fails in that kernel's row.
OpInfos whose first sample fails on the device for another reason (an operator PyTorch does not
support on the device, a limitation of the CPU fallback) are left out.

Tolerances are those of PyTorch's own device-vs-CPU test (``TestCommon.test_compare_cpu``:
``atol = rtol = 1e-3``, or the OpInfo's ``toleranceOverride`` for it), widened to
``torch.testing``'s defaults for bfloat16; integer and bool outputs must be equal.  Samples that
OpInfo skips for ``test_compare_cpu`` (random operators) are skipped with that reason.  Where the
device result misses the CPU's, a float64 CPU reference decides: the sample passes if the device
is at least as close to it as the CPU is (the CPU rounds in reduced precision), or, for float16
and bfloat16, if the device's largest error is within 4 units of rounding of the output's
largest magnitude (the device composes the operator from several kernels, rounding in between,
where the CPU has one fused kernel).  Output dtypes must equal the CPU's or, where they differ,
ATen's meta function's.  Where the CPU raises, the device must raise the same exception type (or
report a device fault).

Kernels that no OpInfo reaches as published, and that torch_backend makes samples for, are
checked on generated inputs against the CPU's kernels, in each floating dtype asked for
(:mod:`torch_backend._generated_samples`): the fused optimizers ``_fused_sgd_``,
``_fused_adam_`` and ``_fused_adamw_`` over their option sets (momentum, dampening, Nesterov,
weight decay, maximize, the first step, AMSGrad, the gradient scaler's ``grad_scale`` and
``found_inf``), and the foreach operators (``_foreach_*``) on arguments made from their schemas.
Each row's ``reference`` says which checked it: ``OpInfo``, ``optimizer options`` or ``schema
samples``.

The table has one row per kernel and sample dtype: the samples of that dtype that launched the
kernel (a sample launching several kernels counts in the row of each), how many passed, failed
and were skipped, and for a failure the first one: OpInfo, sample, and the largest absolute and
relative errors or the exception.  A sample in which a kernel failed counts against that
kernel (a device fault: against the kernels the sample launched before it was reported); a
failing sample that launched no kernel before the device raised counts against the kernels its
OpInfo launched.  The summary line counts the kernels checked and the rows that passed and
failed, and lists the kernels that no sample launched as "no samples" (no OpInfo reaches them,
or they decline every call; ``test/python/test_kernels.py`` covers those for the bundled
vendors).

Exit status: 0 when every row passes (a vendor without kernels has nothing to check), 1 when a
row fails (or the check of ``LIB`` crashed), 2 for bad usage (``--ops`` patterns that match
none of the vendor's kernels included), a vendor that cannot be loaded (the message names
``LIB`` and the loader's error, :func:`torch_backend.vendor_info`'s ``error``) or PyTorch's test
data missing (``torch.testing._internal`` needs the ``expecttest`` package).

The functions below are the implementation ``test/python/test_opinfo.py`` shares:
:func:`native_kernels`, :func:`load_op_db`, :func:`probe`, :func:`check_opinfo`.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import faulthandler
import fnmatch
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch.utils._pytree import tree_flatten

import torch_backend
from torch_backend import _generated_samples

if TYPE_CHECKING:
    from torch.testing._internal.opinfo.core import OpInfo, SampleInput

__all__ = [
    "DTYPES",
    "TOLERANCES",
    "SampleResult",
    "check_opinfo",
    "load_op_db",
    "main",
    "native_kernels",
    "probe",
]

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool]
# What --dtypes accepts: DTYPES and the other real dtypes the comparison handles.
_CHOOSABLE = [*DTYPES, torch.float64, torch.int16, torch.int8, torch.uint8]
# (atol, rtol) per output dtype: test_compare_cpu's 1e-3, torch.testing's 1.6e-2 rtol for bf16.
TOLERANCES = {
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1e-3, 1.6e-2),
    torch.float32: (1e-3, 1e-3),
    torch.float64: (1e-3, 1e-3),
}
# Units of rounding (2^-10, 2^-7) of the reduced-precision dtypes, for the normwise bound.
_EPSILON = {torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7}

_DEVICE: str | None = torch_backend.vendor_info()["device_type"]


def native_kernels() -> set[str]:
    """The vendor kernels behind the operators :func:`torch_backend.op_coverage` reports
    ``"native"`` (``"add.Tensor"`` runs the vendor's ``"add.out"``): the kernels to check."""
    kernel_of = dict(zip(*torch.ops.torch_backend._op_kernels(), strict=True))
    native = [op for op, state in torch_backend.op_coverage().items() if state == "native"]
    # A foreach kernel is registered under its own name (the generic wrapper).
    return {kernel_of[op] for op in native if op in kernel_of} | {
        op for op in native if op.startswith("_foreach_") and op not in kernel_of
    }


def load_op_db() -> list[OpInfo]:
    """PyTorch's OpInfo database, ``common_methods_invocations.op_db`` (raises ImportError
    without the ``expecttest`` package, which ``torch.testing._internal`` imports)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal import common_utils
        from torch.testing._internal.common_methods_invocations import op_db
        from torch.testing._internal.opinfo import core as opinfo_core

    # OpInfo looks for the running unittest.TestCase on every sample_inputs call by walking
    # inspect.stack(), which reads the source of every frame: 0.2 s per call under pytest, and
    # it only finds unittest tests.  These checks are not unittest tests: nothing to find.
    common_utils.extract_test_fn = opinfo_core.extract_test_fn = lambda: None
    return list(op_db)


def _to_device(t: Any) -> Any:
    if isinstance(t, torch.Tensor):
        return t.detach().to(_DEVICE).requires_grad_(t.requires_grad)
    return t


def _reset_device() -> None:
    """Clear a device fault (a sample that failed while its kernel ran) before the next one."""
    getattr(torch, str(_DEVICE)).reset_device()


# How torch_backend reports a vendor call that failed (Vendor::Fail), on the first line:
# "<device>: <call>(<arguments>) failed with TB_ERROR_<STATUS>: <the vendor's message>", where
# <call> is a kernel's name ("mul.out") or a runtime call of vendor.h's groups.
_VENDOR_FAILURE = re.compile(r"(?P<call>[^\s(]+)\(.*?\) failed with (?P<status>TB_ERROR_\w+)")
_RUNTIME_GROUPS = ("device.", "memory.", "stream.", "event.", "custom_op.", "collectives.")


def _failed_kernels(error: BaseException, launched: Iterable[str]) -> set[str]:
    """The vendor kernels a device error is the fault of: the kernel whose call returned an
    error status (other than TB_ERROR_NOT_SUPPORTED, which declines the call), named by the
    message; for a device fault (TB_ERROR_DEVICE_FAULT, which a later call such as a
    synchronize may report), also the kernels ``launched`` before it.  Empty for errors that are
    no vendor kernel's: an operator PyTorch does not support on the device, a limitation of the
    CPU fallback, an error of a runtime call (memory, streams) other than a fault."""
    if not isinstance(error, RuntimeError):  # torch.AcceleratorError and the like
        return set()
    text = str(error)
    prefix = f"{_DEVICE}: "
    if not text.startswith(prefix):
        return set()
    found = _VENDOR_FAILURE.match(text.splitlines()[0], len(prefix))
    if found is None or found["status"] == "TB_ERROR_NOT_SUPPORTED":
        return set()
    kernels = set() if found["call"].startswith(_RUNTIME_GROUPS) else {found["call"]}
    if found["status"] == "TB_ERROR_DEVICE_FAULT":
        kernels |= set(launched)
    return kernels


def _cpu_computes(op: OpInfo, sample: SampleInput) -> bool:
    try:
        op(sample.input, *sample.args, **sample.kwargs)
    except Exception:
        return False
    return True


def probe(op_db: Iterable[OpInfo]) -> list[tuple[OpInfo, frozenset[str]]]:
    """The OpInfos whose first sample launches a vendor kernel on this device, with the kernels
    it launched, probed in the first of DTYPES the OpInfo supports (float32 for most;
    integer-only and bool-only operators such as bitwise_and are probed in their own dtypes).
    An OpInfo whose first sample fails in a vendor kernel (the kernel returned an error, or the
    device faulted: :func:`_failed_kernels`) where the CPU computes it is kept, with that kernel
    and those launched before it: the check must fail it.  OpInfos whose first sample fails on
    the device for another reason are left out: the check judges only OpInfos that reach a
    kernel."""
    selected = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for op in op_db:
            supported = op.supported_dtypes("cpu")
            dtype = next((dtype for dtype in DTYPES if dtype in supported), None)
            if dtype is None:
                continue
            torch_backend.reset_kernel_counts()
            sample = None
            try:
                sample = next(iter(op.sample_inputs("cpu", dtype)))
                device_sample = sample.transform(_to_device)
                op(device_sample.input, *device_sample.args, **device_sample.kwargs)
                torch.accelerator.synchronize()
            except Exception as error:
                launched = torch_backend.kernel_counts().keys()
                failed = _failed_kernels(error, launched)
                _reset_device()
                if failed and sample is not None and _cpu_computes(op, sample):
                    selected.append((op, frozenset(failed | launched)))
                continue
            if kernels := torch_backend.kernel_counts():
                selected.append((op, frozenset(kernels)))
    torch_backend.reset_kernel_counts()
    return selected


@dataclasses.dataclass
class SampleResult:
    """One sample of one OpInfo in one dtype, run on the device and the CPU."""

    dtype: torch.dtype
    index: int
    sample: SampleInput
    # "passed", "closer" (closer to float64 than the CPU), "normwise" (within the
    # reduced-precision bound), "failed" or "skipped"
    verdict: str = "failed"
    skip_reason: str | None = None
    error: str | None = None  # why it failed (the exception's text)
    error_type: str | None = None
    # the vendor kernels the device's forward (and backward) launched, when the CPU computed a
    # result, and the kernel that failed (returned an error or faulted the device); empty where
    # the CPU raised or the device raised before any kernel returned and no kernel failed
    kernels: set[str] = dataclasses.field(default_factory=set)
    fallback_ops: set[str] = dataclasses.field(default_factory=set)  # run on the CPU fallback
    backward: bool = False  # gradients compared too

    @property
    def passed(self) -> bool:
        return self.verdict in ("passed", "closer", "normwise")


def _compare_skip_reason(
    op: OpInfo, dtype: torch.dtype
) -> tuple[str | None, tuple[float, float] | None]:
    """What OpInfo says about test_compare_cpu for ``dtype``: a skip reason and/or tolerances."""
    from torch.testing._internal.common_device_type import toleranceOverride

    reason, tolerance = None, None
    for info in list(op.skips) + list(op.decorators):
        if not hasattr(info, "is_active"):
            continue  # a plain decorator (precisionOverride) applies to every test
        if not info.is_active("TestCommon", "test_compare_cpu", _DEVICE, dtype, {}):
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


def _to_float64(t: Any) -> Any:
    if isinstance(t, torch.Tensor) and t.dtype in (torch.float16, torch.bfloat16, torch.float32):
        return t.detach().double()
    return t


def _leaves(value: Any) -> list[Any]:
    return tree_flatten(value)[0]


def _compare(
    actual: Any, expected: Any, tolerance: tuple[float, float] | None, what: str = "output"
) -> list[int]:
    """Raises AssertionError unless the device's outputs (or gradients: ``what``) match the
    CPU's; returns the outputs whose dtypes differ."""
    actual_leaves, expected_leaves = _leaves(actual), _leaves(expected)
    if len(actual_leaves) != len(expected_leaves):
        raise AssertionError(f"{len(actual_leaves)} {what}s, the CPU gives {len(expected_leaves)}")
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
            msg=lambda m, i=i: f"{what} {i}: {m}",
        )
    return dtype_differs


def _check_meta_dtypes(op: OpInfo, sample: SampleInput, actual: Any, outputs: list[int]) -> None:
    """Outputs whose dtype differs from the CPU's must have the dtype ATen's meta gives."""
    if not outputs:
        return
    meta = sample.transform(lambda t: t.detach().to("meta") if isinstance(t, torch.Tensor) else t)
    meta_leaves = _leaves(op(meta.input, *meta.args, **meta.kwargs))
    actual_leaves = _leaves(actual)
    for i in outputs:
        if actual_leaves[i].dtype != meta_leaves[i].dtype:
            raise AssertionError(
                f"output {i}: dtype {actual_leaves[i].dtype}, the CPU and ATen's meta function "
                f"give {meta_leaves[i].dtype}"
            )


def _max_error(value: torch.Tensor, reference: torch.Tensor) -> float:
    value, reference = value.detach().cpu().double(), reference.detach().double()
    same = (value == reference) | (value.isnan() & reference.isnan())
    error = (value - reference).abs().masked_fill(same, 0)
    return error.nan_to_num(nan=float("inf")).max().item() if error.numel() else 0.0


def _reference_verdict(op: OpInfo, sample: SampleInput, actual: Any, expected: Any) -> str | None:
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


def _grads(outputs: Any, inputs: list[torch.Tensor], cotangents: list[torch.Tensor]) -> Any:
    outputs = [t for t in _leaves(outputs) if isinstance(t, torch.Tensor) and t.requires_grad]
    return torch.autograd.grad(outputs, inputs, cotangents, allow_unused=True)


def _requiring_grad(value: Any) -> list[torch.Tensor]:
    return [t for t in _leaves(value) if isinstance(t, torch.Tensor) and t.requires_grad]


def _run_sample(
    op: OpInfo,
    sample: SampleInput,
    tolerance: tuple[float, float] | None,
    backward: bool,
    result: SampleResult,
) -> str:
    """Runs one sample on the device and the CPU; returns "passed" (or the reference
    verdict: "closer", "normwise"), or raises.  Records the kernels and fallback operators
    the device's run used in ``result`` as it goes."""
    torch_backend.reset_kernel_counts()
    device_sample = sample.transform(_to_device)
    try:
        expected = op(sample.input, *sample.args, **sample.kwargs)
    except Exception as cpu_error:
        try:
            op(device_sample.input, *device_sample.args, **device_sample.kwargs)
            torch.accelerator.synchronize()
        except Exception as device_error:
            if "TB_ERROR_DEVICE_FAULT" in str(device_error):
                # found while the kernel ran (as CUDA's device-side asserts): an AcceleratorError
                # whatever the CPU raises; the device stays faulted until reset (test_faults.py)
                _reset_device()
                if not isinstance(device_error, torch.AcceleratorError):
                    raise AssertionError(
                        f"a device fault raised {device_error!r}, not torch.AcceleratorError"
                    ) from None
                return "passed"
            if type(device_error) is not type(cpu_error):
                raise AssertionError(
                    f"the CPU raises {cpu_error!r}, the device {device_error!r}"
                ) from None
            return "passed"
        raise AssertionError(f"the CPU raises {cpu_error!r}, the device raises nothing") from None
    torch_backend.reset_fallback_counts()
    actual = op(device_sample.input, *device_sample.args, **device_sample.kwargs)
    torch.accelerator.synchronize()  # a kernel's device fault surfaces in its own sample
    result.kernels |= torch_backend.kernel_counts().keys()
    result.fallback_ops |= torch_backend.fallback_counts().keys()
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
        cpu_inputs = _requiring_grad((sample.input, sample.args, sample.kwargs))
        device_inputs = _requiring_grad(
            (device_sample.input, device_sample.args, device_sample.kwargs)
        )
        outputs = _requiring_grad(expected_out)
        if cpu_inputs and outputs:
            generator = torch.Generator().manual_seed(result.index)
            cotangents = [torch.randn(t.shape, generator=generator, dtype=t.dtype) for t in outputs]
            expected_grads = _grads(expected_out, cpu_inputs, cotangents)
            actual_grads = _grads(actual_out, device_inputs, [c.to(_DEVICE) for c in cotangents])
            torch.accelerator.synchronize()
            result.kernels |= torch_backend.kernel_counts().keys()
            _compare(actual_grads, expected_grads, tolerance, "gradient")
            result.backward = True
    return verdict


def check_opinfo(op: OpInfo, dtypes: Sequence[torch.dtype] = DTYPES) -> Iterator[SampleResult]:
    """Every sample of ``op`` in each of ``dtypes`` it supports on the CPU, run on the device
    and the CPU and compared (backward too for float32 samples of differentiable operators);
    samples OpInfo skips for ``test_compare_cpu`` come back skipped, with the reason.  A
    failure resets the device (it may be faulted) and comes back as a failed result; where a
    vendor kernel failed (:func:`_failed_kernels`), its ``kernels`` include that kernel."""
    supported = op.supported_dtypes("cpu")
    for dtype in dtypes:
        if dtype not in supported:
            continue
        reason, tolerance = _compare_skip_reason(op, dtype)
        backward = dtype == torch.float32 and op.supports_autograd
        results = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            samples = list(op.sample_inputs("cpu", dtype, requires_grad=backward))
            for index, sample in enumerate(samples):
                result = SampleResult(dtype, index, sample)
                results.append(result)
                if reason:
                    result.verdict, result.skip_reason = "skipped", reason
                    continue
                try:
                    result.verdict = _run_sample(op, sample, tolerance, backward, result)
                except Exception as error:
                    launched = torch_backend.kernel_counts().keys()
                    result.kernels |= _failed_kernels(error, launched)
                    _reset_device()
                    result.verdict = "failed"
                    result.error, result.error_type = str(error), type(error).__name__
        yield from results


# ---- the command line ---------------------------------------------------------------------


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _parse_dtypes(text: str) -> list[torch.dtype]:
    """``"float32,half"`` -> dtypes; raises argparse.ArgumentTypeError for an unknown one."""
    dtypes = []
    for name in filter(None, (part.strip() for part in text.split(","))):
        dtype = getattr(torch, name.removeprefix("torch."), None)
        if dtype not in _CHOOSABLE:
            choices = ", ".join(_dtype_name(d) for d in _CHOOSABLE)
            raise argparse.ArgumentTypeError(f"unknown or unsupported dtype '{name}' ({choices})")
        if dtype not in dtypes:
            dtypes.append(dtype)
    if not dtypes:
        raise argparse.ArgumentTypeError("no dtype given")
    return dtypes


def _plain(text: str) -> str:
    """reStructuredText of the docstring as plain text, for --help."""
    return re.sub(r":\w+:`([^`]+)`", r"\1", text).replace("``", "")


def _parser() -> argparse.ArgumentParser:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(
        prog="python -m torch_backend.check_kernels",
        usage="%(prog)s [LIB] [--ops PATTERN ...] [--dtypes float32,...] [--json FILE]",
        description=(
            "Run PyTorch's OpInfo samples of every kernel a torch_backend vendor publishes on "
            "the device and on the CPU, and compare the results (the checks of "
            "test/python/test_opinfo.py).  Prints one row per kernel and dtype, then a summary."
        ),
        epilog=_plain(doc[doc.index("What runs") :].split("\n\nThe functions below")[0])
        + "\n\nExamples:\n"
        + "  python -m torch_backend.check_kernels path/to/libtb_vendor_mine.so\n"
        + "  python -m torch_backend.check_kernels emu --ops 'mul*' add.out --dtypes float32\n"
        + "  python -m torch_backend.check_kernels --json results.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "lib",
        nargs="?",
        metavar="LIB",
        help="the vendor to check: the path of a libtb_vendor_NAME.so or a bundled vendor's "
        "name; checked in a child process with TORCH_BACKEND_VENDOR=LIB.  Default: the vendor "
        "this process loaded (TORCH_BACKEND_VENDOR's).  Give LIB before the options.",
    )
    parser.add_argument(
        "--ops",
        nargs="+",
        action="extend",
        metavar="PATTERN",
        help="check only kernels whose name (mul.out) or operator name (mul) matches one of "
        "these shell-style patterns ('add*'); default: every kernel",
    )
    parser.add_argument(
        "--dtypes",
        type=_parse_dtypes,
        metavar="float32,...",
        help="sample dtypes, comma-separated: "
        + ", ".join(_dtype_name(d) for d in _CHOOSABLE)
        + " (default: "
        + ",".join(_dtype_name(d) for d in DTYPES)
        + ")",
    )
    parser.add_argument(
        "--json",
        metavar="FILE",
        help="also write the results (vendor, rows, kernels without samples, summary) as JSON",
    )
    return parser


def _matches(kernel: str, patterns: Sequence[str] | None) -> bool:
    if not patterns:
        return True
    operator = kernel.split(".", 1)[0]
    return any(
        fnmatch.fnmatchcase(kernel, pattern) or fnmatch.fnmatchcase(operator, pattern)
        for pattern in patterns
    )


def _describe(value: Any) -> str:
    """A sample argument in a few characters: tensors as T[2, 3] (nc: non-contiguous)."""
    if isinstance(value, torch.Tensor):
        shape = ", ".join(map(str, value.shape))
        return f"T[{shape}{'' if value.is_contiguous() else ', nc'}]"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe(v) for v in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_describe(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _sample_text(sample: SampleInput) -> str:
    parts = [_describe(sample.input)]
    parts += [_describe(arg) for arg in sample.args]
    parts += [f"{key}={_describe(value)}" for key, value in sample.kwargs.items()]
    text = ", ".join(parts)
    return text if len(text) <= 80 else text[:77] + "..."


def _mismatch_text(error: str) -> str | None:
    """torch.testing.assert_close's report of a value mismatch in one line, or None."""
    head = re.match(r"((?:output|gradient) \d+): \S+ are not (?:close|equal)!", error)
    if head is None:
        return None
    parts = [head[1] + ":"]
    if count := re.search(r"Mismatched elements: (\d+ / \d+)", error):
        parts.append(f"{count[1]} elements differ,")
    if scalar := re.search(r"Expected (.+?) but got (.+?)\.\n", error):
        parts.append(f"expected {scalar[1]}, got {scalar[2]},")
    for kind in ("absolute", "relative"):
        found = re.search(
            rf"{kind} difference: (\S+)(?: at index (\(.*?\)))?(?: \(up to (\S+) allowed\))?",
            error,
            re.IGNORECASE,
        )
        if found:
            short = kind[:3]
            where = f" at {found[2]}" if found[2] and kind == "absolute" else ""
            bound = f" ({'a' if short == 'abs' else 'r'}tol {found[3] or 0})"
            parts.append(f"max {short} error {found[1]}{where}{bound},")
    return " ".join(parts).rstrip(",")


def _error_text(result: SampleResult) -> str:
    """The failure in one line: the largest errors of a mismatch, else the exception's first
    line."""
    error = result.error or ""
    mismatch = _mismatch_text(error)
    if mismatch is not None:
        return mismatch
    first = next((line.strip() for line in error.splitlines() if line.strip()), "")
    if result.error_type != "AssertionError":
        first = f"{result.error_type}: {first}"
    return first if len(first) <= 160 else first[:157] + "..."


@dataclasses.dataclass
class _Row:
    kernel: str
    dtype: torch.dtype
    samples: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    opinfos: set[str] = dataclasses.field(default_factory=set)
    skip_reasons: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    first_failure: dict[str, Any] | None = None
    reference: str = "OpInfo"  # what checked the kernel: OpInfo samples, or generated ones

    @property
    def result(self) -> str:
        return "FAIL" if self.failed else "pass" if self.passed else "skip"

    def note(self) -> str:
        if self.first_failure is not None:
            failure = self.first_failure
            blame = "" if failure["launched"] else " [no kernel returned: blamed on the OpInfo's]"
            return (
                f"{failure['opinfo']} sample {failure['index']} ({failure['sample']}): "
                f"{failure['summary']}{blame}"
            )
        if self.skipped and not self.samples:
            return "; ".join(self.skip_reasons)
        return ""

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "dtype": _dtype_name(self.dtype),
            "samples": self.samples,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "result": self.result.lower(),
            "reference": self.reference,
            "opinfos": sorted(self.opinfos),
            "skip_reasons": dict(self.skip_reasons),
            "first_failure": self.first_failure,
        }


def _check(
    opinfos: list[tuple[OpInfo, frozenset[str]]],
    dtypes: Sequence[torch.dtype],
    patterns: Sequence[str] | None,
) -> dict[tuple[str, torch.dtype], _Row]:
    """Runs the OpInfos and files every sample under the kernels it launched."""
    rows: dict[tuple[str, torch.dtype], _Row] = {}

    def row(kernel: str, dtype: torch.dtype) -> _Row:
        return rows.setdefault((kernel, dtype), _Row(kernel, dtype))

    for op, probed in opinfos:
        known = set(probed)  # the OpInfo's kernels: its probe's and its samples'
        for result in check_opinfo(op, dtypes):
            known |= result.kernels
            if result.skip_reason is not None:
                for kernel in filter(lambda k: _matches(k, patterns), known):
                    entry = row(kernel, result.dtype)
                    entry.skipped += 1
                    entry.skip_reasons[result.skip_reason] += 1
                continue
            launched = bool(result.kernels)
            kernels = result.kernels if launched or result.passed else known
            for kernel in filter(lambda k: _matches(k, patterns), kernels):
                entry = row(kernel, result.dtype)
                entry.samples += 1
                entry.opinfos.add(op.formatted_name)
                if result.passed:
                    entry.passed += 1
                    continue
                entry.failed += 1
                if entry.first_failure is None:
                    entry.first_failure = {
                        "opinfo": op.formatted_name,
                        "dtype": _dtype_name(result.dtype),
                        "index": result.index,
                        "sample": _sample_text(result.sample),
                        "summary": _error_text(result),
                        "error": result.error,
                        "launched": launched,
                    }
    return rows


def _check_generated(
    kernels: set[str], dtypes: Sequence[torch.dtype]
) -> dict[tuple[str, torch.dtype], _Row]:
    """The kernels no OpInfo reaches that torch_backend makes samples for (the fused and
    foreach optimizer operators, :mod:`torch_backend._generated_samples`), in each floating
    dtype asked for."""
    rows: dict[tuple[str, torch.dtype], _Row] = {}
    for kernel in sorted(filter(_generated_samples.handles, kernels)):
        if not _generated_samples.samples(kernel):
            continue  # an argument it cannot make: "no samples"
        for dtype in (d for d in dtypes if d.is_floating_point):
            entry = _Row(kernel, dtype, reference=_generated_samples.reference(kernel))
            for result in _generated_samples.run(
                kernel, dtype, str(_DEVICE), TOLERANCES[dtype], _reset_device
            ):
                if not result.launched and result.error is None:
                    entry.skipped += 1
                    entry.skip_reasons[result.skip_reason or "not launched"] += 1
                    continue
                entry.samples += 1
                if result.error is None:
                    entry.passed += 1
                    continue
                entry.failed += 1
                if entry.first_failure is None:
                    entry.first_failure = {
                        "opinfo": "generated",
                        "dtype": _dtype_name(dtype),
                        "index": result.index,
                        "sample": result.sample.text(),
                        "summary": result.error,
                        "error": result.error,
                        "launched": True,
                    }
            rows[(kernel, dtype)] = entry
    return rows


def _table(rows: list[_Row]) -> list[str]:
    header = ("kernel", "dtype", "samples", "passed", "failed", "skipped", "result", "reference")
    cells = [
        (
            r.kernel,
            _dtype_name(r.dtype),
            r.samples,
            r.passed,
            r.failed,
            r.skipped,
            r.result,
            r.reference,
        )
        for r in rows
    ]
    widths = [max(len(str(c[i])) for c in [header, *cells]) for i in range(8)]
    lines = []
    notes = ["first failure"] + [r.note() for r in rows]
    for values, note in zip([header, *cells], notes, strict=True):
        text = "  ".join(
            str(v).ljust(w) if i in (0, 1, 6, 7) else str(v).rjust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        )
        lines.append(f"{text}  {note}".rstrip())
    return lines


def _write_json(path: str | None, document: dict[str, Any]) -> None:
    if path:
        with open(path, "w", encoding="utf-8") as file:
            json.dump(document, file, indent=2)
            file.write("\n")


def _vendor_label() -> str:
    return os.environ.get("TORCH_BACKEND_VENDOR") or "the default vendor"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _summary(rows: list[_Row], kernels: set[str]) -> dict[str, Any]:
    """The JSON summary of ``rows``, the check of ``kernels``."""
    checked = {r.kernel for r in rows}
    return {
        "kernels": len(checked),
        "rows": len(rows),
        "passed": sum(r.result == "pass" for r in rows),
        "failed": sum(r.result == "FAIL" for r in rows),
        "skipped": sum(r.result == "skip" for r in rows),
        "failed_kernels": sorted({r.kernel for r in rows if r.failed}),
        "no_samples": sorted(kernels - checked),
    }


def _run_here(args: argparse.Namespace) -> int:
    """The check in this process, against the vendor torch_backend loaded."""
    info = torch_backend.vendor_info()
    if info["error"] is not None:
        print(
            f"check_kernels: cannot load vendor '{_vendor_label()}': {info['error']}",
            file=sys.stderr,
        )
        return 2
    faulthandler.enable()  # a crash in a kernel shows the sample's Python stack
    dtypes: list[torch.dtype] = args.dtypes or DTYPES
    patterns: list[str] | None = args.ops
    print(
        f"vendor '{info['vendor']}' {info['version']} (ABI {info['abi_version']}) from "
        f"{info['library']}: device '{info['device_type']}', torch {torch.__version__}"
    )
    document: dict[str, Any] = {
        "vendor": info,
        "torch": torch.__version__,
        "dtypes": [_dtype_name(d) for d in dtypes],
        "ops": patterns,
        "rows": [],
        "summary": _summary([], set()),
        "result": "pass",
    }
    native = native_kernels()
    if not native:
        print("the vendor publishes no kernels: nothing to check")
        _write_json(args.json, document)
        return 0
    try:
        op_db = load_op_db()
    except ImportError as error:
        print(
            f"check_kernels: PyTorch's OpInfo samples cannot be imported ({error}); "
            "torch.testing._internal needs the expecttest package: pip install expecttest "
            "(or torch_backend[check])",
            file=sys.stderr,
        )
        return 2
    opinfos = probe(op_db)
    published = native.union(*(kernels for _, kernels in opinfos))
    kernels = {k for k in published if _matches(k, patterns)}
    if not kernels:
        print(
            f"check_kernels: no kernel of vendor '{_vendor_label()}' matches --ops "
            f"{' '.join(patterns or [])}; its kernels: {', '.join(sorted(published))}",
            file=sys.stderr,
        )
        return 2
    opinfos = [(op, k) for op, k in opinfos if any(_matches(name, patterns) for name in k)]
    print(
        f"checking {_plural(len(kernels), 'kernel')} on the samples of "
        f"{_plural(len(opinfos), 'OpInfo')}, dtypes {', '.join(document['dtypes'])}\n",
        flush=True,
    )
    order = {dtype: i for i, dtype in enumerate(dtypes)}
    checked = _check(opinfos, dtypes, patterns)
    checked.update(_check_generated(kernels, dtypes))
    rows = sorted(checked.values(), key=lambda r: (r.kernel, order[r.dtype]))
    if rows:
        print("\n".join(_table(rows)) + "\n")
    summary = _summary(rows, kernels)
    print(
        f"{_plural(summary['kernels'], 'kernel')} checked: {_plural(len(rows), 'row')}, "
        f"{summary['passed']} passed, {summary['failed']} failed, {summary['skipped']} skipped; "
        f"no samples ({len(summary['no_samples'])}): {', '.join(summary['no_samples']) or 'none'}"
    )
    if summary["failed_kernels"]:
        print("FAIL: kernels that differ from the CPU: " + ", ".join(summary["failed_kernels"]))
    else:
        print("OK: every sample that launched a kernel matches the CPU")
    document.update(
        rows=[r.to_json() for r in rows],
        summary=summary,
        result="fail" if summary["failed"] else "pass",
    )
    _write_json(args.json, document)
    return 1 if summary["failed"] else 0


def _run_child(args: argparse.Namespace) -> int:
    """The check in a child process that loads vendor ``args.lib``."""
    lib = os.path.abspath(args.lib) if os.path.exists(args.lib) else args.lib
    command = [sys.executable, "-m", "torch_backend.check_kernels"]
    if args.ops:
        command += ["--ops", *args.ops]
    if args.dtypes:
        command += ["--dtypes", ",".join(_dtype_name(d) for d in args.dtypes)]
    if args.json:
        command += ["--json", os.path.abspath(args.json)]
    # The child says why a vendor fails to load; the import's warning would say it twice.
    warning_filters = [os.environ.get("PYTHONWARNINGS", ""), "ignore::RuntimeWarning:runpy"]
    environment = {
        **os.environ,
        "TORCH_BACKEND_VENDOR": lib,
        "PYTHONWARNINGS": ",".join(filter(None, warning_filters)),
    }
    sys.stdout.flush()
    code = subprocess.run(command, env=environment, check=False).returncode
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        print(
            f"check_kernels: the check of vendor '{args.lib}' died of signal {name} "
            "(the Python stack above shows the sample that was running)",
            file=sys.stderr,
        )
        return 1
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: ``python -m torch_backend.check_kernels [LIB] [--ops PATTERN ...]
    [--dtypes float32,...] [--json FILE]``; returns the exit status."""
    args = _parser().parse_args(argv)
    return _run_child(args) if args.lib else _run_here(args)


if __name__ == "__main__":
    sys.exit(main())
