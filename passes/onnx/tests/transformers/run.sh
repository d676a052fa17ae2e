#!/usr/bin/env bash
# Transformer exports of the `transformers` library against onnx-simplifier, onnxslim and ONNX
# Runtime's basic level. Creates a venv on Debian's python3 (its python3-torch, installed with
# apt-get when missing and run as root) with transformers, onnx, onnxruntime, onnxsim and
# onnxslim from PyPI; exports the models (export_hf.py, into target/hf-models, again when the
# script changes); builds irpass-opt in release; runs compare.py on every export. Arguments go
# to compare.py (`--rewrite-anchors`, `--timing N`, `--strict`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
venv="${IRPASS_HF_VENV:-$root/target/hf-venv}"
if ! /usr/bin/python3 -c "import torch, ensurepip" 2>/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q python3-torch python3-venv >/dev/null ||
      { apt-get update -q >/dev/null && apt-get install -y -q python3-torch python3-venv >/dev/null; }
  else
    echo "python3-torch or python3-venv is missing (apt-get as root installs them)" >&2
    exit 1
  fi
fi
if [ ! -x "$venv/bin/python" ]; then
  # Debian's torch is built against NumPy 1.x; transformers 4.39 is the last to run on its
  # torch 1.13.
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "transformers==4.39.*" "onnx==1.23.*" "onnxruntime==1.32.*" \
    "onnxsim==0.8.*" "onnxslim==0.1.*" "numpy<2"
fi
exports="$root/target/hf-models"
if [ ! -f "$exports/.done" ] || [ "$here/export_hf.py" -nt "$exports/.done" ]; then
  rm -rf "$exports"
  "$venv/bin/python" "$here/export_hf.py" "$exports" >/dev/null 2>&1
  touch "$exports/.done"
fi
cargo build -q --release -p irpass-opt --manifest-path "$root/Cargo.toml"
"$venv/bin/python" "$here/compare.py" "$root/target/release/irpass-opt" "$@" "$exports"/*.onnx
