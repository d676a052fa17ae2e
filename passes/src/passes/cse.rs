//! `EliminateCommonSubexpr`.

use irpass::{PassContext, function_pass, pass_config_option};
use irpass_ir::{Function, Module};

irpass::statistic! {
    /// Expressions `EliminateCommonSubexpr` replaced by an equal earlier one.
    pub static EXPRESSIONS_MERGED: "EliminateCommonSubexpr", "expressions merged with an equal earlier one";
}

pass_config_option! {
    /// When true, `EliminateCommonSubexpr` merges only calls (not tuples, projections or
    /// constants).
    pub CSE_CALLS_ONLY: bool = "relay.EliminateCommonSubexpr.calls_only";
}

pass_config_option! {
    /// Operators whose calls `EliminateCommonSubexpr` never merges, e.g. `["add"]` (TVM's
    /// `fskip` callback, as data).
    pub CSE_SKIP_OPS: Vec<String> = "relay.EliminateCommonSubexpr.skip_ops";
}

/// Merges structurally identical expressions into one shared node: calls of the same operator
/// with the same attributes on the same arguments (calls that differ in an attribute stay
/// apart; references to one variable are the same argument), tuples, projections and equal
/// constants. A `let` whose value is already bound by an earlier `let` (or is a variable) is
/// dropped and its variable replaced by the earlier one. One linear pass, bottom-up: once the
/// arguments are merged, equal calls have identical keys. `relay.EliminateCommonSubexpr.skip_ops`
/// lists operators whose calls stay apart.
#[function_pass(opt_level = 3, name = "EliminateCommonSubexpr")]
pub fn eliminate_common_subexpr(func: Function, _module: &Module, ctx: &PassContext) -> Function {
    let calls_only = ctx.get(&CSE_CALLS_ONLY).copied().unwrap_or(false);
    let skip = ctx.get(&CSE_SKIP_OPS).map_or(&[][..], Vec::as_slice);
    func.with_code(crate::rewrites::eliminate_common_subexpr(
        &func.code, calls_only, skip,
    ))
}
