"""Sphinx directive ``tb-bench``: the table and plot of the last ``make bench`` of this tree.

``make bench`` writes build/bench.json and build/bench.png (``TB_BENCH_JSON`` and
``TB_BENCH_PNG`` point elsewhere).  Benchmarks take minutes and their figures belong to the
machine that ran them, so the docs build does not run them: it shows the recorded run, with
the machine it ran on, or says how to make one when there is none.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from tb_tables import no_run_note, table

_ROOT = Path(__file__).resolve().parents[2]


def _paths() -> tuple[Path, Path]:
    json_path = Path(os.environ.get("TB_BENCH_JSON", _ROOT / "build" / "bench.json"))
    png_path = Path(os.environ.get("TB_BENCH_PNG", json_path.with_suffix(".png")))
    return json_path, png_path


class Bench(Directive):
    has_content = False

    def run(self) -> list[nodes.Node]:
        json_path, png_path = _paths()
        env = self.state.document.settings.env
        env.note_dependency(str(json_path))
        if not json_path.is_file():
            return [
                no_run_note("benchmark run", "make bench", "build/bench.json and build/bench.png")
            ]
        data = json.loads(json_path.read_text())
        info = data["machine"]
        vendor = info["vendor"]
        out: list[nodes.Node] = [
            nodes.paragraph(
                text=f"Recorded by make bench: device '{vendor['device_type']}' "
                f"({vendor['vendor']} {vendor['version']}, ABI {vendor['abi_version']}) "
                f"against PyTorch {info['torch']} on the CPU ({info['torch_threads']} threads), "
                f"{info['cpu']}, {info['cores']} cores, Python {info['python']}."
            )
        ]
        if png_path.is_file():
            # The plot lies outside the sources: _copy_plot puts it into _static/ at the end.
            out.append(
                nodes.raw(
                    "",
                    '<img class="tb-bench-plot" src="_static/bench.png" '
                    'alt="each benchmark row against its aim" style="max-width:100%">',
                    format="html",
                )
            )
        out.append(self._table(data["rows"], vendor["device_type"]))
        return out

    @staticmethod
    def _table(rows: list[dict], device: str) -> nodes.table:
        header = ["benchmark", device, "reference", "unit", "ratio", "aim", "met"]
        cells = [
            [
                f"{r['group']}: {r['name']}",
                f"{r['device']:.2f}",
                f"{r['reference_name']} {r['reference']:.2f}",
                r["unit"],
                f"{r['ratio']:.2f}x",
                r["target"],
                r.get("met", ""),
            ]
            for r in rows
        ]
        return table(header, cells, [8, 2, 3, 2, 2, 2, 1], "tb-bench")


def _copy_plot(app: Sphinx, exception: Exception | None) -> None:
    _, png_path = _paths()
    if exception is None and app.builder.format == "html" and png_path.is_file():
        static = Path(app.outdir) / "_static"
        static.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(png_path, static / "bench.png")


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("tb-bench", Bench)
    app.connect("build-finished", _copy_plot)
    return {"version": "1", "parallel_read_safe": True}
