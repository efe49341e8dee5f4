"""Check a repaired torch_backend wheel with ``auditwheel show``: a manylinux platform tag, and no
shared library needed from outside the wheel but torch's own (libtorch*, libc10) and the system
libraries the manylinux policy allows (glibc's, libstdc++, libgcc_s).

auditwheel's overall tag for any wheel built against libtorch is ``linux_x86_64``: torch's
libraries come from torch's wheel, which auditwheel cannot see (``auditwheel repair --exclude``
leaves them out, as torchvision's wheels do).  So the check is that torch's libraries are the only
thing between the wheel and the manylinux tag of its symbol versions.

It also checks what makes the wheel install into the torch a user has (docs/decisions.md, "Three
torch releases"): a runtime for each release given (``torch_backend/lib/torch-2.15/
libtorch_backend.so``, no other), and a ``torch`` requirement that admits exactly those
releases' minors.

Usage: check_wheel.py WHEEL [TORCH_VERSION...].  Prints the findings; exits 1 with the reason when
the wheel falls short.
"""

from __future__ import annotations

import email
import fnmatch
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from packaging.requirements import Requirement  # auditwheel's dependency

# A runtime in the wheel: csrc built against one torch release.
RUNTIME = re.compile(r"torch_backend/lib/torch-(\d+)\.(\d+)/libtorch_backend\.so")
# What the wheel may leave to torch's wheel, which it depends on.
TORCH_LIBRARIES = ("libtorch*.so", "libc10.so")


def outside_torch(names: list[str]) -> list[str]:
    return [n for n in names if not any(fnmatch.fnmatch(n, p) for p in TORCH_LIBRARIES)]


def torch_requirements(archive: zipfile.ZipFile) -> list[str]:
    """The wheel's ``Requires-Dist`` entries for torch."""
    meta_name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    meta = email.message_from_bytes(archive.read(meta_name))
    return [r for r in meta.get_all("Requires-Dist", []) if re.match(r"torch\b", r)]


def release_findings(archive: zipfile.ZipFile, versions: list[str]) -> list[str]:
    """The runtimes and the torch requirement, against the releases ``versions`` name."""
    wanted = sorted({tuple(int(p) for p in v.split(".")[:2]) for v in versions})
    carried = sorted(
        tuple(int(p) for p in match.groups())
        for name in archive.namelist()
        if (
            match := re.fullmatch(
                r"torch_backend/lib/torch-(\d+)\.(\d+)/libtorch_backend\.so", name
            )
        )
    )
    torch = torch_requirements(archive)
    print(f"  runtimes: {', '.join(f'torch {a}.{b}' for a, b in carried) or 'none'}")
    print(f"  requires: {', '.join(torch) or 'no torch'}")
    failures = []
    if versions and carried != wanted:
        failures.append(f"runtimes for {carried}, not for the releases {wanted}")
    if len(torch) != 1:
        failures.append(f"not one torch requirement: {torch}")
    elif wanted:
        (major, first), (_, last) = wanted[0], wanted[-1]
        admitted = {
            (major, minor)
            for minor in range(first - 1, last + 2)
            if _admits(torch[0], f"{major}.{minor}.0")
        }
        if admitted != set(wanted):
            failures.append(f"{torch[0]} admits the releases {sorted(admitted)}, not {wanted}")
    return failures


def _admits(requirement: str, version: str) -> bool:
    """Whether ``requirement`` (a torch requirement) admits ``version``, as pip judges it."""
    return Requirement(requirement).specifier.contains(version)


def main() -> int:
    wheel = Path(sys.argv[1])
    shown = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", "--json", str(wheel)],
        capture_output=True,
        text=True,
        check=False,
    )
    if shown.returncode != 0:
        print(f"FAIL: auditwheel show {wheel.name}: {shown.stderr.strip()}")
        return 1
    report = json.loads(shown.stdout)
    tag = report["sym_tag"]
    external = sorted(report["external_libs"])
    glibc = sorted(
        (v for v in report["versioned_symbols"].get("libc.so.6", []) if v.startswith("GLIBC_")),
        key=lambda v: tuple(int(part) for part in v[6:].split(".")),
    )
    print(f"auditwheel show {wheel.name}:")
    print(f"  platform tag of its symbol versions: {tag} (newest from glibc: {glibc[-1]})")
    print(f"  libraries from outside the wheel: {', '.join(external) or 'none'}")
    with zipfile.ZipFile(wheel) as archive:
        bundled = sorted(
            n.split("/", 1)[1]
            for n in archive.namelist()
            if n.startswith("torch_backend.libs/") and not n.endswith("/")
        )
    print(f"  bundled by auditwheel repair: {', '.join(bundled) or 'nothing'}")

    with zipfile.ZipFile(wheel) as archive:
        failures = release_findings(archive, sys.argv[2:])
    if not tag.startswith("manylinux_"):
        failures.append(f"its symbol versions fit no manylinux policy ({tag})")
    elif not wheel.name.endswith(f"-{tag}.whl"):
        failures.append(f"the file's platform tag is not {tag}")
    if outside_torch(external):
        failures.append(
            f"libraries needed from outside the wheel and torch: {outside_torch(external)}"
        )
    blocking = report["policy_upgrades"].get(tag, {}).get("libs_to_eliminate", [])
    if outside_torch(blocking):
        failures.append(f"{tag} is kept from it by {outside_torch(blocking)}")
    if not any("openblas" in name for name in bundled):
        failures.append("OpenBLAS (emu's matrix products) is not bundled")
    for failure in failures:
        print(f"FAIL: {wheel.name}: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
