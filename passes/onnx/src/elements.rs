//! Tensors as `ndarray` arrays of their element kind (floats as f64, integers as i64, bools),
//! so that taking them apart and putting them together keeps every value exact: slicing,
//! stacking and concatenating along an axis, for the loops' and the sequences' kernels.

use irpass_ir::{DType, Tensor};
use ndarray::{ArrayD, Axis, Slice};

/// A tensor's elements in the widest array of their kind, so that slicing and stacking keep
/// every value exact.
pub(crate) enum Elements {
    Float(ArrayD<f64>),
    Int(ArrayD<i64>),
    Bool(ArrayD<bool>),
}

impl Elements {
    pub(crate) fn of(t: &Tensor) -> Elements {
        match t.dtype() {
            DType::Bool => Elements::Bool(t.to_bool()),
            d if d.is_int() => Elements::Int(t.to_i64()),
            _ => Elements::Float(t.to_f64()),
        }
    }

    pub(crate) fn tensor(self, dtype: DType) -> Tensor {
        match self {
            Elements::Float(a) => Tensor::from_f64(dtype, a),
            Elements::Int(a) => Tensor::from_i64(dtype, a),
            Elements::Bool(a) => Tensor::from_bool(a),
        }
    }
}

/// Element `i` of `t` along `axis` (the axis removed).
pub(crate) fn slice(t: &Tensor, axis: usize, i: usize) -> Tensor {
    fn at<T: Clone>(a: &ArrayD<T>, axis: usize, i: usize) -> ArrayD<T> {
        a.index_axis(Axis(axis), i).to_owned()
    }
    match Elements::of(t) {
        Elements::Float(a) => Elements::Float(at(&a, axis, i)),
        Elements::Int(a) => Elements::Int(at(&a, axis, i)),
        Elements::Bool(a) => Elements::Bool(at(&a, axis, i)),
    }
    .tensor(t.dtype())
}

/// `parts` (one shape and type) stacked along a new `axis`.
pub(crate) fn stack(parts: &[Tensor], axis: usize) -> Result<Tensor, String> {
    if parts.iter().any(|p| p.shape() != parts[0].shape()) {
        return Err("tensors of different shapes".into());
    }
    join(parts, axis, true)
}

/// `parts` (one type; equal but along `axis`) joined along `axis`.
pub(crate) fn concat(parts: &[Tensor], axis: usize) -> Result<Tensor, String> {
    join(parts, axis, false)
}

/// `parts` stacked along a new `axis` (`new`) or joined along it.
fn join(parts: &[Tensor], axis: usize, new: bool) -> Result<Tensor, String> {
    let first = parts.first().ok_or("nothing to join")?;
    if parts.iter().any(|p| p.dtype() != first.dtype()) {
        return Err("tensors of different types".into());
    }
    let all: Vec<Elements> = parts.iter().map(Elements::of).collect();
    macro_rules! joined {
        ($kind:ident) => {{
            let views: Vec<_> = all
                .iter()
                .map(|e| match e {
                    Elements::$kind(a) => a.view(),
                    _ => unreachable!("one dtype"),
                })
                .collect();
            let joined = if new {
                ndarray::stack(Axis(axis), &views)
            } else {
                ndarray::concatenate(Axis(axis), &views)
            };
            Elements::$kind(joined.map_err(|e| e.to_string())?)
        }};
    }
    let joined = match all[0] {
        Elements::Float(_) => joined!(Float),
        Elements::Int(_) => joined!(Int),
        Elements::Bool(_) => joined!(Bool),
    };
    Ok(joined.tensor(first.dtype()))
}

/// Elements `start..start + len` of `t` along `axis` (the axis kept).
pub(crate) fn slice_range(t: &Tensor, axis: usize, start: usize, len: usize) -> Tensor {
    fn part<T: Clone>(a: &ArrayD<T>, axis: usize, start: usize, len: usize) -> ArrayD<T> {
        a.slice_axis(Axis(axis), Slice::from(start..start + len))
            .to_owned()
    }
    match Elements::of(t) {
        Elements::Float(a) => Elements::Float(part(&a, axis, start, len)),
        Elements::Int(a) => Elements::Int(part(&a, axis, start, len)),
        Elements::Bool(a) => Elements::Bool(part(&a, axis, start, len)),
    }
    .tensor(t.dtype())
}
