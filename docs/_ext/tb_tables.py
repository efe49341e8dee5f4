"""Docutils nodes the build-time pages share: a table of text cells, and the note a page shows
when the run it reports on (make bench, make models) has not been made."""

from __future__ import annotations

from docutils import nodes


def table(header: list[str], rows: list[list[str]], widths: list[int], css: str) -> nodes.table:
    """A table with `header` and one row of paragraphs per entry of `rows`."""
    result = nodes.table(classes=[css])
    group = nodes.tgroup(cols=len(header))
    result += group
    for width in widths:
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    group += head
    body = nodes.tbody()
    group += body
    for cells, parent in [(header, head), *((r, body) for r in rows)]:
        row = nodes.row()
        for text in cells:
            entry = nodes.entry()
            entry += nodes.paragraph(text=text)
            row += entry
        parent += row
    return result


def no_run_note(what: str, command: str, writes: str) -> nodes.note:
    """Says that this build has no `what` and how to make one."""
    note = nodes.note()
    note += nodes.paragraph(
        text=f"This build of the documentation has no {what}: run `{command}` "
        f"(it writes {writes}), then `make docs`."
    )
    return note
