"""torch.nn's modules on the device against the CPU: PyTorch's ModuleInfo database (module_db).

Each ModuleInfo of ``torch.testing._internal.common_modules.module_db`` supplies the module's
constructor arguments and forward inputs for every case it tests, in training and, where the
two differ, evaluation mode. For every case, in float32 and float64 (where supported), the
module is built once on the CPU. A copy moves to the device, and both run:
- the forward outputs must match in value, dtype and layout: the device's output is contiguous,
  or channels_last, exactly where the CPU's is;
- buffers the forward updates (batch norm's running statistics) must match;
- the gradients of the inputs and of every parameter must match in value and layout.

Each test runs twice: once with the inputs as ModuleInfo gives them, once with every 4-D
(5-D) input and parameter in ``channels_last`` (``channels_last_3d``). The second run exists
only for modules that take such inputs. This is ``test_modules.py``'s ``test_cpu_gpu_parity``
and ``test_memory_format`` in one, judged by the CPU's behaviour rather than by a list of
which modules keep layouts.

Failures the project knows of are listed with their reasons in ``expected_failures.py``.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from conftest import DEV
from expected_failures import param, unused

pytest.importorskip("expecttest")  # needed by torch.testing._internal
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.nn.modules.lazy import LazyModuleMixin
    from torch.testing._internal.common_modules import ModuleInfo, module_db
    from torch.testing._internal.common_utils import set_default_dtype

SUITE = "modules"
DTYPES = (torch.float32, torch.float64)
# Value tolerances (atol, rtol): the device's kernels need not round as the CPU's do.
TOLERANCES = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-9, 1e-9)}
# Modules whose training-mode output is random: the device draws from its own generator, so only
# shapes, dtypes and layouts can be compared.
RANDOM_IN_TRAINING = {
    "nn.Dropout",
    "nn.Dropout1d",
    "nn.Dropout2d",
    "nn.Dropout3d",
    "nn.AlphaDropout",
    "nn.FeatureAlphaDropout",
    "nn.RReLU",
}
CHANNELS_LAST = {4: torch.channels_last, 5: torch.channels_last_3d}


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for element in value:
            yield from _tensors(element)
    elif isinstance(value, dict):
        for element in value.values():
            yield from _tensors(element)


def _map(value: Any, fn) -> Any:
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_map(element, fn) for element in value)
    if isinstance(value, dict):
        return {key: _map(element, fn) for key, element in value.items()}
    return value


def _inputs(info: ModuleInfo, dtype: torch.dtype, training: bool) -> list[Any]:
    with set_default_dtype(dtype), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            case
            for case in info.module_inputs_func(
                info, device="cpu", dtype=dtype, requires_grad=True, training=training
            )
            if case.forward_input is not None
        ]


def _takes_images(info: ModuleInfo) -> bool:
    """Whether some forward input of the module is 4-D or 5-D (channels_last applies)."""
    cases = _inputs(info, torch.float32, True) if torch.float32 in info.dtypes else []
    return any(
        t.dim() in CHANNELS_LAST
        for case in cases
        for t in _tensors((case.forward_input.args, case.forward_input.kwargs))
    )


def _cases() -> list[object]:
    cases = []
    for info in module_db:
        layouts = ["contiguous"] + (["channels_last"] if _takes_images(info) else [])
        for dtype in DTYPES:
            if dtype not in info.dtypes:
                continue
            for layout in layouts:
                name = f"{info.name}-{layout}-{str(dtype).removeprefix('torch.')}"
                cases.append(param(DEV, SUITE, name, info, dtype, layout))
    return cases


CASES = _cases()


def _in_layout(t: torch.Tensor, layout: str) -> torch.Tensor:
    if layout == "channels_last" and t.dim() in CHANNELS_LAST:
        return t.contiguous(memory_format=CHANNELS_LAST[t.dim()])
    return t


def _layout(t: torch.Tensor) -> tuple[bool, ...]:
    """What a caller of ``is_contiguous`` learns about a tensor's layout."""
    if t.dim() in CHANNELS_LAST:
        return (t.is_contiguous(), t.is_contiguous(memory_format=CHANNELS_LAST[t.dim()]))
    return (t.is_contiguous(),)


def _compare(what: str, device: Any, cpu: Any, dtype: torch.dtype, values: bool = True) -> None:
    device_tensors, cpu_tensors = list(_tensors(device)), list(_tensors(cpu))
    assert len(device_tensors) == len(cpu_tensors), f"{what}: a different number of tensors"
    atol, rtol = TOLERANCES[dtype]
    for number, (d, c) in enumerate(zip(device_tensors, cpu_tensors, strict=True)):
        label = f"{what} {number}"
        assert d.device.type == DEV, f"{label} is on {d.device}, not on the device"
        assert (d.shape, d.dtype) == (c.shape, c.dtype), (
            f"{label}: {d.shape} {d.dtype}, CPU {c.shape} {c.dtype}"
        )
        assert _layout(d) == _layout(c), (
            f"{label}: strides {d.stride()} on the device, {c.stride()} on the CPU "
            f"(is_contiguous, channels_last: {_layout(d)} vs {_layout(c)})"
        )
        if values:
            torch.testing.assert_close(
                d.cpu(),
                c,
                atol=atol,
                rtol=rtol,
                equal_nan=True,
                msg=lambda m, label=label: f"{label}: {m}",
            )


def _check(info: ModuleInfo, case: Any, dtype: torch.dtype, layout: str, training: bool) -> bool:
    """Runs one module input on the CPU and the device and compares; False where the CPU
    refuses the input (torch 2.13's nll_loss2d backward refuses channels_last inputs CUDA
    takes), True where it compared."""
    constructor, forward = case.constructor_input, case.forward_input
    with set_default_dtype(dtype):
        torch.manual_seed(0)
        module = info.module_cls(*constructor.args, **constructor.kwargs)
    module.train(training)
    for p in module.parameters():
        p.data = _in_layout(p.data, layout)
    cpu_args = _map(
        (forward.args, forward.kwargs),
        lambda t: _in_layout(t.detach().clone(), layout).requires_grad_(t.requires_grad),
    )
    if isinstance(module, LazyModuleMixin):  # materialise the parameters, then copy
        with torch.no_grad():
            module(*copy.deepcopy(cpu_args[0]), **copy.deepcopy(cpu_args[1]))
    device_module = copy.deepcopy(module).to(DEV)
    device_args = _map(cpu_args, lambda t: t.detach().to(DEV).requires_grad_(t.requires_grad))

    try:
        cpu_out = module(*cpu_args[0], **cpu_args[1])
    except Exception:
        return False
    device_out = device_module(*device_args[0], **device_args[1])
    random = training and info.name in RANDOM_IN_TRAINING
    _compare("output", device_out, cpu_out, dtype, values=not random)
    _compare("buffer", list(device_module.buffers()), list(module.buffers()), dtype)

    differentiable = [
        (d, c)
        for d, c in zip(_tensors(device_out), _tensors(cpu_out), strict=True)
        if c.requires_grad and c.is_floating_point()
    ]
    if not differentiable or random:
        return True
    torch.manual_seed(1)
    cotangents = [torch.randn_like(c) for _, c in differentiable]
    cpu_leaves = [t for t in _tensors(cpu_args) if t.requires_grad] + list(module.parameters())
    device_leaves = [t for t in _tensors(device_args) if t.requires_grad] + list(
        device_module.parameters()
    )
    try:
        cpu_grads = torch.autograd.grad(
            [c for _, c in differentiable], cpu_leaves, cotangents, allow_unused=True
        )
    except Exception:
        return False
    device_grads = torch.autograd.grad(
        [d for d, _ in differentiable],
        device_leaves,
        [t.to(DEV) for t in cotangents],
        allow_unused=True,
    )
    for number, (d, c) in enumerate(zip(device_grads, cpu_grads, strict=True)):
        assert (d is None) == (c is None), f"gradient {number}: None on one side only"
        if c is not None:
            _compare(f"gradient {number}", d, c, dtype)
    return True


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("info", "dtype", "layout"), CASES)
def test_module(info: ModuleInfo, dtype: torch.dtype, layout: str) -> None:
    modes = (True, False) if info.train_and_eval_differ else (True,)
    compared = 0
    for training in modes:
        for number, case in enumerate(_inputs(info, dtype, training)):
            failure = None
            try:
                compared += _check(info, case, dtype, layout, training)
            except Exception as error:
                mode = "training" if training else "eval"
                failure = (
                    f"{info.name} ({mode}), module input {number} ({case.constructor_input.args}, "
                    f"{case.constructor_input.kwargs}): {type(error).__name__}: {error}"
                )
            # Raised outside the handler: the error's traceback (its frames hold the case's
            # device tensors) is dropped before the leak check runs.
            if failure is not None:
                raise AssertionError(failure)
    if not compared:
        pytest.skip("the CPU refuses every input of this case")


def test_expected_failures_name_cases() -> None:
    """Every entry of expected_failures.py for this suite names a case it has."""
    assert unused(DEV, SUITE, {case.id for case in CASES}) == []
