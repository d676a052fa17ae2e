//! Operator conversions, each as its opset defines it, checked by the values the interpreter
//! computes for a one-node model (the expected numbers worked out by hand from the ONNX
//! operator definitions; ONNX Runtime checks whole models in `tests/ort/`).

mod support;

use irpass_ir::{DType, Tensor, Value, eval_function};
use irpass_onnx::proto::{AttributeProto, NodeProto, TensorProto};
use irpass_onnx::{ImportOptions, import_bytes};
use prost::Message as _;
use support::{floats, int_attr, model, node, value};

fn ints(name: &str, v: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: vec![v.len() as i64],
        data_type: Some(7),
        int64_data: v.to_vec(),
        ..TensorProto::default()
    }
}

fn ints_attr(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(7),
        ints: v.to_vec(),
        ..AttributeProto::default()
    }
}

/// Runs a one-node model `n` at `opset` on `x` (float32 of `shape`, values 0, 1, 2, ...).
fn run(
    opset: i64,
    n: NodeProto,
    shape: &[i64],
    out: &[i64],
    inits: Vec<TensorProto>,
) -> Vec<Value> {
    let outputs: Vec<_> = n.output.iter().map(|o| value(o, out)).collect();
    let m = model(opset, vec![n], vec![value("x", shape)], outputs, inits);
    let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let count: i64 = shape.iter().product();
    let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let x = Tensor::from_vec(
        DType::Float32,
        &dims,
        (0..count).map(|i| i as f64).collect(),
    )
    .unwrap();
    match eval_function(&imported.module, "main", vec![Value::tensor(x)]).unwrap() {
        Value::Tuple(v) => v,
        v => vec![v],
    }
}

fn values(v: &Value) -> (Vec<usize>, Vec<f64>) {
    let t = v.as_tensor().unwrap();
    (t.shape().to_vec(), t.values())
}

#[test]
fn slice_takes_its_bounds_from_inputs_with_negative_steps_and_clamped_ends() {
    // x = [[0..4], [4..8], [8..12]]; rows from the last backwards, columns 1 to the end.
    let n = node("Slice", "s", &["x", "st", "en", "ax", "sp"], &["y"]);
    let inits = vec![
        ints("st", &[-1, 1]),
        ints("en", &[-100, i64::MAX]),
        ints("ax", &[0, 1]),
        ints("sp", &[-1, 2]),
    ];
    let y = run(13, n, &[3, 4], &[3, 2], inits);
    assert_eq!(
        values(&y[0]),
        (vec![3, 2], vec![9.0, 11.0, 5.0, 7.0, 1.0, 3.0])
    );
}

#[test]
fn slice_before_opset_10_takes_attributes() {
    let mut n = node("Slice", "s", &["x"], &["y"]);
    n.attribute = vec![
        ints_attr("starts", &[1]),
        ints_attr("ends", &[3]),
        ints_attr("axes", &[1]),
    ];
    let y = run(9, n, &[2, 4], &[2, 2], vec![]);
    assert_eq!(values(&y[0]), (vec![2, 2], vec![1.0, 2.0, 5.0, 6.0]));
}

#[test]
fn pad_reflects_and_pads_with_a_constant() {
    // [0, 1, 2] reflected by 2 before and 1 after: [2, 1, 0, 1, 2, 1].
    let mut n = node("Pad", "p", &["x", "pads"], &["y"]);
    n.attribute = vec![AttributeProto {
        name: Some("mode".into()),
        r#type: Some(3),
        s: Some(b"reflect".to_vec()),
        ..AttributeProto::default()
    }];
    let y = run(13, n, &[3], &[6], vec![ints("pads", &[2, 1])]);
    assert_eq!(values(&y[0]).1, [2.0, 1.0, 0.0, 1.0, 2.0, 1.0]);
    let n = node("Pad", "p", &["x", "pads", "v"], &["y"]);
    let y = run(
        13,
        n,
        &[2],
        &[4],
        vec![ints("pads", &[1, 1]), floats("v", &[], &[7.0])],
    );
    assert_eq!(values(&y[0]).1, [7.0, 0.0, 1.0, 7.0]);
}

#[test]
fn split_by_sizes_gives_each_output() {
    let n = node("Split", "s", &["x", "sizes"], &["a", "b"]);
    let y = run(13, n, &[5], &[-1], vec![ints("sizes", &[2, 3])]);
    assert_eq!(values(&y[0]).1, [0.0, 1.0]);
    assert_eq!(values(&y[1]).1, [2.0, 3.0, 4.0]);
}

#[test]
fn reduce_mean_takes_axes_as_an_attribute_before_18_and_an_input_after() {
    let mut n = node("ReduceMean", "r", &["x"], &["y"]);
    n.attribute = vec![ints_attr("axes", &[-1]), int_attr("keepdims", 0)];
    let y = run(13, n, &[2, 3], &[2], vec![]);
    assert_eq!(values(&y[0]), (vec![2], vec![1.0, 4.0]));
    let n = node("ReduceMean", "r", &["x", "axes"], &["y"]);
    let y = run(18, n, &[2, 3], &[1, 3], vec![ints("axes", &[0])]);
    assert_eq!(values(&y[0]), (vec![1, 3], vec![1.5, 2.5, 3.5]));
}

#[test]
fn expand_broadcasts_to_the_larger_shape() {
    let n = node("Expand", "e", &["x", "shape"], &["y"]);
    let y = run(13, n, &[3, 1], &[2, 3, 2], vec![ints("shape", &[2, 1, 2])]);
    assert_eq!(values(&y[0]).0, [2, 3, 2]);
    assert_eq!(values(&y[0]).1[..6], [0.0, 0.0, 1.0, 1.0, 2.0, 2.0]);
}

#[test]
fn hard_swish_and_hard_sigmoid_follow_their_definitions() {
    let y = run(
        14,
        node("HardSwish", "h", &["x"], &["y"]),
        &[4],
        &[4],
        vec![],
    );
    // x · clip(x / 6 + 0.5, 0, 1) for x = 0, 1, 2, 3.
    let want = [0.0, 1.0 * (4.0 / 6.0), 2.0 * (5.0 / 6.0), 3.0];
    for (g, w) in values(&y[0]).1.iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    }
    let mut n = node("HardSigmoid", "h", &["x"], &["y"]);
    n.attribute = vec![AttributeProto {
        name: Some("alpha".into()),
        r#type: Some(1),
        f: Some(0.5),
        ..AttributeProto::default()
    }];
    let y = run(13, n, &[3], &[3], vec![]);
    assert_eq!(values(&y[0]).1, [0.5, 1.0, 1.0]);
}

#[test]
fn layer_normalization_normalises_the_last_axis() {
    let n = node("LayerNormalization", "ln", &["x", "g", "b"], &["y"]);
    let inits = vec![
        floats("g", &[2], &[1.0, 2.0]),
        floats("b", &[2], &[0.0, 1.0]),
    ];
    let y = run(17, n, &[2, 2], &[2, 2], inits);
    // Each row [a, a + 1] normalises to [-1, 1] (up to epsilon), then * [1, 2] + [0, 1].
    for (g, w) in values(&y[0]).1.iter().zip([-1.0, 3.0, -1.0, 3.0]) {
        assert!((g - w).abs() < 1e-4, "{g} vs {w}");
    }
}

#[test]
fn gather_counts_negative_indices_from_the_end() {
    let mut n = node("Gather", "g", &["x", "i"], &["y"]);
    n.attribute = vec![int_attr("axis", 0)];
    let y = run(13, n, &[4], &[2], vec![ints("i", &[-1, 1])]);
    assert_eq!(values(&y[0]).1, [3.0, 1.0]);
}

#[test]
fn softmax_before_opset_13_normalises_the_flattened_inner_axes() {
    // Opset 9, axis 1 of a (1, 2, 2): one softmax over all four values.
    let y = run(
        9,
        node("Softmax", "s", &["x"], &["y"]),
        &[1, 2, 2],
        &[1, 2, 2],
        vec![],
    );
    let total: f64 = values(&y[0]).1.iter().sum();
    assert!((total - 1.0).abs() < 1e-6, "{total}");
    // Opset 13, the default last axis: each row sums to one.
    let y = run(
        13,
        node("Softmax", "s", &["x"], &["y"]),
        &[1, 2, 2],
        &[1, 2, 2],
        vec![],
    );
    let v = values(&y[0]).1;
    assert!((v[0] + v[1] - 1.0).abs() < 1e-6 && (v[2] + v[3] - 1.0).abs() < 1e-6);
}

#[test]
fn cast_like_takes_the_dtype_of_its_second_input_and_size_counts_elements() {
    // CastLike(x, an int64 constant): 0.0 .. 5.0 as int64; Size(x) = 6.
    let n = node("CastLike", "c", &["x", "like"], &["y"]);
    let y = run(15, n, &[2, 3], &[2, 3], vec![ints("like", &[7])]);
    let t = y[0].as_tensor().unwrap();
    assert_eq!(t.dtype(), DType::Int64);
    assert_eq!(
        values(&y[0]),
        (vec![2, 3], vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    );
    let n = node("Size", "s", &["x"], &["n"]);
    let y = run(13, n, &[2, 3], &[], Vec::new());
    assert_eq!(y[0].as_tensor().unwrap().dtype(), DType::Int64);
    assert_eq!(values(&y[0]), (vec![], vec![6.0]));
}
