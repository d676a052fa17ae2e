//! `InferType`.

use irpass::{PassContext, module_pass};
use irpass_ir::Module;

/// Infers the type of every function, expression and variable and records it on them
/// (`checked_type()`); a program that does not type-check is an error naming the problem and
/// its position. The module itself is returned unchanged. Incremental: a node typed by an
/// earlier run keeps its type unless it mentions a global, so after a pass only what the pass
/// built is visited; a recorded type never changes (a pass that rebinds a variable to a value
/// of another type gets an error). `--verify-each` re-checks every type from scratch.
#[module_pass(opt_level = 0, name = "InferType")]
pub fn infer_type(module: Module, _ctx: &PassContext) -> irpass::Result<Module> {
    module.infer_types()?;
    Ok(module)
}
