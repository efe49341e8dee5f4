#!/usr/bin/env bash
# From zero to a wheel (docs/vendor_wheel.rst), the way a vendor does it, against the
# *installed* torch_backend:
#
#   1. tb-vendor new acme                      the project, passing tb-conformance as written
#   2. the porting guide's asynchronous example's kernels into src/kernels.c
#   3. configure (with TORCH_BACKEND_VENDOR naming the library not built yet: configuring
#      must load no vendor), build, CTest: tb-conformance and check_kernels
#   4. the vendor's wheel and torch_backend's own
#   5. a fresh virtual environment with torch (and numpy), both wheels and nothing else; there, with no
#      TORCH_BACKEND_VENDOR, `import torch` brings up acme and the MLP trains like the CPU.
#
# Usage: run.sh PYTHON WORK_DIR.  Prints the time of each step.
set -euo pipefail
PYTHON=$1
WORK=$2
SOURCE=$(cd "$(dirname "$0")/../.." && pwd)
PINS=$(grep -E '^(torch|numpy)==' "$SOURCE/requirements-dev.txt" | tr '\n' ' ')
SCRIPTS=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
unset TORCH_BACKEND_VENDOR

step_start=
step() { # ends the previous step (its time), starts the next
  local now
  now=$(date +%s)
  [ -z "$step_start" ] || echo "   ($((now - step_start)) s)"
  echo "== $*"
  step_start=$now
}

rm -rf "$WORK"
mkdir -p "$WORK/dist"
cd "$WORK"

step "tb-vendor new acme"
"$SCRIPTS/tb-vendor" new acme
cp "$SOURCE/examples/vendor_kit/kernels.c" acme/src/kernels.c

step "configure (TORCH_BACKEND_VENDOR names the library not built yet), build, CTest"
TORCH_BACKEND_VENDOR=$WORK/acme/build/libtb_vendor_acme.so \
  cmake -S acme -B acme/build -G Ninja -DPython3_EXECUTABLE="$PYTHON" -DCMAKE_C_FLAGS=-Werror \
    > configure.log ||
  { cat configure.log; exit 1; }
cmake --build acme/build
ctest --test-dir acme/build --output-on-failure

step "wheels: the vendor's, then torch_backend's (reusing the build tree of make build)"
"$PYTHON" -m pip wheel -q --no-build-isolation --no-deps -w dist ./acme
(cd "$SOURCE" && "$PYTHON" -m pip wheel -q --no-build-isolation --no-deps -w "$WORK/dist" . \
  -Ccmake.define.TORCH_BACKEND_BUILD_TESTS=ON)
ls dist

step "a fresh venv: $PINS, torch_backend's wheel, acme's wheel"
"$PYTHON" -m venv venv
# shellcheck disable=SC2086 # one argument per pin
venv/bin/python -m pip install -q $PINS
venv/bin/python -m pip install -q dist/torch_backend-*.whl dist/torch_backend_acme-*.whl

step "train the MLP there, with no TORCH_BACKEND_VENDOR"
(cd / && env -u TORCH_BACKEND_VENDOR "$WORK/venv/bin/python" \
  "$SOURCE/test/vendor_wheel/train_mlp.py" acme)
step "done: acme from tb-vendor new to a trained MLP in a fresh venv"
