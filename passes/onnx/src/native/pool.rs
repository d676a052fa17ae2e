//! Pooling operators with no IR counterpart: `GlobalLpPool` and `MaxRoiPool`.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{Dim, Tensor, TensorType};

use super::{Args, attr, native};

native! {
    /// ONNX `GlobalLpPool`: the `p`-norm of each channel over all its spatial axes, (N, C,
    /// 1, ...).
    "GlobalLpPool" {
        versions: &[2],
        attrs: [attr("p", AttrKind::Int, AttrDefault::Int(2))],
        pattern: OutEWiseFusable,
        rel: |a, _| {
            let x = a.float(0)?;
            if x.rank() < 3 {
                return Err(format!("`onnx.GlobalLpPool` of {x}: (N, C, ...) is expected"));
            }
            let mut shape = x.shape.clone();
            shape[2..].fill(Dim::Static(1));
            Ok(vec![TensorType { shape, dtype: x.dtype }])
        },
        kernel: global_lp_pool,
    }
}

fn global_lp_pool(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let p = r.int("p") as f64;
    if p <= 0.0 {
        return Err(format!("`onnx.GlobalLpPool`: p = {p}"));
    }
    let shape = x.shape();
    let per: usize = shape[2..].iter().product();
    let values = x.values();
    let norms: Vec<f64> = values
        .chunks(per.max(1))
        .take(shape[0] * shape[1])
        .map(|c| c.iter().map(|v| v.abs().powf(p)).sum::<f64>().powf(1.0 / p))
        .collect();
    let mut out = shape.to_vec();
    out[2..].fill(1);
    Ok(vec![Tensor::from_vec(x.dtype(), &out, norms)?])
}

native! {
    /// ONNX `MaxRoiPool`: for each region of interest (input 1: rows of batch index, x1, y1,
    /// x2, y2, scaled by `spatial_scale` and rounded), the maximum of each of
    /// `pooled_shape`'s bins of the (N, C, H, W) input (0 for an empty bin).
    "MaxRoiPool" {
        versions: &[1],
        attrs: [
            attr("pooled_shape", AttrKind::Ints, AttrDefault::Required),
            attr("spatial_scale", AttrKind::Float, AttrDefault::Float(1.0)),
        ],
        pattern: Opaque,
        rel: |a, r| {
            let (x, rois) = (a.float(0)?, a.float(1)?);
            let pooled = pooled(r)?;
            let five = rois.rank() == 2 && rois.shape[1].value().is_none_or(|v| v == 5);
            if x.rank() != 4 || !five {
                return Err(format!("`onnx.MaxRoiPool` of {x} by regions {rois}"));
            }
            let shape = vec![
                rois.shape[0],
                x.shape[1],
                Dim::Static(pooled[0] as i64),
                Dim::Static(pooled[1] as i64),
            ];
            Ok(vec![TensorType { shape, dtype: x.dtype }])
        },
        kernel: max_roi_pool,
    }
}

/// The bins along the height and the width.
fn pooled(r: &AttrReader<'_>) -> Result<[usize; 2], String> {
    match r.shape("pooled_shape")?[..] {
        [h, w] if h > 0 && w > 0 && h < 1 << 16 && w < 1 << 16 => Ok([h, w]),
        ref other => Err(format!("`onnx.MaxRoiPool`: pooled_shape {other:?}")),
    }
}

fn max_roi_pool(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let (x, rois) = (a.get(0)?, a.get(1)?);
    let [ph, pw] = pooled(r)?;
    let (&[n, c, h, w], &[k, 5]) = (x.shape(), rois.shape()) else {
        return Err("`onnx.MaxRoiPool`: an input of another shape than its type's".into());
    };
    let scale = r.float("spatial_scale") as f32;
    let (xv, rv) = (x.values(), rois.values());
    let mut out = Vec::with_capacity(k * c * ph * pw);
    for roi in rv.chunks(5) {
        let batch = usize::try_from(roi[0] as i64)
            .ok()
            .filter(|&b| b < n)
            .ok_or_else(|| format!("`onnx.MaxRoiPool`: batch index {} of {n}", roi[0]))?;
        // (As ONNX Runtime: the corners scaled and rounded in float32.)
        let at = |v: f64| (v as f32 * scale).round() as i64;
        let (x1, y1, x2, y2) = (at(roi[1]), at(roi[2]), at(roi[3]), at(roi[4]));
        let (rh, rw) = ((y2 - y1 + 1).max(1), (x2 - x1 + 1).max(1));
        let (bh, bw) = (rh as f32 / ph as f32, rw as f32 / pw as f32);
        let span = |i: usize, bin: f32, start: i64, limit: usize| -> (usize, usize) {
            let lo = ((i as f32 * bin).floor() as i64 + start).clamp(0, limit as i64);
            let hi = (((i + 1) as f32 * bin).ceil() as i64 + start).clamp(0, limit as i64);
            (lo as usize, hi as usize)
        };
        for ch in 0..c {
            let plane = &xv[(batch * c + ch) * h * w..][..h * w];
            for i in 0..ph {
                let (h0, h1) = span(i, bh, y1, h);
                for j in 0..pw {
                    let (w0, w1) = span(j, bw, x1, w);
                    let bin = (h0..h1).flat_map(|y| plane[y * w + w0..y * w + w1].iter().copied());
                    let max = bin.fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
                    out.push(max.unwrap_or(0.0));
                }
            }
        }
    }
    Ok(vec![Tensor::from_vec(x.dtype(), &[k, c, ph, pw], out)?])
}
