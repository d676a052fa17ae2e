//! Operators irpass does not convert are kept whole: a node of another domain or an unknown
//! default-domain operator is imported as an opaque call typed by the model's declarations,
//! the passes optimise around it (a constant chain feeding it folds; nothing folds through it;
//! two identical ones are not merged), and it is written back as it came (its domain and
//! version in `opset_import`, attributes byte for byte, optional inputs and outputs left out
//! where they were). A node whose outputs the model does not type is one clear refusal, and so
//! is every kept node with `--strict`.

mod cli_support;
// The ONNX crate's model-building helpers.
#[path = "../../onnx/tests/support/mod.rs"]
mod onnx_support;

use cli_support::{o3, opt, text};
use irpass_onnx::proto::attribute_proto::AttributeType;
use irpass_onnx::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, type_proto,
};
use irpass_onnx::{ExportOptions, ImportOptions, OnnxError, export_module, import_bytes};
use irpass_passes as _;
use onnx_support::{floats, value};
use prost::Message as _;

/// A node of `domain` (`""`: the default one), named after its outputs.
fn node(op: &str, domain: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
    let mut n = onnx_support::node(op, &format!("{op}_{}", outputs.join("_")), inputs, outputs);
    n.domain = (!domain.is_empty()).then(|| domain.into());
    n
}

/// Attributes of every kind a plugin might carry, a subgraph-free selection.
fn plugin_attributes() -> Vec<AttributeProto> {
    vec![
        AttributeProto {
            name: Some("alpha".into()),
            r#type: Some(AttributeType::Float as i32),
            f: Some(0.25),
            ..AttributeProto::default()
        },
        AttributeProto {
            name: Some("mode".into()),
            r#type: Some(AttributeType::String as i32),
            s: Some(b"fast\xff".to_vec()),
            ..AttributeProto::default()
        },
        AttributeProto {
            name: Some("table".into()),
            r#type: Some(AttributeType::Tensor as i32),
            t: Some(floats("", &[2], &[1.0, 2.0])),
            ..AttributeProto::default()
        },
    ]
}

/// `y = Plugin(x, c1 + c2)` (Plugin of domain `com.example`, two outputs of which the graph
/// uses the second), then `z = Plugin2(y)` (an unknown default-domain operator), and a
/// second identical `Plugin2(y)` beside it: both are outputs.
fn model() -> ModelProto {
    let mut plugin = node("Plugin", "com.example", &["x", "", "sum"], &["", "y"]);
    plugin.attribute = plugin_attributes();
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![
            OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(17),
            },
            OperatorSetIdProto {
                domain: Some("com.example".into()),
                version: Some(3),
            },
        ],
        graph: Some(GraphProto {
            name: Some("plugins".into()),
            node: vec![
                node("Add", "", &["c1", "c2"], &["sum"]),
                plugin,
                node("FutureOp", "", &["y"], &["z"]),
                node("FutureOp", "", &["y"], &["w"]),
            ],
            initializer: vec![
                floats("c1", &[3], &[1.0, 2.0, 3.0]),
                floats("c2", &[3], &[0.5; 3]),
            ],
            input: vec![value("x", &[2, 3])],
            output: vec![value("z", &[2, 3]), value("w", &[2, 3])],
            value_info: vec![value("y", &[2, 3])],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    }
}

#[test]
fn unknown_operators_are_kept_and_written_back_as_they_came_with_the_rest_optimised() {
    let imported = import_bytes(&model().encode_to_vec(), &ImportOptions::default()).unwrap();
    assert_eq!(
        imported.opaque,
        [
            ("FutureOp".to_string(), 2),
            ("com.example.Plugin".to_string(), 1)
        ]
    );
    let optimised = o3(imported.module);
    let out = export_module(&optimised, None, &ExportOptions::default()).unwrap();
    let g = out.graph.as_ref().unwrap();
    // The constant chain feeding the plugin folded; the plugin and both FutureOps stay.
    let ops: Vec<&str> = g.node.iter().map(|n| n.op_type()).collect();
    assert_eq!(ops, ["Plugin", "FutureOp", "FutureOp"], "{g:?}");
    let plugin = &g.node[0];
    assert_eq!(plugin.domain(), "com.example");
    assert_eq!(plugin.attribute, plugin_attributes());
    assert_eq!(plugin.input[0], "x");
    assert_eq!(plugin.input[1], "");
    assert_eq!(plugin.output.len(), 2);
    assert_eq!(plugin.output[0], "");
    let folded = &plugin.input[2];
    let init = g
        .initializer
        .iter()
        .find(|t| t.name() == folded)
        .expect("a folded constant");
    let bytes = init.raw_data.as_deref().unwrap_or_default();
    let values: Vec<f32> = if bytes.is_empty() {
        init.float_data.clone()
    } else {
        bytes
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    assert_eq!(values, [1.5, 2.5, 3.5]);
    assert!(
        out.opset_import
            .iter()
            .any(|o| o.domain() == "com.example" && o.version == Some(3))
    );
    assert_eq!(g.node[1].input, g.node[2].input);
}

#[test]
fn an_opaque_node_whose_outputs_are_not_typed_is_one_clear_refusal() {
    let mut m = model();
    m.graph.as_mut().unwrap().value_info.clear();
    match import_bytes(&m.encode_to_vec(), &ImportOptions::default()) {
        Err(OnnxError::Unsupported(list)) => {
            assert_eq!(list.len(), 1, "{list:?}");
            assert_eq!(list[0].op_type, "com.example.Plugin");
            let why = list[0].reason.as_deref().unwrap();
            assert!(why.contains("output `y` has no declared type"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn irpass_opt_says_what_it_kept_opaque_or_refuses_it_with_strict_and_the_interpreter_cannot_run_it()
{
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("plugins.onnx");
    let output = dir.path().join("out.onnx");
    std::fs::write(&input, model().encode_to_vec()).unwrap();
    let run = opt(&[
        input.to_str().unwrap(),
        "-O3",
        "-o",
        output.to_str().unwrap(),
    ]);
    let err = text(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(
        err.contains("kept opaque") && err.contains("FutureOp ×2, com.example.Plugin ×1"),
        "{err}"
    );
    // `--strict` refuses the model instead, naming what it would have kept, and writes nothing.
    std::fs::remove_file(&output).unwrap();
    let run = opt(&[
        input.to_str().unwrap(),
        "-O3",
        "--strict",
        "-o",
        output.to_str().unwrap(),
    ]);
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`--strict`") && err.contains("com.example.Plugin ×1"),
        "{err}"
    );
    assert!(!output.exists());
    let imported = import_bytes(&model().encode_to_vec(), &ImportOptions::default()).unwrap();
    let x = irpass_passes::ir::Value::tensor(
        irpass_passes::ir::Tensor::from_f32(&[2, 3], vec![0.0; 6]).unwrap(),
    );
    let e = irpass_passes::ir::eval_function(&imported.module, "main", vec![x]).unwrap_err();
    assert!(e.to_string().contains("is kept opaque"), "{e}");
}

/// `y = com.example.Choose(c)` (a plugin with two subgraph attributes, as `If` has) whose
/// subgraphs return `Identity(read)`: a subgraph reading a value of the graph by name.
fn choose_model(read: &str) -> ModelProto {
    let branch = |name: &str| GraphProto {
        name: Some(name.into()),
        node: vec![node("Identity", "", &[read], &[&format!("{name}_out")])],
        output: vec![value(&format!("{name}_out"), &[2, 3])],
        ..GraphProto::default()
    };
    let mut cond = value("c", &[]);
    if let Some(type_proto::Value::TensorType(t)) =
        cond.r#type.as_mut().and_then(|t| t.value.as_mut())
    {
        t.elem_type = Some(9);
    }
    let mut if_node = node("Choose", "com.example", &["c"], &["y"]);
    if_node.attribute = ["then_branch", "else_branch"]
        .into_iter()
        .map(|a| onnx_support::graph_attr(a, branch(a)))
        .collect();
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![
            OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(17),
            },
            OperatorSetIdProto {
                domain: Some("com.example".into()),
                version: Some(1),
            },
        ],
        graph: Some(GraphProto {
            name: Some("choose".into()),
            node: vec![node("Relu", "", &["x"], &["r"]), if_node],
            input: vec![value("x", &[2, 3]), cond],
            output: vec![value("y", &[2, 3])],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    }
}

/// The branches' node inputs, by branch.
fn branch_reads(if_node: &irpass_onnx::proto::NodeProto) -> Vec<Vec<String>> {
    if_node
        .attribute
        .iter()
        .map(|a| {
            a.g.as_ref()
                .unwrap()
                .node
                .iter()
                .flat_map(|n| n.input.clone())
                .collect()
        })
        .collect()
}

#[test]
fn a_node_whose_subgraphs_read_graph_values_by_name_is_kept_and_they_read_them_written() {
    // The branches read the graph input `x`, whose name the written model keeps.
    let imported = import_bytes(
        &choose_model("x").encode_to_vec(),
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(imported.opaque, [("com.example.Choose".to_string(), 1)]);
    let out = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = out.graph.unwrap();
    let if_node = g.node.iter().find(|n| n.op_type() == "Choose").unwrap();
    assert_eq!(
        if_node.input,
        ["c"],
        "the captured value is not an input of the node"
    );
    assert_eq!(branch_reads(if_node), [["x"], ["x"]]);
    // They read `r`, a value the writer names anew: the branches read the new name, and the
    // Relu that computes it stays although nothing else uses it.
    let imported = import_bytes(
        &choose_model("r").encode_to_vec(),
        &ImportOptions::default(),
    )
    .unwrap();
    let out = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = out.graph.unwrap();
    let relu = g.node.iter().find(|n| n.op_type() == "Relu").unwrap();
    let if_node = g.node.iter().find(|n| n.op_type() == "Choose").unwrap();
    let written = relu.output[0].clone();
    assert_eq!(branch_reads(if_node), [[written.clone()], [written]]);
    // A subgraph that reads what the graph never computes is refused, by name.
    match import_bytes(
        &choose_model("nowhere").encode_to_vec(),
        &ImportOptions::default(),
    ) {
        Err(OnnxError::Unsupported(list)) => {
            let why = list[0].reason.as_deref().unwrap();
            assert!(
                why.contains("a subgraph reads `nowhere`, which the graph does not compute"),
                "{why}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_writers_peephole_rewrites_leave_opaque_nodes_as_they_came() {
    // An `Add` of another domain is kept opaque; the bias it adds to a convolution is not
    // folded into the Conv, as it would be for the Add irpass converts.
    let mut add = node("Add", "", &["conv", "b"], &["y"]);
    add.domain = Some("com.example".into());
    add.attribute = vec![AttributeProto {
        name: Some("broadcast".into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(1),
        ..AttributeProto::default()
    }];
    let model = ModelProto {
        ir_version: Some(8),
        opset_import: vec![
            OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(13),
            },
            OperatorSetIdProto {
                domain: Some("com.example".into()),
                version: Some(1),
            },
        ],
        graph: Some(GraphProto {
            name: Some("conv_add".into()),
            node: vec![node("Conv", "", &["x", "w"], &["conv"]), add],
            initializer: vec![
                floats("w", &[2, 1, 1, 1], &[1.0, 2.0]),
                floats("b", &[2, 1, 1], &[0.5, -0.5]),
            ],
            input: vec![value("x", &[1, 1, 2, 2])],
            output: vec![value("y", &[1, 2, 2, 2])],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    };
    let imported = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    assert_eq!(imported.opaque, [("com.example.Add".to_string(), 1)]);
    let out = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = out.graph.unwrap();
    let ops: Vec<&str> = g.node.iter().map(|n| n.op_type()).collect();
    assert_eq!(ops, ["Conv", "Add"]);
    assert_eq!(g.node[0].input.len(), 2, "the bias stays out of the Conv");
    assert_eq!(g.node[1].attribute[0].name(), "broadcast");
}
