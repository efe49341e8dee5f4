"""Writes whose output overlaps an input: the device raises the CPU's error wherever the CPU
raises it -- copy_, out= and in-place operators, on the generated, boxed and fallback paths --
and where the CPU computes through the overlap, the device computes the CPU's result."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from conftest import DEV

PARTIAL = "some elements of the input tensor and the written-to tensor refer to a single memory"
INTERNAL = "more than one element of the written-to tensor refers to a single memory location"


def arange(n: int = 9) -> torch.Tensor:
    return torch.arange(1.0, n + 1)


# Each program gets a fresh CPU `x` (9 elements) and mutates it; run on a device copy it must
# raise the same error, or leave the same values.
PROGRAMS: dict[str, Callable[[torch.Tensor], object]] = {
    "copy_ shifted": lambda x: x[1:].copy_(x[:-1]),
    "copy_ transposed": lambda x: x.view(3, 3).t().copy_(x.view(3, 3)),
    "copy_ into an expanded tensor": lambda x: x[:1].expand(9).copy_(x),
    "where out=": lambda x: torch.where(
        x[:-1] > 2, x[:-1], torch.zeros(8, device=x.device), out=x[1:]
    ),
    "atan2_ (boxed on emu)": lambda x: x[1:].atan2_(x[:-1]),
    "add out= (generated)": lambda x: torch.add(x[:-1], 1, out=x[1:]),
    "mul_ (generated, in-place)": lambda x: x[1:].mul_(x[:-1]),
    "mm out= an input": lambda x: torch.mm(x.view(3, 3), x.view(3, 3), out=x.view(3, 3)),
    "index_select out= its input": lambda x: torch.index_select(
        x, 0, torch.tensor([2, 1, 0, 3, 4, 5, 6, 7, 8], device=x.device), out=x
    ),
    "cat out= an input": lambda x: torch.cat([x[:3], x[3:6]], out=x[3:9]),
    "hypot out= (fallback)": lambda x: torch.hypot(x[:-1], x[1:], out=x[1:]),
    "nextafter_ (fallback)": lambda x: x[1:].nextafter_(x[:-1]),
    # the very same elements: an in-place operation, fine on the CPU
    "add_ itself": lambda x: x.add_(x),
    "copy_ itself through a view": lambda x: x.view(9).copy_(x.view(3, 3).view(9)),
    "sub out= self": lambda x: torch.sub(x, 2, out=x),
    # strided views ATen cannot compare: the CPU computes through the overlap
    "atan2 out= strided": lambda x: torch.atan2(
        x.view(3, 3)[:, :2], x.view(3, 3)[:, 1:], out=x.view(3, 3)[:, 1:]
    ),
}


def run(program: Callable[[torch.Tensor], object], device: str) -> tuple[str | None, list]:
    x = arange().to(device)
    try:
        program(x)
    except RuntimeError as error:
        return str(error).split("\n")[0], x.cpu().tolist()
    return None, x.cpu().tolist()


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_overlapping_writes_behave_as_on_the_cpu(name):
    on_cpu = run(PROGRAMS[name], "cpu")
    on_device = run(PROGRAMS[name], DEV)
    assert on_device[0] == on_cpu[0]
    if on_cpu[0] is None:
        torch.testing.assert_close(on_device[1], on_cpu[1])


def test_the_cpu_raises_for_the_partial_overlaps():
    # The table above would pass trivially if the CPU computed everything: it does not.
    errors = {name: run(program, "cpu")[0] for name, program in PROGRAMS.items()}
    assert PARTIAL in errors["copy_ shifted"]
    assert PARTIAL in errors["copy_ transposed"]
    assert INTERNAL in errors["copy_ into an expanded tensor"]
    assert PARTIAL in errors["where out="]
    assert PARTIAL in errors["atan2_ (boxed on emu)"]
    assert errors["add_ itself"] is None
