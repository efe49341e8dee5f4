"""torch.profiler's device timeline (csrc/profiler/Profiler.cpp): every kernel, copy, memset
and graph replay the runtime enqueues is a device activity with device-side times, on its
stream's row, linked to the CPU operator that launched it; key_averages() shows device time
per operator; the chrome trace has the device rows, the flow arrows and the allocator's memory
events; the legacy profiler (use_kineto=False) times operators on the device too."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from conftest import DEV, MODULE
from torch.profiler import ProfilerActivity, profile

import torch_backend

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]


def _trace(prof, tmp_path: Path) -> list[dict]:
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    return json.loads(path.read_text())["traceEvents"]


def _training_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    model = model.to(DEV)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 64, device=DEV), torch.randn(32, 8, device=DEV)

    def step() -> None:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()

    step()  # warm-up: lazily created state is not part of the profile
    MODULE.synchronize()
    return step


def test_each_kernel_of_a_training_step_is_on_the_device_row_inside_its_op(tmp_path):
    step = _training_step()
    before = dict(torch_backend.kernel_counts())
    with profile(activities=ACTIVITIES) as prof:
        step()
        MODULE.synchronize()
    after = dict(torch_backend.kernel_counts())
    launched = Counter({k: n - before.get(k, 0) for k, n in after.items() if n > before.get(k, 0)})
    if not launched:
        pytest.skip(f"{DEV} has no kernels: its timeline holds copies only")
    events = _trace(prof, tmp_path)

    device_rows = {
        e["pid"]
        for e in events
        if e.get("ph") == "M" and e["name"] == "process_name" and e["args"]["name"] == f"{DEV} 0"
    }
    assert device_rows, "no process row named for the device"
    kernels = [e for e in events if e.get("cat") == "kernel"]
    # Every operator kernel launched, once each; besides them, the runtime's own uses of the
    # vendor's "copy_" and "fill_.Scalar" (vendor.h), which kernel_counts() does not count.
    timed = Counter(e["name"] for e in kernels if e["name"] not in ("copy_", "fill_.Scalar"))
    assert launched and timed == launched, (timed, launched)
    ops = {e["args"]["External id"]: e for e in events if e.get("cat") == "cpu_op"}
    launches = {
        e["args"]["correlation"]: e for e in events if e.get("cat") == "privateuse1_runtime"
    }
    flow_starts = {e["id"] for e in events if e.get("cat") == "ac2g" and e["ph"] == "s"}
    flow_ends = {e["id"] for e in events if e.get("cat") == "ac2g" and e["ph"] == "f"}
    for kernel in kernels:
        name, correlation = kernel["name"], kernel["args"]["correlation"]
        assert kernel["pid"] in device_rows, name
        assert kernel["dur"] > 0, name
        # As CUDA's: "correlation" pairs one launch with its work (test_compile: one per launch
        # when an operator launches several), "External id" names the operator.
        op, launch = ops[kernel["args"]["External id"]], launches[correlation]
        assert launch["args"]["External id"] == kernel["args"]["External id"], name
        # The launch lies inside its operator's span, on the operator's thread; the work starts
        # on the device after the operator started.  (Torch times operators with its own
        # approximate clock: 1 us of slack for the two clocks.)
        slack = 1.0
        assert op["tid"] == launch["tid"], name
        assert op["ts"] - slack <= launch["ts"], name
        assert launch["ts"] + launch["dur"] <= op["ts"] + op["dur"] + slack, name
        assert kernel["ts"] >= op["ts"] - slack, name
        assert correlation in flow_starts and correlation in flow_ends, name


def test_key_averages_show_device_time_per_operator():
    step = _training_step()
    with profile(activities=ACTIVITIES) as prof:
        step()
        MODULE.synchronize()
    averages = {a.key: a for a in prof.key_averages()}
    if "addmm.out" not in averages:
        pytest.skip(f"{DEV} has no addmm kernel")
    assert averages["aten::addmm"].device_time_total > 0
    total = sum(a.self_device_time_total for a in prof.key_averages())
    assert total > 0
    table = prof.key_averages().table(sort_by="self_device_time_total", row_limit=5)
    assert f"Self {DEV.upper()}" in table, table


def test_copies_and_memsets_are_device_activities(tmp_path):
    with profile(activities=ACTIVITIES) as prof:
        z = torch.zeros(1000, device=DEV)
        host = z.cpu()
        back = host.to(DEV)
        MODULE.synchronize()
    events = _trace(prof, tmp_path)
    memcpy = [e["name"] for e in events if e.get("cat") == "gpu_memcpy"]
    assert any("DtoH" in name for name in memcpy) and any("HtoD" in name for name in memcpy)
    assert back.device.type == DEV
    assert [e for e in events if e.get("cat") == "gpu_memset" and e["dur"] > 0]


def test_memory_events_of_the_caching_allocator(tmp_path):
    with profile(activities=ACTIVITIES, profile_memory=True) as prof:
        x = torch.empty(1 << 16, device=DEV)
        del x
    events = _trace(prof, tmp_path)
    memory = [
        e for e in events if e.get("name") == "[memory]" and e["args"].get("Device Type") == 20
    ]
    sizes = [e["args"]["Bytes"] for e in memory]
    assert (1 << 18) in [abs(s) for s in sizes] or any(s >= 1 << 18 for s in sizes), sizes
    assert any(s < 0 for s in sizes), "the free is not reported"


@pytest.mark.skipif(DEV not in ("emu", "npu"), reason="graphs are emu's and npu's")
def test_a_graph_replay_is_one_device_activity(tmp_path):
    x = torch.ones(64, device=DEV)
    graph = torch.accelerator.Graph()
    with torch.Stream(device=DEV), graph:
        y = x * 2 + 1
    with profile(activities=ACTIVITIES) as prof:
        graph.replay()
        MODULE.synchronize()
    events = _trace(prof, tmp_path)
    replays = [e for e in events if e.get("cat") == "kernel" and e["name"] == "graph replay"]
    assert len(replays) == 1 and replays[0]["dur"] > 0
    assert y.cpu().tolist() == [3.0] * 64


def test_legacy_profiler_times_operators_on_the_device():
    x = torch.randn(64, 64, device=DEV)
    with torch.autograd.profiler.profile(use_device=DEV, use_kineto=False) as prof:
        (x @ x).sum()
        MODULE.synchronize()
    mm = [e for e in prof.function_events if e.name == "aten::mm"]
    assert mm and mm[0].device_time_total > 0


def test_nothing_is_recorded_without_a_profile():
    # The runtime times launches only while a profile asks for the device's activity.
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        (torch.ones(8, device=DEV) + 1).cpu()
    on_device = [
        e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1
    ]
    assert not on_device
