"""Results stay on the device: an operator's outputs go to the device of its device tensors --
never to a CPU number's (a Python scalar or a CPU 0-dim tensor among the arguments), on every
path, the CPU fallback included -- and match the CPU's values."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from conftest import DEV, MODULE

REAL = torch.linspace(0.5, 3.0, 6)
COMPLEX = torch.complex(REAL, REAL.flip(0))
ONE = torch.tensor(1.0)

# Each takes a tensor (real or complex) and returns a tensor computed with CPU numbers in it.
EXPRESSIONS: dict[str, tuple[torch.Tensor, Callable[[torch.Tensor], torch.Tensor]]] = {
    "1 - t": (REAL, lambda t: 1 - t),
    "2 // t": (REAL, lambda t: 2 // t),
    "2 % t": (REAL, lambda t: 2 % t),
    "2 ** t": (REAL, lambda t: 2**t),
    "2.0 - complex": (COMPLEX, lambda t: 2.0 - t),
    "complex * 2j": (COMPLEX, lambda t: t * 2j),
    "real * 2j": (REAL, lambda t: t * 2j),
    "real + 1j": (REAL, lambda t: t + 1j),
    "atan2(cpu 0-dim, t)": (REAL, lambda t: torch.atan2(ONE, t)),
    "hypot(cpu 0-dim, t)": (REAL, lambda t: torch.hypot(ONE, t)),
    "nextafter(cpu 0-dim, t)": (REAL, lambda t: torch.nextafter(ONE, t)),
    "where(c, cpu 0-dim, t)": (REAL, lambda t: torch.where(t > 1, ONE, t)),
    "maximum(cpu 0-dim, t)": (REAL, lambda t: torch.maximum(ONE, t)),
    "fmod(cpu 0-dim, t)": (REAL, lambda t: torch.fmod(ONE, t)),
    "xlogy(cpu 0-dim, t)": (REAL, lambda t: torch.xlogy(ONE, t)),
}


@pytest.mark.parametrize("name", list(EXPRESSIONS))
@pytest.mark.parametrize("index", [0, 1])
def test_results_land_on_the_device_of_the_device_tensors(name, index):
    if index >= MODULE.device_count():
        pytest.skip("needs two devices")
    values, expression = EXPRESSIONS[name]
    device = torch.device(DEV, index)
    result = expression(values.to(device))
    assert result.device == device, f"{name} returned a tensor on {result.device}"
    torch.testing.assert_close(result.cpu(), expression(values))
