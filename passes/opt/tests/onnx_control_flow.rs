//! The passes optimise inside an `If`'s branches: an `If` decided at run time is the IR's
//! `if`, whose branches `-O3` folds, deduplicates and prunes as it does the graph, and the
//! writer writes back as ONNX's `If`; through `irpass-opt` too.

mod cli_support;
#[path = "../../onnx/tests/support/mod.rs"]
mod onnx_support;

use cli_support::{o3, opt, text};
use irpass_onnx::proto::{GraphProto, ModelProto};
use irpass_onnx::{ExportOptions, export_module};
use irpass_passes as _;
use irpass_passes::ir::{DType, Tensor, Value, eval_function};
use onnx_support::{branch, floats, model, node, op_types, symbolic};
use prost::Message as _;

const FLOAT: i32 = 1;
const BOOL: i32 = 9;

/// `y = If(cond) then (relu(x) + relu(x)) * (one + two) else -x`: the then branch holds a
/// repeated subexpression and a constant chain.
fn model_with_if() -> ModelProto {
    let mut choose = node("If", "if", &["cond"], &["y"]);
    choose.attribute = vec![
        branch(
            "then_branch",
            vec![
                node("Relu", "r1", &["x"], &["r1"]),
                node("Relu", "r2", &["x"], &["r2"]),
                node("Add", "s", &["r1", "r2"], &["s"]),
                node("Add", "k", &["one", "two"], &["k"]),
                node("Mul", "t", &["s", "k"], &["t"]),
            ],
            "t",
        ),
        branch("else_branch", vec![node("Neg", "neg", &["x"], &["e"])], "e"),
    ];
    model(
        17,
        vec![choose],
        vec![
            symbolic("x", FLOAT, &["2", "3"]),
            symbolic("cond", BOOL, &[]),
        ],
        vec![symbolic("y", FLOAT, &["2", "3"])],
        vec![floats("one", &[], &[1.0]), floats("two", &[], &[2.0])],
    )
}

fn then_ops(g: &GraphProto) -> Vec<&str> {
    let if_node = g.node.iter().find(|n| n.op_type() == "If").unwrap();
    op_types(if_node.attribute[0].g.as_ref().unwrap())
}

#[test]
fn o3_folds_and_deduplicates_inside_an_ifs_branches() {
    let imported = onnx_support::import(&model_with_if());
    let before = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    assert_eq!(
        then_ops(before.graph.as_ref().unwrap()),
        ["Relu", "Relu", "Add", "Add", "Mul"]
    );
    let optimised = o3(imported.module.clone());
    let after = export_module(&optimised, None, &ExportOptions::default()).unwrap();
    let g = after.graph.as_ref().unwrap();
    assert_eq!(op_types(g), ["If"]);
    // One Relu (common subexpressions), the constant chain folded, and the sum of the two
    // equal terms a product: relu(x) * 6.
    assert_eq!(then_ops(g), ["Relu", "Mul"]);
    // The same values, both ways.
    let x: Vec<f64> = vec![-1.0, 2.0, -3.0, 4.0, 0.5, -0.5];
    for cond in [true, false] {
        let args = || {
            vec![
                Value::tensor(Tensor::from_vec(DType::Float32, &[2, 3], x.clone()).unwrap()),
                Value::tensor(Tensor::scalar(DType::Bool, f64::from(u8::from(cond)))),
            ]
        };
        let a = eval_function(&imported.module, "main", args()).unwrap();
        let b = eval_function(&optimised, "main", args()).unwrap();
        assert!(a.bit_eq(&b), "{a} vs {b}");
    }
}

#[test]
fn irpass_opt_writes_an_optimised_if_back() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("if.onnx");
    let output = dir.path().join("out.onnx");
    std::fs::write(&input, model_with_if().encode_to_vec()).unwrap();
    let out = opt(&[
        input.to_str().unwrap(),
        "-O3",
        "-o",
        output.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("kept opaque"),
        "{}",
        text(&out.stderr)
    );
    let written = ModelProto::decode(std::fs::read(&output).unwrap().as_slice()).unwrap();
    assert_eq!(then_ops(written.graph.as_ref().unwrap()), ["Relu", "Mul"]);
}

/// `Loop(3, true, start)` whose body computes `relu(prev) * (one + two) + relu(prev)` and
/// scans `prev`: a repeated subexpression and a constant chain read from the graph.
fn model_with_loop() -> ModelProto {
    let body = GraphProto {
        name: Some("body".into()),
        node: vec![
            node("Identity", "keep", &["cond"], &["cond_out"]),
            node("Relu", "r1", &["prev"], &["r1"]),
            node("Relu", "r2", &["prev"], &["r2"]),
            node("Add", "k", &["one", "two"], &["k"]),
            node("Mul", "m", &["r1", "k"], &["m"]),
            node("Add", "next", &["m", "r2"], &["current"]),
            node("Identity", "scan", &["prev"], &["seen"]),
        ],
        input: vec![
            symbolic("i", 7, &[]),
            symbolic("cond", BOOL, &[]),
            symbolic("prev", FLOAT, &["2"]),
        ],
        output: vec![
            symbolic("cond_out", BOOL, &[]),
            symbolic("current", FLOAT, &["2"]),
            symbolic("seen", FLOAT, &["2"]),
        ],
        ..GraphProto::default()
    };
    let mut repeat = node("Loop", "loop", &["three", "yes", "start"], &["last", "all"]);
    repeat.attribute = vec![onnx_support::graph_attr("body", body)];
    model(
        17,
        vec![repeat],
        vec![symbolic("start", FLOAT, &["2"])],
        vec![
            symbolic("last", FLOAT, &["2"]),
            symbolic("all", FLOAT, &["3", "2"]),
        ],
        vec![
            onnx_support::int64s("three", &[], &[3]),
            floats("one", &[], &[1.0]),
            floats("two", &[], &[2.0]),
            onnx_support::bools("yes", &[], &[true]),
        ],
    )
}

#[test]
fn o3_optimises_inside_a_loops_body_and_keeps_the_loop() {
    let imported = onnx_support::import(&model_with_loop());
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let text = imported.module.to_string();
    assert!(text.contains("onnx.Loop("), "{text}");
    let optimised = o3(imported.module);
    let out = export_module(&optimised, None, &ExportOptions::default()).unwrap();
    let g = out.graph.as_ref().unwrap();
    assert_eq!(op_types(g), ["Loop"]);
    let body = g.node[0]
        .attribute
        .iter()
        .find(|a| a.name() == "body")
        .unwrap();
    let body = body.g.as_ref().unwrap();
    // One Relu, the constant chain folded (no node reads only constants).
    let ops = op_types(body);
    assert_eq!(ops.iter().filter(|&&o| o == "Relu").count(), 1, "{ops:?}");
    assert!(ops.len() < 7, "{ops:?}");
    let constants: Vec<&str> = g.initializer.iter().map(|t| t.name()).collect();
    for n in &body.node {
        assert!(
            n.input.is_empty() || !n.input.iter().all(|i| constants.contains(&i.as_str())),
            "{n:?} reads only constants"
        );
    }
    assert_eq!(body.input.len(), 3);
    assert_eq!(body.output.len(), 3);
}
