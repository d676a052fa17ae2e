//! Operators whose result's sizes are input values: `Expand` and `Range`. The IR's own
//! operators (`broadcast_to`, `arange`) hold them where those values are known at import;
//! these hold the others (a dynamic sequence length), the sizes then coming from what the
//! importer knows of the values by name or from the model's declared types. (`ConstantOfShape`
//! of a run-time shape imports as an `Expand` of its value.)

use std::sync::Arc;

use irpass_ir::op::{AttrReader, Op, broadcast_concrete};
use irpass_ir::{AttrValue, Attrs, DType, Dim, Tensor, TensorType, Value};

use super::{Args, native};

native! {
    /// Input 0 broadcast with the shape input 1 holds, both ways (numpy's rules): the
    /// result's rank is the larger of the two, each size the one that is not 1.
    "Expand" {
        versions: &[8, 13],
        attrs: [],
        pattern: Broadcast,
        rel: |a, _| {
            let (x, shape) = (a.get(0)?, a.of_dtype(1, |d| d == DType::Int64, "an int64 shape")?);
            let n = match shape.shape.as_slice() {
                [Dim::Static(n)] => *n as usize,
                [_] => return Ok(vec![a.value_shaped(0, x.dtype, None)?]),
                _ => return Err(format!("`onnx.Expand`: a shape of type {shape} (a vector)")),
            };
            let rank = n.max(x.rank());
            // Where the input's size is known and not 1, the result has it.
            let shape = (0..rank)
                .map(|i| match (i + x.rank()).checked_sub(rank).map(|j| x.shape[j]) {
                    Some(Dim::Static(1)) | None => Dim::Any,
                    Some(d @ Dim::Static(_)) => d,
                    Some(_) => Dim::Any,
                })
                .collect();
            Ok(vec![TensorType { shape, dtype: x.dtype }])
        },
        kernel: expand,
    }
}

fn expand(a: &Args<'_, Tensor>, _: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let target =
        broadcast_concrete(x.shape(), &a.sizes(1)?).map_err(|e| format!("`onnx.Expand`: {e}"))?;
    let attrs = Attrs::from_pairs([(
        "shape",
        AttrValue::List(target.iter().map(|&d| AttrValue::Int(d as i64)).collect()),
    )]);
    match Op::get("broadcast_to")?.eval(&[Value::Tensor(Arc::new(x.clone()))], &attrs)? {
        Value::Tensor(t) => Ok(vec![Arc::unwrap_or_clone(t)]),
        _ => Err("`onnx.Expand`: broadcast_to gave no tensor".into()),
    }
}

native! {
    /// `start + i·delta` (inputs 0 and 2) for each `i` below `max(ceil((limit - start) /
    /// delta), 0)` (limit input 1), all three scalars of one numeric type.
    "Range" {
        versions: &[11],
        attrs: [],
        pattern: Opaque,
        rel: |a, _| {
            let start = a.get(0)?;
            for i in 0..3 {
                let t = a.get(i)?;
                if t.rank() != 0 || t.dtype != start.dtype {
                    return Err(format!("`onnx.Range` takes three scalars of one type, input {i} is {t}"));
                }
            }
            Ok(vec![TensorType { shape: vec![Dim::Any], dtype: start.dtype }])
        },
        kernel: range,
    }
}

fn range(a: &Args<'_, Tensor>, _: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let scalar = |i: usize| -> Result<f64, String> {
        match a.get(i)?.values().as_slice() {
            [v] => Ok(*v),
            _ => Err("`onnx.Range` takes scalars".to_string()),
        }
    };
    let (s, l, d) = (scalar(0)?, scalar(1)?, scalar(2)?);
    if d == 0.0 {
        return Err("`onnx.Range` with a delta of 0".into());
    }
    let n = ((l - s) / d).ceil().max(0.0);
    if n > 1e9 {
        return Err(format!("`onnx.Range` of {n} elements"));
    }
    let n = n as usize;
    let dtype = a.get(0)?.dtype();
    let values = if dtype.is_float() {
        (0..n).map(|i| s + i as f64 * d).collect()
    } else {
        let (s, d) = (s as i64, d as i64);
        (0..n as i64)
            .map(|i| s.wrapping_add(i.wrapping_mul(d)) as f64)
            .collect()
    };
    Ok(vec![Tensor::from_vec(dtype, &[n], values)?])
}
