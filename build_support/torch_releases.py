"""scikit-build-core metadata provider: the wheel's torch requirement, from the runtimes it carries.

The runtime (csrc, ``lib/torch-<release>/libtorch_backend.so``) is compiled against one torch
release's C++ ABI; a wheel carries the one of the torch it was built with, plus those that
``TORCH_BACKEND_EXTRA_RUNTIMES`` names (csrc/CMakeLists.txt).  Its ``torch`` requirement is
exactly those releases, so that pip leaves a user's supported torch alone and never pairs the
wheel with one it has no runtime for:

- ``make wheel``, three runtimes: ``torch>=2.13,<2.16``
- ``pip install --no-build-isolation .`` against torch 2.15.0: ``torch>=2.15,<2.16``

The build requirement is the primary release of ``torch-releases.txt`` (its first line), the
torch that pip's isolated build compiles against.  Declared in pyproject.toml as a local
``[[tool.dynamic-metadata]]`` provider; needs nothing but the standard library.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

RELEASES_FILE = Path(__file__).resolve().parents[1] / "torch-releases.txt"
_RELEASE = re.compile(r"(\d+)\.(\d+)")


def supported() -> list[str]:
    """The torch versions of ``torch-releases.txt``, in its order (the primary first)."""
    versions = []
    for line in RELEASES_FILE.read_text().splitlines():
        fields = line.split("#", 1)[0].split()
        if fields:
            versions.append(fields[0])
    if not versions:
        raise RuntimeError(f"{RELEASES_FILE} names no torch release")
    return versions


def _release(version: str) -> tuple[int, int]:
    match = _RELEASE.match(version)
    if match is None:
        raise RuntimeError(f"torch_backend: cannot tell the release of torch version {version!r}")
    return int(match.group(1)), int(match.group(2))


def carried_releases() -> list[tuple[int, int]]:
    """The releases this build's wheel carries a runtime for: the build environment's torch
    (the one CMake compiles against) and each of ``TORCH_BACKEND_EXTRA_RUNTIMES``; without an
    installed torch (an sdist's metadata), every supported release."""
    try:
        releases = {_release(metadata.version("torch"))}
    except metadata.PackageNotFoundError:
        return sorted({_release(version) for version in supported()})
    for directory in filter(None, os.environ.get("TORCH_BACKEND_EXTRA_RUNTIMES", "").split(":")):
        match = re.fullmatch(r"torch-(\d+)\.(\d+)", Path(directory).name)
        if match is None:
            raise RuntimeError(
                f"TORCH_BACKEND_EXTRA_RUNTIMES: '{directory}' is no torch-<major>.<minor> directory"
            )
        releases.add((int(match.group(1)), int(match.group(2))))
    return sorted(releases)


def requirement(releases: list[tuple[int, int]]) -> str:
    """``torch>=A.B,<A.C`` covering ``releases``, excluding the minors in between that are not
    among them (``!=2.14.*``)."""
    (major, first), (last_major, last) = releases[0], releases[-1]
    if last_major != major:
        raise RuntimeError(f"torch_backend: runtimes of two torch majors ({releases})")
    excluded = [
        f"!={major}.{minor}.*" for minor in range(first, last) if (major, minor) not in releases
    ]
    return ",".join([f"torch>={major}.{first}", f"<{major}.{last + 1}", *excluded])


def dynamic_metadata(settings: Mapping[str, Any], project: Mapping[str, Any]) -> dict[str, Any]:
    """The ``dependencies`` field: the torch requirement above."""
    del settings, project
    return {"dependencies": [requirement(carried_releases())]}


def get_requires_for_dynamic_metadata(settings: Mapping[str, Any]) -> list[str]:
    """The isolated build's torch: the primary release."""
    del settings
    return [f"torch=={supported()[0]}"]


def dynamic_wheel(settings: Mapping[str, Any]) -> dict[str, bool]:
    """The requirement depends on the torch a wheel is built with, not on the sdist."""
    del settings
    return {"dependencies": True}
