//! The passes see an ONNX operator the IR holds as itself (`onnx.CumSum`, ...) as any
//! operator: `-O3` folds it on constants, merges two alike and fuses it by its pattern, where a node kept opaque
//! (`onnx.node`) would stay as it came.

mod cli_support;
#[path = "../../onnx/tests/support/mod.rs"]
mod onnx_support;

use cli_support::{o3, opt, text};
use irpass_onnx::{ExportOptions, export_module};
use irpass_passes as _;
use irpass_passes::ir::{DType, Tensor, Value, eval_function};
use onnx_support::{floats, int64s, model, node, op_types, symbolic};

const FLOAT: i32 = 1;

#[test]
fn o3_folds_a_native_operator_on_constants_and_merges_two_alike() {
    // y = (CumSum(w, 0) + Sin(x)) * Sin(x): the CumSum of a weight is a constant, the two
    // Sin calls one.
    let m = model(
        17,
        vec![
            node("CumSum", "cum", &["w", "axis"], &["c"]),
            node("Sin", "s1", &["x"], &["s1"]),
            node("Sin", "s2", &["x"], &["s2"]),
            node("Add", "add", &["c", "s1"], &["a"]),
            node("Mul", "mul", &["a", "s2"], &["y"]),
        ],
        vec![symbolic("x", FLOAT, &["3"])],
        vec![symbolic("y", FLOAT, &["3"])],
        vec![
            floats("w", &[3], &[1.0, 2.0, 3.0]),
            int64s("axis", &[], &[0]),
        ],
    );
    let imported = onnx_support::import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let optimised = o3(imported.module.clone());
    // FuseOps fuses the elementwise Sin with what follows, as it would an IR operator.
    let options = ExportOptions {
        local_functions: true,
        ..ExportOptions::default()
    };
    let fused = export_module(&optimised, None, &options).unwrap();
    assert_eq!(
        op_types(fused.graph.as_ref().unwrap()),
        ["fused_Sin_Add_Mul"]
    );
    let written = export_module(&optimised, None, &ExportOptions::default()).unwrap();
    assert_eq!(
        op_types(written.graph.as_ref().unwrap()),
        ["Sin", "Add", "Mul"]
    );
    let x = || {
        vec![Value::tensor(
            Tensor::from_vec(DType::Float32, &[3], vec![0.1, -0.2, 0.3]).unwrap(),
        )]
    };
    let a = eval_function(&imported.module, "main", x()).unwrap();
    let b = eval_function(&optimised, "main", x()).unwrap();
    assert!(a.bit_eq(&b), "{a} vs {b}");
}

#[test]
fn irpass_opt_lists_the_native_operators_with_their_descriptions() {
    let out = opt(&["--list-ops"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    let line = |name: &str| {
        listing
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in\n{listing}"))
            .to_string()
    };
    assert!(
        line("onnx.TopK").contains("largest"),
        "{}",
        line("onnx.TopK")
    );
    assert!(
        line("onnx.Sin").contains("ElemWise"),
        "{}",
        line("onnx.Sin")
    );
    // The descriptions start at one column (doc comments' leading spaces trimmed).
    let column = |name: &str, start: &str| line(name).find(start).unwrap();
    assert_eq!(
        column("onnx.Attention", "softmax("),
        column("onnx.Sin", "Elementwise sine.")
    );
}

#[test]
fn o3_neither_folds_a_random_draw_nor_merges_two() {
    // y = RandomNormal() + RandomNormal(): no inputs, so each call's operands are constant,
    // and the two calls alike; each is a draw at run time all the same.
    let draw = |name: &str| {
        let mut n = node("RandomNormal", name, &[], &[name]);
        n.attribute = vec![irpass_onnx::proto::AttributeProto {
            name: Some("shape".into()),
            r#type: Some(irpass_onnx::proto::attribute_proto::AttributeType::Ints as i32),
            ints: vec![4],
            ..Default::default()
        }];
        n
    };
    let m = model(
        17,
        vec![
            draw("a"),
            draw("b"),
            node("Add", "add", &["a", "b"], &["y"]),
        ],
        vec![],
        vec![symbolic("y", FLOAT, &["4"])],
        vec![],
    );
    let imported = onnx_support::import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let optimised = o3(imported.module.clone());
    let text = optimised.to_string();
    assert_eq!(text.matches("onnx.RandomNormal(").count(), 2, "{text}");
    // Two evaluations draw anew.
    let a = eval_function(&optimised, "main", vec![]).unwrap();
    let b = eval_function(&optimised, "main", vec![]).unwrap();
    assert!(!a.bit_eq(&b));
}
