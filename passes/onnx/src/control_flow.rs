//! The interpreter's run of the default domain's loops kept whole with their bodies imported as
//! closures (`onnx.node` calls whose last arguments are the closures): `Loop`, `Scan` and
//! `SequenceMap`, the body called through [`irpass_ir::eval::call_closure`] once per
//! iteration. (A sequence is the tuple of its tensors, as in [`crate::native`].)
//! A loop is not an IR construct: the passes do not see inside it, but `--check` and the
//! interpreter run it.

use irpass_ir::{DType, Tensor, Value};
use ndarray::ArrayD;

use crate::elements::{slice, stack};
use crate::proto::AttributeProto;

/// What a loop's `onnx.node` call carries besides its arguments (decoded by the caller).
pub(crate) struct Kept<'a> {
    /// The node's attributes other than its bodies.
    pub attributes: &'a [AttributeProto],
    /// How many arguments before the bodies are captured outer values.
    pub captures: usize,
    /// The attribute names of the bodies, the last arguments, in order.
    pub subgraphs: Vec<String>,
    /// The positions of the inputs the node leaves out.
    pub absent: Vec<i64>,
    /// For each output of the node, whether it writes it.
    pub written: Vec<bool>,
    /// The operator's version.
    pub version: i64,
}

/// A loop node's inputs by ONNX position (`None`: left out), its bodies by attribute name, and
/// which of its outputs it writes.
struct LoopCall<'a> {
    inputs: Vec<Option<&'a Value>>,
    bodies: Vec<(String, &'a Value)>,
    written: Vec<bool>,
}

impl<'a> LoopCall<'a> {
    fn new(args: &'a [Value], kept: &Kept<'_>) -> Result<Self, String> {
        let given = args
            .len()
            .checked_sub(kept.subgraphs.len() + kept.captures)
            .ok_or("fewer arguments than bodies")?;
        let given: Vec<&Value> = args[..given].iter().collect();
        let inputs = crate::slots::positions(&given, &kept.absent);
        let first_body = args.len() - kept.subgraphs.len();
        let bodies = kept
            .subgraphs
            .iter()
            .cloned()
            .zip(&args[first_body..])
            .collect();
        Ok(LoopCall {
            inputs,
            bodies,
            written: kept.written.clone(),
        })
    }

    fn body(&self, name: &str) -> Result<&'a Value, String> {
        self.bodies
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| *b)
            .ok_or_else(|| format!("the `{name}` body is not a closure"))
    }

    /// Input `i` if given, which must be a tensor.
    fn tensor(&self, i: usize) -> Result<Option<&'a Tensor>, String> {
        match self.inputs.get(i).copied().flatten() {
            None => Ok(None),
            Some(v) => v
                .as_tensor()
                .map(Some)
                .ok_or_else(|| format!("input {i} is not a tensor")),
        }
    }

    /// The node's value from all its outputs: the one output, or a tuple of those it writes.
    fn value(&self, outputs: Vec<Value>) -> Result<Value, String> {
        if outputs.len() != self.written.len() {
            return Err(format!(
                "{} outputs computed for a node of {}",
                outputs.len(),
                self.written.len()
            ));
        }
        let mut values: Vec<Value> = outputs
            .into_iter()
            .zip(&self.written)
            .filter(|(_, w)| **w)
            .map(|(v, _)| v)
            .collect();
        Ok(if self.written.len() == 1 {
            values.pop().ok_or("the output is not written")?
        } else {
            Value::Tuple(values)
        })
    }
}

/// A loop's kernel: the `onnx.node` call's arguments and what it carries to its value.
pub(crate) type LoopKernel = fn(&[Value], &Kept<'_>) -> Result<Value, String>;

/// The kernel of loop operator `op` (default domain), if it is one.
pub(crate) fn kernel(op: &str) -> Option<LoopKernel> {
    match op {
        "Loop" => Some(run_loop),
        "Scan" => Some(run_scan),
        "SequenceMap" => Some(run_sequence_map),
        _ => None,
    }
}

/// The values of a body's result (a tuple of its outputs).
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

/// An empty scan output (no iteration ran): no element along its first axis.
fn empty(dtype: DType) -> Tensor {
    Tensor::full(dtype, &[0], 0.0)
}

/// `Loop`: the body run while the trip count (input 0) and the condition (input 1, then the
/// body's first output) allow, its loop-carried values threaded through, its scan outputs
/// stacked along a new first axis.
fn run_loop(args: &[Value], kept: &Kept<'_>) -> Result<Value, String> {
    let call_of = LoopCall::new(args, kept)?;
    let body = call_of.body("body")?;
    let scalar = |t: Option<&Tensor>| t.map(|t| t.values().first().copied().unwrap_or(0.0));
    let trips = scalar(call_of.tensor(0)?).map(|v| v as i64);
    let mut cond = scalar(call_of.tensor(1)?).is_none_or(|v| v != 0.0);
    let mut carried: Vec<Value> = call_of
        .inputs
        .iter()
        .skip(2)
        .map(|t| t.cloned().ok_or("a loop-carried value left out"))
        .collect::<Result<_, _>>()?;
    let n = carried.len();
    let mut scans: Vec<Vec<Tensor>> = Vec::new();
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
        if out.len() < 1 + n {
            return Err(format!(
                "a Loop body with {} outputs for {n} carried values",
                out.len()
            ));
        }
        cond = tensor(&out[0])?.values().first().is_some_and(|&v| v != 0.0);
        carried = out[1..=n].to_vec();
        let extra = &out[1 + n..];
        if scans.is_empty() {
            scans = vec![Vec::new(); extra.len()];
        }
        for (s, t) in scans.iter_mut().zip(extra) {
            s.push(tensor(t)?);
        }
        i += 1;
        if i > 1 << 24 {
            return Err("a Loop of more than 2^24 iterations".into());
        }
    }
    let k = call_of.written.len().saturating_sub(n);
    let mut outputs = carried;
    for j in 0..k {
        outputs.push(Value::tensor(match scans.get(j) {
            Some(parts) if !parts.is_empty() => stack(parts, 0)?,
            _ => empty(DType::Float32),
        }));
    }
    call_of.value(outputs)
}

/// A `Scan`'s attributes from the node's (kept) attributes.
struct ScanAttrs {
    num_scan: usize,
    in_axes: Vec<i64>,
    in_dirs: Vec<i64>,
    out_axes: Vec<i64>,
    out_dirs: Vec<i64>,
}

impl ScanAttrs {
    fn of(attrs: &[AttributeProto]) -> Result<ScanAttrs, String> {
        let ints = |name: &str| -> Vec<i64> {
            attrs
                .iter()
                .find(|a| a.name() == name)
                .map(|a| a.ints.clone())
                .unwrap_or_default()
        };
        let num_scan = attrs
            .iter()
            .find(|a| a.name() == "num_scan_inputs")
            .and_then(|a| a.i)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or("a Scan without num_scan_inputs")?;
        Ok(ScanAttrs {
            num_scan,
            // (Version 8 names the input directions `directions`.)
            in_axes: ints("scan_input_axes"),
            in_dirs: [ints("scan_input_directions"), ints("directions")].concat(),
            out_axes: ints("scan_output_axes"),
            out_dirs: ints("scan_output_directions"),
        })
    }
}

/// `a` (negative from the end) as an axis of `rank` (`rank` itself allowed with `extra`).
fn axis_of(a: i64, rank: usize, extra: bool) -> Result<usize, String> {
    let r = rank as i64 + i64::from(extra);
    let a = if a < 0 { a + r } else { a };
    usize::try_from(a)
        .ok()
        .filter(|&a| (a as i64) < r)
        .ok_or_else(|| format!("a Scan axis {a} for rank {rank}"))
}

/// One scan: the body run over the elements of `scanned` along their axes, `states` threaded
/// through; the final states, then `n_out` scan outputs stacked by `attrs`.
fn scan(
    body: &Value,
    mut state: Vec<Tensor>,
    scanned: &[&Tensor],
    n_out: usize,
    attrs: &ScanAttrs,
) -> Result<Vec<Tensor>, String> {
    let mut lanes = Vec::with_capacity(scanned.len());
    for (j, t) in scanned.iter().enumerate() {
        let axis = axis_of(
            attrs.in_axes.get(j).copied().unwrap_or(0),
            t.shape().len(),
            false,
        )?;
        lanes.push((*t, axis, attrs.in_dirs.get(j).copied().unwrap_or(0) != 0));
    }
    let len = lanes.first().map_or(0, |(t, a, _)| t.shape()[*a]);
    if lanes.iter().any(|(t, a, _)| t.shape()[*a] != len) {
        return Err("scanned inputs of different lengths".into());
    }
    let states = state.len();
    let mut scans: Vec<Vec<Tensor>> = vec![Vec::new(); n_out];
    for i in 0..len {
        let mut ins: Vec<Value> = state.iter().cloned().map(Value::tensor).collect();
        for (t, axis, reverse) in &lanes {
            let at = if *reverse { len - 1 - i } else { i };
            ins.push(Value::tensor(slice(t, *axis, at)));
        }
        let out = call(body, ins)?
            .iter()
            .map(tensor)
            .collect::<Result<Vec<_>, _>>()?;
        if out.len() != states + n_out {
            return Err(format!("a Scan body with {} outputs", out.len()));
        }
        state = out[..states].to_vec();
        for (s, t) in scans.iter_mut().zip(&out[states..]) {
            s.push(t.clone());
        }
    }
    let mut outputs = state;
    for (j, mut parts) in scans.into_iter().enumerate() {
        if attrs.out_dirs.get(j).copied().unwrap_or(0) != 0 {
            parts.reverse();
        }
        let rank = parts.first().map_or(0, |p| p.shape().len());
        let axis = axis_of(attrs.out_axes.get(j).copied().unwrap_or(0), rank, true)?;
        outputs.push(if parts.is_empty() {
            empty(DType::Float32)
        } else {
            stack(&parts, axis)?
        });
    }
    Ok(outputs)
}

/// `Scan`: the body run once per element of the scanned inputs along their axes
/// (`scan_input_axes`, in `scan_input_directions`), the states threaded through, each scan
/// output stacked along its axis (`scan_output_axes`, `scan_output_directions`). Version 8
/// scans each entry of a batch (the first axis of every input) along its next axis, each
/// sequence in full (its optional first input, the sequence lengths, must say so).
fn run_scan(args: &[Value], kept: &Kept<'_>) -> Result<Value, String> {
    let call_of = LoopCall::new(args, kept)?;
    let body = call_of.body("body")?;
    let attrs = ScanAttrs::of(kept.attributes)?;
    let batched = kept.version < 9;
    let mut inputs = call_of.inputs.clone();
    let lengths = if batched && !inputs.is_empty() {
        inputs.remove(0)
    } else {
        None
    };
    let inputs: Vec<&Tensor> = inputs
        .iter()
        .map(|t| {
            t.and_then(Value::as_tensor)
                .ok_or("a Scan input left out or not a tensor")
        })
        .collect::<Result<_, _>>()?;
    let states = inputs
        .len()
        .checked_sub(attrs.num_scan)
        .ok_or("fewer inputs than scanned ones")?;
    let n_out = call_of.written.len().saturating_sub(states);
    if !batched {
        let state = inputs[..states].iter().map(|t| (*t).clone()).collect();
        let outputs = scan(body, state, &inputs[states..], n_out, &attrs)?;
        return call_of.value(outputs.into_iter().map(Value::tensor).collect());
    }
    let batch = inputs
        .first()
        .map_or(0, |t| t.shape().first().copied().unwrap_or(0));
    let full = inputs.get(states).and_then(|t| t.shape().get(1).copied());
    if let (Some(l), Some(full)) = (lengths, full)
        && tensor(l)?.values().iter().any(|&v| v as usize != full)
    {
        return Err("a Scan-8 over sequences shorter than the input is not run".into());
    }
    let mut per_batch: Vec<Vec<Tensor>> = Vec::with_capacity(batch);
    for b in 0..batch {
        let of_b: Vec<Tensor> = inputs.iter().map(|t| slice(t, 0, b)).collect();
        let state = of_b[..states].to_vec();
        let scanned: Vec<&Tensor> = of_b[states..].iter().collect();
        per_batch.push(scan(body, state, &scanned, n_out, &attrs)?);
    }
    let outputs = (0..states + n_out)
        .map(|k| {
            let parts: Vec<Tensor> = per_batch.iter().map(|o| o[k].clone()).collect();
            stack(&parts, 0).map(Value::tensor)
        })
        .collect::<Result<_, _>>()?;
    call_of.value(outputs)
}

/// `SequenceMap`: the body applied to each element of sequence input 0, with the other inputs
/// (each sequence's element at the same position, each tensor whole); each of its outputs
/// gathered into a sequence.
fn run_sequence_map(args: &[Value], kept: &Kept<'_>) -> Result<Value, String> {
    let call_of = LoopCall::new(args, kept)?;
    let body = call_of.body("body")?;
    let items = |v: &'_ Value| -> Option<usize> {
        match v {
            Value::Tuple(items) => Some(items.len()),
            _ => None,
        }
    };
    let inputs: Vec<&Value> = call_of
        .inputs
        .iter()
        .map(|v| v.ok_or("a SequenceMap input left out"))
        .collect::<Result<_, _>>()?;
    let len = inputs
        .first()
        .and_then(|v| items(v))
        .ok_or("a SequenceMap of a value that is not a sequence")?;
    if inputs.iter().any(|v| items(v).is_some_and(|n| n != len)) {
        return Err("SequenceMap of sequences of different lengths".into());
    }
    let mut gathered: Vec<Vec<Value>> = vec![Vec::new(); call_of.written.len()];
    for i in 0..len {
        let ins = inputs
            .iter()
            .map(|v| match v {
                Value::Tuple(items) => items[i].clone(),
                other => (*other).clone(),
            })
            .collect();
        let out = call(body, ins)?;
        if out.len() != gathered.len() {
            return Err(format!("a SequenceMap body with {} outputs", out.len()));
        }
        for (g, v) in gathered.iter_mut().zip(out) {
            g.push(v);
        }
    }
    call_of.value(gathered.into_iter().map(Value::Tuple).collect())
}
