//! Elementwise operators: trigonometric and hyperbolic functions, `Sign`, `Round`, `IsNaN`,
//! `IsInf`, the activations that are not IR operators (`Elu`, `Selu`, `Celu`, `Softplus`,
//! `Softsign`, `Mish`, `Gelu`, `Shrink`, `ThresholdedRelu`, `Swish`, `PRelu`) and the bitwise
//! operators.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader, broadcast_concrete, broadcast_shapes};
use irpass_ir::{DType, Tensor, TensorType};
use ndarray::{ArrayD, IxDyn, Zip};

use super::{Args, attr, native};

/// The type of input 0, a float tensor.
fn float_same(a: &Args<'_, TensorType>, _: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    Ok(vec![a.float(0)?.clone()])
}

/// The type of input 0, a number tensor (not bool).
fn number_same(a: &Args<'_, TensorType>, _: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    Ok(vec![
        a.of_dtype(0, |d| d != DType::Bool, "a number tensor")?
            .clone(),
    ])
}

/// A bool tensor of input 0's shape (a float).
fn float_test(a: &Args<'_, TensorType>, _: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    Ok(vec![TensorType {
        shape: a.float(0)?.shape.clone(),
        dtype: DType::Bool,
    }])
}

/// Inputs 0 and 1 broadcast (numpy's rules), of one dtype that `ok` accepts.
fn broadcast2(
    a: &Args<'_, TensorType>,
    ok: impl Fn(DType) -> bool,
    what: &str,
) -> Result<Vec<TensorType>, String> {
    let (x, y) = (a.of_dtype(0, &ok, what)?, a.of_dtype(1, &ok, what)?);
    if x.dtype != y.dtype {
        return Err(format!(
            "`{}` needs operands of one dtype, got {x} and {y}",
            a.op()
        ));
    }
    let shape = broadcast_shapes(&x.shape, &y.shape).map_err(|e| format!("`{}`: {e}", a.op()))?;
    Ok(vec![TensorType {
        shape,
        dtype: x.dtype,
    }])
}

fn float_broadcast(
    a: &Args<'_, TensorType>,
    _: &AttrReader<'_>,
) -> Result<Vec<TensorType>, String> {
    broadcast2(a, DType::is_float, "a float tensor")
}

fn int_broadcast(a: &Args<'_, TensorType>, _: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    broadcast2(a, DType::is_int, "an integer tensor")
}

fn int_same(a: &Args<'_, TensorType>, _: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    Ok(vec![
        a.of_dtype(0, DType::is_int, "an integer tensor")?.clone(),
    ])
}

/// `f` on each element of float input 0, the result of its dtype.
pub(super) fn map_float(
    a: &Args<'_, Tensor>,
    f: impl Fn(f64) -> f64,
) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    Ok(vec![Tensor::from_f64(x.dtype(), x.to_f64().mapv(f))])
}

/// `f` on the elements of inputs 0 and 1, broadcast, as integers.
fn zip_int(a: &Args<'_, Tensor>, f: impl Fn(i64, i64) -> i64) -> Result<Vec<Tensor>, String> {
    let (x, y) = (a.get(0)?, a.get(1)?);
    let out = zip(&x.to_i64(), &y.to_i64(), f)?;
    Ok(vec![Tensor::from_i64(x.dtype(), out)])
}

/// `f` elementwise on `x` and `y` broadcast together.
pub(super) fn zip<T: Copy, U>(
    x: &ArrayD<T>,
    y: &ArrayD<T>,
    f: impl Fn(T, T) -> U,
) -> Result<ArrayD<U>, String> {
    let shape = broadcast_concrete(x.shape(), y.shape())?;
    let (bx, by) = (
        x.broadcast(IxDyn(&shape))
            .ok_or("operands do not broadcast")?,
        y.broadcast(IxDyn(&shape))
            .ok_or("operands do not broadcast")?,
    );
    Ok(Zip::from(&bx).and(&by).map_collect(|&p, &q| f(p, q)))
}

macro_rules! unary {
    ($(#[doc = $doc:literal])* $name:literal, $versions:expr, $f:expr) => {
        native! {
            $(#[doc = $doc])*
            $name {
                versions: $versions,
                attrs: [],
                pattern: ElemWise,
                rel: float_same,
                kernel: |a, _| map_float(a, $f),
            }
        }
    };
}

unary!(
    #[doc = "Elementwise sine."]
    "Sin",
    &[7],
    f64::sin
);
unary!(
    #[doc = "Elementwise cosine."]
    "Cos",
    &[7],
    f64::cos
);
unary!(
    #[doc = "Elementwise tangent."]
    "Tan",
    &[7],
    f64::tan
);
unary!(
    #[doc = "Elementwise arcsine."]
    "Asin",
    &[7],
    f64::asin
);
unary!(
    #[doc = "Elementwise arccosine."]
    "Acos",
    &[7],
    f64::acos
);
unary!(
    #[doc = "Elementwise arctangent."]
    "Atan",
    &[7],
    f64::atan
);
unary!(
    #[doc = "Elementwise hyperbolic sine."]
    "Sinh",
    &[9],
    f64::sinh
);
unary!(
    #[doc = "Elementwise hyperbolic cosine."]
    "Cosh",
    &[9],
    f64::cosh
);
unary!(
    #[doc = "Elementwise inverse hyperbolic sine."]
    "Asinh",
    &[9],
    f64::asinh
);
unary!(
    #[doc = "Elementwise inverse hyperbolic cosine."]
    "Acosh",
    &[9],
    f64::acosh
);
unary!(
    #[doc = "Elementwise inverse hyperbolic tangent."]
    "Atanh",
    &[9],
    f64::atanh
);
unary!(
    #[doc = "Elementwise rounding to the nearest integer, halves to even (ONNX's `Round`)."]
    "Round",
    &[11],
    f64::round_ties_even
);
unary!(
    #[doc = "Elementwise ln(1 + e^x)."]
    "Softplus",
    &[1],
    |x: f64| { if x > 30.0 { x } else { x.exp().ln_1p() } }
);
unary!(
    #[doc = "Elementwise x / (1 + |x|)."]
    "Softsign",
    &[1],
    |x: f64| x / (1.0 + x.abs())
);
unary!(
    #[doc = "Elementwise x * tanh(softplus(x))."]
    "Mish",
    &[18],
    |x: f64| { x * (if x > 30.0 { x } else { x.exp().ln_1p() }).tanh() }
);

native! {
    /// Elementwise sign: -1, 0 or 1 (of numbers of any dtype).
    "Sign" {
        versions: &[9],
        attrs: [],
        pattern: ElemWise,
        rel: number_same,
        kernel: sign,
    }
}

fn sign(a: &Args<'_, Tensor>, _: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    if x.dtype().is_float() {
        return map_float(a, |v| {
            if v.is_nan() {
                v
            } else if v == 0.0 {
                0.0
            } else {
                v.signum()
            }
        });
    }
    Ok(vec![Tensor::from_i64(
        x.dtype(),
        x.to_i64().mapv(i64::signum),
    )])
}

native! {
    /// Elementwise whether an element is NaN (bool).
    "IsNaN" {
        versions: &[9],
        attrs: [],
        pattern: ElemWise,
        rel: float_test,
        kernel: |a, _| {
            Ok(vec![Tensor::from_bool(a.get(0)?.to_f64().mapv(f64::is_nan))])
        },
    }
}

native! {
    /// Elementwise whether an element is infinite (bool): `detect_positive` and
    /// `detect_negative` choose which infinities count.
    "IsInf" {
        versions: &[10],
        attrs: [
            attr("detect_negative", AttrKind::Int, AttrDefault::Int(1)),
            attr("detect_positive", AttrKind::Int, AttrDefault::Int(1)),
        ],
        pattern: ElemWise,
        rel: float_test,
        kernel: |a, r| {
            let (neg, pos) = (r.int("detect_negative") != 0, r.int("detect_positive") != 0);
            let test = move |v: f64| v.is_infinite() && (if v > 0.0 { pos } else { neg });
            Ok(vec![Tensor::from_bool(a.get(0)?.to_f64().mapv(test))])
        },
    }
}

native! {
    /// Elementwise x if x >= 0 else alpha * (e^x - 1).
    "Elu" {
        versions: &[6],
        attrs: [attr("alpha", AttrKind::Float, AttrDefault::Float(1.0))],
        pattern: ElemWise,
        rel: float_same,
        kernel: |a, r| {
            let alpha = r.float("alpha");
            map_float(a, |x| if x < 0.0 { alpha * x.exp_m1() } else { x })
        },
    }
}

native! {
    /// Elementwise gamma * (x if x > 0 else alpha * (e^x - 1)).
    "Selu" {
        versions: &[6],
        attrs: [
            attr("alpha", AttrKind::Float, AttrDefault::Float(1.673_263_192_176_818_8)),
            attr("gamma", AttrKind::Float, AttrDefault::Float(1.050_701_022_148_132_3)),
        ],
        pattern: ElemWise,
        rel: float_same,
        kernel: |a, r| {
            let (alpha, gamma) = (r.float("alpha"), r.float("gamma"));
            map_float(a, |x| gamma * if x > 0.0 { x } else { alpha * x.exp_m1() })
        },
    }
}

native! {
    /// Elementwise max(0, x) + min(0, alpha * (e^(x / alpha) - 1)).
    "Celu" {
        versions: &[12],
        attrs: [attr("alpha", AttrKind::Float, AttrDefault::Float(1.0))],
        pattern: ElemWise,
        rel: float_same,
        kernel: |a, r| {
            let alpha = r.float("alpha");
            map_float(a, |x| x.max(0.0) + (alpha * (x / alpha).exp_m1()).min(0.0))
        },
    }
}

native! {
    /// Elementwise x if x > alpha else 0.
    "ThresholdedRelu" {
        versions: &[10],
        attrs: [attr("alpha", AttrKind::Float, AttrDefault::Float(1.0))],
        pattern: ElemWise,
        rel: float_same,
        kernel: |a, r| {
            let alpha = r.float("alpha");
            map_float(a, |x| if x > alpha { x } else { 0.0 })
        },
    }
}

native! {
    /// Elementwise x - bias if x > lambd, x + bias if x < -lambd, else 0 (numbers of any
    /// dtype).
    "Shrink" {
        versions: &[9],
        attrs: [
            attr("bias", AttrKind::Float, AttrDefault::Float(0.0)),
            attr("lambd", AttrKind::Float, AttrDefault::Float(0.5)),
        ],
        pattern: ElemWise,
        rel: number_same,
        kernel: |a, r| {
            let (bias, lambd) = (r.float("bias"), r.float("lambd"));
            let x = a.get(0)?;
            let f = |v: f64| if v < -lambd { v + bias } else if v > lambd { v - bias } else { 0.0 };
            Ok(vec![Tensor::from_f64(x.dtype(), x.to_f64().mapv(f))])
        },
    }
}

native! {
    /// Elementwise x * sigmoid(alpha * x).
    "Swish" {
        versions: &[24],
        attrs: [attr("alpha", AttrKind::Float, AttrDefault::Float(1.0))],
        pattern: ElemWise,
        rel: float_same,
        kernel: |a, r| {
            let alpha = r.float("alpha");
            map_float(a, |x| x / (1.0 + (-alpha * x).exp()))
        },
    }
}

native! {
    /// Elementwise Gaussian error linear unit: x * Φ(x) (`approximate="none"`), or its tanh
    /// approximation (`"tanh"`).
    "Gelu" {
        versions: &[20],
        attrs: [attr("approximate", AttrKind::Str, AttrDefault::Str("none"))],
        pattern: ElemWise,
        rel: float_same,
        kernel: |a, r| match r.str("approximate").as_str() {
            "none" => map_float(a, |x| 0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2))),
            "tanh" => map_float(a, |x| {
                let c = (2.0 / std::f64::consts::PI).sqrt();
                0.5 * x * (1.0 + (c * (x + 0.044_715 * x * x * x)).tanh())
            }),
            other => Err(format!("`onnx.Gelu`: approximate={other:?} (none or tanh)")),
        },
    }
}

native! {
    /// Elementwise x if x >= 0 else slope * x, `slope` broadcast to `x` (input 1).
    "PRelu" {
        versions: &[6],
        attrs: [],
        pattern: Broadcast,
        rel: prelu_type,
        kernel: |a, _| {
            let (x, slope) = (a.get(0)?, a.get(1)?);
            let s = slope.to_f64();
            let s = match per_channel(x.shape(), slope.shape()) {
                Some(shape) => s.into_shape_with_order(IxDyn(&shape)).map_err(|e| e.to_string())?,
                None => s,
            };
            let out = zip(&x.to_f64(), &s, |v, k| if v < 0.0 { k * v } else { v })?;
            Ok(vec![Tensor::from_f64(x.dtype(), out)])
        },
    }
}

/// A slope of one value per channel (axis 1) that does not broadcast as numpy does (`PRelu`
/// before version 7 applied it per channel): its shape aligned with axis 1.
fn per_channel(x: &[usize], slope: &[usize]) -> Option<Vec<usize>> {
    let fits = broadcast_concrete(x, slope).is_ok_and(|s| s == x);
    match slope {
        &[c] if !fits && x.len() > 2 && x[1] == c => {
            let mut shape = vec![c];
            shape.extend(std::iter::repeat_n(1, x.len() - 2));
            Some(shape)
        }
        _ => None,
    }
}

/// `PRelu`'s slope broadcasts to `x` (one direction only; one per channel before version
/// 7): the result has `x`'s type.
fn prelu_type(a: &Args<'_, TensorType>, r: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    let (x, slope) = (a.float(0)?, a.float(1)?);
    if let (Some(xs), Some(ss)) = (x.static_shape(), slope.static_shape())
        && per_channel(&xs, &ss).is_some()
    {
        return Ok(vec![x.clone()]);
    }
    let out = float_broadcast(a, r)?;
    if out[0].shape != x.shape {
        return Err(format!(
            "`onnx.PRelu`: slope {slope} does not broadcast to {x}"
        ));
    }
    Ok(out)
}

native! {
    /// Elementwise bitwise not of integers.
    "BitwiseNot" {
        versions: &[18],
        attrs: [],
        pattern: ElemWise,
        rel: int_same,
        kernel: |a, _| {
            let x = a.get(0)?;
            Ok(vec![Tensor::from_i64(x.dtype(), x.to_i64().mapv(|v| !v))])
        },
    }
}

macro_rules! bitwise {
    ($(#[doc = $doc:literal])* $name:literal, $f:expr) => {
        native! {
            $(#[doc = $doc])*
            $name {
                versions: &[18],
                attrs: [],
                pattern: Broadcast,
                rel: int_broadcast,
                kernel: |a, _| zip_int(a, $f),
            }
        }
    };
}

bitwise!(
    #[doc = "Elementwise bitwise and of integers, broadcast."]
    "BitwiseAnd",
    |x, y| x & y
);
bitwise!(
    #[doc = "Elementwise bitwise or of integers, broadcast."]
    "BitwiseOr",
    |x, y| x | y
);
bitwise!(
    #[doc = "Elementwise bitwise exclusive or of integers, broadcast."]
    "BitwiseXor",
    |x, y| x ^ y
);

native! {
    /// Elementwise shift of unsigned integers by the second operand's bits, broadcast:
    /// `direction` is `"LEFT"` or `"RIGHT"`; bits shifted out of the dtype's width are lost.
    "BitShift" {
        versions: &[11],
        attrs: [attr("direction", AttrKind::Str, AttrDefault::Required)],
        pattern: Broadcast,
        rel: int_broadcast,
        kernel: bit_shift,
    }
}

fn bit_shift(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let bits = a.get(0)?.dtype().bits() as u32;
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let left = match r.str("direction").as_str() {
        "LEFT" => true,
        "RIGHT" => false,
        other => {
            return Err(format!(
                "`onnx.BitShift`: direction={other:?} (LEFT or RIGHT)"
            ));
        }
    };
    zip_int(a, move |x, n| {
        let (x, n) = ((x as u64) & mask, n as u64);
        let v = match (n >= u64::from(bits), left) {
            (true, _) => 0,
            (false, true) => (x << n) & mask,
            (false, false) => x >> n,
        };
        v as i64
    })
}

native! {
    /// Input 0 bounded below by input 1 and above by input 2 (scalars; either left out).
    "Clip" {
        versions: &[12],
        attrs: [],
        pattern: ElemWise,
        rel: number_same,
        kernel: |a, _| {
            let x = a.get(0)?;
            let bound = |i: usize| -> Result<Option<f64>, String> {
                match a.opt(i) {
                    None => Ok(None),
                    Some(t) if t.len() == 1 => Ok(Some(t.values()[0])),
                    Some(_) => Err(format!("`onnx.Clip`: input {i} is not a scalar")),
                }
            };
            let (lo, hi) = (bound(1)?, bound(2)?);
            if x.dtype().is_int() {
                let (lo, hi) = (lo.map_or(i64::MIN, |v| v as i64), hi.map_or(i64::MAX, |v| v as i64));
                return Ok(vec![Tensor::from_i64(x.dtype(), x.to_i64().mapv(|v| v.max(lo).min(hi)))]);
            }
            let (lo, hi) = (lo.unwrap_or(f64::NEG_INFINITY), hi.unwrap_or(f64::INFINITY));
            map_float(a, |v| if v.is_nan() { v } else { v.max(lo).min(hi) })
        },
    }
}

native! {
    /// ONNX `Dropout`: at inference (`training_mode`, input 2, false) the input unchanged
    /// and a mask of trues; in training each element kept with probability 1 - ratio (input
    /// 1, default 0.5) and scaled by 1 / (1 - ratio), the mask saying which were (a draw,
    /// repeatable with `seed`: the operator is stateful, never folded).
    "Dropout" {
        versions: &[12],
        attrs: [attr("seed", AttrKind::OptInt, AttrDefault::Null)],
        pattern: ElemWise,
        rel: |a, _| {
            let x = a.get(0)?;
            Ok(vec![x.clone(), TensorType { shape: x.shape.clone(), dtype: DType::Bool }])
        },
        kernel: dropout,
    }
}

inventory::submit! { irpass_ir::op::Stateful("onnx.Dropout") }

fn dropout(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let scalar = |i: usize| a.opt(i).and_then(|t| t.values().first().copied());
    let training = scalar(2).is_some_and(|v| v != 0.0);
    let ratio = scalar(1).unwrap_or(0.5);
    if !training || ratio == 0.0 {
        let mask = ArrayD::from_elem(IxDyn(x.shape()), true);
        return Ok(vec![x.clone(), Tensor::from_bool(mask)]);
    }
    if !(0.0..1.0).contains(&ratio) {
        return Err(format!("`onnx.Dropout`: a ratio {ratio} outside [0, 1)"));
    }
    let mut rng = match r.opt_int("seed") {
        Some(seed) => fastrand::Rng::with_seed(seed as u64),
        None => fastrand::Rng::new(),
    };
    let mask = ArrayD::from_shape_fn(IxDyn(x.shape()), |_| rng.f64() >= ratio);
    let scale = 1.0 / (1.0 - ratio);
    let kept = ndarray::Zip::from(&x.to_f64())
        .and(&mask)
        .map_collect(|&v, &keep| if keep { v * scale } else { 0.0 });
    Ok(vec![
        Tensor::from_f64(x.dtype(), kept),
        Tensor::from_bool(mask),
    ])
}
