#!/usr/bin/env bash
# Creates a venv with onnx, onnxruntime, onnxsim and numpy from PyPI, builds irpass-opt in
# release, and runs judge.py on ONNX's light models: ONNX Runtime must compute the same
# outputs from irpass's -O3 output, and onnx.checker must accept it. Extra arguments go to
# judge.py (e.g. `--extra-config relay.FoldConstant.max_generated_elements=1000000000`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
venv="${IRPASS_ORT_VENV:-$root/target/ort-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "onnx==1.23.*" "onnxruntime==1.32.*" "onnxsim==0.8.*" numpy
fi
cargo build -q --release -p irpass-passes --bin irpass-opt --manifest-path "$root/Cargo.toml"
"$venv/bin/python" "$here/judge.py" "$root/target/release/irpass-opt" "$@"
