"""The package's API beyond TVM's tests: modules, the registry, errors, threads, ONNX."""

import threading

import numpy as np
import pytest

import irpass
from irpass import errors, transform
from irpass.instrument import PassTimingInstrument
from irpass.ir import Module

from conftest import LIGHT, MODELS, example_model


# -- modules ---------------------------------------------------------------------------------

def test_module_basics(model):
    assert list(model) == ["main"]
    assert len(model) == 1 and "main" in model and "other" not in model
    assert model["main"].params == ["x", "y", "z"]
    assert str(model).startswith('#[version = "0.0.5"]\ndef @main(')
    assert Module.parse(str(model)) == model
    assert hash(Module.parse(str(model))) == hash(model)
    assert model.names() == ["main"]


def test_module_set_and_delete_items(model):
    other = Module.parse("def @f(%a: float32) { exp(%a) }")
    model["g"] = other["f"]
    assert list(model) == ["main", "g"]
    del model["g"]
    assert list(model) == ["main"]
    with pytest.raises(KeyError, match="no function `@g`"):
        model["g"]
    with pytest.raises(KeyError):
        del model["g"]


def test_parse_error_names_line_and_column():
    with pytest.raises(errors.IrError) as info:
        Module.parse("def @main(%x: float32) {\n  add(%x %x)\n}", name="bad.relay")
    assert info.value.kind == "parse"
    assert "bad.relay:2:" in str(info.value)


def test_type_error_from_infer_types():
    mod = Module.parse("def @main(%x: Tensor[(2), float32], %y: Tensor[(3), float32]) "
                       "{ add(%x, %y) }")
    with pytest.raises(errors.IrError) as info:
        mod.infer_types()
    assert info.value.kind == "type"
    with pytest.raises(errors.IrError):
        mod.verify()


def test_checked_type_after_inference(model):
    assert model["main"].checked_type is None
    model.infer_types()
    ty = model["main"].checked_type
    assert ty.kind == "func" and str(ty).endswith("-> Tensor[(3, 4), float32]")
    assert ty.ret.kind == "tensor" and ty.ret.shape == (3, 4) and ty.ret.dtype == "float32"
    assert ty.ret.rank == 2 and ty.ret.fields is None and ty.shape is None
    assert [p.shape for p in ty.params] == [(3, 4)] * 3
    assert ty.params[0] == ty.ret and hash(ty.params[0]) == hash(ty.ret)
    assert ty != ty.ret and ty.params[0] != "Tensor[(3, 4), float32]"


def test_a_value_the_ir_does_not_model_has_an_opaque_type_and_survives_onnx():
    mod = Module.parse('def @main(%s: Opaque["seq(tensor(float)[?,3])"]) { %s }')
    mod.infer_types()
    (param,) = mod["main"].checked_type.params
    assert param.kind == "opaque" and str(param) == 'Opaque["seq(tensor(float)[?,3])"]'
    assert param.shape is None and param.dtype is None
    again = Module.from_onnx(mod.to_onnx())
    again.infer_types()
    assert again["main"].checked_type.params[0] == param


def test_types_of_tuples_and_unknown_sizes():
    mod = Module.parse(
        "def @main(%x: Tensor[(?, 2), int64]) { (%x, sum(%x)) }"
    )
    mod.infer_types()
    ret = mod["main"].checked_type.ret
    assert ret.kind == "tuple" and [f.kind for f in ret.fields] == ["tensor", "tensor"]
    assert ret.fields[0].shape == (None, 2) and ret.fields[0].dtype == "int64"
    assert ret.fields[1].shape == () and ret.fields[1].rank == 0
    assert repr(ret).startswith("<irpass.ir.Type (")


def test_named_sizes_are_strings_in_a_shape():
    mod = Module.parse(
        "def @main(%x: Tensor[(batch, 8), float32]) { reshape(%x, newshape=[0, 2, -1]) }"
    )
    mod.infer_types()
    ty = mod["main"].checked_type
    assert ty.params[0].shape == ("batch", 8)
    assert ty.ret.shape == ("batch", 2, 4)
    out = mod.evaluate("main", np.ones((3, 8), dtype=np.float32))
    assert out.shape == (3, 2, 4)


def test_bind_params_makes_constants_that_fold():
    mod = Module.parse(
        "def @main(%x: Tensor[(2), float32], %w: Tensor[(2), float32], %b: Tensor[(2), float32]) {"
        " add(multiply(%x, %w), multiply(%b, %w)) }"
    )
    w, b = np.array([2.0, 3.0], "float32"), np.array([1.0, -1.0], "float32")
    bound = mod.bind_params({"w": w, "b": b})
    assert bound["main"].params == ["x"] and mod["main"].params == ["x", "w", "b"]
    x = np.array([5.0, 7.0], "float32")
    np.testing.assert_allclose(bound.evaluate("main", x), mod.evaluate("main", x, w, b))
    folded = transform.FoldConstant()(bound)
    assert len(folded["main"].find(op="multiply")) == 1
    with pytest.raises(errors.IrError, match="no parameter `%v`"):
        mod.bind_params({"v": w})
    with pytest.raises(errors.IrError, match="Tensor\\[\\(2\\), float32\\]"):
        mod.bind_params({"w": np.zeros(3, "float32")})
    with pytest.raises(KeyError):
        mod.bind_params({"w": w}, function="nope")


def test_evaluate(model):
    x, y, z = (np.random.rand(3, 4).astype("float32") + 1 for _ in range(3))
    out = model.evaluate("main", x, y, z)
    assert out.dtype == np.float32 and out.shape == (3, 4)
    np.testing.assert_allclose(out, (x + y) * ((x + y) / (x - z)) + (x - z), rtol=1e-5)


def test_evaluate_lists_take_the_parameter_dtype_and_tuples_come_back():
    mod = Module.parse("def @main(%x: Tensor[(2), int32]) { (add(%x, %x), %x) }")
    a, b = mod.evaluate("main", [1, 2])
    assert a.dtype == np.int32 and a.tolist() == [2, 4] and b.tolist() == [1, 2]


def test_evaluate_errors(model):
    with pytest.raises(errors.IrError) as info:
        model.evaluate("nope")
    assert info.value.kind == "eval"
    with pytest.raises(errors.IrError):
        model.evaluate("main", np.zeros((2, 2), "float32"))
    with pytest.raises(TypeError, match="dtype complex64"):
        model.evaluate("main", np.zeros((3, 4), "complex64"))


# -- the registry ----------------------------------------------------------------------------

def test_registry_sees_the_pass_library():
    names = [entry[0] for entry in transform.list_passes()]
    for name in ["FoldConstant", "FuseOps", "SimplifyExpr", "DeadCodeElimination", "InferType"]:
        assert name in names
    assert "FoldConstant" in dir(transform)
    assert transform.FoldConstant.__doc__
    assert isinstance(transform.FoldConstant(), transform.FunctionPass)
    assert isinstance(transform.Inline(), transform.ModulePass)


def test_unknown_names_are_errors_with_suggestions():
    with pytest.raises(AttributeError):
        transform.FoldConstnt
    with pytest.raises(errors.RegistryError, match="did you mean `FoldConstant`"):
        transform.lookup("FoldConstnt")
    with pytest.raises(errors.RegistryError, match="did you mean `FoldConstant`"):
        transform.PassContext(disabled_pass=["FoldConstnt"])
    with pytest.raises(errors.RegistryError, match="required_pass"):
        transform.PassContext(required_pass=["NoSuchPass"])
    with pytest.raises(errors.ConfigError, match="did you mean"):
        transform.PassContext(config={"relay.FoldConstant.max_generated_element": 3})
    with pytest.raises(errors.ConfigError):
        transform.PassContext(config={"relay.FoldConstant.max_generated_elements": "many"})
    # The CLI refuses such a level too: levels go from 0 to 4.
    with pytest.raises(errors.ConfigError, match="opt level 7 is out of range"):
        transform.PassContext(opt_level=7)
    with pytest.raises(AttributeError, match="did you mean FoldConstant"):
        transform.FoldConstnt
    with pytest.raises(errors.RegistryError, match="did you mean"):
        irpass.instrument.lookup("PrintChange")


def test_python_pass_names_may_be_disabled():
    @transform.module_pass(opt_level=0)
    def python_named_pass(mod, ctx):
        raise AssertionError("disabled")

    with transform.PassContext(disabled_pass=["python_named_pass"]):
        transform.Sequential([python_named_pass])(example_model())


def test_config_reaches_the_passes():
    text = "def @main() { ones(shape=[64], dtype=\"float32\") }"
    with transform.PassContext(config={"relay.FoldConstant.max_generated_elements": 10}) as ctx:
        assert ctx.config == {"relay.FoldConstant.max_generated_elements": 10}
        kept = transform.FoldConstant()(Module.parse(text))
    assert "ones(" in str(kept)
    assert "ones(" not in str(transform.FoldConstant()(Module.parse(text)))
    assert "relay.FoldConstant.max_generated_elements" in transform.PassContext.list_configs()


def test_pass_options_and_pipeline_text():
    convert = transform.ConvertLayout(layout="NHWC")
    assert convert.info.name == "ConvertLayout"
    with pytest.raises(errors.RegistryError, match="did you mean `max_elements`"):
        transform.FoldConstant(max_element=1)
    # An outer sum: 8 elements from operands of 2 and 4, past a limit of 4.
    text = "def @main() { add(Tensor[(2, 1), float32]{1, 2}, Tensor[(4), float32]{1, 2, 3, 4}) }"
    assert "add(" in str(transform.FoldConstant(max_elements=4)(Module.parse(text)))
    assert "add(" not in str(transform.FoldConstant()(Module.parse(text)))
    unfused = transform.FuseOps(fuse_opt_level=0)(Module.parse(
        "def @main(%x: Tensor[(2), float32]) { exp(negative(%x)) }"))
    assert str(unfused).count("Primitive=1") == 2
    seq = transform.parse_pipeline("InferType,opt(FoldConstant,DeadCodeElimination)")
    assert isinstance(seq, transform.Sequential)
    assert [p.info.name for p in seq.passes][:1] == ["InferType"]
    with pytest.raises(errors.PipelineError, match="column"):
        transform.parse_pipeline("FoldConstant,(")
    with pytest.raises(errors.RegistryError):
        transform.parse_pipeline("NoSuchPass")
    assert transform.standard_pipeline(3).info.name == "O3"
    with pytest.raises(ValueError):
        transform.standard_pipeline(4)


def test_registered_instruments():
    names = [n for n, _ in irpass.instrument.list_instruments()]
    assert "VerifyEach" in names
    verify = irpass.instrument.lookup("VerifyEach")
    assert irpass.instrument.VerifyEach().name == "VerifyEach"
    with pytest.raises(AttributeError):
        irpass.instrument.VerifyEvery
    with transform.PassContext(opt_level=3, instruments=[verify]):
        transform.standard_pipeline(3)(example_model())


# -- errors ----------------------------------------------------------------------------------

def test_python_exception_is_the_cause_with_its_traceback(model):
    def deep_helper():
        raise KeyError("inner")

    @transform.function_pass(opt_level=0)
    def failing(func, mod, ctx):
        deep_helper()

    seq = transform.Sequential([transform.InferType(), failing], name="outer")
    with pytest.raises(errors.PassError) as info:
        seq(model)
    err = info.value
    assert err.pass_name == "failing" and err.path == ["outer", "failing"]
    assert isinstance(err.__cause__, KeyError)
    frames = []
    tb = err.__cause__.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert "deep_helper" in frames
    assert isinstance(err.module, Module) and err.module == model
    assert isinstance(err, errors.IrpassError)


def test_wrong_return_types_are_pass_errors(model):
    @transform.module_pass(opt_level=0)
    def returns_none(mod, ctx):
        return None

    @transform.function_pass(opt_level=0)
    def returns_text(func, mod, ctx):
        return "text"

    for bad in (returns_none, returns_text):
        with pytest.raises(errors.PassError) as info:
            bad(model)
        assert isinstance(info.value.__cause__, TypeError)
        assert "not an irpass.ir" in str(info.value.__cause__)


def test_instruments_are_instances():
    class Hooks:
        def run_before_pass(self, mod, info):
            pass

    with pytest.raises(TypeError, match="instances"):
        transform.PassContext(instruments=[Hooks])
    with pytest.raises(TypeError, match="not an instrument"):
        transform.PassContext(instruments=[object()])


def test_contexts_nest_and_current_is_the_entered_object():
    outer = transform.PassContext(opt_level=1)
    inner = transform.PassContext(opt_level=3)
    with outer:
        assert transform.PassContext.current() is outer
        with inner:
            assert transform.PassContext.current() is inner
            seen = []

            @transform.module_pass(opt_level=0)
            def look(mod, ctx):
                seen.append(ctx)
                return mod

            look(example_model())
            assert seen == [inner]
        assert transform.PassContext.current() is outer
    assert transform.PassContext.current().opt_level == 2


# -- threads and the bundled models ----------------------------------------------------------

BUNDLED = sorted(MODELS.glob("*.relay"))


def test_function_pass_on_several_threads():
    text = "\n".join(
        f"def @f{i}(%x: Tensor[(4), float32]) {{ add(%x, %x) }}" for i in range(16))
    mod = Module.parse(text)
    threads = set()

    @transform.function_pass(opt_level=0)
    def to_multiply(func, mod, ctx):
        threads.add(threading.get_ident())
        return Module.parse(
            f"def @{func.name}(%x: Tensor[(4), float32]) {{ multiply(%x, 2f) }}")[func.name]

    with transform.PassContext(threads=2):
        out = to_multiply(mod)
    assert all("multiply(%x, 2f)" in str(out[f"f{i}"]) for i in range(16))
    assert len(out) == 16


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_python_pass_on_bundled_models(path):
    mod = Module.parse(path.read_text(), name=str(path))
    calls = []

    @transform.function_pass(opt_level=0)
    def count_functions(func, mod, ctx):
        calls.append(func.name)
        return func

    timing = PassTimingInstrument()
    with transform.PassContext(opt_level=3, instruments=[timing]):
        out = transform.Sequential([count_functions, transform.standard_pipeline(3)])(mod)
        assert out == transform.parse_pipeline("O3")(mod)
    assert sorted(calls) == sorted(mod)
    assert "FoldConstant" in timing.render()


# -- ONNX ------------------------------------------------------------------------------------

def test_onnx_in_optimise_and_out():
    path = LIGHT / "light_squeezenet.onnx"
    mod = Module.from_onnx(path)
    assert Module.from_onnx(path.read_bytes()) == mod
    assert Module.from_onnx(str(path)) == mod
    with transform.PassContext(opt_level=3):
        opt = transform.standard_pipeline(3)(mod)
    (param,) = mod["main"].params
    x = np.random.rand(1, 3, 224, 224).astype("float32")
    np.testing.assert_allclose(opt.evaluate("main", x), mod.evaluate("main", x),
                               rtol=1e-4, atol=1e-5)
    written = opt.to_onnx()
    assert written[:2] == b"\x08\x04" or len(written) > 100
    again = Module.from_onnx(written)
    np.testing.assert_allclose(again.evaluate("main", x), mod.evaluate("main", x),
                               rtol=1e-4, atol=1e-5)


def test_from_onnx_takes_input_shapes_as_a_dict_and_its_errors_name_the_argument():
    path = LIGHT / "light_squeezenet.onnx"
    (name,) = Module.from_onnx(path)["main"].params
    mod = Module.from_onnx(path, input_shapes={name: [2, 3, 224, 224]})
    mod.infer_types()
    assert mod["main"].checked_type.params[0].shape == (2, 3, 224, 224)
    with pytest.raises(errors.OnnxError, match="input_shapes names `nope`") as info:
        Module.from_onnx(path, input_shapes={"nope": [1]})
    assert "--input-shape" not in str(info.value)
    with pytest.raises(TypeError, match="dict of input name to shape"):
        Module.from_onnx(path, input_shapes=[(name, [1, 3, 224, 224])])
    with pytest.raises(TypeError, match="a shape is a list of ints"):
        Module.from_onnx(path, input_shapes={name: "1x3"})


def test_save_onnx_with_external_data_opset_and_local_functions(tmp_path):
    mod = Module.from_onnx(LIGHT / "light_squeezenet.onnx")
    with transform.PassContext(opt_level=3):
        opt = transform.standard_pipeline(3)(mod)
    out = tmp_path / "sq.onnx"
    opt.save_onnx(out, opset=17, external_data=1024)
    assert (tmp_path / "sq.onnx.data").stat().st_size > 0
    again = Module.from_onnx(out)
    x = np.random.rand(1, 3, 224, 224).astype("float32")
    np.testing.assert_allclose(again.evaluate("main", x), mod.evaluate("main", x),
                               rtol=1e-4, atol=1e-5)
    # Local functions from opset 15 when asked (their domain is named in the bytes), none by
    # default or below 15.
    assert b"irpass.fused" in opt.to_onnx(opset=17, local_functions=True)
    assert b"irpass.fused" not in opt.to_onnx(opset=17)
    assert b"irpass.fused" not in opt.to_onnx(opset=14, local_functions=True)
    with pytest.raises(errors.OnnxError, match="opset 99 is not supported"):
        opt.save_onnx(tmp_path / "bad.onnx", opset=99)
    assert not (tmp_path / "bad.onnx").exists()


def test_python_pass_on_an_onnx_model():
    mod = Module.from_onnx(LIGHT / "light_bvlc_alexnet.onnx")

    @transform.module_pass(opt_level=0)
    def keep_main_only(mod, ctx):
        assert list(mod) == ["main"]
        return mod

    out = transform.Sequential([keep_main_only, transform.FoldConstant()])(mod)
    assert list(out) == ["main"]


def test_bad_onnx_input(tmp_path):
    with pytest.raises(errors.OnnxError, match="not an ONNX model"):
        Module.from_onnx(b"\xff\xff\xff not protobuf")
    with pytest.raises(errors.OnnxError, match="missing.onnx"):
        Module.from_onnx(tmp_path / "missing.onnx")
    with pytest.raises(TypeError):
        Module.from_onnx(42)


def test_strings_cross_as_numpy_arrays_of_str():
    mod = Module.parse(
        'def @main(%a: Opaque["tensor(string)[2]"], %b: Opaque["tensor(string)[2]"]) '
        "{ (onnx.StringConcat(%a, %b), onnx.Equal(%a, %b)) }"
    )
    joined, same = mod.evaluate("main", np.array(["ab", "c"]), np.array(["ab", "d"], dtype=object))
    assert joined.dtype == object and joined.shape == (2,)
    assert joined.tolist() == ["abab", "cd"]
    assert same.tolist() == [True, False]
