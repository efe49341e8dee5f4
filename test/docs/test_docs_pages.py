"""The pages generated at build time hold what they promise: the model zoo lists every case of
examples/zoo.py, the performance page shows the last benchmark run or says how to make one,
and the landing page carries the architecture diagram."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("TB_DOCS_HTML", REPO / "build" / "docs" / "html"))


def zoo_cases() -> list[str]:
    """The case names of examples/zoo.py, read from its source (no torch import here)."""
    tree = ast.parse((REPO / "examples" / "zoo.py").read_text())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Case":
            first = node.args[0]
            if isinstance(first, ast.Constant):
                names.append(first.value)
    return names


def test_the_zoo_page_lists_every_model():
    page = (HTML / "zoo.html").read_text()
    cases = zoo_cases()
    assert len(cases) >= 7, cases
    missing = [name for name in cases if f"<p>{name}</p>" not in page]
    assert not missing, f"models missing from zoo.html: {missing}"


def test_the_performance_page_shows_the_last_run_or_how_to_make_one():
    page = (HTML / "performance.html").read_text()
    recorded = Path(os.environ.get("TB_BENCH_JSON", REPO / "build" / "bench.json"))
    if recorded.is_file():
        rows = json.loads(recorded.read_text())["rows"]
        for r in rows:
            assert f"{r['group']}: {r['name']}" in page, r["name"]
        if recorded.with_suffix(".png").is_file():
            assert 'src="_static/bench.png"' in page
            assert (HTML / "_static" / "bench.png").is_file()
    else:
        assert "run `make bench`" in page


def test_the_landing_page_has_the_architecture_diagram():
    page = (HTML / "index.html").read_text()
    assert 'class="graphviz' in page
    assert "Quick start" in page


# What docs/releases.rst's table says torch_backend uses on the newer releases, and where the
# code that does it lives: the page and the code must not drift apart.
RELEASE_FACILITIES = {
    "_inductor_backend_init": "torch_backend/device_module.py",
    "compile_on_one_rank": "torch_backend/compile.py",
    "philox_state": "csrc/runtime/Generator.h",
    "cache_clear": "torch_backend/__init__.py",
    "TB_TORCH_AT_LEAST": "csrc/runtime/TorchRelease.h",
    "cxx_std_": "cmake/Torch.cmake",
}


def test_the_releases_page_covers_the_window_and_the_code():
    page = (HTML / "releases.html").read_text()
    releases = [
        line.split()[0]
        for line in (REPO / "torch-releases.txt").read_text().splitlines()
        if line[:1].isdigit()
    ]
    for version in releases:
        release = ".".join(version.split(".")[:2])
        assert f"<p>{release}</p>" in page, f"releases.html has no column for torch {release}"
        assert version in page, f"releases.html does not show torch-releases.txt ({version})"
    for name, source in RELEASE_FACILITIES.items():
        assert name in page, f"releases.html does not mention {name}"
        assert name in (REPO / source).read_text(), f"{source} no longer has {name}"
