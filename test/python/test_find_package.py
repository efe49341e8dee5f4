"""A vendor outside the repository builds against the installed package with
find_package(TorchBackend), passes the conformance suite through its own CTest and loads into
PyTorch with its one kernel.  The vendor is the porting guide's example (docs/porting.rst
includes its source), so a guide whose example no longer compiles or loads fails here."""

from __future__ import annotations

import re

from conftest import ONCE, REPO, run, run_python

import torch_backend

# The installed package and a vendor of its own: the suite's vendor plays no part.
pytestmark = ONCE


def test_the_cmake_package_reports_the_version_and_the_abi(tmp_path):
    # One version (pyproject.toml's), and the ABI of the package's vendor.h, read by find_package
    # from the installed package.
    header = (REPO / "include" / "torch_backend" / "vendor.h").read_text()
    abi = ".".join(
        re.search(rf"^#define TB_ABI_VERSION_{part} (\d+)$", header, re.MULTILINE).group(1)
        for part in ("MAJOR", "MINOR")
    )
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.22)\n"
        "project(probe LANGUAGES C)\n"
        "find_package(TorchBackend REQUIRED)\n"
        'message(STATUS "found ${TorchBackend_VERSION} ABI '
        '${TorchBackend_ABI_VERSION_MAJOR}.${TorchBackend_ABI_VERSION_MINOR}")\n'
    )
    prefix = torch_backend.cmake_prefix_path()
    configure = run(
        ["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "b"), f"-DCMAKE_PREFIX_PATH={prefix}"]
    )
    assert configure.returncode == 0, configure.stdout + configure.stderr
    assert f"-- found {torch_backend.__version__} ABI {abi}\n" in configure.stdout


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
    # else (a transposed operand, another dtype, other operators) on the CPU fallback.  Its
    # context (ACME_MODEL names the devices) reaches its own slots and its kernel, which
    # refuse any other.
    library = build / "libtb_vendor_acme.so"
    assert library.is_file()
    loaded = run_python(
        """
        import torch, torch_backend
        info = torch_backend.vendor_info()
        assert info["device_type"] == "acme" and info["abi_version"] == "2.7", info
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
        ACME_MODEL="ACME Comet",
    )
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    assert "acme ok ACME Comet 0" in loaded.stdout

    # The kernel's workspace comes from the caching allocator: it shows in the peak, and the
    # memory is back when the kernel has returned.
    workspace = run_python(
        """
        import torch, torch_backend
        n = 1 << 18  # 1 MiB of float32
        x = torch.ones(n).to("acme")
        torch.acme.synchronize()
        base = torch.acme.memory_allocated()
        torch.acme.reset_peak_memory_stats()
        y = torch.add(x, x, alpha=3)
        torch.acme.synchronize()
        assert torch.equal(y.cpu(), torch.full((n,), 4.0))
        assert torch_backend.kernel_counts() == {"add.out": 1}, torch_backend.kernel_counts()
        assert torch.acme.memory_allocated() == base + 4 * n, torch.acme.memory_allocated()
        peak = torch.acme.max_memory_allocated()
        assert peak >= base + 2 * 4 * n, (peak, base)  # the output and the workspace at once
        del y
        assert torch.acme.memory_allocated() == base
        print("workspace ok")
        """,
        TORCH_BACKEND_VENDOR=str(library),
    )
    assert workspace.returncode == 0, workspace.stdout + workspace.stderr
    assert "workspace ok" in workspace.stdout

    # A workspace the allocator cannot provide: torch.OutOfMemoryError with the allocator's
    # message, naming the kernel and the request, and nothing leaks.
    oom = run_python(
        """
        import torch, torch_backend
        n = 6 << 20  # 24 MiB of float32: the input and the output fit in 64 MiB, not the workspace
        x = torch.ones(n).to("acme")
        base = torch.acme.memory_allocated()
        try:
            torch.add(x, x)
            raise SystemExit("no error")
        except torch.OutOfMemoryError as e:
            print("oom:", e)
        torch.acme.synchronize()
        assert torch.acme.memory_allocated() == base, (torch.acme.memory_allocated(), base)
        assert torch_backend.kernel_counts() == {}, torch_backend.kernel_counts()
        """,
        TORCH_BACKEND_VENDOR=str(library),
        TORCH_BACKEND_FAKE_MEMORY="64M",
    )
    assert oom.returncode == 0, oom.stdout + oom.stderr
    expected = "oom: acme: kernel add.out: its workspace of 25165824 bytes could not be allocated: "
    assert expected in oom.stdout
    assert "acme: out of memory on device 0: tried to allocate 24.00 MiB" in oom.stdout
