"""Vendors installed as Python packages, through the ``torch_backend.vendors`` entry-point group.

A vendor ships as its own wheel holding its ``libtb_vendor_<name>.so`` and declares::

    [project.entry-points."torch_backend.vendors"]
    acme = "acme_torch:library"  # a callable with no arguments: the library's path

:func:`select_vendor` turns ``TORCH_BACKEND_VENDOR`` and the installed entry points into the
library the C++ runtime loads, before it loads one.
"""

from __future__ import annotations

import os
from importlib import metadata

from torch_backend._paths import library_dir

GROUP = "torch_backend.vendors"
VARIABLE = "TORCH_BACKEND_VENDOR"
_SEARCH_PATH_VARIABLE = "TORCH_BACKEND_VENDOR_PATH"  # the loader's extra directories


class VendorSelectionError(RuntimeError):
    """The installed entry points name no single loadable vendor: several are installed and
    none is chosen, or the chosen one fails."""


def _entry_points(name: str | None = None) -> list[metadata.EntryPoint]:
    """The group's entry points (those named ``name``, when given), sorted by name."""
    found = metadata.entry_points(group=GROUP)
    return sorted((ep for ep in found if name is None or ep.name == name), key=lambda ep: ep.name)


def _distribution(entry_point: metadata.EntryPoint) -> str:
    dist = entry_point.dist
    return dist.name if dist is not None else "(unknown)"


def _library(entry_point: metadata.EntryPoint) -> tuple[str | None, str | None]:
    """Call the entry point: (the absolute path of its vendor library, None), or (None, why it
    gives none)."""
    try:
        path = os.path.abspath(os.fspath(entry_point.load()()))
    except Exception as error:  # the vendor package's own code: anything may fail there
        return None, f"failed: {type(error).__name__}: {error}"
    if not os.path.isfile(path):
        return None, f"returned '{path}', which is not a file"
    return path, None


def _failure(entry_point: metadata.EntryPoint, cause: str) -> str:
    """The message of an entry point that gives no library."""
    return (
        f"torch_backend: the vendor entry point '{entry_point.name}' ({entry_point.value}) of "
        f"distribution '{_distribution(entry_point)}' {cause}"
    )


def installed_vendors() -> list[dict[str, str | None]]:
    """The vendors installed as Python packages (the ``torch_backend.vendors`` entry points),
    sorted by name: each one's ``name`` (what ``TORCH_BACKEND_VENDOR`` may be set to),
    ``distribution``, ``library`` (the path its entry point returns) and ``error`` (None, or why
    the entry point gives no library, ``library`` then being None)."""
    vendors: list[dict[str, str | None]] = []
    for entry_point in _entry_points():
        library, cause = _library(entry_point)
        vendors.append(
            {
                "name": entry_point.name,
                "distribution": _distribution(entry_point),
                "library": library,
                "error": _failure(entry_point, cause) if cause else None,
            }
        )
    return vendors


def _loader_finds(name: str) -> bool:
    """Whether the loader resolves ``name`` itself: a bundled vendor, or one in a directory of
    ``TORCH_BACKEND_VENDOR_PATH``."""
    directories = [d for d in os.environ.get(_SEARCH_PATH_VARIABLE, "").split(":") if d]
    directories.append(str(library_dir()))
    return any(os.path.isfile(os.path.join(d, f"libtb_vendor_{name}.so")) for d in directories)


def library_of(name: str) -> str | None:
    """The library of the installed vendor package ``name`` (its entry point), or None when no
    distribution declares that name.  Raises VendorSelectionError when several do, or when the
    entry point fails or returns no file."""
    candidates = _entry_points(name)
    if not candidates:
        return None
    if len(candidates) > 1:
        listed = ", ".join(f"distribution {_distribution(ep)} ({ep.value})" for ep in candidates)
        raise VendorSelectionError(
            f"torch_backend: several distributions declare the vendor '{name}': {listed}; "
            "name the library's path instead"
        )
    library, cause = _library(candidates[0])
    if library is None:
        raise VendorSelectionError(_failure(candidates[0], cause or ""))
    return library


def select_vendor() -> str | None:
    """Resolve ``TORCH_BACKEND_VENDOR`` against the installed vendor entry points, before the
    C++ runtime loads the vendor it names.

    - Set to a path, or to a name the loader finds (a bundled vendor): left as it is.
    - Set to the name of an installed entry point: that entry point's library.
    - Unset or empty: the library of the one installed entry point; with none, left unset (the
      loader's default, the bundled ``emu``).

    A library chosen here is written to ``TORCH_BACKEND_VENDOR``, so the C++ loader and child
    processes see the same choice, and returned; None when the variable is left as it was.

    Raises VendorSelectionError when several entry points are installed and none is named (the
    message lists them), or when the chosen entry point fails or returns no file.
    """
    requested = os.environ.get(VARIABLE, "")
    if "/" in requested or (requested and _loader_finds(requested)):
        return None
    candidates = _entry_points(requested or None)
    if not candidates:
        return None  # no entry point: the loader's default, or its error for an unknown name
    if len(candidates) > 1:
        listed = []
        for entry_point in candidates:
            library, cause = _library(entry_point)
            dist = _distribution(entry_point)
            listed.append(f"'{entry_point.name}' (distribution {dist}: {library or cause})")
        if requested:
            raise VendorSelectionError(
                f"torch_backend: several distributions declare the vendor '{requested}', so none "
                f"is loaded: {', '.join(listed)}; set {VARIABLE} to the library's path instead"
            )
        raise VendorSelectionError(
            f"torch_backend: several vendors are installed, so none is loaded: "
            f"{', '.join(listed)}; set {VARIABLE} to one of their names"
        )
    library, cause = _library(candidates[0])
    if library is None:
        raise VendorSelectionError(_failure(candidates[0], cause or ""))
    os.environ[VARIABLE] = library
    return library
