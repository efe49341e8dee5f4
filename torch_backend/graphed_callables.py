"""``torch.<device>.make_graphed_callables``: partial-network graph capture, with the
behaviour of ``torch.cuda.make_graphed_callables`` (PyTorch's CUDA Graphs notes).

Each callable (a module or a function) becomes two graphs, its forward and its backward, that
share one memory pool.  Warm-up iterations run first on a side stream (lazy initialisation never
lands in a capture); the forwards are then captured in call order and the backwards in reverse,
the order in which they replay during training, so that replays sharing the pool never
overwrite what a later replay still reads.  The returned callable is an autograd function whose
forward copies new inputs into the captured ones and replays the forward graph, and whose
backward does the same with the incoming gradients and the backward graph.

The device module re-exports :func:`make_graphed_callables`; this module holds the machinery.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils import _pytree

Tensor = torch.Tensor


def _check_callable(fn: Any, args: tuple[Any, ...]) -> tuple[Tensor, ...]:
    """The flattened sample arguments of ``fn``, after the checks PyTorch makes."""
    if isinstance(fn, torch.nn.Module):
        if fn._backward_hooks or fn._forward_hooks or fn._forward_pre_hooks:
            raise AssertionError(
                "make_graphed_callables: modules must not have hooks registered when they are "
                "passed (hooks registered afterwards are allowed)"
            )
        if any(b.requires_grad for b in fn.buffers()):
            raise AssertionError(
                "make_graphed_callables: only parameters may be trainable in a module passed "
                "to make_graphed_callables; every buffer must have requires_grad=False"
            )
    flat = tuple(_pytree.arg_tree_leaves(*args))
    if not all(isinstance(a, torch.Tensor) for a in flat):
        raise AssertionError(
            "make_graphed_callables: sample_args of each callable must contain only Tensors"
        )
    return flat


class _Captured:
    """One callable's graphs and the static tensors they read and write."""

    def __init__(self, fn: Any, args: tuple[Any, ...], flat_args: tuple[Tensor, ...]) -> None:
        self.fn = fn
        self.args = args
        self.params: tuple[Tensor, ...] = (
            tuple(fn.parameters()) if isinstance(fn, torch.nn.Module) else ()
        )
        self.user_arg_count = len(flat_args)
        # Everything the graphs read: the user's arguments, then the module's parameters.
        self.inputs: tuple[Tensor, ...] = flat_args + self.params
        self.forward_graph = torch.accelerator.Graph()
        self.backward_graph = torch.accelerator.Graph()
        self.outputs: tuple[Tensor, ...] = ()
        self.output_spec: _pytree.TreeSpec | None = None
        self.grad_outputs: tuple[Tensor | None, ...] = ()
        self.grad_inputs: tuple[Tensor | None, ...] = ()

    def differentiable_inputs(self) -> tuple[Tensor, ...]:
        return tuple(i for i in self.inputs if i.requires_grad)

    def warm_up(self, iterations: int, allow_unused_input: bool) -> None:
        for _ in range(iterations):
            outputs = [o for o in _pytree.tree_leaves(self.fn(*self.args)) if o.requires_grad]
            if outputs:
                torch.autograd.grad(
                    outputs=outputs,
                    inputs=self.differentiable_inputs(),
                    grad_outputs=[torch.empty_like(o) for o in outputs],
                    only_inputs=True,
                    allow_unused=allow_unused_input,
                )

    def capture_forward(self, graph_context: Callable[..., Any], pool: Any) -> None:
        with graph_context(self.forward_graph, pool=pool):
            outputs = self.fn(*self.args)
        flat, self.output_spec = _pytree.tree_flatten(outputs)
        self.outputs = tuple(flat)

    def capture_backward(
        self, graph_context: Callable[..., Any], pool: Any, allow_unused_input: bool
    ) -> None:
        self.grad_outputs = tuple(
            torch.empty_like(o) if o.requires_grad else None for o in self.outputs
        )
        differentiable = [o for o in self.outputs if o.requires_grad]
        grads: tuple[Tensor | None, ...] = ()
        if differentiable:
            with graph_context(self.backward_graph, pool=pool):
                grads = torch.autograd.grad(
                    outputs=differentiable,
                    inputs=self.differentiable_inputs(),
                    grad_outputs=[g for g in self.grad_outputs if g is not None],
                    only_inputs=True,
                    allow_unused=allow_unused_input,
                )
        # One slot per input: None for those that do not require grad.
        found = iter(grads)
        self.grad_inputs = tuple(
            next(found, None) if i.requires_grad and differentiable else None for i in self.inputs
        )
        self.has_backward = bool(differentiable)

    def function(self) -> Callable[..., Any]:
        """The graphed callable: an autograd function over the user's arguments and the
        module's parameters (whose gradients autograd then accumulates as usual)."""
        captured = self

        class Graphed(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, *inputs: Tensor) -> tuple[Tensor, ...]:  # type: ignore[override]
                count = captured.user_arg_count
                for static, given in zip(captured.inputs[:count], inputs[:count], strict=True):
                    if static.data_ptr() != given.data_ptr():
                        static.copy_(given)
                captured.forward_graph.replay()
                return tuple(o.detach() for o in captured.outputs)

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx: Any, *grads: Tensor) -> tuple[Tensor | None, ...]:  # type: ignore[override]
                for static, given in zip(captured.grad_outputs, grads, strict=True):
                    if static is not None and given is not None:
                        if static.data_ptr() != given.data_ptr():
                            static.copy_(given)
                if captured.has_backward:
                    captured.backward_graph.replay()
                return tuple(g.detach() if g is not None else None for g in captured.grad_inputs)

        def graphed(*user_args: Any) -> Any:
            flat = tuple(_pytree.arg_tree_leaves(*user_args))
            outputs = Graphed.apply(*(flat + captured.params))
            assert captured.output_spec is not None
            return _pytree.tree_unflatten(list(outputs), captured.output_spec)

        return graphed


def make_graphed_callables(
    callables: Any,
    sample_args: tuple[Any, ...],
    num_warmup_iters: int = 3,
    allow_unused_input: bool = False,
    pool: tuple[int, int] | None = None,
) -> Any:
    """Graphed versions of ``callables`` (a module or function, or a tuple of them), as
    ``torch.cuda.make_graphed_callables``: ``sample_args`` holds each callable's sample
    arguments (a tuple of tensors; a tuple of such tuples for a tuple of callables), whose
    ``requires_grad`` states are those of the real inputs.  A module keeps running its graphs
    while its ``training`` flag is what it was at capture, and its own forward otherwise.
    ``allow_unused_input`` lets inputs that do not reach the outputs get no gradient instead
    of raising; ``pool`` shares the graphs' memory pool with other graphs.

    Replays read the module's parameters where they were at capture: change them in place
    (optimizers do), never replace them.  Autocast must run with ``cache_enabled=False``."""
    from torch_backend import device_module as dm

    if torch.is_autocast_enabled(dm._device_type) and torch.is_autocast_cache_enabled():
        raise RuntimeError(
            "make_graphed_callables does not support the autocast caching: use "
            "torch.autocast(..., cache_enabled=False)"
        )
    single = not isinstance(callables, tuple)
    fns = (callables,) if single else callables
    all_args = (sample_args,) if single else sample_args
    if len(fns) != len(all_args):
        raise ValueError(
            f"make_graphed_callables: {len(fns)} callables but {len(all_args)} sample_args"
        )
    captures = [
        _Captured(fn, args, _check_callable(fn, args))
        for fn, args in zip(fns, all_args, strict=True)
    ]
    shared_pool = dm.graph_pool_handle() if pool is None else pool

    dm.synchronize()
    with dm.stream(torch.Stream(device=torch.device(dm._device_type, dm.current_device()))):
        for c in captures:
            c.warm_up(num_warmup_iters, allow_unused_input)
    dm.synchronize()

    # The order in which training replays them: forwards first to last, backwards last to
    # first, so that no replay overwrites pool memory a later one still reads.
    for c in captures:
        c.capture_forward(dm.graph, shared_pool)
    for c in reversed(captures):
        c.capture_backward(dm.graph, shared_pool, allow_unused_input)

    results: list[Any] = []
    for c in captures:
        graphed = c.function()
        if isinstance(c.fn, torch.nn.Module):
            module, training, original = c.fn, c.fn.training, c.fn.forward

            def forward(
                *args: Any,
                _module: torch.nn.Module = module,
                _training: bool = training,
                _graphed: Callable[..., Any] = graphed,
                _original: Callable[..., Any] = original,
                **kwargs: Any,
            ) -> Any:
                if _module.training == _training:
                    return _graphed(*args, **kwargs)
                return _original(*args, **kwargs)

            module.forward = forward  # type: ignore[method-assign]
            results.append(module)
        else:
            results.append(graphed)
    return results[0] if single else tuple(results)
