"""Optimises a model with irpass from Python, TVM style: weights bound as constants, a pass
written in Python, the O3 pipeline, an instrument and a timing report, and a check that the
result computes what the input did.

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


def random_array(ty, rng, low=-1.0, high=1.0):
    """A random array of a tensor type (unknown sizes taken as 1)."""
    shape = [1 if d is None else d for d in ty.shape]
    return rng.uniform(low, high, shape).astype(ty.dtype)


def bind_weights(mod: Module, rng) -> Module:
    """Binds every parameter of @main but the first to random weights (positive, so that
    batch-norm variances are), as a model's trained weights would be: constants, which O3
    folds into the convolutions."""
    mod.infer_types()
    main = mod["main"]
    types = main.checked_type.params
    weights = {name: random_array(ty, rng, 0.5, 1.5)
               for name, ty in list(zip(main.params, types))[1:]}
    return mod.bind_params(weights)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", type=pathlib.Path, default=DEFAULT)
    parser.add_argument("-o", "--output", type=pathlib.Path, help="write the result (ONNX)")
    args = parser.parse_args()

    if args.model.suffix == ".onnx":
        mod = Module.from_onnx(args.model)
    else:
        mod = Module.parse(args.model.read_text(), name=str(args.model))
    rng = np.random.default_rng(0)
    if args.model.suffix != ".onnx":
        mod = bind_weights(mod, rng)
    mod.infer_types()
    inputs = [random_array(ty, rng) for ty in mod["main"].checked_type.params]
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
