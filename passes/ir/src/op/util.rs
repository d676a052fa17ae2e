//! Helpers shared by the operators' type relations and kernels.

use std::sync::Arc;

use ndarray::{ArrayD, IxDyn, Zip};

use crate::{DType, Dim, Tensor, TensorType, Type, Value};

/// Argument `i` as a tensor type.
pub fn tensor_ty<'a>(op: &str, args: &'a [Type], i: usize) -> Result<&'a Arc<TensorType>, String> {
    match args.get(i) {
        Some(Type::Tensor(t)) => Ok(t),
        Some(other) => Err(format!(
            "`{op}` needs a tensor as argument {}, got `{other}`",
            i + 1
        )),
        None => Err(format!("`{op}` is missing argument {}", i + 1)),
    }
}

/// Argument `i` as a float tensor type.
pub fn float_ty<'a>(op: &str, args: &'a [Type], i: usize) -> Result<&'a Arc<TensorType>, String> {
    let t = tensor_ty(op, args, i)?;
    if !t.dtype.is_float() {
        return Err(format!(
            "`{op}` needs a float tensor as argument {}, got `{t}`",
            i + 1
        ));
    }
    Ok(t)
}

/// Argument `i` as a tuple of tensor types.
pub fn tuple_ty<'a>(
    op: &str,
    args: &'a [Type],
    i: usize,
) -> Result<Vec<&'a Arc<TensorType>>, String> {
    match args.get(i) {
        Some(Type::Tuple(fields)) => fields
            .iter()
            .map(|f| match f {
                Type::Tensor(t) => Ok(t),
                other => Err(format!(
                    "`{op}` needs a tuple of tensors, got a field `{other}`"
                )),
            })
            .collect(),
        Some(other) => Err(format!("`{op}` needs a tuple of tensors, got `{other}`")),
        None => Err(format!("`{op}` is missing argument {}", i + 1)),
    }
}

/// Whether two dimensions may be equal (`?` matches anything).
pub fn dims_match(a: Dim, b: Dim) -> bool {
    match (a, b) {
        (Dim::Static(x), Dim::Static(y)) => x == y,
        _ => true,
    }
}

/// The broadcast of two shapes (numpy rules), or why they do not broadcast.
pub fn broadcast_shapes(a: &[Dim], b: &[Dim]) -> Result<Vec<Dim>, String> {
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            Dim::Static(1)
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            Dim::Static(1)
        };
        out.push(match (da, db) {
            (Dim::Static(1), d) | (d, Dim::Static(1)) => d,
            (Dim::Static(x), Dim::Static(y)) if x == y => Dim::Static(x),
            (Dim::Static(_), Dim::Static(_)) => {
                return Err(format!(
                    "shapes {} and {} do not broadcast (dimension {da} against {db})",
                    shape_text(a),
                    shape_text(b)
                ));
            }
            (Dim::Any, Dim::Static(x)) | (Dim::Static(x), Dim::Any) => Dim::Static(x),
            (Dim::Any, Dim::Any) => Dim::Any,
        });
    }
    Ok(out)
}

/// `(1, 3, 224, 224)`.
pub fn shape_text(shape: &[Dim]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("({})", dims.join(", "))
}

/// Normalises a possibly negative axis against `rank`.
pub fn axis(op: &str, axis: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if a < 0 || a >= r {
        return Err(format!(
            "`{op}`: axis {axis} is out of range for a tensor of rank {rank}"
        ));
    }
    Ok(a as usize)
}

/// Argument `i` as a tensor value.
pub fn tensor_arg<'a>(op: &str, args: &'a [Value], i: usize) -> Result<&'a Tensor, String> {
    match args.get(i) {
        Some(Value::Tensor(t)) => Ok(t),
        Some(_) => Err(format!("`{op}`: argument {} is not a tensor", i + 1)),
        None => Err(format!("`{op}` is missing argument {}", i + 1)),
    }
}

/// The broadcast of two concrete shapes.
pub fn broadcast_concrete(a: &[usize], b: &[usize]) -> Result<Vec<usize>, String> {
    let da: Vec<Dim> = a.iter().map(|&d| Dim::Static(d as i64)).collect();
    let db: Vec<Dim> = b.iter().map(|&d| Dim::Static(d as i64)).collect();
    Ok(broadcast_shapes(&da, &db)?
        .into_iter()
        .map(|d| d.value().unwrap_or(0) as usize)
        .collect())
}

/// Applies `f` elementwise to two broadcast float arrays.
pub fn zip_f64(
    a: &ArrayD<f64>,
    b: &ArrayD<f64>,
    f: impl Fn(f64, f64) -> f64,
) -> Result<ArrayD<f64>, String> {
    let shape = broadcast_concrete(a.shape(), b.shape())?;
    let (va, vb) = (
        a.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?,
        b.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?,
    );
    Ok(Zip::from(&va).and(&vb).map_collect(|&x, &y| f(x, y)))
}

/// Applies `f` elementwise to two broadcast integer arrays.
pub fn zip_i64(
    a: &ArrayD<i64>,
    b: &ArrayD<i64>,
    f: impl Fn(i64, i64) -> Result<i64, String>,
) -> Result<ArrayD<i64>, String> {
    let shape = broadcast_concrete(a.shape(), b.shape())?;
    let (va, vb) = (
        a.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?,
        b.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?,
    );
    let mut err = None;
    let out = Zip::from(&va).and(&vb).map_collect(|&x, &y| match f(x, y) {
        Ok(v) => v,
        Err(e) => {
            err.get_or_insert(e);
            0
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The dtype of a `dtype`-like attribute, or `default` for `""`.
pub fn dtype_or(d: Option<DType>, default: DType) -> DType {
    d.unwrap_or(default)
}

/// The number of elements of `shape`: `None` when a dimension is not static, `Some(None)`
/// when the count does not fit in an `i64`.
pub fn static_product(shape: &[Dim]) -> Option<Option<i64>> {
    let mut n = Some(1i64);
    for d in shape {
        let v = d.value()?;
        n = n.and_then(|n| n.checked_mul(v));
    }
    Some(n)
}

/// The highest rank an operator may build from an attribute (`expand_dims`' `num_newaxis`):
/// numpy's limit. A larger request is an error before anything is allocated.
pub const MAX_RANK: usize = 64;

/// Number of elements of a concrete shape, refusing absurd sizes.
pub fn checked_size(op: &str, shape: &[usize]) -> Result<usize, String> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= 1 << 31)
        .ok_or_else(|| format!("`{op}`: a result of shape {shape:?} is too large to evaluate"))
}
