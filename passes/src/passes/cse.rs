//! `EliminateCommonSubexpr`.

use irpass::registry::{OptionDoc, PassOptions};
use irpass::{PassContext, function_pass, pass_config_option};
use irpass_ir::{Function, Module};
use serde::Deserialize;

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

/// `EliminateCommonSubexpr` and its options (each overrides its config key for this pass).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct EliminateCommonSubexpr {
    /// Merge only calls (default: the config key, else false).
    pub calls_only: Option<bool>,
    /// Operators whose calls are never merged (default: the config key, else none).
    pub skip_ops: Option<Vec<String>>,
}

impl PassOptions for EliminateCommonSubexpr {
    fn options() -> Vec<OptionDoc> {
        vec![
            OptionDoc {
                name: "calls_only",
                type_name: "bool",
                default: "relay.EliminateCommonSubexpr.calls_only, else false".to_string(),
                doc: "merge only calls, not tuples, projections or constants",
            },
            OptionDoc {
                name: "skip_ops",
                type_name: "[operator names]",
                default: "relay.EliminateCommonSubexpr.skip_ops, else []".to_string(),
                doc: "operators whose calls are never merged (TVM's fskip, as data)",
            },
        ]
    }
}

/// Merges structurally identical expressions into one shared node: calls of the same operator
/// with the same attributes on the same arguments (calls that differ in an attribute stay
/// apart; references to one variable are the same argument), tuples, projections and equal
/// constants. A `let` whose value is already bound by an earlier `let` (or is a variable) is
/// dropped and its variable replaced by the earlier one. One linear pass, bottom-up: once the
/// arguments are merged, equal calls have identical keys. `relay.EliminateCommonSubexpr.skip_ops`
/// lists operators whose calls stay apart (or the option: `EliminateCommonSubexpr{skip_ops=[add]}`).
#[function_pass(opt_level = 3, default, options)]
impl EliminateCommonSubexpr {
    fn transform_function(&self, func: Function, _module: &Module, ctx: &PassContext) -> Function {
        let calls_only = self
            .calls_only
            .or_else(|| ctx.get(&CSE_CALLS_ONLY).copied())
            .unwrap_or(false);
        let skip = match &self.skip_ops {
            Some(ops) => ops.as_slice(),
            None => ctx.get(&CSE_SKIP_OPS).map_or(&[][..], Vec::as_slice),
        };
        func.with_code(crate::rewrites::eliminate_common_subexpr(
            &func.code, calls_only, skip,
        ))
    }
}
