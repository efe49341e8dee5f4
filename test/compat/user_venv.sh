#!/usr/bin/env bash
# A user's environment for make test-compat: a new venv over a cached torch environment (a .pth
# file adds its site-packages: torch and the rest of requirements-dev.txt, about 6 GB not copied)
# into which torch_backend's wheel is installed as a user installs it -- with pip resolving its
# dependencies, unless --no-deps is given -- and where pip must leave torch as it found it
# (docs/decisions.md, "Three torch releases").
#
# Usage: user_venv.sh ENV VENV NO_CAP_CONSTRAINTS [--torch TORCH_WHEEL] [--no-deps] WHEEL
#   ENV        the cached environment (make's ENV_<torch>)
#   VENV       the venv to create (replaced)
#   NO_CAP_CONSTRAINTS  an empty constraints file: this machine's pip caps torch at 2.14.1, which
#              would otherwise make pip "fix" a newer torch
#   --torch    a torch wheel installed into the venv itself (without its dependencies), in front
#              of the environment's torch, whose CUDA libraries and dependencies it uses
#   --no-deps  install torch_backend's wheel without resolving its dependencies
set -euo pipefail
ENV=$1
VENV=$2
NO_CAP=$3
shift 3
TORCH_WHEEL=
NO_DEPS=()
while [ $# -gt 1 ]; do
  case $1 in
    --torch) TORCH_WHEEL=$2; shift 2 ;;
    --no-deps) NO_DEPS=(--no-deps); shift ;;
    *) echo "user_venv.sh: unknown option $1"; exit 2 ;;
  esac
done
WHEEL=$1

rm -rf "$VENV"
python3 -m venv "$VENV"
site=$("$ENV/bin/python" -c "import sysconfig; print(sysconfig.get_path('purelib'))")
own=$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_path('purelib'))")
echo "import site; site.addsitedir('$site')" > "$own/torch_backend_user_env.pth"
if [ -n "$TORCH_WHEEL" ]; then
  PIP_CONSTRAINT=$NO_CAP "$VENV/bin/python" -m pip install -q --no-deps "$TORCH_WHEEL"
fi

torch_version() {
  TORCH_DEVICE_BACKEND_AUTOLOAD=0 "$VENV/bin/python" -c 'import torch; print(torch.__version__)'
}
before=$(torch_version)
echo "== $(basename "$(dirname "$VENV")"): pip install ${NO_DEPS[*]} $(basename "$WHEEL") into a venv with torch $before"
PIP_CONSTRAINT=$NO_CAP "$VENV/bin/python" -m pip install -q "${NO_DEPS[@]}" "$WHEEL"
after=$(torch_version)
if [ "$after" != "$before" ]; then
  echo "FAIL: installing $(basename "$WHEEL") changed torch from $before to $after"
  exit 1
fi
requires=$("$VENV/bin/python" -c 'from importlib.metadata import requires; print(*requires("torch_backend"))')
echo "   torch $after left as it was (torch_backend requires $requires)"
