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

/// Of two dimensions that must be equal, the one that says more: a static size, else a name.
pub fn most_known(a: Dim, b: Dim) -> Dim {
    match (a, b) {
        (Dim::Static(_), _) => a,
        (_, Dim::Static(_)) => b,
        (Dim::Named(_), _) => a,
        _ => b,
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
            // A size that is not static is 1 or the other's size.
            (Dim::Any | Dim::Named(_), Dim::Static(x))
            | (Dim::Static(x), Dim::Any | Dim::Named(_)) => Dim::Static(x),
            (Dim::Named(x), Dim::Named(y)) if x == y => Dim::Named(x),
            (_, _) => Dim::Any,
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
    if let (Some(sa), Some(sb)) = (a.as_slice(), b.as_slice()) {
        let out = zip_contiguous(sa, a.shape(), sb, b.shape(), &shape, &f);
        return ArrayD::from_shape_vec(IxDyn(&shape), out).map_err(|e| e.to_string());
    }
    let (va, vb) = (
        a.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?,
        b.broadcast(IxDyn(&shape)).ok_or("broadcast failed")?,
    );
    Ok(Zip::from(&va).and(&vb).map_collect(|&x, &y| f(x, y)))
}

/// `f` over two row-major arrays broadcast to `out`: the axes are merged where both inputs run
/// on contiguously (or both stay put), so a per-channel scale of a weight is one inner loop
/// per channel rather than index arithmetic per element.
pub(super) fn zip_contiguous<T: Copy, U>(
    a: &[T],
    ash: &[usize],
    b: &[T],
    bsh: &[usize],
    out: &[usize],
    f: &impl Fn(T, T) -> U,
) -> Vec<U> {
    let total: usize = out.iter().product();
    let n = out.len();
    // Per output axis: its size and each input's stride along it (0 where it broadcasts).
    let strides = |s: &[usize]| {
        let mut st = vec![0usize; n];
        let mut acc = 1;
        for i in (0..n).rev() {
            let Some(j) = (i + s.len()).checked_sub(n) else {
                continue;
            };
            if s[j] != 1 {
                st[i] = acc;
            }
            acc *= s[j];
        }
        st
    };
    let (sa, sb) = (strides(ash), strides(bsh));
    let mut axes: Vec<(usize, usize, usize)> = Vec::with_capacity(n);
    for i in 0..n {
        if out[i] == 1 {
            continue;
        }
        match axes.last_mut() {
            Some((d, x, y)) if *x == sa[i] * out[i] && *y == sb[i] * out[i] => {
                *d *= out[i];
                (*x, *y) = (sa[i], sb[i]);
            }
            _ => axes.push((out[i], sa[i], sb[i])),
        }
    }
    let (inner, ia, ib) = axes.pop().unwrap_or((1, 0, 0));
    let mut result = Vec::with_capacity(total);
    let mut index = vec![0usize; axes.len()];
    let (mut oa, mut ob) = (0usize, 0usize);
    while result.len() < total {
        match (ia, ib) {
            (1, 1) => result.extend(
                a[oa..oa + inner]
                    .iter()
                    .zip(&b[ob..ob + inner])
                    .map(|(&x, &y)| f(x, y)),
            ),
            (1, 0) => result.extend(a[oa..oa + inner].iter().map(|&x| f(x, b[ob]))),
            (0, 1) => result.extend(b[ob..ob + inner].iter().map(|&y| f(a[oa], y))),
            _ => result.extend((0..inner).map(|k| f(a[oa + k * ia], b[ob + k * ib]))),
        }
        // The next outer position.
        for k in (0..axes.len()).rev() {
            index[k] += 1;
            oa += axes[k].1;
            ob += axes[k].2;
            if index[k] < axes[k].0 {
                break;
            }
            oa -= axes[k].1 * axes[k].0;
            ob -= axes[k].2 * axes[k].0;
            index[k] = 0;
        }
    }
    result
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
    symbolic_product(shape)
        .filter(|(_, names)| names.is_empty())
        .map(|(n, _)| n)
}

/// The number of elements of `shape` as a static factor and the named sizes it is multiplied
/// by (sorted): `None` when a dimension is `?`; the factor is `None` when it does not fit in an
/// `i64`.
pub fn symbolic_product(shape: &[Dim]) -> Option<(Option<i64>, Vec<crate::Symbol>)> {
    let mut n = Some(1i64);
    let mut names = Vec::new();
    for d in shape {
        match *d {
            Dim::Static(v) => n = n.and_then(|n| n.checked_mul(v)),
            Dim::Named(s) => names.push(s),
            Dim::Any => return None,
        }
    }
    names.sort();
    Some((n, names))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The merged-axes loop agrees with ndarray's broadcasting on every pairing of shapes
    /// among a set with scalars, size-1 axes, leading and trailing broadcasts.
    #[test]
    fn the_contiguous_broadcast_loop_agrees_with_ndarray() {
        let shapes: &[&[usize]] = &[
            &[],
            &[1],
            &[3],
            &[2, 3],
            &[2, 1],
            &[1, 3],
            &[4, 2, 3],
            &[4, 1, 1],
            &[1, 2, 1],
            &[4, 2, 1, 3],
            &[2, 1, 3],
        ];
        for &x in shapes {
            for &y in shapes {
                let Ok(out) = broadcast_concrete(x, y) else {
                    continue;
                };
                let fill = |s: &[usize], k: f64| {
                    let n: usize = s.iter().product();
                    ArrayD::from_shape_vec(IxDyn(s), (0..n).map(|i| i as f64 * k + 1.0).collect())
                        .unwrap()
                };
                let (a, b) = (fill(x, 1.0), fill(y, 0.5));
                let f = |p: f64, q: f64| p * 10.0 - q;
                let fast =
                    zip_contiguous(a.as_slice().unwrap(), x, b.as_slice().unwrap(), y, &out, &f);
                let (va, vb) = (
                    a.broadcast(IxDyn(&out)).unwrap(),
                    b.broadcast(IxDyn(&out)).unwrap(),
                );
                let slow: Vec<f64> = Zip::from(&va)
                    .and(&vb)
                    .map_collect(|&p, &q| f(p, q))
                    .iter()
                    .copied()
                    .collect();
                assert_eq!(fast, slow, "{x:?} with {y:?}");
            }
        }
    }
}
