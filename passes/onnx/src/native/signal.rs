//! Signal processing generators: the `HannWindow`, `HammingWindow` and `BlackmanWindow`
//! windows and the `MelWeightMatrix` filter bank.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{DType, Dim, Tensor, TensorType};
use ndarray::{Array2, ArrayD, IxDyn};

use super::{Args, attr, native};

/// A window generator's output: `size` (input 0) values of `f(k, denominator)`, the
/// denominator `size` (`periodic=1`) or `size - 1`.
fn window(
    a: &Args<'_, Tensor>,
    r: &AttrReader<'_>,
    f: fn(f64, f64) -> f64,
) -> Result<Vec<Tensor>, String> {
    let n = usize::try_from(a.int(0)?).map_err(|_| format!("`{}`: a negative size", a.op()))?;
    let denom = if r.int("periodic") != 0 {
        n as f64
    } else {
        n as f64 - 1.0
    };
    let v: Vec<f64> = (0..n).map(|k| f(k as f64, denom)).collect();
    let dtype = window_dtype(r)?;
    Ok(vec![Tensor::from_f64(
        dtype,
        ArrayD::from_shape_vec(IxDyn(&[n]), v).map_err(|e| e.to_string())?,
    )])
}

fn window_dtype(r: &AttrReader<'_>) -> Result<DType, String> {
    crate::tensor::dtype_of(r.int("output_datatype") as i32)
        .map_err(|e| format!("`{}`: {e}", r.op_name()))
}

fn window_type(a: &Args<'_, TensorType>, r: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    a.get(0)?;
    Ok(vec![TensorType {
        shape: vec![Dim::Any],
        dtype: window_dtype(r)?,
    }])
}

const WINDOW_ATTRS: [irpass_ir::op::AttrSpec; 2] = [
    attr("output_datatype", AttrKind::Int, AttrDefault::Int(1)),
    attr("periodic", AttrKind::Int, AttrDefault::Int(1)),
];

const TAU: f64 = std::f64::consts::TAU;

native! {
    /// A Hann window of input 0's size: 0.5 - 0.5·cos(2πk/N).
    "HannWindow" {
        versions: &[17],
        attrs: [WINDOW_ATTRS[0], WINDOW_ATTRS[1]],
        pattern: Opaque,
        rel: window_type,
        kernel: |a, r| window(a, r, |k, n| 0.5 - 0.5 * (TAU * k / n).cos()),
    }
}

native! {
    /// A Hamming window of input 0's size: 25/46 - 21/46·cos(2πk/N).
    "HammingWindow" {
        versions: &[17],
        attrs: [WINDOW_ATTRS[0], WINDOW_ATTRS[1]],
        pattern: Opaque,
        rel: window_type,
        kernel: |a, r| window(a, r, |k, n| 25.0 / 46.0 - 21.0 / 46.0 * (TAU * k / n).cos()),
    }
}

native! {
    /// A Blackman window of input 0's size: 0.42 - 0.5·cos(2πk/N) + 0.08·cos(4πk/N).
    "BlackmanWindow" {
        versions: &[17],
        attrs: [WINDOW_ATTRS[0], WINDOW_ATTRS[1]],
        pattern: Opaque,
        rel: window_type,
        kernel: |a, r| window(a, r, |k, n| 0.42 - 0.5 * (TAU * k / n).cos() + 0.08 * (2.0 * TAU * k / n).cos()),
    }
}

native! {
    /// The matrix (`dft_length`/2 + 1 spectrogram bins × `num_mel_bins`) of triangular
    /// filters, evenly spaced on the mel scale between the lower and upper edge frequencies
    /// (inputs 3 and 4, in hertz, at sample rate input 2), that maps a linear-frequency
    /// spectrum to mel bins; of `output_datatype`.
    "MelWeightMatrix" {
        versions: &[17],
        attrs: [WINDOW_ATTRS[0]],
        pattern: Opaque,
        rel: |a, r| {
            for i in 0..5 {
                a.get(i)?;
            }
            a.value_shaped(0, window_dtype(r)?, Some(2)).map(|t| vec![t])
        },
        kernel: mel_weight_matrix,
    }
}

fn mel_weight_matrix(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let size = |i: usize, what: &str| {
        usize::try_from(a.int(i)?).map_err(|_| format!("`onnx.MelWeightMatrix`: a negative {what}"))
    };
    let (mels, dft) = (size(0, "number of mel bins")?, size(1, "DFT length")?);
    let rate = a.int(2)? as f64;
    let edge = |i: usize| -> Result<f64, String> {
        match a.get(i)?.values().as_slice() {
            [v] => Ok(*v),
            _ => Err(format!("`onnx.MelWeightMatrix`: input {i} is not a scalar")),
        }
    };
    let (lower, upper) = (edge(3)?, edge(4)?);
    if rate <= 0.0 {
        return Err(format!("`onnx.MelWeightMatrix`: sample rate {rate}"));
    }
    let spectrogram = dft / 2 + 1;
    let to_mel = |hz: f64| 2595.0 * (hz / 700.0).ln_1p() / std::f64::consts::LN_10;
    let (low, high) = (to_mel(lower), to_mel(upper));
    let step = (high - low) / (mels + 2) as f64;
    // Each filter's left edge, centre and right edge, as spectrogram bins.
    let bins: Vec<usize> = (0..mels + 2)
        .map(|k| {
            let hz = 700.0 * ((k as f64 * step + low) / 2595.0 * std::f64::consts::LN_10).exp_m1();
            (((dft + 1) as f64 * hz) / rate).floor().max(0.0) as usize
        })
        .collect();
    let mut out = Array2::<f64>::zeros((spectrogram, mels));
    let mut put = |j: usize, i: usize, v: f64| -> Result<(), String> {
        let cell = out.get_mut((j, i)).ok_or_else(|| {
            format!("`onnx.MelWeightMatrix`: bin {j} past the {spectrogram} spectrogram bins")
        })?;
        *cell = v;
        Ok(())
    };
    for i in 0..mels {
        let (left, centre, right) = (bins[i], bins[i + 1], bins[i + 2]);
        if centre == left {
            put(centre, i, 1.0)?;
        } else {
            for j in left..=centre {
                put(j, i, (j - left) as f64 / (centre - left) as f64)?;
            }
        }
        for j in centre..right {
            put(j, i, (right - j) as f64 / (right - centre) as f64)?;
        }
    }
    Ok(vec![Tensor::from_f64(window_dtype(r)?, out.into_dyn())])
}
