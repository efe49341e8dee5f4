"""Vendors installed as Python packages: a distribution declaring a ``torch_backend.vendors``
entry point (a callable returning its library's path) is the vendor ``import torch`` loads when
it is the only one installed and TORCH_BACKEND_VENDOR is unset, or when that variable names it.

Each test installs fake distributions in a temporary directory on PYTHONPATH (their library: a
copy of the bundled fake vendor) and imports torch in a fresh process without
TORCH_BACKEND_VENDOR, whatever vendor this suite runs against."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

from conftest import ONCE, run, run_python

import torch_backend

PROBE = """
import json, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import torch
    import torch_backend
print(json.dumps({
    "warnings": [str(w.message) for w in caught if w.category is RuntimeWarning],
    "info": torch_backend.vendor_info(),
    "available": torch.accelerator.is_available(),
    "installed": torch_backend.installed_vendors(),
}))
"""

pytestmark = ONCE


def install(site: Path, name: str, body: str) -> None:
    """A distribution ``<name>_tb`` declaring the vendor ``name``, whose entry point runs
    ``body`` (``library`` is the path of the copy of fake next to it)."""
    module = f"{name}_tb"
    info = site / f"{module}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[torch_backend.vendors]\n{name} = {module}:library\n")
    library = site / name / "libtb_vendor_fake.so"
    library.parent.mkdir()
    shutil.copy(torch_backend.library_dir() / "libtb_vendor_fake.so", library)
    (site / f"{module}.py").write_text(
        f"def library():\n    library = {str(library)!r}\n{textwrap.indent(body, '    ')}\n"
    )


def probe(site: Path, vendor: str = "") -> dict:
    """Import torch with the distributions of ``site`` installed and TORCH_BACKEND_VENDOR set to
    ``vendor`` (removed when empty)."""
    result = run_python(
        PROBE,
        PYTHONPATH=str(site),
        TORCH_BACKEND_VENDOR=vendor,
        TORCH_DEVICE_BACKEND_AUTOLOAD="1",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_the_one_installed_vendor_is_loaded(tmp_path):
    install(tmp_path, "acme", "return library")
    seen = probe(tmp_path)
    library = str((tmp_path / "acme" / "libtb_vendor_fake.so").resolve())
    assert seen["warnings"] == [] and seen["available"], seen
    assert seen["info"]["library"] == library and seen["info"]["device_type"] == "fake"
    assert seen["installed"] == [
        {"name": "acme", "distribution": "acme_tb", "library": library, "error": None}
    ]


def test_several_installed_vendors_load_none(tmp_path):
    install(tmp_path, "acme", "return library")
    install(tmp_path, "bcme", "return library")
    seen = probe(tmp_path)
    assert len(seen["warnings"]) == 1, seen["warnings"]
    for cause in ("'acme' (distribution acme_tb: ", "'bcme' (distribution bcme_tb: "):
        assert cause in seen["warnings"][0] and cause in seen["info"]["error"]
    assert "set TORCH_BACKEND_VENDOR to one of their names" in seen["info"]["error"]
    assert not seen["available"] and seen["info"]["device_type"] is None

    # TORCH_BACKEND_VENDOR chooses one by its name.
    seen = probe(tmp_path, "bcme")
    assert seen["warnings"] == [] and seen["available"], seen
    assert seen["info"]["library"] == str((tmp_path / "bcme" / "libtb_vendor_fake.so").resolve())


def test_a_broken_entry_point_is_a_vendor_that_cannot_start(tmp_path):
    install(tmp_path, "raises", "raise OSError('no driver')")
    install(tmp_path, "missing", "return library + '.removed'")
    expected = {
        "raises": "'raises' (raises_tb:library) of distribution 'raises_tb' failed: "
        "OSError: no driver",
        "missing": "'missing' (missing_tb:library) of distribution 'missing_tb' returned "
        f"'{tmp_path / 'missing' / 'libtb_vendor_fake.so.removed'}', which is not a file",
    }
    for name, cause in expected.items():
        seen = probe(tmp_path, name)
        assert len(seen["warnings"]) == 1 and cause in seen["warnings"][0], seen["warnings"]
        assert cause in seen["info"]["error"] and not seen["available"]
        assert seen["info"]["device_type"] is None


def test_conformance_takes_an_installed_vendors_name(tmp_path):
    # `tb-conformance acme` runs the library that acme's entry point returns, as
    # TORCH_BACKEND_VENDOR=acme would load it; a failing entry point is a vendor that did not load.
    install(tmp_path, "acme", "return library")
    install(tmp_path, "raises", "raise OSError('no driver')")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    command = [sys.executable, "-m", "torch_backend.conformance_cli", "--filter", "context"]
    result = run([*command, "acme"], env=env)
    library = str((tmp_path / "acme" / "libtb_vendor_fake.so").resolve())
    assert result.returncode == 0, result.stdout + result.stderr
    assert library in result.stdout, result.stdout
    broken = run([*command, "raises"], env=env)
    assert broken.returncode == 2
    cause = "'raises' (raises_tb:library) of distribution 'raises_tb' failed: OSError: no driver"
    assert cause in broken.stderr, broken.stderr
    # A name nothing declares reaches the program, which says what it could not load.
    unknown = run([*command, "nosuchvendor"], env=env)
    assert unknown.returncode == 2 and "nosuchvendor" in unknown.stderr, unknown.stderr
