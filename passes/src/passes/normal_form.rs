//! `ToANormalForm` and `ToGraphNormalForm`.

use irpass::{PassContext, function_pass};
use irpass_ir::{Function, Module};

/// Binds every intermediate value to a `let`, in evaluation order, so that each computation
/// has a name and happens once: A-normal form. A value shared by several places is bound once,
/// in the innermost scope (function body, `if` branch) that contains all its uses.
#[function_pass(opt_level = 0, name = "ToANormalForm")]
pub fn to_a_normal_form(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    func.with_code(Some(crate::rewrites::to_a_normal_form(&func.code)))
}

/// Replaces `let` bindings by the values themselves (shared graph nodes), the inverse of
/// `ToANormalForm`: dataflow graph form. A recursive `let` (a closure that calls itself)
/// stays.
#[function_pass(opt_level = 0, name = "ToGraphNormalForm")]
pub fn to_graph_normal_form(func: Function, _module: &Module, _ctx: &PassContext) -> Function {
    func.with_code(crate::rewrites::to_graph_normal_form(&func.code))
}
