//! From opset 23, an RMS normalisation over the last axis written out — `x / sqrt(mean(x²) +
//! eps) · scale` (LLaMA's and T5's, as the writer leaves it: `Pow` or `Mul` for the square,
//! `ReduceMean` over the last axis keeping it, `Add`, `Sqrt`, `Div`, then the product by a
//! constant scale on either side) — becomes one `RMSNormalization` node. Each intermediate
//! value must be read only inside the decomposition.

use rustc_hash::FxHashSet;

use super::graph::Shapes;
use super::view::{GraphView, collapse, other_input};
use crate::import::attrs::NodeAttrs;
use crate::proto::attribute_proto::AttributeType;
use crate::proto::{AttributeProto, GraphProto, NodeProto};
use crate::tensor::values_of;

/// The first opset with `RMSNormalization`.
pub(crate) const RMS_NORM_SINCE: i64 = 23;

/// One decomposition found: its nodes (the last, the product by the scale, becomes the
/// `RMSNormalization`), `x`, the scale and epsilon.
struct Found {
    nodes: Vec<usize>,
    x: String,
    scale: String,
    eps: f32,
}

/// Rewrites each RMS normalisation's decomposition in `g` into one `RMSNormalization` node;
/// `shapes` gives values' ranks and last sizes.
pub(crate) fn fuse(g: &mut GraphProto, shapes: &Shapes, opaque: &FxHashSet<String>) {
    let found: Vec<(Vec<usize>, Found)> = {
        let v = GraphView::new(g, opaque);
        (0..g.node.len())
            .filter_map(|i| find(&v, shapes, i))
            .map(|f| (f.nodes.clone(), f))
            .collect()
    };
    collapse(g, found, |old, f| NodeProto {
        op_type: Some("RMSNormalization".into()),
        input: vec![f.x, f.scale],
        attribute: vec![
            AttributeProto {
                name: Some("axis".into()),
                r#type: Some(AttributeType::Int as i32),
                i: Some(-1),
                ..Default::default()
            },
            AttributeProto {
                name: Some("epsilon".into()),
                r#type: Some(AttributeType::Float as i32),
                f: Some(f.eps),
                ..Default::default()
            },
        ],
        output: old.output.clone(),
        name: old.name.clone(),
        // (FuseOps's group mark, when groups are outlined.)
        doc_string: old.doc_string.clone(),
        ..Default::default()
    });
}

/// The values of the initializer `name`, if it is one.
fn constant(v: &GraphView<'_>, name: &str) -> Option<Vec<f64>> {
    values_of(v.inits.get(name)?)
}

/// The decomposition whose `Div` is node `div`, if it is one.
fn find(v: &GraphView<'_>, shapes: &Shapes, div: usize) -> Option<Found> {
    let g = v.g;
    let d = &g.node[div];
    if d.op_type() != "Div" || d.input.len() != 2 || v.opaque.contains(d.name()) {
        return None;
    }
    let x = d.input[0].as_str();
    let &(rank, last) = shapes.get(x)?;
    let sqrt = v.single_use(&d.input[1], "Sqrt")?;
    let add = v.single_use(&sqrt.input[0], "Add")?;
    let (mean_name, eps) = (0..2).find_map(|side| {
        let eps = constant(v, &add.input[1 - side])?;
        (eps.len() == 1).then(|| (add.input[side].as_str(), eps[0]))
    })?;
    let mean = v.single_use(mean_name, "ReduceMean")?;
    // Over the last axis, kept: `axes` an attribute, or an input from opset 18.
    let attrs = NodeAttrs(mean);
    let axes: Vec<i64> = match mean.input.get(1) {
        Some(a) => constant(v, a)?.iter().map(|&a| a as i64).collect(),
        None => attrs.ints("axes")?.to_vec(),
    };
    let keep = attrs.int_or("keepdims", 1) != 0;
    if !keep || !(axes == [-1] || axes == [rank as i64 - 1]) {
        return None;
    }
    let square_name = mean.input[0].as_str();
    let square = v
        .single_use(square_name, "Pow")
        .or_else(|| v.single_use(square_name, "Mul"))?;
    let squares_x = match square.op_type() {
        "Pow" => constant(v, &square.input[1]).is_some_and(|p| p == [2.0]),
        _ => square.input[1] == square.input[0],
    };
    if !squares_x || square.input[0] != x {
        return None;
    }
    // The product by a constant scale of the last axis's size.
    let mul = v.sole_reader(&d.output[0], "Mul")?;
    let scale = other_input(&g.node[mul], &d.output[0])?;
    let scale_t = v.inits.get(scale)?;
    if scale_t.dims != [last] {
        return None;
    }
    let at = |name: &str| v.producer[name];
    Some(Found {
        nodes: vec![
            at(square_name),
            at(mean_name),
            at(&sqrt.input[0]),
            at(&d.input[1]),
            div,
            mul,
        ],
        x: x.to_string(),
        scale: scale.to_string(),
        eps: eps as f32,
    })
}
