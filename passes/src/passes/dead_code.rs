//! `DeadCodeElimination`.

use irpass::{PassContext, function_pass};
use irpass_ir::{Function, Module};

irpass::statistic! {
    /// `let` bindings `DeadCodeElimination` removed.
    pub static BINDINGS_REMOVED: "DeadCodeElimination", "unused bindings removed";
}

/// Removes `let` bindings whose variable is never used (every expression of the IR is pure, so
/// an unused value can go), including chains of them, in one linear pass: liveness flows from
/// the result backwards, a binding's value is looked at only if its variable is live. Unused
/// graph nodes need no removal: nothing refers to them.
#[function_pass(opt_level = 1, name = "DeadCodeElimination")]
pub fn dead_code_elimination(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    func.with_code(crate::rewrites::dead_code_elimination(&func.code))
}
