"""``tb-vendor``: start a new vendor project.

``tb-vendor new NAME [--dir DIR]`` writes a CMake project for a vendor whose device type is
``NAME``: every slot of vendor.h present (the required ones working on host memory, on
tb_vendor_kit's streams, events and faults; the optional ones either provided by the kit or
set to NULL, the documented way to leave a slot out), a CTest that runs ``tb-conformance`` and
``python -m torch_backend.check_kernels`` on the library, and a ``pyproject.toml`` that builds
a wheel whose entry point in the ``torch_backend.vendors`` group lets ``import torch`` find the
device. The project builds against the installed torch_backend and passes the conformance
suite as generated; docs/vendor_wheel.rst walks from here to ``pip install``.

Like ``python -m torch_backend.cmake_prefix``, the tool loads no vendor and does not import
torch.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import sys
from pathlib import Path

_TEMPLATES = Path(__file__).with_name("templates") / "vendor"

# Device types PyTorch already has (c10/core/DeviceType.h) or that torch_backend's bundled
# vendors use: PrivateUse1 cannot be renamed to them.
_TAKEN = {
    "cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip", "fpga", "maia", "xla",
    "vulkan", "metal", "xpu", "mps", "meta", "hpu", "ve", "lazy", "ipu", "mtia",
    "privateuseone", "emu", "fake", "npu", "ocl", "faulty",
}  # fmt: skip
_NAME = re.compile(r"[a-z][a-z0-9_]{0,30}")


def _version() -> str:
    try:
        return importlib.metadata.version("torch_backend")
    except importlib.metadata.PackageNotFoundError:  # a source tree on sys.path
        return "0.1.0"


def _check_name(name: str) -> str | None:
    """Why ``name`` cannot be a device type, or None."""
    if not _NAME.fullmatch(name):
        return (
            f"'{name}' is not a device type: use a lowercase letter, then up to 30 lowercase "
            "letters, digits or underscores (it becomes torch.device('NAME') and torch.NAME)"
        )
    if name in _TAKEN:
        return f"'{name}' is taken: PyTorch or a bundled torch_backend vendor uses it"
    return None


def _render(text: str, name: str) -> str:
    version = _version()
    major, minor = version.split(".")[:2]
    values = {
        "@name@": name,
        "@NAME@": name.upper(),
        "@TB_VERSION@": version,
        "@TB_VERSION_MAJOR_MINOR@": f"{major}.{minor}",
        "@ABI_MAJOR@": "2",
    }
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def _target(relative: Path, name: str) -> Path:
    """Where a template file lands in the project."""
    parts = [f"torch_backend_{name}" if part == "package" else part for part in relative.parts]
    target = Path(*parts)
    if target.name == "vendor.h.in":
        target = target.with_name(f"{name}.h.in")
    return target.with_suffix("")  # drop .in


def new(name: str, directory: Path) -> list[Path]:
    """Writes the project for vendor ``name`` into ``directory`` (created; must be empty or
    absent) and returns the files written."""
    problem = _check_name(name)
    if problem is not None:
        raise ValueError(problem)
    if directory.exists() and any(directory.iterdir()):
        raise FileExistsError(f"{directory} exists and is not empty")
    written = []
    for template in sorted(_TEMPLATES.rglob("*.in")):
        target = directory / _target(template.relative_to(_TEMPLATES), name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_render(template.read_text(), name))
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tb-vendor", description="Tools for torch_backend vendor projects."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser(
        "new",
        help="write a new vendor project",
        description="Write a CMake project for a new vendor: a complete vendor on host memory "
        "and tb_vendor_kit that passes tb-conformance, its tests, and a pyproject.toml for a "
        "wheel that `import torch` finds through the torch_backend.vendors entry point.",
    )
    create.add_argument("name", help="the device type, as in torch.device('NAME')")
    create.add_argument(
        "--dir", type=Path, default=None, help="where to write it (default: ./NAME)"
    )
    args = parser.parse_args(argv)
    directory = args.dir if args.dir is not None else Path(args.name)
    try:
        written = new(args.name, directory)
    except (ValueError, FileExistsError) as error:
        print(f"tb-vendor: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"  wrote {path}")
    print(
        f"next: cmake -S {directory} -B {directory}/build && cmake --build {directory}/build && "
        f"ctest --test-dir {directory}/build --output-on-failure"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
