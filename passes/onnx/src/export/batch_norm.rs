//! A per-channel scale and shift that nothing folded into a convolution (a batch norm after a
//! pooling or a concatenation, `SimplifyInference`'s `multiply` then `add`) written as one
//! `BatchNormalization` with mean 0, variance 1 and epsilon 0: one node instead of two, as
//! ONNX Runtime keeps such a batch norm.

use rustc_hash::FxHashMap;

use irpass_ir::{DType, Tensor};

use super::walk::{Shapes, attr_float};
use crate::proto::{GraphProto, NodeProto, TensorProto};
use crate::tensor::{dtype_of, proto_of};

/// Rewrites each `Add(Mul(x, scale), shift)` of `g` whose `scale` and `shift` are per-channel
/// float initializers of `x` (channels on axis 1, `shapes` giving `x`'s rank) and whose
/// product has no other use.
pub(crate) fn fuse(g: &mut GraphProto, shapes: &Shapes) {
    let mut uses: FxHashMap<&str, usize> = FxHashMap::default();
    for i in g.node.iter().flat_map(|n| &n.input) {
        *uses.entry(i).or_default() += 1;
    }
    for o in &g.output {
        *uses.entry(o.name()).or_default() += 1;
    }
    let producer: FxHashMap<&str, usize> = g
        .node
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.output.iter().map(move |o| (o.as_str(), i)))
        .collect();
    let inits: FxHashMap<&str, &TensorProto> =
        g.initializer.iter().map(|t| (t.name(), t)).collect();
    let mut fusions: Vec<(usize, usize, NodeInputs)> = Vec::new();
    for (add, n) in g.node.iter().enumerate() {
        if n.op_type() != "Add" || n.input.len() != 2 {
            continue;
        }
        for side in 0..2 {
            let (product, shift) = (&n.input[side], &n.input[1 - side]);
            let Some(&mul) = producer.get(product.as_str()) else {
                continue;
            };
            let m = &g.node[mul];
            if m.op_type() != "Mul" || m.input.len() != 2 || uses.get(product.as_str()) != Some(&1)
            {
                continue;
            }
            let Some(&(rank, _)) = shapes.get(product.as_str()) else {
                continue;
            };
            let found = (0..2).find_map(|k| {
                let (x, scale) = (&m.input[k], &m.input[1 - k]);
                let c = channels(inits.get(scale.as_str())?, rank)?;
                (channels(inits.get(shift.as_str())?, rank)? == c).then(|| NodeInputs {
                    x: x.clone(),
                    scale: scale.clone(),
                    shift: shift.clone(),
                    channels: c,
                })
            });
            if let Some(f) = found {
                fusions.push((mul, add, f));
                break;
            }
        }
    }
    if fusions.is_empty() {
        return;
    }
    let mut removed = vec![false; g.node.len()];
    let mut flat: FxHashMap<String, String> = FxHashMap::default();
    let mut new_inits: Vec<TensorProto> = Vec::new();
    for (mul, add, f) in fusions {
        let dtype = g
            .initializer
            .iter()
            .find(|t| t.name() == f.scale)
            .and_then(|t| dtype_of(t.data_type()).ok())
            .unwrap_or(DType::Float32);
        let mut vector = |name: &str, inits: &mut Vec<TensorProto>, g: &GraphProto| {
            flat.entry(name.to_string())
                .or_insert_with(|| {
                    let src = g.initializer.iter().find(|t| t.name() == name);
                    let mut t = src.cloned().unwrap_or_default();
                    t.name = Some(format!("{name}_channels"));
                    t.dims = vec![f.channels];
                    inits.push(t);
                    format!("{name}_channels")
                })
                .clone()
        };
        let scale = vector(&f.scale, &mut new_inits, g);
        let shift = vector(&f.shift, &mut new_inits, g);
        let constant = |value: f64, inits: &mut Vec<TensorProto>| {
            let name = format!("bn_{}_{}_{value}", dtype.name(), f.channels);
            if !inits.iter().any(|t| t.name() == name) {
                let t = Tensor::full(dtype, &[f.channels as usize], value);
                inits.push(proto_of(&name, &t));
            }
            name
        };
        let mean = constant(0.0, &mut new_inits);
        let var = constant(1.0, &mut new_inits);
        let out = g.node[add].output.clone();
        g.node[mul] = NodeProto {
            op_type: Some("BatchNormalization".into()),
            name: g.node[mul].name.clone(),
            input: vec![f.x, scale, shift, mean, var],
            output: out,
            attribute: vec![attr_float("epsilon", 0.0)],
            ..NodeProto::default()
        };
        removed[add] = true;
    }
    let mut i = 0;
    g.node.retain(|_| {
        i += 1;
        !removed[i - 1]
    });
    g.initializer.extend(new_inits);
}

/// What the fused node reads.
struct NodeInputs {
    x: String,
    scale: String,
    shift: String,
    channels: i64,
}

/// The channel count of `t` as a per-channel constant of a rank-`rank` tensor with channels
/// on axis 1: shape `(C, 1, ..., 1)` with `rank - 2` ones, or `(1, C, 1, ..., 1)` of rank
/// `rank`; a float tensor only.
fn channels(t: &TensorProto, rank: usize) -> Option<i64> {
    if rank < 3 || !dtype_of(t.data_type()).is_ok_and(DType::is_float) {
        return None;
    }
    let dims = match t.dims.as_slice() {
        [1, rest @ ..] if t.dims.len() == rank => rest,
        d if d.len() == rank - 1 => d,
        _ => return None,
    };
    let (&c, ones) = dims.split_first()?;
    ones.iter().all(|&d| d == 1).then_some(c)
}
