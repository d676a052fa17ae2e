//! The sequence operators (version 11): a sequence is a value of an opaque type of the IR
//! (`seq(tensor(float)[?,3])`, [`crate::value_type`]) and, in the interpreter, the tuple of
//! its tensors. The types of their outputs are the ones the model declares or the importer
//! infers (`import/sequence_types.rs`); without one the node is kept whole.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{DType, Tensor, Type, Value};

use super::{Args, attr, native};
use crate::elements::{concat, slice, slice_range, stack};

/// Output 0's declared or inferred type.
fn declared(a: &Args<'_, Type>) -> Result<Vec<Type>, String> {
    match a.declared_type(0) {
        Some(t) => Ok(vec![t.clone()]),
        None => Err(format!("`{}`: the type of its output is not known", a.op())),
    }
}

/// The relation of an operator on sequence input 0: its output's declared or inferred type.
fn of_sequence(a: &Args<'_, Type>, _: &AttrReader<'_>) -> Result<Vec<Type>, String> {
    sequence_type(a, 0)?;
    declared(a)
}

/// Input `i`'s type, which must be a sequence's.
fn sequence_type<'a>(a: &Args<'a, Type>, i: usize) -> Result<&'a Type, String> {
    match a.get(i)? {
        t @ Type::Opaque(name) if name.as_str().starts_with("seq(") => Ok(t),
        other => Err(format!(
            "`{}`: input {i} is {other}, not a sequence",
            a.op()
        )),
    }
}

/// Input `i`, a sequence: its tensors.
fn tensors<'a>(a: &Args<'a, Value>, i: usize) -> Result<&'a [Value], String> {
    match a.get(i)? {
        Value::Tuple(items) => Ok(items),
        other => Err(format!(
            "`{}`: input {i} is `{other}`, not a sequence",
            a.op()
        )),
    }
}

/// Input `i`, a tensor.
fn tensor<'a>(a: &Args<'a, Value>, i: usize) -> Result<&'a Tensor, String> {
    a.get(i)?
        .as_tensor()
        .ok_or_else(|| format!("`{}`: input {i} is not a tensor", a.op()))
}

/// Input `i`, a position in a sequence of `n` (negative from the end; `n` itself where
/// `end` allows it), else `default`.
fn position(
    a: &Args<'_, Value>,
    i: usize,
    n: usize,
    end: bool,
    default: usize,
) -> Result<usize, String> {
    let Some(p) = a.opt(i) else {
        return Ok(default);
    };
    let p = p
        .as_tensor()
        .and_then(|t| t.values().first().copied())
        .ok_or_else(|| format!("`{}`: a position that is not a scalar", a.op()))?
        as i64;
    let at = if p < 0 { p + n as i64 } else { p };
    let last = n as i64 - i64::from(!end);
    if at < 0 || at > last {
        return Err(format!("`{}`: position {p} in a sequence of {n}", a.op()));
    }
    Ok(at as usize)
}

native! {
    /// An empty sequence of tensors of element type `dtype`.
    "SequenceEmpty" {
        versions: &[11],
        attrs: [attr("dtype", AttrKind::Int, AttrDefault::Int(1))],
        value_rel: |a, _| declared(a),
        value_kernel: |_, _| Ok(vec![Value::Tuple(Vec::new())]),
    }
}

native! {
    /// The sequence of its inputs (tensors of one element type).
    "SequenceConstruct" {
        versions: &[11],
        attrs: [],
        value_rel: |a, _| {
            for i in 0..a.count() {
                if !matches!(a.get(i)?, Type::Tensor(_)) {
                    return Err(format!("`onnx.SequenceConstruct`: input {i} is not a tensor"));
                }
            }
            declared(a)
        },
        value_kernel: |a, _| {
            let items = (0..a.count()).map(|i| a.get(i).cloned()).collect::<Result<_, _>>()?;
            Ok(vec![Value::Tuple(items)])
        },
    }
}

native! {
    /// Input 0 with input 1 inserted at position input 2 (negative from the end; at the end
    /// when left out).
    "SequenceInsert" {
        versions: &[11],
        attrs: [],
        value_rel: of_sequence,
        value_kernel: |a, _| {
            let mut items = tensors(a, 0)?.to_vec();
            let at = position(a, 2, items.len(), true, items.len())?;
            items.insert(at, Value::tensor(tensor(a, 1)?.clone()));
            Ok(vec![Value::Tuple(items)])
        },
    }
}

native! {
    /// The tensor at position input 1 of sequence input 0 (negative from the end).
    "SequenceAt" {
        versions: &[11],
        attrs: [],
        value_rel: of_sequence,
        value_kernel: |a, _| {
            let items = tensors(a, 0)?;
            let at = position(a, 1, items.len(), false, 0)?;
            Ok(vec![items[at].clone()])
        },
    }
}

native! {
    /// Input 0 without the tensor at position input 1 (negative from the end; the last when
    /// left out).
    "SequenceErase" {
        versions: &[11],
        attrs: [],
        value_rel: of_sequence,
        value_kernel: |a, _| {
            let mut items = tensors(a, 0)?.to_vec();
            let last = items.len().checked_sub(1).ok_or("`onnx.SequenceErase` of an empty sequence")?;
            let at = position(a, 1, items.len(), false, last)?;
            items.remove(at);
            Ok(vec![Value::Tuple(items)])
        },
    }
}

native! {
    /// The number of tensors in sequence input 0, an int64 scalar.
    "SequenceLength" {
        versions: &[11],
        attrs: [],
        value_rel: |a, _| {
            sequence_type(a, 0)?;
            Ok(vec![Type::scalar(DType::Int64)])
        },
        value_kernel: |a, _| {
            let n = tensors(a, 0)?.len() as i64;
            Ok(vec![Value::tensor(Tensor::scalar_i64(DType::Int64, n))])
        },
    }
}

native! {
    /// Input 0 split along `axis` into a sequence: into pieces of the sizes input 1 lists, of
    /// the size it gives (the last smaller), or, when left out, of size 1 each, the axis then
    /// kept only with `keepdims=1`.
    "SplitToSequence" {
        versions: &[11],
        attrs: [
            attr("axis", AttrKind::Int, AttrDefault::Int(0)),
            attr("keepdims", AttrKind::Int, AttrDefault::Int(1)),
        ],
        value_rel: |a, _| {
            if !matches!(a.get(0)?, Type::Tensor(_)) {
                return Err("`onnx.SplitToSequence` of a value that is not a tensor".into());
            }
            declared(a)
        },
        value_kernel: split_to_sequence,
    }
}

fn split_to_sequence(a: &Args<'_, Value>, r: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    let x = tensor(a, 0)?;
    let rank = x.shape().len();
    let axis = irpass_ir::op::axis(a.op(), r.int("axis"), rank)?;
    let n = x.shape()[axis];
    let sizes: Vec<usize> = match a.opt(1) {
        None => vec![1; n],
        Some(s) => {
            let s = s
                .as_tensor()
                .ok_or("`onnx.SplitToSequence`: split is not a tensor")?;
            let v: Vec<i64> = s.to_i64().iter().copied().collect();
            let bad = || format!("`onnx.SplitToSequence`: split {v:?} of a size {n}");
            if s.shape().is_empty() {
                let k = usize::try_from(v[0])
                    .ok()
                    .filter(|&k| k > 0)
                    .ok_or_else(bad)?;
                (0..n.div_ceil(k)).map(|i| k.min(n - i * k)).collect()
            } else {
                let sizes: Vec<usize> = v
                    .iter()
                    .map(|&d| usize::try_from(d).map_err(|_| bad()))
                    .collect::<Result<_, _>>()?;
                if sizes.iter().sum::<usize>() != n {
                    return Err(bad());
                }
                sizes
            }
        }
    };
    let squeeze = a.opt(1).is_none() && r.int("keepdims") == 0;
    let mut start = 0;
    let mut items = Vec::with_capacity(sizes.len());
    for len in sizes {
        items.push(Value::tensor(if squeeze {
            slice(x, axis, start)
        } else {
            slice_range(x, axis, start, len)
        }));
        start += len;
    }
    Ok(vec![Value::Tuple(items)])
}

native! {
    /// The tensors of sequence input 0 joined along `axis`, or stacked along a new axis there
    /// with `new_axis=1`.
    "ConcatFromSequence" {
        versions: &[11],
        attrs: [
            attr("axis", AttrKind::Int, AttrDefault::Required),
            attr("new_axis", AttrKind::Int, AttrDefault::Int(0)),
        ],
        value_rel: of_sequence,
        value_kernel: |a, r| {
            let parts: Vec<Tensor> = tensors(a, 0)?
                .iter()
                .map(|v| v.as_tensor().cloned().ok_or("`onnx.ConcatFromSequence` of a value that is not a tensor"))
                .collect::<Result<_, _>>()?;
            let rank = parts.first().map_or(0, |p| p.shape().len());
            let stacked = r.int("new_axis") != 0;
            let axis = irpass_ir::op::axis(a.op(), r.int("axis"), rank + usize::from(stacked))?;
            let out = if stacked { stack(&parts, axis)? } else { concat(&parts, axis)? };
            Ok(vec![Value::tensor(out)])
        },
    }
}
