#!/usr/bin/env bash
# ONNX's backend test suite through irpass-opt, judged by ONNX Runtime (judge.py). Creates the
# venv of the ONNX Runtime judge (IRPASS_ORT_VENV, default target/ort-venv: onnx, onnxruntime,
# numpy from PyPI); fetches the node cases from the `onnx` source distribution on PyPI into
# target/onnx-backend (never committed) and takes the `simple`, `pytorch-converted` and
# `pytorch-operator` cases from the installed wheel; builds irpass-opt and the interpreter's
# runner (irpass-onnx's `run_model` example) in release, so every case is also run in irpass's
# interpreter. Arguments go to judge.py (`--check` for CI, `--bless` to rewrite passing.txt and
# passing_interp.txt, `--filter SUBSTRING`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
venv="${IRPASS_ORT_VENV:-$root/target/ort-venv}"
# The newest source distribution that carries the node cases (later ones leave them out).
sdist_version="1.20.1"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "onnx==1.23.*" "onnxruntime==1.32.*" "onnxsim==0.8.*" numpy
fi
data="$root/target/onnx-backend"
node="$data/onnx-$sdist_version/onnx/backend/test/data/node"
if [ ! -d "$node" ]; then
  mkdir -p "$data"
  "$venv/bin/pip" download -q --no-deps --no-binary onnx "onnx==$sdist_version" -d "$data"
  tar -xzf "$data/onnx-$sdist_version.tar.gz" -C "$data" "onnx-$sdist_version/onnx/backend/test/data/node"
fi
wheel="$("$venv/bin/python" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data"))')"
cargo build -q --release -p irpass-opt --manifest-path "$root/Cargo.toml"
cargo build -q --release -p irpass-onnx --example run_model --manifest-path "$root/Cargo.toml"
"$venv/bin/python" "$here/judge.py" "$root/target/release/irpass-opt" \
  --interpreter "$root/target/release/examples/run_model" \
  "$node" "$wheel/simple" "$wheel/pytorch-converted" "$wheel/pytorch-operator" "$@"
