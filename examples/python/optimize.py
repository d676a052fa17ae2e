"""Optimises a model with irpass from Python, TVM style: a pass written in Python, the O3
pipeline, an instrument and a timing report, and a check that the result computes what the
input did.

    python examples/python/optimize.py [MODEL.relay | MODEL.onnx] [-o OUT.onnx]

Without a model it optimises the bundled ResNet block (examples/models/resnet_block.relay).
Needs the package: `pip install ./python`.
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import sys

import numpy as np

from irpass import transform
from irpass.instrument import PassTimingInstrument, pass_instrument
from irpass.ir import Module

DEFAULT = pathlib.Path(__file__).resolve().parents[1] / "models" / "resnet_block.relay"


@transform.function_pass(opt_level=0)
def count_operators(func, mod, ctx):
    """Counts the operator calls of each function (and changes nothing)."""
    counts = collections.Counter(func.op(n) for n in func.find(kind="call"))
    print(f"@{func.name}: {sum(counts.values())} operator calls, "
          + ", ".join(f"{op} {k}" for op, k in counts.most_common(4)))
    return None


@pass_instrument
class ChangedPasses:
    """Records which passes changed the module."""

    def __init__(self) -> None:
        self.changed: list[str] = []
        self.before = None

    def run_before_pass(self, mod, info):
        self.before = mod

    def run_after_pass(self, mod, info):
        if info.kind != "sequential" and not mod.same_as(self.before):
            self.changed.append(info.name)


def random_inputs(mod: Module) -> list:
    """Random arrays for @main's parameters (their types from inference)."""
    mod.infer_types()
    main = mod["main"]
    rng = np.random.default_rng(0)
    args = []
    for n in main.param_nodes:
        ty = main.type_of(n)  # "Tensor[(1, 3, 8, 8), float32]"
        dims, dtype = ty[len("Tensor[("):-1].rsplit("), ", 1)
        shape = [int(d) for d in dims.split(",") if d.strip()]
        args.append(rng.standard_normal(shape).astype(dtype))
    return args


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", type=pathlib.Path, default=DEFAULT)
    parser.add_argument("-o", "--output", type=pathlib.Path, help="write the result (ONNX)")
    args = parser.parse_args()

    if args.model.suffix == ".onnx":
        mod = Module.from_onnx(args.model)
    else:
        mod = Module.parse(args.model.read_text(), name=str(args.model))
    inputs = random_inputs(mod)
    expected = mod.evaluate("main", *inputs)

    timing, changed = PassTimingInstrument(), ChangedPasses()
    pipeline = transform.Sequential(
        [count_operators, transform.standard_pipeline(3), count_operators], name="optimize")
    with transform.PassContext(opt_level=3, instruments=[timing, changed]):
        out = pipeline(mod)

    got = out.evaluate("main", *inputs)
    for e, g in zip(np.atleast_1d(expected), np.atleast_1d(got)):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
    print("passes that changed the module:", ", ".join(changed.changed))
    print(timing.render(), end="")
    print("the optimised module computes what the input did")
    if args.output:
        args.output.write_bytes(out.to_onnx())
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
