//! A per-channel scale and shift that nothing folded into a convolution (a batch norm after a
//! pooling or a concatenation, `SimplifyInference`'s `multiply` then `add`) written as one
//! `BatchNormalization` with mean 0, variance 1 and epsilon 0: one node instead of two, as
//! ONNX Runtime keeps such a batch norm.

use rustc_hash::{FxHashMap, FxHashSet};

use irpass_ir::{DType, Tensor};

use super::graph::{Shapes, attr_float};
use super::view::{GraphView, remove_nodes};
use crate::proto::{GraphProto, NodeProto, TensorProto};
use crate::tensor::{dtype_of, proto_of};

/// Rewrites each `Add(Mul(x, scale), shift)` of `g` whose `scale` and `shift` are per-channel
/// float initializers of `x` (channels on axis 1, `shapes` giving `x`'s rank) and whose
/// product has no other use.
pub(crate) fn fuse(g: &mut GraphProto, shapes: &Shapes, opaque: &FxHashSet<String>) {
    let fusions = find(&GraphView::new(g, opaque), shapes);
    if fusions.is_empty() {
        return;
    }
    let mut removed = vec![false; g.node.len()];
    // Each initializer flattened to (C) once, however many fusions read it.
    let mut flat: FxHashMap<String, String> = FxHashMap::default();
    let mut new_inits: Vec<TensorProto> = Vec::new();
    let mut vector = |t: &TensorProto, c: i64, inits: &mut Vec<TensorProto>| {
        flat.entry(t.name().to_string())
            .or_insert_with(|| {
                let mut v = t.clone();
                v.name = Some(format!("{}_channels", t.name()));
                v.dims = vec![c];
                inits.push(v);
                format!("{}_channels", t.name())
            })
            .clone()
    };
    for f in fusions {
        let scale = vector(&f.scale, f.channels, &mut new_inits);
        let shift = vector(&f.shift, f.channels, &mut new_inits);
        let mut constant = |value: f64| {
            let name = format!("bn_{}_{}_{value}", f.dtype.name(), f.channels);
            if !new_inits.iter().any(|t| t.name() == name) {
                let t = Tensor::full(f.dtype, &[f.channels as usize], value);
                new_inits.push(proto_of(&name, &t));
            }
            name
        };
        let (mean, var) = (constant(0.0), constant(1.0));
        g.node[f.mul] = NodeProto {
            op_type: Some("BatchNormalization".into()),
            name: g.node[f.mul].name.clone(),
            input: vec![f.x, scale, shift, mean, var],
            output: g.node[f.add].output.clone(),
            attribute: vec![attr_float("epsilon", 0.0)],
            ..NodeProto::default()
        };
        removed[f.add] = true;
    }
    remove_nodes(g, &removed);
    g.initializer.extend(new_inits);
}

/// A scale and shift to fuse: the `Mul` (which becomes the `BatchNormalization`), the `Add`
/// (removed), the scaled value and the two initializers.
struct Fusion {
    mul: usize,
    add: usize,
    x: String,
    scale: TensorProto,
    shift: TensorProto,
    channels: i64,
    dtype: DType,
}

/// The fusions of the graph `v` indexes.
fn find(v: &GraphView<'_>, shapes: &Shapes) -> Vec<Fusion> {
    let mut fusions = Vec::new();
    for (add, n) in v.g.node.iter().enumerate() {
        if n.op_type() != "Add" || n.input.len() != 2 || v.opaque.contains(n.name()) {
            continue;
        }
        let found = (0..2).find_map(|side| {
            let (product, shift) = (&n.input[side], &n.input[1 - side]);
            let m = v.single_use(product, "Mul")?;
            let &(rank, _) = shapes.get(product.as_str())?;
            if m.input.len() != 2 {
                return None;
            }
            let shift = *v.inits.get(shift.as_str())?;
            let (c, dtype) = channels(shift, rank)?;
            (0..2).find_map(|k| {
                let scale = *v.inits.get(m.input[1 - k].as_str())?;
                (channels(scale, rank)? == (c, dtype)).then(|| Fusion {
                    mul: v.producer[product.as_str()],
                    add,
                    x: m.input[k].clone(),
                    scale: scale.clone(),
                    shift: shift.clone(),
                    channels: c,
                    dtype,
                })
            })
        });
        fusions.extend(found);
    }
    fusions
}

/// The channel count and dtype of `t` as a per-channel constant of a rank-`rank` tensor with
/// channels on axis 1: shape `(C, 1, ..., 1)` with `rank - 2` ones, or `(1, C, 1, ..., 1)` of
/// rank `rank`; a float tensor only.
fn channels(t: &TensorProto, rank: usize) -> Option<(i64, DType)> {
    let dtype = dtype_of(t.data_type()).ok().filter(|d| d.is_float())?;
    if rank < 3 {
        return None;
    }
    let dims = match t.dims.as_slice() {
        [1, rest @ ..] if t.dims.len() == rank => rest,
        d if d.len() == rank - 1 => d,
        _ => return None,
    };
    let (&c, ones) = dims.split_first()?;
    ones.iter().all(|&d| d == 1).then_some((c, dtype))
}
