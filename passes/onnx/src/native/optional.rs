//! The optional operators (versions 15 and 18): an optional is a value of an opaque type
//! (`optional(tensor(float)[2])`) and, in the interpreter, an [`Optional`]. The types of
//! their outputs are the ones the model declares or the importer infers
//! (`import/sequence_types.rs`). `Optional`'s `type` attribute (a type, which the IR's
//! attributes do not hold) is not kept: it is the type of the output, and is written from it.

use irpass_ir::op::AttrReader;
use irpass_ir::{DType, Tensor, Type, Value};

use super::{Args, native};
use crate::optional::Optional;

native! {
    /// ONNX `Optional`: an optional holding input 0, or an empty one where it is left out.
    "Optional" {
        versions: &[15],
        attrs: [],
        value_rel: declared,
        value_kernel: make,
    }
}

native! {
    /// ONNX `OptionalHasElement`: whether input 0 holds a value (an optional with one, a
    /// tensor or a sequence: true; an empty optional or no input: false).
    "OptionalHasElement" {
        versions: &[15, 18],
        attrs: [],
        value_rel: has_rel,
        value_kernel: has,
    }
}

native! {
    /// ONNX `OptionalGetElement`: the value an optional holds (an error where it is empty); a
    /// tensor or a sequence itself.
    "OptionalGetElement" {
        versions: &[15, 18],
        attrs: [],
        value_rel: declared,
        value_kernel: get,
    }
}

/// Output 0's declared or inferred type.
fn declared(a: &Args<'_, Type>, _: &AttrReader<'_>) -> Result<Vec<Type>, String> {
    match a.declared_type(0) {
        Some(t) => Ok(vec![t.clone()]),
        None => Err(format!("`{}`: the type of its output is not known", a.op())),
    }
}

fn has_rel(_: &Args<'_, Type>, _: &AttrReader<'_>) -> Result<Vec<Type>, String> {
    Ok(vec![Type::scalar(DType::Bool)])
}

fn make(a: &Args<'_, Value>, _: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    Ok(vec![Value::opaque(Optional(a.opt(0).cloned()))])
}

fn has(a: &Args<'_, Value>, _: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    let holds = match a.opt(0) {
        None => false,
        Some(v) => v.as_opaque::<Optional>().is_none_or(|o| o.0.is_some()),
    };
    let t = Tensor::from_bool(ndarray::ArrayD::from_elem(ndarray::IxDyn(&[]), holds));
    Ok(vec![Value::tensor(t)])
}

fn get(a: &Args<'_, Value>, _: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    let v = a.get(0)?;
    match v.as_opaque::<Optional>() {
        Some(Optional(Some(inner))) => Ok(vec![inner.clone()]),
        Some(Optional(None)) => Err("`OptionalGetElement` of an empty optional".into()),
        None => Ok(vec![v.clone()]),
    }
}
