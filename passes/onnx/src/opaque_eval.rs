//! The interpreter's reading of the opaque nodes it can run anyway: operators of the default
//! domain whose result's shape depends on their inputs' values (`Range`, `Expand`,
//! `ConstantOfShape`), kept opaque when those values are not known at import (a dynamic
//! sequence length), computed here as ONNX defines them, so that a model with symbolic sizes
//! still runs in the interpreter (`--check`). Any other opaque node is not run.

use std::sync::Arc;

use irpass_ir::op::{Op, broadcast_concrete};
use irpass_ir::{AttrValue, Attrs, DType, Tensor, Value};

use crate::proto::AttributeProto;
use crate::tensor::{DataDir, tensor_of};

/// The value of a node of the default domain's operator `op` with attributes `attrs` on
/// `args` (every input given), or `None` when the operator is not one of those above.
pub(crate) fn eval(
    op: &str,
    args: &[Value],
    attrs: &[AttributeProto],
) -> Option<Result<Value, String>> {
    let tensors: Vec<&Arc<Tensor>> = args
        .iter()
        .filter_map(|a| match a {
            Value::Tensor(t) => Some(t),
            _ => None,
        })
        .collect();
    if tensors.len() != args.len() {
        return None;
    }
    let result = match (op, tensors.as_slice()) {
        ("Range", [start, limit, delta]) => range(start, limit, delta),
        ("Expand", [x, shape]) => expand(x, shape),
        ("ConstantOfShape", [shape]) => constant_of_shape(shape, attrs),
        _ => return None,
    };
    Some(result.map(Value::tensor))
}

/// The elements of a shape input as sizes.
fn sizes(shape: &Tensor, what: &str) -> Result<Vec<usize>, String> {
    shape
        .values()
        .iter()
        .map(|&v| usize::try_from(v as i64).map_err(|_| format!("{what}: a negative size {v}")))
        .collect()
}

/// `Range`: `start + i * delta` for `i` below `max(ceil((limit - start) / delta), 0)`.
fn range(start: &Tensor, limit: &Tensor, delta: &Tensor) -> Result<Tensor, String> {
    let scalar = |t: &Tensor| match t.values().as_slice() {
        [v] => Ok(*v),
        _ => Err("Range takes scalars".to_string()),
    };
    let (s, l, d) = (scalar(start)?, scalar(limit)?, scalar(delta)?);
    if d == 0.0 {
        return Err("Range with a delta of 0".into());
    }
    let n = ((l - s) / d).ceil().max(0.0);
    if n > 1e9 {
        return Err(format!("Range of {n} elements"));
    }
    let n = n as usize;
    let dtype = start.dtype();
    let values = if dtype.is_float() {
        (0..n).map(|i| s + i as f64 * d).collect()
    } else {
        let (s, d) = (s as i64, d as i64);
        (0..n as i64)
            .map(|i| s.wrapping_add(i.wrapping_mul(d)) as f64)
            .collect()
    };
    Tensor::from_vec(dtype, &[n], values)
}

/// `Expand`: `x` broadcast with `shape` both ways (numpy's rules).
fn expand(x: &Arc<Tensor>, shape: &Tensor) -> Result<Tensor, String> {
    let target = broadcast_concrete(x.shape(), &sizes(shape, "Expand")?)?;
    let attrs = Attrs::from_pairs([(
        "shape",
        AttrValue::List(target.iter().map(|&d| AttrValue::Int(d as i64)).collect()),
    )]);
    match Op::get("broadcast_to")?.eval(&[Value::Tensor(x.clone())], &attrs)? {
        Value::Tensor(t) => Ok(Arc::unwrap_or_clone(t)),
        _ => Err("broadcast_to gave no tensor".into()),
    }
}

/// `ConstantOfShape`: its `value` (one element; a float32 0 when not given) in `shape`.
fn constant_of_shape(shape: &Tensor, attrs: &[AttributeProto]) -> Result<Tensor, String> {
    let (dtype, v) = match attrs
        .iter()
        .find(|a| a.name() == "value")
        .and_then(|a| a.t.as_ref())
    {
        Some(t) => {
            let t = tensor_of(t, DataDir(None)).map_err(|e| e.to_string())?;
            (t.dtype(), t.values().first().copied().unwrap_or(0.0))
        }
        None => (DType::Float32, 0.0),
    };
    let shape = sizes(shape, "ConstantOfShape")?;
    let n = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if n.is_none_or(|n| n > 1 << 30) {
        return Err(format!("ConstantOfShape of shape {shape:?}"));
    }
    Ok(Tensor::full(dtype, &shape, v))
}
