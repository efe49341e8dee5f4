"""The built documentation, opened in headless Chromium: the overview shows the layer diagram
and the ABI reference shows the documented function pointers.

Run by ``make test`` after ``make docs`` (the HTML lives in build/docs/html, or in
``TB_DOCS_HTML``).  A probe page loads each docs page in an iframe and reports, from inside
the browser, whether key elements are rendered with a non-empty box and not hidden; the test
reads the report from the probe's DOM.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import chromium

REPO = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("TB_DOCS_HTML", REPO / "build" / "docs" / "html"))

PROBE = """<!doctype html>
<html><body><pre id="report">pending</pre>
<iframe id="page" src="%(page)s" style="width:1280px;height:4000px"></iframe>
<script>
function visible(doc, el) {
  if (!el) return false;
  const box = el.getBoundingClientRect();
  const style = doc.defaultView.getComputedStyle(el);
  return box.width > 0 && box.height > 0 && style.visibility !== "hidden" &&
         style.display !== "none";
}
document.getElementById("page").addEventListener("load", () => {
  const doc = document.getElementById("page").contentDocument;
  const report = {title: doc.title, texts: {}, diagram: null};
  for (const text of %(texts)s) {
    /* the innermost elements holding the text */
    const hits = [...doc.body.querySelectorAll("*")]
      .filter(e => e.textContent.includes(text) &&
                   ![...e.children].some(c => c.textContent.includes(text)));
    report.texts[text] = hits.some(e => visible(doc, e));
  }
  const figure = doc.querySelector(".graphviz object, .graphviz img, .graphviz svg");
  if (figure) {
    const box = figure.getBoundingClientRect();
    const svg = figure.contentDocument ? figure.contentDocument.documentElement.outerHTML :
                figure.outerHTML;
    report.diagram = {visible: visible(doc, figure), width: box.width, height: box.height,
                      svg: svg};
  }
  document.getElementById("report").textContent = JSON.stringify(report);
});
</script></body></html>
"""


def open_in_browser(tmp_path: Path, page: str, texts: list[str]) -> dict:
    target = HTML / page
    assert target.is_file(), f"{target} is missing: run `make docs` first"
    html = PROBE % {"page": target.as_uri(), "texts": json.dumps(texts)}
    return chromium.run_probe(tmp_path, f"probe-{page}", html)


def test_index_shows_the_layer_diagram(tmp_path):
    report = open_in_browser(tmp_path, "overview.html", ["dispatcher", "caching allocator"])
    assert "Overview" in report["title"]
    diagram = report["diagram"]
    assert diagram is not None, "no Graphviz figure on the overview page"
    assert diagram["visible"] and diagram["width"] > 200 and diagram["height"] > 200, diagram
    for label in ("dispatcher", "generated wrapper", "vendor kernel", "caching allocator"):
        assert label in diagram["svg"], f"diagram lacks '{label}'"
    assert all(report["texts"].values()), report["texts"]

    index = open_in_browser(tmp_path, "index.html", ["one versioned C interface"])
    assert all(index["texts"].values()), index["texts"]


def test_abi_reference_shows_the_function_pointers(tmp_path):
    names = [
        "tb_vendor_get",
        "device_malloc",
        "copy_h2d_async",
        "wait_event",
        "elapsed_time",
        "TB_ERROR_OUT_OF_MEMORY",
        "tb_kernel_api",
        "struct_size",
        "compute_units",  # a struct field: members must be rendered, not just named
        "tb_rng_key",
    ]
    report = open_in_browser(tmp_path, "abi.html", names)
    hidden = [name for name, shown in report["texts"].items() if not shown]
    assert not hidden, f"not visible on the ABI reference: {hidden}"


def public_symbols() -> set[str]:
    """Every function, typedef, enum, enumerator, macro, struct and field that Doxygen found in
    the public headers (its XML is produced by `make docs` next to the HTML)."""
    import xml.etree.ElementTree as ET

    xml_dir = HTML.parent / "doxygen" / "xml"
    names: set[str] = set()
    for path in xml_dir.glob("*.xml"):
        root = ET.parse(path).getroot()
        for member in root.iter("memberdef"):
            location = member.find("location")
            if location is None or "include/torch_backend/" not in location.get("file", ""):
                continue
            names.add(member.findtext("name"))
            for value in member.iter("enumvalue"):
                names.add(value.findtext("name"))
        for compound in root.iter("compounddef"):
            if compound.get("kind") == "struct":
                names.add(compound.findtext("compoundname"))
    return {name for name in names if name}


def test_every_public_symbol_is_in_the_reference():
    symbols = public_symbols()
    assert {"tb_vendor_get", "tb_memory_api", "TB_ERROR_NOT_READY", "tbv_kernels"} <= symbols
    page = (HTML / "abi.html").read_text()
    missing = sorted(name for name in symbols if name not in page)
    assert not missing, f"public symbols missing from the ABI reference: {missing}"
