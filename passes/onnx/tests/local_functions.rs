//! Model-local functions: FuseOps's groups are written as ONNX functions from opset 15 when
//! asked (shared by groups that compute the same thing; inline below 15 and by default), and models with
//! local functions — irpass's own and hand-built ones with attribute references and nested
//! calls — import with the functions inlined.

mod support;

use irpass_ir::{DType, Module, Tensor, Value, eval_function};
use irpass_onnx::proto::{
    AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
    attribute_proto::AttributeType,
};
use irpass_onnx::{
    ExportOptions, FUNCTION_DOMAIN, ImportOptions, OnnxError, encode_model, export_module,
    import_bytes,
};
use prost::Message as _;
use support::op_types;

/// Two fused conv + bias + relu groups of the same form on different weights, and a fused
/// add + tanh group.
const FUSED: &str = r#"
def @main(%x: Tensor[(1, 2, 4, 4), float32]) {
  %0 = fn (%p0: Tensor[(1, 2, 4, 4), float32], %p1: Tensor[(2, 2, 3, 3), float32], Primitive=1) {
    nn.relu(add(nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1]), Tensor[(2, 1, 1), float32]{0.5, -0.5}))
  };
  %1 = %0(%x, Tensor[(2, 2, 3, 3), float32]{1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0});
  %2 = fn (%q0: Tensor[(1, 2, 4, 4), float32], %q1: Tensor[(2, 2, 3, 3), float32], Primitive=1) {
    nn.relu(add(nn.conv2d(%q0, %q1, padding=[1, 1, 1, 1]), Tensor[(2, 1, 1), float32]{0.25, 0.75}))
  };
  %3 = %2(%1, Tensor[(2, 2, 3, 3), float32]{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1});
  %4 = fn (%r0: Tensor[(1, 2, 4, 4), float32], %r1: Tensor[(1, 2, 4, 4), float32], Primitive=1) {
    tanh(add(%r0, %r1))
  };
  %4(%3, %x)
}
"#;

fn x() -> Value {
    Value::tensor(
        Tensor::from_vec(
            DType::Float32,
            &[1, 2, 4, 4],
            (0..32).map(|i| f64::from(i) / 8.0 - 2.0).collect(),
        )
        .unwrap(),
    )
}

fn export(m: &Module, opset: i64, inline: bool) -> ModelProto {
    let options = ExportOptions {
        opset: Some(opset),
        local_functions: !inline,
    };
    export_module(m, None, &options).unwrap()
}

#[test]
fn fused_groups_become_local_functions_shared_by_groups_of_the_same_form() {
    let m = Module::parse(FUSED).unwrap();
    let model = export(&m, 17, false);
    let g = model.graph.as_ref().unwrap();
    let calls: Vec<(&str, &str)> = g.node.iter().map(|n| (n.domain(), n.op_type())).collect();
    assert_eq!(
        calls,
        [
            (FUNCTION_DOMAIN, "fused_Conv_Relu"),
            (FUNCTION_DOMAIN, "fused_Conv_Relu"),
            (FUNCTION_DOMAIN, "fused_Add_Tanh"),
        ]
    );
    assert_eq!(model.functions.len(), 2);
    let conv = &model.functions[0];
    // The bias add became the Conv's third input, inside the function.
    assert_eq!(
        conv.node.iter().map(|n| n.op_type()).collect::<Vec<_>>(),
        ["Conv", "Relu"]
    );
    assert_eq!((conv.input.len(), conv.output.len()), (3, 1));
    assert!(
        model
            .opset_import
            .iter()
            .any(|o| o.domain() == FUNCTION_DOMAIN && o.version == Some(1))
    );
    // The model reads back (functions inlined) and computes what the module computes.
    let again = import_bytes(&encode_model(&model), &ImportOptions::default()).unwrap();
    let a = eval_function(&m, "main", vec![x()]).unwrap();
    let b = eval_function(&again.module, "main", vec![x()]).unwrap();
    assert!(a.all_close(&b, 1e-6, 1e-6), "{a} vs {b}");
}

#[test]
fn below_opset_15_or_when_asked_the_groups_are_inline() {
    let m = Module::parse(FUSED).unwrap();
    for model in [export(&m, 14, false), export(&m, 17, true)] {
        assert!(model.functions.is_empty());
        assert_eq!(model.opset_import.len(), 1);
        let ops = op_types(model.graph.as_ref().unwrap());
        assert_eq!(ops, ["Conv", "Relu", "Conv", "Relu", "Add", "Tanh"]);
        // No group mark is left behind in the written nodes.
        assert!(
            model
                .graph
                .unwrap()
                .node
                .iter()
                .all(|n| n.doc_string.is_none())
        );
    }
}

fn node(op: &str, domain: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        domain: Some(domain.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        ..NodeProto::default()
    }
}

fn function(name: &str, inputs: &[&str], outputs: &[&str], nodes: Vec<NodeProto>) -> FunctionProto {
    FunctionProto {
        name: Some(name.into()),
        domain: Some("custom".into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        node: nodes,
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        ..FunctionProto::default()
    }
}

/// `y = Outer(x)`, where `Outer(a) = Scaled(a) + a` and `Scaled(b) = LeakyRelu(b, alpha =
/// @alpha)` with `alpha` an attribute reference bound at the call (0.5).
fn nested_model(outer_calls_itself: bool) -> ModelProto {
    let mut leaky = node("LeakyRelu", "", &["b"], &["c"]);
    leaky.attribute = vec![AttributeProto {
        name: Some("alpha".into()),
        ref_attr_name: Some("alpha".into()),
        r#type: Some(AttributeType::Float as i32),
        ..AttributeProto::default()
    }];
    let mut scaled = function("Scaled", &["b"], &["c"], vec![leaky]);
    scaled.attribute = vec!["alpha".into()];
    let mut call_scaled = node("Scaled", "custom", &["a"], &["s"]);
    call_scaled.attribute = vec![AttributeProto {
        name: Some("alpha".into()),
        r#type: Some(AttributeType::Float as i32),
        f: Some(0.5),
        ..AttributeProto::default()
    }];
    let inner = if outer_calls_itself {
        node("Outer", "custom", &["a"], &["s"])
    } else {
        call_scaled
    };
    let outer = function(
        "Outer",
        &["a"],
        &["r"],
        vec![inner, node("Add", "", &["s", "a"], &["r"])],
    );
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![
            OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(17),
            },
            OperatorSetIdProto {
                domain: Some("custom".into()),
                version: Some(1),
            },
        ],
        graph: Some(GraphProto {
            node: vec![node("Outer", "custom", &["x"], &["y"])],
            input: vec![support::value("x", &[4])],
            output: vec![support::value("y", &[4])],
            ..GraphProto::default()
        }),
        functions: vec![outer, scaled],
        ..ModelProto::default()
    }
}

#[test]
fn a_model_with_nested_local_functions_and_attribute_references_imports_inlined() {
    let imported = import_bytes(
        &nested_model(false).encode_to_vec(),
        &ImportOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let x =
        Value::tensor(Tensor::from_vec(DType::Float32, &[4], vec![-2.0, -1.0, 0.0, 3.0]).unwrap());
    let y = eval_function(&imported.module, "main", vec![x]).unwrap();
    // leaky_relu(x, 0.5) + x
    assert_eq!(y.as_tensor().unwrap().values(), [-3.0, -1.5, 0.0, 6.0]);
}

#[test]
fn a_local_function_that_calls_itself_is_an_error_not_a_hang() {
    let err = import_bytes(
        &nested_model(true).encode_to_vec(),
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, OnnxError::Invalid(_)), "{err}");
    assert!(
        err.to_string().contains("more than 64 nested functions"),
        "{err}"
    );
}
