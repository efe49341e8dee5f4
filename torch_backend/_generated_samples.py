"""Generated samples for the optimizer kernels, which no OpInfo reaches as published.

The fused optimizers (``_fused_sgd_``, ``_fused_adam_``, ``_fused_adamw_``) and the foreach
operators (``_foreach_*``, which ``torch.optim``'s default implementation calls) update or
return lists of tensors: no OpInfo calls them in a form that reaches a vendor's kernel, so
:mod:`torch_backend.check_kernels` checks them on inputs made here against the CPU's kernels on
the same inputs:

- the fused optimizers over their option sets: momentum, dampening, Nesterov, weight decay,
  maximize, the first step, AMSGrad, and the gradient scaler's ``grad_scale`` and
  ``found_inf`` (a skipped step);
- a foreach operator on arguments made from its schema (lists of tensors of several shapes, a
  0-dim one included; numbers; one number per tensor), with ``alpha`` at its default and at
  0.5 where it has one.

Every tensor the call mutates and every tensor it returns must match the CPU's, within
check_kernels' tolerances -- or, where the CPU's own kernel in a reduced precision is the one
that is off, the CPU's float64 result within 4 units of rounding of each tensor's largest
magnitude (the bound check_kernels applies to float16 and bfloat16 OpInfo samples).  A sample
counts for a kernel only when the call launched it (a declined call runs on the CPU fallback
and checks nothing).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.utils._pytree import tree_flatten, tree_map

import torch_backend

FUSED = ("_fused_sgd_", "_fused_adam_", "_fused_adamw_")
# The tensors of a list: a vector, a matrix, a 3-d tensor and a 0-dim one.
_SHAPES = [(7,), (3, 5), (2, 3, 4), ()]
# grad_scale and found_inf: none (plain training), a scale, and a scale with an inf found.
_AMP = [(None, None), (2.0, 0.0), (2.0, 1.0)]
# Units of rounding of the reduced precisions, for the normwise bound against float64.
_EPSILON = {torch.float16: 2.0**-10, torch.bfloat16: 2.0**-7}


def handles(kernel: str) -> bool:
    """Whether this module makes samples for ``kernel``."""
    return kernel in FUSED or kernel.startswith("_foreach_")


def reference(kernel: str) -> str:
    """What check_kernels' table names as the reference of ``kernel``'s rows."""
    return "optimizer options" if kernel in FUSED else "schema samples"


@dataclasses.dataclass
class Sample:
    """One call: the kernel, its options as the table's failure note shows them, and how to
    make its arguments (on the CPU, of a dtype, from a seed)."""

    kernel: str
    options: dict[str, Any]
    make: Callable[[torch.dtype, int], tuple[list[Any], dict[str, Any]]]

    def text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.options.items()) or "defaults"


def _tensors(generator: torch.Generator, dtype: torch.dtype, positive: bool = False) -> list:
    tensors = [torch.randn(shape, generator=generator, dtype=torch.float64) for shape in _SHAPES]
    if positive:  # second moments, and foreach operands (sqrt, log, div: away from 0)
        tensors = [t.abs() + 0.5 for t in tensors]
    return [t.to(dtype) for t in tensors]


def _amp(scale: float | None, inf: float | None) -> dict[str, Any]:
    return {
        "grad_scale": None if scale is None else torch.tensor(scale),
        "found_inf": None if inf is None else torch.tensor(inf),
    }


def _sgd_samples() -> Iterator[Sample]:
    for momentum, weight_decay, maximize, (scale, inf) in itertools.product(
        (0.0, 0.9), (0.0, 0.01), (False, True), _AMP
    ):
        variants = [(False, 0.0, True)]  # nesterov, dampening, is_first_step
        if momentum:
            variants = [
                (n, d, first)
                for n, d in ((False, 0.0), (True, 0.0), (False, 0.25))
                for first in (True, False)
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
            }

            def make(
                dtype: torch.dtype, seed: int, options: dict = options, amp: tuple = (scale, inf)
            ) -> tuple[list[Any], dict[str, Any]]:
                generator = torch.Generator().manual_seed(seed)
                lists = [_tensors(generator, dtype) for _ in range(3)]
                if options["momentum"] == 0.0:
                    lists[2] = []  # no momentum: no buffers
                return lists, {**options, **_amp(*amp)}

            yield Sample("_fused_sgd_", {**options, "grad_scale": scale, "found_inf": inf}, make)


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
        }

        def make(
            dtype: torch.dtype, seed: int, options: dict = options, amp: tuple = (scale, inf)
        ) -> tuple[list[Any], dict[str, Any]]:
            generator = torch.Generator().manual_seed(seed)
            params, grads, exp_avgs = (_tensors(generator, dtype) for _ in range(3))
            exp_avg_sqs, max_exp_avg_sqs = (_tensors(generator, dtype, True) for _ in range(2))
            if not options["amsgrad"]:
                max_exp_avg_sqs = []  # only with AMSGrad
            steps = [torch.tensor(float(k + 1)) for k in range(len(_SHAPES))]
            lists = [params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps]
            return lists, {**options, **_amp(*amp)}

        yield Sample(kernel, {**options, "grad_scale": scale, "found_inf": inf}, make)


def _foreach_samples(kernel: str) -> list[Sample]:
    """Samples of a foreach operator from its schema; none for an argument type it cannot
    make (the kernel is then listed under "no samples")."""
    name, _, overload = kernel.partition(".")
    packet = getattr(torch.ops.aten, name, None)
    if packet is None or not hasattr(packet, overload or "default"):
        return []
    arguments = getattr(packet, overload or "default")._schema.arguments
    alphas: list[Any] = [None]
    for argument in arguments:
        kind = str(argument.type)
        if kind not in ("List[Tensor]", "Tensor", "number", "List[number]") and (
            not argument.has_default_value()
        ):
            return []
        if argument.name == "alpha":
            alphas = [None, 0.5]
    samples = []
    for alpha in alphas:

        def make(
            dtype: torch.dtype, seed: int, alpha: Any = alpha
        ) -> tuple[list[Any], dict[str, Any]]:
            generator = torch.Generator().manual_seed(seed)
            args: list[Any] = []
            kwargs: dict[str, Any] = {}
            for argument in arguments:
                kind = str(argument.type)
                if kind == "List[Tensor]":
                    value: Any = _tensors(generator, dtype, positive=True)
                elif kind == "Tensor":
                    value = torch.tensor(0.75, dtype=dtype)
                elif kind == "number":
                    value = alpha if argument.name == "alpha" else 0.75
                elif kind == "List[number]":
                    value = [0.5, 1.5, 2.0, 0.25][: len(_SHAPES)]
                else:
                    continue  # its default
                if value is None:
                    continue  # alpha at its default
                if argument.kwarg_only:
                    kwargs[argument.name] = value
                else:
                    args.append(value)
            return args, kwargs

        samples.append(Sample(kernel, {} if alpha is None else {"alpha": alpha}, make))
    return samples


def samples(kernel: str) -> list[Sample]:
    """The generated samples of ``kernel`` (one :func:`handles` says yes to)."""
    if kernel == "_fused_sgd_":
        return list(_sgd_samples())
    if kernel in FUSED:
        return list(_adam_samples(kernel))
    return _foreach_samples(kernel)


def _call(kernel: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    name, _, overload = kernel.partition(".")
    return getattr(getattr(torch.ops.aten, name), overload or "default")(*args, **kwargs)


@dataclasses.dataclass
class Result:
    """The outcome of one generated sample: ``launched`` False when the kernel declined (the
    call ran on the CPU fallback), ``error`` None when the device matched the CPU."""

    sample: Sample
    index: int
    launched: bool
    error: str | None
    skip_reason: str | None = None


def _tensor_leaves(value: Any) -> list[torch.Tensor]:
    return [t for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor)]


def _compare(
    actual: Any, expected: Any, tolerance: tuple[float, float], normwise: float = 0.0
) -> str | None:
    """None when every tensor of ``actual`` is close to ``expected``'s: elementwise within
    ``tolerance``, or (``normwise`` > 0) with a largest error of at most ``normwise`` times the
    largest magnitude of the expected tensor."""
    atol, rtol = tolerance
    got_all, want_all = _tensor_leaves(actual), _tensor_leaves(expected)
    if len(got_all) != len(want_all):
        return f"{len(got_all)} tensors, the CPU's {len(want_all)}"
    for k, (got, want) in enumerate(zip(got_all, want_all, strict=True)):
        got, want = got.cpu().double(), want.double()
        if got.shape != want.shape:
            return f"tensor {k}: shape {list(got.shape)}, the CPU's {list(want.shape)}"
        if normwise > 0 and got.numel() > 0:
            bound = normwise * max(want.abs().max().item(), 1e-30)
            if (got - want).abs().max().item() <= bound:
                continue
        if not torch.allclose(got, want, atol=atol, rtol=rtol, equal_nan=True):
            error = (got - want).abs().max().item()
            return f"tensor {k}: max abs error {error:.3g} (atol {atol}, rtol {rtol})"
    return None


def run(
    kernel: str,
    dtype: torch.dtype,
    device: str,
    tolerance: tuple[float, float],
    reset: Callable[[], None],
) -> Iterator[Result]:
    """Runs every generated sample of ``kernel`` in ``dtype`` on ``device`` and on the CPU:
    the tensors compared are the arguments (updated in place) and the results."""
    for index, sample in enumerate(samples(kernel)):
        args, kwargs = sample.make(dtype, index)
        device_args, device_kwargs = tree_map(
            lambda v: v.to(device) if isinstance(v, torch.Tensor) else v, (args, kwargs)
        )
        try:
            expected = _call(kernel, args, kwargs)
        except Exception as error:  # the CPU's kernel: its dtypes, its checks
            yield Result(sample, index, False, None, f"the CPU raises {type(error).__name__}")
            continue
        before = torch_backend.kernel_counts().get(kernel, 0)
        try:
            actual = _call(kernel, device_args, device_kwargs)
            torch.accelerator.synchronize()
        except Exception as error:
            reset()
            yield Result(sample, index, True, f"{type(error).__name__}: {error}")
            continue
        if torch_backend.kernel_counts().get(kernel, 0) == before:
            yield Result(sample, index, False, None, "declined (ran on the CPU fallback)")
            continue
        error = _compare((actual, device_args), (expected, args), tolerance)
        if error is not None and dtype != torch.float64:
            # torch 2.13's vectorized float16/bfloat16 _fused_sgd_ is off from 16 elements on:
            # the float64 result decides, within 4 units of rounding (the state is rounded
            # between the steps of the update).
            exact_args, exact_kwargs = sample.make(torch.float64, index)
            exact = _call(kernel, exact_args, exact_kwargs)
            epsilon = 4 * _EPSILON.get(dtype, 2.0**-23)
            if _compare((actual, device_args), (exact, exact_args), tolerance, epsilon) is None:
                error = None
        yield Result(sample, index, True, error)
