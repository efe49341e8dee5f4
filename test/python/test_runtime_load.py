"""``import torch`` never breaks because of torch_backend: a torch release the package carries no
runtime for, a runtime that does not load, or a package with no runtime at all leaves the
device absent -- one warning naming the installed torch, the supported releases and the fix,
``device_count() == 0``, ``load_error()`` saying why, the first use raising it -- and
``TORCH_BACKEND_STRICT_LOAD=1`` turns that into an error (torch_backend/_runtime.py).

The versions are simulated here (``torch.__version__`` set before torch_backend is imported);
make test-compat imports the wheel under a real unsupported torch as well.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil

import pytest
import torch
from conftest import DEV, REPO, run_python
from test_vendor_start import PROBE, assert_unavailable

import torch_backend
from torch_backend import _runtime

# The wheel's metadata provider, from the source tree (it is no part of the package).
_SPEC = importlib.util.spec_from_file_location(
    "torch_releases", REPO / "build_support" / "torch_releases.py"
)
torch_releases = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(torch_releases)

# Each test starts interpreters of its own, whatever the suite's vendor: run them in emu's pass
# (under every torch release make test runs the suites on).
pytestmark = pytest.mark.skipif(DEV != "emu", reason="independent of the suite's vendor")

CARRIED = _runtime.runtimes(str(torch_backend.library_dir()))


def probe_as(version: str, **env: str) -> dict:
    """What a user sees under torch ``version`` (simulated: set before the import)."""
    code = f"import torch\ntorch.__version__ = {version!r}\n{PROBE}"
    result = run_python(code, TORCH_DEVICE_BACKEND_AUTOLOAD="0", **env)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def supported_text() -> str:
    names = [f"{major}.{minor}" for major, minor in CARRIED]
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


@pytest.mark.parametrize("version", ["2.12.1", "2.16.0.dev20261201"])
def test_a_release_without_runtime_leaves_the_device_absent(version):
    seen = probe_as(version)
    assert_unavailable(
        seen,
        DEV,
        f"does not support torch {version}",
        f"it supports torch {supported_text()}",
        "pip install 'torch==",
    )
    assert seen["info"]["vendor"] is None and seen["info"]["library"] is None


def test_load_error_is_the_warning():
    code = f"import torch\ntorch.__version__ = '2.12.1'\n{PROBE}\n" + (
        "import torch_backend\nprint(json.dumps(torch_backend.load_error()))"
    )
    result = run_python(code, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert result.returncode == 0, result.stderr
    seen, error = (json.loads(line) for line in result.stdout.splitlines()[-2:])
    assert error == seen["info"]["error"] and seen["warnings"][0].startswith(error)


def test_a_supported_release_has_no_load_error():
    result = run_python(
        "import torch, torch_backend\nprint(torch_backend.load_error())",
        TORCH_DEVICE_BACKEND_AUTOLOAD="1",
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "None\n", "")


def test_strict_load_raises_at_import():
    code = "import torch\ntorch.__version__ = '2.12.1'\nimport torch_backend"
    result = run_python(code, TORCH_DEVICE_BACKEND_AUTOLOAD="0", TORCH_BACKEND_STRICT_LOAD="1")
    assert result.returncode != 0
    assert "ImportError: torch_backend" in result.stderr
    assert "does not support torch 2.12.1" in result.stderr
    assert "TORCH_BACKEND_STRICT_LOAD is set" in result.stderr
    # Through PyTorch's autoload, a vendor that cannot start fails `import torch` itself.
    result = run_python(
        "import torch",
        TORCH_DEVICE_BACKEND_AUTOLOAD="1",
        TORCH_BACKEND_STRICT_LOAD="1",
        TORCH_BACKEND_VENDOR="nosuchvendor",
    )
    assert result.returncode != 0
    assert "Failed to load the backend extension: torch_backend" in result.stderr
    assert "cannot load the vendor 'nosuchvendor'" in result.stderr
    # "0" is off.
    seen = probe_as("2.12.1", TORCH_BACKEND_STRICT_LOAD="0")
    assert len(seen["warnings"]) == 1


@pytest.fixture
def lib_copy(tmp_path):
    """A copy of the package's loader in a directory of its own, found first through
    LD_LIBRARY_PATH (as make test-sanitize finds its instrumented build): _C then looks for
    the runtimes beside it."""
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy2(torch_backend.library_dir() / "libtb_loader.so", lib)
    env = {
        "LD_LIBRARY_PATH": f"{lib}:{os.environ.get('LD_LIBRARY_PATH', '')}",
        "TORCH_BACKEND_VENDOR": str(torch_backend.library_dir() / "libtb_vendor_emu.so"),
    }
    return lib, env


def test_a_runtime_that_does_not_load(lib_copy):
    lib, env = lib_copy
    major, minor = _runtime.release(torch.__version__)
    broken = lib / f"torch-{major}.{minor}" / "libtorch_backend.so"
    broken.parent.mkdir()
    broken.write_bytes(b"not a shared library\n" * 1000)
    seen = probe_as(torch.__version__, **env)
    assert_unavailable(
        seen,
        "emu",
        f"its runtime for torch {major}.{minor} ({broken}) does not load",
        "invalid ELF header",
        "pip install --force-reinstall --no-deps torch_backend",
    )


def test_a_package_without_runtimes(lib_copy):
    lib, env = lib_copy
    (lib / "torch-1.0").mkdir()  # no library in it: no runtime
    seen = probe_as(torch.__version__, **env)
    assert_unavailable(seen, "emu", f"has no runtime at all in {lib}", "reinstall torch_backend")


def test_the_device_name_comes_from_the_vendor_it_would_load(lib_copy):
    # No vendor named and none beside the loader: the default (emu) cannot be opened, so no
    # device is named; the warning says why all the same.
    lib, env = lib_copy
    seen = probe_as(torch.__version__, **{**env, "TORCH_BACKEND_VENDOR": ""})
    assert_unavailable(seen, None, f"has no runtime at all in {lib}")


def test_release_of_a_version():
    assert _runtime.release("2.15.0+cu132") == (2, 15)
    assert _runtime.release("2.16.0.dev20261201") == (2, 16)
    assert _runtime.release("2.13.0") == (2, 13)
    assert _runtime.release("nightly") is None


def test_the_wheel_requires_the_releases_it_carries():
    assert torch_releases.requirement([(2, 13), (2, 14), (2, 15)]) == "torch>=2.13,<2.16"
    assert torch_releases.requirement([(2, 15)]) == "torch>=2.15,<2.16"
    assert torch_releases.requirement([(2, 13), (2, 15)]) == "torch>=2.13,<2.16,!=2.14.*"
    with pytest.raises(RuntimeError, match="two torch majors"):
        torch_releases.requirement([(2, 15), (3, 0)])
    # The package on this path carries the runtimes of supported releases only.
    supported = {_runtime.release(v) for v in torch_releases.supported()}
    assert CARRIED and set(CARRIED) <= supported, (CARRIED, supported)
