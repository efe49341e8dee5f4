"""torch_backend: accelerators join PyTorch by implementing one versioned C interface.

This package ships the vendor C ABI (headers and CMake package for vendors), the vendor loader,
the bundled vendors and the conformance tool.  See README.md and docs/.
"""

from __future__ import annotations

from torch_backend._paths import (
    bundled_vendors,
    cmake_prefix_path,
    conformance_executable,
    include_dir,
    library_dir,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "bundled_vendors",
    "cmake_prefix_path",
    "conformance_executable",
    "include_dir",
    "library_dir",
]
