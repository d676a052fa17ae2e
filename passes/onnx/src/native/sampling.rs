//! Spatial sampling: `GridSample` (nearest, linear and cubic over 2 or more spatial axes,
//! with the three padding modes), `AffineGrid`, the grid of an affine transform, and
//! `RoiAlign`, the pooling of regions of interest.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{DType, Dim, Tensor, TensorType};

use super::{Args, attr, native};

native! {
    /// Input 0 (N, C, D1, ...) sampled at the normalised coordinates of the grid (input 1:
    /// N, E1, ..., r, the last axis x first): `mode` nearest, linear (`bilinear`) or cubic
    /// (`bicubic`); outside the input, `padding_mode` zeros, border or reflection.
    "GridSample" {
        versions: &[16, 20],
        attrs: [
            attr("align_corners", AttrKind::Int, AttrDefault::Int(0)),
            attr("mode", AttrKind::Str, AttrDefault::Str("linear")),
            attr("padding_mode", AttrKind::Str, AttrDefault::Str("zeros")),
        ],
        pattern: Opaque,
        rel: |a, _| {
            let (x, g) = (a.float(0)?, a.get(1)?);
            if x.rank() < 3 || g.rank() != x.rank() {
                return Err(format!("`onnx.GridSample`: input {x} and grid {g}"));
            }
            let mut shape = vec![x.shape[0], x.shape[1]];
            shape.extend_from_slice(&g.shape[1..g.rank() - 1]);
            Ok(vec![TensorType { shape, dtype: x.dtype }])
        },
        kernel: grid_sample,
    }
}

/// `x` reflected by the borders `lo` and `hi` until it lies between them.
fn reflect(x: f64, lo: f64, hi: f64) -> f64 {
    let range = hi - lo;
    if range <= 0.0 {
        return lo;
    }
    let (d, from_lo) = if x < lo {
        (lo - x, true)
    } else if x > hi {
        (x - hi, false)
    } else {
        return x;
    };
    let n = (d / range) as i64;
    let r = d - n as f64 * range;
    match (n % 2 == 0, from_lo) {
        (true, true) | (false, false) => lo + r,
        _ => hi - r,
    }
}

fn cubic(t: f64) -> [f64; 4] {
    let a = -0.75;
    let t = t.abs();
    let (u, w, z) = (t + 1.0, 1.0 - t, 2.0 - t);
    [
        ((a * u - 5.0 * a) * u + 8.0 * a) * u - 4.0 * a,
        ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0,
        ((a + 2.0) * w - (a + 3.0)) * w * w + 1.0,
        ((a * z - 5.0 * a) * z + 8.0 * a) * z - 4.0 * a,
    ]
}

fn grid_sample(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (x, grid) = (a.get(0)?, a.get(1)?);
    let xs = x.shape().to_vec();
    let gs = grid.shape().to_vec();
    let dims = &xs[2..];
    let nd = dims.len();
    if gs.len() != xs.len() || gs[gs.len() - 1] != nd {
        return Err(format!("`onnx.GridSample`: input {xs:?} and grid {gs:?}"));
    }
    let align = r.int("align_corners") != 0;
    let mode = match r.str("mode").as_str() {
        "bilinear" | "linear" => 1,
        "bicubic" | "cubic" => 3,
        "nearest" => 0,
        other => return Err(format!("`onnx.GridSample`: mode={other:?}")),
    };
    let padding = r.str("padding_mode");
    let xv: Vec<f64> = x.values();
    let gv: Vec<f64> = grid.values();
    let out_sp: Vec<usize> = gs[1..gs.len() - 1].to_vec();
    let per_out: usize = out_sp.iter().product();
    let per_in: usize = dims.iter().product();
    let strides: Vec<usize> = (0..nd).map(|i| dims[i + 1..].iter().product()).collect();
    let (lo, hi): (Vec<f64>, Vec<f64>) = dims
        .iter()
        .map(|&d| {
            if align {
                (0.0, d as f64 - 1.0)
            } else {
                (-0.5, d as f64 - 0.5)
            }
        })
        .unzip();
    // The value at integer indices `idx` of plane `plane`, by the padding mode.
    let pixel = |plane: usize, idx: &[i64]| -> f64 {
        let mut off = 0;
        for d in 0..nd {
            let n = dims[d] as i64;
            let i = match padding.as_str() {
                "border" => idx[d].clamp(0, n - 1),
                "reflection" => reflect(idx[d] as f64, lo[d], hi[d]) as i64,
                _ if idx[d] < 0 || idx[d] >= n => return 0.0,
                _ => idx[d],
            };
            off += i.clamp(0, n - 1) as usize * strides[d];
        }
        xv[plane * per_in + off]
    };
    let (n, c) = (xs[0], xs[1]);
    let mut out = Vec::with_capacity(n * c * per_out);
    for b in 0..n {
        for ch in 0..c {
            let plane = b * c + ch;
            for o in 0..per_out {
                let g = &gv[(b * per_out + o) * nd..(b * per_out + o + 1) * nd];
                // The grid's last axis is x first: the reverse of the input's axes.
                let mut pos: Vec<f64> = (0..nd)
                    .map(|d| {
                        let v = g[nd - 1 - d];
                        let len = dims[d] as f64;
                        if align {
                            (v + 1.0) / 2.0 * (len - 1.0)
                        } else {
                            ((v + 1.0) * len - 1.0) / 2.0
                        }
                    })
                    .collect();
                if mode == 0 {
                    pos.iter_mut().for_each(|p| *p = p.round_ties_even());
                }
                for d in 0..nd {
                    if pos[d] < lo[d] || pos[d] > hi[d] {
                        match padding.as_str() {
                            "border" => pos[d] = pos[d].clamp(0.0, dims[d] as f64 - 1.0),
                            "reflection" => pos[d] = reflect(pos[d], lo[d], hi[d]),
                            _ => {}
                        }
                    }
                }
                let value = if mode == 0 {
                    let idx: Vec<i64> = pos.iter().map(|&p| p as i64).collect();
                    pixel(plane, &idx)
                } else {
                    interpolate(&pos, mode == 3, |idx| pixel(plane, idx))
                };
                out.push(value);
            }
        }
    }
    let mut shape = vec![n, c];
    shape.extend(out_sp);
    Ok(vec![Tensor::from_vec(x.dtype(), &shape, out)?])
}

/// The linear (or cubic) interpolation at `pos` of the values `pixel` gives at integer
/// indices: the tensor product of each axis' taps.
fn interpolate(pos: &[f64], cubic_taps: bool, pixel: impl Fn(&[i64]) -> f64) -> f64 {
    let nd = pos.len();
    let taps: Vec<Vec<(i64, f64)>> = pos
        .iter()
        .map(|&p| {
            let f = p.floor();
            let t = p - f;
            if cubic_taps {
                cubic(t)
                    .iter()
                    .enumerate()
                    .map(|(k, &w)| (f as i64 - 1 + k as i64, w))
                    .collect()
            } else {
                vec![(f as i64, 1.0 - t), (f as i64 + 1, t)]
            }
        })
        .collect();
    let mut sum = 0.0;
    let mut k = vec![0usize; nd];
    for _ in 0..taps.iter().map(Vec::len).product::<usize>() {
        let idx: Vec<i64> = (0..nd).map(|d| taps[d][k[d]].0).collect();
        let w: f64 = (0..nd).map(|d| taps[d][k[d]].1).product();
        sum += w * pixel(&idx);
        for d in (0..nd).rev() {
            k[d] += 1;
            if k[d] < taps[d].len() {
                break;
            }
            k[d] = 0;
        }
    }
    sum
}

native! {
    /// The sampling grid (N, H, W, 2) or (N, D, H, W, 3) of the affine transforms theta
    /// (input 0: N, 2, 3 or N, 3, 4) over an output of the size input 1 gives.
    "AffineGrid" {
        versions: &[20],
        attrs: [attr("align_corners", AttrKind::Int, AttrDefault::Int(0))],
        pattern: Opaque,
        rel: |a, _| {
            let t = a.float(0)?;
            let k = match t.shape.as_slice() {
                [_, Dim::Static(2), Dim::Static(3) | Dim::Any] => 2,
                [_, Dim::Static(3), Dim::Static(4) | Dim::Any] => 3,
                _ => return Err(format!("`onnx.AffineGrid`: theta {t}")),
            };
            let size = a.of_dtype(1, |d| d == DType::Int64, "an int64 size")?;
            if size.shape.len() != 1 || size.shape[0].value().is_some_and(|n| n != k as i64 + 2) {
                return Err(format!("`onnx.AffineGrid`: size {size} for theta {t}"));
            }
            let mut shape = vec![t.shape[0]];
            shape.extend(std::iter::repeat_n(Dim::Any, k));
            shape.push(Dim::Static(k as i64));
            Ok(vec![TensorType { shape, dtype: t.dtype }])
        },
        kernel: |a, r| {
            let theta = a.get(0)?;
            let size = a.ints(1)?;
            let k = size.len().saturating_sub(2);
            let spatial: Vec<usize> = size.iter().skip(2).map(|&v| v.max(0) as usize).collect();
            let n = size.first().map_or(0, |&v| v.max(0) as usize);
            if theta.shape() != [n, k, k + 1] {
                return Err(format!(
                    "`onnx.AffineGrid`: theta of shape {:?} for size {size:?}",
                    theta.shape()
                ));
            }
            let align = r.int("align_corners") != 0;
            let th: Vec<f64> = theta.values();
            let coord = |i: usize, len: usize| -> f64 {
                if align {
                    if len <= 1 { 0.0 } else { -1.0 + 2.0 * i as f64 / (len as f64 - 1.0) }
                } else {
                    -1.0 + (2.0 * i as f64 + 1.0) / len as f64
                }
            };
            let per: usize = spatial.iter().product();
            let mut out = Vec::with_capacity(n * per * k);
            for b in 0..n {
                for p in 0..per {
                    // The base point (x, y[, z], 1): x along the last spatial axis.
                    let mut rem = p;
                    let mut idx = vec![0; k];
                    for d in (0..k).rev() {
                        idx[d] = rem % spatial[d];
                        rem /= spatial[d];
                    }
                    let mut base: Vec<f64> = (0..k).rev().map(|d| coord(idx[d], spatial[d])).collect();
                    base.push(1.0);
                    for row in 0..k {
                        out.push((0..=k).map(|j| th[(b * k + row) * (k + 1) + j] * base[j]).sum());
                    }
                }
            }
            let mut shape = vec![n];
            shape.extend(&spatial);
            shape.push(k);
                        Ok(vec![Tensor::from_vec(theta.dtype(), &shape, out)?])
        },
    }
}

native! {
    /// Each region of interest (input 1: x1, y1, x2, y2 in input coordinates, scaled by
    /// `spatial_scale`; of the image input 2 gives) pooled to `output_height` ×
    /// `output_width` bins, each the average (`mode=avg`) or maximum of bilinear samples on
    /// a `sampling_ratio` grid (adaptive when 0); `coordinate_transformation_mode` half_pixel
    /// shifts the region by half a pixel.
    "RoiAlign" {
        versions: &[16],
        attrs: [
            attr("coordinate_transformation_mode", AttrKind::Str, AttrDefault::Str("half_pixel")),
            attr("mode", AttrKind::Str, AttrDefault::Str("avg")),
            attr("output_height", AttrKind::Int, AttrDefault::Int(1)),
            attr("output_width", AttrKind::Int, AttrDefault::Int(1)),
            attr("sampling_ratio", AttrKind::Int, AttrDefault::Int(0)),
            attr("spatial_scale", AttrKind::Float, AttrDefault::Float(1.0)),
        ],
        pattern: Opaque,
        rel: |a, r| {
            let (x, rois) = (a.float(0)?, a.get(1)?);
            let b = a.of_dtype(2, |d| d == irpass_ir::DType::Int64, "int64 batch indices")?;
            if x.rank() != 4 || rois.rank() != 2 || b.rank() != 1 {
                return Err(format!("`onnx.RoiAlign` of {x}, regions {rois} and indices {b}"));
            }
            let shape = vec![b.shape[0], x.shape[1], Dim::Static(r.int("output_height")), Dim::Static(r.int("output_width"))];
            Ok(vec![TensorType { shape, dtype: x.dtype }])
        },
        kernel: roi_align,
    }
}

/// One bilinear sample: the four input positions (in a plane) and their weights.
type Sample = [(usize, f64); 4];

/// The bilinear sample at (`y`, `x`) of a `height` × `width` plane, as `RoiAlign` takes it:
/// none outside the plane by more than a pixel, clamped to its edge otherwise.
fn bilinear(y: f64, x: f64, height: usize, width: usize) -> Option<Sample> {
    if y < -1.0 || y > height as f64 || x < -1.0 || x > width as f64 {
        return None;
    }
    let (y, x) = (y.max(0.0), x.max(0.0));
    let near = |v: f64, n: usize| -> (usize, usize, f64) {
        let low = v as usize;
        if low >= n - 1 {
            (n - 1, n - 1, 0.0)
        } else {
            (low, low + 1, v - low as f64)
        }
    };
    let (y0, y1, ly) = near(y, height);
    let (x0, x1, lx) = near(x, width);
    let (hy, hx) = (1.0 - ly, 1.0 - lx);
    Some([
        (y0 * width + x0, hy * hx),
        (y0 * width + x1, hy * lx),
        (y1 * width + x0, ly * hx),
        (y1 * width + x1, ly * lx),
    ])
}

fn roi_align(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (x, rois, batch) = (a.get(0)?, a.get(1)?, a.ints(2)?);
    let xs = x.shape().to_vec();
    let (oh, ow) = (r.int("output_height"), r.int("output_width"));
    let (oh, ow) = match (usize::try_from(oh), usize::try_from(ow)) {
        (Ok(h), Ok(w)) if h > 0 && w > 0 => (h, w),
        _ => return Err(format!("`onnx.RoiAlign`: output size {oh}×{ow}")),
    };
    if xs.len() != 4 || rois.shape() != [batch.len(), 4] || xs[2] == 0 || xs[3] == 0 {
        return Err(format!(
            "`onnx.RoiAlign` of a tensor of shape {xs:?}, regions of shape {:?} and {} indices",
            rois.shape(),
            batch.len()
        ));
    }
    let (channels, height, width) = (xs[1], xs[2], xs[3]);
    let half_pixel = match r.str("coordinate_transformation_mode").as_str() {
        "half_pixel" => true,
        "output_half_pixel" => false,
        m => {
            return Err(format!(
                "`onnx.RoiAlign`: coordinate_transformation_mode {m:?}"
            ));
        }
    };
    let max = match r.str("mode").as_str() {
        "avg" => false,
        "max" => true,
        m => return Err(format!("`onnx.RoiAlign`: mode {m:?} (avg or max)")),
    };
    let (scale, ratio) = (r.float("spatial_scale"), r.int("sampling_ratio"));
    let (v, boxes) = (x.values(), rois.values());
    let plane = height * width;
    let mut out = Vec::with_capacity(batch.len() * channels * oh * ow);
    for (n, &image) in batch.iter().enumerate() {
        let image = usize::try_from(image)
            .ok()
            .filter(|&i| i < xs[0])
            .ok_or_else(|| format!("`onnx.RoiAlign`: batch index {image} of {}", xs[0]))?;
        let offset = if half_pixel { 0.5 } else { 0.0 };
        let [x1, y1, x2, y2] = [0, 1, 2, 3].map(|k| boxes[n * 4 + k] * scale - offset);
        let (mut rw, mut rh) = (x2 - x1, y2 - y1);
        if !half_pixel {
            rw = rw.max(1.0);
            rh = rh.max(1.0);
        }
        let (bh, bw) = (rh / oh as f64, rw / ow as f64);
        let grid = |extent: f64, bins: usize| {
            if ratio > 0 {
                ratio as usize
            } else {
                (extent / bins as f64).ceil().max(0.0) as usize
            }
        };
        let (gh, gw) = (grid(rh, oh), grid(rw, ow));
        let count = (gh * gw).max(1) as f64;
        // The samples of each output bin, the same for every channel.
        let samples: Vec<Vec<Option<Sample>>> = (0..oh * ow)
            .map(|bin| {
                let (ph, pw) = (bin / ow, bin % ow);
                (0..gh * gw)
                    .map(|k| {
                        let (iy, ix) = (k / gw, k % gw);
                        let y = y1 + ph as f64 * bh + (iy as f64 + 0.5) * bh / gh as f64;
                        let x = x1 + pw as f64 * bw + (ix as f64 + 0.5) * bw / gw as f64;
                        bilinear(y, x, height, width)
                    })
                    .collect()
            })
            .collect();
        for c in 0..channels {
            let data = &v[(image * channels + c) * plane..][..plane];
            for bin in &samples {
                // ONNX Runtime's max mode takes the largest weighted corner of each sample.
                let values = bin.iter().map(|s| match s {
                    Some(s) if max => s
                        .iter()
                        .map(|&(p, w)| w * data[p])
                        .fold(f64::NEG_INFINITY, f64::max),
                    Some(s) => s.iter().map(|&(p, w)| w * data[p]).sum(),
                    None => 0.0,
                });
                out.push(if max {
                    values
                        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
                        .unwrap_or(0.0)
                } else {
                    values.sum::<f64>() / count
                });
            }
        }
    }
    Ok(vec![Tensor::from_vec(
        x.dtype(),
        &[batch.len(), channels, oh, ow],
        out,
    )?])
}
