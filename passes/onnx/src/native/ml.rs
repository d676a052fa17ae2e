//! Operators of the `ai.onnx.ml` domain (traditional machine learning, as scikit-learn
//! converters write them): `Binarizer`, `ArrayFeatureExtractor`, `LabelEncoder` (`TreeEnsemble`
//! is in `forest.rs`).

use std::collections::HashMap;

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader};
use irpass_ir::{DType, Dim, Tensor, TensorType, Type, Value};
use ndarray::{ArrayD, Axis, IxDyn};

use super::{Args, attr, native, tensor_attr};
use crate::elements::Elements;
use crate::strings::{Strings, dims_of};

native! {
    /// ONNX-ML `Binarizer`: 1 where an element is greater than `threshold`, else 0 (of the
    /// input's type).
    "Binarizer" {
        domain: "ai.onnx.ml",
        versions: &[1],
        attrs: [attr("threshold", AttrKind::Float, AttrDefault::Float(0.0))],
        pattern: ElemWise,
        rel: |a: &Args<'_, TensorType>, _: &AttrReader<'_>| Ok(vec![a.get(0)?.clone()]),
        kernel: binarize,
    }
}

fn binarize(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let threshold = r.float("threshold");
    let out = x.to_f64().mapv(|v| if v > threshold { 1.0 } else { 0.0 });
    Ok(vec![Tensor::from_f64(x.dtype(), out)])
}

native! {
    /// ONNX-ML `ArrayFeatureExtractor`: the elements of input 0 at the positions input 1
    /// lists along its last axis (a vector is read as a matrix of one row).
    "ArrayFeatureExtractor" {
        domain: "ai.onnx.ml",
        versions: &[1],
        attrs: [],
        pattern: Injective,
        rel: extract_rel,
        kernel: extract,
    }
}

/// The output's dimensions: the data's but the last, then the number of positions.
fn extracted(data: &[Dim], positions: Dim) -> Vec<Dim> {
    match data {
        [_] => vec![Dim::Static(1), positions],
        [rest @ .., _] => rest.iter().copied().chain([positions]).collect(),
        [] => vec![positions],
    }
}

fn extract_rel(a: &Args<'_, TensorType>, _: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    let x = a.get(0)?;
    let i = a.of_dtype(1, |d| d == DType::Int64, "an int64 tensor")?;
    if x.rank() == 0 {
        return Err("`ArrayFeatureExtractor` of a scalar".into());
    }
    let n = i.num_elements().map_or(Dim::Any, |n| Dim::Static(n as i64));
    Ok(vec![TensorType {
        shape: extracted(&x.shape, n),
        dtype: x.dtype,
    }])
}

fn extract(a: &Args<'_, Tensor>, _: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let last = x.shape().len().checked_sub(1).ok_or("a scalar")?;
    let width = x.shape()[last];
    let positions = a
        .ints(1)?
        .into_iter()
        .map(|p| {
            usize::try_from(p)
                .ok()
                .filter(|&p| p < width)
                .ok_or_else(|| format!("`ArrayFeatureExtractor`: position {p} of {width}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let dims: Vec<Dim> = x.shape().iter().map(|&d| Dim::Static(d as i64)).collect();
    let shape: Vec<usize> = extracted(&dims, Dim::Static(positions.len() as i64))
        .iter()
        .map(|d| d.value().unwrap_or(0) as usize)
        .collect();
    fn pick<T: Clone>(
        a: &ArrayD<T>,
        axis: usize,
        at: &[usize],
        shape: &[usize],
    ) -> Result<ArrayD<T>, String> {
        let picked = a.select(Axis(axis), at);
        let shaped = picked.to_shape(IxDyn(shape)).map_err(|e| e.to_string())?;
        Ok(shaped.into_owned())
    }
    let out = match Elements::of(x) {
        Elements::Float(v) => Elements::Float(pick(&v, last, &positions, &shape)?),
        Elements::Int(v) => Elements::Int(pick(&v, last, &positions, &shape)?),
        Elements::Bool(v) => Elements::Bool(pick(&v, last, &positions, &shape)?),
    };
    Ok(vec![out.tensor(x.dtype())])
}

native! {
    /// ONNX-ML `LabelEncoder`: each element of the input (strings, integers or floats)
    /// mapped from `keys_*` to `values_*` (or `keys_tensor` to `values_tensor`), the default
    /// (`default_*`, `default_tensor`) where it is no key.
    "LabelEncoder" {
        domain: "ai.onnx.ml",
        versions: &[2, 4],
        attrs: [
            attr("keys_strings", AttrKind::Strs, AttrDefault::Strs(&[])),
            attr("keys_int64s", AttrKind::Ints, AttrDefault::Ints(&[])),
            attr("keys_floats", AttrKind::Floats, AttrDefault::Floats(&[])),
            attr("keys_tensor", AttrKind::Str, AttrDefault::Str("")),
            attr("values_strings", AttrKind::Strs, AttrDefault::Strs(&[])),
            attr("values_int64s", AttrKind::Ints, AttrDefault::Ints(&[])),
            attr("values_floats", AttrKind::Floats, AttrDefault::Floats(&[])),
            attr("values_tensor", AttrKind::Str, AttrDefault::Str("")),
            attr("default_string", AttrKind::Str, AttrDefault::Str("_Unused")),
            attr("default_int64", AttrKind::Int, AttrDefault::Int(-1)),
            attr("default_float", AttrKind::Float, AttrDefault::Float(-0.0)),
            attr("default_tensor", AttrKind::Str, AttrDefault::Str("")),
        ],
        tensor_attrs: ["keys_tensor", "values_tensor", "default_tensor"],
        value_rel: encode_rel,
        value_kernel: encode,
    }
}

/// A key or a value of a `LabelEncoder`: a string, or a number (a float by its bits, so that
/// it can be looked up).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Label {
    Str(String),
    Int(i64),
    Float(u64),
}

impl Label {
    fn float(v: f64) -> Label {
        // (One NaN, and 0 for -0.)
        let v = if v.is_nan() { f64::NAN } else { v + 0.0 };
        Label::Float(v.to_bits())
    }

    /// The labels of a value (a tensor of strings or of numbers), and its element type.
    fn all(v: &Value) -> Result<(Vec<Label>, Option<DType>), String> {
        if let Some(s) = v.as_opaque::<Strings>() {
            return Ok((s.0.iter().cloned().map(Label::Str).collect(), None));
        }
        let t = v
            .as_tensor()
            .ok_or_else(|| format!("`{v}` is not a tensor"))?;
        let labels = match t.dtype() {
            d if d.is_int() => t.to_i64().iter().map(|&i| Label::Int(i)).collect(),
            d if d.is_float() => t.to_f64().iter().map(|&f| Label::float(f)).collect(),
            d => return Err(format!("labels of {d}")),
        };
        Ok((labels, Some(t.dtype())))
    }
}

/// A `LabelEncoder`'s mapping: keys, values, the default, and the values' element type
/// (`None`: strings).
struct Mapping {
    keys: Vec<Label>,
    values: Vec<Label>,
    default: Label,
    dtype: Option<DType>,
}

impl Mapping {
    fn of(r: &AttrReader<'_>) -> Result<Mapping, String> {
        let strs = |n: &str| r.strs(n).into_iter().map(Label::Str).collect::<Vec<_>>();
        let ints = |n: &str| r.ints(n).into_iter().map(Label::Int).collect::<Vec<_>>();
        let floats = |n: &str| {
            let f = r.floats(n);
            f.into_iter()
                .map(|v| Label::float(f64::from(v as f32)))
                .collect::<Vec<_>>()
        };
        let first = |lists: Vec<(Vec<Label>, Option<DType>)>| {
            lists.into_iter().find(|(l, _)| !l.is_empty())
        };
        let keys = match tensor_attr(r, "keys_tensor")? {
            Some(t) => Label::all(&t)?.0,
            None => first(vec![
                (strs("keys_strings"), None),
                (ints("keys_int64s"), None),
                (floats("keys_floats"), None),
            ])
            .map(|(l, _)| l)
            .unwrap_or_default(),
        };
        let (values, dtype, default) = match tensor_attr(r, "values_tensor")? {
            Some(t) => {
                let (values, dtype) = Label::all(&t)?;
                let default = match tensor_attr(r, "default_tensor")? {
                    Some(d) => Label::all(&d)?
                        .0
                        .into_iter()
                        .next()
                        .ok_or("an empty default")?,
                    None => match dtype {
                        None => Label::Str("_Unused".into()),
                        Some(d) if d.is_int() => Label::Int(-1),
                        Some(_) => Label::float(-0.0),
                    },
                };
                (values, dtype, default)
            }
            None => {
                let (values, dtype) = first(vec![
                    (strs("values_strings"), None),
                    (ints("values_int64s"), Some(DType::Int64)),
                    (floats("values_floats"), Some(DType::Float32)),
                ])
                .ok_or("`LabelEncoder` without values")?;
                let default = match dtype {
                    None => Label::Str(r.str("default_string")),
                    Some(DType::Int64) => Label::Int(r.int("default_int64")),
                    Some(_) => Label::float(f64::from(r.float("default_float") as f32)),
                };
                (values, dtype, default)
            }
        };
        if keys.len() != values.len() {
            return Err(format!(
                "`LabelEncoder`: {} keys and {} values",
                keys.len(),
                values.len()
            ));
        }
        Ok(Mapping {
            keys,
            values,
            default,
            dtype,
        })
    }
}

fn encode_rel(a: &Args<'_, Type>, r: &AttrReader<'_>) -> Result<Vec<Type>, String> {
    let m = Mapping::of(r)?;
    let dims = match a.get(0)? {
        Type::Tensor(t) => t.shape.clone(),
        t => dims_of(t).ok_or_else(|| format!("`LabelEncoder` of {t}"))?,
    };
    Ok(vec![match m.dtype {
        Some(d) => Type::with_dims(dims, d),
        None => Strings::type_of(&dims),
    }])
}

/// `items` in an array of `shape`.
fn shaped<T>(shape: &[usize], items: Vec<T>) -> Result<ArrayD<T>, String> {
    ArrayD::from_shape_vec(IxDyn(shape), items).map_err(|e| e.to_string())
}

fn encode(a: &Args<'_, Value>, r: &AttrReader<'_>) -> Result<Vec<Value>, String> {
    let m = Mapping::of(r)?;
    let x = a.get(0)?;
    let (labels, _) = Label::all(x)?;
    let shape = match x.as_opaque::<Strings>() {
        Some(s) => s.0.shape().to_vec(),
        None => x
            .as_tensor()
            .map(|t| t.shape().to_vec())
            .unwrap_or_default(),
    };
    let table: HashMap<&Label, &Label> = m.keys.iter().zip(&m.values).collect();
    let out: Vec<&Label> = labels
        .iter()
        .map(|l| table.get(l).copied().unwrap_or(&m.default))
        .collect();
    Ok(vec![match m.dtype {
        None => {
            let items = out.iter().map(|l| match l {
                Label::Str(s) => Ok(s.clone()),
                other => Err(format!("`LabelEncoder`: {other:?} among string values")),
            });
            Value::opaque(Strings(shaped(&shape, items.collect::<Result<_, _>>()?)?))
        }
        Some(d) if d.is_int() => {
            let items = out.iter().map(|l| match l {
                Label::Int(i) => Ok(*i),
                other => Err(format!("`LabelEncoder`: {other:?} among integer values")),
            });
            Value::tensor(Tensor::from_i64(
                d,
                shaped(&shape, items.collect::<Result<_, _>>()?)?,
            ))
        }
        Some(d) => {
            let items = out.iter().map(|l| match l {
                Label::Float(bits) => Ok(f64::from_bits(*bits)),
                Label::Int(i) => Ok(*i as f64),
                Label::Str(s) => Err(format!("`LabelEncoder`: `{s}` among float values")),
            });
            Value::tensor(Tensor::from_f64(
                d,
                shaped(&shape, items.collect::<Result<_, _>>()?)?,
            ))
        }
    }])
}
