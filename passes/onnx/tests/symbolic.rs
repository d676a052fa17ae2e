//! Symbolic dimensions: a size the model gives by name (`dim_param`) stays that name from
//! import, through the shape arithmetic that reads it, to the written model; the values are
//! the same at any size. And the nodes kept whole in such models: typed from their inputs,
//! run by the interpreter where their sizes are computed, kept when an output their
//! conversion leaves out is read.

mod support;

use irpass_ir::{DType, Tensor, Value, eval_function};
use irpass_onnx::proto::ModelProto;
use irpass_onnx::{ExportOptions, ImportOptions, encode_model, export_module, import_bytes};
use prost::Message as _;
use support::{
    dims_of, floats, import, int_attr, int64s, model, node, op_types, signature, symbolic,
};

const FLOAT: i32 = 1;
const INT64: i32 = 7;

fn input(shape: &[usize], seed: f64) -> Value {
    let n: usize = shape.iter().product();
    let values = (0..n).map(|i| ((i as f64) * 0.37 + seed).sin()).collect();
    Value::tensor(Tensor::from_vec(DType::Float32, shape, values).unwrap())
}

/// `x: (batch, 2, 2, 2)` → Flatten → MatMul by a (8, 3) weight → `y: (batch, 3)`.
fn classifier() -> ModelProto {
    let w: Vec<f32> = (0..24).map(|i| (i as f32) * 0.1 - 1.0).collect();
    let mut flatten = node("Flatten", "flatten", &["x"], &["f"]);
    flatten.attribute.push(int_attr("axis", 1));
    model(
        17,
        vec![flatten, node("MatMul", "matmul", &["f", "w"], &["y"])],
        vec![symbolic("x", FLOAT, &["batch", "2", "2", "2"])],
        vec![symbolic("y", FLOAT, &["batch", "3"])],
        vec![floats("w", &[8, 3], &w)],
    )
}

#[test]
fn a_dynamic_batch_model_imports_without_a_flag_and_is_written_with_batch_by_name() {
    let imported = import(&classifier());
    assert_eq!(
        signature(&imported),
        "fn (Tensor[(batch, 2, 2, 2), float32]) -> Tensor[(batch, 3), float32]"
    );
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    assert_eq!(dims_of(&g.input[0]), ["batch", "2", "2", "2"]);
    assert_eq!(dims_of(&g.output[0]), ["batch", "3"]);
    // The flatten is a Reshape that keeps the input's first size (0) and computes the rest.
    let reshape = g.node.iter().find(|n| n.op_type() == "Reshape").unwrap();
    let target = g
        .initializer
        .iter()
        .find(|t| t.name() == reshape.input[1])
        .unwrap();
    let target = irpass_onnx::tensor_of(target, irpass_onnx::DataDir(None)).unwrap();
    assert_eq!(target.values(), [0.0, 8.0]);
    // Read back, the written model computes what the input model computes, at two batches.
    let again = import_bytes(&encode_model(&written), &ImportOptions::default()).unwrap();
    for batch in [1, 3] {
        let x = input(&[batch, 2, 2, 2], batch as f64);
        let before = eval_function(&imported.module, "main", vec![x.clone()]).unwrap();
        let after = eval_function(&again.module, "main", vec![x]).unwrap();
        assert_eq!(before.as_tensor().unwrap().shape(), [batch, 3]);
        assert!(before.bit_eq(&after), "batch {batch}: {before} vs {after}");
    }
}

#[test]
fn input_shape_still_specialises_a_model_on_purpose() {
    let options = ImportOptions {
        input_shapes: vec![("x".into(), vec![4, 2, 2, 2])],
        ..ImportOptions::default()
    };
    let imported = import_bytes(&classifier().encode_to_vec(), &options).unwrap();
    assert_eq!(
        signature(&imported),
        "fn (Tensor[(4, 2, 2, 2), float32]) -> Tensor[(4, 3), float32]"
    );
}

/// `x: (batch, seq, 4)` reshaped to `(batch, seq, 2, 2)` by a shape computed from `Shape(x)`
/// as exporters write it: Gather, Unsqueeze, Concat with the static sizes.
fn computed_reshape() -> ModelProto {
    let mut nodes = vec![node("Shape", "shape", &["x"], &["s"])];
    for (k, at) in ["i0", "i1"].iter().enumerate() {
        let mut gather = node(
            "Gather",
            &format!("gather{k}"),
            &["s", at],
            &[&format!("d{k}")],
        );
        gather.attribute.push(int_attr("axis", 0));
        nodes.push(gather);
        nodes.push(node(
            "Unsqueeze",
            &format!("unsqueeze{k}"),
            &[&format!("d{k}"), "zero"],
            &[&format!("u{k}")],
        ));
    }
    let mut concat = node("Concat", "concat", &["u0", "u1", "heads"], &["target"]);
    concat.attribute.push(int_attr("axis", 0));
    nodes.push(concat);
    nodes.push(node("Reshape", "reshape", &["x", "target"], &["y"]));
    model(
        17,
        nodes,
        vec![symbolic("x", FLOAT, &["batch", "seq", "4"])],
        vec![symbolic("y", FLOAT, &["batch", "seq", "2", "2"])],
        vec![
            int64s("i0", &[], &[0]),
            int64s("i1", &[], &[1]),
            int64s("zero", &[1], &[0]),
            int64s("heads", &[2], &[2, 2]),
        ],
    )
}

#[test]
fn shape_arithmetic_on_named_sizes_becomes_a_reshape_that_keeps_them() {
    let imported = import(&computed_reshape());
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    assert_eq!(
        signature(&imported),
        "fn (Tensor[(batch, seq, 4), float32]) -> Tensor[(batch, seq, 2, 2), float32]"
    );
    let text = imported.module.to_string();
    assert!(text.contains("newshape=[0, 0, 2, 2]"), "{text}");
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    let ops = op_types(g);
    assert_eq!(
        ops,
        ["Reshape"],
        "the shape arithmetic is not needed any more"
    );
    assert_eq!(dims_of(&g.output[0]), ["batch", "seq", "2", "2"]);
    for (batch, seq) in [(1, 3), (2, 5)] {
        let x = input(&[batch, seq, 4], 0.5);
        let y = eval_function(&imported.module, "main", vec![x]).unwrap();
        assert_eq!(y.as_tensor().unwrap().shape(), [batch, seq, 2, 2]);
    }
}

#[test]
fn a_reshape_to_sizes_read_from_its_own_input_copies_them_even_unnamed() {
    // `x: (?, ?, 4)`: its first two sizes have no name, but the target reads them from `x`
    // itself at the same positions, so they are copied (0), as ONNX Runtime's reshape fusion
    // writes it, and the shape arithmetic goes.
    let mut m = computed_reshape();
    let g = m.graph.as_mut().unwrap();
    g.input[0] = symbolic("x", FLOAT, &["?", "?", "4"]);
    g.output[0] = symbolic("y", FLOAT, &["?", "?", "2", "2"]);
    let imported = import(&m);
    let text = imported.module.to_string();
    assert!(text.contains("newshape=[0, 0, 2, 2]"), "{text}");
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    assert_eq!(op_types(written.graph.as_ref().unwrap()), ["Reshape"]);
    for (batch, seq) in [(1, 3), (2, 5)] {
        let y = eval_function(&imported.module, "main", vec![input(&[batch, seq, 4], 0.5)]);
        assert_eq!(y.unwrap().as_tensor().unwrap().shape(), [batch, seq, 2, 2]);
    }
    // Sizes read from another tensor's shape are not the input's: the computation stays.
    let mut m = computed_reshape();
    let g = m.graph.as_mut().unwrap();
    g.node[0].input[0] = "z".into();
    g.input[0] = symbolic("x", FLOAT, &["?", "?", "4"]);
    g.input.push(symbolic("z", FLOAT, &["?", "?", "4"]));
    g.output[0] = symbolic("y", FLOAT, &["?", "?", "2", "2"]);
    let imported = import(&m);
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    assert!(
        op_types(written.graph.as_ref().unwrap()).contains(&"Shape"),
        "{}",
        imported.module
    );
}

#[test]
fn a_size_declared_by_name_that_the_shape_arithmetic_knows_statically_is_static() {
    // `Reshape(x, [Shape(z)[0], Shape(z)[1], 192])` declared `(unk_a, unk_b, unk_c)` (as
    // onnx-simplifier names sizes it cannot compute), then split in three along the last
    // axis: the last size is 192 (from the target), so the split is written with its sizes.
    let mut m = computed_reshape();
    let g = m.graph.as_mut().unwrap();
    g.node[0].input[0] = "z".into();
    let heads = g
        .initializer
        .iter_mut()
        .find(|t| t.name() == "heads")
        .unwrap();
    *heads = int64s("heads", &[1], &[6]);
    g.node
        .push(node("Split", "split", &["y", "parts"], &["a", "b", "c"]));
    g.node
        .last_mut()
        .unwrap()
        .attribute
        .push(int_attr("axis", 2));
    g.initializer.push(int64s("parts", &[3], &[2, 2, 2]));
    g.input[0] = symbolic("x", FLOAT, &["?", "?", "6"]);
    g.input.push(symbolic("z", FLOAT, &["?", "?", "6"]));
    g.value_info
        .push(symbolic("y", FLOAT, &["unk_a", "unk_b", "unk_c"]));
    g.output = ["a", "b", "c"]
        .iter()
        .map(|o| symbolic(o, FLOAT, &["?", "?", "2"]))
        .collect();
    let imported = import(&m);
    let written = export_module(&imported.module, None, &ExportOptions::default());
    let written = written.unwrap_or_else(|e| panic!("{e}\n{}", imported.module));
    assert!(op_types(written.graph.as_ref().unwrap()).contains(&"Split"));
}

/// `positions = Range(0, Shape(ids)[1], 1)`, unsqueezed to `(1, seq)`: the output of Range
/// is declared nowhere.
fn positions() -> ModelProto {
    let mut gather = node("Gather", "gather", &["s", "one"], &["seq"]);
    gather.attribute.push(int_attr("axis", 0));
    model(
        17,
        vec![
            node("Shape", "shape", &["ids"], &["s"]),
            gather,
            node("Range", "range", &["zero", "seq", "one"], &["r"]),
            node("Unsqueeze", "unsqueeze", &["r", "axes"], &["y"]),
        ],
        vec![symbolic("ids", INT64, &["batch", "seq"])],
        vec![symbolic("y", INT64, &["1", "seq"])],
        vec![
            int64s("zero", &[], &[0]),
            int64s("one", &[], &[1]),
            int64s("axes", &[1], &[0]),
        ],
    )
}

#[test]
fn a_range_to_a_computed_size_is_typed_by_name_where_the_model_declares_nothing() {
    let imported = import(&positions());
    // Not `arange` (its sizes are not static): the native Range, typed by what the importer
    // knows of its limit, the size `seq`.
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    assert_eq!(
        signature(&imported),
        "fn (Tensor[(batch, seq), int64]) -> Tensor[(1, seq), int64]"
    );
    let text = imported.module.to_string();
    assert!(
        text.contains("onnx.Range(") && text.contains(r#"types="int64[seq]""#),
        "{text}"
    );
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let ops = op_types(written.graph.as_ref().unwrap());
    assert!(ops.contains(&"Range") && ops.contains(&"Shape"), "{ops:?}");
    // Range is Range-11 from opset 11 on: written at 13, refused at 9.
    let at = |opset| {
        let options = ExportOptions {
            opset: Some(opset),
            ..ExportOptions::default()
        };
        export_module(&imported.module, None, &options).map_err(|e| e.to_string())
    };
    assert!(at(13).is_ok());
    let err = at(9).unwrap_err();
    assert!(err.contains("Range") && err.contains("opset 9"), "{err}");
}

#[test]
fn an_untyped_output_of_an_operator_without_a_rule_is_still_one_clear_refusal() {
    let mut m = positions();
    let g = m.graph.as_mut().unwrap();
    g.node[2].op_type = Some("MyRange".into());
    g.node[2].domain = Some("com.example".into());
    m.opset_import.push(irpass_onnx::proto::OperatorSetIdProto {
        domain: Some("com.example".into()),
        version: Some(1),
    });
    let err = match import_bytes(&m.encode_to_vec(), &ImportOptions::default()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("an untyped custom operator was imported"),
    };
    assert!(
        err.contains("com.example.MyRange") && err.contains("no declared type"),
        "{err}"
    );
}

fn ints(shape: &[usize], values: &[i64]) -> Value {
    let values = values.iter().map(|&v| v as f64).collect();
    Value::tensor(Tensor::from_vec(DType::Int64, shape, values).unwrap())
}

#[test]
fn range_expand_and_constant_of_shape_to_computed_sizes_run_in_the_interpreter() {
    // Range to a named size.
    let imported = import(&positions());
    for seq in [3usize, 5] {
        let ids = ints(&[2, seq], &vec![7; 2 * seq]);
        let y = eval_function(&imported.module, "main", vec![ids]).unwrap();
        let want: Vec<f64> = (0..seq).map(|i| i as f64).collect();
        let y = y.as_tensor().unwrap();
        assert_eq!((y.shape(), y.values()), (&[1, seq][..], want));
    }
    // `x: (batch, 1)` expanded to `(batch, 3)` by a computed shape, plus ones of that shape
    // from ConstantOfShape: `x + 1` in each of three columns.
    let mut gather = node("Gather", "gather", &["s", "i0"], &["b"]);
    gather.attribute.push(int_attr("axis", 0));
    let mut concat = node("Concat", "concat", &["bu", "three"], &["target"]);
    concat.attribute.push(int_attr("axis", 0));
    let mut fill = node("ConstantOfShape", "fill", &["target"], &["ones"]);
    fill.attribute.push(irpass_onnx::proto::AttributeProto {
        name: Some("value".into()),
        r#type: Some(4),
        t: Some(floats("", &[1], &[1.0])),
        ..Default::default()
    });
    let m = model(
        17,
        vec![
            node("Shape", "shape", &["x"], &["s"]),
            gather,
            node("Unsqueeze", "unsqueeze", &["b", "zero"], &["bu"]),
            concat,
            node("Expand", "expand", &["x", "target"], &["e"]),
            fill,
            node("Add", "add", &["e", "ones"], &["y"]),
        ],
        vec![symbolic("x", FLOAT, &["batch", "1"])],
        vec![symbolic("y", FLOAT, &["batch", "3"])],
        vec![
            int64s("i0", &[], &[0]),
            int64s("zero", &[1], &[0]),
            int64s("three", &[1], &[3]),
        ],
    );
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    // The ConstantOfShape is an Expand of its value.
    let text = imported.module.to_string();
    assert_eq!(text.matches("onnx.Expand(").count(), 2, "{text}");
    assert_eq!(
        signature(&imported),
        "fn (Tensor[(batch, 1), float32]) -> Tensor[(batch, 3), float32]"
    );
    // The computed target is written as the simplest computation of `(batch, 3)`: the first
    // size of `x`'s shape and a constant, whatever the model computed it with.
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let ops = op_types(written.graph.as_ref().unwrap());
    assert!(
        !ops.contains(&"Gather") && !ops.contains(&"Unsqueeze"),
        "{ops:?}"
    );
    assert!(ops.contains(&"Slice") && ops.contains(&"Concat"), "{ops:?}");
    assert_eq!(ops.iter().filter(|&&o| o == "Expand").count(), 2, "{ops:?}");
    for batch in [1usize, 4] {
        let x = input(&[batch, 1], 0.25);
        let want: Vec<f64> = x
            .as_tensor()
            .unwrap()
            .values()
            .iter()
            .flat_map(|&v| [f64::from((v + 1.0) as f32); 3])
            .collect();
        let y = eval_function(&imported.module, "main", vec![x]).unwrap();
        let y = y.as_tensor().unwrap();
        assert_eq!((y.shape(), y.values()), (&[batch, 3][..], want));
    }
}

#[test]
fn a_node_whose_unconverted_output_is_read_is_its_native_operator() {
    // LayerNormalization converts to `nn.layer_norm`, which has no mean output; the model
    // reads the mean, so the node is the native `onnx.LayerNormalization`, which has it, and
    // is written back with both outputs.
    let mut ln = node("LayerNormalization", "ln", &["x", "g", "b"], &["y", "mean"]);
    ln.attribute.push(int_attr("axis", -1));
    let m = model(
        17,
        vec![ln],
        vec![symbolic("x", FLOAT, &["batch", "4"])],
        vec![
            symbolic("y", FLOAT, &["batch", "4"]),
            symbolic("mean", FLOAT, &["batch", "1"]),
        ],
        vec![
            floats("g", &[4], &[1.0, 1.0, 1.0, 1.0]),
            floats("b", &[4], &[0.0; 4]),
        ],
    );
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let text = imported.module.to_string();
    assert!(text.contains("onnx.LayerNormalization("), "{text}");
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    let ln = g
        .node
        .iter()
        .find(|n| n.op_type() == "LayerNormalization")
        .unwrap();
    assert_eq!(ln.output.len(), 2);
    assert_eq!(dims_of(&g.output[1]), ["batch", "1"]);
    // Without the mean read, the node converts to the IR's `nn.layer_norm`.
    let mut m = m;
    let g = m.graph.as_mut().unwrap();
    g.output.truncate(1);
    let text = import(&m).module.to_string();
    assert!(
        text.contains("nn.layer_norm(") && !text.contains("onnx."),
        "{text}"
    );
}

/// `x: (batch, 8, 4)` reshaped to `(-1, 4, 2)` (its first size unnamed now: `batch * 4`), a
/// `Relu`, then to `(Shape(x)[0] * 4, 2, -1)`, MobileViT's unfold: two sizes unknown to the
/// target's type.
fn batch_of_patches() -> ModelProto {
    let mut gather = node("Gather", "gather", &["s", "i0"], &["b"]);
    gather.attribute.push(int_attr("axis", 0));
    let mut concat = node("Concat", "concat", &["u", "rest"], &["target"]);
    concat.attribute.push(int_attr("axis", 0));
    model(
        17,
        vec![
            node("Reshape", "first", &["x", "patches"], &["p"]),
            node("Relu", "relu", &["p"], &["r"]),
            node("Shape", "shape", &["x"], &["s"]),
            gather,
            node("Mul", "mul", &["b", "four"], &["b4"]),
            node("Unsqueeze", "unsqueeze", &["b4", "zero"], &["u"]),
            concat,
            node("Reshape", "second", &["r", "target"], &["y"]),
        ],
        vec![symbolic("x", FLOAT, &["batch", "8", "4"])],
        vec![symbolic("y", FLOAT, &["?", "2", "?"])],
        vec![
            int64s("patches", &[3], &[-1, 4, 2]),
            int64s("i0", &[], &[0]),
            int64s("four", &[], &[4]),
            int64s("zero", &[1], &[0]),
            int64s("rest", &[2], &[2, -1]),
        ],
    )
}

#[test]
fn a_multiple_of_the_batch_cancels_against_the_elements_the_input_has() {
    // `batch * 32` elements reach the second reshape (through the first and the Relu, whose
    // types do not say `batch` any more); the target names `batch * 4` and 2, so the size
    // left is 32 / 8 = 4 and `batch * 4` is the -1: no shape arithmetic is left.
    let imported = import(&batch_of_patches());
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let text = imported.module.to_string();
    assert!(text.contains("newshape=[-1, 2, 4]"), "{text}");
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    assert_eq!(
        op_types(written.graph.as_ref().unwrap()),
        ["Reshape", "Relu", "Reshape"]
    );
    for batch in [1, 3] {
        let y = eval_function(&imported.module, "main", vec![input(&[batch, 8, 4], 0.5)]);
        assert_eq!(y.unwrap().as_tensor().unwrap().shape(), [batch * 4, 2, 4]);
    }
    // A batch times 3 does not divide what the input has per batch: the computation stays.
    let mut m = batch_of_patches();
    let g = m.graph.as_mut().unwrap();
    let four = g
        .initializer
        .iter_mut()
        .find(|t| t.name() == "four")
        .unwrap();
    *four = int64s("four", &[], &[3]);
    let imported = import(&m);
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    assert!(op_types(written.graph.as_ref().unwrap()).contains(&"Shape"));
}
