"""Sphinx directive ``tb-run``: runs an example of the repository while the documentation
builds, and shows its source and what it printed -- so the page's example is one that works.

    .. tb-run:: examples/compile_kernel.py
       :env: TORCH_BACKEND_VENDOR=opencl

A run that fails (its exit status is not 0) fails the build with the example's output.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

_ROOT = Path(__file__).resolve().parents[2]


class Run(Directive):
    required_arguments = 1
    option_spec: ClassVar[dict[str, Callable[[str], str]]] = {"env": directives.unchanged}
    has_content = False

    def run(self) -> list[nodes.Node]:
        path = _ROOT / self.arguments[0]
        self.state.document.settings.env.note_dependency(str(path))
        environment = dict(os.environ)
        for assignment in (self.options.get("env") or "").split():
            name, _, value = assignment.partition("=")
            environment[name] = value
        result = subprocess.run(
            [sys.executable, str(path)],
            capture_output=True,
            text=True,
            env=environment,
            cwd=_ROOT,
            timeout=600,
            check=False,
        )
        if result.returncode != 0:
            raise ExtensionError(
                f"tb-run: {self.arguments[0]} exited with {result.returncode}:\n"
                f"{result.stdout[-2000:]}{result.stderr[-2000:]}"
            )
        source = nodes.literal_block(path.read_text(), path.read_text(), language="python")
        output = nodes.literal_block(result.stdout, result.stdout, language="text")
        caption = nodes.paragraph(
            text=f"What it printed while these pages were built "
            f"({self.options.get('env') or 'default vendor'}):"
        )
        return [source, caption, output]


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("tb-run", Run)
    return {"parallel_read_safe": True, "version": "1"}
