//! `Cast` and `CastLike` as ONNX defines them from version 19 (`saturate` for the 8-bit
//! floats) and 24 (`round_mode` for float8e8m0): the IR's `cast` holds the saturating default,
//! these every form.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{DType, Tensor, TensorType};

use super::{Args, attr, native};

/// The bits of the significand of a small float dtype (the half-step above its largest
/// finite value is where a cast without saturation overflows).
fn mantissa_bits(d: DType) -> Option<i32> {
    Some(match d {
        DType::Float8E4M3FN | DType::Float8E4M3FNUZ => 3,
        DType::Float8E5M2 | DType::Float8E5M2FNUZ => 2,
        _ => return None,
    })
}

/// `v` cast to `to` as `Cast` with `saturate` and `round_mode` does.
pub(super) fn cast_value(v: f64, to: DType, saturate: bool, round_mode: &str) -> f64 {
    if to == DType::Float8E8M0 && v.is_finite() && v != 0.0 && round_mode != "up" {
        let e = v.abs().log2();
        let k = if round_mode == "down" {
            e.floor()
        } else {
            e.round()
        };
        return 2f64.powf(k.clamp(-127.0, 127.0));
    }
    match mantissa_bits(to) {
        Some(m) if !saturate => {
            let max = to.max_finite();
            let ulp = 2f64.powi(max.log2().floor() as i32 - m);
            if v.is_nan() {
                return v;
            }
            if v.abs() >= max + ulp / 2.0 {
                // The formats with infinities give one; the others NaN.
                return if to == DType::Float8E5M2 {
                    f64::INFINITY.copysign(v)
                } else {
                    f64::NAN
                };
            }
            to.round_float(v)
        }
        _ => to.cast_float(v),
    }
}

fn cast_tensor(x: &Tensor, to: DType, r: &AttrReader<'_>) -> Result<Tensor, String> {
    let round_mode = r.str("round_mode");
    if !matches!(round_mode.as_str(), "up" | "down" | "nearest") {
        return Err(format!("`{}`: round_mode={round_mode:?}", r.op_name()));
    }
    if !to.is_float() || !x.dtype().is_float() && !x.dtype().is_int() {
        return Ok(x.cast(to));
    }
    let saturate = r.int("saturate") != 0;
    Ok(Tensor::from_f64(
        to,
        x.to_f64()
            .mapv(|v| cast_value(v, to, saturate, &round_mode)),
    ))
}

fn target(r: &AttrReader<'_>) -> Result<DType, String> {
    crate::tensor::dtype_of(r.int("to") as i32).map_err(|e| format!("`onnx.Cast`: {e}"))
}

const CAST_ATTRS: [irpass_ir::op::AttrSpec; 2] = [
    attr("saturate", AttrKind::Int, AttrDefault::Int(1)),
    attr("round_mode", AttrKind::Str, AttrDefault::Str("up")),
];

native! {
    /// Input 0's values in the element type `to` (an ONNX element type code): floats to
    /// integers truncate, floats to the 8-bit floats round to nearest and saturate unless
    /// `saturate=0`, float8e8m0 rounds by `round_mode`.
    "Cast" {
        versions: &[19, 24],
        attrs: [attr("to", AttrKind::Int, AttrDefault::Required), CAST_ATTRS[0], CAST_ATTRS[1]],
        pattern: ElemWise,
        rel: |a, r| Ok(vec![TensorType { shape: a.get(0)?.shape.clone(), dtype: target(r)? }]),
        kernel: |a, r| Ok(vec![cast_tensor(a.get(0)?, target(r)?, r)?]),
    }
}

native! {
    /// Input 0's values in input 1's element type, as `Cast` converts them.
    "CastLike" {
        versions: &[19, 24],
        attrs: [CAST_ATTRS[0], CAST_ATTRS[1]],
        pattern: ElemWise,
        rel: |a: &Args<'_, TensorType>, _| {
            Ok(vec![TensorType { shape: a.get(0)?.shape.clone(), dtype: a.get(1)?.dtype }])
        },
        kernel: |a, r| Ok(vec![cast_tensor(a.get(0)?, a.get(1)?.dtype(), r)?]),
    }
}
