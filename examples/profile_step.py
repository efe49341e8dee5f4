"""Profile one training step on the device and draw its timeline.

    python examples/profile_step.py [--trace step.json] [--svg step.svg]

Runs a small MLP's training step (Linear, ReLU, Dropout, Linear; fused AdamW) under
``torch.profiler`` with the CPU and the device, prints ``key_averages()`` sorted by device time,
writes the Chrome trace (open it in chrome://tracing or Perfetto) and, with ``--svg``, draws
the trace as an SVG: the CPU threads' operators on top, each device stream's kernels, copies
and memsets below, and an arrow from each launch to the work it enqueued.  The docs' "Graphs
and profiling" page shows the picture this draws.
"""

from __future__ import annotations

import argparse
import html
import json
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import torch_backend

ROW_HEIGHT, LABEL_WIDTH, WIDTH = 22, 150, 1100
COLORS = {"cpu_op": "#9fc5e8", "privateuse1_runtime": "#f6b26b", "kernel": "#93c47d",
          "gpu_memcpy": "#c27ba0", "gpu_memset": "#ffd966"}  # fmt: skip


def profile_step(device: str) -> torch.profiler.profile:
    """One warmed-up training step, profiled."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Dropout(0.1), torch.nn.Linear(128, 8)
    ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    x, y = torch.randn(32, 64, device=device), torch.randn(32, 8, device=device)

    def step() -> None:
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()

    for _ in range(2):
        step()
    torch.accelerator.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        step()
        torch.accelerator.synchronize()
    return prof


def _depths(spans: list[dict]) -> list[tuple[dict, int]]:
    """Nesting depth of each span of one thread (spans sorted by start)."""
    out, stack = [], []
    for span in sorted(spans, key=lambda e: (e["ts"], -e["dur"])):
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= span["ts"]:
            stack.pop()
        out.append((span, len(stack)))
        stack.append(span)
    return out


def draw_svg(events: list[dict], device: str, max_depth: int = 3) -> str:
    """The trace's CPU operators (first `max_depth` levels) and device activities as SVG."""
    boxes = [e for e in events if e.get("ph") == "X" and e.get("cat") in COLORS]
    device_work = [e for e in boxes if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset")]
    if not device_work:
        raise ValueError("the trace has no device activity")
    start = min(e["ts"] for e in boxes if e["cat"] == "cpu_op")
    end = max(e["ts"] + e["dur"] for e in device_work + [b for b in boxes if b["cat"] == "cpu_op"])
    scale = (WIDTH - LABEL_WIDTH - 10) / max(end - start, 1e-9)

    def x(ts: float) -> float:
        return LABEL_WIDTH + (ts - start) * scale

    rows: list[tuple[str, list[tuple[dict, int]]]] = []  # (label, [(event, level)])
    names: dict[int, str] = {}  # a thread's most specific name ("pt_autograd_0" over "python")
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            name = e["args"]["name"].split(" (")[-1].rstrip(")")
            if e["tid"] not in names or names[e["tid"]] == "python":
                names[e["tid"]] = name
    ops = [b for b in boxes if b["cat"] == "cpu_op"]
    launches = [b for b in boxes if b["cat"] == "privateuse1_runtime"]
    for tid in sorted({e["tid"] for e in ops + launches}):
        # The operators' first levels, then a lane of the launches they made.
        levels = [(e, d) for e, d in _depths([e for e in ops if e["tid"] == tid]) if d < max_depth]
        lane = 1 + max((d for _, d in levels), default=-1)
        levels += [(e, lane) for e in launches if e["tid"] == tid]
        if levels:
            rows.append((f"CPU: {names.get(tid, tid)}", levels))
    for pid, tid in sorted({(e["pid"], e["tid"]) for e in device_work}):
        work = [(e, 0) for e in device_work if (e["pid"], e["tid"]) == (pid, tid)]
        rows.append((f"{device} {pid} stream {tid}", work))

    parts, y, where = [], 10, {}
    for label, items in rows:
        depth = 1 + max(level for _, level in items)
        parts.append(f'<text x="4" y="{y + 15}" font-size="12">{html.escape(label)}</text>')
        for e, level in items:
            top = y + level * ROW_HEIGHT
            left, width = x(e["ts"]), max(e["dur"] * scale, 1.0)
            where[(e["cat"], e["args"].get("External id"))] = (left, top, width)
            title = html.escape(f"{e['name']} ({e['dur']:.1f} us)")
            parts.append(
                f'<rect x="{left:.1f}" y="{top + 2}" width="{width:.1f}" height="{ROW_HEIGHT - 4}" '
                f'fill="{COLORS[e["cat"]]}" stroke="#555" stroke-width="0.4"><title>{title}'
                "</title></rect>"
            )
            if width > 7 * len(e["name"]):
                parts.append(
                    f'<text x="{left + 2:.1f}" y="{top + 15}" font-size="10">'
                    f"{html.escape(e['name'])}</text>"
                )
        y += depth * ROW_HEIGHT + 8
    for e in device_work:  # launch -> work
        launch = where.get(("privateuse1_runtime", e["args"].get("External id")))
        work = where.get((e["cat"], e["args"].get("External id")))
        if launch and work:
            parts.append(
                f'<line x1="{launch[0]:.1f}" y1="{launch[1] + ROW_HEIGHT - 2}" x2="{work[0]:.1f}" '
                f'y2="{work[1] + 2}" stroke="#999" stroke-width="0.6"/>'
            )
    span_us = end - start
    parts.append(
        f'<text x="{LABEL_WIDTH}" y="{y + 12}" font-size="11">0 us</text>'
        f'<text x="{WIDTH - 70}" y="{y + 12}" font-size="11">{span_us:.0f} us</text>'
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{y + 20}" '
        f'font-family="sans-serif">{"".join(parts)}</svg>\n'
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=Path("step.json"))
    parser.add_argument("--svg", type=Path, help="also draw the timeline here")
    arguments = parser.parse_args()
    device = torch_backend.vendor_info()["device_type"]
    prof = profile_step(device)
    print(prof.key_averages().table(sort_by="self_device_time_total", row_limit=15))
    prof.export_chrome_trace(str(arguments.trace))
    print(f"wrote {arguments.trace}")
    if arguments.svg:
        events = json.loads(arguments.trace.read_text())["traceEvents"]
        arguments.svg.write_text(draw_svg(events, device))
        print(f"wrote {arguments.svg}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
