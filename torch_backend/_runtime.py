"""Which runtime this process loads, and loading it, before anything compiled against libtorch.

The runtime (``libtorch_backend.so``: the device guard, hooks, allocators and kernels) is
compiled against one torch release's C++ ABI, and a runtime of another release does not load
(``undefined symbol: ...``) or, worse, loads and misbehaves.  A package therefore carries one
per supported release, each in a directory named after it beside the loader --
``lib/torch-2.13/``, ``lib/torch-2.14/``, ``lib/torch-2.15/`` -- and :func:`load` loads the one
whose release (major.minor) is the running torch's.  When none matches, or the one that does
fails to load, it loads nothing and returns the reason: ``import torch`` must go on without the
device, never fail because of it (docs/decisions.md, "Three torch releases").
"""

from __future__ import annotations

import os
import re

STRICT_VARIABLE = "TORCH_BACKEND_STRICT_LOAD"
_LIBRARY = "libtorch_backend.so"
_DIRECTORY = re.compile(r"torch-(\d+)\.(\d+)")


def release(version: str) -> tuple[int, int] | None:
    """The release (major, minor) of a torch version string such as ``"2.15.0+cu132"`` or
    ``"2.16.0.dev20261201"``; None when it names none."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else None


def runtimes(directory: str) -> dict[tuple[int, int], str]:
    """The runtimes under ``directory`` (the loader's), by release: ``{(2, 15): path}``."""
    found = {}
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return {}
    for entry in entries:
        match = _DIRECTORY.fullmatch(entry.name)
        library = os.path.join(entry.path, _LIBRARY)
        if match and os.path.isfile(library):
            found[(int(match.group(1)), int(match.group(2)))] = library
    return dict(sorted(found.items()))


def _listed(releases: list[tuple[int, int]]) -> str:
    names = [f"{major}.{minor}" for major, minor in releases]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def strict() -> bool:
    """Whether a load failure raises instead of warning (``TORCH_BACKEND_STRICT_LOAD=1``)."""
    return os.environ.get(STRICT_VARIABLE, "") not in ("", "0")


def load(torch_version: str, package_version: str) -> str | None:
    """Load the runtime for ``torch_version``: None on success, else why nothing was loaded
    (the message names the running torch, the releases this package supports and the fix)."""
    try:
        from torch_backend import _C
    except ImportError as error:
        return f"torch_backend {package_version}: its extension module does not load: {error}"
    directory = _C.library_dir()
    found = runtimes(directory)
    wanted = release(torch_version)
    if wanted not in found:
        if not found:
            return (
                f"torch_backend {package_version} has no runtime at all in {directory} (no "
                f"torch-<release>/{_LIBRARY}): the installation is incomplete; reinstall "
                "torch_backend"
            )
        newest = max(found)
        return (
            f"torch_backend {package_version} does not support torch {torch_version}: it "
            f"supports torch {_listed(list(found))} (a runtime for each in {directory}). "
            f"Install a supported torch (pip install 'torch=={newest[0]}.{newest[1]}.*') or "
            "build torch_backend against this one (pip install --no-build-isolation . in its "
            "source tree)"
        )
    try:
        _C.load_runtime(found[wanted])
    except ImportError as error:
        return (
            f"torch_backend {package_version}: its runtime for torch "
            f"{wanted[0]}.{wanted[1]} ({found[wanted]}) does not load under torch "
            f"{torch_version}: {error}. Reinstall torch_backend for this torch (pip install "
            "--force-reinstall --no-deps torch_backend)"
        )
    return None
