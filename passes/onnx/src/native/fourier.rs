//! The discrete Fourier transforms: `DFT` (versions 17 and 20) and `STFT`. A complex signal is
//! a tensor whose last axis holds (real, imaginary), a real one a last axis of 1. The sums are
//! direct, in float64 (O(n²) a lane: the reference, not a fast transform).

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader, axis};
use irpass_ir::{Dim, Tensor, TensorType};
use ndarray::{ArrayD, IxDyn};

use super::{Args, attr, native};

native! {
    /// ONNX `DFT`: the discrete Fourier transform (or its inverse, `inverse`) of each signal
    /// along an axis (version 17: the `axis` attribute; 20: input 2, default -2), of the
    /// length input 1 gives (the signal cut or padded with zeros) or the signal's own; only
    /// the first half and one of the frequencies where `onesided` (a one-sided spectrum's real
    /// inverse where also `inverse`).
    "DFT" {
        versions: &[17, 20],
        attrs: [
            attr("axis", AttrKind::Int, AttrDefault::Int(1)),
            attr("inverse", AttrKind::Int, AttrDefault::Int(0)),
            attr("onesided", AttrKind::Int, AttrDefault::Int(0)),
        ],
        pattern: Opaque,
        rel: dft_rel,
        kernel: dft,
    }
}

native! {
    /// ONNX `STFT`: the short-time Fourier transform of signals (batch, length, 1 or 2):
    /// frames of `frame_length` (input 3, else the window's length) every `frame_step`
    /// (input 1) values, each weighted by the window (input 2) and transformed; the first
    /// half and one of the frequencies where `onesided` (the default).
    "STFT" {
        versions: &[17],
        attrs: [attr("onesided", AttrKind::Int, AttrDefault::Int(1))],
        pattern: Opaque,
        rel: stft_rel,
        kernel: stft,
    }
}

/// How a `DFT` call transforms: its axis, length (`None`: the signal's), direction and sides.
struct Transform {
    axis: usize,
    length: Option<usize>,
    inverse: bool,
    onesided: bool,
}

impl Transform {
    /// The transform of a call on a signal of rank `rank`; `axis_input` and `length_input`
    /// are inputs 2 and 1 where given.
    fn of(
        r: &AttrReader<'_>,
        rank: usize,
        axis_input: Option<i64>,
        length_input: Option<i64>,
    ) -> Result<Transform, String> {
        if rank < 2 {
            return Err(format!("`onnx.DFT` of a tensor of rank {rank}"));
        }
        let given = match r.int("version") {
            17 => r.int("axis"),
            _ => axis_input.unwrap_or(-2),
        };
        let a = axis("onnx.DFT", given, rank)?;
        if a == rank - 1 {
            return Err("`onnx.DFT` along the (real, imaginary) axis".into());
        }
        let length = length_input
            .map(|n| {
                usize::try_from(n)
                    .ok()
                    .filter(|&n| n > 0 && n < 1 << 24)
                    .ok_or_else(|| format!("`onnx.DFT`: a length {n}"))
            })
            .transpose()?;
        Ok(Transform {
            axis: a,
            length,
            inverse: r.int("inverse") != 0,
            onesided: r.int("onesided") != 0,
        })
    }

    /// The transform's length for a signal of `m` values along the axis.
    fn n(&self, m: usize) -> usize {
        match (self.length, self.inverse && self.onesided) {
            (Some(n), _) => n,
            (None, true) => 2 * m.saturating_sub(1),
            (None, false) => m,
        }
    }

    /// The output's size along the axis and along the last one, for a transform of `n`.
    fn out(&self, n: usize) -> (usize, usize) {
        match (self.inverse, self.onesided) {
            (false, true) => (n / 2 + 1, 2),
            (true, true) => (n, 1),
            _ => (n, 2),
        }
    }
}

/// A scalar input's integer, where given (a type relation sees none).
fn int_input(a: &Args<'_, Tensor>, i: usize) -> Result<Option<i64>, String> {
    a.opt(i).map(|_| a.int(i)).transpose()
}

fn dft_rel(a: &Args<'_, TensorType>, r: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    let x = a.float(0)?;
    let t = Transform::of(r, x.rank(), None, None)?;
    // (Version 20's axis is an input: its value, and so the output's shape, is known only
    // where the model declares it; the default axis stands otherwise.)
    if r.int("version") != 17 && a.opt(2).is_some() {
        return Ok(vec![a.value_shaped(0, x.dtype, Some(x.rank()))?]);
    }
    let mut shape = x.shape.clone();
    let (along, last) = match (a.opt(1), x.shape[t.axis].value()) {
        (None, Some(m)) => {
            let (along, last) = t.out(t.n(m as usize));
            (Dim::Static(along as i64), last)
        }
        _ => (Dim::Any, t.out(2).1),
    };
    shape[t.axis] = along;
    shape[x.rank() - 1] = Dim::Static(last as i64);
    Ok(vec![TensorType {
        shape,
        dtype: x.dtype,
    }])
}

/// The transform of one lane (`values`: (real, imaginary) pairs, or reals where `complex`
/// is false) of a transform of length `n`: its output values.
fn lane(t: &Transform, values: &[f64], complex: bool, n: usize) -> Vec<f64> {
    let m = if complex {
        values.len() / 2
    } else {
        values.len()
    };
    let at = |k: usize| -> (f64, f64) {
        match (k < m, complex) {
            (false, _) => (0.0, 0.0),
            (true, true) => (values[2 * k], values[2 * k + 1]),
            (true, false) => (values[k], 0.0),
        }
    };
    let tau = std::f64::consts::TAU;
    if t.inverse && t.onesided {
        // A one-sided spectrum's real signal: the spectrum completed by symmetry.
        let half = n / 2 + 1;
        let full = |k: usize| -> (f64, f64) {
            if k < half {
                at(k)
            } else {
                let (re, im) = at(n - k);
                (re, -im)
            }
        };
        return (0..n)
            .map(|j| {
                let sum: f64 = (0..n)
                    .map(|k| {
                        let (re, im) = full(k);
                        let w = tau * (k * j % n) as f64 / n as f64;
                        re * w.cos() - im * w.sin()
                    })
                    .sum();
                sum / n as f64
            })
            .collect();
    }
    let sign = if t.inverse { 1.0 } else { -1.0 };
    let bins = t.out(n).0;
    let mut out = Vec::with_capacity(2 * bins);
    for k in 0..bins {
        let (mut re, mut im) = (0.0, 0.0);
        for j in 0..m.min(n) {
            let (xr, xi) = at(j);
            let w = sign * tau * (k * j % n) as f64 / n as f64;
            re += xr * w.cos() - xi * w.sin();
            im += xr * w.sin() + xi * w.cos();
        }
        if t.inverse {
            (re, im) = (re / n as f64, im / n as f64);
        }
        out.extend([re, im]);
    }
    out
}

/// Applies `f` to each lane of `x` along `axis` (whose last axis is the values' pairs): the
/// results, of `len` values each, in `x`'s shape with `axis` and the last axis of the
/// results' sizes.
fn by_lanes(
    x: &ArrayD<f64>,
    axis: usize,
    along: usize,
    last: usize,
    f: impl Fn(&[f64]) -> Vec<f64>,
) -> Result<ArrayD<f64>, String> {
    let rank = x.ndim();
    // The axis moved next to the last: (others..., axis, last).
    let mut order: Vec<usize> = (0..rank - 1).filter(|&d| d != axis).collect();
    order.extend([axis, rank - 1]);
    let moved = x.view().permuted_axes(IxDyn(&order));
    let moved = moved.as_standard_layout();
    let lane_len = x.shape()[axis] * x.shape()[rank - 1];
    let values = moved.as_slice().ok_or("a lane layout")?;
    let mut out = Vec::new();
    for chunk in values.chunks(lane_len.max(1)) {
        out.extend(f(chunk));
    }
    let mut shape: Vec<usize> = order[..rank - 2].iter().map(|&d| x.shape()[d]).collect();
    shape.extend([along, last]);
    let result = ArrayD::from_shape_vec(IxDyn(&shape), out).map_err(|e| e.to_string())?;
    // Back in place: the inverse of `order`.
    let mut back = vec![0; rank];
    for (i, &d) in order.iter().enumerate() {
        back[d] = i;
    }
    Ok(result
        .permuted_axes(IxDyn(&back))
        .as_standard_layout()
        .into_owned())
}

fn dft(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let data = x.to_f64();
    let rank = data.ndim();
    let t = Transform::of(r, rank, int_input(a, 2)?, int_input(a, 1)?)?;
    let complex = match data.shape()[rank - 1] {
        1 => false,
        2 => true,
        c => return Err(format!("`onnx.DFT`: a last axis of {c} (1 or 2)")),
    };
    let n = t.n(data.shape()[t.axis]);
    if n == 0 {
        return Err("`onnx.DFT` of a transform of length 0".into());
    }
    let (along, last) = t.out(n);
    let out = by_lanes(&data, t.axis, along, last, |v| lane(&t, v, complex, n))?;
    Ok(vec![Tensor::from_f64(x.dtype(), out)])
}

fn stft_rel(a: &Args<'_, TensorType>, _: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    let x = a.float(0)?;
    if x.rank() != 3 {
        return Err(format!(
            "`onnx.STFT` of {x}: (batch, length, 1 or 2) is expected"
        ));
    }
    let mut t = a.value_shaped(0, x.dtype, Some(4))?;
    t.shape[0] = x.shape[0];
    t.shape[3] = Dim::Static(2);
    Ok(vec![t])
}

fn stft(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let [batch, len, c] = *x.shape() else {
        return Err("`onnx.STFT` of a tensor that is not (batch, length, 1 or 2)".into());
    };
    let step = usize::try_from(a.int(1)?)
        .ok()
        .filter(|&s| s > 0)
        .ok_or("`onnx.STFT`: a step below 1")?;
    let window: Option<Vec<f64>> = a.opt(2).map(Tensor::values);
    let frame = match (int_input(a, 3)?, &window) {
        (Some(f), _) => {
            usize::try_from(f).map_err(|_| format!("`onnx.STFT`: a frame length {f}"))?
        }
        (None, Some(w)) => w.len(),
        (None, None) => len,
    };
    if frame == 0 || frame > len || window.as_ref().is_some_and(|w| w.len() != frame) {
        return Err(format!(
            "`onnx.STFT`: frames of {frame} in signals of {len}"
        ));
    }
    let frames = 1 + (len - frame) / step;
    let t = Transform {
        axis: 0,
        length: Some(frame),
        inverse: false,
        onesided: r.int("onesided") != 0,
    };
    let bins = t.out(frame).0;
    let data = x.to_f64();
    let values = data.as_standard_layout();
    let values = values.as_slice().ok_or("a signal layout")?;
    let mut out = Vec::with_capacity(batch * frames * bins * 2);
    for b in 0..batch {
        for f in 0..frames {
            let start = (b * len + f * step) * c;
            let mut weighted = values[start..start + frame * c].to_vec();
            if let Some(w) = &window {
                for (i, v) in weighted.iter_mut().enumerate() {
                    *v *= w[i / c];
                }
            }
            out.extend(lane(&t, &weighted, c == 2, frame));
        }
    }
    let shape = [batch, frames, bins, 2];
    let out = ArrayD::from_shape_vec(IxDyn(&shape), out).map_err(|e| e.to_string())?;
    Ok(vec![Tensor::from_f64(x.dtype(), out)])
}

#[cfg(test)]
mod tests {
    use super::{Transform, lane};

    #[test]
    fn a_transform_and_its_inverse_give_the_signal_back() {
        let forward = Transform {
            axis: 0,
            length: None,
            inverse: false,
            onesided: false,
        };
        let back = Transform {
            inverse: true,
            ..forward
        };
        let signal = [1.0, 0.0, 2.0, 0.0, -1.0, 0.0, 0.5, 0.0];
        let spectrum = lane(&forward, &signal, true, 4);
        // The sum of the signal at frequency 0.
        assert!((spectrum[0] - 2.5).abs() < 1e-12 && spectrum[1].abs() < 1e-12);
        let again = lane(&back, &spectrum, true, 4);
        for (a, b) in again.iter().zip(signal) {
            assert!((a - b).abs() < 1e-12, "{again:?}");
        }
        // A one-sided spectrum's real inverse gives the real signal too.
        let half = Transform {
            onesided: true,
            ..forward
        };
        let reals = [1.0, 2.0, -1.0, 0.5];
        let spectrum = lane(&half, &reals, false, 4);
        assert_eq!(spectrum.len(), 6);
        let real_back = Transform {
            inverse: true,
            onesided: true,
            ..forward
        };
        let again = lane(&real_back, &spectrum, true, 4);
        for (a, b) in again.iter().zip(reals) {
            assert!((a - b).abs() < 1e-12, "{again:?}");
        }
    }
}
