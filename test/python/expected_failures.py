"""The failures the device-generic suites expect, each with the reason.

These suites are ``test_modules.py``, ``test_error_inputs.py`` and ``test_math_bits.py``. They
run PyTorch's own test data on the device: ModuleInfo's ``module_db`` and OpInfo's ``op_db``.

Each entry maps ``(vendor, suite, case)`` to the reason that case fails.
- ``vendor`` is a device name (``"emu"``, ``"npu"``, ``"ocl"``) or ``"*"`` for every vendor.
- ``suite`` names the test file without ``test_``.
- ``case`` is the test's parameter id (``"nn.Conv2d-channels_last-float32"``).

A listed case is marked ``xfail(strict=True)``. So when a fix makes it pass, the suite fails
until its entry is removed. The list cannot hide a case that works.

Cases that OpInfo or ModuleInfo skips for every device are not listed here. The suites skip
them with the decorator's own reason: nondeterministic outputs such as ``empty_like``'s.
"""

from __future__ import annotations

import pytest

_GROUP_NORM_BACKWARD = (
    "torch's derivative formula for native_group_norm (derivatives.yaml) makes the gradient "
    "and the input contiguous before native_group_norm_backward on every device but the CPU "
    "(and XPU). So the input's gradient comes back contiguous, as it does on CUDA. Keeping "
    "channels_last would take an autograd kernel of our own for native_group_norm."
)

EXPECTED: dict[tuple[str, str, str], str] = {
    ("*", "modules", "nn.GroupNorm-channels_last-float32"): _GROUP_NORM_BACKWARD,
    ("*", "modules", "nn.GroupNorm-channels_last-float64"): _GROUP_NORM_BACKWARD,
}


def reason(device: str, suite: str, case: str) -> str | None:
    """Why ``case`` of ``suite`` is expected to fail on ``device``, or None."""
    return EXPECTED.get((device, suite, case)) or EXPECTED.get(("*", suite, case))


def param(device: str, suite: str, case: str, *values: object) -> object:
    """``pytest.param(*values, id=case)``, marked ``xfail(strict=True)`` if the case is listed."""
    why = reason(device, suite, case)
    marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
    return pytest.param(*values, id=case, marks=marks)


def unused(device: str, suite: str, cases: set[str]) -> list[str]:
    """The entries for ``device`` and ``suite`` that name no case the suite has."""
    return sorted(
        case
        for (vendor, listed_suite, case) in EXPECTED
        if listed_suite == suite and vendor in ("*", device) and case not in cases
    )
