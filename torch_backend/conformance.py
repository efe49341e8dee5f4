"""``tb-conformance``: the conformance suite's command-line tool, as installed with the package.

Runs the C program shipped in the package with the same arguments::

    tb-conformance fake
    tb-conformance --filter memory /path/to/libtb_vendor_mine.so
"""

from __future__ import annotations

import os
import sys

from torch_backend._paths import conformance_executable


def main(argv: list[str] | None = None) -> None:
    """Replace this process with tb-conformance (never returns)."""
    program = str(conformance_executable())
    args = sys.argv[1:] if argv is None else argv
    sys.stdout.flush()
    os.execv(program, [program, *args])


if __name__ == "__main__":
    main()
