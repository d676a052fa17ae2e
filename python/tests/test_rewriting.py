"""Passes written in Python over the arena: views, the rewriter, patterns, rules, partition."""

import numpy as np
import pytest

from irpass import errors, transform
from irpass.ir import Module
from irpass.pattern import (
    Pattern,
    Rule,
    RuleSet,
    dominates,
    is_constant,
    is_op,
    is_tuple,
    partition,
    rewrite,
    wildcard,
)

DENSE = Module.parse("""
def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = add(%0, 1f);
  nn.relu(add(%1, 0f))
}
""")


# -- views -----------------------------------------------------------------------------------

def test_view_queries():
    f = DENSE["main"]
    nodes = f.nodes()
    assert nodes[-1] == f.root and f.op(f.root) == "nn.relu"
    assert [f.kind(n) for n in f.param_nodes] == ["var", "var"]
    assert [f.name_of(n) for n in f.param_nodes] == ["x", "w"]
    (dense,) = f.find(op="nn.dense")
    assert f.args(dense) == f.param_nodes
    adds = f.find(op="add")
    assert len(adds) == 2 and f.users(dense) == [adds[0]] and f.users(adds[0]) == [adds[1]]
    consts = f.find(kind="constant")
    assert [f.constant(c).item() for c in consts] == [1.0, 0.0]
    assert f.attr(dense, "units") is None and f.attrs(dense) == {}
    with pytest.raises(IndexError):
        f.kind(10_000)
    with pytest.raises(ValueError):
        f.find(op="no.such_op")
    assert f.type_of(dense) is None
    DENSE.infer_types()
    ty = DENSE["main"].type_of(dense)
    assert str(ty) == "Tensor[(2, 4), float32]" and ty.shape == (2, 4)


def test_view_of_a_deep_function_needs_no_recursion():
    depth = 20_000
    lines = ["def @main(%x: Tensor[(2), float32]) {", "  %0 = negative(%x);"]
    lines += [f"  %{i} = negative(%{i - 1});" for i in range(1, depth)]
    lines += [f"  %{depth - 1}", "}"]
    mod = Module.parse("\n".join(lines))
    f = mod["main"]
    assert len(f.nodes()) == depth + 1
    assert len(f.find(op="negative")) == depth

    @transform.function_pass(opt_level=0)
    def negate_to_identity(func, mod, ctx):
        rw = func.rewriter()
        for n in func.find(op="negative")[::2]:
            (a,) = func.args(n)
            rw.replace(n, rw.call("copy", [a]))
        return rw

    out = negate_to_identity(mod)
    assert len(out["main"].find(op="copy")) == depth // 2


# -- the rewriter ----------------------------------------------------------------------------

@transform.function_pass(opt_level=0)
def fold_add_constants(f, mod, ctx):
    """Drops additions of zero and turns additions of constants into subtractions."""
    rw = f.rewriter()
    for n in f.find(op="add"):
        a, b = f.args(n)
        if f.kind(b) != "constant":
            continue
        if not f.constant(b).any():
            rw.replace(n, a)
        else:
            rw.replace(n, rw.call("subtract", [a, rw.constant(-f.constant(b), dtype="float32")]))
    return rw


def test_rewriter_applies_replacements():
    out = fold_add_constants(DENSE)
    assert out["main"] == Module.parse("""
    def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32]) {
      nn.relu(subtract(nn.dense(%x, %w), -1f))
    }""")["main"]
    x, w = np.random.rand(2, 3).astype("float32"), np.random.rand(4, 3).astype("float32")
    np.testing.assert_allclose(out.evaluate("main", x, w), DENSE.evaluate("main", x, w),
                               rtol=1e-6)


def test_attributes_keep_infinite_floats():
    @transform.function_pass(opt_level=0)
    def clip_relu(f, mod, ctx):
        rw = f.rewriter()
        for n in f.find(op="nn.relu"):
            rw.replace(n, rw.call("clip", [f.args(n)[0]], a_min=0.0, a_max=float("inf")))
        return rw

    out = clip_relu(DENSE)
    text = str(out["main"])
    assert "clip(" in text and "a_max=inff" in text, text
    x, w = np.random.rand(2, 3).astype("float32"), np.random.rand(4, 3).astype("float32")
    np.testing.assert_allclose(out.evaluate("main", x, w), DENSE.evaluate("main", x, w),
                               rtol=1e-6)


def test_rewriter_without_replacements_keeps_the_function():
    @transform.function_pass(opt_level=0)
    def nothing(f, mod, ctx):
        return f.rewriter()

    out = nothing(DENSE)
    assert out.same_as(DENSE)


def test_rewriter_output_is_type_checked():
    @transform.function_pass(opt_level=0)
    def ill_typed(f, mod, ctx):
        rw = f.rewriter()
        rw.replace(f.root, rw.call("add", [f.root, f.param_nodes[0]]))
        return rw

    with pytest.raises(errors.PassError, match="do not broadcast") as info:
        ill_typed(DENSE)
    assert info.value.pass_name == "ill_typed"


def test_rewriter_mistakes():
    f = DENSE["main"]
    rw = f.rewriter()
    with pytest.raises(ValueError, match="unknown"):
        rw.call("no_such_op", [f.root])
    with pytest.raises(ValueError):
        rw.call("nn.dense", [0, 1], no_such_attr=3)
    with pytest.raises(IndexError):
        rw.call("negative", [999])
    new = rw.call("negative", [f.root])
    with pytest.raises(ValueError, match="only the function's own nodes"):
        rw.replace(new, f.root)
    # A replacement that uses a node computed after the replaced one.
    (dense,) = f.find(op="nn.dense")
    rw.replace(dense, rw.call("add", [dense, f.root]))
    with pytest.raises(ValueError, match="not computed before it"):
        rw.finish()


def test_rewriter_tuples_and_projections():
    mod = Module.parse("def @main(%a: float32, %b: float32) { add(%a, %b) }")
    f = mod["main"]
    rw = f.rewriter()
    a, b = f.param_nodes
    t = rw.tuple([b, a])
    rw.replace(f.root, rw.call("add", [rw.proj(t, 0), rw.proj(t, 1)]))
    out = rw.finish()
    assert "%0.0" in str(out) or ".0" in str(out)


# -- patterns --------------------------------------------------------------------------------

def test_pattern_builders_and_text_agree():
    built = is_op("nn.relu")(is_op("add")(wildcard(), is_constant()))
    parsed = Pattern.parse("nn.relu(add(_, const))")
    f = DENSE["main"]
    assert built.match(f, f.root) and parsed.match(f, f.root)
    assert not is_op("nn.relu")(is_op("multiply")(wildcard(), wildcard())).match(f, f.root)
    alt = is_op("add") | is_op("multiply")
    assert alt(wildcard(), is_constant()).match(f, f.args(f.root)[0])


def test_pattern_find_all_and_captures():
    p = Pattern.parse("add(?x, const as ?c)")
    f = DENSE["main"]
    found = p.find_all(f)
    assert [root for root, _ in found] == f.find(op="add")
    root, caps = found[0]
    caps = dict(caps)
    assert f.op(caps["x"]) == "nn.dense" and f.kind(caps["c"]) == "constant"
    assert dict(p.find(f, root)) == caps
    assert p.find(f, f.root) is None
    assert sorted(p.holes()) == ["c", "x"]


def test_pattern_attributes_dtypes_and_optional():
    mod = Module.parse("""
    def @main(%x: Tensor[(1, 4), float32]) {
      %0 = nn.softmax(%x, axis=1);
      nn.relu(%0)
    }""")
    f = mod["main"]
    softmax = f.find(op="nn.softmax")[0]
    assert is_op("nn.softmax")(wildcard()).has_attr({"axis": 1}).match(f, softmax)
    assert not is_op("nn.softmax")(wildcard()).has_attr({"axis": 0}).match(f, softmax)
    assert wildcard().has_dtype("float32").has_shape([1, 4]).match(f, softmax)
    opt = is_op("nn.softmax")(wildcard()).optional(lambda x: is_op("nn.relu")(x))
    assert opt.match(f, softmax) and opt.match(f, f.root)
    with pytest.raises(ValueError):
        is_op("nn.no_such_op")


def test_dominates_and_tuples():
    mod = Module.parse("""
    def @main(%x: Tensor[(4), float32]) {
      %0 = exp(%x);
      %1 = negative(%0);
      %2 = abs(%0);
      (add(%1, %2), %0)
    }""")
    f = mod["main"]
    unary = is_op("negative")(wildcard()) | is_op("abs")(wildcard())
    p = dominates(is_op("exp")(wildcard()), unary, is_op("add")(wildcard(), wildcard()))
    (add,) = f.find(op="add")
    assert p.match(f, add)
    assert is_tuple([wildcard(), wildcard()]).match(f, f.root)


# -- rules -----------------------------------------------------------------------------------

def test_template_rules():
    mod = Module.parse("def @main(%a: float32, %i: int32) { (add(%a, %a), add(%i, %i)) }")
    double = Rule("double", "add(?x, ?x)", "multiply(?x, 2f)",
                  when=lambda m: m["x"].dtype == "float32")
    out = rewrite(double, mod)
    assert "multiply(%a, 2f)" in str(out) and "add(%i, %i)" in str(out)
    assert rewrite([double], mod["main"]) == out["main"]


def test_computed_rules_see_the_match():
    seen = []

    def to_scale(m):
        seen.append((m.root.op, m["c"].value.item(), m["x"].dtype, m["x"].shape))
        return "multiply(?x, ?c)" if m["c"].value.item() != 0 else None

    rules = RuleSet("scale", [Rule("add_to_mul", "add(?x, const as ?c)", to_scale)])
    out = rules.apply(DENSE["main"])
    assert ("add", 1.0, "float32", [2, 4]) in seen
    assert str(out).count("multiply") == 1 and "add(" in str(out)


def test_rule_set_as_a_pass_and_once():
    rules = RuleSet("expand", [Rule("grow", "exp(?x)", "exp(exp(?x))", once=True)])
    p = rules.as_pass(opt_level=1)
    assert p.info.name == "expand" and p.info.kind == "function"
    out = p(Module.parse("def @main(%a: float32) { exp(%a) }"))
    assert str(out["main"]).count("exp(") == 2


def test_an_exclusive_rule_leaves_a_match_whose_inner_value_is_used_outside():
    shared = Module.parse("def @main(%a: float32) { %0 = log(%a); (exp(%0), %0) }")
    alone = Module.parse("def @main(%a: float32) { negative(exp(log(%a))) }")
    fuse = RuleSet("fuse", [Rule("exp_log", "exp(log(?x))", "?x", exclusive=True)])
    assert "exp(" in str(fuse.apply(shared["main"]))
    assert "exp(" not in str(fuse.apply(alone["main"]))
    plain = RuleSet("fuse", [Rule("exp_log", "exp(log(?x))", "?x")])
    assert "exp(" not in str(plain.apply(shared["main"]))


def test_rule_errors():
    with pytest.raises(ValueError):
        Rule("bad", "add(?x, ?y)", "multiply(?x, ?z)")  # ?z is not bound
    with pytest.raises(ValueError):
        Rule("bad", "add(?x", "?x")
    with pytest.raises(ValueError):
        RuleSet("bad", [Rule("unknown", "no_such_op(?x)", "?x")])
    with pytest.raises(TypeError):
        Rule("bad", "add(?x, ?y)", 42)

    def raises(m):
        raise KeyError("from the callback")

    with pytest.raises(KeyError, match="from the callback"):
        RuleSet("r", [Rule("r", "add(?x, ?y)", raises)]).apply(DENSE["main"])
    p = RuleSet("r", [Rule("r", "add(?x, ?y)", raises)]).as_pass()
    with pytest.raises(errors.PassError) as info:
        p(DENSE)
    assert isinstance(info.value.__cause__, KeyError)
    diverging = RuleSet("loop", [Rule("grow", "exp(?x)", "exp(exp(?x))")])
    with pytest.raises(ValueError, match="grow"):
        diverging.apply(Module.parse("def @main(%a: float32) { exp(%a) }")["main"])


# -- partition -------------------------------------------------------------------------------

def test_partition():
    mod = Module.parse("""
    def @main(%x, %w, %b) {
      nn.relu(nn.bias_add(nn.conv2d(%x, %w), %b))
    }""")
    p = Pattern.parse("nn.relu(nn.bias_add(nn.conv2d(_, _), _))")
    out = partition(p, mod["main"], {"Composite": "conv_bias_relu"})
    text = str(out)
    assert 'Composite="conv_bias_relu"' in text
    assert 'PartitionedFromPattern="nn.conv2d_nn.bias_add_nn.relu_"' in text
    refused = partition(p, mod["main"], check=lambda m: m.root.op != "nn.relu")
    assert refused.same_as(mod["main"])
