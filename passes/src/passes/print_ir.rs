//! `PrintIR`, registered by name for the reference IR.

use irpass::{PassContext, module_pass};
use irpass_ir::Module;

/// Prints the module to stderr (`PrintIR:` and the text format) and returns it unchanged.
#[module_pass(opt_level = 0, name = "PrintIR")]
pub fn print_ir(module: Module, _ctx: &PassContext) -> Module {
    eprintln!("PrintIR:\n{module}");
    module
}
