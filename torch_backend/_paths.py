"""Where the installed parts of torch_backend live: libraries, headers, CMake package, tools."""

from __future__ import annotations

import os
from pathlib import Path

_LIBRARY_PREFIX = "libtb_vendor_"
_LIBRARY_SUFFIX = ".so"


def _package_dirs() -> list[Path]:
    """The package's directories: its source folder and, for an editable install, the folder
    that holds the compiled parts (they can differ)."""
    import torch_backend

    return [Path(p) for p in torch_backend.__path__]


def _find(relative: str) -> Path:
    for base in _package_dirs():
        candidate = base / relative
        if candidate.exists():
            return candidate
    searched = ", ".join(str(base) for base in _package_dirs())
    raise FileNotFoundError(
        f"torch_backend: {relative} not found in {searched}; is the package built?"
    )


def library_dir() -> Path:
    """The directory holding the loader, csrc and every bundled vendor library."""
    return _find("lib")


def include_dir() -> Path:
    """The directory to add to a vendor's include path (holds torch_backend/vendor.h)."""
    return _find("include")


def cmake_prefix_path() -> Path:
    """A CMAKE_PREFIX_PATH entry under which find_package(TorchBackend) succeeds."""
    return _find("share/cmake").parent.parent


def conformance_executable() -> Path:
    """The tb-conformance program."""
    return _find("bin/tb-conformance")


def bundled_vendors() -> list[str]:
    """Names of the vendors shipped with the package, sorted (e.g. ['emu', 'fake'])."""
    names = {
        entry.name[len(_LIBRARY_PREFIX) : -len(_LIBRARY_SUFFIX)]
        for entry in os.scandir(library_dir())
        if entry.name.startswith(_LIBRARY_PREFIX) and entry.name.endswith(_LIBRARY_SUFFIX)
    }
    return sorted(names)
