//! Control flow the importer resolves: an `If` whose condition is known when importing (a
//! comparison of static sizes, as exporters and ONNX's function expansions write) is replaced
//! by the branch it takes, whose outputs become the `If`'s; one decided at run time is kept.

mod support;

use irpass_ir::{DType, Tensor, Value, eval_function};
use irpass_onnx::proto::attribute_proto::AttributeType;
use irpass_onnx::proto::{AttributeProto, GraphProto, ModelProto, NodeProto};
use irpass_onnx::{ExportOptions, ImportOptions, export_module, import_bytes};
use prost::Message as _;
use support::{int64s, model, node, op_types, symbolic};

const FLOAT: i32 = 1;
const BOOL: i32 = 9;

fn branch(name: &str, nodes: Vec<NodeProto>, output: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(GraphProto {
            name: Some(name.into()),
            node: nodes,
            // Undeclared, as ONNX's function expansions leave them.
            output: vec![irpass_onnx::proto::ValueInfoProto {
                name: Some(output.into()),
                ..Default::default()
            }],
            ..GraphProto::default()
        }),
        ..AttributeProto::default()
    }
}

/// `y = If(cond) then relu(x) else neg(x)`, the condition computed by `cond_nodes`.
fn if_model(
    cond_nodes: Vec<NodeProto>,
    inputs: Vec<irpass_onnx::proto::ValueInfoProto>,
) -> ModelProto {
    let mut choose = node("If", "if", &["cond"], &["y"]);
    choose.attribute = vec![
        branch(
            "then_branch",
            vec![node("Relu", "relu", &["x"], &["t"])],
            "t",
        ),
        branch("else_branch", vec![node("Neg", "neg", &["x"], &["e"])], "e"),
    ];
    let mut nodes = cond_nodes;
    nodes.push(choose);
    model(
        17,
        nodes,
        inputs,
        vec![symbolic("y", FLOAT, &["2", "3"])],
        vec![int64s("six", &[], &[6])],
    )
}

fn run(m: &ModelProto, x: &[f64]) -> Vec<f64> {
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    let x = Value::tensor(Tensor::from_vec(DType::Float32, &[2, 3], x.to_vec()).unwrap());
    let Value::Tensor(y) = eval_function(&imported.module, "main", vec![x]).unwrap() else {
        panic!("a tensor")
    };
    y.values()
}

#[test]
fn an_if_on_static_sizes_is_replaced_by_the_branch_it_takes() {
    // Size(x) == 6 is known when importing: the model is relu(x).
    let m = if_model(
        vec![
            node("Size", "size", &["x"], &["n"]),
            node("Equal", "eq", &["n", "six"], &["cond"]),
        ],
        vec![symbolic("x", FLOAT, &["2", "3"])],
    );
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    assert_eq!(op_types(written.graph.as_ref().unwrap()), ["Relu"]);
    let x = [-1.0, 2.0, -3.0, 4.0, 0.5, -0.5];
    assert_eq!(run(&m, &x), [0.0, 2.0, 0.0, 4.0, 0.5, 0.0]);
    // Size(x) != 6... is false: the else branch, -x.
    let m = if_model(
        vec![
            node("Size", "size", &["x"], &["n"]),
            node("Equal", "eq", &["n", "six"], &["same"]),
            node("Not", "not", &["same"], &["cond"]),
        ],
        vec![symbolic("x", FLOAT, &["2", "3"])],
    );
    assert_eq!(run(&m, &x), x.map(|v| -v));
}

#[test]
fn an_if_decided_at_run_time_is_kept_whole() {
    let m = if_model(
        vec![],
        vec![
            symbolic("x", FLOAT, &["2", "3"]),
            symbolic("cond", BOOL, &[]),
        ],
    );
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    let kept: Vec<&str> = imported.opaque.iter().map(|(op, _)| op.as_str()).collect();
    assert_eq!(kept, ["If"]);
}

#[test]
fn unsqueeze_and_squeeze_of_unknown_sizes_are_written_as_themselves() {
    // (1, ?, ?) → Unsqueeze at 3 → Squeeze at 0: no Reshape can say these (more than one size
    // unknown), the axes can.
    let axes = |name: &str, v: &[i64]| int64s(name, &[v.len() as i64], v);
    let m = model(
        17,
        vec![
            node("Unsqueeze", "u", &["x", "two"], &["u"]),
            node("Squeeze", "s", &["u", "zero"], &["y"]),
        ],
        vec![symbolic("x", FLOAT, &["1", "?", "?"])],
        vec![symbolic("y", FLOAT, &["?", "?", "1"])],
        vec![axes("two", &[3]), axes("zero", &[0])],
    );
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    assert_eq!(op_types(g), ["Unsqueeze", "Squeeze"]);
    let x = Value::tensor(
        Tensor::from_vec(DType::Float32, &[1, 2, 3], (0..6).map(f64::from).collect()).unwrap(),
    );
    let again = import_bytes(&written.encode_to_vec(), &ImportOptions::default()).unwrap();
    let (a, b) = (
        eval_function(&imported.module, "main", vec![x.clone()]).unwrap(),
        eval_function(&again.module, "main", vec![x]).unwrap(),
    );
    let (Value::Tensor(a), Value::Tensor(b)) = (a, b) else {
        panic!("tensors")
    };
    assert!(a.bit_eq(&b));
    assert_eq!(a.shape(), [2, 3, 1]);
}

#[test]
fn a_loops_carried_value_keeps_the_type_of_its_initial_value() {
    // Loop(3, true, start): the body adds 1 to the carried value and scans it; nothing in the
    // body is declared. The carried result is typed as `start`; the scan output is declared.
    let body = GraphProto {
        name: Some("body".into()),
        node: vec![
            node("Identity", "keep", &["cond"], &["cond_out"]),
            node("Add", "step", &["prev", "one"], &["current"]),
            node("Identity", "scan", &["prev"], &["seen"]),
        ],
        input: vec![
            symbolic("i", 7, &[]),
            symbolic("cond", BOOL, &[]),
            irpass_onnx::proto::ValueInfoProto {
                name: Some("prev".into()),
                ..Default::default()
            },
        ],
        output: ["cond_out", "current", "seen"]
            .iter()
            .map(|o| irpass_onnx::proto::ValueInfoProto {
                name: Some(o.to_string()),
                ..Default::default()
            })
            .collect(),
        ..GraphProto::default()
    };
    let mut repeat = node("Loop", "loop", &["three", "yes", "start"], &["last", "all"]);
    repeat.attribute = vec![AttributeProto {
        name: Some("body".into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(body),
        ..AttributeProto::default()
    }];
    let mut m = model(
        17,
        vec![repeat, node("Add", "use", &["last", "last"], &["twice"])],
        vec![symbolic("start", FLOAT, &[])],
        vec![
            symbolic("all", FLOAT, &["3"]),
            symbolic("twice", FLOAT, &[]),
        ],
        vec![
            int64s("three", &[], &[3]),
            support::floats("one", &[], &[1.0]),
        ],
    );
    let g = m.graph.as_mut().unwrap();
    g.initializer.push(irpass_onnx::proto::TensorProto {
        name: Some("yes".into()),
        data_type: Some(BOOL),
        int32_data: vec![1],
        ..Default::default()
    });
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
    let kept: Vec<&str> = imported.opaque.iter().map(|(op, _)| op.as_str()).collect();
    assert_eq!(kept, ["Loop"]);
    imported.module.infer_types().unwrap();
    let ty = imported
        .module
        .get("main")
        .unwrap()
        .function_type()
        .unwrap();
    assert_eq!(
        ty.to_string(),
        "fn (float32) -> (Tensor[(3), float32], float32)"
    );
}
