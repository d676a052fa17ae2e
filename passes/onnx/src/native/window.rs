//! Sliding-window operators over any number of spatial axes: `Conv`, `ConvInteger`,
//! `ConvTranspose`, `MaxPool` (with its indices) and its inverse `MaxUnpool`, `AveragePool`
//! and `LpPool`, `Col2Im`, `QLinearConv`. The IR's 2-D operators hold the common cases; these
//! hold 1-D, 3-D, dilated, ceil-mode and auto-padded ones.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{DType, Dim, Tensor, TensorType};
use ndarray::{ArrayD, IxDyn};

use super::{Args, attr, native};

/// A window's geometry along each spatial axis.
struct Geometry {
    kernel: Vec<usize>,
    strides: Vec<usize>,
    dilations: Vec<usize>,
    /// Padding before each axis (the end's is implied by the output size).
    begin: Vec<usize>,
    /// Padded extent's end (input size plus both pads), for `count_include_pad`.
    padded: Vec<usize>,
    out: Vec<usize>,
}

fn list(r: &AttrReader<'_>, name: &str, n: usize, default: usize) -> Result<Vec<usize>, String> {
    let v = r.ints(name);
    if v.is_empty() {
        return Ok(vec![default; n]);
    }
    if v.len() != n {
        return Err(format!(
            "`{}`: {name} of {} values, {n} expected",
            r.op_name(),
            v.len()
        ));
    }
    // (Each below 2^32, so that sums and products of a few stay in range.)
    v.into_iter()
        .map(|x| {
            usize::try_from(x)
                .ok()
                .filter(|&x| x < 1 << 32)
                .ok_or_else(|| format!("`{}`: {name} {x}", r.op_name()))
        })
        .collect()
}

/// The geometry of windows of `kernel` over `spatial` sizes, by the node's attributes.
fn geometry(r: &AttrReader<'_>, spatial: &[usize], kernel: Vec<usize>) -> Result<Geometry, String> {
    let n = spatial.len();
    let strides = list(r, "strides", n, 1)?;
    let dilations = list(r, "dilations", n, 1)?;
    let pads = list(r, "pads", 2 * n, 0)?;
    if kernel.len() != n || strides.len() != n || dilations.len() != n || pads.len() != 2 * n {
        return Err(format!(
            "`{}`: attributes of another rank than the input's {n} spatial axes",
            r.op_name()
        ));
    }
    let ceil = r.int("ceil_mode") != 0;
    let auto = r.str("auto_pad");
    let mut g = Geometry {
        kernel,
        strides,
        dilations,
        begin: vec![0; n],
        padded: vec![0; n],
        out: vec![0; n],
    };
    for i in 0..n {
        let ek = (g.kernel[i] - 1) * g.dilations[i] + 1;
        let (s, x) = (g.strides[i].max(1), spatial[i]);
        let (b, e) = match auto.as_str() {
            "SAME_UPPER" | "SAME_LOWER" => {
                let out = x.div_ceil(s);
                let total = ((out.saturating_sub(1)) * s + ek).saturating_sub(x);
                let b = if auto == "SAME_UPPER" {
                    total / 2
                } else {
                    total.div_ceil(2)
                };
                (b, total - b)
            }
            "VALID" => (0, 0),
            _ => (pads[i], pads[i + n]),
        };
        let span = (x + b + e)
            .checked_sub(ek)
            .ok_or_else(|| format!("`{}`: a window larger than its padded input", r.op_name()))?;
        let mut out = if ceil {
            span.div_ceil(s) + 1
        } else {
            span / s + 1
        };
        if ceil && (out - 1) * s >= x + b {
            out -= 1;
        }
        g.begin[i] = b;
        g.padded[i] = x + b + e;
        g.out[i] = out;
    }
    Ok(g)
}

/// Each output position's index (row-major over `shape`), then `f` on it.
fn each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    let n: usize = shape.iter().product();
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        f(&idx);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// For output position `o`, each window position's input index (`None`: in the padding),
/// and whether it lies inside the padded extent.
fn window(g: &Geometry, spatial: &[usize], o: &[usize], mut f: impl FnMut(Option<&[usize]>, bool)) {
    let mut at = vec![0usize; spatial.len()];
    each_index(&g.kernel, |k| {
        let mut inside = true;
        let mut padded = true;
        for d in 0..spatial.len() {
            let p = (o[d] * g.strides[d] + k[d] * g.dilations[d]) as i64 - g.begin[d] as i64;
            padded &= p + (g.begin[d] as i64) < g.padded[d] as i64;
            if p < 0 || p >= spatial[d] as i64 {
                inside = false;
            } else {
                at[d] = p as usize;
            }
        }
        f(inside.then_some(at.as_slice()), padded);
    });
}

fn strides_of(shape: &[usize]) -> Vec<usize> {
    (0..shape.len())
        .map(|i| shape[i + 1..].iter().product())
        .collect()
}

/// The output type of a window operator over `x` with `channels` output channels.
fn window_type(
    a: &Args<'_, TensorType>,
    r: &AttrReader<'_>,
    x: &TensorType,
    channels: Dim,
    kernel: Option<Vec<usize>>,
    dtype: DType,
) -> Result<TensorType, String> {
    if x.rank() < 3 {
        return Err(format!(
            "`{}` takes an (N, C, D1, ...) tensor, got {x}",
            a.op()
        ));
    }
    let spatial: Option<Vec<usize>> = x.shape[2..]
        .iter()
        .map(|d| d.value().map(|v| v as usize))
        .collect();
    let mut shape = vec![x.shape[0], channels];
    match (spatial, kernel) {
        (Some(s), Some(k)) => shape.extend(
            geometry(r, &s, k)?
                .out
                .into_iter()
                .map(|v| Dim::Static(v as i64)),
        ),
        _ => shape.extend(std::iter::repeat_n(Dim::Any, x.rank() - 2)),
    }
    Ok(TensorType { shape, dtype })
}

fn pool_kernel(r: &AttrReader<'_>) -> Option<Vec<usize>> {
    let k = r.ints("kernel_shape");
    (!k.is_empty()).then(|| k.into_iter().map(|v| v.max(0) as usize).collect())
}

const POOL_ATTRS: [irpass_ir::op::AttrSpec; 6] = [
    attr("auto_pad", AttrKind::Str, AttrDefault::Str("NOTSET")),
    attr("ceil_mode", AttrKind::Int, AttrDefault::Int(0)),
    attr("dilations", AttrKind::Ints, AttrDefault::Ints(&[])),
    attr("kernel_shape", AttrKind::Ints, AttrDefault::Required),
    attr("pads", AttrKind::Ints, AttrDefault::Ints(&[])),
    attr("strides", AttrKind::Ints, AttrDefault::Ints(&[])),
];

/// A pooling: `reduce` of each window's in-bounds values, given how many positions of the
/// window lie in the padded extent; also each window's first largest value's flat index.
fn pool(
    a: &Args<'_, Tensor>,
    r: &AttrReader<'_>,
    reduce: impl Fn(&[f64], usize) -> f64,
) -> Result<(Tensor, Tensor), String> {
    let x = a.get(0)?;
    let shape = x.shape().to_vec();
    if shape.len() < 3 {
        return Err(format!("`{}` takes an (N, C, D1, ...) tensor", a.op()));
    }
    let spatial = &shape[2..];
    let g = geometry(r, spatial, pool_kernel(r).ok_or("no kernel_shape")?)?;
    let v: Vec<f64> = x.values();
    let st = strides_of(spatial);
    let per: usize = spatial.iter().product();
    let mut out_shape = shape[..2].to_vec();
    out_shape.extend(&g.out);
    let (mut values, mut indices) = (Vec::new(), Vec::new());
    for plane in 0..shape[0] * shape[1] {
        each_index(&g.out, |o| {
            let (mut lane, mut within, mut best) = (Vec::new(), 0, (f64::NEG_INFINITY, 0usize));
            window(&g, spatial, o, |at, padded| {
                within += usize::from(padded);
                if let Some(at) = at {
                    let i = plane * per + at.iter().zip(&st).map(|(p, s)| p * s).sum::<usize>();
                    if v[i] > best.0 {
                        best = (v[i], i);
                    }
                    lane.push(v[i]);
                }
            });
            values.push(reduce(&lane, within));
            indices.push(best.1 as i64);
        });
    }
    let mk = |e: ndarray::ShapeError| e.to_string();
    Ok((
        Tensor::from_f64(
            x.dtype(),
            ArrayD::from_shape_vec(IxDyn(&out_shape), values).map_err(mk)?,
        ),
        Tensor::from_i64(
            DType::Int64,
            ArrayD::from_shape_vec(IxDyn(&out_shape), indices).map_err(mk)?,
        ),
    ))
}

fn pool_type(a: &Args<'_, TensorType>, r: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    let x = a.get(0)?;
    let t = window_type(
        a,
        r,
        x,
        x.shape.get(1).copied().unwrap_or(Dim::Any),
        pool_kernel(r),
        x.dtype,
    )?;
    Ok(vec![
        t.clone(),
        TensorType {
            shape: t.shape,
            dtype: DType::Int64,
        },
    ])
}

native! {
    /// The largest element of each window over the spatial axes, and (output 1) its flat
    /// index in the input.
    "MaxPool" {
        versions: &[1, 8, 10],
        attrs: [POOL_ATTRS[0], POOL_ATTRS[1], POOL_ATTRS[2], POOL_ATTRS[3], POOL_ATTRS[4],
                attr("storage_order", AttrKind::Int, AttrDefault::Int(0)), POOL_ATTRS[5]],
        pattern: OutEWiseFusable,
        rel: pool_type,
        kernel: |a, r| {
            let (v, i) = pool(a, r, |lane, _| lane.iter().copied().fold(f64::NEG_INFINITY, f64::max))?;
            if r.int("storage_order") == 0 {
                return Ok(vec![v, i]);
            }
            // Column-major indices: the spatial axes' strides reversed within each plane.
            let shape = a.get(0)?.shape().to_vec();
            let spatial = &shape[2..];
            let per: usize = spatial.iter().product();
            let row = strides_of(spatial);
            let mut col = vec![1usize; spatial.len()];
            for d in 1..spatial.len() {
                col[d] = col[d - 1] * spatial[d - 1];
            }
            let to_col = |flat: i64| -> i64 {
                let (plane, mut rem) = (flat as usize / per, flat as usize % per);
                let mut off = 0;
                for d in 0..spatial.len() {
                    off += rem / row[d] * col[d];
                    rem %= row[d];
                }
                (plane * per + off) as i64
            };
            Ok(vec![v, Tensor::from_i64(DType::Int64, i.to_i64().mapv(to_col))])
        },
    }
}

native! {
    /// The mean of each window over the spatial axes: of its elements in the input, or of
    /// every position in the padded input (`count_include_pad=1`).
    "AveragePool" {
        versions: &[1, 7, 10, 19],
        attrs: [POOL_ATTRS[0], POOL_ATTRS[1], attr("count_include_pad", AttrKind::Int, AttrDefault::Int(0)),
                POOL_ATTRS[2], POOL_ATTRS[3], POOL_ATTRS[4], POOL_ATTRS[5]],
        pattern: OutEWiseFusable,
        rel: |a, r| Ok(pool_type(a, r)?.into_iter().take(1).collect()),
        kernel: |a, r| {
            let include = r.int("count_include_pad") != 0;
            let (v, _) = pool(a, r, |lane, within| {
                lane.iter().sum::<f64>() / (if include { within } else { lane.len() }).max(1) as f64
            })?;
            Ok(vec![v])
        },
    }
}

native! {
    /// The Lp norm (`p`, default 2) of each window over the spatial axes.
    "LpPool" {
        versions: &[2, 18],
        attrs: [POOL_ATTRS[0], POOL_ATTRS[1], POOL_ATTRS[2], POOL_ATTRS[3],
                attr("p", AttrKind::Int, AttrDefault::Int(2)), POOL_ATTRS[4], POOL_ATTRS[5]],
        pattern: OutEWiseFusable,
        rel: |a, r| Ok(pool_type(a, r)?.into_iter().take(1).collect()),
        kernel: |a, r| {
            let p = r.int("p") as f64;
            let (v, _) = pool(a, r, |lane, _| lane.iter().map(|x| x.abs().powf(p)).sum::<f64>().powf(1.0 / p))?;
            Ok(vec![v])
        },
    }
}

const CONV_ATTRS: [irpass_ir::op::AttrSpec; 6] = [
    attr("auto_pad", AttrKind::Str, AttrDefault::Str("NOTSET")),
    attr("dilations", AttrKind::Ints, AttrDefault::Ints(&[])),
    attr("group", AttrKind::Int, AttrDefault::Int(1)),
    attr("kernel_shape", AttrKind::Ints, AttrDefault::Ints(&[])),
    attr("pads", AttrKind::Ints, AttrDefault::Ints(&[])),
    attr("strides", AttrKind::Ints, AttrDefault::Ints(&[])),
];

fn conv_type(
    a: &Args<'_, TensorType>,
    r: &AttrReader<'_>,
    w: usize,
    dtype: DType,
) -> Result<Vec<TensorType>, String> {
    let (x, wt) = (a.get(0)?, a.get(w)?);
    if x.rank() < 3 || wt.rank() != x.rank() {
        return Err(format!(
            "`{}`: input {x} and weight {wt}: (N, C, ...) and (M, C/group, k...) are expected",
            a.op()
        ));
    }
    let kernel: Option<Vec<usize>> = wt.shape[2..]
        .iter()
        .map(|d| d.value().map(|v| v as usize))
        .collect();
    Ok(vec![window_type(a, r, x, wt.shape[0], kernel, dtype)?])
}

/// The convolution of `x` (N, C, ...) by `w` (M, C / group, k...), each less its zero point
/// (`x`'s one, `w`'s one or one per output channel), plus the bias `b` (M), as float64 sums.
fn convolve(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    zps: (f64, &[f64]),
    r: &AttrReader<'_>,
) -> Result<(Vec<usize>, Vec<f64>), String> {
    let (xs, ws) = (x.shape().to_vec(), w.shape().to_vec());
    if xs.len() < 3 || ws.len() != xs.len() {
        return Err(format!("`{}`: input {xs:?} and weight {ws:?}", r.op_name()));
    }
    let group = usize::try_from(r.int("group")).unwrap_or(1).max(1);
    let (n, c, m) = (xs[0], xs[1], ws[0]);
    let cg = ws[1];
    if cg * group != c || m % group != 0 {
        return Err(format!(
            "`{}`: {c} channels in {group} groups for weight {ws:?}",
            r.op_name()
        ));
    }
    let spatial = &xs[2..];
    let g = geometry(r, spatial, ws[2..].to_vec())?;
    let per_m: usize = ws[1..].iter().product();
    let wzp = |i: usize| match zps.1 {
        [] => 0.0,
        [one] => *one,
        many => many.get(i / per_m.max(1)).copied().unwrap_or(0.0),
    };
    let xv: Vec<f64> = x.to_f64().iter().map(|v| v - zps.0).collect();
    let wv: Vec<f64> = w
        .to_f64()
        .iter()
        .enumerate()
        .map(|(i, v)| v - wzp(i))
        .collect();
    let bias: Vec<f64> = b.map_or_else(|| vec![0.0; m], |b| b.values());
    let (sx, per) = (strides_of(spatial), spatial.iter().product::<usize>());
    let kper: usize = ws[2..].iter().product();
    let mut out = Vec::with_capacity(n * m * g.out.iter().product::<usize>());
    for bn in 0..n {
        for om in 0..m {
            let grp = om / (m / group);
            each_index(&g.out, |o| {
                let mut acc = bias[om];
                let mut k = 0;
                window(&g, spatial, o, |at, _| {
                    if let Some(at) = at {
                        let off: usize = at.iter().zip(&sx).map(|(p, s)| p * s).sum();
                        for ic in 0..cg {
                            let ch = grp * cg + ic;
                            acc += xv[(bn * c + ch) * per + off] * wv[(om * cg + ic) * kper + k];
                        }
                    }
                    k += 1;
                });
                out.push(acc);
            });
        }
    }
    let mut shape = vec![n, m];
    shape.extend(&g.out);
    Ok((shape, out))
}

native! {
    /// The N-d convolution of input 0 by the weight (input 1), plus the bias (input 2), in
    /// `group` groups of channels.
    "Conv" {
        versions: &[1],
        attrs: [CONV_ATTRS[0], CONV_ATTRS[1], CONV_ATTRS[2], CONV_ATTRS[3], CONV_ATTRS[4], CONV_ATTRS[5]],
        pattern: OutEWiseFusable,
        rel: |a, r| conv_type(a, r, 1, a.float(0)?.dtype),
        kernel: |a, r| {
            let x = a.get(0)?;
            let (shape, v) = convolve(x, a.get(1)?, a.opt(2), (0.0, &[]), r)?;
                        Ok(vec![Tensor::from_vec(x.dtype(), &shape, v)?])
        },
    }
}

native! {
    /// The int32 convolution of 8-bit integer tensors less their zero points (inputs 2, 3).
    "ConvInteger" {
        versions: &[10],
        attrs: [CONV_ATTRS[0], CONV_ATTRS[1], CONV_ATTRS[2], CONV_ATTRS[3], CONV_ATTRS[4], CONV_ATTRS[5]],
        pattern: OutEWiseFusable,
        rel: |a, r| conv_type(a, r, 1, DType::Int32),
        kernel: |a, r| {
            let xzp = a.opt(2).and_then(|t| t.values().first().copied()).unwrap_or(0.0);
            let wzp = a.opt(3).map(Tensor::values).unwrap_or_default();
            let (shape, v) = convolve(a.get(0)?, a.get(1)?, None, (xzp, &wzp), r)?;
                        Ok(vec![Tensor::from_vec(DType::Int32, &shape, v)?])
        },
    }
}

native! {
    /// The N-d transposed convolution of input 0 by the weight (input 1: C, M / group, k...),
    /// plus the bias (input 2): each input element spreads over a window of the output;
    /// `output_shape` or `output_padding` and `pads` size the output.
    "ConvTranspose" {
        versions: &[1],
        attrs: [
            CONV_ATTRS[0], CONV_ATTRS[1], CONV_ATTRS[2], CONV_ATTRS[3],
            attr("output_padding", AttrKind::Ints, AttrDefault::Ints(&[])),
            attr("output_shape", AttrKind::Ints, AttrDefault::Ints(&[])),
            CONV_ATTRS[4], CONV_ATTRS[5],
        ],
        pattern: OutEWiseFusable,
        rel: |a, r| {
            let (x, w) = (a.float(0)?, a.get(1)?);
            let channels_differ = |x: &TensorType, w: &TensorType| matches!((x.shape[1], w.shape[0]), (Dim::Static(p), Dim::Static(q)) if p != q);
            if x.rank() < 3 || w.rank() != x.rank() || channels_differ(x, w) {
                return Err(format!("`onnx.ConvTranspose`: input {x} and weight {w}"));
            }
            let group = r.int("group").max(1);
            let m = w.shape.get(1).and_then(|d| d.value()).map_or(Dim::Any, |v| Dim::Static(v * group));
            let spatial: Option<Vec<usize>> = x.shape.get(2..).unwrap_or_default().iter().map(|d| d.value().map(|v| v as usize)).collect();
            let kernel: Option<Vec<usize>> = w.shape.get(2..).unwrap_or_default().iter().map(|d| d.value().map(|v| v as usize)).collect();
            let mut shape = vec![x.shape[0], m];
            match (spatial, kernel) {
                (Some(s), Some(k)) => shape.extend(transposed(r, &s, &k)?.1.into_iter().map(|v| Dim::Static(v as i64))),
                _ => shape.extend(std::iter::repeat_n(Dim::Any, x.rank().saturating_sub(2))),
            }
            Ok(vec![TensorType { shape, dtype: x.dtype }])
        },
        kernel: conv_transpose,
    }
}

/// A transposed convolution's padding before each axis and its output sizes.
fn transposed(
    r: &AttrReader<'_>,
    spatial: &[usize],
    kernel: &[usize],
) -> Result<(Vec<i64>, Vec<usize>), String> {
    let n = spatial.len();
    let strides = list(r, "strides", n, 1)?;
    let dilations = list(r, "dilations", n, 1)?;
    let extra = list(r, "output_padding", n, 0)?;
    let given = match r.ints("output_shape").is_empty() {
        true => Vec::new(),
        false => list(r, "output_shape", n, 0)?,
    };
    let pads = list(r, "pads", 2 * n, 0)?;
    let auto = r.str("auto_pad");
    let full = |i: usize| {
        (strides[i] * (spatial[i] - 1) + extra[i] + (kernel[i] - 1) * dilations[i] + 1) as i64
    };
    let mut begin = vec![0i64; n];
    let mut out = vec![0usize; n];
    for i in 0..n {
        if matches!(auto.as_str(), "SAME_UPPER" | "SAME_LOWER") {
            let target = given.get(i).copied().unwrap_or(spatial[i] * strides[i]) as i64;
            let total = full(i) - target;
            begin[i] = if auto == "SAME_UPPER" {
                total / 2
            } else {
                total - total / 2
            };
            out[i] = target as usize;
        } else {
            begin[i] = *pads.get(i).unwrap_or(&0) as i64;
            out[i] = match given.get(i) {
                Some(&o) => o,
                None => usize::try_from(full(i) - begin[i] - *pads.get(i + n).unwrap_or(&0) as i64)
                    .map_err(|_| "`onnx.ConvTranspose`: a negative output size".to_string())?,
            };
        }
    }
    Ok((begin, out))
}

fn conv_transpose(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (x, w) = (a.get(0)?, a.get(1)?);
    let (xs, ws) = (x.shape().to_vec(), w.shape().to_vec());
    if xs.len() < 3 || ws.len() != xs.len() {
        return Err(format!(
            "`onnx.ConvTranspose`: input {xs:?} and weight {ws:?}"
        ));
    }
    let group = usize::try_from(r.int("group")).unwrap_or(1).max(1);
    let (n, c, mg) = (xs[0], xs[1], ws[1]);
    if ws[0] != c || c % group != 0 {
        return Err(format!(
            "`onnx.ConvTranspose`: weight {ws:?} for {c} input channels in {group} groups"
        ));
    }
    let m = mg * group;
    let cg = c / group;
    let (spatial, kernel) = (&xs[2..], &ws[2..]);
    let (begin, out) = transposed(r, spatial, kernel)?;
    let strides = list(r, "strides", spatial.len(), 1)?;
    let dilations = list(r, "dilations", spatial.len(), 1)?;
    let (xv, wv): (Vec<f64>, Vec<f64>) = (x.values(), w.values());
    let bias: Vec<f64> = a.opt(2).map_or_else(|| vec![0.0; m], |b| b.values());
    let (per_in, per_out, per_k) = (
        spatial.iter().product::<usize>(),
        out.iter().product::<usize>(),
        kernel.iter().product::<usize>(),
    );
    let so = strides_of(&out);
    let mut y = vec![0.0; n * m * per_out];
    for b in 0..n {
        for om in 0..m {
            y[(b * m + om) * per_out..(b * m + om + 1) * per_out].fill(bias[om]);
        }
        for ic in 0..c {
            let g = ic / cg.max(1);
            let mut xi = 0;
            each_index(spatial, |xp| {
                let xval = xv[(b * c + ic) * per_in + xi];
                xi += 1;
                let mut ki = 0;
                each_index(kernel, |kp| {
                    let mut off = 0usize;
                    let mut inside = true;
                    for d in 0..spatial.len() {
                        let p = (xp[d] * strides[d] + kp[d] * dilations[d]) as i64 - begin[d];
                        if p < 0 || p >= out[d] as i64 {
                            inside = false;
                            break;
                        }
                        off += p as usize * so[d];
                    }
                    if inside {
                        for j in 0..mg {
                            let om = g * mg + j;
                            y[(b * m + om) * per_out + off] +=
                                xval * wv[(ic * mg + j) * per_k + ki];
                        }
                    }
                    ki += 1;
                });
            });
        }
    }
    let mut shape = vec![n, m];
    shape.extend(&out);
    Ok(vec![Tensor::from_vec(x.dtype(), &shape, y)?])
}

native! {
    /// The image (N, C, image shape: input 1) whose sliding blocks (of input 2's shape, by
    /// `strides`, `dilations` and `pads`) are input 0's columns (N, C·block, blocks): the sum
    /// of each block's values where they overlap (the inverse of im2col).
    "Col2Im" {
        versions: &[18],
        attrs: [CONV_ATTRS[1], CONV_ATTRS[4], CONV_ATTRS[5]],
        pattern: Opaque,
        rel: |a, _| {
            let (x, image) = (a.float(0)?, a.get(1)?);
            if x.rank() != 3 || image.rank() != 1 {
                return Err(format!("`onnx.Col2Im` of {x} to an image shape {image}"));
            }
            let n = image.shape.first().and_then(|d| d.value()).ok_or("`onnx.Col2Im`: an image shape of unknown length")?;
            let mut shape = vec![x.shape[0], Dim::Any];
            shape.extend(std::iter::repeat_n(Dim::Any, n as usize));
            Ok(vec![TensorType { shape, dtype: x.dtype }])
        },
        kernel: col2im,
    }
}

fn col2im(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let image: Vec<usize> = a.ints(1)?.into_iter().map(|v| v.max(0) as usize).collect();
    let block: Vec<usize> = a.ints(2)?.into_iter().map(|v| v.max(0) as usize).collect();
    let xs = x.shape().to_vec();
    let per_block: usize = block.iter().product();
    if xs.len() != 3 || per_block == 0 || xs[1] % per_block != 0 {
        return Err(format!(
            "`onnx.Col2Im`: columns {xs:?} for blocks {block:?}"
        ));
    }
    let (n, c) = (xs[0], xs[1] / per_block);
    let g = geometry(r, &image, block.clone())?;
    let blocks: usize = g.out.iter().product();
    if blocks != xs[2] {
        return Err(format!(
            "`onnx.Col2Im`: {} columns for {blocks} blocks",
            xs[2]
        ));
    }
    let v: Vec<f64> = x.values();
    let per_image: usize = image.iter().product();
    let st = strides_of(&image);
    let mut out = vec![0.0; n * c * per_image];
    for b in 0..n {
        for ch in 0..c {
            let mut l = 0;
            each_index(&g.out, |o| {
                let mut k = 0;
                window(&g, &image, o, |at, _| {
                    if let Some(at) = at {
                        let off: usize = at.iter().zip(&st).map(|(p, s)| p * s).sum();
                        out[(b * c + ch) * per_image + off] +=
                            v[(b * xs[1] + ch * per_block + k) * blocks + l];
                    }
                    k += 1;
                });
                l += 1;
            });
        }
    }
    let mut shape = vec![n, c];
    shape.extend(&image);
    Ok(vec![Tensor::from_vec(x.dtype(), &shape, out)?])
}

native! {
    /// The quantised convolution: input 0 and the weight (input 3) less their zero points
    /// (inputs 2 and 5), convolved, scaled by their scales (inputs 1 and 4, one per output
    /// channel or one), plus the int32 bias (input 8), quantised by the output's scale and
    /// zero point (inputs 6 and 7).
    "QLinearConv" {
        versions: &[10],
        attrs: [CONV_ATTRS[0], CONV_ATTRS[1], CONV_ATTRS[2], CONV_ATTRS[3], CONV_ATTRS[4], CONV_ATTRS[5]],
        pattern: OutEWiseFusable,
        rel: |a, r| conv_type(a, r, 3, a.get(7)?.dtype),
        kernel: |a, r| {
            let values = |i: usize| a.get(i).map(Tensor::values);
            let (xs, xzp, ws, wzp, ys, yzp) = (values(1)?, values(2)?, values(4)?, values(5)?, values(6)?, values(7)?);
            let bias = a.opt(8).map(Tensor::values);
            let (shape, acc) = convolve(a.get(0)?, a.get(3)?, None, (xzp[0], &wzp), r)?;
            let (m, per) = (shape[1], shape[2..].iter().product::<usize>().max(1));
            let to = a.get(7)?.dtype();
            let (lo, hi) = to.int_range().ok_or("`onnx.QLinearConv`: an integer output")?;
            let out: Vec<f64> = acc
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    let ch = i / per % m;
                    let w_scale = if ws.len() > 1 { ws[ch] } else { ws[0] };
                    let b = bias.as_ref().map_or(0.0, |b| b[ch]);
                    let real = (v + b) * xs[0] * w_scale;
                    ((real / ys[0]).round_ties_even() + yzp[0]).clamp(lo, hi)
                })
                .collect();
                        Ok(vec![Tensor::from_vec(to, &shape, out)?])
        },
    }
}

/// The size of each spatial axis a `MaxUnpool` restores: the size its `MaxPool` read.
fn unpooled(r: &AttrReader<'_>, pooled: &[Option<i64>]) -> Result<Vec<Option<i64>>, String> {
    let n = pooled.len();
    let kernel = r.shape("kernel_shape")?;
    if kernel.len() != n {
        return Err(format!(
            "`onnx.MaxUnpool`: a kernel of {} axes for {n} spatial axes",
            kernel.len()
        ));
    }
    let strides = list(r, "strides", n, 1)?;
    let pads = list(r, "pads", 2 * n, 0)?;
    Ok((0..n)
        .map(|d| {
            pooled[d].and_then(|p| {
                let size = (p - 1).checked_mul(strides[d] as i64)?;
                size.checked_add(kernel[d] as i64)?
                    .checked_sub((pads[d] + pads[n + d]) as i64)
            })
        })
        .collect())
}

native! {
    /// The inverse of a `MaxPool` with indices: zeros of the pooled input's shape (input 2,
    /// `output_shape`, when given, else inferred from `kernel_shape`, `strides` and `pads`),
    /// input 0's values written at the flat positions input 1 holds.
    "MaxUnpool" {
        versions: &[9, 11],
        attrs: [
            attr("kernel_shape", AttrKind::Ints, AttrDefault::Required),
            attr("pads", AttrKind::Ints, AttrDefault::Ints(&[])),
            attr("strides", AttrKind::Ints, AttrDefault::Ints(&[])),
        ],
        pattern: Opaque,
        rel: |a, r| {
            let x = a.get(0)?;
            a.of_dtype(1, |d| d == DType::Int64, "int64 indices")?;
            if x.rank() < 3 {
                return Err(format!("`onnx.MaxUnpool` takes a tensor of rank 3 or more, got {x}"));
            }
            if a.opt(2).is_some() {
                return Ok(vec![a.value_shaped(0, x.dtype, Some(x.rank()))?]);
            }
            let pooled: Vec<Option<i64>> = x.shape[2..].iter().map(|d| d.value()).collect();
            let mut shape = x.shape[..2].to_vec();
            shape.extend(unpooled(r, &pooled)?.into_iter().map(|d| d.map_or(Dim::Any, Dim::Static)));
            Ok(vec![TensorType { shape, dtype: x.dtype }])
        },
        kernel: max_unpool,
    }
}

fn max_unpool(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (x, indices) = (a.get(0)?, a.get(1)?);
    let xs = x.shape().to_vec();
    if indices.shape() != xs.as_slice() {
        return Err(format!(
            "`onnx.MaxUnpool`: indices of shape {:?} for values of shape {xs:?}",
            indices.shape()
        ));
    }
    let pooled: Vec<Option<i64>> = xs[2..].iter().map(|&d| Some(d as i64)).collect();
    let mut inferred = xs[..2].to_vec();
    for d in unpooled(r, &pooled)? {
        let d = d.unwrap_or(0);
        inferred
            .push(usize::try_from(d).map_err(|_| format!("`onnx.MaxUnpool`: an output size {d}"))?);
    }
    let shape: Vec<usize> = match a.opt(2) {
        Some(_) => a.sizes(2)?,
        None => inferred.clone(),
    };
    if shape.len() != inferred.len() || shape.iter().zip(&inferred).any(|(s, i)| s < i) {
        return Err(format!(
            "`onnx.MaxUnpool`: output shape {shape:?} smaller than the unpooled {inferred:?}"
        ));
    }
    // The values land in the inferred shape, which is then placed at the start of each axis
    // of the output.
    let total: usize = inferred.iter().product();
    let mut flat = vec![0.0; total];
    for (&i, v) in indices.to_i64().iter().zip(x.values()) {
        let i = usize::try_from(i)
            .ok()
            .filter(|&i| i < total)
            .ok_or_else(|| format!("`onnx.MaxUnpool`: index {i} outside {total} elements"))?;
        flat[i] = v;
    }
    let from = ArrayD::from_shape_vec(IxDyn(&inferred), flat).map_err(|e| e.to_string())?;
    let mut out = ArrayD::<f64>::zeros(IxDyn(&shape));
    out.slice_each_axis_mut(|ax| ndarray::Slice::from(0..inferred[ax.axis.index()]))
        .assign(&from);
    Ok(vec![Tensor::from_f64(x.dtype(), out)])
}

native! {
    /// A 2-D convolution whose kernel taps are moved by learnt offsets (input 2: N, 2·taps per
    /// offset group, output H, W; y then x for each tap) and weighted by an optional mask
    /// (input 4); inputs sampled bilinearly, zero outside; bias input 3. The output's spatial
    /// size is the offsets'.
    "DeformConv" {
        versions: &[19],
        attrs: [
            CONV_ATTRS[1],
            CONV_ATTRS[2],
            CONV_ATTRS[3],
            attr("offset_group", AttrKind::Int, AttrDefault::Int(1)),
            CONV_ATTRS[4],
            CONV_ATTRS[5],
        ],
        pattern: Opaque,
        rel: |a, _| {
            let (x, w, offset) = (a.float(0)?, a.get(1)?, a.get(2)?);
            if x.rank() != 4 || w.rank() != 4 || offset.rank() != 4 {
                return Err(format!("`onnx.DeformConv` (2-D) of {x}, weights {w} and offsets {offset}"));
            }
            let shape = vec![x.shape[0], w.shape[0], offset.shape[2], offset.shape[3]];
            Ok(vec![TensorType { shape, dtype: x.dtype }])
        },
        kernel: deform_conv,
    }
}

/// The value of a `height` × `width` plane at (`y`, `x`), bilinear, zero outside.
fn sample_zero(plane: &[f64], height: usize, width: usize, y: f64, x: f64) -> f64 {
    let (y0, x0) = (y.floor(), x.floor());
    let (ly, lx) = (y - y0, x - x0);
    let mut v = 0.0;
    for (dy, wy) in [(0.0, 1.0 - ly), (1.0, ly)] {
        for (dx, wx) in [(0.0, 1.0 - lx), (1.0, lx)] {
            let (py, px) = (y0 + dy, x0 + dx);
            if py >= 0.0 && px >= 0.0 && (py as usize) < height && (px as usize) < width {
                v += wy * wx * plane[py as usize * width + px as usize];
            }
        }
    }
    v
}

fn deform_conv(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (x, w, offset) = (a.get(0)?, a.get(1)?, a.get(2)?);
    let (xs, ws, os) = (
        x.shape().to_vec(),
        w.shape().to_vec(),
        offset.shape().to_vec(),
    );
    let bad = |why: &str| {
        Err(format!(
            "`onnx.DeformConv`: {why} (input {xs:?}, weights {ws:?}, offsets {os:?})"
        ))
    };
    if xs.len() != 4 || ws.len() != 4 || os.len() != 4 {
        return bad("only 2-D convolutions");
    }
    let (n, ic, ih, iw) = (xs[0], xs[1], xs[2], xs[3]);
    let (oc, per_group, kh, kw) = (ws[0], ws[1], ws[2], ws[3]);
    let (oh, ow) = (os[2], os[3]);
    let group = usize::try_from(r.int("group")).unwrap_or(0);
    let offset_group = usize::try_from(r.int("offset_group")).unwrap_or(0);
    if group == 0
        || offset_group == 0
        || ic != per_group * group
        || oc % group != 0
        || ic % offset_group != 0
    {
        return bad("channels not divisible by the groups");
    }
    if os[0] != n || os[1] != offset_group * kh * kw * 2 {
        return bad("offsets of another shape than the kernel's taps");
    }
    let kernel = r.ints("kernel_shape");
    if !kernel.is_empty() && kernel != [kh as i64, kw as i64] {
        return bad(&format!("kernel_shape {kernel:?}"));
    }
    let strides = list(r, "strides", 2, 1)?;
    let dilations = list(r, "dilations", 2, 1)?;
    let pads = list(r, "pads", 4, 0)?;
    let taps = kh * kw;
    let mask = match a.opt(4) {
        Some(m) if m.shape() == [n, offset_group * taps, oh, ow] => Some(m.values()),
        Some(m) => return bad(&format!("a mask of shape {:?}", m.shape())),
        None => None,
    };
    let bias = match a.opt(3) {
        Some(b) if b.shape() == [oc] => b.values(),
        Some(b) => return bad(&format!("a bias of shape {:?}", b.shape())),
        None => vec![0.0; oc],
    };
    let (xv, wv, ov) = (x.values(), w.values(), offset.values());
    let out_per_group = oc / group;
    let plane = oh * ow;
    let mut out = vec![0.0; n * oc * plane];
    for b in 0..n {
        for c in 0..ic {
            let og = c / (ic / offset_group);
            let g = c / per_group;
            let input = &xv[(b * ic + c) * ih * iw..][..ih * iw];
            // This channel's samples at each output position and tap, masked.
            let mut samples = vec![0.0; plane * taps];
            for (p, row) in samples.chunks_mut(taps).enumerate() {
                let (i, j) = (p / ow, p % ow);
                for (t, s) in row.iter_mut().enumerate() {
                    let (ki, kj) = (t / kw, t % kw);
                    let at = |k: usize| ov[((b * offset_group + og) * taps * 2 + k) * plane + p];
                    let y =
                        (i * strides[0] + ki * dilations[0]) as f64 - pads[0] as f64 + at(2 * t);
                    let x = (j * strides[1] + kj * dilations[1]) as f64 - pads[1] as f64
                        + at(2 * t + 1);
                    let m = mask
                        .as_ref()
                        .map_or(1.0, |m| m[((b * offset_group + og) * taps + t) * plane + p]);
                    *s = m * sample_zero(input, ih, iw, y, x);
                }
            }
            for o in g * out_per_group..(g + 1) * out_per_group {
                let weights = &wv[(o * per_group + c % per_group) * taps..][..taps];
                let dst = &mut out[(b * oc + o) * plane..][..plane];
                for (d, row) in dst.iter_mut().zip(samples.chunks(taps)) {
                    *d += row.iter().zip(weights).map(|(s, w)| s * w).sum::<f64>();
                }
            }
        }
        for o in 0..oc {
            out[(b * oc + o) * plane..][..plane]
                .iter_mut()
                .for_each(|v| *v += bias[o]);
        }
    }
    Ok(vec![Tensor::from_vec(x.dtype(), &[n, oc, oh, ow], out)?])
}
