"""A vendor outside the repository builds against the installed package with
find_package(TorchBackend), passes the conformance suite through its own CTest and loads into
PyTorch with its one kernel.  The vendor is the porting guide's example (docs/porting.rst
includes its source), so a guide whose example no longer compiles or loads fails here."""

from __future__ import annotations

from conftest import REPO, run, run_python

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

    # Loaded into torch by path: its add.out kernel runs for contiguous float32, everything
    # else (a transposed operand, another dtype, other operators) on the CPU fallback.
    library = build / "libtb_vendor_acme.so"
    assert library.is_file()
    loaded = run_python(
        """
        import torch, torch_backend
        info = torch_backend.vendor_info()
        assert info["device_type"] == "acme" and info["abi_version"] == "1.2", info
        assert torch_backend.op_coverage(["add.out", "mul.out"]) == {
            "add.out": "native", "mul.out": "fallback"}
        a = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        x = a.to("acme")
        torch_backend.reset_kernel_counts()
        torch_backend.reset_fallback_counts()
        assert torch.equal(torch.add(x, x, alpha=2).cpu(), a + 2 * a)
        assert torch_backend.kernel_counts() == {"add.out": 1}
        assert not torch_backend.fallback_counts()
        assert torch.equal((x.t() + x.t()).cpu(), a.t() + a.t())  # declined: not contiguous
        assert torch.equal((x.double() + 1).cpu(), a.double() + 1)  # float64: not published
        assert torch_backend.kernel_counts() == {"add.out": 1}, torch_backend.kernel_counts()
        counts = torch_backend.fallback_counts()
        assert counts == {"aten::add.Tensor": 2}, counts
        print("acme ok", torch.acme.get_device_name(0))
        """,
        TORCH_BACKEND_VENDOR=str(library),
    )
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    assert "acme ok ACME Rocket 0" in loaded.stdout
