"""``tb-conformance VENDOR``: the conformance suite's command, as installed on PATH by the wheel.

The program itself is ``torch_backend/bin/tb-conformance`` (C, no libtorch), which finds the
loader through its RUNPATH, ``$ORIGIN/../lib``: the same relative place whatever Python the
wheel is installed into.  This console script only runs it, with the same arguments, so one
wheel serves every CPython it claims.  It imports neither torch nor a vendor (a package tool,
see ``torch_backend._TOOLS``)::

    tb-conformance --help
    python -m torch_backend.conformance_cli emu

VENDOR may also name a vendor installed as a Python package (its ``torch_backend.vendors``
entry point, as ``TORCH_BACKEND_VENDOR`` may): this wrapper replaces the name with the library
the entry point returns before the program starts, the way ``import torch`` resolves it.
"""

from __future__ import annotations

import os
import sys

from torch_backend import _vendors
from torch_backend._paths import conformance_executable

# The program's options that take a value (tb_conformance.c, parse()).
_WITH_VALUE = {"--filter", "--timeout", "--json", "--schemas"}


def resolve_vendor(arguments: list[str]) -> list[str]:
    """``arguments`` with an installed vendor package's name replaced by its library's path.

    A path, or a name the loader resolves itself (a bundled vendor, one on
    ``TORCH_BACKEND_VENDOR_PATH``), stays as it is, as does a name no entry point declares (the
    program then says what it could not load).  Raises VendorSelectionError when the entry point
    fails or several distributions declare the name.
    """
    resolved = list(arguments)
    i = 0
    while i < len(resolved):
        argument = resolved[i]
        if argument in _WITH_VALUE:
            i += 2
            continue
        if not argument.startswith("-") and "/" not in argument:
            if not _vendors._loader_finds(argument):
                library = _vendors.library_of(argument)
                if library is not None:
                    resolved[i] = library
            break
        i += 1
    return resolved


def main() -> None:
    """Replace this process with the tb-conformance program, passing the arguments on."""
    program = str(conformance_executable())
    try:
        arguments = resolve_vendor(sys.argv[1:])
    except _vendors.VendorSelectionError as error:
        print(f"tb-conformance: {error}", file=sys.stderr)
        sys.exit(2)  # the program's status for a vendor that did not load
    os.execv(program, [program, *arguments])


if __name__ == "__main__":
    main()
