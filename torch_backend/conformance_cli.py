"""``tb-conformance VENDOR``: the conformance suite's command, as installed on PATH by the wheel.

The program itself is ``torch_backend/bin/tb-conformance`` (C, no libtorch), which finds the
loader through its RUNPATH, ``$ORIGIN/../lib``: the same relative place whatever Python the
wheel is installed into.  This console script only runs it, with the same arguments, so one
wheel serves every CPython it claims.  It imports neither torch nor a vendor (a package tool,
see ``torch_backend._TOOLS``)::

    tb-conformance --help
    python -m torch_backend.conformance_cli emu
"""

from __future__ import annotations

import os
import sys

from torch_backend._paths import conformance_executable


def main() -> None:
    """Replace this process with the tb-conformance program, passing the arguments on."""
    program = str(conformance_executable())
    os.execv(program, [program, *sys.argv[1:]])


if __name__ == "__main__":
    main()
