//! Passes ported to the arena representation (`docs/ir-design.md`, step 5), not registered
//! yet: the registered passes still run on the node-per-expression IR. Each port is tested to
//! give the same result as the pass it replaces, and the chain benchmark times them against
//! the dense calibration (`cargo bench -p irpass-passes --bench dense_calibration`; counted with
//! `--bench chain_once` and its `arena` argument).

mod canonicalize_ops;
mod cse;
mod dead_code;
mod fold_constant;
mod normal_form;
mod simplify_expr;
mod simplify_inference;

pub use canonicalize_ops::canonicalize_ops;
pub use cse::eliminate_common_subexpr;
pub use dead_code::dead_code_elimination;
pub use fold_constant::fold_constant;
pub use normal_form::to_graph_normal_form;
pub use simplify_expr::simplify_expr;
pub use simplify_inference::simplify_inference;

use irpass_ir::arena::{ArenaFunction, Rewritten};

/// The function a rewrite produced, or `f` itself when it changed nothing.
pub fn apply(f: ArenaFunction, out: Option<Rewritten>) -> ArenaFunction {
    out.map_or(f, ArenaFunction::from)
}
