#!/usr/bin/env bash
# ONNX Runtime judges irpass's ONNX output. Creates a venv with onnx, onnxruntime, onnxsim and
# numpy from PyPI; exports torchvision's models and transformer stacks at opsets 13 and 17
# with Debian's python3-torch and python3-torchvision (installed with apt-get when missing and
# run as root; `--light-only` skips them); builds irpass-opt in release; runs judge.py on ONNX's
# light models and the exports: ONNX Runtime must compute the same outputs from irpass's -O3
# output and onnx.checker must accept it. Other arguments go to judge.py (e.g.
# `--extra-config relay.FoldConstant.max_generated_elements=1000000000`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
venv="${IRPASS_ORT_VENV:-$root/target/ort-venv}"
light_only=0
args=()
for a in "$@"; do
  if [ "$a" = "--light-only" ]; then light_only=1; else args+=("$a"); fi
done
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "onnx==1.23.*" "onnxruntime==1.32.*" "onnxsim==0.8.*" numpy
fi
models=("$here"/../data/light/*.onnx)
if [ "$light_only" = 0 ]; then
  if ! /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
    if [ "$(id -u)" = 0 ]; then
      export DEBIAN_FRONTEND=noninteractive
      apt-get install -y -q python3-torch python3-torchvision >/dev/null ||
        { apt-get update -q >/dev/null && apt-get install -y -q python3-torch python3-torchvision >/dev/null; }
    else
      echo "python3-torch and python3-torchvision are missing (apt-get as root installs them)" >&2
      exit 1
    fi
  fi
  exports="$root/target/torch-models"
  if [ ! -f "$exports/.done" ] || [ "$here/export_torch.py" -nt "$exports/.done" ]; then
    rm -rf "$exports"
    /usr/bin/python3 "$here/export_torch.py" "$exports" >/dev/null 2>&1
    touch "$exports/.done"
  fi
  models+=("$exports"/*.onnx)
fi
cargo build -q --release -p irpass-opt --manifest-path "$root/Cargo.toml"
"$venv/bin/python" "$here/judge.py" "$root/target/release/irpass-opt" "${args[@]}" "${models[@]}"
