"""Shared helpers for the Python suites."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    """Run a command, capturing text output; never raises on a non-zero exit."""
    return subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)


@pytest.fixture
def python() -> str:
    return sys.executable
