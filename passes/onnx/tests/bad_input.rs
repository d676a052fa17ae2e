//! Bad models get one clear error naming the problem, never a panic: truncated files, random
//! bytes, a protobuf that is not a model, operators neither converted nor typed by the model
//! so that they could be kept opaque (all listed at once), external
//! data that is missing or outside the model's folder, negative dimensions, an opset newer
//! than ONNX's operator table, an operator in an older form than irpass reads, duplicate
//! input names, ONNX's graph rules broken (a value defined twice, a cycle, nodes out of order,
//! an output nothing computes), and an `--input-shape` that contradicts the model (blamed on
//! the flag).

mod support;

use irpass_onnx::proto::StringStringEntryProto;
use irpass_onnx::proto::tensor_proto::DataLocation;
use irpass_onnx::{ImportOptions, OnnxError, import_bytes, import_file};
use prost::Message as _;
use support::{floats, int_attr, model, node, small_model, value};

fn error_of(bytes: &[u8]) -> String {
    match import_bytes(bytes, &ImportOptions::default()) {
        Ok(_) => panic!("imported"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_truncated_model_is_a_decode_error() {
    let bytes = small_model().encode_to_vec();
    let err = error_of(&bytes[..bytes.len() / 2]);
    assert!(err.starts_with("not an ONNX model"), "{err}");
}

#[test]
fn random_bytes_are_not_a_model() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    let err = error_of(&bytes);
    assert!(err.starts_with("not an ONNX model"), "{err}");
}

#[test]
fn a_protobuf_that_is_not_a_model_is_refused() {
    // A TensorProto's fields clash with a model's; an empty message has none of a model's.
    let err = error_of(&floats("t", &[2], &[1.0, 2.0]).encode_to_vec());
    assert!(err.starts_with("not an ONNX model"), "{err}");
    let err = error_of(&[]);
    assert!(err.contains("no graph"), "{err}");
}

#[test]
fn every_operator_that_cannot_be_kept_is_listed_at_once() {
    // Neither converted nor typed by the model (so not kept opaque either): `a` and `c`
    // have no declared type.
    let plugin = |op: &str, name: &str, input: &str, output: &str| {
        let mut n = node(op, name, &[input], &[output]);
        n.domain = Some("com.example".into());
        n
    };
    let mut m = model(
        17,
        vec![
            plugin("Unpool", "unpool_1", "x", "a"),
            node("Relu", "ok", &["a"], &["b"]),
            plugin("Align", "roi", "b", "c"),
            node("Relu", "ok2", &["c"], &["y"]),
        ],
        vec![value("x", &[1, 3])],
        vec![value("y", &[1, 3])],
        vec![],
    );
    m.opset_import.push(irpass_onnx::proto::OperatorSetIdProto {
        domain: Some("com.example".into()),
        version: Some(1),
    });
    match import_bytes(&m.encode_to_vec(), &ImportOptions::default()) {
        Err(OnnxError::Unsupported(list)) => {
            let names: Vec<(&str, &str)> = list
                .iter()
                .map(|u| (u.op_type.as_str(), u.node.as_str()))
                .collect();
            assert_eq!(
                names,
                [
                    ("com.example.Unpool", "unpool_1"),
                    ("com.example.Align", "roi")
                ]
            );
            assert!(list.iter().all(|u| u.opset == 17));
            let why = list[0].reason.as_deref().unwrap();
            assert!(why.contains("output `a` has no declared type"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_opset_newer_than_the_table_is_named() {
    let mut m = small_model();
    m.opset_import[0].version = Some(99);
    let err = error_of(&m.encode_to_vec());
    let newest = irpass_onnx::OPSETS.end();
    assert!(
        err.contains("opset 99 is not supported") && err.contains(&format!("1 to {newest}")),
        "{err}"
    );
}

#[test]
fn an_operator_whose_version_changed_more_than_its_types_is_named_with_the_version() {
    // Concat-1 (opset 3) has an optional `axis`, which version 4 made required; irpass reads
    // Concat from version 4, and its output is not declared, so the node cannot be kept
    // whole either.
    let mut concat = node("Concat", "cat", &["x", "x"], &["s"]);
    concat.attribute = vec![int_attr("axis", 1)];
    let m = model(
        3,
        vec![concat, node("Relu", "relu", &["s"], &["y"])],
        vec![value("x", &[1, 2, 3, 3])],
        vec![value("y", &[1, 4, 3, 3])],
        vec![],
    );
    match import_bytes(&m.encode_to_vec(), &ImportOptions::default()) {
        Err(OnnxError::Unsupported(list)) => {
            let names: Vec<_> = list.iter().map(|u| u.op_type.as_str()).collect();
            // Relu-1 is Relu as opset 9 reads it; Concat-1 is not version 4.
            assert_eq!(names, ["Concat"]);
            let reason = list[0].reason.as_deref().unwrap();
            assert!(
                reason.contains("Concat-1") && reason.contains("from version 4"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_negative_dimension_is_named() {
    let mut m = small_model();
    m.graph.as_mut().unwrap().input[0] = value("x", &[1, -3]);
    let err = error_of(&m.encode_to_vec());
    assert!(err.contains("`x` has a negative dimension -3"), "{err}");
}

#[test]
fn duplicate_input_names_are_refused() {
    let mut m = small_model();
    m.graph.as_mut().unwrap().input.push(value("x", &[1, 3]));
    let err = error_of(&m.encode_to_vec());
    assert!(err.contains("graph input `x` is declared twice"), "{err}");
}

#[test]
fn a_value_nothing_defines_is_named() {
    let mut m = small_model();
    m.graph.as_mut().unwrap().node[1].input[0] = "nowhere".into();
    let err = error_of(&m.encode_to_vec());
    assert!(err.contains("uses `nowhere`"), "{err}");
}

#[test]
fn a_value_computed_twice_is_refused_naming_both_nodes() {
    // `y = relu(x + b)`; a second node also computes `s`.
    let mut m = small_model();
    let g = m.graph.as_mut().unwrap();
    g.node.insert(1, node("Neg", "neg", &["x"], &["s"]));
    let err = error_of(&m.encode_to_vec());
    assert!(
        err.contains("`s` is computed by two nodes, `add` (Add) and `neg` (Neg)"),
        "{err}"
    );
    // A node may not compute a graph input either.
    let mut m = small_model();
    m.graph.as_mut().unwrap().node[0].output[0] = "x".into();
    let err = error_of(&m.encode_to_vec());
    assert!(
        err.contains("computes `x`, which is also a graph input"),
        "{err}"
    );
}

#[test]
fn a_cycle_or_nodes_out_of_order_are_refused_as_such() {
    let mut m = small_model();
    m.graph.as_mut().unwrap().node.swap(0, 1);
    let err = error_of(&m.encode_to_vec());
    assert!(
        err.contains("node `relu` (Relu) uses `s`, computed by the later node `add` (Add)")
            && err.contains("topological order"),
        "{err}"
    );
    let mut m = small_model();
    m.graph.as_mut().unwrap().node[0].input[0] = "s".into();
    let err = error_of(&m.encode_to_vec());
    assert!(err.contains("uses `s`, computed by itself"), "{err}");
}

#[test]
fn an_output_nothing_computes_is_named() {
    let mut m = small_model();
    m.graph.as_mut().unwrap().output[0].name = Some("nowhere".into());
    let err = error_of(&m.encode_to_vec());
    assert!(
        err.contains("graph output `nowhere` is not computed by the graph"),
        "{err}"
    );
}

#[test]
fn an_input_shape_that_contradicts_the_model_is_blamed_on_the_flag() {
    let bytes = small_model().encode_to_vec();
    let with = |shape: Vec<i64>| {
        let options = ImportOptions {
            input_shapes: vec![("x".into(), shape)],
            ..ImportOptions::default()
        };
        match import_bytes(&bytes, &options) {
            Ok(_) => panic!("imported"),
            Err(e) => e.to_string(),
        }
    };
    let err = with(vec![1, 3, 1]);
    assert!(
        err.contains("--input-shape for `x` is [1, 3, 1], but the model's input has rank 2 (1, 3)"),
        "{err}"
    );
    let options = ImportOptions {
        input_shapes: vec![("nope".into(), vec![1, 3])],
        ..ImportOptions::default()
    };
    let err = import_bytes(&bytes, &options).err().unwrap().to_string();
    assert!(
        err.contains("--input-shape names `nope`, which is not a graph input"),
        "{err}"
    );
}

/// A model whose initializer `b` is external data at `location`.
fn external(location: &str) -> Vec<u8> {
    let mut m = small_model();
    let b = &mut m.graph.as_mut().unwrap().initializer[0];
    b.float_data.clear();
    b.data_location = Some(DataLocation::External as i32);
    b.external_data = vec![StringStringEntryProto {
        key: Some("location".into()),
        value: Some(location.into()),
    }];
    m.encode_to_vec()
}

#[test]
fn external_data_is_read_beside_the_model_and_a_missing_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.onnx");
    std::fs::write(&path, external("b.bin")).unwrap();
    let err = import_file(&path, &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("b.bin") && err.contains("external data of tensor `b`"),
        "{err}"
    );
    let bytes: Vec<u8> = [1.0f32, -2.0, 0.5]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(dir.path().join("b.bin"), bytes).unwrap();
    let imported = import_file(&path, &ImportOptions::default()).unwrap();
    assert!(
        imported.module.to_string().contains("{1, -2, 0.5}"),
        "{}",
        imported.module
    );
}

#[test]
fn an_external_location_outside_the_models_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let inner = dir.path().join("models");
    std::fs::create_dir(&inner).unwrap();
    // The file exists: the refusal is about where it is, not whether it is there.
    std::fs::write(dir.path().join("secret.bin"), [0u8; 12]).unwrap();
    for location in ["../secret.bin", "/etc/passwd"] {
        let path = inner.join("m.onnx");
        std::fs::write(&path, external(location)).unwrap();
        let err = import_file(&path, &ImportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("leaves the model's folder"),
            "{location}: {err}"
        );
    }
}

#[test]
fn a_missing_model_file_is_named() {
    let err = import_file(
        std::path::Path::new("/nonexistent/m.onnx"),
        &ImportOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("/nonexistent/m.onnx:"), "{err}");
}
