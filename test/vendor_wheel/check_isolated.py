"""Check what pip's isolated build (`pip wheel .`) did, as make test-wheel runs it: it configured
against the torch of its own temporary environment -- the primary release, which
build_support/torch_releases.py adds to the build requirements -- not against this machine's
torch; the operator wrappers were generated there; and the wheel requires exactly that
release (it carries no other runtime).

Usage: check_isolated.py BUILD_DIR WHEEL PRIMARY_TORCH.  Prints the findings; exits 1 with the
reasons when the build falls short.
"""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

from check_wheel import torch_requirements  # this script's directory is on sys.path


def cache_entry(cache: str, name: str) -> str:
    match = re.search(rf"^{name}:\w+=(.*)$", cache, re.M)
    return match.group(1) if match else ""


def main() -> int:
    build, wheel, primary = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    cache = (build / "CMakeCache.txt").read_text()
    torch_dir = cache_entry(cache, "Torch_DIR")
    version = cache_entry(cache, "TORCH_BACKEND_TORCH_VERSION")
    with zipfile.ZipFile(wheel) as archive:
        requires = torch_requirements(archive)
    print(f"isolated build: torch {version} from {torch_dir}")
    print(f"  requires: {', '.join(requires) or 'no torch'}")

    failures = []
    if "pip-build-env-" not in torch_dir:
        failures.append(f"configured against a torch outside pip's build environment: {torch_dir}")
    if version.split("+")[0] != primary:
        failures.append(f"built against torch {version}, not the primary release {primary}")
    if not (build / "csrc" / "generated" / "RegisterKernels.cpp").is_file():
        failures.append("the operator wrappers were not generated")
    major, minor = primary.split(".")[:2]
    wanted = f"torch<{major}.{int(minor) + 1},>={major}.{minor}"
    if requires != [wanted]:
        failures.append(f"requires {requires}, not [{wanted!r}]")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
