//! Reductions: `ReduceSum` (axes as an input, from version 13) and the reductions that take
//! their axes as an input from version 18 (`ReduceL1`, `ReduceL2`, `ReduceLogSum`,
//! `ReduceLogSumExp`, `ReduceSumSquare`, `ReduceMean`, `ReduceMax`, `ReduceMin`,
//! `ReduceProd`), `ArgMax`/`ArgMin`, `Hardmax` and `CumSum`. The IR's own reductions hold
//! those whose axes are known at import; these hold the others, and the ones the IR lacks.

use irpass_ir::op::{AttrDefault, AttrKind, AttrReader, axis};
use irpass_ir::{DType, Dim, Tensor, TensorType};
use ndarray::{ArrayD, Axis, IxDyn};

use super::{Args, attr, native};

/// The axes a reduction reduces (sorted, each once): input 1's, else every axis unless
/// `noop_with_empty_axes` says none.
fn reduced_axes(
    a: &Args<'_, Tensor>,
    r: &AttrReader<'_>,
    rank: usize,
) -> Result<Vec<usize>, String> {
    let given = match a.opt(1) {
        Some(_) => a.ints(1)?,
        None => Vec::new(),
    };
    if given.is_empty() {
        return Ok(if r.int("noop_with_empty_axes") != 0 {
            Vec::new()
        } else {
            (0..rank).collect()
        });
    }
    let mut axes = given
        .iter()
        .map(|&v| axis(a.op(), v, rank))
        .collect::<Result<Vec<_>, _>>()?;
    axes.sort_unstable();
    axes.dedup();
    Ok(axes)
}

/// A reduction's type: without an axes input, every axis (or none) is reduced; with one, the
/// reduced sizes are not known from types (the declared type gives them), nor the rank when
/// `keepdims` is 0.
fn reduce_type(a: &Args<'_, TensorType>, r: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    // (ReduceMax and ReduceMin take bools from version 20.)
    let bools = matches!(a.op(), "onnx.ReduceMax" | "onnx.ReduceMin");
    let x = a.of_dtype(0, |d| d != DType::Bool || bools, "a number tensor")?;
    let keep = r.int("keepdims") != 0;
    let shape = match a.opt(1) {
        None if r.int("noop_with_empty_axes") != 0 => x.shape.clone(),
        None if keep => vec![Dim::Static(1); x.rank()],
        None => Vec::new(),
        Some(_) if keep => vec![Dim::Any; x.rank()],
        Some(_) => match a.declared(0) {
            Some(d) => vec![Dim::Any; d.rank()],
            None => {
                return Err(format!(
                    "`{}` with axes given as a tensor and keepdims=0: the result's rank is not known",
                    a.op()
                ));
            }
        },
    };
    Ok(vec![TensorType {
        shape,
        dtype: x.dtype,
    }])
}

/// `x` reduced over `axes`: `fold` combines each lane's elements (an empty lane gives
/// `empty`).
fn reduce_with(
    x: &ArrayD<f64>,
    axes: &[usize],
    keep: bool,
    lane: impl Fn(&[f64]) -> f64,
) -> ArrayD<f64> {
    // The reduced axes moved last, then each lane of them reduced.
    let rank = x.ndim();
    let kept: Vec<usize> = (0..rank).filter(|i| !axes.contains(i)).collect();
    let order: Vec<usize> = kept.iter().chain(axes).copied().collect();
    let moved = x.view().permuted_axes(IxDyn(&order));
    let outer: Vec<usize> = kept.iter().map(|&i| x.shape()[i]).collect();
    let inner: usize = axes.iter().map(|&i| x.shape()[i]).product();
    let flat: Vec<f64> = moved.iter().copied().collect();
    let values: Vec<f64> = if inner == 0 {
        vec![lane(&[]); outer.iter().product()]
    } else {
        flat.chunks(inner).map(&lane).collect()
    };
    let shape: Vec<usize> = if keep {
        (0..rank)
            .map(|i| if axes.contains(&i) { 1 } else { x.shape()[i] })
            .collect()
    } else {
        outer
    };
    ArrayD::from_shape_vec(IxDyn(&shape), values).expect("one value per lane")
}

fn reduce_kernel(
    a: &Args<'_, Tensor>,
    r: &AttrReader<'_>,
    lane: impl Fn(&[f64]) -> f64,
) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let axes = reduced_axes(a, r, x.shape().len())?;
    let out = reduce_with(&x.to_f64(), &axes, r.int("keepdims") != 0, lane);
    Ok(vec![Tensor::from_f64(x.dtype(), out)])
}

fn sum(v: &[f64]) -> f64 {
    v.iter().sum()
}

macro_rules! reduction {
    ($(#[doc = $doc:literal])* $name:literal, $versions:expr, $lane:expr) => {
        native! {
            $(#[doc = $doc])*
            $name {
                versions: $versions,
                attrs: [
                    attr("keepdims", AttrKind::Int, AttrDefault::Int(1)),
                    attr("noop_with_empty_axes", AttrKind::Int, AttrDefault::Int(0)),
                ],
                pattern: CommReduce,
                rel: reduce_type,
                kernel: |a, r| reduce_kernel(a, r, $lane),
            }
        }
    };
}

reduction!(
    /// The sum over the axes input 1 lists (every axis when none).
    "ReduceSum", &[13], sum
);
reduction!(
    /// The mean over the axes input 1 lists (every axis when none).
    "ReduceMean", &[18], |v: &[f64]| sum(v) / v.len() as f64
);
reduction!(
    /// The largest element over the axes input 1 lists (every axis when none).
    "ReduceMax", &[18], |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
);
reduction!(
    /// The smallest element over the axes input 1 lists (every axis when none).
    "ReduceMin", &[18], |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min)
);
reduction!(
    /// The product over the axes input 1 lists (every axis when none).
    "ReduceProd", &[18], |v: &[f64]| v.iter().product()
);
reduction!(
    /// The sum of absolute values over the axes input 1 lists (every axis when none).
    "ReduceL1", &[18], |v: &[f64]| v.iter().map(|x| x.abs()).sum()
);
reduction!(
    /// The Euclidean norm over the axes input 1 lists (every axis when none).
    "ReduceL2", &[18], |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt()
);
reduction!(
    /// The sum of squares over the axes input 1 lists (every axis when none).
    "ReduceSumSquare", &[18], |v: &[f64]| v.iter().map(|x| x * x).sum()
);
reduction!(
    /// The logarithm of the sum over the axes input 1 lists (every axis when none).
    "ReduceLogSum", &[18], |v: &[f64]| sum(v).ln()
);
reduction!(
    /// log(sum(exp(x))) over the axes input 1 lists (every axis when none), computed stably.
    "ReduceLogSumExp", &[18], |v: &[f64]| {
        let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if m.is_infinite() {
            return m;
        }
        m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
    }
);

/// `ArgMax`/`ArgMin`'s type: int64, the axis kept as 1 or removed.
fn arg_type(a: &Args<'_, TensorType>, r: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    let x = a.of_dtype(0, |d| d != DType::Bool, "a number tensor")?;
    let ax = axis(a.op(), r.int("axis"), x.rank())?;
    let mut shape = x.shape.clone();
    if r.int("keepdims") != 0 {
        shape[ax] = Dim::Static(1);
    } else {
        shape.remove(ax);
    }
    Ok(vec![TensorType {
        shape,
        dtype: DType::Int64,
    }])
}

/// The index of the best element along `axis` by `better` (the first of equals, or the last
/// with `select_last_index`).
fn arg_kernel(
    a: &Args<'_, Tensor>,
    r: &AttrReader<'_>,
    better: fn(f64, f64) -> bool,
) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let ax = axis(a.op(), r.int("axis"), x.shape().len())?;
    let last = r.int("select_last_index") != 0;
    let values = x.to_f64();
    let mut out = values.map_axis(Axis(ax), |lane| {
        let mut best = 0usize;
        for (i, &v) in lane.iter().enumerate() {
            let b = lane[best];
            if better(v, b) || (last && v == b) {
                best = i;
            }
        }
        best as i64
    });
    if r.int("keepdims") != 0 {
        out.insert_axis_inplace(Axis(ax));
    }
    Ok(vec![Tensor::from_i64(DType::Int64, out)])
}

const ARG_ATTRS: [irpass_ir::op::AttrSpec; 3] = [
    attr("axis", AttrKind::Int, AttrDefault::Int(0)),
    attr("keepdims", AttrKind::Int, AttrDefault::Int(1)),
    attr("select_last_index", AttrKind::Int, AttrDefault::Int(0)),
];

native! {
    /// The index (int64) of the largest element along `axis`.
    "ArgMax" {
        versions: &[12],
        attrs: [ARG_ATTRS[0], ARG_ATTRS[1], ARG_ATTRS[2]],
        pattern: CommReduce,
        rel: arg_type,
        kernel: |a, r| arg_kernel(a, r, |v, b| v > b),
    }
}

native! {
    /// The index (int64) of the smallest element along `axis`.
    "ArgMin" {
        versions: &[12],
        attrs: [ARG_ATTRS[0], ARG_ATTRS[1], ARG_ATTRS[2]],
        pattern: CommReduce,
        rel: arg_type,
        kernel: |a, r| arg_kernel(a, r, |v, b| v < b),
    }
}

fn same_number(a: &Args<'_, TensorType>, _: &AttrReader<'_>) -> Result<Vec<TensorType>, String> {
    Ok(vec![
        a.of_dtype(0, |d| d != DType::Bool, "a number tensor")?
            .clone(),
    ])
}

native! {
    /// 1 where an element is the first largest along `axis`, 0 elsewhere.
    "Hardmax" {
        versions: &[13],
        attrs: [attr("axis", AttrKind::Int, AttrDefault::Int(-1))],
        pattern: OutEWiseFusable,
        rel: same_number,
        kernel: |a, r| {
            let x = a.get(0)?;
            let ax = axis(a.op(), r.int("axis"), x.shape().len())?;
            let mut values = x.to_f64();
            for mut lane in values.lanes_mut(Axis(ax)) {
                let best = (0..lane.len()).fold(0, |b, i| if lane[i] > lane[b] { i } else { b });
                for (i, v) in lane.iter_mut().enumerate() {
                    *v = f64::from(u8::from(i == best));
                }
            }
            Ok(vec![Tensor::from_f64(x.dtype(), values)])
        },
    }
}

native! {
    /// The running sum along the axis input 1 gives: `exclusive` leaves each element out
    /// of its own sum, `reverse` sums from the end.
    "CumSum" {
        versions: &[11],
        attrs: [
            attr("exclusive", AttrKind::Int, AttrDefault::Int(0)),
            attr("reverse", AttrKind::Int, AttrDefault::Int(0)),
        ],
        pattern: Injective,
        rel: same_number,
        kernel: cum_sum,
    }
}

fn cum_sum(a: &Args<'_, Tensor>, r: &AttrReader<'_>) -> Result<Vec<Tensor>, String> {
    let x = a.get(0)?;
    let ax = axis(a.op(), a.int(1)?, x.shape().len())?;
    let (exclusive, reverse) = (r.int("exclusive") != 0, r.int("reverse") != 0);
    let scan = |lane: &mut dyn Iterator<Item = &mut f64>| {
        let mut acc = 0.0;
        for v in lane {
            let here = *v;
            if exclusive {
                *v = acc;
                acc += here;
            } else {
                acc += here;
                *v = acc;
            }
        }
    };
    if x.dtype().is_float() {
        let mut values = x.to_f64();
        for mut lane in values.lanes_mut(Axis(ax)) {
            if reverse {
                scan(&mut lane.iter_mut().rev());
            } else {
                scan(&mut lane.iter_mut());
            }
        }
        return Ok(vec![Tensor::from_f64(x.dtype(), values)]);
    }
    // Integers summed exactly.
    let mut values = x.to_i64();
    for mut lane in values.lanes_mut(Axis(ax)) {
        let n = lane.len();
        let mut acc = 0i64;
        for k in 0..n {
            let i = if reverse { n - 1 - k } else { k };
            let here = lane[i];
            if exclusive {
                lane[i] = acc;
                acc = acc.wrapping_add(here);
            } else {
                acc = acc.wrapping_add(here);
                lane[i] = acc;
            }
        }
    }
    Ok(vec![Tensor::from_i64(x.dtype(), values)])
}
