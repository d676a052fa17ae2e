//! Every operator's kernel and type relation against numpy (`data/op_cases.json`, made by
//! `support/gen_op_cases.py`), and every relation's error cases.

use irpass_ir::{DType, Module, Op, Tensor, Type, Value, eval_function};
use serde::Deserialize;

#[derive(Deserialize)]
struct Arr {
    dtype: String,
    shape: Vec<usize>,
    data: Vec<f64>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    program: String,
    inputs: Vec<Arr>,
    expect: Vec<Arr>,
    tuple: bool,
    rtol: f64,
    atol: f64,
}

fn tensor(a: &Arr) -> Tensor {
    let dtype: DType = a.dtype.parse().unwrap();
    Tensor::from_vec(dtype, &a.shape, a.data.clone()).unwrap()
}

fn cases() -> Vec<Case> {
    serde_json::from_str(include_str!("data/op_cases.json")).unwrap()
}

#[test]
fn every_kernel_matches_numpy_and_every_relation_predicts_the_kernels_output_type() {
    let mut failures = Vec::new();
    for c in cases() {
        let m = Module::parse(&c.program).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        if let Err(e) = m.infer_types() {
            failures.push(format!("{}: type error {e}", c.name));
            continue;
        }
        let inputs: Vec<Value> = c.inputs.iter().map(|a| Value::tensor(tensor(a))).collect();
        let out = match eval_function(&m, "main", inputs) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: {e}", c.name));
                continue;
            }
        };
        let expected: Vec<Value> = c.expect.iter().map(|a| Value::tensor(tensor(a))).collect();
        let expected = if c.tuple {
            Value::Tuple(expected)
        } else {
            expected[0].clone()
        };
        if !out.all_close(&expected, c.rtol, c.atol) {
            failures.push(format!("{}: got {out}, numpy says {expected}", c.name));
            continue;
        }
        // The inferred type is the type of the value the kernel produced.
        let ret = m.get("main").unwrap().result_type().unwrap();
        let actual = value_type(&out);
        if ret != actual {
            failures.push(format!(
                "{}: relation says {ret}, kernel gave {actual}",
                c.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn value_type(v: &Value) -> Type {
    match v {
        Value::Tensor(t) => Type::from(t.tensor_type()),
        Value::Tuple(f) => Type::Tuple(f.iter().map(value_type).collect()),
        Value::Closure(_) | Value::Opaque(_) => Type::Unknown,
    }
}

#[test]
fn every_registered_operator_has_a_numpy_case() {
    let cases = cases();
    let missing: Vec<&str> = Op::all()
        .into_iter()
        .map(|op| op.name())
        .filter(|name| {
            !cases.iter().any(|c| {
                c.program.contains(&format!(" {name}("))
                    || c.program.contains(&format!("{{ {name}("))
            })
        })
        .collect();
    assert!(
        missing.is_empty(),
        "operators without a kernel case: {missing:?}"
    );
    assert!(Op::all().len() >= 60, "{} operators", Op::all().len());
}

/// Type relation errors: (program, part of the message).
const RELATION_ERRORS: &[(&str, &str)] = &[
    // Every operator that takes a shape refuses a negative size.
    (
        "def @main(%x: Tensor[(3), float32]) { broadcast_to(%x, shape=[-5, 3]) }",
        "`broadcast_to`: negative dimension -5 in `shape`",
    ),
    (
        "def @main(%x: float32) { full(%x, shape=[-5, 3]) }",
        "`full`: negative dimension -5 in `shape`",
    ),
    (
        "def @main() { ones(shape=[-2]) }",
        "`ones`: negative dimension -2 in `shape`",
    ),
    (
        "def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(4), float32]) { add(%a, %b) }",
        "shapes (2, 3) and (4) do not broadcast",
    ),
    (
        "def @main(%a: Tensor[(2), float32], %b: Tensor[(2), int32]) { multiply(%a, %b) }",
        "`multiply` needs operands of one dtype, got `float32` and `int32`",
    ),
    (
        "def @main(%a: Tensor[(2), int32]) { exp(%a) }",
        "`exp` needs a float tensor as argument 1",
    ),
    // Stricter than TVM on purpose, and the message says so.
    (
        "def @main(%a: Tensor[(2), int32]) { log(%a) }",
        "(TVM's type relation accepts any dtype; irpass asks for a float, cast the argument",
    ),
    (
        "def @main(%a: Tensor[(2), float32]) { left_shift(%a, %a) }",
        "`left_shift` needs integer operands, got `Tensor[(2), float32]` (TVM's type relation accepts floats",
    ),
    (
        "def @main(%a: Tensor[(2, 5), float32], %w: Tensor[(3, 4), float32]) { nn.dense(%a, %w) }",
        "`nn.dense`: the reduction dimensions of data and weight do not match (5 vs 4)",
    ),
    (
        "def @main(%a: Tensor[(2, 5), float32], %w: Tensor[(3, 5), float32]) { nn.dense(%a, %w, units=4) }",
        "`units` and the weight's first dimension do not match",
    ),
    (
        "def @main(%a: Tensor[(2, 3, 4), float32], %b: Tensor[(5, 6), float32]) { matmul(%a, %b) }",
        "`matmul`: the reduction dimensions do not match (4 vs 5)",
    ),
    (
        "def @main(%a: Tensor[(2, 3, 4), float32], %b: Tensor[(3, 5, 4), float32]) { nn.batch_matmul(%a, %b) }",
        "batch shapes (2) and (3) do not broadcast",
    ),
    (
        "def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(6, 3, 3, 3), float32]) { nn.conv2d(%x, %w) }",
        "the data has 4 channels but the weight expects 3",
    ),
    (
        "def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(6, 2, 3, 3), float32]) { nn.conv2d(%x, %w, groups=4) }",
        "the data has 4 channels but the weight expects 8",
    ),
    (
        "def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(6, 4, 3, 3), float32]) { nn.conv2d(%x, %w, kernel_size=[5, 5]) }",
        "kernel_size [5, 5] does not match the weight's [3, 3]",
    ),
    (
        "def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(6, 4, 3, 3), float32]) { nn.conv2d(%x, %w, data_layout=\"NCDH\") }",
        "data_layout `NCDH` is not supported (the axes NCHW, in any order",
    ),
    (
        "def @main(%x: Tensor[(1, 1, 8, 8, 4), float32], %w: Tensor[(1, 1, 3, 3, 4, 4), float32]) { nn.conv2d(%x, %w, data_layout=\"NCHW4c\", kernel_layout=\"OIHW4i4o\", out_layout=\"NCHW3c\") }",
        "`nn.conv2d`: layout `NCHW3c`: axis `C` of size 4 does not split into blocks of 3",
    ),
    (
        "def @main(%x: Tensor[(1, 4, 8, 8), float32], %w: Tensor[(6, 4, 3, 3), float32]) { nn.conv2d(%x, %w, data_layout=\"NCHW4c\") }",
        "`nn.conv2d` needs data of rank 5 (NCHW4c)",
    ),
    (
        "def @main(%x: Tensor[(1, 4, 2, 2), float32], %w: Tensor[(6, 4, 3, 3), float32]) { nn.conv2d(%x, %w) }",
        "the window (3) is larger than the padded input (2)",
    ),
    (
        "def @main(%x: Tensor[(1, 4, 8, 8), float32]) { nn.max_pool2d(%x, pool_size=[2, 2], strides=[0, 1]) }",
        "strides and dilation must be at least 1",
    ),
    (
        "def @main(%x: Tensor[(8, 8), float32]) { nn.avg_pool2d(%x, pool_size=[2, 2]) }",
        "`nn.avg_pool2d` needs rank-4 data",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32], %g: Tensor[(4), float32], %b: Tensor[(3), float32], %m: Tensor[(3), float32], %v: Tensor[(3), float32]) { nn.batch_norm(%x, %g, %b, %m, %v) }",
        "`gamma` must have shape (3)",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32], %g: Tensor[(3), float32], %b: Tensor[(2), float32]) { nn.layer_norm(%x, %g, %b) }",
        "`beta` must have shape (3)",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32]) { nn.softmax(%x, axis=2) }",
        "axis 2 is out of range for a tensor of rank 2",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32], %b: Tensor[(2), float32]) { nn.bias_add(%x, %b) }",
        "`bias` must have shape (3)",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32]) { nn.dropout(%x, rate=1.5f) }",
        "rate must be in [0, 1)",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32]) { reshape(%x, newshape=[4, -1]) }",
        "cannot reshape 6 elements into [4, -1]",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32]) { reshape(%x, newshape=[-1, -1]) }",
        "newshape may contain -1 only once",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32]) { reshape(%x, newshape=[7]) }",
        "cannot reshape (2, 3) (6 elements) into (7) (7 elements)",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32]) { transpose(%x, axes=[0, 0]) }",
        "name axis 0 twice",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32]) { expand_dims(%x, axis=4) }",
        "axis 4 is out of range",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32]) { squeeze(%x, axis=[0]) }",
        "axis 0 has size 2, not 1",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(3, 3), float32]) { concatenate((%x, %y), axis=1) }",
        "differ in axis 0, which is not the concatenation axis 1",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32]) { concatenate(%x) }",
        "`concatenate` needs a tuple of tensors",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32]) { split(%x, indices_or_sections=2, axis=1) }",
        "an axis of size 3 does not split into 2 equal sections",
    ),
    (
        "def @main(%x: Tensor[(1, 2, 3), float32]) { layout_transform(%x, src_layout=\"NCH\", dst_layout=\"NCW\") }",
        "`layout_transform`: layouts `NCH` and `NCW` do not have the same primal axes",
    ),
    (
        "def @main(%x: Tensor[(1, 6, 3, 3), float32]) { layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW4c\") }",
        "`layout_transform`: layout `NCHW4c`: axis `C` of size 6 does not split into blocks of 4",
    ),
    (
        "def @main(%x: Tensor[(1, 6, 3, 3), float32]) { layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHWc\") }",
        "`layout_transform`: layout `NCHWc`: the sub-axis `c` needs its size before it",
    ),
    (
        "def @main(%x: Tensor[(2, 3), float32]) { sum(%x, axis=[3]) }",
        "axis 3 is out of range",
    ),
    (
        "def @main(%c: Tensor[(2), float32], %x: Tensor[(2), float32]) { where(%c, %x, %x) }",
        "`where` needs a bool condition",
    ),
    (
        "def @main(%x: Tensor[(2), float32]) { clip(%x, a_min=1f, a_max=0f) }",
        "a_min 1 is above a_max 0",
    ),
    (
        "def @main() { zeros(shape=[2, -3]) }",
        "negative dimension -3 in `shape`",
    ),
    (
        "def @main(%x: Tensor[(2), float32]) { nn.relu(%x, %x) }",
        "`nn.relu` takes 1 argument, 2 given",
    ),
];

#[test]
fn every_relation_error_names_the_operator_and_the_problem() {
    let mut failures = Vec::new();
    for (program, wanted) in RELATION_ERRORS {
        let m = Module::parse(program).unwrap_or_else(|e| panic!("{program}: {e}"));
        match m.infer_types() {
            Ok(()) => failures.push(format!("{program}: no error")),
            Err(e) => {
                let msg = e.message().to_string();
                if !msg.contains(wanted) {
                    failures.push(format!("{program}:\n  wanted `{wanted}`\n  got    `{msg}`"));
                }
                // Every error points into the program at the call.
                let (line, col) = e.line_col().unwrap();
                assert_eq!(line, 1, "{program}");
                assert!(col > program.find('{').unwrap(), "{program}: column {col}");
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Attribute errors are reported when parsing: (program, part of the message).
const ATTR_ERRORS: &[(&str, &str)] = &[
    (
        "def @main(%x: Tensor[(2), float32]) { nn.softmax(%x, axes=1) }",
        "`nn.softmax` has no attribute `axes`; its attributes are axis",
    ),
    (
        "def @main(%x: Tensor[(2), float32]) { reshape(%x) }",
        "`reshape` needs the attribute `newshape`",
    ),
    (
        "def @main(%x: Tensor[(2), float32]) { nn.softmax(%x, axis=\"last\") }",
        "attribute `axis` of `nn.softmax` takes an integer",
    ),
    (
        "def @main(%x: Tensor[(2), float32]) { cast(%x, dtype=\"float31\") }",
        "unknown dtype `float31`",
    ),
    (
        "def @main(%x: Tensor[(2), float32]) { exp(%x, axis=1) }",
        "`exp` takes no attributes, `axis` given",
    ),
    (
        "def @main(%x: Tensor[(2), float32]) { nn.relu6(%x) }",
        "unknown operator `nn.relu6` (did you mean `nn.relu`",
    ),
];

#[test]
fn attribute_errors_are_parse_errors_naming_the_attribute() {
    for (program, wanted) in ATTR_ERRORS {
        let err = Module::parse(program).unwrap_err();
        assert!(
            err.message().contains(wanted),
            "{program}:\n  wanted `{wanted}`\n  got    `{}`",
            err.message()
        );
    }
}

#[test]
fn kernels_report_runtime_errors_instead_of_panicking() {
    let m = Module::parse(
        "def @main(%a: Tensor[(2), int32], %b: Tensor[(2), int32]) { divide(%a, %b) }",
    )
    .unwrap();
    let a = Value::tensor(Tensor::from_vec(DType::Int32, &[2], vec![1.0, 2.0]).unwrap());
    let b = Value::tensor(Tensor::from_vec(DType::Int32, &[2], vec![1.0, 0.0]).unwrap());
    let err = eval_function(&m, "main", vec![a.clone(), b]).unwrap_err();
    assert!(err.message().contains("integer division by zero"), "{err}");
    let err = eval_function(&m, "main", vec![a]).unwrap_err();
    assert!(
        err.message().contains("takes 2 arguments, 1 given"),
        "{err}"
    );
}
