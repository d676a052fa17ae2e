//! Elementwise and broadcasting operators: arithmetic, math, comparisons, `where`, `clip`,
//! activations, and `zeros`/`ones`.

use ndarray::{ArrayD, IxDyn, Zip};

use super::util::*;
use super::{Arity, AttrDefault, AttrKind, AttrReader, AttrSpec, OpDef, OpPattern};
use crate::{DType, Dim, Tensor, TensorData, TensorType, Type, Value};

fn binary_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let op = r.op_name();
    let (a, b) = (tensor_ty(op, args, 0)?, tensor_ty(op, args, 1)?);
    if a.dtype != b.dtype {
        return Err(format!(
            "`{op}` needs operands of one dtype, got `{}` and `{}`",
            a.dtype, b.dtype
        ));
    }
    if a.shape == b.shape {
        return Ok(Type::Tensor(a.clone()));
    }
    let shape = broadcast_shapes(&a.shape, &b.shape).map_err(|e| format!("`{op}`: {e}"))?;
    // The result usually has an operand's type: share it.
    for t in [a, b] {
        if t.shape == shape {
            return Ok(Type::Tensor(t.clone()));
        }
    }
    Ok(Type::from(TensorType {
        shape,
        dtype: a.dtype,
    }))
}

fn compare_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    match binary_rel(args, r)? {
        Type::Tensor(t) => Ok(Type::from(TensorType {
            shape: t.shape.clone(),
            dtype: DType::Bool,
        })),
        other => Ok(other),
    }
}

fn arith(
    args: &[Value],
    r: &AttrReader<'_>,
    ff: impl Fn(f64, f64) -> f64,
    fi: impl Fn(i64, i64) -> Result<i64, String>,
) -> Result<Value, String> {
    let op = r.op_name();
    let (a, b) = (tensor_arg(op, args, 0)?, tensor_arg(op, args, 1)?);
    let dt = a.dtype();
    let kept_f32 =
        |t: &Tensor| matches!(t.data(), TensorData::Float32(_) | TensorData::Float32Le(_));
    let out = if dt == DType::Float32 && (kept_f32(a) || kept_f32(b)) {
        zip_f32(a, b, ff)?
    } else if dt.is_float() {
        Tensor::from_f64(dt, zip_floats(a, b, ff)?)
    } else {
        Tensor::from_i64(
            dt,
            zip_i64(&a.to_i64(), &b.to_i64(), fi).map_err(|e| format!("`{op}`: {e}"))?,
        )
    };
    Ok(Value::tensor(out))
}

fn compare(
    args: &[Value],
    r: &AttrReader<'_>,
    f: impl Fn(f64, f64) -> bool,
    fi: impl Fn(i64, i64) -> bool,
) -> Result<Value, String> {
    let op = r.op_name();
    let (a, b) = (tensor_arg(op, args, 0)?, tensor_arg(op, args, 1)?);
    let out = if a.dtype().is_float() {
        zip_floats(a, b, |x, y| f64::from(u8::from(f(x, y))))?
    } else {
        zip_i64(&a.to_i64(), &b.to_i64(), |x, y| Ok(i64::from(fi(x, y))))?.mapv(|v| v as f64)
    };
    Ok(Value::tensor(Tensor::from_f64(DType::Bool, out)))
}

/// `f` elementwise on two float tensors, broadcast. Operands of one shape, or one of them a
/// single element, are read in place (the common case when folding constants); the others go
/// through [`zip_f64`].
fn zip_floats(a: &Tensor, b: &Tensor, f: impl Fn(f64, f64) -> f64) -> Result<ArrayD<f64>, String> {
    let (sa, sb) = (a.shape(), b.shape());
    let (va, vb) = (a.float_values(), b.float_values());
    let out: Option<(Vec<usize>, Vec<f64>)> = if sa == sb {
        Some((
            sa.to_vec(),
            va.iter().zip(vb.iter()).map(|(&x, &y)| f(x, y)).collect(),
        ))
    } else if vb.len() == 1 && sb.len() <= sa.len() {
        let y = vb[0];
        Some((sa.to_vec(), va.iter().map(|&x| f(x, y)).collect()))
    } else if va.len() == 1 && sa.len() <= sb.len() {
        let x = va[0];
        Some((sb.to_vec(), vb.iter().map(|&y| f(x, y)).collect()))
    } else {
        None
    };
    match out {
        Some((shape, values)) => {
            ArrayD::from_shape_vec(IxDyn(&shape), values).map_err(|e| e.to_string())
        }
        None => zip_f64(&a.to_f64(), &b.to_f64(), f),
    }
}

/// `f` elementwise on two float32 tensors, broadcast, where one is kept as `f32` (a model's
/// weight, a large folded constant): each result is computed in f64 and rounded to f32 as it
/// is stored — the values [`zip_floats`] and `Tensor::from_f64` give — without an f64 copy of
/// the operands or the result.
fn zip_f32(a: &Tensor, b: &Tensor, f: impl Fn(f64, f64) -> f64) -> Result<Tensor, String> {
    let shape = broadcast_concrete(a.shape(), b.shape())?;
    let (va, vb) = (f32_values(a), f32_values(b));
    let out = zip_contiguous(&va, a.shape(), &vb, b.shape(), &shape, &|x: f32, y: f32| {
        f(f64::from(x), f64::from(y)) as f32
    });
    Tensor::from_f32(&shape, out)
}

/// A float32 tensor's elements as `f32`s, row-major (exact: float32 values stored as f64 are
/// rounded to f32 already).
fn f32_values(t: &Tensor) -> std::borrow::Cow<'_, [f32]> {
    use std::borrow::Cow;
    match (t.data(), t.f32_slice()) {
        (TensorData::Float32Le(le), _) => Cow::Owned(le.iter().collect()),
        (_, Some(s)) => Cow::Borrowed(s),
        _ => Cow::Owned(t.float_values().iter().map(|&v| v as f32).collect()),
    }
}

fn int_div(x: i64, y: i64) -> Result<i64, String> {
    if y == 0 {
        Err("integer division by zero".into())
    } else {
        Ok(x.wrapping_div(y))
    }
}

fn int_pow(x: i64, y: i64) -> Result<i64, String> {
    if y < 0 {
        Ok(match x {
            1 => 1,
            -1 => {
                if y % 2 == 0 {
                    1
                } else {
                    -1
                }
            }
            _ => 0,
        })
    } else {
        Ok(x.wrapping_pow(u32::try_from(y).unwrap_or(u32::MAX)))
    }
}

macro_rules! binary {
    ($name:literal, $desc:literal, $pattern:ident, $ff:expr, $fi:expr) => {
        binary!($name, $desc, $pattern, $ff, $fi, binary_rel);
    };
    ($name:literal, $desc:literal, $pattern:ident, $ff:expr, $fi:expr, $rel:expr) => {
        inventory::submit! {
            OpDef {
                name: $name,
                description: $desc,
                arity: Arity::Exact(2),
                attrs: &[],
                pattern: OpPattern::$pattern,
                type_rel: $rel,
                kernel: |a, r| arith(a, r, $ff, $fi),
            }
        }
    };
}

binary!(
    "add",
    "Elementwise sum, with broadcasting.",
    Broadcast,
    |x, y| x + y,
    |x, y| Ok(x.wrapping_add(y))
);
binary!(
    "subtract",
    "Elementwise difference, with broadcasting.",
    Broadcast,
    |x, y| x - y,
    |x, y| Ok(x.wrapping_sub(y))
);
binary!(
    "multiply",
    "Elementwise product, with broadcasting.",
    Broadcast,
    |x, y| x * y,
    |x, y| Ok(x.wrapping_mul(y))
);
binary!(
    "divide",
    "Elementwise quotient, with broadcasting (integers truncate).",
    Broadcast,
    |x, y| x / y,
    int_div
);
binary!(
    "power",
    "Elementwise power, with broadcasting.",
    Broadcast,
    f64::powf,
    int_pow
);
binary!(
    "maximum",
    "Elementwise maximum, with broadcasting.",
    Broadcast,
    |x: f64, y: f64| if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.max(y)
    },
    |x: i64, y: i64| Ok(x.max(y))
);
binary!(
    "minimum",
    "Elementwise minimum, with broadcasting.",
    Broadcast,
    |x: f64, y: f64| if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.min(y)
    },
    |x: i64, y: i64| Ok(x.min(y))
);

binary!(
    "mod",
    "Elementwise remainder of truncating division, with broadcasting: the sign of `a` (C's \
     `fmod`, ONNX's `Mod` with `fmod=1`).",
    Broadcast,
    |x: f64, y: f64| x % y,
    |x: i64, y: i64| if y == 0 {
        Err("integer remainder by zero".into())
    } else {
        Ok(x.wrapping_rem(y))
    }
);
binary!(
    "floor_mod",
    "Elementwise remainder of flooring division, with broadcasting: the sign of `b` \
     (Python's `%`, ONNX's integer `Mod`).",
    Broadcast,
    |x: f64, y: f64| {
        let m = x % y;
        if m != 0.0 && (m < 0.0) != (y < 0.0) {
            m + y
        } else {
            m
        }
    },
    |x: i64, y: i64| if y == 0 {
        Err("integer remainder by zero".into())
    } else {
        let m = x.wrapping_rem(y);
        Ok(if m != 0 && (m < 0) != (y < 0) {
            m + y
        } else {
            m
        })
    }
);

/// A logical operator's relation: bool operands, broadcast.
fn logical_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let op = r.op_name();
    for i in 0..args.len() {
        let t = tensor_ty(op, args, i)?;
        if t.dtype != DType::Bool {
            return Err(format!("`{op}` needs bool operands, got `{t}`"));
        }
    }
    if args.len() == 1 {
        return same_rel(args, r);
    }
    binary_rel(args, r)
}

/// A broadcasting operator with a bool result: `$op` on floats and on integers, or the float
/// and integer functions given with the relation.
macro_rules! comparison {
    ($name:literal, $desc:literal, $op:tt) => {
        comparison!($name, $desc, compare_rel, |x, y| x $op y, |x, y| x $op y);
    };
    ($name:literal, $desc:literal, $rel:expr, $ff:expr, $fi:expr) => {
        inventory::submit! {
            OpDef {
                name: $name,
                description: $desc,
                arity: Arity::Exact(2),
                attrs: &[],
                pattern: OpPattern::Broadcast,
                type_rel: $rel,
                kernel: |a, r| compare(a, r, $ff, $fi),
            }
        }
    };
}

macro_rules! logical {
    ($name:literal, $desc:literal, $f:expr) => {
        comparison!(
            $name,
            $desc,
            logical_rel,
            |x, y| $f(x != 0.0, y != 0.0),
            |x, y| $f(x != 0, y != 0)
        );
    };
}

logical!(
    "logical_and",
    "Elementwise `a and b` of bools, with broadcasting.",
    |x, y| x && y
);
logical!(
    "logical_or",
    "Elementwise `a or b` of bools, with broadcasting.",
    |x, y| x || y
);
logical!(
    "logical_xor",
    "Elementwise `a xor b` of bools, with broadcasting.",
    |x: bool, y: bool| x != y
);

inventory::submit! {
    OpDef {
        name: "logical_not",
        description: "Elementwise `not a` of bools.",
        arity: Arity::Exact(1),
        attrs: &[],
        pattern: OpPattern::ElemWise,
        type_rel: logical_rel,
        kernel: |a, r| {
            let x = tensor_arg(r.op_name(), a, 0)?;
            Ok(Value::tensor(Tensor::from_f64(DType::Bool, x.to_f64().mapv(|v| f64::from(u8::from(v == 0.0))))))
        },
    }
}

comparison!("equal", "Elementwise `a == b` (bool), with broadcasting.", ==);
comparison!("not_equal", "Elementwise `a != b` (bool), with broadcasting.", !=);
comparison!("less", "Elementwise `a < b` (bool), with broadcasting.", <);
comparison!("less_equal", "Elementwise `a <= b` (bool), with broadcasting.", <=);
comparison!("greater", "Elementwise `a > b` (bool), with broadcasting.", >);
comparison!("greater_equal", "Elementwise `a >= b` (bool), with broadcasting.", >=);

fn same_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    Ok(Type::Tensor(tensor_ty(r.op_name(), args, 0)?.clone()))
}

/// The float math operators (`log`, `exp`, `sqrt`, ...): a float tensor, typed as itself.
/// TVM's relation takes any dtype here (`log` of an `int32` tensor types, and fails when it is
/// compiled); irpass asks for a float where the program is checked, and says so.
fn float_same_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    float_ty(r.op_name(), args, 0)
        .map(|t| Type::Tensor(t.clone()))
        .map_err(|e| {
            format!("{e} (TVM's type relation accepts any dtype; irpass asks for a float, cast the argument with `cast(x, dtype=\"float32\")`)")
        })
}

fn unary(
    args: &[Value],
    r: &AttrReader<'_>,
    ff: impl Fn(f64) -> f64,
    fi: impl Fn(i64) -> i64,
) -> Result<Value, String> {
    let a = tensor_arg(r.op_name(), args, 0)?;
    let dt = a.dtype();
    Ok(Value::tensor(if dt.is_float() {
        Tensor::from_f64(dt, a.to_f64().mapv(ff))
    } else {
        Tensor::from_i64(dt, a.to_i64().mapv(fi))
    }))
}

macro_rules! unary_float {
    ($name:literal, $desc:literal, $f:expr) => {
        inventory::submit! {
            OpDef {
                name: $name,
                description: $desc,
                arity: Arity::Exact(1),
                attrs: &[],
                pattern: OpPattern::ElemWise,
                type_rel: float_same_rel,
                kernel: |a, r| unary(a, r, $f, |x| x),
            }
        }
    };
}

unary_float!("exp", "Elementwise e^x.", f64::exp);
unary_float!("log", "Elementwise natural logarithm.", f64::ln);
unary_float!("sqrt", "Elementwise square root.", f64::sqrt);
unary_float!("rsqrt", "Elementwise 1/sqrt(x).", |x: f64| 1.0 / x.sqrt());
unary_float!("tanh", "Elementwise hyperbolic tangent.", f64::tanh);
unary_float!("sigmoid", "Elementwise 1/(1+e^-x).", |x: f64| 1.0
    / (1.0 + (-x).exp()));
unary_float!("erf", "Elementwise error function.", libm::erf);
unary_float!("floor", "Elementwise floor.", f64::floor);
unary_float!("ceil", "Elementwise ceiling.", f64::ceil);
unary_float!(
    "round",
    "Elementwise rounding (half away from zero).",
    f64::round
);

inventory::submit! {
    OpDef {
        name: "negative",
        description: "Elementwise -x.",
        arity: Arity::Exact(1),
        attrs: &[],
        pattern: OpPattern::ElemWise,
        type_rel: same_rel,
        kernel: |a, r| unary(a, r, |x| -x, i64::wrapping_neg),
    }
}

inventory::submit! {
    OpDef {
        name: "abs",
        description: "Elementwise |x|.",
        arity: Arity::Exact(1),
        attrs: &[],
        pattern: OpPattern::ElemWise,
        type_rel: same_rel,
        kernel: |a, r| unary(a, r, f64::abs, i64::wrapping_abs),
    }
}

inventory::submit! {
    OpDef {
        name: "nn.relu",
        description: "Elementwise max(x, 0).",
        arity: Arity::Exact(1),
        attrs: &[],
        pattern: OpPattern::ElemWise,
        type_rel: same_rel,
        kernel: |a, r| unary(a, r, |x| if x < 0.0 { 0.0 } else { x }, |x| x.max(0)),
    }
}

inventory::submit! {
    OpDef {
        name: "nn.leaky_relu",
        description: "Elementwise x if x > 0 else alpha * x.",
        arity: Arity::Exact(1),
        attrs: &[AttrSpec { name: "alpha", kind: AttrKind::Float, default: AttrDefault::Float(0.25) }],
        pattern: OpPattern::ElemWise,
        type_rel: float_same_rel,
        kernel: |a, r| {
            let alpha = r.float("alpha");
            unary(a, r, move |x| if x > 0.0 { x } else { alpha * x }, |x| x)
        },
    }
}

inventory::submit! {
    OpDef {
        name: "clip",
        description: "Elementwise clamp to [a_min, a_max].",
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec { name: "a_min", kind: AttrKind::Float, default: AttrDefault::Required },
            AttrSpec { name: "a_max", kind: AttrKind::Float, default: AttrDefault::Required },
        ],
        pattern: OpPattern::ElemWise,
        type_rel: |args, r| {
            if r.float("a_min") > r.float("a_max") {
                return Err(format!("`clip`: a_min {} is above a_max {}", r.float("a_min"), r.float("a_max")));
            }
            same_rel(args, r)
        },
        kernel: |a, r| {
            let (lo, hi) = (r.float("a_min"), r.float("a_max"));
            unary(a, r, move |x| if x.is_nan() { x } else { x.clamp(lo, hi) }, move |x| {
                (x as f64).clamp(lo, hi) as i64
            })
        },
    }
}

inventory::submit! {
    OpDef {
        name: "where",
        description: "Elementwise `cond ? x : y`, with broadcasting of all three.",
        arity: Arity::Exact(3),
        attrs: &[],
        pattern: OpPattern::Broadcast,
        type_rel: |args, r| {
            let op = r.op_name();
            let c = tensor_ty(op, args, 0)?;
            let (x, y) = (tensor_ty(op, args, 1)?, tensor_ty(op, args, 2)?);
            if c.dtype != DType::Bool {
                return Err(format!("`where` needs a bool condition, got `{c}`"));
            }
            if x.dtype != y.dtype {
                return Err(format!("`where` needs both branches of one dtype, got `{}` and `{}`", x.dtype, y.dtype));
            }
            let s = broadcast_shapes(&x.shape, &y.shape).map_err(|e| format!("`where`: {e}"))?;
            let shape = broadcast_shapes(&c.shape, &s).map_err(|e| format!("`where`: {e}"))?;
            Ok(Type::with_dims(shape, x.dtype))
        },
        kernel: |a, r| {
            let op = r.op_name();
            let (c, x, y) = (tensor_arg(op, a, 0)?, tensor_arg(op, a, 1)?, tensor_arg(op, a, 2)?);
            let s = broadcast_concrete(x.shape(), y.shape())?;
            let shape = broadcast_concrete(c.shape(), &s)?;
            let (cb, xv, yv) = (c.to_bool(), x.to_f64(), y.to_f64());
            let (cb, xv, yv) = (
                cb.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?,
                xv.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?,
                yv.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?,
            );
            let out = Zip::from(&cb).and(&xv).and(&yv).map_collect(|&c, &x, &y| if c { x } else { y });
            Ok(Value::tensor(if x.dtype().is_int() {
                let (xi, yi) = (x.to_i64(), y.to_i64());
                let (xi, yi) = (xi.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?, yi.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?);
                Tensor::from_i64(x.dtype(), Zip::from(&cb).and(&xi).and(&yi).map_collect(|&c, &x, &y| if c { x } else { y }))
            } else {
                Tensor::from_f64(x.dtype(), out)
            }))
        },
    }
}

const FILL_ATTRS: &[AttrSpec] = &[
    AttrSpec {
        name: "shape",
        kind: AttrKind::Ints,
        default: AttrDefault::Required,
    },
    AttrSpec {
        name: "dtype",
        kind: AttrKind::DType,
        default: AttrDefault::Str("float32"),
    },
];

fn fill_rel(_args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let shape = r.shape("shape")?;
    Ok(Type::from(TensorType {
        shape: shape.into_iter().map(|d| Dim::Static(d as i64)).collect(),
        dtype: dtype_or(r.dtype("dtype"), DType::Float32),
    }))
}

fn fill(r: &AttrReader<'_>, value: f64) -> Result<Value, String> {
    let shape = r.shape("shape")?;
    checked_size(r.op_name(), &shape)?;
    Ok(Value::tensor(Tensor::full(
        dtype_or(r.dtype("dtype"), DType::Float32),
        &shape,
        value,
    )))
}

fn fill_like(a: &[Value], r: &AttrReader<'_>, value: f64) -> Result<Value, String> {
    let t = tensor_arg(r.op_name(), a, 0)?;
    Ok(Value::tensor(Tensor::from_f64(
        t.dtype(),
        ArrayD::from_elem(IxDyn(t.shape()), value),
    )))
}

inventory::submit! {
    OpDef { name: "zeros", description: "A tensor of zeros of the given shape and dtype.", arity: Arity::Exact(0), attrs: FILL_ATTRS, pattern: OpPattern::ElemWise, type_rel: fill_rel, kernel: |_, r| fill(r, 0.0) }
}
inventory::submit! {
    OpDef { name: "ones", description: "A tensor of ones of the given shape and dtype.", arity: Arity::Exact(0), attrs: FILL_ATTRS, pattern: OpPattern::ElemWise, type_rel: fill_rel, kernel: |_, r| fill(r, 1.0) }
}
inventory::submit! {
    OpDef { name: "zeros_like", description: "Zeros of the argument's shape and dtype.", arity: Arity::Exact(1), attrs: &[], pattern: OpPattern::ElemWise, type_rel: same_rel, kernel: |a, r| fill_like(a, r, 0.0) }
}
inventory::submit! {
    OpDef { name: "ones_like", description: "Ones of the argument's shape and dtype.", arity: Arity::Exact(1), attrs: &[], pattern: OpPattern::ElemWise, type_rel: same_rel, kernel: |a, r| fill_like(a, r, 1.0) }
}

fn shift_rel(args: &[Type], r: &AttrReader<'_>) -> Result<Type, String> {
    let t = binary_rel(args, r)?;
    match &t {
        Type::Tensor(x) if x.dtype.is_float() || x.dtype == DType::Bool => Err(format!(
            "`{}` needs integer operands, got `{x}` (TVM's type relation accepts floats; irpass \
             asks for integers, as a shift is defined on them)",
            r.op_name()
        )),
        _ => Ok(t),
    }
}

/// `x` shifted by `y` bits (`left`), in 64 bits; a shift outside 0..64 gives 0 (or the sign
/// for an arithmetic right shift), the result wrapped to the dtype by the caller.
fn shift(x: i64, y: i64, left: bool) -> i64 {
    match (u32::try_from(y).ok().filter(|&s| s < 64), left) {
        (Some(s), true) => x.wrapping_shl(s),
        (Some(s), false) => x >> s,
        (None, true) => 0,
        (None, false) => x >> 63,
    }
}

binary!(
    "left_shift",
    "Elementwise `a << b` of integers, with broadcasting.",
    Broadcast,
    |_, _| f64::NAN,
    |x, y| Ok(shift(x, y, true)),
    shift_rel
);
binary!(
    "right_shift",
    "Elementwise `a >> b` of integers (arithmetic), with broadcasting.",
    Broadcast,
    |_, _| f64::NAN,
    |x, y| Ok(shift(x, y, false)),
    shift_rel
);

inventory::submit! {
    OpDef {
        name: "hard_sigmoid",
        description: "Elementwise clip(alpha · x + beta, 0, 1) (ONNX's HardSigmoid).",
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec { name: "alpha", kind: AttrKind::Float, default: AttrDefault::Float(0.2) },
            AttrSpec { name: "beta", kind: AttrKind::Float, default: AttrDefault::Float(0.5) },
        ],
        pattern: OpPattern::ElemWise,
        type_rel: float_same_rel,
        kernel: |a, r| {
            let (alpha, beta) = (r.float("alpha"), r.float("beta"));
            unary(a, r, |x| (alpha * x + beta).clamp(0.0, 1.0), |x| x)
        },
    }
}

inventory::submit! {
    OpDef {
        name: "hard_swish",
        description: "Elementwise x · clip(x / 6 + 1/2, 0, 1) (ONNX's HardSwish, MobileNet v3's activation).",
        arity: Arity::Exact(1),
        attrs: &[],
        pattern: OpPattern::ElemWise,
        type_rel: float_same_rel,
        kernel: |a, r| unary(a, r, |x| x * (x / 6.0 + 0.5).clamp(0.0, 1.0), |x| x),
    }
}

#[cfg(test)]
mod tests {
    use crate::{Attrs, DType, Op, Tensor, Value};

    #[test]
    fn arithmetic_on_float32_kept_as_f32_gives_the_values_of_the_f64_form() {
        let w: Vec<f32> = (0..24)
            .map(|i| (i as f32 - 11.5) * 0.37)
            .chain([f32::INFINITY, f32::NAN, 1e-40, 3.4e38])
            .collect();
        let wide = |v: &[f32], shape: &[usize]| {
            Tensor::from_vec(
                DType::Float32,
                shape,
                v.iter().map(|&x| f64::from(x)).collect(),
            )
            .unwrap()
        };
        let bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
        let forms = [
            wide(&w, &[4, 7]),
            Tensor::from_f32(&[4, 7], w.clone()).unwrap(),
            Tensor::from_f32_le(&[4, 7], bytes.into()).unwrap(),
        ];
        // A per-row scale broadcast along the rows, stored as f64.
        let scale = wide(&[0.5, -3.0, 1e38, 0.0], &[4, 1]);
        for op in ["add", "subtract", "multiply", "divide", "power", "maximum"] {
            let run = |t: &Tensor| {
                let args = [Value::tensor(t.clone()), Value::tensor(scale.clone())];
                Op::get(op).unwrap().eval(&args, &Attrs::new()).unwrap()
            };
            let want = run(&forms[0]);
            for t in &forms[1..] {
                let got = run(t);
                assert!(got.bit_eq(&want), "{op}: {got} vs {want}");
            }
        }
    }
}
