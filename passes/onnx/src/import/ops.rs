//! Per-operator conversion: each ONNX operator, as its opset version defines it, becomes
//! operator calls of the IR. Adding an operator is one arm of [`convert`] and its name in
//! [`KNOWN`].

use std::sync::Arc;

use irpass_ir::{AttrValue, Attrs, DType, Dim, ExprId, Tensor};

use super::Importer;
use super::attrs::NodeAttrs;
use super::symbolic::Size;
use crate::proto::NodeProto;
use crate::tensor::{DataDir, dtype_of, tensor_of};

/// Why a node was not converted.
pub(crate) enum Failure {
    /// A use the importer does not support (an attribute value, a dynamic shape).
    Unsupported(String),
    /// The node is malformed (a missing input, an attribute of the wrong kind).
    Invalid(String),
}

type R<T> = Result<T, Failure>;

fn unsupported<T>(why: impl Into<String>) -> R<T> {
    Err(Failure::Unsupported(why.into()))
}

fn invalid<T>(why: impl Into<String>) -> R<T> {
    Err(Failure::Invalid(why.into()))
}

/// The operators of the default domain the importer converts with code of their own (besides
/// those of [`crate::same::SAME`]).
pub(crate) const KNOWN: &[&str] = &[
    "AveragePool",
    "BatchNormalization",
    "Cast",
    "CastLike",
    "Clip",
    "Concat",
    "Constant",
    "ConstantOfShape",
    "Conv",
    "Dropout",
    "Expand",
    "Flatten",
    "Gather",
    "Gemm",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "GreaterOrEqual",
    "HardSigmoid",
    "HardSwish",
    "Identity",
    "LRN",
    "LayerNormalization",
    "LeakyRelu",
    "LessOrEqual",
    "LogSoftmax",
    "Max",
    "MaxPool",
    "Mean",
    "Min",
    "Mod",
    "Pad",
    "Pow",
    "Reciprocal",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "Reshape",
    "Shape",
    "Size",
    "Slice",
    "Softmax",
    "Split",
    "Squeeze",
    "Sum",
    "Transpose",
    "Unsqueeze",
];

/// Whether the importer converts `op_type` (of the default domain).
pub(crate) fn known(op_type: &str) -> bool {
    KNOWN.contains(&op_type) || crate::same::ir_of(op_type).is_some()
}

/// Whether [`convert`] takes `node` at `opset` (a default-domain operator it knows, whose
/// version there it implements); why not, otherwise.
pub(crate) fn convertible(node: &NodeProto, opset: i64) -> R<()> {
    let op = node.op_type();
    if !matches!(node.domain(), "" | "ai.onnx") || !known(op) {
        return unsupported(format!("{op} has no conversion"));
    }
    crate::opset::check(op, opset).or_else(unsupported)
}

/// A node being converted: its inputs and attributes, and the importer.
struct Cx<'i, 'n> {
    imp: &'i mut Importer,
    node: &'n NodeProto,
    inputs: &'n [Option<ExprId>],
    attrs: NodeAttrs<'n>,
}

impl Cx<'_, '_> {
    /// Input `i`, which must be given.
    fn input(&self, i: usize) -> R<ExprId> {
        match self.inputs.get(i) {
            Some(Some(e)) => Ok(*e),
            _ => invalid(format!("input {i} is missing")),
        }
    }

    /// Input `i` if given.
    fn opt_input(&self, i: usize) -> Option<ExprId> {
        self.inputs.get(i).copied().flatten()
    }

    fn op(&mut self, name: &str, args: &[ExprId], attrs: Attrs) -> R<ExprId> {
        self.imp.b.op(name, args, attrs).map_err(Failure::Invalid)
    }

    fn op0(&mut self, name: &str, args: &[ExprId]) -> R<ExprId> {
        self.op(name, args, Attrs::new())
    }

    /// A scalar constant of `dtype`.
    fn scalar(&mut self, dtype: DType, v: f64) -> ExprId {
        self.imp.b.constant(Arc::new(Tensor::scalar(dtype, v)))
    }

    fn dtype(&mut self, e: ExprId) -> R<DType> {
        match self.imp.tensor_type(e) {
            Some(t) => Ok(t.dtype),
            None => invalid("an input's type is unknown (an ill-typed graph?)"),
        }
    }

    fn rank(&mut self, e: ExprId) -> R<usize> {
        match self.imp.tensor_type(e) {
            Some(t) => Ok(t.rank()),
            None => invalid("an input's type is unknown (an ill-typed graph?)"),
        }
    }

    fn static_shape(&mut self, e: ExprId, what: &str) -> R<Vec<usize>> {
        match self.imp.static_shape(e) {
            Some(s) => Ok(s),
            None => unsupported(format!(
                "{what} needs a static input shape (fix it with --input-shape)"
            )),
        }
    }

    /// The integers of input `i`, which must be known at import time.
    fn const_ints(&mut self, i: usize, what: &str) -> R<Vec<i64>> {
        let e = self.input(i)?;
        match self.imp.constant(e) {
            Some(t) => Ok(t.values().iter().map(|&v| v as i64).collect()),
            None => unsupported(format!("{what} (input {i}) is not a constant")),
        }
    }

    /// The scalar float of input `i` if given, which must be a constant.
    fn const_scalar(&mut self, i: usize, what: &str) -> R<Option<f64>> {
        let Some(e) = self.opt_input(i) else {
            return Ok(None);
        };
        match self.imp.constant(e) {
            Some(t) if t.len() == 1 => Ok(Some(t.values()[0])),
            Some(_) => invalid(format!("{what} is not a scalar")),
            None => unsupported(format!("{what} (input {i}) is not a constant")),
        }
    }

    /// An axis attribute or value normalised against `rank`.
    fn axis(&self, axis: i64, rank: usize) -> R<usize> {
        let r = rank as i64;
        if axis < -r || axis >= r.max(1) {
            return invalid(format!("axis {axis} is out of range for rank {rank}"));
        }
        Ok(if axis < 0 {
            (axis + r) as usize
        } else {
            axis as usize
        })
    }

    fn reshape(&mut self, e: ExprId, shape: &[usize]) -> R<ExprId> {
        let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        self.op(
            "reshape",
            &[e],
            Attrs::from_pairs([("newshape", ints(&dims))]),
        )
    }
}

fn ints(v: &[i64]) -> AttrValue {
    AttrValue::List(v.iter().map(|&i| AttrValue::Int(i)).collect())
}

/// Converts `node`; returns its outputs in order (fewer than the node has when the later
/// ones are not converted: a node that uses one of those is reported).
pub(crate) fn convert(
    imp: &mut Importer,
    node: &NodeProto,
    inputs: &[Option<ExprId>],
) -> R<Vec<ExprId>> {
    let mut cx = Cx {
        imp,
        node,
        inputs,
        attrs: NodeAttrs(node),
    };
    let op = node.op_type();
    // Split is the one operator with several outputs.
    if op == "Split" {
        return split(&mut cx);
    }
    for family in [convert_elementwise, convert_nn, convert_shape] {
        if let Some(out) = family(&mut cx, op)? {
            return Ok(vec![out]);
        }
    }
    unsupported(format!("{op} has no conversion"))
}

/// Elementwise operators: arithmetic, comparisons, activations, casts.
fn convert_elementwise(cx: &mut Cx<'_, '_>, op: &str) -> R<Option<ExprId>> {
    if let Some((ir, n)) = crate::same::ir_of(op) {
        return Ok(Some(match n {
            1 => unary(cx, ir)?,
            2 => binary(cx, ir)?,
            _ => {
                let args = (0..n).map(|i| cx.input(i)).collect::<R<Vec<_>>>()?;
                cx.op0(ir, &args)?
            }
        }));
    }
    Ok(Some(match op {
        // Inference: Dropout passes its input (its mask output is not converted; a node
        // that uses it is reported). In training mode (input 2, unless a constant false, and
        // a ratio other than a constant 0) it draws: the native `onnx.Dropout`.
        "Dropout" => {
            let training = cx.const_scalar(2, "training_mode")?.unwrap_or(0.0) != 0.0;
            if training && cx.const_scalar(1, "ratio")? != Some(0.0) {
                return unsupported("Dropout in training mode draws random numbers");
            }
            cx.input(0)?
        }
        "Identity" => cx.input(0)?,
        "Reciprocal" => {
            let x = cx.input(0)?;
            let dtype = cx.dtype(x)?;
            let one = cx.scalar(dtype, 1.0);
            cx.op0("divide", &[one, x])?
        }
        "Pow" => pow(cx)?,
        "LessOrEqual" => binary(cx, "less_equal")?,
        "GreaterOrEqual" => binary(cx, "greater_equal")?,
        // `fmod=1`: C's fmod (the sign of the dividend); 0 (integers only): the divisor's.
        "Mod" if cx.attrs.int_or("fmod", 0) != 0 => binary(cx, "mod")?,
        "Mod" => {
            let x = cx.input(0)?;
            if cx.dtype(x)?.is_float() {
                return invalid("Mod of floats needs fmod=1");
            }
            binary(cx, "floor_mod")?
        }
        "HardSigmoid" | "HardSwish" => hard(cx, op == "HardSwish")?,
        "Sum" | "Max" | "Min" | "Mean" => variadic(cx, op)?,
        "LeakyRelu" => {
            let x = cx.input(0)?;
            let alpha = cx.attrs.float_or("alpha", 0.01);
            cx.op(
                "nn.leaky_relu",
                &[x],
                Attrs::from_pairs([("alpha", AttrValue::Float(alpha))]),
            )?
        }
        "Clip" => clip(cx)?,
        "CastLike" => {
            let like = cx.input(1)?;
            let to = cx.dtype(like)?;
            exact_cast(cx, to)?;
            binary(cx, "cast_like")?
        }
        "Size" => {
            let x = cx.input(0)?;
            cx.op(
                "ndarray_size",
                &[x],
                Attrs::from_pairs([("dtype", AttrValue::Str("int64".into()))]),
            )?
        }
        "Cast" => {
            let x = cx.input(0)?;
            let to = cx
                .attrs
                .int("to")
                .ok_or_else(|| Failure::Invalid("no `to`".into()))?;
            let dtype = dtype_of(to as i32).map_err(|e| Failure::Unsupported(e.to_string()))?;
            exact_cast(cx, dtype)?;
            cast(cx, x, dtype)?
        }
        _ => return Ok(None),
    }))
}

/// Whether a `Cast`/`CastLike` to `to` rounds as the IR's `cast` does (`DType::round_float`):
/// a float8 cast with `saturate=0` (overflow to infinity or NaN) or a float8e8m0 cast with
/// another `round_mode` than `up` does not, and is kept opaque.
fn exact_cast(cx: &Cx<'_, '_>, to: DType) -> R<()> {
    let float8 = to.is_float() && to.bits() == 8;
    if float8 && cx.attrs.int_or("saturate", 1) == 0 {
        return unsupported(format!("a cast to {to} with saturate=0"));
    }
    let round_mode = cx.attrs.string("round_mode");
    if to == DType::Float8E8M0 && round_mode.as_deref().is_some_and(|m| m != "up") {
        return unsupported(format!(
            "a cast to {to} with round_mode={}",
            round_mode.unwrap_or_default()
        ));
    }
    Ok(())
}

/// Neural-network layers: convolution, pooling, normalisations, dense products, softmax.
fn convert_nn(cx: &mut Cx<'_, '_>, op: &str) -> R<Option<ExprId>> {
    Ok(Some(match op {
        "LayerNormalization" => layer_norm(cx)?,
        "Conv" => conv(cx)?,
        "MaxPool" | "AveragePool" => pool(cx, op == "MaxPool")?,
        "GlobalAveragePool" => global_pool(cx, "nn.global_avg_pool2d")?,
        "GlobalMaxPool" => global_pool(cx, "nn.global_max_pool2d")?,
        "BatchNormalization" => batch_norm(cx)?,
        "LRN" => {
            let x = cx.input(0)?;
            let size = cx
                .attrs
                .int("size")
                .ok_or_else(|| Failure::Invalid("no `size`".into()))?;
            let attrs = Attrs::from_pairs([
                ("size", AttrValue::Int(size)),
                ("axis", AttrValue::Int(1)),
                ("alpha", AttrValue::Float(cx.attrs.float_or("alpha", 1e-4))),
                ("beta", AttrValue::Float(cx.attrs.float_or("beta", 0.75))),
                ("bias", AttrValue::Float(cx.attrs.float_or("bias", 1.0))),
            ]);
            cx.op("nn.lrn", &[x], attrs)?
        }
        "Gemm" => gemm(cx)?,
        "Softmax" => softmax(cx, "nn.softmax")?,
        "LogSoftmax" => softmax(cx, "nn.log_softmax")?,
        _ => return Ok(None),
    }))
}

/// Constants, shapes, layouts, slicing, gathering and reductions.
fn convert_shape(cx: &mut Cx<'_, '_>, op: &str) -> R<Option<ExprId>> {
    Ok(Some(match op {
        "Slice" => slice(cx)?,
        "Pad" => pad(cx)?,
        "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" | "ReduceProd" => reduce(cx, op)?,
        "Expand" => expand(cx)?,
        "Constant" => constant(cx)?,
        "ConstantOfShape" => constant_of_shape(cx)?,
        "Shape" => shape(cx)?,
        "Gather" => {
            let (data, indices) = (cx.input(0)?, cx.input(1)?);
            let rank = cx.rank(data)?;
            let axis = cx.axis(cx.attrs.int_or("axis", 0), rank)?;
            // ONNX counts negative indices from the end: `wrap` mode does too.
            let attrs = Attrs::from_pairs([
                ("axis", AttrValue::Int(axis as i64)),
                ("mode", AttrValue::Str("wrap".into())),
            ]);
            cx.op("take", &[data, indices], attrs)?
        }
        "Concat" => {
            let parts: Vec<ExprId> = (0..cx.inputs.len())
                .map(|i| cx.input(i))
                .collect::<R<_>>()?;
            let rank = cx.rank(parts[0])?;
            let axis = cx.axis(
                cx.attrs
                    .int("axis")
                    .ok_or_else(|| Failure::Invalid("no `axis`".into()))?,
                rank,
            )?;
            let t = cx.imp.b.tuple(&parts);
            cx.op(
                "concatenate",
                &[t],
                Attrs::from_pairs([("axis", AttrValue::Int(axis as i64))]),
            )?
        }
        "Reshape" => reshape(cx)?,
        "Flatten" => flatten(cx)?,
        "Transpose" => {
            let x = cx.input(0)?;
            let rank = cx.rank(x)?;
            let perm: Vec<i64> = match cx.attrs.ints("perm") {
                Some(p) => p.to_vec(),
                None => (0..rank as i64).rev().collect(),
            };
            cx.op(
                "transpose",
                &[x],
                Attrs::from_pairs([("axes", ints(&perm))]),
            )?
        }
        "Unsqueeze" => unsqueeze(cx)?,
        "Squeeze" => squeeze(cx)?,
        _ => return Ok(None),
    }))
}

fn unary(cx: &mut Cx<'_, '_>, name: &str) -> R<ExprId> {
    let x = cx.input(0)?;
    cx.op0(name, &[x])
}

fn binary(cx: &mut Cx<'_, '_>, name: &str) -> R<ExprId> {
    let (a, mut b) = (cx.input(0)?, cx.input(1)?);
    // Before opset 7 the second operand broadcasts only with `broadcast=1`, its axes aligned
    // with the first's from `axis` on (the trailing ones by default, as numpy aligns them):
    // ones after it make numpy align it there.
    if cx.imp.opset < crate::opset::NUMPY_BROADCAST_OPSET
        && cx.attrs.int_or("broadcast", 0) != 0
        && let Some(axis) = cx.attrs.int("axis")
    {
        let (rank_a, rank_b) = (cx.rank(a)?, cx.rank(b)?);
        let axis = cx.axis(axis, rank_a)?;
        let Some(trailing) = rank_a.checked_sub(axis + rank_b) else {
            return invalid(format!(
                "the second operand (rank {rank_b}) does not fit the first (rank {rank_a}) from axis {axis}"
            ));
        };
        if trailing > 0 {
            let attrs = Attrs::from_pairs([
                ("axis", AttrValue::Int(rank_b as i64)),
                ("num_newaxis", AttrValue::Int(trailing as i64)),
            ]);
            b = cx.op("expand_dims", &[b], attrs)?;
        }
    }
    cx.op0(name, &[a, b])
}

/// `Pow`: from opset 12 the exponent may have another dtype than the base, and the result has
/// the base's. Mixed operands are computed in float64 (every exponent ONNX allows, and the
/// integers below 2^53, exactly) and cast back to the base's dtype.
fn pow(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let (base, exponent) = (cx.input(0)?, cx.input(1)?);
    let dtype = cx.dtype(base)?;
    if cx.dtype(exponent)? == dtype {
        return cx.op0("power", &[base, exponent]);
    }
    let wide = [
        cast(cx, base, DType::Float64)?,
        cast(cx, exponent, DType::Float64)?,
    ];
    let power = cx.op0("power", &wide)?;
    cast(cx, power, dtype)
}

/// `e` cast to `to`.
fn cast(cx: &mut Cx<'_, '_>, e: ExprId, to: DType) -> R<ExprId> {
    cx.op(
        "cast",
        &[e],
        Attrs::from_pairs([("dtype", AttrValue::Str(to.name().into()))]),
    )
}

/// `Sum`, `Max`, `Min`, `Mean` of any number of inputs, broadcast.
fn variadic(cx: &mut Cx<'_, '_>, op: &str) -> R<ExprId> {
    let name = match op {
        "Sum" | "Mean" => "add",
        "Max" => "maximum",
        _ => "minimum",
    };
    let n = cx.inputs.len();
    let mut acc = cx.input(0)?;
    for i in 1..n {
        let x = cx.input(i)?;
        acc = cx.op0(name, &[acc, x])?;
    }
    if op == "Mean" && n > 1 {
        let dtype = cx.dtype(acc)?;
        let d = cx.scalar(dtype, n as f64);
        acc = cx.op0("divide", &[acc, d])?;
    }
    Ok(acc)
}

/// `Clip`: bounds as attributes before opset 11, as optional constant inputs from 11.
fn clip(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let x = cx.input(0)?;
    let dtype = cx.dtype(x)?;
    if !dtype.is_float() {
        return unsupported("Clip of an integer tensor");
    }
    let (lo_default, hi_default) = (-dtype.max_finite(), dtype.max_finite());
    let (lo, hi) = if cx.imp.opset < 11 {
        (
            cx.attrs.float_or("min", lo_default),
            cx.attrs.float_or("max", hi_default),
        )
    } else {
        (
            cx.const_scalar(1, "the minimum")?.unwrap_or(lo_default),
            cx.const_scalar(2, "the maximum")?.unwrap_or(hi_default),
        )
    };
    cx.op(
        "clip",
        &[x],
        Attrs::from_pairs([
            ("a_min", AttrValue::Float(lo)),
            ("a_max", AttrValue::Float(hi)),
        ]),
    )
}

/// `Constant`: a tensor, or (from opset 12) a float, an int or a list of them.
fn constant(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let a = &cx.attrs;
    let t = if let Some(t) = a.tensor("value") {
        if super::opaque::is_opaque_tensor(t) {
            return unsupported("a Constant of strings or complex numbers");
        }
        tensor_of(t, DataDir(None)).map_err(|e| Failure::Invalid(e.to_string()))?
    } else if a.has("value_float") {
        Tensor::scalar(DType::Float32, a.float_or("value_float", 0.0))
    } else if let Some(v) = a.int("value_int") {
        Tensor::scalar_i64(DType::Int64, v)
    } else if let Some(v) = a.floats("value_floats") {
        let values = v.iter().map(|&x| f64::from(x)).collect();
        Tensor::from_vec(DType::Float32, &[v.len()], values).map_err(Failure::Invalid)?
    } else if let Some(v) = a.ints("value_ints") {
        let values = v.iter().map(|&x| x as f64).collect();
        Tensor::from_vec(DType::Int64, &[v.len()], values).map_err(Failure::Invalid)?
    } else {
        return unsupported("a Constant that is not a tensor, a float, an int or a list of them");
    };
    Ok(cx.imp.b.constant(Arc::new(t)))
}

/// A `ConstantOfShape`'s fill, a scalar: its `value` (one element), a float32 zero when left
/// out.
pub(super) fn fill_value(value: Option<&crate::proto::TensorProto>) -> Result<Tensor, String> {
    let value = match value {
        Some(t) => tensor_of(t, DataDir(None)).map_err(|e| e.to_string())?,
        None => Tensor::scalar(DType::Float32, 0.0),
    };
    match value.values()[..] {
        [v] => Ok(Tensor::scalar(value.dtype(), v)),
        _ => Err("the value is not one element".into()),
    }
}

/// `ConstantOfShape`: `full` of the value (default a float32 zero), the shape a constant.
fn constant_of_shape(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let shape = cx.const_ints(0, "the shape")?;
    if let Some(d) = shape.iter().find(|&&d| d < 0) {
        return invalid(format!("negative dimension {d}"));
    }
    let v = fill_value(cx.attrs.tensor("value")).map_err(Failure::Invalid)?;
    let fill = cx.imp.b.constant(Arc::new(v));
    cx.op(
        "full",
        &[fill],
        Attrs::from_pairs([("shape", ints(&shape))]),
    )
}

/// `Shape` (with `start`/`end` from opset 15) as `shape_of` in int64.
fn shape(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let x = cx.input(0)?;
    let s = cx.op(
        "shape_of",
        &[x],
        Attrs::from_pairs([("dtype", AttrValue::Str("int64".into()))]),
    )?;
    if !(cx.attrs.has("start") || cx.attrs.has("end")) {
        return Ok(s);
    }
    // From opset 15, the dimensions `start..end` (negative from the end, clamped to the rank):
    // numpy's slice of the shape.
    let rank = cx.rank(x)? as i64;
    let (start, end) = (cx.attrs.int_or("start", 0), cx.attrs.int_or("end", rank));
    cx.op(
        "strided_slice",
        &[s],
        Attrs::from_pairs([("begin", ints(&[start])), ("end", ints(&[end]))]),
    )
}

/// The explicit padding `[top, left, bottom, right]` of a 2-D window (ONNX's `pads` are the
/// begins then the ends, the same order), or the one `auto_pad` asks for.
fn padding(
    cx: &mut Cx<'_, '_>,
    x: ExprId,
    kernel: &[i64],
    strides: &[i64],
    dilations: &[i64],
) -> R<Vec<i64>> {
    let auto = cx
        .attrs
        .string("auto_pad")
        .unwrap_or_else(|| "NOTSET".into());
    match auto.as_str() {
        "NOTSET" | "" => {
            let pads = cx
                .attrs
                .ints("pads")
                .map_or_else(|| vec![0; 4], <[i64]>::to_vec);
            if pads.len() != 4 {
                return unsupported(format!("pads {pads:?} (2-D windows only)"));
            }
            Ok(pads)
        }
        "VALID" => Ok(vec![0; 4]),
        "SAME_UPPER" | "SAME_LOWER" => {
            let shape = cx.static_shape(x, "auto_pad")?;
            let mut begin = [0i64; 2];
            let mut end = [0i64; 2];
            for i in 0..2 {
                let input = shape[2 + i] as i64;
                let out = (input + strides[i] - 1) / strides[i];
                let total =
                    ((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - input).max(0);
                let small = total / 2;
                (begin[i], end[i]) = if auto == "SAME_UPPER" {
                    (small, total - small)
                } else {
                    (total - small, small)
                };
            }
            Ok(vec![begin[0], begin[1], end[0], end[1]])
        }
        other => invalid(format!("auto_pad `{other}`")),
    }
}

fn pair(cx: &Cx<'_, '_>, name: &str) -> R<Vec<i64>> {
    match cx.attrs.ints(name) {
        None => Ok(vec![1, 1]),
        Some(v) if v.len() == 2 => Ok(v.to_vec()),
        Some(v) => unsupported(format!("{name} {v:?} (2-D windows only)")),
    }
}

/// `Conv`: `nn.conv2d`, and `nn.bias_add` of the bias.
fn conv(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let (x, w) = (cx.input(0)?, cx.input(1)?);
    let wshape = match cx.imp.tensor_type(w) {
        Some(t) if t.rank() == 4 => t.shape.clone(),
        Some(t) => {
            return unsupported(format!(
                "a {}-D convolution (2-D only)",
                t.rank().saturating_sub(2)
            ));
        }
        None => return invalid("the weight's type is unknown"),
    };
    let kernel: Vec<i64> = match cx.attrs.ints("kernel_shape") {
        Some(k) => k.to_vec(),
        None => match (wshape[2].value(), wshape[3].value()) {
            (Some(h), Some(w)) => vec![h, w],
            _ => return unsupported("a weight of unknown kernel size"),
        },
    };
    let (strides, dilations) = (pair(cx, "strides")?, pair(cx, "dilations")?);
    let pads = padding(cx, x, &kernel, &strides, &dilations)?;
    let attrs = Attrs::from_pairs([
        ("strides", ints(&strides)),
        ("padding", ints(&pads)),
        ("dilation", ints(&dilations)),
        ("groups", AttrValue::Int(cx.attrs.int_or("group", 1))),
    ]);
    let y = cx.op("nn.conv2d", &[x, w], attrs)?;
    match cx.opt_input(2) {
        Some(b) => cx.op(
            "nn.bias_add",
            &[y, b],
            Attrs::from_pairs([("axis", AttrValue::Int(1))]),
        ),
        None => Ok(y),
    }
}

/// `MaxPool` and `AveragePool` on 2-D windows.
fn pool(cx: &mut Cx<'_, '_>, max: bool) -> R<ExprId> {
    let x = cx.input(0)?;
    let kernel = match cx.attrs.ints("kernel_shape") {
        Some(k) if k.len() == 2 => k.to_vec(),
        Some(k) => return unsupported(format!("kernel_shape {k:?} (2-D windows only)")),
        None => return invalid("no kernel_shape"),
    };
    let (strides, dilations) = (pair(cx, "strides")?, pair(cx, "dilations")?);
    if cx.attrs.int_or("storage_order", 0) != 0 {
        return unsupported("storage_order=1");
    }
    let pads = padding(cx, x, &kernel, &strides, &dilations)?;
    let mut attrs = Attrs::from_pairs([
        ("pool_size", ints(&kernel)),
        ("strides", ints(&strides)),
        ("dilation", ints(&dilations)),
        ("padding", ints(&pads)),
        (
            "ceil_mode",
            AttrValue::Bool(cx.attrs.int_or("ceil_mode", 0) != 0),
        ),
    ]);
    if !max {
        attrs.set(
            "count_include_pad",
            AttrValue::Bool(cx.attrs.int_or("count_include_pad", 0) != 0),
        );
    }
    cx.op(
        if max {
            "nn.max_pool2d"
        } else {
            "nn.avg_pool2d"
        },
        &[x],
        attrs,
    )
}

fn global_pool(cx: &mut Cx<'_, '_>, name: &str) -> R<ExprId> {
    let x = cx.input(0)?;
    if cx.rank(x)? != 4 {
        return unsupported("global pooling of a tensor that is not 4-D");
    }
    cx.op0(name, &[x])
}

/// `BatchNormalization` in inference mode: `nn.batch_norm`'s first result.
fn batch_norm(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    if cx.attrs.int_or("training_mode", 0) != 0
        || cx.node.output.iter().skip(1).any(|o| !o.is_empty())
    {
        return unsupported("training mode (running statistics as outputs)");
    }
    let args: Vec<ExprId> = (0..5).map(|i| cx.input(i)).collect::<R<_>>()?;
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(1)),
        (
            "epsilon",
            AttrValue::Float(cx.attrs.float_or("epsilon", 1e-5)),
        ),
    ]);
    let bn = cx.op("nn.batch_norm", &args, attrs)?;
    Ok(cx.imp.b.proj(bn, 0))
}

/// `Gemm`: `alpha · A' · B' + beta · C` with `nn.dense` (which takes B as (units, in)).
fn gemm(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let (mut a, mut b) = (cx.input(0)?, cx.input(1)?);
    let dtype = cx.dtype(a)?;
    if cx.attrs.int_or("transA", 0) != 0 {
        a = cx.op(
            "transpose",
            &[a],
            Attrs::from_pairs([("axes", ints(&[1, 0]))]),
        )?;
    }
    if cx.attrs.int_or("transB", 0) == 0 {
        b = cx.op(
            "transpose",
            &[b],
            Attrs::from_pairs([("axes", ints(&[1, 0]))]),
        )?;
    }
    let mut y = cx.op0("nn.dense", &[a, b])?;
    let alpha = cx.attrs.float_or("alpha", 1.0);
    if alpha != 1.0 {
        let s = cx.scalar(dtype, alpha);
        y = cx.op0("multiply", &[y, s])?;
    }
    let beta = cx.attrs.float_or("beta", 1.0);
    if let Some(mut c) = cx.opt_input(2)
        && beta != 0.0
    {
        if beta != 1.0 {
            let s = cx.scalar(dtype, beta);
            c = cx.op0("multiply", &[c, s])?;
        }
        y = cx.op0("add", &[y, c])?;
    }
    Ok(y)
}

/// `Softmax` and `LogSoftmax` (`op`): per axis from opset 13; before, over the input
/// flattened to 2-D at the axis.
fn softmax(cx: &mut Cx<'_, '_>, op: &str) -> R<ExprId> {
    let x = cx.input(0)?;
    let rank = cx.rank(x)?;
    let modern = cx.imp.opset >= 13;
    let axis = cx.axis(cx.attrs.int_or("axis", if modern { -1 } else { 1 }), rank)?;
    let softmax = |cx: &mut Cx<'_, '_>, e: ExprId, axis: i64| {
        cx.op(
            op,
            &[e],
            Attrs::from_pairs([("axis", AttrValue::Int(axis))]),
        )
    };
    if modern || axis + 1 == rank {
        return softmax(cx, x, axis as i64);
    }
    let shape = cx.static_shape(x, "Softmax before opset 13 on an inner axis")?;
    // Over the axes from `axis` on, flattened: over `axis` alone when the rest are 1s (a
    // classifier's softmax over (N, C, 1, 1)).
    if shape[axis + 1..].iter().all(|&d| d == 1) {
        return softmax(cx, x, axis as i64);
    }
    let (outer, inner) = shape.split_at(axis);
    let flat = cx.reshape(x, &[outer.iter().product(), inner.iter().product()])?;
    let y = softmax(cx, flat, 1)?;
    cx.reshape(y, &shape)
}

/// `Reshape` with a constant shape: 0 copies the input's dimension (unless `allowzero`), -1
/// is inferred.
fn reshape(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let x = cx.input(0)?;
    let allowzero = cx.attrs.int_or("allowzero", 0) != 0;
    let shape = match cx.const_ints(1, "the shape") {
        Ok(shape) => shape,
        Err(refused) => symbolic_newshape(cx, x, allowzero).ok_or(refused)?,
    };
    if let Some(input) = cx.imp.static_shape(x) {
        let total: usize = input.iter().product();
        let mut out: Vec<i64> = Vec::with_capacity(shape.len());
        for (i, &d) in shape.iter().enumerate() {
            out.push(match d {
                0 if !allowzero => match input.get(i) {
                    Some(&v) => v as i64,
                    None => {
                        return invalid(format!(
                            "dimension {i} is 0 but the input has rank {}",
                            input.len()
                        ));
                    }
                },
                d if d < -1 => return invalid(format!("dimension {d}")),
                d => d,
            });
        }
        if let Some(at) = out.iter().position(|&d| d == -1) {
            let known: i64 = out.iter().filter(|&&d| d != -1).product();
            if known == 0 || total as i64 % known != 0 {
                return invalid(format!("cannot reshape {input:?} into {shape:?}"));
            }
            out[at] = total as i64 / known;
        }
        return cx.op(
            "reshape",
            &[x],
            Attrs::from_pairs([("newshape", ints(&out))]),
        );
    }
    if allowzero && shape.contains(&0) {
        return unsupported("allowzero with a zero dimension on a dynamic input");
    }
    cx.op(
        "reshape",
        &[x],
        Attrs::from_pairs([("newshape", ints(&shape))]),
    )
}

/// `Flatten`: a reshape to two dimensions, the sizes before `axis` and those from it. A side
/// that is not static is 0 when it is the input's first dimension alone, else -1 (one side at
/// most).
fn flatten(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let x = cx.input(0)?;
    let shape = match cx.imp.tensor_type(x) {
        Some(t) => t.shape.clone(),
        None => return invalid("an input's type is unknown (an ill-typed graph?)"),
    };
    let rank = shape.len() as i64;
    let axis = cx.attrs.int_or("axis", 1);
    let axis = if axis < 0 { axis + rank } else { axis };
    if !(0..=rank).contains(&axis) {
        return invalid(format!("axis {axis} is out of range"));
    }
    let (outer, inner) = shape.split_at(axis as usize);
    let side = |dims: &[Dim], first: bool| -> i64 {
        match dims.iter().map(|d| d.value()).product::<Option<i64>>() {
            Some(n) => n,
            None if first && dims.len() == 1 => 0,
            None => -1,
        }
    };
    let newshape = [side(outer, true), side(inner, false)];
    if newshape == [-1, -1] {
        return unsupported("Flatten where neither side is static (fix it with --input-shape)");
    }
    cx.op(
        "reshape",
        &[x],
        Attrs::from_pairs([("newshape", ints(&newshape))]),
    )
}

/// A computed shape whose sizes are known statically or by name, as a `newshape` of static
/// sizes, 0 (the input's size at the same position: `batch` where the input has `batch`
/// there, or a size read from the input's own shape at that position, `Shape(x)[1]`, as
/// ONNX Runtime's reshape fusion writes it) and at most one -1 (the size left, which the type
/// relation finds by cancelling the names on both sides).
fn symbolic_newshape(cx: &mut Cx<'_, '_>, x: ExprId, allowzero: bool) -> Option<Vec<i64>> {
    let target = cx.imp.sizes_value(cx.opt_input(1)?)?;
    // With `allowzero`, 0 is a size: neither a 0 of the target nor a copy can be written.
    if allowzero && target.contains(&Size::Dim(Dim::Static(0))) {
        return None;
    }
    let input = cx.imp.tensor_type(x)?;
    let dims: Vec<Dim> = cx
        .imp
        .elements(x)
        .and_then(|n| super::symbolic::cancel_names(n, &target))
        .unwrap_or_else(|| target.iter().map(|s| s.dim()).collect());
    crate::dims::reshape_codes(
        &input.shape,
        &dims,
        !allowzero,
        |i| matches!(target[i], Size::Of(y, j) if y == x && j == i),
    )
}

/// The axes of `Squeeze`/`Unsqueeze`: an attribute before opset 13, an input from 13.
fn axes_of(cx: &mut Cx<'_, '_>) -> R<Option<Vec<i64>>> {
    if cx.imp.opset < 13 {
        Ok(cx.attrs.ints("axes").map(<[i64]>::to_vec))
    } else if cx.opt_input(1).is_some() {
        cx.const_ints(1, "the axes").map(Some)
    } else {
        Ok(None)
    }
}

fn unsqueeze(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let mut x = cx.input(0)?;
    let Some(axes) = axes_of(cx)? else {
        return invalid("no axes");
    };
    let out_rank = cx.rank(x)? + axes.len();
    let mut normalised: Vec<usize> = axes
        .iter()
        .map(|&a| cx.axis(a, out_rank))
        .collect::<R<_>>()?;
    normalised.sort_unstable();
    normalised.dedup();
    if normalised.len() != axes.len() {
        return invalid(format!("repeated axes {axes:?}"));
    }
    for a in normalised {
        let attrs = Attrs::from_pairs([
            ("axis", AttrValue::Int(a as i64)),
            ("num_newaxis", AttrValue::Int(1)),
        ]);
        x = cx.op("expand_dims", &[x], attrs)?;
    }
    Ok(x)
}

fn squeeze(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let x = cx.input(0)?;
    let rank = cx.rank(x)?;
    match axes_of(cx)? {
        Some(axes) => {
            let axes: Vec<i64> = axes
                .iter()
                .map(|&a| cx.axis(a, rank).map(|a| a as i64))
                .collect::<R<_>>()?;
            cx.op("squeeze", &[x], Attrs::from_pairs([("axis", ints(&axes))]))
        }
        None => cx.op0("squeeze", &[x]),
    }
}

/// `HardSigmoid` (alpha, beta) and `HardSwish`: the IR's `hard_sigmoid` and `hard_swish`.
fn hard(cx: &mut Cx<'_, '_>, swish: bool) -> R<ExprId> {
    let x = cx.input(0)?;
    if swish {
        return cx.op0("hard_swish", &[x]);
    }
    let attrs = Attrs::from_pairs([
        ("alpha", AttrValue::Float(cx.attrs.float_or("alpha", 0.2))),
        ("beta", AttrValue::Float(cx.attrs.float_or("beta", 0.5))),
    ]);
    cx.op("hard_sigmoid", &[x], attrs)
}

/// `Slice`: starts, ends, axes and steps as attributes before opset 10, constant inputs after.
fn slice(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let x = cx.input(0)?;
    let (begin, end, axes, steps) = if cx.imp.opset < 10 {
        let get = |k: &str| cx.attrs.ints(k).map(<[i64]>::to_vec);
        (
            get("starts").unwrap_or_default(),
            get("ends").unwrap_or_default(),
            get("axes"),
            None,
        )
    } else {
        let axes = if cx.opt_input(3).is_some() {
            Some(cx.const_ints(3, "the axes")?)
        } else {
            None
        };
        let steps = if cx.opt_input(4).is_some() {
            Some(cx.const_ints(4, "the steps")?)
        } else {
            None
        };
        (
            cx.const_ints(1, "the starts")?,
            cx.const_ints(2, "the ends")?,
            axes,
            steps,
        )
    };
    let mut attrs = Attrs::from_pairs([("begin", ints(&begin)), ("end", ints(&end))]);
    let axes = axes.unwrap_or_else(|| (0..begin.len() as i64).collect());
    attrs.set("axes", ints(&axes));
    if let Some(steps) = steps {
        attrs.set("strides", ints(&steps));
    }
    cx.op("strided_slice", &[x], attrs)
}

/// `Pad`: pads (all begins, then all ends), mode and value as attributes before opset 11;
/// pads, value and (from 18) axes as constant inputs after.
fn pad(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let x = cx.input(0)?;
    let rank = cx.rank(x)?;
    let dtype = cx.dtype(x)?;
    let mode = cx.attrs.string("mode").unwrap_or_else(|| "constant".into());
    if !matches!(mode.as_str(), "constant" | "edge" | "reflect") {
        return unsupported(format!("Pad mode `{mode}`"));
    }
    let (pads, value) = if cx.imp.opset < 11 {
        let pads = cx
            .attrs
            .ints("pads")
            .map(<[i64]>::to_vec)
            .unwrap_or_default();
        (pads, cx.attrs.float_or("value", 0.0))
    } else {
        let pads = cx.const_ints(1, "the pads")?;
        (
            pads,
            cx.const_scalar(2, "the constant value")?.unwrap_or(0.0),
        )
    };
    let axes: Vec<usize> = if cx.imp.opset >= 18 && cx.opt_input(3).is_some() {
        let given = cx.const_ints(3, "the axes")?;
        given.iter().map(|&a| cx.axis(a, rank)).collect::<R<_>>()?
    } else {
        (0..rank).collect()
    };
    if pads.len() != 2 * axes.len() {
        return invalid(format!("{} pads for {} axes", pads.len(), axes.len()));
    }
    if pads.iter().any(|&p| p < 0) {
        return unsupported("negative pads (cropping)");
    }
    let mut width = vec![0i64; 2 * rank];
    for (i, &a) in axes.iter().enumerate() {
        width[2 * a] = pads[i];
        width[2 * a + 1] = pads[axes.len() + i];
    }
    let v = cx.scalar(dtype, value);
    let attrs = Attrs::from_pairs([
        ("pad_width", ints(&width)),
        ("pad_mode", AttrValue::Str(mode)),
    ]);
    cx.op("nn.pad", &[x, v], attrs)
}

/// `Split`: sizes as an attribute before opset 13, an input after; equal parts when none are
/// given (as many as the node has outputs, or `num_outputs` from 18).
fn split(cx: &mut Cx<'_, '_>) -> R<Vec<ExprId>> {
    let x = cx.input(0)?;
    let rank = cx.rank(x)?;
    let axis = cx.axis(cx.attrs.int_or("axis", 0), rank)?;
    let sizes: Option<Vec<i64>> = if cx.imp.opset < 13 {
        cx.attrs.ints("split").map(<[i64]>::to_vec)
    } else if cx.opt_input(1).is_some() {
        Some(cx.const_ints(1, "the split sizes")?)
    } else {
        None
    };
    let n = cx.node.output.len();
    let how = match sizes {
        Some(sizes) => {
            if sizes.len() != n || n == 0 {
                return invalid(format!("{} sizes for {n} outputs", sizes.len()));
            }
            let mut at = 0;
            let mut cuts = Vec::new();
            for s in &sizes[..n - 1] {
                at += s;
                cuts.push(at);
            }
            ints(&cuts)
        }
        None => {
            let parts = cx.attrs.int("num_outputs").unwrap_or(n as i64);
            let shape = cx.static_shape(x, "Split into equal parts")?;
            if parts <= 0 || shape[axis] as i64 % parts != 0 {
                return unsupported("Split into unequal parts without sizes");
            }
            AttrValue::Int(parts)
        }
    };
    let attrs = Attrs::from_pairs([
        ("indices_or_sections", how),
        ("axis", AttrValue::Int(axis as i64)),
    ]);
    let t = cx.op("split", &[x], attrs)?;
    Ok((0..n as u32).map(|i| cx.imp.b.proj(t, i)).collect())
}

/// `Reduce*`: axes an attribute (before opset 13 for ReduceSum, 18 for the others) or an
/// optional constant input; no axes means all of them, unless `noop_with_empty_axes`.
fn reduce(cx: &mut Cx<'_, '_>, op: &str) -> R<ExprId> {
    let x = cx.input(0)?;
    let as_input = cx.imp.opset >= 18 || (op == "ReduceSum" && cx.imp.opset >= 13);
    let axes: Option<Vec<i64>> = if as_input {
        if cx.opt_input(1).is_some() {
            Some(cx.const_ints(1, "the axes")?)
        } else {
            None
        }
    } else {
        cx.attrs.ints("axes").map(<[i64]>::to_vec)
    };
    let axes = axes.filter(|a| !a.is_empty());
    if axes.is_none() && cx.attrs.int_or("noop_with_empty_axes", 0) != 0 {
        return Ok(x);
    }
    let name = match op {
        "ReduceMean" => "mean",
        "ReduceSum" => "sum",
        "ReduceMax" => "max",
        "ReduceMin" => "min",
        _ => "prod",
    };
    let keep = cx.attrs.int_or("keepdims", 1) != 0;
    let mut attrs = Attrs::from_pairs([("keepdims", AttrValue::Bool(keep))]);
    if let Some(axes) = axes {
        attrs.set("axis", ints(&axes));
    }
    cx.op(name, &[x], attrs)
}

/// `Expand`: numpy broadcasting of the input with a constant shape, as `broadcast_to` the
/// static result shape.
fn expand(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let x = cx.input(0)?;
    let shape = cx.const_ints(1, "the shape")?;
    let input = cx.static_shape(x, "Expand")?;
    let out = shape
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<Vec<usize>>>()
        .and_then(|s| irpass_ir::op::broadcast_concrete(&input, &s).ok());
    let Some(out) = out else {
        return invalid(format!("cannot expand {input:?} to {shape:?}"));
    };
    let out: Vec<i64> = out.iter().map(|&d| d as i64).collect();
    cx.op(
        "broadcast_to",
        &[x],
        Attrs::from_pairs([("shape", ints(&out))]),
    )
}

/// `LayerNormalization` over the last axis: `nn.layer_norm` (its mean and inverse standard
/// deviation outputs are not converted).
fn layer_norm(cx: &mut Cx<'_, '_>) -> R<ExprId> {
    let (x, gamma) = (cx.input(0)?, cx.input(1)?);
    let rank = cx.rank(x)?;
    let axis = cx.axis(cx.attrs.int_or("axis", -1), rank)?;
    if axis + 1 != rank {
        return unsupported("LayerNormalization over more than the last axis");
    }
    let beta = match cx.opt_input(2) {
        Some(b) => b,
        None => {
            let shape = cx.static_shape(gamma, "LayerNormalization without a bias")?;
            let dtype = cx.dtype(gamma)?;
            cx.imp
                .b
                .constant(Arc::new(Tensor::full(dtype, &shape, 0.0)))
        }
    };
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(-1)),
        (
            "epsilon",
            AttrValue::Float(cx.attrs.float_or("epsilon", 1e-5)),
        ),
    ]);
    cx.op("nn.layer_norm", &[x, gamma, beta], attrs)
}
