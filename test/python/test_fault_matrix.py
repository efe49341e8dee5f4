"""The fault matrix: a failure injected into every vendor call a training step makes -- each
slot of the table and each kernel, at its first, middle and last call of the step -- surfaces
as a RuntimeError subclass naming the call, the process survives, device memory returns to its
baseline, and the next training step succeeds.  Runs this process's vendor under the faulty
shim (backends/faulty), reconfigured between cases through its tb_faulty_configure; the matrix
is printed at the end of the run."""

from __future__ import annotations

import json

from conftest import REPO, run_python

import torch_backend

# The body of the child process: prints one JSON line per case, then "done".
SCRIPT = r"""
import ctypes, gc, json, math
import torch, torch.nn.functional as F, torch_backend

DEV = torch_backend.vendor_info()["device_type"]
M = getattr(torch, DEV)
lib = ctypes.CDLL(torch_backend.vendor_info()["library"])
lib.tb_faulty_configure.argtypes = [ctypes.c_char_p, ctypes.c_long, ctypes.c_long, ctypes.c_char_p]
lib.tb_faulty_fired.restype = ctypes.c_long

def configure(call, after=0, times=1, status=b"TB_ERROR_INTERNAL"):
    lib.tb_faulty_configure(call.encode(), after, times, status)

def counts():
    size = lib.tb_faulty_counts(None, 0)
    buffer = ctypes.create_string_buffer(size)
    lib.tb_faulty_counts(buffer, size)
    return {k: int(v) for k, v in (line.split() for line in buffer.value.decode().splitlines())}

torch.manual_seed(0)
layers = [torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)]
model = torch.nn.Sequential(*layers).to(DEV)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
side = M.Stream()

def step():
    opt.zero_grad(set_to_none=True)
    xb = x.pin_memory().to(DEV, non_blocking=True)
    yb = y.to(DEV)
    start, end = M.Event(enable_timing=True), M.Event(enable_timing=True)
    start.record()
    loss = F.cross_entropy(model(xb), yb)
    loss.backward()
    opt.step()
    end.record()
    side.wait_stream(M.current_stream())
    with M.stream(side):
        norm = torch.stack([p.detach().pow(2).sum() for p in model.parameters()]).sum()
    norm.record_stream(side)
    M.current_stream().wait_stream(side)
    end.synchronize()
    start.elapsed_time(end)
    value = loss.item() + norm.item()
    M.mem_get_info()
    M.synchronize()
    torch.accelerator.empty_cache()
    return value

for _ in range(2):
    step()
opt.zero_grad(set_to_none=True)
gc.collect(); M.synchronize()
baseline = M.memory_allocated()
lib.tb_faulty_reset_counts()
step()
calls = counts()
opt.zero_grad(set_to_none=True)
kernels = sorted(k for k in calls if k.startswith("kernel."))
slots = sorted(k for k in calls if not k.startswith("kernel.") and k != "device.count")
cases = []
for call in slots + kernels:
    n = calls[call]
    for index in sorted({0, n // 2, n - 1}):
        cases.append((call, index))
cases.append(("kernel", 0))  # whichever kernel runs first

for call, index in cases:
    status = b"TB_ERROR_OUT_OF_MEMORY" if call == "memory.device_malloc" else b"TB_ERROR_INTERNAL"
    configure(call, after=index, times=1, status=status)
    outcome = {"call": call, "index": index, "of": calls.get(call, 0)}
    try:
        step()
        outcome["raised"] = None
    except Exception as error:
        outcome["raised"] = type(error).__name__
        outcome["runtime_error"] = isinstance(error, RuntimeError)
        outcome["message"] = str(error).splitlines()[0][:160]
        outcome["names_call"] = ("faulty: injected" in str(error))
        del error
    outcome["fired"] = lib.tb_faulty_fired()
    configure("")
    opt.zero_grad(set_to_none=True)
    gc.collect()
    try:
        M.synchronize()
        torch.accelerator.empty_cache()
        outcome["memory"] = M.memory_allocated() - baseline
        outcome["next_step"] = math.isfinite(step())
    except Exception as error:
        outcome["next_step"] = False
        outcome["after"] = f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"
    opt.zero_grad(set_to_none=True)
    print(json.dumps(outcome), flush=True)
print("done", flush=True)
"""

MATRIX: list[str] = []  # printed by conftest's terminal summary

# Calls whose injected failure torch_backend absorbs, and how.
RECOVERS = {
    "memory.device_malloc": "out of memory: the caching allocator freed its cache and retried",
    "event.record": "a pinned block's free waited for its stream instead of recording an event",
    "memory.device_free": "a release path: the block is dropped and a warning logged",
    "memory.host_free": "a release path: the block is dropped and a warning logged",
    "stream.destroy": "a release path: a warning logged",
    "event.destroy": "a release path: a warning logged",
}


def test_fault_matrix():
    result = run_python(
        SCRIPT,
        TORCH_BACKEND_VENDOR="faulty",
        TORCH_BACKEND_FAULTY_VENDOR=torch_backend.vendor_info()["library"],
        TORCH_BACKEND_FAULTY_CALL="",
        PYTHONPATH=str(REPO),
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines and lines[-1] == "done", result.stdout[-3000:] + result.stderr[-3000:]
    rows = [json.loads(line) for line in lines[:-1] if line.startswith("{")]
    slots = {row["call"] for row in rows}
    # the step reaches every group of the table
    for group in ("memory.", "stream.", "event.", "device."):
        assert any(s.startswith(group) for s in slots), (group, sorted(slots))
    vendor = torch_backend.vendor_info()["vendor"]
    MATRIX.append(f"fault matrix over '{vendor}' ({len(rows)} cases): call [index of n]: outcome")
    problems = []
    for row in rows:
        raised = row["raised"]
        if raised:
            outcome = f"{raised}: {row['message']}"
        elif not row["fired"]:
            outcome = "not reached (the call ran fewer times in this step)"
        else:
            outcome = f"recovered: {RECOVERS.get(row['call'], 'UNEXPECTED: the failure vanished')}"
        status = "ok"
        if row["fired"] and not raised and row["call"] not in RECOVERS:
            status = "FAILURE LOST"
        if raised and not (row["runtime_error"] and row["names_call"]):
            status = "WRONG CLASS OR MESSAGE"
        if row.get("memory", 0) != 0:
            status = f"LEAKED {row['memory']} bytes"
        if not row["next_step"]:
            status = f"NEXT STEP FAILED: {row.get('after')}"
        MATRIX.append(f"  {row['call']} [{row['index']} of {row['of']}]: {outcome} -- {status}")
        if status != "ok":
            problems.append(MATRIX[-1])
    assert not problems, "\n".join(problems)
    assert sum(1 for row in rows if row["raised"]) > len(rows) // 2, "most cases must raise"
