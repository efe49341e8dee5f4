"""Kernel schemas (vendor.h, ABI 2.0): each kernel states the ATen schema it was written for,
torch_backend refuses kernels whose schema differs from the running torch's, and the operators
they would serve run on the CPU fallback, correctly."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import torch
from conftest import build_test_vendor, run, run_python

import torch_backend


def test_bundled_kernels_state_schemas_that_match():
    # emu states every schema (and all match torch 2.13's); fake has no kernels.
    assert torch_backend.refused_kernels() == {}
    assert torch_backend.unchecked_kernels() == []
    assert "refused" not in torch_backend.op_coverage().values()


def test_schema_list_is_the_dispatchers():
    listed = subprocess.run(
        [sys.executable, "-m", "torch_backend.schemas"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert listed[0].startswith("# ") and torch.__version__ in listed[0]
    schemas = listed[1:]
    assert len(schemas) > 1000 and all(line.startswith("aten::") for line in schemas)
    expected = str(torch._C._get_schema("aten::add", "out"))
    assert expected in schemas
    assert int(listed[0].split()[1]) == len(schemas)


def test_refused_kernels_fall_back_with_one_warning_each():
    library = build_test_vendor()
    result = run_python(
        """
        import json, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import torch, torch_backend
        messages = [str(w.message) for w in caught if "refused" in str(w.message)]
        refused = torch_backend.refused_kernels()
        coverage = torch_backend.op_coverage(
            ["add.out", "add.Tensor", "hardtanh.out", "hardtanh", "mul.out", "sub.out", "div.out"])
        a = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        x = a.to("opstest")
        torch_backend.reset_kernel_counts()
        torch_backend.reset_fallback_counts()
        results = {
            "add": torch.equal(torch.add(x, x, alpha=2).cpu(), a + 2 * a),
            "hardtanh": torch.equal(torch.nn.functional.hardtanh(x, -2.0, 3.0).cpu(),
                                    torch.nn.functional.hardtanh(a, -2.0, 3.0)),
            "mul": torch.equal((x * x).cpu(), a * a),
            "sub": torch.equal((x - 1).cpu(), a - 1),
            "div": torch.equal((x / 2).cpu(), a / 2),
        }
        print(json.dumps({"messages": messages, "refused": refused, "coverage": coverage,
                          "results": results, "unchecked": torch_backend.unchecked_kernels(),
                          "kernels": torch_backend.kernel_counts(),
                          "fallback": torch_backend.fallback_counts()}))
        """,
        TORCH_BACKEND_VENDOR=str(library),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    refused = report["refused"]
    assert set(refused) == {
        "add.out",
        "hardtanh.out",
        "div.out",
        "no_such_op.out",
        "empty_like",
        "_fused_moving_avg_obs_fq_helper",
        "sparse_dim",
        "_foreach_add.List_out",
        "maximum.out",
    }
    # The message names the operator and prints both schemas.
    add = refused["add.out"]
    assert "differs from torch " in add and "keyword-only in torch's schema" in add, add
    assert "kernel's schema: aten::add.out(Tensor self, Tensor other, Scalar alpha=1, *" in add
    assert str(torch._C._get_schema("aten::add", "out")) in add
    assert (
        "argument 2 is `Tensor(a!) out` in the kernel's schema and `Scalar max_val` in torch's"
        in refused["hardtanh.out"]
    )
    assert "does not parse" in refused["div.out"]
    assert "has no operator named 'no_such_op.out'" in refused["no_such_op.out"]
    assert "argument 'layout' has type Layout?" in refused["empty_like"]
    assert (
        refused["_fused_moving_avg_obs_fq_helper"] == "it writes arguments and returns new tensors"
    )
    assert refused["sparse_dim"].startswith("it returns `int`")
    assert "out arguments are not tensors" in refused["_foreach_add.List_out"]
    assert "the kernel's schema is for operator minimum.out" in refused["maximum.out"]
    assert len(report["messages"]) == len(refused)
    assert all("opstest: the vendor's kernel for" in m for m in report["messages"])
    assert report["unchecked"] == ["sub.out"]
    assert report["coverage"] == {
        "add.out": "refused",
        "add.Tensor": "refused",
        "hardtanh.out": "refused",
        "hardtanh": "fallback",
        "mul.out": "native",
        "sub.out": "native",
        "div.out": "refused",
    }
    # Refused kernels were never called (they would have written 1e9): the fallback ran.
    assert all(report["results"].values()), report["results"]
    assert report["kernels"] == {"mul.out": 1}
    fell_back = {name.split(".")[0] for name in report["fallback"]}
    assert {"aten::add", "aten::hardtanh", "aten::div", "aten::sub"} <= fell_back, fell_back


def test_conformance_compares_against_the_schema_list(tmp_path):
    schemas = tmp_path / "schemas.txt"
    schemas.write_text(
        subprocess.run(
            [sys.executable, "-m", "torch_backend.schemas"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    tool = str(torch_backend.conformance_executable())
    # emu: every kernel states a schema and every one matches.
    emu = run([tool, "--schemas", str(schemas), "--filter", "kernels", "emu"])
    assert emu.returncode == 0, emu.stdout + emu.stderr
    assert re.search(r"kernels +schemas_match +pass +\d+ kernels match", emu.stdout), emu.stdout
    # Without the list the comparison is skipped, and says so.
    unlisted = run([tool, "--filter", "kernels", "emu"])
    assert unlisted.returncode == 0, unlisted.stdout
    assert re.search(r"kernels +schemas_match +skip +no schema list", unlisted.stdout)
    # The test vendor: the refused kernels, each with both schemas, and the unchecked one.
    library = build_test_vendor()
    bad = run([tool, "--schemas", str(schemas), "--filter", "kernels", str(library)])
    assert bad.returncode == 1, bad.stdout + bad.stderr
    line = next(x for x in bad.stdout.splitlines() if "schemas_match" in x)
    assert "FAIL" in line and "9 of 11 kernels are refused" in line, line
    for name in (
        "add.out",
        "hardtanh.out",
        "div.out",
        "no_such_op.out",
        "empty_like",
        "_fused_moving_avg_obs_fq_helper",
        "sparse_dim",
        "_foreach_add.List_out",
        "maximum.out",
    ):
        assert f"; {name}:" in line, name
    assert "torch: aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1" in bad.stdout
    stated = next(x for x in bad.stdout.splitlines() if "schema_stated" in x)
    assert "FAIL" in stated and "kernel 'maximum.out' states the schema of operator" in stated
    assert "1 unchecked (no schema, used as they are): sub.out" in stated
