//! Peephole fusions on the written graph: a constant per-channel bias added to a convolution
//! becomes the `Conv`'s bias input, a constant bias added to a `Gemm` its `C` input; then
//! initializers nothing uses (any earlier fusion's as well) are dropped.

use rustc_hash::{FxHashMap, FxHashSet};

use super::view::remove_nodes;
use crate::proto::{GraphProto, TensorProto};
use crate::tensor::values_of;

/// Applies the fusions to `g`.
pub(crate) fn fuse(g: &mut GraphProto, opaque: &FxHashSet<String>) {
    let mut uses: FxHashMap<String, usize> = FxHashMap::default();
    for i in g.node.iter().flat_map(crate::opaque::node_reads) {
        *uses.entry(i.to_string()).or_default() += 1;
    }
    for o in &g.output {
        *uses.entry(o.name().to_string()).or_default() += 1;
    }
    let producer: FxHashMap<String, usize> = g
        .node
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.output.iter().map(move |o| (o.clone(), i)))
        .collect();
    let inits: FxHashMap<String, usize> = g
        .initializer
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name().to_string(), i))
        .collect();
    let mut removed = vec![false; g.node.len()];
    let mut new_inits = Vec::new();
    for add in 0..g.node.len() {
        // (Nodes kept opaque are left as they came.)
        if g.node[add].op_type() != "Add"
            || g.node[add].input.len() != 2
            || opaque.contains(g.node[add].name())
        {
            continue;
        }
        for side in 0..2 {
            let (value, other) = (
                g.node[add].input[side].clone(),
                g.node[add].input[1 - side].clone(),
            );
            let Some(&p) = producer.get(&value) else {
                continue;
            };
            if removed[p]
                || uses.get(&value) != Some(&1)
                || opaque.contains(g.node[p].name())
                || !without_bias(g, p, &inits)
            {
                continue;
            }
            let kind = g.node[p].op_type().to_string();
            let bias = match kind.as_str() {
                "Conv" => channel_bias(g, &other, &producer, &inits, &uses, &removed)
                    .filter(|(_, _, c)| conv_channels(g, p, &inits).map_or(*c != 1, |m| m == *c))
                    .map(|(b, r, _)| (b, r)),
                "Gemm" if plain_gemm(g, p) => row_bias(g, &other, &inits),
                _ => None,
            };
            let Some((bias, through_reshape)) = bias else {
                continue;
            };
            let name = match bias {
                Bias::Existing(n) => n,
                Bias::New(t) => {
                    let n = t.name().to_string();
                    // One flattened copy however many convolutions share the bias.
                    if !new_inits.iter().any(|u: &TensorProto| u.name() == n) {
                        new_inits.push(*t);
                    }
                    n
                }
            };
            if let Some(r) = through_reshape {
                removed[r] = true;
            }
            let out = g.node[add].output.clone();
            g.node[p].input.truncate(2);
            g.node[p].input.push(name);
            g.node[p].output = out;
            removed[add] = true;
            break;
        }
    }
    remove_nodes(g, &removed);
    g.initializer.extend(new_inits);
    let used: rustc_hash::FxHashSet<&str> = g
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

enum Bias {
    Existing(String),
    New(Box<TensorProto>),
}

/// Whether node `p` (a Conv or a Gemm) has no bias yet: two inputs, or a Gemm's C that is the
/// zero scalar written where C is required (before opset 11).
fn without_bias(g: &GraphProto, p: usize, inits: &FxHashMap<String, usize>) -> bool {
    match g.node[p].input.as_slice() {
        [_, _] => true,
        [_, _, c] if g.node[p].op_type() == "Gemm" => inits.get(c).is_some_and(|&i| {
            let t = &g.initializer[i];
            t.dims.is_empty() && values_of(t).is_some_and(|v| v == [0.0])
        }),
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
/// the fusion then removes).
fn channel_bias(
    g: &GraphProto,
    name: &str,
    producer: &FxHashMap<String, usize>,
    inits: &FxHashMap<String, usize>,
    uses: &FxHashMap<String, usize>,
    removed: &[bool],
) -> Option<(Bias, Option<usize>, i64)> {
    if let Some(&i) = inits.get(name) {
        let t = &g.initializer[i];
        let c = match t.dims.as_slice() {
            [c, 1, 1] | [1, c, 1, 1] => *c,
            _ => return None,
        };
        let mut flat = t.clone();
        flat.dims = vec![c];
        flat.name = Some(format!("{name}_bias"));
        return Some((Bias::New(Box::new(flat)), None, c));
    }
    let &r = producer.get(name)?;
    let reshape = &g.node[r];
    if removed[r]
        || reshape.op_type() != "Reshape"
        || reshape.input.len() != 2
        || uses.get(name) != Some(&1)
    {
        return None;
    }
    let &b = inits.get(&reshape.input[0])?;
    let &s = inits.get(&reshape.input[1])?;
    let shape: Vec<i64> = values_of(&g.initializer[s])?
        .iter()
        .map(|&d| d as i64)
        .collect();
    let bias = &g.initializer[b];
    match (bias.dims.as_slice(), shape.as_slice()) {
        ([c], [c2, 1, 1] | [1, c2, 1, 1]) if c == c2 => {
            Some((Bias::Existing(bias.name().to_string()), Some(r), *c))
        }
        _ => None,
    }
}

/// The output channels of the convolution `p`, when its weight is an initializer.
fn conv_channels(g: &GraphProto, p: usize, inits: &FxHashMap<String, usize>) -> Option<i64> {
    let &w = inits.get(&g.node[p].input[1])?;
    g.initializer[w].dims.first().copied()
}

/// `name` as a Gemm's `C`: an initializer of shape (), (N) or (1, N).
fn row_bias(
    g: &GraphProto,
    name: &str,
    inits: &FxHashMap<String, usize>,
) -> Option<(Bias, Option<usize>)> {
    let &i = inits.get(name)?;
    matches!(g.initializer[i].dims.as_slice(), [] | [_] | [1, _])
        .then(|| (Bias::Existing(name.to_string()), None))
}
