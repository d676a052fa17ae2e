//! `FuseLayerNorm`: the pass and its rule set. The decomposition of a layer normalisation over the last
//! axis (what `SimplifyInference` and ONNX exporters below opset 17 write) becomes one
//! `nn.layer_norm` again. The rules are `exclusive`: a decomposition whose intermediate values
//! are used elsewhere stays as it is.

use crate::analyses::Types;
use irpass::{PassContext, function_pass};
use irpass_ir::body::ArenaFunction;
use irpass_ir::pattern::RuleCx;
use irpass_ir::{AttrValue, Attrs, BodyTypes, ExprId, Function, IrError, Module, Tensor};
use irpass_ir_macros::rules;

/// Fuses a layer normalisation's decomposition over the last axis back into one
/// `nn.layer_norm`: `(x - mean(x)) / sqrt(mean((x - mean(x))²) + eps)`, the square written as a
/// product or a power of 2, then a constant scale and a constant shift along that axis. What
/// `SimplifyInference` expands and nothing changed since becomes one operator again (one
/// `LayerNormalization` in an ONNX model from opset 17). A decomposition whose intermediate
/// values are used elsewhere is left as it is.
#[function_pass(opt_level = 0, name = "FuseLayerNorm")]
pub fn transform(func: Function, _module: &Module, _ctx: &PassContext) -> irpass::Result<Function> {
    // None computed for it: the guards ask about a few nodes, and typing those on demand
    // costs less than typing the module.
    let types = Types::carried(&func);
    Ok(func.with_code(fuse_layer_norm(&func.code, types.as_deref())?))
}

rules! {
    /// A layer normalisation's decomposition, as one `nn.layer_norm`.
    static FUSE_LAYER_NORM: RuleSet = {
        /// `(x - mean(x)) / sqrt(mean((x - mean(x))²) + eps)` over the last axis, with a unit
        /// scale and a zero shift.
        exclusive decomposed: "divide(subtract(?x, mean(?x) as ?mu) as ?d, sqrt(add(mean(multiply(?d, ?d) | power(?d, const as ?two)) as ?var, const as ?eps)))"
            if last_mean(cx, mu, x) && last_mean(cx, var, x) && two.is_none_or(|t| cx.scalar(t) == Some(2.0)) => {
            let dtype = cx.dtype(x)?;
            let eps = cx.scalar_attr(eps)?;
            // Only the normalised axis needs a static size (`batch` and `seq` may be named).
            let c = usize::try_from(cx.tensor(x)?.shape.last()?.value()?).ok()?;
            let gamma = cx.constant_node(Tensor::full(dtype, &[c], 1.0));
            let beta = cx.constant_node(Tensor::full(dtype, &[c], 0.0));
            let attrs = Attrs::from_pairs([
                ("axis", AttrValue::Int(-1)),
                ("epsilon", eps),
            ]);
            cx.call("nn.layer_norm", &[x, gamma, beta], attrs)
        };
        /// A scale along the last axis joins the normalisation's (of a normalisation with no
        /// shift yet): it becomes the scale of one with a unit scale, and is folded into a
        /// constant one.
        exclusive scale: "multiply(nn.layer_norm(?x, ?g, ?b) as ?ln, ?s)" if cx.is_all(b, 0.0) => {
            let s = last_axis_vector(cx, s, x)?;
            let g = if cx.is_all(g, 1.0) { s } else { fold(cx, "multiply", g, s)? };
            rebuild(cx, ln, x, g, b)
        };
        /// A shift along the last axis joins the normalisation's: it becomes the shift of one
        /// with a zero shift, and is folded into a constant one.
        exclusive shift: "add(nn.layer_norm(?x, ?g, ?b) as ?ln, ?t)" => {
            let t = last_axis_vector(cx, t, x)?;
            let b = if cx.is_all(b, 0.0) { t } else { fold(cx, "add", b, t)? };
            rebuild(cx, ln, x, g, b)
        };
    };
}

/// Whether `e` is a mean of `x` over its last axis, the axis kept.
fn last_mean(cx: &mut RuleCx<'_>, e: ExprId, x: ExprId) -> bool {
    let Some(rank) = cx.tensor(x).map(|t| t.rank()) else {
        return false;
    };
    let axes = cx.attr(e, "axis").and_then(|a| a.as_int_list());
    let last = matches!(axes.as_deref(), Some([a]) if *a == -1 || *a == rank as i64 - 1);
    let flag = |name: &str| cx.attr(e, name).and_then(|a| a.as_bool());
    last && flag("keepdims") == Some(true) && flag("exclude") != Some(true)
}

/// `v` as a vector along `x`'s last axis: itself when it is one (of `x`'s dtype), else a
/// constant that broadcasts only along that axis (its other axes 1, no more of them than `x`
/// has) reshaped into one.
fn last_axis_vector(cx: &mut RuleCx<'_>, v: ExprId, x: ExprId) -> Option<ExprId> {
    let xt = cx.tensor(x)?;
    let c = xt.shape.last()?.value()?;
    let vt = cx.tensor(v)?;
    if vt.dtype != xt.dtype {
        return None;
    }
    let dims = cx.shape(v)?;
    let (&last, rest) = dims.split_last()?;
    if last as i64 != c || rest.iter().any(|&d| d != 1) || dims.len() > xt.rank() {
        return None;
    }
    if dims.len() == 1 {
        return Some(v);
    }
    let t = cx.constant(v)?.reshape(&[last]).ok()?;
    Some(cx.constant_node(t))
}

/// `op` of constants `a` and `b`, as a constant.
fn fold(cx: &mut RuleCx<'_>, op: &str, a: ExprId, b: ExprId) -> Option<ExprId> {
    let (a, b) = (cx.constant(a)?.clone(), cx.constant(b)?.clone());
    cx.fold(op, &[&a, &b], &Attrs::new())
}

/// Normalisation `ln` again, its scale `g` and shift `b`.
fn rebuild(cx: &mut RuleCx<'_>, ln: ExprId, x: ExprId, g: ExprId, b: ExprId) -> Option<ExprId> {
    let attrs = cx.op_call(ln)?.2.clone();
    cx.call("nn.layer_norm", &[x, g, b], attrs)
}

/// Fuses the layer normalisations of `f`, as the registered `FuseLayerNorm`; `types` are
/// `f`'s when known (else what a guard asks about is typed on demand).
pub fn fuse_layer_norm(
    f: &ArenaFunction,
    types: Option<&BodyTypes>,
) -> Result<Option<ArenaFunction>, IrError> {
    Ok(FUSE_LAYER_NORM.apply(f, types)?)
}
