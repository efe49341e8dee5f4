"""Headless Chromium for the docs tests: a probe page, run with --dump-dom, writes a JSON
report into its <pre id="report">, which the tests read back."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest


def executable() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("no chromium on PATH: `make docs` installs Debian's chromium package")


def _flags(tmp_path: Path) -> list[str]:
    return [
        executable(),
        "--headless",
        "--no-sandbox",
        "--disable-background-networking",
        "--disable-gpu",
        "--allow-file-access-from-files",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]


def run_probe(tmp_path: Path, name: str, html: str, budget_ms: int = 10000) -> dict:
    """Loads `html` (a probe page) and returns the JSON its script wrote into #report."""
    probe = tmp_path / name
    probe.write_text(html)
    result = subprocess.run(
        [*_flags(tmp_path), f"--virtual-time-budget={budget_ms}", "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    match = re.search(r'<pre id="report">(.*?)</pre>', result.stdout, re.S)
    assert match, result.stdout[-2000:]
    text = match.group(1).replace("&quot;", '"').replace("&lt;", "<")
    text = text.replace("&gt;", ">").replace("&amp;", "&")
    assert text != "pending", "the page did not finish loading in the browser"
    return json.loads(text)


def screenshot(tmp_path: Path, page: Path, width: int, height: int, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [
            *_flags(tmp_path),
            "--hide-scrollbars",
            f"--window-size={width},{height}",
            f"--screenshot={out}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0 and out.is_file(), result.stderr[-2000:]
