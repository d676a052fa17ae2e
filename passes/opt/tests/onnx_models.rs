//! ONNX through the pass library and `irpass-opt`: ONNX's light models optimised at `-O3` and
//! written back are valid models with fewer nodes that compute what the input computed (by
//! irpass's interpreter here; ONNX Runtime judges them in `passes/onnx/tests/ort/`); the
//! driver reads a model by its content, writes one by `-o`'s extension, `--emit` or (with
//! neither, to a pipe) in the input's format, prints an
//! import as text, and reports a bad model as the input's error with nothing written.

mod cli_support;
#[path = "../../onnx/tests/support/mod.rs"]
mod onnx_support;

use std::path::{Path, PathBuf};

use cli_support::{o3, opt, text};
use irpass_onnx::{
    ExportOptions, ImportOptions, encode_model, export_module, import_bytes, import_file,
};
use irpass_passes as _;
use irpass_passes::ir::{DType, Module, Tensor, Value, eval_function};

const LIGHT: &[&str] = &[
    "bvlc_alexnet",
    "densenet121",
    "inception_v1",
    "inception_v2",
    "resnet50",
    "shufflenet",
    "squeezenet",
    "vgg19",
    "zfnet512",
];

/// Asserts that `run` exited with `code` and said `needle` on stderr.
fn assert_fails(run: &std::process::Output, code: i32, needle: &str) {
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(code), "{err}");
    assert!(err.contains(needle), "wanted `{needle}` in:\n{err}");
}

fn light(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../onnx/tests/data/light/light_{name}.onnx"))
}

fn inputs(m: &Module) -> Vec<Value> {
    m.get("main")
        .unwrap()
        .param_types()
        .into_iter()
        .map(|t| {
            let shape = t.unwrap().as_tensor().unwrap().static_shape().unwrap();
            let n: usize = shape.iter().product();
            let values = (0..n)
                .map(|i| ((i * 7919) % 1000) as f64 / 1000.0)
                .collect();
            Value::tensor(Tensor::from_vec(DType::Float32, &shape, values).unwrap())
        })
        .collect()
}

#[test]
fn every_light_model_optimised_at_o3_is_written_with_fewer_nodes_and_reads_back() {
    for name in LIGHT {
        let path = light(name);
        let imported = import_file(&path, &ImportOptions::default()).unwrap();
        let nodes_in = irpass_onnx::decode_model(&std::fs::read(&path).unwrap())
            .unwrap()
            .graph
            .unwrap()
            .node
            .len();
        let out = o3(imported.module);
        let model = export_module(&out, None, &ExportOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let g = model.graph.as_ref().unwrap();
        assert!(
            g.node.len() < nodes_in,
            "{name}: {} nodes from {nodes_in}",
            g.node.len()
        );
        assert_eq!(
            model.opset_import[0].version,
            Some(9),
            "{name}: the input's opset is kept"
        );
        let again = import_bytes(&encode_model(&model), &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{name}: the written model does not read back: {e}"));
        again
            .module
            .infer_types()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn an_optimised_light_model_computes_what_the_input_computed() {
    for name in ["squeezenet", "inception_v1"] {
        let imported = import_file(&light(name), &ImportOptions::default()).unwrap();
        let args = inputs(&imported.module);
        let expected = eval_function(&imported.module, "main", args.clone()).unwrap();
        let model = export_module(&o3(imported.module), None, &ExportOptions::default()).unwrap();
        let again = import_bytes(&encode_model(&model), &ImportOptions::default()).unwrap();
        let got = eval_function(&again.module, "main", args).unwrap();
        assert!(
            got.all_close(&expected, 1e-4, 1e-6),
            "{name}: {got} vs {expected}"
        );
    }
}

/// The operators of `model`'s graph and of its functions, in order.
fn written_ops(model: &irpass_onnx::proto::ModelProto) -> Vec<String> {
    let graph = model.graph.iter().flat_map(|g| &g.node);
    let functions = model.functions.iter().flat_map(|f| &f.node);
    graph
        .chain(functions)
        .map(|n| n.op_type().to_string())
        .collect()
}

#[test]
fn a_layer_norm_written_decomposed_is_one_layer_normalization_after_o3_at_opset_17() {
    let m = Module::parse(
        "def @main(%x: Tensor[(2, 3, 8), float32]) {
           nn.layer_norm(%x, Tensor[(8), float32]{1, 2, 3, 4, 5, 6, 7, 8}, Tensor[(8), float32]{0, 1, 0, 1, 0, 1, 0, 1})
         }",
    )
    .unwrap();
    let at = |opset| ExportOptions {
        opset: Some(opset),
        ..ExportOptions::default()
    };
    // As an exporter below opset 17 writes it: nine nodes.
    let decomposed = export_module(&m, None, &at(13)).unwrap();
    assert_eq!(written_ops(&decomposed).len(), 9);
    let imported = import_bytes(&encode_model(&decomposed), &ImportOptions::default()).unwrap();
    let args = inputs(&imported.module);
    let expected = eval_function(&imported.module, "main", args.clone()).unwrap();
    let model = export_module(&o3(imported.module), None, &at(17)).unwrap();
    assert_eq!(written_ops(&model), ["LayerNormalization"]);
    let again = import_bytes(&encode_model(&model), &ImportOptions::default()).unwrap();
    let got = eval_function(&again.module, "main", args).unwrap();
    assert!(got.all_close(&expected, 1e-5, 1e-6), "{got} vs {expected}");
}

#[test]
fn the_driver_reads_a_model_and_writes_one_by_the_output_extension() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sq.opt.onnx");
    let input = light("squeezenet");
    let run = opt(&["-O3", input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let written = std::fs::read(&out).unwrap();
    let model = irpass_onnx::decode_model(&written).unwrap();
    assert_eq!(model.producer_name.as_deref(), Some("irpass"));
    let g = model.graph.unwrap();
    assert_eq!(g.input[0].name(), "data_0");
    assert_eq!(g.output[0].name(), "softmaxout_1");
    // `--emit=onnx` writes the same bytes to stdout, and so does no `-o` at all when stdout is
    // not a terminal (an ONNX input is written back as ONNX; on a terminal it is refused
    // with what to give).
    let run = opt(&["-O3", input.to_str().unwrap(), "--emit=onnx"]);
    assert!(run.status.success());
    assert_eq!(run.stdout, written);
    let run = opt(&["-O3", input.to_str().unwrap()]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(run.stdout, written);
}

#[test]
fn an_onnx_result_is_not_poured_into_a_terminal() {
    // `script` (util-linux, essential on Debian) runs the command with a terminal as stdout.
    let input = light("squeezenet");
    let command = format!(
        "{} -O3 {}",
        env!("CARGO_BIN_EXE_irpass-opt"),
        input.to_str().unwrap()
    );
    let run = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("`script` (util-linux) runs a command on a terminal");
    let shown = text(&run.stdout);
    assert_eq!(run.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("is a model in the ONNX format and no `-o` is given: give `-o OUT.onnx`"),
        "{shown}"
    );
    assert!(
        shown.len() < 1000,
        "{} bytes reached the terminal",
        shown.len()
    );
}

#[test]
fn the_driver_prints_an_import_as_text() {
    let run = opt(&[
        "-p",
        "InferType",
        light("resnet50").to_str().unwrap(),
        "--emit=text",
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let out = text(&run.stdout);
    assert!(
        out.contains("def @main(%gpu_0_data_0: Tensor[(1, 3, 224, 224), float32]"),
        "{out}"
    );
    assert!(out.contains("onnx_outputs=[\"gpu_0/softmax_1\"]"), "{out}");
    assert!(out.contains("nn.batch_norm"), "{out}");
}

#[test]
fn input_shape_fixes_an_inputs_shape_and_its_misuse_is_a_clear_error() {
    let model = light("squeezenet");
    let model = model.to_str().unwrap();
    let run = opt(&[
        "-p",
        "InferType",
        model,
        "--emit=text",
        "--input-shape",
        "data_0:2,3,224,224",
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let out = text(&run.stdout);
    assert!(
        out.contains("def @main(%data_0: Tensor[(2, 3, 224, 224), float32]"),
        "{out}"
    );
    // (InferType succeeded: the batch of 2 types through the whole network.)

    let run = opt(&["-O3", model, "--input-shape", "data_0"]);
    assert_fails(&run, 2, "expected NAME:D1,D2,...");
    let run = opt(&["-O3", model, "--input-shape", "nope:1,3"]);
    assert_fails(
        &run,
        1,
        "`nope`, which is not a graph input (inputs: data_0)",
    );
    // Text carries its own types.
    let run = opt(&["-O3", "--input-shape", "x:1"]);
    assert_fails(&run, 2, "`--input-shape` applies to a model format (onnx)");
}

#[test]
fn a_bad_model_is_the_inputs_error_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.onnx");
    let good = std::fs::read(light("squeezenet")).unwrap();
    std::fs::write(&bad, &good[..good.len() / 3]).unwrap();
    let out = dir.path().join("out.onnx");
    let run = opt(&["-O3", bad.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    let err = text(&run.stderr);
    assert!(err.contains("not an ONNX model"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists());
    // Bytes that are not text and not a model: the same, without a file name to go by.
    let run = opt_stdin(&[0xff, 0x00, 0x13, 0x37, 0x08]);
    assert_fails(&run, 1, "not an ONNX model");
}

#[test]
fn the_driver_lists_every_unsupported_operator_and_writes_nothing() {
    use onnx_support::{model, node, value};
    use prost::Message as _;
    // Operators of another domain, with outputs whose types the model does not declare
    // (so they cannot be kept opaque either).
    let plugin = |op: &str, name: &str, input: &str, output: &str| {
        let mut n = node(op, name, &[input], &[output]);
        n.domain = Some("com.example".into());
        n
    };
    let mut model = model(
        17,
        vec![
            plugin("Unpool", "unpool_0", "x", "a"),
            node("Relu", "r", &["a"], &["b"]),
            plugin("Vectorize", "tfidf_1", "b", "y"),
        ],
        vec![value("x", &[1, 4, 3])],
        Vec::new(),
        Vec::new(),
    );
    model
        .opset_import
        .push(irpass_onnx::proto::OperatorSetIdProto {
            domain: Some("com.example".into()),
            version: Some(1),
        });
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.onnx");
    std::fs::write(&input, model.encode_to_vec()).unwrap();
    let out = dir.path().join("out.onnx");
    let run = opt(&["-O3", input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    let err = text(&run.stderr);
    assert!(
        err.contains("com.example.Unpool (opset 17) at node `unpool_0`")
            && err.contains("com.example.Vectorize (opset 17) at node `tfidf_1`"),
        "{err}"
    );
    assert!(!out.exists());
}

fn opt_stdin(bytes: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cli_support::irpass_opt()
        .args(["-O3", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    child.wait_with_output().unwrap()
}

/// A model of one `Relu` then a `Mul` by a constant of `n` floats (`n * 4` bytes), its input
/// of shape `[batch, n]` with `batch` a symbolic dimension when `None`.
/// `relu(x) * w` on `x: (batch, n)`; `batch` is a size, a name, or `?` for neither.
fn relu_mul_model(n: usize, batch: &str) -> Vec<u8> {
    use irpass_onnx::proto::tensor_shape_proto::{Dimension, dimension};
    use irpass_onnx::proto::{
        GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorShapeProto, TypeProto,
        ValueInfoProto, type_proto,
    };
    use prost::Message as _;
    let dim = |v: dimension::Value| Dimension {
        value: Some(v),
        ..Dimension::default()
    };
    let batch = match batch.parse::<i64>() {
        Ok(b) => dim(dimension::Value::DimValue(b)),
        Err(_) if batch == "?" => Dimension::default(),
        Err(_) => dim(dimension::Value::DimParam(batch.into())),
    };
    let value = |name: &str| ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(1),
                shape: Some(TensorShapeProto {
                    dim: vec![batch.clone(), dim(dimension::Value::DimValue(n as i64))],
                }),
            })),
            ..TypeProto::default()
        }),
        ..ValueInfoProto::default()
    };
    let node = |op: &str, inputs: &[&str], out: &str| NodeProto {
        op_type: Some(op.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![out.into()],
        ..NodeProto::default()
    };
    let weights = Tensor::from_vec(
        DType::Float32,
        &[n],
        (0..n).map(|i| i as f64 / n as f64).collect(),
    )
    .unwrap();
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        graph: Some(GraphProto {
            node: vec![node("Relu", &["x"], "r"), node("Mul", &["r", "w"], "y")],
            initializer: vec![irpass_onnx::proto_of("w", &weights)],
            input: vec![value("x")],
            output: vec![value("y")],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    }
    .encode_to_vec()
}

#[test]
fn opset_writes_the_model_at_the_opset_asked_for_and_only_for_a_model_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sq13.onnx");
    let input = light("squeezenet");
    let input = input.to_str().unwrap();
    let run = opt(&["-O3", input, "-o", out.to_str().unwrap(), "--opset", "13"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let model = irpass_onnx::decode_model(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(model.opset_import[0].version, Some(13));
    // What it computes is unchanged (the input is opset 9).
    let before = import_file(&light("squeezenet"), &ImportOptions::default())
        .unwrap()
        .module;
    let after = import_file(&out, &ImportOptions::default()).unwrap().module;
    let x = inputs(&before);
    let (a, b) = (
        eval_function(&before, "main", x.clone()).unwrap(),
        eval_function(&after, "main", x).unwrap(),
    );
    assert!(a.all_close(&b, 1e-4, 1e-5));

    let run = opt(&["-O3", input, "-o", out.to_str().unwrap(), "--opset", "99"]);
    assert_fails(&run, 1, "opset 99 is not supported");
    // Text has no opset.
    let run = opt(&["-O3", input, "--emit=text", "--opset", "13"]);
    assert_fails(
        &run,
        2,
        "`--opset` applies to a model format (onnx); the output is text",
    );
}

#[test]
fn external_data_moves_large_tensors_beside_the_model_and_the_model_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.onnx");
    std::fs::write(&input, relu_mul_model(600, "2")).unwrap();
    let out = dir.path().join("m.opt.onnx");
    let run = opt(&[
        "-O3",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--external-data",
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let data = dir.path().join("m.opt.onnx.data");
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 2400);
    let model = irpass_onnx::decode_model(&std::fs::read(&out).unwrap()).unwrap();
    let w = &model.graph.unwrap().initializer[0];
    assert!(w.raw_data.is_none());
    let location = w
        .external_data
        .iter()
        .find(|e| e.key.as_deref() == Some("location"));
    assert_eq!(
        location.and_then(|e| e.value.as_deref()),
        Some("m.opt.onnx.data")
    );
    // Read back from beside the model, it computes what the input computed.
    let before = import_file(&input, &ImportOptions::default())
        .unwrap()
        .module;
    let after = import_file(&out, &ImportOptions::default()).unwrap().module;
    let x = inputs(&before);
    assert!(
        eval_function(&before, "main", x.clone())
            .unwrap()
            .bit_eq(&eval_function(&after, "main", x).unwrap())
    );

    // Below the threshold nothing moves, and no data file is written.
    let out2 = dir.path().join("small.onnx");
    let run = opt(&[
        "-O3",
        input.to_str().unwrap(),
        "-o",
        out2.to_str().unwrap(),
        "--external-data=4096",
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(!dir.path().join("small.onnx.data").exists());
    // A stream has nothing to write a data file beside.
    let run = opt(&[
        "-O3",
        input.to_str().unwrap(),
        "--emit=onnx",
        "--external-data",
    ]);
    assert_fails(&run, 2, "needs `-o FILE`");
}

#[test]
fn weights_mapped_from_a_file_are_written_out_whole_by_the_kernel_and_read_back_equal() {
    // A 2.4 MB weight: the input file is mapped, not read, and the weight's bytes go to the
    // data file file to file; read back (mapped again, from the data file), they go into a
    // model without external data the same way. Each step keeps every byte.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.onnx");
    std::fs::write(&input, relu_mul_model(600_000, "2")).unwrap();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let outside = dir.path().join("outside.onnx");
    let run = opt(&[
        "-O3",
        &path(&input),
        "-o",
        &path(&outside),
        "--external-data",
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let inside = dir.path().join("inside.onnx");
    let run = opt(&["-O3", &path(&outside), "-o", &path(&inside)]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let weight = |file: &Path| {
        let imported = import_file(file, &ImportOptions::default()).unwrap();
        let model = export_module(&imported.module, None, &ExportOptions::default()).unwrap();
        model.graph.unwrap().initializer[0]
            .raw_data
            .clone()
            .unwrap()
    };
    let original = weight(&input);
    assert_eq!(original.len(), 2_400_000);
    assert_eq!(weight(&outside), original);
    assert_eq!(weight(&inside), original);
    // The data file holds the weight's bytes as they were.
    let data = std::fs::read(dir.path().join("outside.onnx.data")).unwrap();
    assert_eq!(&data[..original.len()], &original[..]);
}

#[test]
fn check_runs_input_and_result_on_random_inputs_and_needs_fixed_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.onnx");
    std::fs::write(&input, relu_mul_model(8, "3")).unwrap();
    let run = opt(&[
        "-O3",
        input.to_str().unwrap(),
        "--emit=text",
        "--check",
        "3",
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let err = text(&run.stderr);
    assert!(
        err.contains(
            "`--check 3`: 3 random input sets give the same outputs (72 elements compared"
        ),
        "{err}"
    );
    // A named batch takes several sizes, one per input set.
    std::fs::write(&input, relu_mul_model(8, "batch")).unwrap();
    let out = dir.path().join("out.onnx");
    // `-O3 INPUT -o OUT --check N`, then what else is given.
    let check = |n: &str, more: &[&str]| {
        let mut args = vec!["-O3", input.to_str().unwrap(), "-o", out.to_str().unwrap()];
        args.extend(["--check", n]);
        args.extend(more);
        opt(&args)
    };
    let run = check("3", &[]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    // Batches 1, 2 and 3 of 8 elements each.
    let err = text(&run.stderr);
    assert!(err.contains("(48 elements compared"), "{err}");
    std::fs::remove_file(&out).unwrap();
    // A size with neither a value nor a name has no random input until `--input-shape`.
    std::fs::write(&input, relu_mul_model(8, "?")).unwrap();
    let run = check("1", &[]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    let err = text(&run.stderr);
    assert!(
        err.contains("parameter `%x` has a dimension that is neither a size nor a name"),
        "{err}"
    );
    assert!(err.contains("`--input-shape x:D1,D2,...`"), "{err}");
    assert!(!out.exists());
    let run = check("1", &["--input-shape", "x:5,8"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(out.exists());
    let run = opt(&["-O3", input.to_str().unwrap(), "--check", "0"]);
    assert_eq!(run.status.code(), Some(2));
}
