//! Peephole fusions on the written graph: a constant per-channel bias added to a convolution
//! becomes the `Conv`'s bias input, a constant bias added to a `Gemm` its `C` input, a product
//! by a reciprocal read once a division (`x * rsqrt(v)` is `Div(x, Sqrt(v))`, two nodes where
//! ONNX has no `Rsqrt`); then initializers nothing uses (any earlier fusion's as well) are
//! dropped. The fusions are found
//! on the graph's index ([`GraphView`]) and applied afterwards.

use rustc_hash::FxHashSet;

use super::view::{GraphView, remove_nodes};
use crate::proto::{GraphProto, TensorProto};
use crate::tensor::values_of;

/// One fusion found: the `Add` node, the `Conv` or `Gemm` node taking its bias, the bias,
/// and the `Reshape` node the bias went through (removed with the `Add`).
struct Fusion {
    add: usize,
    node: usize,
    bias: Bias,
    reshape: Option<usize>,
}

enum Bias {
    Existing(String),
    New(Box<TensorProto>),
}

/// Applies the fusions to `g`.
pub(crate) fn fuse(g: &mut GraphProto, opaque: &FxHashSet<String>) {
    let fusions = {
        let v = GraphView::new(g, opaque);
        find(&v)
    };
    let mut removed = vec![false; g.node.len()];
    let mut new_inits: Vec<TensorProto> = Vec::new();
    for f in fusions {
        let name = match f.bias {
            Bias::Existing(n) => n,
            Bias::New(t) => {
                let n = t.name().to_string();
                // One flattened copy however many convolutions share the bias.
                if !new_inits.iter().any(|u| u.name() == n) {
                    new_inits.push(*t);
                }
                n
            }
        };
        if let Some(r) = f.reshape {
            removed[r] = true;
        }
        let out = g.node[f.add].output.clone();
        let node = &mut g.node[f.node];
        node.input.truncate(2);
        node.input.push(name);
        node.output = out;
        removed[f.add] = true;
    }
    remove_nodes(g, &removed);
    g.initializer.extend(new_inits);
    divisions(g, opaque);
    drop_unused_initializers(g);
}

/// Drops the initializers of `g` that no node and no output reads.
pub(crate) fn drop_unused_initializers(g: &mut GraphProto) {
    let used: FxHashSet<&str> = g
        .node
        .iter()
        .flat_map(crate::opaque::node_reads)
        .chain(g.output.iter().map(|o| o.name()))
        .collect();
    let keep: Vec<bool> = g
        .initializer
        .iter()
        .map(|t| used.contains(t.name()))
        .collect();
    let mut i = 0;
    g.initializer.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

/// Each `Mul` of a value by the output of a `Reciprocal` that nothing else reads becomes a
/// `Div` by the reciprocal's input, and the `Reciprocal` goes.
fn divisions(g: &mut GraphProto, opaque: &FxHashSet<String>) {
    let found: Vec<(usize, usize, usize)> = {
        let v = GraphView::new(g, opaque);
        g.node
            .iter()
            .enumerate()
            .filter(|(_, n)| {
                n.op_type() == "Mul" && n.input.len() == 2 && !opaque.contains(n.name())
            })
            .filter_map(|(m, n)| {
                (0..2).find_map(|side| {
                    v.single_use(&n.input[side], "Reciprocal")?;
                    Some((m, v.producer[n.input[side].as_str()], side))
                })
            })
            .collect()
    };
    if found.is_empty() {
        return;
    }
    let mut removed = vec![false; g.node.len()];
    for (m, r, side) in found {
        let divisor = g.node[r].input[0].clone();
        let mul = &mut g.node[m];
        let x = mul.input[1 - side].clone();
        mul.op_type = Some("Div".into());
        mul.input = vec![x, divisor];
        removed[r] = true;
    }
    remove_nodes(g, &removed);
}

/// The fusions of the graph `v` indexes: each `Add` of a constant bias to the only use of a
/// `Conv` or `Gemm` that has none (nodes kept opaque are left as they came).
fn find(v: &GraphView<'_>) -> Vec<Fusion> {
    let g = v.g;
    let mut reshapes_taken: FxHashSet<usize> = FxHashSet::default();
    let mut out = Vec::new();
    for (add, n) in g.node.iter().enumerate() {
        if n.op_type() != "Add" || n.input.len() != 2 || v.opaque.contains(n.name()) {
            continue;
        }
        for side in 0..2 {
            let (value, other) = (n.input[side].as_str(), n.input[1 - side].as_str());
            let Some(&p) = v.producer.get(value) else {
                continue;
            };
            if v.uses.get(value) != Some(&1)
                || v.opaque.contains(g.node[p].name())
                || !without_bias(v, p)
            {
                continue;
            }
            let bias = match g.node[p].op_type() {
                "Conv" => channel_bias(v, other, &reshapes_taken)
                    .filter(|(_, _, c)| conv_channels(v, p).map_or(*c != 1, |m| m == *c))
                    .map(|(b, r, _)| (b, r)),
                "Gemm" if plain_gemm(g, p) => row_bias(v, other),
                _ => None,
            };
            let Some((bias, reshape)) = bias else {
                continue;
            };
            reshapes_taken.extend(reshape);
            out.push(Fusion {
                add,
                node: p,
                bias,
                reshape,
            });
            break;
        }
    }
    out
}

/// Whether node `p` (a Conv or a Gemm) has no bias yet: two inputs, or a Gemm's C that is the
/// zero scalar written where C is required (before opset 11).
fn without_bias(v: &GraphView<'_>, p: usize) -> bool {
    let node = &v.g.node[p];
    match node.input.as_slice() {
        [_, _] => true,
        [_, _, c] if node.op_type() == "Gemm" => v
            .inits
            .get(c.as_str())
            .is_some_and(|t| t.dims.is_empty() && values_of(t).is_some_and(|v| v == [0.0])),
        _ => false,
    }
}

/// A Gemm with the default alpha, beta (no C yet).
fn plain_gemm(g: &GraphProto, p: usize) -> bool {
    g.node[p]
        .attribute
        .iter()
        .all(|a| !matches!(a.name(), "alpha" | "beta") || a.f == Some(1.0))
}

/// `name` as a per-channel bias of an NCHW convolution: an initializer of shape (C, 1, 1) or
/// (1, C, 1, 1), or a rank-1 initializer reshaped to one of them by a Reshape used once (which
/// the fusion then removes, unless an earlier fusion took it).
fn channel_bias(
    v: &GraphView<'_>,
    name: &str,
    taken: &FxHashSet<usize>,
) -> Option<(Bias, Option<usize>, i64)> {
    if let Some(t) = v.inits.get(name) {
        let c = match t.dims.as_slice() {
            [c, 1, 1] | [1, c, 1, 1] => *c,
            _ => return None,
        };
        let mut flat = (*t).clone();
        flat.dims = vec![c];
        flat.name = Some(format!("{name}_bias"));
        return Some((Bias::New(Box::new(flat)), None, c));
    }
    let &r = v.producer.get(name)?;
    let reshape = &v.g.node[r];
    if taken.contains(&r)
        || reshape.op_type() != "Reshape"
        || reshape.input.len() != 2
        || v.uses.get(name) != Some(&1)
    {
        return None;
    }
    let bias = v.inits.get(reshape.input[0].as_str())?;
    let shape: Vec<i64> = values_of(v.inits.get(reshape.input[1].as_str())?)?
        .iter()
        .map(|&d| d as i64)
        .collect();
    match (bias.dims.as_slice(), shape.as_slice()) {
        ([c], [c2, 1, 1] | [1, c2, 1, 1]) if c == c2 => {
            Some((Bias::Existing(bias.name().to_string()), Some(r), *c))
        }
        _ => None,
    }
}

/// The output channels of the convolution `p`, when its weight is an initializer.
fn conv_channels(v: &GraphView<'_>, p: usize) -> Option<i64> {
    v.inits
        .get(v.g.node[p].input[1].as_str())?
        .dims
        .first()
        .copied()
}

/// `name` as a Gemm's `C`: an initializer of shape (), (N) or (1, N).
fn row_bias(v: &GraphView<'_>, name: &str) -> Option<(Bias, Option<usize>)> {
    let t = v.inits.get(name)?;
    matches!(t.dims.as_slice(), [] | [_] | [1, _]).then(|| (Bias::Existing(name.to_string()), None))
}
