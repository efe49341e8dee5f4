"""tb-vendor new: the project it writes, and its refusals."""

import os
import subprocess
import sys

import pytest
from conftest import ONCE

from torch_backend import vendor_new

pytestmark = ONCE


def run_tool(*args, cwd=None):
    env = dict(os.environ, TORCH_BACKEND_VENDOR="/nonexistent/libtb_vendor_x.so")
    return subprocess.run(
        [sys.executable, "-m", "torch_backend.vendor_new", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )


def test_new_writes_every_file_of_the_project(tmp_path):
    result = run_tool("new", "widget", "--dir", str(tmp_path / "widget"))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no vendor loaded: TORCH_BACKEND_VENDOR is not even looked at
    root = tmp_path / "widget"
    written = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert written == [
        "CMakeLists.txt",
        "README.md",
        "pyproject.toml",
        "src/kernels.c",
        "src/memory.c",
        "src/vendor.c",
        "src/widget.h",
        "torch_backend_widget/__init__.py",
    ]
    for path in root.rglob("*"):
        if path.is_file():
            assert "@" not in path.read_text().replace("@PACKAGE", ""), path  # all substituted
    vendor = (root / "src/vendor.c").read_text()
    assert '.device_type = "widget"' in vendor
    # every slot of the table is named, optional ones left out with NULL
    for slot in ("host_malloc = NULL", "get_info = NULL", "launch_host_func = tbk_"):
        assert slot in vendor
    assert "OUTPUT_NAME tb_vendor_widget" in (root / "CMakeLists.txt").read_text()
    pyproject = (root / "pyproject.toml").read_text()
    assert 'widget = "torch_backend_widget:library"' in pyproject


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Widget", "is not a device type"),
        ("9lives", "is not a device type"),
        ("my-device", "is not a device type"),
        ("cuda", "is taken"),
        ("emu", "is taken"),
    ],
)
def test_new_refuses_a_name_that_cannot_be_a_device_type(tmp_path, name, why):
    result = run_tool("new", name, cwd=tmp_path)
    assert result.returncode == 2
    assert why in result.stderr and f"'{name}'" in result.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_new_refuses_a_directory_that_is_not_empty(tmp_path):
    (tmp_path / "widget").mkdir()
    (tmp_path / "widget" / "notes.txt").write_text("mine")
    result = run_tool("new", "widget", cwd=tmp_path)
    assert result.returncode == 2
    assert "exists and is not empty" in result.stderr
    assert [p.name for p in (tmp_path / "widget").iterdir()] == ["notes.txt"]


def test_the_templates_ship_inside_the_package():
    templates = sorted(p.name for p in vendor_new._TEMPLATES.rglob("*.in"))
    assert "vendor.c.in" in templates and "pyproject.toml.in" in templates
