//! Shape and layout operators: reshape, reverse_reshape, transpose, expand_dims, squeeze, concatenate, split,
//! cast, layout_transform, copy, annotation.stop_fusion.

use super::util::*;
use super::{Arity, AttrDefault, AttrKind, AttrSpec, OpDef, OpPattern};
use crate::layout::{Layout, transform_tensor};
use crate::{AttrValue, Attrs, Dim, Tensor, Type, Value};

/// Relay's `newshape`: 0 copies the input dimension, -1 is inferred.
fn reshape_dims(op: &str, input: &[Dim], newshape: &[i64]) -> Result<Vec<Dim>, String> {
    let mut out = Vec::with_capacity(newshape.len());
    let mut infer = None;
    for (i, &d) in newshape.iter().enumerate() {
        match d {
            0 => out.push(*input.get(i).ok_or_else(|| {
                format!("`{op}`: 0 at position {i} has no input dimension to copy")
            })?),
            -1 => {
                if infer.replace(i).is_some() {
                    return Err(format!("`{op}`: newshape may contain -1 only once"));
                }
                out.push(Dim::Any);
            }
            d if d > 0 => out.push(Dim::Static(d)),
            d => {
                return Err(format!(
                    "`{op}`: invalid dimension {d} in newshape (use positive sizes, 0 or -1)"
                ));
            }
        }
    }
    let too_many = |what: &[Dim]| format!("`{op}`: {} has too many elements", shape_text(what));
    let known: Vec<Dim> = out
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != infer)
        .map(|(_, d)| *d)
        .collect();
    // Element counts as a static factor times named sizes: `batch` on both sides cancels.
    let (Some(total), Some(known_count)) = (symbolic_product(input), symbolic_product(&known))
    else {
        return Ok(out);
    };
    let (t, k) = (
        total.0.ok_or_else(|| too_many(input))?,
        known_count.0.ok_or_else(|| too_many(&out))?,
    );
    let mut rest = total.1;
    for s in &known_count.1 {
        match rest.iter().position(|r| r == s) {
            Some(p) => {
                rest.remove(p);
            }
            // The output names a size the input does not have: nothing can be checked.
            None => return Ok(out),
        }
    }
    match (infer, rest.as_slice()) {
        (Some(i), []) => {
            if k == 0 || t % k != 0 {
                return Err(format!(
                    "`{op}`: cannot reshape {} elements into {newshape:?}",
                    t
                ));
            }
            out[i] = Dim::Static(t / k);
        }
        (Some(i), [s]) if t == k => out[i] = Dim::Named(*s),
        (None, []) if t != k => {
            return Err(format!(
                "`{op}`: cannot reshape {} ({t} elements) into {} ({k} elements)",
                shape_text(input),
                shape_text(&out)
            ));
        }
        _ => {}
    }
    Ok(out)
}

inventory::submit! {
    OpDef {
        name: "reshape",
        description: "Reshapes to `newshape` (0 keeps the input dimension, -1 is inferred).",
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec { name: "newshape", kind: AttrKind::Ints, default: AttrDefault::Required },
            // Newer Relay prints it; only the default (0 keeps the input dimension) is supported.
            AttrSpec { name: "allowzero", kind: AttrKind::Int, default: AttrDefault::Int(0) },
        ],
        pattern: OpPattern::Injective,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            if r.int("allowzero") != 0 {
                return Err(format!("`{op}`: allowzero=1 is not supported"));
            }
            Ok(Type::with_dims(reshape_dims(op, &x.shape, &r.ints("newshape"))?, x.dtype))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let input: Vec<Dim> = x.shape().iter().map(|&d| Dim::Static(d as i64)).collect();
            let shape: Vec<usize> = reshape_dims(op, &input, &r.ints("newshape"))?.iter().map(|d| d.value().unwrap_or(0) as usize).collect();
            Ok(Value::tensor(x.reshape(&shape)?))
        },
    }
}

/// `reverse_reshape`'s output: `newshape` read from the right (0 copies the input dimension at
/// the same position from the end, -1 is inferred).
fn reverse_reshape_dims(op: &str, input: &[Dim], newshape: &[i64]) -> Result<Vec<Dim>, String> {
    let rin: Vec<Dim> = input.iter().rev().copied().collect();
    let rnew: Vec<i64> = newshape.iter().rev().copied().collect();
    let mut out = reshape_dims(op, &rin, &rnew)?;
    out.reverse();
    Ok(out)
}

inventory::submit! {
    OpDef {
        name: "reverse_reshape",
        description: "Reshapes to `newshape` read from the right: 0 keeps the input dimension at the same position from the end, -1 is inferred.",
        arity: Arity::Exact(1),
        attrs: &[AttrSpec { name: "newshape", kind: AttrKind::Ints, default: AttrDefault::Required }],
        pattern: OpPattern::Injective,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            Ok(Type::with_dims(reverse_reshape_dims(op, &x.shape, &r.ints("newshape"))?, x.dtype))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let input: Vec<Dim> = x.shape().iter().map(|&d| Dim::Static(d as i64)).collect();
            let shape: Vec<usize> = reverse_reshape_dims(op, &input, &r.ints("newshape"))?.iter().map(|d| d.value().unwrap_or(0) as usize).collect();
            Ok(Value::tensor(x.reshape(&shape)?))
        },
    }
}

/// The axis permutation a call of `transpose`, or of `layout_transform` between layouts of
/// the same letters, applies to a tensor of rank `rank` (output axis `i` is input axis
/// `p[i]`); `None` for other operators or attributes that are not a permutation.
pub fn permutation_of(op: super::Op, attrs: &Attrs, rank: usize) -> Option<Vec<usize>> {
    let name = op.name();
    match name {
        "transpose" => {
            let axes = op.attr_value(attrs, "axes").and_then(|a| a.as_int_list());
            permutation(name, axes, rank).ok()
        }
        "layout_transform" => {
            let src = Layout::parse(attrs.get("src_layout")?.as_str()?).ok()?;
            let dst = Layout::parse(attrs.get("dst_layout")?.as_str()?).ok()?;
            let plain = src.is_primal() && dst.is_primal() && src.same_axes(&dst);
            (plain && src.rank() == rank)
                .then(|| dst.axes().iter().map(|a| src.position(a.primal)).collect())
                .flatten()
        }
        _ => None,
    }
}

fn permutation(op: &str, axes: Option<Vec<i64>>, rank: usize) -> Result<Vec<usize>, String> {
    let Some(axes) = axes.filter(|a| !a.is_empty()) else {
        return Ok((0..rank).rev().collect());
    };
    if axes.len() != rank {
        return Err(format!(
            "`{op}`: axes {axes:?} must name each of the {rank} axes once"
        ));
    }
    let perm: Vec<usize> = axes
        .iter()
        .map(|&a| axis(op, a, rank))
        .collect::<Result<_, _>>()?;
    let mut seen = vec![false; rank];
    for &p in &perm {
        if std::mem::replace(&mut seen[p], true) {
            return Err(format!("`{op}`: axes {axes:?} name axis {p} twice"));
        }
    }
    Ok(perm)
}

inventory::submit! {
    OpDef {
        name: "transpose",
        description: "Permutes the axes (reverses them when `axes` is not given).",
        arity: Arity::Exact(1),
        attrs: &[AttrSpec { name: "axes", kind: AttrKind::OptInts, default: AttrDefault::Null }],
        pattern: OpPattern::Injective,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            let perm = permutation(op, r.opt_ints("axes"), x.rank())?;
            Ok(Type::with_dims(perm.iter().map(|&p| x.shape[p]).collect(), x.dtype))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let perm = permutation(op, r.opt_ints("axes"), x.shape().len())?;
            Ok(Value::tensor(x.permute(&perm)))
        },
    }
}

fn expand_dims_shape(op: &str, shape: &[Dim], ax: i64, num: i64) -> Result<Vec<Dim>, String> {
    let rank = shape.len() as i64;
    let a = if ax < 0 { ax + rank + 1 } else { ax };
    if a < 0 || a > rank {
        return Err(format!(
            "`{op}`: axis {ax} is out of range for a tensor of rank {rank}"
        ));
    }
    if num < 0 {
        return Err(format!(
            "`{op}`: num_newaxis must not be negative, got {num}"
        ));
    }
    // Checked before anything is allocated: one integer must not make a huge type.
    let new_rank = usize::try_from(num)
        .ok()
        .and_then(|n| n.checked_add(shape.len()))
        .filter(|&r| r <= MAX_RANK)
        .ok_or_else(|| {
            format!(
                "`{op}`: num_newaxis={num} would give rank {} above the limit of {MAX_RANK}",
                rank.saturating_add(num)
            )
        })?;
    let mut out = Vec::with_capacity(new_rank);
    out.extend_from_slice(&shape[..a as usize]);
    out.extend(std::iter::repeat_n(Dim::Static(1), num as usize));
    out.extend_from_slice(&shape[a as usize..]);
    Ok(out)
}

inventory::submit! {
    OpDef {
        name: "expand_dims",
        description: "Inserts `num_newaxis` axes of size 1 at `axis`.",
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec { name: "axis", kind: AttrKind::Int, default: AttrDefault::Required },
            AttrSpec { name: "num_newaxis", kind: AttrKind::Int, default: AttrDefault::Int(1) },
        ],
        pattern: OpPattern::Broadcast,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            Ok(Type::with_dims(expand_dims_shape(op, &x.shape, r.int("axis"), r.int("num_newaxis"))?, x.dtype))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let dims: Vec<Dim> = x.shape().iter().map(|&d| Dim::Static(d as i64)).collect();
            let shape: Vec<usize> = expand_dims_shape(op, &dims, r.int("axis"), r.int("num_newaxis"))?.iter().map(|d| d.value().unwrap_or(1) as usize).collect();
            Ok(Value::tensor(x.reshape(&shape)?))
        },
    }
}

fn squeeze_shape(op: &str, shape: &[Dim], axes: Option<Vec<i64>>) -> Result<Vec<Dim>, String> {
    match axes {
        None => Ok(shape
            .iter()
            .copied()
            .filter(|d| *d != Dim::Static(1))
            .collect()),
        Some(axes) => {
            let axes: Vec<usize> = axes
                .iter()
                .map(|&a| axis(op, a, shape.len()))
                .collect::<Result<_, _>>()?;
            for &a in &axes {
                if let Dim::Static(d) = shape[a]
                    && d != 1
                {
                    return Err(format!("`{op}`: axis {a} has size {d}, not 1"));
                }
            }
            Ok(shape
                .iter()
                .enumerate()
                .filter(|(i, _)| !axes.contains(i))
                .map(|(_, d)| *d)
                .collect())
        }
    }
}

inventory::submit! {
    OpDef {
        name: "squeeze",
        description: "Removes axes of size 1 (the listed ones, or all).",
        arity: Arity::Exact(1),
        attrs: &[AttrSpec { name: "axis", kind: AttrKind::OptInts, default: AttrDefault::Null }],
        pattern: OpPattern::Injective,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            Ok(Type::with_dims(squeeze_shape(op, &x.shape, r.opt_ints("axis"))?, x.dtype))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let dims: Vec<Dim> = x.shape().iter().map(|&d| Dim::Static(d as i64)).collect();
            let shape: Vec<usize> = squeeze_shape(op, &dims, r.opt_ints("axis"))?.iter().map(|d| d.value().unwrap_or(1) as usize).collect();
            Ok(Value::tensor(x.reshape(&shape)?))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "concatenate",
        description: "Joins the tensors of a tuple along an axis.",
        arity: Arity::Exact(1),
        attrs: &[AttrSpec { name: "axis", kind: AttrKind::Int, default: AttrDefault::Int(0) }],
        pattern: OpPattern::Injective,
        type_rel: |args, r| {
            let op = r.op_name();
            let fields = tuple_ty(op, args, 0)?;
            let first = fields.first().ok_or("`concatenate` needs at least one tensor")?;
            let ax = axis(op, r.int("axis"), first.rank())?;
            let mut shape = first.shape.clone();
            for t in &fields[1..] {
                if t.rank() != first.rank() || t.dtype != first.dtype {
                    return Err(format!("`concatenate`: `{t}` does not match `{first}` in rank and dtype"));
                }
                for (i, (&a, &b)) in first.shape.iter().zip(&t.shape).enumerate() {
                    if i != ax && !dims_match(a, b) {
                        return Err(format!("`concatenate`: `{t}` and `{first}` differ in axis {i}, which is not the concatenation axis {ax}"));
                    }
                }
                shape[ax] = match (shape[ax], t.shape[ax]) {
                    (Dim::Static(a), Dim::Static(b)) => Dim::Static(a + b),
                    _ => Dim::Any,
                };
                for (i, &b) in t.shape.iter().enumerate() {
                    if i != ax {
                        shape[i] = most_known(shape[i], b);
                    }
                }
            }
            Ok(Type::with_dims(shape, first.dtype))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let Some(Value::Tuple(fields)) = args.first() else { return Err("`concatenate` needs a tuple".into()) };
            let tensors: Vec<&Tensor> = fields.iter().map(|f| f.as_tensor().ok_or("`concatenate`: a field is not a tensor")).collect::<Result<_, _>>()?;
            let first = tensors.first().ok_or("`concatenate` needs at least one tensor")?;
            let ax = axis(op, r.int("axis"), first.shape().len())?;
            let views: Vec<ndarray::ArrayD<f64>> = tensors.iter().map(|t| t.to_f64()).collect();
            let refs: Vec<ndarray::ArrayViewD<'_, f64>> = views.iter().map(|v| v.view()).collect();
            let out = ndarray::concatenate(ndarray::Axis(ax), &refs).map_err(|e| format!("`concatenate`: {e}"))?;
            Ok(Value::tensor(Tensor::from_f64(first.dtype(), out)))
        },
    }
}

/// Split points along an axis of size `n`.
fn split_points(op: &str, spec: &AttrValue, n: Option<i64>) -> Result<Vec<i64>, String> {
    match spec {
        AttrValue::Int(sections) => {
            let s = *sections;
            if s < 1 {
                return Err(format!("`{op}`: sections must be at least 1, got {s}"));
            }
            let Some(n) = n else {
                return Err(format!("`{op}` into sections needs a static axis size"));
            };
            if s > n.max(1) {
                return Err(format!(
                    "`{op}`: an axis of size {n} does not split into {s} sections"
                ));
            }
            if n % s != 0 {
                return Err(format!(
                    "`{op}`: an axis of size {n} does not split into {s} equal sections"
                ));
            }
            Ok((1..s).map(|i| i * n / s).collect())
        }
        other => {
            let points = other.as_int_list().ok_or_else(|| {
                format!("`{op}`: indices_or_sections must be an integer or a list")
            })?;
            if points.windows(2).any(|w| w[0] > w[1])
                || points.first().is_some_and(|&p| p < 0)
                || n.is_some_and(|n| points.last().is_some_and(|&p| p > n))
            {
                return Err(format!(
                    "`{op}`: split indices {points:?} must be ascending and within the axis"
                ));
            }
            Ok(points)
        }
    }
}

inventory::submit! {
    OpDef {
        name: "split",
        description: "Splits along an axis into equal sections (an integer) or at indices (a list); returns a tuple.",
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec { name: "indices_or_sections", kind: AttrKind::IntOrInts, default: AttrDefault::Required },
            AttrSpec { name: "axis", kind: AttrKind::Int, default: AttrDefault::Int(0) },
        ],
        pattern: OpPattern::Injective,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            let ax = axis(op, r.int("axis"), x.rank())?;
            let n = x.shape[ax].value();
            let points = split_points(op, &r.raw("indices_or_sections"), n)?;
            let mut bounds = vec![0];
            bounds.extend(points);
            let mut fields = Vec::new();
            for (i, &start) in bounds.iter().enumerate() {
                let end = bounds.get(i + 1).copied().map(Some).unwrap_or(n);
                let mut shape = x.shape.clone();
                shape[ax] = end.map_or(Dim::Any, |e| Dim::Static(e - start));
                fields.push(Type::with_dims(shape, x.dtype));
            }
            Ok(Type::Tuple(fields))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let ax = axis(op, r.int("axis"), x.shape().len())?;
            let n = x.shape()[ax] as i64;
            let points = split_points(op, &r.raw("indices_or_sections"), Some(n))?;
            let mut bounds = vec![0];
            bounds.extend(points);
            bounds.push(n);
            let data = x.to_f64();
            let fields = bounds.windows(2).map(|w| {
                let part = data.slice_axis(ndarray::Axis(ax), ndarray::Slice::from(w[0] as usize..w[1] as usize)).to_owned();
                Value::tensor(Tensor::from_f64(x.dtype(), part))
            }).collect();
            Ok(Value::Tuple(fields))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "cast",
        description: "Converts the elements to another dtype.",
        arity: Arity::Exact(1),
        attrs: &[AttrSpec { name: "dtype", kind: AttrKind::DType, default: AttrDefault::Required }],
        pattern: OpPattern::ElemWise,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            let dtype = r.dtype("dtype").ok_or("`cast` needs a dtype")?;
            Ok(Type::with_dims(x.shape.clone(), dtype))
        },
        kernel: |args, r| {
            let x = tensor_arg(r.op_name(), args, 0)?;
            let dtype = r.dtype("dtype").ok_or("`cast` needs a dtype")?;
            Ok(Value::tensor(x.cast(dtype)))
        },
    }
}

/// `layout_transform`'s layouts, parsed.
fn layouts(r: &super::AttrReader<'_>) -> Result<(Layout, Layout), String> {
    let op = r.op_name();
    let read = |name: &str| Layout::parse(&r.str(name)).map_err(|e| format!("`{op}`: {e}"));
    Ok((read("src_layout")?, read("dst_layout")?))
}

inventory::submit! {
    OpDef {
        name: "layout_transform",
        description: "Moves a tensor between layouts of the same axes: reorders them (NCHW to NHWC) and splits or merges sub-axes (NCHW to NCHW4c).",
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec { name: "src_layout", kind: AttrKind::Str, default: AttrDefault::Required },
            AttrSpec { name: "dst_layout", kind: AttrKind::Str, default: AttrDefault::Required },
        ],
        pattern: OpPattern::Injective,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            let (src, dst) = layouts(r)?;
            let shape = src.transform_shape(&x.shape, &dst).map_err(|e| format!("`{op}`: {e}"))?;
            Ok(Type::with_dims(shape, x.dtype))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let (src, dst) = layouts(r)?;
            let out = transform_tensor(x, &src, &dst).map_err(|e| format!("`{op}`: {e}"))?;
            Ok(Value::tensor(out))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "copy",
        description: "The identity.",
        arity: Arity::Exact(1),
        attrs: &[],
        pattern: OpPattern::ElemWise,
        type_rel: |args, r| Ok(Type::Tensor(tensor_ty(r.op_name(), args, 0)?.clone())),
        kernel: |args, _| Ok(args[0].clone()),
    }
}

inventory::submit! {
    OpDef {
        name: "annotation.stop_fusion",
        description: "The identity, marking a fusion boundary: `FuseOps` fuses nothing across it and removes it.",
        arity: Arity::Exact(1),
        attrs: &[],
        pattern: OpPattern::Opaque,
        type_rel: |args, _| Ok(args[0].clone()),
        kernel: |args, _| Ok(args[0].clone()),
    }
}
