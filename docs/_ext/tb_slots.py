"""Sphinx directive ``tb-slot-table``: every function slot of the vendor ABI, one row each.

The rows come from ``include/torch_backend/vendor_slots.h``'s lists as the installed
``tb-conformance --slots --json`` prints them (the tool compiles the lists in), so the table
is generated at every docs build and can never disagree with the header; nothing generated is
committed.  A tool that cannot list the slots fails the docs build.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx


def _slots() -> list[dict[str, object]]:
    import torch_backend

    tool = torch_backend.conformance_executable()
    with tempfile.TemporaryDirectory() as tmp:
        listing = Path(tmp) / "slots.json"
        result = subprocess.run(
            [str(tool), "--slots", "--json", str(listing)],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"{tool} --slots failed:\n{result.stderr}")
        return json.loads(listing.read_text())


class SlotTable(Directive):
    has_content = False

    def run(self) -> list[nodes.Node]:
        slots = _slots()
        required = sum(1 for slot in slots if slot["required"])
        summary = nodes.paragraph(
            text=f"{len(slots)} slots: {required} required, {len(slots) - required} optional."
        )
        table = nodes.table(classes=["tb-slot-table"])
        columns = ["slot", "kind", "since", "fake's function", "type"]
        group = nodes.tgroup(cols=len(columns))
        table += group
        for width in (3, 1, 1, 3, 6):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        head += self._row([nodes.Text(c) for c in columns])
        body = nodes.tbody()
        group += body
        for slot in slots:
            owner = "tb_vendor" if slot["group"] == "vendor" else f"tb_{slot['group']}_api"
            body += self._row(
                [
                    nodes.literal(text=f"{owner}::{slot['name']}"),
                    nodes.Text("required" if slot["required"] else "optional"),
                    nodes.Text(str(slot["since"])),
                    nodes.literal(text=str(slot["fake"])),
                    nodes.literal(text=f"{slot['return_type']} (*){slot['params']}"),
                ]
            )
        return [summary, table]

    @staticmethod
    def _row(cells: list[nodes.Node]) -> nodes.row:
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            paragraph = nodes.paragraph()
            paragraph += cell
            entry += paragraph
            row += entry
        return row


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("tb-slot-table", SlotTable)
    return {"version": "1", "parallel_read_safe": True}
