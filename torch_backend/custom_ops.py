"""Autograd for the vendor's custom operators (vendor.h, "Custom operators").

torch_backend's C++ layer defines each custom operator the vendor declares, with its device
kernel and its Meta kernel (the vendor's shape function), when the vendor loads.  An operator
whose declaration names a backward operator gets its autograd formula here, through
``torch.library.register_autograd``: the backward operator receives one gradient per output
followed by the forward's arguments, and returns one gradient per Tensor argument.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

_ops = torch.ops.torch_backend


def custom_ops() -> dict[str, dict[str, str | None]]:
    """The vendor's custom operators by name, each with its ``schema`` and ``backward``."""
    names, schemas, backwards = _ops._custom_ops()
    return {
        name: {"schema": schema, "backward": backward or None}
        for name, schema, backward in zip(names, schemas, backwards, strict=True)
    }


def _overload(name: str) -> torch._ops.OpOverload:
    """``torch.ops.ns.name.overload`` for ``"ns::name.overload"`` (``.default`` without one)."""
    namespace, _, rest = name.partition("::")
    base, _, overload = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), base), overload or "default")


def _formula(
    forward: torch._ops.OpOverload, backward: torch._ops.OpOverload
) -> tuple[Callable[..., None], Callable[..., tuple[Any, ...]]]:
    """setup_context and backward functions calling ``backward`` for ``forward``."""
    positions = [
        i for i, a in enumerate(forward._schema.arguments) if isinstance(a.type, torch.TensorType)
    ]

    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        del output
        ctx.save_for_backward(*(inputs[i] for i in positions))
        ctx.others = [None if i in positions else value for i, value in enumerate(inputs)]

    def gradients(ctx: Any, *grads: torch.Tensor) -> tuple[Any, ...]:
        arguments = list(ctx.others)
        for i, tensor in zip(positions, ctx.saved_tensors, strict=True):
            arguments[i] = tensor
        results = backward(*grads, *arguments)
        if isinstance(results, torch.Tensor):
            results = (results,)
        per_input: list[Any] = [None] * len(arguments)
        for i, gradient in zip(positions, results, strict=True):
            per_input[i] = gradient
        return tuple(per_input)

    return setup_context, gradients


def _register_autograd() -> None:
    """Register the autograd formula of every custom operator that names a backward."""
    for name, info in custom_ops().items():
        if info["backward"] is None:
            continue
        forward = _overload(name)
        setup_context, gradients = _formula(forward, _overload(info["backward"]))
        torch.library.register_autograd(forward, gradients, setup_context=setup_context)
