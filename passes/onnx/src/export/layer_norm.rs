//! At opset 17 and later, on the written graph: the decomposition of a layer normalisation
//! over the last axis (what `SimplifyInference` and exporters below opset 17 write:
//! `ReduceMean`, `Sub`, `Mul` or `Pow` by 2, `ReduceMean`, `Add` epsilon, `Sqrt`, `Div`, then
//! maybe a constant `Mul` and `Add` along the last axis) becomes one `LayerNormalization`.
//! Only intermediate values nothing else uses are replaced.

use irpass_ir::{DType, Tensor};

use super::view::{GraphView, remove_nodes};
use super::walk::{attr_float, attr_int};
use crate::proto::{GraphProto, NodeProto, TensorProto};
use crate::tensor::{proto_of, values_of};

impl GraphView<'_> {
    /// The dimensions and values of a float32 initializer.
    fn floats(&self, name: &str) -> Option<(Vec<i64>, Vec<f32>)> {
        let t = self.inits.get(name)?;
        if t.data_type != Some(1) {
            return None;
        }
        let v = values_of(t)?.iter().map(|&x| x as f32).collect();
        Some((t.dims.clone(), v))
    }

    /// Whether `n` is a ReduceMean over the last axis of a value of `rank` (if known; -1 is the
    /// last axis of any rank), keeping it.
    fn last_mean(&self, n: &NodeProto, rank: Option<usize>) -> bool {
        let attr = |k: &str| n.attribute.iter().find(|a| a.name() == k);
        if attr("keepdims").and_then(|a| a.i) == Some(0) {
            return false;
        }
        let axes: Vec<i64> = match (attr("axes"), n.input.get(1)) {
            (Some(a), _) => a.ints.clone(),
            (None, Some(i)) => match self.inits.get(i.as_str()).and_then(|t| values_of(t)) {
                Some(v) => v.iter().map(|&a| a as i64).collect(),
                None => return false,
            },
            _ => return false,
        };
        matches!(axes.as_slice(), [a] if *a == -1 || rank.is_some_and(|r| *a == r as i64 - 1))
    }
}

/// A float32 vector initializer named `name`.
fn vector(name: &str, v: &[f32]) -> TensorProto {
    let values = v.iter().map(|&x| f64::from(x)).collect();
    proto_of(
        name,
        &Tensor::from_vec(DType::Float32, &[v.len()], values).expect("a vector"),
    )
}

/// Replaces each recognised decomposition in `g`; `last_dims` gives the rank and the size of
/// the last axis of the values the walk wrote.
pub(crate) fn recognise(g: &mut GraphProto, last_dims: &super::walk::Shapes) {
    let mut replaced: Vec<(usize, Vec<usize>, NodeProto, Vec<TensorProto>)> = Vec::new();
    {
        let view = GraphView::new(g);
        let mut taken = vec![false; g.node.len()];
        for (i, div) in g.node.iter().enumerate() {
            if let Some((nodes, ln, inits)) = match_at(&view, div, i, last_dims) {
                if nodes.iter().any(|&k| taken[k]) {
                    continue;
                }
                for &k in &nodes {
                    taken[k] = true;
                }
                let place = *nodes.last().expect("the division at least");
                replaced.push((place, nodes, ln, inits));
            }
        }
    }
    if replaced.is_empty() {
        return;
    }
    let mut remove = vec![false; g.node.len()];
    for (at, nodes, ln, inits) in replaced {
        for k in nodes {
            remove[k] = true;
        }
        remove[at] = false;
        g.node[at] = ln;
        g.initializer.extend(inits);
    }
    remove_nodes(g, &remove);
}

/// The decomposition ending at `div` (node `at`): the nodes it replaces (the last one is where
/// the replacement goes), the `LayerNormalization` and its new initializers.
fn match_at(
    v: &GraphView<'_>,
    div: &NodeProto,
    at: usize,
    last_dims: &super::walk::Shapes,
) -> Option<(Vec<usize>, NodeProto, Vec<TensorProto>)> {
    if div.op_type() != "Div" {
        return None;
    }
    let (d, s) = (div.input[0].as_str(), div.input[1].as_str());
    let sub = v.node(d, "Sub")?;
    let x = sub.input[0].as_str();
    let mean = v.single_use(&sub.input[1], "ReduceMean")?;
    let rank = last_dims.get(x).map(|&(r, _)| r);
    if mean.input[0] != x || !v.last_mean(mean, rank) {
        return None;
    }
    let sqrt = v.single_use(s, "Sqrt")?;
    let add = v.single_use(&sqrt.input[0], "Add")?;
    let (var, eps) = (add.input[0].as_str(), add.input[1].as_str());
    let (_, eps) = v.floats(eps).filter(|(_, e)| e.len() == 1)?;
    let var_mean = v.single_use(var, "ReduceMean")?;
    if !v.last_mean(var_mean, rank) {
        return None;
    }
    let sq_name = var_mean.input[0].as_str();
    let sq = &v.g.node[*v.producer.get(sq_name)?];
    let squares_d = match sq.op_type() {
        "Mul" => sq.input[0] == d && sq.input[1] == d,
        "Pow" => sq.input[0] == d && v.floats(&sq.input[1]).is_some_and(|(_, p)| p == [2.0]),
        _ => false,
    };
    // d feeds the square (once or twice) and the division, and nothing else.
    let d_uses = if sq.op_type() == "Mul" { 3 } else { 2 };
    if !squares_d || v.uses.get(sq_name) != Some(&1) || v.uses.get(d) != Some(&d_uses) {
        return None;
    }
    // The nodes replaced, in order: the last one is where the replacement goes (all its
    // inputs are ready there).
    let mut nodes: Vec<usize> = [mean, sub, sq, var_mean, add, sqrt]
        .iter()
        .map(|n| v.producer[n.output[0].as_str()])
        .collect();
    nodes.push(at);
    // The channel count: the length of a following constant scale or shift, else unknown.
    let mut out = div.output[0].clone();
    let mut gamma: Option<Vec<f32>> = None;
    let mut beta: Option<Vec<f32>> = None;
    let consumer = |name: &str, op: &str| -> Option<(usize, Vec<f32>, String)> {
        if v.uses.get(name) != Some(&1) {
            return None;
        }
        let (k, n) =
            v.g.node
                .iter()
                .enumerate()
                .find(|(_, n)| n.input.iter().any(|i| i == name))?;
        if n.op_type() != op {
            return None;
        }
        let other = if n.input[0] == name {
            &n.input[1]
        } else {
            &n.input[0]
        };
        let (dims, vals) = v.floats(other)?;
        let c = *dims.last()?;
        (!dims.is_empty()
            && dims[..dims.len() - 1].iter().all(|&d| d == 1)
            && vals.len() == c as usize)
            .then(|| (k, vals, n.output[0].clone()))
    };
    if let Some((k, g, o)) = consumer(&out, "Mul") {
        nodes.push(k);
        (gamma, out) = (Some(g), o);
    }
    if let Some((k, b, o)) = consumer(&out, "Add") {
        if gamma.as_ref().is_none_or(|g| g.len() == b.len()) {
            nodes.push(k);
            (beta, out) = (Some(b), o);
        }
    }
    let c = match gamma.as_ref().or(beta.as_ref()) {
        Some(v) => v.len(),
        None => usize::try_from(last_dims.get(x)?.1).ok()?,
    };
    let gamma = gamma.unwrap_or_else(|| vec![1.0; c]);
    let beta = beta.unwrap_or_else(|| vec![0.0; c]);
    let (gname, bname) = (format!("{out}_ln_scale"), format!("{out}_ln_bias"));
    let ln = NodeProto {
        input: vec![x.to_string(), gname.clone(), bname.clone()],
        output: vec![out],
        name: Some(format!("LayerNormalization_{at}")),
        op_type: Some("LayerNormalization".into()),
        attribute: vec![
            attr_int("axis", -1),
            attr_float("epsilon", f64::from(eps[0])),
        ],
        ..NodeProto::default()
    };
    Some((
        nodes,
        ln,
        vec![vector(&gname, &gamma), vector(&bname, &beta)],
    ))
}
