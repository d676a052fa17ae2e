"""Benchmarks of the Python package: what calling into Python costs a pass, and `O3` run from
Python against the same pipeline run from Rust (`cargo bench -p irpass-passes --bench
o3_models` measures the Rust side the same way: a freshly parsed module and a fresh context
per run, parsing outside the timing).

    python/tests/run.sh --co -q >/dev/null   # installs the package (release build) in target/py-venv
    target/py-venv/bin/python python/benches/passes.py

Prints medians over repeated runs.
"""

from __future__ import annotations

import pathlib
import statistics
import sys
import time

from irpass import _native, transform
from irpass.ir import Module

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ["mlp", "resnet_block", "mobilenet_block", "transformer_block", "gated_closures"]


def median_time(run, setup, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        arg = setup()
        start = time.perf_counter()
        run(arg)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def function_pass_overhead(functions: int = 1000, repeats: int = 30) -> None:
    text = "\n".join(
        f"def @f{i}(%x: Tensor[(4), float32]) {{ add(%x, %x) }}" for i in range(functions))
    modules = [Module.parse(text) for _ in range(repeats)]

    @transform.function_pass(opt_level=0)
    def identity(func, mod, ctx):
        return func

    # The same do-nothing function pass, written in Rust.
    rust_identity = _native.unchanged_function_pass()
    for threads in (1, 2):
        ctx = transform.PassContext(threads=threads)
        with ctx:
            it = iter(modules)
            py = median_time(identity, lambda: next(it), repeats)
            it = iter(modules)
            rust = median_time(rust_identity, lambda: next(it), repeats)
        per_fn = (py - rust) / functions * 1e6
        print(f"function pass over {functions} functions, threads={threads}: "
              f"Python {py * 1e3:.2f} ms, Rust {rust * 1e3:.2f} ms, "
              f"Python's cost {per_fn:.2f} us per function")


def o3_from_python(repeats: int = 200) -> None:
    o3 = transform.standard_pipeline(3)
    for name in MODELS:
        text = (ROOT / "examples" / "models" / f"{name}.relay").read_text()
        line = []
        for threads in (None, 1):
            def setup():
                return Module.parse(text), transform.PassContext(opt_level=3, threads=threads)

            def run(arg):
                mod, ctx = arg
                with ctx:
                    o3(mod)

            t = median_time(run, setup, repeats)
            line.append(f"{t * 1e6:.1f} us (threads={threads})")
        print(f"O3 from Python on {name}: " + ", ".join(line))


if __name__ == "__main__":
    which = sys.argv[1:] or ["overhead", "o3"]
    if "overhead" in which:
        function_pass_overhead()
    if "o3" in which:
        o3_from_python()
