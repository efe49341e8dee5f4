"""A vendor outside the repository builds against the installed package with
find_package(TorchBackend) and passes the conformance suite through its own CTest."""

from __future__ import annotations

from conftest import REPO, run

import torch_backend


def test_out_of_tree_vendor_builds_against_the_package(tmp_path):
    project = REPO / "test" / "out_of_tree" / "project"
    build = tmp_path / "build"
    configure = run(
        [
            "cmake",
            "-S",
            str(project),
            "-B",
            str(build),
            f"-DCMAKE_PREFIX_PATH={torch_backend.cmake_prefix_path()}",
        ]
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    compiled = run(["cmake", "--build", str(build)])
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    tested = run(["ctest", "--test-dir", str(build), "--verbose"])
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "vendor 'acme' (ACME Accelerators 0.1.0)" in tested.stdout
