#!/usr/bin/env python3
"""Writes a large ONNX model with its weights in external data, streamed layer by layer (the
script never holds more than one weight): LAYERS blocks of `MatMul` by a WIDTH x WIDTH float32
weight, `Add` of a bias and `Relu`, on an input of shape (1, WIDTH), opset 17.

The defaults (24 layers of 4096) make a 1.6 GB model; `--layers 400` makes one of 26.8 GB,
more than the 24 GiB of memory of the machine the benchmarks run on.

Usage: make_mlp.py OUT.onnx [--layers N] [--width N]   (the weights go to OUT.onnx.data)
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--width", type=int, default=4096)
    args = ap.parse_args()
    n, layers = args.width, args.layers
    data_name = os.path.basename(args.out) + ".data"
    data_path = os.path.join(os.path.dirname(os.path.abspath(args.out)), data_name)
    rng = np.random.default_rng(20261128)
    inits, nodes = [], []
    x = "x"
    with open(data_path, "wb") as data:

        def external(name, array):
            offset = data.tell()
            # Each tensor starts on a page, as ONNX Runtime maps page-aligned data.
            pad = -offset % 4096
            data.write(b"\0" * pad)
            offset += pad
            data.write(array.tobytes())
            t = TensorProto()
            t.name = name
            t.data_type = TensorProto.FLOAT
            t.dims.extend(array.shape)
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", data_name), ("offset", str(offset)), ("length", str(array.nbytes))):
                e = t.external_data.add()
                e.key, e.value = k, v
            inits.append(t)

        for i in range(layers):
            w = (rng.standard_normal((n, n), dtype=np.float32) * (1.0 / np.sqrt(n))).astype(np.float32)
            external(f"w{i}", w)
            del w
            external(f"b{i}", (rng.standard_normal(n, dtype=np.float32) * 0.01).astype(np.float32))
            nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"], name=f"matmul{i}"))
            nodes.append(helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"add{i}"))
            nodes.append(helper.make_node("Relu", [f"a{i}"], [f"r{i}"], name=f"relu{i}"))
            x = f"r{i}"
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, n])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(args.out, "wb") as f:
        f.write(model.SerializeToString())
    print(f"{args.out}: {layers} layers of {n}, {os.path.getsize(data_path)} bytes of weights")


if __name__ == "__main__":
    main()
