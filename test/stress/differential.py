"""Differential stress: random CUDA-style programs on the device, checked against the CPU.

Each program is generated from a seed: a few dozen steps over two devices and three streams
(device 0's default stream S0 and a side stream S1, device 1's default stream S2) -- host
tensors pageable and pinned, copies in both directions blocking and ``non_blocking``, copies
between the devices, views (slices, transposes, reshapes), functional, ``out=`` and in-place
operators, fills, indexing, matrix products and reductions, frees with and without
``record_stream``, tensors dropped while work on them is still queued.  Every program is
*correct* by CUDA's rules: a stream waits for the stream that last wrote a tensor before
reading it (``wait_stream`` or an event) and for every reader before writing it; a tensor used
on other streams than the one it was allocated on is freed only after ``record_stream`` or a
synchronization; the host reads a ``non_blocking`` copy's pinned destination only after
synchronizing -- and it relies on everything CUDA promises: a blocking copy is complete when it
returns, pinned blocks of queued copies are protected, a dropped tensor's memory is reused only
when its streams are done with it.

The same program text runs twice: on the device, and on the CPU, where devices are the CPU and
stream operations do nothing.  Values are small integers in float32 (every sum and product is
exact), so every value the program reads back to the host, every error it meets (an overlapping
write raises on both sides, or on neither) and every tensor alive at its end must be equal.

Usage::

    python test/stress/differential.py [--programs N] [--seed S] [--steps K] [--show]

A failing program prints its seed, its text and the first difference; ``--seed S --programs 1``
runs it again.  ``make test`` runs it through test/python/test_differential.py.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import random
import sys
import time
import traceback
from typing import Any

import torch

SHAPES = [(4, 4), (3, 4), (4, 3), (16,), (12,), (2, 8)]
ELEMENTWISE = ["+", "-", "max", "min", "where"]


@dataclasses.dataclass
class Storage:
    """What the generator knows of one device storage (a tensor and its views)."""

    device: int
    alloc_stream: int
    writer: int | None = None  # the stream whose write is not known to be complete
    readers: set[int] = dataclasses.field(default_factory=set)  # streams reading since then
    used: set[int] = dataclasses.field(default_factory=set)  # every stream that touched it
    names: set[str] = dataclasses.field(default_factory=set)  # variables viewing it


@dataclasses.dataclass
class Var:
    name: str
    shape: tuple[int, ...]
    storage: Storage | None  # None: a host tensor
    pinned: bool = False
    pending: int | None = None  # host: the stream of a queued copy into it
    contiguous: bool = True


class Generator:
    """Writes one correct program (a list of Python lines) from a seed."""

    def __init__(self, seed: int, steps: int) -> None:
        self.rng = random.Random(seed)
        self.steps = steps
        self.lines: list[str] = []
        self.vars: dict[str, Var] = {}
        self.counter = 0

    # -- bookkeeping ---------------------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, line: str, stream: int | None = None) -> None:
        if stream is not None and stream != 0 and stream != 2:
            line = f"with on(S{stream}): {line}"
        self.lines.append(line)

    def device_vars(self, device: int | None = None) -> list[Var]:
        return [
            v
            for v in self.vars.values()
            if v.storage is not None and (device is None or v.storage.device == device)
        ]

    def host_vars(self) -> list[Var]:
        return [v for v in self.vars.values() if v.storage is None]

    def stream_for(self, device: int) -> int:
        return self.rng.choice([0, 1]) if device == 0 else 2

    def order(self, stream: int, reads: list[Var], writes: list[Var]) -> None:
        """Makes `stream` wait for what it must: the last writer of what it reads or writes,
        and every reader of what it writes."""
        waits: set[int] = set()
        for v in reads + writes:
            s = v.storage
            if s is not None and s.writer is not None and s.writer != stream:
                waits.add(s.writer)
        for v in writes:
            s = v.storage
            if s is not None:
                waits |= {r for r in s.readers if r != stream}
        for w in sorted(waits):
            if self.rng.random() < 0.5:
                self.emit(f"wait(S{stream}, S{w})")
            else:
                event = self.fresh("e")
                self.emit(f"{event} = record(S{w}); wait_event(S{stream}, {event})")
        for v in reads:
            if v.storage is not None:
                v.storage.readers.add(stream)
                v.storage.used.add(stream)
        for v in writes:
            if v.storage is not None:
                v.storage.writer = stream
                v.storage.readers = set()
                v.storage.used.add(stream)

    def completed(self, stream: int | None) -> None:
        """Work queued on `stream` (every stream for None) has completed."""
        for v in self.device_vars():
            s = v.storage
            if stream is None or s.writer == stream:
                s.writer = None
            s.readers = set() if stream is None else s.readers - {stream}
        for v in self.host_vars():
            if stream is None or v.pending == stream:
                v.pending = None

    def new_device(self, name: str, shape: tuple[int, ...], device: int, stream: int) -> Var:
        storage = Storage(device=device, alloc_stream=stream, writer=stream, used={stream})
        storage.names.add(name)
        var = Var(name, shape, storage)
        self.vars[name] = var
        return var

    def view_of(self, base: Var, name: str, shape: tuple[int, ...], contiguous: bool) -> Var:
        var = Var(name, shape, base.storage, contiguous=contiguous)
        base.storage.names.add(name)
        self.vars[name] = var
        return var

    def host_ready(self, v: Var) -> None:
        """The host is about to read `v`: wait for a queued copy into it."""
        if v.pending is not None:
            self.emit(f"S{v.pending}.synchronize()")
            self.completed(v.pending)

    # -- steps ---------------------------------------------------------------------------------

    def step_host_tensor(self) -> None:
        name = self.fresh("h")
        shape = self.rng.choice(SHAPES)
        pinned = self.rng.random() < 0.5
        self.emit(f"{name} = host({shape!r}, pinned={pinned})")
        self.vars[name] = Var(name, shape, None, pinned=pinned)

    def step_upload(self) -> None:
        hosts = [v for v in self.host_vars() if v.pending is None]
        if not hosts:
            return self.step_host_tensor()
        h = self.rng.choice(hosts)
        device = self.rng.choice([0, 1])
        stream = self.stream_for(device)
        blocking = self.rng.random() < 0.5
        name = self.fresh("d")
        self.emit(
            f"{name} = {h.name}.to(D{device}, non_blocking={not blocking}, copy=True)", stream
        )
        self.new_device(name, h.shape, device, stream)
        if blocking:
            self.completed(stream)  # complete when it returns: the stream was waited for
        if self.rng.random() < 0.3:  # a pinned source may be dropped at once
            self.drop(h)

    def step_download(self) -> None:
        devs = self.device_vars()
        if not devs:
            return self.step_upload()
        v = self.rng.choice(devs)
        stream = self.stream_for(v.storage.device)
        self.order(stream, [v], [])
        name = self.fresh("h")
        kind = self.rng.random()
        if kind < 0.4:  # blocking: complete on return
            self.emit(
                f'{name} = {v.name}.to("cpu", copy=True, memory_format=CF); check({name})',
                stream,
            )
            self.completed(stream)
            self.vars[name] = Var(name, v.shape, None)
        elif kind < 0.8:  # into a pinned (or pageable) tensor, non_blocking
            pinned = kind < 0.7
            self.emit(f"{name} = empty_host({v.shape!r}, pinned={pinned})")
            self.emit(f"{name}.copy_({v.name}, non_blocking=True)", stream)
            self.vars[name] = Var(name, v.shape, None, pinned=pinned, pending=stream)
        else:  # into a new pinned tensor, non_blocking
            self.emit(
                f'{name} = {v.name}.to("cpu", non_blocking=True, copy=True, memory_format=CF)',
                stream,
            )
            self.vars[name] = Var(name, v.shape, None, pinned=True, pending=stream)
        if kind >= 0.4:
            if self.rng.random() < 0.3:  # dropped while the copy is queued
                self.drop(self.vars[name])
            elif self.rng.random() < 0.5:
                self.host_ready(self.vars[name])
                self.emit(f"check({name})")

    def step_cross_device(self) -> None:
        devs = self.device_vars()
        if not devs:
            return self.step_upload()
        v = self.rng.choice(devs)
        src, dst = v.storage.device, 1 - v.storage.device
        # Outside any stream context: the current streams are the default ones (S0 and S2),
        # and the copy is ordered after both and before later work on both (as CUDA's).
        src_stream, dst_stream = (0, 2) if src == 0 else (2, 0)
        self.order(src_stream, [v], [])
        self.order(dst_stream, [v], [])
        name = self.fresh("d")
        self.emit(f"{name} = {v.name}.to(D{dst}, copy=True, memory_format=CF)")
        self.new_device(name, v.shape, dst, dst_stream)

    def pick_pair(self, device: int) -> tuple[Var, Var] | None:
        devs = self.device_vars(device)
        self.rng.shuffle(devs)
        for a in devs:
            for b in devs:
                if a.shape == b.shape:
                    return a, b
        return None

    def step_elementwise(self) -> None:
        device = self.rng.choice([0, 1])
        pair = self.pick_pair(device)
        if pair is None:
            return self.step_upload()
        a, b = pair
        op = self.rng.choice(ELEMENTWISE)
        expression = {
            "+": f"({a.name} + {b.name}).clamp(-64, 64)",
            "-": f"({a.name} - 2 * {b.name}).clamp(-64, 64)",
            "max": f"torch.maximum({a.name}, {b.name})",
            "min": f"torch.minimum({a.name}, {b.name} * -1)",
            "where": f"torch.where({a.name} > 0, {a.name}, {b.name})",
        }[op]
        stream = self.stream_for(device)
        mode = self.rng.random()
        if mode < 0.5:  # functional
            self.order(stream, [a, b], [])
            name = self.fresh("d")
            self.emit(f"{name} = {expression}", stream)
            # TensorIterator's output follows its inputs' layout
            self.new_device(name, a.shape, device, stream).contiguous = (
                a.contiguous and b.contiguous
            )
        elif mode < 0.75:  # out=
            targets = [v for v in self.device_vars(device) if v.shape == a.shape]
            out = self.rng.choice(targets)
            self.order(stream, [a, b], [out])
            fn = self.rng.choice(["torch.add", "torch.sub", "torch.mul", "torch.maximum"])
            self.emit(
                f"attempt(lambda: {fn}({a.name}, {b.name}.clamp(-2, 2), out={out.name}))", stream
            )
            self.emit(f"attempt(lambda: {out.name}.clamp_(-64, 64))", stream)
        else:  # in place
            self.order(stream, [b], [a])
            fn = self.rng.choice(["add_", "sub_", "copy_", "mul_"])
            arg = f"{b.name}.clamp(-2, 2)" if fn == "mul_" else b.name
            self.emit(f"attempt(lambda: {a.name}.{fn}({arg}).clamp_(-64, 64))", stream)

    def step_view(self) -> None:
        devs = self.device_vars()
        if not devs:
            return self.step_upload()
        v = self.rng.choice(devs)
        name = self.fresh("v")
        shape = v.shape
        if len(shape) == 2 and self.rng.random() < 0.4:
            self.emit(f"{name} = {v.name}.t()")
            self.view_of(v, name, (shape[1], shape[0]), contiguous=False)
        elif shape[0] > 1 and self.rng.random() < 0.5:
            self.emit(f"{name} = {v.name}[1:]")
            self.view_of(v, name, (shape[0] - 1, *shape[1:]), contiguous=v.contiguous)
        elif v.contiguous:
            numel = 1
            for s in shape:
                numel *= s
            new = (numel,) if len(shape) == 2 else (2, numel // 2) if numel % 2 == 0 else (1, numel)
            self.emit(f"{name} = {v.name}.view{new!r}")
            self.view_of(v, name, new, contiguous=True)
        else:
            self.emit(f"{name} = {v.name}.unsqueeze(0).squeeze(0)")
            self.view_of(v, name, shape, contiguous=v.contiguous)

    def step_fill(self) -> None:
        devs = self.device_vars()
        if not devs:
            return self.step_upload()
        v = self.rng.choice(devs)
        stream = self.stream_for(v.storage.device)
        self.order(stream, [], [v])
        value = self.rng.randint(-4, 4)
        self.emit(f"{v.name}.fill_({value})" if value else f"{v.name}.zero_()", stream)

    def step_matmul_or_reduce(self) -> None:
        device = self.rng.choice([0, 1])
        devs = [v for v in self.device_vars(device) if len(v.shape) == 2]
        if not devs:
            return self.step_upload()
        a = self.rng.choice(devs)
        stream = self.stream_for(device)
        name = self.fresh("d")
        partners = [v for v in devs if v.shape[0] == a.shape[1]]
        if partners and self.rng.random() < 0.6:
            b = self.rng.choice(partners)
            self.order(stream, [a, b], [])
            self.emit(f"{name} = ({a.name} @ {b.name}).clamp(-64, 64)", stream)
            self.new_device(name, (a.shape[0], b.shape[1]), device, stream)
        elif self.rng.random() < 0.5:
            dim = self.rng.choice([0, 1])
            self.order(stream, [a], [])
            self.emit(f"{name} = {a.name}.sum({dim}).clamp(-64, 64)", stream)
            self.new_device(name, (a.shape[1 - dim],), device, stream)
        else:
            self.order(stream, [a], [])
            index = self.fresh("i")
            picks = [self.rng.randrange(a.shape[0]) for _ in range(a.shape[0])]
            self.emit(f"{index} = torch.tensor({picks!r}, device=D{device})", stream)
            self.emit(f"{name} = {a.name}.index_select(0, {index})", stream)
            self.new_device(name, a.shape, device, stream)

    def step_sync(self) -> None:
        kind = self.rng.random()
        if kind < 0.3:
            self.emit("sync()")
            self.completed(None)
        else:
            stream = self.rng.choice([0, 1, 2])
            self.emit(f"S{stream}.synchronize()")
            self.completed(stream)

    def drop(self, v: Var) -> None:
        """`del` a variable; the last one of a storage frees it, after record_stream on (or a
        synchronization with) every other stream that used it."""
        s = v.storage
        if s is not None:
            s.names.discard(v.name)
            if not s.names:
                others = s.used - {s.alloc_stream}
                for stream in sorted(others):
                    if stream in s.readers or s.writer == stream or self.rng.random() < 0.7:
                        if self.rng.random() < 0.8:
                            self.emit(f"record_stream({v.name}, S{stream})")
                        else:
                            self.emit(f"S{stream}.synchronize()")
                            self.completed(stream)
        self.emit(f"del {v.name}")
        del self.vars[v.name]

    def step_drop(self) -> None:
        if self.vars:
            self.drop(self.rng.choice(list(self.vars.values())))

    def program(self) -> str:
        steps = [
            (self.step_host_tensor, 1),
            (self.step_upload, 3),
            (self.step_download, 2),
            (self.step_cross_device, 1),
            (self.step_elementwise, 5),
            (self.step_view, 2),
            (self.step_fill, 1),
            (self.step_matmul_or_reduce, 2),
            (self.step_sync, 1),
            (self.step_drop, 3),
        ]
        functions = [f for f, _ in steps]
        weights = [w for _, w in steps]
        for _ in range(self.steps):
            self.rng.choices(functions, weights)[0]()
        # the end: every device tensor and every host tensor read back
        self.emit("sync()")
        self.completed(None)
        for v in list(self.vars.values()):
            self.emit(f"check({v.name})")
        return "\n".join(self.lines)


class Run:
    """One execution of a program: on the device, or on the CPU (`device` None)."""

    def __init__(self, device: str | None, seed: int) -> None:
        self.device_type = device
        self.results: list[Any] = []
        self.values = torch.Generator().manual_seed(seed)
        if device is not None:
            module = getattr(torch, device)
            self.module = module
            self.streams = [
                module.default_stream(0),
                module.Stream(device=0),
                module.default_stream(1),
            ]
        else:
            self.streams = [_NoStream()] * 3

    def environment(self) -> dict[str, Any]:
        device = self.device_type
        env: dict[str, Any] = {
            "torch": torch,
            "CF": torch.contiguous_format,
            "D0": torch.device(device, 0) if device else torch.device("cpu"),
            "D1": torch.device(device, 1) if device else torch.device("cpu"),
            "S0": self.streams[0],
            "S1": self.streams[1],
            "S2": self.streams[2],
            "on": self.on,
            "wait": self.wait,
            "record": self.record,
            "wait_event": self.wait_event,
            "record_stream": self.record_stream,
            "sync": self.sync,
            "host": self.host,
            "empty_host": self.empty_host,
            "check": self.check,
            "attempt": self.attempt,
        }
        return env

    def on(self, stream: Any) -> contextlib.AbstractContextManager:
        if self.device_type is None:
            return contextlib.nullcontext()
        return self.module.stream(stream)

    def wait(self, waiting: Any, other: Any) -> None:
        if self.device_type is not None:
            waiting.wait_stream(other)

    def record(self, stream: Any) -> Any:
        if self.device_type is None:
            return None
        event = self.module.Event()
        event.record(stream)
        return event

    def wait_event(self, stream: Any, event: Any) -> None:
        if self.device_type is not None:
            stream.wait_event(event)

    def record_stream(self, t: torch.Tensor, stream: Any) -> None:
        if self.device_type is not None:
            t.record_stream(stream)

    def sync(self) -> None:
        if self.device_type is not None:
            for index in range(2):
                self.module.synchronize(index)

    def host(self, shape: tuple[int, ...], pinned: bool) -> torch.Tensor:
        t = torch.randint(-4, 5, shape, generator=self.values).float()
        return t.pin_memory() if pinned and self.device_type is not None else t

    def empty_host(self, shape: tuple[int, ...], pinned: bool) -> torch.Tensor:
        # Filled with a marker: a copy that never lands shows as a difference.
        t = torch.full(shape, -999.0)
        return t.pin_memory() if pinned and self.device_type is not None else t

    def check(self, t: torch.Tensor) -> None:
        self.results.append(t.detach().cpu().clone())

    def attempt(self, operation: Any) -> None:
        """An operation that may raise (an overlapping write): the outcome is a result."""
        try:
            operation()
            self.results.append("ok")
        except RuntimeError as error:
            self.results.append("error: " + str(error).split("\n")[0])


class _NoStream:
    def synchronize(self) -> None:
        pass


@dataclasses.dataclass
class Outcome:
    seed: int
    program: str
    difference: str | None


def run_program(seed: int, steps: int, device: str) -> Outcome:
    text = Generator(seed, steps).program()
    code = compile(text, f"<program {seed}>", "exec")
    runs = []
    for target in (None, device):
        run = Run(target, seed)
        try:
            exec(code, run.environment())  # the program is generated here
        except Exception as error:  # a crash is a difference too
            frames = traceback.extract_tb(error.__traceback__)
            line = next((f.lineno for f in reversed(frames) if f.filename == code.co_filename), 0)
            return Outcome(
                seed,
                text,
                f"{target or 'cpu'} raised {type(error).__name__} at line {line} "
                f"({text.splitlines()[line - 1] if line else '?'}): {error}",
            )
        runs.append(run)
    cpu, dev = runs
    if len(cpu.results) != len(dev.results):
        return Outcome(
            seed, text, f"{len(cpu.results)} results on the CPU, {len(dev.results)} on {device}"
        )
    for index, (a, b) in enumerate(zip(cpu.results, dev.results, strict=True)):
        same = (
            a == b
            if isinstance(a, str) or isinstance(b, str)
            else a.shape == b.shape and torch.equal(a, b)
        )
        if not same:
            wrong = (
                ""
                if isinstance(a, str) or isinstance(b, str)
                else (
                    f" ({int((a != b).sum()) if a.shape == b.shape else 'shape'} elements differ)"
                )
            )
            return Outcome(
                seed, text, f"result {index} differs{wrong}:\n  cpu: {a}\n  {device}: {b}"
            )
    return Outcome(seed, text, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0, help="the first program's seed")
    parser.add_argument("--steps", type=int, default=40, help="steps per program")
    parser.add_argument("--show", action="store_true", help="print the first program")
    args = parser.parse_args(argv)

    import torch_backend

    device = torch_backend.vendor_info()["device_type"]
    if getattr(torch, device).device_count() < 2:
        print(f"differential: needs two devices, {device} has fewer", file=sys.stderr)
        return 2
    if args.show:
        print(Generator(args.seed, args.steps).program())
    start = time.perf_counter()
    wrong = []
    for seed in range(args.seed, args.seed + args.programs):
        outcome = run_program(seed, args.steps, device)
        if outcome.difference is not None:
            wrong.append(outcome)
            if len(wrong) == 1:
                print(f"program {seed} differs: {outcome.difference}\n--- program {seed}:")
                print(outcome.program)
    elapsed = time.perf_counter() - start
    print(
        f"differential on {device} ({torch_backend.vendor_info()['library']}): {args.programs} "
        f"programs of {args.steps} steps (seeds {args.seed}..{args.seed + args.programs - 1}), "
        f"{len(wrong)} wrong, {elapsed:.1f} s"
    )
    if wrong:
        seeds = " ".join(str(o.seed) for o in wrong[:20])
        print(f"wrong seeds: {seeds}{' ...' if len(wrong) > 20 else ''}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
