"""Print the schema of every ATen operator of the running torch, one per line.

It is the list ``tb-conformance --schemas FILE`` compares a vendor's kernels with (vendor.h,
"Schemas"): the conformance tool is C and runs without torch, so the torch release a vendor
targets writes the list once::

    python -m torch_backend.schemas > schemas.txt
    tb-conformance --schemas schemas.txt path/to/libtb_vendor_mine.so

A vendor also copies its kernels' ``tb_kernel::schema`` strings from here.
"""

from __future__ import annotations

import sys

import torch


def aten_schemas() -> list[str]:
    """Every ATen operator's schema as the dispatcher prints it, sorted."""
    schemas = []
    for name in torch._C._dispatch_get_all_op_names():
        if not name.startswith("aten::"):
            continue
        base, _, overload = name.partition(".")
        schemas.append(str(torch._C._get_schema(base, overload)))
    return sorted(schemas)


def main() -> None:
    schemas = aten_schemas()
    sys.stdout.write(
        f"# {len(schemas)} ATen operator schemas of torch {torch.__version__} "
        "(python -m torch_backend.schemas)\n"
    )
    sys.stdout.write("".join(line + "\n" for line in schemas))


if __name__ == "__main__":
    main()
