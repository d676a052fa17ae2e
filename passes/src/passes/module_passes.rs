//! Module passes: `Inline`, `RemoveUnusedFunctions`, `LambdaLift`.

use irpass::{PassContext, module_pass, pass_config_option};
use irpass_ir::Module;

/// Replaces each call of a global function marked `Inline=1` by the function's body (its
/// parameters bound to the arguments, its local variables renamed so each stays bound once),
/// and a reference to one that is only used as a value (never called) by a function literal
/// of it (attributes kept), then removes those functions that inlining left without references (as TVM, an inline
/// function nothing referred to in the first place stays). A function that calls
/// itself is not inlined, nor is a call that would close a cycle of inline functions calling
/// each other.
#[module_pass(opt_level = 1, name = "Inline")]
pub fn inline(module: Module, _ctx: &PassContext) -> Module {
    crate::rewrites::inline(&module)
}

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
pub fn remove_unused_functions(module: Module, ctx: &PassContext) -> irpass::Result<Module> {
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
    Ok(crate::rewrites::remove_unused_functions_in(
        &module, entries, &calls,
    ))
}

/// Lifts every closure to a global function: one without free variables becomes
/// `@<outer>_lifted_<n>` and is referred to by name; one with free variables becomes a global
/// that takes them and returns the closure (marked `Closure=1`), called where the closure was;
/// the closure such a global returns is not lifted again, so the pass is idempotent.
/// A `let`-bound closure that calls itself calls the lifted global instead. Fused
/// (`Primitive=1`) functions stay where they are.
#[module_pass(opt_level = 0, name = "LambdaLift")]
pub fn lambda_lift(module: Module, _ctx: &PassContext) -> Module {
    crate::rewrites::lambda_lift(&module)
}
