//! The interpreter's run of the default domain's loops kept whole with their bodies imported as
//! closures (`onnx.node` calls whose last arguments are the closures): `Loop` and `Scan` (from
//! version 9), the body called through [`irpass_ir::eval::call_closure`] once per iteration.
//! A loop is not an IR construct: the passes do not see inside it, but `--check` and the
//! interpreter run it.

use irpass_ir::{DType, Tensor, Value};
use ndarray::{ArrayD, Axis};

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
    inputs: Vec<Option<&'a Tensor>>,
    bodies: Vec<(String, &'a Value)>,
    written: Vec<bool>,
}

impl<'a> LoopCall<'a> {
    fn new(args: &'a [Value], kept: &Kept<'_>) -> Result<Self, String> {
        let given = args
            .len()
            .checked_sub(kept.subgraphs.len() + kept.captures)
            .ok_or("fewer arguments than bodies")?;
        let mut inputs = Vec::new();
        for a in &args[..given] {
            while kept.absent.contains(&(inputs.len() as i64)) {
                inputs.push(None);
            }
            inputs.push(Some(a.as_tensor().ok_or("an input that is not a tensor")?));
        }
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

    /// The node's value from all its outputs: the one output, or a tuple of those it writes.
    fn value(&self, outputs: Vec<Tensor>) -> Result<Value, String> {
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
            .map(|(t, _)| Value::tensor(t))
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
        _ => None,
    }
}

/// The tensors of a body's result (a tuple of its outputs).
fn call(body: &Value, args: Vec<Value>) -> Result<Vec<Tensor>, String> {
    let out = irpass_ir::eval::call_closure(body, args).map_err(|e| e.to_string())?;
    let fields = match out {
        Value::Tuple(fields) => fields,
        one => vec![one],
    };
    fields
        .into_iter()
        .map(|v| match v {
            Value::Tensor(t) => Ok(std::sync::Arc::unwrap_or_clone(t)),
            other => Err(format!("a body output `{other}` that is not a tensor")),
        })
        .collect()
}

/// A tensor's elements in the widest array of their kind, so that slicing and stacking keep
/// every value exact.
enum Elements {
    Float(ArrayD<f64>),
    Int(ArrayD<i64>),
    Bool(ArrayD<bool>),
}

impl Elements {
    fn of(t: &Tensor) -> Elements {
        match t.dtype() {
            DType::Bool => Elements::Bool(t.to_bool()),
            d if d.is_int() => Elements::Int(t.to_i64()),
            _ => Elements::Float(t.to_f64()),
        }
    }

    fn tensor(self, dtype: DType) -> Tensor {
        match self {
            Elements::Float(a) => Tensor::from_f64(dtype, a),
            Elements::Int(a) => Tensor::from_i64(dtype, a),
            Elements::Bool(a) => Tensor::from_bool(a),
        }
    }
}

/// Element `i` of `t` along `axis` (the axis removed).
fn slice(t: &Tensor, axis: usize, i: usize) -> Tensor {
    fn at<T: Clone>(a: &ArrayD<T>, axis: usize, i: usize) -> ArrayD<T> {
        a.index_axis(Axis(axis), i).to_owned()
    }
    match Elements::of(t) {
        Elements::Float(a) => Elements::Float(at(&a, axis, i)),
        Elements::Int(a) => Elements::Int(at(&a, axis, i)),
        Elements::Bool(a) => Elements::Bool(at(&a, axis, i)),
    }
    .tensor(t.dtype())
}

/// `parts` (one shape and type) stacked along a new `axis`.
fn stack(parts: &[Tensor], axis: usize) -> Result<Tensor, String> {
    let first = parts.first().ok_or("nothing to stack")?;
    if parts
        .iter()
        .any(|p| p.shape() != first.shape() || p.dtype() != first.dtype())
    {
        return Err("scan outputs of different shapes or types across iterations".into());
    }
    let all: Vec<Elements> = parts.iter().map(Elements::of).collect();
    macro_rules! stacked {
        ($kind:ident) => {{
            let views: Vec<_> = all
                .iter()
                .map(|e| match e {
                    Elements::$kind(a) => a.view(),
                    _ => unreachable!("one dtype"),
                })
                .collect();
            Elements::$kind(ndarray::stack(Axis(axis), &views).map_err(|e| e.to_string())?)
        }};
    }
    let stacked = match all[0] {
        Elements::Float(_) => stacked!(Float),
        Elements::Int(_) => stacked!(Int),
        Elements::Bool(_) => stacked!(Bool),
    };
    Ok(stacked.tensor(first.dtype()))
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
    let trips = scalar(call_of.inputs.first().copied().flatten()).map(|v| v as i64);
    let mut cond = scalar(call_of.inputs.get(1).copied().flatten()).is_none_or(|v| v != 0.0);
    let mut carried: Vec<Tensor> = call_of
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
        ins.extend(carried.iter().cloned().map(Value::tensor));
        let out = call(body, ins)?;
        if out.len() < 1 + n {
            return Err(format!(
                "a Loop body with {} outputs for {n} carried values",
                out.len()
            ));
        }
        cond = out[0].values().first().is_some_and(|&v| v != 0.0);
        carried = out[1..=n].to_vec();
        let extra = &out[1 + n..];
        if scans.is_empty() {
            scans = vec![Vec::new(); extra.len()];
        }
        for (s, t) in scans.iter_mut().zip(extra) {
            s.push(t.clone());
        }
        i += 1;
        if i > 1 << 24 {
            return Err("a Loop of more than 2^24 iterations".into());
        }
    }
    let k = call_of.written.len().saturating_sub(n);
    let mut outputs = carried;
    for j in 0..k {
        outputs.push(match scans.get(j) {
            Some(parts) if !parts.is_empty() => stack(parts, 0)?,
            _ => empty(DType::Float32),
        });
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
        let out = call(body, ins)?;
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
        .map(|t| t.ok_or("a Scan input left out"))
        .collect::<Result<_, _>>()?;
    let states = inputs
        .len()
        .checked_sub(attrs.num_scan)
        .ok_or("fewer inputs than scanned ones")?;
    let n_out = call_of.written.len().saturating_sub(states);
    if !batched {
        let state = inputs[..states].iter().map(|t| (*t).clone()).collect();
        return call_of.value(scan(body, state, &inputs[states..], n_out, &attrs)?);
    }
    let batch = inputs
        .first()
        .map_or(0, |t| t.shape().first().copied().unwrap_or(0));
    let full = inputs.get(states).and_then(|t| t.shape().get(1).copied());
    if let (Some(l), Some(full)) = (lengths, full)
        && l.values().iter().any(|&v| v as usize != full)
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
            stack(&parts, 0)
        })
        .collect::<Result<_, _>>()?;
    call_of.value(outputs)
}
