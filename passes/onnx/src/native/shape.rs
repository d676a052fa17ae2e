//! Operators that move elements, whose shapes come from input values: `Reshape`, `Squeeze`,
//! `Unsqueeze`, `Slice`, `Pad`, `Split`, `Tile`, `DepthToSpace` and `SpaceToDepth`. The IR's
//! own operators hold them where those values are known at import; these hold the others (a
//! result's sizes then come from the model's declared types).

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader, axis};
use irpass_ir::{DType, Dim, Tensor, TensorType};
use ndarray::{ArrayD, IxDyn};

use super::{Args, attr, native};

/// The elements of `x` at the row-major positions `from` (`None`: `fill`), in `shape`.
pub(super) fn take(
    x: &Tensor,
    shape: &[usize],
    from: &[Option<usize>],
    fill: f64,
) -> Result<Tensor, String> {
    let dtype = x.dtype();
    let err = |e: ndarray::ShapeError| e.to_string();
    if dtype == irpass_ir::DType::Bool {
        let v: Vec<bool> = x.to_bool().iter().copied().collect();
        let out = from
            .iter()
            .map(|i| i.map_or(fill != 0.0, |i| v[i]))
            .collect();
        return Ok(Tensor::from_bool(
            ArrayD::from_shape_vec(IxDyn(shape), out).map_err(err)?,
        ));
    }
    if dtype.is_int() {
        let v: Vec<i64> = x.to_i64().iter().copied().collect();
        let out = from
            .iter()
            .map(|i| i.map_or(fill as i64, |i| v[i]))
            .collect();
        return Ok(Tensor::from_i64(
            dtype,
            ArrayD::from_shape_vec(IxDyn(shape), out).map_err(err)?,
        ));
    }
    let v: Vec<f64> = x.values();
    let out = from.iter().map(|i| i.map_or(fill, |i| v[i])).collect();
    Ok(Tensor::from_f64(
        dtype,
        ArrayD::from_shape_vec(IxDyn(shape), out).map_err(err)?,
    ))
}

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// For each position of `out` (row-major), the source position `f` gives for its index.
fn map_positions(
    out: &[usize],
    src: &[usize],
    f: impl Fn(&[usize]) -> Option<Vec<usize>>,
) -> Vec<Option<usize>> {
    let (n, st) = (out.iter().product::<usize>(), strides(src));
    let mut idx = vec![0usize; out.len()];
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(f(&idx).map(|s| s.iter().zip(&st).map(|(a, b)| a * b).sum()));
        for d in (0..out.len()).rev() {
            idx[d] += 1;
            if idx[d] < out[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    v
}

native! {
    /// Input 0's elements in the shape input 1 gives: 0 copies the input's size there (a
    /// size 0 with `allowzero=1`), -1 is inferred.
    "Reshape" {
        versions: &[14],
        attrs: [attr("allowzero", AttrKind::Int, AttrDefault::Int(0))],
        pattern: Injective,
        rel: |a, _| {
            let (x, s) = (a.get(0)?, a.get(1)?);
            let rank = s.shape.first().and_then(|d| d.value()).map(|n| n as usize);
            Ok(vec![a.value_shaped(0, x.dtype, rank)?])
        },
        kernel: |a, r| {
            let x = a.get(0)?;
            let mut shape = a.ints(1)?;
            let allow_zero = r.int("allowzero") != 0;
            for (i, d) in shape.iter_mut().enumerate() {
                if *d == 0 && !allow_zero {
                    *d = *x.shape().get(i).ok_or("`onnx.Reshape`: a 0 past the input's rank")? as i64;
                }
            }
            let known: i64 = shape.iter().filter(|&&d| d != -1).product();
            let out: Vec<usize> = shape
                .iter()
                .map(|&d| if d == -1 { x.len() / known.max(1) as usize } else { d as usize })
                .collect();
            Ok(vec![x.reshape(&out)?])
        },
    }
}

/// `Squeeze`/`Unsqueeze`'s axes (input 1), normalised against `rank`.
fn axes_of(a: &Args<'_, Tensor>, rank: usize) -> Result<Vec<usize>, String> {
    let mut v = match a.opt(1) {
        Some(_) => a
            .ints(1)?
            .into_iter()
            .map(|x| axis(a.op(), x, rank))
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    v.sort_unstable();
    Ok(v)
}

native! {
    /// Input 0 without the axes of size 1 input 1 lists (every axis of size 1 without it).
    "Squeeze" {
        versions: &[13],
        attrs: [],
        pattern: Injective,
        rel: |a, _| {
            let x = a.get(0)?;
            if a.opt(1).is_none() {
                let shape: Vec<Dim> = x.shape.iter().copied().filter(|d| *d != Dim::Static(1)).collect();
                return Ok(vec![TensorType { shape, dtype: x.dtype }]);
            }
            let axes = a.of_dtype(1, |d| d == DType::Int64, "int64 axes")?;
            let n = match axes.shape.as_slice() {
                [] => Some(1),
                [n] => n.value(),
                _ => return Err(format!("`onnx.Squeeze`: axes {axes}")),
            };
            let n = n
                .map(|n| x.rank().checked_sub(n as usize).ok_or_else(|| format!("`onnx.Squeeze`: {n} axes of {x}")))
                .transpose()?;
            Ok(vec![a.value_shaped(0, x.dtype, n)?])
        },
        kernel: |a, _| {
            let x = a.get(0)?;
            let axes = axes_of(a, x.shape().len())?;
            let shape: Vec<usize> = x.shape().iter().enumerate()
                .filter(|(i, d)| if axes.is_empty() { **d != 1 } else { !axes.contains(i) })
                .map(|(_, &d)| d)
                .collect();
            Ok(vec![x.reshape(&shape)?])
        },
    }
}

native! {
    /// Input 0 with axes of size 1 inserted where input 1 lists (in the output's rank).
    "Unsqueeze" {
        versions: &[13],
        attrs: [],
        pattern: Injective,
        rel: |a, _| {
            let x = a.get(0)?;
            let n = a.get(1)?.shape.first().and_then(|d| d.value()).map(|n| x.rank() + n as usize);
            Ok(vec![a.value_shaped(0, x.dtype, n)?])
        },
        kernel: |a, _| {
            let x = a.get(0)?;
            let n = a.ints(1)?.len();
            let axes = axes_of(a, x.shape().len() + n)?;
            let mut dims = x.shape().iter();
            let shape: Vec<usize> = (0..x.shape().len() + n)
                .map(|i| if axes.contains(&i) { 1 } else { *dims.next().unwrap_or(&1) })
                .collect();
            Ok(vec![x.reshape(&shape)?])
        },
    }
}

native! {
    /// Input 0's elements from `starts` to `ends` (inputs 1 and 2) by `steps` (input 4) along
    /// `axes` (input 3; every axis in order without it), clamped as numpy clamps.
    "Slice" {
        versions: &[11],
        attrs: [],
        pattern: Injective,
        rel: |a, _| {
            let x = a.get(0)?;
            Ok(vec![a.value_shaped(0, x.dtype, Some(x.rank()))?])
        },
        kernel: slice,
    }
}

fn slice(a: &Args<'_, Tensor>, _: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let shape = x.shape().to_vec();
    let rank = shape.len();
    let (starts, ends) = (a.ints(1)?, a.ints(2)?);
    let axes = match a.opt(3) {
        Some(_) => a
            .ints(3)?
            .into_iter()
            .map(|v| axis(a.op(), v, rank))
            .collect::<Result<Vec<_>, _>>()?,
        None if starts.len() <= rank => (0..starts.len()).collect(),
        None => {
            return Err(format!(
                "`onnx.Slice`: {} starts for rank {rank}",
                starts.len()
            ));
        }
    };
    let steps = match a.opt(4) {
        Some(_) => a.ints(4)?,
        None => vec![1; starts.len()],
    };
    // Per axis: the first index and the step, and the count.
    let mut first: Vec<i64> = vec![0; rank];
    let mut step: Vec<i64> = vec![1; rank];
    let mut out = shape.clone();
    for (k, &ax) in axes.iter().enumerate() {
        let n = shape[ax] as i64;
        let s = *steps.get(k).ok_or("`onnx.Slice`: fewer steps than axes")?;
        if s == 0 {
            return Err("`onnx.Slice`: a step of 0".into());
        }
        let clamp = |v: i64, lo: i64, hi: i64| v.clamp(lo, hi);
        let norm = |v: i64| if v < 0 { v + n } else { v };
        let (b, e) = (
            norm(starts[k]),
            norm(*ends.get(k).ok_or("`onnx.Slice`: fewer ends than starts")?),
        );
        let (b, e) = if s > 0 {
            (clamp(b, 0, n), clamp(e, 0, n))
        } else {
            (clamp(b, 0, n - 1), clamp(e, -1, n - 1))
        };
        let count = if s > 0 {
            (e - b + s - 1).div_euclid(s)
        } else {
            (b - e + (-s) - 1).div_euclid(-s)
        };
        out[ax] = count.max(0) as usize;
        first[ax] = b;
        step[ax] = s;
    }
    let from = map_positions(&out, &shape, |idx| {
        Some(
            idx.iter()
                .enumerate()
                .map(|(d, &i)| (first[d] + i as i64 * step[d]) as usize)
                .collect(),
        )
    });
    Ok(vec![take(x, &out, &from, 0.0)?])
}

native! {
    /// Input 0 padded by input 1's amounts (begins then ends, per axis of input 3 or every
    /// axis; negative amounts crop), with input 2's value (`mode="constant"`) or by `reflect`,
    /// `edge` or `wrap`.
    "Pad" {
        versions: &[18, 19],
        attrs: [attr("mode", AttrKind::Str, AttrDefault::Str("constant"))],
        pattern: Injective,
        rel: |a, _| {
            let x = a.get(0)?;
            Ok(vec![a.value_shaped(0, x.dtype, Some(x.rank()))?])
        },
        kernel: pad,
    }
}

fn pad(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let shape = x.shape().to_vec();
    let rank = shape.len();
    let amounts = a.ints(1)?;
    let axes = match a.opt(3) {
        Some(_) => a
            .ints(3)?
            .into_iter()
            .map(|v| axis(a.op(), v, rank))
            .collect::<Result<Vec<_>, _>>()?,
        None => (0..rank).collect(),
    };
    if amounts.len() != 2 * axes.len() {
        return Err(format!(
            "`onnx.Pad`: {} pads for {} axes",
            amounts.len(),
            axes.len()
        ));
    }
    let mut before = vec![0i64; rank];
    let mut out: Vec<usize> = shape.clone();
    for (k, &ax) in axes.iter().enumerate() {
        let (b, e) = (amounts[k], amounts[k + axes.len()]);
        before[ax] = b;
        out[ax] = usize::try_from(shape[ax] as i64 + b + e)
            .map_err(|_| "`onnx.Pad`: a negative size".to_string())?;
    }
    let fill = match a.opt(2) {
        Some(v) if v.len() == 1 => v.values()[0],
        _ => 0.0,
    };
    let mode = r.str("mode");
    let from = map_positions(&out, &shape, |idx| {
        idx.iter()
            .enumerate()
            .map(|(d, &i)| {
                let n = shape[d] as i64;
                let p = i as i64 - before[d];
                if (0..n).contains(&p) {
                    return Some(p as usize);
                }
                let q = match mode.as_str() {
                    "edge" => p.clamp(0, n - 1),
                    "wrap" => p.rem_euclid(n),
                    "reflect" if n > 1 => {
                        let period = 2 * (n - 1);
                        let m = p.rem_euclid(period);
                        if m < n { m } else { period - m }
                    }
                    "reflect" => 0,
                    _ => return None,
                };
                Some(q as usize)
            })
            .collect()
    });
    Ok(vec![take(x, &out, &from, fill)?])
}

native! {
    /// Input 0 split along `axis` into the sizes input 1 gives, or into `num_outputs` parts
    /// (the last smaller), or into as many equal parts as the node has outputs.
    "Split" {
        versions: &[13, 18],
        attrs: [
            attr("axis", AttrKind::Int, AttrDefault::Int(0)),
            attr("num_outputs", AttrKind::OptInt, AttrDefault::Null),
        ],
        pattern: Injective,
        rel: |a, r| {
            let x = a.get(0)?;
            let ax = axis(a.op(), r.int("axis"), x.rank())?;
            let n = usize::try_from(r.int("outputs")).unwrap_or(1);
            Ok((0..n)
                .map(|_| {
                    let mut t = x.clone();
                    t.shape[ax] = Dim::Any;
                    t
                })
                .collect())
        },
        kernel: split,
    }
}

fn split(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let shape = x.shape().to_vec();
    let ax = axis(a.op(), r.int("axis"), shape.len())?;
    let n = shape[ax];
    let parts: Vec<usize> = match (a.opt(1), r.opt_int("num_outputs")) {
        (Some(_), _) => a.sizes(1)?,
        (None, count) => {
            let k = count.unwrap_or_else(|| r.int("outputs")).max(1) as usize;
            let size = n.div_ceil(k);
            (0..k)
                .map(|i| size.min(n.saturating_sub(i * size)))
                .collect()
        }
    };
    if parts.iter().sum::<usize>() != n {
        return Err(format!("`onnx.Split`: parts {parts:?} of an axis of {n}"));
    }
    let mut start = 0;
    let mut outs = Vec::with_capacity(parts.len());
    for &p in &parts {
        let mut out = shape.clone();
        out[ax] = p;
        let from = map_positions(&out, &shape, |idx| {
            let mut s = idx.to_vec();
            s[ax] += start;
            Some(s)
        });
        outs.push(take(x, &out, &from, 0.0)?);
        start += p;
    }
    Ok(outs)
}

native! {
    /// Input 0 repeated along each axis as many times as input 1 says.
    "Tile" {
        versions: &[6],
        attrs: [],
        pattern: Injective,
        rel: |a, _| {
            let x = a.get(0)?;
            Ok(vec![a.value_shaped(0, x.dtype, Some(x.rank()))?])
        },
        kernel: |a, _| {
            let x = a.get(0)?;
            let shape = x.shape().to_vec();
            let reps = a.sizes(1)?;
            if reps.len() != shape.len() {
                return Err("`onnx.Tile`: one repeat per axis".into());
            }
            let out: Vec<usize> = shape.iter().zip(&reps).map(|(d, r)| d * r).collect();
            let from = map_positions(&out, &shape, |idx| {
                Some(idx.iter().zip(&shape).map(|(i, d)| i % d).collect())
            });
            Ok(vec![take(x, &out, &from, 0.0)?])
        },
    }
}

/// `DepthToSpace`'s and `SpaceToDepth`'s blocks: (N, C, H, W) with `blocksize`.
fn nchw(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<([usize; 4], usize), String> {
    let x = a.get(0)?;
    let b = usize::try_from(r.int("blocksize")).unwrap_or(0);
    match (x.shape(), b) {
        (&[n, c, h, w], 1..) => Ok(([n, c, h, w], b)),
        _ => Err(format!(
            "`{}` takes an (N, C, H, W) tensor and a blocksize",
            a.op()
        )),
    }
}

fn rearranged(
    a: &Args<'_, TensorType>,
    r: &AttrReader<'_>,
    to_space: bool,
) -> Result<Vec<TensorType>, String> {
    let x = a.get(0)?;
    let b = r.int("blocksize");
    if x.rank() != 4 || b < 1 {
        return Err(format!(
            "`{}` takes an (N, C, H, W) tensor and a blocksize",
            a.op()
        ));
    }
    let scale = |d: Dim, up: bool| match d {
        Dim::Static(v) if up => v.checked_mul(b).map_or(Dim::Any, Dim::Static),
        Dim::Static(v) => Dim::Static(v / b),
        _ => Dim::Any,
    };
    let mut t = x.clone();
    t.shape[1] = if to_space {
        scale(scale(x.shape[1], false), false)
    } else {
        scale(scale(x.shape[1], true), true)
    };
    t.shape[2] = scale(x.shape[2], to_space);
    t.shape[3] = scale(x.shape[3], to_space);
    Ok(vec![t])
}

native! {
    /// Depth moved into blocks of space: (N, C, H, W) to (N, C / b², H·b, W·b), the channels
    /// read depth-column-row (`DCR`) or column-row-depth (`CRD`).
    "DepthToSpace" {
        versions: &[13],
        attrs: [
            attr("blocksize", AttrKind::Int, AttrDefault::Required),
            attr("mode", AttrKind::Str, AttrDefault::Str("DCR")),
        ],
        pattern: Injective,
        rel: |a, r| rearranged(a, r, true),
        kernel: |a, r| {
            let x = a.get(0)?;
            let ([n, c, h, w], b) = nchw(a, r)?;
            let c2 = c / (b * b);
            let (split, perm): (Vec<usize>, [usize; 6]) = if r.str("mode") == "CRD" {
                (vec![n, c2, b, b, h, w], [0, 1, 4, 2, 5, 3])
            } else {
                (vec![n, b, b, c2, h, w], [0, 3, 4, 1, 5, 2])
            };
            let t = x.reshape(&split)?.permute(&perm);
            Ok(vec![t.reshape(&[n, c2, h * b, w * b])?])
        },
    }
}

native! {
    /// Blocks of space moved into depth: (N, C, H, W) to (N, C·b², H / b, W / b).
    "SpaceToDepth" {
        versions: &[13],
        attrs: [attr("blocksize", AttrKind::Int, AttrDefault::Required)],
        pattern: Injective,
        rel: |a, r| rearranged(a, r, false),
        kernel: |a, r| {
            let x = a.get(0)?;
            let ([n, c, h, w], b) = nchw(a, r)?;
            let t = x.reshape(&[n, c, h / b, b, w / b, b])?.permute(&[0, 3, 5, 1, 2, 4]);
            Ok(vec![t.reshape(&[n, c * b * b, h / b, w / b])?])
        },
    }
}

native! {
    /// Input 0 cropped or padded with zeros, centred, to the sizes input 1 gives along
    /// `axes` (every axis without it).
    "CenterCropPad" {
        versions: &[18],
        attrs: [attr("axes", AttrKind::Ints, AttrDefault::Ints(&[]))],
        pattern: Injective,
        rel: |a, _| {
            let x = a.get(0)?;
            Ok(vec![a.value_shaped(0, x.dtype, Some(x.rank()))?])
        },
        kernel: |a, r| {
            let x = a.get(0)?;
            let shape = x.shape().to_vec();
            let axes: Vec<usize> = match r.ints("axes") {
                v if v.is_empty() => (0..shape.len()).collect(),
                v => v.into_iter().map(|i| axis(a.op(), i, shape.len())).collect::<Result<_, _>>()?,
            };
            let target = a.sizes(1)?;
            let mut out = shape.clone();
            // Per axis: the input index of output index 0 (negative: padding first).
            let mut shift = vec![0i64; shape.len()];
            for (k, &ax) in axes.iter().enumerate() {
                let t = *target.get(k).ok_or("`onnx.CenterCropPad`: fewer sizes than axes")?;
                shift[ax] = if t <= shape[ax] { ((shape[ax] - t) / 2) as i64 } else { -(((t - shape[ax]) / 2) as i64) };
                out[ax] = t;
            }
            let from = map_positions(&out, &shape, |idx| {
                idx.iter()
                    .enumerate()
                    .map(|(d, &i)| {
                        let p = i as i64 + shift[d];
                        (0..shape[d] as i64).contains(&p).then_some(p as usize)
                    })
                    .collect()
            });
            Ok(vec![take(x, &out, &from, 0.0)?])
        },
    }
}
