//! Values the IR does not model — sequences, optionals, tensors of strings — imported as
//! opaque types named by their ONNX type, carried by the sequence operators' native calls and
//! by the nodes kept whole, and written back with the same types; the nodes around them are
//! optimised as any.

mod support;

use irpass_onnx::proto::{TypeProto, ValueInfoProto, type_proto};
use irpass_onnx::{ExportOptions, ImportOptions, export_module, import_bytes};
use prost::Message as _;
use support::{import, int_attr, model, node, op_types, signature, symbolic};

const FLOAT: i32 = 1;
const STRING: i32 = 8;
const INT64: i32 = 7;

/// A graph value of type `seq(tensor(elem_type)[dims])`.
fn sequence(name: &str, elem_type: i32, dims: &[&str]) -> ValueInfoProto {
    let elem = symbolic(name, elem_type, dims).r#type.unwrap();
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::SequenceType(Box::new(
                type_proto::Sequence {
                    elem_type: Some(Box::new(elem)),
                },
            ))),
            ..TypeProto::default()
        }),
        ..ValueInfoProto::default()
    }
}

#[test]
fn a_sequence_input_is_an_opaque_parameter_and_is_written_back_with_its_type() {
    // s: seq(float[?,3]) → SequenceInsert(s, relu(x)) → SequenceAt(·, 0) → y
    let mut at = node("SequenceAt", "at", &["t", "zero"], &["y"]);
    at.attribute.clear();
    let m = model(
        17,
        vec![
            node("Relu", "relu", &["x"], &["r"]),
            node("SequenceInsert", "insert", &["s", "r"], &["t"]),
            at,
        ],
        vec![
            sequence("s", FLOAT, &["?", "3"]),
            symbolic("x", FLOAT, &["2", "3"]),
        ],
        vec![symbolic("y", FLOAT, &["?", "3"])],
        vec![support::int64s("zero", &[], &[0])],
    );
    let imported = import(&m);
    assert_eq!(
        signature(&imported),
        "fn (Opaque[\"seq(tensor(float)[?,3])\"], Tensor[(2, 3), float32]) -> Tensor[(?, 3), float32]"
    );
    // The sequence operators are native calls on the opaque value; relu is converted as ever.
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let text = imported.module.to_string();
    assert!(text.contains("nn.relu(%x)"), "{text}");
    assert!(
        text.contains("onnx.SequenceInsert(%s") && text.contains("onnx.SequenceAt("),
        "{text}"
    );
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    assert_eq!(g.input[0], sequence("s", FLOAT, &["?", "3"]));
    assert_eq!(op_types(g), ["Relu", "SequenceInsert", "SequenceAt"]);
}

#[test]
fn sequence_operators_are_typed_from_their_inputs_where_the_model_declares_nothing() {
    // Two tensors of one shape make a sequence; one more goes in; its length is an int64.
    let mut split = node("SplitToSequence", "split", &["x"], &["parts"]);
    split.attribute.push(int_attr("axis", 1));
    let m = model(
        17,
        vec![
            node("SequenceConstruct", "make", &["x", "x"], &["s"]),
            node("SequenceInsert", "insert", &["s", "x"], &["t"]),
            node("SequenceLength", "len", &["t"], &["n"]),
            split,
            node("SequenceLength", "len2", &["parts"], &["m"]),
            node("Add", "add", &["n", "m"], &["y"]),
        ],
        vec![symbolic("x", FLOAT, &["batch", "4"])],
        vec![symbolic("y", INT64, &[])],
        vec![],
    );
    let imported = import(&m);
    assert_eq!(
        signature(&imported),
        "fn (Tensor[(batch, 4), float32]) -> int64"
    );
    let text = imported.module.to_string();
    assert!(text.contains("seq(tensor(float)[batch,4])"), "{text}");
    assert!(text.contains("seq(tensor(float)[batch,?])"), "{text}");
}

#[test]
fn nodes_reading_strings_are_kept_whole_and_their_typed_outputs_feed_converted_nodes() {
    // Equal on two string tensors is kept (no IR operator takes strings); its bool output
    // is a tensor again, which `Not` converts.
    let m = model(
        17,
        vec![
            node("Equal", "eq", &["a", "b"], &["e"]),
            node("Not", "not", &["e"], &["y"]),
        ],
        vec![symbolic("a", STRING, &["n"]), symbolic("b", STRING, &["n"])],
        vec![symbolic("y", 9, &["n"])],
        vec![],
    );
    let imported = import(&m);
    assert_eq!(
        signature(&imported),
        "fn (Opaque[\"tensor(string)[n]\"], Opaque[\"tensor(string)[n]\"]) -> Tensor[(n), bool]"
    );
    let text = imported.module.to_string();
    assert!(text.contains("logical_not("), "{text}");
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    assert_eq!(g.input[0], symbolic("a", STRING, &["n"]));
    assert_eq!(op_types(g), ["Equal", "Not"]);
}

#[test]
fn an_input_shape_for_a_value_that_is_not_a_tensor_is_refused_by_name() {
    let m = model(
        17,
        vec![node("Identity", "id", &["s"], &["y"])],
        vec![sequence("s", FLOAT, &["3"])],
        vec![sequence("y", FLOAT, &["3"])],
        vec![],
    );
    let options = ImportOptions {
        input_shapes: vec![("s".into(), vec![3])],
        ..ImportOptions::default()
    };
    let err = import_bytes(&m.encode_to_vec(), &options)
        .unwrap_err()
        .to_string();
    assert!(err.contains("`s`") && err.contains("not a tensor"), "{err}");
    // Without the flag, the identity of a sequence is the sequence itself (nothing kept).
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    assert_eq!(
        signature(&imported),
        "fn (Opaque[\"seq(tensor(float)[3])\"]) -> Opaque[\"seq(tensor(float)[3])\"]"
    );
}

#[test]
fn string_initializers_and_constants_are_kept_as_constant_nodes() {
    use irpass_onnx::proto::{AttributeProto, TensorProto, attribute_proto::AttributeType};
    let strings = |name: &str, values: &[&str]| TensorProto {
        name: Some(name.into()),
        dims: vec![values.len() as i64],
        data_type: Some(STRING),
        string_data: values.iter().map(|s| s.as_bytes().to_vec()).collect(),
        ..TensorProto::default()
    };
    let mut constant = node("Constant", "c", &[], &["c"]);
    constant.attribute.push(AttributeProto {
        name: Some("value".into()),
        r#type: Some(AttributeType::Tensor as i32),
        t: Some(strings("", &["x", "y"])),
        ..AttributeProto::default()
    });
    let m = model(
        17,
        vec![
            constant,
            node("Equal", "eq", &["a", "known"], &["e"]),
            node("Equal", "eq2", &["a", "c"], &["f"]),
            node("And", "and", &["e", "f"], &["y"]),
        ],
        vec![symbolic("a", STRING, &["2"])],
        vec![symbolic("y", 9, &["2"])],
        vec![strings("known", &["x", "z"])],
    );
    let imported = import(&m);
    assert_eq!(
        signature(&imported),
        "fn (Opaque[\"tensor(string)[2]\"]) -> Tensor[(2), bool]"
    );
    let kept: Vec<(&str, usize)> = imported
        .opaque
        .iter()
        .map(|(op, n)| (op.as_str(), *n))
        .collect();
    assert_eq!(kept, [("Constant", 2), ("Equal", 2)]);
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    assert_eq!(
        op_types(g),
        ["Constant", "Equal", "Constant", "Equal", "And"]
    );
    // The strings are written as they came.
    let values: Vec<&[u8]> = g
        .node
        .iter()
        .filter(|n| n.op_type() == "Constant")
        .flat_map(|n| n.attribute[0].t.as_ref().unwrap().string_data.iter())
        .map(|b| &b[..])
        .collect();
    assert_eq!(values, [&b"x"[..], b"z", b"x", b"y"]);
}
