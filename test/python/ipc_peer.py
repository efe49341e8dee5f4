"""The consumer process of test_ipc.py: started with the ``spawn`` method, it serves requests
from the suite's process (the producer) on a Queue and answers on another."""

from __future__ import annotations

import gc
import multiprocessing.reduction
from typing import Any

import torch

import torch_backend


def describe(t: torch.Tensor) -> dict[str, Any]:
    return {
        "type": type(t).__name__,
        "device": str(t.device),
        "dtype": t.dtype,
        "shape": tuple(t.shape),
        "stride": t.stride(),
        "offset": t.storage_offset(),
        "requires_grad": t.requires_grad,
        "storage": t.untyped_storage().data_ptr(),
        "values": t.detach().cpu(),
    }


def serve(requests: Any, replies: Any) -> None:
    held: dict[str, Any] = {}
    while True:
        command, key, payload = requests.get()
        if command == "exit":
            return
        try:
            replies.put(handle(held, command, key, payload))
        except Exception as error:  # the suite asserts on what went wrong
            replies.put(error)
        del payload  # a received tensor lives only in `held`


def handle(held: dict[str, Any], command: str, key: str, payload: Any) -> Any:
    module = getattr(torch, torch_backend.vendor_info()["device_type"])
    if command == "hold":  # payload: a tensor or a tuple of tensors
        held[key] = payload
        tensors = payload if isinstance(payload, tuple) else (payload,)
        return [describe(t) for t in tensors], module.memory_allocated()
    if command == "add":
        held[key].add_(payload)
        module.synchronize(held[key].device)  # its device's work, not the current one's
        return None
    if command == "drop":
        del held[key]
        gc.collect()
        return None
    if command == "send_on":
        multiprocessing.reduction.ForkingPickler.dumps(held[key])
        return "sent"
    raise ValueError(command)


def total(t: torch.Tensor) -> float:
    """A Pool's task."""
    return float(t.sum().cpu())


def add_in_place(model: torch.nn.Module, row: int, value: float, steps: int) -> None:
    """A hogwild worker (``mp.Process`` target): updates the producer's model in place."""
    with torch.no_grad():
        for _ in range(steps):
            model.weight[row].add_(value)
    torch.accelerator.synchronize()


def add_what_arrives(incoming: Any, outgoing: Any) -> None:
    """A ``Process`` target: adds 1 in place to the tensor that arrives on `incoming` (a
    SimpleQueue, or a Pipe's end), then answers on `outgoing` (the same end, for a Pipe)."""
    receive = incoming.recv if hasattr(incoming, "recv") else incoming.get
    send = outgoing.send if hasattr(outgoing, "send") else outgoing.put
    t = receive()
    t.add_(1)
    torch.accelerator.synchronize()
    del t
    gc.collect()
    send("done")
