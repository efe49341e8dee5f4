#!/usr/bin/env bash
# From zero to a wheel, the way a vendor does it, against the *installed* torch_backend: the
# shell blocks of the vendor pages, run as written (test/docs/shell_blocks.py), then what they
# promise.
#
#   1. a fresh virtual environment with torch (and numpy) and torch_backend's wheel (make wheel:
#      the released wheel, built as `pip install .` builds it and repaired by auditwheel)
#   2. the shell blocks of docs/quickstart.rst, vendor_wheel.rst (tb-vendor new acme, the
#      kernels of writing_kernels.rst, configure with TORCH_BACKEND_VENDOR naming the library
#      not built yet -- configuring must load no vendor --, build with -Werror, CTest:
#      tb-conformance and check_kernels, the manylinux wheel, pip install), writing_kernels.rst,
#      porting.rst and vendor_kit.rst, in that venv
#   3. the vendor written from the docs: its only hand-written C, src/kernels.c, at most 400
#      lines; its wheel manylinux
#   4. there, with no TORCH_BACKEND_VENDOR, `import torch` brings up acme and the MLP trains
#      like the CPU; tb-conformance takes acme's entry-point name; the demo trains on emu;
#      tb-conformance passes on emu
#   5. tb-conformance from the same wheel under a second CPython (no torch needed: the command
#      is C), or the exact reason why this machine has none
#
# Usage: run.sh PYTHON WORK_DIR WHEEL_DIR TORCH_PIN...  (WHEEL_DIR holds torch_backend's wheel;
# the pins are the primary torch release's, as pip requirements).  Prints the time of each step.
set -euo pipefail
PYTHON=$1
WORK=$2
WHEEL_DIR=$3
shift 3
SOURCE=$(cd "$(dirname "$0")/../.." && pwd)
PINS="$* $(grep -E '^numpy==' "$SOURCE/requirements-dev.txt")"
unset TORCH_BACKEND_VENDOR

step_start=
step() { # ends the previous step (its time), starts the next
  local now
  now=$(date +%s)
  [ -z "$step_start" ] || echo "   ($((now - step_start)) s)"
  echo "== $*"
  step_start=$now
}

# Runs a command from / into LOG; prints the lines that the sed script PICK selects, or the whole
# log when the command fails.  Usage: brief LOG PICK COMMAND...
brief() {
  local log=$1 pick=$2
  shift 2
  if (cd / && "$@") > "$log" 2>&1; then
    sed -n "$pick" "$log"
  else
    cat "$log"
    return 1
  fi
}

rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"

step "a fresh venv: $PINS, torch_backend's wheel"
"$PYTHON" -m venv venv
# --no-compile: byte-compiling torch's modules (a minute) proves nothing here.
# shellcheck disable=SC2086 # one argument per pin
venv/bin/python -m pip install -q --no-compile $PINS
venv/bin/python -m pip install -q "$WHEEL_DIR"/torch_backend-*.whl

step "the vendor pages' shell blocks, as written, in that venv"
"$PYTHON" "$SOURCE/test/docs/shell_blocks.py" --venv "$WORK/venv" --work "$WORK/pages" \
  "$SOURCE"/docs/{quickstart,vendor_wheel,writing_kernels,porting,vendor_kit}.rst

step "the vendor written from the docs: hand-written C and wheel"
PROJECT=$WORK/pages/vendor_wheel
cmp "$SOURCE/examples/vendor_kit/kernels.c" "$PROJECT/acme/src/kernels.c"
LINES=$(wc -l < "$PROJECT/acme/src/kernels.c")
echo "acme/src/kernels.c, its only hand-written C: $LINES lines (at most 400)"
[ "$LINES" -le 400 ] || { echo "FAIL: more than 400 lines"; exit 1; }
ls "$PROJECT/wheelhouse"
TAG=$(sed -n 's/^Tag: //p' "$WORK"/venv/lib/python3*/site-packages/torch_backend_acme-*.dist-info/WHEEL)
echo "installed: torch_backend_acme, tag $TAG"
case $TAG in *manylinux_*) ;; *) echo "FAIL: the installed wheel is not manylinux"; exit 1 ;; esac

step "train the MLP there, with no TORCH_BACKEND_VENDOR"
(cd / && env -u TORCH_BACKEND_VENDOR "$WORK/venv/bin/python" \
  "$SOURCE/test/vendor_wheel/train_mlp.py" acme)

step "the demo on emu there (the MLP and the encoder block, beside the CPU)"
brief "$WORK/demo.log" "/^vendor '/p;/^OK/p" \
  env TORCH_BACKEND_VENDOR=emu "$WORK/venv/bin/python" "$SOURCE/examples/demo.py"

CONFORMANCE_PICK='1p;/^group  *pass/,/^$/p;/^result:/p'
step "tb-conformance acme there: the installed vendor's entry-point name"
brief "$WORK/conformance-acme.log" "$CONFORMANCE_PICK" "$WORK/venv/bin/tb-conformance" acme

step "tb-conformance emu there ($("$WORK/venv/bin/python" -V))"
brief "$WORK/conformance.log" "$CONFORMANCE_PICK" "$WORK/venv/bin/tb-conformance" emu

# A second CPython: the wheel is abi3 (cp310 and later) and tb-conformance must work under each.
# It needs no torch (the command is C), so the venv holds the wheel alone (--no-deps).
OTHER=$("$SOURCE/test/vendor_wheel/other_python.sh" "$PYTHON")
if [ -n "$OTHER" ]; then
  step "tb-conformance emu under a second CPython ($("$OTHER" -V), no torch)"
  "$OTHER" -m venv venv-other
  venv-other/bin/python -m pip install -q --no-deps "$WHEEL_DIR"/torch_backend-*.whl
  brief "$WORK/conformance-other.log" "$CONFORMANCE_PICK" "$WORK/venv-other/bin/tb-conformance" emu
  venv-other/bin/python -c 'import torch' 2>/dev/null && { echo "FAIL: torch in venv-other"; exit 1; }
else
  step "tb-conformance under a second CPython: not run"
  echo "this machine has no CPython but $("$PYTHON" -V) (looked for python3.10, 3.12, 3.13 on"
  echo "PATH and in pyenv's versions); the abi3 wheel's tb-conformance finds its libraries"
  echo "through \$ORIGIN/../lib, which no Python version names (test_package checks its RUNPATH)"
fi
step "done: acme from tb-vendor new to a trained MLP in a fresh venv; torch_backend's wheel repaired"
