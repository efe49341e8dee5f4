"""Fails unless the vendor library Python loaded lies under the directory given (argv[1]): the
sanitizer passes of make test must run the instrumented build, not the package's own."""

from __future__ import annotations

import sys

import torch_backend

library = torch_backend.vendor_info()["library"]
sys.exit(0 if library.startswith(sys.argv[1]) else f"{library} is not the instrumented build")
