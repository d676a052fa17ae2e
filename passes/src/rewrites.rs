//! The passes as functions on a function's code: each takes an
//! [`ArenaFunction`](crate::ir::ArenaFunction) (and the types inference found for it,
//! where the pass needs them) and returns the rewritten code, or `None` when it changes
//! nothing. The registered passes read their options and call these; a compiler that drives
//! rewrites itself (a custom fixpoint, a pass of its own that reuses one) calls them directly.

pub use crate::passes::a_normal_form::to_a_normal_form;
pub use crate::passes::canonicalize_ops::canonicalize_ops;
pub use crate::passes::combine_parallel_dense::combine_parallel_dense;
pub use crate::passes::convert_layout::convert_layout;
pub use crate::passes::cse::eliminate_common_subexpr;
pub use crate::passes::dead_code::dead_code_elimination;
pub use crate::passes::flatten_matmul::flatten_matmul;
pub use crate::passes::fold_constant::{FoldLimits, fold_constant};
pub use crate::passes::fold_scale_axis::{backward_fold_scale_axis, forward_fold_scale_axis};
pub use crate::passes::fuse_layer_norm::fuse_layer_norm;
pub use crate::passes::fuse_ops::{FuseOptions, fuse_ops};
pub use crate::passes::graph_normal_form::to_graph_normal_form;
pub use crate::passes::inline::inline;
pub use crate::passes::lambda_lift::lambda_lift;
pub use crate::passes::remove_unused_functions::{
    remove_unused_functions, remove_unused_functions_in,
};
pub use crate::passes::simplify_expr::simplify_expr;
pub use crate::passes::simplify_inference::simplify_inference;
pub use crate::passes::sink_reshape::{sink_reshape, split_first};
