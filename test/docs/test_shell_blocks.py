"""test/docs/shell_blocks.py, which runs the vendor pages' shell blocks in make test's wheel
stage (test/vendor_wheel/run.sh): which blocks it takes for shell commands, and that every
vendor page it is given has the blocks a reader copies."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import shell_blocks

REPO = Path(__file__).resolve().parents[2]
RUN_SH = REPO / "test" / "vendor_wheel" / "run.sh"


def test_blocks_are_told_apart(tmp_path):
    page = tmp_path / "page.rst"
    page.write_text(
        textwrap.dedent(
            """\
            Title
            =====

            .. shell-test-setup: cd "$TB_WORK"

            Build it::

                TORCH_BACKEND_VENDOR=x cmake -S . -B build
                ctest --test-dir build

            In Python::

                import torch

            .. code-block:: console

               $ make demo
               output line

            .. shell-test-env: system

            .. code-block:: bash
               :caption: a script

               pip install expecttest

            The output::

                acme: stream query: device 0 is faulted
            """
        )
    )
    found = shell_blocks.blocks(page)
    assert [(b.line, b.shell) for b in found] == [
        (8, True), (13, False), (17, True), (25, True), (29, False)
    ]  # fmt: skip
    assert found[0].text == "TORCH_BACKEND_VENDOR=x cmake -S . -B build\nctest --test-dir build"
    assert found[0].setup == ['cd "$TB_WORK"'] and not found[0].system
    assert found[2].text == "make demo" and found[2].setup == []
    assert found[3].system and found[3].text == "pip install expecttest"


def test_the_wheel_stage_runs_every_vendor_page():
    # run.sh names the pages; each that has commands has its shell blocks found.
    pages = re.search(r"docs/\{([^}]*)\}\.rst", RUN_SH.read_text())
    assert pages, "run.sh does not run the vendor pages' shell blocks"
    names = pages[1].split(",")
    assert {"quickstart", "porting", "vendor_wheel", "vendor_kit", "writing_kernels"} <= set(names)
    for name in names:
        found = [b for b in shell_blocks.blocks(REPO / "docs" / f"{name}.rst") if b.shell]
        assert found or name == "vendor_kit", f"docs/{name}.rst: no shell block found"
