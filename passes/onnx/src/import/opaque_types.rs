//! Types for the outputs of an opaque node that the model does not declare: ONNX's shape
//! inference for the operators whose result type follows from their inputs' types and from
//! the shape values the importer knows ([`Importer::dims_value`]), sizes named or `?` where
//! they are not static. An operator without a rule here keeps a node only when the model
//! declares its outputs.

use std::sync::Arc;

use irpass_ir::op::broadcast_shapes;
use irpass_ir::{DType, Dim, ExprId, TensorType, Type};

use super::Importer;
use super::attrs::NodeAttrs;
use super::sequence_types::SEQUENCE_RULES;
use crate::proto::NodeProto;
use crate::tensor::dtype_of;
use crate::value_type::join;

/// Operators whose one output has the type of their first input.
const SAME_AS_FIRST: &[&str] = &[
    "Abs",
    "Acos",
    "Acosh",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "BitwiseNot",
    "Ceil",
    "Celu",
    "Cos",
    "Cosh",
    "CumSum",
    "Elu",
    "Erf",
    "Exp",
    "Floor",
    "HardSigmoid",
    "HardSwish",
    "Hardmax",
    "LeakyRelu",
    "Log",
    "LogSoftmax",
    "LpNormalization",
    "MeanVarianceNormalization",
    "Mish",
    "Neg",
    "Not",
    "Reciprocal",
    "Relu",
    "ReverseSequence",
    "Round",
    "Selu",
    "Shrink",
    "Sigmoid",
    "Sign",
    "Sin",
    "Sinh",
    "Softmax",
    "Softplus",
    "Softsign",
    "Sqrt",
    "Tan",
    "Tanh",
    "ThresholdedRelu",
    "Trilu",
];

/// Operators whose inputs broadcast and whose output has the first input's element type.
const BROADCAST: &[&str] = &[
    "Add",
    "BitShift",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "Div",
    "Max",
    "Mean",
    "Min",
    "Mod",
    "Mul",
    "Pow",
    "PRelu",
    "Sub",
    "Sum",
];

/// Operators whose inputs broadcast and whose output is bool.
const COMPARE: &[&str] = &[
    "And",
    "Equal",
    "Greater",
    "GreaterOrEqual",
    "Less",
    "LessOrEqual",
    "Or",
    "Xor",
];

/// Operators with a rule of their own below.
const OWN_RULE: &[&str] = &[
    "ArgMax",
    "ArgMin",
    "Cast",
    "CastLike",
    "Constant",
    "ConstantOfShape",
    "Expand",
    "GatherElements",
    "IsInf",
    "IsNaN",
    "Pad",
    "Range",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "ReduceSumSquare",
    "Reshape",
    "Tile",
    "Where",
];

/// The first opset whose operators the rules read: before 9, versions differ in ways the
/// rules do not know (`Add` broadcasting only with its `broadcast` attribute, along `axis`).
const FIRST_OPSET: i64 = 9;

/// Whether the importer can type the output of a node of the default domain, in a model of
/// default-domain opset `opset`, from its inputs.
pub(crate) fn has_rule(node: &NodeProto, opset: i64) -> bool {
    let op = node.op_type();
    opset >= FIRST_OPSET
        && matches!(node.domain(), "" | "ai.onnx")
        && (matches!(op, "If" | "Loop" | "Split")
            || node.output.len() == 1
                && [SAME_AS_FIRST, BROADCAST, COMPARE, OWN_RULE, SEQUENCE_RULES]
                    .iter()
                    .any(|list| list.contains(&op)))
}

/// The declared types of a subgraph attribute's outputs (`None` for one not declared).
fn subgraph_outputs(node: &NodeProto, attr: &str) -> Option<Vec<Option<Type>>> {
    let g = node
        .attribute
        .iter()
        .find(|a| a.name() == attr)?
        .g
        .as_ref()?;
    Some(
        g.output
            .iter()
            .map(|o| crate::value_type::ir_type(o.r#type.as_ref()?))
            .collect(),
    )
}

impl Importer {
    /// The types of `node`'s outputs, each where a rule gives it: control flow from its
    /// subgraphs' declared outputs (`If`: the type both branches agree on; `Loop`: the carried
    /// values', then each scan output's with a leading `?` for the iterations), other operators
    /// their one output ([`Importer::infer_output`]).
    pub(crate) fn infer_outputs(
        &mut self,
        node: &NodeProto,
        inputs: &[Option<ExprId>],
    ) -> Vec<Option<Type>> {
        let n = node.output.len();
        if !has_rule(node, self.opset) {
            return vec![None; n];
        }
        match node.op_type() {
            "If" => {
                let (Some(then), Some(other)) = (
                    subgraph_outputs(node, "then_branch"),
                    subgraph_outputs(node, "else_branch"),
                ) else {
                    return vec![None; n];
                };
                (0..n)
                    .map(|k| match (then.get(k)?, other.get(k)?) {
                        (Some(a), Some(b)) => join(a, b),
                        _ => None,
                    })
                    .collect()
            }
            "Loop" => {
                let Some(body) = subgraph_outputs(node, "body") else {
                    return vec![None; n];
                };
                // Body outputs: the condition, the carried values, then the scan outputs. A
                // carried value keeps its type through the iterations (ONNX requires it): the
                // type of its initial value, where the body does not declare it.
                let carried = node.input.len().saturating_sub(2);
                (0..n)
                    .map(|k| {
                        if k < carried {
                            return match body.get(k + 1)?.as_ref() {
                                Some(t) => Some(t.clone()),
                                None => {
                                    let e = (*inputs.get(k + 2)?)?;
                                    self.typer.of(self.b.body(), e).cloned()
                                }
                            };
                        }
                        let t = body.get(k + 1)?.as_ref()?;
                        let Type::Tensor(t) = t else { return None };
                        let mut shape = vec![Dim::Any];
                        shape.extend(t.shape.iter().copied());
                        Some(Type::with_dims(shape, t.dtype))
                    })
                    .collect()
            }
            "Split" => self
                .split_outputs(node, inputs)
                .unwrap_or_else(|| vec![None; n]),
            _ => vec![self.infer_output(node, inputs)],
        }
    }

    /// `Split`'s outputs: the input with the axis cut into the sizes given (an input from
    /// opset 13, an attribute before), or into equal parts (the last smaller from opset 18).
    fn split_outputs(
        &mut self,
        node: &NodeProto,
        inputs: &[Option<ExprId>],
    ) -> Option<Vec<Option<Type>>> {
        let x = self.tensor_type((*inputs.first()?)?)?;
        let attrs = NodeAttrs(node);
        let axis = irpass_ir::op::axis("Split", attrs.int_or("axis", 0), x.rank()).ok()?;
        let n = node.output.len();
        let sizes: Vec<Dim> = match inputs.get(1).copied().flatten() {
            Some(e) => match self.dims_value(e) {
                Some(s) => s,
                None => vec![Dim::Any; n],
            },
            None => match attrs.ints("split") {
                Some(s) => s.iter().map(|&v| Dim::Static(v)).collect(),
                None => match x.shape[axis] {
                    Dim::Static(d) => {
                        let part = (d + n as i64 - 1) / n as i64;
                        (0..n as i64)
                            .map(|k| Dim::Static((d - k * part).clamp(0, part)))
                            .collect()
                    }
                    _ => vec![Dim::Any; n],
                },
            },
        };
        if sizes.len() != n {
            return None;
        }
        Some(
            sizes
                .into_iter()
                .map(|s| {
                    let mut shape = x.shape.clone();
                    shape[axis] = s;
                    Some(Type::with_dims(shape, x.dtype))
                })
                .collect(),
        )
    }

    /// The type of the one output of `node`, an operator with a rule ([`has_rule`]), from its
    /// inputs (`None` where one is left out).
    pub(crate) fn infer_output(
        &mut self,
        node: &NodeProto,
        inputs: &[Option<ExprId>],
    ) -> Option<Type> {
        if !has_rule(node, self.opset) {
            return None;
        }
        let op = node.op_type();
        if SEQUENCE_RULES.contains(&op) {
            return self.sequence_output(node, inputs);
        }
        let attrs = NodeAttrs(node);
        let mut ty = |i: usize| -> Option<Arc<TensorType>> {
            let e = (*inputs.get(i)?)?;
            self.tensor_type(e)
        };
        if SAME_AS_FIRST.contains(&op) {
            return Some(Type::Tensor(ty(0)?));
        }
        let broadcast_all = |types: &[Arc<TensorType>]| -> Option<Vec<Dim>> {
            let mut shape = types.first()?.shape.clone();
            for t in &types[1..] {
                shape = broadcast_shapes(&shape, &t.shape).ok()?;
            }
            Some(shape)
        };
        if COMPARE.contains(&op) {
            // Comparisons give a bool tensor of any operands, strings too.
            let mut shape: Vec<Dim> = Vec::new();
            for &e in inputs {
                let dims = match self.typer.of(self.b.body(), e?)? {
                    Type::Tensor(t) => t.shape.clone(),
                    Type::Opaque(name) => crate::value_type::opaque_tensor_dims(*name)?,
                    _ => return None,
                };
                shape = broadcast_shapes(&shape, &dims).ok()?;
            }
            return Some(Type::with_dims(shape, DType::Bool));
        }
        if BROADCAST.contains(&op) {
            let types: Vec<Arc<TensorType>> =
                (0..inputs.len()).map(&mut ty).collect::<Option<_>>()?;
            return Some(Type::with_dims(
                broadcast_all(&types)?,
                types.first()?.dtype,
            ));
        }
        match op {
            // (A constant the importer does not convert holds strings or complex numbers.)
            "Constant" => crate::value_type::constant_type(attrs.tensor("value")?),
            "IsInf" | "IsNaN" => Some(Type::with_dims(ty(0)?.shape.clone(), DType::Bool)),
            "Cast" => Some(Type::with_dims(
                ty(0)?.shape.clone(),
                dtype_of(attrs.int("to")? as i32).ok()?,
            )),
            "CastLike" => Some(Type::with_dims(ty(0)?.shape.clone(), ty(1)?.dtype)),
            "Where" => {
                let types = [ty(0)?, ty(1)?, ty(2)?];
                Some(Type::with_dims(broadcast_all(&types)?, types[1].dtype))
            }
            "GatherElements" => Some(Type::with_dims(ty(1)?.shape.clone(), ty(0)?.dtype)),
            "ArgMax" | "ArgMin" => {
                let x = ty(0)?;
                let axes = [attrs.int_or("axis", 0)];
                reduced(&x.shape, &axes, attrs.int_or("keepdims", 1) != 0)
                    .map(|s| Type::with_dims(s, DType::Int64))
            }
            op if op.starts_with("Reduce") => self.reduce_output(&attrs, inputs),
            "Range" => self.range_output(inputs),
            "Pad" => self.pad_output(&attrs, inputs),
            "Expand" => {
                let x = ty(0)?;
                // (A target known only at run time still gives the sizes where the input's
                // is neither 1 nor unknown.)
                let target = self.shape_input((*inputs.get(1)?)?)?;
                Some(Type::with_dims(
                    broadcast_shapes(&x.shape, &target).ok()?,
                    x.dtype,
                ))
            }
            "ConstantOfShape" => {
                let shape = self.shape_input((*inputs.first()?)?)?;
                let dtype = match attrs.tensor("value") {
                    Some(t) => dtype_of(t.data_type()).ok()?,
                    None => DType::Float32,
                };
                Some(Type::with_dims(shape, dtype))
            }
            "Tile" => self.tile_output(inputs),
            "Reshape" => self.reshape_output(&attrs, inputs),
            _ => None,
        }
    }

    /// The tensor type of input `i` (`None` where it is left out or not a tensor).
    fn input_tensor(&mut self, inputs: &[Option<ExprId>], i: usize) -> Option<Arc<TensorType>> {
        let e = (*inputs.get(i)?)?;
        self.tensor_type(e)
    }

    /// A `Reduce*` node's output: axes an attribute, or an input from opset 13 (ReduceSum) or
    /// 18 (the rest).
    fn reduce_output(&mut self, attrs: &NodeAttrs, inputs: &[Option<ExprId>]) -> Option<Type> {
        let x = self.input_tensor(inputs, 0)?;
        // Axes are an attribute, or an input from opset 13 (ReduceSum) or 18 (the rest).
        let keep = attrs.int_or("keepdims", 1) != 0;
        let axes = match inputs.get(1).copied().flatten() {
            Some(e) => match self.static_ints(e) {
                Some(axes) => axes,
                // Axes known only at run time: with keepdims, each size stays or is 1.
                None if keep => {
                    let shape = x
                        .shape
                        .iter()
                        .map(|&d| if d == Dim::Static(1) { d } else { Dim::Any })
                        .collect();
                    return Some(Type::with_dims(shape, x.dtype));
                }
                // Without keepdims, as many axes go as the axes tensor has elements
                // (when that count is static and the axes are not empty).
                None => {
                    let count = match self.static_shape(e)?.as_slice() {
                        [n] if *n > 0 => *n,
                        _ => return None,
                    };
                    let rank = x.rank().checked_sub(count)?;
                    return Some(Type::with_dims(vec![Dim::Any; rank], x.dtype));
                }
            },
            None => attrs.ints("axes").map(<[i64]>::to_vec).unwrap_or_default(),
        };
        let axes = if axes.is_empty() {
            if attrs.int_or("noop_with_empty_axes", 0) != 0 {
                return Some(Type::Tensor(x));
            }
            (0..x.rank() as i64).collect()
        } else {
            axes
        };
        reduced(&x.shape, &axes, keep).map(|s| Type::with_dims(s, x.dtype))
    }

    /// A `Range` node's output: its length where start, limit and delta are known.
    fn range_output(&mut self, inputs: &[Option<ExprId>]) -> Option<Type> {
        let dtype = self.input_tensor(inputs, 0)?.dtype;
        let scalar = |this: &mut Importer, i: usize| -> Option<Dim> {
            match this.dims_value((*inputs.get(i)?)?)?.as_slice() {
                [d] => Some(*d),
                _ => None,
            }
        };
        let (start, limit, delta) = (scalar(self, 0), scalar(self, 1), scalar(self, 2));
        let len = match (start, limit, delta) {
            (Some(Dim::Static(s)), Some(Dim::Static(l)), Some(Dim::Static(d))) if d != 0 => {
                Dim::Static(((l - s) as f64 / d as f64).ceil().max(0.0) as i64)
            }
            (Some(Dim::Static(0)), Some(l @ Dim::Named(_)), Some(Dim::Static(1))) => l,
            _ => Dim::Any,
        };
        Some(Type::with_dims(vec![len], dtype))
    }

    /// A `Pad` node's output: pads an attribute before opset 11, an input from 11 (begins, then
    /// ends), over the axes input or all axes.
    fn pad_output(&mut self, attrs: &NodeAttrs, inputs: &[Option<ExprId>]) -> Option<Type> {
        let x = self.input_tensor(inputs, 0)?;
        // Pads are an attribute before opset 11, an input from 11 (begins, then ends).
        let pads: Option<Vec<i64>> = match inputs.get(1).copied().flatten() {
            Some(e) => self.static_ints(e),
            None => attrs.ints("pads").map(<[i64]>::to_vec),
        };
        let axes: Vec<usize> = match inputs.get(3).copied().flatten() {
            Some(e) => self
                .static_ints(e)?
                .iter()
                .map(|&a| irpass_ir::op::axis("Pad", a, x.rank()).ok())
                .collect::<Option<_>>()?,
            None => (0..x.rank()).collect(),
        };
        let mut shape = x.shape.clone();
        for (k, &a) in axes.iter().enumerate() {
            shape[a] = match (&pads, shape[a]) {
                (Some(p), Dim::Static(n)) if p.len() == 2 * axes.len() => {
                    Dim::Static(n.checked_add(p[k])?.checked_add(p[k + axes.len()])?)
                }
                (Some(p), d)
                    if p.len() == 2 * axes.len() && p[k] == 0 && p[k + axes.len()] == 0 =>
                {
                    d
                }
                _ => Dim::Any,
            };
        }
        Some(Type::with_dims(shape, x.dtype))
    }

    /// A `Tile` node's output.
    fn tile_output(&mut self, inputs: &[Option<ExprId>]) -> Option<Type> {
        let x = self.input_tensor(inputs, 0)?;
        let repeats = self.shape_input((*inputs.get(1)?)?)?;
        if repeats.len() != x.rank() {
            return None;
        }
        let shape = x
            .shape
            .iter()
            .zip(&repeats)
            .map(|(&d, &r)| match (d, r) {
                (Dim::Static(a), Dim::Static(b)) => a.checked_mul(b).map(Dim::Static),
                (d, Dim::Static(1)) => Some(d),
                _ => Some(Dim::Any),
            })
            .collect::<Option<_>>()?;
        Some(Type::with_dims(shape, x.dtype))
    }

    /// A `Reshape` node's output: the target's sizes, 0 copying the input's (without
    /// `allowzero`), -1 unknown.
    fn reshape_output(&mut self, attrs: &NodeAttrs, inputs: &[Option<ExprId>]) -> Option<Type> {
        let x = self.input_tensor(inputs, 0)?;
        let target = self.shape_input((*inputs.get(1)?)?)?;
        let allowzero = attrs.int_or("allowzero", 0) != 0;
        let shape = target
            .iter()
            .enumerate()
            .map(|(i, &d)| match d {
                Dim::Static(0) if !allowzero => x.shape.get(i).copied().unwrap_or(Dim::Any),
                Dim::Static(v) if v < 0 => Dim::Any,
                d => d,
            })
            .collect();
        Some(Type::with_dims(shape, x.dtype))
    }

    /// The sizes a shape input gives (an `Expand`'s target, a `Reshape`'s shape): as far as
    /// the importer knows them, or, for one known only at run time whose length is static,
    /// that many unknown sizes (the rank is known).
    fn shape_input(&mut self, e: ExprId) -> Option<Vec<Dim>> {
        match self.dims_value(e) {
            Some(dims) => Some(dims),
            None => match self.static_shape(e)?.as_slice() {
                [n] => Some(vec![Dim::Any; *n]),
                _ => None,
            },
        }
    }
}

/// `shape` reduced over `axes` (negative from the end), keeping them as 1 or dropping them.
fn reduced(shape: &[Dim], axes: &[i64], keep: bool) -> Option<Vec<Dim>> {
    let rank = shape.len() as i64;
    let mut norm = Vec::with_capacity(axes.len());
    for &a in axes {
        let a = if a < 0 { a + rank } else { a };
        // (A scalar's axis 0 is accepted: reducing it changes nothing.)
        if !(0..rank.max(1)).contains(&a) {
            return None;
        }
        norm.push(a as usize);
    }
    Some(
        shape
            .iter()
            .enumerate()
            .filter_map(|(i, &d)| match (norm.contains(&i), keep) {
                (false, _) => Some(d),
                (true, true) => Some(Dim::Static(1)),
                (true, false) => None,
            })
            .collect(),
    )
}
