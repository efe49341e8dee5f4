"""``python -m torch_backend.cmake_prefix``: print the CMAKE_PREFIX_PATH entry under which
``find_package(TorchBackend)`` succeeds, loading neither torch nor a vendor::

    cmake -S . -B build -DCMAKE_PREFIX_PATH="$(python -m torch_backend.cmake_prefix)"
"""

from __future__ import annotations

from torch_backend._paths import cmake_prefix_path


def main() -> None:
    """Print :func:`torch_backend.cmake_prefix_path`."""
    print(cmake_prefix_path())


if __name__ == "__main__":
    main()
