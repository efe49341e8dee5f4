"""Sweeps over every operator PyTorch's OpInfo database describes, on its own sample inputs:

(a) two devices: a sample with one tensor moved to the other device index raises, never
    computes (CUDA's "Expected all tensors to be on the same device");
(b) CPU numbers: a binary operator with a Python number or a CPU 0-dim tensor in either operand's
    place returns its result on the device of the device tensor, with the CPU's values;
(c) views: an output that shares the input's storage on the CPU (a view) shares it on the device;
(d) complex: an operator the CPU runs in complex64 runs on the device, with the CPU's values.

Each sweep walks every OpInfo (a fixed number of samples each) and fails listing every operator
that breaks its rule, with the sample; operators a sweep cannot judge are counted as skipped,
by reason, in the summary printed at the end of the run.
"""

from __future__ import annotations

import collections
import dataclasses
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch
from conftest import DEV, MODULE
from torch.utils._pytree import tree_flatten

pytest.importorskip("expecttest")  # needed by torch.testing._internal
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal import common_utils
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.opinfo import core as opinfo_core
    from torch.testing._internal.opinfo.core import BinaryUfuncInfo

# OpInfo looks for the running unittest.TestCase on every sample_inputs call by walking
# inspect.stack() (0.2 s per call under pytest): these tests are not unittest tests.
common_utils.extract_test_fn = opinfo_core.extract_test_fn = lambda: None

SAMPLES = 4  # per OpInfo and sweep
# Operators whose results are random: compared for placement and views, never for values.
RANDOM = {
    "bernoulli",
    "multinomial",
    "normal",
    "rand_like",
    "randint_like",
    "randn_like",
    "randint",
    "uniform",
    "nn.functional.dropout",
    "nn.functional.dropout2d",
    "nn.functional.dropout3d",
    "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout",
    "nn.functional.rrelu",
    "cauchy",
    "svd_lowrank",
    "pca_lowrank",
    "exponential",
    "geometric",
    "log_normal",
}


# Operators whose results hold uninitialized memory.
UNINITIALIZED = {"empty_like", "new_empty", "new_empty_strided", "empty", "empty_strided"}
# Operators that take a host tensor beside their input, on CUDA too.
HOST_ARGUMENTS = {"tensor_split": "takes host indices (tensor_split: on CUDA too)"}


@dataclasses.dataclass
class Report:
    name: str
    opinfos: int = 0
    samples: int = 0
    passed: int = 0
    failures: list[str] = dataclasses.field(default_factory=list)
    skipped: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    def line(self) -> str:
        skipped = ", ".join(f"{reason} {n}" for reason, n in self.skipped.most_common())
        return (
            f"sweep {self.name} on '{DEV}': {self.opinfos} OpInfos, {self.samples} samples, "
            f"{self.passed} passed, {len(self.failures)} failed; skipped: {skipped or 'none'}"
        )


REPORTS: dict[str, Report] = {}


def samples(op: Any, dtype: torch.dtype, count: int = SAMPLES) -> Iterator[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            generator = iter(op.sample_inputs("cpu", dtype))
            for _ in range(count):
                yield next(generator)
        except StopIteration:
            return


def call(op: Any, sample: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op(sample.input, *sample.args, **sample.kwargs)


def leaves(value: Any) -> list[Any]:
    return tree_flatten(value)[0]


def tensors_of(sample: Any) -> list[torch.Tensor]:
    return [t for t in leaves((sample.input, sample.args, sample.kwargs)) if torch.is_tensor(t)]


def to_device(sample: Any, device: torch.device) -> Any:
    """The sample with every tensor on `device`, each over a copy of its whole storage with its
    own strides and storage offset (as_strided and friends read the storage, not the values)."""

    def move(t: Any) -> Any:
        if not torch.is_tensor(t):
            return t
        if t.layout != torch.strided:
            return t.detach().to(device)
        whole = torch.empty(0, dtype=t.dtype).set_(t.detach().untyped_storage())
        moved = whole.to(device).as_strided(t.size(), t.stride(), t.storage_offset())
        if t.is_conj():  # the bits a view carries, which the storage does not
            moved = moved.conj()
        if t.is_neg():
            moved = torch._neg_view(moved)
        return moved

    return sample.transform(move)


def move_one(sample: Any, target: torch.Tensor, device: str) -> Any:
    return sample.transform(lambda t: t.to(device) if t is target else t)


def detached(sample: Any) -> Any:
    return sample.transform(lambda t: t.detach() if torch.is_tensor(t) else t)


def close(actual: Any, expected: Any) -> str | None:
    a, e = leaves(actual), leaves(expected)
    if len(a) != len(e):
        return f"{len(a)} outputs, the CPU gives {len(e)}"
    for i, (x, y) in enumerate(zip(a, e, strict=True)):
        if not torch.is_tensor(y):
            continue
        if not torch.is_tensor(x):
            return f"output {i} is {type(x).__name__}, the CPU's a tensor"
        try:
            torch.testing.assert_close(
                x.cpu(), y, atol=1e-3, rtol=1e-3, equal_nan=True, check_dtype=False
            )
        except AssertionError as error:
            return f"output {i}: {str(error).splitlines()[0]}"
    return None


def sweep(name: str, check: Callable[[Any, Report], None]) -> Report:
    report = Report(name)
    for op in op_db:
        report.opinfos += 1
        try:
            check(op, report)
        except Exception as error:  # a crash in the harness itself is a failure of the sweep
            report.failures.append(f"{op.name}: the sweep raised {type(error).__name__}: {error}")
        torch.accelerator.synchronize()
    REPORTS[name] = report
    return report


def finish(report: Report) -> None:
    assert not report.failures, (
        f"{len(report.failures)} operators break the rule:\n  " + "\n  ".join(report.failures)
    )


# ---------------------------------------------------------------------------------------------
# (a) a tensor on the other device


# Operators that compute with a tensor on another device, as they do on CUDA, and must then
# compute what the CPU does.
CROSS_DEVICE = {
    "expand_as": "reads only the other tensor's sizes",
    "view_as": "reads only the other tensor's sizes",
    "reshape_as": "reads only the other tensor's sizes",
    "resize_as_": "reads only the other tensor's sizes",
    "broadcast_tensors": "each result stays on its own tensor's device",
    "narrow": "reads its start tensor as a number",
    "linspace": "reads its start and end tensors as numbers",
    "logspace": "reads its start and end tensors as numbers",
    "nn.functional.ctc_loss": "reads the lengths on the host",
    "diagonal_scatter": "a composite over copy_, which copies across devices",
    "select_scatter": "a composite over copy_, which copies across devices",
    "slice_scatter": "a composite over copy_, which copies across devices",
    "as_strided_scatter": "a composite over copy_, which copies across devices",
}


def check_two_devices(op: Any, report: Report) -> None:
    if torch.float32 not in op.supported_dtypes("cpu"):
        report.skipped["no float32"] += 1
        return
    for sample in samples(op, torch.float32):
        sample = detached(sample)
        if len(tensors_of(sample)) < 2:
            report.skipped["fewer than two tensors"] += 1
            continue
        if any(t.numel() == 0 for t in tensors_of(sample)):
            report.skipped["empty tensors (ATen's composites skip kernels, on CUDA too)"] += 1
            continue
        try:
            expected = call(op, sample)
        except Exception:
            report.skipped["the CPU raises"] += 1
            continue
        moved = to_device(sample, torch.device(DEV, 0))
        for position, tensor in enumerate(tensors_of(moved)):
            if tensor.numel() == 0:
                continue
            report.samples += 1
            mixed = move_one(moved, tensor, f"{DEV}:1")
            try:
                result = call(op, mixed)
            except RuntimeError:
                report.passed += 1
                continue
            except Exception as error:
                report.failures.append(
                    f"{op.name}: raised {type(error).__name__}, not RuntimeError"
                )
                continue
            if op.name in CROSS_DEVICE:
                difference = close(result, expected)
                if difference is None:
                    report.passed += 1
                    report.skipped[f"computes across devices, as on CUDA ({op.name})"] += 1
                else:
                    report.failures.append(f"{op.name} (tensor {position}): {difference}")
                continue
            devices = {t.device for t in leaves(result) if torch.is_tensor(t)}
            report.failures.append(
                f"{op.name}: computed with tensor {position} on {DEV}:1, the others on {DEV}:0 "
                f"(result on {devices})"
            )


@pytest.mark.usefixtures("two_devices")
def test_a_tensor_on_the_other_device_raises():
    finish(sweep("(a) other device", check_two_devices))


# ---------------------------------------------------------------------------------------------
# (b) CPU numbers in each operand's place


def check_cpu_numbers(op: Any, report: Report) -> None:
    if not isinstance(op, BinaryUfuncInfo):
        report.skipped["not a binary elementwise operator"] += 1
        return
    dtype = torch.float32 if torch.float32 in op.supported_dtypes("cpu") else torch.int64
    if dtype not in op.supported_dtypes("cpu"):
        report.skipped["neither float32 nor int64"] += 1
        return
    for sample in samples(op, dtype):
        sample = detached(sample)
        if not (torch.is_tensor(sample.input) and sample.args and torch.is_tensor(sample.args[0])):
            continue
        x, y = sample.input, sample.args[0]
        if x.numel() == 0 or y.numel() == 0:
            continue
        rest = sample.args[1:]
        for index in (0, 1) if MODULE.device_count() > 1 else (0,):
            device = torch.device(DEV, index)
            cases = [
                ("cpu 0-dim first", x.flatten()[0].clone(), y, 1),
                ("cpu 0-dim second", x, y.flatten()[0].clone(), 0),
            ]
            if op.supports_rhs_python_scalar:
                cases.append(("python number second", x, y.flatten()[0].item(), 0))
            if op.supports_one_python_scalar:
                cases.append(("python number first", x.flatten()[0].item(), y, 1))
            for what, first, second, device_operand in cases:
                args = [first, second]
                expected_error = None
                try:
                    expected = op(first, second, *rest, **sample.kwargs)
                except Exception as error:
                    expected_error = error
                args[device_operand] = args[device_operand].to(device)
                report.samples += 1
                try:
                    actual = op(*args, *rest, **sample.kwargs)
                except Exception as error:
                    if expected_error is not None:
                        report.passed += 1
                    else:
                        report.failures.append(f"{op.name} ({what}, {device}): raised {error!r}")
                    continue
                if expected_error is not None:
                    report.failures.append(
                        f"{op.name} ({what}, {device}): computed where the CPU raises "
                        f"{expected_error!r}"
                    )
                    continue
                wrong = [t.device for t in leaves(actual) if torch.is_tensor(t)]
                if any(d != device for d in wrong):
                    report.failures.append(f"{op.name} ({what}): result on {wrong}, not {device}")
                    continue
                difference = close(actual, expected)
                if difference is None:
                    report.passed += 1
                else:
                    report.failures.append(f"{op.name} ({what}, {device}): {difference}")


def test_cpu_numbers_in_each_place_keep_results_on_the_device():
    finish(sweep("(b) CPU numbers", check_cpu_numbers))


# ---------------------------------------------------------------------------------------------
# (c) views


def storage_of(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def check_views(op: Any, report: Report) -> None:
    dtype = next(
        (
            d
            for d in (torch.float32, torch.complex64, torch.int64)
            if d in op.supported_dtypes("cpu")
        ),
        None,
    )
    if dtype is None:
        report.skipped["no float32, complex64 or int64"] += 1
        return
    if op.name in HOST_ARGUMENTS:
        report.skipped[HOST_ARGUMENTS[op.name]] += 1
        return
    for sample in samples(op, dtype):
        sample = detached(sample)
        if not torch.is_tensor(sample.input) or sample.input.numel() == 0:
            continue
        if any(t.layout != torch.strided for t in tensors_of(sample)):
            report.skipped["sparse layouts (no storage to check views of)"] += 1
            continue
        try:
            expected = call(op, sample)
        except Exception:
            report.skipped["the CPU raises"] += 1
            continue
        if any(t.layout != torch.strided for t in leaves(expected) if torch.is_tensor(t)):
            report.skipped["sparse layouts (no storage to check views of)"] += 1
            continue
        base = storage_of(sample.input)
        views = [
            i
            for i, t in enumerate(leaves(expected))
            if torch.is_tensor(t) and t.numel() > 0 and storage_of(t) == base
        ]
        if not views:
            continue  # not a view on the CPU either
        report.samples += 1
        moved = to_device(sample, torch.device(DEV, 0))
        try:
            actual = call(op, moved)
        except Exception as error:
            report.failures.append(f"{op.name}: raised {error!r}")
            continue
        outputs = leaves(actual)
        shared = [i for i in views if storage_of(outputs[i]) == storage_of(moved.input)]
        if shared != views:
            missing = sorted(set(views) - set(shared))
            report.failures.append(f"{op.name}: outputs {missing} are copies, views on the CPU")
        else:
            report.passed += 1


def test_views_are_views_on_the_device():
    finish(sweep("(c) views", check_views))


# ---------------------------------------------------------------------------------------------
# (d) complex dtypes


def check_complex(op: Any, report: Report) -> None:
    if torch.complex64 not in op.supported_dtypes("cpu"):
        report.skipped["no complex64 on the CPU"] += 1
        return
    if op.name in ("to", "linspace", "logspace"):
        report.skipped["its sample names the CPU as the result's device"] += 1
        return
    if op.name in HOST_ARGUMENTS:
        report.skipped[HOST_ARGUMENTS[op.name]] += 1
        return
    for sample in samples(op, torch.complex64):
        sample = detached(sample)
        if not tensors_of(sample) or sample.kwargs.get("device") is not None:
            report.skipped["its sample names the CPU as the result's device"] += 1
            continue
        try:
            expected = call(op, sample)
        except Exception:
            report.skipped["the CPU raises"] += 1
            continue
        report.samples += 1
        moved = to_device(sample, torch.device(DEV, 0))
        try:
            actual = call(op, moved)
        except Exception as error:
            report.failures.append(f"{op.name}: raised {str(error).splitlines()[0][:200]!r}")
            continue
        placed = [t.device for t in leaves(actual) if torch.is_tensor(t)]
        if any(d.type != DEV for d in placed):
            report.failures.append(f"{op.name}: results on {placed}")
            continue
        if op.name in RANDOM or op.name in UNINITIALIZED:
            report.passed += 1
            continue
        difference = close(actual, expected)
        if difference is None:
            report.passed += 1
        else:
            report.failures.append(f"{op.name}: {difference}")


def test_complex_dtypes_run_wherever_the_cpu_runs_them():
    finish(sweep("(d) complex", check_complex))
