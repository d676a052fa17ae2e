"""TVM's pass-manager tests (tests/python/relay/test_pass_manager.py), translated: module,
function and sequential passes, passes made from classes, `PassInfo`, scoping by opt level and
disabled passes in (nested) Sequentials, `PrintIR`, and the debug callback.

TVM builds its programs with Relay's Python builders and rewrites them with ``ExprMutator``;
here programs are text and a replacement function comes from text too. What each test checks
is TVM's: the pass objects, their ``PassInfo``, what a run returns, and the numbers the result
computes.
"""

import numpy as np
import pytest

from irpass import transform
from irpass.ir import Function, Module


def fn(text: str, name: str = "main") -> Function:
    return Module.parse(text)[name]


ABS = "def @myAbs(%x: Tensor[(5, 10), float32]) { abs(%x) }"
ADD = "def @myAdd(%x: Tensor[(5, 10), float32], %y: Tensor[(5, 10), float32]) { add(%x, %y) }"
LOG = "def @myLog(%x: Tensor[(10), float32]) { log(%x) }"
LOG2 = "def @myLog(%x: Tensor[(10), float32]) { log(add(%x, %x)) }"
SUB = "def @mySub(%x: Tensor[(10), float32], %y: Tensor[(10), float32]) { subtract(%x, %y) }"
SUB2 = ("def @mySub(%x: Tensor[(10), float32], %y: Tensor[(10), float32]) "
        "{ subtract(add(%x, %x), add(%y, %y)) }")
ABS2 = "def @myAbs(%x: Tensor[(5, 10), float32]) { abs(add(%x, %x)) }"


def add_abs(mod, ctx):
    """Adds @myAbs to the module (TVM's OptTester.transform on a module)."""
    out = Module.parse(str(mod) + "\n" + ABS)
    return out


# TVM's DoubleValues mutator, as the functions it produces.
DOUBLED = {"myLog": fn(LOG2, "myLog"), "mySub": fn(SUB2, "mySub"), "myAbs": fn(ABS2, "myAbs")}


def double_values(func, mod, ctx):
    """Doubles every variable use (TVM's DoubleValues on a function)."""
    return DOUBLED[func.name]


def rand(*shape):
    return np.random.rand(*shape).astype("float32")


def test_module_pass():
    mod = Module.parse(ADD)
    module_pass = transform.module_pass(add_abs, opt_level=0, name="module_pass_test")
    assert isinstance(module_pass, transform.ModulePass)
    assert module_pass.info.name == "module_pass_test"
    assert module_pass.info.opt_level == 0

    updated = module_pass(mod)
    assert isinstance(updated, Module)
    assert updated["myAbs"] == fn(ABS, "myAbs")
    assert updated["myAdd"] == mod["myAdd"]
    x, y = rand(5, 10), rand(5, 10)
    np.testing.assert_allclose(updated.evaluate("myAdd", x, y), x + y, rtol=1e-5)


def test_function_class_pass():
    @transform.function_pass(opt_level=1)
    class TestReplaceFunc:
        """Replaces every function."""

        def __init__(self, new_func):
            self.new_func = new_func

        def transform_function(self, func, mod, ctx):
            return self.new_func

    f1 = fn("def @main(%x: Tensor[(10), float32]) { log(%x) }")
    f2 = fn("def @main(%x: Tensor[(10), float32]) { exp(%x) }")
    fpass = TestReplaceFunc(f1)
    assert isinstance(fpass, transform.FunctionPass)
    assert fpass.info.opt_level == 1
    assert fpass.info.name == "TestReplaceFunc"
    assert fpass.info.description == "Replaces every function."
    assert fpass.new_func is f1  # attributes fall through to the instance
    mod = fpass(Module.parse("def @main(%x: Tensor[(10), float32]) { exp(%x) }"))
    assert mod["main"] == f1
    assert mod["main"] != f2


def test_module_class_pass():
    @transform.module_pass(opt_level=1)
    class TestPipeline:
        """Simple test function to replace one argument to another."""

        def __init__(self, new_mod, replace):
            self.new_mod = new_mod
            self.replace = replace

        def transform_module(self, mod, ctx):
            return self.new_mod if self.replace else mod

    new_mod = Module.parse("def @main(%x: float32) { exp(%x) }")
    old_mod = Module.parse("def @main(%x: float32) { log(%x) }")
    x = TestPipeline(new_mod, True)
    assert isinstance(x, transform.ModulePass)
    assert x.info.name == "TestPipeline"
    assert x(old_mod) == new_mod
    assert TestPipeline(new_mod, False)(old_mod) == old_mod


def test_pass_info():
    info = transform.PassInfo(opt_level=1, name="xyz")
    assert info.opt_level == 1
    assert info.name == "xyz"
    assert info.required == []
    assert transform.PassInfo(0, "abc", required=["InferType"]).required == ["InferType"]


def test_function_pass():
    mod = Module.parse(LOG)
    function_pass = transform.function_pass(double_values, opt_level=1,
                                            name="function_pass_test")
    assert isinstance(function_pass, transform.FunctionPass)
    assert function_pass.info.name == "function_pass_test"
    assert function_pass.info.opt_level == 1

    updated = function_pass(mod)
    assert isinstance(updated, Module)
    assert updated["myLog"] == fn(LOG2, "myLog")
    x = rand(10)
    np.testing.assert_allclose(updated.evaluate("myLog", x), np.log(x * 2), rtol=1e-5)


def two_functions():
    return Module.parse(SUB + "\n" + LOG)


def test_sequential_pass_registration():
    module_pass = transform.module_pass(add_abs, opt_level=1, name="module_pass")
    function_pass = transform.function_pass(double_values, opt_level=2, name="function_pass")
    seq = transform.Sequential([module_pass, function_pass], opt_level=2,
                               name="sequential_pass")
    assert isinstance(seq, transform.Sequential)
    assert seq.info.name == "sequential_pass"
    assert seq.info.opt_level == 2
    assert [p.info.name for p in seq.passes] == ["module_pass", "function_pass"]


def test_sequential_no_pass():
    mod = two_functions()
    assert transform.Sequential(opt_level=1)(mod)["mySub"] == mod["mySub"]


def test_sequential_only_module_pass():
    seq = transform.Sequential([transform.module_pass(add_abs, opt_level=1)], opt_level=1)
    with transform.PassContext(required_pass=["add_abs"]):
        out = seq(two_functions())
    assert out["mySub"] == fn(SUB, "mySub")
    assert out["myAbs"] == fn(ABS, "myAbs")


def test_sequential_only_function_pass():
    seq = transform.Sequential([transform.function_pass(double_values, opt_level=2)],
                               opt_level=2)
    with transform.PassContext(opt_level=2):
        out = seq(two_functions())
    assert out["mySub"] == fn(SUB2, "mySub")
    assert out["myLog"] == fn(LOG2, "myLog")


def test_sequential_multiple_passes():
    seq = transform.Sequential([transform.module_pass(add_abs, opt_level=1),
                                transform.function_pass(double_values, opt_level=2)])
    with transform.PassContext(opt_level=3):
        out = seq(two_functions())
    assert out["myAbs"] == fn(ABS2, "myAbs")
    assert out["mySub"] == fn(SUB2, "mySub")
    assert out["myLog"] == fn(LOG2, "myLog")
    x, y = rand(10), rand(10)
    np.testing.assert_allclose(out.evaluate("mySub", x, y), x * 2 - y * 2, rtol=1e-5)
    a = rand(5, 10) - 0.5
    np.testing.assert_allclose(out.evaluate("myAbs", a), np.abs(a * 2), rtol=1e-5)


def test_sequential_skips_passes_above_the_opt_level():
    seq = transform.Sequential([transform.module_pass(add_abs, opt_level=1),
                                transform.function_pass(double_values, opt_level=2)])
    with transform.PassContext(opt_level=1):
        out = seq(two_functions())
    assert "myAbs" in out and out["mySub"] == fn(SUB, "mySub")
    with transform.PassContext(opt_level=3, disabled_pass=["add_abs"]):
        out = seq(two_functions())
    assert "myAbs" not in out and out["mySub"] == fn(SUB2, "mySub")


SCOPING_INPUT = """
def @main(%x: Tensor[(1, 2), float32]) {
  %0 = add(1f, 2f);
  %1 = multiply(%0, 2f);
  %2 = add(%x, %1);
  %3 = add(%x, %1);
  add(%2, %3)
}
"""
SCOPING_EXPECTED = """
def @main(%x: Tensor[(1, 2), float32]) {
  %0 = add(%x, 6f);
  add(%0, %0)
}
"""


def test_sequential_with_scoping():
    seq = transform.Sequential([
        transform.InferType(),
        transform.FoldConstant(),
        transform.EliminateCommonSubexpr(),
    ])
    with transform.PassContext(opt_level=3):
        out = seq(Module.parse(SCOPING_INPUT))
    assert out == Module.parse(SCOPING_EXPECTED)
    x = rand(1, 2)
    np.testing.assert_allclose(out.evaluate("main", x), (x + 6) * 2, rtol=1e-5)


def test_nested_sequential_with_scoping():
    inner = transform.Sequential([transform.FoldConstant(), transform.EliminateCommonSubexpr()],
                                 name="inner")
    seq = transform.Sequential([transform.InferType(), inner], name="outer")
    with transform.PassContext(opt_level=3):
        assert seq(Module.parse(SCOPING_INPUT)) == Module.parse(SCOPING_EXPECTED)
    with transform.PassContext(opt_level=3, disabled_pass=["EliminateCommonSubexpr"]):
        out = seq(Module.parse(SCOPING_INPUT))
    assert out != Module.parse(SCOPING_EXPECTED)
    assert "6f" in str(out)


def test_print_ir(capsys):
    seq = transform.Sequential([transform.InferType(), transform.PrintIR("after InferType")])
    with transform.PassContext(opt_level=3):
        seq(Module.parse(SCOPING_INPUT))
    out = capsys.readouterr().out
    assert out.startswith("PrintIR(after InferType):\n")
    assert "multiply(%0, 2f)" in out


def test_print_debug_callback():
    seen = []

    class Trace:
        def run_before_pass(self, mod, info):
            seen.append(info.name)

    seq = transform.Sequential([transform.InferType(), transform.FoldConstant(),
                                transform.DeadCodeElimination()], name="seq")
    with transform.PassContext(opt_level=3, instruments=[Trace()]):
        seq(Module.parse(SCOPING_INPUT))
    assert seen == ["seq", "InferType", "FoldConstant", "DeadCodeElimination"]


def test_module_pass_needs_opt_level():
    with pytest.raises(ValueError):
        transform.module_pass(add_abs)
