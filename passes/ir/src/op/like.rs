//! Operators that take a shape or a dtype from another tensor, or make one: `cast_like`,
//! `reshape_like`, `broadcast_to`, `broadcast_to_like`, `full`, `full_like`, `shape_of`,
//! `ndarray_size`.

use ndarray::{ArrayD, IxDyn};

use super::util::*;
use super::{Arity, AttrDefault, AttrKind, AttrReader, AttrSpec, OpDef, OpPattern};
use crate::{DType, Dim, Tensor, TensorType, Type, Value};

fn dims(shape: &[usize]) -> Vec<Dim> {
    shape.iter().map(|&d| Dim::Static(d as i64)).collect()
}

fn concrete(op: &str, shape: &[Dim]) -> Result<Vec<usize>, String> {
    shape
        .iter()
        .map(|d| {
            d.value()
                .and_then(|v| usize::try_from(v).ok())
                .ok_or_else(|| format!("`{op}` needs a static shape"))
        })
        .collect()
}

/// `t` broadcast to `shape` (which it must broadcast to exactly).
fn broadcast_tensor(op: &str, t: &Tensor, shape: &[usize]) -> Result<Tensor, String> {
    let err = || {
        format!(
            "`{op}`: a tensor of shape {:?} does not broadcast to {shape:?}",
            t.shape()
        )
    };
    if t.dtype().is_float() {
        let a = t.to_f64();
        let b = a.broadcast(IxDyn(shape)).ok_or_else(err)?.to_owned();
        Ok(Tensor::from_f64(t.dtype(), b))
    } else {
        let a = t.to_i64();
        let b = a.broadcast(IxDyn(shape)).ok_or_else(err)?.to_owned();
        Ok(Tensor::from_i64(t.dtype(), b))
    }
}

/// The result type of broadcasting `x` to `shape`: `shape` itself, if `x` broadcasts to it.
fn broadcast_to_rel(op: &str, x: &TensorType, shape: Vec<Dim>) -> Result<Type, String> {
    let joint = broadcast_shapes(&x.shape, &shape).map_err(|e| format!("`{op}`: {e}"))?;
    if joint.len() != shape.len() || joint.iter().zip(&shape).any(|(a, b)| !dims_match(*a, *b)) {
        return Err(format!(
            "`{op}`: `{x}` does not broadcast to {}",
            shape_text(&shape)
        ));
    }
    Ok(Type::with_dims(shape, x.dtype))
}

inventory::submit! {
    OpDef {
        name: "cast_like",
        description: "Converts the elements to the dtype of the second tensor.",
        arity: Arity::Exact(2),
        attrs: &[],
        pattern: OpPattern::ElemWise,
        type_rel: |args, r| {
            let op = r.op_name();
            let (x, like) = (tensor_ty(op, args, 0)?, tensor_ty(op, args, 1)?);
            Ok(Type::with_dims(x.shape.clone(), like.dtype))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let (x, like) = (tensor_arg(op, args, 0)?, tensor_arg(op, args, 1)?);
            Ok(Value::tensor(x.cast(like.dtype())))
        },
    }
}

/// `reshape_like`'s output shape: the data's dimensions before `lhs_begin` and from `lhs_end`,
/// the other tensor's from `rhs_begin` to `rhs_end` between them.
fn reshape_like_shape(
    op: &str,
    data: &[Dim],
    like: &[Dim],
    r: &AttrReader<'_>,
) -> Result<Vec<Dim>, String> {
    let bound = |v: Option<i64>, rank: usize, default: usize| -> Result<usize, String> {
        match v {
            None => Ok(default),
            Some(v) => {
                let v = if v < 0 { v + rank as i64 } else { v };
                usize::try_from(v)
                    .ok()
                    .filter(|&v| v <= rank)
                    .ok_or_else(|| format!("`{op}`: a bound is out of range for rank {rank}"))
            }
        }
    };
    let (lb, le) = (
        bound(r.opt_int("lhs_begin"), data.len(), 0)?,
        bound(r.opt_int("lhs_end"), data.len(), data.len())?,
    );
    let (rb, re) = (
        bound(r.opt_int("rhs_begin"), like.len(), 0)?,
        bound(r.opt_int("rhs_end"), like.len(), like.len())?,
    );
    if lb > le || rb > re {
        return Err(format!("`{op}`: a begin bound is after its end bound"));
    }
    let mut shape = data[..lb].to_vec();
    shape.extend(&like[rb..re]);
    shape.extend(&data[le..]);
    if let (Some(Some(a)), Some(Some(b))) = (static_product(data), static_product(&shape))
        && a != b
    {
        return Err(format!(
            "`{op}`: cannot reshape {} ({a} elements) into {} ({b} elements)",
            shape_text(data),
            shape_text(&shape)
        ));
    }
    Ok(shape)
}

inventory::submit! {
    OpDef {
        name: "reshape_like",
        description: "Reshapes to the shape of (a range of the axes of) the second tensor.",
        arity: Arity::Exact(2),
        attrs: &[
            AttrSpec { name: "lhs_begin", kind: AttrKind::OptInt, default: AttrDefault::Int(0) },
            AttrSpec { name: "lhs_end", kind: AttrKind::OptInt, default: AttrDefault::Null },
            AttrSpec { name: "rhs_begin", kind: AttrKind::OptInt, default: AttrDefault::Int(0) },
            AttrSpec { name: "rhs_end", kind: AttrKind::OptInt, default: AttrDefault::Null },
        ],
        pattern: OpPattern::Injective,
        type_rel: |args, r| {
            let op = r.op_name();
            let (x, like) = (tensor_ty(op, args, 0)?, tensor_ty(op, args, 1)?);
            Ok(Type::with_dims(reshape_like_shape(op, &x.shape, &like.shape, r)?, x.dtype))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let (x, like) = (tensor_arg(op, args, 0)?, tensor_arg(op, args, 1)?);
            let shape = reshape_like_shape(op, &dims(x.shape()), &dims(like.shape()), r)?;
            Ok(Value::tensor(x.reshape(&concrete(op, &shape)?)?))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "broadcast_to",
        description: "Broadcasts to a shape.",
        arity: Arity::Exact(1),
        attrs: &[AttrSpec { name: "shape", kind: AttrKind::Ints, default: AttrDefault::Required }],
        pattern: OpPattern::Broadcast,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            let shape: Vec<Dim> = r.shape("shape")?.into_iter().map(|d| Dim::Static(d as i64)).collect();
            broadcast_to_rel(op, x, shape)
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let shape = r.shape("shape")?;
            Ok(Value::tensor(broadcast_tensor(op, x, &shape)?))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "broadcast_to_like",
        description: "Broadcasts to the shape of the second tensor.",
        arity: Arity::Exact(2),
        attrs: &[],
        pattern: OpPattern::Broadcast,
        type_rel: |args, r| {
            let op = r.op_name();
            let (x, like) = (tensor_ty(op, args, 0)?, tensor_ty(op, args, 1)?);
            broadcast_to_rel(op, x, like.shape.clone())
        },
        kernel: |args, r| {
            let op = r.op_name();
            let (x, like) = (tensor_arg(op, args, 0)?, tensor_arg(op, args, 1)?);
            Ok(Value::tensor(broadcast_tensor(op, x, like.shape())?))
        },
    }
}

fn scalar_fill<'a>(op: &str, args: &'a [Type], i: usize) -> Result<&'a TensorType, String> {
    let v = tensor_ty(op, args, i)?;
    if v.rank() != 0 {
        return Err(format!("`{op}` needs a scalar fill value, got `{v}`"));
    }
    Ok(v)
}

fn filled(fill: &Tensor, dtype: DType, shape: &[usize]) -> Tensor {
    let value = fill.cast(dtype);
    if dtype.is_float() {
        let v = value.to_f64().iter().next().copied().unwrap_or(0.0);
        Tensor::from_f64(dtype, ArrayD::from_elem(IxDyn(shape), v))
    } else {
        let v = value.to_i64().iter().next().copied().unwrap_or(0);
        Tensor::from_i64(dtype, ArrayD::from_elem(IxDyn(shape), v))
    }
}

inventory::submit! {
    OpDef {
        name: "full",
        description: "A tensor of a shape and dtype (default: the fill value's) with every element the scalar fill value.",
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec { name: "shape", kind: AttrKind::Ints, default: AttrDefault::Required },
            AttrSpec { name: "dtype", kind: AttrKind::DType, default: AttrDefault::Str("") },
        ],
        pattern: OpPattern::ElemWise,
        type_rel: |args, r| {
            let op = r.op_name();
            let v = scalar_fill(op, args, 0)?;
            let shape: Vec<Dim> = r.shape("shape")?.into_iter().map(|d| Dim::Static(d as i64)).collect();
            Ok(Type::with_dims(shape, dtype_or(r.dtype("dtype"), v.dtype)))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let v = tensor_arg(op, args, 0)?;
            let shape = r.shape("shape")?;
            checked_size(op, &shape)?;
            Ok(Value::tensor(filled(v, dtype_or(r.dtype("dtype"), v.dtype()), &shape)))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "full_like",
        description: "A tensor of the first tensor's shape and dtype with every element the scalar fill value.",
        arity: Arity::Exact(2),
        attrs: &[],
        pattern: OpPattern::ElemWise,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            scalar_fill(op, args, 1)?;
            Ok(Type::Tensor(x.clone()))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let (x, v) = (tensor_arg(op, args, 0)?, tensor_arg(op, args, 1)?);
            Ok(Value::tensor(filled(v, x.dtype(), x.shape())))
        },
    }
}

/// The dtype a shape query gives (int32 unless asked otherwise; TVM allows any).
fn int_dtype(_op: &str, r: &AttrReader<'_>) -> Result<DType, String> {
    Ok(dtype_or(r.dtype("dtype"), DType::Int32))
}

inventory::submit! {
    OpDef {
        name: "shape_of",
        description: "The shape of a tensor, as a 1-D tensor (int32 unless `dtype` says otherwise).",
        arity: Arity::Exact(1),
        attrs: &[AttrSpec { name: "dtype", kind: AttrKind::DType, default: AttrDefault::Str("int32") }],
        pattern: OpPattern::Opaque,
        type_rel: |args, r| {
            let op = r.op_name();
            let x = tensor_ty(op, args, 0)?;
            Ok(Type::with_dims(vec![Dim::Static(x.rank() as i64)], int_dtype(op, r)?))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            let values: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
            let a = ArrayD::from_shape_vec(IxDyn(&[values.len()]), values).map_err(|e| e.to_string())?;
            Ok(Value::tensor(Tensor::from_i64(int_dtype(op, r)?, a)))
        },
    }
}

inventory::submit! {
    OpDef {
        name: "ndarray_size",
        description: "The number of elements of a tensor, as a scalar (int32 unless `dtype` says otherwise).",
        arity: Arity::Exact(1),
        attrs: &[AttrSpec { name: "dtype", kind: AttrKind::DType, default: AttrDefault::Str("int32") }],
        pattern: OpPattern::Opaque,
        type_rel: |args, r| {
            let op = r.op_name();
            tensor_ty(op, args, 0)?;
            Ok(Type::with_dims(Vec::new(), int_dtype(op, r)?))
        },
        kernel: |args, r| {
            let op = r.op_name();
            let x = tensor_arg(op, args, 0)?;
            Ok(Value::tensor(Tensor::scalar_i64(int_dtype(op, r)?, x.len() as i64)))
        },
    }
}
