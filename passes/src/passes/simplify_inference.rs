//! `SimplifyInference`: the pass and its rule set.

use crate::analyses::Types;
use crate::util::{along_axis, ints, norm_axis, norm_flags};
use irpass::{PassContext, function_pass};
use irpass_ir::body::{ArenaFunction, ExprId};
use irpass_ir::{AttrValue, Attrs, Function, IrError, Module, infer::BodyTypes, pattern::RuleCx};
use irpass_ir_macros::rules;
use std::sync::Arc;

/// Rewrites the training-only forms for inference: `nn.batch_norm(x, g, b, m, v).0` becomes
/// `x * scale + shift` with `scale = g / sqrt(v + eps)` and `shift = b - m * scale` (broadcast
/// along the normalised axis; `FoldConstant` then folds them when the parameters are
/// constants), `nn.dropout(x).0` becomes `x`, and `nn.layer_norm` is expanded into means,
/// a variance and elementwise operations where its normalised axis has a static size (one
/// known only at run time stays a `nn.layer_norm`: `FuseLayerNorm` could not build it again).
#[function_pass(opt_level = 0, name = "SimplifyInference")]
pub fn transform(func: Function, module: &Module, ctx: &PassContext) -> irpass::Result<Function> {
    let types = || Types::of(&func, module, ctx);
    Ok(func.with_code(simplify_inference(&func.code, types)?))
}

rules! {
    /// `SimplifyInference`'s rules.
    pub(crate) static SIMPLIFY_INFERENCE: RuleSet = {
        /// `nn.batch_norm(x, g, b, m, v).0` is `x * scale + shift`, `scale = (1 / sqrt(v + eps))
        /// * g` (TVM's operand order), `shift = -m * scale + b`, broadcast along the axis.
        batch_norm: "(nn.batch_norm(?x, ?g, ?beta, ?mean, ?var) as ?bn).0" => {
            let (rank, axis, eps, center, scale_on) = norm(cx, x, bn, 1)?;
            let sum = cx.binary("add", var, eps)?;
            let (std, one) = (cx.unary("sqrt", sum)?, cx.scalar_like(x, 1.0)?);
            let mut scale = cx.binary("divide", one, std)?;
            if scale_on { scale = cx.binary("multiply", scale, g)?; }
            let neg_mean = cx.unary("negative", mean)?;
            let mut shift = cx.binary("multiply", neg_mean, scale)?;
            if center { shift = cx.binary("add", shift, beta)?; }
            let scale = along_axis(cx, scale, axis, rank)?;
            let y = cx.binary("multiply", x, scale)?;
            let shift = along_axis(cx, shift, axis, rank)?;
            cx.binary("add", y, shift)
        };
        /// `nn.dropout(x).0` is `x` at inference.
        dropout: "nn.dropout(?x).0" => "?x";
        /// `nn.layer_norm` is means, a variance and elementwise operations, where its
        /// normalised axis has a static size (else it stays: `FuseLayerNorm` could not build
        /// it again, and an ONNX model would keep the expansion).
        layer_norm: "nn.layer_norm(?x, ?g, ?beta)" if axis_static(cx, x, root) => {
            let (rank, axis, eps, center, scale_on) = norm(cx, x, root, -1)?;
            let mean = mean_along(cx, x, axis)?;
            let centered = cx.binary("subtract", x, mean)?;
            let square = cx.binary("multiply", centered, centered)?;
            let var = mean_along(cx, square, axis)?;
            let sum = cx.binary("add", var, eps)?;
            let denom = cx.unary("sqrt", sum)?;
            let mut y = cx.binary("divide", centered, denom)?;
            if scale_on { let g = along_axis(cx, g, axis, rank)?; y = cx.binary("multiply", y, g)?; }
            if center { let b = along_axis(cx, beta, axis, rank)?; y = cx.binary("add", y, b)?; }
            Some(y)
        };
    };
}

/// The rank of `x` and, of normalisation `call`, the axis (`default` when not given), epsilon
/// (as a constant of `x`'s dtype), `center` and `scale`.
fn norm(cx: &mut RuleCx<'_>, x: ExprId, call: ExprId, default: i64) -> Option<Norm> {
    let rank = cx.tensor(x)?.rank();
    let attrs = cx.op_call(call)?.2.clone();
    let (eps, center, scale) = norm_flags(&attrs);
    let axis = norm_axis(&attrs, default, rank);
    Some((rank, axis, cx.scalar_like(x, eps)?, center, scale))
}

type Norm = (usize, usize, ExprId, bool, bool);

/// Whether normalisation `call` of `x` is along an axis of static size.
fn axis_static(cx: &mut RuleCx<'_>, x: ExprId, call: ExprId) -> bool {
    let Some(t) = cx.tensor(x) else {
        return false;
    };
    let Some(attrs) = cx.op_call(call).map(|c| c.2.clone()) else {
        return false;
    };
    let axis = norm_axis(&attrs, -1, t.rank());
    t.shape.get(axis).is_some_and(|d| d.value().is_some())
}

/// The mean of `e` along `axis`, the axis kept.
fn mean_along(cx: &mut RuleCx<'_>, e: ExprId, axis: usize) -> Option<ExprId> {
    let attrs = [
        ("axis", ints(&[axis as i64])),
        ("keepdims", AttrValue::Bool(true)),
    ];
    cx.call("mean", &[e], Attrs::from_pairs(attrs))
}

/// Rewrites the training-only forms for inference, as the registered `SimplifyInference`;
/// `types` gives `f`'s types, asked for only when some node could start a rule (an error
/// comes from computing them, or from the rule engine: none in practice, the tests check the
/// rules).
pub fn simplify_inference(
    f: &ArenaFunction,
    types: impl FnOnce() -> Result<Arc<BodyTypes>, IrError>,
) -> Result<Option<ArenaFunction>, IrError> {
    SIMPLIFY_INFERENCE.apply_with_types(f, types)
}
