"""Run the shell blocks of documentation pages as written: the commands a reader copies.

Usage::

    shell_blocks.py --list PAGE...                 the blocks found, and which are shell
    shell_blocks.py --venv VENV --work DIR PAGE... run each page's shell blocks

A shell block is a ``.. code-block:: bash`` (``sh``, ``shell``, ``console``: ``$`` prompts
dropped) or a literal block (after a paragraph ending in ``::``) whose first command is one a
reader types in a shell (``make``, ``pip``, ``python``, ``cmake``, ``ctest``, ``tb-vendor``,
``tb-conformance``, ``auditwheel``, ... after optional ``VAR=value`` assignments).  Other
literal blocks -- Python, TOML, program output -- are not run.

Each page runs as one bash script (``set -euo pipefail``), its blocks in order, in a directory
of its own under ``--work`` (``$TB_WORK``), with the virtual environment ``--venv`` first on
``PATH`` (``pip``, ``python``, ``tb-vendor`` are its), so state carries from block to block as
it does for a reader following the page.  The repository is ``$TB_REPO``.  Two kinds of RST
comment before a block, invisible in the rendered page, set up what the page's prose asks the
reader to do by hand:

``.. shell-test-setup: COMMAND``
    runs COMMAND (bash, in the same session) before the next shell block: the reader's own
    edit, such as writing ``src/kernels.c``, or going to the directory the page assumes.
``.. shell-test-env: system``
    runs the next shell block with the Python that runs this script first on ``PATH`` instead
    of the venv's: commands a page gives for a clone's own environment (``make demo``).

Prints each block with its page and line before running it, and the time of each page; the
exit status is the first failing block's (its page and line named on stderr).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# First words of the commands a reader types in a shell.
SHELL_COMMANDS = {
    "apt-get", "auditwheel", "cd", "cmake", "cp", "ctest", "export", "git", "ls", "make",
    "pip", "pip3", "python", "python3", "sudo", "tb-conformance", "tb-vendor",
}  # fmt: skip
_SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_DIRECTIVE = re.compile(r"^(\s*)\.\. ([\w-]+)::\s*(\S*)")
_TEST_COMMENT = re.compile(r"^\s*\.\. shell-test-(setup|env): (.+)$")


@dataclasses.dataclass
class Block:
    """A literal block of a page: its first line's number (1-based), text and whether it runs."""

    page: Path
    line: int
    text: str
    shell: bool
    setup: list[str] = dataclasses.field(default_factory=list)
    system: bool = False


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _body(lines: list[str], start: int, parent: int) -> tuple[int, list[str]]:
    """The indented block after ``start`` (skipping blank lines and directive options) whose
    indentation exceeds ``parent``: (its first line's index, its lines, dedented)."""
    i = start
    while i < len(lines) and (not lines[i].strip() or re.match(r"^\s+:[\w-]+:", lines[i])):
        i += 1
    first = i
    body: list[str] = []
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > parent):
        body.append(lines[i])
        i += 1
    while body and not body[-1].strip():
        body.pop()
    depth = min((_indent(line) for line in body if line.strip()), default=0)
    return first, [line[depth:] for line in body]


def is_shell_command(text: str) -> bool:
    """Whether ``text``'s first command is a shell command a reader types."""
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        while words and _ASSIGNMENT.fullmatch(words[0]):
            words = words[1:]
        return bool(words) and words[0] in SHELL_COMMANDS
    return False


def blocks(page: Path) -> list[Block]:
    """The literal blocks of ``page``, with the test comments that precede each."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    setup: list[str] = []
    system = False
    i = 0
    while i < len(lines):
        line = lines[i]
        comment = _TEST_COMMENT.match(line)
        directive = _DIRECTIVE.match(line)
        if comment:
            if comment[1] == "setup":
                setup.append(comment[2])
            else:
                system = comment[2].strip() == "system"
            i += 1
            continue
        if directive and directive[2] == "code-block":
            first, body = _body(lines, i + 1, _indent(line))
            text = "\n".join(body)
            language = directive[3]
            if language == "console":
                text = "\n".join(re.sub(r"^\$ ", "", b) for b in body if b.startswith("$ "))
            found.append(Block(page, first + 1, text, language in _SHELL_LANGUAGES, setup, system))
        elif line.rstrip().endswith("::") and not directive and not line.lstrip().startswith(".."):
            first, body = _body(lines, i + 1, _indent(line))
            text = "\n".join(body)
            found.append(Block(page, first + 1, text, is_shell_command(text), setup, system))
        else:
            i += 1
            continue
        if found[-1].shell:
            setup, system = [], False
        i = first + max(len(body), 1)
    return found


def _script(page_blocks: list[Block], venv: Path) -> str:
    system_path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    venv_path = f"{venv / 'bin'}:{os.environ['PATH']}"
    parts = ["set -euo pipefail"]
    for block in page_blocks:
        if not block.shell:
            continue
        where = f"{block.page.name}:{block.line}"
        path = system_path if block.system else venv_path
        parts.append(f"export PATH={shlex.quote(path)}")
        parts.extend(block.setup)
        parts.append(f"echo {shlex.quote('== ' + where)}; export TB_BLOCK={shlex.quote(where)}")
        parts.append(f"printf '%s\\n' {shlex.quote(block.text)} | sed 's/^/   $ /'")
        parts.append(block.text)
    return "\n".join(parts) + "\n"


def run(pages: list[Path], venv: Path, work: Path) -> int:
    for page in pages:
        page_blocks = blocks(page)
        shell = [b for b in page_blocks if b.shell]
        directory = work / page.stem
        directory.mkdir(parents=True, exist_ok=True)
        environment = {
            **os.environ,
            "TB_REPO": str(REPO),
            "TB_WORK": str(directory),
            "VIRTUAL_ENV": str(venv),
        }
        environment.pop("TORCH_BACKEND_VENDOR", None)
        print(f"=== {page.relative_to(REPO)}: {len(shell)} shell blocks", flush=True)
        start = time.monotonic()
        script = _script(page_blocks, venv)
        result = subprocess.run(
            ["bash", "-c", script + "trap - ERR\n"],
            cwd=directory,
            env=environment,
            check=False,
        )
        print(f"=== {page.relative_to(REPO)}: {time.monotonic() - start:.0f} s", flush=True)
        if result.returncode != 0:
            print(
                f"shell_blocks: a shell block of {page.relative_to(REPO)} failed "
                f"(status {result.returncode}): the last block shown above",
                file=sys.stderr,
            )
            return result.returncode
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="+", type=Path)
    parser.add_argument("--list", action="store_true", help="list the blocks, run nothing")
    parser.add_argument("--venv", type=Path, help="the virtual environment to run them in")
    parser.add_argument("--work", type=Path, help="where each page gets its directory")
    args = parser.parse_args(argv)
    pages = [page.resolve() for page in args.pages]
    if args.list:
        for page in pages:
            for block in blocks(page):
                kind = "shell" if block.shell else "text "
                first = block.text.splitlines()[0] if block.text else ""
                print(f"{page.name}:{block.line}: {kind} {first}")
        return 0
    if args.venv is None or args.work is None:
        parser.error("--venv and --work are needed to run the blocks")
    return run(pages, args.venv.resolve(), args.work.resolve())


if __name__ == "__main__":
    sys.exit(main())
