//! The representation of the reference IR (`docs/ir-design.md` in the repository): one dense,
//! indexed arena per function ([`Body`]), built operands first, with side tables (types,
//! spans, names), and a rewriter that owns its bookkeeping ([`rewrite_body`]: a pass says what
//! it changes; the walk, the sharing, the scopes and the old-to-new ids are the driver's).
//! Nothing here recurses as deep as the input nests: parser, inference, printer, structural
//! equality, interpreter and well-formedness all walk with explicit stacks or index scans.
//!
//! A [`Function`] is an `Arc` around its [`ArenaFunction`] (`code`), signature and attributes,
//! and the types the last inference found; a [`Module`] maps names to functions.
//!
//! ```
//! use irpass_ir::arena::{LetAction, Node, Rewrite, RewriteCx, VarId, ExprId, rewrite_body};
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
//! let a = &f.code;
//! let out = rewrite_body(&a.body, &a.params, a.root, &mut InlineConstants);
//! let text = Module::from_functions([("main", f.with_code(out))]).to_string();
//! assert!(text.contains("def @main(%x: float32) {\n  add(%x, 2f)\n}"), "{text}");
//! ```

mod analysis;
mod body;
mod build;
mod code;
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
pub use code::ArenaFunction;
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
