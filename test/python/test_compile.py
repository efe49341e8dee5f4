"""torch.compile on the device (torch_backend.compile): dynamo traces device tensors, streams
and events; the default Inductor backend compiles on every vendor -- C++ kernels on a device
with host access (emu), OpenCL C kernels on a device that builds OpenCL C programs (ocl,
torch_backend.inductor_opencl), a graph of the vendor's own kernels on any other (fake, npu) --
and compiled results equal eager ones."""

from __future__ import annotations

import copy
import re

import pytest
import torch
from conftest import DEV, MODULE, REPO
from torch._dynamo.testing import CompileCounterWithBackend
from torch._inductor.codegen import common as inductor_common
from torch._inductor.utils import run_and_get_code

import torch_backend
from torch_backend import compile as tb_compile

HOST = tb_compile.host_access()
OPENCL = tb_compile.opencl_programs()
GENERATES = HOST or OPENCL
GENERATED: list[str] = []  # printed by conftest's terminal summary
TOL = {"atol": 1e-5, "rtol": 1e-4}


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def mlp() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32), torch.nn.Linear(32, 8)
    )


def encoder() -> torch.nn.Module:
    return torch.nn.TransformerEncoderLayer(
        d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True
    )


def train_step(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    loss = model(x).square().mean()
    loss.backward()
    return loss


def _kernels_built() -> int:
    from torch_backend import inductor_opencl

    return inductor_opencl.kernels_built() if OPENCL else 0


def compare_step(make, shape: tuple[int, ...]) -> list[str]:
    """One forward+backward, compiled on the device and eager on the CPU: loss and every
    gradient equal.  Returns Inductor's generated code."""
    torch.manual_seed(0)
    reference = make()
    model = copy.deepcopy(reference).to(DEV)
    x = torch.randn(*shape)
    expected = train_step(reference, x)
    built = _kernels_built()
    torch_backend.reset_fallback_counts()
    loss, code = run_and_get_code(torch.compile(train_step), model, x.to(DEV))
    if OPENCL:
        GENERATED.append(
            f"{make.__name__} step: {_kernels_built() - built} OpenCL C kernels generated, "
            f"{sum(torch_backend.fallback_counts().values())} CPU fallbacks"
        )
        assert torch_backend.fallback_counts() == {}
    torch.testing.assert_close(loss.cpu(), expected, **TOL)
    for (name, p), q in zip(reference.named_parameters(), model.parameters(), strict=True):
        assert q.grad is not None and q.grad.device.type == DEV, name
        torch.testing.assert_close(q.grad.cpu(), p.grad, **TOL, msg=name)
    return code


def test_mlp_forward_backward_matches_eager():
    code = compare_step(mlp, (8, 16))
    assert len(code) == 2  # forward and backward graphs, compiled by Inductor
    if tb_compile.host_funcs():
        # generated kernels are queued on the stream (as host functions); products stay vendor
        assert all("cpp_fused" in c and "tb_kernel_run" in c for c in code)
        assert not any("tb_host_barrier(0)" in c for c in code)
    elif HOST:
        # generated kernels run on the host after a wait for the stream
        assert all("cpp_fused" in c and "tb_host_barrier(0)" in c for c in code)
    elif OPENCL:
        # OpenCL C kernels named as Triton's are (kind, fused operators, index), launched on
        # the stream; products stay the vendor's
        names = [re.findall(r"__kernel void (tb_ocl_(?:poi|red)_fused_\w+_\d+)\(", c) for c in code]
        assert all(names) and all("tb_launch(" in c for c in code), names
        assert any("gelu" in name for name in names[0]), names  # the forward's fused GELU
        assert all("extern_kernels.addmm" in c or "extern_kernels.mm" in c for c in code)
    else:
        assert not any("cpp_fused" in c or "async_compile.cpp" in c for c in code)


def test_encoder_block_forward_backward_matches_eager():
    compare_step(encoder, (4, 10, 32))


def test_graph_without_host_access_runs_vendor_kernels_only():
    """On a device the host cannot address, every operator of a compiled graph is the one eager
    mode would run (the vendor's kernel or the CPU fallback), and nothing is generated."""
    if GENERATES:
        pytest.skip(f"Inductor generates kernels for {DEV}")
    x = torch.randn(64, device=DEV)
    torch_backend.reset_kernel_counts()
    torch_backend.reset_fallback_counts()
    eager = torch.relu(x * 2 + 1)
    eager_ops = {**torch_backend.kernel_counts(), **torch_backend.fallback_counts()}
    torch_backend.reset_kernel_counts()
    torch_backend.reset_fallback_counts()
    result, code = run_and_get_code(torch.compile(lambda t: torch.relu(t * 2 + 1)), x)
    compiled_ops = {**torch_backend.kernel_counts(), **torch_backend.fallback_counts()}
    torch.testing.assert_close(result, eager)
    assert "async_compile.cpp" not in code[0]
    assert compiled_ops and set(compiled_ops) <= set(eager_ops) | {"aten::add.out", "add.out"}


def test_generated_kernel_waits_for_the_stream():
    """A generated kernel reading a vendor kernel's result sees it complete: the product is
    queued on the stream, and the kernel after it must not run before it (the host barrier)."""
    if not GENERATES:
        pytest.skip(f"{DEV}: nothing is generated")
    a = torch.randn(384, 384, device=DEV)
    b = torch.randn(384, 384, device=DEV)

    def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.relu(a @ b + 1.0) * 0.5

    expected = f(a.cpu(), b.cpu())
    compiled = torch.compile(f)
    for _ in range(5):
        torch.testing.assert_close(compiled(a, b).cpu(), expected, **TOL)


def test_generated_kernel_is_ordered_before_later_vendor_work():
    """Vendor work queued after a generated kernel sees its result, also on a side stream."""
    if not GENERATES:
        pytest.skip(f"{DEV}: nothing is generated")
    x = torch.randn(256, 256, device=DEV)
    compiled = torch.compile(lambda t: torch.sigmoid(t) * 3.0)
    side = MODULE.Stream()
    side.wait_stream(MODULE.current_stream())
    with MODULE.stream(side):
        y = compiled(x)
        z = y @ y
    MODULE.current_stream().wait_stream(side)
    ref = torch.sigmoid(x.cpu()) * 3.0
    torch.testing.assert_close(z.cpu(), ref @ ref, atol=1e-3, rtol=1e-4)


def test_opencl_kernels_fuse_what_eager_runs_one_by_one():
    """On a device that builds OpenCL C, a compiled graph's pointwise work and reductions run
    as generated kernels -- fewer launches than eager's, no CPU fallback -- with results equal
    to eager's: softmax (max, sum), layer norm (welford), argmax, a masked pad, a cast, and
    broadcasting."""
    if not OPENCL:
        pytest.skip(f"{DEV} builds no OpenCL C programs")
    from torch_backend import inductor_opencl

    def f(x: torch.Tensor, w: torch.Tensor, i: torch.Tensor) -> tuple[torch.Tensor, ...]:
        soft = torch.softmax(x * 2 + w, dim=-1)
        norm = torch.nn.functional.layer_norm(x, (x.shape[-1],))
        padded = torch.nn.functional.pad(torch.relu(x), (1, 2), value=-1.0)
        picked = x.argmax(dim=1) + i.to(torch.int64)
        var, mean = torch.var_mean(x, dim=0)
        return soft, norm, padded, picked, (x > 0).half().float() * var + mean, x.sum()

    x = torch.randn(6, 37)
    w = torch.randn(37)
    i = torch.arange(6, dtype=torch.int32)
    expected = f(x, w, i)
    args = (x.to(DEV), w.to(DEV), i.to(DEV))
    torch_backend.reset_kernel_counts()
    torch_backend.reset_fallback_counts()
    eager = f(*args)
    eager_launches = sum(torch_backend.kernel_counts().values())
    built = inductor_opencl.kernels_built()
    compiled = torch.compile(f)
    compiled(*args)  # compiles
    assert inductor_opencl.kernels_built() > built
    torch_backend.reset_kernel_counts()
    torch_backend.reset_fallback_counts()
    result = compiled(*args)
    assert torch_backend.fallback_counts() == {}
    assert sum(torch_backend.kernel_counts().values()) < eager_launches
    for got, want, seen in zip(result, expected, eager, strict=True):
        torch.testing.assert_close(got.cpu(), want, **TOL)
        torch.testing.assert_close(got.cpu(), seen.cpu(), **TOL)


def test_opencl_kernels_of_a_graph_are_profiled_as_its_call(tmp_path):
    """torch.profiler shows each generated kernel as a device activity of the compiled graph's
    call, with its own flow from its launch (one operator, several launches: a flow id shared
    by launches is a collision to PyTorch's profiler, which then guesses each kernel's
    operator), and key_averages() gives the call the device time of its kernels."""
    if not OPENCL:
        pytest.skip(f"{DEV} builds no OpenCL C programs")
    import json

    from torch.profiler import ProfilerActivity, profile

    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x * 2, dim=-1) + x.sum(0)  # two kernels: a reduction, a softmax

    x = torch.randn(8, 33, device=DEV)
    compiled = torch.compile(f)
    compiled(x)
    MODULE.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        compiled(x)
        MODULE.synchronize()
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    (call,) = [e for e in events if e["name"].startswith("## Call CompiledFxGraph")]
    generated = [e for e in events if e.get("cat") == "kernel" and e["name"].startswith("tb_ocl")]
    assert len(generated) >= 2, [e["name"] for e in events if e.get("cat") == "kernel"]
    assert {k["args"]["External id"] for k in generated} == {call["args"]["External id"]}
    starts = [e["id"] for e in events if e.get("cat") == "ac2g" and e["ph"] == "s"]
    assert len(starts) == len(set(starts)), starts
    assert {k["args"]["correlation"] for k in generated} <= set(starts)
    averages = {a.key: a for a in prof.key_averages()}
    assert averages[call["name"]].device_time_total == pytest.approx(
        sum(k["dur"] for k in generated), rel=1e-3
    )


def test_opencl_index_out_of_range_faults_the_device_naming_the_kernel():
    """A generated gather whose index is out of range reports it through the vendor's fault
    record (vendor.h TB_FAULT_PARAM, ABI 2.7): the next synchronizing call raises naming the
    generated kernel, the index and the size, as eager's embedding does on the device -- and
    nothing outside the tensors was read or written: after a reset the table is intact."""
    if not OPENCL:
        pytest.skip(f"{DEV} builds no OpenCL C programs")
    table = torch.randn(10, 8, device=DEV)
    before = table.cpu()
    embed = torch.compile(lambda w, i: torch.nn.functional.embedding(i, w) * 2.0)
    out, code = run_and_get_code(embed, table, torch.tensor([1, 3, 9], device=DEV))
    torch.testing.assert_close(out.cpu(), before[[1, 3, 9]] * 2.0)
    assert "TB_FAULT_INDEX(" in code[0] and "TB_FAULT_PARAM" in code[0]
    try:
        embed(table, torch.tensor([1, 3, 1 << 40, -(1 << 40), 9], device=DEV))
        message = (
            r"(?s)TB_ERROR_DEVICE_FAULT.*tb_ocl_poi_fused_\w*embedding\w*: index -?\d+ is out "
        )
        with pytest.raises(torch.AcceleratorError, match=message + r"of bounds .* size 10"):
            MODULE.synchronize()
    finally:
        MODULE.reset_device()
    assert torch.equal(table.cpu(), before)
    torch.testing.assert_close(embed(table, torch.tensor([0], device=DEV)).cpu(), before[:1] * 2)


def test_opencl_random_numbers_come_from_the_device_generator():
    """Dropout in a compiled graph draws from the device's generator: the same seed gives the
    same mask, another seed another, and the kept fraction is about 1 - p."""
    if not OPENCL:
        pytest.skip(f"{DEV} builds no OpenCL C programs")
    compiled = torch.compile(lambda t: torch.nn.functional.dropout(t, 0.25, training=True))
    x = torch.ones(4096, device=DEV)
    MODULE.manual_seed(7)
    a = compiled(x).cpu()
    MODULE.manual_seed(7)
    b = compiled(x).cpu()
    MODULE.manual_seed(8)
    c = compiled(x).cpu()
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert set(a.unique().tolist()) <= {0.0, torch.tensor(1 / 0.75).item()}
    assert 0.70 < (a > 0).float().mean().item() < 0.80


RANDOM_WALKS = """
__kernel void in_loop(__global float *out, ulong seed, int cols) {
  int row = (int)get_global_id(0);
  tb_rng rng = TB_RNG_INIT;
  for (int c = 0; c < cols; c++) out[row * cols + c] = tb_rand_in(seed, row * cols + c, &rng);
}
__kernel void one_each(__global float *out, ulong seed) {
  out[get_global_id(0)] = tb_rand(seed, get_global_id(0));
}
"""


def test_opencl_random_numbers_are_the_same_in_a_loop_and_one_per_work_item():
    """A reduction's loop keeps the Philox block it drew for the next three offsets
    (``tb_rand_in``); a pointwise kernel draws its offset's block (``tb_rand``): the same
    seed and offset give the same number either way, so where Inductor puts a dropout does
    not change its mask.  The four words of a block are distinct uniform draws."""
    if not OPENCL:
        pytest.skip(f"{DEV} builds no OpenCL C programs")
    from torch_backend.inductor_opencl import PRELUDE

    source = PRELUDE + RANDOM_WALKS
    rows, cols = 64, 37  # rows that start inside a block
    walked = torch.empty(rows * cols, device=DEV)
    each = torch.empty(rows * cols, device=DEV)
    MODULE.compile_kernel(source, "in_loop")(walked, 1234, cols, threads=rows)
    MODULE.compile_kernel(source, "one_each")(each, 1234, threads=rows * cols)
    walked, each = walked.cpu(), each.cpu()
    assert torch.equal(walked, each)
    assert walked.unique().numel() > 0.99 * walked.numel()
    assert 0.0 <= walked.min().item() and walked.max().item() < 1.0
    words = walked[: rows * cols // 4 * 4].view(-1, 4)  # each column one word of the blocks
    assert (words.mean(0) - 0.5).abs().max().item() < 0.05
    correlation = torch.corrcoef(words.T) - torch.eye(4)
    assert correlation.abs().max().item() < 0.1


@pytest.mark.parametrize("length", [64, 4096])
def test_opencl_variance_of_rows_far_from_zero(length):
    """var_mean and layer_norm of rows whose mean is far from their spread (1000 + N(0, 1))
    match float64 on the CPU: a row that fits the work item's private memory (64 floats: two
    passes over the kept values) and one that does not (4096: Welford's update per element)."""
    if not OPENCL:
        pytest.skip(f"{DEV} builds no OpenCL C programs")
    x = 1000 + torch.randn(8, length, generator=torch.Generator().manual_seed(0))

    def stats(t: torch.Tensor) -> tuple[torch.Tensor, ...]:
        var, mean = torch.var_mean(t, dim=-1, correction=0)
        return var, mean, torch.nn.functional.layer_norm(t, (length,))

    (var, mean, normed), code = run_and_get_code(torch.compile(stats), x.to(DEV))
    kept = "float row" in "".join(code) and f"[{length}];" in "".join(code)
    assert kept == (length * 4 <= 4096)
    expected = stats(x.double())
    torch.testing.assert_close(var.cpu().double(), expected[0], rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(mean.cpu().double(), expected[1], rtol=1e-6, atol=0)
    torch.testing.assert_close(normed.cpu().double(), expected[2], rtol=1e-4, atol=1e-3)


def test_host_access_dropout_draws_what_eager_draws():
    """With host access, compiled random operators run the vendor's own kernels
    (fallback_random): a seed gives the compiled graph the mask eager mode gives."""
    if not HOST:
        pytest.skip(f"{DEV} has no host access")
    x = torch.ones(4096, device=DEV)
    MODULE.manual_seed(3)
    eager = torch.nn.functional.dropout(x, 0.3, training=True).cpu()
    compiled = torch.compile(lambda t: torch.nn.functional.dropout(t, 0.3, training=True))
    MODULE.manual_seed(3)
    assert torch.equal(compiled(x).cpu(), eager)


def test_dynamic_shapes_compile_once():
    counter = CompileCounterWithBackend("inductor")
    model = mlp().to(DEV)
    compiled = torch.compile(model, backend=counter, dynamic=True)
    counts = []
    with torch.no_grad():
        for batch in (3, 5, 9):
            x = torch.randn(batch, 16, device=DEV)
            torch.testing.assert_close(compiled(x).cpu(), model(x).cpu(), **TOL)
            counts.append(counter.frame_count)
    assert counts[0] > 0 and counts == [counts[0]] * 3  # new batch sizes reuse the first graphs


def test_new_dtype_recompiles():
    counter = CompileCounterWithBackend("inductor")
    compiled = torch.compile(lambda t: torch.tanh(t) * t + 1, backend=counter)
    counts = []
    for dtype in (torch.float32, torch.float64, torch.float32):
        x = torch.randn(32, dtype=dtype, device=DEV)
        result = compiled(x)
        assert result.dtype == dtype and result.device.type == DEV
        torch.testing.assert_close(result.cpu(), torch.tanh(x.cpu()) * x.cpu() + 1)
        counts.append(counter.frame_count)
    assert counts == [1, 2, 2]  # float64 recompiles; float32 again reuses the first graph


def test_device_queries_streams_and_events_trace_without_breaks():
    def f(x: torch.Tensor) -> torch.Tensor:
        if not MODULE.is_available() or MODULE.device_count() < 1:
            return x
        stream = MODULE.current_stream()
        event = torch.Event(device=DEV)
        y = x @ x
        event.record(stream)
        event.wait(stream)
        return y + 1

    x = torch.randn(16, 16, device=DEV)
    compiled = torch.compile(f, fullgraph=True)
    torch.testing.assert_close(compiled(x).cpu(), x.cpu() @ x.cpu() + 1, **TOL)


def test_stream_context_traces():
    side = MODULE.Stream()

    def f(x: torch.Tensor) -> torch.Tensor:
        with MODULE.stream(side):
            y = x.sin()
        MODULE.current_stream().wait_stream(side)
        return y.cos()

    x = torch.randn(16, device=DEV)
    side.wait_stream(MODULE.current_stream())
    result = torch.compile(f)(x)
    torch.testing.assert_close(result.cpu(), x.cpu().sin().cos())


def test_dynamo_knows_the_device():
    from torch._dynamo.device_interface import get_interface_for_device

    interface = get_interface_for_device(DEV)
    assert interface.device_count() == MODULE.device_count()
    assert interface.is_available() and interface.current_device() == MODULE.current_device()
    assert isinstance(interface.current_stream(), torch.Stream)
    assert interface.get_raw_stream(0) == MODULE.current_stream(0).stream_id
    assert interface.Worker.get_device_properties(0).name == MODULE.get_device_name(0)
    assert get_interface_for_device(f"{DEV}:0") is interface


def test_cpu_graphs_in_the_same_process_are_unchanged():
    """The device's policy is per graph: a CPU graph still gets Inductor's C++ kernels."""
    _, code = run_and_get_code(torch.compile(lambda t: torch.relu(t) + 1), torch.randn(8))
    assert "cpp_fused" in code[0] and "tb_host_barrier" not in code[0]


def test_inductor_keeps_the_devices_cache_key_config():
    # However Inductor registers the device (its attributes up to torch 2.14, the
    # _inductor_backend_init hook from 2.15, where the attributes would drop the config), the
    # device's backend carries torch_backend's record of how its kernels run.
    from torch_backend import _inductor_config

    x = torch.randn(8, device=DEV)
    torch.testing.assert_close(torch.compile(lambda t: t * 2 + 1)(x).cpu(), x.cpu() * 2 + 1)
    inductor_common.init_backend_registration()
    assert inductor_common.custom_backend_codegen_configs[DEV] is _inductor_config
    assert _inductor_config.kernels == tb_compile._config_record()["kernels"]


@pytest.mark.skipif(
    not hasattr(inductor_common, "get_compile_option_owner"),
    reason="device-namespaced compile options: torch 2.15",
)
def test_the_config_record_is_no_compile_option():
    recorded = tb_compile._config_record()["kernels"]
    other = "none" if recorded != "none" else "queued"
    compiled = torch.compile(lambda t: t - 1, options={f"{DEV}.kernels": other})
    with pytest.raises(Exception, match=rf"'{DEV}.kernels' is torch_backend's record"):
        compiled(torch.randn(4, device=DEV))


@pytest.mark.skipif(
    not hasattr(torch.compiler.config, "compile_on_one_rank"),
    reason="compile_on_one_rank: torch 2.14",
)
def test_compile_on_one_rank_follows_the_current_device(two_devices):
    # One wrapper for every rank (each with its own current device): its buffers go to the
    # current device, not to the one the graph was compiled on (a GPU's wrapper resolves its
    # device guard at run time).
    x = torch.randn(16, device=f"{DEV}:1")
    with torch.compiler.config.patch(compile_on_one_rank=True), MODULE.device(1):
        compiled = torch.compile(lambda t: (t * 3).relu() + 1)
        result, code = run_and_get_code(compiled, x)
    assert f"device='{DEV}:1'" not in code[0] and f"device='{DEV}'" in code[0]
    assert result.device == x.device
    torch.testing.assert_close(result.cpu(), (x.cpu() * 3).relu() + 1)


def test_a_graph_on_the_second_device_returns_tensors_there(two_devices):
    x = torch.randn(16, device=f"{DEV}:1")
    result, code = run_and_get_code(torch.compile(lambda t: (t * 3).relu() + 1), x)
    assert result.device == x.device, "the compiled graph allocated on the current device"
    assert f"device='{DEV}:1'" in code[0]
    torch.testing.assert_close(result.cpu(), (x.cpu() * 3).relu() + 1)


def test_cpp_wrapper_is_refused_by_name():
    compiled = torch.compile(lambda t: t + 1, options={"cpp_wrapper": True})
    refused = rf"(?i)device {DEV} not supported|not supported on '{DEV}'"
    with pytest.raises(Exception, match=refused):
        compiled(torch.randn(4, device=DEV))


@pytest.mark.parametrize("name", ["gpt2", "resnet18"])
def test_zoo_models_compile_to_opencl_kernels(name):
    """GPT-2 (HF) training step and resnet18's forward, compiled on a device that builds OpenCL
    C: every graph's fused work runs as generated kernels (their count is reported), none
    through the CPU, and the results equal the CPU's."""
    if not OPENCL:
        pytest.skip(f"{DEV} builds no OpenCL C programs")
    import sys

    sys.path.insert(0, str(REPO / "examples"))
    try:
        import zoo
    finally:
        sys.path.pop(0)
    from torch_backend import inductor_opencl

    case = zoo.CASES[name]
    model, batch = zoo.build(case)
    device_model = copy.deepcopy(model).to(DEV)
    device_batch = zoo.to_device(batch, DEV)
    built = inductor_opencl.kernels_built()
    torch_backend.reset_fallback_counts()
    if name == "resnet18":
        model.eval()
        device_model.eval()
        with torch.no_grad():
            expected = model(batch["x"])
            got = torch.compile(device_model)(device_batch["x"])
        torch.testing.assert_close(got.cpu(), expected, atol=case.atol, rtol=case.rtol)
    else:

        def step(m: torch.nn.Module, b: dict) -> torch.Tensor:
            _, loss = case.step(m, b)
            loss.backward()
            return loss

        expected = step(model, batch)
        got = torch.compile(step)(device_model, device_batch)
        torch.testing.assert_close(got.cpu(), expected, atol=case.atol, rtol=case.rtol)
        for (pname, p), q in zip(model.named_parameters(), device_model.parameters(), strict=True):
            torch.testing.assert_close(
                q.grad.cpu(), p.grad, atol=case.atol, rtol=case.rtol, msg=pname
            )
    kernels = inductor_opencl.kernels_built() - built
    GENERATED.append(f"{name}: {kernels} OpenCL C kernels generated, 0 CPU fallbacks")
    assert kernels >= 10
    assert torch_backend.fallback_counts() == {}
