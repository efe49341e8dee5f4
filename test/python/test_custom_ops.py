"""Custom operators (vendor.h, ABI 2.0): a vendor declares operators of its own in C with a
kernel, a shape function and optionally a backward; they appear as torch.ops.<ns>.<name>, pass
torch.library.opcheck, train under autograd and trace under torch.compile.  emu ships
emu::mymuladd and the fused emu::rms_norm; a test vendor brings the declarations torch_backend
must refuse."""

from __future__ import annotations

import json
import os

import pytest
import torch
import torch.nn.functional as F
from conftest import DEV, build_test_vendor, run_python
from torch.library import opcheck
from torch.testing._internal.optests.generate_tests import OpCheckError

import torch_backend

EMU_OPS = {"emu::mymuladd", "emu::mymuladd_backward", "emu::rms_norm", "emu::rms_norm_backward"}
needs_emu_ops = pytest.mark.skipif(
    not EMU_OPS <= torch_backend.custom_ops().keys(), reason="the vendor declares no custom ops"
)
# The test vendor's suites load their own library in a subprocess, whatever vendor this run
# tests: they run once, in the emu run of `make test`.
vendor_independent = pytest.mark.skipif(DEV != "emu", reason="runs in the emu run only")

# opcheck's default tests but test_autograd_registration, which PyTorch implements for CPU,
# CUDA and XPU only (test_autograd_registration_is_pytorch_limited checks that it still is,
# and test_autograd_is_registered does what it would for the device).
OPCHECK_TESTS = ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")


def rand(*shape: int, dtype: torch.dtype = torch.float32, grad: bool = False) -> torch.Tensor:
    generator = torch.Generator().manual_seed(sum(shape))
    return torch.randn(*shape, dtype=dtype, generator=generator).to(DEV).requires_grad_(grad)


@needs_emu_ops
def test_declared_operators():
    ops = torch_backend.custom_ops()
    assert ops["emu::mymuladd"] == {
        "schema": "emu::mymuladd(Tensor a, Tensor b, float c) -> Tensor",
        "backward": "emu::mymuladd_backward",
    }
    assert ops["emu::rms_norm"]["backward"] == "emu::rms_norm_backward"
    assert ops["emu::rms_norm_backward"]["backward"] is None
    schema = torch.ops.emu.rms_norm.default._schema  # defined from the vendor's schema
    assert [a.name for a in schema.arguments] == ["x", "weight", "eps"]
    assert schema.arguments[2].default_value == 1e-6
    coverage = torch_backend.op_coverage()
    assert all(coverage[name] == "native" for name in EMU_OPS)
    assert torch_backend.op_coverage(["emu::mymuladd"]) == {"emu::mymuladd": "native"}


@needs_emu_ops
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_forward_matches_the_reference(dtype):
    a, b = rand(6, 5, dtype=dtype), rand(5, 6, dtype=dtype).t()  # b: not contiguous
    torch_backend.reset_kernel_counts()
    result = torch.ops.emu.mymuladd(a, b, 2.5)
    # computed in float and rounded once, as emu computes reduced precisions
    expected = (a.cpu().double() * b.cpu().double() + 2.5).to(dtype)
    torch.testing.assert_close(result.cpu(), expected)
    x, w = rand(3, 4, 16, dtype=dtype), rand(16, dtype=dtype)
    normed = torch.ops.emu.rms_norm(x, w)  # eps defaults to 1e-6
    reference = F.rms_norm(x.cpu().double(), (16,), w.cpu().double(), 1e-6).to(dtype)
    torch.testing.assert_close(normed.cpu(), reference)
    assert torch_backend.kernel_counts() == {"emu::mymuladd": 1, "emu::rms_norm": 1}
    assert result.is_contiguous() and result.device.type == DEV


@needs_emu_ops
@pytest.mark.parametrize("op", ["mymuladd", "rms_norm"])
def test_opcheck(op):
    args = (
        (rand(4, 5, grad=True), rand(4, 5, grad=True), 1.5)
        if op == "mymuladd"
        else (rand(3, 8, dtype=torch.float64, grad=True), rand(8, dtype=torch.float64, grad=True))
    )
    results = opcheck(getattr(torch.ops.emu, op).default, args, test_utils=OPCHECK_TESTS)
    assert results == dict.fromkeys(OPCHECK_TESTS, "SUCCESS")


@needs_emu_ops
def test_autograd_is_registered():
    # What opcheck's test_autograd_registration checks for CPU/CUDA/XPU, for this device: an
    # autograd kernel at the Autograd key of each differentiable operator.
    for name in ("emu::mymuladd", "emu::rms_norm"):
        assert torch._C._dispatch_has_kernel_for_dispatch_key(name, "Autograd")
    assert not torch._C._dispatch_has_kernel_for_dispatch_key("emu::rms_norm_backward", "Autograd")


@needs_emu_ops
def test_autograd_registration_is_pytorch_limited():
    # When PyTorch's check learns other devices this fails: then add it to OPCHECK_TESTS.
    args = (rand(4, 5, grad=True), rand(4, 5, grad=True), 1.5)
    with pytest.raises(OpCheckError, match="NYI devices other than CPU/CUDA/XPU"):
        opcheck(torch.ops.emu.mymuladd.default, args, test_utils="test_autograd_registration")


@needs_emu_ops
def test_gradcheck_in_double():
    a, b = rand(3, 4, dtype=torch.float64, grad=True), rand(3, 4, dtype=torch.float64, grad=True)
    assert torch.autograd.gradcheck(lambda a, b: torch.ops.emu.mymuladd(a, b, 0.5), (a, b))
    x = rand(2, 3, 6, dtype=torch.float64, grad=True)
    w = rand(6, dtype=torch.float64, grad=True)
    assert torch.autograd.gradcheck(lambda x, w: torch.ops.emu.rms_norm(x, w, 1e-5), (x, w))


@needs_emu_ops
def test_trains_like_the_reference_math():
    torch.manual_seed(0)
    linear = torch.nn.Linear(8, 8)
    weight = torch.nn.Parameter(torch.rand(8) + 0.5)
    inputs = torch.randn(4, 8)

    def step(device: str, norm) -> list[torch.Tensor]:
        lin = torch.nn.Linear(8, 8).to(device)
        lin.load_state_dict(linear.state_dict())
        w = torch.nn.Parameter(weight.detach().clone().to(device))
        norm(lin(inputs.to(device)), w).square().sum().backward()
        return [p.grad.cpu() for p in (*lin.parameters(), w)]

    expected = step("cpu", lambda x, w: F.rms_norm(x, (8,), w, 1e-6))
    torch_backend.reset_kernel_counts()
    got = step(DEV, lambda x, w: torch.ops.emu.rms_norm(x, w, 1e-6))
    for e, g in zip(expected, got, strict=True):
        torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-4)
    assert torch_backend.kernel_counts()["emu::rms_norm_backward"] == 1


@needs_emu_ops
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_torch_compile(backend):
    if backend == "inductor" and "asan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("Inductor's compile workers do not run under the preloaded ASan runtime")

    def f(a, b, w):
        return torch.ops.emu.rms_norm(torch.ops.emu.mymuladd(a, b, 1.0), w).sum()

    a, b, w = rand(3, 5, grad=True), rand(3, 5, grad=True), rand(5, grad=True)
    expected = f(a, b, w)
    expected.backward()
    grads = [t.grad.clone() for t in (a, b, w)]
    for t in (a, b, w):
        t.grad = None
    torch._dynamo.reset()
    compiled = torch.compile(f, backend=backend, fullgraph=True)
    result = compiled(a, b, w)
    result.backward()
    torch.testing.assert_close(result, expected)
    for t, g in zip((a, b, w), grads, strict=True):
        torch.testing.assert_close(t.grad, g)


@needs_emu_ops
def test_meta_tensors_use_the_shape_function():
    x = torch.empty(2, 7, 3, device="meta")
    out = torch.ops.emu.rms_norm(x, torch.empty(3, device="meta"))
    assert out.shape == (2, 7, 3) and out.device.type == "meta"
    grads = torch.ops.emu.mymuladd_backward(x, x, x, 1.0)
    assert [g.shape for g in grads] == [x.shape, x.shape]


@needs_emu_ops
def test_shape_function_errors_name_the_operator():
    with pytest.raises(RuntimeError, match=r"custom_op.shape\(emu::mymuladd\) failed .*same shape"):
        torch.ops.emu.mymuladd(rand(2, 3), rand(3, 2), 1.0)
    with pytest.raises(RuntimeError, match=r"weight must have shape \[4\]"):
        torch.ops.emu.rms_norm(rand(2, 4), rand(5))
    with pytest.raises(RuntimeError, match="shape"):
        torch.ops.emu.rms_norm(torch.empty(2, 4, device="meta"), torch.empty(5, device="meta"))


@vendor_independent
def test_declined_calls_and_broken_shape_functions_raise():
    result = run_python(
        """
        import torch, torch_backend
        a = torch.arange(6, dtype=torch.float32, requires_grad=True)
        x = a.detach().to("opstest").requires_grad_()
        y = torch.ops.opstest.twice(x)
        y.backward(torch.ones_like(y))  # a contiguous gradient: the kernel needs one
        assert torch.equal(y.cpu(), 2 * a.detach()) and torch.equal(x.grad.cpu(), 2 * torch.ones(6))
        try:
            torch.ops.opstest.twice(x.double())
        except NotImplementedError as e:
            print("declined:", e)
        try:
            torch.ops.opstest.twice(x.detach().to(torch.complex64))
        except NotImplementedError as e:
            print("complex:", e)
        try:
            torch.ops.opstest.broken(x)
        except RuntimeError as e:
            print("broken:", e)
        """,
        TORCH_BACKEND_VENDOR=str(build_test_vendor()),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "opstest: custom operator opstest::twice declined the call" in result.stdout
    assert "contiguous float32 only" in result.stdout and "no CPU fallback" in result.stdout
    assert "complex: opstest: opstest::twice: an argument has a dtype or value no tb_value" in (
        result.stdout
    )
    assert "broken: opstest: the shape function of opstest::broken gave output 0 dtype 8 and " in (
        result.stdout
    )


BAD_DECLARATIONS = {
    "CUSTOM_BAD_SCHEMA": "custom operator 'opstest::twice' has a schema that does not parse",
    "CUSTOM_NO_NAMESPACE": "custom operator 'twice' has no namespace",
    "CUSTOM_ATEN_NAMESPACE": "custom operator 'aten::twice' is in namespace 'aten'",
    "CUSTOM_MUTATES": "writes or aliases argument `Tensor(a!) a`: custom operators are functional",
    "CUSTOM_NO_SHAPE": "has no shape function (tb_custom_op::shape is NULL)",
    "CUSTOM_UNKNOWN_BACKWARD": "names backward 'opstest::twice_backwards', which is not a custom "
    "operator of the vendor's table",
    "CUSTOM_BAD_BACKWARD": "has backward 'opstest::twice_backward', whose schema does not take",
    "CUSTOM_DUPLICATE": "custom operator 'opstest::twice' is declared twice",
    "CUSTOM_REPEATED_EXTENSION": "its extension chain holds TB_EXTENSION_CUSTOM_OPS twice",
    "CUSTOM_NO_KERNEL": "custom operator 'opstest::twice' has no kernel (tb_custom_op::fn is NULL)",
    "CUSTOM_NO_SCHEMA": "custom operator '#0' has no schema (tb_custom_op::schema is NULL)",
    "CUSTOM_NULL_OP": "custom operator '#1' is NULL",
    "CUSTOM_SMALL_OP": "custom operator '#0' has struct_size 32, smaller than ABI 2.0's",
    "CUSTOM_RETURNS_NOTHING": "custom operator 'opstest::twice' returns nothing",
    "CUSTOM_RETURNS_LIST": "returns `Tensor[]`: custom operators return new tensors only",
    "CUSTOM_LAYOUT_ARGUMENT": "has an argument 'layout' has type Layout, which no tb_value kind "
    "carries",
    "CUSTOM_ALREADY_DEFINED": "custom operator 'profiler::_record_function_enter' is already "
    "defined in this process",
    "CUSTOM_EXTENSION_CYCLE": "its extension chain has more than 64 entries (a cycle?)",
    "CUSTOM_SMALL_BASE": "extension 2 has struct_size 23, smaller than tb_extension_base",
    "CUSTOM_SMALL_EXTENSION": "its tb_custom_ops_extension has struct_size 24, smaller than "
    "ABI 2.0's",
    "CUSTOM_NEGATIVE_COUNT": "its custom operator table has count -1",
}


@vendor_independent
@pytest.mark.parametrize("variant", BAD_DECLARATIONS)
def test_bad_declarations_refuse_the_vendor_at_load(variant):
    library = build_test_vendor(variant)
    result = run_python(
        """
        import json
        try:
            import torch
        except RuntimeError as e:
            print(json.dumps(str(e.__cause__ or e)))
        """,
        TORCH_BACKEND_VENDOR=str(library),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    message = json.loads(result.stdout.splitlines()[-1])
    assert f"torch_backend: vendor 'opstest' (torch_backend test vendor, {library})" in message
    assert BAD_DECLARATIONS[variant] in message, message
