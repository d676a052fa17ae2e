#!/usr/bin/env python3
"""Node counts of irpass's -O3 output against onnx-simplifier, onnxslim and ONNX Runtime's
basic level on transformer exports, with ONNX Runtime as the judge of irpass's output.

For each model: `irpass-opt MODEL -O3 -o OUT` must write a model ONNX Runtime runs to the
original's outputs (np.allclose, rtol=1e-3, atol=1e-4) on random inputs, at two sizes of the
symbolic dimensions where the model has them. The count of a model is its nodes other than
`Constant`, local functions inlined. `--rewrite-anchors` also runs irpass on onnxsim's and
onnxslim's outputs: that must never fail nor add nodes. `--timing N` times ONNX Runtime
(default session options, one intra-op thread) on irpass's and onnxsim's outputs, N runs each,
alternated, and reports the medians. `--process N` times whole processes, median of N runs
each: `irpass-opt MODEL -O3 -o OUT`, `cp MODEL OUT`, and onnxsim's whole job (a Python process
that imports onnx and onnxsim, loads, simplifies and saves).

Usage: compare.py IRPASS_OPT [--rewrite-anchors] [--timing N] [--process N] MODEL.onnx ...
Prints a Markdown table; exits 1 when a check fails or irpass writes more nodes than an anchor
and `--strict` is given.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort

# Element types and sizes as the ONNX Runtime judge of the torchvision exports reads them.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ort"))
from judge import ELEM, size_of  # noqa: E402

warnings.filterwarnings("ignore")
ort.set_default_logger_severity(3)
# The sizes a named dimension takes in the two runs of a model with symbolic dimensions.
SIZES = ({"batch": 1, "": 16}, {"batch": 3, "": 9})


def feeds_for(model, rng, sizes):
    """Random inputs: token ids below 1000 (the exports' vocabulary), attention masks of 1s
    and 0s (any other value overflows the exports' additive mask to -inf), floats N(0, 1)."""
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for i in model.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        shape = [size_of(d, sizes) for d in t.shape.dim]
        dtype = ELEM[t.elem_type]
        if np.issubdtype(dtype, np.integer):
            high = 2 if "mask" in i.name else 1000
            feeds[i.name] = rng.integers(0, high, size=shape).astype(dtype)
        else:
            feeds[i.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def count(model):
    if model.functions:
        from onnx import inliner

        model = inliner.inline_local_functions(model)
    return sum(1 for n in model.graph.node if n.op_type != "Constant")


def session(path, threads=None):
    so = ort.SessionOptions()
    if threads:
        so.intra_op_num_threads = threads
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def irpass(exe, src, out):
    subprocess.run([exe, src, "-O3", "-o", out], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)
    return count(onnx.load(out))


def onnxsim_(src, out):
    import onnxsim

    m, _ = onnxsim.simplify(onnx.load(src))
    onnx.save(m, out)
    return count(m)


def onnxslim_(src, out):
    import onnxslim

    m = onnxslim.slim(onnx.load(src))
    onnx.save(m, out)
    return count(m)


def ort_basic(src, out):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = out
    ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    return count(onnx.load(out))


def median_times(paths, feeds, runs):
    """Each model's median time of `runs` runs, taken twice: with the sessions made and run in
    the order given, and in the reverse order; the two medians are averaged. Within a pass the
    order also turns every round (A B, B A, ...). A fixed order measures the session run first
    slower: two copies of one model 2-5 % apart (LLaMA-style, 0.13 ms a run)."""
    half = [[], []]
    for direction, order in enumerate((list(range(len(paths))), list(reversed(range(len(paths)))))):
        sessions = [(i, session(paths[i], threads=1)) for i in order]
        for _, s in sessions:
            s.run(None, feeds)
        times = {i: [] for i in order}
        for r in range(runs):
            for i, s in sessions if r % 2 == 0 else reversed(sessions):
                start = time.perf_counter()
                s.run(None, feeds)
                times[i].append(time.perf_counter() - start)
        half[direction] = [float(np.median(times[i])) for i in range(len(paths))]
    return [(a + b) / 2 for a, b in zip(*half)]


def process_seconds(argv, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


ONNXSIM_JOB = "import sys, onnx, onnxsim; m, _ = onnxsim.simplify(onnx.load(sys.argv[1])); onnx.save(m, sys.argv[2])"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("irpass_opt")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--rewrite-anchors", action="store_true")
    ap.add_argument("--timing", type=int, default=0)
    ap.add_argument("--process", type=int, default=0)
    ap.add_argument("--strict", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(20261128)
    failures, rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.models:
            name = os.path.basename(path)[: -len(".onnx")]
            out = os.path.join(tmp, name + ".irpass.onnx")
            original = onnx.load(path)
            try:
                mine = irpass(args.irpass_opt, path, out)
            except subprocess.CalledProcessError as e:
                failures.append(f"{name}: irpass-opt failed: {e.stderr.decode().strip()}")
                continue
            symbolic = any(d.dim_param for i in original.graph.input for d in i.type.tensor_type.shape.dim)
            worst = 0.0
            for sizes in SIZES[: 2 if symbolic else 1]:
                feeds = feeds_for(original, rng, sizes)
                try:
                    want = session(path).run(None, feeds)
                    got = session(out).run(None, feeds)
                    for a, b in zip(want, got):
                        worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b))))
                    if len(want) != len(got) or not all(
                        a.shape == b.shape and np.allclose(a, b, rtol=1e-3, atol=1e-4) for a, b in zip(want, got)
                    ):
                        failures.append(f"{name}: ONNX Runtime computes other outputs at {sizes} (max |diff| {worst:g})")
                except Exception as e:  # noqa: BLE001
                    failures.append(f"{name}: ONNX Runtime cannot run the output: {e}")
            sim_out, slim_out = os.path.join(tmp, "sim.onnx"), os.path.join(tmp, "slim.onnx")
            sim = onnxsim_(path, sim_out)
            slim = onnxslim_(path, slim_out)
            basic = ort_basic(path, os.path.join(tmp, "basic.onnx"))
            row = [name, count(original), mine, sim, slim, basic]
            if args.rewrite_anchors:
                for who, anchor in (("onnxsim", sim_out), ("onnxslim", slim_out)):
                    try:
                        again = irpass(args.irpass_opt, anchor, os.path.join(tmp, "again.onnx"))
                    except subprocess.CalledProcessError as e:
                        failures.append(f"{name}: irpass-opt failed on {who}'s output: {e.stderr.decode().strip()}")
                        again = "failed"
                    before = count(onnx.load(anchor))
                    if again != "failed" and again > before:
                        failures.append(f"{name}: irpass-opt adds nodes to {who}'s output ({before} → {again})")
                    row.append(f"{before} → {again}")
            if args.timing:
                feeds = feeds_for(original, rng, SIZES[0])
                t_mine, t_sim = median_times([out, sim_out], feeds, args.timing)
                row += [f"{t_mine * 1e3:.3f}", f"{t_sim * 1e3:.3f}", f"{t_mine / t_sim:.3f}"]
            if args.process:
                scratch = os.path.join(tmp, "process.onnx")
                t_mine = process_seconds([args.irpass_opt, path, "-O3", "-o", scratch], args.process)
                t_cp = process_seconds(["cp", path, scratch], args.process)
                t_sim = process_seconds([sys.executable, "-c", ONNXSIM_JOB, path, scratch], args.process)
                row += [f"{t_mine:.3f}", f"{t_cp:.3f}", f"{t_sim:.3f}", f"{t_sim / t_mine:.1f}", f"{t_mine / t_cp:.1f}"]
            row.append(f"{worst:.3g}")
            if mine > min(sim, slim, basic):
                row[2] = f"**{mine}**"
            rows.append(row)
            print(" | ".join(map(str, row)), file=sys.stderr, flush=True)
    head = ["model", "nodes in", "irpass -O3", "onnxsim", "onnxslim", "ORT basic"]
    if args.rewrite_anchors:
        head += ["onnxsim → irpass", "onnxslim → irpass"]
    if args.timing:
        head += ["ORT ms irpass", "ORT ms onnxsim", "ratio"]
    if args.process:
        head += ["irpass-opt s", "cp s", "onnxsim job s", "onnxsim / irpass", "irpass / cp"]
    head.append("max abs diff")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(map(str, r)) + " |")
    more = [r[0] for r in rows if isinstance(r[2], str)]
    if more:
        print(f"\nirpass writes more nodes than an anchor on {len(more)} of {len(rows)}: {', '.join(more)}")
    if failures:
        print("\nFAILURES:", file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        sys.exit(1)
    if more and args.strict:
        sys.exit(1)


if __name__ == "__main__":
    main()
