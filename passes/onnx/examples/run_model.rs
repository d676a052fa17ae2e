//! Runs an ONNX model in irpass's reference interpreter: the model is imported as for
//! optimising, `@main` is evaluated on the given inputs, and each output is written as a
//! `TensorProto` file, the form of ONNX's backend test data.
//!
//! ```text
//! cargo run --release -p irpass-onnx --example run_model -- MODEL.onnx OUT_DIR [INPUT.pb ...]
//! ```
//!
//! The inputs are `TensorProto` files (`input_0.pb`, ...; of numbers or strings), or
//! `SequenceProto` (`OptionalProto`) files for an input of a sequence (optional) type, matched
//! to the graph's inputs by the name they carry, else by position; the outputs are written as
//! `OUT_DIR/output_K.pb` in the graph's order, each in the form of its type. Exit status:
//! 0 when every output was written, 1 when the model does not import, 3 when it does not run
//! (the error on stderr), 2 for bad arguments.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use irpass_ir::{Type, Value};
use irpass_onnx::proto::TensorProto;
use irpass_onnx::proto::tensor_proto::DataType;
use irpass_onnx::{
    DataDir, ImportOptions, Imported, Optional, Strings, import_file, proto_of, tensor_of,
};
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

/// ONNX's `OptionalProto` (`onnx-data.proto`), the fields of an optional tensor or sequence.
#[derive(Clone, PartialEq, prost::Message)]
struct OptionalProto {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    /// 1: a tensor, 3: a sequence.
    #[prost(int32, optional, tag = "2")]
    elem_type: Option<i32>,
    #[prost(message, optional, tag = "3")]
    tensor_value: Option<TensorProto>,
    #[prost(message, optional, tag = "5")]
    sequence_value: Option<SequenceProto>,
}

/// What an input or output of type `ty` is in ONNX's data files: the text of an opaque type
/// (`seq(...)`, `optional(...)`) tells.
fn kind(ty: Option<&Type>) -> &'static str {
    match ty {
        Some(Type::Opaque(name)) if name.as_str().starts_with("seq(") => "sequence",
        Some(Type::Opaque(name)) if name.as_str().starts_with("optional(") => "optional",
        _ => "tensor",
    }
}

/// The value a `TensorProto` holds: an IR tensor, or irpass-onnx's strings.
fn tensor_value(proto: &TensorProto) -> Result<Value, String> {
    if proto.data_type == Some(DataType::String as i32) {
        let s = Strings::of_proto(proto).map_err(|e| e.to_string())?;
        return Ok(Value::opaque(s));
    }
    let t = tensor_of(proto, DataDir(None)).map_err(|e| e.to_string())?;
    Ok(Value::Tensor(Arc::new(t)))
}

/// The value a `SequenceProto` of tensors holds (a tuple of them).
fn sequence_value(proto: &SequenceProto) -> Result<Value, String> {
    if proto.elem_type.unwrap_or(1) != 1 {
        return Err("a sequence of other values than tensors".into());
    }
    let items = proto
        .tensor_values
        .iter()
        .map(tensor_value)
        .collect::<Result<_, _>>()?;
    Ok(Value::Tuple(items))
}

/// The value in `file` for an input of type `ty`, and the name it carries.
fn read_value(file: &str, ty: Option<&Type>) -> Result<(Option<String>, Value), String> {
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let bad = |e: String| format!("{file}: {e}");
    match kind(ty) {
        "sequence" => {
            let proto = SequenceProto::decode(bytes.as_slice())
                .map_err(|e| bad(format!("not a SequenceProto: {e}")))?;
            Ok((proto.name.clone(), sequence_value(&proto).map_err(bad)?))
        }
        "optional" => {
            let proto = OptionalProto::decode(bytes.as_slice())
                .map_err(|e| bad(format!("not an OptionalProto: {e}")))?;
            let inner = match (&proto.tensor_value, &proto.sequence_value) {
                (Some(t), _) => Some(tensor_value(t).map_err(bad)?),
                (None, Some(s)) => Some(sequence_value(s).map_err(bad)?),
                (None, None) => None,
            };
            Ok((proto.name, Value::opaque(Optional(inner))))
        }
        _ => {
            let proto = TensorProto::decode(bytes.as_slice())
                .map_err(|e| bad(format!("not a TensorProto: {e}")))?;
            Ok((proto.name.clone(), tensor_value(&proto).map_err(bad)?))
        }
    }
}

/// The `TensorProto` of a tensor value (of numbers or strings).
fn tensor_proto(name: &str, v: &Value) -> Result<TensorProto, String> {
    match v {
        Value::Tensor(t) => Ok(proto_of(name, t)),
        _ => match v.as_opaque::<Strings>() {
            Some(s) => Ok(s.proto(name)),
            None => Err(format!("`{v}` where a tensor is expected")),
        },
    }
}

/// The `SequenceProto` of a sequence (a tuple of tensors).
fn sequence_proto(name: &str, items: &[Value]) -> Result<SequenceProto, String> {
    Ok(SequenceProto {
        name: Some(name.to_string()),
        elem_type: Some(1),
        tensor_values: items
            .iter()
            .map(|v| tensor_proto("", v))
            .collect::<Result<_, _>>()?,
    })
}

/// The bytes of output `name`'s value, of type `ty`.
fn encode(name: &str, value: &Value, ty: Option<&Type>) -> Result<Vec<u8>, String> {
    Ok(match (kind(ty), value) {
        ("sequence", Value::Tuple(items)) => sequence_proto(name, items)?.encode_to_vec(),
        ("optional", v) => {
            let inner = v
                .as_opaque::<Optional>()
                .ok_or_else(|| format!("`{v}` where an optional is expected"))?;
            let in_sequence = ty.is_some_and(|t| t.to_string().contains("optional(seq("));
            let mut proto = OptionalProto {
                name: Some(name.to_string()),
                elem_type: Some(if in_sequence { 3 } else { 1 }),
                ..OptionalProto::default()
            };
            match &inner.0 {
                Some(Value::Tuple(items)) => {
                    proto.sequence_value = Some(sequence_proto("", items)?)
                }
                Some(t) => proto.tensor_value = Some(tensor_proto("", t)?),
                None => {}
            }
            proto.encode_to_vec()
        }
        (_, v) => tensor_proto(name, v)?.encode_to_vec(),
    })
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
        let ty = match &signature.ret {
            Type::Tuple(fields) if outputs.len() != 1 => fields.get(k),
            one => Some(one),
        };
        let bytes = encode(name, value, ty).map_err(|e| format!("output `{name}`: {e}"))?;
        let path: PathBuf = out.join(format!("output_{k}.pb"));
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
