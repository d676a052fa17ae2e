//! Operators that read elements at computed positions: `take`, `gather_nd`, `nn.upsampling`.

use ndarray::{ArrayD, IxDyn};

use super::util::*;
use super::{Arity, AttrDefault, AttrKind, AttrReader, AttrSpec, OpDef, OpPattern};
use crate::{Dim, Tensor, TensorData, Type, Value};

fn usize_shape(shape: &[Dim]) -> Option<Vec<usize>> {
    shape
        .iter()
        .map(|d| d.value().and_then(|v| usize::try_from(v).ok()))
        .collect()
}

/// The tensor whose element `i` is element `sources[i]` (a flat index) of `data`, shaped
/// `shape`: the dtype and exact values kept.
pub(super) fn gather_flat(
    data: &Tensor,
    shape: &[usize],
    sources: &[usize],
) -> Result<Tensor, String> {
    let dtype = data.dtype();
    // float32 kept as f32 (a model's embedding table, say) is gathered as f32: no f64 copy of
    // the whole table for the few rows picked.
    let picked: Option<Vec<f32>> = match data.data() {
        TensorData::Float32Le(le) => Some(sources.iter().map(|&s| le.get(s)).collect()),
        TensorData::Float32(_) => data
            .f32_slice()
            .map(|v| sources.iter().map(|&s| v[s]).collect()),
        _ => None,
    };
    if let Some(out) = picked {
        return Tensor::from_f32(shape, out);
    }
    if dtype.is_float() {
        let values = data.float_values();
        let out: Vec<f64> = sources.iter().map(|&s| values[s]).collect();
        let a = ArrayD::from_shape_vec(IxDyn(shape), out).map_err(|e| e.to_string())?;
        Ok(Tensor::from_f64(dtype, a))
    } else {
        let all = data.to_i64();
        let values: Vec<i64> = all.iter().copied().collect();
        let out: Vec<i64> = sources.iter().map(|&s| values[s]).collect();
        let a = ArrayD::from_shape_vec(IxDyn(shape), out).map_err(|e| e.to_string())?;
        Ok(Tensor::from_i64(dtype, a))
    }
}

/// Row-major strides of `shape`.
pub(super) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

fn integer_indices(op: &str, args: &[Type], i: usize) -> Result<(), String> {
    let t = tensor_ty(op, args, i)?;
    if t.dtype.is_float() || t.dtype == crate::DType::Bool {
        return Err(format!("`{op}` needs integer indices, got `{t}`"));
    }
    Ok(())
}

fn take_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let op = r.op_name();
    let data = tensor_ty(op, args, 0)?;
    integer_indices(op, args, 1)?;
    let idx = tensor_ty(op, args, 1)?;
    check_take_attrs(op, r)?;
    let shape = match r.opt_int("axis") {
        None => idx.shape.clone(),
        Some(a) => {
            let a = axis(op, a, data.rank())?;
            let mut s = data.shape[..a].to_vec();
            s.extend(&idx.shape);
            s.extend(&data.shape[a + 1..]);
            s
        }
    };
    Ok(Type::with_dims(shape, data.dtype))
}

fn check_take_attrs(op: &str, r: &AttrReader<'_>) -> Result<(), String> {
    if r.int("batch_dims") != 0 {
        return Err(format!("`{op}`: batch_dims other than 0 is not supported"));
    }
    match r.str("mode").as_str() {
        "clip" | "wrap" | "fast" => Ok(()),
        other => Err(format!(
            "`{op}`: mode `{other}` is not one of clip, wrap, fast"
        )),
    }
}

/// An index into an axis of size `n` under `mode` (clip: clamped, wrap: modulo, fast: must
/// be in range).
fn resolve(op: &str, i: i64, n: usize, mode: &str) -> Result<usize, String> {
    let n_i = i64::try_from(n).map_err(|_| format!("`{op}`: axis too large"))?;
    if n_i == 0 {
        return Err(format!("`{op}`: cannot take from an empty axis"));
    }
    Ok(match mode {
        "wrap" => i.rem_euclid(n_i) as usize,
        "clip" => i.clamp(0, n_i - 1) as usize,
        _ if (0..n_i).contains(&i) => i as usize,
        _ => {
            return Err(format!(
                "`{op}`: index {i} is out of range for an axis of size {n}"
            ));
        }
    })
}

fn take_kernel(args: &[Value], r: &AttrReader<'_>) -> Result<Value, String> {
    let op = r.op_name();
    let data = tensor_arg(op, args, 0)?;
    let idx = tensor_arg(op, args, 1)?.to_i64();
    check_take_attrs(op, r)?;
    let mode = r.str("mode");
    let dshape = data.shape().to_vec();
    let (outer, n, inner, a) = match r.opt_int("axis") {
        None => (1, dshape.iter().product(), 1, None),
        Some(a) => {
            let a = axis(op, a, dshape.len())?;
            (
                dshape[..a].iter().product::<usize>(),
                dshape[a],
                dshape[a + 1..].iter().product::<usize>(),
                Some(a),
            )
        }
    };
    let picks: Vec<usize> = idx
        .iter()
        .map(|&i| resolve(op, i, n, &mode))
        .collect::<Result<_, _>>()?;
    let mut sources = Vec::with_capacity(outer * picks.len() * inner);
    for o in 0..outer {
        for &p in &picks {
            for i in 0..inner {
                sources.push((o * n + p) * inner + i);
            }
        }
    }
    let shape: Vec<usize> = match a {
        None => idx.shape().to_vec(),
        Some(a) => {
            let mut s = dshape[..a].to_vec();
            s.extend(idx.shape());
            s.extend(&dshape[a + 1..]);
            s
        }
    };
    Ok(Value::tensor(gather_flat(data, &shape, &sources)?))
}

inventory::submit! {
    OpDef {
        name: "take",
        description: "Elements of a tensor at integer indices, along an axis (or of the flattened tensor when axis is None); out-of-range indices are clipped (mode=clip), wrapped (wrap) or an error (fast).",
        arity: Arity::Exact(2),
        attrs: &[
            AttrSpec { name: "batch_dims", kind: AttrKind::Int, default: AttrDefault::Int(0) },
            AttrSpec { name: "axis", kind: AttrKind::OptInt, default: AttrDefault::Null },
            AttrSpec { name: "mode", kind: AttrKind::Str, default: AttrDefault::Str("clip") },
        ],
        pattern: OpPattern::Injective,
        type_rel: take_rel,
        kernel: take_kernel,
    }
}

fn gather_nd_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let op = r.op_name();
    let data = tensor_ty(op, args, 0)?;
    integer_indices(op, args, 1)?;
    let idx = tensor_ty(op, args, 1)?;
    if r.int("batch_dims") != 0 {
        return Err(format!("`{op}`: batch_dims other than 0 is not supported"));
    }
    let Some(&first) = idx.shape.first() else {
        return Err(format!(
            "`{op}` needs indices of rank 1 or more, got `{idx}`"
        ));
    };
    let m = match (first, r.opt_int("index_rank")) {
        (Dim::Static(m), _) => m,
        (_, Some(m)) => m,
        (_, None) => {
            return Err(format!("`{op}` needs the size of the indices' first axis"));
        }
    };
    let m = usize::try_from(m)
        .ok()
        .filter(|&m| m <= data.rank())
        .ok_or_else(|| {
            format!(
                "`{op}`: {m} indices per position for data of rank {}",
                data.rank()
            )
        })?;
    let mut shape = idx.shape[1..].to_vec();
    shape.extend(&data.shape[m..]);
    Ok(Type::with_dims(shape, data.dtype))
}

fn gather_nd_kernel(args: &[Value], r: &AttrReader<'_>) -> Result<Value, String> {
    let op = r.op_name();
    let data = tensor_arg(op, args, 0)?;
    let idx = tensor_arg(op, args, 1)?.to_i64();
    let dshape = data.shape().to_vec();
    let ishape = idx.shape().to_vec();
    let Some((&m, positions)) = ishape.split_first() else {
        return Err(format!("`{op}` needs indices of rank 1 or more"));
    };
    if m > dshape.len() {
        return Err(format!(
            "`{op}`: {m} indices per position for data of rank {}",
            dshape.len()
        ));
    }
    let count: usize = positions.iter().product();
    let inner: usize = dshape[m..].iter().product();
    let st = strides(&dshape);
    let flat: Vec<i64> = idx.iter().copied().collect();
    let mut sources = Vec::with_capacity(count * inner);
    for p in 0..count {
        let mut base = 0;
        for k in 0..m {
            let i = flat[k * count + p];
            let at = usize::try_from(i)
                .ok()
                .filter(|&i| i < dshape[k])
                .ok_or_else(|| {
                    format!(
                        "`{op}`: index {i} is out of range for axis {k} of size {}",
                        dshape[k]
                    )
                })?;
            base += at * st[k];
        }
        sources.extend(base..base + inner);
    }
    let mut shape = positions.to_vec();
    shape.extend(&dshape[m..]);
    Ok(Value::tensor(gather_flat(data, &shape, &sources)?))
}

inventory::submit! {
    OpDef {
        name: "gather_nd",
        description: "Gathers slices of a tensor: indices of shape (M, Y...) pick, for each position Y, the slice data[i_0, ..., i_(M-1)].",
        arity: Arity::Exact(2),
        attrs: &[
            AttrSpec { name: "batch_dims", kind: AttrKind::Int, default: AttrDefault::Int(0) },
            AttrSpec { name: "index_rank", kind: AttrKind::OptInt, default: AttrDefault::Null },
        ],
        pattern: OpPattern::Injective,
        type_rel: gather_nd_rel,
        kernel: gather_nd_kernel,
    }
}

/// Positions of H and W in a 4-D layout.
fn hw_axes(op: &str, layout: &str) -> Result<(usize, usize), String> {
    match layout {
        "NCHW" => Ok((2, 3)),
        "NHWC" => Ok((1, 2)),
        other => Err(format!(
            "`{op}`: layout `{other}` is not supported (NCHW or NHWC)"
        )),
    }
}

fn scaled(op: &str, d: Dim, scale: f64) -> Result<Dim, String> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(format!(
            "`{op}`: the scale {scale} is not a positive number"
        ));
    }
    Ok(match d {
        Dim::Static(n) => Dim::Static((n as f64 * scale).round() as i64),
        d if scale == 1.0 => d,
        _ => Dim::Any,
    })
}

fn upsampling_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let op = r.op_name();
    let x = tensor_ty(op, args, 0)?;
    if x.rank() != 4 {
        return Err(format!("`{op}` needs rank-4 data, got `{x}`"));
    }
    if r.str("method") != "nearest_neighbor" {
        return Err(format!(
            "`{op}`: method `{}` is not supported (nearest_neighbor)",
            r.str("method")
        ));
    }
    let (h, w) = hw_axes(op, &r.str("layout"))?;
    let mut shape = x.shape.clone();
    shape[h] = scaled(op, x.shape[h], r.float("scale_h"))?;
    shape[w] = scaled(op, x.shape[w], r.float("scale_w"))?;
    Ok(Type::with_dims(shape, x.dtype))
}

fn upsampling_kernel(args: &[Value], r: &AttrReader<'_>) -> Result<Value, String> {
    let op = r.op_name();
    let x = tensor_arg(op, args, 0)?;
    let dims: Vec<Dim> = x.shape().iter().map(|&d| Dim::Static(d as i64)).collect();
    let Type::Tensor(out) = upsampling_rel(&[Type::with_dims(dims, x.dtype())], r)? else {
        unreachable!("a tensor type")
    };
    let oshape = usize_shape(&out.shape).ok_or_else(|| format!("`{op}`: output too large"))?;
    let ishape = x.shape();
    let (h, w) = hw_axes(op, &r.str("layout"))?;
    let align = r.bool("align_corners");
    // Nearest neighbour: output row y reads input row floor(y * in / out) (asymmetric), or
    // round(y * (in - 1) / (out - 1)) with aligned corners.
    let source = |o: usize, i: usize, n_out: usize| -> usize {
        let v = if align && n_out > 1 {
            (o as f64 * (i as f64 - 1.0) / (n_out as f64 - 1.0)).round()
        } else {
            (o as f64 * i as f64 / n_out as f64).floor()
        };
        (v as usize).min(i.saturating_sub(1))
    };
    let ist = strides(ishape);
    let total: usize = oshape.iter().product();
    let ost = strides(&oshape);
    let mut sources = Vec::with_capacity(total);
    for flat in 0..total {
        let mut src = 0;
        for (k, (&s, &n)) in ost.iter().zip(&oshape).enumerate() {
            let c = flat / s % n;
            let c = if k == h || k == w {
                source(c, ishape[k], n)
            } else {
                c
            };
            src += c * ist[k];
        }
        sources.push(src);
    }
    Ok(Value::tensor(gather_flat(x, &oshape, &sources)?))
}

inventory::submit! {
    OpDef {
        name: "nn.upsampling",
        description: "Scales the height and width of 4-D data by nearest neighbour.",
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec { name: "scale_h", kind: AttrKind::Float, default: AttrDefault::Float(1.0) },
            AttrSpec { name: "scale_w", kind: AttrKind::Float, default: AttrDefault::Float(1.0) },
            AttrSpec { name: "layout", kind: AttrKind::Str, default: AttrDefault::Str("NCHW") },
            AttrSpec { name: "method", kind: AttrKind::Str, default: AttrDefault::Str("nearest_neighbor") },
            AttrSpec { name: "align_corners", kind: AttrKind::Bool, default: AttrDefault::Bool(false) },
        ],
        pattern: OpPattern::Injective,
        type_rel: upsampling_rel,
        kernel: upsampling_kernel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    #[test]
    fn gathering_from_float32_kept_as_f32_or_as_bytes_gives_what_the_f64_form_gives() {
        let values: Vec<f32> = (0..12).map(|i| i as f32 * 0.1 - 0.35).collect();
        let wide = Tensor::from_vec(
            DType::Float32,
            &[4, 3],
            values.iter().map(|&v| f64::from(v)).collect(),
        )
        .unwrap();
        let kept = Tensor::from_f32(&[4, 3], values.clone()).unwrap();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = Tensor::from_f32_le(&[4, 3], bytes.into()).unwrap();
        let rows = [9, 10, 11, 0, 1, 2];
        let want = gather_flat(&wide, &[2, 3], &rows).unwrap();
        for t in [&kept, &view] {
            let got = gather_flat(t, &[2, 3], &rows).unwrap();
            assert!(got.f32_slice().is_some(), "kept as f32");
            assert!(got.bit_eq(&want), "{got} vs {want}");
        }
    }
}
