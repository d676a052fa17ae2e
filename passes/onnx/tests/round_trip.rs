//! Export: an imported model written back keeps its input and output names and opset, is
//! read back to a module that computes the same values, and a module that was never ONNX is
//! written too.

mod support;

use irpass_ir::{DType, Module, Tensor, Value, eval_function};
use irpass_onnx::{
    ExportOptions, ImportOptions, decode_model, encode_model, export_module, import_bytes,
};
use prost::Message as _;
use support::{op_types, small_model};

/// `m` written at opset `opset`.
fn export_at(m: &Module, opset: i64) -> irpass_onnx::Result<irpass_onnx::proto::ModelProto> {
    export_module(
        m,
        None,
        &ExportOptions {
            opset: Some(opset),
            ..ExportOptions::default()
        },
    )
}

fn x() -> Value {
    Value::tensor(Tensor::from_vec(DType::Float32, &[1, 3], vec![0.5, 1.0, -2.0]).unwrap())
}

#[test]
fn an_imported_model_is_written_back_with_its_names_and_computes_the_same() {
    let imported = import_bytes(&small_model().encode_to_vec(), &ImportOptions::default()).unwrap();
    let before = eval_function(&imported.module, "main", vec![x()]).unwrap();
    let model = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    assert_eq!(model.producer_name.as_deref(), Some("irpass"));
    assert_eq!(model.opset_import[0].version, Some(17));
    let g = model.graph.as_ref().unwrap();
    assert_eq!(g.input.iter().map(|i| i.name()).collect::<Vec<_>>(), ["x"]);
    assert_eq!(g.output.iter().map(|o| o.name()).collect::<Vec<_>>(), ["y"]);
    assert_eq!(op_types(g), ["Add", "Relu"]);
    let again = import_bytes(&encode_model(&model), &ImportOptions::default()).unwrap();
    let after = eval_function(&again.module, "main", vec![x()]).unwrap();
    assert!(before.bit_eq(&after), "{before} vs {after}");
    assert_eq!(before.as_tensor().unwrap().values(), [1.5, 0.0, 0.0]);
}

#[test]
fn a_model_at_an_opset_beyond_the_implemented_ones_is_read_and_written_at_it() {
    // Add, Relu: their versions at opsets 7, 8 and 22 to the newest differ from those of the
    // implemented opsets only in element types.
    for opset in [7, 8, 22, 25, *irpass_onnx::OPSETS.end()] {
        let mut m = small_model();
        m.opset_import[0].version = Some(opset);
        let imported = import_bytes(&m.encode_to_vec(), &ImportOptions::default()).unwrap();
        let model = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
        assert_eq!(model.opset_import[0].version, Some(opset));
        let again = import_bytes(&encode_model(&model), &ImportOptions::default()).unwrap();
        let after = eval_function(&again.module, "main", vec![x()]).unwrap();
        assert_eq!(after.as_tensor().unwrap().values(), [1.5, 0.0, 0.0]);
    }
}

#[test]
fn writing_an_operator_at_an_opset_where_it_has_another_form_is_an_error_naming_it() {
    // Max-6 (opsets 6 and 7) takes operands of one shape only.
    let m = Module::parse(
        "def @main(%a: Tensor[(2), float32], %b: Tensor[(3, 2), float32]) { maximum(%a, %b) }",
    )
    .unwrap();
    let err = export_at(&m, 7).unwrap_err().to_string();
    assert!(err.contains("cannot write opset 7: Max of shapes"), "{err}");
    // LayerNormalization decomposed before opset 17 broadcasts its mean: not at opset 6.
    let m = Module::parse(
        "def @main(%x: Tensor[(2, 4), float32]) { nn.layer_norm(%x, Tensor[(4), float32]{1, 1, 1, 1}, Tensor[(4), float32]{0, 0, 0, 0}) }",
    )
    .unwrap();
    let err = export_at(&m, 6).unwrap_err().to_string();
    assert!(
        err.contains("cannot write opset 6: the model needs Sub"),
        "{err}"
    );
    // Add at opset 6 is written, broadcasting by its attribute.
    let imported = import_bytes(&small_model().encode_to_vec(), &ImportOptions::default()).unwrap();
    let written = export_at(&imported.module, 6).unwrap();
    let add = &written.graph.as_ref().unwrap().node[0];
    assert_eq!(add.op_type(), "Add");
    assert_eq!(add.attribute[0].name(), "broadcast");
}

#[test]
fn the_names_survive_the_text_format() {
    let imported = import_bytes(&small_model().encode_to_vec(), &ImportOptions::default()).unwrap();
    let text = imported.module.to_string();
    let reparsed = Module::parse(&text).unwrap();
    let model = export_module(&reparsed, None, &ExportOptions::default()).unwrap();
    let g = model.graph.unwrap();
    assert_eq!(g.input[0].name(), "x");
    assert_eq!(g.output[0].name(), "y");
}

#[test]
fn a_module_written_in_text_becomes_a_model() {
    let m = Module::parse(
        "def @main(%a: Tensor[(2, 4), float32], %w: Tensor[(3, 4), float32]) {
           %0 = nn.dense(%a, %w);
           %1 = add(%0, Tensor[(3), float32]{1, 2, 3});
           (nn.relu(%1), %0)
         }",
    )
    .unwrap();
    let model = export_at(&m, 13).unwrap();
    let g = model.graph.as_ref().unwrap();
    // The product is also an output, so the bias add cannot become the Gemm's C.
    let ops = op_types(g);
    assert_eq!(ops, ["Gemm", "Add", "Relu"], "{ops:?}");
    assert_eq!(
        g.output.iter().map(|o| o.name()).collect::<Vec<_>>(),
        ["output_0", "output_1"]
    );
    let back = decode_model(&encode_model(&model)).unwrap();
    assert_eq!(back, model);
}

#[test]
fn a_dense_layer_and_its_bias_become_one_gemm() {
    let m = Module::parse(
        "def @main(%a: Tensor[(2, 4), float32], %w: Tensor[(3, 4), float32]) {
           %0 = nn.dense(%a, %w);
           add(%0, Tensor[(3), float32]{1, 2, 3})
         }",
    )
    .unwrap();
    let model = export_module(&m, None, &ExportOptions::default()).unwrap();
    let g = model.graph.unwrap();
    assert_eq!(g.node.len(), 1);
    assert_eq!(g.node[0].op_type(), "Gemm");
    assert_eq!(g.node[0].input.len(), 3);
}

#[test]
fn a_product_by_a_reciprocal_square_root_is_one_division() {
    // `x * rsqrt(v)` (an RMS normalisation): ONNX has no Rsqrt, and `Div(x, Sqrt(v))` is two
    // nodes where `Mul(x, Reciprocal(Sqrt(v)))` is three.
    let m = Module::parse(
        "def @main(%x: Tensor[(2, 3), float32], %v: Tensor[(2, 1), float32]) {
           multiply(%x, rsqrt(%v))
         }",
    )
    .unwrap();
    let model = export_module(&m, None, &ExportOptions::default()).unwrap();
    assert_eq!(op_types(model.graph.as_ref().unwrap()), ["Sqrt", "Div"]);
    let back = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    let x = sample_2x3();
    let v = Value::tensor(Tensor::from_vec(DType::Float32, &[2, 1], vec![4.0, 0.25]).unwrap());
    let want = eval_function(&m, "main", vec![x.clone(), v.clone()]).unwrap();
    let got = eval_function(&back.module, "main", vec![x, v]).unwrap();
    assert!(want.bit_eq(&got), "{want} vs {got}");
    // A reciprocal read twice stays: dividing twice would compute more, not less.
    let m = Module::parse(
        "def @main(%x: Tensor[(2, 3), float32], %v: Tensor[(2, 1), float32]) {
           %0 = rsqrt(%v);
           (multiply(%x, %0), %0)
         }",
    )
    .unwrap();
    let model = export_module(&m, None, &ExportOptions::default()).unwrap();
    assert_eq!(
        op_types(model.graph.as_ref().unwrap()),
        ["Sqrt", "Reciprocal", "Mul"]
    );
}

#[test]
fn ones_and_zeros_like_a_value_of_run_time_shape_are_written_from_its_shape() {
    // What `SimplifyExpr` leaves of a softmax over one element of a dynamic-batch model.
    let m = Module::parse(
        "def @main(%x: Tensor[(batch, 1), float32]) {
           (ones_like(%x), zeros_like(%x))
         }",
    )
    .unwrap();
    let model = export_module(&m, None, &ExportOptions::default()).unwrap();
    let ops = op_types(model.graph.as_ref().unwrap());
    assert_eq!(
        ops.iter().filter(|o| **o == "ConstantOfShape").count(),
        2,
        "{ops:?}"
    );
    let back = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    let x = Value::tensor(Tensor::from_vec(DType::Float32, &[3, 1], vec![0.5, -1.0, 2.0]).unwrap());
    let got = eval_function(&back.module, "main", vec![x.clone()]).unwrap();
    let want = eval_function(&m, "main", vec![x]).unwrap();
    assert!(want.bit_eq(&got), "{want} vs {got}");
}

#[test]
fn a_product_of_matrices_by_a_weight_and_its_bias_become_one_gemm() {
    // What FlattenMatMul leaves: a 2-D product by a constant matrix (no transposition, as
    // `nn.dense`'s is), then its bias.
    let m = Module::parse(
        "def @main(%a: Tensor[(2, 4), float32]) {
           %0 = matmul(%a, Tensor[(4, 3), float32]{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
           add(%0, Tensor[(3), float32]{1, 2, 3})
         }",
    )
    .unwrap();
    let a = Value::tensor(
        Tensor::from_vec(
            DType::Float32,
            &[2, 4],
            vec![1.0, -1.0, 0.5, 2.0, 0.0, 3.0, -2.0, 1.0],
        )
        .unwrap(),
    );
    let want = eval_function(&m, "main", vec![a.clone()]).unwrap();
    for opset in [6, 9, 17] {
        let model = export_at(&m, opset).unwrap();
        let g = model.graph.as_ref().unwrap();
        // (ONNX Runtime has no kernel for Gemm-6.)
        let want_ops: &[&str] = if opset < 7 {
            &["MatMul", "Add"]
        } else {
            &["Gemm"]
        };
        assert_eq!(op_types(g), want_ops, "opset {opset}");
        if opset >= 7 {
            assert_eq!(g.node[0].input.len(), 3);
        }
        let back = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
        let got = eval_function(&back.module, "main", vec![a.clone()]).unwrap();
        assert!(want.bit_eq(&got), "opset {opset}: {want} vs {got}");
    }
    // A product of two values stays a MatMul.
    let m = Module::parse(
        "def @main(%a: Tensor[(2, 4), float32], %b: Tensor[(4, 3), float32]) { matmul(%a, %b) }",
    )
    .unwrap();
    assert_eq!(
        op_types(export_at(&m, 17).unwrap().graph.as_ref().unwrap()),
        ["MatMul"]
    );
}

#[test]
fn a_convolution_and_its_bias_add_become_one_conv() {
    let m = Module::parse(
        "def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(3, 2, 3, 3), float32]) {
           %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
           nn.bias_add(%0, Tensor[(3), float32]{1, 2, 3})
         }",
    )
    .unwrap();
    let model = export_module(&m, None, &ExportOptions::default()).unwrap();
    let g = model.graph.as_ref().unwrap();
    assert_eq!(op_types(g), ["Conv"]);
    assert_eq!(g.node[0].input.len(), 3);
    // And it computes what the module computed.
    let x = Value::tensor(
        Tensor::from_vec(
            DType::Float32,
            &[1, 2, 4, 4],
            (0..32).map(f64::from).collect(),
        )
        .unwrap(),
    );
    let w = Value::tensor(
        Tensor::from_vec(
            DType::Float32,
            &[3, 2, 3, 3],
            (0..54).map(|i| f64::from(i) / 10.0).collect(),
        )
        .unwrap(),
    );
    let again = import_bytes(&encode_model(&model), &ImportOptions::default()).unwrap();
    let a = eval_function(&m, "main", vec![x.clone(), w.clone()]).unwrap();
    let b = eval_function(&again.module, "main", vec![x, w]).unwrap();
    assert!(a.bit_eq(&b));
}

#[test]
fn an_if_is_written_as_onnxs_if_each_branch_computing_its_own_outputs() {
    // The then branch is the input itself: its subgraph copies it (a subgraph's output is a
    // value it computes).
    let m =
        Module::parse("def @main(%c: bool, %x: float32) { if (%c) { %x } else { negative(%x) } }")
            .unwrap();
    let model = export_module(&m, None, &ExportOptions::default()).unwrap();
    let g = model.graph.as_ref().unwrap();
    assert_eq!(g.node.len(), 1);
    let branches: Vec<Vec<&str>> = g.node[0]
        .attribute
        .iter()
        .map(|a| {
            a.g.as_ref()
                .unwrap()
                .node
                .iter()
                .map(|n| n.op_type())
                .collect()
        })
        .collect();
    assert_eq!(branches, [["Identity"], ["Neg"]]);
    let again = import_bytes(&encode_model(&model), &ImportOptions::default()).unwrap();
    for (c, want) in [(1.0, 2.5), (0.0, -2.5)] {
        let args = vec![
            Value::tensor(Tensor::scalar(DType::Bool, c)),
            Value::tensor(Tensor::scalar(DType::Float32, 2.5)),
        ];
        let Value::Tensor(y) = eval_function(&again.module, "main", args).unwrap() else {
            panic!("a tensor")
        };
        assert_eq!(y.values(), [want]);
    }
}

#[test]
fn what_onnx_cannot_express_is_an_error_not_a_wrong_model() {
    let m = Module::parse("def @f(%x: float32) { negative(%x) } def @main(%x: float32) { @f(%x) }")
        .unwrap();
    let err = export_module(&m, None, &ExportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("another global function"), "{err}");
    let newer = irpass_onnx::OPSETS.end() + 1;
    let err = export_at(&m, newer).unwrap_err().to_string();
    assert!(
        err.contains(&format!("opset {newer} is not supported")),
        "{err}"
    );
}

#[test]
fn a_layer_norm_is_one_layer_normalization_from_opset_17_and_its_decomposition_before() {
    let m = Module::parse(
        "def @main(%x: Tensor[(2, 4), float32]) {
           nn.layer_norm(%x, Tensor[(4), float32]{1, 2, 3, 4}, Tensor[(4), float32]{0, 1, 0, 1})
         }",
    )
    .unwrap();
    let ops = |opset: i64| -> Vec<String> {
        let model = export_at(&m, opset).unwrap();
        op_types(model.graph.as_ref().unwrap())
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(ops(17), ["LayerNormalization"]);
    // The form exporters write, which ONNX Runtime fuses into one LayerNormalization (its
    // fusion matches the square as a Pow).
    assert_eq!(
        ops(13),
        [
            "ReduceMean",
            "Sub",
            "Pow",
            "ReduceMean",
            "Add",
            "Sqrt",
            "Div",
            "Mul",
            "Add"
        ]
    );
    // The same values either way.
    let x = Value::tensor(
        Tensor::from_vec(
            DType::Float32,
            &[2, 4],
            vec![1.0, 2.0, 4.0, 8.0, -1.0, 0.0, 1.0, 3.0],
        )
        .unwrap(),
    );
    let a = eval_function(&m, "main", vec![x.clone()]).unwrap();
    for opset in [13, 17] {
        let model = export_at(&m, opset).unwrap();
        let again = import_bytes(&encode_model(&model), &ImportOptions::default()).unwrap();
        let b = eval_function(&again.module, "main", vec![x.clone()]).unwrap();
        assert!(a.all_close(&b, 1e-5, 1e-6), "opset {opset}: {a} vs {b}");
    }
}

#[test]
fn a_layer_norms_unit_scale_and_zero_shift_are_not_written_before_opset_17() {
    let m = Module::parse(
        "def @main(%x: Tensor[(2, 4), float32]) {
           nn.layer_norm(%x, Tensor[(4), float32]{1, 1, 1, 1}, Tensor[(4), float32]{0, 0, 0, 0})
         }",
    )
    .unwrap();
    let graph = export_at(&m, 13).unwrap().graph.unwrap();
    let ops = op_types(&graph);
    assert_eq!(
        ops,
        [
            "ReduceMean",
            "Sub",
            "Pow",
            "ReduceMean",
            "Add",
            "Sqrt",
            "Div"
        ]
    );
}

#[test]
fn float32_weights_are_views_of_the_models_bytes_and_written_back_byte_for_byte() {
    let mut model = small_model();
    // The weights as raw little-endian bytes, as exporters write them.
    let raw: Vec<u8> = [1.0f32, -2.0, 0.1]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let b = &mut model.graph.as_mut().unwrap().initializer[0];
    b.float_data.clear();
    b.raw_data = Some(raw.clone().into());
    let imported =
        irpass_onnx::import_bytes_from(model.encode_to_vec(), None, &ImportOptions::default())
            .unwrap();
    let main = imported.module.get("main").unwrap();
    let body = &main.code.body;
    let weights: Vec<_> = body
        .ids()
        .filter_map(|e| match body.node(e) {
            irpass_ir::Node::Constant(k) => Some(body.constant(*k).clone()),
            _ => None,
        })
        .collect();
    assert_eq!(weights.len(), 1);
    // A view of the model's bytes, not a copy.
    assert_eq!(weights[0].f32_le_bytes().map(|b| &b[..]), Some(&raw[..]));
    assert_eq!(weights[0].values(), [1.0, -2.0, f64::from(0.1f32)]);
    let out = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
    let written = &out.graph.as_ref().unwrap().initializer[0];
    assert_eq!(written.raw_data.as_deref(), Some(&raw[..]));
    assert_eq!(written.dims, [3]);
}

#[test]
fn a_softmax_on_an_inner_axis_is_written_for_opsets_before_13_and_computes_the_same() {
    // Below opset 13 ONNX's Softmax normalises over every axis from `axis` on: one node when
    // the later axes have one element, the axis moved last and back otherwise.
    for (dims, ops) in [
        (vec![2, 3, 1, 1], vec!["Softmax"]),
        (vec![2, 3, 4], vec!["Transpose", "Softmax", "Transpose"]),
    ] {
        let shape = format!(
            "({})",
            dims.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        for op in ["nn.softmax", "nn.log_softmax"] {
            let m = Module::parse(&format!(
                "def @main(%x: Tensor[{shape}, float32]) {{ {op}(%x, axis=1) }}"
            ))
            .unwrap();
            let model = export_at(&m, 11).unwrap();
            let g = model.graph.as_ref().unwrap();
            let written = op_types(g);
            let want: Vec<&str> = ops
                .iter()
                .map(|o| match (*o, op) {
                    ("Softmax", "nn.log_softmax") => "LogSoftmax",
                    (o, _) => o,
                })
                .collect();
            assert_eq!(written, want, "{op} on {shape}");
            let again = import_bytes(&encode_model(&model), &ImportOptions::default()).unwrap();
            let n: usize = dims.iter().product();
            let input = Value::tensor(
                Tensor::from_vec(
                    DType::Float32,
                    &dims,
                    (0..n).map(|i| (i as f64 * 0.37).sin()).collect(),
                )
                .unwrap(),
            );
            let a = eval_function(&m, "main", vec![input.clone()]).unwrap();
            let b = eval_function(&again.module, "main", vec![input]).unwrap();
            let (a, b) = (a.as_tensor().unwrap(), b.as_tensor().unwrap());
            for (x, y) in a.values().iter().zip(b.values().iter()) {
                assert!((x - y).abs() < 1e-6, "{op} on {shape}: {x} vs {y}");
            }
        }
    }
}

#[test]
fn a_channel_scale_and_shift_become_one_batch_normalization_where_channels_are_axis_1() {
    let module = |shape: &str| {
        Module::parse(&format!(
            "def @main(%x: Tensor[{shape}, float32]) {{
               %0 = multiply(%x, Tensor[(2, 1, 1), float32]{{0.5, -2}});
               add(%0, Tensor[(2, 1, 1), float32]{{1, 3}})
             }}"
        ))
        .unwrap()
    };
    let ops = |m: &Module| -> Vec<String> {
        let model = export_module(m, None, &ExportOptions::default()).unwrap();
        let g = model.graph.unwrap();
        op_types(&g).into_iter().map(str::to_string).collect()
    };
    let m = module("(1, 2, 3, 3)");
    assert_eq!(ops(&m), ["BatchNormalization"]);
    let model = export_module(&m, None, &ExportOptions::default()).unwrap();
    // No initializer is left behind by the fusion.
    let g = model.graph.as_ref().unwrap();
    let used: Vec<&str> = g
        .node
        .iter()
        .flat_map(|n| n.input.iter().map(String::as_str))
        .collect();
    assert!(g.initializer.iter().all(|t| used.contains(&t.name())));
    let again = import_bytes(&encode_model(&model), &ImportOptions::default()).unwrap();
    let input = Value::tensor(
        Tensor::from_vec(
            DType::Float32,
            &[1, 2, 3, 3],
            (0..18).map(|i| f64::from(i) - 9.0).collect(),
        )
        .unwrap(),
    );
    let a = eval_function(&m, "main", vec![input.clone()]).unwrap();
    let b = eval_function(&again.module, "main", vec![input]).unwrap();
    assert!(a.bit_eq(&b), "{a} vs {b}");
    // On a rank-3 tensor the same constants scale axis 0, which is not a batch norm's.
    assert_eq!(ops(&module("(2, 3, 3)")), ["Mul", "Add"]);
}

#[test]
fn unsigned_tensors_are_read_from_raw_and_typed_fields_and_written_back_exactly() {
    use irpass_onnx::proto::TensorProto;
    use irpass_onnx::{DataDir, proto_of, tensor_of};
    let raw = |data_type: i32, bytes: Vec<u8>| TensorProto {
        name: Some("t".into()),
        dims: vec![3],
        data_type: Some(data_type),
        raw_data: Some(bytes.into()),
        ..TensorProto::default()
    };
    let u16s: Vec<u8> = [0u16, 40_000, 65_535]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let u64s: Vec<u8> = [0u64, 1 << 40, (1 << 63) - 1]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let typed_u32 = TensorProto {
        name: Some("t".into()),
        dims: vec![3],
        data_type: Some(12),
        uint64_data: vec![0, 3_000_000_000, 4_294_967_295],
        ..TensorProto::default()
    };
    for (proto, dtype, values) in [
        (raw(4, u16s), DType::UInt16, vec![0.0, 40_000.0, 65_535.0]),
        (typed_u32, DType::UInt32, vec![0.0, 3e9, 4_294_967_295.0]),
        (
            raw(13, u64s),
            DType::UInt64,
            vec![0.0, (1u64 << 40) as f64, ((1u64 << 63) - 1) as f64],
        ),
    ] {
        let t = tensor_of(&proto, DataDir(None)).unwrap();
        assert_eq!((t.dtype(), t.values()), (dtype, values.clone()));
        let back = tensor_of(&proto_of("t", &t), DataDir(None)).unwrap();
        assert!(back.bit_eq(&t), "{dtype}: {back} vs {t}");
    }
    // A uint64 of 2^63 or more is refused by name, not read as a wrong value.
    let big = raw(
        13,
        [0u64, 1 << 63, 1]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
    );
    let err = tensor_of(&big, DataDir(None)).unwrap_err().to_string();
    assert!(err.contains("`t`") && err.contains("below 2^63"), "{err}");
}

#[test]
fn bfloat16_tensors_keep_their_bits_through_raw_and_typed_fields() {
    use irpass_onnx::proto::TensorProto;
    use irpass_onnx::{DataDir, proto_of, tensor_of};
    let values = [1.0f32, -0.1, 3.0e38, 1.0e-30];
    let bits: Vec<u16> = values
        .iter()
        .map(|&v| half::bf16::from_f32(v).to_bits())
        .collect();
    let raw = TensorProto {
        name: Some("t".into()),
        dims: vec![4],
        data_type: Some(16),
        raw_data: Some(
            bits.iter()
                .flat_map(|b| b.to_le_bytes())
                .collect::<Vec<u8>>()
                .into(),
        ),
        ..TensorProto::default()
    };
    let typed = TensorProto {
        raw_data: None,
        int32_data: bits.iter().map(|&b| i32::from(b)).collect(),
        ..raw.clone()
    };
    let want: Vec<f64> = bits
        .iter()
        .map(|&b| f64::from(half::bf16::from_bits(b)))
        .collect();
    for proto in [raw, typed] {
        let t = tensor_of(&proto, DataDir(None)).unwrap();
        assert_eq!((t.dtype(), t.values()), (DType::BFloat16, want.clone()));
        let written = proto_of("t", &t);
        assert_eq!(
            written.raw_data.as_deref(),
            Some(
                &bits
                    .iter()
                    .flat_map(|b| b.to_le_bytes())
                    .collect::<Vec<u8>>()[..]
            )
        );
    }
}

#[test]
fn float8_float4_and_sub_byte_integer_tensors_keep_their_codes_packed_as_onnx_packs_them() {
    use irpass_onnx::proto::TensorProto;
    use irpass_onnx::{DataDir, proto_of, tensor_of};
    // (ONNX element type, dtype, raw bytes, the values they hold). Three 4-bit elements take
    // two bytes, low nibble first; five 2-bit elements take two bytes, low bits first.
    let cases: [(i32, DType, Vec<u8>, Vec<f64>); 10] = [
        (
            17,
            DType::Float8E4M3FN,
            vec![0x38, 0xb8, 0x7e, 0x01],
            vec![1.0, -1.0, 448.0, 1.0 / 512.0],
        ),
        (
            18,
            DType::Float8E4M3FNUZ,
            vec![0x40, 0x7f, 0x00],
            vec![1.0, 240.0, 0.0],
        ),
        (
            19,
            DType::Float8E5M2,
            vec![0x3c, 0x7b, 0xfc],
            vec![1.0, 57344.0, f64::NEG_INFINITY],
        ),
        (
            20,
            DType::Float8E5M2FNUZ,
            vec![0x40, 0x01],
            vec![1.0, 1.0 / 131_072.0],
        ),
        (
            24,
            DType::Float8E8M0,
            vec![127, 0, 254],
            vec![1.0, 2f64.powi(-127), 2f64.powi(127)],
        ),
        (
            23,
            DType::Float4E2M1,
            vec![0xf2, 0x04],
            vec![1.0, -6.0, 2.0],
        ),
        (22, DType::Int4, vec![0x8f, 0x07], vec![-1.0, -8.0, 7.0]),
        (21, DType::UInt4, vec![0xf0, 0x09], vec![0.0, 15.0, 9.0]),
        (
            26,
            DType::Int2,
            vec![0b00_10_11_01, 0b01],
            vec![1.0, -1.0, -2.0, 0.0, 1.0],
        ),
        (
            25,
            DType::UInt2,
            vec![0b11_10_01_00, 0b10],
            vec![0.0, 1.0, 2.0, 3.0, 2.0],
        ),
    ];
    for (elem_type, dtype, bytes, values) in cases {
        let raw = TensorProto {
            name: Some("t".into()),
            dims: vec![values.len() as i64],
            data_type: Some(elem_type),
            raw_data: Some(bytes.clone().into()),
            ..TensorProto::default()
        };
        let typed = TensorProto {
            raw_data: None,
            int32_data: bytes.iter().map(|&b| i32::from(b)).collect(),
            ..raw.clone()
        };
        for proto in [raw, typed] {
            let t = tensor_of(&proto, DataDir(None)).unwrap();
            assert_eq!((t.dtype(), t.values()), (dtype, values.clone()), "{dtype}");
            let written = proto_of("t", &t);
            assert_eq!(written.raw_data.as_deref(), Some(&bytes[..]), "{dtype}");
            assert_eq!(written.data_type, Some(elem_type));
        }
        // One byte too many is refused by name, with the count the elements need.
        let long = TensorProto {
            raw_data: Some([&bytes[..], &[0]].concat().into()),
            name: Some("t".into()),
            dims: vec![values.len() as i64],
            data_type: Some(elem_type),
            ..TensorProto::default()
        };
        let err = tensor_of(&long, DataDir(None)).unwrap_err().to_string();
        assert!(
            err.contains("`t`") && err.contains("bytes of data"),
            "{err}"
        );
    }
}

#[test]
fn a_dilated_average_pooling_is_written_from_opset_19_and_refused_before() {
    let m = Module::parse(
        "def @main(%x: Tensor[(1, 1, 5, 5), float32]) { nn.avg_pool2d(%x, pool_size=[2, 2], dilation=[2, 2]) }",
    )
    .unwrap();
    let written = export_at(&m, 19).unwrap();
    let pool = &written.graph.as_ref().unwrap().node[0];
    assert_eq!(pool.op_type(), "AveragePool");
    let dilations = pool
        .attribute
        .iter()
        .find(|a| a.name() == "dilations")
        .unwrap();
    assert_eq!(dilations.ints, [2, 2]);
    let err = export_at(&m, 18).unwrap_err().to_string();
    assert!(
        err.contains("dilated average pooling at an opset below 19"),
        "{err}"
    );
}

#[test]
fn a_gelu_decomposition_is_one_gelu_node_from_opset_20() {
    // BERT's GELU as the exporter writes it and as the passes reorder it: `(x · (1 + erf(x /
    // √2))) · ½`, `(x · ½) · (1 + erf(x · 1/√2))` and `x · ((1 + erf(x / √2)) · ½)`; and
    // GPT-2's tanh approximation.
    let m = Module::parse(
        "def @main(%x: Tensor[(2, 3), float32]) {
           %0 = add(erf(divide(%x, 1.4142135f)), 1f);
           %1 = multiply(multiply(%x, %0), 0.5f);
           %2 = add(erf(multiply(%x, 0.70710677f)), 1f);
           %3 = multiply(multiply(%x, 0.5f), %2);
           %4 = add(erf(divide(%x, 1.4142135f)), 1f);
           %5 = multiply(%x, multiply(%4, 0.5f));
           %6 = add(%x, multiply(power(%x, 3f), 0.044715f));
           %7 = add(tanh(multiply(%6, 0.7978846f)), 1f);
           %8 = multiply(multiply(%x, 0.5f), %7);
           (%1, %3, %5, %8)
         }",
    )
    .unwrap();
    let model = export_at(&m, 20).unwrap();
    let g = model.graph.as_ref().unwrap();
    assert_eq!(op_types(g), ["Gelu", "Gelu", "Gelu", "Gelu"]);
    // GPT-2's tanh approximation says so.
    let approximate: Vec<&[u8]> = g
        .node
        .iter()
        .flat_map(|n| &n.attribute)
        .map(|a| a.s())
        .collect();
    assert_eq!(approximate, [b"tanh"]);
    let model_17 = export_at(&m, 17).unwrap();
    assert!(op_types(model_17.graph.as_ref().unwrap()).contains(&"Erf"));
    let back = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    let x = sample_2x3();
    let want = eval_function(&m, "main", vec![x.clone()]).unwrap();
    let got = eval_function(&back.module, "main", vec![x]).unwrap();
    let (want, got) = (want.as_tuple().unwrap(), got.as_tuple().unwrap());
    for (w, g) in want.iter().zip(got) {
        assert_close(w.as_tensor().unwrap(), g.as_tensor().unwrap());
    }
    // A decomposition whose `1 + erf` is read elsewhere stays.
    let m = Module::parse(
        "def @main(%x: Tensor[(2, 3), float32]) {
           %0 = add(erf(divide(%x, 1.4142135f)), 1f);
           (multiply(multiply(%x, %0), 0.5f), %0)
         }",
    )
    .unwrap();
    let model = export_at(&m, 20).unwrap();
    assert!(!op_types(model.graph.as_ref().unwrap()).contains(&"Gelu"));
}

#[test]
fn an_rms_normalisation_written_out_is_one_node_from_opset_23() {
    // LLaMA's: `x · rsqrt(mean(x²) + eps) · scale` over the last axis.
    let m = Module::parse(
        "def @main(%x: Tensor[(2, 4), float32]) {
           %0 = mean(power(%x, 2f), axis=[-1], keepdims=True);
           %1 = multiply(%x, rsqrt(add(%0, 1e-6f)));
           multiply(Tensor[(4), float32]{1, 0.5, 2, -1}, %1)
         }",
    )
    .unwrap();
    let model = export_at(&m, 23).unwrap();
    let g = model.graph.as_ref().unwrap();
    assert_eq!(op_types(g), ["RMSNormalization"]);
    assert_eq!(g.initializer.len(), 1, "only the scale is left");
    let model_22 = export_at(&m, 22).unwrap();
    assert!(op_types(model_22.graph.as_ref().unwrap()).contains(&"ReduceMean"));
    let back = import_bytes(&model.encode_to_vec(), &ImportOptions::default()).unwrap();
    let x = Value::tensor(
        Tensor::from_vec(
            DType::Float32,
            &[2, 4],
            vec![1.0, -2.0, 3.0, 0.5, 4.0, -1.0, 0.25, 2.0],
        )
        .unwrap(),
    );
    let want = eval_function(&m, "main", vec![x.clone()]).unwrap();
    let got = eval_function(&back.module, "main", vec![x]).unwrap();
    assert_close(want.as_tensor().unwrap(), got.as_tensor().unwrap());
    // Over another axis than the last, it stays written out.
    let m = Module::parse(
        "def @main(%x: Tensor[(4, 2), float32]) {
           %0 = mean(power(%x, 2f), axis=[0], keepdims=True);
           multiply(Tensor[(2), float32]{1, 0.5}, multiply(%x, rsqrt(add(%0, 1e-6f))))
         }",
    )
    .unwrap();
    let model = export_at(&m, 23).unwrap();
    assert!(!op_types(model.graph.as_ref().unwrap()).contains(&"RMSNormalization"));
}

/// Whether `got` is `want` up to float32 rounding (a fused operator rounds differently from
/// its decomposition).
fn assert_close(want: &Tensor, got: &Tensor) {
    assert_eq!(want.shape(), got.shape());
    for (a, b) in want.float_values().iter().zip(got.float_values().iter()) {
        assert!((a - b).abs() <= 1e-6 * (1.0 + a.abs()), "{want} vs {got}");
    }
}

/// A (2, 3) float32 input with values of both signs.
fn sample_2x3() -> Value {
    let values = vec![1.0, -2.0, 3.0, 0.5, 4.0, -1.0];
    Value::tensor(Tensor::from_vec(DType::Float32, &[2, 3], values).unwrap())
}
