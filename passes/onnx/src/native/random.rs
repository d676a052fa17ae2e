//! The random operators: `RandomNormal`, `RandomUniform` (and their `Like` forms, of another
//! tensor's shape), `Bernoulli` and `Multinomial`. Each is marked stateful
//! ([`irpass_ir::op::Stateful`]): its value is a draw at run time, so `FoldConstant` never
//! folds a call and CSE never merges two. A `seed` makes the draws of one call repeatable
//! (not equal to ONNX Runtime's, whose generator differs: only their distribution is).

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader, AttrSpec, Stateful, checked_size};
use irpass_ir::{DType, Dim, Tensor, TensorType};
use ndarray::{ArrayD, IxDyn};

use super::{Args, attr, native};

/// The generator of a call: seeded by its `seed` attribute where it has one.
fn generator(r: &AttrReader<'_>) -> fastrand::Rng {
    match r.raw("seed").as_float() {
        Some(seed) => fastrand::Rng::with_seed(seed.to_bits()),
        None => fastrand::Rng::new(),
    }
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u = 1.0 - rng.f64(); // in (0, 1]
    let v = rng.f64();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The element type the `dtype` attribute (an ONNX element type) names, if set.
fn dtype_attr(r: &AttrReader<'_>) -> Result<Option<DType>, String> {
    r.raw("dtype")
        .as_int()
        .map(|e| crate::tensor::dtype_of(e as i32).map_err(|e| e.to_string()))
        .transpose()
}

/// The element type `dtype` names, else `like`'s; a float type.
fn float_dtype(r: &AttrReader<'_>, like: Option<DType>) -> Result<DType, String> {
    let dtype = dtype_attr(r)?.or(like).unwrap_or(DType::Float32);
    if !dtype.is_float() {
        return Err(format!(
            "`{}`: dtype {dtype}, a float type is expected",
            r.op_name()
        ));
    }
    Ok(dtype)
}

/// The output's shape: the `shape` attribute's, or input 0's (the `Like` forms).
fn drawn_type(
    a: &Args<'_, TensorType>,
    r: &AttrReader<'_>,
    like: bool,
) -> Result<Vec<TensorType>, String> {
    let (shape, dtype) = match like {
        true => {
            let x = a.get(0)?;
            (x.shape.clone(), float_dtype(r, Some(x.dtype))?)
        }
        false => {
            let sizes = r.shape("shape")?;
            checked_size(r.op_name(), &sizes)?;
            let dims = sizes.iter().map(|&d| Dim::Static(d as i64)).collect();
            (dims, float_dtype(r, None)?)
        }
    };
    Ok(vec![TensorType { shape, dtype }])
}

/// `count` draws of `draw` as a tensor of `shape` and `dtype`.
fn drawn(
    shape: &[usize],
    dtype: DType,
    mut draw: impl FnMut() -> f64,
) -> Result<Vec<Tensor>, String> {
    let values: Vec<f64> = (0..shape.iter().product::<usize>())
        .map(|_| draw())
        .collect();
    Ok(vec![Tensor::from_vec(dtype, shape, values)?])
}

/// The shape a call draws: its `shape` attribute's, or input 0's.
fn shape_of(a: &Args<'_, Tensor>, r: &AttrReader<'_>, like: bool) -> Result<Vec<usize>, String> {
    let shape = match like {
        true => a.get(0)?.shape().to_vec(),
        false => r.shape("shape")?,
    };
    checked_size(r.op_name(), &shape)?;
    Ok(shape)
}

/// `RandomNormal[Like]`'s kernel.
fn normal_kernel(
    a: &Args<'_, Tensor>,
    r: &AttrReader<'_>,
    like: bool,
) -> Result<Vec<Tensor>, String> {
    let dtype = float_dtype(r, a.opt(0).map(Tensor::dtype))?;
    let (mean, scale) = (r.float("mean"), r.float("scale"));
    let mut rng = generator(r);
    drawn(&shape_of(a, r, like)?, dtype, || {
        mean + scale * normal(&mut rng)
    })
}

/// `RandomUniform[Like]`'s kernel.
fn uniform_kernel(
    a: &Args<'_, Tensor>,
    r: &AttrReader<'_>,
    like: bool,
) -> Result<Vec<Tensor>, String> {
    let dtype = float_dtype(r, a.opt(0).map(Tensor::dtype))?;
    let (low, high) = (r.float("low"), r.float("high"));
    let mut rng = generator(r);
    drawn(&shape_of(a, r, like)?, dtype, || {
        low + (high - low) * rng.f64()
    })
}

const SEED: AttrSpec = attr("seed", AttrKind::Float, AttrDefault::Null);
const DTYPE: AttrSpec = attr("dtype", AttrKind::OptInt, AttrDefault::Null);
const MEAN: AttrSpec = attr("mean", AttrKind::Float, AttrDefault::Float(0.0));
const SCALE: AttrSpec = attr("scale", AttrKind::Float, AttrDefault::Float(1.0));
const HIGH: AttrSpec = attr("high", AttrKind::Float, AttrDefault::Float(1.0));
const LOW: AttrSpec = attr("low", AttrKind::Float, AttrDefault::Float(0.0));
const SHAPE: AttrSpec = attr("shape", AttrKind::Ints, AttrDefault::Required);

native! {
    /// ONNX `RandomNormal`: draws from the normal distribution of `mean` and `scale` (its
    /// standard deviation), of the `shape` and `dtype` given.
    "RandomNormal" {
        versions: &[1],
        attrs: [DTYPE, MEAN, SCALE, SEED, SHAPE],
        pattern: Opaque,
        rel: |a, r| drawn_type(a, r, false),
        kernel: |a, r| normal_kernel(a, r, false),
    }
}

native! {
    /// ONNX `RandomNormalLike`: `RandomNormal` of input 0's shape (and type, unless `dtype`).
    "RandomNormalLike" {
        versions: &[1],
        attrs: [DTYPE, MEAN, SCALE, SEED],
        pattern: Opaque,
        rel: |a, r| drawn_type(a, r, true),
        kernel: |a, r| normal_kernel(a, r, true),
    }
}

native! {
    /// ONNX `RandomUniform`: draws from the uniform distribution on [`low`, `high`), of the
    /// `shape` and `dtype` given.
    "RandomUniform" {
        versions: &[1],
        attrs: [DTYPE, HIGH, LOW, SEED, SHAPE],
        pattern: Opaque,
        rel: |a, r| drawn_type(a, r, false),
        kernel: |a, r| uniform_kernel(a, r, false),
    }
}

native! {
    /// ONNX `RandomUniformLike`: `RandomUniform` of input 0's shape (and type, unless
    /// `dtype`).
    "RandomUniformLike" {
        versions: &[1],
        attrs: [DTYPE, HIGH, LOW, SEED],
        pattern: Opaque,
        rel: |a, r| drawn_type(a, r, true),
        kernel: |a, r| uniform_kernel(a, r, true),
    }
}

native! {
    /// ONNX `Bernoulli`: 1 with the probability each element of input 0 gives, else 0 (of
    /// `dtype`, else the input's type).
    "Bernoulli" {
        versions: &[15],
        attrs: [DTYPE, SEED],
        pattern: Opaque,
        rel: |a, r| {
            let p = a.float(0)?;
            let dtype = dtype_attr(r)?.unwrap_or(p.dtype);
            Ok(vec![TensorType { shape: p.shape.clone(), dtype }])
        },
        kernel: |a, r| {
            let p = a.get(0)?;
            let dtype = dtype_attr(r)?.unwrap_or(p.dtype());
            let mut rng = generator(r);
            let draws = p.to_f64().mapv(|q| if rng.f64() < q { 1.0 } else { 0.0 });
            Ok(vec![Tensor::from_f64(dtype, draws)])
        },
    }
}

native! {
    /// ONNX `Multinomial`: for each row of input 0 (a batch of unnormalised log
    /// probabilities of classes), `sample_size` classes drawn from their softmax (int32, or
    /// `dtype`).
    "Multinomial" {
        versions: &[7],
        attrs: [
            attr("dtype", AttrKind::Int, AttrDefault::Int(6)),
            attr("sample_size", AttrKind::Int, AttrDefault::Int(1)),
            SEED,
        ],
        pattern: Opaque,
        rel: |a, r| {
            let x = a.float(0)?;
            let [batch, _] = x.shape[..] else {
                return Err(format!("`onnx.Multinomial` of {x}: (batch, classes) is expected"));
            };
            let dtype = dtype_attr(r)?.unwrap_or(DType::Int32);
            let samples = r.int("sample_size");
            if !matches!(dtype, DType::Int32 | DType::Int64) || !(1..1 << 24).contains(&samples) {
                return Err(format!("`onnx.Multinomial`: dtype {dtype}, sample_size {samples}"));
            }
            Ok(vec![TensorType { shape: vec![batch, Dim::Static(samples)], dtype }])
        },
        kernel: multinomial,
    }
}

fn multinomial(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let [batch, classes] = *x.shape() else {
        return Err("`onnx.Multinomial` of a tensor that is not a matrix".into());
    };
    if classes == 0 && batch > 0 {
        return Err("`onnx.Multinomial` of rows of no class".into());
    }
    let samples = usize::try_from(r.int("sample_size")).map_err(|e| e.to_string())?;
    let dtype = dtype_attr(r)?.unwrap_or(DType::Int32);
    let values = x.values();
    let mut rng = generator(r);
    let mut out = Vec::with_capacity(batch * samples);
    for row in values.chunks(classes.max(1)).take(batch) {
        // The cumulative softmax of the row, then each draw's class by its position in it.
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut total = 0.0;
        let cumulative: Vec<f64> = row
            .iter()
            .map(|&v| {
                total += (v - max).exp();
                total
            })
            .collect();
        for _ in 0..samples {
            let u = rng.f64() * total;
            let class = cumulative
                .partition_point(|&c| c <= u)
                .min(classes.saturating_sub(1));
            out.push(class as i64);
        }
    }
    let out = ArrayD::from_shape_vec(IxDyn(&[batch, samples]), out).map_err(|e| e.to_string())?;
    Ok(vec![Tensor::from_i64(dtype, out)])
}

inventory::submit! { Stateful("onnx.RandomNormal") }
inventory::submit! { Stateful("onnx.RandomNormalLike") }
inventory::submit! { Stateful("onnx.RandomUniform") }
inventory::submit! { Stateful("onnx.RandomUniformLike") }
inventory::submit! { Stateful("onnx.Bernoulli") }
inventory::submit! { Stateful("onnx.Multinomial") }
