//! `InferType`.

use irpass::{PassContext, module_pass};
use irpass_ir::Module;

/// Infers the type of every function, expression and variable and records them with the
/// function (`Function::types`); a program that does not type-check is an error naming the
/// problem and its position. The module itself is returned unchanged. Incremental: a function
/// typed by an earlier run keeps its types while the functions it calls keep theirs, so after
/// a pass only the functions it changed (and their callers, if a type changed) are typed.
/// `--verify-each` re-checks every type from scratch.
#[module_pass(opt_level = 0, name = "InferType")]
pub fn infer_type(module: Module, _ctx: &PassContext) -> irpass::Result<Module> {
    module.infer_types()?;
    Ok(module)
}
