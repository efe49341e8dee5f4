"""Generated samples for the fused optimizer kernels, which no OpInfo reaches.

``_fused_sgd_``, ``_fused_adam_`` and ``_fused_adamw_`` update lists of tensors in place: no
OpInfo calls them, so :mod:`torch_backend.check_kernels` checks them on inputs made here, over
their option sets -- momentum, dampening, Nesterov, weight decay, maximize, the first step,
AMSGrad, and the gradient scaler's ``grad_scale`` and ``found_inf`` (a skipped step) -- against
the CPU's fused kernels on the same inputs.  Every tensor the call mutates (parameters,
gradients, optimizer state) must match the CPU's afterwards, within check_kernels' tolerances
-- or, where the CPU's own kernel in a reduced precision is the one that is off, the CPU's
float64 result within 4 units of rounding of each tensor's largest magnitude (the bound
check_kernels applies to float16 and bfloat16 OpInfo samples).  A sample counts for a kernel only
when the call launched it (a declined call runs on the CPU fallback and checks nothing).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import torch

import torch_backend

# The kernels checked here, with the reference each row names.
REFERENCE = "optimizer options"
KERNELS = ("_fused_sgd_", "_fused_adam_", "_fused_adamw_")
# The parameters' shapes: a vector, a matrix, a 3-d tensor and a 0-dim one.
_SHAPES = [(7,), (3, 5), (2, 3, 4), ()]
# grad_scale and found_inf: none (plain training), a scale, and a scale with an inf found.
_AMP = [(None, None), (2.0, 0.0), (2.0, 1.0)]


@dataclasses.dataclass
class Sample:
    """One call: its options, as the table's failure note shows them, and how to make its
    tensor arguments on a device."""

    kernel: str
    options: dict[str, Any]
    lists: int  # the number of tensor lists the kernel takes first
    steps: bool  # whether the last list is the state steps (Adam's)

    def text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.options.items())


def _sgd_samples() -> Iterator[Sample]:
    for momentum, weight_decay, maximize, (scale, inf) in itertools.product(
        (0.0, 0.9), (0.0, 0.01), (False, True), _AMP
    ):
        variants = [(False, 0.0, True)]  # nesterov, dampening, is_first_step
        if momentum:
            variants = [
                (n, d, f)
                for n, d in ((False, 0.0), (True, 0.0), (False, 0.25))
                for f in (True, False)
            ]
        for nesterov, dampening, first in variants:
            options = {
                "weight_decay": weight_decay,
                "momentum": momentum,
                "lr": 0.1,
                "dampening": dampening,
                "nesterov": nesterov,
                "maximize": maximize,
                "is_first_step": first,
                "grad_scale": scale,
                "found_inf": inf,
            }
            yield Sample("_fused_sgd_", options, 3, False)


def _adam_samples(kernel: str) -> Iterator[Sample]:
    for weight_decay, amsgrad, maximize, (scale, inf) in itertools.product(
        (0.0, 0.01), (False, True), (False, True), _AMP
    ):
        options = {
            "lr": 1e-2,
            "beta1": 0.9,
            "beta2": 0.999,
            "weight_decay": weight_decay,
            "eps": 1e-8,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "grad_scale": scale,
            "found_inf": inf,
        }
        yield Sample(kernel, options, 6, True)


def samples(kernel: str) -> list[Sample]:
    """The generated samples of ``kernel`` (one of :data:`KERNELS`)."""
    if kernel == "_fused_sgd_":
        return list(_sgd_samples())
    return list(_adam_samples(kernel))


def _inputs(sample: Sample, dtype: torch.dtype, seed: int) -> list[list[torch.Tensor]]:
    """The tensor lists of a call, on the CPU: params, grads, then state (zeros for the first
    SGD step's momentum buffers is what torch.optim passes; here random, as after some steps)."""
    generator = torch.Generator().manual_seed(seed)
    lists = []
    count = sample.lists - (1 if sample.steps else 0)
    for index in range(count):
        tensors = [
            torch.randn(shape, generator=generator, dtype=torch.float64) for shape in _SHAPES
        ]
        if index >= 3:  # Adam's second moments and their maxima: non-negative
            tensors = [t.abs() for t in tensors]
        lists.append([t.to(dtype) for t in tensors])
    if sample.kernel == "_fused_sgd_" and sample.options["momentum"] == 0.0:
        lists[2] = []  # no momentum: no buffers
    if sample.kernel != "_fused_sgd_" and not sample.options["amsgrad"]:
        lists[4] = []  # max_exp_avg_sqs only with AMSGrad
    if sample.steps:
        lists.append([torch.tensor(float(k + 1)) for k in range(len(_SHAPES))])
    return lists


def _call(sample: Sample, lists: list[list[torch.Tensor]], device: str) -> None:
    options = dict(sample.options)
    for name in ("grad_scale", "found_inf"):
        value = options[name]
        options[name] = None if value is None else torch.tensor(value, device=device)
    getattr(torch.ops.aten, sample.kernel).default(*lists, **options)


@dataclasses.dataclass
class Result:
    """The outcome of one generated sample: ``launched`` False when the kernel declined (the
    call ran on the CPU fallback), ``error`` None when the device matched the CPU."""

    sample: Sample
    launched: bool
    error: str | None
    skip_reason: str | None = None


# Units of rounding of the reduced precisions, for the normwise bound against float64.
_EPSILON = {torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7}


def _compare(
    device_lists: list[list[torch.Tensor]],
    cpu_lists: list[list[torch.Tensor]],
    tolerance: tuple[float, float],
    normwise: float = 0.0,
) -> str | None:
    """None when every tensor of ``device_lists`` is close to ``cpu_lists``'s: elementwise
    within ``tolerance``, or (``normwise`` > 0) with a largest error of at most ``normwise``
    times the largest magnitude of the expected tensor."""
    atol, rtol = tolerance
    for index, (got_list, want_list) in enumerate(zip(device_lists, cpu_lists, strict=True)):
        for k, (got, want) in enumerate(zip(got_list, want_list, strict=True)):
            actual = got.cpu().double()
            expected = want.double()
            if normwise > 0 and actual.numel() > 0:
                bound = normwise * max(expected.abs().max().item(), 1e-30)
                if (actual - expected).abs().max().item() <= bound:
                    continue
            if not torch.allclose(actual, expected, atol=atol, rtol=rtol, equal_nan=True):
                error = (actual - expected).abs().max().item()
                return (
                    f"tensor list {index}, element {k}: max abs error {error:.3g} "
                    f"(atol {atol}, rtol {rtol})"
                )
    return None


def run(
    kernel: str,
    dtype: torch.dtype,
    device: str,
    tolerance: tuple[float, float],
    reset: Callable[[], None],
) -> Iterator[Result]:
    """Runs every generated sample of ``kernel`` in ``dtype`` on ``device`` and on the CPU."""
    for seed, sample in enumerate(samples(kernel)):
        cpu_lists = _inputs(sample, dtype, seed)
        device_lists = [[t.to(device) for t in tensors] for tensors in cpu_lists]
        try:
            _call(sample, cpu_lists, "cpu")
        except Exception as error:  # the CPU's kernel: its dtypes, its checks
            yield Result(sample, False, None, f"the CPU raises {type(error).__name__}")
            continue
        before = torch_backend.kernel_counts().get(kernel, 0)
        try:
            _call(sample, device_lists, device)
            torch.accelerator.synchronize()
        except Exception as error:
            reset()
            yield Result(sample, True, f"{type(error).__name__}: {error}")
            continue
        launched = torch_backend.kernel_counts().get(kernel, 0) > before
        if not launched:
            yield Result(sample, False, None, "declined (ran on the CPU fallback)")
            continue
        error = _compare(device_lists, cpu_lists, tolerance)
        if error is not None and dtype != torch.float64:
            # The CPU's kernel in reduced precision may be the one that is off (torch 2.13's
            # vectorized float16/bfloat16 _fused_sgd_ is, from 16 elements on): the float64
            # result decides, within 4 units of rounding of each tensor's largest magnitude
            # (the state is rounded between the steps of the update).
            exact = _inputs(sample, torch.float64, seed)
            _call(sample, exact, "cpu")
            epsilon = 4 * _EPSILON.get(dtype, 2.0**-23)
            if _compare(device_lists, exact, tolerance, epsilon) is None:
                error = None
        yield Result(sample, True, error)
