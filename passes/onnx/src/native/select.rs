//! Operators that select elements by value or by index tensors: `TopK`, `OneHot`,
//! `GatherND`, `ScatterND`, `Compress`, `NonZero` and `ReverseSequence`.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader, axis};
use irpass_ir::{DType, Dim, Tensor, TensorType};
use ndarray::{ArrayD, Axis, Dimension, IxDyn};

use super::shape::take;
use super::{Args, attr, native};

native! {
    /// The `k` (input 1) largest (or smallest, `largest=0`) elements along `axis` and their
    /// indices, sorted (ties: the lower index first).
    "TopK" {
        versions: &[11],
        attrs: [
            attr("axis", AttrKind::Int, AttrDefault::Int(-1)),
            attr("largest", AttrKind::Int, AttrDefault::Int(1)),
            attr("sorted", AttrKind::Int, AttrDefault::Int(1)),
        ],
        pattern: Opaque,
        rel: |a, r| {
            let x = a.get(0)?;
            let ax = axis(a.op(), r.int("axis"), x.rank())?;
            let mut shape = x.shape.clone();
            shape[ax] = Dim::Any;
            Ok(vec![
                TensorType { shape: shape.clone(), dtype: x.dtype },
                TensorType { shape, dtype: DType::Int64 },
            ])
        },
        kernel: top_k,
    }
}

fn top_k(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let ax = axis(a.op(), r.int("axis"), x.shape().len())?;
    let k = usize::try_from(a.int(1)?).map_err(|_| "`onnx.TopK`: a negative k".to_string())?;
    let n = x.shape()[ax];
    if k > n {
        return Err(format!("`onnx.TopK`: k={k} of an axis of {n}"));
    }
    let largest = r.int("largest") != 0;
    let values = x.to_f64();
    let mut out_shape = x.shape().to_vec();
    out_shape[ax] = k;
    let mut vals = ArrayD::<f64>::zeros(IxDyn(&out_shape));
    let mut idxs = ArrayD::<i64>::zeros(IxDyn(&out_shape));
    for ((lane, mut v), mut i) in values
        .lanes(Axis(ax))
        .into_iter()
        .zip(vals.lanes_mut(Axis(ax)))
        .zip(idxs.lanes_mut(Axis(ax)))
    {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&p, &q| {
            let c = lane[p].total_cmp(&lane[q]);
            (if largest { c.reverse() } else { c }).then(p.cmp(&q))
        });
        for j in 0..k {
            v[j] = lane[order[j]];
            i[j] = order[j] as i64;
        }
    }
    Ok(vec![
        Tensor::from_f64(x.dtype(), vals),
        Tensor::from_i64(DType::Int64, idxs),
    ])
}

native! {
    /// One-hot encoding of input 0's indices along a new axis `axis` of size `depth` (input
    /// 1): input 2's second value where the index is, its first elsewhere.
    "OneHot" {
        versions: &[9],
        attrs: [attr("axis", AttrKind::Int, AttrDefault::Int(-1))],
        pattern: Injective,
        rel: |a, r| {
            let (i, v) = (a.get(0)?, a.get(2)?);
            let rank = i.rank() + 1;
            axis(a.op(), r.int("axis"), rank)?;
            Ok(vec![a.value_shaped(0, v.dtype, Some(rank))?])
        },
        kernel: |a, r| {
            let (ind, depth, vals) = (a.get(0)?, a.get(1)?, a.get(2)?);
            let depth = depth.values().first().copied().ok_or("`onnx.OneHot`: no depth")? as i64;
            let [off, on] = vals.values()[..] else { return Err("`onnx.OneHot`: two values".into()) };
            let rank = ind.shape().len() + 1;
            let ax = axis(a.op(), r.int("axis"), rank)?;
            let mut shape = ind.shape().to_vec();
            shape.insert(ax, depth.max(0) as usize);
            let indices = ind.to_f64();
            let out = ArrayD::from_shape_fn(IxDyn(&shape), |idx| {
                let mut at: Vec<usize> = idx.slice().to_vec();
                let d = at.remove(ax) as i64;
                let v = indices[IxDyn(&at)] as i64;
                let v = if v < 0 { v + depth } else { v };
                if v == d { on } else { off }
            });
            Ok(vec![Tensor::from_f64(vals.dtype(), out)])
        },
    }
}

/// `GatherND`'s and `ScatterND`'s reading of an index tensor: for each of its leading
/// positions, the row-major offset (in `data`, past `batch` leading axes) of the slice it
/// names, and the slice's size.
fn nd_offsets(
    op: &str,
    data: &[usize],
    ind: &Tensor,
    batch: usize,
) -> Result<(Vec<usize>, usize), String> {
    let last = *ind
        .shape()
        .last()
        .ok_or_else(|| format!("`{op}`: indices of rank 0"))?;
    if batch + last > data.len() {
        return Err(format!("`{op}`: indices of depth {last} into {data:?}"));
    }
    let inner: usize = data[batch + last..].iter().product();
    let strides: Vec<usize> = (0..data.len())
        .map(|i| data[i + 1..].iter().product())
        .collect();
    let per_batch: usize = data[batch..].iter().product();
    let rows: Vec<i64> = ind.to_i64().iter().copied().collect();
    let count = rows.len() / last.max(1);
    let batches: usize = data[..batch].iter().product::<usize>().max(1);
    let mut offsets = Vec::with_capacity(count);
    for (r, row) in rows.chunks(last.max(1)).enumerate().take(count) {
        let b = r / (count / batches).max(1);
        let mut off = b * per_batch;
        for (j, &v) in row.iter().enumerate().take(last) {
            let n = data[batch + j] as i64;
            let v = if v < 0 { v + n } else { v };
            if !(0..n).contains(&v) {
                return Err(format!("`{op}`: index {v} out of range for an axis of {n}"));
            }
            off += v as usize * strides[batch + j];
        }
        offsets.push(off);
    }
    Ok((offsets, inner))
}

native! {
    /// The slices of input 0 that the last axis of input 1 indexes (after `batch_dims`
    /// leading axes they share).
    "GatherND" {
        versions: &[12],
        attrs: [attr("batch_dims", AttrKind::Int, AttrDefault::Int(0))],
        pattern: Injective,
        rel: |a, r| {
            let (x, i) = (a.get(0)?, a.get(1)?);
            let b = usize::try_from(r.int("batch_dims")).unwrap_or(0);
            let rank = match i.shape.last() {
                Some(Dim::Static(q)) => Some(i.rank() - 1 + x.rank().saturating_sub(b + *q as usize)),
                _ => None,
            };
            Ok(vec![a.value_shaped(0, x.dtype, rank)?])
        },
        kernel: |a, r| {
            let (x, ind) = (a.get(0)?, a.get(1)?);
            let b = usize::try_from(r.int("batch_dims")).unwrap_or(0);
            let (offsets, inner) = nd_offsets(a.op(), x.shape(), ind, b)?;
            let last = ind.shape().len() - 1;
            let depth = ind.shape()[last];
            let mut shape: Vec<usize> = ind.shape()[..last].to_vec();
            shape.extend_from_slice(&x.shape()[b + depth..]);
            let from: Vec<Option<usize>> = offsets.iter().flat_map(|&o| (o..o + inner).map(Some)).collect();
            Ok(vec![take(x, &shape, &from, 0.0)?])
        },
    }
}

native! {
    /// Input 0 with the slices input 1's last axis indexes replaced by (or combined by
    /// `reduction` with) input 2's.
    "ScatterND" {
        versions: &[11, 16],
        attrs: [attr("reduction", AttrKind::Str, AttrDefault::Str("none"))],
        pattern: Injective,
        rel: |a, _| Ok(vec![a.get(0)?.clone()]),
        kernel: |a, r| {
            let (x, ind, upd) = (a.get(0)?, a.get(1)?, a.get(2)?);
            let (offsets, inner) = nd_offsets(a.op(), x.shape(), ind, 0)?;
            let combine = super::index::combiner(a.op(), &r.str("reduction"))?;
            let mut data: Vec<f64> = x.values();
            let updates: Vec<f64> = upd.values();
            for (k, &o) in offsets.iter().enumerate() {
                for j in 0..inner {
                    let u = *updates.get(k * inner + j).ok_or("`onnx.ScatterND`: too few updates")?;
                    data[o + j] = combine(data[o + j], u);
                }
            }
                        Ok(vec![Tensor::from_vec(x.dtype(), x.shape(), data)?])
        },
    }
}

native! {
    /// The slices of input 0 along `axis` (of every element, flattened, without it) where
    /// the bool input 1 is true.
    "Compress" {
        versions: &[9],
        attrs: [attr("axis", AttrKind::OptInt, AttrDefault::Null)],
        pattern: Opaque,
        rel: |a, r| {
            let x = a.get(0)?;
            let rank = if r.opt_int("axis").is_some() { x.rank() } else { 1 };
            Ok(vec![a.value_shaped(0, x.dtype, Some(rank))?])
        },
        kernel: |a, r| {
            let (x, cond) = (a.get(0)?, a.get(1)?);
            let keep: Vec<bool> = cond.to_bool().iter().copied().collect();
            let Some(ax) = r.opt_int("axis") else {
                let from: Vec<Option<usize>> = (0..x.len()).filter(|&i| keep.get(i) == Some(&true)).map(Some).collect();
                return Ok(vec![take(x, &[from.len()], &from, 0.0)?]);
            };
            let shape = x.shape().to_vec();
            let ax = axis(a.op(), ax, shape.len())?;
            let chosen: Vec<usize> = (0..shape[ax]).filter(|&i| keep.get(i) == Some(&true)).collect();
            let mut out = shape.clone();
            out[ax] = chosen.len();
            let (outer, inner): (usize, usize) = (shape[..ax].iter().product(), shape[ax + 1..].iter().product());
            let mut from = Vec::with_capacity(out.iter().product());
            for o in 0..outer {
                for &c in &chosen {
                    from.extend((0..inner).map(|i| Some((o * shape[ax] + c) * inner + i)));
                }
            }
            Ok(vec![take(x, &out, &from, 0.0)?])
        },
    }
}

native! {
    /// The indices (int64, one column per nonzero element, rank rows) of input 0's nonzero
    /// elements, in row-major order.
    "NonZero" {
        versions: &[9],
        attrs: [],
        pattern: Opaque,
        rel: |a, _| {
            let x = a.get(0)?;
            Ok(vec![TensorType { shape: vec![Dim::Static(x.rank() as i64), Dim::Any], dtype: DType::Int64 }])
        },
        kernel: |a, _| {
            let x = a.get(0)?;
            let v = x.to_f64();
            let hits: Vec<Vec<usize>> = v.indexed_iter().filter(|(_, e)| **e != 0.0).map(|(i, _)| i.slice().to_vec()).collect();
            let rank = x.shape().len();
            let out = ArrayD::from_shape_fn(IxDyn(&[rank, hits.len()]), |idx| hits[idx[1]][idx[0]] as i64);
            Ok(vec![Tensor::from_i64(DType::Int64, out)])
        },
    }
}

native! {
    /// Each sequence of input 0 (along `batch_axis`) reversed in its first `lengths[i]`
    /// steps (along `time_axis`).
    "ReverseSequence" {
        versions: &[10],
        attrs: [
            attr("batch_axis", AttrKind::Int, AttrDefault::Int(1)),
            attr("time_axis", AttrKind::Int, AttrDefault::Int(0)),
        ],
        pattern: Injective,
        rel: |a, _| {
            let (x, lens) = (a.get(0)?, a.get(1)?);
            if x.rank() < 2 || lens.rank() != 1 {
                return Err(format!("`onnx.ReverseSequence` of {x} by lengths {lens}"));
            }
            Ok(vec![x.clone()])
        },
        kernel: |a, r| {
            let x = a.get(0)?;
            let lens = a.ints(1)?;
            let shape = x.shape().to_vec();
            let (b, t) = (axis(a.op(), r.int("batch_axis"), shape.len())?, axis(a.op(), r.int("time_axis"), shape.len())?);
            let strides: Vec<usize> = (0..shape.len()).map(|i| shape[i + 1..].iter().product()).collect();
            let n = x.len();
            let mut from = Vec::with_capacity(n);
            for flat in 0..n {
                let idx: Vec<usize> = (0..shape.len()).map(|d| flat / strides[d] % shape[d]).collect();
                let len = *lens.get(idx[b]).ok_or("`onnx.ReverseSequence`: too few lengths")?;
                let len = usize::try_from(len).ok().filter(|&l| l <= shape[t]).ok_or_else(|| format!("`onnx.ReverseSequence`: a length {len} of {}", shape[t]))?;
                let mut src = idx.clone();
                if idx[t] < len {
                    src[t] = len - 1 - idx[t];
                }
                from.push(Some(src.iter().zip(&strides).map(|(i, s)| i * s).sum()));
            }
            Ok(vec![take(x, &shape, &from, 0.0)?])
        },
    }
}

native! {
    /// The distinct elements of input 0 (or its distinct slices along `axis`), sorted
    /// (`sorted=1`) or in order of first occurrence, with each one's first index, each
    /// element's index among them, and their counts.
    "Unique" {
        versions: &[11],
        attrs: [
            attr("axis", AttrKind::OptInt, AttrDefault::Null),
            attr("sorted", AttrKind::Int, AttrDefault::Int(1)),
        ],
        pattern: Opaque,
        rel: |a, r| {
            let x = a.get(0)?;
            let rank = if r.opt_int("axis").is_some() { x.rank() } else { 1 };
            let index = TensorType { shape: vec![Dim::Any], dtype: DType::Int64 };
            Ok(vec![a.value_shaped(0, x.dtype, Some(rank))?, index.clone(), index.clone(), index])
        },
        kernel: unique,
    }
}

fn unique(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let v: Vec<f64> = x.values();
    let shape = x.shape().to_vec();
    // The slices compared: along the axis, or each element.
    let (ax, count, inner, outer) = match r.opt_int("axis") {
        Some(ax) => {
            let ax = axis(a.op(), ax, shape.len())?;
            (
                Some(ax),
                shape[ax],
                shape[ax + 1..].iter().product::<usize>(),
                shape[..ax].iter().product::<usize>(),
            )
        }
        None => (None, v.len(), 1, 1),
    };
    let slice = |i: usize| -> Vec<f64> {
        (0..outer)
            .flat_map(|o| (0..inner).map(move |k| (o, k)))
            .map(|(o, k)| v[(o * count + i) * inner + k])
            .collect()
    };
    let slices: Vec<Vec<f64>> = (0..count).map(slice).collect();
    let mut firsts: Vec<usize> = Vec::new();
    for i in 0..count {
        if !firsts.iter().any(|&f| slices[f] == slices[i]) {
            firsts.push(i);
        }
    }
    if r.int("sorted") != 0 {
        firsts.sort_by(|&p, &q| {
            slices[p]
                .iter()
                .zip(&slices[q])
                .map(|(x, y)| x.total_cmp(y))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }
    let inverse: Vec<i64> = (0..count)
        .map(|i| {
            firsts
                .iter()
                .position(|&f| slices[f] == slices[i])
                .unwrap_or(0) as i64
        })
        .collect();
    let counts: Vec<i64> = (0..firsts.len())
        .map(|k| inverse.iter().filter(|&&j| j == k as i64).count() as i64)
        .collect();
    let y_shape: Vec<usize> = match ax {
        Some(ax) => {
            let mut s = shape.clone();
            s[ax] = firsts.len();
            s
        }
        None => vec![firsts.len()],
    };
    let mut from = Vec::new();
    for o in 0..outer {
        for &f in &firsts {
            from.extend((0..inner).map(|k| Some((o * count + f) * inner + k)));
        }
    }
    let ints = |v: Vec<i64>| -> Result<Tensor, String> {
        let n = v.len();
        Ok(Tensor::from_i64(
            DType::Int64,
            ArrayD::from_shape_vec(IxDyn(&[n]), v).map_err(|e| e.to_string())?,
        ))
    };
    Ok(vec![
        take(x, &y_shape, &from, 0.0)?,
        ints(firsts.iter().map(|&f| f as i64).collect())?,
        ints(inverse)?,
        ints(counts)?,
    ])
}

native! {
    /// The boxes (input 0: B, N, 4) each class keeps (scores: input 1, B, C, N) by greedy
    /// non-maximum suppression: at most input 2 a class, scored above input 4, overlapping a
    /// kept one by an IoU of at most input 3; rows of (batch, class, box), int64.
    "NonMaxSuppression" {
        versions: &[10],
        attrs: [attr("center_point_box", AttrKind::Int, AttrDefault::Int(0))],
        pattern: Opaque,
        rel: |a, _| {
            let (boxes, scores) = (a.float(0)?, a.float(1)?);
            if boxes.rank() != 3 || scores.rank() != 3 {
                return Err(format!("`onnx.NonMaxSuppression` of boxes {boxes} and scores {scores}"));
            }
            Ok(vec![TensorType { shape: vec![Dim::Any, Dim::Static(3)], dtype: DType::Int64 }])
        },
        kernel: nms,
    }
}

fn nms(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (boxes, scores) = (a.get(0)?, a.get(1)?);
    let (bs, ss) = (boxes.shape().to_vec(), scores.shape().to_vec());
    let [nb, nc, n] = ss[..] else {
        return Err(format!("`onnx.NonMaxSuppression`: scores {ss:?}"));
    };
    if bs != [nb, n, 4] {
        return Err(format!(
            "`onnx.NonMaxSuppression`: boxes {bs:?} for scores {ss:?}"
        ));
    }
    let first = |i: usize| a.opt(i).filter(|t| !t.is_empty()).map(|t| t.values()[0]);
    let max_out = first(2).map_or(0, |v| v.max(0.0) as usize);
    let iou_max = first(3).unwrap_or(0.0);
    let min_score = first(4);
    let bv: Vec<f64> = boxes.values();
    let sv: Vec<f64> = scores.values();
    let center = r.int("center_point_box") != 0;
    // A box as (y1, x1, y2, x2) with the smaller corner first.
    let corners = |b: usize, i: usize| -> [f64; 4] {
        let p = &bv[(b * n + i) * 4..(b * n + i) * 4 + 4];
        if center {
            let (xc, yc, w, h) = (p[0], p[1], p[2], p[3]);
            [yc - h / 2.0, xc - w / 2.0, yc + h / 2.0, xc + w / 2.0]
        } else {
            [
                p[0].min(p[2]),
                p[1].min(p[3]),
                p[0].max(p[2]),
                p[1].max(p[3]),
            ]
        }
    };
    let suppresses = |p: [f64; 4], q: [f64; 4]| -> bool {
        let (h, w) = (
            (p[2].min(q[2]) - p[0].max(q[0])),
            (p[3].min(q[3]) - p[1].max(q[1])),
        );
        if h <= 0.0 || w <= 0.0 {
            return false;
        }
        let inter = h * w;
        let (a1, a2) = ((p[2] - p[0]) * (p[3] - p[1]), (q[2] - q[0]) * (q[3] - q[1]));
        let union = a1 + a2 - inter;
        a1 > 0.0 && a2 > 0.0 && union > 0.0 && inter / union > iou_max
    };
    let mut rows: Vec<i64> = Vec::new();
    for b in 0..nb {
        for c in 0..nc {
            let score = |i: usize| sv[(b * nc + c) * n + i];
            let mut order: Vec<usize> = (0..n)
                .filter(|&i| min_score.is_none_or(|m| score(i) > m))
                .collect();
            order.sort_by(|&p, &q| score(q).total_cmp(&score(p)).then(p.cmp(&q)));
            let mut kept: Vec<usize> = Vec::new();
            for i in order {
                if kept.len() >= max_out {
                    break;
                }
                if kept
                    .iter()
                    .all(|&k| !suppresses(corners(b, k), corners(b, i)))
                {
                    kept.push(i);
                    rows.extend([b as i64, c as i64, i as i64]);
                }
            }
        }
    }
    let count = rows.len() / 3;
    let arr = ArrayD::from_shape_vec(IxDyn(&[count, 3]), rows).map_err(|e| e.to_string())?;
    Ok(vec![Tensor::from_i64(DType::Int64, arr)])
}
