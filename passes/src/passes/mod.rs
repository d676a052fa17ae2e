//! The passes, one module each: registration, options, statistics and the rewrite it runs
//! (the two scale-axis foldings share theirs). The rewrites are public in [`crate::rewrites`].

pub mod a_normal_form;
pub mod canonicalize_ops;
pub mod combine_parallel_dense;
pub mod convert_layout;
pub mod cse;
pub mod dead_code;
pub mod flatten_matmul;
pub mod fold_constant;
pub mod fold_scale_axis;
pub mod fuse_layer_norm;
pub mod fuse_ops;
pub mod graph_normal_form;
pub mod infer_type;
pub mod inline;
pub mod lambda_lift;
pub mod print_ir;
pub mod remove_unused_functions;
pub mod simplify_expr;
pub mod simplify_inference;
pub mod sink_reshape;

use irpass_ir::Attrs;
use irpass_ir::body::{Body, BodyBuilder, ExprId};

/// A call of operator `op` built in `b`. The rewrites build only calls whose operator and
/// attributes they chose themselves, so a failure is a bug of the pass, not of its input.
pub(crate) fn call(b: &mut BodyBuilder, op: &str, args: &[ExprId], attrs: Attrs) -> ExprId {
    b.op(op, args, attrs)
        .unwrap_or_else(|e| panic!("irpass-passes built an invalid call: {e}"))
}

/// A `reshape` of `x` to the static `shape`, built in `b`.
pub(crate) fn reshape_to(b: &mut BodyBuilder, x: ExprId, shape: &[usize]) -> ExprId {
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let attrs = Attrs::from_pairs([("newshape", crate::util::ints(&dims))]);
    call(b, "reshape", &[x], attrs)
}

/// The input of `id` when it is a reshape (`reshape`, `expand_dims`, `squeeze`: the same
/// elements in the same order, another shape).
pub(crate) fn reshape_like(body: &Body, id: ExprId) -> Option<ExprId> {
    let (op, args, _) = body.op_call(id)?;
    matches!(op.name(), "reshape" | "expand_dims" | "squeeze").then(|| args[0])
}
