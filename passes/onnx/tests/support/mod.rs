//! Building small models in code for the tests.

#![allow(dead_code)]

use irpass_onnx::proto::tensor_shape_proto::{Dimension, dimension};
use irpass_onnx::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    TensorShapeProto, TypeProto, ValueInfoProto, attribute_proto::AttributeType, type_proto,
};

/// A float32 graph input or output of `shape` (a negative dimension is written as given).
pub fn value(name: &str, shape: &[i64]) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(1),
                shape: Some(TensorShapeProto {
                    dim: shape
                        .iter()
                        .map(|&d| Dimension {
                            value: Some(dimension::Value::DimValue(d)),
                            ..Dimension::default()
                        })
                        .collect(),
                }),
            })),
            ..TypeProto::default()
        }),
        ..ValueInfoProto::default()
    }
}

/// A graph input or output of element type `elem_type` whose dimensions are sizes or names
/// (`["batch", "3"]`; `"?"` for a dimension with neither).
pub fn symbolic(name: &str, elem_type: i32, dims: &[&str]) -> ValueInfoProto {
    let mut v = value(name, &[]);
    let Some(type_proto::Value::TensorType(t)) = v.r#type.as_mut().and_then(|t| t.value.as_mut())
    else {
        unreachable!("value() builds a tensor type")
    };
    t.elem_type = Some(elem_type);
    t.shape.as_mut().unwrap().dim = dims
        .iter()
        .map(|d| Dimension {
            value: match d.parse::<i64>() {
                Ok(n) => Some(dimension::Value::DimValue(n)),
                Err(_) if *d == "?" => None,
                Err(_) => Some(dimension::Value::DimParam(d.to_string())),
            },
            ..Dimension::default()
        })
        .collect();
    v
}

/// The dimensions of a graph input or output as `symbolic` takes them.
pub fn dims_of(v: &ValueInfoProto) -> Vec<String> {
    let Some(type_proto::Value::TensorType(t)) = v.r#type.as_ref().and_then(|t| t.value.as_ref())
    else {
        return Vec::new();
    };
    t.shape
        .iter()
        .flat_map(|s| &s.dim)
        .map(|d| match &d.value {
            Some(dimension::Value::DimValue(n)) => n.to_string(),
            Some(dimension::Value::DimParam(p)) => p.clone(),
            None => "?".to_string(),
        })
        .collect()
}

/// The operators of graph `g`, in order.
pub fn op_types(g: &GraphProto) -> Vec<&str> {
    g.node.iter().map(|n| n.op_type()).collect()
}

/// A node.
pub fn node(op: &str, name: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        name: Some(name.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        ..NodeProto::default()
    }
}

/// An integer attribute.
pub fn int_attr(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(v),
        ..AttributeProto::default()
    }
}

/// A float32 initializer.
pub fn floats(name: &str, dims: &[i64], values: &[f32]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(1),
        float_data: values.to_vec(),
        ..TensorProto::default()
    }
}

/// A bool initializer.
pub fn bools(name: &str, dims: &[i64], values: &[bool]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(9),
        int32_data: values.iter().map(|&b| i32::from(b)).collect(),
        ..TensorProto::default()
    }
}

/// A graph attribute.
pub fn graph_attr(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(g),
        ..AttributeProto::default()
    }
}

/// An `If` branch attribute named `name` (and its graph): `nodes`, whose value `output` is its
/// one output, left undeclared as ONNX's function expansions leave it.
pub fn branch(name: &str, nodes: Vec<NodeProto>, output: &str) -> AttributeProto {
    graph_attr(
        name,
        GraphProto {
            name: Some(name.into()),
            node: nodes,
            output: vec![ValueInfoProto {
                name: Some(output.into()),
                ..ValueInfoProto::default()
            }],
            ..GraphProto::default()
        },
    )
}

/// An int64 initializer.
pub fn int64s(name: &str, dims: &[i64], values: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(7),
        int64_data: values.to_vec(),
        ..TensorProto::default()
    }
}

/// A model of one graph at `opset`.
pub fn model(
    opset: i64,
    nodes: Vec<NodeProto>,
    inputs: Vec<ValueInfoProto>,
    outputs: Vec<ValueInfoProto>,
    initializer: Vec<TensorProto>,
) -> ModelProto {
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(opset),
        }],
        graph: Some(GraphProto {
            node: nodes,
            name: Some("test".into()),
            initializer,
            input: inputs,
            output: outputs,
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    }
}

/// `y = relu(x + b)` on a (1, 3) input.
pub fn small_model() -> ModelProto {
    model(
        17,
        vec![
            node("Add", "add", &["x", "b"], &["s"]),
            node("Relu", "relu", &["s"], &["y"]),
        ],
        vec![value("x", &[1, 3])],
        vec![value("y", &[1, 3])],
        vec![floats("b", &[3], &[1.0, -2.0, 0.5])],
    )
}

/// `m` imported with the default options (its error, if any, as the panic's message).
pub fn import(m: &ModelProto) -> irpass_onnx::Imported {
    use prost::Message as _;
    irpass_onnx::import_bytes(&m.encode_to_vec(), &irpass_onnx::ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `@main`'s type, as text.
pub fn signature(imported: &irpass_onnx::Imported) -> String {
    imported.module.infer_types().unwrap();
    let main = imported.module.get("main").unwrap();
    main.function_type().unwrap().to_string()
}
