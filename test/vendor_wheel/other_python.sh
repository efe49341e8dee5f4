#!/usr/bin/env bash
# Prints the path of a working CPython >= 3.10 other than PYTHON's version (run.sh's second
# Python), or nothing: python3.12, 3.13, 3.10 on PATH, then pyenv's installed versions (whose
# shims on PATH fail for a version that is not selected).
# Usage: other_python.sh PYTHON
set -uo pipefail
mine=$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
for version in 3.12 3.13 3.10; do
  [ "$version" = "$mine" ] && continue
  for candidate in "$(command -v "python$version")" \
    "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/"python$version"; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    found=$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
    [ "$found" = "$version" ] && { echo "$candidate"; exit 0; }
  done
done
