//! The passes as functions on a function's code: each takes an
//! [`ArenaFunction`] (and the types inference found for it,
//! where the pass needs them) and returns the rewrite, or `None` when it changes nothing. The
//! registered passes are thin wrappers that read their options and call these; a compiler that
//! drives rewrites itself (a custom fixpoint, a pass of its own that reuses one) calls them
//! directly.

mod a_normal_form;
mod canonicalize_ops;
mod convert_layout;
mod cse;
mod dead_code;
mod fold_constant;
mod fold_scale_axis;
mod fuse_layer_norm;
mod fuse_ops;
mod module_passes;
mod normal_form;
mod simplify_expr;
mod simplify_inference;

pub use a_normal_form::to_a_normal_form;
pub use canonicalize_ops::canonicalize_ops;
pub use convert_layout::convert_layout;
pub use cse::eliminate_common_subexpr;
pub use dead_code::dead_code_elimination;
pub use fold_constant::{FoldLimits, fold_constant};
pub use fold_scale_axis::{backward_fold_scale_axis, forward_fold_scale_axis};
pub use fuse_layer_norm::fuse_layer_norm;
pub use fuse_ops::{FuseOptions, fuse_ops};
pub use module_passes::{inline, lambda_lift, remove_unused_functions, remove_unused_functions_in};
pub use normal_form::to_graph_normal_form;
pub use simplify_expr::simplify_expr;
pub use simplify_inference::simplify_inference;

use irpass_ir::Attrs;
use irpass_ir::body::{ArenaFunction, BodyBuilder, ExprId};
use irpass_ir::rewrite::Rewritten;

/// The function a rewrite produced, or `f` itself when it changed nothing.
pub fn apply(f: ArenaFunction, out: Option<Rewritten>) -> ArenaFunction {
    out.map_or(f, ArenaFunction::from)
}

/// A call of operator `op` built in `b`. The rewrites build only calls whose operator and
/// attributes they chose themselves, so a failure is a bug of the pass, not of its input.
pub(crate) fn call(b: &mut BodyBuilder, op: &str, args: &[ExprId], attrs: Attrs) -> ExprId {
    b.op(op, args, attrs)
        .unwrap_or_else(|e| panic!("irpass-passes built an invalid call: {e}"))
}
