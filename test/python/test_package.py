"""The installed package: where its parts are and the tb-conformance tool it ships."""

from __future__ import annotations

import json
import os
import shutil
import sys

from conftest import REPO, run

import torch_backend


def test_layout():
    lib = torch_backend.library_dir()
    assert (lib / "libtb_loader.so").is_file()
    assert (lib / "libtb_fake.a").is_file()  # the porting kit
    assert "fake" in torch_backend.bundled_vendors()
    header = torch_backend.include_dir() / "torch_backend" / "vendor.h"
    assert header.read_text() == (REPO / "include/torch_backend/vendor.h").read_text()
    config = torch_backend.cmake_prefix_path().glob("**/TorchBackendConfig.cmake")
    assert list(config), "the CMake package is not installed"


def test_cmake_prefix_tool_loads_nothing(tmp_path):
    # The package's tools import it for its paths only: no torch, no torch_backend._C (which loads
    # libtorch_backend), hence no vendor, whatever TORCH_BACKEND_VENDOR says.
    env = {**os.environ, "TORCH_BACKEND_VENDOR": "/nonexistent/libtb_vendor_x.so"}
    tool = run([sys.executable, "-m", "torch_backend.cmake_prefix"], env=env)
    assert (tool.returncode, tool.stderr) == (0, ""), tool.stderr
    assert tool.stdout == f"{torch_backend.cmake_prefix_path()}\n"
    # -X importtime lists on stderr every module the process imports.
    traced = run([sys.executable, "-X", "importtime", "-m", "torch_backend.cmake_prefix"], env=env)
    imported = {line.rsplit("|", 1)[-1].strip() for line in traced.stderr.splitlines()}
    assert "torch_backend" in imported and not {"torch", "torch_backend._C"} & imported
    # A console script is known by its name (tb-vendor).
    script = tmp_path / "tb-vendor"
    script.write_text(
        "import sys, torch_backend\nprint(torch_backend.include_dir(), 'torch' in sys.modules)\n"
    )
    tool = run([sys.executable, str(script)], env=env)
    assert (tool.returncode, tool.stderr) == (0, ""), tool.stderr
    assert tool.stdout == f"{torch_backend.include_dir()} False\n"


def test_conformance_tool_on_fake(tmp_path):
    tool = shutil.which("tb-conformance")
    assert tool is not None, "the tb-conformance console script is not on PATH"
    report = tmp_path / "fake.json"
    result = run([tool, "--json", str(report), "fake"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "vendor 'fake'" in result.stdout
    data = json.loads(report.read_text())
    assert data["vendor"] == "fake" and data["abi"] == "2.7"
    groups = {check["group"] for check in data["checks"]}
    assert groups == {
        "context",
        "device",
        "memory",
        "stream",
        "event",
        "threads",
        "fault",
        "kernels",
        "collectives",
        "graphs",
        "programs",
        "storage_meta",
        "ipc",
    }
    for check in data["checks"]:
        assert check["result"] in ("pass", "skip"), check
        if check["result"] == "skip":
            assert check["detail"], f"{check['name']} skipped without a reason"
    # Every slot of the ABI, each present in fake and called by some check.
    slots = {slot["slot"]: slot for slot in data["slots"]}
    assert {"device.count", "memory.device_malloc", "vendor.init", "vendor.last_error"} <= set(
        slots
    )
    assert all(slot["present"] and slot["calls"] > 0 for slot in slots.values()), slots


def test_conformance_command_imports_no_torch():
    # The command on PATH runs the C program; its Python side imports neither torch nor a vendor,
    # so it works in an environment whose torch (or Python) is not the one the wheel was built with.
    env = {**os.environ, "TORCH_BACKEND_VENDOR": "/nonexistent/libtb_vendor_x.so"}
    command = [sys.executable, "-X", "importtime", "-m", "torch_backend.conformance_cli"]
    result = run([*command, "--filter", "vendor_info", "fake"], env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "vendor 'fake'" in result.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()}
    assert "torch_backend._paths" in imported
    assert not {"torch", "torch_backend._C"} & imported
    # Its arguments reach the program, errors included.
    bad = run([sys.executable, "-m", "torch_backend.conformance_cli", "/no/such/libvendor.so"])
    assert bad.returncode == 2
    assert "cannot load vendor library '/no/such/libvendor.so'" in bad.stderr


def test_conformance_program_finds_its_libraries_relative_to_itself():
    # One wheel serves every Python: the program's RUNPATH must not name a Python version (the
    # copy that used to sit in the environment's bin/ named python3.11 and failed under 3.12).
    program = torch_backend.conformance_executable()
    dynamic = run(["readelf", "-d", str(program)]).stdout
    runpaths = [line for line in dynamic.splitlines() if "RUNPATH" in line or "RPATH" in line]
    assert runpaths and all("[$ORIGIN/../lib]" in line for line in runpaths), runpaths


def test_conformance_tool_two_devices():
    result = run(
        [str(torch_backend.conformance_executable()), "--filter", "stream.cross_device", "fake"],
        env={"TORCH_BACKEND_FAKE_DEVICE_COUNT": "2"},
    )
    assert result.returncode == 0, result.stdout
    assert "2 devices" in result.stdout
    assert "cross_device_wait" in result.stdout and "pass" in result.stdout


def test_conformance_tool_reports_unloadable_vendor():
    result = run([str(torch_backend.conformance_executable()), "/no/such/libvendor.so"])
    assert result.returncode == 2
    assert "cannot load vendor library '/no/such/libvendor.so'" in result.stderr
