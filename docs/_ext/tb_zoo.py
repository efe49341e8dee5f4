"""Sphinx directive ``tb-zoo``: the model zoo (examples/zoo.py) as a table, and the results of
the last ``make models`` of this tree when there is one.

The models and what each exercises come from ``zoo.CASES``, so the page lists what the tests
run.  The results (build/zoo.json, or ``TB_ZOO_JSON``) are one training step per model on the
device against the CPU: the largest difference, the tolerance, the step times and the calls
that went through the CPU fallback.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from tb_tables import no_run_note, table

_ROOT = Path(__file__).resolve().parents[2]


class Zoo(Directive):
    has_content = False

    def run(self) -> list[nodes.Node]:
        sys.path.insert(0, str(_ROOT / "examples"))
        try:
            import zoo
        finally:
            sys.path.pop(0)
        env = self.state.document.settings.env
        env.note_dependency(str(_ROOT / "examples" / "zoo.py"))
        cases = [
            [name, case.about, f"{case.atol:g} + {case.rtol:g} x |expected|"]
            for name, case in zoo.CASES.items()
        ]
        out: list[nodes.Node] = [
            table(["model", "what it is", "tolerance"], cases, [2, 8, 3], "tb-zoo")
        ]

        results = Path(os.environ.get("TB_ZOO_JSON", _ROOT / "build" / "zoo.json"))
        env.note_dependency(str(results))
        if not results.is_file():
            return [*out, no_run_note("zoo run", "make models", "build/zoo.json")]
        data = json.loads(results.read_text())
        info = data["machine"]
        out.append(
            nodes.paragraph(
                text=f"Last `make models` of this tree: device '{info['device']}' "
                f"({info['vendor']}) against PyTorch {info['torch']} on the CPU "
                f"({info['threads']} threads), one SGD step per model."
            )
        )
        rows = []
        for r in data["rows"]:
            timing = (
                [
                    f"{r['device_ms']:.1f}",
                    f"{r['cpu_ms']:.1f}",
                    f"{r['device_ms'] / r['cpu_ms']:.2f}x",
                ]
                if "device_ms" in r
                else ["-", "-", "-"]
            )
            rows.append(
                [
                    r["model"],
                    "yes" if r["matches"] else "no",
                    f"{r['max_diff']:.2e}",
                    *timing,
                    str(r["fallback_calls"]),
                ]
            )
        header = ["model", "matches", "max diff", "device ms", "cpu ms", "ratio", "fallbacks"]
        out.append(table(header, rows, [3, 2, 2, 2, 2, 2, 2], "tb-zoo"))
        return out


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("tb-zoo", Zoo)
    return {"version": "1", "parallel_read_safe": True}
