//! `Resize` (versions 11, 13 and 18): nearest, linear and cubic interpolation over any axes,
//! every coordinate transformation, antialiasing, `keep_aspect_ratio_policy` — separable, one
//! axis after the other, as ONNX's reference computes it; and `Upsample`, its predecessor.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader, axis};
use irpass_ir::{Dim, Tensor, TensorType};
use ndarray::{ArrayD, Axis, IxDyn};

use super::{Args, attr, native};

native! {
    /// Input 0 resized to input 3's sizes or by input 2's scales (along `axes`): `mode`
    /// nearest (by `nearest_mode`), linear or cubic (`cubic_coeff_a`, `exclude_outside`),
    /// output coordinates mapped by `coordinate_transformation_mode` (a region of interest,
    /// input 1, for `tf_crop_and_resize`, outside which `extrapolation_value` is written).
    "Resize" {
        versions: &[11, 13, 18],
        attrs: [
            attr("antialias", AttrKind::Int, AttrDefault::Int(0)),
            attr("axes", AttrKind::Ints, AttrDefault::Ints(&[])),
            attr("coordinate_transformation_mode", AttrKind::Str, AttrDefault::Str("half_pixel")),
            attr("cubic_coeff_a", AttrKind::Float, AttrDefault::Float(-0.75)),
            attr("exclude_outside", AttrKind::Int, AttrDefault::Int(0)),
            attr("extrapolation_value", AttrKind::Float, AttrDefault::Float(0.0)),
            attr("keep_aspect_ratio_policy", AttrKind::Str, AttrDefault::Str("stretch")),
            attr("mode", AttrKind::Str, AttrDefault::Str("nearest")),
            attr("nearest_mode", AttrKind::Str, AttrDefault::Str("round_prefer_floor")),
        ],
        pattern: Injective,
        rel: |a, _| {
            let x = a.get(0)?;
            Ok(vec![TensorType { shape: vec![Dim::Any; x.rank()], dtype: x.dtype }])
        },
        kernel: resize,
    }
}

/// An interpolation's coefficients for a position `ratio` past its left neighbour, at
/// `scale`.
type Coeffs = Box<dyn Fn(f64, f64) -> Vec<f64>>;

/// How [`along`] interpolates.
struct Interp {
    coeffs: Coeffs,
    /// `coordinate_transformation_mode`.
    transform: String,
    /// `exclude_outside`.
    exclude: bool,
    /// `extrapolation_value`.
    extrapolation: f64,
}

impl Interp {
    /// A `Resize`'s interpolation, from its attributes.
    fn of_resize(r: &AttrReader<'_>) -> Result<Interp, String> {
        Ok(Interp {
            coeffs: coefficients(
                &r.str("mode"),
                r.str("nearest_mode"),
                r.int("antialias") != 0,
                r.float("cubic_coeff_a"),
            )?,
            transform: r.str("coordinate_transformation_mode"),
            exclude: r.int("exclude_outside") != 0,
            extrapolation: r.float("extrapolation_value"),
        })
    }
}

/// The coefficients of interpolation `mode` (`nearest` rounding by `nearest_mode`, `linear`
/// or `cubic` with parameter `a`; antialiased when downscaling with `antialias`).
fn coefficients(
    mode: &str,
    nearest_mode: String,
    antialias: bool,
    a: f64,
) -> Result<Coeffs, String> {
    Ok(match (mode, antialias) {
        ("nearest", false) => {
            let mode = nearest_mode;
            Box::new(move |ratio, _| {
                let right = if ratio == 1.0 {
                    true
                } else {
                    match mode.as_str() {
                        "round_prefer_ceil" => ratio >= 0.5,
                        "floor" => false,
                        "ceil" => true,
                        _ => ratio > 0.5,
                    }
                };
                vec![f64::from(u8::from(!right)), f64::from(u8::from(right))]
            })
        }
        ("linear", false) => Box::new(|ratio, _| vec![1.0 - ratio, ratio]),
        ("linear", true) => Box::new(|ratio, scale: f64| {
            let scale = scale.min(1.0);
            let start = (-1.0 / scale).floor() as i64 + 1;
            let c: Vec<f64> = (start..start + 2 - 2 * start)
                .map(|i| (1.0 - ((i as f64 - ratio) * scale).abs()).clamp(0.0, 1.0))
                .collect();
            let s: f64 = c.iter().sum();
            c.iter().map(|v| v / s).collect()
        }),
        ("cubic", false) => Box::new(move |t, _| {
            let (u, w) = (t + 1.0, 1.0 - t);
            vec![
                ((a * u - 5.0 * a) * u + 8.0 * a) * u - 4.0 * a,
                ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0,
                ((a + 2.0) * w - (a + 3.0)) * w * w + 1.0,
                ((a * (w + 1.0) - 5.0 * a) * (w + 1.0) + 8.0 * a) * (w + 1.0) - 4.0 * a,
            ]
        }),
        ("cubic", true) => Box::new(move |ratio, scale: f64| {
            let scale = scale.min(1.0);
            let k = |x: f64| {
                let x = x.abs();
                if x <= 1.0 {
                    (a + 2.0) * x * x * x - (a + 3.0) * x * x + 1.0
                } else if x < 2.0 {
                    a * x * x * x - 5.0 * a * x * x + 8.0 * a * x - 4.0 * a
                } else {
                    0.0
                }
            };
            let start = (-2.0 / scale).floor() as i64 + 1;
            let c: Vec<f64> = (start..2 - start)
                .map(|i| k(scale * (i as f64 - ratio)))
                .collect();
            let s: f64 = c.iter().sum();
            c.iter().map(|v| v / s).collect()
        }),
        (mode, _) => {
            return Err(format!(
                "`onnx.Resize`: mode={mode:?} (antialias {antialias})"
            ));
        }
    })
}

/// The source coordinate of output position `y` along an axis of `input` elements resized to
/// `out` (`width`: the unrounded output size), and whether it lies outside the input
/// (`tf_crop_and_resize` only).
fn source(
    mode: &str,
    y: f64,
    scale: f64,
    input: usize,
    width: f64,
    out: usize,
    roi: (f64, f64),
) -> (f64, bool) {
    let n = input as f64;
    let x = match mode {
        "align_corners" if width == 1.0 => 0.0,
        "align_corners" => y * (n - 1.0) / (width - 1.0),
        "asymmetric" => y / scale,
        "tf_crop_and_resize" => {
            let x = if width == 1.0 {
                (roi.1 - roi.0) * (n - 1.0) / 2.0
            } else {
                y * (roi.1 - roi.0) * (n - 1.0) / (width - 1.0)
            } + roi.0 * (n - 1.0);
            return (x, x < 0.0 || x > n - 1.0);
        }
        "pytorch_half_pixel" if width == 1.0 => -0.5,
        "half_pixel_symmetric" => {
            let offset = n / 2.0 * (1.0 - out as f64 / width);
            offset + (y + 0.5) / scale - 0.5
        }
        _ => (y + 0.5) / scale - 0.5,
    };
    (x, false)
}

/// `data` resized along `ax` to `out` elements at `scale`.
fn along(
    data: &ArrayD<f64>,
    ax: usize,
    scale: f64,
    out: usize,
    interp: &Interp,
    roi: (f64, f64),
) -> ArrayD<f64> {
    let input = data.shape()[ax];
    let (mode, coeffs) = (&interp.transform, &interp.coeffs);
    let (exclude, extrapolation) = (interp.exclude, interp.extrapolation);
    let width = scale * input as f64;
    let mut shape = data.shape().to_vec();
    shape[ax] = out;
    let mut result = ArrayD::<f64>::zeros(IxDyn(&shape));
    for y in 0..out {
        let (x, outside) = source(mode, y as f64, scale, input, width, out, roi);
        let floor = x.floor();
        let ratio = if x == floor { 1.0 } else { x - floor };
        let mut c = coeffs(ratio, scale);
        let taps = c.len() as i64;
        // The `taps` indices nearest to x, the smaller preferred.
        let pad = (taps + 1) / 2;
        let padded = x + pad as f64;
        let p = padded.floor() as i64;
        let frac = padded - p as f64;
        let offset = if taps % 2 == 0 {
            if frac == 0.0 {
                -(taps / 2)
            } else {
                -(taps / 2) + 1
            }
        } else if frac <= 0.5 {
            -((taps - 1) / 2)
        } else {
            -((taps - 1) / 2) + 1
        };
        let first = p + offset - pad;
        if exclude {
            for (k, w) in c.iter_mut().enumerate() {
                let i = first + k as i64;
                if i < 0 || i >= input as i64 {
                    *w = 0.0;
                }
            }
            let s: f64 = c.iter().sum();
            if s != 0.0 {
                c.iter_mut().for_each(|w| *w /= s);
            }
        }
        let mut lane = result.index_axis_mut(Axis(ax), y);
        if outside {
            lane.fill(extrapolation);
            continue;
        }
        for (k, w) in c.iter().enumerate() {
            if *w == 0.0 {
                continue;
            }
            let i = (first + k as i64).clamp(0, input as i64 - 1) as usize;
            lane.scaled_add(*w, &data.index_axis(Axis(ax), i));
        }
    }
    result
}

fn resize(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let shape = x.shape().to_vec();
    let rank = shape.len();
    let axes: Vec<usize> = match r.ints("axes") {
        v if v.is_empty() => (0..rank).collect(),
        v => v
            .into_iter()
            .map(|i| axis(a.op(), i, rank))
            .collect::<Result<_, _>>()?,
    };
    let given = |i: usize| a.opt(i).filter(|t| !t.is_empty());
    let mut scales = vec![1.0; rank];
    let mut sizes = shape.clone();
    if let Some(s) = given(3) {
        let v = s.values();
        for (k, &ax) in axes.iter().enumerate() {
            sizes[ax] = *v.get(k).ok_or("`onnx.Resize`: fewer sizes than axes")? as usize;
            scales[ax] = sizes[ax] as f64 / shape[ax] as f64;
        }
        let policy = r.str("keep_aspect_ratio_policy");
        if policy != "stretch" {
            let pick = axes.iter().map(|&i| scales[i]);
            let s = if policy == "not_larger" {
                pick.fold(f64::INFINITY, f64::min)
            } else {
                pick.fold(0.0, f64::max)
            };
            for &ax in &axes {
                scales[ax] = s;
                sizes[ax] = (s * shape[ax] as f64 + 0.5) as usize;
            }
        }
    } else if let Some(s) = given(2) {
        let v = s.values();
        for (k, &ax) in axes.iter().enumerate() {
            scales[ax] = *v.get(k).ok_or("`onnx.Resize`: fewer scales than axes")?;
            sizes[ax] = (scales[ax] * shape[ax] as f64) as usize;
        }
    } else {
        return Err("`onnx.Resize` needs scales or sizes".into());
    }
    let roi: Vec<f64> = given(1).map(Tensor::values).unwrap_or_default();
    let roi_of = |ax: usize| -> (f64, f64) {
        match axes.iter().position(|&a| a == ax) {
            Some(k) if roi.len() == 2 * axes.len() => (roi[k], roi[k + axes.len()]),
            _ if roi.len() == 2 * rank => (roi[ax], roi[ax + rank]),
            _ => (0.0, 1.0),
        }
    };
    let interp = Interp::of_resize(r)?;
    let mut data = x.to_f64();
    for &ax in &axes {
        let (lo, hi) = roi_of(ax);
        let unchanged = (scales[ax] - 1.0).abs() < 1e-9
            && sizes[ax] == data.shape()[ax]
            && (lo, hi) == (0.0, 1.0);
        if !unchanged {
            data = along(&data, ax, scales[ax], sizes[ax], &interp, (lo, hi));
        }
    }
    Ok(vec![rounded(x, data)])
}

/// `data` as a tensor of `x`'s dtype, integers rounded half to even and saturated.
fn rounded(x: &Tensor, mut data: ArrayD<f64>) -> Tensor {
    if let Some((lo, hi)) = x.dtype().int_range() {
        data.mapv_inplace(|v| v.round_ties_even().clamp(lo, hi));
    }
    Tensor::from_f64(x.dtype(), data)
}

native! {
    /// Input 0 scaled along each axis by `scales` (an attribute before version 9, input 1
    /// from it): each output size the floor of input size × scale, `mode` nearest (the
    /// nearest input below, above when downscaling) or linear, output coordinates mapped to
    /// input ones by dividing by the scale.
    "Upsample" {
        versions: &[7, 9],
        attrs: [
            attr("mode", AttrKind::Str, AttrDefault::Str("nearest")),
            attr("scales", AttrKind::Floats, AttrDefault::Floats(&[])),
        ],
        pattern: Injective,
        rel: |a, r| {
            let x = a.get(0)?;
            let scales = r.floats("scales");
            let shape = if a.count() < 2 && scales.len() == x.rank() {
                x.shape
                    .iter()
                    .zip(&scales)
                    .map(|(d, s)| match d {
                        Dim::Static(n) => Dim::Static((*n as f64 * s).floor() as i64),
                        _ => Dim::Any,
                    })
                    .collect()
            } else {
                vec![Dim::Any; x.rank()]
            };
            Ok(vec![TensorType { shape, dtype: x.dtype }])
        },
        kernel: upsample,
    }
}

fn upsample(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let scales = match a.opt(1) {
        Some(s) => s.values(),
        None => r.floats("scales"),
    };
    if scales.len() != x.shape().len() {
        return Err(format!(
            "`onnx.Upsample`: {} scales for a tensor of rank {}",
            scales.len(),
            x.shape().len()
        ));
    }
    let mode = r.str("mode");
    if !matches!(mode.as_str(), "nearest" | "linear") {
        return Err(format!(
            "`onnx.Upsample`: mode {mode:?} (nearest or linear)"
        ));
    }
    let mut data = x.to_f64();
    for (ax, &scale) in scales.iter().enumerate() {
        if scale.is_nan() || scale <= 0.0 {
            return Err(format!(
                "`onnx.Upsample`: scale {scale} (scales are positive)"
            ));
        }
        let out = (data.shape()[ax] as f64 * scale).floor() as usize;
        if scale == 1.0 {
            continue;
        }
        // ONNX Runtime's rounding for the operator: down when upscaling, up when downscaling.
        let nearest = if scale < 1.0 { "ceil" } else { "floor" };
        let interp = Interp {
            coeffs: coefficients(&mode, nearest.into(), false, 0.0)?,
            transform: "asymmetric".into(),
            exclude: false,
            extrapolation: 0.0,
        };
        data = along(&data, ax, scale, out, &interp, (0.0, 1.0));
    }
    Ok(vec![rounded(x, data)])
}
