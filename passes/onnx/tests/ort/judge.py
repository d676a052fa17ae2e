#!/usr/bin/env python3
"""ONNX Runtime as the judge of irpass's ONNX output.

For each model given (default: ONNX's light models in tests/data/light/), runs
`irpass-opt MODEL -O3 -o OUT.onnx` and checks that:
  - `onnx.checker` accepts OUT (full check, with shape inference);
  - ONNX Runtime gives the same outputs for MODEL and OUT on the same random inputs
    (np.allclose, rtol=1e-3, atol=1e-4);
  - the same holds for OUT written with `--external-data` and with `--opset 13` (17 for a
    model at 13).
A model with symbolic dimensions (`dim_param`) must keep them by name on the written graph's
inputs and outputs, and is run at two sizes of them (`batch` 1 and 4, other names 7 and 16).
A model failing either check makes the script exit 1. It also reports, per model, the node
counts of the input, of onnxsim's output and of ONNX Runtime's basic-level output beside
irpass's (local functions inlined), and the wall time of the whole `irpass-opt` process (best of 10) beside onnxsim's whole job (load,
simplify, save; best of 3 below a second) and a copy of the file (best of 10): a comparison,
printed as a Markdown table.

Usage: judge.py IRPASS_OPT [--extra-config KEY=VALUE ...] [MODEL.onnx ...]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort

ort.set_default_logger_severity(3)
HERE = os.path.dirname(os.path.abspath(__file__))
LIGHT = os.path.join(HERE, "..", "data", "light")

ELEM = {1: np.float32, 11: np.float64, 6: np.int32, 7: np.int64, 9: np.bool_}


# The sizes a named dimension takes in the two runs of a model with symbolic dimensions.
SIZES = ({"batch": 1, "": 7}, {"batch": 4, "": 16})


def size_of(dim, sizes):
    if dim.HasField("dim_value"):
        return dim.dim_value
    if not dim.dim_param:
        return 1
    return sizes["batch"] if "batch" in dim.dim_param else sizes[""]


def dims(values):
    """Each value's dimensions: a size, a name, or None."""
    return [
        [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in v.type.tensor_type.shape.dim]
        for v in values
    ]


def feeds_for(model, rng, sizes=SIZES[0]):
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for i in model.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        shape = [size_of(d, sizes) for d in t.shape.dim]
        dtype = ELEM[t.elem_type]
        if dtype == np.bool_:
            feeds[i.name] = rng.random(shape) < 0.5
        elif np.issubdtype(dtype, np.integer):
            feeds[i.name] = rng.integers(0, 10, size=shape).astype(dtype)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def run(path_or_bytes, feeds):
    sess = ort.InferenceSession(path_or_bytes, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def ort_basic_nodes(path, out):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = out
    ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return len(onnx.load(out).graph.node)


def onnxsim_job(path, out):
    """onnxsim's whole job, as its command line does it: load, simplify, save."""
    import onnxsim

    start = time.perf_counter()
    model = onnx.load(path)
    simplified, ok = onnxsim.simplify(model)
    onnx.save(simplified, out)
    return time.perf_counter() - start, len(simplified.graph.node), ok


def variants(irpass_opt, path, name, tmp, original, feeds, want):
    """The same model written with external data, and at another opset (13, or 17 for a
    model at 13): each must pass the checker and compute what the input computes."""
    failures = []
    opset = next(o.version for o in original.opset_import if o.domain in ("", "ai.onnx"))
    other = 17 if opset == 13 else 13
    for what, flags in (("--external-data", ["--external-data"]), (f"--opset {other}", ["--opset", str(other)])):
        folder = os.path.join(tmp, name + "." + flags[0].strip("-"))
        os.makedirs(folder, exist_ok=True)
        out = os.path.join(folder, "model.onnx")
        try:
            subprocess.run([irpass_opt, path, "-O3", "-o", out, *flags], check=True, stdout=subprocess.DEVNULL)
            onnx.checker.check_model(out, full_check=True)
            got = run(out, feeds)
            if not all(np.allclose(a, b, rtol=1e-3, atol=1e-4) for a, b in zip(want, got)):
                failures.append(f"{name} with {what}: ONNX Runtime computes other outputs")
        except Exception as e:  # noqa: BLE001 - irpass-opt, the checker or ORT
            failures.append(f"{name} with {what}: {e}")
    return failures


def node_count(model):
    """Nodes of the graph with its local functions inlined (irpass writes FuseOps's groups as
    functions from opset 15)."""
    if model.functions:
        from onnx import inliner

        model = inliner.inline_local_functions(model)
    return len(model.graph.node)


def best_of(n, f):
    best = None
    for _ in range(n):
        t = f()
        best = t if best is None else min(best, t)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("irpass_opt")
    ap.add_argument("models", nargs="*")
    ap.add_argument("--extra-config", action="append", default=[])
    ap.add_argument("--no-onnxsim", action="store_true", help="skip the onnxsim comparison")
    args = ap.parse_intermixed_args()
    models = args.models or sorted(
        os.path.join(LIGHT, f) for f in os.listdir(LIGHT) if f.endswith(".onnx")
    )
    failures = []
    rows = []
    rng = np.random.default_rng(20261125)
    with tempfile.TemporaryDirectory() as tmp:
        for path in models:
            name = os.path.basename(path)[: -len(".onnx")]
            out = os.path.join(tmp, name + ".irpass.onnx")
            cmd = [args.irpass_opt, path, "-O3", "-o", out]
            for c in args.extra_config:
                cmd += ["--config", c]

            def irpass():
                start = time.perf_counter()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                return time.perf_counter() - start

            try:
                t_irpass = best_of(10, irpass)
            except subprocess.CalledProcessError as e:
                failures.append(f"{name}: irpass-opt failed ({e})")
                continue
            def copy():
                start = time.perf_counter()
                shutil.copyfile(path, os.path.join(tmp, "copy"))
                return time.perf_counter() - start

            t_copy = best_of(10, copy)
            original = onnx.load(path)
            written = onnx.load(out)
            try:
                onnx.checker.check_model(written, full_check=True)
            except Exception as e:  # noqa: BLE001 - the checker raises several kinds
                failures.append(f"{name}: onnx.checker rejects the output: {e}")
            feeds = feeds_for(original, rng)
            try:
                want = run(path, feeds)
                got = run(out, feeds)
                worst = max(float(np.max(np.abs(a.astype(np.float64) - b))) for a, b in zip(want, got))
                if len(want) != len(got) or not all(
                    a.shape == b.shape and np.allclose(a, b, rtol=1e-3, atol=1e-4) for a, b in zip(want, got)
                ):
                    failures.append(f"{name}: ONNX Runtime computes other outputs (max |diff| {worst:g})")
            except Exception as e:  # noqa: BLE001
                failures.append(f"{name}: ONNX Runtime cannot run the output: {e}")
                worst = float("nan")
            symbolic = any(d.dim_param for i in original.graph.input for d in i.type.tensor_type.shape.dim)
            if symbolic:
                inputs = [i for i in original.graph.input if i.name not in {t.name for t in original.graph.initializer}]
                if dims(written.graph.input) != dims(inputs) or dims(written.graph.output) != dims(original.graph.output):
                    failures.append(f"{name}: the written inputs and outputs do not keep the symbolic dimensions "
                                    f"({dims(written.graph.input)} -> {dims(written.graph.output)})")
                other = feeds_for(original, rng, SIZES[1])
                try:
                    if not all(a.shape == b.shape and np.allclose(a, b, rtol=1e-3, atol=1e-4)
                               for a, b in zip(run(path, other), run(out, other))):
                        failures.append(f"{name}: ONNX Runtime computes other outputs at {SIZES[1]}")
                except Exception as e:  # noqa: BLE001
                    failures.append(f"{name}: ONNX Runtime cannot run the output at {SIZES[1]}: {e}")
            if not failures or not failures[-1].startswith(name + ":"):
                failures += variants(args.irpass_opt, path, name, tmp, original, feeds, want)
            basic = ort_basic_nodes(path, os.path.join(tmp, "basic.onnx"))
            if args.no_onnxsim:
                t_sim, sim_nodes = float("nan"), -1
            else:
                sim_out = os.path.join(tmp, "sim.onnx")
                t_sim, sim_nodes, _ = onnxsim_job(path, sim_out)
                if t_sim < 1.0:  # quick ones: the best of three, as for irpass
                    t_sim = min(t_sim, *(onnxsim_job(path, sim_out)[0] for _ in range(2)))
            rows.append(
                (name, len(original.graph.node), node_count(written), sim_nodes, basic,
                 t_irpass, t_sim, t_copy, os.path.getsize(path), os.path.getsize(out), worst)
            )
    print("| model | nodes in | irpass -O3 | onnxsim | ORT basic | irpass-opt (s) | onnxsim job (s) | copy (s) | size in → out (bytes) | max abs diff |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]:.4f} | {r[6]:.3f} | {r[7]:.5f} | {r[8]} → {r[9]} | {r[10]:.3g} |")
    if failures:
        print("\nFAILURES:", file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        sys.exit(1)
    print(f"\nall {len(rows)} models: onnx.checker accepts the output and ONNX Runtime computes the same outputs")


if __name__ == "__main__":
    main()
