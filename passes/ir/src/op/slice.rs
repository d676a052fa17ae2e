//! Slicing and padding: strided_slice, nn.pad.

use super::indexing::{gather_flat, strides};
use super::util::*;
use super::{Arity, AttrDefault, AttrKind, AttrSpec, OpDef, OpPattern};
use crate::{Dim, Type, Value};

/// Moves `index` to the next position of an array of `shape` in row-major order (back to all
/// zeros after the last).
fn next_index(index: &mut [usize], shape: &[usize]) {
    for k in (0..index.len()).rev() {
        index[k] += 1;
        if index[k] < shape[k] {
            return;
        }
        index[k] = 0;
    }
}

/// One axis of a slice: where it starts, its step and how many elements it takes (element
/// `i` of the slice is element `start + i * step` of the axis).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceRange {
    /// The first element taken.
    pub start: i64,
    /// The distance between elements taken.
    pub step: i64,
    /// How many elements are taken.
    pub len: i64,
}

/// The slice of an axis of size `dim` from `begin` to `end` by `step`, as `strided_slice`
/// takes it (numpy's and ONNX's rules): `None` for a step of 0.
///
/// ```
/// use irpass_ir::op::{SliceRange, slice_range};
/// assert_eq!(slice_range(5, -1, -6, -1), Some(SliceRange { start: 4, step: -1, len: 5 }));
/// assert_eq!(slice_range(5, 1, i64::MAX, 2), Some(SliceRange { start: 1, step: 2, len: 2 }));
/// ```
pub fn slice_range(dim: i64, begin: i64, end: i64, step: i64) -> Option<SliceRange> {
    range("", dim, begin, end, step).ok()
}

/// The slice of an axis of size `dim` from `begin` to `end` by `step`, as numpy and ONNX's
/// Slice define it: negative positions count from the end, positions are clamped to the
/// axis (to `[0, dim]` going forward, `[-1, dim - 1]` going backward).
fn range(op: &str, dim: i64, begin: i64, end: i64, step: i64) -> Result<SliceRange, String> {
    if step == 0 {
        return Err(format!("`{op}`: a step of 0"));
    }
    let norm = |p: i64| if p < 0 { p.saturating_add(dim) } else { p };
    let (b, e) = (norm(begin), norm(end));
    let (start, stop) = if step > 0 {
        (b.clamp(0, dim), e.clamp(0, dim))
    } else {
        (b.clamp(-1, dim - 1), e.clamp(-1, dim - 1))
    };
    // In i128: begin, end and step come from attributes and may be anything.
    let (start, stop, step) = (i128::from(start), i128::from(stop), i128::from(step));
    let len = if step > 0 {
        (stop - start + step - 1).max(0) / step
    } else {
        (start - stop - step - 1).max(0) / -step
    };
    Ok(SliceRange {
        start: start as i64,
        step: step as i64,
        len: len as i64,
    })
}

/// What the slice does on every axis: `(begin, end, step)`, or `None` for an axis it does not
/// name (kept whole).
type AxisSlices = Vec<Option<(i64, i64, i64)>>;

/// The slice's `(begin, end, step)` on every axis of a tensor of rank `rank`.
fn axis_slices(op: &str, rank: usize, r: &super::AttrReader<'_>) -> Result<AxisSlices, String> {
    let (begin, end, steps) = (r.ints("begin"), r.ints("end"), r.opt_ints("strides"));
    let axes: Vec<usize> = match r.opt_ints("axes") {
        Some(a) => a
            .iter()
            .map(|&x| axis(op, x, rank))
            .collect::<Result<_, _>>()?,
        None if begin.len() <= rank => (0..begin.len()).collect(),
        None => {
            return Err(format!(
                "`{op}`: {} begins for a tensor of rank {rank}",
                begin.len()
            ));
        }
    };
    if begin.len() != axes.len() || end.len() != axes.len() {
        return Err(format!(
            "`{op}`: {} begins and {} ends for {} axes",
            begin.len(),
            end.len(),
            axes.len()
        ));
    }
    if steps.as_ref().is_some_and(|s| s.len() != axes.len()) {
        return Err(format!("`{op}`: the strides do not match the axes"));
    }
    let mut out = vec![None; rank];
    for (i, &a) in axes.iter().enumerate() {
        if axes[..i].contains(&a) {
            return Err(format!("`{op}`: axis {a} is sliced twice"));
        }
        let step = steps.as_ref().map_or(1, |s| s[i]);
        if step == 0 {
            return Err(format!("`{op}`: a step of 0"));
        }
        out[a] = Some((begin[i], end[i], step));
    }
    Ok(out)
}

/// Positions at least this far out (ONNX exporters write `INT_MAX` or `INT64_MAX` for "to the
/// end") take a whole axis of any size.
const FAR: i64 = i32::MAX as i64;

/// The size of axis `d` after slicing it from `begin` to `end` by `step`: computed when `d` is
/// static, `d` itself when the slice takes the whole axis, `?` otherwise.
fn sliced_dim(op: &str, d: Dim, (begin, end, step): (i64, i64, i64)) -> Result<Dim, String> {
    match d {
        Dim::Static(n) => Ok(Dim::Static(range(op, n, begin, end, step)?.len)),
        _ if step == 1 && (begin == 0 || begin <= -FAR) && end >= FAR => Ok(d),
        _ if step == -1 && (begin == -1 || begin >= FAR) && end <= -FAR => Ok(d),
        _ => Ok(Dim::Any),
    }
}

inventory::submit! {
    OpDef {
        name: "strided_slice",
        description: "Elements `begin` to `end` (exclusive) by `strides` on `axes` (default: the first ones), numpy's rules: negative positions from the end, clamped to the axis.",
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec { name: "begin", kind: AttrKind::Ints, default: AttrDefault::Required },
            AttrSpec { name: "end", kind: AttrKind::Ints, default: AttrDefault::Required },
            AttrSpec { name: "strides", kind: AttrKind::OptInts, default: AttrDefault::Null },
            AttrSpec { name: "axes", kind: AttrKind::OptInts, default: AttrDefault::Null },
        ],
        pattern: OpPattern::Injective,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            let slices = axis_slices(op, x.rank(), r)?;
            let shape = x.shape.iter().zip(slices).map(|(&d, s)| s.map_or(Ok(d), |s| sliced_dim(op, d, s))).collect::<Result<_, _>>()?;
            Ok(Type::with_dims(shape, x.dtype))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let slices = axis_slices(op, x.shape().len(), r)?;
            let full: Vec<SliceRange> = x.shape().iter().zip(slices).map(|(&d, s)| match s {
                Some((b, e, step)) => range(op, d as i64, b, e, step),
                None => Ok(SliceRange { start: 0, step: 1, len: d as i64 }),
            }).collect::<Result<_, _>>()?;
            let out_shape: Vec<usize> = full.iter().map(|r| r.len as usize).collect();
            let n: usize = checked_size(op, &out_shape)?;
            let st = strides(x.shape());
            let mut sources = Vec::with_capacity(n);
            let mut index = vec![0usize; full.len()];
            for _ in 0..n {
                let flat: i64 = index.iter().zip(&full).zip(&st).map(|((&i, r), &s)| (r.start + i as i64 * r.step) * s as i64).sum();
                sources.push(flat as usize);
                next_index(&mut index, &out_shape);
            }
            Ok(Value::tensor(gather_flat(x, &out_shape, &sources)?))
        },
    }
}

/// The padding per axis, `(before, after)`, from `pad_width` = `[b0, a0, b1, a1, ...]`.
fn pads(op: &str, rank: usize, r: &super::AttrReader<'_>) -> Result<Vec<(i64, i64)>, String> {
    let w = r.ints("pad_width");
    if w.len() != 2 * rank {
        return Err(format!(
            "`{op}`: pad_width has {} numbers for rank {rank} (two per axis)",
            w.len()
        ));
    }
    if let Some(p) = w.iter().find(|&&p| p < 0) {
        return Err(format!("`{op}`: a negative padding {p}"));
    }
    Ok(w.chunks(2).map(|c| (c[0], c[1])).collect())
}

inventory::submit! {
    OpDef {
        name: "nn.pad",
        description: "Pads each axis by `pad_width` = [before0, after0, before1, after1, ...] with the scalar `pad_value` (mode `constant`), the edge value (`edge`) or the mirror image without the edge (`reflect`).",
        arity: Arity::Exact(2),
        attrs: &[
            AttrSpec { name: "pad_width", kind: AttrKind::Ints, default: AttrDefault::Required },
            AttrSpec { name: "pad_mode", kind: AttrKind::Str, default: AttrDefault::Str("constant") },
        ],
        pattern: OpPattern::Injective,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            let v = tensor_ty(op, args, 1)?;
            if v.rank() != 0 {
                return Err(format!("`{op}`: the pad value must be a scalar, got `{v}`"));
            }
            let mode = r.str("pad_mode");
            if !matches!(mode.as_str(), "constant" | "edge" | "reflect") {
                return Err(format!("`{op}`: pad_mode `{mode}` (constant, edge or reflect)"));
            }
            let p = pads(op, x.rank(), r)?;
            let mut shape = Vec::with_capacity(p.len());
            for (&d, &(b, a)) in x.shape.iter().zip(&p) {
                shape.push(match d {
                    Dim::Static(d) => Dim::Static(d.checked_add(b).and_then(|v| v.checked_add(a)).ok_or_else(|| format!("`{op}`: padding {b} + {a} overflows"))?),
                    d if b == 0 && a == 0 => d,
                    _ => Dim::Any,
                });
            }
            Ok(Type::with_dims(shape, x.dtype))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let (x, v) = (tensor_arg(op, args, 0)?, tensor_arg(op, args, 1)?);
            let p = pads(op, x.shape().len(), r)?;
            let mode = r.str("pad_mode");
            let out_shape: Vec<usize> = x.shape().iter().zip(&p).map(|(&d, &(b, a))| {
                usize::try_from(b).ok().zip(usize::try_from(a).ok()).and_then(|(b, a)| d.checked_add(b)?.checked_add(a)).ok_or_else(|| format!("`{op}`: padding {b} + {a} overflows"))
            }).collect::<Result<_, _>>()?;
            let n = checked_size(op, &out_shape)?;
            if mode == "reflect" && x.shape().iter().zip(&p).any(|(&d, &(b, a))| b as usize >= d.max(1) || a as usize >= d.max(1)) {
                return Err(format!("`{op}`: reflect padding must be smaller than the axis"));
            }
            if x.is_empty() && mode != "constant" {
                return Err(format!("`{op}`: {mode} padding of an empty tensor"));
            }
            // The values with the pad value appended at the end: a padded position in
            // constant mode reads it.
            let mut values = x.float_values().into_owned();
            let fill = values.len();
            values.push(v.float_values().first().copied().unwrap_or(0.0));
            let source = crate::Tensor::from_vec(x.dtype(), &[values.len()], values)?;
            let st = strides(x.shape());
            let mut sources = Vec::with_capacity(n);
            let mut index = vec![0usize; out_shape.len()];
            for _ in 0..n {
                let mut flat = 0usize;
                let mut outside = false;
                for k in 0..index.len() {
                    let d = x.shape()[k] as i64;
                    let mut i = index[k] as i64 - p[k].0;
                    if i < 0 || i >= d {
                        match mode.as_str() {
                            "edge" => i = i.clamp(0, d - 1),
                            "reflect" => i = if i < 0 { -i } else { 2 * (d - 1) - i },
                            _ => outside = true,
                        }
                    }
                    flat += i.max(0) as usize * st[k];
                }
                sources.push(if outside { fill } else { flat });
                next_index(&mut index, &out_shape);
            }
            Ok(Value::tensor(gather_flat(&source, &out_shape, &sources)?))
        },
    }
}
