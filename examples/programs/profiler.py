"""The profiler recipe: torch.profiler with a schedule (wait, warmup, active, repeat) and an
on_trace_ready handler that writes a Chrome trace per cycle.  Each trace must hold the device's
kernels (ProfilerActivity.PrivateUse1) linked to their operators, and only the active steps."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule

device = torch.accelerator.current_accelerator()


def main(directory: Path) -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    traces: list[Path] = []

    def on_trace_ready(prof: torch.profiler.profile) -> None:
        path = directory / f"trace-{len(traces)}.json"
        prof.export_chrome_trace(str(path))
        traces.append(path)

    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
        schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
        on_trace_ready=on_trace_ready,
    ) as prof:
        for step in range(10):
            with record_function(f"train_step_{step}"):
                x = torch.randn(32, 64, device=device)
                optimizer.zero_grad()
                F.mse_loss(model(x), torch.zeros(32, 8, device=device)).backward()
                optimizer.step()
            prof.step()
    assert len(traces) == 2, traces  # repeat=2: two cycles
    for k, path in enumerate(traces):
        events = json.loads(path.read_text())["traceEvents"]
        steps = {e["name"] for e in events if e.get("name", "").startswith("train_step_")}
        kernels = [e for e in events if e.get("cat") == "kernel"]
        expected = {f"train_step_{2 + 4 * k}", f"train_step_{3 + 4 * k}"}
        assert steps == expected, (k, steps)  # wait 1, warmup 1, active 2 per cycle
        assert len(kernels) >= 10, f"cycle {k}: {len(kernels)} device kernels"
    print(f"profiler: ok on {device} ({len(kernels)} device kernels in the last cycle)")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        main(Path(tmp))
