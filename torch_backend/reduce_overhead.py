"""``torch.compile(mode="reduce-overhead")`` on the device: compiled graphs replayed from
device graphs.

On CUDA the mode wraps every graph Inductor compiles in a CUDA graph (Inductor's cudagraph
trees), so that a call costs one launch instead of the host's work per kernel.  The trees are
written for CUDA only (``torch.cuda`` APIs; ``check_multiple_devices_or_any_cpu_nodes`` accepts
the device type ``"cuda"``).  For the device, Inductor's ``CUDAGraphPolicy`` hook (torch 2.13
and later) is set in the config patches of the device's graphs when the mode asks for graphs:
the policy leaves Inductor's own wrapping aside and wraps each compiled graph -- forward and
backward alike -- in a :class:`GraphedCallable`, which records it into a
``torch.accelerator.Graph`` (vendor.h, ``TB_EXTENSION_GRAPHS``) and replays it.

Semantics are those of Inductor's graphs without trees (``triton.cudagraph_trees=False``):

- The first call with a given set of input shapes runs the compiled code as it is (warm-up:
  lazily created state exists afterwards, as before a CUDA graph capture); the second records
  it and replays it; later calls copy the inputs that are not the module's parameters and
  buffers (Inductor's static inputs) into the recorded ones and replay.
- Inputs that are outputs of another recorded graph (the activations a forward saved for its
  backward) are read where they are, not copied.
- Outputs are the recorded graph's tensors: the next call of the same compiled function
  overwrites them.  Keep what you need across calls with ``.clone()`` (or ``.item()``).
- A graph that mutates an input it would copy, or that runs on another device too, is not
  recorded: it runs as compiled (``counters["inductor"]["cudagraph_skips"]`` counts it).
"""

from __future__ import annotations

import functools
import threading
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import torch

from . import device_module as _dm

# The storages recorded graphs write their outputs into, by address: a later graph reads such
# an input in place.  Entries go with the GraphedCallable that owns them.
_outputs_lock = threading.Lock()
_graph_outputs: dict[int, int] = {}  # storage address -> id of the owning GraphedCallable


def _storage_address(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def _forget_outputs(owner: int) -> None:
    with _outputs_lock:
        for address in [a for a, o in _graph_outputs.items() if o == owner]:
            del _graph_outputs[address]


def _counters() -> Any:
    """Inductor's counters, where ``<device>_graphs_recorded`` and ``<device>_graph_replays``
    count this module's work."""
    from torch._dynamo.utils import counters

    return counters["inductor"]


def _signature(inputs: Sequence[Any]) -> tuple[Any, ...]:
    """What a recording depends on besides addresses: each tensor's layout, each number."""
    key: list[Any] = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            key.append((x.dtype, x.device, tuple(x.shape), x.stride(), x.storage_offset()))
        elif isinstance(x, (int, float, bool, torch.SymInt)):
            key.append(int(x) if isinstance(x, torch.SymInt) else x)
        else:
            key.append(type(x))
    return tuple(key)


class _Recording:
    """One recorded graph of a GraphedCallable, for one input signature."""

    def __init__(
        self,
        graph: torch.accelerator.Graph,
        static_inputs: list[Any],
        kept: dict[int, int],
        copied: list[tuple[int, list[int]]],
        outputs: Any,
    ) -> None:
        self.graph = graph
        self.static_inputs = static_inputs
        self.kept = kept  # input index -> data_ptr the graph reads it at
        self.copied = copied  # (input index, its expanded dims) copied in at each call
        self.outputs = outputs

    def reads_in_place(self, inputs: Sequence[Any]) -> bool:
        return all(inputs[i].data_ptr() == ptr for i, ptr in self.kept.items())

    def replay(self, inputs: list[Any]) -> Any:
        from torch._inductor.compile_fx import index_expanded_dims_and_copy_

        for i, expanded in self.copied:
            index_expanded_dims_and_copy_(self.static_inputs[i], inputs[i], expanded)
        inputs.clear()
        self.graph.replay()
        return list(self.outputs) if isinstance(self.outputs, (list, tuple)) else self.outputs


class GraphedCallable:
    """A compiled graph's callable (Inductor's boxed convention: one list of inputs, which the
    call clears), recorded into a device graph per input signature and replayed."""

    def __init__(self, model: Callable[[list[Any]], Any], static_input_idxs: Sequence[int]) -> None:
        self.model = model
        self.static_idxs = frozenset(static_input_idxs)
        self.recordings: dict[tuple[Any, ...], _Recording] = {}
        self.warmed: set[tuple[Any, ...]] = set()
        self.refused: set[tuple[Any, ...]] = set()  # signatures a capture refused
        self._lock = threading.Lock()
        weakref.finalize(self, _forget_outputs, id(self))

    def __call__(self, inputs: list[Any]) -> Any:
        if torch.accelerator.current_stream().device.type != _dm._device_type or (
            _dm.is_current_stream_capturing()
        ):
            return self.model(inputs)  # inside a capture of the user's own: record as work
        key = _signature(inputs)
        with self._lock:
            recording = self.recordings.get(key)
            if recording is None or not recording.reads_in_place(inputs):
                if key not in self.warmed or key in self.refused:
                    self.warmed.add(key)
                    return self.model(inputs)
                current = torch.device(_dm._device_type, torch.accelerator.current_device_index())
                if any(isinstance(x, torch.Tensor) and x.device != current for x in inputs):
                    # The capture is of the current device's stream: a graph of another device
                    # (or of CPU tensors) would run, not be recorded.
                    self.refused.add(key)
                    _counters()["cudagraph_skips"] += 1
                    return self.model(inputs)
                try:
                    recording = self._record(inputs)
                except RuntimeError as error:
                    # Work a capture refuses (a host round trip: a CPU fallback, a host draw of
                    # random numbers): this signature runs as compiled from now on.
                    self.refused.add(key)
                    _counters()["cudagraph_skips"] += 1
                    warnings.warn(
                        f"torch.compile(mode='reduce-overhead'): a graph on "
                        f"{_dm._device_type} runs without a device graph: {error}",
                        stacklevel=2,
                    )
                    return self.model(inputs)
                self.recordings[key] = recording
                _counters()[f"{_dm._device_type}_graphs_recorded"] += 1
            _counters()[f"{_dm._device_type}_graph_replays"] += 1
            return recording.replay(inputs)

    def _record(self, inputs: list[Any]) -> _Recording:
        from torch._inductor.compile_fx import static_input
        from torch._inductor.output_code import get_expanded_dims

        with _outputs_lock:
            outputs_of_graphs = set(_graph_outputs)
        static_inputs: list[Any] = []
        kept: dict[int, int] = {}
        copied: list[tuple[int, list[int]]] = []
        for i, x in enumerate(inputs):
            if not isinstance(x, torch.Tensor):
                static_inputs.append(x)
            elif i in self.static_idxs or _storage_address(x) in outputs_of_graphs:
                static_inputs.append(x)
                kept[i] = x.data_ptr()
            else:
                expanded = get_expanded_dims(x)
                static_inputs.append(static_input(x))
                copied.append((i, expanded))
        graph = torch.accelerator.Graph()
        with getattr(torch, _dm._device_type).graph(graph, capture_error_mode="thread_local"):
            outputs = self.model(list(static_inputs))
        with _outputs_lock:
            for t in outputs if isinstance(outputs, (list, tuple)) else (outputs,):
                if isinstance(t, torch.Tensor):
                    _graph_outputs[_storage_address(t)] = id(self)
        return _Recording(graph, static_inputs, kept, copied, outputs)


def _eligible(output_code: Any) -> str | None:
    """Why a compiled graph cannot be recorded, or None."""
    device_types = set(getattr(output_code, "device_types", ()) or ())
    if device_types != {_dm._device_type}:
        return f"devices {sorted(device_types)}"
    fx_kwargs = getattr(output_code, "fx_kwargs", None) or {}
    static = set(fx_kwargs.get("static_input_idxs") or ())
    mutated = set(getattr(output_code, "mutated_input_idxs", ()) or ())
    if mutated - static:
        return f"it mutates inputs {sorted(mutated - static)}, which a replay would copy"
    if getattr(output_code, "current_callable", None) is None:
        return "no callable"
    return None


@functools.cache
def _policy_class() -> type:
    from torch._inductor.cudagraph_utils import CUDAGraphPolicy

    class DeviceGraphPolicy(CUDAGraphPolicy):
        """Inductor's graph policy for the device's graphs (module docstring)."""

        def should_wrap(self, compiled_graph: Any) -> bool:
            return False  # not Inductor's CUDA wrapping: wrap_output records them

        def wrap_output(self, output_code: Any) -> Any:
            from torch._inductor.output_code import CompiledFxGraph

            if not isinstance(output_code, CompiledFxGraph):
                return output_code
            why = _eligible(output_code)
            if why is not None:
                _counters()["cudagraph_skips"] += 1
                _counters()[f"{_dm._device_type}_graph_skip: {why}"] += 1
                return output_code
            static = (output_code.fx_kwargs or {}).get("static_input_idxs") or ()
            output_code.current_callable = GraphedCallable(output_code.current_callable, static)
            return output_code

    return DeviceGraphPolicy


def policy_patches(config_patches: dict[str, Any] | None) -> dict[str, Any]:
    """The config patches that give a graph on the device device graphs, when the patches (or
    the configuration in force) ask for CUDA graphs and the vendor has graphs; else none."""
    from torch._inductor import config

    wants = (config_patches or {}).get("triton.cudagraphs", config.triton.cudagraphs)
    if not wants or not hasattr(config, "cudagraph_policy") or not has_graphs():
        return {}
    if isinstance(config.cudagraph_policy, _policy_class()):
        return {}  # in force already (compile_fx calls itself once its patches apply)
    return {"cudagraph_policy": _policy_class()()}


@functools.cache
def has_graphs() -> bool:
    """Whether the vendor captures graphs (``torch.accelerator.Graph`` works on the device)."""
    try:
        torch.accelerator.Graph()
    except (NotImplementedError, RuntimeError):
        return False
    return True
