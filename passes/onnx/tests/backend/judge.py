#!/usr/bin/env python3
"""ONNX's backend test suite through irpass.

Each case is a folder with `model.onnx` and `test_data_set_N/{input,output}_K.pb`. For every
case (the node cases of the `onnx` source distribution, and the `simple`, `pytorch-converted`
and `pytorch-operator` cases of the installed wheel), this script:
  1. runs the model in ONNX Runtime on each data set and compares with the expected outputs
     (ONNX's backend tolerances: rtol=1e-3, atol=1e-7; a model that draws random numbers by
     its outputs' shapes, types and support, `alike`). Where ONNX Runtime cannot load or run
     the case (its Python binding takes no float8, int4 or bfloat16 arrays) or runs it to
     other values (its float32 DFT), `onnx.reference` judges instead if it reproduces them;
     a case neither runs to its values is out of the suite for irpass too (reported as
     `ort-fails`);
  2. runs `irpass-opt model.onnx -O0 -o out.onnx` and `-O3`, and for each output checks that
     `onnx.checker` accepts it and that the same judge (ONNX Runtime, or onnx.reference)
     gives the expected outputs.
A case passes when both levels do; for a passing case the operators still kept opaque after
`-O3` (`onnx.node` calls in the IR, by `--emit text`) are recorded. The outcomes: `pass`, `refused` (irpass-opt exited with an
error: what it does not hold yet), `crash` (irpass-opt panicked or died), `invalid` (the
checker rejects what irpass wrote), `ort-rejects` (ONNX Runtime cannot load it), `wrong`
(it runs, to other values).

The committed list `passing.txt` is the ratchet: with `--check`, the script fails when a listed
case does not pass, when any case crashes, and when any case is `wrong` or `invalid` (irpass must
refuse what it cannot hold, never write a wrong model); `ort_fails.txt` lists the cases out of
the suite with ONNX Runtime's reason, and `--check` fails when that set changes. `--bless`
rewrites both lists. `opaque_after_o3.txt` lists the passing cases that keep opaque nodes after
`-O3`, with their operators: `--check` fails on a case not listed that keeps one (the list only
shrinks), and `--bless` rewrites it.

Usage: judge.py IRPASS_OPT CASES_DIR... [--check] [--bless] [--jobs N] [--filter SUBSTRING]
"""
import argparse
import collections
import glob
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
PASSING = os.path.join(HERE, "passing.txt")
PASSING_INTERP = os.path.join(HERE, "passing_interp.txt")
ORT_FAILS = os.path.join(HERE, "ort_fails.txt")
OPAQUE_AFTER = os.path.join(HERE, "opaque_after_o3.txt")
RTOL, ATOL = 1e-3, 1e-7
LEVELS = ("0", "3")
# Operators that draw random numbers: no oracle reproduces a case's values except by chance
# (onnx.reference matches test_bernoulli_double's about one run in a hundred), so a case using
# one is judged by `alike` instead of `close`: the outputs' shapes and types, and their values
# in the expected ones' support.
RANDOM_OPS = {"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform",
              "RandomUniformLike", "RandomDropout"}


def draws_random(model):
    """Whether the model, its functions or subgraphs use an operator in RANDOM_OPS, or a
    `Dropout` in training mode (given as its third input)."""
    def graph_ops(graph):
        for node in graph.node:
            training = node.op_type == "Dropout" and len(node.input) > 2 and node.input[2]
            yield "RandomDropout" if training else node.op_type
            for attr in node.attribute:
                for g in [attr.g] * attr.HasField("g") + list(attr.graphs):
                    yield from graph_ops(g)
    ops = set(graph_ops(model.graph))
    for f in model.functions:
        ops.update(n.op_type for n in f.node)
    return bool(ops & RANDOM_OPS)


def read_value(path, type_proto):
    """A data set's value, as ONNX Runtime takes it, for a graph input or output's type."""
    with open(path, "rb") as f:
        data = f.read()
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        proto = onnx.SequenceProto()
        proto.ParseFromString(data)
        return numpy_helper.to_list(proto)
    if kind == "optional_type":
        proto = onnx.OptionalProto()
        proto.ParseFromString(data)
        return numpy_helper.to_optional(proto)
    if kind == "map_type":
        proto = onnx.MapProto()
        proto.ParseFromString(data)
        return numpy_helper.to_dict(proto)
    proto = onnx.TensorProto()
    proto.ParseFromString(data)
    return numpy_helper.to_array(proto)


def data_sets(case, model):
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    sets = []
    for d in sorted(glob.glob(os.path.join(case, "test_data_set_*"))):
        n_in = len(glob.glob(os.path.join(d, "input_*.pb")))
        n_out = len(glob.glob(os.path.join(d, "output_*.pb")))
        feeds = {
            inputs[k].name: read_value(os.path.join(d, f"input_{k}.pb"), inputs[k].type)
            for k in range(min(n_in, len(inputs)))
        }
        want = [
            read_value(os.path.join(d, f"output_{k}.pb"), model.graph.output[k].type)
            for k in range(min(n_out, len(model.graph.output)))
        ]
        sets.append((feeds, want))
    return sets


def close(got, want):
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            close(g, w) for g, w in zip(got, want))
    if want is None:
        return got is None
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if want.dtype.kind in "OSU":
        return bool(np.all(got == want))
    if want.dtype.kind in "biu" or want.dtype == np.bool_:
        return bool(np.array_equal(got, want))
    return bool(np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=RTOL,
                            atol=ATOL, equal_nan=True))


def alike(got, want):
    """A random draw's judgement: the same shape and element type as the expected value, and
    where that holds only zeros and ones (a Bernoulli draw), only zeros and ones; a float draw's
    values finite where the expected ones are."""
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            alike(g, w) for g, w in zip(got, want))
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.size and np.isin(want, (0, 1)).all():
        return bool(np.isin(got, (0, 1)).all())
    if want.dtype.kind == "f":
        return bool(np.isfinite(got[np.isfinite(want)]).all())
    return True


def ort_matches(model_bytes, sets, compare=close):
    so = ort.SessionOptions()
    so.log_severity_level = 4
    sess = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    for feeds, want in sets:
        got = sess.run(None, feeds)
        if not all(compare(g, w) for g, w in zip(got, want)):
            return False
    return True


def reference_matches(model_bytes, sets, compare=close):
    """The same judgement by `onnx.reference` (ONNX's own numpy implementation of every
    operator), for the cases ONNX Runtime's Python binding cannot feed or return."""
    from onnx.reference import ReferenceEvaluator

    model = onnx.load_from_string(model_bytes)
    ev = ReferenceEvaluator(model)
    for feeds, want in sets:
        got = ev.run(None, feeds)
        if not all(compare(g, w) for g, w in zip(got, want)):
            return False
    return True


def first_line(text):
    for line in text.splitlines():
        line = line.strip()
        if line:
            return re.sub(r"\s+", " ", line)[:160]
    return ""


def refusal(stderr):
    """irpass-opt's error in one line: for operators it cannot import, their names (with the
    reason where one is given), each once."""
    lines = stderr.splitlines()
    head = first_line(stderr).removeprefix("irpass-opt: error: ")
    if "operator use(s) irpass cannot import" not in head:
        return head
    ops = []
    for line in lines[1:]:
        m = re.match(r"\s+(\S+) \(opset \d+\) at node `.*?`(?:: (.*))?$", line)
        if m:
            op = m.group(1) + (f" ({m.group(2)})" if m.group(2) else "")
            if op not in ops:
                ops.append(op)
    return "cannot import: " + " | ".join(ops)


def interpret(runner, case, model, ort_differs=False):
    """The case run by irpass's interpreter (`runner`, the `run_model` example) on each data
    set: (outcome, detail), the outcome `pass`, `refused` (the model does not import), `fails`
    (it imports and does not run: a kernel irpass lacks), `crash` or `wrong` — or, for a case
    ONNX Runtime too runs to other values than the case's (`ort_differs`), `ort-differs`
    instead of `wrong`: out of the interpreter's suite, with the reason."""
    with tempfile.TemporaryDirectory() as tmp:
        for d in sorted(glob.glob(os.path.join(case, "test_data_set_*"))):
            ins = sorted(glob.glob(os.path.join(d, "input_*.pb")),
                         key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
            out = os.path.join(tmp, os.path.basename(d))
            proc = subprocess.run([runner, os.path.join(case, "model.onnx"), out, *ins],
                                  capture_output=True, text=True, timeout=300)
            detail = first_line(proc.stderr).removeprefix("run_model: ")
            if proc.returncode == 1:
                return "refused", detail
            if proc.returncode == 3:
                return "fails", detail
            if proc.returncode != 0:
                return "crash", f"exit {proc.returncode}: {detail}"
            for k, output in enumerate(model.graph.output):
                want = read_value(os.path.join(d, f"output_{k}.pb"), output.type)
                path = os.path.join(out, f"output_{k}.pb")
                if not os.path.exists(path):
                    return "fails", f"no output {k}"
                got = read_value(path, output.type)
                if not (alike if draws_random(model) else close)(got, want):
                    worst = np.nanmax(np.abs(np.asarray(got, dtype=np.float64)
                                             - np.asarray(want, dtype=np.float64)))
                    if ort_differs:
                        return "ort-differs", (f"output {k} ({output.name}) differs by up to "
                                               f"{worst:.3g}, as ONNX Runtime's does")
                    return "wrong", f"output {k} ({output.name}) differs"
    return "pass", ""


def judge(job):
    """One case: (name, outcome, detail, interpreter outcome, its detail)."""
    irpass_opt, runner, case = job
    name = case_name(case)
    facts = set()
    outcome, detail = judge_opt(irpass_opt, case, facts)
    opaque = opaque_after_o3(irpass_opt, case) if outcome == "pass" else []
    if runner is None or outcome == "ort-fails":
        return name, outcome, detail, None, "", opaque
    model = onnx.load(os.path.join(case, "model.onnx"))
    return (name, outcome, detail,
            *interpret(runner, case, model, "ort-differs" in facts), opaque)


def opaque_after_o3(irpass_opt, case):
    """The operators (domain-qualified outside the default domain) of the nodes still kept
    opaque in the case's model after `-O3`, sorted, one entry per node."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "O3.txt")
        subprocess.run([irpass_opt, os.path.join(case, "model.onnx"), "-O3", "--emit", "text",
                        "-o", out], capture_output=True, timeout=300, check=True)
        with open(out) as f:
            text = f.read()
    ops = []
    for call in re.findall(r"onnx\.node\([^\n]*", text):
        op = re.search(r'op_type="([^"]*)"', call)
        domain = re.search(r'domain="([^"]*)"', call)
        if op:
            ops.append(f"{domain.group(1)}.{op.group(1)}" if domain and domain.group(1)
                       else op.group(1))
    return sorted(ops)


def judge_opt(irpass_opt, case, facts):
    """The case through `irpass-opt -O0` and `-O3`, judged by the oracle: (outcome, detail);
    `ort-differs` is added to `facts` where ONNX Runtime runs the case to other values."""
    try:
        model_path = os.path.join(case, "model.onnx")
        model = onnx.load(model_path)
        compare = alike if draws_random(model) else close
        sets = data_sets(case, model)
        with open(model_path, "rb") as f:
            original = f.read()
        if not ort_matches(original, sets, compare):
            # (onnx.reference may reproduce the case: ONNX Runtime's DFT is float32 through.)
            facts.add("ort-differs")
            raise ValueError("ONNX Runtime gives other values than the case")
        oracle = "ONNX Runtime"

        def matches(model_bytes, sets):
            return ort_matches(model_bytes, sets, compare)
    except Exception as e:  # noqa: BLE001 — ONNX Runtime's own refusals, of every kind
        # The second oracle: onnx.reference, where it runs the case to its values.
        try:
            if not reference_matches(original, sets, compare):
                raise ValueError("onnx.reference gives other values than the case")
            oracle = "onnx.reference"

            def matches(model_bytes, sets):
                return reference_matches(model_bytes, sets, compare)
        except Exception:  # noqa: BLE001
            return "ort-fails", first_line(str(e))
    # The checker's full check runs shape inference, which fails on a few of ONNX's own
    # cases (a function body it cannot infer): then irpass's output gets the same check the
    # original passes.
    try:
        onnx.checker.check_model(model_path, full_check=True)
        full_check = True
    except Exception:  # noqa: BLE001
        full_check = False
    with tempfile.TemporaryDirectory() as tmp:
        for level in LEVELS:
            out = os.path.join(tmp, f"O{level}.onnx")
            proc = subprocess.run([irpass_opt, model_path, f"-O{level}", "-o", out],
                                  capture_output=True, text=True, timeout=300)
            if proc.returncode in (1, 2):
                return "refused", refusal(proc.stderr.replace(model_path + ": ", ""))
            if proc.returncode != 0:
                return "crash", f"-O{level}: exit {proc.returncode}: {first_line(proc.stderr)}"
            try:
                onnx.checker.check_model(out, full_check=full_check)
            except Exception as e:  # noqa: BLE001
                return "invalid", f"-O{level}: {first_line(str(e))}"
            try:
                with open(out, "rb") as f:
                    ok = matches(f.read(), sets)
            except Exception as e:  # noqa: BLE001
                return "ort-rejects", f"-O{level}: {oracle}: {first_line(str(e))}"
            if not ok:
                return "wrong", f"-O{level}: {oracle} gives other values"
    return "pass", ""


def case_name(case):
    parts = os.path.normpath(case).split(os.sep)
    return f"{parts[-2]}/{parts[-1]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("irpass_opt")
    ap.add_argument("dirs", nargs="+", help="folders of cases (each case a folder)")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--bless", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--filter", default="")
    ap.add_argument("--interpreter", metavar="RUN_MODEL",
                    help="also run each case in irpass's interpreter with this runner (the "
                         "run_model example), ratcheted by passing_interp.txt")
    ap.add_argument("--list", choices=["refused", "crash", "invalid", "wrong", "ort-rejects",
                                       "ort-fails", "pass", "interp-refused", "interp-fails",
                                       "interp-pass"], action="append", default=[])
    args = ap.parse_args()

    cases = sorted(c for d in args.dirs for c in glob.glob(os.path.join(d, "*"))
                   if os.path.isfile(os.path.join(c, "model.onnx")) and args.filter in c)
    jobs = [(args.irpass_opt, args.interpreter, c) for c in cases]
    with multiprocessing.Pool(args.jobs) as pool:
        results = sorted(pool.imap_unordered(judge, jobs, chunksize=4))

    outcome = collections.Counter(r[1] for r in results)
    in_suite = len(results) - outcome["ort-fails"]
    print(f"{len(results)} cases; {outcome['ort-fails']} that neither ONNX Runtime nor onnx.reference runs; "
          f"of the {in_suite} others irpass passes {outcome['pass']}")
    for k in ("refused", "crash", "invalid", "ort-rejects", "wrong"):
        print(f"  {k}: {outcome[k]}")
    reasons = collections.Counter(
        re.sub(r"\d+", "N", re.sub(r"`[^`]*`", "`…`", r[2]))[:110]
        for r in results if r[1] == "refused")
    blocking = collections.Counter(
        op.split(" ")[0] for r in results if r[1] == "refused"
        and r[2].startswith("cannot import: ") for op in r[2][len("cannot import: "):].split(" | "))
    print("most common refusals (other than operators):")
    for reason, n in reasons.most_common(40):
        if not reason.startswith("cannot import: "):
            print(f"  {n:5}  {reason}")
    print("operators that keep cases out (cases each):")
    print("  " + ", ".join(f"{op} {n}" for op, n in blocking.most_common()))
    for name, kind, detail, *_ in results:
        if kind in ("crash", "invalid", "wrong", "ort-rejects") or kind in args.list:
            print(f"{kind}: {name}: {detail}")
    interp = [(r[0], r[3], r[4]) for r in results if r[3] is not None]
    if args.interpreter:
        counts = collections.Counter(r[1] for r in interp)
        print(f"irpass's interpreter: of the {len(interp)} cases in the suite it reproduces "
              f"{counts['pass']}")
        for k in ("refused", "fails", "crash", "wrong", "ort-differs"):
            print(f"  {k}: {counts[k]}")
        missing = collections.Counter(
            m.group(1) for r in interp if r[1] == "fails"
            for m in [re.search(r"`([^`]*)` is kept opaque", r[2])] if m)
        print("operators the interpreter cannot run (cases each):")
        print("  " + ", ".join(f"{op} {n}" for op, n in missing.most_common()))
        others = collections.Counter(
            re.sub(r"\d+", "N", re.sub(r"`[^`]*`", "`…`", r[2]))[:110] for r in interp
            if r[1] in ("refused", "fails") and "is kept opaque" not in r[2])
        print("other reasons:")
        for reason, n in others.most_common(30):
            print(f"  {n:5}  {reason}")
        for name, kind, detail in interp:
            if kind in ("crash", "wrong", "ort-differs") or f"interp-{kind}" in args.list:
                print(f"interpreter {kind}: {name}: {detail}")

    opaque = {r[0]: r[5] for r in results if r[1] == "pass" and r[5]}
    print(f"after -O3, {len(opaque)} of the {outcome['pass']} passing cases keep opaque nodes "
          "(cases each):")
    print("  " + ", ".join(f"{op} {n}" for op, n in collections.Counter(
        op for ops in opaque.values() for op in set(ops)).most_common()))

    passing = {r[0] for r in results if r[1] == "pass"}
    ort_fails = {r[0]: r[2] for r in results if r[1] == "ort-fails"}
    passing_interp = {r[0] for r in interp if r[1] == "pass"}
    if args.bless and args.interpreter:
        with open(PASSING_INTERP, "w") as f:
            f.write("# The backend-suite cases irpass's interpreter reproduces (judge.py --interpreter\n"
                    "# RUN_MODEL --bless writes this file).\n")
            f.writelines(f"{n}\n" for n in sorted(passing_interp))
    if args.bless:
        with open(OPAQUE_AFTER, "w") as f:
            f.write("# The passing backend-suite cases that keep opaque nodes after -O3, with those\n"
                    "# nodes' operators (judge.py --bless writes this file).\n")
            f.writelines(f"{n}\t{' '.join(ops)}\n" for n, ops in sorted(opaque.items()))
        with open(PASSING, "w") as f:
            f.write("# The backend-suite cases irpass passes (judge.py --bless writes this file).\n")
            f.writelines(f"{n}\n" for n in sorted(passing))
        with open(ORT_FAILS, "w") as f:
            f.write("# The backend-suite cases that ONNX Runtime (its Python binding, as judge.py feeds it)\n"
                    "# cannot run to the case's values, nor onnx.reference, with ONNX Runtime's reason:\n"
                    "# out of the suite.\n"
                    "# (judge.py --bless writes this file.)\n")
            f.writelines(f"{n}\t{why}\n" for n, why in sorted(ort_fails.items()))
    if args.check:
        listed = set()
        if os.path.exists(PASSING):
            with open(PASSING) as f:
                listed = {l.strip() for l in f if l.strip() and not l.startswith("#")}
        judged = {r[0] for r in results}
        excluded = set()
        if os.path.exists(ORT_FAILS):
            with open(ORT_FAILS) as f:
                excluded = {l.split("\t")[0] for l in f if l.strip() and not l.startswith("#")}
        drift = sorted(n for n in judged if (n in excluded) != (n in ort_fails))
        if drift:
            print("the cases out of the suite differ from ort_fails.txt (judge.py --bless):\n  "
                  + "\n  ".join(drift))
        lost = sorted(n for n in listed if n in judged and n not in passing)
        new = sorted(passing - listed)
        bad = [r for r in results if r[1] in ("crash", "invalid", "wrong")]
        if args.interpreter:
            listed_interp = set()
            if os.path.exists(PASSING_INTERP):
                with open(PASSING_INTERP) as f:
                    listed_interp = {l.strip() for l in f if l.strip() and not l.startswith("#")}
            lost += sorted(f"{n} (interpreter)" for n in listed_interp
                           if n in judged and n not in passing_interp)
            bad += [r for r in interp if r[1] in ("crash", "wrong")]
            new_interp = passing_interp - listed_interp
            if new_interp:
                print(f"{len(new_interp)} cases pass in the interpreter that passing_interp.txt "
                      "does not list (judge.py --bless adds them)")
        if new:
            print(f"{len(new)} cases pass that passing.txt does not list (judge.py --bless adds them)")
        if lost:
            print("listed as passing, no longer passing:\n  " + "\n  ".join(lost))
        allowed = set()
        if os.path.exists(OPAQUE_AFTER):
            with open(OPAQUE_AFTER) as f:
                allowed = {l.split("\t")[0] for l in f if l.strip() and not l.startswith("#")}
        newly_opaque = sorted(f"{n}: {' '.join(ops)}" for n, ops in opaque.items()
                              if n not in allowed)
        if newly_opaque:
            print("keep opaque nodes after -O3, not listed in opaque_after_o3.txt:\n  "
                  + "\n  ".join(newly_opaque))
        if lost or bad or drift or newly_opaque:
            sys.exit(1)


if __name__ == "__main__":
    main()
