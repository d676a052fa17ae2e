//! Normalisations: `LayerNormalization` (with its mean and inverse standard deviation
//! outputs), `RMSNormalization`, `GroupNormalization`, `InstanceNormalization`,
//! `MeanVarianceNormalization` and `LpNormalization`.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader, axis, broadcast_concrete};
use irpass_ir::{Dim, Tensor, TensorType};
use ndarray::{ArrayD, IxDyn};

use super::{Args, attr, native};

/// Input `i` broadcast to `shape`, row-major (a scale or a bias).
fn broadcast_to(t: &Tensor, shape: &[usize], op: &str) -> Result<Vec<f64>, String> {
    let target = broadcast_concrete(t.shape(), shape)?;
    if target != shape {
        return Err(format!(
            "`{op}`: {:?} does not broadcast to {shape:?}",
            t.shape()
        ));
    }
    let a = t.to_f64();
    let b = a.broadcast(IxDyn(shape)).ok_or("no broadcast")?;
    Ok(b.iter().copied().collect())
}

/// Mean and variance of a lane.
fn moments(lane: &[f64]) -> (f64, f64) {
    let n = lane.len().max(1) as f64;
    let mean = lane.iter().sum::<f64>() / n;
    let var = lane.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var)
}

/// `LayerNormalization`'s and `RMSNormalization`'s outputs' types: `x`'s, and the statistics'
/// (`x`'s shape with 1 from `axis` on, of the stash type float32).
fn layer_type(a: &Args<'_, TensorType>, r: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    let x = a.float(0)?;
    let ax = axis(a.op(), r.int("axis"), x.rank())?;
    let mut stats = x.shape.clone();
    for d in &mut stats[ax..] {
        *d = Dim::Static(1);
    }
    let stats = TensorType {
        shape: stats,
        dtype: stash(r)?,
    };
    Ok(vec![x.clone(), stats.clone(), stats])
}

fn stash(r: &AttrReader<'_>) -> Result<irpass_ir::DType, String> {
    crate::tensor::dtype_of(r.int("stash_type") as i32)
        .map_err(|e| format!("`{}`: stash_type: {e}", r.op_name()))
}

const LAYER_ATTRS: [irpass_ir::op::AttrSpec; 3] = [
    attr("axis", AttrKind::Int, AttrDefault::Int(-1)),
    attr("epsilon", AttrKind::Float, AttrDefault::Float(1e-5)),
    attr("stash_type", AttrKind::Int, AttrDefault::Int(1)),
];

native! {
    /// (x - mean) / sqrt(var + epsilon) * scale + bias over the axes from `axis` on; also the
    /// mean and the inverse standard deviation (outputs 1 and 2).
    "LayerNormalization" {
        versions: &[17],
        attrs: [LAYER_ATTRS[0], LAYER_ATTRS[1], LAYER_ATTRS[2]],
        pattern: OutEWiseFusable,
        rel: layer_type,
        kernel: |a, r| normalize_trailing(a, r, false),
    }
}

native! {
    /// x / sqrt(mean(x^2) + epsilon) * scale over the axes from `axis` on.
    "RMSNormalization" {
        versions: &[23],
        attrs: [LAYER_ATTRS[0], LAYER_ATTRS[1], LAYER_ATTRS[2]],
        pattern: OutEWiseFusable,
        rel: |a, r| Ok(layer_type(a, r)?.into_iter().take(1).collect()),
        kernel: |a, r| normalize_trailing(a, r, true),
    }
}

/// Layer (or RMS) normalisation of input 0 over its axes from `axis` on.
fn normalize_trailing(
    a: &Args<'_, Tensor>,
    r: &AttrReader<'_>,
    rms: bool,
) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let shape = x.shape().to_vec();
    let ax = axis(a.op(), r.int("axis"), shape.len())?;
    let eps = r.float("epsilon");
    let inner: usize = shape[ax..].iter().product();
    let scale = broadcast_to(a.get(1)?, &shape, a.op())?;
    let bias = match a.opt(2) {
        Some(b) if !rms => Some(broadcast_to(b, &shape, a.op())?),
        _ => None,
    };
    let xs = x.values();
    let mut y = vec![0.0; xs.len()];
    let (mut means, mut inv) = (Vec::new(), Vec::new());
    for (k, lane) in xs.chunks(inner.max(1)).enumerate() {
        let (mean, var) = if rms {
            (
                0.0,
                lane.iter().map(|v| v * v).sum::<f64>() / lane.len().max(1) as f64,
            )
        } else {
            moments(lane)
        };
        let d = 1.0 / (var + eps).sqrt();
        means.push(mean);
        inv.push(d);
        for (i, v) in lane.iter().enumerate() {
            let at = k * inner + i;
            y[at] = (v - mean) * d * scale[at] + bias.as_ref().map_or(0.0, |b| b[at]);
        }
    }
    let mut stats_shape = shape.clone();
    for d in &mut stats_shape[ax..] {
        *d = 1;
    }
    let dtype = stash(r)?;
    let stat = |v: Vec<f64>| -> Result<Tensor, String> {
        let arr = ArrayD::from_shape_vec(IxDyn(&stats_shape), v).map_err(|e| e.to_string())?;
        Ok(Tensor::from_f64(dtype, arr))
    };
    Ok(vec![
        Tensor::from_vec(x.dtype(), &shape, y)?,
        stat(means)?,
        stat(inv)?,
    ])
}

/// Normalisation of channel groups of an (N, C, ...) input: each of `groups` groups of
/// `C / groups` channels (all spatial positions) to mean 0 and variance 1, then scaled and
/// shifted per channel.
fn normalize_groups(a: &Args<'_, Tensor>, groups: usize, eps: f64) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let shape = x.shape().to_vec();
    if shape.len() < 2 || groups == 0 || shape[1] % groups != 0 {
        return Err(format!(
            "`{}`: {groups} groups of the channels of {shape:?}",
            a.op()
        ));
    }
    let (c, spatial): (usize, usize) = (shape[1], shape[2..].iter().product());
    let (scale, bias) = (a.get(1)?.values(), a.get(2)?.values());
    if scale.len() != c || bias.len() != c {
        return Err(format!(
            "`{}`: a scale and a bias of {c} channels are expected",
            a.op()
        ));
    }
    let xs = x.values();
    let mut y = vec![0.0; xs.len()];
    let group = c / groups * spatial;
    for (k, lane) in xs.chunks(group.max(1)).enumerate() {
        let (mean, var) = moments(lane);
        let d = 1.0 / (var + eps).sqrt();
        for (i, v) in lane.iter().enumerate() {
            let at = k * group + i;
            let ch = (at / spatial.max(1)) % c;
            y[at] = (v - mean) * d * scale[ch] + bias[ch];
        }
    }
    Ok(vec![Tensor::from_vec(x.dtype(), &shape, y)?])
}

fn same_float(a: &Args<'_, TensorType>, _: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    Ok(vec![a.float(0)?.clone()])
}

native! {
    /// Each group of `num_groups` channel groups of an (N, C, ...) input normalised, then
    /// scaled and shifted per channel (inputs 1 and 2, of C elements).
    "GroupNormalization" {
        versions: &[21],
        attrs: [
            attr("epsilon", AttrKind::Float, AttrDefault::Float(1e-5)),
            attr("num_groups", AttrKind::Int, AttrDefault::Required),
            attr("stash_type", AttrKind::Int, AttrDefault::Int(1)),
        ],
        pattern: OutEWiseFusable,
        rel: same_float,
        kernel: |a, r| normalize_groups(a, usize::try_from(r.int("num_groups")).unwrap_or(0), r.float("epsilon")),
    }
}

native! {
    /// Each channel of each item of an (N, C, ...) input normalised over its spatial
    /// positions, then scaled and shifted (inputs 1 and 2, of C elements).
    "InstanceNormalization" {
        versions: &[6],
        attrs: [attr("epsilon", AttrKind::Float, AttrDefault::Float(1e-5))],
        pattern: OutEWiseFusable,
        rel: same_float,
        kernel: |a, r| {
            let c = a.get(0)?.shape().get(1).copied().unwrap_or(0);
            normalize_groups(a, c, r.float("epsilon"))
        },
    }
}

native! {
    /// (x - mean) / (sqrt(var) + 1e-9) over `axes`.
    "MeanVarianceNormalization" {
        versions: &[9],
        attrs: [attr("axes", AttrKind::Ints, AttrDefault::Ints(&[0, 2, 3]))],
        pattern: OutEWiseFusable,
        rel: same_float,
        kernel: |a, r| {
            let x = a.get(0)?;
            let rank = x.shape().len();
            let axes = r.ints("axes").into_iter().map(|v| axis(a.op(), v, rank)).collect::<Result<Vec<_>, _>>()?;
            by_lanes(x, &axes, |lane| {
                let (mean, var) = moments(lane);
                let d = var.sqrt() + 1e-9;
                lane.iter().map(|v| (v - mean) / d).collect()
            })
        },
    }
}

native! {
    /// x divided by its Lp norm (`p` 1 or 2) along `axis`.
    "LpNormalization" {
        versions: &[1],
        attrs: [
            attr("axis", AttrKind::Int, AttrDefault::Int(-1)),
            attr("p", AttrKind::Int, AttrDefault::Int(2)),
        ],
        pattern: OutEWiseFusable,
        rel: same_float,
        kernel: |a, r| {
            let x = a.get(0)?;
            let ax = axis(a.op(), r.int("axis"), x.shape().len())?;
            let p = r.int("p");
            if !matches!(p, 1 | 2) {
                return Err(format!("`onnx.LpNormalization`: p={p} (1 or 2)"));
            }
            by_lanes(x, &[ax], |lane| {
                let norm = if p == 1 {
                    lane.iter().map(|v| v.abs()).sum::<f64>()
                } else {
                    lane.iter().map(|v| v * v).sum::<f64>().sqrt()
                };
                lane.iter().map(|v| v / norm).collect()
            })
        },
    }
}

/// `f` on each lane of `x` over `axes` (the elements that differ only in those axes), the
/// results put back in place.
fn by_lanes(
    x: &Tensor,
    axes: &[usize],
    f: impl Fn(&[f64]) -> Vec<f64>,
) -> Result<Vec<Tensor>, String> {
    let shape = x.shape().to_vec();
    if (1..axes.len()).any(|i| axes[..i].contains(&axes[i])) {
        return Err(format!("axes {axes:?} name one axis twice"));
    }
    let kept: Vec<usize> = (0..shape.len()).filter(|i| !axes.contains(i)).collect();
    let order: Vec<usize> = kept.iter().chain(axes).copied().collect();
    let data = x.to_f64();
    let moved: Vec<f64> = data
        .view()
        .permuted_axes(IxDyn(&order))
        .iter()
        .copied()
        .collect();
    let inner: usize = axes.iter().map(|&i| shape[i]).product();
    let done: Vec<f64> = moved.chunks(inner.max(1)).flat_map(&f).collect();
    let moved_shape: Vec<usize> = order.iter().map(|&i| shape[i]).collect();
    let back = ArrayD::from_shape_vec(IxDyn(&moved_shape), done).map_err(|e| e.to_string())?;
    // Undo the permutation.
    let mut inverse = vec![0; order.len()];
    for (i, &o) in order.iter().enumerate() {
        inverse[o] = i;
    }
    let restored = back.permuted_axes(IxDyn(&inverse));
    Ok(vec![Tensor::from_f64(
        x.dtype(),
        restored.as_standard_layout().into_owned(),
    )])
}

native! {
    /// scale·(x - mean)/sqrt(var + epsilon) + bias per channel of an (N, C, ...) input: with
    /// the running mean and variance (inputs 3, 4), or with `training_mode=1` the batch's own
    /// statistics, also giving the running ones updated by `momentum` (outputs 1 and 2).
    /// (Versions 6 to 9 are read for inference, `spatial=1`.)
    "BatchNormalization" {
        versions: &[6, 7, 9, 14, 15],
        attrs: [
            attr("epsilon", AttrKind::Float, AttrDefault::Float(1e-5)),
            attr("is_test", AttrKind::Int, AttrDefault::Int(0)),
            attr("momentum", AttrKind::Float, AttrDefault::Float(0.9)),
            attr("spatial", AttrKind::Int, AttrDefault::Int(1)),
            attr("training_mode", AttrKind::Int, AttrDefault::Int(0)),
        ],
        pattern: OutEWiseFusable,
        rel: |a, _| {
            let (x, m) = (a.float(0)?, a.float(3)?);
            Ok(vec![x.clone(), m.clone(), a.float(4)?.clone()])
        },
        kernel: batch_norm,
    }
}

fn batch_norm(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let shape = x.shape().to_vec();
    if shape.len() < 2 {
        return Err("`onnx.BatchNormalization` takes an (N, C, ...) tensor".into());
    }
    let (n, c, spatial) = (shape[0], shape[1], shape[2..].iter().product::<usize>());
    let [scale, bias, mean, var] = [1, 2, 3, 4].map(|i| a.get(i).map(Tensor::values));
    let (scale, bias, mut mean, mut var) = (scale?, bias?, mean?, var?);
    let xs = x.values();
    let (eps, momentum) = (r.float("epsilon"), r.float("momentum"));
    if r.int("spatial") == 0 {
        return Err("`onnx.BatchNormalization` with spatial=0".into());
    }
    let training = r.int("training_mode") != 0;
    let (mut running_mean, mut running_var) = (mean.clone(), var.clone());
    if training {
        for ch in 0..c {
            let lane: Vec<f64> = (0..n)
                .flat_map(|b| xs[(b * c + ch) * spatial..(b * c + ch + 1) * spatial].to_vec())
                .collect();
            let (m, v) = moments(&lane);
            running_mean[ch] = mean[ch] * momentum + m * (1.0 - momentum);
            running_var[ch] = var[ch] * momentum + v * (1.0 - momentum);
            mean[ch] = m;
            var[ch] = v;
        }
    }
    let y: Vec<f64> = xs
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let ch = i / spatial.max(1) % c;
            scale[ch] * (v - mean[ch]) / (var[ch] + eps).sqrt() + bias[ch]
        })
        .collect();
    let stat = a.get(3)?;
    Ok(vec![
        Tensor::from_vec(x.dtype(), &shape, y)?,
        Tensor::from_vec(stat.dtype(), stat.shape(), running_mean)?,
        Tensor::from_vec(stat.dtype(), stat.shape(), running_var)?,
    ])
}
