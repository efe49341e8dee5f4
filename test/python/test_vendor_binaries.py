"""What the vendor binaries in the package promise: weak slots in fake, no libtorch anywhere."""

from __future__ import annotations

import json
import re

import pytest
from conftest import run

import torch_backend


def vendor_libraries():
    return [
        torch_backend.library_dir() / f"libtb_vendor_{name}.so"
        for name in torch_backend.bundled_vendors()
    ]


def fake_slots(tmp_path) -> list[str]:
    """fake's name of every slot, from the slot list as tb-conformance prints it, and the
    identity functions fake.h declares."""
    listing = tmp_path / "slots.json"
    result = run([str(torch_backend.conformance_executable()), "--slots", "--json", str(listing)])
    assert result.returncode == 0, result.stderr
    names = {slot["fake"] for slot in json.loads(listing.read_text())}
    header = (torch_backend.include_dir() / "torch_backend" / "fake.h").read_text()
    names |= set(re.findall(r"\b(tbv_[a-z0-9_]+)\(", header))
    return sorted(names)


def test_every_fake_slot_is_weak(tmp_path):
    slots = fake_slots(tmp_path)
    assert len(slots) >= 36, slots
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
