//! Reductions: sum, mean, max, min, prod over axes, with `keepdims` and `exclude`.

use super::util::*;
use super::{Arity, AttrDefault, AttrKind, AttrReader, AttrSpec, OpDef, OpPattern};
use crate::{Dim, Tensor, TensorType, Type, Value};

const REDUCE_ATTRS: &[AttrSpec] = &[
    AttrSpec {
        name: "axis",
        kind: AttrKind::OptInts,
        default: AttrDefault::Null,
    },
    AttrSpec {
        name: "keepdims",
        kind: AttrKind::Bool,
        default: AttrDefault::Bool(false),
    },
    AttrSpec {
        name: "exclude",
        kind: AttrKind::Bool,
        default: AttrDefault::Bool(false),
    },
];

/// The reduced axes (sorted, unique).
fn reduced_axes(r: &AttrReader<'_>, rank: usize) -> Result<Vec<usize>, String> {
    let op = r.op_name();
    let mut axes: Vec<usize> = match r.opt_ints("axis") {
        None => (0..rank).collect(),
        Some(list) => list
            .iter()
            .map(|&a| axis(op, a, rank))
            .collect::<Result<_, _>>()?,
    };
    axes.sort_unstable();
    axes.dedup();
    if r.bool("exclude") {
        axes = (0..rank).filter(|a| !axes.contains(a)).collect();
    }
    Ok(axes)
}

fn reduce_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let x = tensor_ty(r.op_name(), args, 0)?;
    let axes = reduced_axes(r, x.rank())?;
    let keep = r.bool("keepdims");
    let shape: Vec<Dim> = x
        .shape
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (axes.contains(&i), keep) {
            (true, true) => Some(Dim::Static(1)),
            (true, false) => None,
            (false, _) => Some(d),
        })
        .collect();
    Ok(Type::from(TensorType {
        shape,
        dtype: x.dtype,
    }))
}

fn reduce(
    args: &[Value],
    r: &AttrReader<'_>,
    init: f64,
    f: fn(f64, f64) -> f64,
    mean: bool,
) -> Result<Value, String> {
    let x = tensor_arg(r.op_name(), args, 0)?;
    let shape = x.shape().to_vec();
    let axes = reduced_axes(r, shape.len())?;
    let keep = r.bool("keepdims");
    let out_shape: Vec<usize> = shape
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (axes.contains(&i), keep) {
            (true, true) => Some(1),
            (true, false) => None,
            (false, _) => Some(d),
        })
        .collect();
    let kept: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(i, &d)| if axes.contains(&i) { 1 } else { d })
        .collect();
    let n_out: usize = kept.iter().product();
    let mut acc = vec![init; n_out];
    let count: usize = axes.iter().map(|&a| shape[a]).product();
    let strides: Vec<usize> = (0..kept.len())
        .map(|i| kept[i + 1..].iter().product())
        .collect();
    for (flat, v) in x.values().into_iter().enumerate() {
        let mut rem = flat;
        let mut out_idx = 0;
        for (i, &d) in shape.iter().enumerate() {
            let inner: usize = shape[i + 1..].iter().product();
            let coord = rem / inner.max(1);
            rem %= inner.max(1);
            let _ = d;
            if !axes.contains(&i) {
                out_idx += coord * strides[i];
            }
        }
        acc[out_idx] = f(acc[out_idx], v);
    }
    if mean {
        for a in &mut acc {
            *a /= count.max(1) as f64;
        }
    }
    if x.dtype().is_int() && !mean {
        // Integer sums/products are exact in i64 when they fit; recompute in integers.
        let xi = x.to_i64();
        let mut acci = vec![if init == 1.0 { 1i64 } else { 0 }; n_out];
        let is_prod = init == 1.0;
        let is_max = init == f64::NEG_INFINITY;
        let is_min = init == f64::INFINITY;
        if is_max {
            acci.fill(i64::MIN)
        }
        if is_min {
            acci.fill(i64::MAX)
        }
        for (flat, &v) in xi.iter().enumerate() {
            let mut rem = flat;
            let mut out_idx = 0;
            for i in 0..shape.len() {
                let inner: usize = shape[i + 1..].iter().product();
                let coord = rem / inner.max(1);
                rem %= inner.max(1);
                if !axes.contains(&i) {
                    out_idx += coord * strides[i];
                }
            }
            let a = &mut acci[out_idx];
            *a = if is_prod {
                a.wrapping_mul(v)
            } else if is_max {
                (*a).max(v)
            } else if is_min {
                (*a).min(v)
            } else {
                a.wrapping_add(v)
            };
        }
        let t = Tensor::from_i64(
            x.dtype(),
            ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&out_shape), acci)
                .map_err(|e| e.to_string())?,
        );
        return Ok(Value::tensor(t));
    }
    Ok(Value::tensor(Tensor::from_vec(x.dtype(), &out_shape, acc)?))
}

inventory::submit! {
    OpDef { name: "sum", description: "Sum over axes.", arity: Arity::Exact(1), attrs: REDUCE_ATTRS, pattern: OpPattern::CommReduce, type_rel: reduce_rel, kernel: |a, r| reduce(a, r, 0.0, |x, y| x + y, false) }
}
inventory::submit! {
    OpDef { name: "mean", description: "Mean over axes.", arity: Arity::Exact(1), attrs: REDUCE_ATTRS, pattern: OpPattern::CommReduce, type_rel: reduce_rel, kernel: |a, r| reduce(a, r, 0.0, |x, y| x + y, true) }
}
inventory::submit! {
    OpDef { name: "max", description: "Maximum over axes.", arity: Arity::Exact(1), attrs: REDUCE_ATTRS, pattern: OpPattern::CommReduce, type_rel: reduce_rel, kernel: |a, r| reduce(a, r, f64::NEG_INFINITY, |x, y| if y > x || y.is_nan() { y } else { x }, false) }
}
inventory::submit! {
    OpDef { name: "min", description: "Minimum over axes.", arity: Arity::Exact(1), attrs: REDUCE_ATTRS, pattern: OpPattern::CommReduce, type_rel: reduce_rel, kernel: |a, r| reduce(a, r, f64::INFINITY, |x, y| if y < x || y.is_nan() { y } else { x }, false) }
}
inventory::submit! {
    OpDef { name: "prod", description: "Product over axes.", arity: Arity::Exact(1), attrs: REDUCE_ATTRS, pattern: OpPattern::CommReduce, type_rel: reduce_rel, kernel: |a, r| reduce(a, r, 1.0, |x, y| x * y, false) }
}
