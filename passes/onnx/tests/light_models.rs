//! ONNX's own models (`onnx/backend/test/data/light/`, copied in `tests/data/light/`): each
//! imports, and the interpreter reproduces the output ONNX ships beside it (computed by ONNX's
//! reference evaluator on the input ONNX's test runner makes: `arange(n) / n` in the input's
//! shape), within ONNX's own tolerance for these models.

use std::path::PathBuf;

use irpass_ir::{DType, Tensor, Value, eval_function};
use irpass_onnx::{DataDir, ImportOptions, decode_model, import_file, tensor_of};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/light/light_{name}"))
}

/// ONNX's test input for a parameter: `arange(n) / n` in float32.
fn input(shape: &[usize]) -> Value {
    let n: usize = shape.iter().product();
    let values = (0..n).map(|i| (i as f32 / n as f32) as f64).collect();
    Value::tensor(Tensor::from_vec(DType::Float32, shape, values).unwrap())
}

fn check(name: &str, rtol: f64) {
    let imported = import_file(&data(&format!("{name}.onnx")), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let m = imported.module;
    m.infer_types().unwrap_or_else(|e| panic!("{name}: {e}"));
    let main = m.get("main").unwrap();
    let args: Vec<Value> = main
        .param_types()
        .into_iter()
        .map(|t| input(&t.unwrap().as_tensor().unwrap().static_shape().unwrap()))
        .collect();
    let got = eval_function(&m, "main", args).unwrap_or_else(|e| panic!("{name}: {e}"));
    let bytes = std::fs::read(data(&format!("{name}_output_0.pb"))).unwrap();
    let expected = tensor_of(
        &prost::Message::decode(bytes.as_slice()).unwrap(),
        DataDir(None),
    )
    .unwrap();
    let got = got.as_tensor().expect("one output");
    assert_eq!(got.shape(), expected.shape(), "{name}");
    let (g, e) = (got.values(), expected.values());
    let worst = g
        .iter()
        .zip(&e)
        .map(|(g, e)| (g - e).abs() / (1e-7 + rtol * e.abs()))
        .fold(0.0f64, f64::max);
    assert!(
        worst <= 1.0,
        "{name}: an element is {worst:.2} times ONNX's tolerance away"
    );
    // Not a vacuous comparison: the output is a probability distribution with spread.
    assert!(e.iter().any(|&v| v > 0.0), "{name}");
    let _ = decode_model;
}

macro_rules! light {
    ($($test:ident: $name:literal, $rtol:expr;)*) => {
        $(
            #[test]
            fn $test() {
                check($name, $rtol);
            }
        )*
    };
}

light! {
    alexnet_reproduces_onnx_output: "bvlc_alexnet", 1e-3;
    densenet121_reproduces_onnx_output: "densenet121", 2e-3;
    inception_v1_reproduces_onnx_output: "inception_v1", 1e-3;
    inception_v2_reproduces_onnx_output: "inception_v2", 1e-3;
    resnet50_reproduces_onnx_output: "resnet50", 1e-3;
    shufflenet_reproduces_onnx_output: "shufflenet", 1e-3;
    squeezenet_reproduces_onnx_output: "squeezenet", 1e-3;
    vgg19_reproduces_onnx_output: "vgg19", 1e-3;
    zfnet512_reproduces_onnx_output: "zfnet512", 1e-3;
}
