"""The benchmark rows drawn against their aims: one bar per row (bench.py's JSON).

    python benchmarks/plot.py build/bench.json build/bench.png

Each bar is the row's figure as a fraction of its aim, oriented so that shorter is better: a
time ratio of 1.1x against "<= 1.3x" is 0.85, a bandwidth ratio of 5.6x against ">= 0.9x" is
0.16, 1.23 us against "<= 1 us" is 1.23.  Bars that reach past the line at 1 miss their aim
(red); the others meet it (green); rows without an aim are grey, drawn as their plain ratio.
The scale is logarithmic, so 2x over and 2x under the aim are the same length.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def against_aim(row: dict) -> tuple[float, bool | None]:
    """(the row's figure over its aim, shorter better; whether it meets it, None: no aim)."""
    if not row["target"]:
        return row["ratio"], None
    relation, bound, *unit = row["target"].split()
    value = row["device"] if unit else row["ratio"]
    limit = float(bound.rstrip("x"))
    score = value / limit if relation == "<=" else limit / value
    return score, score <= 1.0


def write(rows: list[dict], machine: dict, path: Path) -> None:
    """Draws `rows` (bench.py's dicts) to the PNG `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    labels = [f"{r['group']}: {r['name']}  ({r['target'] or 'no aim'})" for r in rows]
    scores, colours = [], []
    for r in rows:
        score, ok = against_aim(r)
        scores.append(score)
        colours.append("#9e9e9e" if ok is None else "#2e7d32" if ok else "#c62828")
    height = 0.32 * len(rows) + 1.6
    figure, axes = plt.subplots(figsize=(11, height), dpi=110)
    positions = list(range(len(rows)))[::-1]
    axes.barh(positions, scores, color=colours, height=0.7)
    axes.axvline(1.0, color="black", linewidth=1)
    axes.set_xscale("log")
    low, high = min(scores) / 2, max(scores) * 2
    ticks = [t for t in (0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10) if low <= t <= high]
    axes.set_xticks(ticks, [f"{t:g}" for t in ticks])
    axes.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axes.set_yticks(positions, labels, fontsize=8)
    axes.set_xlabel("figure / aim (shorter is better; past the line: missed)")
    for y, score in zip(positions, scores, strict=True):
        axes.text(score * 1.03, y, f"{score:.2f}", va="center", fontsize=7)
    met = sum(1 for r in rows if against_aim(r)[1])
    aimed = sum(1 for r in rows if r["target"])
    device = machine.get("vendor", {}).get("device_type", "device")
    axes.set_title(
        f"{device} vs its references on {machine.get('cpu', '?')}, "
        f"{machine.get('cores', '?')} cores: {met} of {aimed} aims met",
        fontsize=10,
    )
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1].strip())
        return 2
    data = json.loads(Path(sys.argv[1]).read_text())
    write(data["rows"], data["machine"], Path(sys.argv[2]))
    print(f"wrote {sys.argv[2]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
