//! Runs an ONNX model in irpass's reference interpreter: the model is imported as for
//! optimising, `@main` is evaluated on the given inputs, and each output is written as a
//! `TensorProto` file, the form of ONNX's backend test data.
//!
//! ```text
//! cargo run --release -p irpass-onnx --example run_model -- MODEL.onnx OUT_DIR [INPUT.pb ...]
//! ```
//!
//! The inputs are `TensorProto` files (`input_0.pb`, ...; of numbers or strings), or
//! `SequenceProto` files of tensors for an input of a sequence type, matched to the graph's
//! inputs by the name they carry, else by position; the outputs are written as
//! `OUT_DIR/output_K.pb` in the graph's order (a sequence as a `SequenceProto`). Exit status:
//! 0 when every output was written, 1 when the model does not import, 3 when it does not run
//! (the error on stderr), 2 for bad arguments.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use irpass_ir::{Type, Value};
use irpass_onnx::proto::TensorProto;
use irpass_onnx::proto::tensor_proto::DataType;
use irpass_onnx::{DataDir, ImportOptions, Imported, Strings, import_file, proto_of, tensor_of};
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

/// ONNX's `SequenceProto` (`onnx-data.proto`), the fields of a sequence of tensors.
#[derive(Clone, PartialEq, prost::Message)]
struct SequenceProto {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    /// 1: tensors.
    #[prost(int32, optional, tag = "2")]
    elem_type: Option<i32>,
    #[prost(message, repeated, tag = "3")]
    tensor_values: Vec<TensorProto>,
}

/// Whether `ty` is a sequence's (an opaque type of the IR named `seq(...)`).
fn is_sequence(ty: &Type) -> bool {
    matches!(ty, Type::Opaque(name) if name.as_str().starts_with("seq("))
}

/// The value in `file` for an input of type `ty`, and the name it carries.
fn read_value(file: &str, ty: Option<&Type>) -> Result<(Option<String>, Value), String> {
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let tensor = |proto: &TensorProto| -> Result<Value, String> {
        if proto.data_type == Some(DataType::String as i32) {
            let s = Strings::of_proto(proto).map_err(|e| format!("{file}: {e}"))?;
            return Ok(Value::opaque(s));
        }
        let t = tensor_of(proto, DataDir(None)).map_err(|e| format!("{file}: {e}"))?;
        Ok(Value::Tensor(Arc::new(t)))
    };
    if ty.is_some_and(is_sequence) {
        let proto = SequenceProto::decode(bytes.as_slice())
            .map_err(|e| format!("{file}: not a SequenceProto: {e}"))?;
        if proto.elem_type.unwrap_or(1) != 1 {
            return Err(format!("{file}: a sequence of other values than tensors"));
        }
        let items = proto
            .tensor_values
            .iter()
            .map(tensor)
            .collect::<Result<_, _>>()?;
        return Ok((proto.name, Value::Tuple(items)));
    }
    let proto = TensorProto::decode(bytes.as_slice())
        .map_err(|e| format!("{file}: not a TensorProto: {e}"))?;
    Ok((proto.name.clone(), tensor(&proto)?))
}

fn run(imported: &Imported, out: &Path, inputs: &[String]) -> Result<(), String> {
    let names = &imported.info.inputs;
    imported.module.infer_types().map_err(|e| e.to_string())?;
    let signature = imported
        .module
        .get("main")
        .and_then(|f| f.function_type())
        .ok_or("the model has no typed @main")?;
    let Type::Func(signature) = signature else {
        return Err("@main is not a function".into());
    };
    let mut args: Vec<Option<Value>> = vec![None; names.len()];
    for (position, file) in inputs.iter().enumerate() {
        // The file's own name places it where it names an input; the type of the input at
        // its position tells how to read it.
        let (name, value) = read_value(file, signature.params.get(position))?;
        let slot = name
            .as_deref()
            .and_then(|n| names.iter().position(|m| m == n))
            .unwrap_or(position);
        match args.get_mut(slot) {
            Some(arg) => *arg = Some(value),
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
        let bytes = match value {
            Value::Tensor(t) => proto_of(name, t).encode_to_vec(),
            Value::Tuple(items) => {
                let tensor_values = items
                    .iter()
                    .map(|v| match v {
                        Value::Tensor(t) => Ok(proto_of("", t)),
                        _ => Err(format!(
                            "output `{name}` is a sequence of other values than tensors"
                        )),
                    })
                    .collect::<Result<_, String>>()?;
                SequenceProto {
                    name: Some(name.clone()),
                    elem_type: Some(1),
                    tensor_values,
                }
                .encode_to_vec()
            }
            Value::Closure(_) => return Err(format!("output `{name}` is a function")),
            Value::Opaque(v) => match value.as_opaque::<Strings>() {
                Some(s) => s.proto(name).encode_to_vec(),
                None => return Err(format!("output `{name}` is `{v}`, which has no proto form")),
            },
        };
        let path: PathBuf = out.join(format!("output_{k}.pb"));
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
