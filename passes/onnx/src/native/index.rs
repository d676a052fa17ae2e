//! Operators that select or place elements by index: `Trilu`, `GatherElements`,
//! `ScatterElements`, `EyeLike` and `TensorScatter`.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader, axis};
use irpass_ir::{DType, Tensor, TensorType};
use ndarray::{ArrayD, Dimension, IxDyn};

use super::{Args, attr, native};

/// A tensor of `x`'s dtype from f64 values (exact for the integers a tensor holds as i64).
fn like(x: &Tensor, values: ArrayD<f64>) -> Tensor {
    Tensor::from_f64(x.dtype(), values)
}

native! {
    /// The upper (`upper=1`) or lower triangle of the last two axes, from the diagonal
    /// shifted by input 1 (`k`, default 0); the other elements 0.
    "Trilu" {
        versions: &[14],
        attrs: [attr("upper", AttrKind::Int, AttrDefault::Int(1))],
        pattern: Injective,
        rel: |a, _| {
            let x = a.get(0)?;
            if x.rank() < 2 {
                return Err(format!("`onnx.Trilu` takes a tensor of rank 2 or more, got {x}"));
            }
            Ok(vec![x.clone()])
        },
        kernel: trilu,
    }
}

fn trilu(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let k = if a.opt(1).is_some() { a.int(1)? } else { 0 };
    let upper = r.int("upper") != 0;
    if x.dtype() == DType::Bool {
        let mut v = x.to_bool();
        for (idx, e) in v.indexed_iter_mut() {
            if !kept(&idx, k, upper) {
                *e = false;
            }
        }
        return Ok(vec![Tensor::from_bool(v)]);
    }
    if x.dtype().is_int() {
        let mut v = x.to_i64();
        for (idx, e) in v.indexed_iter_mut() {
            if !kept(&idx, k, upper) {
                *e = 0;
            }
        }
        return Ok(vec![Tensor::from_i64(x.dtype(), v)]);
    }
    let mut v = x.to_f64();
    for (idx, e) in v.indexed_iter_mut() {
        if !kept(&idx, k, upper) {
            *e = 0.0;
        }
    }
    Ok(vec![like(x, v)])
}

/// Whether `Trilu` keeps the element at `idx` (its last two indices a row and a column).
fn kept(idx: &IxDyn, k: i64, upper: bool) -> bool {
    let n = idx.ndim();
    let (i, j) = (idx[n - 2] as i64, idx[n - 1] as i64);
    if upper { j - i >= k } else { j - i <= k }
}

native! {
    /// The elements of input 0 at the indices of input 1 along `axis`: output[i][j] =
    /// data[indices[i][j]][j] for axis 0 (negative indices count from the end).
    "GatherElements" {
        versions: &[11],
        attrs: [attr("axis", AttrKind::Int, AttrDefault::Int(0))],
        pattern: Injective,
        rel: |a, r| {
            let (x, i) = (a.get(0)?, a.of_dtype(1, |d| matches!(d, DType::Int32 | DType::Int64), "int32 or int64 indices")?);
            if x.rank() != i.rank() {
                return Err(format!("`onnx.GatherElements`: data {x} and indices {i} differ in rank"));
            }
            axis(a.op(), r.int("axis"), x.rank())?;
            Ok(vec![TensorType { shape: i.shape.clone(), dtype: x.dtype }])
        },
        kernel: gather_elements,
    }
}

/// An index read from an indices tensor, checked against the axis' size `n`.
fn index(op: &str, v: i64, n: usize) -> Result<usize, String> {
    let n = n as i64;
    let i = if v < 0 { v + n } else { v };
    if i < 0 || i >= n {
        return Err(format!(
            "`{op}`: index {v} is out of range for an axis of size {n}"
        ));
    }
    Ok(i as usize)
}

fn gather_elements(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (x, ind) = (a.get(0)?, a.get(1)?);
    let ax = axis(a.op(), r.int("axis"), x.shape().len())?;
    let data = x.to_f64();
    let indices = ind.to_i64();
    let mut out = ArrayD::<f64>::zeros(indices.raw_dim());
    for (pos, &v) in indices.indexed_iter() {
        let mut at = pos.clone();
        at[ax] = index(a.op(), v, data.shape()[ax])?;
        out[&pos] = data[&at];
    }
    Ok(vec![like(x, out)])
}

native! {
    /// Input 0 with the elements of input 2 written at the indices of input 1 along `axis`,
    /// combined with what is there by `reduction` (`none`, `add`, `mul`, `max`, `min`).
    "ScatterElements" {
        versions: &[16],
        attrs: [
            attr("axis", AttrKind::Int, AttrDefault::Int(0)),
            attr("reduction", AttrKind::Str, AttrDefault::Str("none")),
        ],
        pattern: Injective,
        rel: |a, r| {
            let (x, i, u) = (a.get(0)?, a.get(1)?, a.get(2)?);
            if i.shape != u.shape || x.dtype != u.dtype || x.rank() != i.rank() {
                return Err(format!("`onnx.ScatterElements`: data {x}, indices {i} and updates {u} do not agree"));
            }
            axis(a.op(), r.int("axis"), x.rank())?;
            Ok(vec![x.clone()])
        },
        kernel: scatter_elements,
    }
}

fn scatter_elements(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (x, ind, upd) = (a.get(0)?, a.get(1)?, a.get(2)?);
    let ax = axis(a.op(), r.int("axis"), x.shape().len())?;
    let reduction = r.str("reduction");
    let combine = combiner(
        a.op(),
        if reduction.is_empty() {
            "none"
        } else {
            &reduction
        },
    )?;
    let fits = ind.shape().len() == x.shape().len()
        && ind.shape() == upd.shape()
        && (0..x.shape().len()).all(|d| d == ax || ind.shape()[d] <= x.shape()[d]);
    if !fits {
        return Err(format!(
            "`{}`: indices {:?} and updates {:?} for data {:?}",
            a.op(),
            ind.shape(),
            upd.shape(),
            x.shape()
        ));
    }
    let mut data = x.to_f64();
    let (indices, updates) = (ind.to_i64(), upd.to_f64());
    for (pos, &v) in indices.indexed_iter() {
        let mut at = pos.clone();
        at[ax] = index(a.op(), v, data.shape()[ax])?;
        data[&at] = combine(data[&at], updates[&pos]);
    }
    Ok(vec![like(x, data)])
}

/// How a scatter combines what is there with an update, by its `reduction`.
pub(super) fn combiner(op: &str, reduction: &str) -> Result<fn(f64, f64) -> f64, String> {
    Ok(match reduction {
        "none" => |_, u| u,
        "add" => |v, u| v + u,
        "mul" => |v, u| v * u,
        "max" => f64::max,
        "min" => f64::min,
        other => return Err(format!("`{op}`: reduction={other:?}")),
    })
}

native! {
    /// Input 0 with the elements of input 2 written at the indices of input 1 along `axis`
    /// (`ScatterElements` without a reduction, before it was renamed).
    "Scatter" {
        versions: &[9],
        attrs: [attr("axis", AttrKind::Int, AttrDefault::Int(0))],
        pattern: Injective,
        rel: |a, _| Ok(vec![a.get(0)?.clone()]),
        kernel: scatter_elements,
    }
}

native! {
    /// A 2-D tensor of input 0's shape with ones on the diagonal shifted by `k` and zeros
    /// elsewhere, of `dtype` (an ONNX element type code; input 0's when not given).
    "EyeLike" {
        versions: &[9],
        attrs: [
            attr("dtype", AttrKind::OptInt, AttrDefault::Null),
            attr("k", AttrKind::Int, AttrDefault::Int(0)),
        ],
        pattern: Injective,
        rel: |a, r| {
            let x = a.get(0)?;
            if x.rank() != 2 {
                return Err(format!("`onnx.EyeLike` takes a 2-D tensor, got {x}"));
            }
            Ok(vec![TensorType { shape: x.shape.clone(), dtype: eye_dtype(x.dtype, r)? }])
        },
        kernel: |a, r| {
            let x = a.get(0)?;
            let k = r.int("k");
            let out = ArrayD::from_shape_fn(IxDyn(x.shape()), |idx| {
                f64::from(u8::from(idx[1] as i64 - idx[0] as i64 == k))
            });
            Ok(vec![Tensor::from_f64(eye_dtype(x.dtype(), r)?, out)])
        },
    }
}

fn eye_dtype(input: DType, r: &AttrReader<'_>) -> Result<DType, String> {
    match r.opt_int("dtype") {
        None => Ok(input),
        Some(code) => {
            crate::tensor::dtype_of(code as i32).map_err(|e| format!("`onnx.EyeLike`: {e}"))
        }
    }
}

native! {
    /// A KV cache (input 0) with input 1's entries written along `axis` (not the first), for
    /// each batch entry from the position input 2 gives (0 when left out): `mode` linear
    /// (the positions must fit) or circular (they wrap around the cache).
    "TensorScatter" {
        versions: &[24],
        attrs: [
            attr("axis", AttrKind::Int, AttrDefault::Int(-2)),
            attr("mode", AttrKind::Str, AttrDefault::Str("linear")),
        ],
        pattern: Opaque,
        rel: |a, r| {
            let (cache, update) = (a.get(0)?, a.get(1)?);
            let ax = axis(a.op(), r.int("axis"), cache.rank())?;
            if update.rank() != cache.rank() || update.dtype != cache.dtype || ax == 0 {
                return Err(format!(
                    "`onnx.TensorScatter`: an update {update} for a cache {cache} along axis {ax}"
                ));
            }
            Ok(vec![cache.clone()])
        },
        kernel: tensor_scatter,
    }
}

fn tensor_scatter(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (cache, update) = (a.get(0)?, a.get(1)?);
    let (cs, us) = (cache.shape().to_vec(), update.shape().to_vec());
    let ax = axis(a.op(), r.int("axis"), cs.len())?;
    let fits = cs.len() == us.len()
        && (0..cs.len()).all(|d| {
            if d == ax {
                us[d] <= cs[d]
            } else {
                us[d] == cs[d]
            }
        });
    if !fits || ax == 0 {
        return Err(format!(
            "`onnx.TensorScatter`: an update of shape {us:?} for a cache of shape {cs:?} along axis {ax}"
        ));
    }
    let starts = match a.opt(2) {
        Some(_) => a.ints(2)?,
        None => vec![0; cs[0]],
    };
    if starts.len() != cs[0] {
        return Err(format!(
            "`onnx.TensorScatter`: {} write positions for a batch of {}",
            starts.len(),
            cs[0]
        ));
    }
    let circular = match r.str("mode").as_str() {
        "linear" => false,
        "circular" => true,
        m => {
            return Err(format!(
                "`onnx.TensorScatter`: mode {m:?} (linear or circular)"
            ));
        }
    };
    let len = cs[ax] as i64;
    let place = |batch: usize, k: usize| -> Result<usize, String> {
        let p = starts[batch] + k as i64;
        let p = if circular { p.rem_euclid(len) } else { p };
        usize::try_from(p)
            .ok()
            .filter(|&p| p < cs[ax])
            .ok_or_else(|| format!("`onnx.TensorScatter`: position {p} outside a cache of {len}"))
    };
    let mut out = cache.to_f64();
    let from = update.to_f64();
    for (idx, &v) in from.indexed_iter() {
        let mut at = idx.slice().to_vec();
        at[ax] = place(at[0], at[ax])?;
        out[IxDyn(&at)] = v;
    }
    Ok(vec![like(cache, out)])
}
