"""Every internal link of the built documentation resolves: the page it names exists, and so
does the anchor (an element with that id) when it names one.

Run by ``make test`` after ``make docs`` (the HTML lives in build/docs/html, or in
``TB_DOCS_HTML``).  External links (http, https, mailto) are not followed: the docs build
offline.
"""

from __future__ import annotations

import os
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

REPO = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("TB_DOCS_HTML", REPO / "build" / "docs" / "html"))


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name"):
            if values.get(key):
                self.ids.add(values[key] or "")
        if tag in ("a", "link") and values.get("href"):
            self.links.append(values["href"] or "")


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def broken_links(root: Path) -> list[str]:
    # _static/ holds the theme's files (one is a Jinja macro file named .html), not pages.
    pages = {
        path: _parse(path)
        for path in sorted(root.rglob("*.html"))
        if path.relative_to(root).parts[0] != "_static"
    }
    broken = []
    for path, page in pages.items():
        for href in page.links:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            where = f"{path.relative_to(root)}: {href}"
            if not target.exists():
                broken.append(f"{where} (no {target.relative_to(root.resolve())})")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{where} (no anchor '{parts.fragment}')")
    return broken


def test_every_internal_link_resolves():
    assert (HTML / "index.html").is_file(), f"{HTML} has no index.html: run `make docs` first"
    broken = broken_links(HTML.resolve())
    assert not broken, f"{len(broken)} broken internal links:\n" + "\n".join(broken[:40])


def test_the_link_check_finds_a_broken_link(tmp_path):
    (tmp_path / "a.html").write_text(
        '<a id="top" href="b.html#here">b</a> <a href="a.html#top">self</a> '
        '<a href="missing.html">x</a> <a href="b.html#nowhere">y</a> '
        '<a href="https://pytorch.org/">external</a>'
    )
    (tmp_path / "b.html").write_text('<p id="here">b</p>')
    broken = broken_links(tmp_path.resolve())
    assert len(broken) == 2, broken
    assert any("missing.html" in b for b in broken) and any("nowhere" in b for b in broken)
