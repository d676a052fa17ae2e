//! `RemoveUnusedFunctions`: the pass and its rewrite of a module.

use irpass::{PassContext, module_pass, pass_config_option};
use irpass_ir::Module;

use crate::analyses::Calls;

pass_config_option! {
    /// The functions `RemoveUnusedFunctions` keeps with everything they reach (default `["main"]`).
    pub ENTRY_FUNCTIONS: Vec<String> = "relay.RemoveUnusedFunctions.entry_functions";
}

/// Removes the global functions that the entry functions do not reach through calls or
/// references. The entry functions are the config key
/// `relay.RemoveUnusedFunctions.entry_functions` (default `["main"]`). A listed entry function
/// that the module does not have, or an empty list, is an error (either would delete every
/// function); with the default and no `@main`, nothing is removed.
#[module_pass(opt_level = 1, name = "RemoveUnusedFunctions")]
pub fn transform(module: Module, ctx: &PassContext) -> irpass::Result<Module> {
    let entries = match ctx.get(&ENTRY_FUNCTIONS) {
        Some(list) if list.is_empty() => {
            return Err(format!(
                "`{}` is empty: every function would be removed; name at least one entry \
                 function",
                ENTRY_FUNCTIONS.name()
            )
            .into());
        }
        Some(list) => {
            if let Some(missing) = list.iter().find(|n| module.get(n).is_none()) {
                // One suggestion: the closest function name.
                let close = irpass::suggest::closest(missing, module.names());
                let hint = irpass::suggest::did_you_mean(close.get(..1).unwrap_or_default());
                return Err(format!(
                    "`{}` names `{missing}`, which the module does not define{hint}",
                    ENTRY_FUNCTIONS.name()
                )
                .into());
            }
            list.clone()
        }
        None if module.get("main").is_none() => return Ok(module),
        None => vec!["main".to_string()],
    };
    let calls = ctx.module_analysis(&crate::analyses::CallGraph, &module);
    Ok(remove_unused_functions_in(&module, entries, &calls))
}

/// Removes the functions that `entries` do not reach through calls or references, as the
/// registered `RemoveUnusedFunctions` (which checks the entries first).
pub fn remove_unused_functions(module: &Module, entries: Vec<String>) -> Module {
    remove_unused_functions_in(module, entries, &Calls::of(module))
}

/// As [`remove_unused_functions`], with the references read from a call graph of `module`
/// (the [`CallGraph`](crate::analyses::CallGraph) analysis).
pub fn remove_unused_functions_in(module: &Module, entries: Vec<String>, calls: &Calls) -> Module {
    let reached = calls.reached_from(entries);
    let mut out = module.clone();
    out.retain(|name, _| reached.contains(name));
    out
}
