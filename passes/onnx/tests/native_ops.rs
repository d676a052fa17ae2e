//! ONNX operators the IR holds as themselves (`onnx.<OpType>` operators): imported as one
//! call with the node's inputs and attributes, typed, run by the interpreter, and written
//! back as the node; a version whose definition irpass does not hold is kept whole.

mod support;

use irpass_ir::eval::eval_function;
use irpass_ir::{DType, Tensor, Value};
use irpass_onnx::proto::AttributeProto;
use irpass_onnx::proto::attribute_proto::AttributeType;
use irpass_onnx::{ExportOptions, Strings, export_module};
use support::{import, int_attr, int64s, model, node, op_types, signature, symbolic};

const FLOAT: i32 = 1;
const INT64: i32 = 7;
const STRING: i32 = 8;
const BOOL: i32 = 9;

fn floats(shape: &[usize], v: &[f64]) -> Value {
    Value::tensor(Tensor::from_vec(DType::Float32, shape, v.to_vec()).unwrap())
}

fn values(v: &Value) -> Vec<f64> {
    match v {
        Value::Tensor(t) => t.values(),
        other => panic!("not a tensor: {other}"),
    }
}

#[test]
fn a_native_operator_is_one_call_that_runs_and_is_written_back_as_its_node() {
    // y = Cos(Sin(x))
    let m = model(
        17,
        vec![
            node("Sin", "sin", &["x"], &["s"]),
            node("Cos", "cos", &["s"], &["y"]),
        ],
        vec![symbolic("x", FLOAT, &["n", "3"])],
        vec![symbolic("y", FLOAT, &["n", "3"])],
        vec![],
    );
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    assert_eq!(
        signature(&imported),
        "fn (Tensor[(n, 3), float32]) -> Tensor[(n, 3), float32]"
    );
    let text = imported.module.to_string();
    assert!(
        text.contains("onnx.Sin(") && text.contains("onnx.Cos("),
        "{text}"
    );
    let x = [0.0, 0.5, 1.0, -1.0, 2.0, 3.0];
    let y = eval_function(&imported.module, "main", vec![floats(&[2, 3], &x)]).unwrap();
    for (got, v) in values(&y).iter().zip(x) {
        let want = f64::from((v as f32).sin().cos());
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    assert_eq!(op_types(written.graph.as_ref().unwrap()), ["Sin", "Cos"]);
}

#[test]
fn attributes_and_several_outputs_keep_their_onnx_form() {
    // ArgMax(x, axis=1, keepdims=0) and ArgMin with select_last_index
    let mut max = node("ArgMax", "max", &["x"], &["i"]);
    max.attribute = vec![int_attr("axis", 1), int_attr("keepdims", 0)];
    let mut min = node("ArgMin", "min", &["x"], &["j"]);
    min.attribute = vec![int_attr("select_last_index", 1)];
    let m = model(
        13,
        vec![max, min],
        vec![symbolic("x", FLOAT, &["2", "3"])],
        vec![
            symbolic("i", INT64, &["2"]),
            symbolic("j", INT64, &["1", "3"]),
        ],
        vec![],
    );
    let imported = import(&m);
    assert_eq!(
        signature(&imported),
        "fn (Tensor[(2, 3), float32]) -> (Tensor[(2), int64], Tensor[(1, 3), int64])"
    );
    let x = floats(&[2, 3], &[1.0, 5.0, 5.0, 0.0, 0.0, 7.0]);
    let out = eval_function(&imported.module, "main", vec![x]).unwrap();
    let Value::Tuple(out) = out else { panic!() };
    // The first largest of each row; the last smallest of each column.
    assert_eq!(values(&out[0]), [1.0, 2.0]);
    assert_eq!(values(&out[1]), [1.0, 1.0, 0.0]);
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    assert_eq!(op_types(g), ["ArgMax", "ArgMin"]);
    let names = |k: usize| -> Vec<(String, i64)> {
        g.node[k]
            .attribute
            .iter()
            .map(|a| (a.name().to_string(), a.i()))
            .collect()
    };
    assert_eq!(
        names(0),
        [("axis".to_string(), 1), ("keepdims".to_string(), 0)]
    );
    assert_eq!(names(1), [("select_last_index".to_string(), 1)]);
}

#[test]
fn axes_given_at_run_time_take_the_declared_type() {
    // y = ReduceSum(x, axes, keepdims=0), the axes a graph input: the result's rank comes
    // from the declared type.
    let mut sum = node("ReduceSum", "sum", &["x", "axes"], &["y"]);
    sum.attribute = vec![int_attr("keepdims", 0)];
    let m = model(
        13,
        vec![sum],
        vec![
            symbolic("x", FLOAT, &["2", "3"]),
            symbolic("axes", INT64, &["1"]),
        ],
        vec![symbolic("y", FLOAT, &["?"])],
        vec![],
    );
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    assert_eq!(
        signature(&imported),
        "fn (Tensor[(2, 3), float32], Tensor[(1), int64]) -> Tensor[(?), float32]"
    );
    let x = || floats(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let axes = |a: i64| Value::tensor(Tensor::from_i64(DType::Int64, ndarray_of(&[a])));
    let rows = eval_function(&imported.module, "main", vec![x(), axes(1)]).unwrap();
    assert_eq!(values(&rows), [6.0, 15.0]);
    let columns = eval_function(&imported.module, "main", vec![x(), axes(-2)]).unwrap();
    assert_eq!(values(&columns), [5.0, 7.0, 9.0]);
}

fn ndarray_of(v: &[i64]) -> ndarray::ArrayD<i64> {
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[v.len()]), v.to_vec()).unwrap()
}

#[test]
fn an_optional_input_left_out_keeps_its_position() {
    // Trilu(x, k) lower with k = -1, and Trilu(x) upper without k.
    let mut lower = node("Trilu", "lower", &["x", "k"], &["l"]);
    lower.attribute = vec![int_attr("upper", 0)];
    let upper = node("Trilu", "upper", &["x"], &["u"]);
    let m = model(
        14,
        vec![lower, upper],
        vec![symbolic("x", FLOAT, &["3", "3"])],
        vec![
            symbolic("l", FLOAT, &["3", "3"]),
            symbolic("u", FLOAT, &["3", "3"]),
        ],
        vec![int64s("k", &[], &[-1])],
    );
    let imported = import(&m);
    let x = floats(&[3, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    let Value::Tuple(out) = eval_function(&imported.module, "main", vec![x]).unwrap() else {
        panic!()
    };
    assert_eq!(
        values(&out[0]),
        [0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 7.0, 8.0, 0.0]
    );
    assert_eq!(
        values(&out[1]),
        [1.0, 2.0, 3.0, 0.0, 5.0, 6.0, 0.0, 0.0, 9.0]
    );
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    assert_eq!(op_types(g), ["Trilu", "Trilu"]);
    assert_eq!(g.node[0].input.len(), 2);
    assert_eq!(g.node[1].input.len(), 1);
}

#[test]
fn a_version_irpass_does_not_define_natively_is_kept_whole() {
    // ArgMax-11 (opset 11) has no `select_last_index`: irpass defines ArgMax as version 12.
    let m = model(
        11,
        vec![node("ArgMax", "max", &["x"], &["i"])],
        vec![symbolic("x", FLOAT, &["2", "3"])],
        vec![symbolic("i", INT64, &["1", "3"])],
        vec![],
    );
    let imported = import(&m);
    assert_eq!(imported.opaque, [("ArgMax".to_string(), 1)]);
    // And a native call is not written at an opset whose version it does not define.
    let m = model(
        13,
        vec![node("ArgMax", "max", &["x"], &["i"])],
        vec![symbolic("x", FLOAT, &["2", "3"])],
        vec![symbolic("i", INT64, &["1", "3"])],
        vec![],
    );
    let imported = import(&m);
    assert!(imported.opaque.is_empty());
    let options = ExportOptions {
        opset: Some(11),
        ..ExportOptions::default()
    };
    let e = export_module(&imported.module, None, &options).unwrap_err();
    assert!(e.to_string().contains("ArgMax"), "{e}");
}

#[test]
fn a_list_of_floats_attribute_types_runs_and_is_written_back() {
    // Upsample-7 takes its scales as a float-list attribute.
    let mut up = node("Upsample", "up", &["x"], &["y"]);
    up.attribute = vec![AttributeProto {
        name: Some("scales".into()),
        r#type: Some(AttributeType::Floats as i32),
        floats: vec![1.0, 1.0, 2.0, 3.0],
        ..AttributeProto::default()
    }];
    let m = model(
        7,
        vec![up],
        vec![symbolic("x", FLOAT, &["1", "1", "2", "2"])],
        vec![symbolic("y", FLOAT, &["1", "1", "4", "6"])],
        vec![],
    );
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    // The output's type comes from the attribute's values.
    assert_eq!(
        signature(&imported),
        "fn (Tensor[(1, 1, 2, 2), float32]) -> Tensor[(1, 1, 4, 6), float32]"
    );
    let y = eval_function(
        &imported.module,
        "main",
        vec![floats(&[1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0])],
    )
    .unwrap();
    // Nearest: each input row twice, each element three times.
    let row = |a: f64, b: f64| [a, a, a, b, b, b];
    let want: Vec<f64> = [row(1.0, 2.0), row(1.0, 2.0), row(3.0, 4.0), row(3.0, 4.0)].concat();
    assert_eq!(values(&y), want);
    // The IR's text holds the list and reads back to the same module.
    let text = imported.module.to_string();
    let reread = irpass_ir::Module::parse(&text).unwrap();
    assert_eq!(reread.to_string(), text);
    assert!(text.contains("scales=[1"), "{text}");
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    assert_eq!(op_types(g), ["Upsample"]);
    let scales = g.node[0]
        .attribute
        .iter()
        .find(|a| a.name() == "scales")
        .unwrap();
    assert_eq!(scales.floats, [1.0, 1.0, 2.0, 3.0]);
}

#[test]
fn max_unpool_writes_into_the_output_shape_it_is_given() {
    // The pooled 1×1×1×2 values at flat positions 1 and 2 of the 1×1×2×2 unpooled plane,
    // placed at the start of a 1×1×3×3 output.
    let mut unpool = node("MaxUnpool", "unpool", &["x", "i", "shape"], &["y"]);
    unpool.attribute = vec![AttributeProto {
        name: Some("kernel_shape".into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: vec![2, 1],
        ..AttributeProto::default()
    }];
    let m = model(
        11,
        vec![unpool],
        vec![symbolic("x", FLOAT, &["1", "1", "1", "2"])],
        vec![symbolic("y", FLOAT, &["1", "1", "3", "3"])],
        vec![
            int64s("i", &[1, 1, 1, 2], &[1, 2]),
            int64s("shape", &[4], &[1, 1, 3, 3]),
        ],
    );
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let y = eval_function(
        &imported.module,
        "main",
        vec![floats(&[1, 1, 1, 2], &[5.0, 7.0])],
    )
    .unwrap();
    assert_eq!(values(&y), [0.0, 5.0, 0.0, 7.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
}

#[test]
fn sequence_operators_are_native_calls_the_interpreter_runs() {
    // s = [a, b] + [c]; outputs: its length, its last tensor, its tensors joined on axis 0.
    let mut cat = node("ConcatFromSequence", "cat", &["s2"], &["joined"]);
    cat.attribute = vec![int_attr("axis", 0)];
    let m = model(
        11,
        vec![
            node("SequenceConstruct", "make", &["a", "b"], &["s"]),
            node("SequenceInsert", "insert", &["s", "c"], &["s2"]),
            node("SequenceLength", "len", &["s2"], &["n"]),
            node("SequenceAt", "at", &["s2", "last"], &["tail"]),
            cat,
        ],
        vec![
            symbolic("a", FLOAT, &["2"]),
            symbolic("b", FLOAT, &["2"]),
            symbolic("c", FLOAT, &["2"]),
        ],
        vec![
            symbolic("n", INT64, &[]),
            symbolic("tail", FLOAT, &["2"]),
            symbolic("joined", FLOAT, &["6"]),
        ],
        vec![int64s("last", &[], &[-1])],
    );
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let text = imported.module.to_string();
    assert!(
        text.contains("onnx.SequenceInsert(") && text.contains(r#"types="seq(tensor(float)[2])""#),
        "{text}"
    );
    let args = vec![
        floats(&[2], &[1.0, 2.0]),
        floats(&[2], &[3.0, 4.0]),
        floats(&[2], &[5.0, 6.0]),
    ];
    let out = eval_function(&imported.module, "main", args).unwrap();
    let out = out.as_tuple().unwrap();
    assert_eq!(values(&out[0]), [3.0]);
    assert_eq!(values(&out[1]), [5.0, 6.0]);
    assert_eq!(values(&out[2]), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let mut ops = op_types(written.graph.as_ref().unwrap());
    ops.sort_unstable();
    assert_eq!(
        ops,
        [
            "ConcatFromSequence",
            "SequenceAt",
            "SequenceConstruct",
            "SequenceInsert",
            "SequenceLength"
        ]
    );
}

/// A tensor of strings.
fn words(shape: &[usize], items: &[&str]) -> Value {
    let items = items.iter().map(|s| s.to_string()).collect();
    Value::opaque(Strings(
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), items).unwrap(),
    ))
}

/// The strings of a value that must hold them.
fn strings_of(v: &Value) -> Vec<String> {
    v.as_opaque::<Strings>()
        .unwrap()
        .0
        .iter()
        .cloned()
        .collect()
}

#[test]
fn string_operators_are_native_calls_on_tensors_of_strings() {
    // parts, counts = StringSplit(x, " ", maxsplit 1); joined = StringConcat(x, suffix);
    // kept = StringNormalizer(x, stopwords ["THE"], upper); hit = RegexFullMatch(x, "a.*");
    // same = Equal(x, joined).
    let mut split = node("StringSplit", "split", &["x"], &["parts", "counts"]);
    split.attribute = vec![
        AttributeProto {
            name: Some("delimiter".into()),
            r#type: Some(AttributeType::String as i32),
            s: Some(b" ".to_vec()),
            ..AttributeProto::default()
        },
        int_attr("maxsplit", 1),
    ];
    let mut norm = node("StringNormalizer", "norm", &["x"], &["kept"]);
    norm.attribute = vec![
        AttributeProto {
            name: Some("stopwords".into()),
            r#type: Some(AttributeType::Strings as i32),
            strings: vec![b"THE".to_vec()],
            ..AttributeProto::default()
        },
        AttributeProto {
            name: Some("case_change_action".into()),
            r#type: Some(AttributeType::String as i32),
            s: Some(b"UPPER".to_vec()),
            ..AttributeProto::default()
        },
    ];
    let mut hit = node("RegexFullMatch", "hit", &["x"], &["hit"]);
    hit.attribute = vec![AttributeProto {
        name: Some("pattern".into()),
        r#type: Some(AttributeType::String as i32),
        s: Some(b"a.*".to_vec()),
        ..AttributeProto::default()
    }];
    let m = model(
        20,
        vec![
            split,
            node("StringConcat", "join", &["x", "suffix"], &["joined"]),
            norm,
            hit,
            node("Equal", "same", &["x", "joined"], &["same"]),
        ],
        vec![
            symbolic("x", STRING, &["3"]),
            symbolic("suffix", STRING, &[]),
        ],
        vec![
            symbolic("parts", STRING, &["3", "?"]),
            symbolic("counts", INT64, &["3"]),
            symbolic("joined", STRING, &["3"]),
            symbolic("kept", STRING, &["?"]),
            symbolic("hit", BOOL, &["3"]),
            symbolic("same", BOOL, &["3"]),
        ],
        vec![],
    );
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let args = vec![words(&[3], &["a b c", "the", ""]), words(&[], &[""])];
    let out = eval_function(&imported.module, "main", args).unwrap();
    let out = out.as_tuple().unwrap();
    assert_eq!(strings_of(&out[0]), ["a", "b c", "the", "", "", ""]);
    assert_eq!(values(&out[1]), [2.0, 1.0, 1.0]);
    assert_eq!(strings_of(&out[2]), ["a b c", "the", ""]);
    assert_eq!(strings_of(&out[3]), ["A B C", ""]);
    assert_eq!(values(&out[4]), [1.0, 0.0, 0.0]);
    assert_eq!(values(&out[5]), [1.0, 1.0, 1.0]);
    // Written back as the nodes, the list of strings included.
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    let norm = g
        .node
        .iter()
        .find(|n| n.op_type() == "StringNormalizer")
        .unwrap();
    let stops = norm
        .attribute
        .iter()
        .find(|a| a.name() == "stopwords")
        .unwrap();
    assert_eq!(stops.strings, [b"THE".to_vec()]);
    let mut ops = op_types(g);
    ops.sort_unstable();
    assert_eq!(
        ops,
        [
            "Equal",
            "RegexFullMatch",
            "StringConcat",
            "StringNormalizer",
            "StringSplit"
        ]
    );
}

#[test]
fn a_bad_regular_expression_is_an_error_not_a_panic() {
    let mut hit = node("RegexFullMatch", "hit", &["x"], &["hit"]);
    hit.attribute = vec![AttributeProto {
        name: Some("pattern".into()),
        r#type: Some(AttributeType::String as i32),
        s: Some(b"(unclosed".to_vec()),
        ..AttributeProto::default()
    }];
    let m = model(
        20,
        vec![hit],
        vec![symbolic("x", STRING, &["1"])],
        vec![symbolic("hit", BOOL, &["1"])],
        vec![],
    );
    // The node does not type as a native call, so it is kept whole.
    let imported = import(&m);
    assert_eq!(imported.opaque, [("RegexFullMatch".to_string(), 1)]);
}

#[test]
fn optional_operators_are_native_calls_on_optional_values() {
    // some = Optional(x); none = Optional(type float); each asked whether it holds a value,
    // and x taken back out of `some`.
    let mut none = node("Optional", "none", &[], &["none"]);
    none.attribute = vec![AttributeProto {
        name: Some("type".into()),
        r#type: Some(AttributeType::TypeProto as i32),
        tp: symbolic("", FLOAT, &["2"]).r#type,
        ..AttributeProto::default()
    }];
    let m = model(
        18,
        vec![
            node("Optional", "some", &["x"], &["some"]),
            none,
            node("OptionalHasElement", "has_some", &["some"], &["has_some"]),
            node("OptionalHasElement", "has_none", &["none"], &["has_none"]),
            node("OptionalGetElement", "back", &["some"], &["back"]),
        ],
        vec![symbolic("x", FLOAT, &["2"])],
        vec![
            symbolic("has_some", BOOL, &[]),
            symbolic("has_none", BOOL, &[]),
            symbolic("back", FLOAT, &["2"]),
        ],
        vec![],
    );
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let out = eval_function(&imported.module, "main", vec![floats(&[2], &[1.0, 2.0])]).unwrap();
    let out = out.as_tuple().unwrap();
    assert_eq!(values(&out[0]), [1.0]);
    assert_eq!(values(&out[1]), [0.0]);
    assert_eq!(values(&out[2]), [1.0, 2.0]);
    // The empty `Optional` is written with its element type, taken from its output's type.
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let g = written.graph.as_ref().unwrap();
    let empty = g
        .node
        .iter()
        .find(|n| n.op_type() == "Optional" && n.input.is_empty())
        .unwrap();
    let ty = empty.attribute.iter().find(|a| a.name() == "type").unwrap();
    assert_eq!(ty.tp, symbolic("", FLOAT, &["2"]).r#type);
}

/// An attribute holding a tensor.
fn tensor_attr(name: &str, t: irpass_onnx::proto::TensorProto) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Tensor as i32),
        t: Some(t),
        ..AttributeProto::default()
    }
}

/// An attribute holding a list of integers.
fn ints_attr(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: v.to_vec(),
        ..AttributeProto::default()
    }
}

#[test]
fn ml_operators_are_native_calls_of_their_domain_written_back_at_its_opset() {
    // label = LabelEncoder(words; keys_tensor [a, b] -> values_tensor [1, 2], default -1);
    // score = TreeEnsemble(x): one tree, x[0] <= 0.5 ? 10 : 20.
    let keys = Strings(
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[2]), vec!["a".into(), "b".into()])
            .unwrap(),
    )
    .proto("");
    let mut encode = node("LabelEncoder", "encode", &["words"], &["label"]);
    encode.domain = Some("ai.onnx.ml".into());
    encode.attribute = vec![
        tensor_attr("keys_tensor", keys),
        tensor_attr("values_tensor", int64s("", &[2], &[1, 2])),
    ];
    let mut tree = node("TreeEnsemble", "tree", &["x"], &["score"]);
    tree.domain = Some("ai.onnx.ml".into());
    let modes = irpass_onnx::proto::TensorProto {
        dims: vec![1],
        data_type: Some(2),
        int32_data: vec![0],
        ..Default::default()
    };
    tree.attribute = vec![
        tensor_attr("nodes_modes", modes),
        tensor_attr("nodes_splits", support::floats("", &[1], &[0.5])),
        ints_attr("nodes_featureids", &[0]),
        ints_attr("nodes_truenodeids", &[0]),
        ints_attr("nodes_falsenodeids", &[1]),
        ints_attr("nodes_trueleafs", &[1]),
        ints_attr("nodes_falseleafs", &[1]),
        ints_attr("leaf_targetids", &[0, 0]),
        tensor_attr("leaf_weights", support::floats("", &[2], &[10.0, 20.0])),
        ints_attr("tree_roots", &[0]),
        int_attr("n_targets", 1),
    ];
    let mut m = model(
        21,
        vec![encode, tree],
        vec![
            symbolic("words", STRING, &["3"]),
            symbolic("x", FLOAT, &["2", "1"]),
        ],
        vec![
            symbolic("label", INT64, &["3"]),
            symbolic("score", FLOAT, &["2", "1"]),
        ],
        vec![],
    );
    m.opset_import.push(irpass_onnx::proto::OperatorSetIdProto {
        domain: Some("ai.onnx.ml".into()),
        version: Some(5),
    });
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    assert!(
        imported
            .module
            .to_string()
            .contains("onnx.ai.onnx.ml.LabelEncoder(")
    );
    let args = vec![
        words(&[3], &["b", "c", "a"]),
        floats(&[2, 1], &[0.25, 0.75]),
    ];
    let out = eval_function(&imported.module, "main", args).unwrap();
    let out = out.as_tuple().unwrap();
    assert_eq!(values(&out[0]), [2.0, -1.0, 1.0]);
    assert_eq!(values(&out[1]), [10.0, 20.0]);
    // Written back in their domain, its opset imported, the tensor attributes as tensors.
    let written = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let ml = written
        .opset_import
        .iter()
        .find(|o| o.domain() == "ai.onnx.ml")
        .unwrap();
    assert_eq!(ml.version, Some(5));
    let g = written.graph.as_ref().unwrap();
    let encode = g
        .node
        .iter()
        .find(|n| n.op_type() == "LabelEncoder")
        .unwrap();
    assert_eq!(encode.domain(), "ai.onnx.ml");
    let values_tensor = encode
        .attribute
        .iter()
        .find(|a| a.name() == "values_tensor")
        .unwrap();
    assert_eq!(values_tensor.t.as_ref().unwrap().int64_data, [1, 2]);
}

#[test]
fn an_ml_operator_of_a_version_irpass_does_not_define_is_kept_whole() {
    // LabelEncoder-1 (ai.onnx.ml opset 1) has other attributes than versions 2 and 4.
    let mut encode = node("LabelEncoder", "encode", &["x"], &["y"]);
    encode.domain = Some("ai.onnx.ml".into());
    encode.attribute = vec![int_attr("default_int64", 7)];
    let mut m = model(
        13,
        vec![encode],
        vec![symbolic("x", STRING, &["3"])],
        vec![symbolic("y", INT64, &["3"])],
        vec![],
    );
    m.opset_import.push(irpass_onnx::proto::OperatorSetIdProto {
        domain: Some("ai.onnx.ml".into()),
        version: Some(1),
    });
    let imported = import(&m);
    assert_eq!(
        imported.opaque,
        [("ai.onnx.ml.LabelEncoder".to_string(), 1)]
    );
}

#[test]
fn training_optimisers_update_each_tensor_they_are_given() {
    // Momentum (standard, alpha 0.5, beta 1, no norm) of two tensors at T = 1, R = 0.1:
    // V' = 0.5 V + G, X' = X - 0.1 V'.
    let mut step = node(
        "Momentum",
        "step",
        &["r", "t", "x1", "x2", "g1", "g2", "v1", "v2"],
        &["x1n", "x2n", "v1n", "v2n"],
    );
    step.domain = Some("ai.onnx.preview.training".into());
    let float_attr = |name: &str, f: f32| AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Float as i32),
        f: Some(f),
        ..AttributeProto::default()
    };
    step.attribute = vec![
        float_attr("alpha", 0.5),
        float_attr("beta", 1.0),
        float_attr("norm_coefficient", 0.0),
        AttributeProto {
            name: Some("mode".into()),
            r#type: Some(AttributeType::String as i32),
            s: Some(b"standard".to_vec()),
            ..AttributeProto::default()
        },
    ];
    let ins = ["x1", "x2", "g1", "g2", "v1", "v2"];
    let mut inputs = vec![symbolic("r", FLOAT, &[]), symbolic("t", INT64, &[])];
    inputs.extend(ins.iter().map(|n| symbolic(n, FLOAT, &["1"])));
    let outs = ["x1n", "x2n", "v1n", "v2n"];
    let mut m = model(
        13,
        vec![step],
        inputs,
        outs.iter().map(|n| symbolic(n, FLOAT, &["1"])).collect(),
        vec![],
    );
    m.opset_import.push(irpass_onnx::proto::OperatorSetIdProto {
        domain: Some("ai.onnx.preview.training".into()),
        version: Some(1),
    });
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let mut args = vec![
        floats(&[], &[0.1]),
        Value::tensor(Tensor::scalar_i64(DType::Int64, 1)),
    ];
    for v in [1.0, 2.0, 1.0, 1.0, 2.0, 4.0] {
        args.push(floats(&[1], &[v]));
    }
    let out = eval_function(&imported.module, "main", args).unwrap();
    let got: Vec<f64> = out
        .as_tuple()
        .unwrap()
        .iter()
        .map(|v| values(v)[0])
        .collect();
    let want = [1.0 - 0.1 * 2.0, 2.0 - 0.1 * 3.0, 2.0, 3.0];
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{got:?} against {want:?}");
    }
}

#[test]
fn pooling_operators_without_an_ir_counterpart_run() {
    // norm = GlobalLpPool(x, p 2); rois of x (4×4 of 0..15): the whole image in 2×2 bins,
    // and its centre in one bin.
    let mut lp = node("GlobalLpPool", "lp", &["x"], &["norm"]);
    lp.attribute = vec![int_attr("p", 2)];
    let mut roi = node("MaxRoiPool", "roi", &["x", "rois"], &["pooled"]);
    roi.attribute = vec![ints_attr("pooled_shape", &[2, 2])];
    let m = model(
        13,
        vec![lp, roi],
        vec![
            symbolic("x", FLOAT, &["1", "1", "4", "4"]),
            symbolic("rois", FLOAT, &["2", "5"]),
        ],
        vec![
            symbolic("norm", FLOAT, &["1", "1", "1", "1"]),
            symbolic("pooled", FLOAT, &["2", "1", "2", "2"]),
        ],
        vec![],
    );
    let imported = import(&m);
    assert!(imported.opaque.is_empty(), "{:?}", imported.opaque);
    let x: Vec<f64> = (0..16).map(f64::from).collect();
    let rois = [0.0, 0.0, 0.0, 3.0, 3.0, 0.0, 1.0, 1.0, 2.0, 2.0];
    let out = eval_function(
        &imported.module,
        "main",
        vec![floats(&[1, 1, 4, 4], &x), floats(&[2, 5], &rois)],
    )
    .unwrap();
    let out = out.as_tuple().unwrap();
    let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!((values(&out[0])[0] - norm).abs() < 1e-4);
    // The quadrants' maxima, then the centre 2×2 (5, 6, 9, 10) in 2×2 bins of one each.
    assert_eq!(values(&out[1]), [5.0, 7.0, 13.0, 15.0, 5.0, 6.0, 9.0, 10.0]);
}

#[test]
fn a_call_of_another_domain_written_by_hand_is_written_at_its_newest_version() {
    let m = irpass_ir::Module::parse(
        "def @main(%x: Tensor[(3), float32]) { onnx.ai.onnx.ml.Binarizer(%x, threshold=0.5f) }",
    )
    .unwrap();
    let written = export_module(&m, None, &ExportOptions::default()).unwrap();
    let ml = written
        .opset_import
        .iter()
        .find(|o| o.domain() == "ai.onnx.ml")
        .unwrap();
    assert_eq!(ml.version, Some(1));
    let x = floats(&[3], &[0.25, 0.5, 0.75]);
    assert_eq!(
        values(&eval_function(&m, "main", vec![x]).unwrap()),
        [0.0, 0.0, 1.0]
    );
}
