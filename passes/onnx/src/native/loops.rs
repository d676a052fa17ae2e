//! The default domain's loops: `Loop`, `Scan` and `SequenceMap`, each taking its `body` graph
//! as a closure, the call's last argument. The type relations read the output types from the
//! body's function type; the kernels call the body once per iteration through
//! [`irpass_ir::eval::call_closure`]. (A sequence is the tuple of its tensors, as in
//! [`super::sequence`].)

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{DType, Dim, Tensor, TensorType, Type, Value};
use ndarray::ArrayD;

use super::{Args, attr, native};
use crate::elements::{slice, stack};
use crate::value_type::join;

native! {
    /// ONNX `Loop`: the body run while the trip count (input 0) and the condition (input 1,
    /// then the body's first output) allow, the loop-carried values threaded through, each
    /// scan output stacked along a new first axis.
    "Loop" {
        versions: &[1, 11],
        attrs: [],
        bodies: ["body"],
        value_rel: loop_rel,
        value_kernel: run_loop,
    }
}

native! {
    /// ONNX `Scan`: the body run once per slice of the scanned inputs along their axes
    /// (`scan_input_axes`, in `scan_input_directions`), the states threaded through, each
    /// scan output stacked along its axis (`scan_output_axes`, `scan_output_directions`).
    /// Version 8 scans each entry of a batch (every input's first axis) along its next axis.
    "Scan" {
        versions: &[8, 9],
        attrs: [
            attr("num_scan_inputs", AttrKind::Int, AttrDefault::Required),
            attr("scan_input_axes", AttrKind::Ints, AttrDefault::Ints(&[])),
            attr("scan_input_directions", AttrKind::Ints, AttrDefault::Ints(&[])),
            attr("scan_output_axes", AttrKind::Ints, AttrDefault::Ints(&[])),
            attr("scan_output_directions", AttrKind::Ints, AttrDefault::Ints(&[])),
            attr("directions", AttrKind::Ints, AttrDefault::Ints(&[])),
        ],
        bodies: ["body"],
        value_rel: scan_rel,
        value_kernel: run_scan,
    }
}

native! {
    /// ONNX `SequenceMap`: the body applied to each element of sequence input 0 with the
    /// other inputs (each sequence's element at the same position, each tensor whole), each of
    /// its outputs gathered into a sequence.
    "SequenceMap" {
        versions: &[17],
        attrs: [],
        bodies: ["body"],
        value_rel: sequence_map_rel,
        value_kernel: run_sequence_map,
    }
}

/// The body (the last argument) and the number of inputs before it.
fn body<'a, T>(a: &Args<'a, T>) -> Result<(&'a T, usize), String> {
    let n = a
        .count()
        .checked_sub(1)
        .ok_or_else(|| format!("`{}` without its body", a.op()))?;
    Ok((a.get(n)?, n))
}

/// The body's result types (the fields of its tuple).
fn body_results(a: &Args<'_, Type>) -> Result<(Vec<Type>, usize), String> {
    let (t, n) = body(a)?;
    match t {
        Type::Func(f) => Ok((
            match &f.ret {
                Type::Tuple(fields) => fields.clone(),
                one => vec![one.clone()],
            },
            n,
        )),
        other => Err(format!("`{}`: the body is {other}, not a function", a.op())),
    }
}

/// The type of a value carried through iterations, from its initial one and the body's (a
/// sequence's the body's, which the model's declared type refines).
fn carried(op: &str, initial: &Type, body: &Type) -> Result<Type, String> {
    match (initial, body) {
        (Type::Opaque(_), Type::Opaque(_)) => Ok(body.clone()),
        _ => join(initial, body).ok_or_else(|| {
            format!("`{op}`: a value enters the loop as {initial} and leaves the body as {body}")
        }),
    }
}

/// `t` (a tensor type) with an axis of `size` inserted at `axis`.
fn with_axis(op: &str, t: &Type, axis: usize, size: Dim) -> Result<Type, String> {
    let Type::Tensor(t) = t else {
        return Err(format!("`{op}`: a scan output of type {t}, not a tensor"));
    };
    let mut shape = t.shape.clone();
    if axis > shape.len() {
        return Err(format!("`{op}`: scan axis {axis} for rank {}", shape.len()));
    }
    shape.insert(axis, size);
    Ok(Type::with_dims(shape, t.dtype))
}

fn loop_rel(a: &Args<'_, Type>, _: &AttrReader<'_>) -> Result<Vec<Type>, String> {
    let (results, n) = body_results(a)?;
    let states = n.saturating_sub(2);
    if results.len() < 1 + states {
        return Err(format!(
            "`Loop`: a body of {} outputs for {states} carried values",
            results.len()
        ));
    }
    let mut out = Vec::with_capacity(results.len() - 1);
    for (k, r) in results[1..=states].iter().enumerate() {
        out.push(carried("Loop", a.get(2 + k)?, r)?);
    }
    for r in &results[1 + states..] {
        out.push(with_axis("Loop", r, 0, Dim::Any)?);
    }
    Ok(out)
}

/// `a` (negative from the end) as an axis of `rank`.
fn axis_of(a: i64, rank: usize) -> Result<usize, String> {
    irpass_ir::op::axis("Scan", a, rank)
}

fn scan_rel(a: &Args<'_, Type>, r: &AttrReader<'_>) -> Result<Vec<Type>, String> {
    let (results, n) = body_results(a)?;
    let batched = r.int("version") == 8;
    let first = usize::from(batched);
    let scanned = usize::try_from(r.int("num_scan_inputs")).map_err(|e| e.to_string())?;
    let states = n
        .checked_sub(first + scanned)
        .ok_or("`Scan`: fewer inputs than scanned ones")?;
    if results.len() < states {
        return Err(format!("`Scan`: a body of {} outputs", results.len()));
    }
    // The scan's length: the first scanned input's size along its axis.
    let length = match a.get(first + states)? {
        Type::Tensor(t) if batched => t.shape.get(1).copied().unwrap_or(Dim::Any),
        Type::Tensor(t) => {
            let axis = r.ints("scan_input_axes").first().copied().unwrap_or(0);
            t.shape[axis_of(axis, t.rank())?]
        }
        other => return Err(format!("`Scan`: a scanned input of type {other}")),
    };
    let batch = |t: Type| match (batched, a.get(first)) {
        (true, Ok(Type::Tensor(x))) => with_axis("Scan", &t, 0, x.shape[0]),
        _ => Ok(t),
    };
    let mut out = Vec::with_capacity(results.len());
    for (k, res) in results[..states].iter().enumerate() {
        let initial = a.get(first + k)?;
        let Type::Tensor(x) = initial else {
            return Err(format!("`Scan`: a state of type {initial}"));
        };
        // (Version 8's states have the batch axis the body's do not.)
        let inner = match batched {
            true => Type::with_dims(x.shape[1..].to_vec(), x.dtype),
            false => initial.clone(),
        };
        out.push(batch(carried("Scan", &inner, res)?)?);
    }
    let axes = r.ints("scan_output_axes");
    for (j, res) in results[states..].iter().enumerate() {
        let rank = res.as_tensor().map_or(0, TensorType::rank);
        let axis = axes.get(j).copied().unwrap_or(0);
        let axis = axis_of(axis, rank + 1)?;
        out.push(batch(with_axis("Scan", res, axis, length)?)?);
    }
    Ok(out)
}

fn sequence_map_rel(a: &Args<'_, Type>, _: &AttrReader<'_>) -> Result<Vec<Type>, String> {
    let (results, _) = body_results(a)?;
    results
        .iter()
        .enumerate()
        .map(|(k, t)| match a.declared_type(k) {
            Some(d) => Ok(d.clone()),
            None => crate::value_type::sequence_of(t)
                .ok_or_else(|| format!("`SequenceMap`: a sequence of {t} has no ONNX type")),
        })
        .collect()
}

/// The values of a body's result (the fields of its tuple).
fn call(body: &Value, args: Vec<Value>) -> Result<Vec<Value>, String> {
    match irpass_ir::eval::call_closure(body, args).map_err(|e| e.to_string())? {
        Value::Tuple(fields) => Ok(fields),
        one => Ok(vec![one]),
    }
}

/// `v`, which must be a tensor (a scan output, a scanned state).
fn tensor(v: &Value) -> Result<Tensor, String> {
    v.as_tensor()
        .cloned()
        .ok_or_else(|| format!("`{v}` where a tensor is expected"))
}

/// A scan output of no iteration: output `k`'s declared element type, no element along
/// `axis`, the declared sizes elsewhere (past the first `skip` axes: a batch's entry).
fn empty(r: &AttrReader<'_>, k: usize, axis: usize, skip: usize) -> Result<Tensor, String> {
    let declared = super::declared(r)?;
    let Some(Some(Type::Tensor(t))) = declared.get(k) else {
        return Err(format!(
            "`{}`: no iteration ran, and the type of output {k} is not known",
            r.op_name()
        ));
    };
    let shape: Vec<usize> = (skip..t.rank())
        .map(|d| match d - skip == axis {
            true => 0,
            false => t.shape[d].value().unwrap_or(0) as usize,
        })
        .collect();
    Ok(Tensor::full(t.dtype, &shape, 0.0))
}

/// A scalar input's value, if given.
fn scalar(a: &Args<'_, Value>, i: usize) -> Result<Option<f64>, String> {
    match a.opt(i) {
        None => Ok(None),
        Some(v) => Ok(Some(tensor(v)?.values().first().copied().unwrap_or(0.0))),
    }
}

/// The most iterations a loop is run for.
const MAX_TRIPS: i64 = 1 << 24;

fn run_loop(a: &Args<'_, Value>, r: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    let (body, n) = body(a)?;
    let trips = scalar(a, 0)?.map(|v| v as i64);
    let mut cond = scalar(a, 1)?.is_none_or(|v| v != 0.0);
    let mut carried: Vec<Value> = (2..n)
        .map(|i| a.get(i).cloned())
        .collect::<Result<_, _>>()?;
    let states = carried.len();
    let outputs = super::outputs(r);
    let mut scans: Vec<Vec<Tensor>> = vec![Vec::new(); outputs.saturating_sub(states)];
    let mut i = 0i64;
    while cond && trips.is_none_or(|m| i < m) {
        let mut ins = vec![
            Value::tensor(Tensor::scalar_i64(DType::Int64, i)),
            Value::tensor(Tensor::from_bool(ArrayD::from_elem(
                ndarray::IxDyn(&[]),
                cond,
            ))),
        ];
        ins.extend(carried.iter().cloned());
        let out = call(body, ins)?;
        if out.len() < 1 + states {
            return Err(format!("`Loop`: a body of {} outputs", out.len()));
        }
        cond = tensor(&out[0])?.values().first().is_some_and(|&v| v != 0.0);
        carried = out[1..=states].to_vec();
        for (s, t) in scans.iter_mut().zip(&out[1 + states..]) {
            s.push(tensor(t)?);
        }
        i += 1;
        if i > MAX_TRIPS {
            return Err(format!("`Loop`: more than {MAX_TRIPS} iterations"));
        }
    }
    let mut outputs = carried;
    for (j, parts) in scans.into_iter().enumerate() {
        outputs.push(Value::tensor(match parts.is_empty() {
            true => empty(r, states + j, 0, 0)?,
            false => stack(&parts, 0)?,
        }));
    }
    Ok(outputs)
}

/// One scan: the body run over the slices of `scanned` (each with its axis and whether it is
/// read backwards), `state` threaded through; the final states, then the scan outputs (each
/// iteration's, in order).
fn scan(
    body: &Value,
    mut state: Vec<Tensor>,
    lanes: &[(Tensor, usize, bool)],
) -> Result<(Vec<Tensor>, Vec<Vec<Tensor>>), String> {
    let len = lanes.first().map_or(0, |(t, a, _)| t.shape()[*a]);
    if lanes.iter().any(|(t, a, _)| t.shape()[*a] != len) {
        return Err("`Scan`: scanned inputs of different lengths".into());
    }
    let states = state.len();
    let mut scans: Vec<Vec<Tensor>> = Vec::new();
    for i in 0..len {
        let mut ins: Vec<Value> = state.iter().cloned().map(Value::tensor).collect();
        for (t, axis, reverse) in lanes {
            let at = if *reverse { len - 1 - i } else { i };
            ins.push(Value::tensor(slice(t, *axis, at)));
        }
        let out = call(body, ins)?
            .iter()
            .map(tensor)
            .collect::<Result<Vec<_>, _>>()?;
        if out.len() < states {
            return Err(format!("`Scan`: a body of {} outputs", out.len()));
        }
        state = out[..states].to_vec();
        scans.resize(out.len() - states, Vec::new());
        for (s, t) in scans.iter_mut().zip(&out[states..]) {
            s.push(t.clone());
        }
    }
    Ok((state, scans))
}

fn run_scan(a: &Args<'_, Value>, r: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    let (body, n) = body(a)?;
    let batched = r.int("version") == 8;
    let first = usize::from(batched);
    let inputs: Vec<Tensor> = (first..n)
        .map(|i| tensor(a.get(i)?))
        .collect::<Result<_, _>>()?;
    let scanned = usize::try_from(r.int("num_scan_inputs")).map_err(|e| e.to_string())?;
    let states = inputs
        .len()
        .checked_sub(scanned)
        .ok_or("`Scan`: fewer inputs than scanned ones")?;
    let outputs = super::outputs(r);
    let (in_axes, out_axes) = (r.ints("scan_input_axes"), r.ints("scan_output_axes"));
    let in_dirs = [r.ints("scan_input_directions"), r.ints("directions")].concat();
    let out_dirs = r.ints("scan_output_directions");
    // One scan of `inputs` (a batch entry's, for version 8): its outputs.
    let run = |inputs: &[Tensor]| -> Result<Vec<Tensor>, String> {
        let mut lanes = Vec::with_capacity(scanned);
        for (j, t) in inputs[states..].iter().enumerate() {
            let axis = axis_of(in_axes.get(j).copied().unwrap_or(0), t.shape().len())?;
            let reverse = in_dirs.get(j).copied().unwrap_or(0) != 0;
            lanes.push((t.clone(), axis, reverse));
        }
        let (mut out, scans) = scan(body, inputs[..states].to_vec(), &lanes)?;
        for j in 0..outputs.saturating_sub(states) {
            let mut parts = scans.get(j).cloned().unwrap_or_default();
            if out_dirs.get(j).copied().unwrap_or(0) != 0 {
                parts.reverse();
            }
            let rank = parts.first().map_or(0, |p| p.shape().len());
            let axis = out_axes.get(j).copied().unwrap_or(0);
            let axis = axis_of(axis, rank + 1)?;
            out.push(match parts.is_empty() {
                true => empty(r, states + j, axis, first)?,
                false => stack(&parts, axis)?,
            });
        }
        Ok(out)
    };
    if !batched {
        return Ok(run(&inputs)?.into_iter().map(Value::tensor).collect());
    }
    // Version 8: each batch entry scanned in full (sequence lengths must say so).
    let full = inputs.get(states).and_then(|t| t.shape().get(1).copied());
    if let (Some(lengths), Some(full)) = (a.opt(0), full)
        && tensor(lengths)?
            .values()
            .iter()
            .any(|&v| v as usize != full)
    {
        return Err("`Scan`: a version-8 scan over sequences shorter than its input".into());
    }
    let batch = inputs
        .first()
        .map_or(0, |t| t.shape().first().copied().unwrap_or(0));
    let per_entry: Vec<Vec<Tensor>> = (0..batch)
        .map(|b| run(&inputs.iter().map(|t| slice(t, 0, b)).collect::<Vec<_>>()))
        .collect::<Result<_, _>>()?;
    (0..outputs)
        .map(|k| {
            let parts: Vec<Tensor> = per_entry.iter().map(|o| o[k].clone()).collect();
            stack(&parts, 0).map(Value::tensor)
        })
        .collect()
}

fn run_sequence_map(a: &Args<'_, Value>, r: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    let (body, n) = body(a)?;
    let inputs: Vec<&Value> = (0..n).map(|i| a.get(i)).collect::<Result<_, _>>()?;
    let items = |v: &Value| match v {
        Value::Tuple(items) => Some(items.len()),
        _ => None,
    };
    let len = inputs
        .first()
        .and_then(|v| items(v))
        .ok_or("`SequenceMap` of a value that is not a sequence")?;
    if inputs.iter().any(|v| items(v).is_some_and(|m| m != len)) {
        return Err("`SequenceMap` of sequences of different lengths".into());
    }
    let outputs = super::outputs(r);
    let mut gathered: Vec<Vec<Value>> = vec![Vec::new(); outputs];
    for i in 0..len {
        let ins = inputs
            .iter()
            .map(|v| match v {
                Value::Tuple(items) => items[i].clone(),
                other => (*other).clone(),
            })
            .collect();
        let out = call(body, ins)?;
        if out.len() != outputs {
            return Err(format!("`SequenceMap`: a body of {} outputs", out.len()));
        }
        for (g, v) in gathered.iter_mut().zip(out) {
            g.push(v);
        }
    }
    Ok(gathered.into_iter().map(Value::Tuple).collect())
}
