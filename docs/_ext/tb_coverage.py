"""Sphinx directive ``tb-op-coverage``: the operator coverage table of every bundled vendor.

Each vendor is loaded in its own Python process (one vendor per process, as in PyTorch), which
prints ``torch_backend.op_coverage()`` as JSON; the directive renders one row per operator and
one column per vendor.  A vendor that fails to load fails the docs build.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from tb_tables import table

_PROBE = "import json, torch_backend; print(json.dumps(torch_backend.op_coverage()))"


def _bundled_vendors() -> list[str]:
    import torch_backend

    return [v for v in torch_backend.bundled_vendors() if v != "faulty"]


def _coverage(vendor: str) -> dict[str, str]:
    env = dict(os.environ, TORCH_BACKEND_VENDOR=vendor)
    result = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"op coverage of vendor '{vendor}' failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


class OpCoverage(Directive):
    has_content = False

    def run(self) -> list[nodes.Node]:
        vendors = _bundled_vendors()
        tables = {vendor: _coverage(vendor) for vendor in vendors}
        ops = sorted({op for table in tables.values() for op in table})
        summary = nodes.paragraph()
        counts = []
        for vendor in vendors:
            states = list(tables[vendor].values())
            native, composite = states.count("native"), states.count("composite")
            counts.append(
                f"{vendor}: {native} of {len(states)} operators native, {composite} composite"
            )
        summary += nodes.Text("; ".join(counts) + ".")

        rows = [[op, *(tables[v].get(op, "-") for v in vendors)] for op in ops]
        widths = [1] * (1 + len(vendors))
        return [summary, table(["operator", *vendors], rows, widths, "tb-op-coverage")]


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("tb-op-coverage", OpCoverage)
    return {"version": "1", "parallel_read_safe": True}
