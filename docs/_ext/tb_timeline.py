"""Sphinx directive ``tb-timeline``: one training step's timeline, drawn from the trace that
``torch.profiler`` exports on this build (examples/profile_step.py), with its
``key_averages()`` table.

The docs build runs the example against the installed package on the bundled emu vendor, so
the picture is the profiler's output of this tree, not a drawing: a build whose profiler lost
its device rows fails here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx

_ROOT = Path(__file__).resolve().parents[2]
_SCRIPT = _ROOT / "examples" / "profile_step.py"


class Timeline(Directive):
    has_content = False

    def run(self) -> list[nodes.Node]:
        env = self.state.document.settings.env
        env.note_dependency(str(_SCRIPT))
        with tempfile.TemporaryDirectory() as scratch:
            trace, svg = Path(scratch) / "step.json", Path(scratch) / "step.svg"
            environment = dict(os.environ, TORCH_BACKEND_VENDOR="emu")
            result = subprocess.run(
                [sys.executable, str(_SCRIPT), "--trace", str(trace), "--svg", str(svg)],
                capture_output=True, text=True, env=environment, timeout=600, check=False,
            )  # fmt: skip
            if result.returncode != 0 or not svg.is_file():
                raise self.error(f"examples/profile_step.py failed:\n{result.stderr[-2000:]}")
            picture = svg.read_text()
        table = result.stdout.split("wrote ")[0].rstrip()
        listing = nodes.literal_block(table, table)
        listing["language"] = "none"
        return [nodes.raw("", f'<div class="tb-timeline">{picture}</div>', format="html"), listing]


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("tb-timeline", Timeline)
    return {"parallel_read_safe": True}
