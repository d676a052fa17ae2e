//! `DeadCodeElimination`.

use irpass::registry::{OptionDoc, PassOptions};
use irpass::{PassContext, function_pass, pass_config_option};
use irpass_ir::{Function, Module};
use serde::Deserialize;

irpass::statistic! {
    /// `let` bindings `DeadCodeElimination` removed.
    pub static BINDINGS_REMOVED: "DeadCodeElimination", "unused bindings removed";
}

pass_config_option! {
    /// When true, `DeadCodeElimination` also inlines each binding whose variable is used
    /// exactly once (TVM's `inline_once`).
    pub DCE_INLINE_ONCE: bool = "relay.DeadCodeElimination.inline_once";
}

/// `DeadCodeElimination` and its option (it overrides the config key for this pass).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct DeadCodeElimination {
    /// Also inline each binding used exactly once (default: the config key, else false).
    pub inline_once: Option<bool>,
}

impl PassOptions for DeadCodeElimination {
    fn options() -> Vec<OptionDoc> {
        vec![OptionDoc {
            name: "inline_once",
            type_name: "bool",
            default: "relay.DeadCodeElimination.inline_once, else false".to_string(),
            doc: "also inline each binding whose variable is used exactly once (TVM's inline_once)",
        }]
    }
}

/// Removes `let` bindings whose variable is never used (every expression of the IR is pure, so
/// an unused value can go), including chains of them, in one linear pass: liveness flows from
/// the result backwards, a binding's value is looked at only if its variable is live. Unused
/// graph nodes need no removal: nothing refers to them. With
/// `relay.DeadCodeElimination.inline_once` (or the option, `DeadCodeElimination{inline_once=true}`),
/// a binding used exactly once is inlined into its use.
#[function_pass(opt_level = 1, default, options)]
impl DeadCodeElimination {
    fn transform_function(&self, func: Function, _module: &Module, ctx: &PassContext) -> Function {
        let inline_once = self
            .inline_once
            .or_else(|| ctx.get(&DCE_INLINE_ONCE).copied())
            .unwrap_or(false);
        func.with_code(crate::rewrites::dead_code_elimination(
            &func.code,
            inline_once,
        ))
    }
}
