//! `InferType`.

use irpass::ir::Module;
use irpass::{PassContext, module_pass};

/// Infers the type of every function, expression and variable and records it on them
/// (`checked_type()`); a program that does not type-check is an error naming the problem and
/// its position. The module itself is returned unchanged.
#[module_pass(opt_level = 0, name = "InferType")]
pub fn infer_type(module: Module, _ctx: &PassContext) -> irpass::Result<Module> {
    module.infer_types()?;
    Ok(module)
}
