#!/usr/bin/env bash
# The Python package's tests: creates a venv (IRPASS_PY_VENV, default target/py-venv), installs
# the package as a user would (`pip install ./python`, which builds the extension with maturin
# from PyPI) with pytest, and runs the tests from outside the source tree.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${IRPASS_PY_VENV:-$root/target/py-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
fi
"$venv/bin/pip" install -q "$root/python[test]"
cd "$here"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
# The runnable example, on its built-in default input.
"$venv/bin/python" "$root/examples/python/optimize.py" >/dev/null
