"""What the vendor binaries in the package promise: weak slots in fake, no libtorch anywhere."""

from __future__ import annotations

import re

import pytest
from conftest import run

import torch_backend


def vendor_libraries():
    return [
        torch_backend.library_dir() / f"libtb_vendor_{name}.so"
        for name in torch_backend.bundled_vendors()
    ]


def fake_slots() -> list[str]:
    header = (torch_backend.include_dir() / "torch_backend" / "fake.h").read_text()
    return sorted(set(re.findall(r"\b(tbv_[a-z0-9_]+)\(", header)))


def test_every_fake_slot_is_weak():
    slots = fake_slots()
    assert len(slots) >= 30
    nm = run(
        ["nm", "-D", "--defined-only", str(torch_backend.library_dir() / "libtb_vendor_fake.so")]
    )
    assert nm.returncode == 0, nm.stderr
    binding = {
        parts[2]: parts[1] for parts in map(str.split, nm.stdout.splitlines()) if len(parts) == 3
    }
    not_weak = {slot: binding.get(slot) for slot in slots if binding.get(slot) != "W"}
    assert not not_weak, f"slots that are not weak symbols: {not_weak}"
    assert binding.get("tb_vendor_get") in ("W", "T")


@pytest.mark.parametrize("library", vendor_libraries(), ids=lambda p: p.name)
def test_no_libtorch_dependency(library):
    ldd = run(["ldd", str(library)])
    assert ldd.returncode == 0, ldd.stderr
    assert not re.search(r"libtorch|libc10|libstdc\+\+|libc\+\+", ldd.stdout), ldd.stdout
    nm = run(["nm", "-D", str(library)])
    assert not re.search(r"_ZN3c10|_ZN2at|torch", nm.stdout)
