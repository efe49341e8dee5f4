"""The built documentation at a laptop's width (1280 px) and a phone's (390 px), in headless
Chromium: code blocks of fewer than 100 characters per line do not scroll sideways, the
project's name in the header fits on one line, and the offline search finds the ABI's entry
point.  Screenshots of a few pages at both widths are kept in build/docs/screenshots/.

Run by ``make test`` after ``make docs`` (the HTML lives in build/docs/html, or in
``TB_DOCS_HTML``).  One probe page loads every page in turn into an iframe of the width under
test (media queries follow the iframe's width) and measures it from inside the browser.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import chromium
import pytest

REPO = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("TB_DOCS_HTML", REPO / "build" / "docs" / "html"))
SHOTS = HTML.parent / "screenshots"
WIDTHS = (1280, 390)
LONG_LINE = 100  # characters: a code block with a longer line may scroll

PROBE = """<!doctype html>
<html><body style="margin:0"><pre id="report">pending</pre>
<iframe id="page" style="height:900px;border:0"></iframe>
<script>
const pages = %(pages)s, widths = %(widths)s, report = {};
const frame = document.getElementById("page");
function load(src) {
  return new Promise(resolve => { frame.onload = resolve; frame.src = src; });
}
function shown(doc, el) {
  const box = el.getBoundingClientRect();
  const style = doc.defaultView.getComputedStyle(el);
  return box.width > 0 && box.height > 0 && style.visibility !== "hidden";
}
function measure(doc) {
  const blocks = [];
  for (const pre of doc.querySelectorAll("pre")) {
    if (!shown(doc, pre)) continue;
    const longest = Math.max(0, ...pre.textContent.replace(/\\n$/, "").split("\\n")
                                        .map(line => line.length));
    let overflow = 0;
    for (const box of [pre, pre.parentElement]) {
      overflow = Math.max(overflow, box.scrollWidth - box.clientWidth);
    }
    blocks.push({longest: longest, overflow: overflow,
                 start: pre.textContent.slice(0, 60)});
  }
  const title = doc.querySelector(".navbar-brand .title") || doc.querySelector(".navbar-brand");
  let brand = null;
  if (title && shown(doc, title)) {
    const style = doc.defaultView.getComputedStyle(title);
    const line = parseFloat(style.lineHeight) || 1.5 * parseFloat(style.fontSize);
    brand = {text: title.textContent.trim(), height: title.getBoundingClientRect().height,
             line: line, overflow: title.scrollWidth - title.clientWidth};
  }
  return {blocks: blocks, brand: brand,
          page_overflow: doc.documentElement.scrollWidth - doc.documentElement.clientWidth};
}
async function search(query) {
  await load("%(root)s/search.html?q=" + encodeURIComponent(query));
  const doc = frame.contentDocument;
  for (let i = 0; i < 100; i++) {
    const items = doc.querySelectorAll("#search-results li a");
    const status = doc.querySelector("#search-results .search-summary, #search-results p");
    if (items.length || (status && /did not match|no results/i.test(status.textContent))) {
      return [...items].map(a => a.getAttribute("href"));
    }
    await new Promise(resolve => setTimeout(resolve, 100));
  }
  return null;
}
(async () => {
  for (const width of widths) {
    frame.style.width = width + "px";
    for (const page of pages) {
      await load("%(root)s/" + page);
      report[width + " " + page] = measure(frame.contentDocument);
    }
  }
  frame.style.width = "1280px";
  report.search = await search("tb_vendor_get");
  document.getElementById("report").textContent = JSON.stringify(report);
})();
</script></body></html>
"""


def pages() -> list[str]:
    assert (HTML / "index.html").is_file(), f"{HTML} has no index.html: run `make docs` first"
    skip = {"genindex.html", "search.html"}
    return sorted(
        str(p.relative_to(HTML))
        for p in HTML.rglob("*.html")
        if p.relative_to(HTML).parts[0] not in ("_static", "_sources", "_modules")
        and p.name not in skip
    )


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("layout")
    html = PROBE % {
        "pages": json.dumps(pages()),
        "widths": json.dumps(list(WIDTHS)),
        "root": HTML.resolve().as_uri(),
    }
    return chromium.run_probe(tmp, "probe-layout.html", html, budget_ms=120000)


@pytest.mark.parametrize("width", WIDTHS)
def test_short_code_blocks_do_not_scroll_sideways(report, width):
    scrolling = []
    for page in pages():
        measured = report[f"{width} {page}"]
        for block in measured["blocks"]:
            if block["longest"] < LONG_LINE and block["overflow"] > 1:
                scrolling.append(
                    f"{page}: {block['start']!r} ({block['longest']} characters "
                    f"per line, {block['overflow']} px too wide)"
                )
    assert not scrolling, f"at {width} px:\n" + "\n".join(scrolling)


@pytest.mark.parametrize("width", WIDTHS)
def test_pages_do_not_scroll_sideways(report, width):
    wide = [page for page in pages() if report[f"{width} {page}"]["page_overflow"] > 1]
    assert not wide, f"pages wider than {width} px: {wide}"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_title_fits_on_one_line(report, width):
    brand = report[f"{width} index.html"]["brand"]
    assert brand is not None, "no project title in the header"
    assert brand["text"] == "torch_backend", brand
    assert brand["height"] < 1.5 * brand["line"] and brand["overflow"] <= 1, brand


def test_search_finds_the_entry_point(report):
    results = report["search"]
    assert results is not None, "the search page never finished searching"
    assert any(href.startswith("abi.html") for href in results), results


@pytest.mark.parametrize("width", WIDTHS)
def test_screenshots(tmp_path, width):
    """Kept as build artefacts (build/docs/screenshots/), for a person to look at."""
    for page in ("index.html", "porting.html", "abi.html", "performance.html"):
        out = SHOTS / f"{Path(page).stem}-{width}.png"
        chromium.screenshot(tmp_path, HTML / page, width, 1600, out)
        assert out.stat().st_size > 10000, f"{out} is nearly empty"
