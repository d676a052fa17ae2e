//! From opset 20, the decomposition of a GELU becomes one `Gelu` node: the exact one, `x · ½
//! (1 + erf(x / √2))` (the division by √2 written as one or as a product by 1/√2), and the
//! tanh approximation, `x · ½ (1 + tanh(√(2/π) (x + 0.044715 x³)))` (GPT-2's, `approximate =
//! "tanh"`), with the half and `x` multiplied in any of the orders exporters and the passes
//! leave them (`(x · (1 + erf)) · ½`, `(x · ½) · (1 + erf)`, `x · ((1 + erf) · ½)`). Each
//! intermediate value must be read only inside the decomposition.

use rustc_hash::FxHashSet;

use super::view::{GraphView, collapse, other_input};
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{AttributeProto, GraphProto, NodeProto};
use crate::tensor::values_of;

/// The first opset with `Gelu`.
pub(crate) const GELU_SINCE: i64 = 20;

/// One decomposition found: its nodes (the last one becomes the `Gelu`), `x`, and whether it
/// is the tanh approximation.
struct Found {
    nodes: Vec<usize>,
    x: String,
    tanh: bool,
}

/// Rewrites each GELU decomposition of `g` into one `Gelu` node.
pub(crate) fn fuse(g: &mut GraphProto, opaque: &FxHashSet<String>) {
    let found: Vec<(Vec<usize>, Found)> = {
        let v = GraphView::new(g, opaque);
        (0..g.node.len())
            .filter_map(|i| find(&v, i))
            .map(|f| (f.nodes.clone(), f))
            .collect()
    };
    collapse(g, found, |old, f| {
        let attribute = if f.tanh {
            vec![AttributeProto {
                name: Some("approximate".into()),
                r#type: Some(AttributeType::String as i32),
                s: Some(b"tanh".to_vec()),
                ..Default::default()
            }]
        } else {
            Vec::new()
        };
        NodeProto {
            op_type: Some("Gelu".into()),
            input: vec![f.x],
            attribute,
            output: old.output.clone(),
            name: old.name.clone(),
            // (FuseOps's group mark, when groups are outlined.)
            doc_string: old.doc_string.clone(),
            ..Default::default()
        }
    });
}

/// Whether `name` is a one-element initializer within float32's rounding of `want`.
fn is_scalar(v: &GraphView<'_>, name: &str, want: f64) -> bool {
    v.inits
        .get(name)
        .and_then(|t| values_of(t))
        .is_some_and(|vals| vals.len() == 1 && (vals[0] - want).abs() <= 1e-6 * want.abs())
}

/// The operand of the two-input `n` other than the scalar constant `want`, if one is.
fn other_than_scalar<'g>(v: &GraphView<'g>, n: &'g NodeProto, want: f64) -> Option<&'g str> {
    (0..2).find_map(|side| is_scalar(v, &n.input[side], want).then(|| n.input[1 - side].as_str()))
}

/// `x` and the nodes from it to the `Erf` (`x / √2`, `x · 1/√2`) or `Tanh` (`√(2/π) (x +
/// 0.044715 x³)`) node `e`, each read only on the way.
fn inner<'g>(v: &GraphView<'g>, e: &'g NodeProto) -> Option<(&'g str, Vec<usize>)> {
    let at = |name: &str| v.producer[name];
    if e.op_type() == "Erf" {
        let scaled = v
            .single_use(&e.input[0], "Div")
            .or_else(|| v.single_use(&e.input[0], "Mul"))?;
        let x = match scaled.op_type() {
            "Div" if is_scalar(v, &scaled.input[1], std::f64::consts::SQRT_2) => {
                scaled.input[0].as_str()
            }
            "Mul" => other_than_scalar(v, scaled, std::f64::consts::FRAC_1_SQRT_2)?,
            _ => return None,
        };
        return Some((x, vec![at(&e.input[0])]));
    }
    // √(2/π) · (x + 0.044715 · x³).
    let scaled = v.single_use(&e.input[0], "Mul")?;
    let sum_name = other_than_scalar(v, scaled, (2.0 / std::f64::consts::PI).sqrt())?;
    let sum = v.single_use(sum_name, "Add")?;
    let (x, cubed) = (0..2).find_map(|side| {
        let term = v.single_use(&sum.input[1 - side], "Mul")?;
        let pow_name = other_than_scalar(v, term, 0.044715)?;
        let pow = v.single_use(pow_name, "Pow")?;
        (pow.input[0] == sum.input[side] && is_scalar(v, &pow.input[1], 3.0)).then(|| {
            (
                sum.input[side].as_str(),
                (at(pow_name), at(&sum.input[1 - side])),
            )
        })
    })?;
    Some((x, vec![cubed.0, cubed.1, at(sum_name), at(&e.input[0])]))
}

/// The decomposition whose `Erf` or `Tanh` is node `act`, if it is one.
fn find(v: &GraphView<'_>, act: usize) -> Option<Found> {
    let g = v.g;
    let e = &g.node[act];
    if !matches!(e.op_type(), "Erf" | "Tanh") || v.opaque.contains(e.name()) {
        return None;
    }
    let (x, mut nodes) = inner(v, e)?;
    nodes.push(act);
    // 1 + erf.
    let add = v.sole_reader(&e.output[0], "Add")?;
    if other_than_scalar(v, &g.node[add], 1.0)? != e.output[0] {
        return None;
    }
    nodes.push(add);
    let one_plus = g.node[add].output[0].as_str();
    let m1 = v.sole_reader(one_plus, "Mul")?;
    let m1n = &g.node[m1];
    let other = other_input(m1n, one_plus)?;
    nodes.push(m1);
    if other == x {
        // (x · (1 + erf)) · ½.
        let m2 = v.sole_reader(&m1n.output[0], "Mul")?;
        other_than_scalar(v, &g.node[m2], 0.5)?;
        nodes.push(m2);
    } else if is_scalar(v, other, 0.5) {
        // x · ((1 + erf) · ½).
        let m2 = v.sole_reader(&m1n.output[0], "Mul")?;
        if other_input(&g.node[m2], &m1n.output[0])? != x {
            return None;
        }
        nodes.push(m2);
    } else {
        // (x · ½) · (1 + erf).
        let half = v.single_use(other, "Mul")?;
        if other_than_scalar(v, half, 0.5)? != x {
            return None;
        }
        nodes.insert(0, v.producer[other]);
    }
    Some(Found {
        nodes,
        x: x.to_string(),
        tanh: e.op_type() == "Tanh",
    })
}
