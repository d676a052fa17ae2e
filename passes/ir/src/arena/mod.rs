//! The arena representation the reference IR is moving to (`docs/ir-design.md`): one dense,
//! indexed arena per function, built operands-first, with side tables, and a rewriter that owns
//! its bookkeeping. Nothing in it recurses as deep as the input nests (but the conversion from
//! `Expr`, which walks the old IR with that IR's own traversal).
//!
//! The passes still run on [`Expr`](crate::Expr); [`ArenaFunction`] converts both ways while
//! the IR's parts are ported one at a time.
//!
//! ```
//! use irpass_ir::arena::{ArenaFunction, LetAction, Node, Rewrite, RewriteCx, VarId, ExprId, rewrite_body};
//! use irpass_ir::Module;
//!
//! /// Inlines every binding whose value is a constant.
//! struct InlineConstants;
//! impl Rewrite for InlineConstants {
//!     fn visit_let(&mut self, cx: &mut RewriteCx<'_>, _var: VarId, value: ExprId) -> LetAction {
//!         match cx.new.body().node(value) {
//!             Node::Constant(_) => LetAction::Inline,
//!             _ => LetAction::Keep,
//!         }
//!     }
//! }
//!
//! let m = Module::parse("def @main(%x: float32) { let %c = 2f; add(%x, %c) }").unwrap();
//! let f = m.get("main").unwrap();
//! let a = ArenaFunction::from_function(f);
//! let out = rewrite_body(&a.body, &a.params, a.root, &mut InlineConstants).unwrap();
//! let b = ArenaFunction::from(out);
//! let text = Module::from_functions([("main", b.to_function_like(f))]).to_string();
//! assert!(text.contains("def @main(%x: float32) {\n  add(%x, 2f)\n}"), "{text}");
//! ```

mod analysis;
mod body;
mod build;
mod convert;
mod copy;
mod dot;
mod eval;
#[cfg(test)]
mod eval_tests;
mod function;
mod index;
mod infer;
#[cfg(test)]
mod infer_tests;
mod module;
#[cfg(test)]
mod module_tests;
#[cfg(test)]
mod parse_tests;
mod print;
mod rewrite;
mod structural;
#[cfg(test)]
mod tests;
mod types;
mod wellformed;

pub use crate::parse::{ParsedFunction, parse_functions};
pub use analysis::live_vars;
pub use body::{
    AttrsId, Body, ClosureData, ClosureId, ConstId, ExprId, GlobalId, List, Node, Sig, SigId,
    VarData, VarId,
};
pub use build::BodyBuilder;
pub use convert::ArenaFunction;
pub use copy::{VarSubst, copy_region, post_order};
pub use dot::module_dot;
pub(crate) use eval::ArenaClosure;
pub use eval::{eval_function, eval_function_limited};
pub use function::{Function, FunctionData};
pub use index::{Idx, IndexVec};
pub use infer::{BodyTypes, FunctionInput, MAX_TYPE_DEPTH, infer_types};
pub use module::Module;
pub use print::function_text;
pub use rewrite::{LetAction, Rewrite, RewriteCx, Rewritten, fixpoint, rewrite_body};
pub use structural::{structural_hash, structurally_equal};
pub use types::{LocalTyper, LocalTypes, TypeId, TypeTable, local_types};
pub use wellformed::check_well_formed;
