//! Runs an ONNX model in irpass's reference interpreter: the model is imported as for
//! optimising, `@main` is evaluated on the given inputs, and each output is written as a
//! `TensorProto` file, the form of ONNX's backend test data.
//!
//! ```text
//! cargo run --release -p irpass-onnx --example run_model -- MODEL.onnx OUT_DIR [INPUT.pb ...]
//! ```
//!
//! The inputs are `TensorProto` files (`input_0.pb`, ...), matched to the graph's inputs by the
//! name they carry, else by position; the outputs are written as `OUT_DIR/output_K.pb` in the
//! graph's order. Exit status: 0 when every output was written, 1 when the model does not
//! import, 3 when it does not run (the error on stderr), 2 for bad arguments.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use irpass_ir::Value;
use irpass_onnx::proto::TensorProto;
use irpass_onnx::{DataDir, ImportOptions, Imported, import_file, proto_of, tensor_of};
use prost::Message as _;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, out, inputs @ ..] = args.as_slice() else {
        eprintln!("usage: run_model MODEL.onnx OUT_DIR [INPUT.pb ...]");
        return ExitCode::from(2);
    };
    let imported = match import_file(Path::new(model), &ImportOptions::default()) {
        Ok(imported) => imported,
        Err(e) => {
            eprintln!("run_model: {model}: {e}");
            return ExitCode::from(1);
        }
    };
    match run(&imported, Path::new(out), inputs) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("run_model: {e}");
            ExitCode::from(3)
        }
    }
}

fn run(imported: &Imported, out: &Path, inputs: &[String]) -> Result<(), String> {
    let names = &imported.info.inputs;
    let mut args: Vec<Option<Value>> = vec![None; names.len()];
    for (position, file) in inputs.iter().enumerate() {
        let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
        let proto = TensorProto::decode(bytes.as_slice())
            .map_err(|e| format!("{file}: not a TensorProto: {e}"))?;
        let slot = proto
            .name
            .as_deref()
            .and_then(|n| names.iter().position(|m| m == n))
            .unwrap_or(position);
        let tensor = tensor_of(&proto, DataDir(None)).map_err(|e| format!("{file}: {e}"))?;
        match args.get_mut(slot) {
            Some(arg) => *arg = Some(Value::Tensor(Arc::new(tensor))),
            None => return Err(format!("{file}: the model has {} inputs", names.len())),
        }
    }
    let args = args
        .into_iter()
        .zip(names)
        .map(|(a, name)| a.ok_or_else(|| format!("no value for input `{name}`")))
        .collect::<Result<Vec<_>, _>>()?;
    let result = irpass_ir::eval::eval_function(&imported.module, "main", args)
        .map_err(|e| e.to_string())?;
    let outputs = match (result, imported.info.outputs.len()) {
        (Value::Tuple(values), n) if n != 1 => values,
        (one, _) => vec![one],
    };
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for (k, (value, name)) in outputs.iter().zip(&imported.info.outputs).enumerate() {
        let Value::Tensor(t) = value else {
            return Err(format!("output `{name}` is not a tensor"));
        };
        let path: PathBuf = out.join(format!("output_{k}.pb"));
        std::fs::write(&path, proto_of(name, t).encode_to_vec())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
